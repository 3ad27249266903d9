"""gv.explore in the kernel: the inputs' controls, a run per move, the viewer's new
payload laid out as before, and every way a call can be wrong.

(The browser side, a slider dragged in a real JupyterLab, is
``test_explore_browser.py``.)
"""

from __future__ import annotations

import re

import ipywidgets
import numpy as np
import pytest

import gradviz as gv
from gradviz.views.explore import MAX_VALUES, Explorer


def cost_of(W, b):
    X = gv.constant([[2.0], [3.0]], name="X")
    Y = gv.constant([[3.0], [2.0]], name="Y")
    return gv.multiply(0.5, gv.reduce_sum((X * W + b - Y) ** 2), name="cost")


def grads(ex: Explorer) -> list:
    return [g.numpy().tolist() for g in ex.trace.gradients]


def geometry(svg: str) -> str:
    return re.sub(r"(<text[^>]*>)[^<]*</text>", r"\1</text>",
                  re.sub(r"<title>[^<]*</title>", "<title></title>", svg))


def test_the_gradients_follow_the_inputs_and_the_layout_stays():
    ex = gv.explore(cost_of, W=1.0, b=0.5)
    assert grads(ex) == [3.5, 1.0]  # sum((XW + b - Y) X), sum(XW + b - Y)
    first = ex.viewer.payload
    runs = ex.layouts.runs
    ex.set(W=0.0)
    assert grads(ex) == [-9.5, -4.0]
    new = ex.viewer.payload
    assert new["layout"] == first["layout"] and ex.layouts.runs == runs
    assert geometry(new["svg"]) == geometry(first["svg"]) and new["svg"] != first["svg"]
    assert new["results"] != first["results"]
    # dcost/dW changes sign at the minimum over W: W* = (sum (Y - b) X) / sum X^2 = 9.5 / 13
    below, above = 9.5 / 13 - 0.01, 9.5 / 13 + 0.01
    ex.set(W=below)
    assert grads(ex)[0] < 0
    ex.set(W=above)
    assert grads(ex)[0] > 0


def test_it_opens_at_the_last_step_and_keeps_the_step_a_move():
    ex = gv.explore(cost_of, W=1.0, b=0.5)
    assert ex.viewer.step == ex.viewer.num_steps - 1
    ex.viewer.step = 3
    ex.set(b=0.0)
    assert ex.viewer.step == 3
    assert gv.explore(cost_of, W=1.0, b=0.5, view={"start_step": 2}).viewer.step == 2


def test_a_scalar_gets_a_slider_and_an_array_a_box_per_value():
    ex = gv.explore(lambda W, v: gv.reduce_sum(W * v), W=gv.slider(1.5, -2, 5, step=0.05),
                    v=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (w_control, [w_slider]), (v_control, v_boxes) = ex._controls.values()
    assert isinstance(w_slider, ipywidgets.FloatSlider)
    assert (w_slider.value, w_slider.min, w_slider.max, w_slider.step) == (1.5, -2, 5, 0.05)
    assert len(v_boxes) == 6 and all(isinstance(b, ipywidgets.BoundedFloatText) for b in v_boxes)
    assert v_control.children[1].layout.grid_template_columns == "repeat(3, 7em)"
    assert [b.tooltip for b in v_boxes[:2]] == ["v[0, 0]", "v[0, 1]"]
    # ipywidgets' own default ranges: [-v, 3v] above 0, [3v, -v] below, [-1, 1] at 0
    assert [(b.min, b.max) for b in v_boxes[:2]] == [(-1.0, 3.0), (-2.0, 6.0)]
    # the starting value is one of the values a slider snaps to: its ends move in
    _, [off_grid] = gv.explore(lambda a: a * a, a=gv.slider(1.6649098, -1.0, 3.0, step=0.01)
                               )._controls["a"]
    assert off_grid.min == pytest.approx(-0.9950902) and off_grid.max == pytest.approx(2.9949098)
    assert (off_grid.value - off_grid.min) / off_grid.step == pytest.approx(266)


def test_set_puts_a_slider_on_a_grid_through_the_value_given():
    ex = gv.explore(lambda a: a * a, a=gv.slider(1.6649098, -1.0, 3.0, step=0.01))
    first = ex._controls["a"][0]
    ex.set(a=0.7)  # off the slider's grid: a new slider, on a grid through 0.7
    s = ex._controls["a"][0]
    assert s is not first and ex._box.children == (s,)
    assert s.value == 0.7 and ex.values["a"] == np.float32(0.7)
    assert (s.min, s.max) == (pytest.approx(-1.0), pytest.approx(3.0))
    ex.set(a=0.75)  # on its grid: the same slider moves
    assert ex._controls["a"][0] is s and s.value == 0.75
    ex.set(a=0.705)
    s = ex._controls["a"][0]
    assert s.value == 0.705 and s.min == pytest.approx(-0.995) and s.max == pytest.approx(2.995)
    assert float(ex.trace.gradients[0]) == pytest.approx(1.41)


def test_moving_a_control_moves_its_value_only():
    ex = gv.explore(lambda W, v: gv.reduce_sum(W * v), W=2.0, v=[1.0, 2.0])
    _, boxes = ex._controls["v"]
    boxes[1].value = 3.5
    assert ex.values["v"].tolist() == [1.0, 3.5] and ex.values["W"] == 2.0
    assert grads(ex) == [4.5, [2.0, 2.0]]
    _, [slider] = ex._controls["W"]
    slider.value = -1.0
    assert grads(ex) == [4.5, [-1.0, -1.0]]
    assert ex.viewer.payload["results"][0]["array"]["values"] == 4.5


def test_a_new_structure_is_laid_out_once_per_structure():
    ex = gv.explore(lambda v: v * v if float(v.numpy()) >= 0 else gv.exp(v), v=1.0)
    runs, key = ex.layouts.runs, ex.viewer.payload["layout"]
    ex.set(v=-1.0)
    assert ex.viewer.payload["layout"] != key and ex.layouts.runs > runs
    again = ex.layouts.runs
    ex.set(v=0.5)
    assert ex.viewer.payload["layout"] == key and ex.layouts.runs == again


def test_a_build_that_fails_says_so_and_keeps_the_last_picture():
    def build(x):
        if float(x.numpy()) > 1:
            raise ValueError("x too large for this program")
        return x * x

    ex = gv.explore(build, x=gv.slider(0.5, 0.0, 3.0))
    payload = ex.viewer.payload
    with pytest.raises(ValueError, match="x too large"):
        ex.set(x=2.0)
    assert ex.viewer.payload is payload
    assert ex.error.layout.display is None
    assert "build failed at x=2." in ex.error.value and "x too large" in ex.error.value
    assert "the diagram still shows the last values that ran: x=0.5" in ex.error.value
    ex.set(x=0.25)
    assert ex.error.layout.display == "none" and grads(ex) == [0.5]


def test_float64_arrays_stay_float64_and_numbers_are_float32():
    wide = gv.explore(lambda a: a * a, a=np.array([1.0, 2.0]))
    assert wide.values["a"].dtype == np.float64 and wide.trace.gradients[0].dtype == gv.float64
    for value in (2, 2.0, [1.0, 2.0], np.array([1, 2])):
        ex = gv.explore(lambda a: a * a, a=value)
        assert ex.values["a"].dtype == np.float32 and ex.trace.gradients[0].dtype == gv.float32


@pytest.mark.parametrize("call, error, message", [
    (lambda: gv.explore(cost_of, W=1.0, b=0.5, c=2.0), TypeError,
     "build takes no input named 'c' (its inputs: W, b)"),
    (lambda: gv.explore(cost_of, W=1.0), TypeError,
     "build's input 'b' has no value: give it as explore(build, ..., b=...)"),
    (lambda: gv.explore(cost_of), TypeError, "give build's inputs and their values"),
    (lambda: gv.explore("cost", W=1.0), TypeError, "build must be a function of the inputs, got str"),
    (lambda: gv.explore(lambda W: W, W=np.ones(MAX_VALUES + 1)), ValueError,
     "input 'W' has 17 values: an input to move is a number or an array of 1 to 16 values"),
    (lambda: gv.explore(lambda W: W, W=[]), ValueError, "input 'W' has 0 values"),
    (lambda: gv.explore(lambda W: W, W="one"), TypeError,
     "input 'W' must be a number or an array of numbers, got 'one'"),
    (lambda: gv.explore(lambda W: W, W=True), TypeError, "must be a number or an array of numbers"),
    (lambda: gv.explore(lambda W: W, W=float("nan")), ValueError, "input 'W' must be finite"),
    (lambda: gv.explore(lambda W: W, W=gv.slider(1.0, 2.0, 0.0)), ValueError,
     "input 'W': min must be below max, got min=2, max=0"),
    (lambda: gv.explore(lambda W: W, W=gv.slider(1.0, max=-5.0)), ValueError,
     "input 'W': min must be below max, got min=-1, max=-5"),
    (lambda: gv.explore(lambda W: W, W=gv.slider(1.0, step=0)), ValueError,
     "input 'W': step must be above 0, got 0"),
    (lambda: gv.explore(lambda W: W, W=gv.slider(5.0, 0, 1)), ValueError,
     "input 'W' starts at 5.0, outside its range [0, 1]"),
    (lambda: gv.explore(lambda W: W, W=gv.slider([1.0, 5.0], max=2.0)), ValueError,
     "input 'W' starts at [1.0, 5.0], outside its range [-5, 2]"),
    (lambda: gv.explore(lambda W: W, W=gv.slider(1.0, "a")), TypeError,
     "input 'W': min must be a finite number, got 'a'"),
    (lambda: gv.explore(cost_of, W=1.0, b=0.5, view={"practice": True}), TypeError,
     "view option 'practice' is not one explore takes"),
    (lambda: gv.explore(lambda W, b: W * W, W=1.0, b=0.0), ValueError,
     "what build returns does not depend on input 'b' (its gradient is None)"),
    (lambda: gv.explore(lambda W: 3.0, W=1.0), TypeError,
     "build must return the tensor to differentiate (or a list of them), got float"),
])
def test_bad_calls_say_what_was_wrong(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_set_checks_names_and_shapes():
    ex = gv.explore(lambda W, v: gv.reduce_sum(W * v), W=1.0, v=[1.0, 2.0])
    with pytest.raises(TypeError, match=re.escape("no input named 'x' (the inputs: W, v)")):
        ex.set(x=1.0)
    with pytest.raises(ValueError, match=re.escape("input 'v' is of shape (2,): got a scalar")):
        ex.set(v=3.0)
    with pytest.raises(ValueError, match=re.escape("input 'W' is a scalar: got an array of shape (2,)")):
        ex.set(W=[1.0, 2.0])
    with pytest.raises(TypeError, match=re.escape("input 'W' must be a number or an array of "
                                                  "numbers, got 'abc'")):
        ex.set(W="abc")
    with pytest.raises(ValueError, match=re.escape("input 'W' must be finite, got inf")):
        ex.set(W=float("inf"))
    with pytest.raises(ValueError, match=re.escape("input 'v': 7 is outside its range [-2, 6]")):
        ex.set(v=[1.0, 7.0])
    assert ex.values["v"].tolist() == [1.0, 2.0]  # nothing moved
