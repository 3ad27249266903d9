"""One question in a notebook: ask it, check answers, with the next hint each time.

>>> import gradviz as gv
>>> X = gv.constant([[1.0], [2.0]], name="ex_X")
>>> W = gv.Variable(3.0, name="ex_W")
>>> ex = gv.exercise(gv.trace_gradients(gv.reduce_sum(X * W), W), step=2)
>>> print(ex.ask())
Step 2: What gradient does Mul send towards ex_W, dL/d(ex_W broadcast)?
  upstream dL/dMul = [[1], [1]] (2,1)
  ex_X (forward value) = [[1], [2]] (2,1)
  ex_W (forward value) = 3 scalar
Answer with an array of shape (2,1): check([[...], [...]])
>>> print(ex.check([[3.0], [3.0]]))
Multiplied by the wrong input. That is grad times ex_W itself; the gradient for one factor is grad times the other factor, ex_X.
>>> ex.check([[1.0], [2.0]]).right
True

A lesson asks other things too, each with the slips it names worked out by running
the program: ``exercise.value``, ``.shape``, ``.count`` (backward passes),
``.choice`` (between explanations) and ``.nones`` (which tensors get None); see
:mod:`gradviz.views.practice.asks`.

>>> ex = gv.exercise.count("A Jacobian of 4 outputs: how many backward passes?", 4,
...                        slips={"passes_one": 1}, hint="one pass gives one row")
>>> print(ex.check(1).message)
One backward pass for a whole Jacobian. One reverse pass gives one row of the Jacobian (a vector-Jacobian product): a Jacobian of N outputs takes N passes.
>>> print(ex.check(...).message)
Type your answer in place of ... and run the cell again.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from ...trace import Trace
import numpy as np

from . import asks
from .asks import LessonQuestion
from .build import step_questions
from .model import Feedback, Question, array_answer_line

__all__ = ["exercise", "Exercise"]

#: What ``check(...)`` says while the ``...`` a lesson leaves for the answer is still there.
UNANSWERED = Feedback("unanswered", "Type your answer in place of ... and run the cell again.")


class Exercise:
    """One question asked in a notebook: :meth:`ask`, then :meth:`check` until right.

    Each answer that is "not yet" moves the hint on: the formula first, then
    the answer.  ``question`` is the :class:`Question` itself, as data.
    """

    def __init__(self, question: Question | LessonQuestion):
        self.question = question
        self.hints_given = 0

    def ask(self) -> Asked:
        """The question, the arrays its rule reads and the shape to answer in (it renders
        itself in a notebook)."""
        return Asked(self.question)

    def check(self, answer: Any) -> Feedback:
        """Right, the misconception the answer matches, a wrong shape, or "not yet" with
        the next hint.  ``...`` (what a lesson leaves in place of the answer) is not
        checked."""
        if answer is Ellipsis:
            return UNANSWERED
        feedback = self.question.check(answer, hints=self.hints_given)
        if feedback.verdict in ("not_yet", "shape"):
            self.hints_given += 1
        return feedback

    def check_shape(self, shape: Any) -> Feedback:
        """The answer's shape alone, as a first question for a step's gradient."""
        if not isinstance(self.question, Question):
            raise TypeError(f"check_shape asks a step's gradient's shape; this is a "
                            f"{self.question.form} question: check(...) its answer")
        return self.question.check_shape(shape)

    def hint(self) -> str:
        """The next hint: the formula, then the answer."""
        text = self.question.hints[min(self.hints_given, 1)]
        self.hints_given += 1
        return text

    def reveal(self) -> str:
        """The answer."""
        self.hints_given = 2
        return self.question.hints[1]

    def _repr_html_(self) -> str:
        return self.ask()._repr_html_()

    def to_dict(self) -> dict[str, Any]:
        """The exercise as strict JSON, for a page that asks and checks it: a lesson's
        question as :meth:`LessonQuestion.to_dict`, a step's as ``{"form": "step",
        "ask": ..., "question": Question.to_dict()}``."""
        q = self.question
        if isinstance(q, LessonQuestion):
            return q.to_dict()
        return {"form": "step", "ask": f"Step {q.step}: {q.prompt}", "question": q.to_dict()}

    def __repr__(self) -> str:
        q = self.question
        about = f"step {q.step}" if isinstance(q, Question) else f"a {q.form}"
        return f"<Exercise: {about}, {q.prompt}>"


class Asked:
    """A question as shown: text in a console, HTML in a notebook."""

    def __init__(self, question: Question | LessonQuestion):
        self.question = question

    def __str__(self) -> str:
        from ..explain import format_array, format_shape  # noqa: PLC0415
        q = self.question
        lesson = isinstance(q, LessonQuestion)
        lines = [q.prompt if lesson else f"Step {q.step}: {q.prompt}"]
        # whole: a question is asked only where every array it gives is kept whole
        lines += [f"  {label} = {format_array(a, max_elems=a.size)} {format_shape(a.shape)}"
                  for label, a in q.given]
        if lesson:
            lines += [f"  {key}) {text}" for key, text in q.options if q.form == "choice"]
        lines.append(q.how_to_answer() if lesson else answer_line(q))
        return "\n".join(lines)

    def __repr__(self) -> str:  # a console, or a notebook's text/plain
        return str(self)

    def _repr_html_(self) -> str:
        from .render import question_html  # noqa: PLC0415
        return question_html(self.question)


def answer_line(q: Question) -> str:
    """How to answer: the shape, an example call, or the one element asked."""
    from ..explain import format_shape  # noqa: PLC0415
    if q.focus is not None:
        if len(q.focus) == 1:
            return (f"It has shape {format_shape(q.shape)}: answer {q.asked} as a number, "
                    "check(...), or the whole array")
        return (f"It has shape {format_shape(q.shape)}: answer {q.asked} as a list of "
                f"{len(q.focus)} numbers in that order, check([...]), or the whole array")
    return array_answer_line(q.shape)


def _asking(make: Any) -> staticmethod:
    """``make`` (a maker of :mod:`~gradviz.views.practice.asks`), giving an
    :class:`Exercise` of the question it makes; its name, signature and docstring kept."""

    @functools.wraps(make)
    def asking(*args: Any, **kwargs: Any) -> Exercise:
        return Exercise(make(*args, **kwargs))

    asking.__signature__ = inspect.signature(make).replace(return_annotation="Exercise")
    return staticmethod(asking)


class Exercises:
    """``exercise(trace, step)``: a step's question; ``exercise.value``, ``.shape``,
    ``.count``, ``.choice`` and ``.nones``: a lesson's other questions
    (:mod:`~gradviz.views.practice.asks`), each an :class:`Exercise`."""

    def __call__(self, trace: Trace, step: int | None = None, which: int | str = 0) -> Exercise:
        return step_exercise(trace, step, which)

    value = _asking(asks.value)
    shape = _asking(asks.shape)
    count = _asking(asks.count)
    choice = _asking(asks.choice)
    nones = _asking(asks.nones)


def step_exercise(trace: Trace, step: int | None = None, which: int | str = 0) -> Exercise:
    """A question of ``trace`` to answer in a notebook.

    ``step`` is a step index (negative counts from the end); None takes the
    first step with a question.  A backward step asks one question per input
    that gets a gradient: ``which`` picks one by position or by the tensor's
    name.
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"exercise: expected a Trace (from gv.trace_gradients or a tape's "
                        f"trace_gradient), got {type(trace).__name__}")
    n = len(trace.steps)
    if step is None:
        step = next((s.index for s in trace.steps if step_questions(trace, s)), None)
        if step is None:
            raise ValueError("this trace has no questions: its gradients are too large to "
                             "keep whole (over 64 values), hold NaN or Inf, or none is produced")
    if not isinstance(step, (int, np.integer)) or isinstance(step, bool):
        raise TypeError(f"step is a step index (an int), not {type(step).__name__}")
    if not -n <= step < n:
        raise ValueError(f"step {step} out of range: the trace has {n} steps (0..{n - 1})")
    step = int(step) % n
    here = list(step_questions(trace, step))
    if not here:
        asked = [s.index for s in trace.steps if step_questions(trace, s)]
        listed = ", ".join(map(str, asked[:12])) + (", ..." if len(asked) > 12 else "")
        raise ValueError(f"step {step} ({trace.steps[step].kind}) has no question; the steps "
                         f"with one: {listed or 'none'}")
    return Exercise(_pick(here, which))


#: Every exercise: ``exercise(trace, step)``, ``exercise.value(...)``, ...
exercise = Exercises()


def _pick(here: list[Question], which: int | str) -> Question:
    if isinstance(which, str):
        for q in here:
            if q.target == f"dL/d{which}" or q.target.startswith((f"dL/d{which} (",
                                                                  f"dL/d({which} broadcast")):
                return q
        raise ValueError(f"which={which!r}: this step asks about "
                         f"{', '.join(q.target[4:] for q in here)}")
    if isinstance(which, int) and not isinstance(which, bool) and -len(here) <= which < len(here):
        return here[which]
    raise ValueError(f"which={which!r}: this step has {len(here)} question(s), "
                     f"0..{len(here) - 1}, or a tensor's name")
