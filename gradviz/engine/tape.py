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

import contextlib
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import graph, nest, ops
from .backprop import (UnconnectedGradients, WalkRecorder, _grad_ys, _topo_ops,
                       _unconnected_mode, _Walk, _warn_none, warn_partial_escapes)
from .gradient_rules import _over_last_axis, passes_no_gradient
from .graph import Operation, Tensor, Variable, plain_name
from .ops import OpType

__all__ = ["GradientTape"]


class GradientTape:
    """Records the ops run inside its ``with`` block on watched tensors.

    Variables used inside the block are watched automatically (unless
    ``watch_accessed_variables=False``), by any op, also one with no
    gradient such as ``w > 0``; constants must be watched with :meth:`watch`.
    A tape that is not ``persistent`` answers one ``gradient`` or
    ``jacobian`` call; entered again after it, it records afresh, as in
    TensorFlow.  ``gradient`` and ``jacobian`` give their results in the
    structure the sources came in (a tensor, or lists, tuples and dicts of
    them, nested).

    ``gv.GradientTape`` is this tape with ``trace_gradient`` and
    ``trace_jacobian`` added (:class:`gradviz.trace.GradientTape`).
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._active = False
        self._clear()

    def _clear(self) -> None:
        """Forget everything recorded: the tape as it was made."""
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
        # ops a ForwardAccumulator entered inside the block made for its tangents, which
        # the tape does not record (see ForwardAccumulator), so that a gradient can say so
        self._hidden: weakref.WeakSet[Operation] = weakref.WeakSet()
        # recorded op -> its inputs that are Variables the tape did not watch when the op read
        # them: TensorFlow reads a Variable afresh for each op, so watching it later does not
        # reach back through this op
        self._unwatched_reads: weakref.WeakKeyDictionary[Operation, tuple[int, ...]] = \
            weakref.WeakKeyDictionary()
        self._used = False

    # -- recording

    def __enter__(self) -> GradientTape:
        if self._active:
            raise ValueError("GradientTape: this tape is already recording; a `with` block "
                             "on it cannot be entered again inside its own `with` block (use "
                             "a second GradientTape to record a gradient of a gradient)")
        if self._used and not self.persistent:
            self._clear()  # its one gradient was taken: it records afresh, as in TensorFlow
        self._start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop()

    def _start(self) -> None:
        # it records the ops of the thread that runs its `with` block, and only those,
        # as TensorFlow's tapes do
        self._active = True
        self._recording_for = graph.this_thread().tapes
        self._recording_for.append(self)

    def _stop(self) -> None:
        self._active = False
        self._recording_for.remove(self)

    def reset(self) -> None:
        """Forget everything recorded so far, inside the ``with`` block; recording goes on.

        Equivalent to leaving the block and entering a new tape's: a gradient
        afterwards sees only the ops run after ``reset()``, and only the
        tensors watched after it.
        """
        if not self._active:
            raise ValueError("GradientTape.reset: the tape is not recording; call reset() "
                             "inside its `with` block")
        self._clear()

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """A block in which the tape records nothing (ops there are not differentiated).

        >>> import gradviz as gv
        >>> x = gv.constant(3.0)
        >>> with gv.GradientTape() as tape:
        ...     tape.watch(x)
        ...     with tape.stop_recording():
        ...         y = x * x          # not recorded: a constant to the tape
        ...     z = x * y
        >>> float(tape.gradient(z, x))  # y's value, 9, not d(x**3)/dx = 27
        9.0
        """
        if not self._active:
            raise RuntimeError("GradientTape.stop_recording: the tape is not recording; use "
                               "it inside the tape's `with` block")
        stack = self._recording_for
        at = stack.index(self)
        self._stop()
        try:
            yield
        finally:
            # back where it was among the thread's tapes and accumulators: which of them
            # records an accumulator's tangents depends on that order
            self._active = True
            stack.insert(min(at, len(stack)), self)

    def watch(self, tensor: Any) -> None:
        """Track ``tensor`` (or each tensor of a list, tuple or dict, nested) so ops on it
        are recorded.  Anything but a tensor is a ValueError, as in TensorFlow."""
        try:
            tensors = nest.flatten(tensor, "tensor", allow_empty=True)
        except TypeError as e:
            raise ValueError(f"GradientTape.watch: {e}") from None
        for t in tensors:
            if t._dtype.kind != "f":
                warnings.warn(f"GradientTape.watch: {plain_name(t.name)} has dtype "
                              f"{t.dtype.name}; only float tensors can be watched (integer "
                              "tensors have no gradient)", stacklevel=2)
                self._refused.add(t)
                continue
            self._watched[t] = None
            self._tracked.add(t)

    def watched_variables(self) -> list[Variable]:
        """The Variables this tape watches, in the order they were created (as in
        TensorFlow; tensors given to :meth:`watch` are watched too, but are not listed)."""
        return sorted((t for t in self._watched if isinstance(t, Variable)),
                      key=lambda v: v._serial)

    def _record(self, op: Operation) -> None:
        # called by the graph for every op created while the tape is active
        tracked = self._tracked
        if self.watch_accessed_variables:  # any op reads its Variables, so they are watched
            for t in op.inputs:
                if isinstance(t, Variable) and t.watchable and t not in tracked:
                    self._watched[t] = None
                    tracked.add(t)
        if op.type == OpType.STOP_GRADIENT:
            return  # as TensorFlow's tape: stop_gradient is not recorded (ops without a
            # gradient, such as zeros_like, are: what they make is on the tape)
        for t in op.inputs:
            if t in tracked and t._dtype.kind == "f":
                self._ops.add(op)
                for out in op.outputs:
                    tracked.add(out)
                unwatched = tuple(i for i, v in enumerate(op.inputs)
                                  if isinstance(v, Variable) and v not in tracked)
                if unwatched:
                    self._unwatched_reads[op] = unwatched
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

    def _walk(self, targets: list[Tensor], sources: list[Tensor], jacobian: bool = False
              ) -> tuple[_Walk, Callable[[Tensor], str | None]]:
        """The walk for ``targets`` and ``sources``, and what says why a source that gets no
        gradient gets none when that is the user's slip (None when it is not).

        As TensorFlow's tape does (``make crosscheck`` holds it to that): a source
        gets a gradient only if the tape watched it or one of its recorded ops made
        it, or if it is itself a target.  Any other source gets None, also when it
        feeds recorded ops: an unwatched constant, the output of stop_gradient, a
        cast from an integer.  A ``jacobian`` differentiates each element of the
        target apart, so a target the tape did not watch or make gets nothing
        there, even as its own source.
        """
        # why each source gets no gradient, given the name a trace shows for it
        excluded: dict[Tensor, Callable[[str], str]] = {}
        slips: dict[Tensor, str] = {}  # source -> why, for the warning (in the engine's names)
        seed_only: set[Tensor] = set()  # unwatched targets that get their own seed only
        for s in sources:
            if s in self._tracked or s._dtype.kind != "f" or s in excluded:
                continue  # (an integer: the result explains it)
            if any(s is t for t in targets):
                if jacobian:
                    if isinstance(s, Variable) and s.watchable and self.watch_accessed_variables:
                        continue  # a Jacobian reads the target while recording: watched then
                    found: tuple[Callable[[str, str], str], Tensor] | None = (_own_target, s)
                elif self._used_on_the_way_back(s, targets):
                    found = (_own_target_used, s)
                else:  # its own output gradient, and nothing through the ops that read it
                    seed_only.add(s)
                    continue
            else:
                found = self._why_none(s, targets)
            if found is None:
                continue  # not connected even beyond the tape: the walk says so
            slip, target = found
            nature = _not_on_tape(s)  # a stop_gradient's output, a cast from an integer
            if nature is not None and found[0] not in (_own_target, _own_target_used):
                slip = lambda n, _, nature=nature: nature(n)  # noqa: E731
            slips[s] = slip(plain_name(s.name), plain_name(target.name))
            # the reason a trace shows, in the trace's names (the walk, made below, knows them)
            excluded[s] = lambda n, slip=slip, target=target: slip(  # noqa: E731
                n, plain_name(walk.trace_name(target)))
        walk = _Walk(targets, sources, set(), self._ops, excluded, seed_only,
                     self._unwatched_reads)

        def explain(x: Tensor) -> str | None:
            if x in slips:
                return slips[x]
            found = self._why_none(x, targets)  # watched, yet no gradient came back
            return None if found is None else found[0](plain_name(x.name),
                                                       plain_name(found[1].name))

        return walk, explain

    def _used_on_the_way_back(self, x: Tensor, targets: list[Tensor]) -> bool:
        """Whether a recorded op that the way back from ``targets`` passes uses ``x`` itself
        (never a Variable, which TensorFlow reads afresh for each op, nor an input that
        TensorFlow's op of that kind reads through a copy: see ``_through_a_copy``)."""
        if isinstance(x, Variable):
            return False
        seen: set[Operation] = set()
        stack = list(targets)
        while stack:
            t = stack.pop()
            op = t._op
            if op is None or op in seen or op not in self._ops:
                continue
            seen.add(op)
            if any(i is x for i in op.inputs) and not _through_a_copy(op):
                return True
            stack.extend(op.inputs)
        return False

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
                auto = ("a Variable made with trainable=False is not watched automatically"
                        if isinstance(x, Variable) and not x.trainable else
                        "Variables are watched automatically")
                return (lambda n, _: f"{n} was not watched by the tape, and no op the tape "
                        "recorded made it: call tape.watch() on it inside the `with` block, "
                        f"before using it ({auto})"), target
        elif any(i in self._unwatched_reads.get(op, ()) and op.inputs[i] is x
                 for op in uses for i in range(len(op.inputs))):
            return (lambda n, _: f"{n} was read by an op of the tape's `with` block before the "
                    "tape watched it, and each op reads a Variable afresh, so watching it later "
                    "does not reach back through that op: call tape.watch() on it before using "
                    "it"), target
        elif any(op in self._unrecorded for op in uses):
            return (lambda n, _: f"{n} was used in the tape's `with` block before it was "
                    "watched, so the tape did not record those ops: call tape.watch() on it "
                    "before using it"), target
        if any(op in self._hidden for op in uses):
            return (lambda n, t: f"{t} is (or comes from) a tangent that a ForwardAccumulator "
                    "entered inside the tape's `with` block computed, and a tape records a "
                    "tangent's ops only when it was entered before the accumulator, as in "
                    "TensorFlow: enter the tape first, then the accumulator, to differentiate "
                    f"a tangent (reverse over forward)"), target
        watch = "" if x in self._tracked or isinstance(x, Variable) and x.trainable else (
            ", and call tape.watch() on {n} there")
        return (lambda n, t: f"{t} depends on {n} through ops computed outside the tape's "
                f"`with` block, which the tape did not record: compute {t} inside the block"
                + watch.format(n=n)), target

    def _gradient(self, target: Any, sources: Any, output_gradients: Any,
                  unconnected_gradients: Any, rec: WalkRecorder | None) -> tuple[_Walk, list]:
        self._begin("gradient")
        mode = _unconnected_mode(unconnected_gradients)
        walk, explain = self._walk(nest.flatten(target, "target"),
                                   nest.flatten(sources, "sources"))
        seeds = _grad_ys(walk.ys, _seeds_like(target, output_gradients), "output_gradients")
        grads = walk.run(seeds, mode, rec)
        if walk.missing:
            self._warn(walk, mode, "GradientTape.gradient", 1, explain)
        warn_partial_escapes(walk, "GradientTape.gradient")
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

        ``target`` is a tensor or a structure of them (lists, tuples, dicts,
        nested), ``output_gradients`` one per target tensor in the same
        structure (or a flat list).  The result has the structure of
        ``sources``.  A source that is also a target gets that target's output
        gradient (ones by default) on top of any other; unwatched, it gets that
        alone, or None where a recorded op on the way back from the targets
        uses it (as TensorFlow's tape, run: ``make crosscheck``).

        >>> import gradviz as gv
        >>> x = gv.constant([1.0, 2.0])
        >>> with gv.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.gradient(y, x, output_gradients=gv.constant([2.0, 3.0])).numpy().tolist()
        [4.0, 12.0]
        """
        _, grads = self._gradient(target, sources, output_gradients, unconnected_gradients, None)
        return nest.pack(sources, grads)

    def _jacobian_walk(self, target: Any, sources: Any, unconnected_gradients: Any
                       ) -> tuple[UnconnectedGradients, Tensor, list[Tensor], _Walk,
                                  Callable[[Tensor], str | None]]:
        """A Jacobian's start, in either mode: the call counted, its mode, its one target,
        its sources, their walk and what explains a None."""
        self._begin("jacobian")
        mode = _unconnected_mode(unconnected_gradients)
        y = _one(target, "jacobian", "target")
        srcs = nest.flatten(sources, "sources")
        walk, explain = self._walk([y], srcs, jacobian=True)
        return mode, y, srcs, walk, explain

    def _jacobian(self, target: Any, sources: Any, unconnected_gradients: Any,
                  rec: WalkRecorder | None) -> tuple[_Walk, list, int]:
        mode, y, srcs, walk, explain = self._jacobian_walk(target, sources,
                                                           unconnected_gradients)
        n = int(np.prod(y.shape, dtype=np.int64))
        rows: list[list[Tensor | None]] = []
        for k in range(n):  # one vector-Jacobian product per element of the target
            seed = _one_hot(y, k, batched=False)
            if rec is not None:
                rec.pass_index = k
            rows.append(walk.run([(seed, True)], mode, rec))
        if n and walk.missing:
            self._warn(walk, mode, "GradientTape.jacobian", n, explain)
        warn_partial_escapes(walk, "GradientTape.jacobian", n)
        results = []
        for j, s in enumerate(srcs):
            results.append(_stacked([r[j] for r in rows], s, y.shape + s.shape, 0))
        return walk, results, n

    def jacobian(self, target: Any, sources: Any, unconnected_gradients: Any = "none",
                 parallel_iterations: int | None = None,
                 experimental_use_pfor: bool = True) -> Any:
        """The full Jacobian: shape ``target.shape + source.shape`` per source, in the
        structure of ``sources``.

        Costs one backward pass per element of ``target``; a vector-Jacobian
        product (:meth:`gradient` with ``output_gradients``) costs one.
        ``parallel_iterations`` and ``experimental_use_pfor`` are TensorFlow's
        ways to run those passes together; they are checked and have no
        effect here (the passes are the lesson).
        """
        _loop_options("jacobian", parallel_iterations, experimental_use_pfor)
        _, results, _ = self._jacobian(target, sources, unconnected_gradients, None)
        return nest.pack(sources, results)

    def batch_jacobian(self, target: Any, source: Any, unconnected_gradients: Any = "none",
                       parallel_iterations: int | None = None,
                       experimental_use_pfor: bool = True) -> Tensor | None:
        """Per-example Jacobians: ``(batch,) + target.shape[1:] + source.shape[1:]``.

        As in TensorFlow, ``result[i]`` is d target[i] / d source[i] when
        example ``i`` of the target depends only on example ``i`` of the
        source (the rows of a batch are independent).  It takes one backward
        pass per element of one example, each seeding that element in every
        example at once: where rows do depend on each other, their
        gradients add up, as TensorFlow's do.  Both need rank 2 or more and
        the same first dimension.  Where nothing reaches the source, the result
        is zeros of the target's dtype, never None, whatever
        ``unconnected_gradients`` says (TensorFlow's, run, are).
        """
        _loop_options("batch_jacobian", parallel_iterations, experimental_use_pfor)
        y = _one(target, "batch_jacobian", "target")
        s = _one(source, "batch_jacobian", "source")
        for what, t in (("target", y), ("source", s)):
            if t.ndim < 2:
                raise ValueError(f"GradientTape.batch_jacobian: {what} has shape {t.shape} "
                                 f"(rank {t.ndim}); it must have rank 2 or more, the first "
                                 "dimension being the batch")
        if y.shape[0] != s.shape[0]:
            raise ValueError(f"GradientTape.batch_jacobian: the first (batch) dimensions of "
                             f"target {y.shape} and source {s.shape} must match")
        self._begin("batch_jacobian")
        mode = _unconnected_mode(unconnected_gradients)
        walk, explain = self._walk([y], [s], jacobian=True)
        m = int(np.prod(y.shape[1:], dtype=np.int64))
        column = []
        for k in range(m):  # element k of every example at once
            seed = _one_hot(y, k, batched=True)
            column.append(walk.run([(seed, True)], mode, None)[0])
        # as TensorFlow's: zeros of the target's dtype where nothing reaches the source,
        # whatever unconnected_gradients says
        if m and walk.missing:
            self._warn(walk, UnconnectedGradients.ZERO, "GradientTape.batch_jacobian", m,
                       explain)
        warn_partial_escapes(walk, "GradientTape.batch_jacobian", m)
        shape = y.shape + s.shape[1:]
        jac = _stacked(column, s, shape, 1)
        return graph.constant(np.zeros(shape, y._dtype)) if jac is None else jac


@contextlib.contextmanager
def stopped_tapes() -> Iterator[None]:
    """A block in which no tape of the calling thread records (each active tape's
    ``stop_recording``)."""
    with contextlib.ExitStack() as stack:
        for t in [t for t in graph.this_thread().tapes if isinstance(t, GradientTape)]:
            stack.enter_context(t.stop_recording())
        yield


def _one_hot(y: Tensor, k: int, batched: bool) -> Tensor:
    """A seed shaped like ``y`` with a 1 at element ``k`` (of each example, ``batched``)."""
    rows, per_row = (y.shape[0], y.shape[1:]) if batched else (1, y.shape)
    one_hot = np.zeros((rows, int(np.prod(per_row, dtype=np.int64))), y._dtype)
    one_hot[:, k] = 1
    with graph.name_scope("gradients"):
        return graph.constant(one_hot.reshape(y.shape), name="one_hot")


def _one(value: Any, where: str, what: str) -> Tensor:
    """The one tensor ``value`` is (or holds, alone in a structure)."""
    tensors = nest.flatten(value, what)
    if len(tensors) != 1:
        raise ValueError(f"GradientTape.{where}: {what} must be one tensor, got a structure of "
                         f"{len(tensors)}; call {where} once per tensor (or stack them)")
    return tensors[0]


def _stacked(parts: list[Tensor | None], source: Tensor, shape: tuple[int, ...],
             axis: int) -> Tensor | None:
    """One Jacobian from its passes' gradients (one per target element, each shaped as
    ``source``), stacked on ``axis`` and shaped ``shape``; None when no pass reached
    ``source``.  An empty target gives zeros."""
    if parts and all(g is None for g in parts):
        return None
    if not parts:
        jac = graph.constant(np.zeros(shape, source._dtype))
    else:
        jac = ops.reshape(ops.stack([ops.zeros_like(source) if g is None else g
                                     for g in parts], axis=axis), shape)
    return jac if jac._dtype == source._dtype else ops.cast(jac, source.dtype)


def _loop_options(where: str, parallel_iterations: Any, use_pfor: Any) -> None:
    """TensorFlow's options for running a Jacobian's passes together: checked, unused."""
    if parallel_iterations is not None and (isinstance(parallel_iterations, bool) or not
                                            isinstance(parallel_iterations, int) or
                                            parallel_iterations < 1):
        raise ValueError(f"GradientTape.{where}: parallel_iterations must be a positive int or "
                         f"None, got {parallel_iterations!r}")
    if not isinstance(use_pfor, bool):
        raise TypeError(f"GradientTape.{where}: experimental_use_pfor must be True or False, "
                        f"got {use_pfor!r}")


def _seeds_like(target: Any, output_gradients: Any) -> Any:
    """``output_gradients`` as ``_grad_ys`` takes them: one, or one per target tensor.

    Given for a nested target, they come in the target's structure (or flat,
    one per target tensor, as TensorFlow also takes them).
    """
    if output_gradients is None or isinstance(target, Tensor) or (
            isinstance(target, (list, tuple)) and all(isinstance(t, Tensor) for t in target)):
        return output_gradients  # _grad_ys checks them against the targets
    return nest.flatten_up_to(target, output_gradients, "output_gradients")


def _through_a_copy(op: Operation) -> bool:
    """Whether TensorFlow's op of this kind reads its inputs through an op of their own
    (a reshape to two dimensions, a transpose to make the axis the last), which is not
    recorded for an unwatched input: softmax_cross_entropy_with_logits always, softmaxes
    over another axis than the last."""
    if op.type == OpType.SOFTMAX_XENT:
        return True
    return op.type in (OpType.SOFTMAX, OpType.LOG_SOFTMAX) and not _over_last_axis(op)


def _own_target(x: str, _: str) -> str:
    return (f"{x} is the target itself, but the tape neither watched it nor made it, so a "
            "Jacobian, which differentiates each of its elements apart, reaches nothing "
            "(a gradient would give its output gradient)")


def _own_target_used(x: str, _: str) -> str:
    return (f"{x} is also a target, but the tape neither watched it nor made it, and an op it "
            f"recorded on the way back from the targets uses {x}: TensorFlow's tape then drops "
            f"{x}'s own output gradient too")


def _not_on_tape(source: Tensor) -> Callable[[str], str] | None:
    """Why a tape has no gradient for the unwatched ``source`` by the graph's nature (a
    sentence about a given name), or None when the graph does not say."""
    if source.op.type == OpType.STOP_GRADIENT:
        return (lambda x: f"{x} is the output of stop_gradient, which a tape does not record, "
                          "and the tape did not watch it, so no recorded op leads to it")
    cast_from = source.op.inputs[0] if source.op.type == OpType.CAST else None
    if cast_from is not None and not cast_from.dtype.is_floating:
        return (lambda x: f"{x} is a cast from the integer tensor {plain_name(cast_from.name)}, "
                          "which a tape cannot watch, and the tape did not watch it, so no "
                          "recorded op leads to it")
    return None


def _uses_toward(x: Tensor, targets: list[Tensor]) -> tuple[list[Operation], Tensor] | None:
    """The ops that use ``x`` on a path a gradient could flow along to a target, had every
    op been recorded (through float tensors, not through stop_gradient or ops without
    a gradient), and the first target so reached; None if there is no such path."""
    order = _topo_ops(targets, None)
    # backwards from the targets: the tensors a gradient could come back to
    back = {t for t in targets if t._dtype.kind == "f"}
    for op in reversed(order):
        if passes_no_gradient(op.type):
            continue
        if any(out in back for out in op.outputs):
            back.update(t for t in op.inputs if t._dtype.kind == "f")
    if x not in back:
        return None
    uses = [op for op in order if any(t is x for t in op.inputs)
            and not passes_no_gradient(op.type) and any(out in back for out in op.outputs)]
    # which target: the first one x leads to (forwards along the same ops)
    ahead = {x}
    for op in order:
        if not passes_no_gradient(op.type) and any(t in ahead for t in op.inputs):
            ahead.update(out for out in op.outputs if out in back)
    target = next((t for t in targets if t in ahead), targets[0])
    return uses, target
