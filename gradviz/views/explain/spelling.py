"""How a backward step names its op's tensors: one spelling for its sentence, formulas and labels.

``X * W`` says "grad * X" in the formula for W, the sentence says "X (2,1)
and W ()", and the array the viewer shows is labelled "dL/dW": all three
read the names from the step's :class:`_Spelling`, worked out once per step.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ...engine.custom import CUSTOM_GRADIENT
from ...trace import BackwardStep, OpInfo, Trace
from .explanation import _once_per_step
from .names import _WORD, _formula_names
from .rules import _VARIADIC, OpRule, _rule, _specialised

__all__ = ["custom_arguments", "input_names"]


@dataclass(frozen=True)
class _Spelling:
    """How one backward step writes its op's tensors, in the sentence and the formulas alike."""

    templates: list[str]  # the formula template per input, e.g. "grad * b", places filled
    by_word: dict[str, str]  # template word -> the tensor's name, e.g. {"a": "X", "b": "W"}
    tensors: dict[str, int]  # template word -> the tensor it stands for, e.g. {"a": 3}
    numbers: list[dict]  # per input: the numbers its formula names, e.g. {"n": 6} for Mean
    names: dict[int, str]  # tensor id -> its name, e.g. "W", "'grad'", "layer1/W"
    uses: list[str]  # per input: its name, plus " (as input i)" when the tensor is two inputs
    rule: OpRule | None  # the step's rule (see _rule), None for the generic wording


def _spelling(trace: Trace, s: BackwardStep) -> _Spelling:
    """The step's spelling, worked out once per step of a trace.

    Its sentence (describe) and its arrays' labels (input_names) both need it.
    """
    return _once_per_step(trace, s, "_gv_spellings", _spell)


def _spell(trace: Trace, s: BackwardStep) -> _Spelling:
    op = trace.ops[s.op]
    rule = _rule(trace, s)
    numbers: list[dict] = [{} for _ in op.inputs]
    if rule is None:
        templates = (_custom_templates(op) if s.op_type == CUSTOM_GRADIENT else
                     [f"{s.rule}(op, grad)[{i}]" for i in range(len(op.inputs))])
        words: dict[str, int] = {}
    else:
        templates = []
        for i in range(len(op.inputs)):
            template = rule.formulas[min(i, len(rule.formulas) - 1)] or "grad"
            template, numbers[i] = _specialised(trace, s, i, template)
            templates.append(template)
        words = {} if s.op_type in _VARIADIC else dict(zip(rule.roles, op.inputs))
        if "y" not in words and len(op.outputs) == 1:
            words["y"] = op.outputs[0]  # the op's output, e.g. Exp: grad * y
    # A tensor called like a word the formula keeps ("grad") is quoted.
    taken = ({w for f in templates for w in _WORD.findall(f)} - set(words)
             | {w for n in numbers for w in n})
    names = _formula_names(trace, [*op.inputs, *words.values()], taken | {"grad", "L"})
    # x * x: both inputs are x, so say which use each gradient is for.
    count = Counter(op.inputs)
    uses = [names[t] + (f" (as input {i})" if count[t] > 1 else "")
            for i, t in enumerate(op.inputs)]
    return _Spelling(templates, {w: names[t] for w, t in words.items()}, words, numbers, names,
                     uses, rule)


def _custom_templates(op: OpInfo) -> list[str]:
    """A custom gradient's formula per input: its grad_fn called on the upstream
    gradients, and which of its results goes to that input (an argument's, or with
    ``variables=`` a Variable's)."""
    n = custom_arguments(op)
    call = "grad_fn(grad)" if len(op.outputs) == 1 else "grad_fn(*grad)"
    if n == len(op.inputs):  # no variables
        return [call] if n == 1 else [f"{call}[{i}]" for i in range(n)]
    call = call[:-1] + ", variables)"
    return [f"{call}[0]" + ("" if n == 1 else f"[{i}]") for i in range(n)] + \
        [f"{call}[1][{j}]" for j in range(len(op.inputs) - n)]


def custom_arguments(op: OpInfo) -> int:
    """How many of a custom gradient op's inputs are its function's arguments (the rest
    are the Variables it reads)."""
    n = op.attrs.get("num_args")
    return n if isinstance(n, int) and 0 <= n <= len(op.inputs) else len(op.inputs)


# A place in an idea for an input: "{a}", or "{a:use}" where a gradient goes to it.
_PLACE = re.compile(r"\{(\w+)(:use)?\}")


def _fill_idea(rule: OpRule, spell: _Spelling) -> str:
    """The rule's idea with each place for an input filled with that input's name."""
    def fill(m: re.Match) -> str:
        role, use = m.group(1), m.group(2)
        i = rule.roles.index(role) if role in rule.roles else None
        if use and i is not None and i < len(spell.uses):
            return spell.uses[i]
        if role in spell.by_word:
            return spell.by_word[role]
        return "its output" if i is None else f"input {i}"  # a trace missing the tensor
    return _PLACE.sub(fill, rule.idea)


def input_names(trace: Trace, step: int | BackwardStep) -> list[str]:
    """How a backward step names each input of its op, as its sentence and formulas do.

    The name the sentences use (:func:`display_name`), with the formulas'
    conventions: the scope put back where two would read the same, long names
    cut, odd ones quoted, and "(as input i)" when one tensor is two inputs.

    >>> import gradviz as gv
    >>> X = gv.constant([[2.0], [3.0]], name="in_X")
    >>> W = gv.Variable(1.5, name="in_W")
    >>> tr = gv.trace_gradients(X * W, W)
    >>> input_names(tr, 1)
    ['in_X', 'in_W']
    >>> tr = gv.trace_gradients(X * X, X)
    >>> input_names(tr, 1)
    ['in_X (as input 0)', 'in_X (as input 1)']
    """
    if isinstance(step, (int, np.integer)) and not isinstance(step, bool):
        step = trace.steps[int(step)]
    if not isinstance(step, BackwardStep):
        raise TypeError(f"input_names: expected a backward step, got a "
                        f"{getattr(step, 'kind', type(step).__name__)} step")
    return list(_spelling(trace, step).uses)
