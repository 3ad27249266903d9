"""The trace's JSON form: each step as plain data, and every check a loaded trace passes.

:meth:`Trace.from_dict <gradviz.trace.Trace.from_dict>` reads the fields with
:mod:`gradviz.trace.fields`, builds the steps here, and then cross-checks them
(:func:`_check_consistent`), so that a trace that loads is one the renderers can show.

The form, version 3 (``FORMAT_VERSION``)::

    {"format": "gradviz-trace", "version": 3, "method", "title", "passes",
     "ys": [tensor id, ...], "xs": [tensor id, ...],
     "arrays": [row, ...],
     "sources": [[file, line, function, code, cell], ...],
     "tensors": [{"id", "name", "op", "kind", "scope", "shape", "dtype", "value", "source"}],
     "ops": [{"id", "type", "name", "scope", "inputs", "outputs", "attrs", "on_path",
              "source"}],
     "steps": [{"kind", "index", "pass_index", "ops_visited", "bytes_held", "nonfinite",
                ...the fields of the kind's record, an array as its row's index}]}

A field at its default is left out: a tensor's or op's ``scope`` at the top level
(""), an op's empty ``attrs``, a step's ``pass_index`` 0 and ``nonfinite`` false.
Every array (a tensor's ``value``, a step's ``grad``, ``grads``, ``upstream``,
``total``, a contribution's ``grad``) is an index into ``arrays``, where each
array the trace holds is written once (:meth:`ArrayData.to_row
<gradviz.trace.ArrayData.to_row>`: ``[shape, dtype, base64 of the raw
little-endian values]``, or for an array kept as a summary ``[shape, dtype,
null, head, min, max, mean, norm, nonfinite, nbytes]``).  Version 1 wrote each
array in place as ``{"shape", "dtype", "values" (nested lists), "head", "min",
"max", "mean", "norm", "nonfinite", "nbytes"}``; it is still read.

A tensor's or op's ``source`` is an index into ``sources``, each line of code the
trace holds written once (:class:`Source <gradviz.trace.source.Source>`: the file,
null for a notebook's cell; the line, from 1, in the file or the cell; the
function, ``"<module>"`` at the top level; the line's text; the cell's execution
count or null).  It is left out for what was made with recording off
(``gv.record_source(False)``), a computed tensor (its op has it), and in a trace
written with ``source=False``.  Versions 1 and 2 had none; they are still read.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

import numpy as np

from .fields import _count, _expect, _int_tuple, _shape, _short, _text
from .records import (CUT_REASONS, FORWARD_KINDS, FORWARD_RULES, STEP_KINDS, _COMMON,
                      AccumulateStep, ArrayData, BackwardStep, Contribution, CutStep, ForwardStep,
                      JvpStep, OpInfo, ReduceStep, ResultStep, SeedStep, Step, TangentStep,
                      TensorInfo)
from .source import Source

def _step_to_dict(s: Step, ref: Callable[[ArrayData], int]) -> dict[str, Any]:
    """A step as plain data, each array as ``ref(array)`` (its row in the arrays table)."""
    d: dict[str, Any] = {"kind": s.kind}
    fields, values = _field_plan(type(s))
    for (name, how), v in zip(fields, values(s)):
        if how is None:
            d[name] = list(v) if type(v) is tuple else v
        elif v is None:
            d[name] = None
        elif how == "array":
            d[name] = ref(v)
        elif how == "arrays":
            d[name] = [None if x is None else ref(x) for x in v]
        elif how == "contributions":
            d[name] = [{"source": c.source, "op": c.op, "input_index": c.input_index,
                        "grad": ref(c.grad)} for c in v]
        elif v != _DEFAULTS[name]:  # (at its default, it is left out and read back so)
            d[name] = v
    return d


#: The step fields left out where they hold their default, which the reader assumes.
_DEFAULTS = {"pass_index": 0, "nonfinite": False}

_PLANS: dict[type, tuple[list[tuple[str, str | None]], Callable[[Step], tuple]]] = {}


def _field_plan(cls: type) -> tuple[list[tuple[str, str | None]], Callable[[Step], tuple]]:
    """A step class's fields but ``kind``, each with how it is written ("array",
    "arrays", "contributions", "default": left out at its default, or None: as it is),
    read once from its annotations; and a getter of their values, in that order."""
    plan = _PLANS.get(cls)
    if plan is None:
        fields = []
        for name, f in cls.__dataclass_fields__.items():
            if name == "kind":
                continue
            t = str(f.type)
            how = ("default" if name in _DEFAULTS else
                   "contributions" if "Contribution" in t else
                   "arrays" if t.startswith("tuple") and "ArrayData" in t else
                   "array" if "ArrayData" in t else None)
            fields.append((name, how))
        plan = _PLANS[cls] = (fields, attrgetter(*(name for name, _ in fields)))
    return plan


class ArrayTable:
    """The arrays of a trace being written, each once: ``ref(a)`` is ``a``'s row."""

    def __init__(self) -> None:
        self.rows: list[list[Any]] = []
        self._index: dict[int, int] = {}  # id(ArrayData) -> its row (the trace holds them)
        self._same: dict[tuple, int] = {}  # (dtype, shape, values) -> its row

    def ref(self, a: ArrayData) -> int:
        k = self._index.get(id(a))
        if k is None:
            row = a.to_row()
            # equal values kept whole are one row (a chain's thousand constants 1.01)
            key = (row[1], a.shape, row[2]) if row[2] is not None else None
            k = self._same.get(key) if key else None
            if k is None:
                k = len(self.rows)
                self.rows.append(row)
                if key:
                    self._same[key] = k
            self._index[id(a)] = k
        return k


def array_reader(data: dict[str, Any], version: int) -> Callable[[Any, str], ArrayData]:
    """How a trace of ``version`` gives an array where it is used: version 2 by its index
    in ``data["arrays"]`` (each row read once, when first used), version 1 in place."""
    if version == 1:
        return ArrayData.from_dict
    rows = _expect(data.get("arrays"), list, "trace.arrays")
    read: dict[int, ArrayData] = {}

    def array(v: Any, where: str) -> ArrayData:
        if type(v) is not int or not 0 <= v < len(rows):
            raise ValueError(f"{where}: expected an index into trace.arrays (0 to "
                             f"{len(rows) - 1}), got {_short(v)}")
        if v not in read:
            read[v] = ArrayData.from_row(rows[v], f"trace.arrays[{v}]")
        return read[v]

    return array


class SourceTable:
    """The lines of code of a trace being written, each once: ``ref(source)`` is the
    field that points at its row (nothing for an op without one)."""

    def __init__(self) -> None:
        self.rows: list[list[Any]] = []
        self._index: dict[Source, int] = {}

    def ref(self, source: Source | None) -> dict[str, int]:
        if source is None:
            return {}
        k = self._index.get(source)
        if k is None:
            k = self._index[source] = len(self.rows)
            self.rows.append(source.to_row())
        return {"source": k}


def source_reader(data: dict[str, Any], version: int) -> Callable[[Any, str], Source | None]:
    """How a trace of ``version`` gives a tensor's or op's line of code: by its index in
    ``data["sources"]`` (version 3; each row read once), or none (versions 1 and 2)."""
    rows = _expect(data.get("sources", []), list, "trace.sources") if version >= 3 else []
    read: dict[int, Source] = {}

    def source(v: Any, where: str) -> Source | None:
        if v is None:
            return None
        if type(v) is not int or not 0 <= v < len(rows):
            table = (f"an index into trace.sources (0 to {len(rows) - 1})" if rows else
                     "nothing: the trace has no sources (trace.sources)")
            raise ValueError(f"{where}: expected {table}, got {_short(v)}")
        if v not in read:
            read[v] = Source.from_row(rows[v], f"trace.sources[{v}]")
        return read[v]

    return source


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


def _step_from_dict(d: Any, i: int, tref: _IdCheck, oref: _IdCheck,
                    array: Callable[[Any, str], ArrayData]) -> Step:
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
        return array(v, f"{w}.{k}")

    def arrs(k: str) -> tuple[ArrayData | None, ...]:
        return tuple(None if v is None else array(v, f"{w}.{k}[{j}]")
                     for j, v in enumerate(_expect(d.get(k), list, f"{w}.{k}")))

    def s(k: str) -> str:
        return _expect(d.get(k), str, f"{w}.{k}")

    def choice(k: str, allowed: Any) -> str:
        v = s(k)
        if v not in allowed:
            raise ValueError(f"{w}.{k}: {v!r} is not one of {', '.join(allowed)}")
        return v

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
                array(c.get("grad"), f"{cw}.grad")))
        return AccumulateStep(*common, tref(d.get("tensor"), f"{w}.tensor"), tuple(contribs),
                              arr("total"))
    if kind == "cut":
        reason = choice("reason", CUT_REASONS)
        return CutStep(*common, tref(d.get("tensor"), f"{w}.tensor"),
                       oref(d.get("op"), f"{w}.op", optional=True), n("input_index", True), reason,
                       arr("upstream", optional=True))
    if kind == "tangent":
        return TangentStep(*common, tref(d.get("tensor"), f"{w}.tensor"), n("x_index"),
                           arr("tangent"))
    if kind == "forward":
        rule = choice("rule", FORWARD_RULES)
        return ForwardStep(*common, oref(d.get("op"), f"{w}.op"),
                           _text(d.get("op_type"), f"{w}.op_type"), rule, arrs("tangents_in"),
                           arrs("tangents"))
    status = choice("status", ("connected", "unconnected", "integer"))
    if kind == "jvp":
        return JvpStep(*common, tref(d.get("tensor"), f"{w}.tensor"), n("y_index"), status,
                       arr("tangent", optional=True), s("reason"))
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
    if steps:
        forward = steps[0].kind in FORWARD_KINDS
        other = next((s for s in steps if (s.kind in FORWARD_KINDS) != forward), None)
        if other is not None:
            raise ValueError(f"trace.steps[{other.index}]: a {other.kind} step in a trace of "
                             f"{'forward' if forward else 'reverse'} mode (step 0 is a "
                             f"{steps[0].kind} step); a trace is of one mode")
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
            _check_place(w, "y_index", s.y_index, ys, "ys", s.tensor)
            _check_grad(s.grad, tensors[s.tensor], f"{w}.grad")
        elif s.kind == "result":
            _check_place(w, "x_index", s.x_index, xs, "xs", s.tensor)
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
        elif s.kind == "forward":
            for name, n, tids in (("tangents_in", len(op.inputs), op.inputs),
                                  ("tangents", len(op.outputs), op.outputs)):
                got = getattr(s, name)
                if len(got) != n:
                    raise ValueError(f"{w}.{name}: {len(got)} entries, but op {op.id} "
                                     f"({op.type}) has {n}")
                for k, (t, a) in enumerate(zip(tids, got)):
                    _check_grad(a, tensors[t], f"{w}.{name}[{k}]")
            if s.op_type != op.type:
                raise ValueError(f"{w}.op_type: {s.op_type!r}, but op {op.id} is a {op.type}")
        elif s.kind == "tangent":
            _check_place(w, "x_index", s.x_index, xs, "xs", s.tensor)
            _check_grad(s.tangent, tensors[s.tensor], f"{w}.tangent")
        elif s.kind == "jvp":
            _check_place(w, "y_index", s.y_index, ys, "ys", s.tensor)
            _check_grad(s.tangent, tensors[s.tensor], f"{w}.tangent")
        elif s.kind == "cut" and s.upstream is not None:
            # the gradient at the StopGradient's output, which renderers name and show
            if s.reason != "stop_gradient" or op is None or len(op.outputs) != 1:
                raise ValueError(f"{w}.upstream: only a stop_gradient cut at an op with one "
                                 f"output carries the gradient arriving there (this is a "
                                 f"{s.reason!r} cut)")
            _check_grad(s.upstream, tensors[op.outputs[0]], f"{w}.upstream")
        if s.pass_index >= passes:
            raise ValueError(f"{w}.pass_index: {s.pass_index}, but the trace ran {passes} "
                             f"pass{'es' if passes != 1 else ''}")


def _check_place(w: str, field: str, index: int, ids: tuple[int, ...], what: str,
                 tensor: int) -> None:
    """A step's ``field`` (its y's or x's place) is where ``tensor`` is in ``ids``."""
    if not 0 <= index < len(ids) or ids[index] != tensor:
        raise ValueError(f"{w}.{field}: {index} is not the index of tensor {tensor} in {what} "
                         f"{list(ids)}")


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
