"""The figures from the questions gradviz answers, reproduced to float32 precision."""

import numpy as np
import pytest

import gradviz as gv


def values(ts):
    return [None if t is None else t.numpy().tolist() for t in ts]


def linear_regression():
    X = gv.constant([[2.0], [3.0]], name="X")
    Y = gv.constant([[3.0], [2.0]], name="Y")
    W = gv.Variable(1.6649098, name="weight")
    b = gv.Variable(0.54648024, name="bias")
    pred = gv.add(gv.multiply(X, W), b)
    cost = 0.5 * gv.reduce_sum(gv.pow(pred - Y, 2))
    return X, Y, W, b, pred, cost


def test_linear_regression_prediction_cost_and_gradients():
    *_, W, b, pred, cost = linear_regression()
    np.testing.assert_allclose(pred.numpy(), [[3.8762999], [5.5412097]], rtol=1e-6)
    assert cost.numpy() == pytest.approx(6.6540337, rel=1e-6)
    gW, gb = gv.gradients(cost, [W, b])
    assert gW.numpy() == pytest.approx(12.376228, rel=1e-6)
    assert gb.numpy() == pytest.approx(4.4175096, rel=1e-6)
    assert gW.dtype == gv.float32 and gW.shape == ()


def test_total_vs_partial_derivatives():
    a = gv.constant(0.0)
    b = 2 * a
    assert values(gv.gradients(a + b, [a, b])) == [3.0, 1.0]
    assert values(gv.gradients(a + b, [a, b], stop_gradients=[a, b])) == [1.0, 1.0]


def test_stop_gradient_op_equals_stop_gradients_argument():
    a = gv.stop_gradient(gv.constant(0.0))
    b = gv.stop_gradient(2 * a)
    assert values(gv.gradients(a + b, [a, b])) == [1.0, 1.0]


def test_unconnected_none_and_zero():
    a = gv.ones([1, 2])
    b = gv.ones([3, 1])
    assert gv.gradients([b], [a], unconnected_gradients="none") == [None]
    assert values(gv.gradients([b], [a], unconnected_gradients="zero")) == [[[0.0, 0.0]]]
    assert values(gv.gradients([b], [a], unconnected_gradients=gv.UnconnectedGradients.ZERO)) == [[[0.0, 0.0]]]


def test_jacobian_gradient_and_vjp_of_x_squared():
    x = gv.constant([1.0, 2.0])
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    assert tape.jacobian(y, x).numpy().tolist() == [[2.0, 0.0], [0.0, 4.0]]
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0]
    assert tape.gradient(y, x, output_gradients=gv.constant([2.0, 3.0])).numpy().tolist() == [4.0, 12.0]


def test_matmul_figures():
    a = gv.constant([[1, 2], [3, 4]], gv.float32)
    b = gv.constant([[6, 7, 8], [9, 10, 11]], gv.float32)
    c = gv.matmul(a, b)
    assert c.numpy().tolist() == [[24, 27, 30], [54, 61, 68]]
    assert values(gv.gradients(gv.reduce_sum(c), a)) == [[[21, 30], [21, 30]]]
    assert values(gv.gradients(c, a)) == [[[21, 30], [21, 30]]]  # sum over c is implicit
    assert values(gv.gradients(c * gv.stop_gradient(c), a)) == [[[573, 816], [1295, 1844]]]
    by_hand, _ = gv.get_gradient_function("MatMul")(c.op, c)
    assert by_hand.numpy().tolist() == [[573, 816], [1295, 1844]]


def test_gradient_in_parts_through_a_per_element_jacobian():
    x = gv.ones([1, 10])
    w = gv.Variable(0.5 * np.ones([10, 5], np.float32), name="w")
    out = gv.matmul(x, w)
    loss = gv.reduce_mean(gv.square(out - gv.zeros([5])))
    (grad,) = gv.gradients(loss, x)
    (part1,) = gv.gradients(loss, out)  # (1, 5)
    # d out_j / dx, one output element at a time: a (5, 10) Jacobian
    part2 = gv.concat([gv.gradients(o, x)[0] for o in gv.split(out, 5, axis=1)], axis=0)
    by_parts = gv.matmul(part1, part2)
    np.testing.assert_allclose(by_parts.numpy(), grad.numpy(), rtol=1e-6)
    # what people try first does not even have matching shapes
    (naive,) = gv.gradients(out, x)
    assert part1.shape == (1, 5) and naive.shape == (1, 10)


def test_chain_rule_in_parts_with_grad_ys():
    x = gv.constant([[0.5, -1.0], [2.0, 0.3]])
    W = gv.constant([[1.0, 2.0], [-0.5, 0.25]])
    y = gv.tanh(x @ W)
    loss = gv.reduce_sum(gv.square(y)) / 3.0
    (dloss_dy,) = gv.gradients(loss, y)
    (chained,) = gv.gradients(y, x, grad_ys=dloss_dy)
    (direct,) = gv.gradients(loss, x)
    np.testing.assert_allclose(chained.numpy(), direct.numpy(), rtol=1e-6)


def test_sum_over_ys_and_weighted_grad_ys():
    x = gv.constant([1.0, 2.0])
    y1, y2 = x * 3.0, x * x
    assert values(gv.gradients([y1, y2], x)) == [[5.0, 7.0]]
    weighted = gv.gradients([y1, y2], x, grad_ys=[gv.constant([1.0, 0.0]), None])
    assert values(weighted) == [[5.0, 4.0]]


def test_hessian_vector_product():
    x = gv.constant([1.0, 2.0, 3.0])
    f = gv.reduce_sum(x * x * x)  # Hessian diag(6x)
    (g,) = gv.gradients(f, x)
    v = gv.constant([1.0, 0.5, -1.0])
    (hvp,) = gv.gradients(g, x, grad_ys=v)
    assert hvp.numpy().tolist() == [6.0, 6.0, -18.0]
    with gv.GradientTape() as outer:
        outer.watch(x)
        with gv.GradientTape() as inner:
            inner.watch(x)
            y = gv.reduce_sum(gv.tanh(x))
        dy = inner.gradient(y, x)
    d2 = outer.gradient(dy, x)
    t = np.tanh([1.0, 2.0, 3.0])
    np.testing.assert_allclose(d2.numpy(), -2 * t * (1 - t * t), rtol=1e-5)
