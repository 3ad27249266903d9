"""A question, the named wrong answers it knows, and how an answer is checked.

A :class:`Question` asks for one gradient a step produces.  It holds the right
answer and :class:`Misconception` s: wrong answers computed from the step's own
arrays, each with the misconception that gives it.  :meth:`Question.check`
compares an answer with them, shape first, then values, within a relative
tolerance, and says what it found in a :class:`Feedback`.

>>> import numpy as np
>>> q = Question(step=1, step_kind="backward", tensor=2, target="dL/dW",
...              prompt="What gradient does Mul send to W?", given=(),
...              answer=np.array([2.0, 4.0]),
...              wrong=(Misconception("mul_wrong_input", np.array([3.0, 6.0]),
...                                   "That is grad times W itself."),),
...              hints=("dL/dW = grad * X", "dL/dW = [2, 4]"))
>>> q.check([2.0, 4.01]).verdict
'right'
>>> q.check([3, 6]).kind, q.check([3, 6]).message
('mul_wrong_input', 'Multiplied by the wrong input. That is grad times W itself.')
>>> q.check([1, 1]).hint, q.check([1, 1], hints=1).hint
('dL/dW = grad * X', 'dL/dW = [2, 4]')
>>> q.check([[2.0, 4.0]]).kind
'wrong_shape'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...trace import ArrayData
from ..explain import format_shape

__all__ = ["MISCONCEPTIONS", "RTOL", "Misconception", "Question", "Feedback"]

#: Each misconception a question can name, with the title its feedback gives it.
MISCONCEPTIONS: dict[str, str] = {
    "broadcast_not_summed": "the broadcast sum forgotten",
    "broadcast_wrong_axes": "summed over the wrong axes",
    "broadcast_mean": "averaged instead of summed",
    "fan_out_one": "one fan-out contribution instead of their sum",
    "mul_wrong_input": "multiplied by the wrong input",
    "derivative_from_input": "the output's formula used with the input",
    "derivative_at_output": "the derivative taken at the output",
    "matmul_transpose": "the transpose on the wrong factor",
    "matmul_order": "the factors in the wrong order",
    "mean_not_divided": "the division by n forgotten",
    "mask_forgotten": "the ReLU mask forgotten",
    "kernel_not_flipped": "the kernel not flipped",
    "pool_gradient_everywhere": "the gradient sent to every element of the window",
    "pool_not_shared": "the window's gradient not shared among its elements",
    "upstream_forgotten": "the upstream gradient left out",
    "cut_ignored": "a stop_gradient cut ignored",
    "grad_ys_ignored": "grad_ys ignored",
    "wrong_sign": "the wrong sign",
    "wrong_shape": "the right numbers in the wrong shape",
}

#: How close an answer must be: each element within 1% of its own size plus 1% of
#: the largest element, so that three significant digits typed are always enough.
RTOL = 0.01


@dataclass(frozen=True)
class Misconception:
    """A wrong answer a question knows, and the misconception that gives it."""

    kind: str  # a key of MISCONCEPTIONS
    value: np.ndarray  # the wrong answer, computed from the step's own arrays
    why: str  # one sentence: what was done, and what the rule does instead
    also: tuple[str, ...] = ()  # other kinds that give the same numbers on this step

    @property
    def title(self) -> str:
        return MISCONCEPTIONS[self.kind]


@dataclass(frozen=True)
class Feedback:
    """What checking an answer found."""

    verdict: str  # "right", "misconception", "shape" (a wrong shape, no kind known) or "not_yet"
    message: str  # one or two sentences for the learner
    kind: str | None = None  # the misconception, for the verdict "misconception"
    hint: str | None = None  # for "not_yet": the formula first, then the answer

    @property
    def right(self) -> bool:
        return self.verdict == "right"

    def __str__(self) -> str:
        return self.message + (f"\nHint: {self.hint}" if self.hint else "")

    def _repr_html_(self) -> str:
        from .render import feedback_html  # noqa: PLC0415  (rendering only when shown)
        return feedback_html(self)


@dataclass(frozen=True)
class Question:
    """One gradient a step produces, asked: the right answer and the named wrong ones.

    ``wrong`` holds only answers that differ from the right one and from each
    other (within the tolerance), in the order they are checked; a kind whose
    numbers are the right ones on this step is in ``same_as_right``, one whose
    numbers are another kind's is in that kind's ``also``.
    """

    step: int  # the step's index in the trace
    step_kind: str  # "seed", "backward", "reduce", "accumulate" or "result"
    tensor: int  # the tensor whose gradient is asked
    target: str  # what is asked for, as the formulas write it: "dL/dW"
    prompt: str  # the question in words
    given: tuple[tuple[str, ArrayData], ...]  # (label, array) the learner may see
    answer: np.ndarray  # the right answer (float64), in the tensor's shape
    wrong: tuple[Misconception, ...] = ()
    hints: tuple[str, str] = ("", "")  # the formula without its value, then the answer
    same_as_right: tuple[str, ...] = ()  # kinds giving the right numbers on this step
    focus: tuple[int, ...] | None = None  # for more than 16 values: the one element to ask
    input_index: int | None = None  # for a backward step: which input of the op
    shape_note: str | None = None  # why the answer's shape is not the tensor's, where it is not
    rtol: float = RTOL
    # Every slip tried on this step, (kind, value), before the coincidences were sorted
    # out: what the tests hold ``wrong``, ``also`` and ``same_as_right`` to.
    slips: tuple[tuple[str, np.ndarray], ...] = field(default=(), repr=False, compare=False)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.answer.shape)

    # ------------------------------------------------------------ checking

    def check(self, answer: Any, hints: int = 0) -> Feedback:
        """Right, a named misconception, a wrong shape, or "not yet" with hint ``hints``
        (0: the formula, 1 or more: the answer).

        ``answer`` is a number, a nested list or an array in the gradient's
        shape; for a question with a ``focus``, a single number is read as
        that element.
        """
        got = _as_answer(answer)
        right, wrong = self.answer, self.wrong
        if self.focus is not None and got.ndim == 0 and right.ndim:
            right = right[self.focus]
            wrong = tuple(_at(w, self.focus) for w in wrong if w.value.shape == self.shape)
        if got.shape != right.shape:
            for w in wrong:
                if w.value.shape == got.shape and close(got, w.value, self.rtol):
                    return _named(w)
            if got.size == right.size and (close(got.reshape(-1), right.reshape(-1), self.rtol)
                                           or close(got.T.reshape(-1), right.reshape(-1),
                                                    self.rtol)):
                return _named(Misconception("wrong_shape", got, "A gradient has the shape "
                                            "of what it is the gradient of: "
                                            f"{has_shape(self.target, right.shape)}."))
            return self._wrong_shape(got.shape, right.shape)
        if close(got, right, self.rtol):
            return Feedback("right", f"Right: {self.target} = {_text(right)}.")
        for w in wrong:
            if w.value.shape == got.shape and close(got, w.value, self.rtol):
                return _named(w)
        hint = self.hints[min(max(int(hints), 0), 1)]
        return Feedback("not_yet", "Not yet: that is none of the usual slips.", hint=hint)

    def check_shape(self, shape: Any) -> Feedback:
        """The answer's shape, asked before its values: right, or what a wrong one means."""
        got = _as_shape(shape)
        if got == self.shape:
            return Feedback("right", f"Right: {has_shape(self.target, got)}.")
        for w in self.wrong:
            if w.kind != "wrong_shape" and tuple(w.value.shape) == got:
                return _named(w)
        return self._wrong_shape(got, self.shape)

    def _wrong_shape(self, got: tuple[int, ...], want: tuple[int, ...]) -> Feedback:
        why = self.shape_note or "a gradient has the shape of what it is the gradient of."
        return Feedback("shape", f"{has_shape(self.target, want)}, not {shape_words(got)}: {why}",
                        hint=self.hints[0])

    # ------------------------------------------------------------ as data

    def to_dict(self) -> dict[str, Any]:
        """The question as strict JSON, for a front end that only compares numbers."""
        return {
            "step": self.step,
            "kind": self.step_kind,
            "tensor": f"t{self.tensor}",
            "input_index": self.input_index,
            "target": self.target,
            "prompt": self.prompt,
            "given": [{"label": label, "shape": list(a.shape), "values": _json(a.values)}
                      for label, a in self.given],
            "shape": list(self.shape),
            "answer": _json(self.answer),
            "focus": None if self.focus is None else list(self.focus),
            "rtol": self.rtol,
            "wrong": [{"kind": w.kind, "title": w.title, "why": w.why,
                       "shape": list(w.value.shape), "values": _json(w.value),
                       **({"also": list(w.also)} if w.also else {})} for w in self.wrong],
            "same_as_right": list(self.same_as_right),
            "shape_note": self.shape_note,
            "hints": list(self.hints),
        }


def has_shape(target: str, shape: tuple[int, ...]) -> str:
    """``dL/dW has shape (2,1)``, or ``dL/dW is a scalar``."""
    return f"{target} is a scalar" if not shape else f"{target} has shape {format_shape(shape)}"


def shape_words(shape: tuple[int, ...]) -> str:
    """A shape as a sentence says it: ``(2,1)``, or ``a scalar``."""
    return "a scalar" if not shape else format_shape(shape)


def close(got: np.ndarray, want: np.ndarray, rtol: float = RTOL) -> bool:
    """Same shape, and every element within ``rtol`` of its own size plus ``rtol`` of the
    largest element of ``want``.

    >>> close(np.array([0.197, 0.0]), np.array([0.19661193, 0.0004]))
    True
    >>> close(np.array([0.18]), np.array([0.19661193]))
    False
    """
    if got.shape != want.shape:
        return False
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(got - want) <= rtol * (np.abs(want) + scale) + 1e-12))


def _named(w: Misconception) -> Feedback:
    return Feedback("misconception", f"{w.title[0].upper()}{w.title[1:]}. {w.why}", w.kind)


def _at(w: Misconception, index: tuple[int, ...]) -> Misconception:
    return Misconception(w.kind, np.asarray(w.value[index]), w.why, w.also)


def _as_answer(answer: Any) -> np.ndarray:
    """An answer as a float64 array, or a ValueError saying what is accepted."""
    if isinstance(answer, (str, bytes, dict, set)) or answer is None:
        raise ValueError(f"an answer is a number, a nested list of numbers or a NumPy "
                         f"array, not {type(answer).__name__} {answer!r:.60}")
    try:
        got = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"an answer is a number, a nested list of numbers or a NumPy "
                         f"array; {answer!r:.60} is not (are the rows of equal length?)"
                         ) from None
    if not np.all(np.isfinite(got)):
        raise ValueError("an answer holds numbers only: no NaN or infinity")
    return got


def _as_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(int(d) for d in shape)
        ok = all(d >= 0 and d == s for d, s in zip(out, shape))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"a shape is a tuple of sizes such as (2, 3), or () for a scalar; "
                         f"got {shape!r:.60}")
    return out


def _text(a: np.ndarray) -> str:
    from ..explain import format_array  # noqa: PLC0415
    return format_array(ArrayData.of(a))


def _json(a: np.ndarray) -> Any:
    """Values at five significant digits (answers are checked at 1%): nested lists, or a
    number."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return a.tolist()
    flat = [float(f"{v:.5g}") for v in a.reshape(-1)]
    return np.array(flat).reshape(a.shape).tolist()
