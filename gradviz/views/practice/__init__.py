"""Practice: for every step that produces a gradient, a question, its right answer, and
the wrong answers learners actually give, each named by its misconception.

- ``model``: :class:`Question`, :class:`Misconception`, :class:`Feedback` and how an
  answer is checked (shape first, then values, within a relative tolerance);
  ``MISCONCEPTIONS``, every kind a question can name.
- ``build``: :func:`questions` of a trace and :func:`step_questions` of one step, the
  wrong answers computed from the step's own arrays.
- ``asks``: a lesson's questions that are not one step's gradient (a value, a shape,
  a count of passes, a choice between explanations, which tensors get None), the
  slips they name in ``SLIPS``.
- ``exercise``: :data:`exercise`, one question for a notebook, with ``ask()`` and
  ``check()`` that render themselves: ``exercise(trace, step)`` or
  ``exercise.value(...)``, ``.shape``, ``.count``, ``.choice``, ``.nones``.
- ``render``: questions and feedback as HTML.
- ``handin``: what a student hands in after practising (:class:`HandIn`, a small
  versioned JSON file, checked when read), and :func:`trace_key`, which trace it is.
- ``classroom``: :func:`class_summary`, a class's handed-in results read together:
  which steps were hardest and which misconceptions the class holds.

It reads traces and the words of :mod:`gradviz.views.explain`, never the engine;
the view payload carries each step's questions, so a front end only compares
numbers.
"""

from __future__ import annotations

from .asks import SLIPS, LessonQuestion
from .build import FOCUS_OVER, questions, step_questions
from .exercise import Exercise, exercise
from .handin import HandIn, HandInError, trace_key
from .model import MISCONCEPTIONS, RTOL, Feedback, Misconception, Question

__all__ = ["questions", "step_questions", "exercise", "Exercise", "Question", "Misconception",
           "Feedback", "MISCONCEPTIONS", "RTOL", "FOCUS_OVER", "LessonQuestion", "SLIPS",
           "HandIn", "HandInError", "trace_key", "class_summary", "ClassSummary"]


def __getattr__(name: str):  # the class's summary reads reports' and plots' modules: on first use
    if name in ("class_summary", "ClassSummary"):
        from . import classroom  # noqa: PLC0415
        return getattr(classroom, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
