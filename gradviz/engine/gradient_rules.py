"""The gradient-rule table: one function per op type, keyed by the type's name.

A rule is ``rule(op, grad)`` (``rule(op, *grads)`` for ops with several
outputs): ``grad`` is dL/d(output), a tensor shaped like the output, and the
rule returns dL/d(input) for each input, or ``None`` where there is none.
Rules may return a gradient in the *broadcast* shape; the engine sums it back
to the input's shape (a recorded "reduce" step), so rules stay as simple as
the textbook formula.  Rules build their results from gradviz ops, so
gradients are tensors of the graph and can be differentiated again.

>>> import gradviz as gv
>>> a = gv.constant([[1., 2.], [3., 4.]]); b = gv.constant([[6., 7., 8.], [9., 10., 11.]])
>>> c = a @ b
>>> grad_a, grad_b = gv.get_gradient_function("MatMul")(c.op, gv.ones_like(c))
>>> grad_a.numpy().tolist()
[[21.0, 30.0], [21.0, 30.0]]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import array_ops, elementwise, linalg_ops, math_ops, nn, ops
from .graph import Operation, Tensor
from .indexed_slices import IndexedSlices
from .ops import OpType

__all__ = ["RegisterGradient", "NotDifferentiable", "get_gradient_function", "registered_op_types"]

GradFn = Callable[..., Any]

#: op type -> rule; None marks an op type registered as not differentiable.
_RULES: dict[str, GradFn | None] = {}


class RegisterGradient:
    """Decorator registering ``fn(op, grad)`` as the gradient rule of ``op_type``.

    Registering a different function for a type that already has one is an
    error (re-running the same definition, as a notebook cell does, is fine).

    >>> import gradviz as gv
    >>> @gv.RegisterGradient("DocCube")
    ... def _doc_cube_grad(op, grad):
    ...     (x,) = op.inputs
    ...     return grad * 3.0 * x * x          # d(x^3)/dx = 3 x^2
    >>> gv.get_gradient_function("DocCube") is _doc_cube_grad
    True
    """

    def __init__(self, op_type: str) -> None:
        if not isinstance(op_type, str) or not op_type:
            raise TypeError(f"RegisterGradient: op_type must be a non-empty string, got {op_type!r}")
        self.op_type = op_type

    def __call__(self, fn: GradFn) -> GradFn:
        if not callable(fn):
            raise TypeError(f"RegisterGradient({self.op_type!r}) decorates a function "
                            f"fn(op, grad), got {fn!r}")
        old = _RULES.get(self.op_type)
        if old is not None and _qualname(old) != _qualname(fn):
            raise KeyError(f"{self.op_type!r} already has a gradient rule, {_qualname(old)}; "
                           "give the new op its own type name")
        _RULES[self.op_type] = fn
        return fn


def NotDifferentiable(op_type: str) -> None:  # noqa: N802 - TensorFlow's name
    """Declare that ``op_type`` passes no gradient to any input."""
    _RULES[op_type] = None


def _qualname(fn: GradFn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def get_gradient_function(op: str | Operation) -> GradFn | None:
    """The rule registered for an op type (or an Operation's type).

    Returns None for a type declared not differentiable; raises
    ``NotImplementedError`` naming the type when none is registered.
    """
    op_type = op.type if isinstance(op, Operation) else op
    try:
        return _RULES[op_type]
    except KeyError:
        raise NotImplementedError(
            f"no gradient rule is registered for op type {op_type!r}; register one with "
            f"@gv.RegisterGradient({op_type!r}) on a function (op, grad) -> one gradient "
            "per input") from None
    except TypeError:
        raise TypeError(f"get_gradient_function: expected an op type name or an Operation, "
                        f"got {op!r}") from None


def passes_no_gradient(op_type: str) -> bool:
    """Whether an op of ``op_type`` never passes a gradient to any input: a stop_gradient,
    an op declared not differentiable, or one whose rule gives None for every input (floor)."""
    return (op_type == OpType.STOP_GRADIENT or _RULES.get(op_type, True) is None
            or op_type in _FLAT)


def registered_op_types() -> list[str]:
    """Every op type with a registered rule (or declared not differentiable)."""
    return list(_RULES)


def _kept_shape(op: Operation) -> list[int]:
    """The input's shape with 1 on each reduced axis (the keepdims shape)."""
    shape = list(op.inputs[0].shape)
    for a in op.get_attr("axis"):
        shape[a] = 1
    return shape


# ---------------------------------------------------------------- leaves and plumbing

@RegisterGradient(OpType.CONST)
def _const_grad(op: Operation, grad: Tensor) -> tuple:
    return ()


@RegisterGradient(OpType.VARIABLE)
def _variable_grad(op: Operation, grad: Tensor) -> tuple:
    return ()


@RegisterGradient(OpType.IDENTITY)
def _identity_grad(op: Operation, grad: Tensor) -> tuple:
    return (grad,)


@RegisterGradient(OpType.STOP_GRADIENT)
def _stop_gradient_grad(op: Operation, grad: Tensor) -> tuple:
    return (None,)  # the whole point: nothing flows back


@RegisterGradient(OpType.SIGN)
def _sign_grad(op: Operation, grad: Tensor) -> tuple:
    # d sign(x)/dx = 0 (at 0 too): a zero gradient, not none, as TensorFlow's rule gives,
    # so a tape records sign(x) and a Jacobian through it is zeros
    return (ops.zeros_like(op.inputs[0]),)


for _t in (OpType.ONES_LIKE, OpType.ZEROS_LIKE, OpType.EQUAL, OpType.GREATER,
           OpType.GREATER_EQUAL, OpType.LESS, OpType.LESS_EQUAL, OpType.IS_FINITE,
           OpType.ARG_MAX, OpType.ARG_MIN, OpType.ONE_HOT):
    NotDifferentiable(_t)


@RegisterGradient(OpType.CAST)
def _cast_grad(op: Operation, grad: Tensor) -> tuple:
    # only a float -> float cast carries gradient; casts to or from integers cut it
    x = op.inputs[0]
    if x.dtype.is_floating and grad.dtype.is_floating:
        return (ops.cast(grad, x.dtype),)
    return (None,)


# ---------------------------------------------------------------- arithmetic

@RegisterGradient(OpType.ADD)
def _add_grad(op: Operation, grad: Tensor) -> tuple:
    return grad, grad  # d(x+y)/dx = d(x+y)/dy = 1


@RegisterGradient(OpType.ADD_N)
def _add_n_grad(op: Operation, grad: Tensor) -> tuple:
    return (grad,) * len(op.inputs)


@RegisterGradient(OpType.SUB)
def _sub_grad(op: Operation, grad: Tensor) -> tuple:
    return grad, None if _skips(op)[1] else ops.negative(grad)


def _skips(op: Operation) -> tuple[bool, bool]:
    """Which of a binary op's two inputs the engine does not need (TensorFlow's protocol)."""
    skip = op.skip_input_indices
    return 0 in skip, 1 in skip


@RegisterGradient(OpType.MUL)
def _mul_grad(op: Operation, grad: Tensor) -> tuple:
    x, y = op.inputs
    skip = op.skip_input_indices  # (see _skips; spelt out on this most common rule)
    # d(xy)/dx = y, d(xy)/dy = x
    return None if 0 in skip else grad * y, None if 1 in skip else grad * x


@RegisterGradient(OpType.DIV)
def _div_grad(op: Operation, grad: Tensor) -> tuple:
    x, y = op.inputs
    skip_x, skip_y = _skips(op)
    # d(x/y)/dx = 1/y ; d(x/y)/dy = -x/y^2, computed as ((-x / y) / y), in TensorFlow's
    # order, so that a 0 in y gives the same infinities and NaNs
    return (None if skip_x else grad / y,
            None if skip_y else grad * (ops.negative(x) / y / y))


@RegisterGradient(OpType.NEG)
def _neg_grad(op: Operation, grad: Tensor) -> tuple:
    return (ops.negative(grad),)


@RegisterGradient(OpType.POW)
def _pow_grad(op: Operation, grad: Tensor) -> tuple:
    x, y = op.inputs
    z = op.outputs[0]
    # dz/dx = y x^(y-1) ; dz/dy = z log(x), log(x) taken as 0 where x <= 0, as TensorFlow's:
    # where z is infinite there (0 ** -1), z * 0 is NaN, in both
    skip_x, skip_y = _skips(op)
    gx = None if skip_x else grad * y * ops.pow(x, y - 1)
    if skip_y or not x.dtype.is_floating:
        return gx, None
    positive = ops.greater(x, 0)
    safe_log = ops.log(ops.where(positive, x, ops.ones_like(x)))
    gy = grad * z * ops.where(positive, safe_log, ops.zeros_like(x))
    return gx, gy


@RegisterGradient(OpType.SQUARE)
def _square_grad(op: Operation, grad: Tensor) -> tuple:
    (x,) = op.inputs
    return (grad * (2 * x),)  # d(x^2)/dx = 2x


@RegisterGradient(OpType.SQRT)
def _sqrt_grad(op: Operation, grad: Tensor) -> tuple:
    return (ops.sqrt_grad(op.outputs[0], grad),)  # d sqrt(x)/dx = 0.5 / sqrt(x)


@RegisterGradient(OpType.EXP)
def _exp_grad(op: Operation, grad: Tensor) -> tuple:
    return (grad * op.outputs[0],)  # d e^x/dx = e^x


@RegisterGradient(OpType.LOG)
def _log_grad(op: Operation, grad: Tensor) -> tuple:
    return (grad / op.inputs[0],)  # d log(x)/dx = 1/x


@RegisterGradient(OpType.ABS)
def _abs_grad(op: Operation, grad: Tensor) -> tuple:
    return (grad * ops.sign(op.inputs[0]),)


@RegisterGradient(OpType.TANH)
def _tanh_grad(op: Operation, grad: Tensor) -> tuple:
    return (ops.tanh_grad(op.outputs[0], grad),)  # 1 - tanh(x)^2


@RegisterGradient(OpType.SIGMOID)
def _sigmoid_grad(op: Operation, grad: Tensor) -> tuple:
    return (ops.sigmoid_grad(op.outputs[0], grad),)  # s (1 - s)


@RegisterGradient(OpType.RELU)
def _relu_grad(op: Operation, grad: Tensor) -> tuple:
    return (ops.relu_grad(grad, op.outputs[0]),)  # 1 where x > 0


def _select_grads(mask: Tensor, grad: Tensor) -> tuple:
    zeros = ops.zeros_like(grad)
    return ops.where(mask, grad, zeros), ops.where(mask, zeros, grad)


@RegisterGradient(OpType.MAXIMUM)
def _maximum_grad(op: Operation, grad: Tensor) -> tuple:
    x, y = op.inputs
    return _select_grads(ops.greater_equal(x, y), grad)  # ties go to x, as in TensorFlow


@RegisterGradient(OpType.MINIMUM)
def _minimum_grad(op: Operation, grad: Tensor) -> tuple:
    x, y = op.inputs
    return _select_grads(ops.less_equal(x, y), grad)


@RegisterGradient(OpType.SELECT)
def _select_grad(op: Operation, grad: Tensor) -> tuple:
    return (None, *_select_grads(op.inputs[0], grad))


# ---------------------------------------------------------------- matrices

@RegisterGradient(OpType.MATMUL)
def _matmul_grad(op: Operation, grad: Tensor) -> tuple:
    a, b = op.inputs
    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    skip_a, skip_b = _skips(op)

    def mm(p: Tensor, q: Tensor, skip: bool, **kw: bool) -> Tensor | None:
        return None if skip else ops.product(p, q, **kw)

    # c = a @ b: dL/da = grad @ b.T, dL/db = a.T @ grad (and the transposed variants)
    if not t_a and not t_b:
        return mm(grad, b, skip_a, transpose_b=True), mm(a, grad, skip_b, transpose_a=True)
    if not t_a and t_b:
        return mm(grad, b, skip_a), mm(grad, a, skip_b, transpose_a=True)
    if t_a and not t_b:
        return mm(b, grad, skip_a, transpose_b=True), mm(a, grad, skip_b)
    return (mm(b, grad, skip_a, transpose_a=True, transpose_b=True),
            mm(grad, a, skip_b, transpose_a=True, transpose_b=True))


# ---------------------------------------------------------------- reductions

@RegisterGradient(OpType.SUM)
def _sum_grad(op: Operation, grad: Tensor) -> tuple:
    # every input element contributes once to its sum: copy grad back over the axes
    x = op.inputs[0]
    return (ops.broadcast(ops.reshaped(grad, _kept_shape(op)), x.shape),)


@RegisterGradient(OpType.MEAN)
def _mean_grad(op: Operation, grad: Tensor) -> tuple:
    x = op.inputs[0]
    count = 1
    for a in op.get_attr("axis"):
        count *= x.shape[a]
    spread = ops.broadcast(ops.reshaped(grad, _kept_shape(op)), x.shape)
    return (ops.divided_by_count(spread, max(count, 1)),)  # each carries 1/count of the mean


@RegisterGradient(OpType.MAX)
@RegisterGradient(OpType.MIN)
def _max_grad(op: Operation, grad: Tensor) -> tuple:
    # the gradient goes to the maximal (minimal) elements, split evenly among ties
    x, y = op.inputs[0], op.outputs[0]
    kept = _kept_shape(op)
    is_max = ops.cast(ops.equal(x, ops.reshape(y, kept)), x.dtype)
    ties = ops.reduce_sum(is_max, op.get_attr("axis"), keepdims=True)
    return (ops.reshape(grad, kept) * is_max / ties,)


# ---------------------------------------------------------------- shapes

@RegisterGradient(OpType.RESHAPE)
def _reshape_grad(op: Operation, grad: Tensor) -> tuple:
    return (ops.reshape(grad, op.inputs[0].shape),)


@RegisterGradient(OpType.TRANSPOSE)
def _transpose_grad(op: Operation, grad: Tensor) -> tuple:
    perm = op.get_attr("perm")
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return (ops.transpose(grad, inverse),)


@RegisterGradient(OpType.BROADCAST_TO)
def _broadcast_to_grad(op: Operation, grad: Tensor) -> tuple:
    return (grad,)  # the engine sums it back over the broadcast axes


@RegisterGradient(OpType.CONCAT)
def _concat_grad(op: Operation, grad: Tensor) -> tuple:
    axis = op.get_attr("axis")
    return tuple(ops.split(grad, [t.shape[axis] for t in op.inputs], axis=axis))


def _fill_missing(op: Operation, grads: tuple) -> list[Tensor]:
    return [ops.zeros_like(out) if g is None else g for g, out in zip(grads, op.outputs)]


@RegisterGradient(OpType.SPLIT)
def _split_grad(op: Operation, *grads: Tensor) -> tuple:
    return (ops.concat(_fill_missing(op, grads), axis=op.get_attr("axis")),)


@RegisterGradient(OpType.PACK)
def _pack_grad(op: Operation, grad: Tensor) -> tuple:
    return tuple(ops.unstack(grad, axis=op.get_attr("axis")))


@RegisterGradient(OpType.UNPACK)
def _unpack_grad(op: Operation, *grads: Tensor) -> tuple:
    return (ops.stack(_fill_missing(op, grads), axis=op.get_attr("axis")),)


@RegisterGradient(OpType.STRIDED_SLICE)
def _strided_slice_grad(op: Operation, grad: Tensor) -> tuple:
    return (ops.strided_slice_grad(grad, op.get_attr("spec"), op.inputs[0].shape),)


@RegisterGradient(OpType.STRIDED_SLICE_GRAD)
def _strided_slice_grad_grad(op: Operation, grad: Tensor) -> tuple:
    from .ops import _index_from_spec
    return (ops.sliced(grad, _index_from_spec(op.get_attr("spec"))),)


# ---------------------------------------------------------------- neural-network ops

def _over_last_axis(op: Operation) -> bool:
    """Whether a softmax (or log-softmax) ``op`` is over its input's last axis: over another,
    TensorFlow computes it between two transposes, which its tape and its gradient see."""
    x, axis = op.inputs[0], op.get_attr("axis")
    return axis % max(x.ndim, 1) == x.ndim - 1


def _output_on_last_axis(op: Operation, fn: Callable[[Tensor, int], Tensor]) -> Tensor:
    """A softmax's output as its gradient reads it: the output itself when it is over the
    last axis; over another axis, ``fn`` of the input again, as TensorFlow's, so that the
    tensor its gradient reads is not the output (a second-order gradient with respect to
    the output tells)."""
    return op.outputs[0] if _over_last_axis(op) else fn(op.inputs[0], op.get_attr("axis"))


@RegisterGradient(OpType.SOFTMAX)
def _softmax_grad(op: Operation, grad: Tensor) -> tuple:
    y = _output_on_last_axis(op, ops.softmax)
    axis = op.get_attr("axis")
    # dL/dx = (grad - sum(grad * y)) * y
    return ((grad - ops.reduce_sum(grad * y, axis, keepdims=True)) * y,)


@RegisterGradient(OpType.LOG_SOFTMAX)
def _log_softmax_grad(op: Operation, grad: Tensor) -> tuple:
    y = _output_on_last_axis(op, ops.log_softmax)
    axis = op.get_attr("axis")
    # dL/dx = grad - softmax(x) * sum(grad)
    return (grad - ops.exp(y) * ops.reduce_sum(grad, axis, keepdims=True),)


@RegisterGradient(OpType.SIGMOID_XENT)
def _sigmoid_xent_grad(op: Operation, grad: Tensor) -> tuple:
    labels, logits = op.inputs
    skip_labels, skip_logits = _skips(op)
    # dL/dlogits = sigmoid(x) - z ; dL/dlabels = -x
    return (None if skip_labels else grad * ops.negative(logits),
            None if skip_logits else grad * (ops.sigmoid(logits) - labels))


@RegisterGradient(OpType.SOFTMAX_XENT)
def _softmax_xent_grad(op: Operation, grad: Tensor) -> tuple:
    labels, logits = op.inputs
    axis = op.get_attr("axis")
    kept = list(logits.shape)
    kept[axis] = 1
    g = ops.reshaped(grad, kept)
    skip_labels, skip_logits = _skips(op)
    # dL/dlogits = softmax(x) * sum(z) - z ; dL/dlabels = -log_softmax(x)
    g_labels = None if skip_labels else g * ops.negative(ops.log_softmax(logits, axis))
    if skip_logits:
        return g_labels, None
    total = ops.summed(labels, (axis,), keepdims=True)
    return g_labels, g * (ops.softmax_of_logits(op) * total - labels)


# ---------------------------------------------------------------- convolution and pooling
#
# As TensorFlow's nn_grad.py: each gradient is an op of its own, and each of those
# has its gradient too, so a gradient through a CNN can be differentiated again.

@RegisterGradient(OpType.CONV2D)
def _conv2d_grad(op: Operation, grad: Tensor) -> tuple:
    x, w = op.inputs
    skip_x, skip_w = _skips(op)
    return (None if skip_x else nn.conv2d_backprop_input(x.shape, w, grad, op.attrs),
            None if skip_w else nn.conv2d_backprop_filter(x, w.shape, grad, op.attrs))


def _conv_attrs(op: Operation) -> dict[str, Any]:
    """A gradient op's window, without the sizes it was given."""
    return {k: v for k, v in op.attrs.items() if k not in ("input_sizes", "filter_sizes")}


@RegisterGradient(OpType.CONV2D_BACKPROP_INPUT)
def _conv2d_backprop_input_grad(op: Operation, grad: Tensor) -> tuple:
    w, dy = op.inputs
    # out = conv2d_backprop_input(w, dy), linear in each: d/dw pairs grad (input-shaped)
    # with dy as a filter gradient does; d/ddy is the forward convolution of grad with w
    attrs = _conv_attrs(op)
    return (nn.conv2d_backprop_filter(grad, w.shape, dy, attrs),
            nn.conv2d(grad, w, attrs["strides"], _padding_arg(attrs),
                      dilations=attrs["dilations"]))


@RegisterGradient(OpType.CONV2D_BACKPROP_FILTER)
def _conv2d_backprop_filter_grad(op: Operation, grad: Tensor) -> tuple:
    x, dy = op.inputs
    attrs = _conv_attrs(op)
    return (nn.conv2d_backprop_input(x.shape, grad, dy, attrs),
            nn.conv2d(x, grad, attrs["strides"], _padding_arg(attrs),
                      dilations=attrs["dilations"]))


def _padding_arg(attrs: dict[str, Any]) -> Any:
    """The ``padding`` argument that makes the same window again."""
    return attrs["pads"] if attrs["padding"] == "EXPLICIT" else attrs["padding"]


@RegisterGradient(OpType.MAX_POOL)
def _max_pool_grad(op: Operation, grad: Tensor) -> tuple:
    return (nn.max_pool_grad(op.inputs[0], op.outputs[0], grad, op.attrs),)


@RegisterGradient(OpType.MAX_POOL_GRAD)
def _max_pool_grad_grad(op: Operation, grad: Tensor) -> tuple:
    x, y, _ = op.inputs
    # piecewise constant in x and y: which element wins does not move with them, so zeros
    # go there (not None, as TensorFlow's rule gives)
    return ops.zeros_like(x), ops.zeros_like(y), nn.max_pool_grad_grad(x, y, grad, op.attrs)


@RegisterGradient(OpType.MAX_POOL_GRAD_GRAD)
def _max_pool_grad_grad_grad(op: Operation, grad: Tensor) -> tuple:
    x, y, _ = op.inputs
    return ops.zeros_like(x), ops.zeros_like(y), nn.max_pool_grad(x, y, grad, op.attrs)


@RegisterGradient(OpType.AVG_POOL)
def _avg_pool_grad(op: Operation, grad: Tensor) -> tuple:
    return (nn.avg_pool_grad(op.inputs[0].shape, grad, op.attrs),)


@RegisterGradient(OpType.AVG_POOL_GRAD)
def _avg_pool_grad_grad(op: Operation, grad: Tensor) -> tuple:
    attrs = {k: v for k, v in op.attrs.items() if k != "orig_input_shape"}
    return (nn.avg_pool(grad, attrs, op.inputs[0].shape[1:3]),)


@RegisterGradient(OpType.BIAS_ADD)
def _bias_add_grad(op: Operation, grad: Tensor) -> tuple:
    # the bias's gradient comes back in the value's shape: the broadcast reduction that
    # follows sums it over every axis but the last, as TensorFlow's BiasAddGrad does
    return grad, grad


# ---------------------------------------------------------------- gradient helper ops

@RegisterGradient(OpType.TANH_GRAD)
def _tanh_grad_grad(op: Operation, grad: Tensor) -> tuple:
    y, g = op.inputs
    # out = g (1 - y^2): d/dy = -2 y g ; d/dg = 1 - y^2
    return grad * g * (-2 * y), grad * (1 - ops.square(y))


@RegisterGradient(OpType.SIGMOID_GRAD)
def _sigmoid_grad_grad(op: Operation, grad: Tensor) -> tuple:
    y, g = op.inputs
    # out = g y (1 - y): d/dy = g (1 - 2y) ; d/dg = y (1 - y)
    return grad * g * (1 - 2 * y), grad * y * (1 - y)


@RegisterGradient(OpType.RELU_GRAD)
def _relu_grad_grad(op: Operation, grad: Tensor) -> tuple:
    _, y = op.inputs
    # piecewise constant in y: its gradient there is zero (not None, as TensorFlow's rule)
    return ops.relu_grad(grad, y), ops.zeros_like(y)


@RegisterGradient(OpType.SQRT_GRAD)
def _sqrt_grad_grad(op: Operation, grad: Tensor) -> tuple:
    y, g = op.inputs
    # out = 0.5 g / y: d/dy = -0.5 g / y^2 ; d/dg = 0.5 / y
    return grad * (-0.5 * g / ops.square(y)), grad * (0.5 / y)


# ---------------------------------------------------------------- the ops of a transformer block

@RegisterGradient(OpType.SOFTPLUS)
def _softplus_grad(op: Operation, grad: Tensor) -> tuple:
    return (grad * ops.sigmoid(op.inputs[0]),)  # d log(1 + e**x)/dx = sigmoid(x)


@RegisterGradient(OpType.DIV_NO_NAN)
def _div_no_nan_grad(op: Operation, grad: Tensor) -> tuple:
    x, y = op.inputs
    skip_x, skip_y = _skips(op)
    return (None if skip_x else math_ops.divide_no_nan(grad, y),
            None if skip_y else grad * math_ops.divide_no_nan(math_ops.divide_no_nan(-x, y), y))


@RegisterGradient(OpType.CUMSUM)
def _cumsum_grad(op: Operation, grad: Tensor) -> tuple:
    # each input adds into every running sum from it on: the sums of grad the other way
    return (math_ops.cumsum(grad, op.get_attr("axis"), exclusive=op.get_attr("exclusive"),
                            reverse=not op.get_attr("reverse")),)


@RegisterGradient(OpType.CUMPROD)
def _cumprod_grad(op: Operation, grad: Tensor) -> tuple:
    # as TensorFlow's: the running products times grad, summed the other way, divided by x
    # (0 where x is 0: div_no_nan)
    x = op.inputs[0]
    axis, exclusive, reverse = (op.get_attr(k) for k in ("axis", "exclusive", "reverse"))
    prod = math_ops.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = math_ops.cumsum(prod * grad, axis, exclusive=exclusive, reverse=not reverse)
    return (math_ops.divide_no_nan(out, x),)


@RegisterGradient(OpType.PROD)
def _prod_grad(op: Operation, grad: Tensor) -> tuple:
    # each element gets the product of all the others, as TensorFlow works it out (without
    # dividing, so a zero is no trouble): the reduced axes moved first and flattened, the
    # products of the elements before it and of those after it (exclusive cumprods)
    x = op.inputs[0]
    reduced = list(op.get_attr("axis"))
    other = [a for a in range(x.ndim) if a not in reduced]
    perm = reduced + other
    g = ops.broadcast_to(ops.reshape(grad, _kept_shape(op)), x.shape)
    permuted = ops.transpose(x, perm)
    rows = math.prod(x.shape[a] for a in reduced)
    reshaped = ops.reshape(permuted, [rows, math.prod(x.shape[a] for a in other)])
    left = math_ops.cumprod(reshaped, 0, exclusive=True)
    right = math_ops.cumprod(reshaped, 0, exclusive=True, reverse=True)
    y = ops.reshape(left * right, permuted.shape)
    inverse = [perm.index(a) for a in range(x.ndim)]
    return (ops.reshape(g * ops.transpose(y, inverse), x.shape),)


@RegisterGradient(OpType.LEAKY_RELU)
def _leaky_relu_grad(op: Operation, grad: Tensor) -> tuple:
    return (nn.leaky_relu_grad(grad, op.inputs[0], op.get_attr("alpha")),)


@RegisterGradient(OpType.LEAKY_RELU_GRAD)
def _leaky_relu_grad_grad(op: Operation, grad: Tensor) -> tuple:
    # linear in the upstream gradient; the mask does not move with x: zeros, as TensorFlow's
    x = op.inputs[1]
    return nn.leaky_relu_grad(grad, x, op.get_attr("alpha")), ops.zeros_like(x)


@RegisterGradient(OpType.EINSUM)
def _einsum_grad(op: Operation, grad: Tensor) -> tuple:
    # c = einsum(a, b): dL/da = einsum(grad, b) back onto a's letters, and the same for b;
    # a letter only one operand has (summed away in it alone) comes back broadcast
    sa, sb, so = _einsum_parts(op.get_attr("equation"))
    a, b = op.inputs
    skip_a, skip_b = _skips(op)
    return (None if skip_a else _einsum_back(grad, so, b, sb, a, sa),
            None if skip_b else _einsum_back(grad, so, a, sa, b, sb))


def _einsum_parts(equation: str) -> tuple[str, str, str]:
    lhs, out = equation.split("->")
    a, b = lhs.split(",")
    return a, b, out


def _einsum_back(grad: Tensor, so: str, other: Tensor, s_other: str, x: Tensor,
                 sx: str) -> Tensor:
    kept = "".join(c for c in sx if c in so or c in s_other)
    g = math_ops.einsum(f"{so},{s_other}->{kept}", grad, other)
    if kept == sx:
        return g
    shape = [x.shape[i] if c in kept else 1 for i, c in enumerate(sx)]
    return ops.broadcast_to(ops.reshape(g, shape), x.shape)


@RegisterGradient(OpType.EXPAND_DIMS)
@RegisterGradient(OpType.SQUEEZE)
def _reshape_like_grad(op: Operation, grad: Tensor) -> tuple:
    return (ops.reshape(grad, op.inputs[0].shape),)


@RegisterGradient(OpType.TILE)
def _tile_grad(op: Operation, grad: Tensor) -> tuple:
    # each copy's gradient adds up: the gradient as (m0, d0, m1, d1, ...), summed over the m's
    x, reps = op.inputs[0], op.get_attr("multiples")
    split = [n for m, d in zip(reps, x.shape) for n in (m, d)]
    return (ops.reduce_sum(ops.reshape(grad, split), list(range(0, len(split), 2))),)


@RegisterGradient(OpType.PAD)
def _pad_grad(op: Operation, grad: Tensor) -> tuple:
    # the gradient of the input's own part; the fill value gets none, as in TensorFlow
    x, pairs = op.inputs[0], op.get_attr("paddings")
    index = tuple(slice(b, b + d) for (b, _), d in zip(pairs, x.shape))
    return ops.sliced(grad, index), None


@RegisterGradient(OpType.MIRROR_PAD)
def _mirror_pad_grad(op: Operation, grad: Tensor) -> tuple:
    return (array_ops.mirror_pad_grad(grad, op.get_attr("paddings"), op.get_attr("mode")),)


@RegisterGradient(OpType.MIRROR_PAD_GRAD)
def _mirror_pad_grad_grad(op: Operation, grad: Tensor) -> tuple:
    return (array_ops.pad(grad, op.get_attr("paddings"), mode=op.get_attr("mode")),)


# ---------------------------------------------------------------- gathering rows

@RegisterGradient(OpType.GATHER)
def _gather_grad(op: Operation, grad: Tensor) -> tuple:
    # the rows it read get the gradient: sparse along axis 0, as TensorFlow's
    params, ids = op.inputs
    axis, b = op.get_attr("axis"), op.get_attr("batch_dims")
    if axis == 0 and b == 0:
        n = ids._value.size
        values = ops.reshaped(grad, (n, *params.shape[1:]))
        return IndexedSlices.of_rows(values, ops.reshaped(ids, (n,)), params.shape), None
    return _gather_dense_grad(params, ids, axis, b, grad), None


def _gather_dense_grad(params: Tensor, ids: Tensor, axis: int, b: int, grad: Tensor) -> Tensor:
    """A gather's gradient along another axis (or in batches), dense as TensorFlow's: the
    gathered axes moved first, summed into their rows (one segment per row of each batch),
    and moved back."""
    ni = ids.ndim - b
    outer = list(params.shape[b:axis])
    inner = list(params.shape[axis + 1:])
    perm = [*range(b), *range(axis, axis + ni), *range(b, axis), *range(axis + ni, grad.ndim)]
    moved = ops.transpose(grad, perm)  # batch, gathered, outer, inner
    batch = math.prod(params.shape[:b])
    count = math.prod(ids.shape[b:])
    flat = ops.reshape(moved, [batch * count, *outer, *inner])
    rows = params.shape[axis]
    segments = (ids._value.reshape(batch, count)
                + np.arange(batch).reshape(batch, 1) * rows).reshape(-1)
    summed = array_ops.unsorted_segment_sum(flat, ops.constant(segments), batch * rows)
    back = ops.reshape(summed, [*params.shape[:b], rows, *outer, *inner])
    order = [*range(b), *range(b + 1, b + 1 + len(outer)), b,
             *range(b + 1 + len(outer), back.ndim)]
    return ops.transpose(back, order)


@RegisterGradient(OpType.GATHER_ND)
def _gather_nd_grad(op: Operation, grad: Tensor) -> tuple:
    params, ids = op.inputs
    if ids.ndim == 2 and ids.shape[-1] == 1:  # rows: sparse, as TensorFlow's
        return IndexedSlices(grad, array_ops.squeeze(ids, [-1]), params.shape), None
    return array_ops.scatter_nd(ids, grad, params.shape), None


@RegisterGradient(OpType.SCATTER_ND)
def _scatter_nd_grad(op: Operation, grad: Tensor) -> tuple:
    return None, array_ops.gather_nd(grad, op.inputs[0])


@RegisterGradient(OpType.UNSORTED_SEGMENT_SUM)
def _unsorted_segment_sum_grad(op: Operation, grad: Tensor) -> tuple:
    # each slice of data gets its segment's gradient; a dropped id (outside the
    # segments) gets zeros
    data, ids = op.inputs
    v = ids._value
    keep = v >= 0
    if not keep.any():  # every slice dropped (or no segments at all)
        return ops.zeros_like(data), None
    if keep.all():
        return array_ops.gather(grad, ids), None
    picked = array_ops.gather(grad, ops.constant(np.where(keep, v, 0).astype(v.dtype)))
    mask = ops.constant(keep.reshape(keep.shape + (1,) * (data.ndim - ids.ndim)))
    return ops.where(mask, picked, ops.zeros_like(picked)), None


# ---------------------------------------------------------------- TensorFlow's everyday vocabulary

@RegisterGradient(OpType.ROLL)
def _roll_grad(op: Operation, grad: Tensor) -> tuple:
    # each value moved by shift: its gradient moves back by -shift
    return (array_ops.roll(grad, [-s for s in op.get_attr("shift")], op.get_attr("axis")),)


@RegisterGradient(OpType.REVERSE)
def _reverse_grad(op: Operation, grad: Tensor) -> tuple:
    return (array_ops.reverse(grad, op.get_attr("axis")),)


@RegisterGradient(OpType.SLICE)
def _slice_grad(op: Operation, grad: Tensor) -> tuple:
    # the block's gradient in its place, zeros around it: a pad, as TensorFlow's
    x = op.inputs[0]
    pairs = [[b, d - b - n] for b, n, d in zip(op.get_attr("begin"), op.get_attr("size"),
                                               x.shape)]
    return (array_ops.pad(grad, pairs),)


@RegisterGradient(OpType.IDENTITY_N)
def _identity_n_grad(op: Operation, *grads: Tensor) -> tuple:
    return grads


@RegisterGradient(OpType.PREVENT_GRADIENT)
def _prevent_gradient_grad(op: Operation, grad: Tensor) -> tuple:
    raise LookupError(f"Gradient explicitly disabled. Reason: {op.get_attr('message')} "
                      f"(gv.prevent_gradient '{op.name}' asks that no gradient go through it)")


@RegisterGradient(OpType.EUCLIDEAN_NORM)
def _euclidean_norm_grad(op: Operation, grad: Tensor) -> tuple:
    # d sqrt(sum x**2)/dx = x / norm, written x / (norm / grad) as TensorFlow writes it (so a
    # zero norm gives NaN, 0 / 0, as there)
    kept = _kept_shape(op)
    norm, g = ops.reshape(op.outputs[0], kept), ops.reshape(grad, kept)
    return (op.inputs[0] / (norm / g),)


@RegisterGradient(OpType.SEGMENT_SUM)
def _segment_sum_grad(op: Operation, grad: Tensor) -> tuple:
    return array_ops.gather(grad, op.inputs[1]), None  # each row gets its segment's


@RegisterGradient(OpType.SEGMENT_MEAN)
def _segment_mean_grad(op: Operation, grad: Tensor) -> tuple:
    # each row gets its segment's gradient over how many rows the segment has
    data, ids = op.inputs
    ones = ops.ones([ids.shape[0], *([1] * (data.ndim - 1))], grad.dtype)
    return array_ops.gather(_per_row(grad, math_ops.segment_sum(ones, ids)), ids), None


def _per_row(grad: Tensor, count: Tensor) -> Tensor:
    """Each segment's gradient over its count of rows: divided as TensorFlow divides it,
    but 0 for an empty segment (its count 0), whose gradient no row gathers. TensorFlow's
    0 / 0 there is NaN, which forward mode (the rule transposed) would carry into the
    tangent of an empty segment, whose value (0) does not move."""
    return math_ops.divide_no_nan(grad, count)


@RegisterGradient(OpType.SEGMENT_MAX)
def _segment_max_grad(op: Operation, grad: Tensor) -> tuple:
    # as TensorFlow's: each segment's gradient goes to the rows that held its maximum,
    # shared equally among ties
    data, ids = op.inputs
    selected = ops.equal(data, array_ops.gather(op.outputs[0], ids))
    count = math_ops.segment_sum(ops.cast(selected, grad.dtype), ids)
    shared = array_ops.gather(_per_row(grad, count), ids)
    return ops.where(selected, shared, ops.zeros_like(data)), None


@RegisterGradient(OpType.MATRIX_DIAG)
def _matrix_diag_grad(op: Operation, grad: Tensor) -> tuple:
    return (linalg_ops.diag_part(grad),)


@RegisterGradient(OpType.MATRIX_DIAG_PART)
def _matrix_diag_part_grad(op: Operation, grad: Tensor) -> tuple:
    rows, cols = op.inputs[0].shape[-2:]
    return (linalg_ops.diag(grad, num_rows=rows, num_cols=cols),)


@RegisterGradient(OpType.MATRIX_BAND_PART)
def _matrix_band_part_grad(op: Operation, grad: Tensor) -> tuple:
    return (linalg_ops.band_part(grad, op.get_attr("num_lower"), op.get_attr("num_upper")),)


NotDifferentiable(OpType.REDUCE_ANY)
NotDifferentiable(OpType.REDUCE_ALL)


# ---------------------------------------------------------------- the elementwise table

def _table_rule(entry: elementwise.Elementwise) -> GradFn:
    """An elementwise op's rule, from its entry: each input's gradient from its own function
    of (grad, *inputs, output), none for an input the engine does not need."""
    grads, common = entry.grads, entry.common

    def rule(op: Operation, grad: Tensor) -> tuple:
        skip = op.skip_input_indices
        wanted = [f is not None and i not in skip for i, f in enumerate(grads)]
        if common is not None and any(wanted):
            grad = common(grad, *op.inputs, op.outputs[0])
        args = (grad, *op.inputs, op.outputs[0])
        return tuple(f(*args) if want else None for f, want in zip(grads, wanted))
    rule.__name__ = rule.__qualname__ = f"_{entry.name}_grad"
    return rule


#: the table's op types whose rule gives None for every input
_FLAT = frozenset(e.op_type for e in elementwise.TABLE if not any(e.grads))

for _entry in elementwise.TABLE:
    if _entry.comparison:  # TensorFlow declares a comparison not differentiable
        NotDifferentiable(_entry.op_type)
    else:
        RegisterGradient(_entry.op_type)(_table_rule(_entry))
del _entry
