"""Forward mode: ``ForwardAccumulator``, a Jacobian-vector product carried along with the values.

Reverse mode (``GradientTape``, ``gradients``) runs the program, then walks it
backward from one output's gradient to every input's: a vector-Jacobian
product, ``uᵀJ``.  Forward mode carries, beside each value, its *tangent*: how
it moves when the inputs move along a direction ``t`` given up front.  Each op
computes its output's tangent from its inputs' tangents as it runs (its JVP
rule, :mod:`gradviz.engine.jvp_rules`), so at the end every output holds ``J t``
for the one direction.  One forward pass per input direction, one backward pass
per output: a Jacobian of few inputs and many outputs wants forward mode.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0])
>>> with gv.autodiff.ForwardAccumulator(x, gv.constant([1.0, 0.0])) as acc:
...     y = x * x
>>> acc.jvp(y).numpy().tolist()       # d(x*x)/dx along (1, 0): (2*1, 0)
[2.0, 0.0]

The accumulator watches only the ops its ``with`` block runs, in the thread
that entered it.  A tape or an accumulator entered *before* it records the
ops that compute its tangents, so a gradient of a tangent (reverse over
forward) and a tangent of a tangent (forward over forward) work; one entered
after it does not, as in TensorFlow.  A gradient taken inside the block
(``tape.gradient`` of a tape entered after it) carries tangents too: forward
over reverse, a Hessian-vector product.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from . import graph, nest, ops
from .backprop import UnconnectedGradients, _unconnected_mode, _Walk
from .graph import Operation, Tensor, plain_name
from .jvp_rules import jvp_with_kind
from .custom import CUSTOM_GRADIENT
from .ops import OpType
from .tape import GradientTape, _one_hot, _stacked

__all__ = ["ForwardAccumulator", "ForwardRecorder", "forward_jacobian", "forward_walk",
           "op_tangents"]


class ForwardAccumulator:
    """Computes Jacobian-vector products of the ops in its ``with`` block, as it runs them.

    ``primals`` are the tensors (or Variables) whose moves it follows, a tensor
    or a structure of them (lists, tuples, dicts, nested); ``tangents`` the
    direction each moves in, in the same structure: each a tensor of its
    primal's shape and dtype, or a number or NumPy array made one.  Inside the
    block, every op with an input that has a tangent gives its outputs theirs;
    :meth:`jvp` reads them, during the block or after it.

    As ``tf.autodiff.ForwardAccumulator``: an integer tensor, and the output of
    ``stop_gradient``, carry no tangent; ``jvp`` gives None for a tensor
    without one, or zeros with ``unconnected_gradients="zero"``.
    """

    def __init__(self, primals: Any, tangents: Any) -> None:
        # Each tensor holds its own tangents, by accumulator (a tangent refers to its
        # tensor through its ops, so a table here would keep every value alive): a value
        # the program drops is freed with its tangent, at the next collection.
        self._key = next(_numbers)
        self._recording = False
        self._recorder: ForwardRecorder | None = None
        seen: set[int] = set()
        for primal, tangent in nest.paired_leaves(primals, tangents, ("primals", "tangents")):
            if not isinstance(primal, Tensor):
                raise TypeError("ForwardAccumulator: " + nest.not_a_tensor("a primal", primal)
                                + "; the primals are the tensors whose moves it follows")
            if id(primal) in seen:
                raise ValueError(f"ForwardAccumulator: {plain_name(primal.name)} is given as a "
                                 "primal more than once; give it once, with the sum of its "
                                 "tangents")
            seen.add(id(primal))
            _keep(primal, self._key, _tangent_for(primal, tangent))

    # -- recording

    def __enter__(self) -> ForwardAccumulator:
        if self._recording:
            raise ValueError("ForwardAccumulator: this accumulator is already recording; its "
                             "`with` block cannot be entered again inside itself")
        self._recording = True
        self._recording_for = graph.this_thread().tapes
        self._recording_for.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._recording = False
        self._recording_for.remove(self)

    def _record(self, op: Operation) -> None:
        # called by the graph for every op made while the accumulator records
        key, inputs = self._key, op.inputs
        ins: list | None = None
        for k, t in enumerate(inputs):
            held = getattr(t, "_tangents", None)
            if held is not None and t._dtype.kind == "f":
                tangent = held.get(key)
                if tangent is not None:
                    if ins is None:
                        ins = [None] * len(inputs)
                    ins[k] = tangent
        if ins is None:
            return
        # Its own tangents' ops are recorded only by the tapes and accumulators
        # entered before it (a gradient or tangent of a tangent), as in TensorFlow: the
        # thread's list loses the later ones while it computes (in place, so that a
        # tape stopped and started meanwhile keeps its place), and a hidden tape is
        # told which ops it missed.
        stack = graph.this_thread().tapes
        at = stack.index(self)
        later = stack[at:]
        del stack[at:]
        hidden = [t for t in later if isinstance(t, GradientTape)]
        marker = _Hidden(hidden) if hidden else None
        if marker is not None:
            stack.append(marker)
        try:
            rule, got = op_tangents(op, tuple(ins), lambda t: _held(t, key))
        finally:
            if marker is not None:
                stack.remove(marker)
            stack.extend(later)
        for out, tangent in zip(op.outputs, got):
            if tangent is not None:
                _keep(out, key, tangent)
        if self._recorder is not None:
            self._recorder.forward(op, rule, tuple(ins), got)

    # -- reading

    def jvp(self, primals: Any, unconnected_gradients: Any = "none") -> Any:
        """The tangent of each tensor of ``primals`` (a tensor or a structure of them).

        A tensor that no watched primal reached (computed outside the block,
        through ``stop_gradient``, an integer) gets None, or zeros of its shape
        and dtype with ``unconnected_gradients="zero"``.
        """
        mode = _unconnected_mode(unconnected_gradients)
        found = []
        for path, leaf in nest.leaf_paths(primals, "primals"):
            if not isinstance(leaf, Tensor):
                raise TypeError("ForwardAccumulator.jvp: " + nest.not_a_tensor(path, leaf))
            tangent = self._tangent_of(leaf)
            if tangent is None and mode is UnconnectedGradients.ZERO:
                tangent = ops.zeros_like(leaf)
            found.append(tangent)
        return nest.pack(primals, found)


    def _tangent_of(self, tensor: Tensor) -> Tensor | None:
        """``tensor``'s tangent in this accumulator, None where it has none."""
        return _held(tensor, self._key)


class _Hidden:
    """Tells the tapes entered after an accumulator of the ops it makes for its tangents,
    which they do not record, so that a gradient that misses them can say why."""

    def __init__(self, tapes: list[GradientTape]) -> None:
        self.tapes = tapes

    def _record(self, op: Operation) -> None:
        for tape in self.tapes:
            tape._hidden.add(op)


_numbers = itertools.count()  # each accumulator's key in the tensors' tangents


def _keep(tensor: Tensor, key: int, tangent: Tensor) -> None:
    held = getattr(tensor, "_tangents", None)
    if held is None:
        tensor._tangents = held = {}
    held[key] = tangent


def _jvp_of(op: Operation, ins: tuple) -> tuple[str, tuple]:
    """``jvp_with_kind(op, ins)``, an op with no gradient rule named as forward mode's need."""
    try:
        return jvp_with_kind(op, ins)
    except NotImplementedError as e:
        raise NotImplementedError(
            f"ForwardAccumulator: the tangent of a {op.type} op comes from its gradient "
            f"rule, and it has none: register one with @gv.RegisterGradient({op.type!r}) "
            "(or run it outside the accumulator's block)") from e


def _held(tensor: Tensor, key: int) -> Tensor | None:
    held = getattr(tensor, "_tangents", None)
    return None if held is None else held.get(key)


#: How an op's tangent came about, as :func:`op_tangents` says: the three ways of
#: :func:`gradviz.engine.jvp_rules.jvp_rule_kind`, and the ways that give none.
RULE_KINDS = ("diagonal", "own", "transposed", "custom", "stop_gradient", "integer")


def op_tangents(op: Operation, ins: tuple,
                tangent_of: Callable[[Tensor], Tensor | None]) -> tuple[str, tuple]:
    """How ``op``'s outputs move, given its inputs' tangents ``ins`` (None where one does not
    move): the kind of rule that gave them (one of :data:`RULE_KINDS`) and one tangent per
    output, None where an output gets none.

    ``tangent_of`` reads the tangent a tensor already has (a custom gradient's results keep
    those their function's own ops gave them).
    """
    outs = op.outputs
    if op.type == OpType.STOP_GRADIENT:
        return "stop_gradient", (None,) * len(outs)
    if not any(out._dtype.kind == "f" for out in outs):
        return "integer", (None,) * len(outs)  # an integer or boolean result moves nowhere
    own = _custom_tangents(op, tangent_of) if op.type == CUSTOM_GRADIENT else None
    if own is not None and all(t is not None for t in own):
        rule, got = "custom", own
    else:
        rule, got = _jvp_of(op, ins)
        if own is not None and any(t is not None for t in own):
            # a result's own tangent wins over grad_fn's
            rule, got = "custom", tuple(t if t is not None else g for t, g in zip(own, got))
    return rule, tuple(t if t is not None and out._dtype.kind == "f" else None
                       for out, t in zip(outs, got))


class ForwardRecorder(Protocol):
    """What a forward pass reports (the trace layer's recorder implements it): each pass's
    number, a primal's tangent, one call per op that a tangent reaches, and a target's
    tangent (an array, or None) with its status and, where it has none, why."""

    pass_index: int

    def tangent(self, tensor: Tensor, x_index: int, tangent: np.ndarray) -> None: ...

    def forward(self, op: Operation, rule: str, tangents_in: tuple,
                tangents_out: tuple) -> None: ...

    def jvp(self, tensor: Tensor, y_index: int, status: str, tangent: np.ndarray | None,
            reason: str) -> None: ...


def forward_walk(walk: _Walk, tangents: dict[Tensor, Tensor],
                 rec: ForwardRecorder | None = None) -> dict[Tensor, Tensor]:
    """One forward pass over a backward walk's ops, after the fact: every tensor's tangent.

    ``tangents`` gives the sources' tangents; each op of ``walk.order``, in forward
    order, takes the tangents of the inputs the walk differentiates through (its
    plan's ``needed``: not an unwatched Variable a tape read, say) and gives its
    outputs theirs, by the same rules as :class:`ForwardAccumulator`.  No tape
    records the ops that compute them.
    """
    have = dict(tangents)
    stack = graph.this_thread().tapes
    paused = stack[:]
    del stack[:]
    try:
        for op, (needed, _, _) in zip(walk.order, walk.plans):
            ins = tuple(have.get(t) if n and t._dtype.kind == "f" else None
                        for t, n in zip(op.inputs, needed))
            if all(t is None for t in ins):
                continue
            rule, got = op_tangents(op, ins, have.get)
            for out, tangent in zip(op.outputs, got):
                if tangent is not None:
                    have[out] = tangent
            if rec is not None:
                rec.forward(op, rule, ins, got)
    finally:
        stack[:0] = paused
    return have


def forward_jacobian(tape: GradientTape, target: Any, sources: Any, unconnected_gradients: Any,
                     rec: ForwardRecorder | None = None) -> tuple[_Walk, list, int]:
    """``tape.jacobian(target, sources)`` by forward mode: one forward pass per element of
    the sources, each moving that element alone and giving one column of the Jacobian.

    Returns the walk, one Jacobian per source (``target.shape + source.shape``, equal
    to reverse mode's, None as it gives None) and the number of passes.  ``rec``
    hears each pass's tangent, its ops' steps and the target's tangent.
    """
    mode, y, srcs, walk, explain = tape._jacobian_walk(target, sources, unconnected_gradients)
    results: list = []
    passes = 0
    missing: dict[int, int] = {}
    n_y = int(np.prod(y.shape, dtype=np.int64))
    for j, s in enumerate(srcs):
        if s not in walk.x_set:  # an integer, or what the tape did not watch: as reverse mode
            results.append(None if mode is UnconnectedGradients.NONE or s._dtype.kind != "f"
                           else graph.constant(np.zeros(y.shape + s.shape, s._dtype)))
            missing[j] = n_y
            continue
        columns = []
        for k in range(int(np.prod(s.shape, dtype=np.int64))):
            if rec is not None:
                rec.pass_index = passes
            seed = _one_hot(s, k, batched=False)
            if rec is not None:
                rec.tangent(s, j, seed._value)
            column = forward_walk(walk, {s: seed}, rec).get(y)
            if rec is not None and column is not None:
                rec.jvp(y, 0, "connected", column._value, "")
            elif rec is not None:  # as the Jacobian will be: None, or zeros
                zero = mode is UnconnectedGradients.ZERO
                rec.jvp(y, 0, "unconnected", np.zeros(y.shape, y._dtype) if zero else None,
                        "no element of the source moves it" + (
                            " (unconnected_gradients='zero' gives zeros)" if zero else ""))
            columns.append(column)
            passes += 1
        jac = _stacked(columns, y, y.shape + s.shape, y.ndim)
        if jac is None:
            missing[j] = n_y
            if mode is UnconnectedGradients.ZERO:
                jac = graph.constant(np.zeros(y.shape + s.shape, s._dtype))
        elif jac._dtype != s._dtype:
            jac = ops.cast(jac, s.dtype)
        results.append(jac)
    if n_y and missing:
        walk.missing = missing
        tape._warn(walk, mode, "GradientTape.jacobian", n_y, explain)
    return walk, results, passes


def _custom_tangents(op: Operation,
                     tangent_of: Callable[[Tensor], Tensor | None]) -> tuple | None:
    """A custom gradient's outputs' tangents: those of the values its function computed.

    Its ops ran inside the block, so each result it returned has its tangent
    already; as in TensorFlow, that tangent wins over its ``grad_fn`` transposed,
    which is used only for a result with none.  (None: no result has one, so the
    op does not hold them: ``computed``.)
    """
    computed = op.attrs.get("computed")
    if computed is None:
        return None
    return tuple(tangent_of(y) for y in computed())


def _tangent_for(primal: Tensor, tangent: Any) -> Tensor:
    """``tangent`` as a tensor of ``primal``'s shape and dtype, or a clear error."""
    name = plain_name(primal.name)
    if isinstance(tangent, Tensor):
        if tangent._dtype != primal._dtype:
            raise ValueError(f"ForwardAccumulator: the tangent of {name} has dtype "
                             f"{tangent.dtype.name}, but {name} is {primal.dtype.name}; a "
                             "tangent has its primal's dtype (gv.cast it)")
    elif tangent is None:
        raise ValueError(f"ForwardAccumulator: the tangent of {name} is None; give a tensor "
                         f"of {name}'s shape {primal.shape} (zeros for no move)")
    else:
        try:
            tangent = graph.constant(np.asarray(tangent), primal.dtype)
        except (TypeError, ValueError) as e:
            raise ValueError(f"ForwardAccumulator: the tangent of {name} cannot be made a "
                             f"{primal.dtype.name} tensor: {e}") from None
    if tangent.shape != primal.shape:
        raise ValueError(f"ForwardAccumulator: the tangent of {name} has shape "
                         f"{tangent.shape}, but {name} has shape {primal.shape}; a tangent "
                         "has its primal's shape (the direction each element moves in)")
    if primal._dtype.kind != "f":
        warnings.warn(f"ForwardAccumulator: {name} is {primal.dtype.name}; integers carry no "
                      "tangent through ops, so nothing computed from it gets one (watch a "
                      "float tensor)", UserWarning, stacklevel=3)
    return tangent
