"""A backward step in words: the op's rule applied to its own tensors, with shapes."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np

from ...engine.custom import CUSTOM_GRADIENT
from ...trace import ArrayData, BackwardStep, OpInfo, Trace
from .explanation import FIRST_FEW, WIDE, Explanation, _and, _and_some, _pass_note
from .formatting import _named_shape, _sh, format_shape
from .formula import Formula
from .names import _fill, _name, _number, _type_is_ambiguous, gradient_target, op_name
from .rules import _MATMUL
from .spelling import _Spelling, _fill_idea, _spelling, custom_arguments
from .windows import window_sentence


def _backward(trace: Trace, s: BackwardStep) -> Explanation:
    op = trace.ops[s.op]
    spell = _spelling(trace, s)
    rule = spell.rule
    # One output: its gradient is grad.  Several (Split): grad[k] is output k's.
    if len(op.outputs) == 1:
        out = _name(trace, op.outputs[0])
        up = s.upstream[0] if s.upstream else None
        up_txt = (f"grad, the gradient arriving at its output "
                  f"{_named_shape(out, up.shape) if up is not None else out},")
    else:
        arrived = [f"grad[{k}] for {_name(trace, o)}" for k, o in enumerate(op.outputs)
                   if k < len(s.upstream) and s.upstream[k] is not None]
        up_txt = f"the gradients arriving at its outputs ({_and(arrived)}),"
    # The inputs by name and shape, "X (2,1) and W (scalar)", as the formulas write them.
    inputs = _and_some([_named_shape(spell.names[t], trace.tensors[t].shape)
                        for t in op.inputs[:WIDE]], len(op.inputs))
    # Named where another op of its type could be meant: "Mul 'Mul_1' of Mul and x".
    name = op_name(trace, s.op)
    ambiguous = _type_is_ambiguous(trace, s.op)
    called = f"{s.op_type} '{name}'" if ambiguous else s.op_type
    got = [i for i, g in enumerate(s.grads) if g is not None and i < len(op.inputs)]
    skipped = [i for i, g in enumerate(s.grads) if g is None and i < len(op.inputs)]
    if s.op_type == CUSTOM_GRADIENT:
        sentence = _custom_sentence(trace, s, spell, up_txt)
    elif rule is None:
        sentence = (f"{s.op_type} '{name}' has the gradient function {s.rule}, which turns "
                    f"{up_txt} into a gradient for each of its inputs, {inputs}.")
    else:
        sentence = f"{called} of {inputs} gets {up_txt} and {_fill_idea(rule, spell)}."
        sentence += window_sentence(trace, s)
    formulas = _backward_formulas(trace, s, spell, got)
    sentence += _broadcast_note(trace, s, spell, got) + _rows_note(trace, s, spell, got)
    if skipped:
        # "the constant 2", not a bare "2", where the input is a Python number
        names = ", ".join(("the constant " if _number(trace.tensors[op.inputs[i]]) else "")
                          + spell.names[op.inputs[i]] for i in skipped[:WIDE])
        if len(skipped) > WIDE:
            names += f" and {len(skipped) - WIDE} more"
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
    # Small results are worth reading in full: "... -> scalar = 0.5".
    formula = "; ".join(map(str, formulas)) if formulas else "no input needs a gradient"
    if len(formulas) > WIDE:  # a wide op's: the first few, and how many more
        formula = "; ".join([*map(str, formulas[:FIRST_FEW]),
                             f"\u2026 and {len(formulas) - FIRST_FEW} more, one per input"])
    runs = tuple(formulas) if rule is not None else ()
    title = f"{s.op_type} backward" + (f" ({name})" if ambiguous else "")
    return Explanation(title + _pass_note(trace, s), sentence, formula, runs)


def _custom_sentence(trace: Trace, s: BackwardStep, spell: _Spelling, up_txt: str) -> str:
    """A custom gradient's step: the user's function gave its own backward."""
    op = trace.ops[s.op]
    n = custom_arguments(op)
    fn = op.attrs.get("fn") or op_name(trace, s.op)
    named = [_named_shape(spell.names[t], trace.tensors[t].shape) for t in op.inputs]
    if op.attrs.get("recompute"):
        sentence = (f"{fn} was wrapped in recompute_grad, so its forward pass kept nothing for "
                    f"this step: grad_fn runs {fn} again under a tape and turns {up_txt} into "
                    f"the gradients of that second run for each of its arguments, "
                    f"{_and(named[:n])}")
    else:
        sentence = (f"{fn} was decorated with @custom_gradient, so its backward is the grad_fn "
                    f"it returned ({s.rule}), not the gradients of the ops inside it: grad_fn "
                    f"turns {up_txt} into a gradient for each of its arguments, "
                    f"{_and(named[:n])}")
    if len(named) > n:
        sentence += (f", and, through the keyword variables=, for the Variables {fn} reads, "
                     f"{_and(named[n:])}")
    return sentence + "."


def _backward_formulas(trace: Trace, s: BackwardStep, spell: _Spelling,
                       got: list[int]) -> list[Formula]:
    """The formula for each input in ``got``, in the op's own tensors, not the rule's letters.

    For pred = X*W + b, Mul's reads "dL/dW = grad * X", never "dL/db = grad * a".
    """
    lhs = _targets(trace, s, spell)
    names = _bound(trace, s, spell)
    if spell.rule is not None and s.op_type == "MatMul":
        return _matmul_formulas(trace, trace.ops[s.op], s, spell.by_word, lhs, names)
    out = []
    for i in got:
        rhs = _fill(spell.templates[i], spell.by_word)
        numbers = spell.numbers[i]
        where = ", ".join(f"{k} = {v}" for k, v in numbers.items())
        out.append(Formula(lhs[i], rhs, {**names, **numbers}, f"{_up_shapes(s)} -> "
                           f"{_sh(s.grads[i])}", s.grads[i], where))
    return out


def _targets(trace: Trace, s: BackwardStep, spell: _Spelling) -> list[str]:
    """The name of the gradient the step sends each input (see :func:`gradient_target`):
    ``dL/db``, or ``dL/d(b broadcast)`` where a broadcast reduction still has to sum it."""
    op = trace.ops[s.op]
    out = []
    for i, (use, t) in enumerate(zip(spell.uses, op.inputs)):
        own = trace.tensors[t].shape
        g = s.grads[i] if i < len(s.grads) else None
        out.append(gradient_target(use, own if g is None else g.shape, own))
    return out


def _broadcast_note(trace: Trace, s: BackwardStep, spell: _Spelling, got: list[int]) -> str:
    """What the sentence adds for each input whose gradient still has the broadcast shape:
    its name, and that the next step sums it to the input's own shape."""
    op = trace.ops[s.op]
    targets = _targets(trace, s, spell)
    notes = []
    for i in got[:WIDE]:
        own = trace.tensors[op.inputs[i]].shape
        if tuple(s.grads[i].shape) == tuple(own):
            continue
        notes.append(f" The gradient for {spell.uses[i]}, {targets[i]}, still has the "
                     f"broadcast shape {_sh(s.grads[i])}: the broadcast reduction that follows "
                     f"sums it into dL/d{spell.uses[i]}, shaped like "
                     f"{_named_shape(spell.names[op.inputs[i]], own)}.")
    return "".join(notes)


class Gathered(NamedTuple):
    """What a gather read of its params: along ``axis``, each index it read and how often
    (``counts``, in index order), from ``slices`` slices; ``sparse`` where its gradient is
    an IndexedSlices, as TensorFlow's (rows of axis 0, not in batches)."""

    axis: int
    counts: dict[int, int]
    slices: int
    sparse: bool


def gathered(trace: Trace, op: OpInfo) -> Gathered | None:
    """The indices a GatherV2 or GatherNd read, or None: another op, a gather in batches or
    of whole positions (GatherNd of more than one coordinate), or indices the trace keeps
    only as a summary. The step's words and the diagram's edge both read this."""
    if op.type not in ("GatherV2", "GatherNd") or len(op.inputs) < 2:
        return None
    ids = trace.tensors[op.inputs[1]].value.values
    if ids is None or int(op.attrs.get("batch_dims", 0)):
        return None
    if op.type == "GatherNd" and (ids.ndim != 2 or ids.shape[-1] != 1):
        return None
    axis = int(op.attrs.get("axis", 0)) if op.type == "GatherV2" else 0
    read = [int(i) for i in np.asarray(ids).reshape(-1)]
    counts = {r: read.count(r) for r in sorted(set(read))}
    return Gathered(axis, counts, len(read), axis == 0)


def _rows_note(trace: Trace, s: BackwardStep, spell: _Spelling, got: list[int]) -> str:
    """For a gather, which rows of its params get a gradient and which more than once
    ("only rows 1 and 3 of E get a gradient; row 1 twice, so its two contributions add"),
    and, where the gradient is sparse as TensorFlow's, that it is."""
    op = trace.ops[s.op]
    read = gathered(trace, op) if 0 in got else None
    if read is None:
        return ""
    axis, counts = read.axis, read.counts
    what, many = ("row", "rows") if axis == 0 else ("index", "indices")
    along = "" if axis == 0 else f" along axis {axis}"
    listed = _and([str(r) for r in counts][:WIDE]) + (
        f" and {len(counts) - WIDE} more" if len(counts) > WIDE else "")
    name = spell.names[op.inputs[0]]
    left = trace.tensors[op.inputs[0]].shape[axis] - len(counts)
    one = len(counts) == 1
    note = (f" Only {what if one else many} {listed}{along} of {name} "
            f"{'gets' if one else 'get'} a gradient")
    note += ("; the other one gets none" if left == 1 else
             f"; the other {left} get none" if left else "")
    twice = [(r, c) for r, c in counts.items() if c > 1]
    if twice:
        times = {2: "twice", 3: "three times"}
        said = _and([f"{what} {r} {times.get(c, f'{c} times')}" for r, c in twice[:FIRST_FEW]])
        adds = ("its two contributions add" if twice == [(twice[0][0], 2)] else
                "its contributions add" if len(twice) == 1 else "each one's contributions add")
        note += f"; {said}, so {adds}"
    note += "."
    if read.sparse:
        note += (f" As in TensorFlow, the gradient is sparse: an IndexedSlices of the "
                 f"{read.slices} slices and their rows, not a dense array of {name}'s shape "
                 f"(shown here dense, with zeros in the rows no slice reached).")
    return note


def _bound(trace: Trace, s: BackwardStep, spell: _Spelling) -> dict[str, Any]:
    """What each name a step's formulas use stands for: its tensors' values, and ``grad``."""
    names: dict[str, Any] = {}
    for word, tid in spell.tensors.items():
        token = spell.by_word[word]
        if _NAME.fullmatch(token):  # not a number written out, such as 2 or (-1)
            names[token] = trace.tensors[tid].value
    op = trace.ops[s.op]
    # One output: grad is its gradient.  Several (Split): grad[k] is output k's.
    names["grad"] = s.upstream[0] if len(op.outputs) == 1 and s.upstream else list(s.upstream)
    return names


# A name as a formula writes it: a word, or anything quoted.
_NAME = re.compile(r"[A-Za-z_]\w*|'[^']*'")


def _up_shapes(s: BackwardStep) -> str:
    shapes = [_sh(u) for u in s.upstream if u is not None]
    return ", ".join(shapes) if shapes else "nothing"


def _t(shape: tuple[int, ...]) -> tuple[int, ...]:
    return shape[:-2] + (shape[-1], shape[-2]) if len(shape) >= 2 else shape


def _matmul_formulas(trace: Trace, op: OpInfo, step: BackwardStep, names: dict[str, str],
                     lhs: list[str], bound: dict[str, Any]) -> list[Formula]:
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
        expr = f"{_operand(left, names, shapes)} @ {_operand(right, names, shapes)}"
        out.append(Formula(lhs[i], expr, bound,
                           f"{format_shape(ls)} @ {format_shape(rs)} -> {_sh(step.grads[i])}",
                           step.grads[i]))
    return out


def _operand(token: str, names: dict[str, str], shapes: dict[str, tuple[int, ...]]) -> str:
    """A product's operand as NumPy writes it: ``W.T``, or for a stack of matrices
    ``swapaxes(W, -1, -2)`` (``.T`` would reverse every axis)."""
    base, _, t = token.partition(".")
    name = _fill(base, names)
    if not t or len(shapes[base]) <= 2:
        return name + (".T" if t else "")
    return f"swapaxes({name}, -1, -2)"


def _operand_shape(token: str, shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    base, _, t = token.partition(".")
    s = shapes[base]
    return _t(s) if t == "T" else s


def _backward_arrays(trace: Trace, s: BackwardStep) -> list[tuple[str, ArrayData]]:
    op = trace.ops[s.op]
    out = [(f"upstream dL/d{_name(trace, op.outputs[k])}", u)
           for k, u in enumerate(s.upstream) if u is not None and k < len(op.outputs)]
    # Named as the step's formula names them: X * W gives "dL/dW", not "dL/db (W)",
    # and a gradient still in the broadcast shape "dL/d(b broadcast)", not "dL/db".
    targets = _targets(trace, s, _spelling(trace, s))
    out += [(targets[i], g)
            for i, g in enumerate(s.grads) if g is not None and i < len(op.inputs)]
    return out
