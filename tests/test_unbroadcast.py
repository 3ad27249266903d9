"""Broadcast reductions: every way NumPy broadcasts, summed back and recorded."""

import numpy as np
import pytest

import gradviz as gv

SHAPES = [
    ((), (2, 3), (0, 1)),           # scalar
    ((3,), (2, 3), (0,)),           # leading axis
    ((1, 3), (2, 3), (0,)),         # size-1 axis
    ((2, 1), (2, 3), (1,)),         # size-1 trailing axis
    ((4, 1, 3), (2, 1), None),      # both sides broadcast
    ((1,), (5,), (0,)),
    ((2, 3), (2, 3), ()),           # nothing to reduce
]


@pytest.mark.parametrize("sx,sy,axes", SHAPES)
def test_gradients_have_the_input_shapes(sx, sy, axes):
    rng = np.random.default_rng(0)
    a = gv.constant(rng.standard_normal(sx), gv.float64)
    b = gv.constant(rng.standard_normal(sy), gv.float64)
    ga, gb = gv.gradients(a * b, [a, b])
    assert ga.shape == sx and gb.shape == sy
    full = np.broadcast_shapes(sx, sy)
    # d sum(a*b)/da = b summed over the axes a was broadcast along
    expect_a = np.broadcast_to(b.numpy(), full).sum(axis=gv.broadcast_axes(full, sx)).reshape(sx)
    np.testing.assert_allclose(ga.numpy(), expect_a)
    assert gv.check_gradients(lambda p, q: p * q, [a.numpy(), b.numpy()]).passed


@pytest.mark.parametrize("sx,sy,axes", [s for s in SHAPES if s[2] is not None])
def test_reduction_is_a_recorded_step(sx, sy, axes):
    a = gv.constant(np.ones(sx))
    b = gv.constant(np.ones(sy))
    tr = gv.trace_gradients(a + b, a)
    reduces = [s for s in tr.steps if s.kind == "reduce"]
    if axes:
        (step,) = reduces
        assert step.axes == axes
        assert step.shape_before == np.broadcast_shapes(sx, sy) and step.shape_after == sx
        assert tr.tensors[step.tensor].shape == sx
        assert step.grad.values.sum() == np.prod(np.broadcast_shapes(sx, sy))
    else:
        assert reduces == []


def test_both_sides_broadcast_axes():
    a = gv.constant(np.ones((4, 1, 3)))
    b = gv.constant(np.ones((2, 1)))
    tr = gv.trace_gradients(a * b, [a, b])
    by_tensor = {tr.tensors[s.tensor].shape: s for s in tr.steps if s.kind == "reduce"}
    assert by_tensor[(4, 1, 3)].axes == (1,)
    assert by_tensor[(2, 1)].axes == (0, 2)
    assert [r.grad.values.tolist() for r in tr.results] == [np.full((4, 1, 3), 2.0).tolist(),
                                                          np.full((2, 1), 12.0).tolist()]


def test_unbroadcast_helper():
    g = gv.ones([2, 3])
    assert gv.unbroadcast(g, ()).numpy() == 6.0
    assert gv.unbroadcast(g, (3,)).numpy().tolist() == [2.0, 2.0, 2.0]
    assert gv.unbroadcast(g, (2, 1)).numpy().tolist() == [[3.0], [3.0]]
    with pytest.raises(ValueError, match=r"cannot be reduced to \(4,\)"):
        gv.unbroadcast(g, (4,))


def test_linear_regression_w_and_b_are_reduced_over_the_batch():
    X = gv.constant([[2.0], [3.0]])
    W = gv.Variable(1.0, name="W")
    b = gv.Variable(0.0, name="b")
    tr = gv.trace_gradients(gv.reduce_sum(X * W + b), [W, b])
    reduced = sorted(tr.tensors[s.tensor].name for s in tr.steps if s.kind == "reduce")
    assert reduced == ["W:0", "b:0"]  # a trace's own names (W.name may be W_3:0 by now)
