"""A reduce step in words: a broadcast input's gradient summed back to its own shape."""

from __future__ import annotations

from ...trace import ArrayData, BackwardStep, ReduceStep, Trace
from .explanation import Explanation, _pass_note
from .formatting import _small, format_array, format_shape
from .formula import Formula
from .names import _name, gradient_target, op_name
from .spelling import _spelling


def _reduce(trace: Trace, s: ReduceStep) -> Explanation:
    x = _name(trace, s.tensor)
    before, after = format_shape(s.shape_before), format_shape(s.shape_after)
    axes = tuple(s.axes)
    kept = tuple(d for i, d in enumerate(s.shape_before) if i not in axes)
    axis = str(axes[0]) if len(axes) == 1 else str(axes)
    if kept == tuple(s.shape_after):
        how = f"sum(grad, axis={axis})"
    elif len(s.shape_after) == len(s.shape_before):
        how = f"sum(grad, axis={axis}, keepdims=True)"
    else:
        how = f"reshape(sum(grad, axis={axis}), {tuple(s.shape_after)})"
    called = op_name(trace, s.op)
    sentence = (f"{x} was broadcast from {after} to {before} in the forward pass (input "
                f"{s.input_index} of {called}), so its gradient is summed over axes {axes}: "
                f"{before} -> {after}. The sum takes {_broadcast_target(trace, s)}, the gradient "
                f"{called} sent it, to dL/d{x}.")
    grad = _broadcast_grad(trace, s)
    formula = Formula(f"dL/d{x}", how, {"grad": grad} if grad is not None else {},
                      f"{before} -> {after}", s.grad)
    text = str(formula) if _small(s.grad) else f"{formula} = {format_array(s.grad)}"
    return Explanation("broadcast reduction" + _pass_note(trace, s), sentence, text,
                       (formula,) if grad is not None else ())


def _broadcast_grad(trace: Trace, s: ReduceStep) -> ArrayData | None:
    """The gradient before the sum: what the op's backward step gave this input."""
    before = _backward_index(trace).get((s.pass_index, s.op))
    if (before is not None and s.input_index < len(before.grads)
            and before.grads[s.input_index] is not None):
        return before.grads[s.input_index]
    return None


def _broadcast_target(trace: Trace, s: ReduceStep) -> str:
    """The gradient before the sum by the name its op's backward step gives it:
    ``dL/d(b broadcast)`` (see :func:`gradient_target`)."""
    step = _backward_index(trace).get((s.pass_index, s.op))
    use = _name(trace, s.tensor)
    if step is not None:
        uses = _spelling(trace, step).uses
        use = uses[s.input_index] if s.input_index < len(uses) else use
    return gradient_target(use, s.shape_before, s.shape_after)


def _reduce_arrays(trace: Trace, s: ReduceStep) -> list[tuple[str, ArrayData]]:
    out = []
    grad = _broadcast_grad(trace, s)
    if grad is not None:
        out.append((f"before: {_broadcast_target(trace, s)}, summed over axes "
                    f"{tuple(s.axes)}", grad))
    out.append((f"after: dL/d{_name(trace, s.tensor)}", s.grad))
    return out


def _backward_index(trace: Trace) -> dict[tuple[int, int], BackwardStep]:
    """(pass, op) -> that op's backward step, built once per trace.

    A reduce step shows the gradient before its reduction, which its op's
    backward step holds; this keeps finding it O(1).
    """
    idx = trace.__dict__.get("_gv_backward_index")
    if idx is None:
        idx = {(s.pass_index, s.op): s for s in trace.steps if isinstance(s, BackwardStep)}
        trace.__dict__["_gv_backward_index"] = idx
    return idx
