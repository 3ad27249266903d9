"""An accumulate step in words: a tensor used several times gets the sum of its gradients."""

from __future__ import annotations

from ...trace import AccumulateStep, ArrayData, Trace
from .explanation import Explanation, _pass_note, _times
from .formatting import _sh, _small, format_array
from .names import _name


def _accumulate(trace: Trace, s: AccumulateStep) -> Explanation:
    x = _name(trace, s.tensor)
    n = len(s.contributions)
    uses = []
    for c in s.contributions:
        if c.source == "seed" or c.op is None:
            uses.append("a y (its seed)")
        else:
            uses.append(f"{trace.ops[c.op].type} input {c.input_index}")
    # x*x: the same op uses the tensor for both of its inputs.
    same_op = {c.op for c in s.contributions if c.op is not None}
    how = ""
    if len(same_op) == 1 and n > 1 and all(c.op is not None for c in s.contributions):
        op = trace.ops[next(iter(same_op))]
        sym = {"Mul": "*", "Add": "+", "AddV2": "+", "Sub": "-", "RealDiv": "/", "MatMul": "@",
               "Pow": "**", "Maximum": "max", "Minimum": "min"}.get(op.type)
        if sym is not None and n == 2:
            how = f" ({x}{sym}{x})" if len(sym) <= 2 else f" ({sym}({x}, {x}))"
        else:
            how = f" (all by {op.type})"
    else:
        how = f" (by {', '.join(uses)})"
    small = all(c.grad.values is not None and c.grad.size <= 6 for c in s.contributions)
    if small and s.total.values is not None:
        sum_txt = " + ".join(format_array(c.grad) for c in s.contributions)
        sentence = (f"{x} is used {_times(n)}{how}: its gradient is the sum of the {n} "
                    f"contributions: {sum_txt} = {format_array(s.total)}.")
    else:
        sentence = (f"{x} is used {_times(n)}{how}: its gradient is the sum of the {n} "
                    f"contributions, each of shape {_sh(s.total)}.")
    terms = " + ".join(f"g{k + 1}" for k in range(n))
    formula = f"dL/d{x} = {terms}: {' + '.join(_sh(c.grad) for c in s.contributions)} -> {_sh(s.total)}"
    if small and _small(s.total):
        formula += f" = {format_array(s.total)}"
    return Explanation("accumulate" + _pass_note(trace, s), sentence, formula)


def _accumulate_arrays(trace: Trace, s: AccumulateStep) -> list[tuple[str, ArrayData]]:
    out = []
    for c in s.contributions:
        if c.op is None:
            out.append(("from the seed", c.grad))
        else:
            out.append((f"from {trace.ops[c.op].type} input {c.input_index}", c.grad))
    out.append((f"total dL/d{_name(trace, s.tensor)}", s.total))
    return out
