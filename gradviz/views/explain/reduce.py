"""A reduce step in words: a broadcast input's gradient summed back to its own shape."""

from __future__ import annotations

from ...trace import ArrayData, BackwardStep, ReduceStep, Trace
from .explanation import Explanation, _pass_note
from .formatting import format_array, format_shape
from .names import _name


def _reduce(trace: Trace, s: ReduceStep) -> Explanation:
    x = _name(trace, s.tensor)
    before, after = format_shape(s.shape_before), format_shape(s.shape_after)
    axes = tuple(s.axes)
    kept = tuple(d for i, d in enumerate(s.shape_before) if i not in axes)
    if kept == tuple(s.shape_after):
        how = f"sum(grad, axis={axes})"
    elif len(s.shape_after) == len(s.shape_before):
        how = f"sum(grad, axis={axes}, keepdims=True)"
    else:
        how = f"reshape(sum(grad, axis={axes}), {after})"
    op = trace.ops[s.op]
    sentence = (f"{x} was broadcast from {after} to {before} in the forward pass (input "
                f"{s.input_index} of {op.type}), so its gradient is summed over axes {axes}: "
                f"{before} -> {after}.")
    formula = f"dL/d{x} = {how}: {before} -> {after} = {format_array(s.grad)}"
    return Explanation("broadcast reduction" + _pass_note(trace, s), sentence, formula)


def _reduce_arrays(trace: Trace, s: ReduceStep) -> list[tuple[str, ArrayData]]:
    out = []
    before = _backward_index(trace).get((s.pass_index, s.op))
    if (before is not None and s.input_index < len(before.grads)
            and before.grads[s.input_index] is not None):
        out.append((f"before: summed over axes {tuple(s.axes)}", before.grads[s.input_index]))
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
