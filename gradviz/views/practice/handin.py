"""What a student hands in after practising: per question, how it went.

A practising viewer (the widget, or the offline report) writes a small JSON
file, its *results*: which trace it was (:func:`trace_key`, a hash of the
trace's JSON, and its title), the name the student typed, when, and per
question its attempts in order with the verdict of each (right, a named slip,
a wrong shape, "not yet"), the hints taken, whether it was revealed or
skipped, and the seconds it was on screen.  The page makes the file itself
(``static/viewer/practice.js``); nothing reaches a network.

The format, version 1::

    {"format": "gradviz practice results", "version": 1,
     "trace": {"key": "<24 hex digits>", "title": "linear regression"},
     "student": "Ada", "handed_in": "2026-11-28T10:04:05.120Z",
     "questions": [{"step": 2, "index": 0, "target": "dL/db",
                    "attempts": [{"verdict": "misconception", "kind": "broadcast_not_summed"},
                                 {"verdict": "right"}],
                    "hints": 0, "outcome": "hinted", "skipped": false, "seconds": 31.5}]}

``outcome`` is ``"first"`` (right on the first try, no hint), ``"hinted"``
(right after wrong tries or hints), ``"revealed"`` or ``"open"`` (not
settled).  :meth:`HandIn.from_json` checks all of it, as a trace is checked
when it is loaded: a file that breaks a rule is refused with a
:class:`HandInError` that says where.  Nothing is signed: a student can edit
the file, which is fine for what it is for, feedback to the teacher.

>>> h = HandIn.from_dict({"format": FORMAT, "version": 1,
...     "trace": {"key": "0123456789abcdef01234567", "title": "t"}, "student": " Ada ",
...     "handed_in": "2026-11-28T10:04:05Z", "questions": [
...     {"step": 1, "index": 0, "target": "dL/dx", "attempts": [{"verdict": "right"}],
...      "hints": 0, "outcome": "first", "skipped": False, "seconds": 12}]})
>>> h.student, h.questions[0].outcome, h.handed_in.isoformat()
('Ada', 'first', '2026-11-28T10:04:05+00:00')
>>> HandIn.from_dict({**h.to_dict(), "version": 2})
Traceback (most recent call last):
...
gradviz.views.practice.handin.HandInError: version: this file is version 2 of the results format,
which a newer gradviz wrote; this one reads version 1
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import pathlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..files import check_path, write_text_atomic
from ...trace.fields import _SURROGATE

__all__ = ["FORMAT", "VERSION", "MAX_BYTES", "HandIn", "QuestionResult", "Attempt", "HandInError",
           "trace_key", "check_name", "timestamp", "OUTCOMES", "VERDICTS"]

#: What a results file says it is.
FORMAT = "gradviz practice results"
#: The version of the format this gradviz writes and reads.
VERSION = 1
#: The largest results file read: a trace asks at most a few hundred questions, and
#: each attempt is a few dozen bytes; anything larger is refused before it is parsed.
MAX_BYTES = 2 * 2**20
#: How a question can stand when handed in, as the viewer's summary counts them.
OUTCOMES = ("first", "hinted", "revealed", "open")
#: What checking one answer found (answers.js, as ``Question.check``): a named slip is a
#: ``"misconception"`` with its ``kind``.
VERDICTS = ("right", "misconception", "shape", "not_yet")

_MAX_QUESTIONS = 10_000
_MAX_SECONDS = 10**9  # (about 32 years)
_MAX_ATTEMPTS = 1_000
_MAX_NAME = 100
_MAX_TEXT = 2000
_KEY = re.compile(r"[0-9a-f]{24}")
_KIND = re.compile(r"[a-z][a-z0-9_]{0,63}")


class HandInError(ValueError):
    """A results file that breaks a rule of the format: what, and where."""


def trace_key(trace: Any) -> str:
    """The trace a results file belongs to: the first 24 hex digits of the SHA-256 of its
    JSON (:meth:`Trace.to_json`), the same for the trace saved and loaded again.

    Without its lines of code (``source=False``): where the program ran, its file or
    its cell's number, is not the trace, and a report written with ``source=False``
    belongs to the trace it was written from.  The JSON is hashed as format version 2
    wrote it (version 3 only adds the lines), so results handed in against a page
    made before lines of code were kept still belong to their trace."""
    data = trace.to_dict(source=False)
    del data["sources"]
    data["version"] = 2
    text = json.dumps(data, allow_nan=False, check_circular=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True)
class Attempt:
    """One answer checked: its verdict, and for a named slip which one."""

    verdict: str  # one of VERDICTS
    kind: str | None = None  # the misconception, for the verdict "misconception"

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, **({"kind": self.kind} if self.kind else {})}


@dataclass(frozen=True)
class QuestionResult:
    """How one question went: the step's question ``index`` at ``step``."""

    step: int
    index: int
    target: str  # what it asked for, "dL/db"
    attempts: tuple[Attempt, ...]
    hints: int
    outcome: str  # one of OUTCOMES
    skipped: bool
    seconds: float

    @property
    def met(self) -> bool:
        """Whether the student did anything with it: answered, took a hint, revealed, skipped."""
        return bool(self.attempts or self.hints or self.skipped or self.outcome != "open")

    @property
    def slips(self) -> tuple[str, ...]:
        """The named slips among the attempts, each once, in the order first made."""
        return tuple(dict.fromkeys(a.kind for a in self.attempts
                                   if a.verdict == "misconception" and a.kind))

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "index": self.index, "target": self.target,
                "attempts": [a.to_dict() for a in self.attempts], "hints": self.hints,
                "outcome": self.outcome, "skipped": self.skipped, "seconds": self.seconds}


@dataclass(frozen=True)
class HandIn:
    """One student's results for one trace, as handed in."""

    student: str
    trace_key: str
    trace_title: str
    handed_in: _dt.datetime  # aware, in UTC
    questions: tuple[QuestionResult, ...]

    @classmethod
    def from_json(cls, text: str | bytes) -> HandIn:
        """A results file's text, checked (:class:`HandInError` for a broken rule)."""
        if isinstance(text, (bytes, bytearray)):
            if len(text) > MAX_BYTES:
                raise HandInError(_too_big(len(text)))
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise HandInError(f"the file is not UTF-8 text ({exc.reason} at byte "
                                  f"{exc.start}); a results file is JSON") from None
        if not isinstance(text, str):
            raise TypeError(f"expected the file's text (str or bytes), got {type(text).__name__}")
        if len(text) > MAX_BYTES:
            raise HandInError(_too_big(len(text)))
        try:
            data = json.loads(text, parse_constant=_no_constant)
        except (json.JSONDecodeError, ValueError) as exc:
            raise HandInError(f"the file is not JSON: {exc}") from None
        except RecursionError:
            raise HandInError("the file nests lists or objects deeper than JSON can be read "
                              "here; a results file nests four deep") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | os.PathLike) -> HandIn:
        """Read a results file (:meth:`from_json`)."""
        p = pathlib.Path(path)
        if p.stat().st_size > MAX_BYTES:
            raise HandInError(_too_big(p.stat().st_size))
        return cls.from_json(p.read_bytes())

    @classmethod
    def from_dict(cls, data: Any) -> HandIn:
        """Results as the page gives them (a dict of JSON values), checked."""
        if not isinstance(data, dict):
            raise HandInError(f"expected a JSON object, got {_json_type(data)}; a results file "
                              "is one object")
        if data.get("format") != FORMAT:
            raise HandInError(f"format: expected {FORMAT!r}, got {_short(data.get('format'))}: "
                              "this is not a gradviz practice results file")
        version = data.get("version")
        if type(version) is not int:
            raise HandInError(f"version: expected an integer, got {_short(version)}")
        if version != VERSION:
            newer = "a newer gradviz wrote" if version > VERSION else "no gradviz writes"
            raise HandInError(f"version: this file is version {version} of the results format, "
                              f"which {newer}; this one reads version {VERSION}")
        trace = _field(data, "trace", dict, "the results file")
        key = _field(trace, "key", str, "trace")
        if not _KEY.fullmatch(key):
            raise HandInError(f"trace.key: expected 24 hex digits, got {_short(key)}")
        title = _field(trace, "title", str, "trace")
        if _SURROGATE.search(title):
            raise HandInError(f"trace.title: {_short(title)} holds a lone surrogate, which is "
                              "not text")
        student = check_name(_field(data, "student", str, "the results file"))
        questions = _field(data, "questions", list, "the results file")
        if len(questions) > _MAX_QUESTIONS:
            raise HandInError(f"questions: {len(questions)} of them; a trace asks at most "
                              f"{_MAX_QUESTIONS}")
        results = tuple(_question(q, f"questions[{i}]") for i, q in enumerate(questions))
        seen: dict[tuple[int, int], int] = {}
        for i, r in enumerate(results):
            if (r.step, r.index) in seen:
                raise HandInError(f"questions[{i}]: step {r.step}'s question {r.index} is there "
                                  f"twice (also questions[{seen[r.step, r.index]}])")
            seen[r.step, r.index] = i
        return cls(student=student, trace_key=key, trace_title=title,
                   handed_in=_when(_field(data, "handed_in", str, "the results file")),
                   questions=results)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION,
                "trace": {"key": self.trace_key, "title": self.trace_title},
                "student": self.student, "handed_in": timestamp(self.handed_in),
                "questions": [q.to_dict() for q in self.questions]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)

    def save(self, path: str | os.PathLike) -> pathlib.Path:
        """Write the file (all at once, as every file gradviz writes); the path written."""
        target = check_path(path, "results.json")
        write_text_atomic(target, self.to_json() + "\n")
        return target

    @property
    def answered(self) -> int:
        """How many questions are settled: right, or revealed."""
        return sum(q.outcome != "open" for q in self.questions)

    def __repr__(self) -> str:
        return (f"<HandIn of {self.student!r} for {self.trace_title!r}: {self.answered} of "
                f"{len(self.questions)} questions settled, handed in "
                f"{self.handed_in.strftime('%Y-%m-%d %H:%M UTC')}>")


def timestamp(when: _dt.datetime | None = None) -> str:
    """``when`` (by default now) as a results file writes it, in UTC to the millisecond,
    as the page's ``Date.toISOString()``: ``"2026-11-28T10:04:05.120Z"``."""
    stamp = (when or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def check_name(name: str) -> str:
    """A student's name as the summary compares it: Unicode's composed form (NFC), one
    space between words; a HandInError for an empty, over-long or control-character one."""
    text = " ".join(unicodedata.normalize("NFC", _text(name, "student", _MAX_NAME)).split())
    if not text:
        raise HandInError("student: the name is empty; results are handed in under a name")
    return text


def _question(q: Any, where: str) -> QuestionResult:
    if not isinstance(q, dict):
        raise HandInError(f"{where}: expected an object, got {_json_type(q)}")
    step = _count(_field(q, "step", int, where), f"{where}.step")
    index = _count(_field(q, "index", int, where), f"{where}.index")
    target = _text(_field(q, "target", str, where), f"{where}.target", _MAX_TEXT)
    raw = _field(q, "attempts", list, where)
    if len(raw) > _MAX_ATTEMPTS:
        raise HandInError(f"{where}.attempts: {len(raw)} of them; at most {_MAX_ATTEMPTS} are kept")
    attempts = tuple(_attempt(a, f"{where}.attempts[{i}]") for i, a in enumerate(raw))
    hints = _count(_field(q, "hints", int, where), f"{where}.hints")
    outcome = _field(q, "outcome", str, where)
    if outcome not in OUTCOMES:
        raise HandInError(f"{where}.outcome: expected one of {', '.join(OUTCOMES)}, "
                          f"got {_short(outcome)}")
    skipped = _field(q, "skipped", bool, where)
    seconds = _field(q, "seconds", (int, float), where)
    if not (0 <= seconds <= _MAX_SECONDS) or not math.isfinite(seconds):
        raise HandInError(f"{where}.seconds: expected a number of seconds, from 0 to 10**9, "
                          f"got {_short(seconds)}")
    rights = [i for i, a in enumerate(attempts) if a.verdict == "right"]
    if rights and rights != [len(attempts) - 1]:
        raise HandInError(f"{where}.attempts: an answer was checked after the right one "
                          f"(attempt {rights[0]} of {len(attempts)}); a right answer settles "
                          "the question")
    right = bool(rights)
    if outcome in ("first", "hinted") and not right:
        raise HandInError(f"{where}: the outcome is {outcome!r}, but no attempt was right")
    if outcome in ("revealed", "open") and right:
        raise HandInError(f"{where}: an attempt was right, but the outcome is {outcome!r} "
                          "(expected 'first' or 'hinted')")
    if outcome == "first" and (len(attempts) > 1 or hints):
        raise HandInError(f"{where}: the outcome is 'first' (right on the first try), but there "
                          f"were {len(attempts)} attempts and {hints} hints")
    return QuestionResult(step=step, index=index, target=target, attempts=attempts, hints=hints,
                          outcome=outcome, skipped=skipped, seconds=float(seconds))


def _attempt(a: Any, where: str) -> Attempt:
    if not isinstance(a, dict):
        raise HandInError(f"{where}: expected an object, got {_json_type(a)}")
    verdict = _field(a, "verdict", str, where)
    if verdict not in VERDICTS:
        raise HandInError(f"{where}.verdict: expected one of {', '.join(VERDICTS)}, "
                          f"got {_short(verdict)}")
    kind = a.get("kind")
    if verdict == "misconception":
        if not isinstance(kind, str) or not _KIND.fullmatch(kind):
            raise HandInError(f"{where}.kind: a named slip needs its kind, a name such as "
                              f"'broadcast_not_summed', got {_short(kind)}")
    elif kind is not None:
        raise HandInError(f"{where}.kind: only a named slip (verdict 'misconception') has a "
                          f"kind, and this verdict is {verdict!r}")
    return Attempt(verdict, kind)


def _field(obj: dict, name: str, kind: Any, where: str) -> Any:
    if name not in obj:
        raise HandInError(f"{where}: the field {name!r} is missing")
    value = obj[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))
    if not ok:
        names = " or ".join({dict: "an object", list: "a list", str: "a string", int: "an integer",
                             float: "a number", bool: "true or false"}[k] for k in kinds)
        raise HandInError(f"{where}.{name}: expected {names}, got {_json_type(value)} "
                          f"{_short(value)}")
    return value


def _count(value: int, where: str) -> int:
    if value < 0 or value > 10**9:
        raise HandInError(f"{where}: expected a whole number from 0 to 10**9, got {value}")
    return value


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _text(value: str, where: str, limit: int) -> str:
    if len(value) > limit:
        raise HandInError(f"{where}: {len(value)} characters; at most {limit}")
    if _SURROGATE.search(value) or _CONTROL.search(value):
        raise HandInError(f"{where}: {_short(value)} holds a control character or a lone "
                          "surrogate, which no name or title has")
    return value


def _when(text: str) -> _dt.datetime:
    try:
        stamp = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise HandInError(f"handed_in: expected a date and time such as "
                          f"'2026-11-28T10:04:05Z', got {_short(text)}") from None
    if stamp.tzinfo is None:
        raise HandInError(f"handed_in: {text!r} has no time zone; the page writes UTC, "
                          "ending in 'Z'")
    try:
        return stamp.astimezone(_dt.timezone.utc)
    except OverflowError:
        raise HandInError(f"handed_in: {text!r} is out of the range of dates") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _too_big(n: int) -> str:
    return (f"the file is {n:,} bytes; a results file is at most {MAX_BYTES:,} "
            "(a few kilobytes, usually)")


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false",
            int: "a number", float: "a number", type(None): "null"}.get(type(value),
                                                                       type(value).__name__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
