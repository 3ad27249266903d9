"""The records a trace is made of: arrays, the forward graph, and one dataclass per step kind.

Ids are small integers local to one trace: tensors are numbered ``0..T-1`` and
ops ``0..O-1`` in forward topological order, so the same program always gives
the same ids (the diagram's ``t3`` / ``o5`` element ids come from them).

Every step records ``bytes_held``: the bytes of the gradient arrays the walk
keeps alive after the step (gradients waiting at a tensor for its producer's
backward or for a fan-out sum, and the results kept for the xs, over all
passes so far).  A seed adds the y's gradient; a backward consumes the
gradients at its op's outputs (an x keeps its own) and adds what it gives
the inputs; a reduce replaces the broadcast gradient by the summed one; an
accumulate replaces the contributions by their total; a StopGradient's cut
or a stop_gradients cut consumes the gradient at the op's output; a result
made for an x no gradient reaches (zeros) adds it.
"""

from __future__ import annotations

import base64
import binascii
import math
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.forwardprop import RULE_KINDS
from .fields import _count, _dtype, _expect, _number, _shape, _short
from .source import Source

#: The version :meth:`Trace.to_json` writes.  Version 3 adds each op's line of code,
#: each once in the trace's ``sources`` table.  Version 2 keeps every array once, in
#: the trace's ``arrays`` table, its values as base64 of their raw little-endian
#: bytes; version 1 wrote each array where it was used, as nested lists.  Both are
#: still read.  See :mod:`gradviz.trace.json_form` for the whole format.
FORMAT_VERSION = 3
#: The versions :meth:`Trace.from_json` reads.
READ_VERSIONS = (1, 2, 3)

#: Arrays with at most this many elements keep every value in the trace;
#: larger ones keep a summary (min / mean / max / norm) and their first values.
PREVIEW_LIMIT = 64
#: A four-dimensional array (an NHWC image batch, a convolution's kernel) keeps
#: every value up to this many, so that the viewer can draw it as images.
IMAGE_LIMIT = 4096
#: How many leading values a summarised (large) array keeps.
HEAD_LIMIT = 8
#: Arrays of at most this many numbers are summarised in plain Python (ArrayData._small).
SMALL = 16

#: Why a flow of gradient stopped, as recorded on a :class:`CutStep`.
CUT_REASONS = {
    "stop_gradient": "a stop_gradient op passes no gradient to its input",
    "stop_gradients": "the tensor is listed in stop_gradients: its gradient arrives "
    "but does not flow through it to its inputs",
    "integer": "integer tensors are constant: no gradient flows into them",
    "no_gradient": "the op's gradient rule gives no gradient for this input",
    "not_watched": "the op ran outside the tape, or on nothing the tape watches",
}


# ---------------------------------------------------------------- arrays


def kept_values(shape: tuple[int, ...]) -> int:
    """Up to how many values an array of ``shape`` keeps them all in a trace."""
    return IMAGE_LIMIT if len(shape) == 4 else PREVIEW_LIMIT


@dataclass(frozen=True, eq=False)
class ArrayData:
    """An array as a trace keeps it: shape, dtype, and values or a summary."""

    shape: tuple[int, ...]  # the array's shape
    dtype: str  # NumPy dtype name, e.g. "float32"
    values: np.ndarray | None  # every value when size <= kept_values(shape), else None
    head: tuple[float, ...]  # the first HEAD_LIMIT values in C order
    min: float | None  # smallest finite value (None when there is none)
    max: float | None  # largest finite value
    mean: float | None  # mean of the finite values
    norm: float | None  # L2 norm of the finite values
    nonfinite: bool  # True when any value is NaN or +-Inf
    nbytes: int  # bytes the full array occupies

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayData):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # holds an array: not hashable

    @classmethod
    def of(cls, array: Any) -> ArrayData:
        """Summarise a NumPy array (or anything ``np.asarray`` accepts)."""
        a = np.asarray(array)
        if 0 < a.size <= SMALL and a.dtype.kind in "biuf":
            return cls._small(a)
        flat = a.reshape(-1)
        numeric = a.dtype.kind in "biuf"
        if numeric and a.dtype.kind == "f":
            finite_mask = np.isfinite(flat)
            nonfinite = not bool(finite_mask.all())
            finite = flat[finite_mask] if nonfinite else flat
        else:
            nonfinite = False
            finite = flat
        stats = _array_stats(finite.astype(np.float64)) if numeric and finite.size else (None,) * 4
        values = a.copy() if a.size <= kept_values(a.shape) else None
        head = tuple(float(v) for v in flat[:HEAD_LIMIT]) if numeric else ()
        return cls(tuple(int(d) for d in a.shape), _dtype_name(a.dtype), values, head,
                   *stats, nonfinite, int(a.nbytes))

    @classmethod
    def _small(cls, a: np.ndarray) -> ArrayData:
        """:meth:`of` for an array of at most :data:`SMALL` numbers, in plain Python: the
        same summary (:func:`_stats`) without NumPy's per-call cost, ten
        times that of the sums themselves.  A backward pass of a small model records
        tens of thousands of such arrays.  (Sums run in order: the last bit of a mean
        may differ from NumPy's.)"""
        vals = [float(v) for v in a.reshape(-1).tolist()]
        finite = [v for v in vals if math.isfinite(v)] if a.dtype.kind == "f" else vals

        def moments(scale: float | None) -> tuple[float, float]:
            v = finite if scale is None else [x / scale for x in finite]
            return sum(v) / len(v), math.sqrt(sum(x * x for x in v))

        stats = _stats(min(finite), max(finite), moments) if finite else (None,) * 4
        return cls(tuple(int(d) for d in a.shape), _dtype_name(a.dtype), a.copy(),
                   tuple(vals[:HEAD_LIMIT]), *stats, len(finite) != len(vals), int(a.nbytes))

    def to_dict(self) -> dict[str, Any]:
        stat = _json_stat
        return {
            "shape": list(self.shape),
            "dtype": self.dtype,
            "values": None if self.values is None else _json_values(self.values),
            "head": [_json_number(v) for v in self.head],
            "min": stat(self.min),
            "max": stat(self.max),
            "mean": stat(self.mean),
            "norm": stat(self.norm),
            "nonfinite": self.nonfinite,
            "nbytes": self.nbytes,
        }

    def to_row(self) -> list[Any]:
        """The array as a row of the JSON form's ``arrays`` table (version 2):
        ``[shape, dtype, values]`` with the values as base64 of their raw
        little-endian bytes, the summary worked out again when read; or, for an
        array that keeps only its summary, ``[shape, dtype, null, head, min, max,
        mean, norm, nonfinite, nbytes]``.

        >>> ArrayData.of(np.array([1.0, -2.0], np.float32)).to_row()
        [[2], 'float32', 'AACAPwAAAMA=']
        """
        v = self.values
        if v is not None:
            raw = (v.tobytes() if _LITTLE and v.dtype.isnative
                   else v.astype(v.dtype.newbyteorder("<")).tobytes())
            return [list(self.shape), self.dtype, binascii.b2a_base64(raw, newline=False).decode()]
        summary = self.to_dict()
        return [summary[k] for k in _SUMMARY_ROW]

    @classmethod
    def from_row(cls, row: Any, where: str) -> ArrayData:
        """Read a row that :meth:`to_row` wrote, checking every field."""
        row = _expect(row, list, where)
        if len(row) not in (3, 10):
            raise ValueError(f"{where}: expected [shape, dtype, values] or [shape, dtype, null, "
                             f"head, min, max, mean, norm, nonfinite, nbytes], got a list of "
                             f"{len(row)}")
        shape = _shape(row[0], f"{where}[0] (shape)")
        dtype = np.dtype(_dtype(row[1], f"{where}[1] (dtype)"))
        size = math.prod(shape)
        if len(row) == 3:
            text = _expect(row[2], str, f"{where}[2] (values)")
            if size > kept_values(shape):
                raise ValueError(f"{where}[2] (values): an array of {size} values keeps only "
                                 f"its summary (at most {kept_values(shape)} values are kept)")
            try:
                raw = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError(f"{where}[2] (values): not base64 text") from None
            if len(raw) != size * dtype.itemsize:
                raise ValueError(f"{where}[2] (values): {len(raw)} bytes, where shape {shape} "
                                 f"of {dtype.name} takes {size * dtype.itemsize}")
            if dtype.kind == "b":
                flat = np.frombuffer(raw, np.uint8)
                if flat.size and flat.max() > 1:
                    raise ValueError(f"{where}[2] (values): a bool array holds bytes 0 and 1 only")
                values = flat.astype(bool)
            else:
                values = np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype)
            return cls.of(values.reshape(shape))
        if row[2] is not None:
            raise ValueError(f"{where}[2] (values): expected null in a row of ten (a summary)")
        if size <= PREVIEW_LIMIT:  # renderers show small arrays whole
            raise ValueError(f"{where}: an array of {size} values (at most {PREVIEW_LIMIT}) "
                             "keeps them all: [shape, dtype, values]")
        return cls.from_dict(dict(zip(_SUMMARY_ROW, row)), where)

    @classmethod
    def from_dict(cls, d: Any, where: str) -> ArrayData:
        d = _expect(d, dict, where)
        shape = _shape(d.get("shape"), f"{where}.shape")
        dtype = _dtype(d.get("dtype"), f"{where}.dtype")
        values = d.get("values")
        if values is not None:
            values = _values_from_json(values, shape, np.dtype(dtype), f"{where}.values")
        elif math.prod(shape) <= PREVIEW_LIMIT:  # renderers show small arrays whole
            raise ValueError(f"{where}.values: missing; an array of {math.prod(shape)} "
                             f"values (at most {PREVIEW_LIMIT}) keeps them all")
        head = tuple(_number(v, f"{where}.head")
                     for v in _expect(d.get("head", []), list, f"{where}.head"))
        stats = [
            None if d.get(k) is None else _number(d.get(k), f"{where}.{k}")
            for k in ("min", "max", "mean", "norm")
        ]
        if None in stats and any(v is not None for v in stats):  # renderers print all four
            raise ValueError(f"{where}: min, max, mean and norm are all numbers, or all null "
                             "(an array with no finite value)")
        nonfinite = _expect(d.get("nonfinite", False), bool, f"{where}.nonfinite")
        nbytes = _count(d.get("nbytes", 0), f"{where}.nbytes")
        return cls(shape, dtype, values, head, *stats, nonfinite, nbytes)


#: The fields of a summarised array's row (ArrayData.to_row), in order.
_SUMMARY_ROW = ("shape", "dtype", "values", "head", "min", "max", "mean", "norm", "nonfinite",
                "nbytes")
_LITTLE = sys.byteorder == "little"  # (then an array's raw bytes are already little-endian)
_DTYPE_NAMES: dict[np.dtype, str] = {}


def _dtype_name(dtype: np.dtype) -> str:
    """``dtype.name``, which NumPy works out anew each time (5 µs, a third of summarising a
    small array), looked up once per dtype."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def _stats(lo: float, hi: float, moments: Any) -> tuple[float, float, float, float]:
    """min, max, mean and L2 norm of finite values, without overflow, where
    ``moments(scale)`` gives the mean and norm of the values divided by ``scale``
    (None: as they are).

    ``mean`` and ``norm`` are first computed directly; when that overflows
    (values near 1e308) or underflows (near 1e-200), again on the values
    scaled by the largest magnitude.  The mean then always fits; a norm
    beyond float64's range is infinite (written as "inf" in JSON).
    """
    mean, norm = moments(None)
    scale = max(abs(lo), abs(hi))
    if not (math.isfinite(mean) and math.isfinite(norm)) or (norm == 0 and scale > 0):
        mean, norm = moments(scale)
        mean, norm = mean * scale, norm * scale
    return lo, hi, mean, norm


def _array_stats(f64: np.ndarray) -> tuple[float, float, float, float]:
    """:func:`_stats` of a float64 array's values, summed by NumPy."""
    def moments(scale: float | None) -> tuple[float, float]:
        v = f64 if scale is None else f64 / scale
        return float(v.mean()), float(np.sqrt(np.dot(v, v)))

    with np.errstate(over="ignore", under="ignore"):
        return _stats(float(f64.min()), float(f64.max()), moments)


def _json_number(v: float) -> float | str:
    """A JSON-safe number: NaN and infinities become the strings "nan", "inf", "-inf"."""
    if math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _json_stat(v: float | None) -> float | str | None:
    return None if v is None else _json_number(v)


def _json_values(a: np.ndarray) -> Any:
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        return [_json_values(x) for x in a] if a.ndim else _json_number(float(a))
    return a.tolist()


_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _values_from_json(v: Any, shape: tuple[int, ...], dtype: np.dtype, where: str) -> np.ndarray:
    """An array from the nested lists :func:`_json_values` writes, checked against ``shape``.

    Every level must be a list of the length ``shape`` gives (a zero-size
    dimension ends the nesting: a (0, 3) array is ``[]``), so the depth is
    bounded by the rank, and every leaf a value of ``dtype``'s kind.
    """
    kind = dtype.kind
    flat: list = []
    level = [v]
    for depth, n in enumerate(shape):
        nxt: list = []
        for item in level:
            if not isinstance(item, list) or len(item) != n:
                got = f"a list of {len(item)}" if isinstance(item, list) else _short(item)
                raise ValueError(f"{where}: the nested lists do not match shape {shape}: "
                                 f"at depth {depth}, {got} where {n} entries belong")
            nxt.extend(item)
        level = nxt
        if n == 0:
            return np.zeros(shape, dtype)
    for x in level:
        if kind == "b":
            ok = isinstance(x, bool)
        elif isinstance(x, bool):
            ok = False
        elif kind == "f" and isinstance(x, str):
            ok = x in _NONFINITE
            x = _NONFINITE.get(x)
        else:
            ok = isinstance(x, int) or (kind == "f" and isinstance(x, float))
        if not ok:
            accepted = {"b": "true or false", "f": 'numbers (or "nan", "inf", "-inf")'}.get(
                kind, "integers")
            raise ValueError(f"{where}: {_short(x)} is not a {dtype.name} value "
                             f"(accepted: {accepted})")
        flat.append(x)
    try:
        with np.errstate(over="raise"):
            return np.array(flat, dtype=dtype).reshape(shape)
    except (OverflowError, FloatingPointError):
        raise ValueError(f"{where}: a value does not fit in {dtype.name}") from None


# ---------------------------------------------------------------- forward graph


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of the forward graph."""

    id: int  # trace-local id, in forward topological order
    name: str  # unique name, e.g. "layer1/MatMul:0"
    op: int | None  # id of the op that computed it; None for constants/variables
    kind: str  # "constant", "variable" or "computed"
    scope: str  # name scope, "" at top level, e.g. "layer1"
    shape: tuple[int, ...]  # shape
    dtype: str  # NumPy dtype name
    value: ArrayData  # its value in the forward pass
    source: Source | None = None  # a constant's or Variable's line of code (a computed one: its op's)


@dataclass(frozen=True)
class OpInfo:
    """One operation of the forward graph."""

    id: int  # trace-local id, in forward topological order
    type: str  # op type, e.g. "MatMul"
    name: str  # unique op name, e.g. "layer1/MatMul"
    scope: str  # name scope, "" at top level
    inputs: tuple[int, ...]  # tensor ids of the inputs, in order
    outputs: tuple[int, ...]  # tensor ids of the outputs, in order
    attrs: dict[str, Any]  # JSON-safe attributes, e.g. {"transpose_a": False}
    on_path: bool  # True when it lies on a path from a y to an x
    source: Source | None = None  # the line of code that made it, when it was recorded


# ---------------------------------------------------------------- steps


@dataclass(frozen=True)
class Contribution:
    """One gradient arriving at a tensor that fans out."""

    source: str  # "seed" or "op"
    op: int | None  # the consumer op that sent it (None for a seed)
    input_index: int | None  # which input of that op the tensor was
    grad: ArrayData  # the contribution itself


@dataclass(frozen=True)
class SeedStep:
    """A y receives its initial gradient (grad_y)."""

    index: int  # position in Trace.steps
    pass_index: int  # which backward pass (0.. ; a Jacobian runs several)
    ops_visited: int  # backward rules run so far in this trace
    bytes_held: int  # bytes of gradient held after this step
    nonfinite: bool  # the seed itself holds NaN or Inf
    tensor: int  # the y being seeded
    y_index: int  # position of this y in ys
    num_ys: int  # how many ys are seeded (their gradients are summed)
    given: bool  # True when the user supplied grad_y, False for default ones
    grad: ArrayData  # the seed value
    kind: str = field(default="seed", init=False)  # always "seed"


@dataclass(frozen=True)
class BackwardStep:
    """One op's gradient rule turns upstream gradients into input gradients."""

    index: int  # position in Trace.steps
    pass_index: int  # which backward pass
    ops_visited: int  # backward rules run so far, including this one
    bytes_held: int  # bytes of gradient held after this step
    nonfinite: bool  # a produced gradient holds NaN or Inf though the upstream did not
    op: int  # the op whose rule ran
    op_type: str  # its type, e.g. "MatMul"
    rule: str  # name of the gradient function used, e.g. "_matmul_grad"
    upstream: tuple[ArrayData | None, ...]  # gradient arriving at each output
    grads: tuple[ArrayData | None, ...]  # gradient produced per input, before any
    #   broadcast reduction; None where the input needs none or gets none
    needed: tuple[bool, ...]  # per input: does it lead to an x?
    kind: str = field(default="backward", init=False)  # always "backward"


@dataclass(frozen=True)
class ReduceStep:
    """A gradient is summed back over the axes an input was broadcast along."""

    index: int  # position in Trace.steps
    pass_index: int  # which backward pass
    ops_visited: int  # backward rules run so far
    bytes_held: int  # bytes of gradient held after this step
    nonfinite: bool  # the reduction made a NaN or Inf (e.g. an overflowing sum)
    op: int  # the op whose input was broadcast
    input_index: int  # which input of that op
    tensor: int  # that input tensor
    axes: tuple[int, ...]  # axes summed over, numbered in the broadcast shape
    shape_before: tuple[int, ...]  # gradient shape before (the broadcast shape)
    shape_after: tuple[int, ...]  # gradient shape after (the input's shape)
    grad: ArrayData  # the reduced gradient
    kind: str = field(default="reduce", init=False)  # always "reduce"


@dataclass(frozen=True)
class AccumulateStep:
    """A tensor used more than once: its gradient contributions are added."""

    index: int  # position in Trace.steps
    pass_index: int  # which backward pass
    ops_visited: int  # backward rules run so far
    bytes_held: int  # bytes of gradient held after this step
    nonfinite: bool  # the sum holds NaN or Inf though no contribution did
    tensor: int  # the tensor whose gradient is complete
    contributions: tuple[Contribution, ...]  # each arriving gradient, in arrival order
    total: ArrayData  # their sum: the tensor's gradient
    kind: str = field(default="accumulate", init=False)  # always "accumulate"


@dataclass(frozen=True)
class CutStep:
    """The flow of gradient stopped here."""

    index: int  # position in Trace.steps
    pass_index: int  # which backward pass
    ops_visited: int  # backward rules run so far (a "stop_gradient" cut counts its op)
    bytes_held: int  # bytes of gradient held after this step
    nonfinite: bool  # always False: a cut produces nothing
    tensor: int  # the tensor the gradient does not reach (or, for
    #   "stop_gradients", the tensor it does not flow through)
    op: int | None  # the op at which the flow stopped
    input_index: int | None  # the op's input that gets no gradient (None for
    #   "stop_gradients", which stops every input of the op)
    reason: str  # one of CUT_REASONS
    upstream: ArrayData | None = None  # for "stop_gradient": the gradient that arrived at
    #   the StopGradient op's output and stops there; None for the other reasons
    kind: str = field(default="cut", init=False)  # always "cut"


@dataclass(frozen=True)
class ResultStep:
    """The final gradient for one x."""

    index: int  # position in Trace.steps
    pass_index: int  # which backward pass
    ops_visited: int  # backward rules run so far
    bytes_held: int  # bytes of gradient held after this step
    nonfinite: bool  # always False: a result only reports (see grad.nonfinite)
    tensor: int  # the x
    x_index: int  # position of this x in xs
    status: str  # "connected", "unconnected" or "integer"
    grad: ArrayData | None  # the gradient; None when the engine returns None
    reason: str  # a sentence saying why, for unconnected and integer xs
    kind: str = field(default="result", init=False)  # always "result"


# ---------------------------------------------------------------- forward mode's steps
#
# A forward pass (ForwardAccumulator.trace_jvp, or a tape's trace_jacobian in
# forward mode) records the same graph with steps of its own: each primal's
# tangent (the direction it moves in), each op's tangent step in forward order,
# and each target's tangent, the Jacobian-vector product.  Its ``bytes_held``
# counts the tangents still to be read by a later op of the trace, or kept as a
# target's answer.

#: How an op's tangent came about, as a :class:`ForwardStep` records it: the engine's
#: ways (``RULE_KINDS``), each in words.
FORWARD_RULES = dict(zip(RULE_KINDS, (
    "an elementwise op: its gradient rule with the tangent in the gradient's place (its "
    "Jacobian is diagonal)",
    "a rule of its own: the op applied to the tangent, or a product rule",
    "its gradient rule transposed, as TensorFlow's ForwardAccumulator does for an op without "
    "a forward rule",
    "a custom gradient: its results keep the tangents the ops inside its function gave them",
    "stop_gradient passes no tangent, as it passes no gradient",
    "its outputs are integers or booleans, which move in no direction",
), strict=True))


@dataclass(frozen=True)
class TangentStep:
    """A primal gets its tangent: the direction it moves in (forward mode's start)."""

    index: int  # position in Trace.steps
    pass_index: int  # which forward pass (a forward Jacobian runs one per source element)
    ops_visited: int  # tangent rules run so far in this trace
    bytes_held: int  # bytes of tangents held after this step
    nonfinite: bool  # the tangent itself holds NaN or Inf
    tensor: int  # the primal
    x_index: int  # its position in xs (the primals)
    tangent: ArrayData  # the direction: the given tangent, or a one-hot of a Jacobian's pass
    kind: str = field(default="tangent", init=False)  # always "tangent"


@dataclass(frozen=True)
class ForwardStep:
    """One op's JVP rule turns its inputs' tangents into its outputs' tangents."""

    index: int  # position in Trace.steps
    pass_index: int  # which forward pass
    ops_visited: int  # tangent rules run so far, including this one
    bytes_held: int  # bytes of tangents held after this step
    nonfinite: bool  # a tangent produced here holds NaN or Inf though none arriving did
    op: int  # the op
    op_type: str  # its type, e.g. "MatMul"
    rule: str  # how its tangent came about: one of FORWARD_RULES
    tangents_in: tuple[ArrayData | None, ...]  # per input: its tangent, None where it does
    #   not move
    tangents: tuple[ArrayData | None, ...]  # per output: its tangent, None where it gets none
    kind: str = field(default="forward", init=False)  # always "forward"


@dataclass(frozen=True)
class JvpStep:
    """A target's tangent: the Jacobian-vector product ``J·t``, or why it has none."""

    index: int  # position in Trace.steps
    pass_index: int  # which forward pass
    ops_visited: int  # tangent rules run so far
    bytes_held: int  # bytes of tangents held after this step
    nonfinite: bool  # always False: it only reports (see tangent.nonfinite)
    tensor: int  # the target
    y_index: int  # its position in ys (the targets)
    status: str  # "connected", "unconnected" or "integer"
    tangent: ArrayData | None  # the tangent; None where the engine gives None
    reason: str  # a sentence saying why, for an unconnected or integer target
    kind: str = field(default="jvp", init=False)  # always "jvp"


Step = (SeedStep | BackwardStep | ReduceStep | AccumulateStep | CutStep | ResultStep
        | TangentStep | ForwardStep | JvpStep)
STEP_KINDS: dict[str, type] = {
    "seed": SeedStep,
    "backward": BackwardStep,
    "reduce": ReduceStep,
    "accumulate": AccumulateStep,
    "cut": CutStep,
    "result": ResultStep,
    "tangent": TangentStep,
    "forward": ForwardStep,
    "jvp": JvpStep,
}
#: The step kinds of a forward pass.
FORWARD_KINDS = frozenset({"tangent", "forward", "jvp"})
_COMMON = ("pass_index", "ops_visited", "bytes_held", "nonfinite")
