"""The op vocabulary: every op type named once, with a thin public wrapper each.

Wrappers take arrays positionally and attributes by keyword, compute the value
with NumPy right away, and record the op in the graph.  Their gradients live in
:mod:`gradviz.engine.gradient_rules`.

>>> import gradviz as gv
>>> a = gv.constant([[1.0, 2.0], [3.0, 4.0]])
>>> gv.reduce_sum(a, axis=1).numpy().tolist(), gv.matmul(a, a, transpose_b=True).op.type
([3.0, 7.0], 'MatMul')
"""

from __future__ import annotations

import builtins
import math
import sys
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes
from . import graph as _graph
from .graph import Operation, Tensor, constant, is_python_number, make_multi_op, make_op

__all__ = [
    "OpType",
    "abs", "add", "add_n", "broadcast_to", "cast", "concat", "divide", "equal", "exp",
    "greater", "greater_equal", "identity", "less", "less_equal", "log", "log_softmax",
    "matmul", "maximum", "minimum", "multiply", "negative", "ones", "ones_like", "pow",
    "reduce_max", "reduce_mean", "reduce_sum", "relu", "reshape", "sigmoid",
    "sigmoid_cross_entropy_with_logits", "sign", "softmax",
    "softmax_cross_entropy_with_logits", "split", "sqrt", "square", "stack",
    "stop_gradient", "strided_slice", "subtract", "tanh", "transpose", "unstack", "where",
    "zeros", "zeros_like",
    "relu_grad", "sigmoid_grad", "sqrt_grad", "strided_slice_grad", "tanh_grad",
]


class OpType:
    """Every op type the engine knows, named once (TensorFlow's names)."""

    CONST = _graph.CONST
    VARIABLE = _graph.VARIABLE
    ADD = "Add"
    ADD_N = "AddN"
    SUB = "Sub"
    MUL = "Mul"
    DIV = "RealDiv"
    NEG = "Neg"
    POW = "Pow"
    SQUARE = "Square"
    SQRT = "Sqrt"
    EXP = "Exp"
    LOG = "Log"
    ABS = "Abs"
    SIGN = "Sign"
    TANH = "Tanh"
    SIGMOID = "Sigmoid"
    RELU = "Relu"
    MAXIMUM = "Maximum"
    MINIMUM = "Minimum"
    MATMUL = "MatMul"
    SUM = "Sum"
    MEAN = "Mean"
    MAX = "Max"
    RESHAPE = "Reshape"
    TRANSPOSE = "Transpose"
    BROADCAST_TO = "BroadcastTo"
    CONCAT = "ConcatV2"
    SPLIT = "Split"
    PACK = "Pack"
    UNPACK = "Unpack"
    STRIDED_SLICE = "StridedSlice"
    CAST = "Cast"
    IDENTITY = "Identity"
    STOP_GRADIENT = "StopGradient"
    ONES_LIKE = "OnesLike"
    ZEROS_LIKE = "ZerosLike"
    SOFTMAX = "Softmax"
    LOG_SOFTMAX = "LogSoftmax"
    SIGMOID_XENT = "SigmoidCrossEntropyWithLogits"
    SOFTMAX_XENT = "SoftmaxCrossEntropyWithLogits"
    SELECT = "SelectV2"
    EQUAL = "Equal"
    GREATER = "Greater"
    GREATER_EQUAL = "GreaterEqual"
    LESS = "Less"
    LESS_EQUAL = "LessEqual"
    CONV2D = "Conv2D"
    MAX_POOL = "MaxPool"
    AVG_POOL = "AvgPool"
    BIAS_ADD = "BiasAdd"
    # the ops of a transformer block (math_ops.py, array_ops.py, nn.py; Sin, Cos, Rsqrt, Erf,
    # Erfc and SquaredDifference are named by elementwise.py's table, as the ops below it)
    SOFTPLUS = "Softplus"
    LEAKY_RELU = "LeakyRelu"
    MIN = "Min"
    PROD = "Prod"
    CUMSUM = "Cumsum"
    CUMPROD = "Cumprod"
    DIV_NO_NAN = "DivNoNan"
    IS_FINITE = "IsFinite"
    ARG_MAX = "ArgMax"
    ARG_MIN = "ArgMin"
    EINSUM = "Einsum"
    EXPAND_DIMS = "ExpandDims"
    SQUEEZE = "Squeeze"
    TILE = "Tile"
    PAD = "PadV2"
    MIRROR_PAD = "MirrorPad"
    ONE_HOT = "OneHot"
    GATHER = "GatherV2"
    GATHER_ND = "GatherNd"
    SCATTER_ND = "ScatterNd"
    UNSORTED_SEGMENT_SUM = "UnsortedSegmentSum"
    # TensorFlow's everyday vocabulary (array_ops.py, math_ops.py, linalg_ops.py; the
    # elementwise ones are declared in elementwise.py's table)
    ROLL = "Roll"
    REVERSE = "ReverseV2"
    SLICE = "Slice"
    IDENTITY_N = "IdentityN"
    PREVENT_GRADIENT = "PreventGradient"
    EUCLIDEAN_NORM = "EuclideanNorm"
    REDUCE_ANY = "Any"
    REDUCE_ALL = "All"
    SEGMENT_SUM = "SegmentSum"
    SEGMENT_MEAN = "SegmentMean"
    SEGMENT_MAX = "SegmentMax"
    MATRIX_DIAG = "MatrixDiagV3"
    MATRIX_DIAG_PART = "MatrixDiagPartV3"
    MATRIX_BAND_PART = "MatrixBandPart"
    # gradient helper ops (TensorFlow has the same fused kernels)
    TANH_GRAD = "TanhGrad"
    SIGMOID_GRAD = "SigmoidGrad"
    RELU_GRAD = "ReluGrad"
    SQRT_GRAD = "SqrtGrad"
    STRIDED_SLICE_GRAD = "StridedSliceGrad"
    CONV2D_BACKPROP_INPUT = "Conv2DBackpropInput"
    CONV2D_BACKPROP_FILTER = "Conv2DBackpropFilter"
    MAX_POOL_GRAD = "MaxPoolGrad"
    MAX_POOL_GRAD_GRAD = "MaxPoolGradGrad"
    AVG_POOL_GRAD = "AvgPoolGrad"
    LEAKY_RELU_GRAD = "LeakyReluGrad"
    MIRROR_PAD_GRAD = "MirrorPadGrad"

    @classmethod
    def all(cls) -> list[str]:
        """Every op type, in definition order."""
        return [v for k, v in vars(cls).items() if k.isupper()]


# ---------------------------------------------------------------- argument handling


def _as_tensor(x: Any, op_type: str, arg: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if type(x).__name__ == "IndexedSlices":  # a sparse gradient, made dense
        return _graph.convert_to_tensor(x)
    try:
        return constant(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op_type}: argument {arg} {e}") from None


def _pair(op_type: str, x: Any, y: Any, names: tuple[str, str] = ("x", "y")
          ) -> tuple[Tensor, Tensor]:
    """Two operands of an elementwise op, with TensorFlow's dtype rules; ``names`` are
    the arguments' names for the messages."""
    if isinstance(x, Tensor):
        if isinstance(y, Tensor):
            if x._dtype != y._dtype:
                raise _mixed(op_type, x, y)
            return x, y
        return x, _like(y, x, op_type, names[1])
    if isinstance(y, Tensor):
        return _like(x, y, op_type, names[0]), y
    x = _as_tensor(x, op_type, names[0])
    return x, _like(y, x, op_type, names[1])


def _like(value: Any, other: Tensor, op_type: str, arg: str = "y") -> Tensor:
    """A non-tensor operand: a Python number takes ``other``'s dtype, an array keeps its own."""
    kind = type(value)
    if kind is float or kind is int and -_EXACT_INT <= value <= _EXACT_INT:
        dtype = other._dtype
        arrays = _SCALARS.get(dtype)
        if arrays is not None or dtype.kind == "f":  # a float tensor: `y * 0.5`, made cheap
            array = None if arrays is None else arrays.get(value)
            if array is None:
                try:
                    array = _scalar(value, dtype)
                except TypeError as e:  # too big for the dtype
                    raise TypeError(f"{op_type}: {e}") from None
            return make_op(OpType.CONST, (), array)
    if is_python_number(value) or isinstance(value, (list, tuple)):
        try:
            return constant(value, other._dtype)
        except TypeError as e:
            detail = str(e).removeprefix("constant: ")
            raise TypeError(f"{op_type}: cannot use {value!r} with {other.name} of dtype "
                            f"{other.dtype.name}: {detail}; cast the tensor first, e.g. "
                            f"gv.cast(x, gv.float32)") from None
    t = _as_tensor(value, op_type, arg)
    if t._dtype != other._dtype:
        raise _mixed(op_type, other, t)
    return t


_EXACT_INT = 2 ** 53  # ints beyond a float64's exact range take the checked path
#: float dtype -> Python number -> its read-only 0-d array (see _scalar)
_SCALARS: dict[np.dtype, dict[float, np.ndarray]] = {
    np.dtype(t): {} for t in (np.float16, np.float32, np.float64)}


def _scalar(value: float, dtype: np.dtype) -> np.ndarray:
    """A Python number as a read-only 0-d array of a float dtype, made once per value.

    ``y + 0.01`` in a loop makes a Const op each time (as TensorFlow does);
    they can share the array, as values are never changed in place.  Callers
    on a hot path look in ``_SCALARS[dtype]`` first and call this on a miss.
    """
    arrays = _SCALARS.get(dtype)
    array = None if arrays is None else arrays.get(value)
    if array is None:
        with np.errstate(over="ignore"):
            array = np.array(value, dtype)
        if np.isinf(array) and value - value == 0:  # a finite number too big for the dtype
            raise TypeError(f"cannot use {value!r} with a {dtype.name} tensor: it does not fit "
                            f"in {dtype.name} (largest magnitude "
                            f"{float(np.finfo(dtype).max):.4g}); cast the tensor to a wider "
                            "dtype first")
        if arrays is None or value == 0 or value != value:
            return array  # not kept: -0.0 equals 0.0 as a key, NaN never finds itself
        if len(arrays) >= 4096:
            arrays.clear()
        arrays[value] = array
        array.flags.writeable = False
    return array


def _mixed(op_type: str, x: Tensor, y: Tensor) -> TypeError:
    return TypeError(
        f"{op_type}: {x.name} has dtype {x.dtype.name} but {y.name} has dtype {y.dtype.name}; "
        f"gradviz never promotes dtypes silently (as TensorFlow): "
        f"cast one with gv.cast(t, gv.{x.dtype.name})")


def _broadcast_error(op_type: str, x: Tensor, y: Tensor) -> ValueError:
    return ValueError(
        f"{op_type}: shapes {x.shape} ({x.name}) and {y.shape} ({y.name}) cannot be broadcast "
        "together (NumPy broadcasting: aligned from the right, each pair of dimensions must "
        "be equal or one of them 1)")


# The dtype kinds an op accepts (NumPy's dtype.kind letters), as TensorFlow's kernels do.
FLOAT, SIGNED, NUMBER, ANY = "f", "if", "iuf", "biuf"
_BOOL = np.dtype(bool)


def _float_only(op_type: str, x: Tensor) -> None:
    if x._dtype.kind != "f":
        raise TypeError(f"{op_type}: expects a float tensor, got {x.name} of dtype "
                        f"{x.dtype.name} (cast it first: gv.cast(x, gv.float32))")


def _check_kind(op_type: str, x: Tensor, kinds: str) -> None:
    """Refuse a dtype the op does not accept: bools are not numbers (``b * 2.0``)."""
    if x._dtype.kind in kinds:
        return
    if kinds == FLOAT:
        _float_only(op_type, x)
    if x._dtype.kind == "b":
        raise TypeError(f"{op_type}: {x.name} is a bool tensor, and {op_type} takes numbers "
                        "(as in TensorFlow; NumPy would make b + b a logical or and b * 2.0 a "
                        "bool); cast it first, e.g. gv.cast(b, gv.float32)")
    raise TypeError(f"{op_type}: {x.name} has the unsigned dtype {x.dtype.name}, which "
                    f"{op_type} does not take (as in TensorFlow: -1 would wrap around to "
                    f"{np.iinfo(x._dtype).max}); cast it first, e.g. gv.cast(x, gv.int32)")


def _refuse_bools(op_type: str, *operands: Any) -> None:
    """Say that a bool tensor takes no arithmetic, before its operands are paired."""
    for t in operands:
        if isinstance(t, Tensor) and t._dtype is _BOOL:
            _check_kind(op_type, t, NUMBER)


def _binary(op_type: str, fn: Any, x: Any, y: Any, name: str | None,
            bools: bool = False) -> Tensor:
    """An elementwise op of two operands; ``bools``: whether it accepts bool tensors."""
    # the usual cases first: two tensors of one dtype, and `y * 0.5`
    # (each way checks once that bools are welcome, before a conversion could fail first)
    if isinstance(x, Tensor):
        if not isinstance(y, Tensor):
            if x._dtype is _BOOL and not bools:
                _check_kind(op_type, x, NUMBER)
            y = _like(y, x, op_type)
        elif x._dtype is not y._dtype:
            if not bools:
                _refuse_bools(op_type, x, y)
            x, y = _pair(op_type, x, y)  # checks
        elif x._dtype is _BOOL and not bools:
            _check_kind(op_type, x, NUMBER)
    else:
        if not bools:
            _refuse_bools(op_type, y)
        x, y = _pair(op_type, x, y)  # converts and checks
        if x._dtype is _BOOL and not bools:  # (two Python bools)
            _check_kind(op_type, x, NUMBER)
    try:
        value = fn(x._value, y._value)
    except ValueError as e:
        try:
            np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise _broadcast_error(op_type, x, y) from None
        raise ValueError(f"{op_type}: {e} ({x.name}: {x.dtype.name}, {y.name}: "
                         f"{y.dtype.name})") from None
    return make_op(op_type, (x, y), value, None, name, 2)  # (2: it and its caller are ours)


def _unary(op_type: str, fn: Any, x: Any, name: str | None, kinds: str = FLOAT) -> Tensor:
    """An op of one tensor; ``kinds``: the dtype kinds it accepts."""
    if not isinstance(x, Tensor):
        x = _as_tensor(x, op_type, "x")
    if x._dtype.kind not in kinds:
        _check_kind(op_type, x, kinds)
    return make_op(op_type, (x,), fn(x._value), None, name, 2)  # (2: it and its caller are ours)


def _quiet(fn: Any) -> Any:
    """``fn`` without NumPy's divide/overflow/invalid warnings.

    NaN and Inf are part of the lesson: the trace flags the step that made
    them, as TensorFlow returns them without a warning.
    """
    def quiet(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args)
    return quiet


_q_divide, _q_power, _q_log, _q_sqrt, _q_exp = (
    _quiet(np.divide), _quiet(np.power), _quiet(np.log), _quiet(np.sqrt), _quiet(np.exp))


def _axes(op_type: str, x: Tensor, axis: Any) -> tuple[int, ...]:
    """Normalise an axis argument to a sorted tuple of non-negative ints."""
    rank = x.ndim
    if axis is None:
        return tuple(range(rank))
    if type(axis) is int and -rank <= axis < rank:
        return (axis % rank,)  # the usual single axis
    if type(axis) is list and len(axis) == 1 and type(axis[0]) is int and -rank <= axis[0] < rank:
        return (axis[0] % rank,)  # a gradient rule's, or moments' [-1]
    items = [axis] if isinstance(axis, (int, np.integer)) else axis
    try:
        items = list(items)
    except TypeError:
        raise TypeError(f"{op_type}: axis must be None, an int or a list of ints, "
                        f"got {axis!r}") from None
    out = []
    for a in items:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{op_type}: axis must be None, an int or a list of ints, got {axis!r}")
        if rank == 0 or not -rank <= a < rank:
            raise ValueError(f"{op_type}: axis {a} is out of range for {x.name} of shape "
                             f"{x.shape} (rank {rank}; accepted: {-rank}..{rank - 1})")
        out.append(int(a) % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"{op_type}: axis {axis!r} names the same axis twice")
    return tuple(sorted(out))


def _one_axis(op_type: str, rank: int, axis: Any, what: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op_type}: axis must be an int, got {axis!r}")
    if not -rank <= axis < rank:
        raise ValueError(f"{op_type}: axis {axis} is out of range for {what} of rank {rank} "
                         f"(accepted: {-rank}..{rank - 1})")
    return int(axis) % rank


# ---------------------------------------------------------------- elementwise


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x + y`` with broadcasting."""
    return _binary(OpType.ADD, np.add, x, y, name)


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x - y`` with broadcasting."""
    return _binary(OpType.SUB, np.subtract, x, y, name)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * y`` with broadcasting."""
    return _binary(OpType.MUL, np.multiply, x, y, name)


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``; integer tensors are first cast to float (float32 for 8 and 16 bits, else
    float64), as TensorFlow's truediv does."""
    _refuse_bools(OpType.DIV, x, y)  # (before the cast below would turn bools into floats)
    x, y = _pair(OpType.DIV, x, y)
    if x._dtype.kind != "f":  # as TensorFlow's truediv: float32 for 8 and 16 bits, else float64
        to = dtypes.float32 if x._dtype.itemsize <= 2 else dtypes.float64
        x, y = cast(x, to), cast(y, to)
    return _binary(OpType.DIV, _q_divide, x, y, name)


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TensorFlow's name
    """``x ** y`` elementwise."""
    _refuse_bools(OpType.POW, x, y)
    x, y = _pair(OpType.POW, x, y)
    if x._dtype.kind in "iu" and np.any(y._value < 0):
        raise ValueError(f"Pow: integer {x.name} to the negative integer power {y.name} is not "
                         "an integer; cast to float first, e.g. gv.cast(x, gv.float32) ** -1")
    return _binary(OpType.POW, _q_power, x, y, name)


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise maximum."""
    return _binary(OpType.MAXIMUM, np.maximum, x, y, name)


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise minimum."""
    return _binary(OpType.MINIMUM, np.minimum, x, y, name)


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x == y`` elementwise (bool; not differentiable)."""
    return _binary(OpType.EQUAL, np.equal, x, y, name, bools=True)


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x > y`` elementwise (bool)."""
    return _binary(OpType.GREATER, np.greater, x, y, name)


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x >= y`` elementwise (bool)."""
    return _binary(OpType.GREATER_EQUAL, np.greater_equal, x, y, name)


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x < y`` elementwise (bool)."""
    return _binary(OpType.LESS, np.less, x, y, name)


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x <= y`` elementwise (bool)."""
    return _binary(OpType.LESS_EQUAL, np.less_equal, x, y, name)


def where(condition: Any, x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x`` where ``condition`` holds, else ``y`` (broadcasting all three)."""
    c = _as_tensor(condition, OpType.SELECT, "condition")
    if c._dtype.kind != "b":
        raise TypeError(f"SelectV2: condition must be bool, got {c.name} of dtype {c.dtype.name}")
    x, y = _pair(OpType.SELECT, x, y)
    try:
        value = np.where(c._value, x._value, y._value)
    except ValueError:
        raise ValueError(f"SelectV2: shapes {c.shape}, {x.shape} and {y.shape} cannot be "
                         "broadcast together") from None
    return make_op(OpType.SELECT, (c, x, y), value, None, name)


def negative(x: Any, name: str | None = None) -> Tensor:
    """``-x``."""
    return _unary(OpType.NEG, np.negative, x, name, SIGNED)


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TensorFlow's name
    """``|x|``."""
    return _unary(OpType.ABS, np.abs, x, name, NUMBER)


def sign(x: Any, name: str | None = None) -> Tensor:
    """-1, 0 or 1 elementwise."""
    return _unary(OpType.SIGN, np.sign, x, name, NUMBER)


def square(x: Any, name: str | None = None) -> Tensor:
    """``x * x``."""
    return _unary(OpType.SQUARE, np.square, x, name, NUMBER)


def sqrt(x: Any, name: str | None = None) -> Tensor:
    """Square root."""
    return _unary(OpType.SQRT, _q_sqrt, x, name)


def exp(x: Any, name: str | None = None) -> Tensor:
    """``e ** x``."""
    return _unary(OpType.EXP, _q_exp, x, name)


def log(x: Any, name: str | None = None) -> Tensor:
    """Natural logarithm."""
    return _unary(OpType.LOG, _q_log, x, name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic tangent."""
    return _unary(OpType.TANH, np.tanh, x, name)


def _sigmoid(v: np.ndarray) -> np.ndarray:
    # 1 / (1 + e^-v) without overflow: e^-|v| is always <= 1
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1 / (1 + e), e / (1 + e)).astype(v.dtype)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""
    return _unary(OpType.SIGMOID, _sigmoid, x, name)


def relu(x: Any, name: str | None = None) -> Tensor:
    """``max(x, 0)``."""
    return _unary(OpType.RELU, lambda v: np.maximum(v, v.dtype.type(0)), x, name, NUMBER)


def identity(x: Any, name: str | None = None) -> Tensor:
    """The same value as a new tensor (gradient passes straight through)."""
    return _unary(OpType.IDENTITY, lambda v: v, x, name, ANY)


def stop_gradient(x: Any, name: str | None = None) -> Tensor:
    """The same value, but no gradient flows back through it."""
    return _unary(OpType.STOP_GRADIENT, lambda v: v, x, name, ANY)


def ones_like(x: Any, name: str | None = None) -> Tensor:
    """Ones with ``x``'s shape and dtype."""
    return _unary(OpType.ONES_LIKE, np.ones_like, x, name, ANY)


def zeros_like(x: Any, name: str | None = None) -> Tensor:
    """Zeros with ``x``'s shape and dtype."""
    return _unary(OpType.ZEROS_LIKE, np.zeros_like, x, name, ANY)


def ones(shape: Sequence[int], dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A constant of ones."""
    return constant(np.ones(_shape_arg("ones", shape), _dtype_arg("ones", dtype).np), name=name)


def zeros(shape: Sequence[int], dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A constant of zeros."""
    return constant(np.zeros(_shape_arg("zeros", shape), _dtype_arg("zeros", dtype).np), name=name)


def _dtype_arg(op_type: str, dtype: Any) -> dtypes.DType:
    try:
        return dtypes.as_dtype(dtype)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{op_type}: dtype: {e}") from None


def _shape_arg(op_type: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    try:
        items = list(shape)
    except TypeError:
        raise TypeError(f"{op_type}: shape must be a list of ints, got {shape!r}") from None
    dims = []
    for d in items:
        if type(d) is not int:  # a NumPy integer is fine, a bool or a float is not
            if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
                raise TypeError(f"{op_type}: shape must be a list of ints, got {shape!r}")
            d = int(d)
        if d < 0 and (d != -1 or op_type != OpType.RESHAPE):
            allowed = " (-1 once, for reshape)" if op_type == OpType.RESHAPE else ""
            raise ValueError(f"{op_type}: shape {items} has a negative dimension; dimensions "
                             f"are sizes >= 0{allowed}")
        dims.append(d)
    return tuple(dims)


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sum of a list of same-shaped tensors."""
    ts = [_as_tensor(t, OpType.ADD_N, f"inputs[{i}]") for i, t in enumerate(inputs)]
    if not ts:
        raise ValueError("AddN: inputs must be a non-empty list of tensors")
    first = ts[0]
    _check_kind(OpType.ADD_N, first, NUMBER)
    for t in ts[1:]:
        if t._dtype != first._dtype:
            raise _mixed(OpType.ADD_N, first, t)
        if t.shape != first.shape:
            raise ValueError(f"AddN: all inputs must have the same shape: {first.name} is "
                             f"{first.shape}, {t.name} is {t.shape}")
    return added(ts, name)


# ---------------------------------------------------------------- linear algebra


def matmul(a: Any, b: Any, *, transpose_a: bool = False, transpose_b: bool = False,
           name: str | None = None) -> Tensor:
    """Matrix product ``a @ b`` (leading axes are batch axes and broadcast).

    >>> import gradviz as gv
    >>> gv.matmul(gv.ones([2, 3]), gv.ones([4, 2]))
    Traceback (most recent call last):
    ValueError: MatMul: inner dimensions do not match: a has shape (2, 3) and b has shape (4, 2); a's columns (3) must equal b's rows (4)
    """
    if not (isinstance(a, Tensor) and isinstance(b, Tensor) and a._dtype is b._dtype
            and a._dtype.kind == "f" and transpose_a is False and transpose_b is False):
        # (the usual `x @ W` of two float tensors has nothing to convert or check here)
        _refuse_bools(OpType.MATMUL, a, b)
        a, b = _pair(OpType.MATMUL, a, b)
        transpose_a = _flag(OpType.MATMUL, "transpose_a", transpose_a)
        transpose_b = _flag(OpType.MATMUL, "transpose_b", transpose_b)
    for arg, t in (("a", a), ("b", b)):
        if t.ndim < 2:
            raise ValueError(f"MatMul: {arg} must have rank >= 2 (a matrix), got {t.name} of "
                             f"shape {t.shape}; reshape vectors to (1, n) or (n, 1)")
    av = np.swapaxes(a._value, -1, -2) if transpose_a else a._value
    bv = np.swapaxes(b._value, -1, -2) if transpose_b else b._value
    if av.shape[-1] != bv.shape[-2]:
        ta = " (transposed)" if transpose_a else ""
        tb = " (transposed)" if transpose_b else ""
        raise ValueError(f"MatMul: inner dimensions do not match: a has shape {a.shape}{ta} "
                         f"and b has shape {b.shape}{tb}; a's columns ({av.shape[-1]}) must "
                         f"equal b's rows ({bv.shape[-2]})")
    try:
        value = _matmul(av, bv)
    except ValueError:
        raise ValueError(f"MatMul: batch dimensions of {a.shape} and {b.shape} cannot be "
                         "broadcast together") from None
    return make_op(OpType.MATMUL, (a, b), value,
                   {"transpose_a": transpose_a, "transpose_b": transpose_b}, name)


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # without NumPy's warnings, as _quiet's ops: NaN and inf are the trace's to flag, and
    # on some CPUs BLAS leaves the invalid flag raised for finite products, which NumPy
    # then reports ("invalid value encountered in matmul") now and then
    with np.errstate(all="ignore"):
        if a.ndim > 2 and b.ndim == 2 and a.size and a.flags.c_contiguous:
            # a batch times one matrix: one matrix product of the batch's rows, not one per
            # batch element (the same sums; several times faster on small matrices)
            return (a.reshape(-1, a.shape[-1]) @ b).reshape(*a.shape[:-1], b.shape[-1])
        return np.matmul(a, b)


# ---------------------------------------------------------------- reductions


def _flag(op_type: str, arg: str, value: Any) -> bool:
    """A yes/no argument: ``keepdims="False"`` must not read as True."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op_type}: {arg} must be True or False, got {_graph._short(value)}")
    return bool(value)


def _reduce(op_type: str, fn: Any, x: Any, axis: Any, keepdims: bool,
            name: str | None, empty: str | None = None) -> Tensor:
    """A reduction; ``empty``: why it refuses to reduce over an axis of size 0 (None: it may)."""
    x = _as_tensor(x, op_type, "input_tensor")
    _check_kind(op_type, x, NUMBER)
    axes = _axes(op_type, x, axis)
    keepdims = _flag(op_type, "keepdims", keepdims)
    if empty is not None and any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"{op_type}: {x.name} has shape {x.shape}, and {empty} over its empty "
                         f"axis; reduce over other axes, or check the shape")
    value = fn(x._value, axis=axes, keepdims=keepdims)
    value = np.asarray(value, dtype=x._dtype)
    return make_op(op_type, (x,), value, {"axis": list(axes), "keepdims": keepdims}, name)


def _mean(v: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    count = 1
    for a in axis:
        count *= v.shape[a]
    if count and v.dtype in _MEAN_AS_SUM:
        # what np.mean computes for these dtypes (the sum, then divided by the count),
        # without its Python layers, which cost more than the sum on small arrays
        return np.true_divide(np.add.reduce(v, axis=axis, keepdims=keepdims), count)
    if count:
        return np.mean(v, axis=axis, keepdims=keepdims)
    # the mean of no numbers: NaN, as in TensorFlow (np.mean would warn twice)
    return np.full(np.add.reduce(v, axis=axis, keepdims=keepdims).shape, np.nan, v.dtype)


def _sum(v: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """``np.add.reduce``; over the leading axes of a large float array (a bias's gradient:
    a (32, 28, 28, 8) gradient summed to (8,)), a product with ones, which BLAS does
    some twenty times faster than NumPy's reduction down the rows."""
    n = len(axis)
    if (0 < n < v.ndim and v.size >= _BLAS_SUM_SIZE and v.dtype.kind == "f"
            and v.dtype.itemsize >= 4 and axis == tuple(range(n)) and v.flags.c_contiguous):
        rest = v.shape[n:]
        rows = v.size // math.prod(rest) if math.prod(rest) else 0
        if rows:
            out = (_ones(rows, v.dtype) @ v.reshape(rows, -1)).reshape(rest)
            return out.reshape((1,) * n + rest) if keepdims else out
    return np.add.reduce(v, axis=axis, keepdims=keepdims)


_MEAN_AS_SUM = (np.dtype(np.float32), np.dtype(np.float64))
_BLAS_SUM_SIZE = 1 << 14  # below this, the reduction is as fast as the product


def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of ``n`` ones, kept for the next sum of that size."""
    key = (n, dtype)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) >= 16:
            _ONES.clear()
        ones = _ONES[key] = np.ones(n, dtype)
        ones.flags.writeable = False
    return ones


_ONES: dict[tuple[int, np.dtype], np.ndarray] = {}


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Sum over ``axis`` (all axes when None)."""
    return _reduce(OpType.SUM, _sum, input_tensor, axis, keepdims, name)


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                name: str | None = None) -> Tensor:
    """Mean over ``axis`` (all axes when None)."""
    x = _as_tensor(input_tensor, OpType.MEAN, "input_tensor")
    empty = None if x._dtype.kind == "f" else "the mean of no integers is undefined"
    return _reduce(OpType.MEAN, _mean, x, axis, keepdims, name, empty)


def reduce_max(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Maximum over ``axis`` (all axes when None)."""
    return _reduce(OpType.MAX, _max, input_tensor, axis, keepdims, name)


def _max(v: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    # the maximum of no numbers: -inf (an integer type's least value), as TensorFlow gives
    lowest = -np.inf if v.dtype.kind == "f" else np.iinfo(v.dtype).min
    return np.maximum.reduce(v, axis=axis, keepdims=keepdims, initial=lowest)


# ---------------------------------------------------------------- shapes


def reshape(tensor: Any, shape: Sequence[int], name: str | None = None) -> Tensor:
    """The same values in a new shape (one dimension may be -1)."""
    x = _as_tensor(tensor, OpType.RESHAPE, "tensor")
    dims = _shape_arg(OpType.RESHAPE, shape)
    try:
        value = x._value.reshape(dims)
    except ValueError:
        raise ValueError(f"Reshape: cannot reshape {x.name} of shape {x.shape} "
                         f"({x._value.size} values) to {dims}") from None
    return make_op(OpType.RESHAPE, (x,), value, {"shape": list(value.shape)}, name)


def transpose(a: Any, perm: Sequence[int] | None = None, name: str | None = None) -> Tensor:
    """Permute axes (reverse them when ``perm`` is None)."""
    x = _as_tensor(a, OpType.TRANSPOSE, "a")
    rank = x.ndim
    p = list(range(rank))[::-1] if perm is None else list(perm)
    if (any(isinstance(i, bool) or not isinstance(i, (int, np.integer)) for i in p)
            or sorted(p) != list(range(rank))):
        raise ValueError(f"Transpose: perm {p} is not a permutation of 0..{rank - 1} for "
                         f"{x.name} of shape {x.shape}")
    p = [int(i) for i in p]
    return make_op(OpType.TRANSPOSE, (x,), np.transpose(x._value, p), {"perm": p}, name)


def _broadcasts_to(shape: tuple[int, ...], dims: tuple[int, ...]) -> bool:
    """Whether NumPy broadcasting takes ``shape`` to ``dims`` (never to a lower rank)."""
    lead = len(dims) - len(shape)
    if lead < 0:
        return False
    for i, d in enumerate(shape):
        if d != 1 and d != dims[lead + i]:
            return False
    return True


def broadcast_to(input: Any, shape: Sequence[int], name: str | None = None) -> Tensor:  # noqa: A002
    """Broadcast to ``shape``; its gradient is summed back over the broadcast axes."""
    x = _as_tensor(input, OpType.BROADCAST_TO, "input")
    dims = _shape_arg(OpType.BROADCAST_TO, shape)
    if not _broadcasts_to(x.shape, dims):
        raise ValueError(f"BroadcastTo: cannot broadcast {x.name} of shape {x.shape} "
                         f"to {dims}")
    return broadcast(x, dims, name)


def _same_dtype(op_type: str, ts: list[Tensor]) -> None:
    for t in ts[1:]:
        if t._dtype != ts[0]._dtype:
            raise _mixed(op_type, ts[0], t)


def concat(values: Sequence[Any], axis: int, name: str | None = None) -> Tensor:
    """Join tensors along an existing axis."""
    ts = [_as_tensor(v, OpType.CONCAT, f"values[{i}]") for i, v in enumerate(values)]
    if not ts:
        raise ValueError("ConcatV2: values must be a non-empty list of tensors")
    _same_dtype(OpType.CONCAT, ts)
    ax = _one_axis(OpType.CONCAT, ts[0].ndim, axis, ts[0].name)
    try:
        value = np.concatenate([t._value for t in ts], axis=ax)
    except ValueError:
        shapes = ", ".join(str(t.shape) for t in ts)
        raise ValueError(f"ConcatV2: shapes {shapes} must match except along axis {ax}") from None
    return make_op(OpType.CONCAT, tuple(ts), value, {"axis": ax}, name)


def stack(values: Sequence[Any], axis: int = 0, name: str | None = None) -> Tensor:
    """Join same-shaped tensors along a new axis."""
    ts = [_as_tensor(v, OpType.PACK, f"values[{i}]") for i, v in enumerate(values)]
    if not ts:
        raise ValueError("Pack: values must be a non-empty list of tensors")
    _same_dtype(OpType.PACK, ts)
    for t in ts[1:]:
        if t.shape != ts[0].shape:
            raise ValueError(f"Pack: all values must have the same shape: {ts[0].name} is "
                             f"{ts[0].shape}, {t.name} is {t.shape}")
    ax = _one_axis(OpType.PACK, ts[0].ndim + 1, axis, "the result")
    return make_op(OpType.PACK, tuple(ts), np.stack([t._value for t in ts], axis=ax),
                   {"axis": ax}, name)


def unstack(value: Any, axis: int = 0, name: str | None = None) -> list[Tensor]:
    """Split along ``axis`` into tensors one rank lower."""
    x = _as_tensor(value, OpType.UNPACK, "value")
    ax = _one_axis(OpType.UNPACK, x.ndim, axis, x.name)
    parts = [np.take(x._value, i, axis=ax) for i in range(x.shape[ax])]
    return list(make_multi_op(OpType.UNPACK, (x,), parts, {"axis": ax, "num": len(parts)}, name))


def split(value: Any, num_or_size_splits: Any, axis: int = 0,
          name: str | None = None) -> list[Tensor]:
    """Split along ``axis`` into equal parts (an int) or parts of given sizes (a list)."""
    x = _as_tensor(value, OpType.SPLIT, "value")
    ax = _one_axis(OpType.SPLIT, x.ndim, axis, x.name)
    n = x.shape[ax]
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(num_or_size_splits, bool):
        k = int(num_or_size_splits)
        if k <= 0 or n % k:
            raise ValueError(f"Split: axis {ax} of {x.name} has size {n}, which cannot be split "
                             f"into {k} equal parts")
        sizes = [n // k] * k
    else:
        try:
            sizes = list(num_or_size_splits)
        except TypeError:
            sizes = [None]
        if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in sizes):
            raise TypeError(f"Split: num_or_size_splits must be an int or a list of ints, got "
                            f"{num_or_size_splits!r}")
        sizes = [int(s) for s in sizes]
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = n - (sum(sizes) + 1)
        if builtins.any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ValueError(f"Split: sizes {list(num_or_size_splits)} must be non-negative and "
                             f"add up to {n}, the size of axis {ax} of {x.name}")
    cuts = np.cumsum(sizes)[:-1]
    parts = np.split(x._value, cuts, axis=ax)
    return list(make_multi_op(OpType.SPLIT, (x,), parts, {"axis": ax, "size_splits": sizes}, name))


# ---------------------------------------------------------------- slicing


def _index_spec(index: Any) -> list:
    """A basic NumPy index as JSON-safe data: ints, [start, stop, step], "newaxis", "..."."""
    items = index if isinstance(index, tuple) else (index,)
    spec: list = []
    for it in items:
        if isinstance(it, slice):
            parts = [it.start, it.stop, it.step]
            for p in parts:
                if p is not None and (isinstance(p, bool) or not isinstance(p, (int, np.integer))):
                    raise TypeError(f"StridedSlice: slice bounds must be ints or None, got {it!r}")
            spec.append([None if p is None else int(p) for p in parts])
        elif it is None:
            spec.append("newaxis")
        elif it is Ellipsis:
            spec.append("...")
        elif isinstance(it, (int, np.integer)) and not isinstance(it, bool):
            spec.append(int(it))
        elif isinstance(it, Tensor) and it.dtype.is_integer and it.ndim == 0:
            spec.append(int(it._value))
        else:
            raise TypeError(f"StridedSlice: Only integers, slices (`:`), ellipsis (`...`), "
                            f"tf.newaxis (`None`) and scalar tf.int32/tf.int64 tensors are "
                            f"valid indices, got {it!r}; to pick rows by a list or array of "
                            f"indices, use gv.gather(x, indices) (as in TensorFlow)")
    return spec


def _index_from_spec(spec: list) -> tuple:
    out: list = []
    for it in spec:
        if isinstance(it, list):
            out.append(slice(*it))
        elif it == "newaxis":
            out.append(None)
        elif it == "...":
            out.append(Ellipsis)
        else:
            out.append(it)
    return tuple(out)


def strided_slice(input_: Any, begin: Any, end: Any = None, strides: Any = None,
                  begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0,
                  new_axis_mask: int = 0, shrink_axis_mask: int = 0, var: Any = None,
                  name: str | None = None) -> Tensor:
    """``input_[begin:end:strides]`` along each axis, as TensorFlow's ``tf.strided_slice``:
    bit i of a mask is about entry i of ``begin``, ``end`` and ``strides``
    (``begin_mask``: from the start, ``end_mask``: to the end, ``ellipsis_mask``: ``...``
    here, ``new_axis_mask``: a new axis of 1 here, ``shrink_axis_mask``: the index
    ``begin[i]``, its axis dropped).  It is the same op as ``input_[...]``, whose
    index it records; with ``end`` left out, ``begin`` is that Python index
    (``gv.strided_slice(x, (0, slice(1, None)))`` is ``x[0, 1:]``).

    >>> import gradviz as gv
    >>> x = gv.constant([[[0.0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]])
    >>> y = gv.strided_slice(x, [0, 1, 0], [1, 3, 4], [1, 1, 2], shrink_axis_mask=1)
    >>> y.numpy().tolist(), y.op.get_attr("spec")  # x[0, 1:3, 0:4:2]
    ([[4.0, 6.0], [8.0, 10.0]], [0, [1, 3, 1], [0, 4, 2]])
    """
    if end is None:
        if strides is not None or any(
                (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)):
            raise TypeError("StridedSlice: end is required with strides or masks (as in "
                            "TensorFlow); without them, begin may be a Python index: "
                            "gv.strided_slice(x, (0, slice(1, None))) is x[0, 1:]")
        return sliced(input_, begin, name)
    index = _masked_index(begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                          new_axis_mask, shrink_axis_mask)
    return sliced(input_, index, name)


def int_list(op_type: str, arg: str, value: Any, one: bool = False) -> list[int]:
    """A list of ints (a tensor of them too); ``one``: a single int is a list of one."""
    if isinstance(value, Tensor):
        value = value._value.tolist()
    if one and not isinstance(value, (list, tuple, np.ndarray)):
        value = [value]
    if not isinstance(value, (list, tuple, np.ndarray)) or np.ndim(value) != 1 or builtins.any(
            isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer))
            for v in value):
        raise TypeError(f"{op_type}: {arg} must be {'an int or ' if one else ''}a list of "
                        f"ints, got {value!r}")
    return [int(v) for v in value]


def _masked_index(begin: Any, end: Any, strides: Any, begin_mask: int, end_mask: int,
                  ellipsis_mask: int, new_axis_mask: int, shrink_axis_mask: int) -> tuple:
    """TensorFlow's begin, end, strides and masks as the Python index they stand for."""
    starts, stops = int_list("StridedSlice", "begin", begin), int_list("StridedSlice", "end", end)
    steps = int_list("StridedSlice", "strides", strides) if strides is not None else \
        [1] * len(starts)
    if not len(starts) == len(stops) == len(steps):
        raise ValueError(f"StridedSlice: Expected begin, end, and strides to be 1D equal size "
                         f"tensors, but got shapes [{len(starts)}], [{len(stops)}], and "
                         f"[{len(steps)}] instead.")
    masks = {}
    for arg, m in (("begin_mask", begin_mask), ("end_mask", end_mask),
                   ("ellipsis_mask", ellipsis_mask), ("new_axis_mask", new_axis_mask),
                   ("shrink_axis_mask", shrink_axis_mask)):
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 0:
            raise TypeError(f"StridedSlice: {arg} must be an int of bits, got {m!r}")
        masks[arg] = int(m)
    if bin(masks["ellipsis_mask"]).count("1") > 1:
        raise ValueError("StridedSlice: Multiple ellipses in slice spec not allowed "
                         f"(ellipsis_mask={masks['ellipsis_mask']:#b}: one bit at most)")
    index: list = []
    for i, (b, e, k) in enumerate(zip(starts, stops, steps)):
        def bit(arg: str) -> bool:
            return bool(masks[arg] >> i & 1)
        if bit("ellipsis_mask"):
            index.append(Ellipsis)
        elif bit("new_axis_mask"):
            index.append(None)
        elif bit("shrink_axis_mask"):
            index.append(b)
        else:
            if k == 0:
                raise ValueError(f"StridedSlice: strides[{i}] must be non-zero")
            index.append(slice(None if bit("begin_mask") else b, None if bit("end_mask") else e,
                               k))
    return tuple(index)


def sliced(x: Any, index: Any, name: str | None = None) -> Tensor:
    """``x[index]`` for basic indices (what ``tensor[...]`` calls): a StridedSlice."""
    x = _as_tensor(x, OpType.STRIDED_SLICE, "x")
    listed = ""
    if type(index) is list:  # as TensorFlow reads it: x[[1, 0]] is x[1, 0]
        called = _graph.plain_name(x.name)
        listed = (f"; a list index is read as TensorFlow reads it, as a tuple of indices, "
                  f"one per axis: {called}[{index!r}] is {called}[{_list_text(index)}]; to "
                  f"pick the rows {index!r}, use gv.gather({called}, {index!r})")
        index = tuple(index)
    spec = _index_spec(index)
    try:
        value = x._value[_index_from_spec(spec)]
    except IndexError as e:
        raise IndexError(f"StridedSlice: index {index!r} does not fit {x.name} of shape "
                         f"{x.shape}: {e}{listed}") from None
    if listed:
        import warnings
        warnings.warn(listed[2].upper() + listed[3:], stacklevel=_graph.outside_stacklevel())
    return make_op(OpType.STRIDED_SLICE, (x,), np.array(value), {"spec": spec}, name)


def _list_text(index: list) -> str:
    return ", ".join(repr(i) for i in index)


def strided_slice_grad(grad: Tensor, spec: list, shape: Sequence[int],
                       name: str | None = None) -> Tensor:
    """Zeros of ``shape`` with ``grad`` written into the sliced positions."""
    value = np.zeros(tuple(shape), grad._dtype)
    value[_index_from_spec(spec)] = grad._value
    return make_op(OpType.STRIDED_SLICE_GRAD, (grad,), value,
                   {"spec": spec, "shape": list(shape)}, name)


# ---------------------------------------------------------------- dtypes


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Convert to ``dtype``; casting to an integer type cuts the gradient.

    A cast to the dtype ``x`` already has returns ``x`` itself, as TensorFlow's does
    (no op is made: ``gv.cast(x, x.dtype) is x``).
    """
    x = _as_tensor(x, OpType.CAST, "x")
    d = _dtype_arg(OpType.CAST, dtype)
    if x._dtype == d.np:
        return x
    return make_op(OpType.CAST, (x,), x._value.astype(d.np),
                   {"SrcT": x.dtype.name, "DstT": d.name}, name)


# ---------------------------------------------------------------- neural-network ops


def _softmax(v: np.ndarray, axis: int) -> np.ndarray:
    # (ufunc.reduce: np.max and np.sum add microseconds of dispatch on small arrays)
    e = np.exp(v - np.maximum.reduce(v, axis=axis, keepdims=True))
    return e / np.add.reduce(e, axis=axis, keepdims=True)


def _log_softmax(v: np.ndarray, axis: int) -> np.ndarray:
    shifted = v - np.maximum.reduce(v, axis=axis, keepdims=True)
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))


def _logits_axis(op_type: str, x: Tensor, axis: Any) -> int:
    """The class axis of a softmax: it must hold at least one logit."""
    ax = _one_axis(op_type, x.ndim, axis, x.name)
    if x.shape[ax] == 0:
        raise ValueError(f"{op_type}: axis {ax} of {x.name} (shape {x.shape}) has size 0, "
                         "and a softmax needs at least one logit along its axis")
    return ax


def softmax(logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``.

    With one logit per row the result is always 1: a classic pitfall.
    """
    x = _as_tensor(logits, OpType.SOFTMAX, "logits")
    _float_only(OpType.SOFTMAX, x)
    ax = _logits_axis(OpType.SOFTMAX, x, axis)
    return make_op(OpType.SOFTMAX, (x,), _softmax(x._value, ax), {"axis": ax}, name)


def log_softmax(logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    """``log(softmax(x))`` computed stably."""
    x = _as_tensor(logits, OpType.LOG_SOFTMAX, "logits")
    _float_only(OpType.LOG_SOFTMAX, x)
    ax = _logits_axis(OpType.LOG_SOFTMAX, x, axis)
    return make_op(OpType.LOG_SOFTMAX, (x,), _log_softmax(x._value, ax), {"axis": ax}, name)


def sigmoid_cross_entropy_with_logits(*, labels: Any, logits: Any,
                                      name: str | None = None) -> Tensor:
    """Elementwise ``-z log sigmoid(x) - (1-z) log(1-sigmoid(x))``, computed stably."""
    logits = _as_tensor(logits, OpType.SIGMOID_XENT, "logits")
    _float_only(OpType.SIGMOID_XENT, logits)
    labels = _like(labels, logits, OpType.SIGMOID_XENT) if not isinstance(labels, Tensor) else labels
    if labels._dtype != logits._dtype:
        raise _mixed(OpType.SIGMOID_XENT, labels, logits)
    if labels.shape != logits.shape:
        raise ValueError(f"SigmoidCrossEntropyWithLogits: labels {labels.shape} and logits "
                         f"{logits.shape} must have the same shape")
    x, z = logits._value, labels._value
    # max(x, 0) - x z + log(1 + e^-|x|)
    value = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))
    return make_op(OpType.SIGMOID_XENT, (labels, logits), value.astype(x.dtype), None, name)


def softmax_cross_entropy_with_logits(*, labels: Any, logits: Any, axis: int = -1,
                                      name: str | None = None) -> Tensor:
    """``-sum(labels * log_softmax(logits), axis)``: one loss per example."""
    logits = _as_tensor(logits, OpType.SOFTMAX_XENT, "logits")
    _float_only(OpType.SOFTMAX_XENT, logits)
    labels = _like(labels, logits, OpType.SOFTMAX_XENT) if not isinstance(labels, Tensor) else labels
    if labels._dtype != logits._dtype:
        raise _mixed(OpType.SOFTMAX_XENT, labels, logits)
    if labels.shape != logits.shape:
        raise ValueError(f"SoftmaxCrossEntropyWithLogits: labels {labels.shape} and logits "
                         f"{logits.shape} must have the same shape")
    ax = _logits_axis(OpType.SOFTMAX_XENT, logits, axis)
    # log_softmax as _log_softmax computes it, keeping the exponentials: the softmax the
    # gradient needs is then one division (as TensorFlow's kernel makes both at once)
    v = logits._value
    shifted = v - np.maximum.reduce(v, axis=ax, keepdims=True)
    e = np.exp(shifted)
    total = np.add.reduce(e, axis=ax, keepdims=True)
    value = -np.add.reduce(labels._value * (shifted - np.log(total)), axis=ax)
    out = make_op(OpType.SOFTMAX_XENT, (labels, logits), np.asarray(value, logits._dtype),
                  {"axis": ax}, name)
    _XENT_EXPS[out] = (e, total)
    return out


#: a softmax cross-entropy's loss -> its logits' exponentials and their sums (see
#: softmax_of_logits), while the loss lives
_XENT_EXPS: weakref.WeakKeyDictionary[Tensor, tuple[np.ndarray, np.ndarray]] = \
    weakref.WeakKeyDictionary()


def softmax_of_logits(op: Operation) -> Tensor:
    """``softmax(logits, axis)`` of a SoftmaxCrossEntropyWithLogits op, the same op and
    value as ``softmax`` makes, from what the loss computed on the way."""
    logits, axis = op.inputs[1], op.attrs["axis"]
    loss = op._outputs()  # (None once the loss is gone: then worked out again)
    kept = None if loss is None else _XENT_EXPS.get(loss)
    value = _softmax(logits._value, axis) if kept is None else kept[0] / kept[1]
    return make_op(OpType.SOFTMAX, (logits,), value, {"axis": axis})


# ---------------------------------------------------------------- gradient helper ops


def tanh_grad(y: Tensor, grad: Tensor, name: str | None = None) -> Tensor:
    """``grad * (1 - y**2)``: the backward of Tanh given its output ``y``."""
    v = y._value
    value = grad._value * (_scalar(1, y._dtype) - v * v)
    return make_op(OpType.TANH_GRAD, (y, grad), value, None, name)


def sigmoid_grad(y: Tensor, grad: Tensor, name: str | None = None) -> Tensor:
    """``grad * y * (1 - y)``: the backward of Sigmoid given its output ``y``."""
    v = y._value
    value = grad._value * v * (_scalar(1, y._dtype) - v)
    return make_op(OpType.SIGMOID_GRAD, (y, grad), value, None, name)


def relu_grad(grad: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """``grad`` where ``y > 0``, else 0: the backward of Relu."""
    # multiplied by the mask, as TensorFlow's kernel does (an Inf gradient where
    # y <= 0 gives NaN there too), and faster than np.where
    with np.errstate(invalid="ignore"):
        value = grad._value * (y._value > 0)
    return make_op(OpType.RELU_GRAD, (grad, y), value, None, name)


def sqrt_grad(y: Tensor, grad: Tensor, name: str | None = None) -> Tensor:
    """``grad * 0.5 / y``: the backward of Sqrt given its output ``y``; 0 where ``grad``
    is 0, also where ``y`` is 0 (as TensorFlow's kernel: no NaN from a masked-out 0)."""
    with np.errstate(all="ignore"):
        value = np.where(grad._value == 0, 0, grad._value * (0.5 / y._value)).astype(
            grad._dtype)
    return make_op(OpType.SQRT_GRAD, (y, grad), value, None, name)


# ---------------------------------------------------------------- ops the engine makes itself
#
# The gradient rules and the backward walk make the same ops as the functions above (op
# type, value and attrs alike) from arguments they know to be right.  These skip the
# checks a user's call needs, which on a model of small arrays cost more than the
# arithmetic.


def summed(x: Tensor, axes: tuple[int, ...], keepdims: bool = False) -> Tensor:
    """``reduce_sum(x, axes, keepdims)`` for distinct axes in 0..rank-1, in order."""
    value = _sum(x._value, axes, keepdims)
    if type(value) is not np.ndarray or value.dtype is not x._dtype:
        value = np.asarray(value, x._dtype)
    return make_op(OpType.SUM, (x,), value, {"axis": list(axes), "keepdims": keepdims})


def reshaped(x: Tensor, shape: Sequence[int]) -> Tensor:
    """``reshape(x, shape)`` for a shape of x's size."""
    value = x._value.reshape(shape)
    return make_op(OpType.RESHAPE, (x,), value, {"shape": list(value.shape)})


def broadcast(x: Tensor, shape: tuple[int, ...], name: str | None = None) -> Tensor:
    """``broadcast_to(x, shape)`` for a shape x broadcasts to."""
    value = np.empty(shape, x._dtype)
    value[...] = x._value  # a broadcasting copy (np.broadcast_to costs more)
    return make_op(OpType.BROADCAST_TO, (x,), value, {"shape": list(shape)}, name)


def added(ts: list[Tensor], name: str | None = None) -> Tensor:
    """``add_n(ts)`` for tensors of one shape and dtype."""
    value = ts[0]._value
    for t in ts[1:]:
        value = value + t._value
    return make_op(OpType.ADD_N, tuple(ts), value, None, name)


def divided_by_count(x: Tensor, count: int) -> Tensor:
    """``divide(x, count)`` for a float ``x`` and a count >= 1 (no NumPy warning can
    arise, so none needs silencing)."""
    y = _like(count, x, OpType.DIV)
    return make_op(OpType.DIV, (x, y), x._value / y._value)


def product(a: Tensor, b: Tensor, transpose_a: bool = False, transpose_b: bool = False
            ) -> Tensor:
    """``matmul(a, b, ...)`` for operands whose shapes fit."""
    av = np.swapaxes(a._value, -1, -2) if transpose_a else a._value
    bv = np.swapaxes(b._value, -1, -2) if transpose_b else b._value
    return make_op(OpType.MATMUL, (a, b), _matmul(av, bv),
                   {"transpose_a": transpose_a, "transpose_b": transpose_b})


_graph._ops = sys.modules[__name__]  # Tensor's operators call the ops of this module
# ... and the most used are those ops themselves: `y + 0.01` then runs one frame fewer,
# and the op's line of code is found without a walk (see make_op)
Tensor.__add__, Tensor.__sub__, Tensor.__mul__, Tensor.__truediv__ = add, subtract, multiply, divide
