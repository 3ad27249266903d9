"""A class's practice read together: which steps were hard, which misconceptions it holds.

:func:`class_summary` reads the results files students handed in
(:mod:`gradviz.views.practice.handin`) for one trace and counts, per step,
question and misconception, how many students met it, how many were right on
the first try, right after tries or hints, or revealed the answer.  It is
formative feedback without a server: the files travel however the class hands
in work, and the teacher's report (:meth:`ClassSummary.to_html`) is one
offline page that stays on the teacher's machine.

Files are read forgivingly, one at a time: a damaged file (not JSON, not a
results file, a broken rule), a copy of one already read, one whose questions
are not this trace's, or one of *another* trace (refused, naming both traces)
is skipped and listed in ``skipped``; only when no file is this trace's does
:func:`class_summary` raise.  A student is known by the name typed (compared
without case, in Unicode's composed form): one who handed in twice counts
once, by the later file (by the time the student's own page wrote in it), and
``replaced`` says so; two students of one name should hand in under two names.
"""

from __future__ import annotations

import base64
import html
import io
import os
import pathlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...trace import Trace
from .handin import HandIn, HandInError, QuestionResult, trace_key
from .model import MISCONCEPTIONS

__all__ = ["class_summary", "ClassSummary", "Row", "HardStep", "Common"]

# What a row counts besides the named slips: the verdicts that name none.
_UNNAMED = {"shape": "a wrong shape that is no known slip's",
            "not_yet": "a wrong answer that is no known slip"}

# What the page says of a slip no question lists with its numbers (answers.js).
_SAID = {"wrong_shape": "A gradient has the shape of what it is the gradient of."}

# The outcomes as the viewer's summary words them, and their colours (Okabe and Ito's
# palette, told apart with any colour vision).
_OUTCOME_WORDS = (("first", "right first try", "#009E73"),
                  ("hinted", "right after tries or hints", "#56B4E9"),
                  ("revealed", "revealed", "#E69F00"),
                  ("open", "met, not settled", "#999999"))


@dataclass(frozen=True)
class Row:
    """One line of the table: a question (``misconception`` None), or one slip made at it.

    ``students`` is how many met the question, or made the slip; ``first``,
    ``hinted``, ``revealed`` and ``open`` how those students' answers ended.
    ``misconception`` is a kind of ``MISCONCEPTIONS``, or ``"shape"`` / ``"not_yet"``
    for a wrong answer that names no slip.
    """

    step: int
    question: int  # the step's question index
    target: str
    misconception: str | None
    title: str
    students: int
    first: int
    hinted: int
    revealed: int
    open: int


@dataclass(frozen=True)
class HardStep:
    """A step, and how many of the students who met it were not right on the first try."""

    step: int
    title: str
    students: int  # met one of its questions
    not_first: int  # of them: some question not right on the first try
    revealed: int  # of them: some question revealed

    @property
    def share(self) -> float:
        return self.not_first / self.students if self.students else 0.0


@dataclass(frozen=True)
class Common:
    """A misconception the class holds: how many students made it, where, and what it is."""

    kind: str
    title: str
    why: str  # the sentence the learner was shown, at the first step it was made
    students: int
    steps: tuple[int, ...]


def class_summary(files: Any, trace: Trace) -> ClassSummary:
    """Read the results handed in for ``trace`` and count what the class did.

    ``files`` is a folder (its ``*.json`` files are read), one file, or a list of
    files and folders.  ``trace`` is the trace the students practised (the
    teacher's, made again or loaded with ``Trace.from_json``): its questions are
    worked out again, to check each file against and to word each slip.

    >>> import gradviz as gv, tempfile, pathlib
    >>> x = gv.constant([1.0, 2.0], name="x")
    >>> tr = gv.trace_gradients(gv.reduce_sum(x * x), x, title="squares")
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> gv.class_summary(folder, tr)
    Traceback (most recent call last):
    ...
    ValueError: no results files in ...: expected a folder of the .json files students handed in, ...
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"trace: expected the gradviz.Trace the students practised, got "
                        f"{type(trace).__name__} (make it again, or load it with "
                        "gv.Trace.from_json)")
    paths = _paths(files)
    from ..viewdata import asked_questions  # noqa: PLC0415  (the views import practice)

    key = trace_key(trace)
    asked = asked_questions(trace)
    targets = {(step, i): q["target"] for step, qs in asked.items() for i, q in enumerate(qs)}
    skipped: list[tuple[pathlib.Path, str]] = []
    by_name: dict[str, list[tuple[pathlib.Path, HandIn]]] = {}
    seen: dict[str, pathlib.Path] = {}
    for path in paths:
        try:
            got = HandIn.load(path)
        except HandInError as exc:
            foreign = str(exc).startswith("format:")
            skipped.append((path, f"{'not a results file' if foreign else 'damaged'}: {exc}"))
            continue
        except OSError as exc:
            skipped.append((path, f"could not be read: {exc.strerror or exc}"))
            continue
        if got.trace_key != key:
            same = (" The titles are the same, but not the traces: their ops, names or values "
                    "differ (a cell run twice names its ops anew, mul_1 for mul). Save the "
                    "trace with trace.to_json() when you make the report, and load it with "
                    "gv.Trace.from_json for the summary.") if got.trace_title == trace.title else ""
            skipped.append((path, f"refused: it holds results for the trace "
                                  f"{got.trace_title!r} (key {got.trace_key}), not for "
                                  f"{trace.title!r} (key {key}), the trace given.{same}"))
            continue
        text = got.to_json()
        if text in seen:
            skipped.append((path, f"a copy of {seen[text].name}"))
            continue
        seen[text] = path
        wrong = _not_asked(got, targets)
        if wrong:
            skipped.append((path, f"its questions are not this trace's: {wrong}"))
            continue
        by_name.setdefault(got.student.casefold(), []).append((path, got))
    if not by_name:
        listed = "; ".join(f"{p.name}: {why}" for p, why in skipped)
        raise ValueError(f"none of the {len(paths)} files could be read as results for "
                         f"{trace.title!r}: {listed}")
    # A name handed in more than once counts by its latest file (by the time the page wrote).
    kept: list[HandIn] = []
    replaced: list[str] = []
    for handins in by_name.values():
        handins.sort(key=lambda ph: ph[1].handed_in)
        (last_path, last), earlier = handins[-1], handins[:-1]
        kept.append(last)
        if earlier:
            times = {2: "twice"}.get(len(handins), f"{len(handins)} times")
            replaced.append(f"{last.student} handed in {times}: {last_path.name} ({_when(last)}) "
                            "counts, not " + ", ".join(f"{p.name} ({_when(h)})" for p, h in earlier))
    students = tuple(sorted(kept, key=lambda h: h.student.casefold()))
    return ClassSummary(trace, asked, students, tuple(skipped), tuple(sorted(replaced)))


def _paths(files: Any) -> list[pathlib.Path]:
    accepted = "a folder, a results file, or a list of them"
    items = [files] if isinstance(files, (str, os.PathLike)) else files
    if isinstance(items, (bytes, dict)) or not isinstance(items, Iterable):
        raise TypeError(f"files: expected {accepted}, got {type(files).__name__}")
    out: list[pathlib.Path] = []
    for i, item in enumerate(items):
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"files[{i}]: expected a path ({accepted}), got {type(item).__name__}")
        p = pathlib.Path(item).expanduser()
        if p.is_dir():
            out += sorted(q for q in p.glob("*.json") if q.is_file())
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"files: {str(p)!r} does not exist (expected {accepted})")
    if not out:
        where = ", ".join(str(pathlib.Path(f)) for f in items) or "the empty list"
        raise ValueError(f"no results files in {where}: expected a folder of the .json files "
                         "students handed in, or the files themselves")
    return list(dict.fromkeys(p.resolve() for p in out))


def _not_asked(got: HandIn, targets: dict[tuple[int, int], str]) -> str:
    """Why the file's questions are not the trace's, or "" when they are."""
    for q in got.questions:
        want = targets.get((q.step, q.index))
        if want is None:
            return f"step {q.step} has no question {q.index}"
        if want != q.target:
            return f"step {q.step}'s question {q.index} asks {want}, the file's {q.target}"
    return ""


def _when(h: HandIn) -> str:
    return h.handed_in.strftime("%Y-%m-%d %H:%M:%S UTC")


class ClassSummary:
    """What a class did with one trace's practice (made by :func:`class_summary`).

    - ``students``: each student's :class:`~gradviz.views.practice.HandIn`, by name;
    - ``rows``: the table, per step, question and misconception (:class:`Row`);
    - ``hardest``: the steps by how many were not right on the first try (:class:`HardStep`);
    - ``misconceptions``: the slips made, the most common first (:class:`Common`);
    - ``skipped`` (path, why) and ``replaced`` (a sentence each): files not counted;
    - ``figure()``, and ``to_html(path)``: the teacher's report, offline.
    """

    def __init__(self, trace: Trace, asked: dict[int, list[dict]], students: tuple[HandIn, ...],
                 skipped: tuple[tuple[pathlib.Path, str], ...], replaced: tuple[str, ...]):
        self.trace = trace
        self.students = students
        self.skipped = skipped
        self.replaced = replaced
        self._asked = asked
        per: dict[tuple[int, int], list[QuestionResult]] = {}
        for h in students:
            for q in h.questions:
                if q.met:
                    per.setdefault((q.step, q.index), []).append(q)
        self._per = per
        self.rows = tuple(self._rows())
        self.hardest = tuple(self._hardest())
        self.misconceptions = tuple(self._common())

    # ---------------------------------------------------------------- counting

    def _rows(self) -> Iterable[Row]:
        for step, qs in sorted(self._asked.items()):
            for i, q in enumerate(qs):
                met = self._per.get((step, i), [])
                yield self._row(step, i, q["target"], None, "the question", met)
                made = Counter(kind for r in met for kind in _slips(r))
                for kind, _ in sorted(made.items(), key=lambda kv: (-kv[1], kv[0])):
                    yield self._row(step, i, q["target"], kind, _title(kind),
                                    [r for r in met if kind in _slips(r)])

    @staticmethod
    def _row(step: int, i: int, target: str, kind: str | None, title: str,
             met: list[QuestionResult]) -> Row:
        ends = Counter(r.outcome for r in met)
        return Row(step=step, question=i, target=target, misconception=kind, title=title,
                   students=len(met), first=ends["first"], hinted=ends["hinted"],
                   revealed=ends["revealed"], open=ends["open"])

    def _hardest(self) -> Iterable[HardStep]:
        from ..explain import describe  # noqa: PLC0415

        out = []
        for step in sorted(self._asked):
            mine = [[r for r in h.questions if r.step == step and r.met] for h in self.students]
            mine = [rs for rs in mine if rs]
            if not mine or all(r.outcome == "first" for rs in mine for r in rs):
                continue  # (met by none, or right first try by all: not hard)
            out.append(HardStep(
                step=step, title=describe(self.trace, step).title, students=len(mine),
                not_first=sum(any(r.outcome != "first" for r in rs) for rs in mine),
                revealed=sum(any(r.outcome == "revealed" for r in rs) for rs in mine)))
        return sorted(out, key=lambda s: (-s.share, -s.revealed, s.step))

    def _common(self) -> Iterable[Common]:
        who: dict[str, set[str]] = {}
        where: dict[str, list[int]] = {}
        for h in self.students:
            for r in h.questions:
                for kind in r.slips:
                    who.setdefault(kind, set()).add(h.student)
                    steps = where.setdefault(kind, [])
                    if r.step not in steps:
                        steps.append(r.step)
        out = []
        for kind, names in who.items():
            steps = tuple(sorted(where[kind]))
            out.append(Common(kind=kind, title=_title(kind), why=self._why(kind, steps[0]),
                              students=len(names), steps=steps))
        return sorted(out, key=lambda c: (-c.students, c.steps[0], c.kind))

    def _why(self, kind: str, step: int) -> str:
        """The sentence a learner making ``kind`` at ``step`` was shown."""
        for q in self._asked.get(step, []):
            for w in q["wrong"]:
                if w["kind"] == kind or kind in w.get("also", ()):
                    return w["why"]
        return _SAID.get(kind, "")

    # ---------------------------------------------------------------- showing

    @property
    def table(self) -> str:
        """The table as plain text, one row a line."""
        head = ("step", "question", "misconception", "students", "first try",
                "after tries or hints", "revealed", "not settled")
        lines = [head]
        for r in self.rows:
            lines.append((str(r.step), r.target if r.misconception is None else "",
                          "" if r.misconception is None else r.title, str(r.students),
                          str(r.first), str(r.hinted), str(r.revealed), str(r.open)))
        widths = [max(len(line[c]) for line in lines) for c in range(len(head))]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()
                         for line in lines)

    def __str__(self) -> str:
        parts = [self._heading(), "", self.table]
        if self.hardest:
            parts += ["", "Hardest steps:"] + [
                f"  step {s.step}: {s.not_first} of {s.students} not right first try, "
                f"{s.revealed} revealed ({s.title})" for s in self.hardest[:3]]
        if self.misconceptions:
            parts += ["", "Most common misconceptions:"] + [
                f"  {c.title} ({c.students} of {len(self.students)}; step"
                f"{'s' if len(c.steps) > 1 else ''} {', '.join(map(str, c.steps))}): {c.why}"
                for c in self.misconceptions]
        parts += self._notes()
        return "\n".join(parts)

    def __repr__(self) -> str:
        return (f"<ClassSummary of {self.trace.title!r}: {len(self.students)} students, "
                f"{len(self.skipped)} files skipped>")

    def _heading(self) -> str:
        n = len(self.students)
        return f"{self.trace.title}: {n} student{'s' if n != 1 else ''} handed in"

    def _notes(self) -> list[str]:
        out = []
        if self.replaced:
            out += ["", "Handed in more than once:"] + [f"  {line}" for line in self.replaced]
        if self.skipped:
            out += ["", "Not counted:"] + [f"  {p.name}: {why}" for p, why in self.skipped]
        return out

    def _repr_html_(self) -> str:
        return f"<div class=\"gv-class\">{self._body_html(links=False)}</div>"

    def figure(self):
        """A matplotlib figure: per question how the students' answers ended, and the
        misconceptions by how many students made them."""
        from matplotlib.figure import Figure  # noqa: PLC0415

        questions = [r for r in self.rows if r.misconception is None]
        n = len(self.students)
        common = self.misconceptions
        height = 1.2 + 0.32 * len(questions) + (0.9 + 0.32 * len(common) if common else 0)
        fig = Figure(figsize=(8.0, max(2.6, height)), layout="constrained")
        axes = fig.subplots(2 if common else 1, 1, squeeze=False,
                            height_ratios=[max(len(questions), 1), len(common)] if common else None)
        ax = axes[0][0]
        labels = [_plain(f"step {r.step}: {r.target}") for r in questions]
        left = [0] * len(questions)
        for name, words, colour in _OUTCOME_WORDS:
            counts = [getattr(r, name) for r in questions]
            ax.barh(labels, counts, left=left, color=colour, label=words, edgecolor="white")
            left = [a + b for a, b in zip(left, counts)]
        ax.barh(labels, [n - x for x in left], left=left, color="none", edgecolor="#bbbbbb",
                hatch="//", label="not reached")
        ax.invert_yaxis()
        ax.set_xlim(0, max(n, 1))
        ax.set_xlabel(f"students (of {n})")
        ax.set_title(_plain(f"{self.trace.title}: how each question went"), loc="left", fontsize=11)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        ax.xaxis.get_major_locator().set_params(integer=True)
        if common:
            cx = axes[1][0]
            cx.barh([_plain(c.title) for c in common], [c.students for c in common], color="#D55E00")
            cx.invert_yaxis()
            cx.set_xlim(0, max(n, 1))
            cx.set_xlabel("students who made it")
            cx.set_title("misconceptions", loc="left", fontsize=11)
            cx.xaxis.get_major_locator().set_params(integer=True)
        return fig

    def _figure_uri(self) -> str:
        buffer = io.BytesIO()
        self.figure().savefig(buffer, format="png", dpi=110)
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")

    def _body_html(self, links: bool) -> str:
        """The summary as HTML: heading, hardest steps, misconceptions, the table, notes;
        with ``links``, each row a link to its step in the report's viewer."""
        esc = html.escape
        n = len(self.students)
        out = [f"<h2 class=\"gv-class-heading\">{esc(self._heading())}</h2>"]
        names = ", ".join(h.student for h in self.students)
        out.append(f"<p class=\"gv-class-students\">{esc(names)}</p>")
        if self.hardest:
            out.append("<h3>Hardest steps</h3><ol class=\"gv-class-hardest\">")
            for s in self.hardest[:3]:
                out.append(f"<li>{_step_link(s.step, links)}: {s.not_first} of {s.students} not "
                           f"right on the first try, {s.revealed} revealed <span class=\"gv-class-"
                           f"muted\">({esc(s.title)})</span></li>")
            out.append("</ol>")
        if self.misconceptions:
            out.append("<h3>Misconceptions the class holds</h3><ul class=\"gv-class-common\">")
            for c in self.misconceptions:
                at = ", ".join(_step_link(k, links) for k in c.steps)
                out.append(f"<li data-kind=\"{esc(c.kind)}\"><b>{esc(_capital(c.title))}</b>: "
                           f"{c.students} of {n} (at {at}).{' ' + esc(c.why) if c.why else ''}</li>")
            out.append("</ul>")
        out.append("<table class=\"gv-class-table\"><thead><tr><th>step</th><th>question / "
                   "misconception</th><th>students</th><th>right first try</th><th>right after "
                   "tries or hints</th><th>revealed</th><th>not settled</th></tr></thead><tbody>")
        for r in self.rows:
            mine = r.misconception is None
            what = esc(r.target) if mine else f"\u2003{esc(_capital(r.title))}"
            kind = "" if mine else f" data-kind=\"{esc(r.misconception or '')}\""
            out.append(f"<tr class=\"gv-class-{'question' if mine else 'slip'}\" "
                       f"data-step=\"{r.step}\"{kind}><td>{_step_link(r.step, links)}</td>"
                       f"<td>{what}</td><td>{r.students}</td><td>{r.first}</td><td>{r.hinted}"
                       f"</td><td>{r.revealed}</td><td>{r.open}</td></tr>")
        out.append("</tbody></table>")
        notes = self._notes()
        if notes:
            out.append("<pre class=\"gv-class-notes\">" + esc("\n".join(notes).strip()) + "</pre>")
        return "".join(out)

    def to_html(self, path: str | os.PathLike, title: str | None = None) -> pathlib.Path:
        """Write the teacher's report: the summary and figure, and the table beside the
        trace's viewer, a click on a row opening its step.  One offline file, as
        :func:`gradviz.export_html` writes; it stays on the teacher's machine.  Returns
        the absolute path written."""
        from ..files import check_path, write_text_atomic  # noqa: PLC0415
        from ..report import _render  # noqa: PLC0415
        from ..widget import view_payload  # noqa: PLC0415
        from ...trace.fields import check_title  # noqa: PLC0415

        title = f"{self.trace.title}: the class's practice" if title is None else check_title(title)
        target = check_path(path, "class.html")
        figure = (f"<img class=\"gv-class-figure\" src=\"{self._figure_uri()}\" alt=\"How each "
                  "question went, and the misconceptions by how many students made them\">")
        page = _render([view_payload(self.trace, "export_html", all_views=True)], title,
                       aside=self._body_html(links=True) + figure, page_css=_CLASS_CSS)
        write_text_atomic(target, page)
        return target


def _slips(r: QuestionResult) -> tuple[str, ...]:
    """The slips a row counts for one student's question: named, then unnamed verdicts."""
    unnamed = tuple(dict.fromkeys(a.verdict for a in r.attempts if a.verdict in _UNNAMED))
    return r.slips + unnamed


def _title(kind: str) -> str:
    return MISCONCEPTIONS.get(kind) or _UNNAMED.get(kind) or kind.replace("_", " ")


def _plain(text: str) -> str:
    """Text for matplotlib as it is: a ``$`` is not the start of mathematics."""
    return text.replace("$", r"\$")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _step_link(step: int, links: bool) -> str:
    return (f"<a class=\"gv-class-step\" href=\"#step{step}\">step {step}</a>" if links
            else f"step {step}")


# The teacher's page: the summary beside the viewer, which stays in view as the table
# scrolls; a row is a link to its step as a whole (its step cell's link stretched over it).
_CLASS_CSS = """
.gv-report-class { display: grid; grid-template-columns: minmax(380px, 5fr) minmax(560px, 7fr);
  gap: 20px; max-width: 1800px; margin: 0 auto 28px; align-items: start; }
.gv-report-class > .gv-report-trace { position: sticky; top: 8px; max-width: none; margin: 0; }
.gv-report-aside { background: light-dark(#fff, #0d1117); border-radius: 8px; padding: 12px 16px; font-size: 13px; }
.gv-report-aside h2 { font-size: 16px; margin: 4px 0; }
.gv-report-aside h3 { font-size: 13px; margin: 14px 0 4px; text-transform: uppercase;
  letter-spacing: 0.06em; color: var(--gv-page-muted); }
.gv-report-aside ol, .gv-report-aside ul { margin: 0; padding-left: 20px; }
.gv-report-aside li { margin: 3px 0; }
.gv-class-muted, .gv-class-students { color: var(--gv-page-muted); }
.gv-class-table { border-collapse: collapse; width: 100%; margin-top: 14px; }
.gv-class-table th, .gv-class-table td { padding: 4px 6px; border-bottom: 1px solid light-dark(#d8dee4, #3d444d);
  text-align: right; }
.gv-class-table th:nth-child(2), .gv-class-table td:nth-child(2),
.gv-class-table th:first-child, .gv-class-table td:first-child { text-align: left; }
.gv-class-table thead th { position: sticky; top: 0; background: light-dark(#f6f8fa, #151b23); font-weight: 600; }
.gv-class-table tbody tr { position: relative; cursor: pointer; }
.gv-class-table tbody tr:hover, .gv-class-table tbody tr:focus-within { background: light-dark(#fff8c5, #2e2a0b); }
.gv-class-question td { font-weight: 600; border-top: 1px solid light-dark(#afb8c1, #656c76); }
.gv-class-slip td { color: light-dark(#3d444d, #c9d1d9); }
.gv-class-step { color: var(--gv-page-link); white-space: nowrap; }
.gv-class-table .gv-class-step::after { content: ""; position: absolute; inset: 0; }
.gv-class-figure { max-width: 100%; margin-top: 14px; }
.gv-class-notes { white-space: pre-wrap; font: inherit; color: var(--gv-page-muted); }
@media (max-width: 1000px) { .gv-report-class { grid-template-columns: 1fr; }
  .gv-report-class > .gv-report-trace { position: static; } }
@media print { .gv-report-class { display: block; } .gv-class-figure { break-before: page; } }
"""
