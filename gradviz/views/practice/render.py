"""Questions and feedback as HTML, for a notebook."""

from __future__ import annotations

from html import escape

from ..explain import format_array, format_shape
from .asks import LessonQuestion
from .exercise import answer_line
from .model import Feedback, Question

_BOX = ("font-family: system-ui, sans-serif; border-left: 4px solid {color}; "
        "padding: 6px 12px; margin: 4px 0; background: {fill}; color: #1a1a1a")

_CELL = "text-align: left; background: none"

#: verdict -> (border, background): green right, amber a named slip, blue not yet, grey
#: not answered yet.
_COLORS = {"right": ("#1a7f37", "#eef8f0"), "misconception": ("#b35900", "#fff4e5"),
           "shape": ("#b35900", "#fff4e5"), "not_yet": ("#0b5cad", "#eef4fb"),
           "unanswered": ("#6e7781", "#f6f8fa")}


def question_html(q: Question | LessonQuestion) -> str:
    """The question, the arrays the rule reads (a choice's options), and how to answer."""
    rows = _given_rows(q.given)
    table = f"<table>{rows}</table>" if rows else ""
    style = _BOX.format(color="#0b5cad", fill="#f6f9fd")
    if isinstance(q, LessonQuestion):
        options = "".join(f"<li><b>{escape(k)})</b> {escape(text)}</li>"
                          for k, text in q.options if q.form == "choice")
        listed = f"<ul style='list-style: none; padding-left: 4px'>{options}</ul>" if options else ""
        return (f"<div class='gv-question gv-{q.form}' style='{style}'>"
                f"<div>{escape(q.prompt)}</div>{table}{listed}"
                f"<div style='color:#555'>{escape(q.how_to_answer())}</div></div>")
    return (f"<div class='gv-question' style='{style}'>"
            f"<div><b>Step {q.step}</b>: {escape(q.prompt)}</div>{table}"
            f"<div style='color:#555'>{escape(answer_line(q))}</div></div>")


def _given_rows(given: tuple) -> str:
    return "".join(
        f"<tr><td style='{_CELL}; padding-right:12px'>{escape(label)}</td>"
        f"<td style='{_CELL}'><code>{escape(format_array(a, max_elems=a.size))}</code></td>"
        f"<td style='{_CELL}; color:#555'>{escape(format_shape(a.shape))}</td></tr>"
        for label, a in given)


def feedback_html(f: Feedback) -> str:
    color, fill = _COLORS[f.verdict]
    hint = f"<div><i>Hint:</i> <code>{escape(f.hint)}</code></div>" if f.hint else ""
    kind = f" data-kind='{escape(f.kind)}'" if f.kind else ""
    return (f"<div class='gv-feedback gv-{f.verdict}'{kind} "
            f"style='{_BOX.format(color=color, fill=fill)}'>"
            f"<div>{escape(f.message)}</div>{hint}</div>")
