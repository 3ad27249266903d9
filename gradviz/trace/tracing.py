"""Traced differentiation: ``trace_gradients``, the tape's ``trace_*`` methods, and the
accumulator's ``trace_jvp``.

Each runs the engine's own pass with a recorder (a backward walk with a
:class:`~gradviz.trace.recorder.Recorder`, a forward pass with a
:class:`~gradviz.trace.recorder.TangentRecorder`) and packages what it reported as
a :class:`~gradviz.Trace`; the gradients or tangents are exactly the ones the
untraced call returns.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from ..engine import forwardprop as _forwardprop, nest, ops
from ..engine import tape as _tape
from ..engine.backprop import (UnconnectedGradients, _grad_ys, _prepare, _unconnected_mode,
                               _warn_none, warn_partial_escapes)
from ..engine.graph import Tensor, Variable
from .recorder import Recorder, TangentRecorder, make_trace, tangent_values
from .trace import Trace

__all__ = ["ForwardAccumulator", "GradientTape", "trace_gradients"]

#: What a traced forward pass is called, by what made it (``Trace.method``).
JVP_METHOD = "ForwardAccumulator.jvp"
FORWARD_JACOBIAN_METHOD = "tape.jacobian (forward mode)"


def trace_gradients(ys: Tensor | Sequence[Tensor], xs: Tensor | Sequence[Tensor],
                    grad_ys: Tensor | Sequence[Tensor | None] | None = None,
                    stop_gradients: Tensor | Sequence[Tensor] | None = None,
                    unconnected_gradients: str | UnconnectedGradients = "none", *,
                    title: str = "") -> Trace:
    """Like :func:`gradients`, but returns a :class:`~gradviz.Trace` of every step.

    ``trace.gradients`` is exactly what :func:`gradients` returns; ``title``
    captions the diagram, the widget and the report.  Show the trace with
    ``gv.show(trace)`` (or as a cell's last expression), draw one step with
    ``trace.to_svg(step=k)``, hand it out with ``trace.to_html(path)``.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> tr.gradients[0].numpy().tolist(), [s.kind for s in tr.steps]
    ([2.0, 4.0], ['seed', 'backward', 'accumulate', 'result'])
    """
    mode = _unconnected_mode(unconnected_gradients)
    walk = _prepare(ys, xs, stop_gradients)
    rec = Recorder()
    grads = walk.run(_grad_ys(walk.ys, grad_ys), mode, rec)
    if walk.missing:  # a silent None explains itself, as gradients() does
        _warn_none(walk, mode, "trace_gradients")
    warn_partial_escapes(walk, "trace_gradients")
    return make_trace(walk, rec, grads, "gradients", 1, title)


class GradientTape(_tape.GradientTape):
    """The engine's :class:`gradviz.engine.tape.GradientTape`, able to trace too.

    ``trace_gradient`` and ``trace_jacobian`` answer as ``gradient`` and
    ``jacobian`` do (and count as that one call of a non-persistent tape),
    returning a :class:`~gradviz.Trace` of every step.
    """

    def trace_gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                       unconnected_gradients: Any = "none", *, title: str = "") -> Trace:
        """Like :meth:`gradient`, returning a :class:`~gradviz.Trace` of every step."""
        rec = Recorder()
        walk, grads = self._gradient(target, sources, output_gradients, unconnected_gradients,
                                     rec)
        return make_trace(walk, rec, grads, "tape.gradient", 1, title)

    def trace_jacobian(self, target: Any, sources: Any, unconnected_gradients: Any = "none",
                       *, mode: str = "reverse", title: str = "") -> Trace:
        """Like :meth:`jacobian`, with a trace of every pass.

        ``mode="reverse"`` (the default, and :meth:`jacobian`'s way) runs one backward
        pass per element of the target, each giving a row; ``mode="forward"`` one
        forward pass per element of the sources, each moving that element alone and
        giving a column.  Both give the same Jacobians; ``trace.passes`` counts what
        each cost.
        """
        if mode == "forward":
            rec = TangentRecorder()
            walk, results, n = _forwardprop.forward_jacobian(self, target, sources,
                                                             unconnected_gradients, rec)
            return make_trace(walk, rec, results, FORWARD_JACOBIAN_METHOD, n, title)
        if mode != "reverse":
            raise ValueError(f"GradientTape.trace_jacobian: mode must be 'reverse' (one "
                             f"backward pass per target element) or 'forward' (one forward "
                             f"pass per source element), got {mode!r}")
        rec = Recorder()
        walk, results, n = self._jacobian(target, sources, unconnected_gradients, rec)
        return make_trace(walk, rec, results, "tape.jacobian", n, title)


class _OpLog:
    """What a tracing accumulator keeps of each op its block ran: the rule's kind and the
    tangents' values, in and out, while the op lives (a program's dropped values are
    freed with their steps); and the value each Variable had when an op read it, which
    its tangent step used (an ``assign`` after the block changes no step)."""

    def __init__(self) -> None:
        self.steps: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.read: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def forward(self, op: Any, rule: str, tangents_in: tuple, tangents_out: tuple) -> None:
        self.steps[op] = (rule, tangent_values(tangents_in), tangent_values(tangents_out))
        variables = {t: t._value for t in op.inputs if type(t) is Variable}
        if variables:
            self.read[op] = variables


class ForwardAccumulator(_forwardprop.ForwardAccumulator):
    """The engine's :class:`gradviz.engine.forwardprop.ForwardAccumulator`, able to trace.

    ``trace_jvp`` answers as ``jvp`` does, returning a :class:`~gradviz.Trace` of the
    forward pass: each primal's tangent, each op's tangent step in the order the
    block ran them, and the target's tangent.  It keeps each op's tangents'
    values while the op lives.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="fa_x")
    >>> with gv.autodiff.ForwardAccumulator(x, gv.constant([1.0, 0.0])) as acc:
    ...     y = x * x
    >>> tr = acc.trace_jvp(y)
    >>> [s.kind for s in tr.steps], tr.gradients[0].numpy().tolist()
    (['tangent', 'forward', 'jvp'], [2.0, 0.0])
    """

    def __init__(self, primals: Any, tangents: Any) -> None:
        super().__init__(primals, tangents)
        self._primals = [p for p, _ in nest.paired_leaves(primals, tangents,
                                                         ("primals", "tangents"))]
        self._recorder = _OpLog()

    def trace_jvp(self, target: Any, unconnected_gradients: Any = "none", *,
                  title: str = "") -> Trace:
        """Like :meth:`jvp`, returning a :class:`~gradviz.Trace` of the forward pass that
        gave ``target`` (a tensor or a structure of them) its tangent."""
        mode = _unconnected_mode(unconnected_gradients)
        for path, leaf in nest.leaf_paths(target, "target"):
            if not isinstance(leaf, Tensor):
                raise TypeError("ForwardAccumulator.trace_jvp: " + nest.not_a_tensor(path, leaf))
        targets = nest.flatten(target, "target")
        walk = _prepare(targets, self._primals, None)
        rec = TangentRecorder()
        for j, x in enumerate(self._primals):
            rec.tangent(x, j, self._tangent_of(x)._value)
        log = self._recorder
        read: dict = {}  # each Variable's value when the block read it (the first read's)
        for op in walk.order:
            got = log.steps.get(op)
            if got is not None:
                rec.step(op, *got)
                for v, value in log.read.get(op, {}).items():
                    read.setdefault(v, value)
        answers = []
        for i, t in enumerate(targets):
            tangent = self._tangent_of(t)
            if tangent is not None:
                rec.jvp(t, i, "connected", tangent._value, "")
            else:
                if mode is UnconnectedGradients.ZERO:
                    tangent = ops.zeros_like(t)
                rec.jvp(t, i, "integer" if t._dtype.kind != "f" else "unconnected",
                        None if tangent is None else tangent._value,
                        _no_tangent(walk, t, mode))
            answers.append(tangent)
        return make_trace(walk, rec, answers, JVP_METHOD, 1, title, read)


def _no_tangent(walk: Any, t: Tensor, mode: UnconnectedGradients) -> str:
    """Why target ``t`` has no tangent, in words."""
    if t._dtype.kind != "f":
        why = "it is an integer tensor, and integers move in no direction"
    elif t not in walk.reach:
        why = "it does not depend on any primal"
    else:
        why = ("it depends on a primal only through ops that pass no tangent: stop_gradient, "
               "integers, or ops run outside the accumulator's block")
    return why + (" (unconnected_gradients='zero' gives zeros)"
                  if mode is UnconnectedGradients.ZERO else "")
