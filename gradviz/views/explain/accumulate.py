"""An accumulate step in words: a tensor used several times gets the sum of its gradients."""

from __future__ import annotations

from ...trace import AccumulateStep, ArrayData, Trace
from .explanation import FIRST_FEW, WIDE, Explanation, _and_some, _pass_note, _times
from .formatting import _named_shape, _sh, format_array
from .formula import Formula
from .names import _name, op_name, op_phrase


def _accumulate(trace: Trace, s: AccumulateStep) -> Explanation:
    x = _name(trace, s.tensor)
    n = len(s.contributions)
    sentence = (f"{x} is used {_times(n)}: {_uses(trace, s)}. Its gradient is the sum of "
                f"the {n} contributions")
    small = n <= WIDE and all(c.grad.values is not None and c.grad.size <= 6
                              for c in s.contributions)
    if small and s.total.values is not None:
        sum_txt = " + ".join(format_array(c.grad) for c in s.contributions)
        sentence += f": {sum_txt} = {format_array(s.total)}."
    else:
        sentence += f", each {_named_shape('', s.total.shape).strip()}."
    shapes = {_sh(c.grad) for c in s.contributions}
    across = (f"{n}\u00d7{shapes.pop()}" if len(shapes) == 1
              else " + ".join(_sh(c.grad) for c in s.contributions))
    if n <= WIDE:
        terms = [f"g{k + 1}" for k in range(n)]
        formula = Formula(f"dL/d{x}", " + ".join(terms),
                          {t: c.grad for t, c in zip(terms, s.contributions)},
                          f"{across} -> {_sh(s.total)}", s.total if small else None)
    else:  # g1 ... gn as one list: a sum of thousands, written and run in a few words
        formula = Formula(f"dL/d{x}", "sum(g, axis=0)", {"g": [c.grad for c in s.contributions]},
                          f"{across} -> {_sh(s.total)}", None, f"g = [g1, \u2026, g{n}]")
    return Explanation("accumulate" + _pass_note(trace, s), sentence, str(formula), (formula,))


def _uses(trace: Trace, s: AccumulateStep) -> str:
    """Who used the tensor, each op by a name no other op has, and which g is whose:
    "by Mul_1 = Mul * x as input 1 (g1), and by Mul = x * x as input 0 (g2) and input 1 (g3)"."""
    by_op: dict = {}
    for k, c in enumerate(s.contributions):
        by_op.setdefault(None if c.source == "seed" else c.op, []).append((k, c))
    parts = []
    for op, uses in list(by_op.items())[:WIDE]:
        if op is None:
            parts.append(f"as a y, by its own seed ({', '.join(f'g{k + 1}' for k, _ in uses)})")
        else:
            inputs = _and_some([f"input {c.input_index} (g{k + 1})" for k, c in uses[:WIDE]],
                               len(uses))
            parts.append(f"by {op_phrase(trace, op)} as {inputs}")
    if len(by_op) > WIDE:
        return ", ".join(parts[:FIRST_FEW]) + f", and by {len(by_op) - FIRST_FEW} more ops"
    return ", and ".join(parts)


def _accumulate_arrays(trace: Trace, s: AccumulateStep) -> list[tuple[str, ArrayData]]:
    out = []
    for k, c in enumerate(s.contributions):
        if c.op is None:
            out.append((f"g{k + 1}: from the seed", c.grad))
        else:
            out.append((f"g{k + 1}: from {op_name(trace, c.op)} input {c.input_index}", c.grad))
    out.append((f"total dL/d{_name(trace, s.tensor)}", s.total))
    return out
