"""The questions of a trace: one per gradient a step produces, with its named wrong answers.

Every wrong answer is computed from the step's own arrays, as its formula is:
the rule's template with one thing changed (``grad * a`` where Mul's rule is
``grad * b``; ``grad * x * (1 - x)`` where Sigmoid's is ``grad * y * (1 - y)``),
or the step's data used the wrong way (the gradient before its broadcast sum,
one fan-out contribution, ones where grad_ys was given).  A step gets a
question when the arrays it needs are kept whole in the trace (at most 64
values) and finite.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from itertools import combinations
from typing import Any

import numpy as np

from ...trace import (PREVIEW_LIMIT, AccumulateStep, ArrayData, BackwardStep, CutStep,
                      ForwardStep, ReduceStep, ResultStep, SeedStep, Step, Trace)
from ..explain import (describe, format_array, format_shape, is_jacobian, labelled_arrays,
                       op_name)
from ..explain.backward import _backward_formulas, _operand
from ..explain.explanation import FIRST_FEW, WIDE, _and, _pass_note, _times
from ..explain.forward import (_first_inputs, _formulas as _forward_formulas,
                                _said as _forward_said, part_formulas, tangent_name)
from ..explain.formula import Formula
from ..explain.names import _WORD, _fill, _name, _type_is_ambiguous, display_name, gradient_target
from ..explain.reduce import _broadcast_grad, _broadcast_target
from ..explain.rules import _MATMUL, _specialised
from ..explain.spelling import _spell, _spelling
from .model import (Misconception, Question, Resolution, close, element_names, has_shape,
                    shape_words, tolerance)

__all__ = ["questions", "step_questions", "FOCUS_OVER"]

#: A question about more than this many values asks for a few elements (its ``focus``).
FOCUS_OVER = 16

#: The most elements a focus asks; where more are needed to tell every slip from the
#: right answer, the whole answer is asked.
FOCUS_MOST = 3

#: Per op type and input index: (kind, the rule's template with the slip in it, why).
#: A why's {a}, {b}, {x}, {y} are the step's own tensors.
_SLIPS: dict[str, dict[int, tuple[tuple[str, str, str], ...]]] = {
    "Mul": {
        0: (("mul_wrong_input", "grad * a", "That is grad times {a} itself; the gradient for "
             "one factor is grad times the other factor, {b}."),
            ("scale_left_out", "grad", "That leaves out the scale {b}: the forward pass "
             "multiplied by it (as attention scales its scores by 1/sqrt(d)), so the "
             "gradient is multiplied by it too, grad * {b}.")),
        1: (("mul_wrong_input", "grad * b", "That is grad times {b} itself; the gradient for "
             "one factor is grad times the other factor, {a}."),
            ("scale_left_out", "grad", "That leaves out the scale {a}: the forward pass "
             "multiplied by it, so the gradient is multiplied by it too, grad * {a}.")),
    },
    "Sigmoid": {0: (
        ("derivative_from_input", "grad * x * (1 - x)",
         "The form y * (1 - y) takes the output y = sigmoid({x}), not the input: with {x} "
         "put in place of y it is not the derivative."),
        ("derivative_at_output", "grad * sigmoid(y) * (1 - sigmoid(y))",
         "That applies sigmoid a second time: the output {y} is already sigmoid({x}), so the "
         "derivative is {y} * (1 - {y})."),
        ("derivative_of_other", "grad * (1 - y**2)",
         "That is tanh's derivative, 1 - tanh**2; sigmoid's, in its output {y}, is "
         "{y} * (1 - {y})."),
    )},
    "Tanh": {0: (
        ("derivative_from_input", "grad * (1 - x**2)",
         "The form 1 - y**2 takes the output y = tanh({x}), not the input: with {x} put in "
         "place of y it is not the derivative."),
        ("derivative_at_output", "grad * (1 - tanh(y)**2)",
         "That applies tanh a second time: the output {y} is already tanh({x}), so the "
         "derivative is 1 - {y}**2."),
        ("derivative_of_other", "grad * y * (1 - y)",
         "That is sigmoid's derivative, sigmoid * (1 - sigmoid); tanh's, in its output {y}, "
         "is 1 - {y}**2."),
    )},
    "Softmax": {0: (("softmax_diagonal",
                     "grad * y * (1 - y)",
                     "That keeps only the diagonal of the softmax's Jacobian, {y} * (1 - {y}); "
                     "each output depends on every input along the axis, so the rule is "
                     "{y} * (grad - sum(grad * {y})), the sum taken along that axis."),)},
    "Mean": {0: (("mean_not_divided", "broadcast_to({grad}, shape(x))",
                  "A mean divides by n, how many it averaged, so each position gets grad / n."),)},
    "Relu": {0: (("mask_forgotten", "grad",
                  "ReLU passes the gradient only where {x} > 0 and blocks it elsewhere."),)},
    "Conv2D": {0: (("kernel_not_flipped", "conv2d({spread}, w.swapaxes(2, 3){dil})",
                    "The forward slides {w} over {x}; going back, each input cell collects "
                    "from the outputs whose windows held it, and that reads the kernel "
                    "back to front: flip {w} top to bottom and left to right, "
                    "w[::-1, ::-1]."),)},
    "MaxPool": {0: (("pool_gradient_everywhere",
                     "unwindows(ones({k1}) * grad[:, :, :, None, None, :], shape(x){win})",
                     "Only the element that won its window reached the output, so only it "
                     "gets the window's gradient; the others had no effect on it and get "
                     "0."),
                    ("pool_averaged",
                     "unwindows(ones({k1}) * (grad / sum(windows(ones(shape(x)), {k}{win}), "
                     "axis=(3, 4)))[:, :, :, None, None, :], shape(x){win})",
                     "That shares the window's gradient among its elements, as an average "
                     "pool does; a max pool's output is its window's winner alone, so the "
                     "winner gets all of the gradient and the others 0."),)},
    "RealDiv": {0: (("scale_left_out", "grad",
                     "That leaves out the division by {b}: the forward pass divided by {b} "
                     "(as attention divides its scores by sqrt(d)), so the gradient is divided "
                     "by it too, grad / {b}."),)},
    "GatherV2": {0: (("gather_one_contribution", "{last_write}",
                      "That gives a row read more than once only one of its gradients; each "
                      "time the gather read that row of {params}, its slice's gradient adds "
                      "to it, so the row gets their sum."),)},
    "AvgPool": {0: (("pool_not_shared",
                     "unwindows(ones({k1}) * grad[:, :, :, None, None, :], shape(x){win})",
                     "Each element is one of the n in its window's average, so it gets "
                     "grad / n, not the whole of grad."),)},
}

#: Why a flipped sign is wrong, where the rule's own sign is the lesson.
_SIGNS: dict[tuple[str, int], str] = {
    ("Sub", 0): "Since {a} - {b} grows with {a}, the first input gets grad as it is.",
    ("Sub", 1): "Since {a} - {b} shrinks as {b} grows, the second input gets -grad.",
    ("Neg", 0): "Negation flips the sign, so its gradient is -grad.",
    ("RealDiv", 1): "The rule d({a}/{b})/d{b} = -{a}/{b}**2 carries a minus sign: where "
                    "{a}/{b} is positive, it shrinks as {b} grows.",
}


# ---------------------------------------------------------------- the trace's questions


def questions(trace: Trace) -> list[Question]:
    """Every question of a trace, in step order.

    >>> import gradviz as gv
    >>> X = gv.constant([[1.0], [2.0]], name="q_X")
    >>> W = gv.Variable(3.0, name="q_W")
    >>> tr = gv.trace_gradients(gv.reduce_sum(X * W), W)
    >>> [(q.step, q.prompt) for q in questions(tr)]  # doctest: +NORMALIZE_WHITESPACE
    [(0, 'What gradient does Sum start from?'),
     (1, 'What gradient does Sum send to Mul?'),
     (2, 'What gradient does Mul send towards q_W, dL/d(q_W broadcast)?'),
     (3, 'q_W was broadcast from scalar to (2,1): what is its gradient dL/dq_W, in its own shape?'),
     (4, 'What is the final gradient for q_W?')]
    """
    return [q for s in trace.steps for q in step_questions(trace, s)]


def step_questions(trace: Trace, step: int | Step) -> tuple[Question, ...]:
    """The questions of one step (an index or a step): one per gradient it produces, none
    for a cut.  Worked out once per step of a trace."""
    if isinstance(step, (int, np.integer)) and not isinstance(step, bool):
        step = trace.steps[int(step)]
    cache = trace.__dict__.setdefault("_gv_questions", {})
    asked = cache.get(step.index)
    if asked is None:
        make = _MAKERS.get(type(step))
        asked = tuple(make(trace, step)) if make and not step.nonfinite else ()
        if step.index < len(trace.steps) and trace.steps[step.index] is step:
            cache[step.index] = asked
    return asked


# ---------------------------------------------------------------- per step kind


def _seed(trace: Trace, s: SeedStep) -> list[Question]:
    right = _whole(s.grad)
    if right is None:
        return []
    y = _name(trace, s.tensor)
    target = f"dL/d{y}"
    slips, given = [], ()
    if trace.method == "tape.jacobian" and s.given:
        formula = (f"pass {s.pass_index + 1} seeds {y} with a one-hot vector: 1 at element "
                   f"{s.pass_index + 1}, 0 elsewhere")
        slips.append(("grad_ys_ignored", np.ones_like(right),
                      "Ones would give the sum of all the Jacobian's rows; each pass seeds one "
                      "element, so it computes one row."))
    elif s.given:
        given = ((f"grad_ys[{s.y_index}], the seed given", s.grad),)
        formula = f"{target} = grad_ys[{s.y_index}]"
        slips.append(("grad_ys_ignored", np.ones_like(right),
                      f"Ones are the default seed, but grad_ys[{s.y_index}] was given: the pass "
                      f"starts from it, so it weights each element of {y}."))
    else:
        formula = f"{target} = ones_like({y})" if right.shape else f"{target} = 1"
    prompt = f"What gradient does {y} start from?"
    return _asked(_question(trace, s, s.tensor, target, prompt + _pass_note(trace, s), given,
                            right, slips, formula))


def _backward(trace: Trace, s: BackwardStep) -> list[Question]:
    op = trace.ops[s.op]
    spell = _spelling(trace, s)
    got = [i for i, g in enumerate(s.grads) if g is not None and i < len(op.inputs)]
    if len(op.inputs) > WIDE:  # a wide op asks its first few: the rest are asked the same way
        got = got[:FIRST_FEW]
    runs = _backward_formulas(trace, s, spell, got) if spell.rule is not None else []
    formulas = dict(zip(got, runs)) if len(runs) == len(got) else {}
    called = (f"{s.op_type} '{op_name(trace, s.op)}'" if _type_is_ambiguous(trace, s.op)
              else s.op_type)
    upstream = tuple((f"upstream dL/d{_name(trace, o)}", u)
                     for o, u in zip(op.outputs, s.upstream) if u is not None)
    # the inputs as a why names them: "x (as input 0)" where x is both inputs
    words = {**spell.by_word, **{w: spell.uses[k] for k, w in enumerate(
        spell.rule.roles if spell.rule else ()) if k < len(spell.uses)}}
    out = []
    for i in got:
        right = _whole(s.grads[i])
        f = formulas.get(i)
        if right is None:
            continue
        slips = []
        for kind, template, why in _SLIPS.get(s.op_type, {}).get(i, ()):
            if kind == "scale_left_out" and not _scales(trace, op, i):
                continue
            value = _run(trace, s, spell, i, template, f)
            slips.append((kind, value, _said(why, words)))
        if s.op_type == "MatMul" and f is not None:
            slips += _matmul_slips(trace, s, spell, i, f)
        if f is not None and len(op.outputs) == 1 and s.upstream and s.upstream[0] is not None:
            ones = ArrayData.of(np.ones(s.upstream[0].shape, np.float64))
            value = _evaluate(Formula(f.target, f.expr, {**f.names, "grad": ones}))
            slips.append(("upstream_forgotten", value,
                          f"That is {s.op_type}'s own derivative alone; the chain rule "
                          "multiplies it by the upstream gradient grad."))
        sign = _SIGNS.get((s.op_type, i), "The sign is flipped: check the sign of each "
                          "factor of the rule.")
        slips.append(("wrong_sign", -right, _said(sign, words)))
        given = upstream + _forward_values(trace, s, spell, f, i)
        tensor = op.inputs[i]
        own = tuple(trace.tensors[tensor].shape)
        target = gradient_target(spell.uses[i], right.shape, own)
        # the gradient before a broadcast sum is not the input's own: its name says so
        prompt = (f"What gradient does {called} send to {spell.uses[i]}?" if right.shape == own
                  else f"What gradient does {called} send towards {spell.uses[i]}, {target}?")
        prompt += _pass_note(trace, s)
        hint = _formula_text(f) if f is not None else (
            f"{target} = {s.rule}(op, grad)[{i}], the gradient function's result for input {i}")
        note = None
        if right.shape != own:
            note = (f"{s.op_type} sends {spell.uses[i]} a gradient in the broadcast shape "
                    f"{format_shape(right.shape)}; the broadcast reduction that follows sums it "
                    f"to {spell.uses[i]}'s own shape, {shape_words(own)}.")
        out += _asked(_question(trace, s, tensor, target, prompt, given, right, slips, hint,
                                input_index=i, shape_note=note))
    return out


def _scales(trace: Trace, op: Any, i: int) -> bool:
    """Whether input ``i`` of a Mul or RealDiv is scaled by a single number (the other
    input is a scalar), where leaving the scale out is the slip to name."""
    other = op.inputs[1 - i] if len(op.inputs) == 2 else None
    return other is not None and math.prod(trace.tensors[other].shape) == 1


def _reduce(trace: Trace, s: ReduceStep) -> list[Question]:
    right, before_data = _whole(s.grad), _broadcast_grad(trace, s)
    before = _whole(before_data)
    if right is None or before is None:
        return []
    x = _name(trace, s.tensor)
    axes = tuple(s.axes)
    n = math.prod(s.shape_before[a] for a in axes)
    keep = len(s.shape_after) == len(s.shape_before)
    slips: list[tuple[str, Any, str]] = [
        ("broadcast_not_summed", before,
         f"That is the gradient before the sum, in the broadcast shape "
         f"{format_shape(s.shape_before)}; {'each element of ' if s.shape_after else ''}{x} "
         f"was used {_times(n)}, along axes {axes}, and gets the sum of those uses' "
         "gradients.")]
    for other in combinations(range(len(s.shape_before)), len(axes)):
        if other != axes:
            slips.append(("broadcast_wrong_axes", before.sum(axis=other, keepdims=keep),
                          f"That sums over axes {other}; {x} was broadcast along axes {axes}, "
                          "so the sum runs over those."))
    slips.append(("broadcast_mean", before.mean(axis=axes).reshape(s.shape_after),
                  f"Averaging divides by {n}; each of the {n} uses adds its gradient, so the "
                  "rule is a sum."))
    given = ((f"{_broadcast_target(trace, s)}, before the sum, {format_shape(s.shape_before)}",
              before_data),)
    formula = describe(trace, s).formulas
    hint = _formula_text(formula[0]) if formula else f"dL/d{x} = sum(grad, axis={axes})"
    prompt = (f"{x} was broadcast from {format_shape(s.shape_after)} to "
              f"{format_shape(s.shape_before)}: what is its gradient dL/d{x}, in its own "
              "shape?" + _pass_note(trace, s))
    return _asked(_question(trace, s, s.tensor, f"dL/d{x}", prompt, given, right, slips, hint))


def _accumulate(trace: Trace, s: AccumulateStep) -> list[Question]:
    if len(s.contributions) > WIDE:
        return []  # a sum of more arrays than a learner adds up by hand is not asked
    right = _whole(s.total)
    parts = [_whole(c.grad) for c in s.contributions]
    if right is None or any(p is None for p in parts):
        return []
    x = _name(trace, s.tensor)
    n = len(s.contributions)
    labels = [label for label, _ in labelled_arrays(trace, s)][:n]
    slips: list[tuple[str, Any, str]] = [
        ("fan_out_one", p, f"That is g{k + 1} alone, the gradient {_from(trace, c)}; {x} is "
         f"used {_times(n)}, and its gradient is the sum of all {n} contributions.")
        for k, (p, c) in enumerate(zip(parts, s.contributions))]
    slips += _cuts_ignored(trace, s, right)
    given = tuple(zip(labels, (c.grad for c in s.contributions)))
    hint = f"dL/d{x} = " + " + ".join(f"g{k + 1}" for k in range(n))
    prompt = f"{x} is used {_times(n)}: what is its gradient dL/d{x}?" + _pass_note(trace, s)
    return _asked(_question(trace, s, s.tensor, f"dL/d{x}", prompt, given, right, slips, hint))


def _result(trace: Trace, s: ResultStep) -> list[Question]:
    right = _whole(s.grad)
    if s.status != "connected" or right is None:
        return []
    x = display_name(trace.tensors[s.tensor], scoped=True)
    last = _last_gradient_step(trace, s)
    hint = (f"dL/d{x} is what {x} holds once its last contribution is in: see step {last.index}, "
            f"{_title(trace, last)}" if last is not None else f"dL/d{x}")
    if is_jacobian(trace):
        prompt = (f"What is row {s.pass_index + 1} of the Jacobian for {x}, the gradient "
                  f"this pass gives it?")
    else:
        prompt = f"What is the final gradient for {x}?" + _pass_note(trace, s)
    return _asked(_question(trace, s, s.tensor, f"dL/d{x}", prompt, (), right,
                            _cuts_ignored(trace, s, right) + _made_by(trace, last, s.tensor, right),
                            hint))


def _forward(trace: Trace, s: ForwardStep) -> list[Question]:
    """A forward step's questions: each output's tangent, from the tangents arriving.

    Its slips are the chain rule's and the product rule's, made on the step's own
    formula: the derivative without the tangent (each tangent taken as ones), the
    tangent passed on without the derivative, one moving input's part alone where
    several move, and for a softmax or a mean the slips their gradients know.
    """
    op = trace.ops[s.op]
    if len(op.inputs) > WIDE:
        return []
    said = _forward_said(trace, s)
    runs = {f.target: f for f in _forward_formulas(trace, s, said)}
    if not runs:
        return []
    first = _first_inputs(said)  # each tangent arriving, at the first input it arrives at
    moving = list(first.values())  # x * x: dx once
    arriving = tuple((f"tangent {d} arriving", s.tangents_in[i]) for d, i in first.items())
    called = (f"{s.op_type} '{op_name(trace, s.op)}'" if _type_is_ambiguous(trace, s.op)
              else s.op_type)
    out = []
    for k, (t, tangent) in enumerate(zip(op.outputs, s.tangents)):
        target = tangent_name(said.names[t])
        f = runs.get(target)
        right = _whole(tangent)
        if f is None or right is None:
            continue
        slips: list[tuple[str, Any, str]] = []
        ones = {d: ArrayData.of(np.ones(f.names[d].shape)) for d in first}
        ins = _and(list(first))
        slips.append(("tangent_forgotten", _evaluate(Formula(f.target, f.expr,
                                                             {**f.names, **ones})),
                      f"That is {called}'s derivative alone, as if each tangent were ones; the "
                      f"chain rule applies the derivative to the tangent"
                      f"{'s' if len(first) > 1 else ''} arriving, {ins}."))
        if len(moving) == 1 and sum(d is not None for d in said.tangents) == 1:
            (i,) = moving
            passed = _broadcast_or_none(np.asarray(s.tangents_in[i].values, np.float64),
                                        right.shape)
            slips.append(("derivative_forgotten", passed,
                          f"That passes {said.tangents[i]} on unchanged; the tangent out is "
                          f"{said.tangents[i]} with {called}'s derivative applied to it, "
                          f"{f.target} = {f.expr}."))
        # each input's part alone, by its place (x * x: x as input 0, then as input 1)
        parting = [i for i, d in enumerate(said.tangents) if d is not None]
        for i in parting if len(parting) > 1 else ():
            part = next((g for g in part_formulas(trace, s, i) if g.target == target), None)
            uses = [said.names[op.inputs[j]] + (f" (as input {j})" if op.inputs.count(
                op.inputs[j]) > 1 else "") for j in parting]
            others = _and([u for j, u in zip(parting, uses) if j != i])
            slips.append(("product_rule_term_missing", None if part is None else _evaluate(part),
                          f"That is the part of {uses[parting.index(i)]} alone"
                          f"{f', {part.expr}' if part else ''}; {others} "
                          f"{'moves' if len(parting) == 2 else 'move'} too, and each "
                          f"moving input adds its own part (for a product, the product rule): "
                          f"{f.target} = {f.expr}."))
        if s.op_type == "Softmax" and len(moving) == 1:
            y, d = said.names[t], said.tangents[moving[0]]
            slips.append(("softmax_diagonal", _evaluate(Formula("", f"{y} * (1 - {y}) * {d}",
                                                                f.names)),
                          f"That keeps only the diagonal of the softmax's Jacobian, {y} * (1 - "
                          f"{y}); each output moves with every input along the axis, so the "
                          f"tangent is {f.expr}."))
        if s.op_type == "Mean":
            slips.append(("mean_not_divided", _evaluate(Formula("", "sum(" + f.expr[5:],
                                                                f.names)),
                          "A mean divides by n, how many it averaged, so its tangent is the "
                          "tangents' mean, not their sum."))
        slips.append(("wrong_sign", -right, "The sign is flipped: check the sign of each "
                      "factor of the derivative."))
        given = arriving + tuple(  # the forward values its formula reads
            (f"{name} (forward value)", a) for name, a in f.names.items()
            if name not in first and isinstance(a, ArrayData) and _reads(f.expr, name))
        output = "its output" if len(op.outputs) == 1 else f"its output {k}"
        prompt = f"What is {target}, the tangent {called} gives {output}?" + _pass_note(trace, s)
        out += _asked(_question(trace, s, t, target, prompt, given, right, slips,
                                _formula_text(f), shape_note="A tangent has the shape of the "
                                f"tensor it moves: {has_shape(target, right.shape)}."))
    return out


def _reads(expr: str, name: str) -> bool:
    """Whether formula ``expr`` reads ``name`` (a word, or a quoted name)."""
    return name in expr if name.startswith("'") else name in _WORD.findall(expr)


def _broadcast_or_none(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    try:
        return np.broadcast_to(a, shape).copy()
    except ValueError:
        return None


_MAKERS = {SeedStep: _seed, BackwardStep: _backward, ReduceStep: _reduce,
           AccumulateStep: _accumulate, ResultStep: _result, ForwardStep: _forward}


# ---------------------------------------------------------------- one question


def _question(trace: Trace, s: Step, tensor: int, target: str, prompt: str,
              given: tuple, right: np.ndarray, slips: list, formula: str,
              input_index: int | None = None, shape_note: str | None = None) -> Question | None:
    """The question with its slips sorted: those giving the right numbers, those giving
    another slip's numbers (folded into its ``also``), and the rest, kept in order.
    None where an array the learner needs is kept only as a summary."""
    if any(a.values is None or a.nonfinite for _, a in given):
        return None
    if right.size > 1:  # the same numbers laid out another way
        other = right.reshape(-1) if right.ndim > 1 else right.reshape(-1, 1)
        why = shape_note or ("A gradient has the shape of what it is the gradient of: "
                             f"{has_shape(target, right.shape)}.")
        slips = [*slips, ("wrong_shape", other, why)]
    resolution = Resolution.of(trace.tensors[tensor].dtype)
    kept: list[list] = []  # [kind, value, why, also]
    same_as_right: list[str] = []
    raw: list[tuple[str, np.ndarray]] = []
    for kind, value, why in slips:
        if value is None or not np.all(np.isfinite(value)):
            continue
        value = np.asarray(value, np.float64)
        raw.append((kind, value))
        if close(value, right, resolution=resolution):
            _add(same_as_right, kind)
            continue
        twin = next((k for k in kept if close(value, k[1], resolution=resolution)), None)
        if twin is not None:
            if kind != twin[0]:
                _add(twin[3], kind)
            continue
        kept.append([kind, value, why, []])
    wrong = tuple(Misconception(k, v, w, tuple(a)) for k, v, w, a in kept)
    answer_text = f"{target} = {format_array(ArrayData.of(right), max_elems=right.size)}"
    focus = _focus(right, [v for _, v in raw], resolution)
    if focus is not None:
        asked = element_names(target, focus)
        prompt += (f" It has {right.size} values: give {asked[0]}." if len(asked) == 1 else
                   f" It has {right.size} values: give {', '.join(asked[:-1])} and {asked[-1]},"
                   " which together tell the usual slips apart.")
    return Question(step=s.index, step_kind=s.kind, tensor=tensor, target=target,
                    prompt=prompt, given=given, answer=right, wrong=wrong,
                    hints=(formula, answer_text), same_as_right=tuple(same_as_right),
                    focus=focus, input_index=input_index, shape_note=shape_note,
                    resolution=resolution,
                    slips=tuple(raw))


def _asked(q: Question | None) -> list[Question]:
    return [] if q is None else [q]


def _add(kinds: list[str], kind: str) -> None:
    if kind not in kinds:
        kinds.append(kind)


def _focus(right: np.ndarray, slips: list[np.ndarray],
           resolution: Resolution) -> tuple[tuple[int, ...], ...] | None:
    """For a large answer, the elements to ask: the fewest (at most :data:`FOCUS_MOST`)
    at which every slip in the answer's shape that differs from the right answer
    anywhere differs too; among equals, those telling the most slips from each other.
    None: the answer is small enough to ask whole, or needs more elements than that.

    >>> right = np.arange(20.0)
    >>> _focus(right, [np.where(right == 7, 0.0, right), right * 2], Resolution.of(float))
    ((7,),)
    """
    if right.size <= FOCUS_OVER:
        return None
    r = right.reshape(-1)
    tol = tolerance(r, resolution=resolution)
    same = [v.reshape(-1) for v in slips if v.shape == right.shape]
    pending = [d for d in (np.abs(v - r) > tol for v in same) if d.any()]
    apart = np.zeros(r.size)  # how many pairs of slips each element tells apart
    for a, b in combinations(same, 2):
        apart += np.abs(a - b) > tolerance(a, resolution=resolution)
    # among equals, the larger element: where more of the computation shows (a cell in
    # more windows, a winner), which a slip no one has named is likelier to get wrong
    size = np.abs(r) / (2 * float(np.max(np.abs(r))) or 1.0)
    chosen: list[int] = []
    while pending:
        if len(chosen) == FOCUS_MOST:
            return None
        score = np.sum(pending, axis=0) * (len(same) ** 2 + 1) + apart + size
        k = int(np.argmax(score))
        chosen.append(k)
        pending = [d for d in pending if not d[k]]
    if not chosen:  # nothing to tell apart: the largest element
        chosen = [int(np.argmax(np.abs(r)))]
    return tuple(tuple(int(i) for i in np.unravel_index(k, right.shape)) for k in sorted(chosen))


# ---------------------------------------------------------------- the pieces


def _whole(a: ArrayData | None) -> np.ndarray | None:
    """An array's values as float64, when the trace keeps them all and they are finite."""
    if a is None or a.values is None or a.nonfinite or a.size == 0:
        return None
    if a.size > PREVIEW_LIMIT:  # an image the trace keeps whole is too long to type
        return None
    if np.dtype(a.dtype).kind != "f":
        return None
    return np.asarray(a.values, np.float64)


def _evaluate(f: Formula) -> np.ndarray | None:
    """A formula's value, or None where it does not run (shapes that do not fit)."""
    try:
        return np.asarray(f.evaluate(), np.float64)
    except Exception:  # a slip that NumPy refuses (shapes) is a slip no one can make here
        return None


def _run(trace: Trace, s: BackwardStep, spell, i: int, template: str,
         f: Formula | None) -> np.ndarray | None:
    """A slip's template for input ``i``, filled and run like the rule's own formula."""
    filled, numbers = _specialised(trace, s, i, template)
    names = dict(f.names) if f is not None else {}
    if not names:
        return None
    return _evaluate(Formula("", _fill(filled, spell.by_word), {**names, **numbers}))


def _matmul_slips(trace: Trace, s: BackwardStep, spell, i: int,
                  f: Formula) -> list[tuple[str, Any, str]]:
    """The two factors of a MatMul's gradient in the wrong order, or a transpose moved."""
    op = trace.ops[s.op]
    ta, tb = bool(op.attrs.get("transpose_a", False)), bool(op.attrs.get("transpose_b", False))
    left, right = _MATMUL[(ta, tb)][i]
    shapes = {"a": trace.tensors[op.inputs[0]].shape, "b": trace.tensors[op.inputs[1]].shape,
              "grad": s.upstream[0].shape}
    names = {**spell.by_word, "grad": "grad"}

    def product(lt: str, rt: str) -> tuple[str, np.ndarray | None]:
        expr = f"{_operand(lt, names, shapes)} @ {_operand(rt, names, shapes)}"
        return expr, _evaluate(Formula("", expr, f.names))

    def flip(token: str) -> str:
        return token[:-2] if token.endswith(".T") else token + ".T"

    out = []
    expr, value = product(right, left)
    out.append(("matmul_order", value, f"That is {expr}: matrix products do not commute; "
                f"the rule is {f.expr}, with the factors in that order."))
    for lt, rt in ((flip(left), flip(right)), (left, flip(right)), (flip(left), right)):
        expr, value = product(lt, rt)
        out.append(("matmul_transpose", value, f"That is {expr}; the rule is {f.expr}: the "
                    "transpose goes on the factor whose shape makes the product fit the "
                    "input's shape."))
    expr, value = product(flip(right), flip(left))
    out.append(("matmul_result_transposed", value, f"That is {expr}, the rule's product "
                f"transposed: {f.expr} already has the shape of {spell.uses[i]}, and is the "
                "answer as it is."))
    return out


def _forward_values(trace: Trace, s: BackwardStep, spell, f: Formula | None, i: int) -> tuple:
    """The forward values the question for input ``i`` needs, labelled as the formulas name
    them (the upstream is given apart): the input asked about and every tensor its
    formula reads (Mul's other factor, Sigmoid's y).  Without a formula, every input and
    output, unless the op is wide: then the input asked about alone, so that each of an
    ``add_n`` of n tensors' questions carries one array, not n."""
    op = trace.ops[s.op]
    if f is not None:
        named = {spell.tensors[w] for w in _WORD.findall(spell.templates[i])
                 if w in spell.tensors}
        shown = [t for t in (*op.inputs, *op.outputs) if t in named or t == op.inputs[i]]
    elif len(op.inputs) <= WIDE:
        shown = [*op.inputs, *op.outputs]
    else:
        shown = [op.inputs[i]]
    return tuple((f"{spell.names.get(t) or _name(trace, t)} (forward value)",
                  trace.tensors[t].value) for t in dict.fromkeys(shown)
                 if _numberless(spell.names.get(t)))


def _numberless(token: str | None) -> bool:
    """Not a number written into the formula (``2`` in ``grad * 2``): that is no array."""
    return token is None or not re.fullmatch(r"\(?-?[\d.]+(e-?\d+)?\)?", token)


def _formula_text(f: Formula) -> str:
    """A formula as a hint writes it: the rule and the shapes, not the value."""
    text = f"{f.target} = {f.expr}"
    if f.where:
        text += f", {f.where}"
    return text + (f": {f.shapes}" if f.shapes else "")


_ROLE = re.compile(r"\{(\w+)\}")


def _said(why: str, words: dict[str, str]) -> str:
    """A why with its {a}, {b}, {x}, {y} the step's tensors."""
    return _ROLE.sub(lambda m: words.get(m.group(1), m.group(1)), why)


def _from(trace: Trace, c) -> str:
    if c.op is None:
        return "from its own seed"
    return f"from {op_name(trace, c.op)} (input {c.input_index})"


# ---------------------------------------------------------------- cuts ignored


def _cuts_ignored(trace: Trace, s: AccumulateStep | ResultStep,
                  right: np.ndarray) -> list[tuple[str, Any, str]]:
    """The gradient a tensor would get if the cuts next to it let their gradient through.

    A StopGradient of the tensor itself would pass its upstream gradient on
    unchanged; a tensor in ``stop_gradients`` made by an op the tensor feeds
    would send it that op's gradient.  (Cuts further away would need the
    backward pass run again, which a trace does not do.)
    """
    extra, names = np.zeros_like(right), []
    for c in trace.steps[:s.index]:
        if not isinstance(c, CutStep) or c.pass_index != s.pass_index or c.op is None:
            continue
        flow = None
        if c.reason == "stop_gradient" and c.tensor == s.tensor:
            flow = _whole(c.upstream)
        elif c.reason == "stop_gradients" and s.tensor in trace.ops[c.op].inputs:
            flow = _through(trace, c, s.tensor)
        if flow is None:
            continue
        flow = _sum_to(flow, right.shape)
        if flow is None:
            return []
        extra, names = extra + flow, [*names, c]
    if not names:
        return []
    x = _name(trace, s.tensor)
    cut = names[0]
    if cut.reason == "stop_gradient":
        why = (f"That lets the gradient through {op_name(trace, cut.op)}, a stop_gradient: it "
               f"passes nothing back, so {x} does not get the gradient that arrives there.")
    else:
        why = (f"That lets the gradient through {_name(trace, cut.tensor)}, which is in "
               "stop_gradients: the gradient arriving there is not passed back to the inputs "
               f"of the op that made it, so {x} does not get the share that op would send.")
    return [("cut_ignored", right + extra, why)]


def _through(trace: Trace, c: CutStep, tensor: int) -> np.ndarray | None:
    """What the op behind a ``stop_gradients`` cut would have sent ``tensor``."""
    op = trace.ops[c.op]
    arriving = _gradient_at(trace, c)
    if arriving is None or len(op.outputs) != 1:
        return None
    dummy = tuple(trace.tensors[t].value for t in op.inputs)
    step = BackwardStep(index=-1, pass_index=c.pass_index, ops_visited=0, bytes_held=0,
                        nonfinite=False, op=op.id, op_type=op.type, rule="",
                        upstream=(arriving,), grads=dummy, needed=(True,) * len(op.inputs))
    spell = _spell(trace, step)
    if spell.rule is None:
        return None
    every = list(range(len(op.inputs)))
    formulas = _backward_formulas(trace, step, spell, every)
    if len(formulas) != len(every):
        return None
    total = None
    for i, t in enumerate(op.inputs):
        if t != tensor or spell.rule.formulas[min(i, len(spell.rule.formulas) - 1)] is None:
            continue
        value = _evaluate(formulas[i])
        if value is None:
            return None
        total = value if total is None else total + value
    return total


def _gradient_at(trace: Trace, c: CutStep) -> ArrayData | None:
    """The gradient that arrived at a ``stop_gradients`` tensor before its cut."""
    t = c.tensor
    for s in reversed(trace.steps[:c.index]):
        if s.pass_index != c.pass_index:
            continue
        if isinstance(s, (AccumulateStep, ReduceStep)) and s.tensor == t:
            return s.total if isinstance(s, AccumulateStep) else s.grad
        if isinstance(s, SeedStep) and s.tensor == t:
            return s.grad
        if isinstance(s, BackwardStep) and t in trace.ops[s.op].inputs:
            i = trace.ops[s.op].inputs.index(t)
            return s.grads[i] if i < len(s.grads) else None
    return None


def _sum_to(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``a`` summed over the axes it was broadcast along to reach ``shape`` (None: cannot)."""
    lead = a.ndim - len(shape)
    if lead < 0:
        return None
    a = a.sum(axis=tuple(range(lead))) if lead else a
    axes = tuple(k for k, (n, m) in enumerate(zip(a.shape, shape)) if n != m)
    if any(shape[k] != 1 for k in axes):
        return None
    return a.sum(axis=axes, keepdims=True) if axes else a


def _made_by(trace: Trace, last: Step | None, tensor: int,
             right: np.ndarray) -> list[tuple[str, Any, str]]:
    """The named slips of the step whose answer a result reports: a slip made there gives
    the final gradient that slip's numbers."""
    if last is None:
        return []
    made = [q for q in step_questions(trace, last) if q.tensor == tensor
            and q.shape == right.shape and close(q.answer, right)]
    return [(w.kind, w.value, w.why) for q in made[:1] for w in q.wrong]


def _title(trace: Trace, s: Step) -> str:
    """A step's title, worked out once: each of the n results an ``add_n`` of n tensors
    makes names the same step, whose whole description costs O(n)."""
    titles = trace.__dict__.setdefault("_gv_titles", {})
    if s.index not in titles:
        titles[s.index] = describe(trace, s).title
    return titles[s.index]


def _last_gradient_step(trace: Trace, s: ResultStep) -> Step | None:
    """The step that completed the gradient a result reports."""
    last = trace.__dict__.get("_gv_last_gradient")
    if last is None:  # every (pass, tensor)'s gradient steps, found in one walk
        last = {}
        for p in trace.steps:
            if isinstance(p, (AccumulateStep, ReduceStep, SeedStep)):
                last.setdefault((p.pass_index, p.tensor), []).append(p.index)
            elif isinstance(p, BackwardStep):
                for t in dict.fromkeys(trace.ops[p.op].inputs):
                    last.setdefault((p.pass_index, t), []).append(p.index)
        trace.__dict__["_gv_last_gradient"] = last
    made = last.get((s.pass_index, s.tensor), [])
    k = bisect_left(made, s.index)
    return trace.steps[made[k - 1]] if k else None
