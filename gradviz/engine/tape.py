"""GradientTape: differentiate only what ran inside a ``with`` block.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0])
>>> with gv.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x
>>> tape.jacobian(y, x).numpy().tolist()
[[2.0, 0.0], [0.0, 4.0]]
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import graph, ops
from .backprop import (UnconnectedGradients, WalkRecorder, _grad_ys, _tensor_list, _topo_ops,
                       _unconnected_mode, _Walk, _warn_none)
from .gradient_rules import _RULES
from .graph import Operation, Tensor, Variable, plain_name
from .ops import OpType

__all__ = ["GradientTape"]


class GradientTape:
    """Records the ops run inside its ``with`` block on watched tensors.

    Variables used inside the block are watched automatically (unless
    ``watch_accessed_variables=False``); constants must be watched with
    :meth:`watch`.  A tape that is not ``persistent`` answers one
    ``gradient`` or ``jacobian`` call.

    ``gv.GradientTape`` is this tape with ``trace_gradient`` and
    ``trace_jacobian`` added (:class:`gradviz.trace.GradientTape`).
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        # tensors watched explicitly or as Variables, in order (a dict as an ordered set)
        self._watched: dict[Tensor, None] = {}
        # Watched tensors and the outputs of recorded ops, and the recorded ops,
        # held weakly: what the user drops inside `with tape:` is freed as it
        # would be without the tape (what a gradient needs, its ys keep alive).
        self._tracked: weakref.WeakSet[Tensor] = weakref.WeakSet()
        self._ops: weakref.WeakSet[Operation] = weakref.WeakSet()
        # ops made inside the block that it did not record (none of their inputs was
        # watched), so that a gradient can tell "not watched" from "computed outside"
        self._unrecorded: weakref.WeakSet[Operation] = weakref.WeakSet()
        self._refused: weakref.WeakSet[Tensor] = weakref.WeakSet()  # integers watch() refused
        self._used = False
        self._active = False

    # -- recording

    def __enter__(self) -> GradientTape:
        if self._active:
            raise RuntimeError("this GradientTape is already recording (nested `with` on the "
                               "same tape)")
        self._active = True
        graph.ACTIVE_TAPES.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._active = False
        graph.ACTIVE_TAPES.remove(self)

    def watch(self, tensor: Any) -> None:
        """Track ``tensor`` (or each tensor of a list) so ops on it are recorded."""
        for t in _tensor_list(tensor, "watch"):
            if t._dtype.kind != "f":
                warnings.warn(f"GradientTape.watch: {plain_name(t.name)} has dtype "
                              f"{t.dtype.name}; only float tensors can be watched (integer "
                              "tensors have no gradient)", stacklevel=2)
                self._refused.add(t)
                continue
            self._watched[t] = None
            self._tracked.add(t)

    def watched_variables(self) -> list[Tensor]:
        """The tensors this tape watches, in the order they were watched."""
        return list(self._watched)

    def _record(self, op: Operation) -> None:
        # called by the graph for every op created while the tape is active
        if _RULES.get(op.type, True) is None or op.type == OpType.STOP_GRADIENT:
            return  # as in TensorFlow, ops without a gradient are not recorded
        tracked = self._tracked
        if self.watch_accessed_variables:
            for t in op.inputs:
                if isinstance(t, Variable) and t.trainable and t not in tracked \
                        and t._dtype.kind == "f":
                    self._watched[t] = None
                    tracked.add(t)
        for t in op.inputs:
            if t in tracked and t._dtype.kind == "f":
                self._ops.add(op)
                for out in op.outputs:
                    tracked.add(out)
                return
        if op.inputs:  # (a constant uses nothing: no gradient could be missed through it)
            self._unrecorded.add(op)

    # -- differentiating

    def _begin(self, what: str) -> None:
        if self._used and not self.persistent:
            raise RuntimeError(f"GradientTape.{what}: a non-persistent tape can compute one set "
                               "of gradients (or one Jacobian); create it with "
                               "GradientTape(persistent=True) to call it again")
        self._used = True

    def _walk(self, targets: list[Tensor], sources: list[Tensor]
              ) -> tuple[_Walk, Callable[[Tensor], str | None]]:
        """The walk for ``targets`` and ``sources``, and what says why a source that gets no
        gradient gets none when that is the user's slip (None when it is not)."""
        # why each source gets no gradient, given the name a trace shows for it
        excluded: dict[Tensor, Callable[[str], str]] = {}
        slips: dict[Tensor, str] = {}  # source -> why, for the warning (in the engine's names)
        for s in sources:
            if s in self._tracked or s._dtype.kind != "f" or s in excluded:
                continue  # (an integer: the result explains it)
            why = _not_on_tape(s)  # a stop_gradient's output, a cast from an integer
            if why is None:
                found = self._why_none(s, targets)
                if found is None:
                    continue  # not connected beyond the tape either: the walk says so
                slip, target = found
                slips[s] = slip(plain_name(s.name), plain_name(target.name))
                # the reason a trace shows, in the trace's names (the walk, made below, knows them)
                why = lambda n, slip=slip, target=target: slip(  # noqa: E731
                    n, plain_name(walk.trace_name(target)))
            excluded[s] = why
        walk = _Walk(targets, sources, set(), self._ops, excluded)

        def explain(x: Tensor) -> str | None:
            if x in slips:
                return slips[x]
            if x in excluded:
                return None
            found = self._why_none(x, targets)  # watched, yet no gradient came back
            return None if found is None else found[0](plain_name(x.name),
                                                       plain_name(found[1].name))

        return walk, explain

    def _why_none(self, x: Tensor, targets: list[Tensor]
                  ) -> tuple[Callable[[str, str], str], Tensor] | None:
        """If the tape missed ``x``'s gradient by the user's slip, why (a sentence about the
        names of ``x`` and of the target), and which target; else None.

        The slip is one of: ``x`` was used inside the block but not watched (or
        watched only after it was used), or the target depends on ``x`` through ops
        computed outside the block.  ``x`` not connected to the targets even through
        ops the tape did not record, or only through a stop_gradient, is no slip.
        """
        found = _uses_toward(x, targets)
        if found is None:
            return None
        uses, target = found
        if x not in self._tracked:
            if any(op in self._ops or op in self._unrecorded for op in uses):
                return (lambda n, _: f"{n} was not watched by the tape: call tape.watch() on "
                        "it inside the `with` block, before using it (Variables are watched "
                        "automatically)"), target
        elif any(op in self._unrecorded for op in uses):
            return (lambda n, _: f"{n} was used in the tape's `with` block before it was "
                    "watched, so the tape did not record those ops: call tape.watch() on it "
                    "before using it"), target
        watch = "" if x in self._tracked or isinstance(x, Variable) and x.trainable else (
            ", and call tape.watch() on {n} there")
        return (lambda n, t: f"{t} depends on {n} through ops computed outside the tape's "
                f"`with` block, which the tape did not record: compute {t} inside the block"
                + watch.format(n=n)), target

    def _gradient(self, target: Any, sources: Any, output_gradients: Any,
                  unconnected_gradients: Any, rec: WalkRecorder | None) -> tuple[_Walk, list]:
        self._begin("gradient")
        mode = _unconnected_mode(unconnected_gradients)
        walk, explain = self._walk(_tensor_list(target, "target"),
                                   _tensor_list(sources, "sources"))
        seeds = _grad_ys(walk.ys, output_gradients, "output_gradients")
        grads = walk.run(seeds, mode, rec)
        if walk.missing:
            self._warn(walk, mode, "GradientTape.gradient", 1, explain)
        return walk, grads

    def _warn(self, walk: _Walk, mode: UnconnectedGradients, where: str, passes: int,
              explain: Callable[[Tensor], str | None]) -> None:
        # an integer watch() refused was warned about there
        for k, x in enumerate(walk.xs):
            if x in self._refused and walk.missing:
                walk.missing.pop(k, None)
        _warn_none(walk, mode, where, passes, explain)

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: Any = "none") -> Any:
        """d(sum of target · output_gradients)/d(source) for each source.

        Returns a tensor for a single source, a list for a list of sources.

        >>> import gradviz as gv
        >>> x = gv.constant([1.0, 2.0])
        >>> with gv.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.gradient(y, x, output_gradients=gv.constant([2.0, 3.0])).numpy().tolist()
        [4.0, 12.0]
        """
        _, grads = self._gradient(target, sources, output_gradients, unconnected_gradients, None)
        return grads if isinstance(sources, (list, tuple)) else grads[0]

    def _jacobian(self, target: Any, sources: Any, unconnected_gradients: Any,
                  rec: WalkRecorder | None) -> tuple[_Walk, list, int]:
        self._begin("jacobian")
        mode = _unconnected_mode(unconnected_gradients)
        targets = _tensor_list(target, "target")
        if len(targets) != 1:
            raise ValueError(f"GradientTape.jacobian: target must be one tensor, got a list of "
                             f"{len(targets)}; call jacobian once per target (or stack them)")
        (y,) = targets
        srcs = _tensor_list(sources, "sources")
        walk, explain = self._walk([y], srcs)
        n = int(np.prod(y.shape, dtype=np.int64))
        rows: list[list[Tensor | None]] = []
        for k in range(n):  # one vector-Jacobian product per element of the target
            one_hot = np.zeros(n, y._dtype)
            one_hot[k] = 1
            with graph.name_scope("gradients"):
                seed = graph.constant(one_hot.reshape(y.shape), name="one_hot")
            if rec is not None:
                rec.pass_index = k
            rows.append(walk.run([(seed, True)], mode, rec))
        if n and walk.missing:
            self._warn(walk, mode, "GradientTape.jacobian", n, explain)
        results = []
        for j, s in enumerate(srcs):
            column = [r[j] for r in rows]
            if n and all(g is None for g in column):
                results.append(None)
                continue
            filled = [ops.zeros_like(s) if g is None else g for g in column]
            if n == 0:
                jac = graph.constant(np.zeros(y.shape + s.shape, s._dtype))
            else:
                jac = ops.reshape(ops.stack(filled), y.shape + s.shape)
            if jac._dtype != s._dtype:
                jac = ops.cast(jac, s.dtype)
            results.append(jac)
        return walk, results, n

    def jacobian(self, target: Any, sources: Any, unconnected_gradients: Any = "none") -> Any:
        """The full Jacobian: shape ``target.shape + source.shape`` per source.

        Costs one backward pass per element of ``target``; a vector-Jacobian
        product (:meth:`gradient` with ``output_gradients``) costs one.
        """
        _, results, _ = self._jacobian(target, sources, unconnected_gradients, None)
        return results if isinstance(sources, (list, tuple)) else results[0]

    def batch_jacobian(self, target: Any, source: Any) -> Tensor:
        """Per-example Jacobians: ``(batch,) + target.shape[1:] + source.shape[1:]``.

        Assumes example ``i`` of the target depends only on example ``i`` of
        the source (the rows of a batch are independent).
        """
        (y,) = _tensor_list(target, "target")
        (s,) = _tensor_list(source, "source")
        if not y.shape or not s.shape or y.shape[0] != s.shape[0]:
            raise ValueError(f"batch_jacobian: target {y.shape} and source {s.shape} must share "
                             "their first (batch) dimension")
        full = self.jacobian(y, s)
        if full is None:
            return None
        b = y.shape[0]
        per = [full[(i,) + (slice(None),) * (y.ndim - 1) + (i,)] for i in range(b)]
        return ops.stack(per)


def _not_on_tape(source: Tensor) -> Callable[[str], str] | None:
    """Why a tape has no gradient for the unwatched ``source`` by the graph's nature (a
    sentence about a given name), or None when the graph does not say."""
    if source.op.type == OpType.STOP_GRADIENT:
        return (lambda x: f"{x} is the output of stop_gradient, which a tape does not record, "
                          "so nothing on the tape leads to it")
    cast_from = source.op.inputs[0] if source.op.type == OpType.CAST else None
    if cast_from is not None and not cast_from.dtype.is_floating:
        return (lambda x: f"{x} is a cast from the integer tensor {plain_name(cast_from.name)}, "
                          "which a tape cannot watch")
    return None


def _uses_toward(x: Tensor, targets: list[Tensor]) -> tuple[list[Operation], Tensor] | None:
    """The ops that use ``x`` on a path a gradient could flow along to a target, had every
    op been recorded (through float tensors, not through stop_gradient or ops without
    a gradient), and the first target so reached; None if there is no such path."""
    order = _topo_ops(targets, None)
    # backwards from the targets: the tensors a gradient could come back to
    back = {t for t in targets if t._dtype.kind == "f"}
    for op in reversed(order):
        if op.type == OpType.STOP_GRADIENT or _RULES.get(op.type, True) is None:
            continue
        if any(out in back for out in op.outputs):
            back.update(t for t in op.inputs if t._dtype.kind == "f")
    if x not in back:
        return None
    uses = [op for op in order if any(t is x for t in op.inputs)
            and op.type != OpType.STOP_GRADIENT and _RULES.get(op.type, True) is not None
            and any(out in back for out in op.outputs)]
    # which target: the first one x leads to (forwards along the same ops)
    ahead = {x}
    for op in order:
        if op.type != OpType.STOP_GRADIENT and _RULES.get(op.type, True) is not None \
                and any(t in ahead for t in op.inputs):
            ahead.update(out for out in op.outputs if out in back)
    target = next((t for t in targets if t in ahead), targets[0])
    return uses, target
