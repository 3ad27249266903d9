"""The backward walk: reverse-mode differentiation over the recorded graph.

One walk serves ``gradients``, the tape and (in :mod:`gradviz.trace`) the
traced versions of both.  It visits
only the ops on a path from the ys to the xs, in reverse topological order,
keeps every tensor's incoming gradients in a dict keyed by the tensor,
sums them where a tensor fans out, and undoes broadcasting on every edge with
:func:`unbroadcast`.  Given a recorder (anything with the methods of
:class:`WalkRecorder`, such as :class:`gradviz.trace.Recorder`) it reports each
step; given ``None`` it records nothing.

>>> import gradviz as gv
>>> a = gv.constant(0.0); b = 2 * a
>>> [g.numpy() for g in gv.gradients(a + b, [a, b])]
[array(3., dtype=float32), array(1., dtype=float32)]
>>> [g.numpy() for g in gv.gradients(a + b, [a, b], stop_gradients=[a, b])]
[array(1., dtype=float32), array(1., dtype=float32)]
"""

from __future__ import annotations

import enum
import functools
import gc
import linecache
import re
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

import numpy as np

from . import nest, ops
from .array_ops import aggregate, dense
from .gradient_rules import _RULES, get_gradient_function
from .graph import Operation, Tensor, convert_to_tensor, deferring_ops, name_scope
from .graph import Escape, left_through_numpy, outside_stacklevel, plain_name, upstream
from .graph import _escapes, _from_numpy, read_only
from .indexed_slices import IndexedSlices
from .ops import OpType

__all__ = [
    "UnconnectedGradients",
    "gradients",
    "WalkRecorder",
    "unbroadcast",
    "broadcast_axes",
    "number_names",
]


class WalkRecorder(Protocol):
    """What the backward walk tells a recorder: one call per event, with raw arrays.

    The engine knows a recorder only as this protocol; :mod:`gradviz.trace`
    implements it (:class:`gradviz.trace.Recorder`) and turns the events into
    a :class:`~gradviz.Trace`.  A Jacobian sets ``pass_index`` before each pass.
    """

    pass_index: int

    def seed(self, tensor: Tensor, y_index: int, num_ys: int, given: bool, grad: Any) -> None:
        """A y receives its initial gradient."""

    def backward(self, op: Operation, rule: str, upstream: tuple, grads: tuple,
                 needed: tuple) -> None:
        """``op``'s gradient rule ran: upstream gradients in, one gradient per input out."""

    def reduce(self, op: Operation, input_index: int, tensor: Tensor, axes: Any,
               shape_before: Any, grad: Any) -> None:
        """A gradient was summed back over the axes ``tensor`` was broadcast along."""

    def accumulate(self, tensor: Tensor, contributions: tuple, total: Any) -> None:
        """A tensor used more than once: its contributions were added."""

    def cut(self, tensor: Tensor, op: Operation | None, input_index: int | None,
            reason: str, upstream: Any = None) -> None:
        """The flow of gradient stopped (``reason``: a key of ``CUT_REASONS``); for a
        StopGradient op, which this cut stands for, ``upstream`` is the gradient at its output."""

    def result(self, tensor: Tensor, x_index: int, status: str, grad: Any,
               reason: str) -> None:
        """The final gradient for one x."""


class UnconnectedGradients(enum.Enum):
    """What an x that no y depends on gets: ``None`` or zeros shaped like x."""

    NONE = "none"
    ZERO = "zero"


def _unconnected_mode(value: Any) -> UnconnectedGradients:
    if isinstance(value, UnconnectedGradients):
        return value
    if isinstance(value, str) and value.lower() in ("none", "zero"):
        return UnconnectedGradients(value.lower())
    raise ValueError(f"unconnected_gradients: {value!r} is not accepted "
                     "(must be 'none', 'zero', gv.UnconnectedGradients.NONE or .ZERO)")


# ---------------------------------------------------------------- broadcasting


def broadcast_axes(grad_shape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """Axes of ``grad_shape`` to sum so that the result has ``shape``.

    >>> broadcast_axes((2, 3), ()), broadcast_axes((2, 3), (3,)), broadcast_axes((2, 3), (2, 1))
    ((0, 1), (0,), (1,))
    """
    lead = len(grad_shape) - len(shape)
    if lead < 0:
        raise ValueError(f"a gradient of shape {grad_shape} cannot be reduced to {shape}")
    axes = list(range(lead))
    for i, d in enumerate(shape):
        g = grad_shape[lead + i]
        if d == 1 and g != 1:
            axes.append(lead + i)
        elif d != g:
            raise ValueError(f"a gradient of shape {grad_shape} cannot be reduced to {shape}")
    return tuple(axes)


def unbroadcast(grad: Tensor, shape: tuple[int, ...], axes: tuple[int, ...] | None = None
                ) -> Tensor:
    """Sum ``grad`` over the axes its input was broadcast along, then reshape.

    When ``x`` of shape ``shape`` was broadcast to ``grad.shape`` in the
    forward pass, every copy of each element contributed to the output, so
    the element's gradient is the sum over the copies.

    >>> import gradviz as gv
    >>> unbroadcast(gv.ones([2, 3]), (1, 3)).numpy().tolist()
    [[2.0, 2.0, 2.0]]
    """
    shape = tuple(shape)
    if axes is None:  # (the axes broadcast_axes gives, when the caller has them already)
        axes = broadcast_axes(grad.shape, shape)
    reduced = ops.summed(grad, axes) if axes else grad
    return reduced if reduced.shape == shape else ops.reshaped(reduced, shape)


# ---------------------------------------------------------------- graph analysis


def _topo_ops(ys: list[Tensor], allowed: AbstractSet[Operation] | None) -> list[Operation]:
    """Ops that the ys depend on, inputs before consumers (iterative DFS)."""
    order: list[Operation] = []
    seen: set[Operation] = set()
    for y in ys:
        op = y.op
        if op in seen or not op.inputs or (allowed is not None and op not in allowed):
            continue
        seen.add(op)
        # the op being explored, an iterator over its inputs still to look at, and
        # the ops (with their iterators) waiting for it: its consumers on this path
        waiting: list[tuple[Operation, Any]] = []
        inputs = iter(op.inputs)
        while True:
            for t in inputs:
                child = t._op
                if child is None:  # an op not made yet (see graph.make_op)
                    if not t._pending[1]:
                        continue  # no inputs, e.g. the constant in `y * 1.01`: a leaf
                    child = t.op  # a gradient, differentiated again
                if (child not in seen and child.inputs
                        and (allowed is None or child in allowed)):
                    seen.add(child)
                    waiting.append((op, inputs))
                    op, inputs = child, iter(child.inputs)
                    break
            else:  # all its inputs are placed: place it, go back to its consumer
                order.append(op)
                if not waiting:
                    break
                op, inputs = waiting.pop()
    return order


def _leads_to(order: list[Operation], x_set: set[Tensor],
              cut: Mapping[Operation, tuple[int, ...]] | None = None
              ) -> tuple[set[Tensor], list[tuple]]:
    """Which tensors some x can be reached from (structurally), and which inputs of each op.

    Returns those tensors, and for each op of ``order`` its plan (see
    _plan): which of its inputs lead to an x (the inputs the walk needs).
    ``cut``: op -> inputs no gradient goes back to (a tape's Variables read unwatched).
    """
    reach = set(x_set)
    plans = []
    ref = weakref.ref
    for op in order:
        inputs = op.inputs
        n = len(inputs)  # (one or two inputs, as most ops have: a table, no tuple built)
        if cut and op in cut:
            plan = _plan(tuple([t in reach and i not in cut[op] for i, t in enumerate(inputs)]))
        elif n == 2:
            plan = _PLANS_2[inputs[0] in reach][inputs[1] in reach]
        elif n == 1:
            plan = _PLANS_1[inputs[0] in reach]
        else:
            plan = _plan(tuple([t in reach for t in inputs]))
        plans.append(plan)
        if plan[1]:  # some input leads to an x, so the output does
            outs = op._outputs
            if type(outs) is ref:
                reach.add(outs())
            else:
                reach.update(outs)
    return reach, plans


def _plan(needed: tuple[bool, ...]) -> tuple[tuple[bool, ...], tuple[int, ...], tuple[int, ...]]:
    """An op's plan: for each input whether it leads to an x (``needed``), the indices
    of those inputs, and of the others (as in TensorFlow, a rule may skip these)."""
    return (needed, tuple(i for i, n in enumerate(needed) if n),
            tuple(i for i, n in enumerate(needed) if not n))


#: _plan for ops with one or two inputs, indexed by whether each leads to an x
_PLANS_1 = (_plan((False,)), _plan((True,)))
_PLANS_2 = ((_plan((False, False)), _plan((False, True))),
            (_plan((True, False)), _plan((True, True))))


# ---------------------------------------------------------------- argument checks


def _tensor_list(value: Any, what: str, allow_empty: bool = False) -> list[Tensor]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items and not allow_empty:
        raise ValueError(f"{what} must be a tensor or a non-empty list of tensors, got {value!r}")
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(nest.not_a_tensor(f"{what}[{i}]", t))
    return items


def _grad_ys(ys: list[Tensor], grad_ys: Any, what: str = "grad_ys") -> list[tuple[Tensor, bool]]:
    """One (seed, given) pair per y, validated."""
    if grad_ys is None:
        given: list = [None] * len(ys)
    else:
        given = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
        if len(given) != len(ys):
            raise ValueError(f"{what} has {len(given)} entr{'y' if len(given) == 1 else 'ies'} "
                             f"but there {'is' if len(ys) == 1 else 'are'} {len(ys)} "
                             f"y{'s' if len(ys) != 1 else ''}: give one per y (None for ones)")
    out = []
    for i, (y, g) in enumerate(zip(ys, given)):
        if g is None:  # (named only if asked for, as the ops of the pass: see make_op)
            with name_scope("gradients"), deferring_ops():
                out.append((ops.ones_like(y), False))
            continue
        if isinstance(g, Tensor):
            if g._dtype != y._dtype:
                raise TypeError(f"{what}[{i}] has dtype {g.dtype.name} but y[{i}] ({y.name}) has "
                                f"dtype {y.dtype.name}; they must match")
        else:
            arr = np.asarray(g)
            if isinstance(g, (np.ndarray, np.generic)) and arr.dtype != y._dtype:
                raise TypeError(f"{what}[{i}] has dtype {arr.dtype.name} but y[{i}] ({y.name}) "
                                f"has dtype {y.dtype.name}; they must match")
            g = convert_to_tensor(g, y.dtype, f"{what}[{i}]")
        if g.shape != y.shape:
            raise ValueError(f"{what}[{i}] has shape {g.shape} but y[{i}] ({y.name}) has shape "
                             f"{y.shape}; each grad_y must have its y's shape")
        out.append((g, True))
    return out


# ---------------------------------------------------------------- the walk


class _Walk:
    """Everything one backward pass needs; ``run`` does the pass."""

    #: x index -> in how many passes that x got no gradient (noted by _result); None: none
    missing: dict[int, int] | None = None

    def __init__(self, ys: list[Tensor], xs: list[Tensor], stop: set[Tensor],
                 allowed: AbstractSet[Operation] | None,
                 excluded_xs: dict[Tensor, Callable[[str], str]] | None = None,
                 seed_only: AbstractSet[Tensor] = frozenset(),
                 cut: Mapping[Operation, tuple[int, ...]] | None = None) -> None:
        self.ys, self.xs = ys, xs
        self.stop = stop  # the tensors in stop_gradients
        self.allowed = allowed  # the ops a tape recorded (None: every op)
        self.excluded = excluded_xs or {}  # x -> why it gets no gradient, given x's name
        self.x_set = {x for x in xs if x._dtype.kind == "f" and x not in self.excluded}
        self.order = _topo_ops(ys, allowed)
        # ``seed_only``: xs that are also ys and get their own seed only, nothing through
        # the ops that use them; ``cut``: inputs of recorded ops no gradient goes back to
        # (both a tape's: TensorFlow reads an unwatched Variable afresh for each op)
        self.reach, self.plans = _leads_to(self.order, self.x_set - seed_only, cut)
        self.reach |= seed_only & self.x_set
        self._full_reach: set[Tensor] | None = None
        self._tensors: list[Tensor] | None = None  # what a trace shows, found once
        self._names: dict[Operation, str] | None = None

    def run(self, seeds: list[tuple[Tensor, bool]], mode: UnconnectedGradients,
            rec: WalkRecorder | None) -> list[Tensor | None]:
        # The walk creates many long-lived objects and no reference cycles, so
        # the cyclic collector would only rescan the graph again and again.
        paused = gc.isenabled()
        gc.disable()
        try:
            # as in TensorFlow, the ops a backward pass builds are named under
            # "gradients/", so they do not inflate the names of forward ops
            with name_scope("gradients"), deferring_ops():
                return self._run(seeds, mode, rec)
        finally:
            if paused:
                gc.enable()

    def _run(self, seeds: list[tuple[Tensor, bool]], mode: UnconnectedGradients,
             rec: WalkRecorder | None) -> list[Tensor | None]:
        reach, x_set, stop = self.reach, self.x_set, self.stop
        # tensor -> the gradients that arrived: one, or a list of them where the
        # tensor fans out (see _arrive; with a recorder, each with its op and input)
        pending: dict[Tensor, Any] = {}
        final: dict[Tensor, Tensor] = {}  # x -> its complete gradient
        seeded_ys = [(i, y, s) for i, (y, s) in enumerate(zip(self.ys, seeds))]

        for i, y, (seed, given) in seeded_ys:
            usable = y._dtype.kind == "f" and y in reach
            if usable:
                _arrive(pending, y, seed if rec is None else (None, None, seed))
            if rec is not None:
                rec.bytes_held += seed._value.nbytes if usable else 0
                rec.seed(y, i, len(self.ys), given, seed._value)
                if y._dtype.kind != "f":
                    rec.cut(y, None, None, "integer")
                elif not usable and self.allowed is not None and y in self.full_reach:
                    rec.cut(y, None, None, "not_watched")

        # each op with its plan: which inputs lead to an x (needed), their indices
        # (wanted), and the others' (skip: as in TensorFlow, the rule may skip
        # them, e.g. the constant in `y * 1.01`)
        ref = weakref.ref
        for op, (needed, wanted, skip) in zip(reversed(self.order), reversed(self.plans)):
            outs = op._outputs
            if type(outs) is ref:  # one output: the common, fast case
                out = outs()
                arrived = pending.pop(out, None)
                if arrived is None:
                    continue
                g = arrived if type(arrived) is Tensor else self._total(out, arrived, rec)
                if out in x_set:
                    final[out] = g
                if type(g) is IndexedSlices and op.type != OpType.IDENTITY:
                    g = dense(g)  # as TensorFlow's ops take one: Identity passes it on
                out_grads = (g,)
                stopped = out in stop
            else:
                out_grads = []
                for out in outs:
                    arrived = pending.pop(out, None)
                    g = None if arrived is None else self._total(out, arrived, rec)
                    if g is not None and out in x_set:
                        final[out] = g
                    out_grads.append(dense(g) if type(g) is IndexedSlices else g)
                if all(g is None for g in out_grads):
                    continue
                # as tf.gradients, which stops ops: one stopped output stops them all
                stopped = any(out in stop for out in outs)
                g = None  # (the rule gets out_grads, below)
            if rec is not None and self.allowed is not None:
                self._record_tape_cuts(op, needed, rec)
            if not wanted:
                continue  # its output is an x, but nothing behind it leads to one
            if stopped:
                if rec is not None:
                    rec.bytes_held -= _released(op, out_grads, x_set)
                    rec.cut(op.outputs[0], op, None, "stop_gradients")
                continue

            # the op's gradient rule turns its outputs' gradients into its inputs'
            rule = _RULES.get(op.type)
            if rule is None:
                _no_rule(op, out_grads, needed, rec, x_set)
                continue
            if g is None and self.allowed is None:
                # tf.gradients: the other outputs of an op it differentiates have gradient
                # zero, not None (so an x among them gets zeros)
                for out, og in zip(outs, out_grads):
                    if og is None and out in x_set and out not in final:
                        final[out] = ops.zeros_like(out)
            if skip:
                op.skip_input_indices = skip
            try:
                grads = rule(op, g) if g is not None else _call_multi(op, rule, out_grads)
            finally:
                if skip:
                    op.skip_input_indices = ()
            if type(grads) is not tuple or len(grads) != len(needed):
                grads = _check_rule_output(op, rule, grads)
            if rec is not None:
                grads = _record_backward(op, rule, out_grads, grads, needed, wanted, rec, x_set)

            # each needed input's gradient arrives at it (summed later on fan-out)
            inputs = op.inputs
            for i in wanted:
                t, g = inputs[i], grads[i]
                if type(g) is Tensor and g._value.shape == t._value.shape \
                        and g._dtype is t._dtype:  # the common case
                    entry = g if rec is None else (op, i, g)
                    if t in pending:  # (fan-out: _arrive's case, the rest inline)
                        _arrive(pending, t, entry)
                    else:
                        pending[t] = entry
                else:
                    self._edge(op, rule, i, t, g, pending, rec)

        results: list[Tensor | None] = []
        for k, x in enumerate(self.xs):
            g = final.get(x)
            if g is None and x in pending and x in x_set:
                g = self._total(x, pending.pop(x), rec)
                final[x] = g
            results.append(self._result(k, x, g, mode, rec))
        return results

    def _total(self, t: Tensor, arrived: tuple | list, rec: WalkRecorder | None) -> Tensor:
        """The sum of the gradients that arrived at ``t`` (recorded when more than one).

        Each arrival is the gradient itself, or with a recorder the tuple
        ``(op, input index, gradient)`` the trace needs (see _arrive).

        Bookkeeping (``rec.bytes_held``): the gradient arrays the walk keeps
        alive after each step.  The contributions are released once summed,
        and the total is held from then on: by an x as its result, by any
        other tensor until the step that consumes it (its producer's backward
        or cut, which release it: see _released).
        """
        if rec is None:
            return arrived if type(arrived) is not list else aggregate(arrived)
        if type(arrived) is not list:
            return arrived[2]  # held as it arrived
        total = aggregate([g for _, _, g in arrived])
        rec.bytes_held += total._value.nbytes - sum(g._value.nbytes for _, _, g in arrived)
        rec.accumulate(t, tuple([(o, i, g._value) for o, i, g in arrived]), total._value)
        return total

    def _edge(self, op: Operation, rule: Any, i: int, t: Tensor, g: Any, pending: dict,
              rec: WalkRecorder | None) -> None:
        """Input ``i``'s gradient in the less common cases: none, integer, broadcast."""
        if g is None and op.type == OpType.STOP_GRADIENT:
            return  # its cut was recorded with the op (see _record_backward)
        if t._dtype.kind != "f":
            if rec is not None:
                rec.cut(t, op, i, "integer")
            return
        if g is None:
            if rec is not None:
                rec.cut(t, op, i, "no_gradient")
            return
        if type(g) is IndexedSlices:
            if g.dense_shape != t.shape or g._dtype != t._dtype:
                raise ValueError(f"{op.type}: gradient rule {_rule_name(rule)} returned "
                                 f"IndexedSlices of a {g.dtype.name} tensor {g.dense_shape} "
                                 f"for input {i} ({t.name}) of {t.dtype.name} {t.shape}")
            _arrive(pending, t, g if rec is None else (op, i, g))
            return
        if not isinstance(g, Tensor):
            g = _as_gradient(op, rule, i, g)
        if g._value.shape != t._value.shape:
            outs = op._outputs  # (several outputs: nothing to compare against)
            try:
                axes = _summed_axes(g._value.shape, t._value.shape,
                                    outs().shape if type(outs) is weakref.ref else None)
            except ValueError:
                raise ValueError(
                    f"{op.type}: gradient rule {_rule_name(rule)} returned shape {g.shape} for "
                    f"input {i} ({t.name}) of shape {t.shape}; a gradient must have its input's "
                    "shape (or a shape it was broadcast to)") from None
            before = g
            g = unbroadcast(g, t.shape, axes)
            if rec is not None:
                rec.bytes_held += g._value.nbytes - before._value.nbytes
                rec.reduce(op, i, t, axes, before.shape, g._value)
        if g._dtype != t._dtype:
            raise TypeError(f"{op.type}: gradient rule returned dtype {g.dtype.name} for "
                            f"input {i} ({t.name}) of dtype {t.dtype.name}")
        _arrive(pending, t, g if rec is None else (op, i, g))

    def _result(self, k: int, x: Tensor, g: Tensor | None, mode: UnconnectedGradients,
                rec: WalkRecorder | None) -> Tensor | None:
        status, reason = "connected", ""
        if g is None:
            status = "integer" if x._dtype.kind != "f" else "unconnected"
            if self.missing is None:  # (noted for the caller's warnings: see _warn_none)
                self.missing = {}
            self.missing[k] = self.missing.get(k, 0) + 1
            if rec is not None:
                name = plain_name(self.trace_name(x))
                if status == "integer":
                    reason = (f"{name} has integer dtype {x.dtype.name}: integer tensors are "
                              "constant, so there is no gradient")
                elif x in self.excluded:
                    reason = self.excluded[x](name)
                else:
                    reason = self._why_unconnected(x, name)
            if mode is UnconnectedGradients.ZERO:
                g = ops.zeros_like(x)
        if rec is not None:
            rec.result(x, k, status, None if g is None else g._value, reason)
        return g

    def trace_tensors(self) -> list[Tensor]:
        """The tensors a trace of this walk shows, inputs before consumers, ys and xs last."""
        if self._tensors is None:
            seen: dict[Tensor, None] = {}
            for op in self.order:
                seen.update(dict.fromkeys(op.inputs))
                seen.update(dict.fromkeys(op.outputs))
            seen.update(dict.fromkeys(self.ys))
            seen.update(dict.fromkeys(self.xs))
            self._tensors = list(seen)
        return self._tensors

    def trace_op_names(self) -> dict[Operation, str]:
        """The names of the ops in a trace of this walk (see :func:`number_names`)."""
        if self._names is None:
            self._names = number_names(t.op for t in self.trace_tensors())
        return self._names

    def trace_name(self, t: Tensor) -> str:
        """``t``'s name in a trace of this walk."""
        return f"{self.trace_op_names()[t.op]}:{t.value_index}"

    @property
    def full_reach(self) -> set[Tensor]:
        """For a tape: what would lead to an x if every op had been recorded."""
        if self._full_reach is None:
            self._full_reach = _leads_to(_topo_ops(self.ys, None), self.x_set)[0]
        return self._full_reach

    def _record_tape_cuts(self, op: Operation, needed: tuple[bool, ...],
                          rec: WalkRecorder) -> None:
        """Mark inputs that lead to an x only through ops the tape did not record."""
        full = self.full_reach
        for i, t in enumerate(op.inputs):
            if not needed[i] and t in full and t._dtype.kind == "f":
                rec.cut(t, op, i, "not_watched")

    def _why_unconnected(self, x: Tensor, name: str) -> str:
        if self.allowed is not None and x in self.full_reach:
            return (f"the ys depend on {name}, but through ops the tape did not record: they "
                    f"ran outside its `with` block, or before {name} was watched")
        above = upstream(self.ys)  # (all of the graph, not only what a tape recorded)
        if x in above:
            return (f"every path from the ys to {name} is cut (stop_gradient, stop_gradients "
                    "or an integer tensor), so no gradient reaches it")
        why = f"no y depends on {name}: it is not connected to them in the graph"
        escape = left_through_numpy(x, self.ys, above)
        return why if escape is None else f"{why}; {_left_through_numpy(escape, name)}"


@functools.lru_cache(maxsize=1024)
def _summed_axes(shape: tuple[int, ...], to: tuple[int, ...],
                 out_shape: tuple[int, ...] | None) -> tuple[int, ...]:
    """The axes a rule's gradient of ``shape`` is summed over to its input's shape ``to``
    (:func:`broadcast_axes`), worked out once for each set of shapes.

    Only axes the op's output (of ``out_shape``; None: not known) really has may be
    summed: that is right for an input the op broadcast, while summing a gradient of any
    other shape would hide a bug in the rule.
    """
    axes = broadcast_axes(shape, to)
    if out_shape is not None:
        lead = len(out_shape) - len(shape)
        if lead < 0 or any(shape[a] != out_shape[lead + a] for a in axes):
            raise ValueError("not broadcast by the op")
    return axes


def _arrive(pending: dict[Tensor, Any], tensor: Tensor, entry: Any) -> None:
    """Note a gradient arriving at a tensor (``entry``: see _Walk._total).

    Most tensors get one gradient, kept as it is; a tensor that fans out
    collects a list, summed when the walk reaches the tensor.
    """
    have = pending.get(tensor)
    if have is None:
        pending[tensor] = entry
    elif type(have) is list:
        have.append(entry)
    else:
        pending[tensor] = [have, entry]


def _no_rule(op: Operation, out_grads: Sequence, needed: tuple[bool, ...],
             rec: WalkRecorder | None, x_set: AbstractSet[Tensor]) -> None:
    """An op with no gradient rule: an error if its type has none registered, a cut
    (recorded) if it is declared not differentiable."""
    if op.type not in _RULES:
        get_gradient_function(op.type)  # raises, naming the type
    if rec is not None:
        rec.bytes_held -= _released(op, out_grads, x_set)
        inputs = op.inputs
        rec.backward(op, "not differentiable", _recorded(out_grads), (None,) * len(inputs),
                     needed)
        for i, t in enumerate(inputs):
            if needed[i]:
                rec.cut(t, op, i, "no_gradient")


def _call_multi(op: Operation, rule: Any, out_grads: Sequence) -> Any:
    """Call the rule of an op with several outputs: zeros for outputs no gradient reached."""
    return rule(op, *[ops.zeros_like(o) if g is None else g
                      for g, o in zip(out_grads, op.outputs)])


def _record_backward(op: Operation, rule: Any, out_grads: Sequence, grads: tuple,
                     needed: tuple[bool, ...], wanted: tuple[int, ...], rec: WalkRecorder,
                     x_set: AbstractSet[Tensor]) -> tuple:
    """Record an op's backward step; returns its gradients as the trace shows them.

    ``wanted``: the indices of the needed inputs (the True ones of ``needed``).
    The step consumes the gradients at the op's outputs (an x keeps its own)
    and holds the ones it produces.  A StopGradient produces none: its one
    step is the cut, which carries the gradient that arrived at its output.
    """
    grads = _tensors_only(op, rule, grads, needed)
    rec.bytes_held -= _released(op, out_grads, x_set)
    inputs = op.inputs
    if op.type == OpType.STOP_GRADIENT and all(g is None for g in grads):
        upstream = _recorded(out_grads)[0]
        for i in wanted:
            rec.cut(inputs[i], op, i, "stop_gradient", upstream)
        return grads
    for i in wanted:
        g = grads[i]
        if g is not None and inputs[i]._dtype.kind == "f":
            rec.bytes_held += g._value.nbytes
    rec.backward(op, _rule_name(rule, op), _recorded(out_grads), _recorded(grads), needed)
    return grads


def _released(op: Operation, out_grads: Sequence, x_set: AbstractSet[Tensor]) -> int:
    """Bytes the step that consumes ``op``'s output gradients frees (an x keeps its own)."""
    return sum(g._value.nbytes for out, g in zip(op.outputs, out_grads)
               if g is not None and out not in x_set)


def _rule_name(rule: Any, op: Operation | None = None) -> str:
    """The name of ``rule``, as a trace records it; a rule with a ``name_for(op)`` names
    itself per op (a custom gradient: the user's own grad_fn)."""
    name_for = getattr(rule, "name_for", None)
    if name_for is not None and op is not None:
        return name_for(op)
    name = getattr(rule, "__name__", None)  # (not a getattr default: repr() costs)
    return name if isinstance(name, str) else repr(rule)


def _check_rule_output(op: Operation, rule: Any, raw: Any) -> tuple:
    """A rule's result as one entry per input, or a clear error naming the rule."""
    name = _rule_name(rule)
    if isinstance(raw, (Tensor, np.ndarray)) or raw is None:  # (an array is one gradient)
        raw = (raw,)
    try:
        grads = tuple(raw)
    except TypeError:
        raise TypeError(f"{op.type}: gradient rule {name} returned {type(raw).__name__}; it "
                        "must return one gradient (tensor or None) per input") from None
    n = len(op.inputs)
    if len(grads) != n:
        raise ValueError(f"{op.type}: gradient rule {name} returned {len(grads)} "
                         f"gradient{'s' if len(grads) != 1 else ''}, expected {n}")
    return grads


def _tensors_only(op: Operation, rule: Any, grads: tuple, needed: tuple[bool, ...]) -> tuple:
    """A rule's gradients with any array a rule returned for a needed input made a tensor."""
    for g in grads:
        if g is not None and type(g) is not Tensor and type(g) is not IndexedSlices:
            break
    else:
        return grads  # the usual case
    return tuple(_as_gradient(op, rule, i, g) if n and g is not None
                 and not isinstance(g, (Tensor, IndexedSlices))
                 else g for i, (g, n) in enumerate(zip(grads, needed)))


def _recorded(tensors: Sequence[Tensor | None]) -> tuple:
    """What a trace keeps of the walk's gradients: the tensors themselves (their arrays
    are read when the trace is), but a Variable's array as it is now (it may be assigned)."""
    for t in tensors:
        if type(t) is not Tensor and t is not None:
            return tuple([t if type(t) is Tensor or t is None else t._value for t in tensors])
    return tuple(tensors)  # the usual case: no Variable


def _as_gradient(op: Operation, rule: Any, i: int, g: Any) -> Tensor:
    """A rule's array-like gradient for input ``i`` as a tensor of the input's dtype.

    Converted as ``gv.constant(g, dtype)`` converts: a float64 array for a float32
    input is narrowed only when every value fits, and bools are no gradient.
    """
    try:
        return convert_to_tensor(g, op.inputs[i]._dtype, "gradient")
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op.type}: gradient rule {_rule_name(rule)} returned "
                        f"{type(g).__name__} for input {i}, which is not a gradient of its "
                        f"dtype {op.inputs[i].dtype.name} ({e}); expected a tensor, an array "
                        "or None") from None


# ---------------------------------------------------------------- the trace's forward graph


def number_names(ops: Iterable[Operation]) -> dict[Operation, str]:
    """Names for ``ops`` as if they were the whole graph.

    The engine numbers names across the whole process, so re-running a
    notebook cell turns ``W`` into ``W_1``; a trace numbers them afresh, in
    order of appearance: the first op of each name gets the name as given,
    later ones ``_1``, ``_2``, ... (skipping names that other ops of the
    trace were given), so a re-run cell draws the same diagram.

    >>> import gradviz as gv
    >>> old = gv.Variable(1.0, name="trace_doc_w")
    >>> new = gv.Variable(2.0, name="trace_doc_w")     # the cell, run again
    >>> new.name, gv.trace_gradients(new * 3.0, new).tensors[0].name
    ('trace_doc_w_1:0', 'trace_doc_w:0')
    """
    groups: dict[str, list[Operation]] = {}
    for op in dict.fromkeys(ops):
        groups.setdefault(op.base_name, []).append(op)
    names: dict[Operation, str] = {}
    taken: set[str] = set()
    for base, group in groups.items():
        k = 0
        for op in group:
            name = base if k == 0 else f"{base}_{k}"
            while name in taken or (k > 0 and name in groups):
                k += 1
                name = f"{base}_{k}"
            names[op] = name
            taken.add(name)
            k += 1
    return names


# ---------------------------------------------------------------- public API


def _prepare(ys: Any, xs: Any, stop_gradients: Any,
             allowed: AbstractSet[Operation] | None = None,
             excluded: dict[Tensor, Callable[[str], str]] | None = None) -> _Walk:
    ys_l = _tensor_list(ys, "ys")
    xs_l = _tensor_list(xs, "xs", allow_empty=True)
    stop: set[Tensor] = set()
    if stop_gradients is not None:
        stop = set(_tensor_list(stop_gradients, "stop_gradients", allow_empty=True))
    return _Walk(ys_l, xs_l, stop, allowed, excluded)


def gradients(ys: Tensor | Sequence[Tensor], xs: Tensor | Sequence[Tensor],
              grad_ys: Tensor | Sequence[Tensor | None] | None = None,
              stop_gradients: Tensor | Sequence[Tensor] | None = None,
              unconnected_gradients: str | UnconnectedGradients = "none",
              ) -> list[Tensor | None]:
    """For each x, the sum over the ys of ``grad_y · dy/dx`` (a vector-Jacobian product).

    As TensorFlow's ``tf.gradients``.  Returns a list as long as ``xs``; each
    gradient has its x's shape and dtype, and is itself a tensor of the graph
    (so it can be differentiated again).

    Args:
      ys: the tensor(s) to differentiate.  A y with many elements is treated
        as the (weighted) sum of its elements.
      xs: the tensor(s) to differentiate with respect to.
      grad_ys: one upstream gradient per y, shaped like it (None or a None
        entry: ones).  Weights each y's elements; the result is then the
        vector-Jacobian product ``grad_y · dy/dx``.
      stop_gradients: tensors held constant.  Gradient still arrives *at*
        them but does not flow *through* them to their inputs (partial rather
        than total derivatives), like :func:`gradviz.stop_gradient`.
      unconnected_gradients: ``"none"`` (an x no y depends on gets None) or
        ``"zero"`` (it gets zeros shaped like x).

    Integer tensors are constants: an integer x gets None.

    >>> import gradviz as gv
    >>> X = gv.constant([[2.0], [3.0]]); Y = gv.constant([[3.0], [2.0]])
    >>> W = gv.Variable(1.6649098, name="W"); b = gv.Variable(0.54648024, name="b")
    >>> cost = 0.5 * gv.reduce_sum((X * W + b - Y) ** 2)
    >>> [round(float(g), 4) for g in gv.gradients(cost, [W, b])]
    [12.3762, 4.4175]
    """
    mode = _unconnected_mode(unconnected_gradients)
    walk = _prepare(ys, xs, stop_gradients)
    grads = walk.run(_grad_ys(walk.ys, grad_ys), mode, None)
    if walk.missing:  # (only then: the usual call does no more)
        _warn_none(walk, mode, "gradients")
    warn_partial_escapes(walk, "gradients")
    return grads


# ---------------------------------------------------------------- why a gradient is None


def _warn_none(walk: _Walk, mode: UnconnectedGradients, where: str, passes: int = 1,
               explain: Callable[[Tensor], str | None] | None = None) -> None:
    """Warn about each x that got None (or unconnected zeros) by the user's slip, not the graph's.

    TensorFlow answers these silently.  Said here: an integer x (integers are
    constants), a computation that left the graph through NumPy, and what
    ``explain`` (the tape's) says of an x; an x that is genuinely not
    connected, or cut by stop_gradient, gets no warning.  ``passes``: how many
    passes the walk ran (a Jacobian runs one per element of its target); an x
    counts as missing only if every pass missed it.
    """
    level = outside_stacklevel()
    what = "None" if mode is UnconnectedGradients.NONE else "zeros"
    counts = walk.missing or {}
    for k in sorted(counts):
        x = walk.xs[k]
        if counts[k] < passes or any(x is other for other in walk.xs[:k]):
            continue  # (an x listed twice is warned about once)
        name = plain_name(x.name)
        if x._dtype.kind != "f":
            text = (f"{name} has dtype {x.dtype.name}; integers are constants for "
                    f"differentiation, so its gradient is {what}: make it float (e.g. "
                    "gv.constant([1., 2., 3.]) or dtype=gv.float32)")
        elif explain is not None and (why := explain(x)) is not None:
            text = f"{why}; its gradient is {what}, as in TensorFlow"
        elif x in walk.excluded:
            continue
        else:
            escape = left_through_numpy(x, walk.ys)
            if escape is None:
                continue  # genuinely unconnected, or cut on purpose
            text = f"the gradient for {name} is {what}: {_left_through_numpy(escape, name)}"
        warnings.warn(f"{where}: {text}", UserWarning, stacklevel=level)


#: NumPy's name -> gradviz's, where they differ
_GV_NAME = {"sum": "reduce_sum", "mean": "reduce_mean", "max": "reduce_max", "amax": "reduce_max",
            "absolute": "abs", "power": "pow", "dot": "matmul", "concatenate": "concat",
            "true_divide": "divide"}
_NUMPY_CALL = re.compile(r"\b(?:np|numpy)\.(\w+)\s*\(")


def _numpy_calls(escape: Escape) -> list[str]:
    """The NumPy functions a conversion may have been for: the one in Python it went
    through (``mean``), else those called on the user's line (a ufunc such as ``np.exp``
    is called from C, so only the line names it)."""
    if escape.function:
        return [escape.function]
    if escape.file:
        return _NUMPY_CALL.findall(linecache.getline(escape.file, escape.line))
    return []


def _gradviz_names(called: list[str]) -> list[tuple[str, str]]:
    """The NumPy names of ``called`` that gradviz has an op for, each with that op's name."""
    ours = [(n, _GV_NAME.get(n, n)) for n in called]
    return [(n, g) for n, g in ours if g in ops.__all__ and not g.endswith("_grad")]


def _left_through_numpy(escape: Escape, x_name: str, missing: str = "") -> str:
    """The sentence that says where the computation from ``x_name`` left the graph, and what
    to write instead: "the computation left the graph through NumPy at ... ; use gv.exp ...".

    ``missing``: what that means for the gradient, said before the advice (a gradient
    with a part missing says so; a None one has said it already).
    """
    called = _numpy_calls(escape)
    ours = _gradviz_names(called)
    call = f"np.{ours[0][0]}" if ours else f"np.{called[0]}" if called else ""
    site = ", ".join(filter(None, (call, escape.where)))
    site = f" ({site})" if site else ""
    at = plain_name(escape.tensor.name)
    fix = (f"use gv.{ours[0][1]} instead of np.{ours[0][0]}, which keeps it in the graph" if ours
           else "compute it with gradviz ops (such as gv.exp or gv.reduce_sum) instead of NumPy")
    return (f"the computation left the graph through NumPy at {at}{site}, and NumPy's result "
            f"came back as a new constant, which does not depend on {x_name}{missing}; {fix}")


# ---------------------------------------------------------------- a gradient missing a part


def warn_partial_escapes(walk: _Walk, where: str, passes: int = 1) -> None:
    """Warn about each x whose gradient misses the part that left the graph through NumPy.

    ``y = gv.reduce_sum(np.exp(x) * x)`` gives exp(x) for x: ``np.exp(x)`` came back
    as a constant, so the x·exp(x) that would flow through it is missing.
    TensorFlow gives the same number silently; so does gradviz, with this
    warning.  Said only where x gets a gradient (else ``_warn_none`` says why
    it gets none), and only on evidence that a constant the ys depend on is
    what NumPy returned for a tensor computed from x (see _partial_escapes).
    ``passes``: as for ``_warn_none``; a Jacobian calls this once, after its
    passes.  Returns at once when NumPy converted no tensor lately, or no
    constant was made from an array since.
    """
    if not _escapes or not _from_numpy:
        return
    counts = walk.missing or {}
    xs = [x for k, x in enumerate(walk.xs) if x in walk.x_set and counts.get(k, 0) < passes]
    found = _partial_escapes(list(dict.fromkeys(xs)), walk.ys, walk.stop) if xs else {}
    if not found:
        return
    level = outside_stacklevel()
    for x, escape in found.items():
        name = plain_name(x.name)
        text = _left_through_numpy(
            escape, name, f", so what flows through it is missing from {name}'s gradient")
        warnings.warn(f"{where}: the gradient for {name} is missing a part: {text}", UserWarning,
                      stacklevel=level)


#: gradviz ops whose gradient is zero or none: NumPy's versions drop nothing of a gradient
_FLAT = {"sign", "equal", "greater", "greater_equal", "less", "less_equal", "ones_like",
         "zeros_like", "cast", "stop_gradient"}


def _partial_escapes(xs: list[Tensor], ys: list[Tensor],
                     stop: AbstractSet[Tensor]) -> dict[Tensor, Escape]:
    """For each of ``xs`` (each gets a gradient) the latest conversion that took a tensor
    computed from it out of the graph, and whose NumPy result came back as a constant
    that a gradient from the ys would reach (and from the converted tensor, that x).

    Ordering alone (a constant made from an array after a conversion) is no
    evidence: printing ``np.asarray(w)`` and then making a constant of data is
    not ``w`` leaving the graph.  The constant must have been made on the
    conversion's own line, or hold what the NumPy function named there gives
    for the converted tensor's value.
    """
    # each constant that, by the evidence, is what NumPy returned for a conversion, with
    # the latest such conversion before it was made: made on the conversion's line, or
    # holding what NumPy gives for the converted tensor's value (looked at first: it needs
    # no walk through the graph)
    back: dict[Tensor, Escape] = {}
    results: dict[int, list[np.ndarray]] = {}  # escape number -> _numpy_results (when needed)
    # only conversions for a NumPy function whose result moves with its argument: one that
    # does not (np.sign, np.round), or a bare np.asarray followed by anything (a mask,
    # x > 0), may have dropped nothing, and a warning there would be false
    moving = [e for e in _escapes if any(g not in _FLAT for _, g in _gradviz_names(
        _numpy_calls(e)))]
    if not moving:
        return {}
    for c, m in list(_from_numpy.items()):  # (a copy: it is weakly keyed)
        if type(c) is not Tensor or c._dtype.kind != "f":
            continue  # (a Variable made from NumPy is a parameter of its own)
        for escape in reversed(moving):
            if escape.number > m.number:
                continue  # (converted after c was made)
            if escape.file and (m.file, m.line) == (escape.file, escape.line):
                back[c] = escape
                break
            if escape.number not in results:
                results[escape.number] = _numpy_results(escape)
            with np.errstate(all="ignore"):  # (a float64 result may overflow float32)
                if any(r.shape == c.shape and np.array_equal(r.astype(c._dtype), c._value,
                                                             equal_nan=True)
                       for r in results[escape.number]):
                    back[c] = escape
                    break
    if not back:
        return {}
    carrying = _carrying(ys, stop)
    escapes = {e.number: e for c, e in back.items() if c in carrying}
    found: dict[Tensor, Escape] = {}
    for number in sorted(escapes, reverse=True):  # the latest conversion first
        # (a gradient at the converted tensor would reach x: not through a stop_gradient)
        computed_from = _carrying([escapes[number].tensor], stop)
        for x in xs:
            if x not in found and x in computed_from:
                found[x] = escapes[number]
    return {x: found[x] for x in xs if x in found}


def _carrying(ys: list[Tensor], stop: AbstractSet[Tensor]) -> set[Tensor]:
    """The tensors a gradient from the ys would reach if each were an x: the ys' graph
    (and the ys) through float tensors, not past ``stop``, a stop_gradient or an op with
    no gradient."""
    seen: set[Tensor] = set()
    stack = [y for y in ys if y._dtype.kind == "f"]
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        if t in stop:
            continue
        op_type, inputs = (t._pending[0], t._pending[1]) if t._op is None else (t._op.type,
                                                                               t._op.inputs)
        if inputs and op_type != OpType.STOP_GRADIENT and _RULES.get(op_type) is not None:
            stack.extend(i for i in inputs if i._dtype.kind == "f")
    return seen


def _numpy_results(escape: Escape) -> list[np.ndarray]:
    """What the NumPy functions named at the conversion give for the converted tensor's
    value, leaving out any that is that value itself (any copy of the tensor would hold
    it, as ``np.asarray(t)`` does) and any function that takes more than one array."""
    value = read_only(escape.tensor._value)
    results = []
    for name in dict.fromkeys(_numpy_calls(escape)):
        f = getattr(np, name, None)
        if not (isinstance(f, np.ufunc) or _gradviz_names([name])):
            continue  # (only functions of arrays, which do nothing else, are run)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = np.asarray(f(value))
        except Exception:  # (np.maximum(t) wants two arrays, np.reshape(t) a shape: not these)
            continue
        if result.dtype.kind in "biuf" and not (
                result.shape == value.shape and np.array_equal(result, value, equal_nan=True)):
            results.append(result)
    return results
