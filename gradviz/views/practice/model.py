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
from functools import cached_property
from typing import Any

import numpy as np

from ...trace import ArrayData
from ..explain import format_shape
from ..explain.formatting import format_number

__all__ = ["MISCONCEPTIONS", "RTOL", "Misconception", "Question", "Feedback", "Resolution",
           "close", "tolerance"]

#: Each misconception a question can name, with the title its feedback gives it.
MISCONCEPTIONS: dict[str, str] = {
    "broadcast_not_summed": "the broadcast sum forgotten",
    "broadcast_wrong_axes": "summed over the wrong axes",
    "broadcast_mean": "averaged instead of summed",
    "fan_out_one": "one fan-out contribution instead of their sum",
    "mul_wrong_input": "multiplied by the wrong input",
    "derivative_from_input": "the output's formula used with the input",
    "derivative_at_output": "the derivative taken at the output",
    "derivative_of_other": "another activation's derivative",
    "matmul_transpose": "the transpose on the wrong factor",
    "matmul_order": "the factors in the wrong order",
    "matmul_result_transposed": "the right product, transposed",
    "softmax_diagonal": "the softmax Jacobian's diagonal alone",
    "mean_not_divided": "the division by n forgotten",
    "mask_forgotten": "the ReLU mask forgotten",
    "kernel_not_flipped": "the kernel not flipped",
    "pool_gradient_everywhere": "the gradient sent to every element of the window",
    "pool_not_shared": "the window's gradient not shared among its elements",
    "pool_averaged": "the window's gradient shared as an average pool shares it",
    "scale_left_out": "the scale left out",
    "gather_one_contribution": "one gather's gradient instead of their sum",
    "upstream_forgotten": "the upstream gradient left out",
    "tangent_forgotten": "the tangent left out",
    "derivative_forgotten": "the derivative left out",
    "product_rule_term_missing": "a moving input's part left out",
    "cut_ignored": "a stop_gradient cut ignored",
    "grad_ys_ignored": "grad_ys ignored",
    "wrong_sign": "the wrong sign",
    "wrong_shape": "the right numbers in the wrong shape",
}

#: How close an answer must be: each element within 1% of its own size, so that three
#: significant digits typed are always enough, plus a tenth of that of the answer's
#: largest element (what the four digits of the arrays shown leave uncertain where
#: values nearly cancel), and never closer than the gradient's dtype can tell apart at
#: that size.  Every part of the slack scales with the answer: a gradient of 1e-20 is
#: checked as closely as one of 1.
RTOL = 0.01

#: The share of ``RTOL`` each element is allowed of the answer's largest element.
SCALE_SHARE = 0.1

#: The most an answer may hold: it is typed or pasted, and a question asks at most 64
#: values.  Deeper nesting or more values is refused before NumPy reads it.
MAX_ANSWER_VALUES = 4096
MAX_ANSWER_DEPTH = 32


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

    An answer of more than 16 values is asked by the elements in ``focus``,
    chosen so that every named wrong answer differing from the right one
    anywhere differs at one of them too.
    """

    step: int  # the step's index in the trace
    step_kind: str  # "seed", "backward", "reduce", "accumulate", "result" or "forward"
    tensor: int  # the tensor whose gradient is asked
    target: str  # what is asked for, as the formulas write it: "dL/dW"
    prompt: str  # the question in words
    given: tuple[tuple[str, ArrayData], ...]  # (label, array) the learner may see
    answer: np.ndarray  # the right answer (float64), in the tensor's shape
    wrong: tuple[Misconception, ...] = ()
    hints: tuple[str, str] = ("", "")  # the formula without its value, then the answer
    same_as_right: tuple[str, ...] = ()  # kinds giving the right numbers on this step
    # for more than 16 values: the elements asked (one to three), or None: all of them
    focus: tuple[tuple[int, ...], ...] | None = None
    input_index: int | None = None  # for a backward step: which input of the op
    shape_note: str | None = None  # why the answer's shape is not the tensor's, where it is not
    rtol: float = RTOL
    # the gradient's dtype: its resolution is the least slack, at the size of each array
    resolution: Resolution = field(default_factory=lambda: Resolution.of(np.float64))
    # Every slip tried on this step, (kind, value), before the coincidences were sorted
    # out: what the tests hold ``wrong``, ``also`` and ``same_as_right`` to.
    slips: tuple[tuple[str, np.ndarray], ...] = field(default=(), repr=False, compare=False)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.answer.shape)

    @property
    def asked(self) -> str:
        """What an answer gives: ``dL/dW``, or the elements of the focus, ``dL/dW[0,1]``."""
        return ", ".join(element_names(self.target, self.focus or [()]))

    @property
    def coincide_note(self) -> str:
        """Where slips give the right numbers on this step, a sentence saying so."""
        if not self.same_as_right:
            return ""
        one = len(self.same_as_right) == 1
        titles = "; ".join(MISCONCEPTIONS[k] for k in self.same_as_right)
        return (f" On this step {'a slip gives' if one else 'slips give'} these numbers too, to "
                f"the precision checked ({titles}): another step tells "
                f"{'it' if one else 'them'} apart.")

    # ------------------------------------------------------------ checking

    def check(self, answer: Any, hints: int = 0) -> Feedback:
        """Right, a named misconception, a wrong shape, or "not yet" with hint ``hints``
        (0: the formula, 1 or more: the answer).

        ``answer`` is a number, a nested list or an array in the gradient's
        shape; for a question with a ``focus``, the elements asked: a number
        for one, a list for several, in the focus's order.
        """
        got = _as_answer(answer)
        right, (scale, scales) = self.answer, self._scales
        # each wrong answer with the scale of its whole array (its slack scales with all of it)
        wrong = list(zip(self.wrong, scales))
        focused = self._focused(got.shape)
        if focused:
            right = _pick(right, self.focus).reshape(got.shape)
            wrong = [(Misconception(w.kind, _pick(w.value, self.focus).reshape(got.shape), w.why,
                                    w.also), ws) for w, ws in wrong if w.value.shape == self.shape]
        if got.shape != right.shape:
            for w, ws in wrong:
                if close(got, w.value, self.rtol, scale=ws, resolution=self.resolution):
                    return _named(w)
            flat, res = right.reshape(-1), self.resolution
            if got.size == right.size and (close(got.reshape(-1), flat, self.rtol, resolution=res)
                                           or close(got.T.reshape(-1), flat, self.rtol,
                                                    resolution=res)):
                return _named(Misconception("wrong_shape", got, "A gradient has the shape "
                                            "of what it is the gradient of: "
                                            f"{has_shape(self.target, right.shape)}."))
            if self.focus is not None and got.ndim <= 1 and got.size < right.size:
                return self._wrong_count(got.size)
            return self._wrong_shape(got.shape, right.shape)
        if close(got, right, self.rtol, scale=scale, resolution=self.resolution):
            said = (f"{self.asked} = {', '.join(map(format_number, right.reshape(-1)))}"
                    if focused else self._right_text)
            return Feedback("right", f"Right: {said}.{self.coincide_note}")
        for w, ws in wrong:
            if close(got, w.value, self.rtol, scale=ws, resolution=self.resolution):
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

    @cached_property
    def _scales(self) -> tuple[float, tuple[float, ...]]:
        """The largest magnitude of the answer, and of each wrong answer."""
        return _scale(self.answer), tuple(_scale(w.value) for w in self.wrong)

    @cached_property
    def _right_text(self) -> str:
        return f"{self.target} = {_text(self.answer)}"

    def _focused(self, shape: tuple[int, ...]) -> bool:
        """Whether an answer of ``shape`` gives the focus's elements (not the whole array)."""
        if self.focus is None or shape == self.shape:
            return False
        return shape == (len(self.focus),) or (shape == () and len(self.focus) == 1)

    def _wrong_count(self, n: int) -> Feedback:
        """A list of numbers for a focus, of the wrong length."""
        k = len(self.focus or ())
        asks = f"{k} value{'s' if k > 1 else ''}, {self.asked}"
        return Feedback("shape", f"This question asks for {asks}, in that order, or the whole "
                        f"array, shape {format_shape(self.shape)}; that is {n} "
                        f"value{'' if n == 1 else 's'}.", hint=self.hints[0])

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
            "focus": None if self.focus is None else [list(at) for at in self.focus],
            "rtol": self.rtol,
            "resolution": {"eps": self.resolution.eps, "tiny": self.resolution.tiny},
            "wrong": [{"kind": w.kind, "title": w.title, "why": w.why,
                       "shape": list(w.value.shape), "values": _json(w.value),
                       **({"also": list(w.also)} if w.also else {})} for w in self.wrong],
            "same_as_right": list(self.same_as_right),
            "coincide_note": self.coincide_note,
            "shape_note": self.shape_note,
            "hints": list(self.hints),
        }


def array_answer_line(shape: tuple[int, ...]) -> str:
    """How to answer with a number or an array of ``shape``, with an example call.

    >>> array_answer_line((3, 2))
    'Answer with an array of shape (3,2): check([[..., ...], [..., ...], ...])'
    """
    if not shape:
        return "Answer with a number: check(...)"
    example = "..."
    for n in reversed(shape):
        example = "[" + ", ".join([example] * min(n, 2)) + (", ...]" if n > 2 else "]")
    return f"Answer with an array of shape {format_shape(shape)}: check({example})"


def element_names(target: str, at: Any) -> list[str]:
    """Elements as the formulas index them: ``dL/dW[0,1]`` (``()``: the whole of it)."""
    return [f"{target}[{','.join(map(str, i))}]" if i else target for i in at]


def has_shape(target: str, shape: tuple[int, ...]) -> str:
    """``dL/dW has shape (2,1)``, or ``dL/dW is a scalar``."""
    return f"{target} is a scalar" if not shape else f"{target} has shape {format_shape(shape)}"


def shape_words(shape: tuple[int, ...]) -> str:
    """A shape as a sentence says it: ``(2,1)``, or ``a scalar``."""
    return "a scalar" if not shape else format_shape(shape)


@dataclass(frozen=True)
class Resolution:
    """How finely a dtype tells numbers apart: the step ``eps`` relative to a number's
    size, and ``tiny``, the smallest number above 0."""

    eps: float
    tiny: float

    @classmethod
    def of(cls, dtype: Any) -> Resolution:
        kind = np.dtype(dtype)
        info = np.finfo(kind if kind.kind == "f" else np.float64)
        return cls(float(info.eps), float(info.smallest_subnormal))

    def floor(self, scale: float) -> float:
        """The least slack at ``scale``: a few steps of the dtype there (the right answer
        and a slip, worked out in different orders, may differ by that much)."""
        return max(4 * self.eps * scale, self.tiny)


def tolerance(want: np.ndarray, rtol: float = RTOL, *, scale: float | None = None,
              resolution: Resolution | None = None) -> np.ndarray:
    """The slack each element of ``want`` allows: ``rtol`` of its own size plus
    ``SCALE_SHARE * rtol`` of ``scale`` (the largest element of the whole answer; by
    default, of ``want``), and at least the dtype's resolution at that scale.  Nothing in
    it is absolute: it shrinks with the answer.

    >>> tolerance(np.array([1e-20, 0.0]))
    array([1.1e-22, 1.0e-23])
    """
    want = np.asarray(want, np.float64)
    if scale is None:
        scale = _scale(want)
    floor = (resolution or _FLOAT64).floor(scale)
    return np.maximum(rtol * (np.abs(want) + SCALE_SHARE * scale), floor)


def close(got: np.ndarray, want: np.ndarray, rtol: float = RTOL, *,
          scale: float | None = None, resolution: Resolution | None = None) -> bool:
    """Same shape, and every element within :func:`tolerance` of ``want``.

    >>> close(np.array([0.197, 0.0]), np.array([0.19661193, 0.0001]))
    True
    >>> close(np.array([10.0, 0.05]), np.array([10.0, 0.0]))  # a ReLU mask forgotten
    False
    >>> close(np.array([0.18]), np.array([0.19661193]))
    False
    >>> close(np.array([0.0, 0.0]), np.array([1e-20, 3e-20]))  # the vanishing gradient
    False
    """
    if got.shape != want.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(got - want) <= tolerance(want, rtol, scale=scale,
                                                           resolution=resolution)))


_FLOAT64 = Resolution.of(np.float64)


def _scale(a: np.ndarray) -> float:
    return float(np.max(np.abs(a))) if a.size else 0.0


def _pick(a: np.ndarray, at: tuple[tuple[int, ...], ...]) -> np.ndarray:
    return np.array([a[i] for i in at], np.float64)


def _named(w: Misconception) -> Feedback:
    return Feedback("misconception", f"{w.title[0].upper()}{w.title[1:]}. {w.why}", w.kind)


_ACCEPTED = ("an answer is a number (an int or a float), a nested list of numbers or a "
             "NumPy array of them")


def _as_answer(answer: Any) -> np.ndarray:
    """An answer as a float64 array, or a ValueError saying what is accepted.

    Only ints and floats count: a string, a bool, a date, a record or a complex
    number is refused wherever it sits, and so are ragged rows, NaN and
    infinities, numbers beyond float64, more than :data:`MAX_ANSWER_VALUES`
    values and nesting deeper than :data:`MAX_ANSWER_DEPTH`.
    """
    count, stack = 0, [(answer, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, np.ndarray):
            if item.dtype.kind not in "iuf":
                raise ValueError(f"{_ACCEPTED}; this array holds {item.dtype} values")
            if depth + item.ndim > MAX_ANSWER_DEPTH:
                raise ValueError(f"{_ACCEPTED}, nested at most {MAX_ANSWER_DEPTH} deep")
            count += item.size
        elif isinstance(item, (list, tuple)):
            if depth >= MAX_ANSWER_DEPTH:
                raise ValueError(f"{_ACCEPTED}, nested at most {MAX_ANSWER_DEPTH} deep")
            count += not item  # an empty list still counts against the size
            stack.extend((x, depth + 1) for x in item)
        elif _is_number(item):
            count += 1
        else:
            raise ValueError(f"{_ACCEPTED}, not {type(item).__name__} {item!r:.60}")
        if count > MAX_ANSWER_VALUES:
            raise ValueError(f"{_ACCEPTED}, of at most {MAX_ANSWER_VALUES} values; this one "
                             "holds more")
    try:
        got = np.asarray(answer, dtype=np.float64)
    except OverflowError:
        raise ValueError(f"{_ACCEPTED}; a number in it is beyond float64 (about 1.8e308)"
                         ) from None
    except (TypeError, ValueError):
        raise ValueError(f"{_ACCEPTED}; {answer!r:.60} is not (are the rows of equal length?)"
                         ) from None
    if not np.all(np.isfinite(got)):
        raise ValueError("an answer holds numbers only: no NaN or infinity")
    return got


def _is_number(x: Any) -> bool:
    """An int or a float, Python's or NumPy's; not a bool, a complex or a date."""
    if isinstance(x, (bool, np.bool_)):
        return False
    return isinstance(x, (int, float, np.integer, np.floating))


def _as_shape(shape: Any) -> tuple[int, ...]:
    """A shape as a tuple of sizes, or a ValueError saying what is accepted."""
    if _is_number(shape) and isinstance(shape, (int, np.integer)):
        shape = (shape,)
    sizes = shape.tolist() if isinstance(shape, np.ndarray) and shape.ndim == 1 else shape
    ok = (isinstance(sizes, (tuple, list)) and len(sizes) <= MAX_ANSWER_DEPTH
          and all(_is_number(d) and isinstance(d, (int, np.integer)) and 0 <= d <= 2**31
                  for d in sizes))
    if not ok:
        raise ValueError(f"a shape is a tuple of sizes such as (2, 3), or () for a scalar; "
                         f"got {shape!r:.60}")
    return tuple(int(d) for d in sizes)


def _text(a: np.ndarray) -> str:
    """Every value (an answer has at most 64), as the formulas write numbers."""
    from ..explain import format_array  # noqa: PLC0415
    a = np.asarray(a)
    return format_array(ArrayData.of(a), max_elems=max(a.size, 1))


def _json(a: np.ndarray) -> Any:
    """Values at five significant digits (answers are checked at 1%): nested lists, or a
    number."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return a.tolist()
    flat = [float(f"{v:.5g}") for v in a.reshape(-1)]
    return np.array(flat).reshape(a.shape).tolist()
