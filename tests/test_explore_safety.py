"""gv.explore never shows a stale number: its values, its trace and its viewer
agree after every move, a failed one included, and so do its controls, except
after a failed move by hand.  Then the controls keep what the hand gave, and
the line above the diagram names the values the diagram still shows.  Every
input it takes (a start value, a range, a step, a value given to ``set``)
either works or is refused with a message that says what is accepted.

(The explorer's ordinary use is ``test_explore.py``.)
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import gradviz as gv
from gradviz.views.explore import Explorer


def grads(ex: Explorer) -> list:
    return [g.numpy().tolist() for g in ex.trace.gradients]


def traced_inputs(ex: Explorer) -> dict[str, list]:
    """Each input's value as the trace itself records it (the values its gradients are at)."""
    by_id = {t.id: t for t in ex.trace.tensors}
    return {by_id[x].name.split(":")[0]: by_id[x].value.values.tolist() for x in ex.trace.xs}


def shown(ex: Explorer) -> dict[str, list]:
    """Each input's value as its controls show it, in the input's own dtype."""
    return {name: np.array([w.value for w in fields], dtype=ex.values[name].dtype)
            .reshape(ex.values[name].shape).tolist()
            for name, (_, fields) in ex._controls.items()}


def in_dtypes(ex: Explorer, values: dict[str, object]) -> dict[str, list]:
    return {n: np.asarray(v, dtype=ex.values[n].dtype).tolist() for n, v in values.items()}


def assert_ran_at(ex: Explorer, values: dict[str, object]) -> None:
    """``ex.values``, the trace and the viewer all at ``values``, the last values that ran."""
    expected = in_dtypes(ex, values)
    assert {n: v.tolist() for n, v in ex.values.items()} == expected
    assert traced_inputs(ex) == expected
    assert [r["array"]["values"] for r in ex.viewer.payload["results"]] == grads(ex)


def assert_agree(ex: Explorer, values: dict[str, object]) -> None:
    """``ex.values``, the trace, the viewer and the controls all at ``values``."""
    assert_ran_at(ex, values)
    assert shown(ex) == in_dtypes(ex, values)


def refuses_above_one(x, v):
    if float(x.numpy()) > 1:
        raise ValueError("x too large for this program")
    return gv.reduce_sum(x * x * v)


# ------------------------------------------------------------ a failed move


def test_a_set_where_build_fails_raises_and_moves_nothing():
    ex = gv.explore(refuses_above_one, x=gv.slider(0.5, 0.0, 3.0, step=0.5), v=[1.0, 2.0])
    before = grads(ex)
    payload, slider = ex.viewer.payload, ex._controls["x"][0]
    with pytest.raises(ValueError, match="x too large") as raised:
        ex.set(x=2.0, v=[3.0, 4.0])
    note = "\n".join(raised.value.__notes__)
    assert "explore(): build failed at x=2., v=[3. 4.]" in note and "stays at x=0.5" in note
    assert_agree(ex, {"x": 0.5, "v": [1.0, 2.0]})
    assert grads(ex) == before and ex.viewer.payload is payload
    assert ex._controls["x"][0] is slider and ex._box.children[0] is slider
    assert ex.error.layout.display is None and "build failed at x=2." in ex.error.value
    # a value off the slider's grid, where build fails: no new slider either
    with pytest.raises(ValueError, match="x too large"):
        ex.set(x=1.3)
    assert ex._controls["x"][0] is slider and slider.value == 0.5
    ex.set(x=0.25)  # and where it runs, all of it moves
    assert_agree(ex, {"x": 0.25, "v": [1.0, 2.0]})
    assert ex.error.layout.display == "none" and grads(ex)[0] == pytest.approx(1.5)


def test_a_set_where_explore_refuses_what_build_returns_moves_nothing():
    ex = gv.explore(lambda x: x * x if float(x.numpy()) < 1 else gv.stop_gradient(x), x=0.5)
    with pytest.raises(ValueError, match="input 'x' gets no gradient"):
        ex.set(x=1.25)
    assert_agree(ex, {"x": 0.5})


def test_a_drag_where_build_fails_stays_and_the_diagram_stays_at_the_values_that_ran():
    ex = gv.explore(refuses_above_one, x=gv.slider(0.5, 0.0, 3.0, step=0.5), v=[1.0, 2.0])
    payload = ex.viewer.payload
    _, [slider] = ex._controls["x"]
    slider.value = 2.0  # nothing can be raised to a hand on a slider: it stays where put
    assert slider.value == 2.0 and shown(ex) == {"x": 2.0, "v": [1.0, 2.0]}
    assert_ran_at(ex, {"x": 0.5, "v": [1.0, 2.0]})
    assert ex.viewer.payload is payload
    assert ex.error.layout.display is None
    assert "build failed at x=2., v=[1. 2.]" in ex.error.value and "x too large" in ex.error.value
    assert "the diagram still shows the last values that ran: x=0.5, v=[1. 2.]" in ex.error.value
    assert "x = 0.5" in ex._repr_mimebundle_()[0]["text/html"]  # the picture: the values that ran
    slider.value = 1.0  # a move that runs clears the error, and all of it agrees
    assert_agree(ex, {"x": 1.0, "v": [1.0, 2.0]})
    assert ex.error.layout.display == "none" and ex.viewer.payload is not payload
    ex2 = gv.explore(lambda v: gv.reduce_sum(v) if float(v.numpy()[1]) < 3 else 1 / 0, v=[1.0, 2.0])
    _, boxes = ex2._controls["v"]
    boxes[1].value = 4.0
    assert "ZeroDivisionError" in ex2.error.value and "still shows the last values that ran: " \
        "v=[1. 2.]" in ex2.error.value
    assert shown(ex2) == {"v": [1.0, 4.0]}
    assert_ran_at(ex2, {"v": [1.0, 2.0]})


def test_a_drag_through_values_where_build_fails_keeps_the_slider_under_the_hand():
    ex = gv.explore(refuses_above_one, x=gv.slider(0.5, 0.0, 3.0, step=0.5), v=[1.0, 2.0])
    _, [slider] = ex._controls["x"]
    for x in (1.0, 1.5, 2.0, 2.5):  # a continuous drag: each value runs build
        slider.value = x
        assert slider.value == x
    assert_ran_at(ex, {"x": 1.0, "v": [1.0, 2.0]})
    assert "build failed at x=2.5" in ex.error.value and "that ran: x=1., v" in ex.error.value
    slider.value = 1.0  # back at the values that ran: the error hides, nothing runs
    assert_agree(ex, {"x": 1.0, "v": [1.0, 2.0]})
    assert ex.error.layout.display == "none"


def test_a_drag_from_the_page_where_build_fails_stays_on_the_page(monkeypatch):
    ex = gv.explore(refuses_above_one, x=gv.slider(0.5, 0.0, 3.0, step=0.5), v=[1.0, 2.0])
    _, [slider] = ex._controls["x"]
    sent = []
    monkeypatch.setattr(slider.comm, "send", lambda data=None, buffers=None, **_: sent.append(data))
    slider.set_state({"value": 2.0})  # as the page's slider sends it
    assert slider.value == 2.0 and ex.values["x"] == 0.5
    # the page is sent no other value for the slider (at most its own, echoed)
    assert all(m["state"].get("value", 2.0) == 2.0 for m in sent)
    assert "that ran: x=0.5" in ex.error.value


def rising(v):
    """Runs only while v[0] < v[1]."""
    a, b = v.numpy().tolist()
    if not a < b:
        raise ValueError(f"v[0] must be below v[1], got {a:g} and {b:g}")
    return gv.reduce_sum(v * v)


def test_typing_one_box_then_the_other_reaches_values_past_a_failing_step():
    # (1, 2) -> (5, 6) a box at a time: build fails at (5, 2), runs at (5, 6)
    ex = gv.explore(rising, v=gv.slider([1.0, 2.0], 0.0, 9.0))
    _, [a, b] = ex._controls["v"]
    a.value = 5.0
    assert (a.value, b.value) == (5.0, 2.0)
    assert_ran_at(ex, {"v": [1.0, 2.0]})
    assert "build failed at v=[5. 2.]" in ex.error.value and "got 5 and 2" in ex.error.value
    b.value = 6.0  # runs at what both boxes show, not at (1, 6)
    assert_agree(ex, {"v": [5.0, 6.0]})
    assert ex.error.layout.display == "none" and grads(ex) == [[10.0, 12.0]]


def test_moving_one_slider_then_another_runs_at_what_both_show():
    ex = gv.explore(lambda a, b: rising(gv.stack([a, b])), a=gv.slider(1.0, 0.0, 9.0, step=1.0),
                    b=gv.slider(2.0, 0.0, 9.0, step=1.0))
    (_, [a]), (_, [b]) = ex._controls.values()
    a.value = 5.0
    assert shown(ex) == {"a": 5.0, "b": 2.0}
    assert_ran_at(ex, {"a": 1.0, "b": 2.0})
    b.value = 6.0
    assert_agree(ex, {"a": 5.0, "b": 6.0})


def test_set_after_a_failed_move_by_hand_runs_at_the_values_that_ran_and_moves_every_control():
    ex = gv.explore(lambda a, b: rising(gv.stack([a, b])), a=gv.slider(1.0, 0.0, 9.0, step=1.0),
                    b=gv.slider(2.0, 0.0, 9.0, step=1.0))
    (_, [a]), (_, [b]) = ex._controls.values()
    a.value = 5.0  # fails at a=5, b=2: a's slider stays at 5
    ex.set(b=3.0)  # runs at a=1 (the values that ran), b=3; a's slider goes back to 1
    assert_agree(ex, {"a": 1.0, "b": 3.0})
    assert ex._controls["a"][0] is a and a.value == 1.0
    assert ex.error.layout.display == "none"
    # a set that fails moves nothing, a control left by hand included
    a.value = 7.0
    with pytest.raises(ValueError, match="got 4 and 0"):
        ex.set(a=4.0, b=0.0)
    assert shown(ex) == {"a": 7.0, "b": 3.0}
    assert_ran_at(ex, {"a": 1.0, "b": 3.0})
    assert "build failed at a=4., b=0." in ex.error.value
    b.value = 8.0  # the next move runs at what both show: (7, 8)
    assert_agree(ex, {"a": 7.0, "b": 8.0})


# ------------------------------------------------------------ one check for values


@pytest.mark.parametrize("value, error, message", [
    ("2", TypeError, "input 'W' must be a number or an array of numbers, got '2'"),
    (True, TypeError, "input 'W' must be a number or an array of numbers, got True"),
    (np.bool_(False), TypeError, "input 'W' must be a number or an array of numbers"),
    (None, TypeError, "input 'W' must be a number or an array of numbers, got None"),
    (1 + 2j, TypeError, "input 'W' must be a number or an array of numbers, got (1+2j)"),
    (float("nan"), ValueError, "input 'W' must be finite, got nan"),
    (1e39, ValueError, "input 'W' must be finite, got 1e+39 (a float32 input holds numbers "
                       "within ±3.403e+38)"),
])
def test_set_refuses_what_explore_refuses_with_the_same_words(value, error, message):
    with pytest.raises(error, match=re.escape(message)):
        gv.explore(lambda W: W * W, W=value)
    ex = gv.explore(lambda W: W * W, W=gv.slider(1.0, -1e38, 1e38))
    with pytest.raises(error, match=re.escape(message)):
        ex.set(W=value)
    assert_agree(ex, {"W": 1.0})


def test_set_refuses_booleans_and_strings_in_arrays_too():
    ex = gv.explore(lambda v: gv.reduce_sum(v * v), v=[1.0, 2.0])
    for value in ([True, False], ["1", "2"], np.array([True, True])):
        with pytest.raises(TypeError, match="input 'v' must be a number or an array of numbers"):
            ex.set(v=value)
    assert_agree(ex, {"v": [1.0, 2.0]})


# ------------------------------------------------------------ ranges and steps


def slider_of(ex: Explorer, name: str = "W"):
    return ex._controls[name][1][0]


@pytest.mark.parametrize("start", [
    1e-13, -1e-12, 1e-30, 1e-40,            # tiny, and a float32 subnormal
    5e-324,                                 # a float64 subnormal, 0 as a float32
    np.float64(1e-13), np.float64(5e-324),  # tiny float64 values stay float64
    3e38, -3.4e38,                          # near float32's largest
    np.float64(1e308), np.float64(-1.7e308),
])
def test_any_finite_start_gets_a_range_and_step_that_work(start):
    ex = gv.explore(lambda W: 0.5 * W, W=start)
    s = slider_of(ex)
    top = float(np.finfo(ex.values["W"].dtype).max)
    assert -top <= s.min <= s.value <= s.max <= top and math.isfinite(s.max - s.min)
    assert 0 < s.step <= s.max - s.min
    assert (s.value - s.min) / s.step == pytest.approx(round((s.value - s.min) / s.step))
    assert s.value == float(ex.values["W"])
    ex.set(W=s.max)  # the far end runs too
    assert_agree(ex, {"W": s.max})


def test_a_tiny_start_slides_over_a_tiny_range_in_round_steps():
    s = slider_of(gv.explore(lambda W: W * W, W=np.float64(1e-13)))
    assert (s.min, s.max, s.step) == (pytest.approx(-1e-13), pytest.approx(3e-13), 5e-15)


@pytest.mark.parametrize("given", [
    gv.slider(0.0, -1.0, 1.0, step=1e-40),            # fine for a float32 near 0
    gv.slider(1.0, -1000.0, 1000.0, step=1e-5),       # far finer than a slider can show
    gv.slider(np.float64(0.0), -1.0, 1.0, step=1e-300),
    gv.slider(0.0, 0.0, 1.0, step=1.0),               # one step: the whole range
    gv.slider(0.0, -3e38, 3e38),
    gv.slider(np.float64(0.0), -8e307, 8e307),
])
def test_sliders_given_at_the_edges_of_floats_work(given):
    ex = gv.explore(lambda W: W * W, W=given)
    s = slider_of(ex)
    assert math.isfinite(s.min) and math.isfinite(s.max) and s.min < s.max
    assert s.step == (given.step or s.step) and s.value == float(ex.values["W"])


@pytest.mark.parametrize("given, error, message", [
    (gv.slider(0, -1e308, 1e308), ValueError,
     "input 'W': min must lie within ±3.403e+38 (the largest float32; a float64 NumPy value "
     "takes a wider range), got -1e+308"),
    (gv.slider(0, -1, 1e39), ValueError, "input 'W': max must lie within ±3.403e+38"),
    (gv.slider(np.float64(0), -1e308, 1e308), ValueError,
     "input 'W': the range [-1e+308, 1e+308] is wider than a float holds: max - min must be at "
     "most 1.798e+308"),
    (gv.slider(0.0, -1.0, 1.0, step=5.0), ValueError,
     "input 'W': step must be at most max - min = 2, got 5"),
    (gv.slider(0.0, -1.0, 1.0, step=-1.0), ValueError, "input 'W': step must be above 0, got -1"),
    (gv.slider(0.0, -1.0, 1.0, step=0.0), ValueError, "input 'W': step must be above 0, got 0"),
    (gv.slider(1.0, 0.0, 2.0, step=1e-9), ValueError,
     "input 'W': step 1e-09 is too small to move its value 1 (float32 numbers there are "
     "5.96e-08 apart): give a step of at least 5.96e-08"),
    (gv.slider(0.0, -1.0, 1.0, step=5e-324), ValueError,
     "input 'W': step 4.941e-324 is too small to move its value 0 (float32 numbers there are "
     "1.401e-45 apart)"),
    (gv.slider(np.float64(0.0), -1.0, 1.0, step=5e-324), ValueError,
     "input 'W': step 4.941e-324 cuts the range [-1, 1] into more steps than a float counts: "
     "give a step of at least 1.113e-308"),
    (gv.slider(1.0, 1.0 - 1e-9, 1.0 + 1e-9), ValueError,
     "input 'W': the range [0.999999999, 1.000000001] is too narrow to move its value 1 "
     "(float32 numbers there are 5.96e-08 apart)"),
    (gv.slider(2.0, 3.0, 1.0), ValueError, "input 'W': min must be below max, got min=3, max=1"),
    (gv.slider(1.0, 1.0, 1.0), ValueError, "input 'W': min must be below max, got min=1, max=1"),
    (gv.slider(0.0, float("-inf"), 1.0), TypeError,
     "input 'W': min must be a finite number, got -inf"),
    (gv.slider(0.0, -1.0, float("nan")), TypeError,
     "input 'W': max must be a finite number, got nan"),
    (gv.slider(0.0, -1.0, 1.0, step=float("inf")), TypeError,
     "input 'W': step must be a finite number, got inf"),
    (gv.slider(0.0, -1.0, 1.0, step=True), TypeError,
     "input 'W': step must be a finite number, got True"),
])
def test_ranges_and_steps_that_cannot_work_say_what_is_accepted(given, error, message):
    with pytest.raises(error, match=re.escape(message)):
        gv.explore(lambda W: W * W, W=given)


# ------------------------------------------------------------ what build returns


@pytest.mark.parametrize("build, said", [
    (lambda W: gv.cast(W, gv.int32), "an int32 tensor"),
    (lambda W: gv.cast(W * 3.0, gv.int64), "an int64 tensor"),
    (lambda W: W > 0.0, "a bool tensor"),
    (lambda W: [gv.cast(W, gv.int32), W > 0.0], "only int32 and bool tensors"),
])
def test_an_integer_result_is_said_to_be_one(build, said):
    with pytest.raises(TypeError) as raised:
        gv.explore(build, W=1.5)
    message = str(raised.value)
    assert message.startswith(f"explore(): build returned {said}, whose gradient is None")
    assert "as in TensorFlow" in message and "return a float tensor" in message
    assert "does not depend" not in message


def test_an_integer_result_beside_a_float_one_is_fine():
    ex = gv.explore(lambda W: [W * W, gv.cast(W, gv.int32)], W=1.5)
    assert grads(ex) == [3.0]


@pytest.mark.parametrize("build", [
    lambda W: gv.cast(gv.cast(W, gv.int32), gv.float32),
    lambda W: gv.stop_gradient(W) * 2.0,
])
def test_an_input_cut_on_its_way_is_not_said_to_be_unused(build):
    with pytest.raises(ValueError) as raised:
        gv.explore(build, W=1.5)
    message = str(raised.value)
    assert "explore(): input 'W' gets no gradient (it is None), though build uses it" in message
    assert "cut" in message and "does not depend" not in message
