"""Every gradient rule against central differences, and every op has a rule."""

import numpy as np
import pytest

import gradviz as gv
from gradviz.engine import array_ops, nn, ops
from gradviz.engine.ops import OpType

rng = np.random.default_rng(42)


def r(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape)


def pos(*shape):
    return rng.uniform(0.5, 2.0, shape)


# the windows of a strided SAME convolution and pool, and a pool's input and output,
# for the cases of the gradient ops, which take them as given
CONV = gv.nn.conv2d(np.zeros((2, 5, 5, 2)), np.zeros((3, 3, 2, 3)), 2, "SAME").op.attrs
POOL_X = gv.constant(r(2, 5, 5, 2))
POOL_Y = gv.nn.max_pool2d(POOL_X, 3, 2, "SAME")
POOL = POOL_Y.op.attrs

# op type -> (f(*tensors) -> tensor, [input points]); f must exercise that op
CASES = {
    OpType.ADD: (lambda x, y: x + y, [r(2, 3), r(3)]),
    OpType.ADD_N: (lambda x, y: gv.add_n([x, y, x]), [r(2, 2), r(2, 2)]),
    OpType.SUB: (lambda x, y: x - y, [r(2, 1), r(1, 3)]),
    OpType.MUL: (lambda x, y: x * y, [r(2, 3), r(2, 1)]),
    OpType.DIV: (lambda x, y: x / y, [r(3), pos(2, 3)]),
    OpType.NEG: (lambda x: -x, [r(4)]),
    OpType.POW: (lambda x, y: x ** y, [pos(3), r(3)]),
    OpType.SQUARE: (lambda x: gv.square(x), [r(2, 2)]),
    OpType.SQRT: (lambda x: gv.sqrt(x), [pos(3)]),
    OpType.EXP: (lambda x: gv.exp(x), [r(3)]),
    OpType.LOG: (lambda x: gv.log(x), [pos(3)]),
    OpType.ABS: (lambda x: gv.abs(x), [np.array([-1.5, 0.7, 2.0])]),
    OpType.TANH: (lambda x: gv.tanh(x), [r(3)]),
    OpType.SIGMOID: (lambda x: gv.sigmoid(x), [r(3, 2)]),
    OpType.RELU: (lambda x: gv.relu(x), [np.array([-1.0, 0.5, 2.0, -0.3])]),
    OpType.SIGN: (lambda x: gv.sign(x) * x, [np.array([-1.0, 0.5, 2.0, -0.3])]),
    OpType.MAXIMUM: (lambda x, y: gv.maximum(x, y), [np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.0, 4.0])]),
    OpType.MINIMUM: (lambda x, y: gv.minimum(x, y), [np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.0, 4.0])]),
    OpType.MATMUL: (lambda a, b: gv.matmul(a, b), [r(2, 3), r(3, 4)]),
    OpType.SUM: (lambda x: gv.reduce_sum(x, axis=1, keepdims=True), [r(2, 3)]),
    OpType.MEAN: (lambda x: gv.reduce_mean(x, axis=0), [r(4, 3)]),
    OpType.MAX: (lambda x: gv.reduce_max(x, axis=1), [np.array([[1.0, 3.0, 2.0], [0.0, -1.0, 0.5]])]),
    OpType.RESHAPE: (lambda x, w=r(3, 2): gv.reshape(x, [3, 2]) * gv.constant(w), [r(2, 3)]),
    OpType.TRANSPOSE: (lambda x, w=r(3, 2): gv.transpose(x) * gv.constant(w), [r(2, 3)]),
    OpType.BROADCAST_TO: (lambda x, w=r(2, 3): gv.broadcast_to(x, [2, 3]) * gv.constant(w), [r(1, 3)]),
    OpType.CONCAT: (lambda x, y, w=r(2, 5): gv.concat([x, y], axis=1) * gv.constant(w), [r(2, 2), r(2, 3)]),
    OpType.SPLIT: (lambda x: gv.split(x, [1, 2], axis=1)[1] * 2.0, [r(2, 3)]),
    OpType.PACK: (lambda x, y, w=r(3, 2): gv.stack([x, y], axis=1) * gv.constant(w), [r(3), r(3)]),
    OpType.UNPACK: (lambda x: gv.unstack(x)[0] * 3.0, [r(2, 3)]),
    OpType.STRIDED_SLICE: (lambda x: x[1:, ::2] * 2.0, [r(3, 4)]),
    OpType.IDENTITY: (lambda x: gv.identity(x), [r(3)]),
    OpType.SOFTMAX: (lambda x, w=r(2, 3): gv.softmax(x) * gv.constant(w), [r(2, 3)]),
    OpType.LOG_SOFTMAX: (lambda x, w=r(2, 3): gv.log_softmax(x) * gv.constant(w), [r(2, 3)]),
    OpType.SIGMOID_XENT: (lambda z, x: gv.sigmoid_cross_entropy_with_logits(labels=z, logits=x), [rng.uniform(0, 1, (2, 2)), r(2, 2)]),
    OpType.SOFTMAX_XENT: (lambda z, x: gv.softmax_cross_entropy_with_logits(labels=z, logits=x), [rng.uniform(0, 1, (2, 3)), r(2, 3)]),
    OpType.SELECT: (lambda x, y: gv.where(gv.constant([True, False, True]), x, y), [r(3), r(3)]),
    OpType.TANH_GRAD: (lambda y, g: ops.tanh_grad(y, g), [r(3), r(3)]),
    OpType.SIGMOID_GRAD: (lambda y, g: ops.sigmoid_grad(y, g), [r(3), r(3)]),
    OpType.RELU_GRAD: (lambda g, y: ops.relu_grad(g, y), [r(3), np.array([1.0, -1.0, 2.0])]),
    OpType.SQRT_GRAD: (lambda y, g: ops.sqrt_grad(y, g), [pos(3), r(3)]),
    OpType.STRIDED_SLICE_GRAD: (lambda g, w=r(3, 2): ops.strided_slice_grad(g, [[1, None, None]], (3, 2)) * gv.constant(w), [r(2, 2)]),
    OpType.CONV2D: (lambda x, w: gv.nn.conv2d(x, w, 2, "SAME"), [r(2, 5, 5, 2), r(3, 3, 2, 3)]),
    OpType.CONV2D_BACKPROP_INPUT: (lambda w, g: nn.conv2d_backprop_input((2, 5, 5, 2), w, g, CONV), [r(3, 3, 2, 3), r(2, 3, 3, 3)]),
    OpType.CONV2D_BACKPROP_FILTER: (lambda x, g: nn.conv2d_backprop_filter(x, (3, 3, 2, 3), g, CONV), [r(2, 5, 5, 2), r(2, 3, 3, 3)]),
    OpType.MAX_POOL: (lambda x: gv.nn.max_pool2d(x, 3, 2, "SAME"), [r(2, 5, 5, 2)]),
    OpType.MAX_POOL_GRAD: (lambda g: nn.max_pool_grad(POOL_X, POOL_Y, g, POOL), [r(2, 3, 3, 2)]),
    OpType.MAX_POOL_GRAD_GRAD: (lambda g: nn.max_pool_grad_grad(POOL_X, POOL_Y, g, POOL), [r(2, 5, 5, 2)]),
    OpType.AVG_POOL: (lambda x: gv.nn.avg_pool2d(x, 3, 2, "SAME"), [r(2, 5, 5, 2)]),
    OpType.AVG_POOL_GRAD: (lambda g: nn.avg_pool_grad((2, 5, 5, 2), g, POOL), [r(2, 3, 3, 2)]),
    OpType.BIAS_ADD: (lambda x, b: gv.nn.bias_add(x, b), [r(2, 3, 4), r(4)]),
    OpType.SIN: (lambda x: gv.sin(x), [r(2, 3, low=-3, high=3)]),
    OpType.COS: (lambda x: gv.cos(x), [r(2, 3, low=-3, high=3)]),
    OpType.RSQRT: (lambda x: gv.math.rsqrt(x), [pos(3)]),
    OpType.ERF: (lambda x: gv.math.erf(x), [r(2, 3, low=-2, high=2)]),
    OpType.ERFC: (lambda x: gv.math.erfc(x), [r(2, 3, low=-2, high=2)]),
    OpType.SOFTPLUS: (lambda x: gv.nn.softplus(x), [r(2, 3, low=-3, high=3)]),
    OpType.LEAKY_RELU: (lambda x: gv.nn.leaky_relu(x, 0.1), [np.array([-1.0, 0.5, 2.0, -0.3])]),
    OpType.LEAKY_RELU_GRAD: (lambda g: nn.leaky_relu_grad(g, gv.constant([1.0, -1.0, 2.0]), 0.3), [r(3)]),
    OpType.SQUARED_DIFFERENCE: (lambda x, y: gv.math.squared_difference(x, y), [r(2, 3), r(3)]),
    OpType.MIN: (lambda x: gv.reduce_min(x, axis=0), [np.array([[1.0, 3.0, 2.0], [0.0, -1.0, 0.5]])]),
    OpType.EINSUM: (lambda a, b: gv.einsum("bqd,bkd->bqk", a, b), [r(2, 3, 4), r(2, 2, 4)]),
    OpType.EXPAND_DIMS: (lambda x, w=r(2, 1, 3): gv.expand_dims(x, 1) * gv.constant(w), [r(2, 3)]),
    OpType.SQUEEZE: (lambda x, w=r(2, 3): gv.squeeze(x) * gv.constant(w), [r(2, 1, 3)]),
    OpType.TILE: (lambda x, w=r(4, 9): gv.tile(x, [2, 3]) * gv.constant(w), [r(2, 3)]),
    OpType.PAD: (lambda x, w=r(5, 4): gv.pad(x, [[1, 2], [0, 1]], constant_values=0.5) * gv.constant(w), [r(2, 3)]),
    OpType.MIRROR_PAD: (lambda x, w=r(6, 5): gv.pad(x, [[2, 1], [1, 1]], mode="REFLECT") * gv.constant(w), [r(3, 3)]),
    OpType.PROD: (lambda x: gv.math.reduce_prod(x, axis=[0, 2]), [r(2, 3, 2)]),
    OpType.CUMSUM: (lambda x, w=r(2, 3): gv.math.cumsum(x, 1, exclusive=True) * gv.constant(w), [r(2, 3)]),
    OpType.CUMPROD: (lambda x, w=r(2, 3): gv.math.cumprod(x, -1, reverse=True) * gv.constant(w), [pos(2, 3)]),
    OpType.DIV_NO_NAN: (lambda x, y: gv.math.divide_no_nan(x, y), [r(2, 3), pos(3)]),
    OpType.GATHER: (lambda p, w=r(3, 2): gv.gather(p, [1, 3, 1]) * gv.constant(w), [r(4, 2)]),
    OpType.GATHER_ND: (lambda p: gv.gather_nd(p, [[1, 0], [3, 1], [1, 0]]), [r(4, 2)]),
    OpType.SCATTER_ND: (lambda u, w=r(4, 2): gv.scatter_nd([[1], [3], [1]], u, [4, 2]) * gv.constant(w), [r(3, 2)]),
    OpType.UNSORTED_SEGMENT_SUM: (lambda d, w=r(3, 2): gv.math.unsorted_segment_sum(d, [2, 0, 2, -1], 3) * gv.constant(w), [r(4, 2)]),
    OpType.MIRROR_PAD_GRAD: (lambda g, w=r(3, 3): array_ops.mirror_pad_grad(g, [[2, 1], [1, 1]], "SYMMETRIC") * gv.constant(w), [r(6, 5)]),
    # the elementwise table (gradviz/engine/elementwise.py)
    OpType.LOG1P: (lambda x: gv.math.log1p(x), [r(2, 3, low=-0.9, high=2)]),
    OpType.EXPM1: (lambda x: gv.math.expm1(x), [r(2, 3, low=-2, high=2)]),
    OpType.RECIPROCAL: (lambda x: gv.math.reciprocal(x), [pos(2, 3) * np.array([1, -1, 1])]),
    OpType.ATAN2: (lambda y, x: gv.atan2(y, x), [r(2, 3), np.array([0.5, -1.5, 0.8])]),
    OpType.XLOGY: (lambda x, y: gv.math.xlogy(x, y), [r(2, 3), pos(3)]),
    OpType.XLOG1PY: (lambda x, y: gv.math.xlog1py(x, y), [r(2, 3), r(2, 1, low=-0.5, high=2)]),
    OpType.XDIVY: (lambda x, y: gv.math.xdivy(x, y), [r(2, 3), pos(3) * np.array([1, -1, 1])]),
    OpType.MULTIPLY_NO_NAN: (lambda x, y: gv.math.multiply_no_nan(x, y), [r(2, 3), r(3)]),
    OpType.FLOORMOD: (lambda x, y: gv.math.floormod(x, y), [np.array([[0.3, 1.7, -2.2], [2.6, -0.4, 3.3]]), np.array([1.1, 0.9, -1.3])]),
    # TensorFlow's everyday vocabulary
    OpType.ROLL: (lambda x, w=r(3, 4): gv.roll(x, [1, -2], [0, 1]) * gv.constant(w), [r(3, 4)]),
    OpType.REVERSE: (lambda x, w=r(3, 4): gv.reverse(x, [1]) * gv.constant(w), [r(3, 4)]),
    OpType.SLICE: (lambda x, w=r(2, 2): gv.slice(x, [1, 1], [2, -1]) * gv.constant(w), [r(3, 3)]),
    OpType.IDENTITY_N: (lambda x, y: (lambda a, b: a * 2.0 + b * b)(*gv.identity_n([x, y])), [r(3), r(3)]),
    OpType.EUCLIDEAN_NORM: (lambda x: gv.math.reduce_euclidean_norm(x, axis=1), [r(2, 3)]),
    OpType.SEGMENT_SUM: (lambda d, w=r(3, 2): gv.math.segment_sum(d, [0, 0, 2, 2]) * gv.constant(w), [r(4, 2)]),
    OpType.SEGMENT_MEAN: (lambda d, w=r(4, 2): gv.math.segment_mean(d, [0, 0, 1, 3]) * gv.constant(w), [r(4, 2)]),
    OpType.SEGMENT_MAX: (lambda d, w=r(3, 2): gv.math.segment_max(d, [0, 0, 2, 2]) * gv.constant(w), [np.array([[1.0, 2.0], [1.5, 4.0], [5.0, 6.0], [0.0, 6.5]])]),
    OpType.MATRIX_DIAG: (lambda d, w=r(2, 3, 3): gv.linalg.diag(d) * gv.constant(w), [r(2, 3)]),
    OpType.MATRIX_DIAG_PART: (lambda x: gv.linalg.diag_part(x), [r(2, 3, 4)]),
    OpType.MATRIX_BAND_PART: (lambda x, w=r(3, 4): gv.linalg.band_part(x, 1, 0) * gv.constant(w), [r(3, 4)]),
}

NOT_DIFFERENTIABLE = {OpType.ONES_LIKE, OpType.ZEROS_LIKE, OpType.EQUAL,
                      OpType.GREATER, OpType.GREATER_EQUAL, OpType.LESS, OpType.LESS_EQUAL,
                      OpType.IS_FINITE, OpType.ARG_MAX, OpType.ARG_MIN, OpType.ONE_HOT,
                      OpType.NOT_EQUAL, OpType.REDUCE_ANY, OpType.REDUCE_ALL}
# flat between jumps: a rule that gives None for every input, as TensorFlow's
NO_GRADIENT = {OpType.FLOOR, OpType.CEIL, OpType.ROUND, OpType.FLOORDIV}
LEAVES = {OpType.CONST, OpType.VARIABLE}
NO_FLOW = {OpType.STOP_GRADIENT, OpType.PREVENT_GRADIENT}  # (the second raises: see below)
CHECKED_SEPARATELY = {OpType.CAST}  # float32 round trips need a coarser check (below)
# piecewise linear: the second derivative is zero almost everywhere, which the
# first-order check already covers
PIECEWISE_LINEAR = {OpType.RELU, OpType.ABS, OpType.SIGN, OpType.MAXIMUM, OpType.MINIMUM, OpType.MAX,
                    OpType.RELU_GRAD, OpType.SELECT, OpType.MAX_POOL, OpType.MAX_POOL_GRAD,
                    OpType.MAX_POOL_GRAD_GRAD, OpType.MIN, OpType.LEAKY_RELU,
                    OpType.LEAKY_RELU_GRAD, OpType.FLOORMOD, OpType.SEGMENT_MAX}


def test_every_op_type_has_a_rule():
    registered = set(gv.registered_op_types())
    missing = [t for t in OpType.all() if t not in registered]
    assert missing == []


def test_every_differentiable_op_is_checked_below():
    unchecked = (set(OpType.all()) - set(CASES) - NOT_DIFFERENTIABLE - LEAVES - NO_FLOW
                 - CHECKED_SEPARATELY - NO_GRADIENT)
    assert unchecked == set()


@pytest.mark.parametrize("op_type", sorted(NOT_DIFFERENTIABLE))
def test_not_differentiable_ops_have_none_rule(op_type):
    assert gv.get_gradient_function(op_type) is None


def test_prevent_gradient_raises_a_lookup_error_with_its_message():
    x = gv.constant([1.0, 2.0])
    y = gv.prevent_gradient(x * 2.0, message="a kernel without a gradient")
    assert y.numpy().tolist() == [2.0, 4.0]
    with pytest.raises(LookupError, match="Gradient explicitly disabled. Reason: a kernel "
                                          "without a gradient"):
        gv.gradients(y, x)
    assert gv.gradients(gv.stop_gradient(y) * x, x)[0].numpy().tolist() == [2.0, 4.0]


@pytest.mark.parametrize("op_type", sorted(NO_GRADIENT))
def test_flat_ops_give_none_for_every_input(op_type):
    rule = gv.get_gradient_function(op_type)
    x = gv.constant([[-1.5, 0.5], [2.5, 3.0]])
    y = {OpType.FLOOR: gv.floor, OpType.CEIL: gv.math.ceil, OpType.ROUND: gv.round,
         OpType.FLOORDIV: lambda t: t // 2.0}[op_type](x)
    assert y.op.type == op_type
    assert all(g is None for g in rule(y.op, gv.ones_like(y)))
    assert gv.gradients(y, x) == [None]
    assert gv.gradients(y, x, unconnected_gradients="zero")[0].numpy().tolist() == [[0, 0], [0, 0]]


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_rule_matches_finite_differences(op_type):
    f, points = CASES[op_type]
    tensors = [gv.constant(p) for p in points]
    ops_seen = _op_types(f(*tensors))
    assert op_type in ops_seen, f"the case for {op_type} does not use it: {ops_seen}"
    result = gv.check_gradients(f, points)
    assert result.passed, result


@pytest.mark.parametrize("op_type", sorted(set(CASES) - PIECEWISE_LINEAR))
def test_second_derivatives_match_finite_differences(op_type):
    """The rules build graph tensors, so a gradient can be differentiated again."""
    f, points = CASES[op_type]

    def first(*xs):
        y = f(*xs)
        gs = gv.gradients(y, list(xs), grad_ys=gv.constant(np.full(y.shape, 0.7)),
                          unconnected_gradients="zero")
        gs = [gv.convert_to_tensor(g) for g in gs]  # (a gather's is sparse: made dense)
        return gv.add_n([gv.reduce_sum(g * g) for g in gs])

    result = gv.check_gradients(first, points, tolerance=1e-4)
    assert result.passed, result


def _op_types(t):
    seen, stack = set(), [t.op]
    while stack:
        op = stack.pop()
        if op.type in seen:
            continue
        seen.add(op.type)
        stack.extend(i.op for i in op.inputs)
    return seen


def test_registered_function_called_by_hand_gives_the_seed_figures():
    a = gv.constant([[1, 2], [3, 4]], gv.float32)
    b = gv.constant([[6, 7, 8], [9, 10, 11]], gv.float32)
    c = a @ b
    matmul_grad = gv.get_gradient_function("MatMul")
    by_hand, _ = matmul_grad(c.op, c)
    assert by_hand.numpy().tolist() == [[573, 816], [1295, 1844]]
    ones_grad, _ = matmul_grad(c.op, gv.ones_like(c))
    assert ones_grad.numpy().tolist() == [[21, 30], [21, 30]]


@pytest.mark.parametrize("t_a,t_b", [(False, True), (True, False), (True, True)])
def test_matmul_transposed_variants(t_a, t_b):
    a = r(3, 2) if t_a else r(2, 3)
    b = r(4, 3) if t_b else r(3, 4)
    result = gv.check_gradients(lambda x, y: gv.matmul(x, y, transpose_a=t_a, transpose_b=t_b), [a, b])
    assert result.passed, result


def test_batched_matmul_broadcasts_and_reduces():
    result = gv.check_gradients(lambda x, w: gv.matmul(x, w), [r(4, 2, 3), r(3, 5)])
    assert result.passed, result


def test_missing_rule_names_the_op_type():
    unknown = gv.define_op("NoRuleYet", lambda x: x * 2)
    x = gv.constant([1.0])
    with pytest.raises(NotImplementedError, match="'NoRuleYet'"):
        gv.gradients(unknown(x), x)


def test_rule_returning_the_wrong_count_names_the_op():
    bad = gv.define_op("BadCount", lambda x, y: x + y,
                       gradient=lambda op, grad: (grad,))
    x = gv.constant([1.0])
    with pytest.raises(ValueError, match="BadCount: gradient rule <lambda> returned 1 gradient, expected 2"):
        gv.gradients(bad(x, x), x)


def test_registering_a_second_rule_for_a_type_is_refused():
    with pytest.raises(KeyError, match="already has a gradient rule"):
        gv.RegisterGradient("MatMul")(lambda op, grad: (grad, grad))


def test_new_op_with_registered_gradient_checks_out():
    cube = gv.define_op("TestCube", lambda x: x ** 3)

    @gv.RegisterGradient("TestCube")
    def _cube_grad(op, grad):
        (x,) = op.inputs
        return grad * 3.0 * gv.square(x)

    assert gv.check_gradients(cube, [r(2, 2)]).passed
    x = gv.constant([2.0])
    assert gv.gradients(cube(x), x)[0].numpy().tolist() == [12.0]


def test_check_gradients_catches_a_wrong_rule():
    wrong = gv.define_op("WrongSquare", lambda x: x * x, gradient=lambda op, grad: grad * op.inputs[0])
    result = gv.check_gradients(wrong, [np.array([1.0, 2.0, 3.0])])
    assert not result.passed
    assert result.max_errors[0] > 0.5  # the rule gives x where 2x is right


def test_check_gradients_of_a_scalar_gives_its_gradient_itself():
    # a scalar result is not projected on a random number: both estimates are df/dx
    result = gv.check_gradients(lambda x: gv.reduce_sum(x * x), [np.array([1.0, -2.0, 3.0])])
    assert result.passed
    assert np.allclose(result.analytic[0], [2.0, -4.0, 6.0])
    assert np.allclose(result.numeric[0], [2.0, -4.0, 6.0], atol=1e-6)


def test_cast_between_floats_passes_the_gradient_back():
    result = gv.check_gradients(lambda x: gv.cast(gv.cast(x, gv.float32), gv.float64) ** 2,
                                [np.array([0.5, 1.25])], delta=1e-3, tolerance=1e-4)
    assert result.passed, result
    x = gv.constant([1.5], gv.float64)
    (g,) = gv.gradients(gv.cast(x, gv.float32), x)
    assert g.dtype == gv.float64 and g.numpy().tolist() == [1.0]


def test_custom_gradient_replaces_the_backward():
    @gv.custom_gradient
    def scaled_identity(x):
        return gv.identity(x), lambda dy: dy * 10.0

    x = gv.constant([1.0, 2.0])
    assert gv.gradients(scaled_identity(x), x)[0].numpy().tolist() == [10.0, 10.0]


def test_python_number_operands_keep_their_exact_value():
    # Python numbers become 0-d constants (shared between ops); -0.0 and NaN must survive it
    x = gv.constant([1.0, 2.0])
    assert np.signbit((x * -0.0).numpy()).all() and not np.signbit((x * 0.0).numpy()).any()
    assert np.isnan((x + float("nan")).numpy()).all()
    assert (x + 0.25).numpy().tolist() == [1.25, 2.25] == (x + 0.25).numpy().tolist()
    assert (gv.constant([1.0], gv.float64) * 0.1).numpy()[0] == 0.1  # float64 keeps 0.1 exactly


def test_a_cross_entropys_gradient_is_the_same_with_its_loss_kept_or_gone():
    # the rule reuses the exponentials the loss computed while the loss lives, and
    # works them out again once it is gone: the same softmax op, the same bits
    import gc

    from gradviz.engine.gradient_rules import get_gradient_function

    rng = np.random.default_rng(5)
    logits = gv.constant(rng.standard_normal((3, 4)).astype(np.float32))
    labels = gv.constant(rng.dirichlet(np.ones(4), 3).astype(np.float32))
    loss = gv.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    op, upstream = loss.op, gv.constant(np.float32([1.0, 2.0, 3.0]))
    kept = get_gradient_function(op)(op, upstream)[1]
    del loss
    gc.collect()
    gone = get_gradient_function(op)(op, upstream)[1]
    np.testing.assert_array_equal(kept.numpy(), gone.numpy())
    for grad in (kept, gone):  # grad * (softmax * sum(labels) - labels)
        softmax_op = grad.op.inputs[1].op.inputs[0].op.inputs[0].op
        assert softmax_op.type == OpType.SOFTMAX and softmax_op.inputs == (logits,)
    softmax = gv.nn.softmax(logits).numpy()
    want = upstream.numpy()[:, None] * (softmax * labels.numpy().sum(1, keepdims=True)
                                         - labels.numpy())
    np.testing.assert_allclose(kept.numpy(), want, rtol=1e-6)
