"""The math a transformer block needs beyond ``ops.py``: TensorFlow's ``tf.math`` ops.

Ops of their own, as in TensorFlow (``Softplus``, ``Min``, ``IsFinite``, ``ArgMax``,
``ArgMin``, ``Einsum``, ``EuclideanNorm``, the segment ops; the elementwise ones with a
derivative of a line, ``Sin``, ``Erf`` and the like, are declared in the table of
:mod:`gradviz.engine.elementwise`), and the functions TensorFlow writes in Python out of
other ops, written here out of the same ones, in a name scope of TensorFlow's
name, so the diagram shows what TensorFlow's graph holds:
``reduce_variance``, ``reduce_std``, ``reduce_logsumexp``, ``clip_by_value``.

>>> import gradviz as gv
>>> x = gv.constant([[1.0, 2.0], [3.0, 5.0]])
>>> gv.math.reduce_variance(x, axis=1).numpy().tolist()
[0.25, 1.0]
>>> gv.einsum("ij,kj->ik", x, x).numpy().tolist()
[[5.0, 13.0], [13.0, 34.0]]
"""

from __future__ import annotations

import functools
import math
import string
from typing import Any, NamedTuple

import numpy as np

from .array_ops import _indices
from .graph import Tensor, make_op, name_scope
from . import dtypes
from .ops import (FLOAT, NUMBER, OpType, _as_tensor, _axes, _binary, _check_kind, _dtype_arg,
                  _flag, _float_only, _mixed, _one_axis, _pair, _refuse_bools, cast, _quiet,
                  _reduce, _unary, exp, log, maximum,
                  minimum, reduce_max, reduce_mean, reduce_sum, reshape, sqrt, square,
                  stop_gradient, where, zeros_like)

__all__ = [
    "argmax", "argmin", "clip_by_value", "cumprod", "cumsum", "divide_no_nan", "einsum",
    "is_finite", "reduce_all", "reduce_any", "reduce_euclidean_norm", "reduce_logsumexp",
    "reduce_min", "reduce_prod", "reduce_std", "reduce_variance", "segment_max", "segment_mean",
    "segment_sum", "softplus",
]


# ---------------------------------------------------------------- elementwise


def softplus(features: Any, name: str | None = None) -> Tensor:
    """``log(1 + exp(x))``, without overflow: a smooth relu."""
    return _unary(OpType.SOFTPLUS, lambda v: np.logaddexp(v.dtype.type(0), v).astype(v.dtype),
                  features, name)


def divide_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``, but 0 where ``y`` is 0 (also 0 / 0); integers are first cast to float, as
    ``gv.divide`` casts them (float32 for 8 and 16 bits, else float64), as TensorFlow's."""
    _refuse_bools(OpType.DIV_NO_NAN, x, y)
    x, y = _pair(OpType.DIV_NO_NAN, x, y)
    if x._dtype.kind != "f":
        to = dtypes.float32 if x._dtype.itemsize <= 2 else dtypes.float64
        x, y = cast(x, to), cast(y, to)

    def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.where(b == 0, a.dtype.type(0), a / np.where(b == 0, 1, b)).astype(a.dtype)
    return _binary(OpType.DIV_NO_NAN, divide, x, y, name)


def is_finite(x: Any, name: str | None = None) -> Tensor:
    """Where ``x`` is neither infinite nor NaN (bool; no gradient)."""
    return _unary(OpType.IS_FINITE, np.isfinite, x, name)


# ---------------------------------------------------------------- reductions


def _min(v: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    # the minimum of no numbers: +inf (an integer type's largest value), as TensorFlow gives
    highest = np.inf if v.dtype.kind == "f" else np.iinfo(v.dtype).max
    return np.minimum.reduce(v, axis=axis, keepdims=keepdims, initial=highest)


def reduce_min(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Minimum over ``axis`` (all axes when None)."""
    return _reduce(OpType.MIN, _min, input_tensor, axis, keepdims, name)


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                name: str | None = None) -> Tensor:
    """Product over ``axis`` (all axes when None)."""
    return _reduce(OpType.PROD, np.multiply.reduce, input_tensor, axis, keepdims, name)


def _euclidean_norm(v: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    with np.errstate(over="ignore"):
        squares = np.add.reduce(v * v, axis=axis, keepdims=keepdims)
    return np.sqrt(squares).astype(v.dtype)  # an integer input gives an integer (truncated)


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: str | None = None) -> Tensor:
    """The length of ``input_tensor`` as a vector over ``axis``: ``sqrt(sum(x**2))`` (all
    axes when None), one op (``EuclideanNorm``), as TensorFlow's."""
    return _reduce(OpType.EUCLIDEAN_NORM, _euclidean_norm, input_tensor, axis,
                   keepdims, name)


def _logical(op_type: str, fn: Any, input_tensor: Any, axis: Any, keepdims: bool,
             name: str | None) -> Tensor:
    x = _as_tensor(input_tensor, op_type, "input_tensor")
    if x._dtype.kind != "b":
        raise TypeError(f"{op_type}: expects a bool tensor, got {x.name} of dtype "
                        f"{x.dtype.name} (compare it first, e.g. x > 0)")
    axes = _axes(op_type, x, axis)
    keepdims = _flag(op_type, "keepdims", keepdims)
    value = np.asarray(fn(x._value, axis=axes, keepdims=keepdims))
    return make_op(op_type, (x,), value, {"axis": list(axes), "keepdims": keepdims}, name)


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Whether any value over ``axis`` is True (bool; no gradient)."""
    return _logical(OpType.REDUCE_ANY, np.logical_or.reduce, input_tensor, axis, keepdims, name)


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Whether every value over ``axis`` is True (bool; no gradient)."""
    return _logical(OpType.REDUCE_ALL, np.logical_and.reduce, input_tensor, axis, keepdims,
                    name)


# ---------------------------------------------------------------- segments


def _segments(op_type: str, data: Any, segment_ids: Any) -> tuple[Tensor, Tensor, int]:
    """``data``, its sorted segment ids (a vector as long as its first axis) and how many
    segments there are (the last id, plus one)."""
    x = _as_tensor(data, op_type, "data")
    ids = _indices(op_type, segment_ids, "segment_ids")
    if x.ndim == 0 or ids.ndim != 1 or ids.shape[0] != x.shape[0]:
        raise ValueError(f"{op_type}: segment_ids should be a vector as long as the first axis "
                         f"of data: got segment_ids of shape {ids.shape} and data of shape "
                         f"{x.shape}")
    v = ids._value
    if v.size and (v[0] < 0 or (np.diff(v) < 0).any()):
        raise ValueError(f"{op_type}: segment ids are not increasing: {v.tolist()} (they must "
                         "be sorted and not negative; unsorted_segment_sum takes any order)")
    return x, ids, int(v[-1]) + 1 if v.size else 0


def _segment(op_type: str, reduce: Any, data: Any, segment_ids: Any,
             name: str | None) -> Tensor:
    x, ids, n = _segments(op_type, data, segment_ids)
    _check_kind(op_type, x, NUMBER)
    value = np.zeros((n, *x.shape[1:]), x._dtype)  # an empty segment gives 0, as TensorFlow's
    v = ids._value
    if v.size:
        starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]])
        value[v[starts]] = reduce(x._value, starts, axis=0)
    return make_op(op_type, (x, ids), value, None, name)


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """The sum of each segment of ``data``'s rows: rows of one id are one segment (ids sorted,
    from 0; a segment with no rows is 0)."""
    return _segment(OpType.SEGMENT_SUM, np.add.reduceat, data, segment_ids, name)


def _mean_at(v: np.ndarray, starts: np.ndarray, axis: int) -> np.ndarray:
    counts = np.diff(np.r_[starts, v.shape[0]]).reshape(-1, *([1] * (v.ndim - 1)))
    sums = np.add.reduceat(v, starts, axis=0)
    return (sums / counts).astype(v.dtype)  # (integers: truncated, as C divides them)


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """The mean of each segment of ``data``'s rows (a segment with no rows is 0)."""
    return _segment(OpType.SEGMENT_MEAN, _mean_at, data, segment_ids, name)


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """The largest of each segment of ``data``'s rows, elementwise (a segment with no rows is
    0)."""
    return _segment(OpType.SEGMENT_MAX, np.maximum.reduceat, data, segment_ids, name)


def _cumulative(op_type: str, fn: Any, start: int, x: Any, axis: Any, exclusive: bool,
                reverse: bool, name: str | None) -> Tensor:
    t = _as_tensor(x, op_type, "x")
    _check_kind(op_type, t, NUMBER)
    if t.ndim == 0:
        raise ValueError(f"{op_type}: x must be at least a vector, got the scalar {t.name}")
    ax = _one_axis(op_type, t.ndim, axis, f"{t.name} {t.shape}")
    flags = [bool(_flag(op_type, arg, v)) for arg, v in (("exclusive", exclusive),
                                                         ("reverse", reverse))]
    v = np.flip(t._value, ax) if flags[1] else t._value
    out = fn(v, axis=ax, dtype=t._dtype)
    if flags[0] and out.shape[ax]:  # each leaves itself out: shifted by one, from 0 (or 1)
        first = np.full_like(np.take(out, [0], axis=ax), start)
        out = np.concatenate([first, np.take(out, range(out.shape[ax] - 1), axis=ax)], ax)
    out = np.flip(out, ax) if flags[1] else out
    return make_op(op_type, (t,), np.ascontiguousarray(out),
                   {"axis": ax, "exclusive": flags[0], "reverse": flags[1]}, name)


def cumsum(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    """Running sums along ``axis``; ``exclusive``: each leaves itself out; ``reverse``: from
    the end."""
    return _cumulative(OpType.CUMSUM, np.cumsum, 0, x, axis, exclusive, reverse, name)


def cumprod(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
            name: str | None = None) -> Tensor:
    """Running products along ``axis`` (``exclusive``, ``reverse`` as ``cumsum``)."""
    return _cumulative(OpType.CUMPROD, np.cumprod, 1, x, axis, exclusive, reverse, name)


def _real(op_type: str, x: Any) -> Tensor:
    x = _as_tensor(x, op_type, "input_tensor")
    if x._dtype.kind != "f":
        raise TypeError(f"{op_type}: Input must be either real or complex (got {x.name} of "
                        f"dtype {x.dtype.name}; cast it first: gv.cast(x, gv.float32))")
    return x


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                    name: str | None = None) -> Tensor:
    """The variance over ``axis``: the mean of the squared deviations from the mean (divided
    by n, not n - 1), made as TensorFlow makes it, in a ``reduce_variance`` scope."""
    x = _real("reduce_variance", input_tensor)
    with name_scope(name or "reduce_variance"):
        means = reduce_mean(x, axis, keepdims=True)
        return reduce_mean(square(x - means), axis, keepdims=keepdims)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """The standard deviation over ``axis``: the square root of ``reduce_variance``."""
    x = _real("reduce_std", input_tensor)
    with name_scope(name or "reduce_std"):
        return sqrt(reduce_variance(x, axis, keepdims=keepdims))


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                     name: str | None = None) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, without overflow: the maximum is taken out first
    (held still, as TensorFlow holds it, so no gradient goes through it)."""
    x = _as_tensor(input_tensor, "ReduceLogSumExp", "input_tensor")
    _float_only("ReduceLogSumExp", x)
    with name_scope(name or "ReduceLogSumExp"):
        raw_max = reduce_max(x, axis, keepdims=True)
        my_max = stop_gradient(where(is_finite(raw_max), raw_max, zeros_like(raw_max)))
        result = log(reduce_sum(exp(x - my_max), axis, keepdims=keepdims))
        if not keepdims:
            my_max = reshape(my_max, result.shape)
        return result + my_max


# ---------------------------------------------------------------- clipping and arg ops


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any,
                  name: str | None = None) -> Tensor:
    """``t`` with every value below ``clip_value_min`` raised to it and every value above
    ``clip_value_max`` lowered to it: a minimum, then a maximum, as TensorFlow makes it
    (a value on a bound keeps its gradient)."""
    x = _as_tensor(t, "clip_by_value", "t")
    with name_scope(name or "clip_by_value"):
        clipped = maximum(minimum(x, clip_value_max), clip_value_min)
    if clipped.shape != x.shape:
        raise ValueError(f"clip_by_value: the bounds would broadcast {x.name} of shape "
                         f"{x.shape} to {clipped.shape}; a bound must be a number or "
                         "broadcast to t's shape")
    return clipped


def _arg(op_type: str, fn: Any, input: Any, axis: Any, output_type: Any,  # noqa: A002
         name: str | None) -> Tensor:
    x = _as_tensor(input, op_type, "input")
    _check_kind(op_type, x, NUMBER)
    if x.ndim == 0:
        raise ValueError(f"{op_type}: {x.name} is a scalar; it needs an axis to look along")
    ax = _one_axis(op_type, x.ndim, 0 if axis is None else axis, f"{x.name} {x.shape}")
    out = _dtype_arg(op_type, output_type)
    if out.np.kind != "i":
        raise TypeError(f"{op_type}: output_type must be int32 or int64, got {out.name}")
    if x.shape[ax] == 0:
        raise ValueError(f"{op_type}: Reduction axis {ax} is empty in shape {list(x.shape)}")
    return make_op(op_type, (x,), fn(x._value, axis=ax).astype(out.np),
                   {"axis": ax, "output_type": out.name}, name)


def argmax(input: Any, axis: Any = None, output_type: Any = "int64",  # noqa: A002
           name: str | None = None) -> Tensor:
    """Where along ``axis`` (0 when None) the largest value is; the first, among ties.
    An index: it has no gradient."""
    return _arg(OpType.ARG_MAX, np.argmax, input, axis, output_type, name)


def argmin(input: Any, axis: Any = None, output_type: Any = "int64",  # noqa: A002
           name: str | None = None) -> Tensor:
    """Where along ``axis`` (0 when None) the smallest value is; the first, among ties."""
    return _arg(OpType.ARG_MIN, np.argmin, input, axis, output_type, name)


# ---------------------------------------------------------------- einsum


class Subscripts:
    """A two-operand einsum equation, every ``...`` spelt out as letters it does not use."""

    def __init__(self, a: str, b: str, out: str) -> None:
        self.a, self.b, self.out = a, b, out

    @property
    def equation(self) -> str:
        return f"{self.a},{self.b}->{self.out}"

    @classmethod
    def parse(cls, equation: Any, shapes: list[tuple[int, ...]]) -> Subscripts:
        op_type = OpType.EINSUM
        if not isinstance(equation, str):
            raise TypeError(f"{op_type}: equation must be a string such as 'ij,jk->ik', got "
                            f"{equation!r}")
        text = equation.replace(" ", "")
        lhs, arrow, out = text.partition("->")
        operands = lhs.split(",")
        if len(operands) != len(shapes):
            raise ValueError(f"{op_type}: the equation {equation!r} names {len(operands)} "
                             f"operand(s), but {len(shapes)} were given")
        if len(operands) != 2:
            raise ValueError(
                f"{op_type}: gradviz takes einsums of two operands (the products attention "
                f"uses, such as 'bqd,bkd->bqk'), got {len(operands)} in {equation!r}; for one "
                "operand use gv.transpose, gv.reduce_sum or gv.linalg.matrix_transpose")
        allowed = set(string.ascii_letters) | set(".")
        for part in (*operands, out):
            if set(part) - allowed or part.count(".") not in (0, 3) or (
                    "." in part and "..." not in part):
                raise ValueError(f"{op_type}: {equation!r} is not an equation gradviz reads: "
                                 "subscripts are letters and at most one '...' "
                                 "per operand, e.g. 'bqd,bkd->bqk' or '...qd,...kd->...qk'")
        ellipses = []
        for part, shape in zip(operands, shapes):
            named = len(part.replace("...", ""))
            extra = len(shape) - named
            if extra < 0 or (extra and "..." not in part):
                raise ValueError(f"{op_type}: the subscripts {part!r} name {named} axes, but "
                                 f"the operand has shape {shape} (rank {len(shape)})")
            ellipses.append(_ellipsis_dims(part, shape))
        filled = [e for e in ellipses if e is not None]
        if len(filled) == 2 and filled[0] != filled[1]:
            raise ValueError(f"{op_type}: the '...' of the two operands cover {filled[0]} and "
                             f"{filled[1]}; gradviz takes the same axes under both")
        n_ell = len(filled[0]) if filled else 0
        caps = "".join(c for c in string.ascii_letters if c not in text)[:n_ell]
        a, b = (p.replace("...", caps) for p in operands)
        if not arrow:  # NumPy's implicit output: each letter seen once, in order
            out = ("..." if filled else "") + "".join(
                sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
        if "..." in out and not filled:
            raise ValueError(f"{op_type}: the output of {equation!r} has '...' that no "
                             "operand has")
        out = out.replace("...", caps)
        for part in (a, b, out):
            if len(set(part)) != len(part):
                raise ValueError(
                    f"{op_type}: {equation!r} repeats a letter within one operand or the "
                    "output (a diagonal or trace); gradviz takes each letter once per "
                    "operand")
        if set(out) - set(a) - set(b):
            raise ValueError(f"{op_type}: the output of {equation!r} names letters that no "
                             f"operand has: {''.join(sorted(set(out) - set(a) - set(b)))}")
        sizes: dict[str, int] = {}
        for part, shape in zip((a, b), shapes):
            for c, d in zip(part, shape):
                if sizes.setdefault(c, d) != d:
                    raise ValueError(f"{op_type}: Expected dimension {sizes[c]} at axis "
                                     f"{part.index(c)} of the input shaped {list(shape)} but "
                                     f"got dimension {d} (letter {c!r} in {equation!r})")
        return cls(a, b, out)


@functools.lru_cache(maxsize=256)
def _parsed(equation: str, shapes: tuple[tuple[int, ...], ...]) -> Subscripts:
    """An equation read once for its operands' shapes (a model runs the same few often)."""
    return Subscripts.parse(equation, list(shapes))


def _ellipsis_dims(part: str, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    if "..." not in part:
        return None
    start = part.index("...")
    n = len(shape) - (len(part) - 3)
    return tuple(shape[start: start + n])


def einsum(equation: str, *inputs: Any, name: str | None = None) -> Tensor:
    """Einstein summation of two tensors: ``'bqd,bkd->bqk'`` multiplies each query by each
    key and sums over d. Letters in both operands but not the output are summed.

    Two operands only, each letter at most once per operand, ``...`` standing for the
    same axes in both: the products attention uses.
    """
    ts = [t if isinstance(t, Tensor) else _as_tensor(t, OpType.EINSUM, f"inputs[{i}]")
          for i, t in enumerate(inputs)]
    shapes = tuple([t._value.shape for t in ts])
    subs = (_parsed(equation, shapes) if isinstance(equation, str)
            else Subscripts.parse(equation, list(shapes)))
    a, b = ts
    for t in ts:
        _check_kind(OpType.EINSUM, t, FLOAT + "i")
    if a._dtype != b._dtype:
        raise _mixed(OpType.EINSUM, a, b)
    value = _contract(subs.equation, a._value, b._value)
    return make_op(OpType.EINSUM, (a, b), np.asarray(value, a._dtype),
                   {"equation": subs.equation}, name)


def _contract(equation: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.einsum(equation, a, b)`` as one batched matrix product (four times faster than
    NumPy's einsum on attention's sizes): letters only one operand has and the output does
    not are summed first; then both are laid out as (batch, rows, inner) and (batch, inner,
    columns)."""
    plan = _contraction(equation, a.shape, b.shape)
    if plan.sum_a:
        a = a.sum(axis=plan.sum_a)
    if plan.sum_b:
        b = b.sum(axis=plan.sum_b)
    left = a.transpose(plan.perm_a).reshape(plan.left)
    right = b.transpose(plan.perm_b).reshape(plan.right)
    product = (left @ right).reshape(plan.product)
    return product.transpose(plan.perm_out) if plan.perm_out else product


class _Contraction(NamedTuple):
    """How :func:`_contract` lays out one equation's operands of given shapes."""
    sum_a: tuple[int, ...]  # axes of a summed first (letters only a has, not the output's)
    sum_b: tuple[int, ...]
    perm_a: list[int]  # a's axes as (batch, rows, inner)
    perm_b: list[int]  # b's axes as (batch, inner, columns)
    left: tuple[int, int, int]  # a reshaped
    right: tuple[int, int, int]  # b reshaped
    product: list[int]  # the product's shape as (batch..., rows..., columns...)
    perm_out: list[int] | None  # that to the output's order (None: already in it)


@functools.lru_cache(maxsize=256)
def _contraction(equation: str, shape_a: tuple[int, ...], shape_b: tuple[int, ...]
                 ) -> _Contraction:
    """The layout of one contraction, worked out once (a model runs the same few often)."""
    lhs, out = equation.split("->")
    sa, sb = lhs.split(",")
    sum_a = tuple(i for i, c in enumerate(sa) if c not in sb and c not in out)
    sum_b = tuple(i for i, c in enumerate(sb) if c not in sa and c not in out)
    size = dict(zip(sa, shape_a)) | dict(zip(sb, shape_b))
    sa = "".join(c for i, c in enumerate(sa) if i not in sum_a)
    sb = "".join(c for i, c in enumerate(sb) if i not in sum_b)
    batch = [c for c in out if c in sa and c in sb]
    rows = [c for c in out if c in sa and c not in sb]
    cols = [c for c in out if c in sb and c not in sa]
    inner = [c for c in sa if c in sb and c not in out]
    n_batch, n_inner = math.prod(size[c] for c in batch), math.prod(size[c] for c in inner)
    order = batch + rows + cols
    perm_out = [order.index(c) for c in out]
    return _Contraction(
        sum_a, sum_b, [sa.index(c) for c in batch + rows + inner],
        [sb.index(c) for c in batch + inner + cols],
        (n_batch, math.prod(size[c] for c in rows), n_inner),
        (n_batch, n_inner, math.prod(size[c] for c in cols)),
        [size[c] for c in order], None if perm_out == sorted(perm_out) else perm_out)
