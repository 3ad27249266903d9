"""The words for a reduce step: a broadcast input's gradient summed back to its own shape."""

from __future__ import annotations

from ...trace import ReduceStep, Trace
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
