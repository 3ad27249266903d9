"""A reduce step in words: a broadcast input's gradient summed back to its own shape."""

from __future__ import annotations

from ...trace import ArrayData, BackwardStep, ReduceStep, Trace
from .explanation import Explanation, _pass_note
from .formatting import _small, format_array, format_shape
from .formula import Formula
from .names import _name, op_name


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
    op = trace.ops[s.op]
    sentence = (f"{x} was broadcast from {after} to {before} in the forward pass (input "
                f"{s.input_index} of {op_name(trace, s.op)}), so its gradient is summed over "
                f"axes {axes}: {before} -> {after}.")
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


def _reduce_arrays(trace: Trace, s: ReduceStep) -> list[tuple[str, ArrayData]]:
    out = []
    grad = _broadcast_grad(trace, s)
    if grad is not None:
        out.append((f"before: summed over axes {tuple(s.axes)}", grad))
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
