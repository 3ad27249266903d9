"""Every gradient that comes back None by the user's slip says why.

TensorFlow answers these silently; gradviz teaches, so it warns: a computation
that left the graph through NumPy, an integer source, a tape that was not
watching or was not recording.  A source that is genuinely unconnected (or cut
on purpose) gets no warning.
"""

import gc
import inspect
import re
import warnings
import weakref

import numpy as np
import pytest

import gradviz as gv
from gradviz.engine import graph


def _line() -> int:
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


@pytest.fixture(autouse=True)
def _no_old_conversions():
    """Each test starts with no remembered NumPy conversions (another test's would count)."""
    graph._escapes.clear()
    yield
    graph._escapes.clear()


# ---------------------------------------------------------------- leaving the graph through NumPy


def test_numpy_function_on_a_tensor_warns_with_the_tensor_the_call_site_and_the_op():
    x = gv.constant([1.0, 2.0], name="sn_exp_x")
    y = gv.reduce_sum(np.exp(x)); at = _line()  # noqa: E702
    with pytest.warns(UserWarning) as caught:
        assert gv.gradients(y, x) == [None]; call = _line()  # noqa: E702
    (w,) = caught
    text = str(w.message)
    assert text == (
        "gradients: the gradient for sn_exp_x is None: the computation left the graph through "
        f"NumPy at sn_exp_x (np.exp, test_silent_none.py:{at}), and NumPy's result came back "
        "as a new constant, which does not depend on sn_exp_x; use gv.exp instead of np.exp, "
        "which keeps it in the graph")
    assert (w.filename, w.lineno) == (__file__, call)  # points at the user's call


def test_the_tensor_named_is_the_one_converted_even_when_it_is_gone():
    x = gv.constant([1.0, 2.0], name="sn_tmp_x")
    y = gv.reduce_sum(np.tanh(gv.multiply(x, 2.0, name="sn_tmp_twice")))
    with pytest.warns(UserWarning, match=r"through NumPy at sn_tmp_twice \(np\.tanh, "
                                         r"test_silent_none\.py:\d+\).*use gv\.tanh instead"):
        gv.gradients(y, x)


def test_numpy_functions_written_in_python_are_named_too():
    x = gv.constant([1.0, 2.0], name="sn_mean_x")
    y = np.mean(x * x) * gv.constant(2.0)
    with pytest.warns(UserWarning, match=r"\(np\.mean, .*use gv\.reduce_mean instead of np\.mean"):
        gv.gradients(y, x)


def test_a_numpy_call_without_a_gradviz_op_gets_the_general_advice():
    x = gv.constant([1.5, 2.5], name="sn_round_x")
    y = gv.reduce_sum(np.round(x) * 1.0)
    with pytest.warns(UserWarning, match=r"\(np\.round, .*compute it with gradviz ops \(such "
                                         r"as gv\.exp or gv\.reduce_sum\) instead of NumPy$"):
        gv.gradients(y, x)


def test_unconnected_zeros_are_said_to_be_zeros():
    x = gv.constant([1.0, 2.0], name="sn_zero_x")
    y = gv.reduce_sum(np.exp(x))
    with pytest.warns(UserWarning, match="the gradient for sn_zero_x is zeros: .*NumPy"):
        (g,) = gv.gradients(y, x, unconnected_gradients="zero")
    assert g.numpy().tolist() == [0.0, 0.0]


def test_the_tape_warns_too_and_the_trace_says_it_in_the_reason():
    x = gv.constant([1.0, 2.0], name="sn_tape_np_x")
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gv.reduce_sum(np.exp(x))
    with pytest.warns(UserWarning, match=r"^GradientTape\.gradient: the gradient for "
                                         r"sn_tape_np_x is None: .*np\.exp") as caught:
        assert tape.gradient(y, x) is None; call = _line()  # noqa: E702
    assert (caught[0].filename, caught[0].lineno) == (__file__, call)
    with pytest.warns(UserWarning, match=r"^GradientTape\.jacobian: .*np\.exp") as caught:
        assert tape.jacobian(y, x) is None
    assert len(caught) == 1  # once, not once per pass
    with pytest.warns(UserWarning, match=r"^trace_gradients: .*np\.exp"):
        tr = gv.trace_gradients(y, x)  # a trace warns as gradients() does
    assert re.fullmatch(r"no y depends on sn_tape_np_x: it is not connected to them in the "
                        r"graph; the computation left the graph through NumPy at sn_tape_np_x "
                        r"\(np\.exp, test_silent_none\.py:\d+\).*use gv\.exp instead of np\.exp.*",
                        tr.results[0].reason)


# ---------------------------------------------------------------- integer sources


def test_an_integer_source_warns_in_one_line():
    with gv.name_scope("sn_layer"):
        x = gv.constant([1, 2, 3], name="i")
    with pytest.warns(UserWarning) as caught:
        assert gv.gradients(x * 2, x) == [None]; call = _line()  # noqa: E702
    (w,) = caught
    assert str(w.message) == (
        "gradients: sn_layer/i has dtype int32; integers are constants for differentiation, "
        "so its gradient is None: make it float (e.g. gv.constant([1., 2., 3.]) or "
        "dtype=gv.float32)")
    assert (w.filename, w.lineno) == (__file__, call)


def test_an_integer_source_of_a_tape_warns_once():
    i = gv.constant([1, 2, 3], name="sn_tape_i")
    with gv.GradientTape(persistent=True) as tape:
        y = gv.cast(i, gv.float32) * 2.0
    with pytest.warns(UserWarning, match=r"^GradientTape\.gradient: sn_tape_i has dtype int32; "
                                         "integers are constants"):
        assert tape.gradient(y, i) is None
    with gv.GradientTape() as tape2:
        with pytest.warns(UserWarning, match="only float tensors can be watched"):
            tape2.watch(i)  # warned here: not again by gradient()
        y = gv.cast(i, gv.float32) * 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tape2.gradient(y, i) is None


# ---------------------------------------------------------------- the tape: not watched, or outside


def test_not_watched_a_constant_used_inside_the_block():
    x = gv.constant(2.0, name="sn_unwatched")
    with gv.GradientTape() as tape:
        y = x * x
    with pytest.warns(UserWarning) as caught:
        assert tape.gradient(y, x) is None; call = _line()  # noqa: E702
    (w,) = caught
    assert str(w.message) == (
        "GradientTape.gradient: sn_unwatched was not watched by the tape, and no op the tape "
        "recorded made it: call tape.watch() on it inside the `with` block, before using it "
        "(Variables are watched automatically); its gradient is None, as in TensorFlow")
    assert (w.filename, w.lineno) == (__file__, call)


def test_not_watched_when_only_another_input_of_the_op_was():
    # TensorFlow 2.21 gives None here (make crosscheck): the tape records x * c for x's
    # sake, but c was neither watched nor made by a recorded op
    x = gv.constant(2.0, name="sn_watched_other")
    c = gv.constant(3.0, name="sn_unwatched_other")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * c  # recorded (x is watched); c is not watched
    with pytest.warns(UserWarning, match=r"sn_unwatched_other was not watched by the tape, and no "
                                         r"op the tape recorded made it: call tape\.watch\(\) "
                                         r"on it.*its gradient is zeros, as in "
                                         r"TensorFlow$"):
        assert tape.gradient(y, c, unconnected_gradients="zero").numpy() == 0.0


def test_watched_only_after_it_was_used():
    x = gv.constant(2.0, name="sn_late")
    with gv.GradientTape() as tape:
        y = x * x
        tape.watch(x)
    with pytest.warns(UserWarning, match="sn_late was used in the tape's `with` block before it "
                                         r"was watched.*call tape\.watch\(\) on it before"):
        assert tape.gradient(y, x) is None


def test_computed_outside_a_target_made_after_the_block():
    x = gv.constant(2.0, name="sn_after_x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    z = gv.multiply(y, y, name="sn_after_z")  # after the block: not recorded
    with pytest.warns(UserWarning) as caught:
        assert tape.gradient(z, x, unconnected_gradients="zero").numpy() == 0.0
    (w,) = caught
    assert str(w.message) == (
        "GradientTape.gradient: sn_after_z depends on sn_after_x through ops computed outside "
        "the tape's `with` block, which the tape did not record: compute sn_after_z inside the "
        "block; its gradient is zeros, as in TensorFlow")


def test_computed_outside_the_whole_path_made_before_the_block():
    w = gv.Variable(2.0, name="sn_before_w")
    x = gv.constant(2.0, name="sn_before_x")
    y = gv.multiply(w, x, name="sn_before_y")
    with gv.GradientTape(persistent=True) as tape:
        pass
    with pytest.warns(UserWarning, match="sn_before_y depends on sn_before_w through ops "
                                         "computed outside the tape's `with` block, which the tape "
                                         "did not record: compute sn_before_y inside the block; "
                                         "its gradient is None, as in TensorFlow$"):
        assert tape.gradient(y, w) is None  # a Variable is watched once used inside
    with pytest.warns(UserWarning, match=r"compute sn_before_y inside the block, and call "
                                         r"tape\.watch\(\) on sn_before_x there; its gradient"):
        assert tape.gradient(y, x) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr = tape.trace_gradient(gv.constant(1.0) * 2.0, x)  # not connected at all: no slip
    assert tr.results[0].status == "unconnected"


def test_the_trace_reason_says_the_same_in_the_traces_names():
    x = gv.constant(2.0, name="sn_reason_x")
    with gv.GradientTape() as tape:
        pass
    y = x * 2.0
    with pytest.warns(UserWarning, match="computed outside"):
        tr = tape.trace_gradient(y, x)
    assert tr.results[0].reason == (
        "Mul depends on sn_reason_x through ops computed outside the tape's `with` block, which "
        "the tape did not record: compute Mul inside the block, and call tape.watch() on "
        "sn_reason_x there")


# ---------------------------------------------------------------- no false alarms


def test_no_warning_for_connected_gradients():
    x = gv.constant([1.0, 2.0], name="sn_ok_x")
    w = gv.Variable(0.5, name="sn_ok_w")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        print(np.asarray(x))  # printing a source is fine
        (g,) = gv.gradients(gv.reduce_sum(gv.exp(x)), x)
        assert np.allclose(g.numpy(), np.exp([1.0, 2.0]))
        with gv.GradientTape() as tape:
            y = gv.reduce_sum(x * w)
        assert tape.gradient(y, w).numpy() == 3.0


def test_no_warning_after_numpy_reads_an_unrelated_tensor():
    x = gv.constant([1.0, 2.0], name="sn_unrel_x")
    other = gv.constant([3.0, 4.0], name="sn_unrel_other")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = gv.reduce_sum(np.exp(other)) * x  # other left the graph, x did not
        (g,) = gv.gradients(y, x)
        assert np.allclose(g.numpy(), np.exp([3.0, 4.0]).sum())
    with pytest.warns(UserWarning, match="through NumPy at sn_unrel_other"):
        assert gv.gradients(y, other) == [None]  # (the one it is about does warn)


def test_no_warning_for_a_genuinely_unconnected_source():
    x = gv.constant([1.0, 2.0], name="sn_lonely_x")
    w = gv.constant([3.0, 4.0], name="sn_lonely_w")
    data = gv.constant(np.array([5.0, 6.0], np.float32))  # from NumPy, but before any conversion
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h = x * 2.0
        print(np.asarray(h))  # a look at something computed from x
        y = gv.reduce_sum(w * data)
        assert gv.gradients(y, x) == [None]
        assert gv.gradients(y, x, unconnected_gradients="zero")[0].numpy().tolist() == [0, 0]
        with gv.GradientTape() as tape:
            tape.watch(x)
            y2 = gv.reduce_sum(w * 3.0)
        assert tape.gradient(y2, x) is None


def test_no_warning_for_a_gradient_cut_on_purpose():
    x = gv.constant([1.0, 2.0], name="sn_cut_x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = gv.reduce_sum(gv.stop_gradient(x) * np.asarray(x))
        assert gv.gradients(y, x) == [None]
        z = gv.reduce_sum(x * x)
        assert gv.gradients(z, x, stop_gradients=[x])[0] is not None
        with gv.GradientTape(persistent=True) as tape:
            tape.watch(x)
            s = gv.stop_gradient(x)
            y2 = gv.reduce_sum(s * 2.0)
        assert tape.gradient(y2, x) is None


def test_a_source_the_tape_did_not_make_says_why_it_gets_none():
    # TensorFlow 2.21 gives None for each (make crosscheck): the tape neither watched them
    # nor made them by an op it recorded, though each feeds a recorded op
    x = gv.constant([1.0, 2.0], name="sn_made_x")
    i = gv.constant([1, 2], name="sn_made_i")
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        s = gv.stop_gradient(x * 2.0, name="sn_made_s")
        f = gv.cast(i, gv.float32, name="sn_made_f")
        y = s * x * f
    with pytest.warns(UserWarning) as caught:
        grads = tape.gradient(y, [x, s, f])
    assert [g is None for g in grads] == [False, True, True]
    assert grads[0].numpy().tolist() == [2.0, 8.0]  # s * f
    assert [str(w.message) for w in caught] == [
        "GradientTape.gradient: sn_made_s is the output of stop_gradient, which a tape does not "
        "record, and the tape did not watch it, so no recorded op leads to it; its gradient is "
        "None, as in TensorFlow",
        "GradientTape.gradient: sn_made_f is a cast from the integer tensor sn_made_i, which a "
        "tape cannot watch, and the tape did not watch it, so no recorded op leads to it; its "
        "gradient is None, as in TensorFlow"]
    with pytest.warns(UserWarning, match="as in TensorFlow"):
        tr = tape.trace_gradient(y, [x, s, f], unconnected_gradients="zero")
    reasons = [r.reason for r in tr.results]
    assert reasons[0] == ""
    assert "output of stop_gradient" in reasons[1] and "cast from the integer" in reasons[2]
    assert [r.status for r in tr.results] == ["connected", "unconnected", "unconnected"]
    svg = tr.to_svg()  # the diagram says it too: on the result boxes, and in their hover text
    assert svg.count("not on the tape") == 2
    assert "sn_made_s is the output of stop_gradient, which a tape does not record" in svg


def test_the_issue_s_program_gives_tensorflow_s_values_and_says_why():
    x = gv.constant([1.0, 2.0], name="sn_issue_x")
    c = gv.constant([3.0, 4.0], name="sn_issue_c")
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
        z = y * c
    with pytest.warns(UserWarning, match=r"sn_issue_c was not watched by the tape, and no op "
                                         r"the tape recorded made it.*None, as in TensorFlow"):
        grads = tape.gradient(z, [x, c, y])
    assert [None if g is None else g.numpy().tolist() for g in grads] == [
        [9.0, 16.0], None, [3.0, 4.0]]  # TensorFlow 2.21's, run (make crosscheck)
    with pytest.warns(UserWarning, match="sn_issue_c was not watched"):
        tr = tape.trace_gradient(z, [x, c, y])
    assert "sn_issue_c was not watched by the tape" in tr.results[1].reason
    assert tr.to_svg().count("not on the tape") == 1  # the diagram's box for c says so


# ---------------------------------------------------------------- what is remembered


def test_conversions_are_remembered_briefly_and_only_from_user_code():
    x = gv.constant([1.0, 2.0], name="sn_mem_x")
    e = gv.exp(x)
    probe = weakref.ref(e)
    np.asarray(e)
    del e
    assert graph._escapes[-1].tensor is probe()  # kept for a while
    for _ in range(graph._escapes.maxlen):
        np.asarray(x)
    gc.collect()
    assert probe() is None  # no longer kept alive
    assert len(graph._escapes) == graph._escapes.maxlen
    graph._escapes.clear()
    repr(x), str(gv.trace_gradients(x * x, x))  # gradviz reading its own tensors
    assert not graph._escapes


def test_plain_names_keep_the_scope_and_other_outputs():
    assert graph.plain_name("layer1/W:0") == "layer1/W"
    assert graph.plain_name("Split:1") == "Split:1"


# ---------------------------------------------------------------- a gradient missing a part


def test_numpy_function_then_the_tensor_again_gives_a_partial_gradient_and_warns():
    x = gv.constant([1.0, 2.0], name="sn_part_x")
    y = gv.reduce_sum(np.exp(x) * x); at = _line()  # noqa: E702
    with pytest.warns(UserWarning) as caught:
        (g,) = gv.gradients(y, x); call = _line()  # noqa: E702
    assert np.allclose(g.numpy(), np.exp([1.0, 2.0]))  # as TensorFlow: x * exp(x) is missing
    (w,) = caught
    assert str(w.message) == (
        "gradients: the gradient for sn_part_x is missing a part: the computation left the "
        f"graph through NumPy at sn_part_x (np.exp, test_silent_none.py:{at}), and NumPy's "
        "result came back as a new constant, which does not depend on sn_part_x, so what flows "
        "through it is missing from sn_part_x's gradient; use gv.exp instead of np.exp, which "
        "keeps it in the graph")
    assert (w.filename, w.lineno) == (__file__, call)  # points at the user's call
    with pytest.warns(UserWarning, match=r"^trace_gradients: the gradient for sn_part_x is "
                                         r"missing a part: .*np\.exp"):
        tr = gv.trace_gradients(y, x)  # a trace warns as gradients() does
    assert np.allclose(tr.gradients[0].numpy(), np.exp([1.0, 2.0]))


def test_a_numpy_result_used_on_the_next_line_is_found_by_its_value():
    x = gv.constant([0.5, 1.5], name="sn_part_next_x")
    e = np.tanh(gv.multiply(x, 2.0, name="sn_part_twice")); at = _line()  # noqa: E702
    y = gv.reduce_sum(e * x)
    with pytest.warns(UserWarning, match=(
            r"^gradients: the gradient for sn_part_next_x is missing a part: the computation left "
            r"the graph through NumPy at sn_part_twice \(np\.tanh, test_silent_none\.py:"
            rf"{at}\), .*missing from sn_part_next_x's gradient; use gv\.tanh instead of "
            r"np\.tanh")):
        (g,) = gv.gradients(y, x)
    assert np.allclose(g.numpy(), np.tanh([1.0, 3.0]))


def test_a_numpy_function_written_in_python_is_named_in_the_partial_warning_too():
    x = gv.constant([1.0, 2.0, 6.0], name="sn_part_mean_x")
    m = np.mean(x); at = _line()  # noqa: E702
    y = gv.reduce_sum((x - m) ** 2)
    with pytest.warns(UserWarning, match=(
            rf"at sn_part_mean_x \(np\.mean, test_silent_none\.py:{at}\), .*use gv\.reduce_mean "
            r"instead of np\.mean, which keeps it in the graph$")):
        (g,) = gv.gradients(y, x)
    assert np.allclose(g.numpy(), 2 * (np.array([1.0, 2.0, 6.0]) - 3.0))


def test_no_partial_warning_without_evidence_that_the_constant_is_numpys_result():
    w = gv.constant([1.0, 2.0], gv.float64, name="sn_part_w")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        print(np.asarray(w))  # a look at w, then unrelated data made from NumPy
        data = gv.constant(np.random.default_rng(0).standard_normal(2))
        (g,) = gv.gradients(gv.reduce_sum(data * w), w)
        assert np.allclose(g.numpy(), data.numpy())
        print(np.abs(w))  # a look that gives w's own values, then a copy of w that is not NumPy's
        w0 = gv.constant(w.numpy())
        (g,) = gv.gradients(gv.reduce_sum(w0 * w), w)
        assert np.allclose(g.numpy(), [1.0, 2.0])
        y = gv.reduce_sum(gv.stop_gradient(np.exp(w)) * w)  # nothing would flow through it
        assert np.allclose(gv.gradients(y, w)[0].numpy(), np.exp([1.0, 2.0]))
        y = gv.reduce_sum(np.exp(gv.stop_gradient(w)) * w)  # nor reach w from np.exp's input
        assert np.allclose(gv.gradients(y, w)[0].numpy(), np.exp([1.0, 2.0]))
        v = gv.Variable(np.exp(w), name="sn_part_v")  # a parameter of its own, made from NumPy
        assert np.allclose(gv.gradients(gv.reduce_sum(v * w), w)[0].numpy(), np.exp([1.0, 2.0]))


def test_no_partial_warning_when_nothing_left_the_graph():
    x = gv.constant([1.0, 2.0], name="sn_part_none_x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = gv.constant(np.array([3.0, 4.0], np.float32))
        (g,) = gv.gradients(gv.reduce_sum(gv.exp(x) * x * data), x)
        assert np.allclose(g.numpy(), (np.exp([1.0, 2.0]) * ([1.0, 2.0] + np.ones(2))) * [3, 4])
        assert not graph._escapes and data not in graph._from_numpy


def test_a_gradient_that_is_none_still_says_so_and_only_that():
    x = gv.constant([1.0, 2.0], name="sn_part_full_x")
    y = gv.reduce_sum(np.exp(x) * 2.0); at = _line()  # noqa: E702
    with pytest.warns(UserWarning) as caught:
        assert gv.gradients(y, x) == [None]
    (w,) = caught  # the None, not also a missing part
    assert str(w.message) == (
        "gradients: the gradient for sn_part_full_x is None: the computation left the graph "
        f"through NumPy at sn_part_full_x (np.exp, test_silent_none.py:{at}), and NumPy's result "
        "came back as a new constant, which does not depend on sn_part_full_x; use gv.exp "
        "instead of np.exp, which keeps it in the graph")


def test_no_partial_warning_where_numpy_s_function_drops_nothing():
    # np.sign and a mask are flat: what flows through them is zero, so nothing is missing
    x = gv.constant([1.0, -2.0, 3.0], name="sn_flat_x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mask = gv.constant((np.asarray(x) > 0).astype(np.float32))
        assert gv.gradients(gv.reduce_sum(x * mask), x)[0].numpy().tolist() == [1.0, 0.0, 1.0]
        s = np.sign(x)
        assert gv.gradients(gv.reduce_sum(x * s), x)[0].numpy().tolist() == [1.0, -1.0, 1.0]
