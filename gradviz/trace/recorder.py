"""The recorders the engine reports to, and the step from a finished pass to a Trace.

The engine's backward walk knows a recorder only as the small protocol
:class:`gradviz.engine.backprop.WalkRecorder`, which :class:`Recorder` implements;
a forward pass knows :class:`gradviz.engine.forwardprop.ForwardRecorder`, which
:class:`TangentRecorder` implements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.backprop import _Walk
from ..engine.graph import Tensor, Variable
from ..engine.ops import OpType
from .records import ArrayData, OpInfo, TensorInfo, _json_number
from .source import Source, Sources
from .trace import Trace

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

    def cut(self, tensor, op, input_index: int | None, reason: str, upstream=None) -> None:
        """upstream: for a StopGradient op, the gradient at its output (a tensor or an
        array).  Its cut is the op's one step, so it counts as a visited op."""
        if reason == "stop_gradient":
            self.ops_visited += 1
        self._add("cut", (tensor, op, input_index, reason, upstream))

    def result(self, tensor, x_index: int, status: str, grad, reason: str) -> None:
        """A connected x's gradient is held already; any other result (zeros for an x
        no gradient reaches) is made here, and held from this step on."""
        if status != "connected" and grad is not None:
            self.bytes_held += grad.nbytes
        self._add("result", (tensor, x_index, status, grad, reason))


class TangentRecorder:
    """Collects a forward pass's events: each primal's tangent, each op's tangent step, each
    target's tangent (the Jacobian-vector product).

    It keeps the tangents' values (NumPy arrays), not the tensors, so a recorded
    pass holds no more of the graph than its ops.  How many bytes each step holds
    is worked out once the pass is whole (:func:`forward_holds`).
    """

    __slots__ = ("events", "pass_index", "ops_visited")

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.pass_index = 0
        self.ops_visited = 0

    def tangent(self, tensor, x_index: int, tangent) -> None:
        self.events.append(("tangent", self.pass_index, self.ops_visited, 0,
                            (tensor, x_index, tangent)))

    def forward(self, op, rule: str, tangents_in: tuple, tangents_out: tuple) -> None:
        """tangents_in, tangents_out: tensors (or None), read as their values now."""
        self.step(op, rule, tangent_values(tangents_in), tangent_values(tangents_out))

    def step(self, op, rule: str, values_in: tuple, values_out: tuple) -> None:
        """An op's tangent step with the tangents' values (arrays or None)."""
        self.ops_visited += 1
        self.events.append(("forward", self.pass_index, self.ops_visited, 0,
                            (op, rule, values_in, values_out)))

    def jvp(self, tensor, y_index: int, status: str, tangent, reason: str) -> None:
        self.events.append(("jvp", self.pass_index, self.ops_visited, 0,
                            (tensor, y_index, status, tangent, reason)))


def tangent_values(tangents: tuple) -> tuple:
    """Each tangent's array (None stays None)."""
    return tuple(None if t is None else t._value for t in tangents)


def forward_holds(events: list[tuple]) -> list[tuple]:
    """The events with each step's ``bytes_held``: the tangents of this pass still to be
    read by a later op of the trace or kept for a target, and the targets' tangents of the
    passes before (a Jacobian's columns so far).

    Forward mode drops a tangent once the last op reading it has run: what it holds
    is the tangents of the values in flight, not the whole graph's.
    """
    last_read: dict[tuple[int, Any], int] = {}  # (pass, tensor) -> its last reader's event
    targets = {(e[1], e[4][0]) for e in events if e[0] == "jvp"}
    for k, (kind, p, _, _, payload) in enumerate(events):
        if kind == "forward":
            for t, a in zip(payload[0].inputs, payload[2]):
                if a is not None:
                    last_read[p, t] = k
    out = []
    live: dict[Any, int] = {}  # tensor -> bytes of its tangent, in this pass
    kept = 0  # the targets' tangents so far (each once, however often it is listed)
    answered: set = set()  # (pass, target) already kept
    current = None
    for k, (kind, p, visited, _, payload) in enumerate(events):
        if p != current:
            live, current = {}, p
        if kind == "tangent":
            x = payload[0]
            if (p, x) in last_read or (p, x) in targets:  # else nothing of the trace reads it
                live[x] = payload[2].nbytes
        elif kind == "forward":
            op = payload[0]
            for t, a in zip(op.inputs, payload[2]):
                if a is not None and last_read.get((p, t)) == k and (p, t) not in targets:
                    live.pop(t, None)
            for t, a in zip(op.outputs, payload[3]):
                if a is not None and ((p, t) in last_read or (p, t) in targets):
                    live[t] = a.nbytes
        elif kind == "jvp":
            t = payload[0]
            if payload[3] is not None and (p, t) not in answered:
                answered.add((p, t))
                kept += payload[3].nbytes
            live.pop(t, None)
        out.append((kind, p, visited, kept + sum(live.values()), payload))
    return out


# ---------------------------------------------------------------- from a walk to a trace


def _trace_graph(walk: _Walk, variables: dict[Tensor, np.ndarray]) -> tuple[
        tuple[TensorInfo, ...], tuple[OpInfo, ...], dict, dict]:
    """Number the forward graph's tensors and ops in topological order, and name them.

    ``variables``: the Variables' values when the pass ran (they may be assigned since).
    """
    tensors = walk.trace_tensors()
    tensor_ids = {t: i for i, t in enumerate(tensors)}
    op_ids = {op: i for i, op in enumerate(walk.order)}
    on_path_ids = walk.reach
    name, op_names = walk.trace_name, walk.trace_op_names()
    source = Sources()
    op_infos = tuple(
        OpInfo(op_ids[op], op.type, op_names[op], op.scope,
               tuple(tensor_ids[t] for t in op.inputs), tuple(tensor_ids[t] for t in op.outputs),
               _json_attrs(op.attrs),
               any(t in on_path_ids for t in op.inputs), source(op._source))
        for op in walk.order)
    # a constant made without a name (the 1.01 of `y * 1.01`) was made by the line of
    # the first op that reads it
    readers: dict[Tensor, Source] = {}
    for op, info in zip(walk.order, op_infos):
        if info.source is not None:
            for t in op.inputs:
                readers.setdefault(t, info.source)
    infos = []
    for i, t in enumerate(tensors):
        producer = op_ids.get(t.op)
        kind = ("variable" if isinstance(t, Variable) else
                "constant" if t.op.type == OpType.CONST else "computed")
        made = None if producer is not None else source(t.op._source) or readers.get(t)
        infos.append(TensorInfo(i, name(t), producer, kind, t.op.scope, t.shape, t.dtype.name,
                                ArrayData.of(variables.get(t, t._value)), made))
    return tuple(infos), op_infos, tensor_ids, op_ids


def _json_attrs(attrs: dict | None) -> dict:
    """An op's attributes as JSON data (a trace must always write to JSON and load again)."""
    if not attrs:
        return {}
    # a custom gradient's function is not data
    return {str(k): _json_attr(v) for k, v in attrs.items() if not callable(v)}


def _json_attr(v: Any, depth: int = 0) -> Any:
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):  # NaN and infinities as the trace writes them in arrays
        return _json_number(v)
    if isinstance(v, (list, tuple)) and depth < 4:
        return [_json_attr(x, depth + 1) for x in v]
    return repr(v)


def make_trace(walk: _Walk, rec: Recorder | TangentRecorder, gradients: list, method: str,
               passes: int, title: str, read: dict | None = None) -> Trace:
    """Package a finished walk and its recorder as a :class:`Trace`.

    ``read``: the values Variables had when the pass read them, where that was before
    now (a forward pass traced after its block: a Variable may be assigned since)."""
    # the graph is read lazily, but a Variable's value may change before then
    # (Variables are leaves: the inputs of the walk's ops, ys and xs hold them all, and
    # that is cheaper to scan here than the whole trace_tensors())
    variables = {t: t._value for op in walk.order for t in op.inputs if type(t) is Variable}
    variables.update((t, t._value) for t in (*walk.ys, *walk.xs) if type(t) is Variable)
    variables.update(read or {})
    state: dict = {}

    def graph() -> tuple:
        if not state:
            state["g"] = _trace_graph(walk, variables)
        return state["g"]

    events = forward_holds(rec.events) if isinstance(rec, TangentRecorder) else rec.events
    return Trace(graph=graph, ys=walk.ys, xs=walk.xs, events=events, method=method,
                 passes=passes, title=title, gradients=gradients)
