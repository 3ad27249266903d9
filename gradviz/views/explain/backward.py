"""A backward step in words: the op's rule applied to its own tensors, with shapes."""

from __future__ import annotations

import numpy as np

from ...trace import ArrayData, BackwardStep, OpInfo, Trace
from .explanation import Explanation, _and, _pass_note
from .formatting import _sh, _small, format_array, format_shape
from .names import _fill, _name, _number
from .rules import _MATMUL, OpRule
from .spelling import _Spelling, _fill_idea, _spelling


def _backward(trace: Trace, s: BackwardStep) -> Explanation:
    op = trace.ops[s.op]
    spell = _spelling(trace, s)
    rule = spell.rule
    outs = [o for k, o in enumerate(op.outputs)
            if k < len(s.upstream) and s.upstream[k] is not None]
    up = s.upstream[0] if len(s.upstream) == 1 else None
    up_txt = (f"grad, the gradient arriving at its output {_name(trace, op.outputs[0])} "
              f"(shape {_sh(up)}),"
              if len(op.outputs) == 1
              else f"the gradients arriving at its outputs "
                   f"{', '.join(_name(trace, o) for o in outs)},")
    # The inputs by name and shape, "X (2,1) and W ()", as the formulas write them.
    inputs = _and([f"{spell.names[t]} {format_shape(trace.tensors[t].shape)}"
                   for t in op.inputs])
    got = [i for i, g in enumerate(s.grads) if g is not None and i < len(op.inputs)]
    skipped = [i for i, g in enumerate(s.grads) if g is None and i < len(op.inputs)]
    if rule is None:
        sentence = (f"{s.op_type} '{op.name}' has the gradient function {s.rule}, which turns "
                    f"{up_txt} into a gradient for each of its inputs, {inputs}.")
    else:
        sentence = (f"{s.op_type} of {inputs} gets {up_txt} and "
                    f"{_fill_idea(rule, spell)}.")
    formulas = _backward_formulas(trace, s, rule, spell, got)
    if skipped:
        # "the constant 2", not a bare "2", where the input is a Python number
        names = ", ".join(("the constant " if _number(trace.tensors[op.inputs[i]]) else "")
                          + spell.names[op.inputs[i]] for i in skipped)
        names = names.replace("the", "The", 1) if names.startswith("the ") else names
        why = []
        for i in skipped:
            t = trace.tensors[op.inputs[i]]
            if i < len(s.needed) and not s.needed[i]:
                why.append("leads to none of the xs")
            elif rule is not None and rule.formulas[min(i, len(rule.formulas) - 1)] is None:
                why.append(f"{s.op_type} passes none by design")
            elif t.dtype and np.dtype(t.dtype).kind not in "fc":
                why.append("is an integer tensor")
            else:
                why.append("gets none from this rule")
        reasons = sorted(set(why))
        sentence += (f" {names} {'needs' if len(skipped) == 1 else 'need'} no gradient "
                     f"({' / '.join(reasons)}).")
    if s.nonfinite:
        sentence += " Warning: a gradient produced here holds NaN or Inf."
    # Small results are worth reading in full: "... -> () = 0.5".
    formulas = [f + (f" = {format_array(s.grads[i])}" if _small(s.grads[i]) else "")
                for f, i in zip(formulas, got)]
    formula = "; ".join(formulas) if formulas else "no input needs a gradient"
    return Explanation(f"{s.op_type} backward" + _pass_note(trace, s), sentence, formula)


def _backward_formulas(trace: Trace, s: BackwardStep, rule: OpRule | None,
                       spell: _Spelling, got: list[int]) -> list[str]:
    """The formula for each input in ``got``, in the op's own tensors, not the rule's letters.

    For pred = X*W + b, Mul's reads "dL/dW = grad * X", never "dL/db = grad * a".
    """
    op = trace.ops[s.op]
    lhs = [f"dL/d{u}" for u in spell.uses]
    if rule is not None and s.op_type == "MatMul":
        return _matmul_formulas(trace, op, s, spell.by_word, lhs)
    out = []
    for i in got:
        rhs = _fill(spell.templates[i], spell.by_word | dict.fromkeys(spell.index, str(i)))
        out.append(f"{lhs[i]} = {rhs}: {_up_shapes(s)} -> {_sh(s.grads[i])}")
    return out


def _up_shapes(s: BackwardStep) -> str:
    shapes = [_sh(u) for u in s.upstream if u is not None]
    return ", ".join(shapes) if shapes else "()"


def _t(shape: tuple[int, ...]) -> tuple[int, ...]:
    return shape[:-2] + (shape[-1], shape[-2]) if len(shape) >= 2 else shape


def _matmul_formulas(trace: Trace, op: OpInfo, step: BackwardStep,
                     names: dict[str, str], lhs: list[str]) -> list[str]:
    ta = bool(op.attrs.get("transpose_a", False))
    tb = bool(op.attrs.get("transpose_b", False))
    shapes = {"a": trace.tensors[op.inputs[0]].shape, "b": trace.tensors[op.inputs[1]].shape,
              "grad": step.upstream[0].shape if step.upstream and step.upstream[0] is not None
              else trace.tensors[op.outputs[0]].shape}
    out = []
    for i, (left, right) in enumerate(_MATMUL[(ta, tb)]):
        if i >= len(step.grads) or step.grads[i] is None:
            continue
        ls = _operand_shape(left, shapes)
        rs = _operand_shape(right, shapes)
        res = _sh(step.grads[i])
        out.append(f"{lhs[i]} = {_fill(left, names)} @ {_fill(right, names)}: "
                   f"{format_shape(ls)} @ {format_shape(rs)} -> {res}")
    return out


def _operand_shape(token: str, shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    base, _, t = token.partition(".")
    s = shapes[base]
    return _t(s) if t == "T" else s


def _backward_arrays(trace: Trace, s: BackwardStep) -> list[tuple[str, ArrayData]]:
    op = trace.ops[s.op]
    out = [(f"upstream dL/d{_name(trace, op.outputs[k])}", u)
           for k, u in enumerate(s.upstream) if u is not None and k < len(op.outputs)]
    # Named as the step's formula names them: X * W gives "dL/dW", not "dL/db (W)".
    names = _spelling(trace, s).uses
    out += [(f"dL/d{names[i]}", g)
            for i, g in enumerate(s.grads) if g is not None and i < len(op.inputs)]
    return out
