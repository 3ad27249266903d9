"""The trace: a backward pass recorded as plain, serialisable data.

The engine records a backward pass through a :class:`Recorder` (cheap: it keeps
references to the arrays involved) and hands back a :class:`Trace`.  Everything
a renderer shows comes from the trace's records, never from the engine.

Ids are small integers local to one trace: tensors are numbered ``0..T-1`` and
ops ``0..O-1`` in forward topological order, so the same program always gives
the same ids (the diagram's ``t3`` / ``o5`` element ids come from them).

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="x")
>>> tr = gv.trace_gradients(x * x, x)
>>> [s.kind for s in tr.steps]
['seed', 'backward', 'accumulate', 'result']
>>> gv.Trace.from_json(tr.to_json()).steps[-1].grad.values.tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

__all__ = [
    "PREVIEW_LIMIT",
    "ArrayData",
    "TensorInfo",
    "OpInfo",
    "Contribution",
    "SeedStep",
    "BackwardStep",
    "ReduceStep",
    "AccumulateStep",
    "CutStep",
    "ResultStep",
    "Step",
    "STEP_KINDS",
    "CUT_REASONS",
    "Trace",
    "Recorder",
]

FORMAT_VERSION = 1

#: What no name, scope or title holds: control characters (which the diagram's
#: layout program refuses) and lone surrogates (which are not text at all).
NOT_TEXT = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

#: Arrays with at most this many elements keep every value in the trace;
#: larger ones keep a summary (min / mean / max / norm) and their first values.
PREVIEW_LIMIT = 64
#: How many leading values a summarised (large) array keeps.
HEAD_LIMIT = 8

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


@dataclass(frozen=True, eq=False)
class ArrayData:
    """An array as a trace keeps it: shape, dtype, and values or a summary."""

    shape: tuple[int, ...]  # the array's shape
    dtype: str  # NumPy dtype name, e.g. "float32"
    values: np.ndarray | None  # every value when size <= PREVIEW_LIMIT, else None
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
        flat = a.reshape(-1)
        numeric = a.dtype.kind in "biuf"
        if numeric and a.dtype.kind == "f":
            finite_mask = np.isfinite(flat)
            nonfinite = not bool(finite_mask.all())
            finite = flat[finite_mask] if nonfinite else flat
        else:
            nonfinite = False
            finite = flat
        stats = _stats(finite.astype(np.float64)) if numeric and finite.size else (None,) * 4
        values = a.copy() if a.size <= PREVIEW_LIMIT else None
        head = tuple(float(v) for v in flat[:HEAD_LIMIT]) if numeric else ()
        return cls(tuple(int(d) for d in a.shape), a.dtype.name, values, head,
                   *stats, nonfinite, int(a.nbytes))

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


def _stats(f64: np.ndarray) -> tuple[float, float, float, float]:
    """min, max, mean and L2 norm of finite float64 values, without overflow.

    ``mean`` and ``norm`` are first computed directly; when that overflows
    (values near 1e308) or underflows (near 1e-200), again on the values
    scaled by the largest magnitude.  The mean then always fits; a norm
    beyond float64's range is infinite (written as "inf" in JSON).
    """
    lo, hi = float(f64.min()), float(f64.max())
    with np.errstate(over="ignore", under="ignore"):
        mean, norm = float(f64.mean()), float(np.sqrt(np.dot(f64, f64)))
        scale = max(abs(lo), abs(hi))
        if not (math.isfinite(mean) and math.isfinite(norm)) or (norm == 0 and scale > 0):
            scaled = f64 / scale
            mean = float(scaled.mean()) * scale
            norm = float(np.sqrt(np.dot(scaled, scaled))) * scale
    return lo, hi, mean, norm


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
    ops_visited: int  # backward rules run so far
    bytes_held: int  # bytes of gradient held after this step
    nonfinite: bool  # always False: a cut produces nothing
    tensor: int  # the tensor the gradient does not reach (or, for
    #   "stop_gradients", the tensor it does not flow through)
    op: int | None  # the op at which the flow stopped
    input_index: int | None  # the op's input that gets no gradient (None for
    #   "stop_gradients", which stops every input of the op)
    reason: str  # one of CUT_REASONS
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


Step = SeedStep | BackwardStep | ReduceStep | AccumulateStep | CutStep | ResultStep
STEP_KINDS: dict[str, type] = {
    "seed": SeedStep,
    "backward": BackwardStep,
    "reduce": ReduceStep,
    "accumulate": AccumulateStep,
    "cut": CutStep,
    "result": ResultStep,
}
_COMMON = ("pass_index", "ops_visited", "bytes_held", "nonfinite")


# ---------------------------------------------------------------- recording


class Recorder:
    """Collects the walk's events cheaply; :class:`Trace` turns them into records.

    The backward walk receives a recorder (or ``None``) and calls one method per
    event with raw NumPy arrays; nothing is summarised until someone reads the
    trace.
    """

    __slots__ = ("events", "pass_index", "ops_visited", "bytes_held")

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.pass_index = 0
        self.ops_visited = 0
        self.bytes_held = 0

    def _add(self, kind: str, payload: tuple) -> None:
        self.events.append((kind, self.pass_index, self.ops_visited, self.bytes_held, payload))

    def seed(self, tensor, y_index: int, num_ys: int, given: bool, grad) -> None:
        self._add("seed", (tensor, y_index, num_ys, given, grad))

    def backward(self, op, rule: str, upstream: tuple, grads: tuple, needed: tuple) -> None:
        """upstream, grads: tensors or arrays (a tensor's array is read when the trace
        is); only the grads of needed inputs count."""
        self.ops_visited += 1
        self.events.append(("backward", self.pass_index, self.ops_visited, self.bytes_held,
                            (op, rule, upstream, grads, needed)))

    def reduce(self, op, input_index: int, tensor, axes, shape_before, grad) -> None:
        self._add("reduce", (op, input_index, tensor, tuple(axes), tuple(shape_before), grad))

    def accumulate(self, tensor, contributions: tuple, total) -> None:
        """contributions: (op or None, input_index or None, array) per arrival."""
        self._add("accumulate", (tensor, contributions, total))

    def cut(self, tensor, op, input_index: int | None, reason: str) -> None:
        self._add("cut", (tensor, op, input_index, reason))

    def result(self, tensor, x_index: int, status: str, grad, reason: str) -> None:
        self._add("result", (tensor, x_index, status, grad, reason))


# ---------------------------------------------------------------- the trace


class Trace:
    """A recorded backward pass: the forward graph plus the steps, in order.

    Build one with :func:`gradviz.trace_gradients` or a tape's
    ``trace_gradient`` / ``trace_jacobian``; load one with :meth:`from_json`.
    """

    def __init__(
        self,
        *,
        tensors: tuple[TensorInfo, ...] = (),
        ops: tuple[OpInfo, ...] = (),
        ys: tuple[int, ...] = (),
        xs: tuple[int, ...] = (),
        steps: tuple[Step, ...] | None = None,
        method: str = "gradients",
        passes: int = 1,
        title: str = "",
        gradients: list | None = None,
        graph: Any = None,
        events: list[tuple] | None = None,
    ) -> None:
        self.method = method  # "gradients", "tape.gradient" or "tape.jacobian"
        self.passes = passes  # number of backward passes run
        self.title = title  # a caption for renderers (checked: see the property)
        self.gradients = gradients  # what the engine returned (live traces only)
        # A trace made by the engine arrives as `graph` (a function numbering the
        # forward graph) plus the recorder's raw `events`, and is summarised on
        # first use, so that recording a pass costs little more than running it.
        self._graph, self._events, self._engine_ys, self._engine_xs = graph, events, ys, xs
        self._tensors, self._ops, self._steps = tensors, ops, steps
        self._ys, self._xs = (None, None) if graph is not None else (tuple(ys), tuple(xs))
        self._tensor_ids: dict | None = None
        self._op_ids: dict | None = None

    @property
    def title(self) -> str:
        """A caption for renderers (the report's heading, the widget's title)."""
        return self._title

    @title.setter
    def title(self, value: str) -> None:
        self._title = check_title(value)

    def _load_graph(self) -> None:
        if self._graph is not None:
            tensors, ops, tensor_ids, op_ids = self._graph()
            self._tensors, self._ops = tensors, ops
            self._tensor_ids, self._op_ids = tensor_ids, op_ids
            self._ys = tuple(tensor_ids[t] for t in self._engine_ys)
            self._xs = tuple(tensor_ids[t] for t in self._engine_xs)
            self._graph = self._engine_ys = self._engine_xs = None

    @property
    def tensors(self) -> tuple[TensorInfo, ...]:
        """TensorInfo per tensor id (forward topological order)."""
        self._load_graph()
        return self._tensors

    @property
    def ops(self) -> tuple[OpInfo, ...]:
        """OpInfo per op id (forward topological order)."""
        self._load_graph()
        return self._ops

    @property
    def ys(self) -> tuple[int, ...]:
        """Tensor ids of the ys (the targets)."""
        self._load_graph()
        return self._ys

    @property
    def xs(self) -> tuple[int, ...]:
        """Tensor ids of the xs (the sources)."""
        self._load_graph()
        return self._xs

    # -- steps are built lazily from the recorder's events

    @property
    def steps(self) -> tuple[Step, ...]:
        """The records, in the order the engine produced them."""
        if self._steps is None:
            self._load_graph()
            self._last_backward: dict = {}  # engine op -> its latest produced grads
            self._steps = tuple(self._build(i, e) for i, e in enumerate(self._events or ()))
            # the records are plain data now: let the engine's graph go
            self._events = self._last_backward = self._tensor_ids = self._op_ids = None
        return self._steps

    def _build(self, index: int, event: tuple) -> Step:
        # `nonfinite` marks the step that *produced* a NaN or Inf from finite
        # inputs, not every later step that merely carries it along.
        kind, pass_index, ops_visited, bytes_held, p = event
        tid, oid, arr = self._tensor_ids.__getitem__, self._op_ids.__getitem__, _array_or_none
        if kind == "seed":
            grad = ArrayData.of(p[4])
            return SeedStep(index, pass_index, ops_visited, bytes_held, grad.nonfinite,
                            tid(p[0]), p[1], p[2], p[3], grad)
        if kind == "backward":
            grads = tuple(arr(_value_of(g)) if n else None for g, n in zip(p[3], p[4]))
            upstream = tuple(arr(_value_of(u)) for u in p[2])
            bad = (any(g is not None and g.nonfinite for g in grads)
                   and not any(u is not None and u.nonfinite for u in upstream))
            self._last_backward[p[0]] = grads
            return BackwardStep(index, pass_index, ops_visited, bytes_held, bad, oid(p[0]),
                                p[0].type, p[1], upstream, grads, p[4])
        if kind == "reduce":
            grad = ArrayData.of(p[5])
            before = self._last_backward.get(p[0], ())
            carried = p[1] < len(before) and before[p[1]] is not None and before[p[1]].nonfinite
            return ReduceStep(index, pass_index, ops_visited, bytes_held,
                              grad.nonfinite and not carried,
                              oid(p[0]), p[1], tid(p[2]), p[3], p[4], grad.shape, grad)
        if kind == "accumulate":
            contribs = tuple(
                Contribution("seed" if o is None else "op", None if o is None else oid(o), i,
                             ArrayData.of(g))
                for o, i, g in p[1])
            total = ArrayData.of(p[2])
            bad = total.nonfinite and not any(c.grad.nonfinite for c in contribs)
            return AccumulateStep(index, pass_index, ops_visited, bytes_held, bad,
                                  tid(p[0]), contribs, total)
        if kind == "cut":
            return CutStep(index, pass_index, ops_visited, bytes_held, False, tid(p[0]),
                           None if p[1] is None else oid(p[1]), p[2], p[3])
        if kind == "result":
            return ResultStep(index, pass_index, ops_visited, bytes_held, False, tid(p[0]), p[1],
                              p[2], arr(p[3]), p[4])
        raise AssertionError(f"unknown event {kind!r}")  # engine bug, not user input

    # -- conveniences for renderers

    def tensor(self, tensor_id: int) -> TensorInfo:
        """The TensorInfo with this id."""
        return self.tensors[tensor_id]

    def op(self, op_id: int) -> OpInfo:
        """The OpInfo with this id."""
        return self.ops[op_id]

    @cached_property
    def consumers(self) -> dict[int, tuple[tuple[int, int], ...]]:
        """tensor id -> ((op id, input index), ...) for each use of the tensor."""
        uses: dict[int, list[tuple[int, int]]] = {t.id: [] for t in self.tensors}
        for o in self.ops:
            for i, t in enumerate(o.inputs):
                uses[t].append((o.id, i))
        return {k: tuple(v) for k, v in uses.items()}

    @property
    def results(self) -> tuple[ResultStep, ...]:
        """The result steps, one per x (per pass for a Jacobian)."""
        return tuple(s for s in self.steps if s.kind == "result")

    @property
    def first_nonfinite_step(self) -> int | None:
        """Index of the first step that produced a NaN or Inf, or None."""
        return next((s.index for s in self.steps if s.nonfinite), None)

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        kinds: dict[str, int] = {}
        for s in self.steps:
            kinds[s.kind] = kinds.get(s.kind, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in kinds.items())
        return (f"<gradviz.Trace {self.method}: {len(self.tensors)} tensors, "
                f"{len(self.ops)} ops, {len(self.steps)} steps ({summary}), "
                f"{self.passes} pass{'es' if self.passes != 1 else ''}>")

    # -- JSON

    def to_dict(self) -> dict[str, Any]:
        """The trace as JSON-ready plain data."""
        return {
            "format": "gradviz-trace",
            "version": FORMAT_VERSION,
            "method": self.method,
            "title": self.title,
            "passes": self.passes,
            "ys": list(self.ys),
            "xs": list(self.xs),
            "tensors": [
                {"id": t.id, "name": t.name, "op": t.op, "kind": t.kind, "scope": t.scope,
                 "shape": list(t.shape), "dtype": t.dtype, "value": t.value.to_dict()}
                for t in self.tensors
            ],
            "ops": [
                {"id": o.id, "type": o.type, "name": o.name, "scope": o.scope,
                 "inputs": list(o.inputs), "outputs": list(o.outputs), "attrs": o.attrs,
                 "on_path": o.on_path}
                for o in self.ops
            ],
            "steps": [_step_to_dict(s) for s in self.steps],
        }

    def to_json(self, indent: int | None = None) -> str:
        """Serialise to a JSON string; :meth:`from_json` reads it back."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Trace:
        """Load a trace written by :meth:`to_json`.

        Anything malformed raises ``ValueError`` naming the offending field.
        """
        try:
            data = json.loads(text)
        except (TypeError, UnicodeDecodeError) as e:
            raise ValueError(f"trace JSON: expected a str or bytes of JSON text ({e})") from None
        except ValueError as e:  # JSONDecodeError, or an integer of too many digits
            raise ValueError(f"trace JSON is not valid JSON: {e}") from None
        except RecursionError:
            raise ValueError("trace JSON is nested too deeply") from None
        try:
            return cls.from_dict(data)
        except RecursionError:
            raise ValueError("trace JSON: values are nested too deeply") from None

    @classmethod
    def from_dict(cls, data: Any) -> Trace:
        """Build a trace from :meth:`to_dict` output, validating every field."""
        data = _expect(data, dict, "trace")
        if data.get("format") != "gradviz-trace":
            raise ValueError("trace: not a gradviz trace (missing \"format\": \"gradviz-trace\")")
        if type(data.get("version")) is not int or data.get("version") != FORMAT_VERSION:
            raise ValueError(f"trace: unsupported version {data.get('version')!r} "
                             f"(this gradviz reads version {FORMAT_VERSION})")
        raw_tensors = _expect(data.get("tensors"), list, "trace.tensors")
        raw_ops = _expect(data.get("ops"), list, "trace.ops")
        n_t, n_o = len(raw_tensors), len(raw_ops)
        tref = _IdCheck("tensor", n_t)
        oref = _IdCheck("op", n_o)

        tensors = []
        for i, t in enumerate(raw_tensors):
            w = f"trace.tensors[{i}]"
            t = _expect(t, dict, w)
            _check_id(t.get("id"), i, f"{w}.id")
            kind = _expect(t.get("kind"), str, f"{w}.kind")
            if kind not in ("constant", "variable", "computed"):
                raise ValueError(f"{w}.kind: {kind!r} is not one of constant, variable, computed")
            tensors.append(TensorInfo(
                i, _text(t.get("name"), f"{w}.name"),
                oref(t.get("op"), f"{w}.op", optional=True), kind,
                _scope(t.get("scope", ""), f"{w}.scope"),
                _shape(t.get("shape"), f"{w}.shape"),
                _dtype(t.get("dtype"), f"{w}.dtype"),
                ArrayData.from_dict(t.get("value"), f"{w}.value")))
        ops = []
        for i, o in enumerate(raw_ops):
            w = f"trace.ops[{i}]"
            o = _expect(o, dict, w)
            _check_id(o.get("id"), i, f"{w}.id")
            op_type = _text(o.get("type"), f"{w}.type")
            ops.append(OpInfo(
                i, op_type, _text(o.get("name"), f"{w}.name"),
                _scope(o.get("scope", ""), f"{w}.scope"),
                tuple(tref(x, f"{w}.inputs") for x in _expect(o.get("inputs"), list, f"{w}.inputs")),
                tuple(tref(x, f"{w}.outputs") for x in _expect(o.get("outputs"), list, f"{w}.outputs")),
                _attrs(o.get("attrs", {}), op_type, f"{w}.attrs"),
                _expect(o.get("on_path", False), bool, f"{w}.on_path")))
        ys = tuple(tref(x, "trace.ys") for x in _expect(data.get("ys"), list, "trace.ys"))
        xs = tuple(tref(x, "trace.xs") for x in _expect(data.get("xs"), list, "trace.xs"))
        raw_steps = _expect(data.get("steps"), list, "trace.steps")
        steps = tuple(_step_from_dict(s, i, tref, oref) for i, s in enumerate(raw_steps))
        passes = _count(data.get("passes", 1), "trace.passes")
        _check_consistent(tensors, ops, ys, xs, steps, passes)
        return cls(tensors=tuple(tensors), ops=tuple(ops), ys=ys, xs=xs, steps=steps,
                   method=_expect(data.get("method", "gradients"), str, "trace.method"),
                   passes=passes, title=_expect(data.get("title", ""), str, "trace.title"))

    # -- renderers (imported lazily: the engine does not need them)

    def to_dot(self, **options: Any):
        """The forward graph and every gradient label as a ``graphviz.Digraph``."""
        from .diagram import to_dot
        return to_dot(self, **options)

    def to_svg(self, step: int | None = None, **options: Any) -> str:
        """The diagram as SVG text, styled to show the state after ``step``."""
        from .diagram import to_svg
        return to_svg(self, step=step, **options)

    def to_html(self, path: Any, title: str | None = None) -> Any:
        """Write a self-contained HTML report of this trace to ``path``."""
        from .report import export_html
        return export_html([self], path, title=title or self.title or "gradviz trace")

    def _repr_mimebundle_(self, include=None, exclude=None):
        from .widget import show
        return show(self)._repr_mimebundle_(include=include, exclude=exclude)


def check_title(value: Any) -> str:
    """A title for a trace or a report: text a page can hold."""
    if not isinstance(value, str):
        raise TypeError(f"title: expected a string, got {type(value).__name__} {_short(value)}")
    if _SURROGATE.search(value):
        raise ValueError(f"title: {_short(value)} holds a lone surrogate, which is not text")
    return value


def _array_or_none(a: Any) -> ArrayData | None:
    return None if a is None else ArrayData.of(a)


def _value_of(t: Any) -> np.ndarray | None:
    """A recorded gradient's array: the walk records tensors, or arrays (see backprop)."""
    return t if t is None or isinstance(t, np.ndarray) else t._value


def _step_to_dict(s: Step) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": s.kind}
    for name in s.__dataclass_fields__:
        if name == "kind":
            continue
        v = getattr(s, name)
        if isinstance(v, ArrayData):
            v = v.to_dict()
        elif isinstance(v, tuple):
            v = [
                x.to_dict() if isinstance(x, ArrayData)
                else {"source": x.source, "op": x.op, "input_index": x.input_index,
                      "grad": x.grad.to_dict()} if isinstance(x, Contribution)
                else x
                for x in v
            ]
        d[name] = v
    return d


class _IdCheck:
    """Validates that an id refers to an existing tensor or op."""

    def __init__(self, what: str, n: int) -> None:
        self.what, self.n = what, n

    def __call__(self, v: Any, where: str, optional: bool = False) -> int | None:
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{where}: expected a {self.what} id (an integer), got {v!r}")
        if not 0 <= v < self.n:
            raise ValueError(f"{where}: {self.what} id {v} does not exist "
                             f"(the trace has {self.n} {self.what}s)")
        return v


def _step_from_dict(d: Any, i: int, tref: _IdCheck, oref: _IdCheck) -> Step:
    w = f"trace.steps[{i}]"
    d = _expect(d, dict, w)
    kind = d.get("kind")
    if not isinstance(kind, str) or kind not in STEP_KINDS:
        raise ValueError(f"{w}.kind: {_short(kind)} is not one of {', '.join(STEP_KINDS)}")
    common = [i] + [
        _expect(d.get(k, False), bool, f"{w}.{k}") if k == "nonfinite"
        else _count(d.get(k, 0), f"{w}.{k}")
        for k in _COMMON
    ]

    def arr(k: str, optional: bool = False) -> ArrayData | None:
        v = d.get(k)
        if v is None and optional:
            return None
        return ArrayData.from_dict(v, f"{w}.{k}")

    def arrs(k: str) -> tuple[ArrayData | None, ...]:
        return tuple(None if v is None else ArrayData.from_dict(v, f"{w}.{k}[{j}]")
                     for j, v in enumerate(_expect(d.get(k), list, f"{w}.{k}")))

    def s(k: str) -> str:
        return _expect(d.get(k), str, f"{w}.{k}")

    def n(k: str, optional: bool = False) -> int | None:
        v = d.get(k)
        if v is None and optional:
            return None
        return _count(v, f"{w}.{k}")

    if kind == "seed":
        return SeedStep(*common, tref(d.get("tensor"), f"{w}.tensor"), n("y_index"),
                        n("num_ys"), _expect(d.get("given"), bool, f"{w}.given"), arr("grad"))
    if kind == "backward":
        needed = tuple(_expect(v, bool, f"{w}.needed") for v in _expect(d.get("needed"), list, f"{w}.needed"))
        return BackwardStep(*common, oref(d.get("op"), f"{w}.op"),
                            _text(d.get("op_type"), f"{w}.op_type"), s("rule"),
                            arrs("upstream"), arrs("grads"), needed)
    if kind == "reduce":
        return ReduceStep(*common, oref(d.get("op"), f"{w}.op"), n("input_index"),
                          tref(d.get("tensor"), f"{w}.tensor"), _int_tuple(d.get("axes"), f"{w}.axes"),
                          _shape(d.get("shape_before"), f"{w}.shape_before"),
                          _shape(d.get("shape_after"), f"{w}.shape_after"), arr("grad"))
    if kind == "accumulate":
        contribs = []
        for j, c in enumerate(_expect(d.get("contributions"), list, f"{w}.contributions")):
            cw = f"{w}.contributions[{j}]"
            c = _expect(c, dict, cw)
            source = _expect(c.get("source"), str, f"{cw}.source")
            if source not in ("seed", "op"):
                raise ValueError(f"{cw}.source: {source!r} is not one of seed, op")
            idx = c.get("input_index")
            contribs.append(Contribution(
                source, oref(c.get("op"), f"{cw}.op", optional=True),
                None if idx is None else _count(idx, f"{cw}.input_index"),
                ArrayData.from_dict(c.get("grad"), f"{cw}.grad")))
        return AccumulateStep(*common, tref(d.get("tensor"), f"{w}.tensor"), tuple(contribs),
                              arr("total"))
    if kind == "cut":
        reason = s("reason")
        if reason not in CUT_REASONS:
            raise ValueError(f"{w}.reason: {reason!r} is not one of {', '.join(CUT_REASONS)}")
        return CutStep(*common, tref(d.get("tensor"), f"{w}.tensor"),
                       oref(d.get("op"), f"{w}.op", optional=True), n("input_index", True), reason)
    status = s("status")
    if status not in ("connected", "unconnected", "integer"):
        raise ValueError(f"{w}.status: {status!r} is not one of connected, unconnected, integer")
    return ResultStep(*common, tref(d.get("tensor"), f"{w}.tensor"), n("x_index"), status,
                      arr("grad", optional=True), s("reason"))


def _check_consistent(tensors: list[TensorInfo], ops: list[OpInfo], ys: tuple[int, ...],
                      xs: tuple[int, ...], steps: tuple[Step, ...], passes: int) -> None:
    """Cross-field checks, so that renderers can trust every index they follow and every
    array they put beside a tensor (a gradient has its tensor's shape and dtype)."""
    for t in tensors:
        w = f"trace.tensors[{t.id}]"
        if (t.shape, t.dtype) != (t.value.shape, t.value.dtype):
            raise ValueError(f"{w}: shape {t.shape} and dtype {t.dtype} do not match its "
                             f"value's, {t.value.shape} and {t.value.dtype}")
        if t.op is not None and t.id not in ops[t.op].outputs:
            raise ValueError(f"{w}.op: op {t.op} does not list tensor {t.id} as an output")
    for o in ops:
        for t in o.outputs:
            if tensors[t].op != o.id:
                raise ValueError(f"trace.ops[{o.id}].outputs: tensor {t} names op "
                                 f"{tensors[t].op} as its producer, not {o.id}")
        for t in o.inputs:
            producer = tensors[t].op
            if producer is not None and producer >= o.id:
                raise ValueError(f"trace.ops[{o.id}].inputs: tensor {t} comes from op "
                                 f"{producer}, which is not earlier (ops must be in "
                                 "topological order, without cycles)")
    results: dict[tuple[int, int], int] = {}  # (pass, x index) -> its result step
    for s in steps:
        w = f"trace.steps[{s.index}]"
        op = ops[s.op] if getattr(s, "op", None) is not None else None
        index = getattr(s, "input_index", None)
        if op is not None and index is not None and not 0 <= index < len(op.inputs):
            raise ValueError(f"{w}.input_index: {index} is out of range for op {op.id} "
                             f"with {len(op.inputs)} inputs")
        if s.kind == "backward":
            for name, n in (("upstream", len(op.outputs)), ("grads", len(op.inputs)),
                            ("needed", len(op.inputs))):
                if len(getattr(s, name)) != n:
                    raise ValueError(f"{w}.{name}: {len(getattr(s, name))} entries, but op "
                                     f"{op.id} ({op.type}) needs {n}")
            if s.op_type != op.type:
                raise ValueError(f"{w}.op_type: {s.op_type!r}, but op {op.id} is a {op.type}")
            for k, u in enumerate(s.upstream):
                _check_grad(u, tensors[op.outputs[k]], f"{w}.upstream[{k}]")
            for i, g in enumerate(s.grads):  # (before any broadcast reduction)
                _check_grad(g, tensors[op.inputs[i]], f"{w}.grads[{i}]", broadcast=True)
        elif s.kind == "seed":
            if not 0 <= s.y_index < len(ys) or ys[s.y_index] != s.tensor:
                raise ValueError(f"{w}.y_index: {s.y_index} is not the index of tensor "
                                 f"{s.tensor} in ys {list(ys)}")
            _check_grad(s.grad, tensors[s.tensor], f"{w}.grad")
        elif s.kind == "result":
            if not 0 <= s.x_index < len(xs) or xs[s.x_index] != s.tensor:
                raise ValueError(f"{w}.x_index: {s.x_index} is not the index of tensor "
                                 f"{s.tensor} in xs {list(xs)}")
            if (s.pass_index, s.x_index) in results:
                raise ValueError(f"{w}: a second result for x {s.x_index} in pass "
                                 f"{s.pass_index} (step {results[s.pass_index, s.x_index]} "
                                 "is the first)")
            results[s.pass_index, s.x_index] = s.index
            _check_grad(s.grad, tensors[s.tensor], f"{w}.grad")
        elif s.kind == "reduce":
            if op.inputs[s.input_index] != s.tensor:
                raise ValueError(f"{w}.tensor: {s.tensor} is not input {s.input_index} of op "
                                 f"{op.id}")
            if s.shape_after != s.grad.shape or any(a >= len(s.shape_before) for a in s.axes):
                raise ValueError(f"{w}: axes {list(s.axes)} and shapes {s.shape_before} -> "
                                 f"{s.shape_after} do not fit its gradient of shape "
                                 f"{s.grad.shape}")
            _check_grad(s.grad, tensors[s.tensor], f"{w}.grad")
        elif s.kind == "accumulate":
            for j, c in enumerate(s.contributions):
                if c.op is not None and (c.input_index is None
                                         or not 0 <= c.input_index < len(ops[c.op].inputs)):
                    raise ValueError(f"{w}.contributions: input_index {c.input_index} is out "
                                     f"of range for op {c.op}")
                _check_grad(c.grad, tensors[s.tensor], f"{w}.contributions[{j}].grad")
            _check_grad(s.total, tensors[s.tensor], f"{w}.total")
        if s.pass_index >= passes:
            raise ValueError(f"{w}.pass_index: {s.pass_index}, but the trace ran {passes} "
                             f"pass{'es' if passes != 1 else ''}")


def _check_grad(g: ArrayData | None, t: TensorInfo, where: str, broadcast: bool = False) -> None:
    """A gradient has its tensor's dtype and shape (``broadcast``: or one it broadcasts to)."""
    if g is None:
        return
    if broadcast and g.dtype == t.dtype:
        try:
            fits = np.broadcast_shapes(t.shape, g.shape) == g.shape
        except ValueError:
            fits = False
    else:
        fits = (g.shape, g.dtype) == (t.shape, t.dtype)
    if not fits:
        raise ValueError(f"{where}: a gradient of shape {g.shape} and dtype {g.dtype} for "
                         f"{t.name}, of shape {t.shape} and dtype {t.dtype}")


_NUMERIC_DTYPES = {"bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
                   "uint8"}


def _check_id(v: Any, expected: int, where: str) -> None:
    if type(v) is not int or v != expected:  # (True == 1, but is no id)
        raise ValueError(f"{where}: expected {expected}, got {_short(v)}")


def _is_int(a: Any) -> bool:
    return isinstance(a, int) and not isinstance(a, bool)


def _is_ints(a: Any) -> bool:
    return isinstance(a, list) and all(_is_int(x) for x in a)


_BOOL_ATTR = (lambda a: isinstance(a, bool), "true or false")
_INT_ATTR = (_is_int, "an integer")
_INTS_ATTR = (_is_ints, "a list of integers")
_STR_ATTR = (lambda a: isinstance(a, str), "a string")
#: The attributes renderers read, per op type: (check, what it accepts).  Every
#: other attribute is carried as it is.
_ATTR_TYPES: dict[str, dict[str, tuple]] = {
    "MatMul": {"transpose_a": _BOOL_ATTR, "transpose_b": _BOOL_ATTR},
    **dict.fromkeys(("Sum", "Mean", "Max"), {
        "axis": (lambda a: a is None or _is_int(a) or _is_ints(a),
                 "null, an integer or a list of integers"),
        "keepdims": _BOOL_ATTR}),
    "Transpose": {"perm": _INTS_ATTR},
    "Cast": {"SrcT": _STR_ATTR, "DstT": _STR_ATTR},
    **dict.fromkeys(("ConcatV2", "Pack", "Unpack", "Split", "Softmax", "LogSoftmax",
                     "SoftmaxCrossEntropyWithLogits"), {"axis": _INT_ATTR}),
    **dict.fromkeys(("Reshape", "BroadcastTo"), {"shape": _INTS_ATTR}),
}
_ATTR_DEPTH = 8  # how deeply an attribute's lists and objects may nest


def _attrs(v: Any, op_type: str, where: str) -> dict[str, Any]:
    attrs = _expect(v, dict, where)
    for name, (ok, accepted) in _ATTR_TYPES.get(op_type, {}).items():
        if name in attrs and not ok(attrs[name]):
            raise ValueError(f"{where}.{name}: expected {accepted}, got {_short(attrs[name])}")
    stack = [(attrs, 1)]
    while stack:  # not recursive: a hostile file may nest a thousand levels
        value, depth = stack.pop()
        for k in value if isinstance(value, dict) else ():
            _expect(k, str, where)
        for x in value.values() if isinstance(value, dict) else value:
            if isinstance(x, float) and not math.isfinite(x):  # JSON's NaN, or 1e999
                raise ValueError(f"{where}: {x} is not a JSON number (write \"nan\" or "
                                 "\"inf\" as strings)")
            if isinstance(x, str):
                _expect(x, str, where)
            if isinstance(x, (dict, list)):
                if depth >= _ATTR_DEPTH:
                    raise ValueError(f"{where}: nested more than {_ATTR_DEPTH} levels deep")
                stack.append((x, depth + 1))
    return attrs


def _expect(v: Any, typ: type, where: str) -> Any:
    ok = isinstance(v, typ) and not (typ is int and isinstance(v, bool))
    if not ok:
        raise ValueError(f"{where}: expected {_TYPE_WORDS.get(typ, typ.__name__)}, "
                         f"got {type(v).__name__} {_short(v)}")
    if typ is str and _SURROGATE.search(v):  # JSON's "\udfff": no text a page can hold
        raise ValueError(f"{where}: {_short(v)} holds a lone surrogate, which is not text")
    return v


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_MAX_TEXT = 1000  # the longest name or scope a loaded trace may have (the diagram draws it)


_TYPE_WORDS = {dict: "an object", list: "a list", str: "a string", int: "an integer",
               bool: "true or false"}


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _number(v: Any, where: str) -> float:
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{where}: expected a number, got {_short(v)}")
    try:
        return float(v)
    except OverflowError:  # an integer of 400 digits
        raise ValueError(f"{where}: {_short(v)} is beyond a float's range") from None


def _int_tuple(v: Any, where: str) -> tuple[int, ...]:
    v = _expect(v, list, where)
    for x in v:
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= _MAX_SIZE:
            raise ValueError(f"{where}: expected non-negative integers (below 2**63), "
                             f"got {_short(x)}")
    return tuple(v)


_MAX_SIZE = 2 ** 63 - 1  # the largest dimension (or count) an array can have
_MAX_RANK = 32  # the most dimensions a trace's array may have (NumPy allows 64)


def _shape(v: Any, where: str) -> tuple[int, ...]:
    shape = _int_tuple(v, where)
    if len(shape) > _MAX_RANK:
        raise ValueError(f"{where}: {len(shape)} dimensions; at most {_MAX_RANK} are accepted")
    return shape


def _count(v: Any, where: str) -> int:
    v = _expect(v, int, where)
    if not 0 <= v <= _MAX_SIZE:
        raise ValueError(f"{where}: expected a count (0 to 2**63 - 1), got {v}")
    return v


def _dtype(v: Any, where: str) -> str:
    v = _expect(v, str, where)
    if v not in _NUMERIC_DTYPES:
        raise ValueError(f"{where}: {_short(v)} is not a dtype a trace holds "
                         f"(one of {', '.join(sorted(_NUMERIC_DTYPES))})")
    return v


def _text(v: Any, where: str, empty: bool = False) -> str:
    """A name or an op type: text the diagram can draw (``empty``: "" is allowed)."""
    v = _expect(v, str, where)
    if not v and not empty:
        raise ValueError(f"{where}: expected a name, got an empty string")
    if len(v) > _MAX_TEXT or NOT_TEXT.search(v):
        raise ValueError(f"{where}: {_short(v)} is not a name the diagram can draw (at most "
                         f"{_MAX_TEXT} characters, no control characters)")
    return v


def _scope(v: Any, where: str) -> str:
    """A name scope: "" or names joined by "/" (the diagram draws one cluster per name)."""
    v = _text(v, where, empty=True)
    if v and not all(v.split("/")):
        raise ValueError(f"{where}: {_short(v)} is not a name scope (\"\" or names "
                         "joined by \"/\", none empty)")
    return v
