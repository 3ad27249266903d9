"""Every formula the words show runs: evaluated as NumPy on the step's own arrays, it
gives the gradient the engine computed.

A catalogue of programs reaches every op type whose rule has a formula, in the
cases where a formula is easy to get wrong (a reduction without keepdims, a
softmax cross-entropy with a gradient per row, a stack of matrices, a split with
an unused piece, a power of a negative number); the fixtures' traces and random
programs add the rest.  The lessons' own traces are checked where the lessons run
(``tests/test_notebooks.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.traces import linear_regression, scoped_tanh_chain, two_layer_mlp
from hypothesis import HealthCheck, given, settings
from test_trace_properties import programs

import gradviz as gv
from gradviz.views.explain import OP_RULES, Formula, describe, formula_mismatches, step_formulas

RNG = np.random.default_rng(7)


def _f(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape).astype(np.float32)


def _with_tape(build, *sources):
    """The trace of ``build(*sources)``'s gradient, recorded by a tape."""
    with gv.GradientTape() as tape:
        for s in sources:
            tape.watch(s)
        y = build(*sources)
    return tape.trace_gradient(y, list(sources))


def _catalogue():
    """name -> a function making a trace; together they reach every op with a formula."""
    x23, x32 = gv.Variable(_f(2, 3), name="x23"), gv.Variable(_f(3, 2), name="x32")
    x3 = gv.Variable(_f(3), name="x3")
    s = gv.Variable(1.5, name="s")
    pos = gv.Variable(_f(2, 3, low=0.5, high=2.0), name="pos")
    labels = gv.constant(np.eye(3, dtype=np.float32)[[0, 2]], name="labels")
    uneven = gv.constant(_f(2, 3, low=0.0, high=1.0), name="uneven")
    batch_a, batch_b = gv.Variable(_f(4, 2, 3), name="A"), gv.Variable(_f(4, 3, 2), name="B")
    w = np.array([1.0, 2.0, 3.0], np.float32)
    return {
        "arithmetic": lambda: gv.trace_gradients(
            gv.reduce_sum((x23 + x3 - s) * x3 / (pos + 1.0) - x23 ** 2.0), [x23, x3, s, pos]),
        "pow of negatives": lambda: gv.trace_gradients(gv.reduce_sum(x23 ** s), [x23, s]),
        "pow of positives": lambda: gv.trace_gradients(gv.reduce_sum(pos ** s), [pos, s]),
        "unary": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.exp(x23) + gv.log(pos) + gv.sqrt(pos) + gv.abs(x23) + gv.tanh(x23)
                          + gv.sigmoid(x23) + gv.relu(x23) + gv.square(x23) - x23
                          + gv.negative(x23) + gv.sign(x23)), [x23, pos]),
        "select": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.maximum(x23, x3) + gv.minimum(x23, 0.0)
                          + gv.where(x23 > 0.0, x23, x3 * 2.0)), [x23, x3]),
        "matmul": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.matmul(x23, x32) + gv.matmul(x23, x23, transpose_b=True)
                          + gv.matmul(x32, x32, transpose_a=True)
                          + gv.matmul(x32, x23, transpose_a=True, transpose_b=True)), [x23, x32]),
        "batched matmul": lambda: gv.trace_gradients(gv.reduce_sum(gv.matmul(batch_a, batch_b)),
                                                     [batch_a, batch_b]),
        "reductions without keepdims": lambda: gv.trace_gradients(
            [gv.reduce_sum(x23, 1) * w[:2], gv.reduce_mean(x23, 0) * w, gv.reduce_max(x23, 1),
             gv.reduce_mean(x23)], [x23], grad_ys=[None, None, np.array([2.0, -1.0], np.float32),
                                                  None]),
        "reductions with keepdims": lambda: gv.trace_gradients(
            [gv.reduce_sum(x23, 0, keepdims=True), gv.reduce_mean(x23, 1, keepdims=True),
             gv.reduce_max(x23, keepdims=True)], [x23]),
        "max with ties": lambda: gv.trace_gradients(
            gv.reduce_max(gv.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]) * s, axis=1), [s]),
        "shapes": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.reshape(x23, [3, 2]) * x32) + gv.reduce_sum(gv.transpose(x32) * w
                          + gv.broadcast_to(x3, (2, 3)) + x23[0] * 2.0 + gv.cast(gv.cast(x23, gv.float64), gv.float32))
            + gv.reduce_sum(x23[1:, ::2] * 3.0) + gv.reduce_sum(x23[:, None, 1] * 5.0),
            [x23, x32, x3]),
        "concat and stack": lambda: gv.trace_gradients(
            [gv.concat([x23, x23 * 2.0], 1) * np.arange(12, dtype=np.float32).reshape(2, 6),
             gv.stack([x3, x3 * 3.0], 1) * np.arange(6, dtype=np.float32).reshape(3, 2)],
            [x23, x3]),
        "split with an unused piece": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.split(x23, 3, axis=1)[0] * 2.0 + gv.split(x23, 3, axis=1)[2]),
            [x23]),
        "unstack": lambda: gv.trace_gradients(gv.unstack(x23, axis=1)[1] * w[:2], [x23]),
        "softmax": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.softmax(x23) * w + gv.log_softmax(x23, axis=0) * w), [x23]),
        "softmax cross-entropy per row": lambda: gv.trace_gradients(
            gv.softmax_cross_entropy_with_logits(labels=labels, logits=x23 + 1.0), [x23],
            grad_ys=np.array([1.0, 2.0], np.float32)),
        "softmax cross-entropy, labels not summing to 1": lambda: gv.trace_gradients(
            gv.softmax_cross_entropy_with_logits(labels=uneven, logits=x23), [x23, uneven],
            grad_ys=np.array([1.0, 2.0], np.float32)),
        "softmax cross-entropy of one row": lambda: gv.trace_gradients(
            gv.softmax_cross_entropy_with_logits(labels=labels[0], logits=x3), [x3]),
        "sigmoid cross-entropy": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.sigmoid_cross_entropy_with_logits(labels=uneven, logits=x23)),
            [x23, uneven]),
        "add_n": lambda: gv.trace_gradients(gv.reduce_sum(gv.add_n([x23, x23 * 2.0, x23 - 1.0])),
                                            [x23, x3]),
        "identity and stop": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.identity(x23) + gv.stop_gradient(x23)), [x23]),
        "second order": lambda: _second_order(x3, pos),
        "strided slice of a gradient": lambda: _second_order_of(lambda t: t[1:] * t[1:], x3),
        "tape": lambda: _with_tape(lambda a, b: gv.reduce_sum(gv.tanh(a) * b), x23, x3),
        **_convolutions(),
        **_transformer(x23, x32, x3, pos),
    }


def _transformer(x23, x32, x3, pos):
    """The ops of a transformer block, their formulas where they are easy to get wrong: an
    einsum letter only one operand has, tiling and padding on two axes, a minimum with ties."""
    q, k = gv.Variable(_f(2, 3, 4), name="q"), gv.Variable(_f(2, 5, 4), name="k")
    ties = gv.constant([[1.0, 0.0, 0.0], [2.0, 2.0, 3.0]], name="ties")
    return {
        "elementwise of a block": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.sin(x23) + gv.cos(x23) + gv.math.rsqrt(pos) + gv.math.erf(x23)
                          + gv.nn.softplus(x23) + gv.nn.leaky_relu(x23, 0.1)
                          + gv.nn.gelu(x23) + gv.nn.gelu(x23, approximate=True)
                          + gv.math.squared_difference(x23, x3)), [x23, x3, pos]),
        "einsums": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.einsum("bqd,bkd->bqk", q, k) ** 2.0)
            + gv.reduce_sum(gv.einsum("ij,jk->k", x23, gv.transpose(x23)))
            + gv.reduce_sum(gv.einsum("...qd,...kd->...qk", q, k)), [q, k, x23]),
        "shapes of a block": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.expand_dims(x23, 1) * gv.constant(_f(2, 4, 3)))
            + gv.reduce_sum(gv.squeeze(gv.reshape(x3, [1, 3, 1])) * x3)
            + gv.reduce_sum(gv.tile(x23, [2, 3]) ** 2.0)
            + gv.reduce_sum(gv.pad(x23, [[1, 0], [2, 1]], constant_values=1.0) ** 2.0)
            + gv.reduce_sum(gv.pad(x23, [[1, 1], [2, 1]], mode="REFLECT") ** 2.0)
            + gv.reduce_sum(gv.pad(x23, [[2, 1], [0, 3]], mode="SYMMETRIC") ** 2.0), [x23, x3]),
        "reduce_min with ties": lambda: gv.trace_gradients(
            [gv.reduce_min(ties * x3, axis=1), gv.reduce_min(x23, keepdims=True)], [x3, x23]),
        "layer norm": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.nn.layer_norm(q, scale=x3[:1] * 0.0 + 1.5) ** 2.0), [q, x3]),
        "gathers": lambda: gv.trace_gradients(
            gv.reduce_sum(gv.gather(x32, [2, 0, 2]) * gv.constant(_f(3, 2)))
            + gv.reduce_sum(gv.gather(q, [[3, 0], [1, 1]], axis=2) ** 2.0)
            + gv.reduce_sum(gv.gather(q, [[1, 1], [0, 2]], axis=1, batch_dims=1) ** 2.0)
            + gv.reduce_sum(gv.nn.embedding_lookup(x23, [1, 1]) * x3)
            + gv.reduce_sum(gv.gather_nd(x23, [[1, 2], [0, 0], [1, 2]]) * 3.0)
            + gv.reduce_sum(gv.math.unsorted_segment_sum(x32, [1, -1, 1], 2) ** 2.0)
            + gv.reduce_sum(gv.math.unsorted_segment_sum(x32, [1, 0, 1], 2) ** 2.0),
            [x32, q, x23, x3]),
        "products and running sums": lambda: gv.trace_gradients(
            [gv.math.reduce_prod(x23 * ties, axis=1), gv.math.reduce_prod(q, axis=[0, 2], keepdims=True),
             gv.math.cumsum(x23, 1) * 2.0, gv.math.cumsum(x23, 0, exclusive=True, reverse=True),
             gv.math.cumprod(x23 * ties, 1, exclusive=True) * 3.0, gv.math.cumprod(pos, 0, reverse=True),
             gv.math.divide_no_nan(x23, ties)], [x23, q, pos]),
        "the elementwise table": lambda: _elementwise_table(x23, x3, pos),
        "moving, cutting and segments": lambda: _arrays(x23, x32, gv.Variable(
            _f(2, 3, 4), name="q3")),
        "where the formulas' edges are": lambda: _edges_of_the_vocabulary(),
        "gather_nd, second order": lambda: _second_order_of(
            lambda t: gv.gather_nd(t * t, [[1, 2], [0, 0], [1, 2]]), x23),
        "mirror pad, second order": lambda: _second_order_of(
            lambda t: gv.pad(t, [[1, 1], [2, 2]], mode="REFLECT") ** 2.0, x23),
        "leaky relu, second order": lambda: _second_order_of(
            lambda t: gv.nn.leaky_relu(t * t - 0.5) ** 2.0, x3),
    }


def _elementwise_table(x23, x3, pos):
    """The table's ops (gradviz/engine/elementwise.py), where their formulas choose: x = 0 in
    xlogy, xlog1py and xdivy, y = 0 in multiply_no_nan, and broadcasting."""
    with_zero = gv.constant(np.array([[0.0, 1.5, -2.0], [0.5, 0.0, 1.0]], np.float32),
                            name="with_zero")
    return gv.trace_gradients(
        gv.reduce_sum(gv.math.log1p(pos) + gv.math.expm1(x23) + gv.math.reciprocal(pos)
                      + gv.atan2(x23, x3 + 3.0) + gv.math.xlogy(with_zero * x3, pos)
                      + gv.math.xlog1py(with_zero * x3, pos) + gv.math.xdivy(with_zero * x3, pos)
                      + gv.math.multiply_no_nan(x23, with_zero * x3)
                      + gv.math.floormod(x23 * 4.0, pos) + gv.floor(x23) * x23), [x23, x3, pos])


def _arrays(x23, x32, q):
    """Rolling, reversing, slicing, norms, segments (one empty, ties in a maximum) and the
    diagonals and bands of matrices, square and not, and in a batch."""
    ties = gv.constant(np.array([[1.0, 2.0], [1.0, 4.0], [5.0, 6.0], [0.0, 6.0]], np.float32),
                       name="ties")
    a, b = gv.identity_n([x23 * 2.0, x32])
    _, unused = gv.identity_n([x23, x32 * 2.0])  # (its first output's gradient: zeros)
    return gv.trace_gradients(
        gv.reduce_sum(gv.roll(x23, [1, -1], [0, 1]) * x23) + gv.reduce_sum(
            gv.reverse(q, [0, 2]) ** 2.0) + gv.reduce_sum(gv.slice(q, [1, 0, 1], [1, -1, 2]) ** 2.0)
        + gv.reduce_sum(a * a) + gv.reduce_sum(b * 3.0) + gv.reduce_sum(unused)
        + gv.reduce_sum(gv.math.reduce_euclidean_norm(q, axis=[0, 2]))
        + gv.reduce_sum(gv.math.reduce_euclidean_norm(x23, axis=1, keepdims=True) * x23)
        + gv.reduce_sum(gv.math.segment_sum(x32 * ties[:3], [0, 0, 2]) ** 2.0)
        + gv.reduce_sum(gv.math.segment_mean(ties * x23[0, 0], [0, 0, 2, 2]) ** 2.0)
        + gv.reduce_sum(gv.math.segment_max(ties * x23[0, 1], [0, 0, 1, 3]) ** 2.0)
        + gv.reduce_sum(gv.linalg.diag(x23) ** 2.0)
        + gv.reduce_sum(gv.linalg.diag(x23[0, :2], num_rows=4, num_cols=2) ** 2.0)
        + gv.reduce_sum(gv.linalg.diag_part(x23) ** 2.0) + gv.linalg.trace(x32 @ x23)
        + gv.reduce_sum(gv.linalg.diag_part(q) ** 2.0)
        + gv.reduce_sum(gv.linalg.band_part(q, 1, 0) ** 2.0)
        + gv.reduce_sum(gv.linalg.band_part(x32, -1, 0) ** 2.0)
        + gv.reduce_sum(gv.linalg.band_part(x23, 0, 1) ** 2.0), [x23, x32, q])


def _edges_of_the_vocabulary():
    """floormod where floor(a / b) is not NumPy's a // b (7.0 / 0.1), a slice of a scalar,
    and an infinite gradient through a diagonal (0 off it, not NaN)."""
    a = gv.Variable(np.array([7.0, 1.0, -3.5], np.float32), name="a")
    b = gv.Variable(np.array([0.1, 0.3, 0.7], np.float32), name="b")
    s = gv.Variable(2.5, name="s")
    m = gv.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), name="m")
    return gv.trace_gradients(
        gv.reduce_sum(gv.math.floormod(a, b)) + gv.slice(s, [], []) * 2.0
        + gv.reduce_sum(gv.math.reciprocal(gv.linalg.diag_part(m) - 1.0))
        + gv.reduce_sum(gv.linalg.diag(gv.math.reciprocal(a - 1.0))), [a, b, s, m])


def _second_order_of(f, x):
    """The trace of d/dx of the sum of squares of df/dx: f's gradient ops run forward."""
    with gv.GradientTape() as outer:
        with gv.GradientTape() as inner:
            y = gv.reduce_sum(f(x))
        (g,) = inner.gradient(y, [x])
        total = gv.reduce_sum(g * g)
    return outer.trace_gradient(total, [x])


def _convolutions():
    """Conv and pools in every padding (SAME with odd sizes and padding only after,
    explicit padding larger than the kernel's reach), stride and dilation, with a bias,
    and their gradients differentiated again, up to MaxPoolGradGrad's own backward."""
    img = gv.Variable(_f(1, 5, 5, 1), name="img")
    kern = gv.Variable(_f(3, 3, 1, 2), name="kern")
    bias = gv.Variable(_f(2), name="bias")
    out = {}
    for padding in ("SAME", "VALID", [[0, 0], [4, 0], [1, 2], [0, 0]]):
        for strides, dilations in ((1, 1), (2, 1), ([1, 2], 2)):
            out[f"conv2d {padding} {strides} {dilations}"] = (
                lambda p=padding, s=strides, d=dilations: gv.trace_gradients(
                    gv.reduce_sum(gv.nn.bias_add(gv.nn.conv2d(img, kern, s, p, dilations=d),
                                                 bias) ** 2.0), [img, kern, bias]))
    for padding in ("SAME", "VALID"):
        for ksize, strides in ((2, 2), (3, 2), (2, 1)):
            out[f"pools {padding} {ksize} {strides}"] = (
                lambda p=padding, k=ksize, s=strides: gv.trace_gradients(
                    gv.reduce_sum(gv.nn.max_pool2d(img, k, s, p) ** 2.0)
                    + gv.reduce_sum(gv.nn.avg_pool2d(img, k, s, p) ** 2.0), [img]))
    out["max pool with ties"] = lambda: gv.trace_gradients(
        gv.nn.max_pool2d(gv.constant(np.ones((1, 4, 4, 1), np.float32)) * kern[0, 0, 0, 0],
                         2, 2, "SAME"), [kern])
    out["conv and pools, second order"] = lambda: _second_order_windows(img, kern)
    out["max pool, third order"] = lambda: _third_order_max_pool(img)
    return out


def _second_order_windows(img, kern):
    with gv.GradientTape(persistent=True) as outer:
        with gv.GradientTape() as inner:
            h = gv.nn.conv2d(img, kern, 2, "SAME")
            y = (gv.reduce_sum(gv.nn.max_pool2d(h, 2, 1, "SAME") ** 2.0)
                 + gv.reduce_sum(gv.nn.avg_pool2d(h, 2, 1, "SAME") ** 2.0))
        g = inner.gradient(y, [img, kern])
        total = gv.reduce_sum(g[0] * g[0]) + gv.reduce_sum(g[1] * g[1])
    return outer.trace_gradient(total, [img, kern])


def _third_order_max_pool(img):
    """MaxPoolGrad and MaxPoolGradGrad each differentiated: grad_ys as sources."""
    up = gv.constant(_f(1, 3, 3, 1), name="up_pooled")
    (gx,) = gv.gradients(gv.nn.max_pool2d(img, 2, 2, "SAME"), img, grad_ys=up)
    dx = gv.constant(_f(1, 5, 5, 1), name="dx_probe")
    (gu,) = gv.gradients(gx, up, grad_ys=dx)
    return gv.trace_gradients(gu * gu, [dx])


def _second_order(x3, pos):
    """Gradients of gradients, which run the engine's helper ops (TanhGrad, ...)."""
    with gv.GradientTape(persistent=True) as outer:
        with gv.GradientTape() as inner:
            y = gv.reduce_sum(gv.tanh(x3) + gv.sigmoid(x3) + gv.relu(x3) * x3 + gv.sqrt(pos[0]))
        g = inner.gradient(y, [x3, pos])
        total = gv.reduce_sum(g[0] * g[0]) + gv.reduce_sum(g[1] * g[1])
    return outer.trace_gradient(total, [x3, pos])


CATALOGUE = _catalogue()


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_formula_of_the_catalogue_runs_and_gives_the_engines_gradient(name):
    trace = CATALOGUE[name]()
    assert formula_mismatches(trace) == []
    assert any(step_formulas(trace, s) for s in trace.steps), f"{name}: no formula ran"


def test_the_catalogue_reaches_every_op_type_with_a_formula():
    ran = set()
    for make in CATALOGUE.values():
        trace = make()
        for s in trace.steps:
            if s.kind == "backward" and step_formulas(trace, s):
                ran.add(s.op_type)
    # AddV2 is the name TensorFlow's traces use; the engine makes Add, so only a
    # loaded trace has it (its rule is Add's).
    with_formula = {t for t, rule in OP_RULES.items() if any(rule.formulas)} - {"AddV2"}
    assert with_formula - ran == set()


@pytest.mark.parametrize("make", [linear_regression, two_layer_mlp,
                                  lambda: scoped_tanh_chain(3)])
def test_every_formula_of_the_fixture_traces_runs(make):
    trace = make()
    assert formula_mismatches(trace) == []


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")
def test_every_formula_of_random_programs_runs(program):
    assert formula_mismatches(program()) == []


def test_the_softmax_cross_entropy_formula_scales_each_row_by_its_own_gradient():
    """Read as NumPy, grad * (softmax - labels) would scale the columns: the formula
    must say grad[:, None], and the sentence must say grad."""
    trace = CATALOGUE["softmax cross-entropy per row"]()
    step = next(s for s in trace.steps if s.kind == "backward"
                and s.op_type == "SoftmaxCrossEntropyWithLogits")
    words = describe(trace, step)
    (f,) = words.formulas
    assert f.expr == "grad[:, None] * (softmax(Add, axis=1) - labels)"
    assert "grad" in words.sentence.split("and uses", 1)[1]
    wrong = Formula(f.target, "grad * (softmax(Add, axis=1) - labels)", f.names)
    with pytest.raises(ValueError):  # (2,) against (2,3): NumPy refuses the wrong reading
        wrong.evaluate()


def test_mean_names_n_with_its_value():
    x = gv.Variable(_f(3, 4), name="m")
    trace = gv.trace_gradients(gv.reduce_mean(x, axis=1), x)
    (f,) = step_formulas(trace, 1)
    assert str(f).startswith("dL/dm = broadcast_to(grad[:, None], shape(m)) / n, n = 4: "
                             "(3,) -> (3,4)")


def test_a_wrong_formula_is_caught():
    """The check can fail: a formula with the wrong operand gives another array."""
    x = gv.Variable([1.0, 2.0], name="cw_x")
    w = gv.Variable([3.0, 5.0], name="cw_w")
    trace = gv.trace_gradients(gv.reduce_sum(x * w), [x, w])
    (fx, fw) = step_formulas(trace, 2)
    assert fx.expr == "grad * cw_w"
    swapped = Formula(fx.target, "grad * cw_x", fx.names, result=fx.result)
    assert not np.allclose(swapped.evaluate(), fx.result.values)
    np.testing.assert_allclose(fx.evaluate(), fx.result.values)


def test_long_names_are_never_cut_in_a_formula():
    name = "SoftmaxCrossEntropyWithLogitsOfTheLastLayer"
    x = gv.Variable([1.0, 2.0], name=name)
    trace = gv.trace_gradients(gv.reduce_mean(x * x), x)
    text = describe(trace, 2).formula
    assert f"dL/d{name} (as input 0) = grad * {name}" in text
    assert "\u2026" not in text
