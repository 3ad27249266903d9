"""A cut step in words: where and why the gradient stops flowing."""

from __future__ import annotations

from ...trace import CUT_REASONS, ArrayData, CutStep, OpInfo, Trace
from .explanation import Explanation, _pass_note
from .formatting import _named_shape, _small, format_array
from .names import _name, op_name


def _cut(trace: Trace, s: CutStep) -> Explanation:
    x = _name(trace, s.tensor)
    reason = CUT_REASONS.get(s.reason, s.reason)
    op = trace.ops[s.op] if s.op is not None else None
    called = op_name(trace, s.op) if op is not None else None
    if s.reason == "stop_gradient":
        # the StopGradient op's one step: what arrives at it, and that none goes on
        sentence = (f"{_arriving(trace, s, op)}"
                    if op is not None and s.upstream is not None else
                    f"The flow stops at {called or 'StopGradient'}: ")
        sentence += f"{reason}, so {x} gets nothing this way."
        formula = f"dL/d{x} through {called or 'StopGradient'} = none (cut)"
    elif s.reason == "stop_gradients":
        via = f" to the inputs of {called}" if op else ""
        sentence = (f"{x} is in stop_gradients: its gradient arrives but does not flow through "
                    f"it{via}. It is held constant (a partial, not a total, derivative).")
        formula = f"dL/d{x} is kept; d{x}/d(inputs) treated as 0 (cut)"
    elif s.reason == "integer":
        dtype = trace.tensors[s.tensor].dtype
        where = f" at {called}" if op else ""
        sentence = f"The flow stops{where}: {x} has dtype {dtype}, and {reason}."
        formula = f"dL/d{x} = none ({dtype} is not differentiable)"
    elif s.reason == "not_watched":
        where = f"{called} " if op else ""
        sentence = f"The flow stops at {where}{x}: {reason}."
        formula = f"dL/d{x} = none (not recorded by the tape)"
    else:
        where = f"{called} input {s.input_index}" if op is not None else x
        sentence = f"The flow stops at {where}: {reason}."
        formula = f"dL/d{x} = none (cut)"
    return Explanation(f"cut: {s.reason}" + _pass_note(trace, s), sentence, formula)


def _arriving(trace: Trace, s: CutStep, op: OpInfo) -> str:
    """What arrives at a StopGradient, as its backward step would have said it."""
    u = s.upstream
    value = f" = {format_array(u)}" if _small(u) else ""
    out = _named_shape(_name(trace, op.outputs[0]), u.shape)
    return (f"{op_name(trace, s.op)} of {_name(trace, s.tensor)} gets grad{value}, the gradient "
            f"arriving at its output {out}, and passes none of it on: ")


def _cut_arrays(trace: Trace, s: CutStep) -> list[tuple[str, ArrayData]]:
    # a cut produces nothing; at a StopGradient, the gradient that stops there
    if s.upstream is None or s.op is None:
        return []
    return [(f"upstream dL/d{_name(trace, trace.ops[s.op].outputs[0])}", s.upstream)]
