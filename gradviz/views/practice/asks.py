"""Questions a lesson asks that are not one step's gradient: a value, a shape, a count of
backward passes, a choice between explanations, which tensors get None.

They are built as a step's questions are, data first: the right answer and each
wrong one worked out by running the program (or read from its trace), the wrong
ones keyed by the slip that gives them; the words come from :data:`SLIPS`, the
slip's title and the rule it misses.  A slip whose answer is the right one is
refused when the question is made: a question that cannot tell the slip from
the rule would call it right, so ask where they differ.

>>> q = value("x = [1, 2, 3] and y = x * x: which grad_ys makes gradients(y, x, grad_ys) "
...           "all ones?", [0.5, 0.25, 1 / 6], hint="grad_ys * 2 * x = 1",
...           slips={"derivative_not_inverted": [2.0, 4.0, 6.0], "grad_ys_ignored": [1, 1, 1]})
>>> q.check([0.5, 0.25, 0.167]).verdict
'right'
>>> print(q.check([2, 4, 6]).message)
The derivative instead of its reciprocal. For grad_ys * dy/dx to be 1, grad_ys must be 1 / (dy/dx), element by element.
>>> value("?", [1.0, 2.0], hint="h", slips={"grad_ys_ignored": [1.0, 2.0]})
Traceback (most recent call last):
...
ValueError: slips: 'grad_ys_ignored' gives the right answer here, so checking could not tell it from the rule; ask where they differ
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...trace import ArrayData, Trace
from ..explain import display_name
from .model import (MISCONCEPTIONS, RTOL, Feedback, _as_answer, _as_shape, _is_number, _json,
                    _text, array_answer_line, close, shape_words)

__all__ = ["SLIPS", "FORMS", "Slip", "LessonQuestion", "value", "shape", "count", "choice",
           "nones"]

#: The slips a lesson's question can name: kind -> (title, the rule it misses, in general).
#: Kinds a step's question names too keep that title.
SLIPS: dict[str, tuple[str, str]] = {
    "grad_ys_ignored": (MISCONCEPTIONS["grad_ys_ignored"],
                        "gradients(y, x, grad_ys) weights each output's gradient by its "
                        "grad_ys: it is the sum of grad_ys * dy/dx, not dy/dx alone."),
    "derivative_not_inverted": ("the derivative instead of its reciprocal",
                                "For grad_ys * dy/dx to be 1, grad_ys must be 1 / (dy/dx), "
                                "element by element."),
    "broadcast_not_summed": (MISCONCEPTIONS["broadcast_not_summed"],
                             "A tensor used once per example gets the sum of their gradients, "
                             "in its own shape."),
    "mean_not_divided": (MISCONCEPTIONS["mean_not_divided"],
                         "reduce_mean divides by the number of values it averages, and its "
                         "gradient is divided by it too."),
    "cut_ignored": (MISCONCEPTIONS["cut_ignored"],
                    "A tensor in stop_gradients is a constant for everything computed before "
                    "it: nothing flows through it to what it was made from."),
    "stopped_gets_nothing": ("a stopped tensor given no gradient of its own",
                             "A stop, the op or the argument, stops what flows through a "
                             "tensor, not what flows into it: the tensor itself still gets "
                             "its gradient."),
    "unconnected_zero": ("no path read as a zero gradient",
                         "A tensor the target does not depend on gets None (the default, "
                         "unconnected_gradients='none'), not zeros."),
    "stop_op_passes": ("stop_gradient read as letting the gradient through",
                       "gv.stop_gradient(x) is x going forward and sends nothing back: what "
                       "reaches the target only through it gets None."),
    "integer_gets_gradient": ("an integer given a gradient",
                              "Integers are constants for differentiation: an int tensor's "
                              "gradient is None."),
    "passes_one": ("one backward pass for a whole Jacobian",
                   "One reverse pass gives one row of the Jacobian (a vector-Jacobian "
                   "product): a Jacobian of N outputs takes N passes."),
    "passes_per_input": ("passes counted by the inputs",
                         "One reverse pass gives the gradient of every input at once: the "
                         "passes follow the outputs, not the inputs."),
    "forward_passes_per_output": ("forward passes counted by the outputs",
                                  "One forward pass moves the inputs along one direction and "
                                  "gives how every output moves: one column of the Jacobian. "
                                  "A Jacobian of N inputs takes N forward passes, whatever "
                                  "the number of outputs."),
    "other_row": ("the other output's row",
                  "output_gradients that are 1 at output i and 0 elsewhere pick row i of the "
                  "Jacobian: the gradients of output i alone."),
    "rows_summed": ("the rows summed",
                    "output_gradients of all ones give the sum of the outputs' gradients, "
                    "not one output's."),
    "shape_of_upstream": ("the upstream gradient's shape",
                          "A rule returns each input's gradient in that input's shape, not in "
                          "the shape of the gradient it receives."),
    "shape_transposed": ("the shape transposed",
                         "A gradient has the shape of what it is the gradient of, axes in the "
                         "same order."),
    "jacobian_full": ("the full Jacobian's shape",
                      "batch_jacobian keeps, for each example, only that example's outputs "
                      "against its own inputs: (batch, out, in), not (batch, out, batch, in)."),
    "custom_gradient_ignored": ("the custom gradient ignored",
                                "With gv.custom_gradient the backward pass runs the function's "
                                "own gradient, not the rules of the ops inside it."),
    "per_example_gradient_product": ("a product of per-element gradients",
                                     "Gradients multiply element by element only where each "
                                     "element of one tensor moves a single element of the "
                                     "next; in general the upstream gradient goes in as "
                                     "grad_ys."),
    "summed_rows_as_jacobian": ("the rows' sum taken for the Jacobian",
                                "gradients(h, W) is the gradient of sum(h): the Jacobian's "
                                "rows already added up, which no product can weight "
                                "afterwards."),
    "other_sources_walked": ("the paths to other sources walked too",
                             "A pass walks only the ops between the target and the sources "
                             "it was asked for: an input that leads to none of them is sent "
                             "nothing."),
    "surrogate_squared": ("the squared error's gradient kept",
                          "h - target is the gradient of 0.5 * (h - target)^2; its sign, 1 "
                          "or -1 whatever the size, is the gradient of |h - target|."),
    "grad_ys_must_be_derivative": ("grad_ys taken to need a derivative",
                                   "grad_ys is any array you choose; every one is the "
                                   "gradient of the loss sum(grad_ys * y) with grad_ys held "
                                   "constant."),
    "every_tensor_held": ("every tensor held constant",
                          "stop_gradients holds only the tensors listed: the others still "
                          "pass their gradient back to what they were made from."),
    "unconnected_learns": ("a tensor off every path taken to learn",
                           "Only a tensor on a path from the target gets a gradient; with "
                           "'zero', one on no path gets zeros, and an update by zeros leaves "
                           "it where it was."),
    "value_for_slope": ("the sigmoid's value taken for its slope",
                        "sigmoid'(z) = s * (1 - s) with s = sigmoid(z): at most 1/4, at z = 0, "
                        "where s is 1/2."),
    "one_layer_slope": ("one layer's slope taken for the whole chain",
                        "Backpropagation multiplies the local slope of every layer it passes "
                        "back through: five sigmoids give a product of five slopes, each at "
                        "most 1/4."),
    "slopes_added": ("the layers' slopes added",
                     "The chain rule multiplies the slopes of the layers in a chain; added, "
                     "more layers would make the gradient larger, not smaller."),
    "softmax_minus_labels": ("softmax(z) - labels where the labels do not sum to 1",
                             "The cross-entropy's derivative is softmax(z) * sum(labels) - "
                             "labels; it is softmax(z) - labels only for labels that sum to 1 "
                             "in each row."),
    "overshoot_assumed": ("a large step taken to overshoot",
                          "A step overshoots where the loss curves sharply along it; this "
                          "cross-entropy, on data a line separates, flattens as the weights "
                          "grow, so a large step only gets there sooner."),
}

#: What each kind of question asks for.
FORMS = ("value", "shape", "count", "choice", "nones")

#: What an answer that is neither right nor a known slip is told.
NOT_YET = "Not yet: that is none of the usual slips."


@dataclass(frozen=True)
class Slip:
    """A wrong answer a lesson's question knows, keyed by the slip that gives it."""

    kind: str  # a key of SLIPS
    answer: Any  # the wrong answer, in the question's form (an array, a shape, ...)

    @property
    def title(self) -> str:
        return SLIPS[self.kind][0]

    @property
    def why(self) -> str:
        return SLIPS[self.kind][1]

    @property
    def message(self) -> str:
        """What checking says of this answer: the slip's title, then the rule it misses."""
        return f"{self.title[0].upper()}{self.title[1:]}. {self.why}"


@dataclass(frozen=True)
class LessonQuestion:
    """One question of a lesson: its right answer and the named wrong ones.

    ``answer`` is in the form's own terms: a float64 array (``value``), a shape
    tuple (``shape``), an int (``count``), an option's key (``choice``) or a
    frozenset of names (``nones``).
    """

    form: str  # one of FORMS
    prompt: str  # the question in words
    answer: Any
    slips: tuple[Slip, ...]
    hint: str  # the rule to use, without its result
    given: tuple[tuple[str, ArrayData], ...] = ()  # (label, array) the question shows
    options: tuple[tuple[str, str], ...] = ()  # a choice's (key, text); nones: (name, "")
    rtol: float = RTOL

    @property
    def hints(self) -> tuple[str, str]:
        """The rule first, then the answer (as ``Question.hints``)."""
        return self.hint, f"The answer: {self.answer_text(self.answer)}"

    def answer_text(self, answer: Any) -> str:
        """An answer of this form, as the feedback writes it."""
        if self.form == "value":
            return _text(answer)
        if self.form == "shape":
            return shape_words(answer)
        if self.form == "choice":
            return f"{answer}) {dict(self.options)[answer]}"
        if self.form == "nones":
            return ", ".join(sorted(answer)) if answer else "none of them"
        return str(answer)

    def check(self, answer: Any, hints: int = 0) -> Feedback:
        """Right, the slip the answer is, or "not yet" with hint ``hints`` (0: the rule,
        1 or more: the answer)."""
        got = self._read(answer)
        if self._same(got, self.answer):
            return Feedback("right", f"Right: {self.answer_text(self.answer)}.")
        for slip in self.slips:
            if self._same(got, slip.answer):
                return Feedback("misconception", slip.message, slip.kind)
        if self.form == "value" and got.shape != self.answer.shape:
            return Feedback("shape", f"{self.shape_message} not {shape_words(got.shape)}.",
                            hint=self.hints[0])
        return Feedback("not_yet", NOT_YET, hint=self.hints[min(max(int(hints), 0), 1)])

    @property
    def shape_message(self) -> str:
        """The start of what a value of the wrong shape is told (its shape follows)."""
        return f"The answer has shape {shape_words(self.answer.shape)},"

    def to_dict(self) -> dict[str, Any]:
        """The question as strict JSON, every word of its feedback in it, for a page that
        only compares answers (``exercises.js``)."""
        return {
            "form": self.form,
            "prompt": self.prompt,
            "given": [{"label": label, "shape": list(a.shape), "values": _json(a.values)}
                      for label, a in self.given],
            "options": [{"key": k, "text": t} for k, t in self.options],
            "answer": self._answer_json(self.answer),
            "right": f"Right: {self.answer_text(self.answer)}.",
            "slips": [{"kind": w.kind, "answer": self._answer_json(w.answer),
                       "message": w.message} for w in self.slips],
            "not_yet": NOT_YET,
            "shape_message": self.shape_message if self.form == "value" else None,
            "hints": list(self.hints),
            "rtol": self.rtol,
        }

    def _answer_json(self, answer: Any) -> Any:
        if self.form == "value":
            return {"shape": list(answer.shape), "values": _json(answer.reshape(-1))}
        if self.form == "nones":
            return sorted(answer)
        return list(answer) if self.form == "shape" else answer

    def how_to_answer(self) -> str:
        """How to answer, with an example call."""
        if self.form == "value":
            return array_answer_line(self.answer.shape)
        if self.form == "shape":
            return "Answer with a shape: check((2, 3)), or check(()) for a scalar"
        if self.form == "count":
            return "Answer with a whole number: check(...)"
        if self.form == "choice":
            keys = [k for k, _ in self.options]
            return f"Answer with one letter, {', '.join(keys[:-1])} or {keys[-1]}: check('a')"
        names = [n for n, _ in self.options]
        return (f"Answer with the names among {', '.join(names)}: check(['{names[0]}', ...]), "
                "or check([]) for none")

    # ------------------------------------------------------------ reading answers

    def _read(self, answer: Any) -> Any:
        """An answer in the form's terms, or a ValueError saying what is accepted."""
        if self.form == "value":
            return _as_answer(answer)
        if self.form == "shape":
            return _shape(answer)
        if self.form == "count":
            return _count(answer)
        keys = [k for k, _ in self.options]
        if self.form == "choice":
            key = answer.strip().lower().rstrip(")") if isinstance(answer, str) else None
            if key not in keys:
                raise ValueError(f"choose one of {', '.join(keys)} (a letter as a string, "
                                 f"check('{keys[0]}')), not {answer!r:.60}")
            return key
        return _names(answer, keys)

    def _same(self, got: Any, want: Any) -> bool:
        if self.form == "value":
            return close(got, want, self.rtol)
        return got == want


def _names(answer: Any, known: list[str]) -> frozenset[str]:
    """Tensor names as a set: one name, a collection of them, or None / [] for none."""
    if answer is None:
        return frozenset()
    items = [answer] if isinstance(answer, str) else answer
    if isinstance(items, Mapping) or not isinstance(items, Iterable):
        raise ValueError(f"answer with tensor names, check(['{known[0]}', ...]), or check([]) "
                         f"for none; not {type(answer).__name__}")
    got = []
    for item in items:
        name = item.name if hasattr(item, "name") and not isinstance(item, str) else item
        if not isinstance(name, str):
            raise ValueError(f"answer with tensor names (strings); {item!r:.60} is not one")
        name = name.strip().removesuffix(":0")
        if name not in known:
            raise ValueError(f"{name!r}: not one of the tensors asked about: {', '.join(known)}")
        got.append(name)
    return frozenset(got)


# ---------------------------------------------------------------------- makers


def value(prompt: str, answer: Any, *, slips: Mapping[str, Any], hint: str,
          given: Mapping[str, Any] | None = None) -> LessonQuestion:
    """A number or an array to work out: ``answer`` and each slip's answer are worked out
    by running the program (a number, a nested list, an array or a tensor).

    ``given`` are arrays the question shows, by label.
    """
    right = _as_answer(_array(answer))
    shown = tuple((str(k), ArrayData.of(np.asarray(_array(v))))
                  for k, v in (given or {}).items())
    return _made("value", prompt, right, slips, hint, given=shown,
                 read=lambda v: _as_answer(_array(v)))


def shape(prompt: str, answer: Any, *, slips: Mapping[str, Any], hint: str) -> LessonQuestion:
    """A shape to work out: ``answer`` and each slip's answer are shapes, or arrays or
    tensors whose shape is meant (worked out by running the program)."""
    return _made("shape", prompt, _shape(answer), slips, hint, read=_shape)


def count(prompt: str, answer: Any, *, slips: Mapping[str, Any], hint: str) -> LessonQuestion:
    """A count to work out, such as the backward passes a computation takes: ``answer``
    and each slip's answer are whole numbers, or traces (their ``passes`` are meant)."""
    return _made("count", prompt, _count(answer), slips, hint, read=_count)


def choice(prompt: str, options: Mapping[str, str], right: str, *, slips: Mapping[str, str],
           hint: str) -> LessonQuestion:
    """A choice between explanations: ``options`` maps letters to what each says,
    ``right`` is the right one's letter, and ``slips`` maps each wrong letter to the slip
    it is (every wrong option is named)."""
    if not isinstance(options, Mapping) or len(options) < 2:
        raise ValueError("options: a dict of at least two {letter: explanation}")
    keys = list(options)
    bad = [k for k in keys if not (isinstance(k, str) and len(k) == 1 and k.islower())]
    if bad:
        raise ValueError(f"options: each key is one lower-case letter, not {bad[0]!r}")
    if right not in options:
        raise ValueError(f"right: {right!r} is not one of the options {', '.join(keys)}")
    if not isinstance(slips, Mapping):
        raise TypeError(f"slips: a dict of {{letter: slip kind}}, not {type(slips).__name__}")
    unnamed = [k for k in keys if k != right and k not in slips]
    if unnamed:
        raise ValueError(f"slips: option {unnamed[0]!r} is wrong but names no slip; every "
                         "wrong option names the slip it is")
    if right in slips:
        raise ValueError(f"slips: {right!r} is the right option; it cannot be a slip")
    for letter, kind in slips.items():
        if letter not in options:
            raise ValueError(f"slips: {letter!r} is not one of the options {', '.join(keys)}")
        _check_kind(kind)
    named = tuple(Slip(kind, letter) for letter, kind in slips.items())
    return LessonQuestion("choice", _prompt(prompt), right, named, _hint(hint),
                          options=tuple((k, str(v)) for k, v in options.items()))


def nones(trace: Trace, *, slips: Mapping[str, Any], hint: str,
          prompt: str | None = None) -> LessonQuestion:
    """Which of ``trace``'s sources get None: the answer is read from the trace; each
    slip's answer is another trace of the same sources run the wrong way (say, without
    its stops), or the names it gives."""
    if not isinstance(trace, Trace):
        raise TypeError(f"nones: expected a Trace, got {type(trace).__name__}")
    names = _source_names(trace)
    asked = prompt or f"Which of {', '.join(names)} get None as their gradient?"

    def read(v: Any) -> frozenset[str]:
        if isinstance(v, Trace):
            if _source_names(v) != names:
                raise ValueError(f"slips: a trace of the sources {', '.join(_source_names(v))}, "
                                 f"not the question's {', '.join(names)}")
            return _nones_of(v)
        return _names(v, names)

    return _made("nones", asked, _nones_of(trace), slips, hint, read=read,
                 options=tuple((n, "") for n in names))


def _made(form: str, prompt: str, right: Any, slips: Mapping[str, Any], hint: str,
          read: Any, **fields: Any) -> LessonQuestion:
    """The question, once every slip is a known kind whose answer differs from the right
    one and from every other slip's."""
    if not isinstance(slips, Mapping) or not slips:
        raise ValueError("slips: a dict of at least one {slip kind: its answer}; a question "
                         "names the wrong answers learners give")
    q = LessonQuestion(form, _prompt(prompt), right, (), _hint(hint), **fields)
    named: list[Slip] = []
    for kind, wrong in slips.items():
        _check_kind(kind)
        slip = Slip(kind, read(wrong))
        if q._same(slip.answer, right) or (form == "value" and q._same(right, slip.answer)):
            raise ValueError(f"slips: {kind!r} gives the right answer here, so checking could "
                             "not tell it from the rule; ask where they differ")
        for other in named:
            if q._same(slip.answer, other.answer):
                raise ValueError(f"slips: {kind!r} and {other.kind!r} give the same answer "
                                 "here; ask where they differ, or name one")
        named.append(slip)
    return replace(q, slips=tuple(named))


def _check_kind(kind: Any) -> None:
    if kind not in SLIPS:
        raise ValueError(f"slips: unknown slip {kind!r}; known: {', '.join(sorted(SLIPS))}")


def _prompt(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError("prompt: the question, as a non-empty string")
    return text.strip()


def _hint(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError("hint: the rule to use, as a non-empty string")
    return text.strip()


def _array(v: Any) -> Any:
    """A tensor's value (it has ``numpy()``), or ``v`` as it is."""
    numpy = getattr(v, "numpy", None)
    return numpy() if callable(numpy) else v


def _shape(v: Any) -> tuple[int, ...]:
    if hasattr(v, "shape") and not isinstance(v, (tuple, list)):
        return tuple(int(d) for d in v.shape)
    return _as_shape(v)


def _count(v: Any) -> int:
    if isinstance(v, Trace):
        return int(v.passes)
    if not (_is_number(v) and float(v) == int(v) and v >= 0):
        raise ValueError(f"a count is a whole number such as 3, or a Trace (its passes), "
                         f"not {v!r:.60}")
    return int(v)


def _source_names(trace: Trace) -> list[str]:
    return [display_name(trace.tensors[i]) for i in trace.xs]


def _nones_of(trace: Trace) -> frozenset[str]:
    return frozenset(n for n, g in zip(_source_names(trace), trace.gradients) if g is None)
