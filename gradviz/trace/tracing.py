"""Traced differentiation: ``trace_gradients`` and the tape's ``trace_*`` methods.

Each runs the engine's own backward walk with a :class:`~gradviz.trace.recorder.Recorder`
and packages what it reported as a :class:`~gradviz.Trace`; the gradients are
exactly the ones the untraced call returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine import tape as _tape
from ..engine.backprop import (UnconnectedGradients, _grad_ys, _prepare, _unconnected_mode,
                               _warn_none, warn_partial_escapes)
from ..engine.graph import Tensor
from .recorder import Recorder, make_trace
from .trace import Trace

__all__ = ["GradientTape", "trace_gradients"]


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
                       *, title: str = "") -> Trace:
        """Like :meth:`jacobian`, with a trace of every pass (one per target element)."""
        rec = Recorder()
        walk, results, n = self._jacobian(target, sources, unconnected_gradients, rec)
        return make_trace(walk, rec, results, "tape.jacobian", n, title)
