"""GradientTape semantics, as TensorFlow's."""

import warnings
import weakref

import numpy as np
import pytest

import gradviz as gv


def test_variables_are_watched_automatically():
    w = gv.Variable([1.0, 2.0], name="w")
    with gv.GradientTape() as tape:
        y = gv.reduce_sum(w * w)
    assert tape.gradient(y, w).numpy().tolist() == [2.0, 4.0]
    assert tape.watched_variables() == [w]


def test_watch_accessed_variables_false_needs_explicit_watch():
    w = gv.Variable(3.0)
    with gv.GradientTape(watch_accessed_variables=False) as tape:
        y = w * w
    with pytest.warns(UserWarning, match="was not watched"):
        assert tape.gradient(y, w) is None


def test_unwatched_constant_gets_none_with_a_helpful_warning():
    x = gv.constant(2.0)
    with gv.GradientTape() as tape:
        y = x * x
    with pytest.warns(UserWarning, match=r"tape\.watch\(\)"):
        assert tape.gradient(y, x) is None


def test_ops_outside_the_tape_are_not_differentiated():
    x = gv.constant(2.0)
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    z = y * y  # outside: not recorded
    with gv.GradientTape() as tape2:
        tape2.watch(x)
        y2 = x * 3.0
    assert tape2.gradient(y2, x).numpy() == 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tape.gradient(z, x) is None


def test_non_persistent_tape_refuses_a_second_call():
    x = gv.constant(1.0)
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent tape"):
        tape.gradient(y, x)


def test_persistent_tape_answers_many_calls():
    x = gv.constant(3.0)
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(y, x).numpy() == 6.0
    assert tape.gradient(z, x).numpy() == 108.0


def test_stop_gradient_output_and_int_cast_sources_get_none():
    x = gv.constant(2.0)
    i = gv.constant(3)
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        s = gv.stop_gradient(x)
        c = gv.cast(i, gv.float32)
        y = s * c * x
    with pytest.warns(UserWarning, match="output of stop_gradient"):
        assert tape.gradient(y, s) is None
    with pytest.warns(UserWarning, match="cast from the integer tensor"):
        assert tape.gradient(y, c) is None
    assert tape.gradient(y, x).numpy() == 6.0  # only through the direct use of x
    with pytest.warns(UserWarning, match="its gradient is zeros, as in TensorFlow"):
        assert tape.gradient(y, c, unconnected_gradients="zero").numpy() == 0.0


def test_jacobian_shape_and_dtype():
    x = gv.constant(np.array([[1.0, 2.0, 3.0]]), gv.float64)
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.reshape(x * x, [3, 1])
    j = tape.jacobian(y, x)
    assert j.shape == (3, 1, 1, 3) and j.dtype == gv.float64
    np.testing.assert_allclose(j.numpy().reshape(3, 3), np.diag([2.0, 4.0, 6.0]))


def test_jacobian_trace_runs_one_pass_per_target_element():
    x = gv.constant([1.0, 2.0, 3.0])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.tanh(x) * 2.0
    tr = tape.trace_jacobian(y, x)
    assert tr.passes == 3 and tr.method == "tape.jacobian"
    assert sorted({s.pass_index for s in tr.steps}) == [0, 1, 2]
    assert sum(s.kind == "seed" for s in tr.steps) == 3
    assert tr.steps[-1].ops_visited == 6  # Mul and Tanh, three times
    with gv.GradientTape() as t2:
        t2.watch(x)
        y2 = gv.tanh(x) * 2.0
    vjp = t2.trace_gradient(y2, x)
    assert vjp.passes == 1 and vjp.steps[-1].ops_visited == 2
    np.testing.assert_allclose(tr.gradients[0].numpy().sum(axis=0), vjp.gradients[0].numpy(), rtol=1e-6)


def test_batch_jacobian():
    x = gv.constant([[1.0, 2.0], [3.0, 4.0]])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    bj = tape.batch_jacobian(y, x)
    assert bj.shape == (2, 2, 2)
    assert bj.numpy().tolist() == [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]


def test_integer_watch_is_refused_with_a_warning():
    i = gv.constant([1, 2])
    with gv.GradientTape() as tape, pytest.warns(UserWarning, match="only float tensors"):
        tape.watch(i)


def test_output_gradients_validated_like_grad_ys():
    x = gv.constant([1.0, 2.0])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"output_gradients\[0\] has shape \(3,\)"):
        tape.gradient(y, x, output_gradients=gv.constant([1.0, 2.0, 3.0]))


def test_trace_explains_ops_outside_the_tape():
    x = gv.constant([1.0, 2.0], name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    z = y * 3.0  # ran outside the tape
    with pytest.warns(UserWarning, match="computed outside the tape's `with` block"):
        tr = tape.trace_gradient(z, x)
    (cut,) = [s for s in tr.steps if s.kind == "cut"]
    assert cut.reason == "not_watched" and cut.tensor == tr.ys[0]
    (res,) = tr.results
    assert res.grad is None and "did not record" in res.reason


def test_what_the_user_drops_inside_a_tape_is_freed_while_the_tape_lives():
    x = gv.Variable(np.ones(1000, np.float32), name="tape_free_x")
    with gv.GradientTape(persistent=True) as tape:
        y = gv.reduce_sum(x * 2.0)
        side = gv.exp(x) + 1.0  # recorded (it depends on x), then dropped
        probe = weakref.ref(side)
        del side
    assert probe() is None  # the tape does not keep it alive
    (g,) = tape.gradient(y, [x])  # what the gradient needs, y keeps alive
    assert g.numpy().tolist() == [2.0] * 1000
    (g_again,) = tape.gradient(y, [x])
    assert g_again.numpy().tolist() == [2.0] * 1000
