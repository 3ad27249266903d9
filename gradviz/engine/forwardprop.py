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
from typing import Any

import numpy as np

from . import graph, nest, ops
from .backprop import UnconnectedGradients, _unconnected_mode
from .graph import Operation, Tensor, plain_name
from .jvp_rules import jvp as _jvp
from .custom import CUSTOM_GRADIENT
from .ops import OpType
from .tape import GradientTape

__all__ = ["ForwardAccumulator"]


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
        if ins is None or op.type == OpType.STOP_GRADIENT:
            return
        outs = op.outputs
        for out in outs:
            if out._dtype.kind == "f":
                break
        else:
            return  # an integer or boolean result moves in no direction
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
            own = _custom_tangents(op, key) if op.type == CUSTOM_GRADIENT else None
            if own is not None and all(t is not None for t in own):
                got = own
            else:
                got = _jvp_of(op, tuple(ins))
                if own is not None:  # a result's own tangent wins over grad_fn's
                    got = tuple(t if t is not None else g for t, g in zip(own, got))
        finally:
            if marker is not None:
                stack.remove(marker)
            stack.extend(later)
        for out, tangent in zip(outs, got):
            if tangent is not None and out._dtype.kind == "f":
                _keep(out, key, tangent)

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
            held = getattr(leaf, "_tangents", None)
            tangent = None if held is None else held.get(self._key)
            if tangent is None and mode is UnconnectedGradients.ZERO:
                tangent = ops.zeros_like(leaf)
            found.append(tangent)
        return nest.pack(primals, found)


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


def _jvp_of(op: Operation, ins: tuple) -> tuple:
    """``jvp(op, ins)``, an op with no gradient rule named as forward mode's need."""
    try:
        return _jvp(op, ins)
    except NotImplementedError as e:
        raise NotImplementedError(
            f"ForwardAccumulator: the tangent of a {op.type} op comes from its gradient "
            f"rule, and it has none: register one with @gv.RegisterGradient({op.type!r}) "
            "(or run it outside the accumulator's block)") from e


def _custom_tangents(op: Operation, key: int) -> tuple | None:
    """A custom gradient's outputs' tangents: those of the values its function computed.

    Its ops ran inside the block, so each result it returned has its tangent
    already; as in TensorFlow, that tangent wins over its ``grad_fn`` transposed,
    which is used only for a result with none.  (None: no result has one, so the
    op does not hold them: ``computed``.)
    """
    computed = op.attrs.get("computed")
    if computed is None:
        return None
    return tuple(getattr(y, "_tangents", {}).get(key) for y in computed())


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
