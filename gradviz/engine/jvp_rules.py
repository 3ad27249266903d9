"""How a tangent goes forward through each op: the Jacobian-vector products of forward mode.

A JVP rule is ``rule(op, tangents) -> tangents out``: ``tangents`` holds one
tangent per input (a tensor shaped like that input, or None where the input
carries none) and the rule returns one per output (None where an output gets
none).  The tangent out is the op's Jacobian applied to the tangents in:
``sum_i  d(output)/d(input_i) · tangent_i``.

Every op gets its rule in one of three ways:

- **elementwise ops** (``exp``, ``mul``, ``maximum``, the fused gradient ops
  such as ``TanhGrad``): the Jacobian is diagonal, so the JVP is the gradient
  rule itself with the tangent in the place of the upstream gradient
  (``exp``: ``tangent * y``; ``mul``: ``ta * b + a * tb``), a broadcast input's
  tangent broadcast as its value was.
- **rules of their own** where the JVP is the op itself or a product rule:
  ``reshape``, ``reduce_sum``, ``transpose`` move the tangent as they move the
  values; ``matmul`` is ``ta @ b + a @ tb``; ``cast`` casts it; a softmax
  cross-entropy's is its two derivatives times their tangents, summed.
- **every other op, custom gradients included: the gradient rule transposed**,
  as TensorFlow's ``ForwardAccumulator`` does for an op without a forward
  function of its own.  The gradient rule is linear in the upstream gradient
  ``u``: ``vjp(u) = Jᵀu``.  Running the rule on ``u`` (ones) builds ops, and the
  backward pass over them, seeded with the tangent, gives ``(Jᵀ)ᵀ t = J t``.
  So ``gather``, ``conv2d`` and a user's ``grad_fn`` go forward without a rule
  written for them.

Rules build their results from gradviz ops, so a tangent is a tensor of the
graph: a tape can differentiate it, and an outer accumulator carries a tangent
of it (forward over forward).

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0])
>>> y = gv.exp(x)
>>> (t,) = jvp(y.op, (gv.constant([1.0, 0.0]),))
>>> [round(v, 4) for v in t.numpy().tolist()]
[2.7183, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable
import numpy as np

from . import array_ops, elementwise, graph, ops
from .backprop import UnconnectedGradients, _check_rule_output, _grad_ys, _prepare, unbroadcast
from .gradient_rules import get_gradient_function
from .graph import Operation, Tensor
from .indexed_slices import IndexedSlices
from .ops import OpType

__all__ = ["jvp", "jvp_rule_kind", "jvp_with_kind", "DIAGONAL"]

JvpFn = Callable[[Operation, tuple], tuple]

#: op type -> its JVP rule, for the ops with a rule of their own (see the module's text)
_RULES: dict[str, JvpFn] = {}

#: the elementwise ops, whose JVP is their gradient rule with the tangent as the gradient
DIAGONAL = frozenset({
    OpType.ADD, OpType.ADD_N, OpType.SUB, OpType.MUL, OpType.DIV, OpType.NEG, OpType.POW,
    OpType.SQUARE, OpType.SQRT, OpType.EXP, OpType.LOG, OpType.ABS, OpType.TANH,
    OpType.SIGMOID, OpType.RELU, OpType.MAXIMUM, OpType.MINIMUM, OpType.SELECT,
    OpType.SOFTPLUS, OpType.LEAKY_RELU, OpType.DIV_NO_NAN, OpType.TANH_GRAD,
    OpType.SIGMOID_GRAD, OpType.RELU_GRAD, OpType.SQRT_GRAD, OpType.LEAKY_RELU_GRAD,
    *(e.op_type for e in elementwise.TABLE if any(e.grads)),
})


def jvp(op: Operation, tangents: tuple) -> tuple:
    """The tangents of ``op``'s outputs, given one tangent (or None) per input."""
    return jvp_with_kind(op, tangents)[1]


def jvp_with_kind(op: Operation, tangents: tuple) -> tuple[str, tuple]:
    """:func:`jvp`, and which way it went: "own", "diagonal" or "transposed" (an elementwise
    op goes the transposed way where its rule is not diagonal after all: an input of
    another dtype, or a rule that sums its own broadcast)."""
    rule = _RULES.get(op.type)
    if rule is not None:
        return "own", rule(op, tangents)
    if op.type in DIAGONAL:
        got = _diagonal(op, tangents)
        if got is not None:
            return "diagonal", got
    return "transposed", transposed(op, tangents)


def jvp_rule_kind(op_type: str) -> str:
    """How ``op_type``'s tangent is computed as a rule: "own", "diagonal" or "transposed"
    (:func:`jvp_with_kind` says how one op's was)."""
    if op_type in _RULES:
        return "own"
    return "diagonal" if op_type in DIAGONAL else "transposed"


def _register(*op_types: str) -> Callable[[JvpFn], JvpFn]:
    def register(fn: JvpFn) -> JvpFn:
        for t in op_types:
            _RULES[t] = fn
        return fn
    return register


# ---------------------------------------------------------------- the two general ways


def diagonal(op: Operation, tangents: tuple) -> tuple:
    """An elementwise op's JVP (see :func:`_diagonal`), or its rule transposed where that
    is not diagonal after all."""
    got = _diagonal(op, tangents)
    return transposed(op, tangents) if got is None else got


def _diagonal(op: Operation, tangents: tuple) -> tuple | None:
    """An elementwise op's JVP: its gradient rule, the tangent given as the gradient; None
    where the rule is not diagonal after all (then it goes the transposed way).

    Each input that moves adds its part, the rule's gradient for it given that
    input's tangent (broadcast to the output's shape, for an input that was
    broadcast); an input that does not move adds nothing, also where its
    derivative is infinite (TensorFlow adds it with a tangent of zeros, and
    ``0 * inf`` is NaN there: ``crosscheck/deliberate.py``).
    """
    rule = get_gradient_function(op)
    if rule is None:
        return (None,)
    out = op.outputs[0]
    given = [i for i, t in enumerate(tangents) if t is not None]
    if any(op.inputs[i]._dtype != out._dtype for i in given):
        return None
    parts = []
    n = len(op.inputs)
    for i in given:
        t = tangents[i]
        if t.shape != out.shape:
            t = ops.broadcast(t, out.shape)
        # the rule for input i alone (a rule may skip the inputs it is not asked for)
        op.skip_input_indices = tuple(k for k in range(n) if k != i)
        try:
            part = _check_rule_output(op, rule, rule(op, t))[i]
        finally:
            op.skip_input_indices = ()
        if part is None:
            continue
        if part.shape != out.shape:  # a rule that sums its own broadcast: not diagonal
            return None
        parts.append(part)
    if not parts:
        return (None,)
    return (parts[0] if len(parts) == 1 else ops.added(parts),)


def transposed(op: Operation, tangents: tuple) -> tuple:
    """Any op's JVP from its gradient rule, transposed: ``J t`` from ``u -> Jᵀu``.

    The rule runs on upstream gradients ``u`` of ones, one per float output,
    and gives ``Jᵀu`` per input; the backward pass over the ops it built,
    seeded at each input's gradient with that input's tangent, reaches ``u``
    with ``J t``.  As in TensorFlow's accumulator (run: ``make crosscheck``), a
    float input that does not move takes part with a tangent of zeros, and an
    output that no input's ``Jᵀu`` depends on (``sign``: its gradient is zeros
    whatever ``u``) gets None.
    """
    rule = get_gradient_function(op)
    outs = op.outputs
    if rule is None:
        return (None,) * len(outs)
    aids = [graph.constant(np.ones(o.shape, o._dtype)) if o._dtype.kind == "f" else None
            for o in outs]
    upstream = [ops.zeros_like(o) if a is None else a for a, o in zip(aids, outs)]
    grads = _check_rule_output(op, rule, rule(op, *upstream))
    ys, seeds = [], []
    for x, t, g in zip(op.inputs, tangents, grads):
        if g is None or x._dtype.kind != "f":
            continue
        if t is None:  # a float input that does not move: a tangent of zeros, as TensorFlow
            t = graph.constant(np.zeros(x.shape, x._dtype))
        if isinstance(g, IndexedSlices):
            g = array_ops.dense(g)
        elif not isinstance(g, Tensor):
            g = graph.constant(g, x.dtype)
        if g.shape != x.shape:
            g = unbroadcast(g, x.shape)
        ys.append(g)
        seeds.append(t)
    used = [a for a in aids if a is not None]
    if not ys or not used:
        return (None,) * len(outs)
    walk = _prepare(ys, used, None)
    got = iter(walk.run(_grad_ys(walk.ys, seeds), UnconnectedGradients.NONE, None))
    return tuple(None if a is None else next(got) for a in aids)


# ---------------------------------------------------------------- rules of their own


@_register(OpType.IDENTITY)
def _identity_jvp(op: Operation, tangents: tuple) -> tuple:
    return tangents


@_register(OpType.STOP_GRADIENT)
def _stop_gradient_jvp(op: Operation, tangents: tuple) -> tuple:
    return (None,)  # as TensorFlow: stop_gradient stops a tangent as it stops a gradient


@_register(OpType.CAST)
def _cast_jvp(op: Operation, tangents: tuple) -> tuple:
    out = op.outputs[0]
    (t,) = tangents
    if t is None or out._dtype.kind != "f":
        return (None,)
    return (ops.cast(t, out.dtype),)


@_register(OpType.RESHAPE, OpType.EXPAND_DIMS, OpType.SQUEEZE)
def _reshape_jvp(op: Operation, tangents: tuple) -> tuple:
    (t,) = tangents[:1]
    return (None if t is None else ops.reshaped(t, op.outputs[0].shape),)


@_register(OpType.TRANSPOSE)
def _transpose_jvp(op: Operation, tangents: tuple) -> tuple:
    (t,) = tangents
    return (None if t is None else ops.transpose(t, op.get_attr("perm")),)


@_register(OpType.BROADCAST_TO)
def _broadcast_to_jvp(op: Operation, tangents: tuple) -> tuple:
    (t,) = tangents
    return (None if t is None else ops.broadcast(t, op.outputs[0].shape),)


@_register(OpType.SUM)
def _sum_jvp(op: Operation, tangents: tuple) -> tuple:
    (t,) = tangents
    if t is None:
        return (None,)
    return (ops.summed(t, tuple(op.get_attr("axis")), op.get_attr("keepdims")),)


@_register(OpType.MEAN)
def _mean_jvp(op: Operation, tangents: tuple) -> tuple:
    (t,) = tangents
    if t is None:
        return (None,)
    if not t._value.size:  # the mean of nothing moves nowhere: zeros, as TensorFlow's
        return (ops.zeros_like(op.outputs[0]),)
    return (ops.reduce_mean(t, op.get_attr("axis"), op.get_attr("keepdims")),)


@_register(OpType.MATMUL)
def _matmul_jvp(op: Operation, tangents: tuple) -> tuple:
    (a, b), (ta, tb) = op.inputs, tangents
    flags = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    parts = []
    if ta is not None:
        parts.append(ops.product(ta, b, *flags))  # (ta) b
    if tb is not None:
        parts.append(ops.product(a, tb, *flags))  # a (tb)
    if not parts:
        return (None,)
    return (parts[0] if len(parts) == 1 else ops.added(parts),)


@_register(OpType.SOFTMAX_XENT)
def _softmax_xent_jvp(op: Operation, tangents: tuple) -> tuple:
    # the gradient rule's two derivatives, each times its tangent and summed over the
    # classes: d loss/d logits = softmax(logits) * sum(labels) - labels,
    # d loss/d labels = -log_softmax(logits)
    (labels, logits), (t_labels, t_logits) = op.inputs, tangents
    axis = op.get_attr("axis") % logits.ndim
    parts = []
    if t_logits is not None:
        total = ops.summed(labels, (axis,), keepdims=True)
        slope = ops.softmax_of_logits(op) * total - labels
        parts.append(ops.summed(t_logits * slope, (axis,)))
    if t_labels is not None:
        parts.append(ops.summed(t_labels * ops.negative(ops.log_softmax(logits, axis)),
                                (axis,)))
    if not parts:
        return (None,)
    return (parts[0] if len(parts) == 1 else ops.added(parts),)
