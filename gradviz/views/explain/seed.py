"""A seed step in words: a y's first gradient (ones, grad_ys, or a Jacobian's one-hot row)."""

from __future__ import annotations

from ...trace import ArrayData, SeedStep, Trace
from .explanation import Explanation, _pass_note
from .formatting import _named_shape, _small, format_array, format_shape
from .formula import Formula
from .names import _formula_names, _name


def _seed(trace: Trace, s: SeedStep) -> Explanation:
    y = _name(trace, s.tensor)
    shape = format_shape(s.grad.shape)
    scalar = not s.grad.shape
    if s.given:
        what = f"{y} gets the given seed {_named_shape(f'grad_ys[{s.y_index}]', s.grad.shape)}"
        formula = Formula(f"dL/d{y}", f"grad_ys[{s.y_index}]", {"grad_ys": {s.y_index: s.grad}},
                          result=s.grad)
    else:
        what = (f"{y} gets the default seed 1" if scalar else
                f"{y} gets the default seed: ones shaped like {y}, {shape}")
        token = _formula_names(trace, [s.tensor], {"ones_like"})[s.tensor]
        formula = Formula(f"dL/d{y}", f"ones_like({token})", {token: trace.tensors[s.tensor].value},
                          result=s.grad)
    text = str(formula) if _small(s.grad) else f"{formula} = {format_array(s.grad)}"
    if trace.method == "tape.jacobian" and s.given:
        row = s.pass_index + 1
        what = (f"pass {row} of {trace.passes} seeds {y} with a one-hot vector "
                f"{format_array(s.grad)}: this pass computes row {row} of the Jacobian "
                f"(one backward pass per element of {y})")
        text = f"dL/d{y} = e_{row} = {format_array(s.grad)}"
        formula = None
    elif s.num_ys > 1:
        what += (f". It is y number {s.y_index + 1} of {s.num_ys} ys: their gradients are "
                 "summed, so every x gets the sum over all ys")
        text += f"   (L = the sum over the {s.num_ys} ys of sum(grad_y * y))"
    elif s.given:
        what += (": it weights each element of the output, so the pass computes the "
                 "vector-Jacobian product grad_ys * dy/dx")
    elif scalar:
        what += f", as d{y}/d{y} = 1"
    else:
        what += (": the pass computes the gradient of sum(y), so a non-scalar y is "
                 "implicitly summed")
    also = [k for k, x in enumerate(trace.xs) if x == s.tensor]
    if also and not (trace.method == "tape.jacobian" and s.given):
        what += (f". {y} is also a source, xs[{also[0]}]: this seed is part of its own "
                 f"gradient, as d{y}/d{y} is 1 for each element")
    return Explanation("seed" + _pass_note(trace, s), what + ".", text,
                       (formula,) if formula is not None else ())


def _seed_arrays(trace: Trace, s: SeedStep) -> list[tuple[str, ArrayData]]:
    label = f"seed grad_ys[{s.y_index}]" if s.given else "seed: ones (default)"
    return [(label, s.grad)]
