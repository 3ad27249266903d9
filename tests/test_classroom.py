"""Handed-in practice results and the class's summary, without a browser.

- The results file: versioned, every field checked on load as a trace's are,
  a broken rule refused with where it is.
- ``gv.class_summary``: counts per step, question and misconception; a file of
  another trace refused naming both; a damaged, copied or foreign file skipped
  and listed; a student who handed in twice counted once, by the later file.
- The widget's ``results()`` and ``hand_in``; the teacher's report, escaped.
"""

from __future__ import annotations

import hashlib
import json
import pathlib

import pytest
from matplotlib.figure import Figure

import gradviz as gv
from gradviz.views.practice import HandIn, HandInError, trace_key
from gradviz.views.practice.handin import MAX_BYTES
from gradviz.views.widget import view_payload
from fixtures.traces import version_2


def broadcast(title: str = "a broadcast bias") -> gv.Trace:
    X = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="X")
    b = gv.constant([1.0, 2.0, 3.0], name="b")
    return gv.trace_gradients(X * b, b, title=title)


RIGHT = {"verdict": "right"}


def slip(kind: str) -> dict:
    return {"verdict": "misconception", "kind": kind}


def question(step, target, attempts=(), hints=0, outcome="open", skipped=False, seconds=0.0):
    return {"step": step, "index": 0, "target": target, "attempts": list(attempts),
            "hints": hints, "outcome": outcome, "skipped": skipped, "seconds": seconds}


TARGETS = ["dL/dMul", "dL/d(b broadcast)", "dL/db", "dL/db"]


def results(tr, student, *answers, when="2026-11-28T10:00:00.000Z") -> dict:
    """A results file's object: ``answers`` per step (a dict of question's fields), the
    rest open."""
    qs = [question(k, t, **(answers[k] if k < len(answers) else {})) for k, t in enumerate(TARGETS)]
    return {"format": "gradviz practice results", "version": 1,
            "trace": {"key": trace_key(tr), "title": tr.title}, "student": student,
            "handed_in": when, "questions": qs}


def write(folder: pathlib.Path, name: str, data) -> pathlib.Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------- the file


def test_the_payload_asks_what_a_results_file_names():
    tr = broadcast()
    payload = view_payload(tr, practice=True)
    assert payload["trace_key"] == trace_key(tr) == trace_key(gv.Trace.from_json(tr.to_json()))
    assert [q["target"] for s in payload["steps"] for q in s.get("questions") or []] == TARGETS
    assert "trace_key" not in view_payload(tr)  # (a viewer that does not practise hands in nothing)
    # the lines of code are not the trace: a report written without them, or the same
    # program run again elsewhere (another cell, another file), is the same trace
    assert view_payload(tr, practice=True, source=False)["trace_key"] == trace_key(tr)
    assert trace_key(tr.without_source()) == trace_key(tr)
    assert tr.to_json(source=False) != tr.to_json()
    # ... and a page made before lines of code were kept (format version 2, whose JSON
    # the key was the hash of) still belongs to its trace
    old = json.dumps(version_2(json.loads(tr.to_json())),
                     allow_nan=False, separators=(",", ":"))
    assert trace_key(tr) == hashlib.sha256(old.encode("utf-8")).hexdigest()[:24]


def test_a_results_file_reads_back_as_it_was_written(tmp_path):
    tr = broadcast()
    data = results(tr, "  Ada   Lovelace ", {"attempts": [RIGHT], "outcome": "first", "seconds": 3.5},
                   {"attempts": [{"verdict": "not_yet"}, {"verdict": "shape"}], "hints": 2,
                    "outcome": "revealed"},
                   {"attempts": [slip("broadcast_not_summed"), RIGHT], "outcome": "hinted"})
    h = HandIn.from_dict(data)
    assert h.student == "Ada Lovelace" and h.answered == 3
    assert h.questions[2].slips == ("broadcast_not_summed",)
    path = h.save(tmp_path / "ada.json")
    again = HandIn.load(path)
    assert again == h and HandIn.from_json(again.to_json()) == h
    assert json.loads(path.read_text())["handed_in"] == "2026-11-28T10:00:00.000Z"
    assert "Ada Lovelace" in repr(h) and "3 of 4 questions settled" in repr(h)


BROKEN = [
    (lambda d: {**d, "format": "something else"}, "format: expected 'gradviz practice results'"),
    (lambda d: {**d, "version": 2}, "version 2 of the results format, which a newer gradviz wrote"),
    (lambda d: {**d, "version": "1"}, "version: expected an integer"),
    (lambda d: {k: v for k, v in d.items() if k != "student"}, "the field 'student' is missing"),
    (lambda d: {**d, "student": "   "}, "student: the name is empty"),
    (lambda d: {**d, "student": "x" * 101}, "student: 101 characters; at most 100"),
    (lambda d: {**d, "student": "a\x00b"}, "control character"),
    (lambda d: {**d, "trace": {"key": "abc", "title": "t"}}, "trace.key: expected 24 hex digits"),
    (lambda d: {**d, "handed_in": "yesterday"}, "handed_in: expected a date and time"),
    (lambda d: {**d, "handed_in": "2026-11-28T10:00:00"}, "has no time zone"),
    (lambda d: {**d, "questions": {}}, "questions: expected a list, got an object"),
    (lambda d: {**d, "questions": d["questions"] + d["questions"][:1]},
     "questions[4]: step 0's question 0 is there twice (also questions[0])"),
    (lambda d: _q(d, step=-1), "questions[0].step: expected a whole number from 0"),
    (lambda d: _q(d, step=True), "questions[0].step: expected an integer, got true or false"),
    (lambda d: _q(d, outcome="done"), "questions[0].outcome: expected one of first, hinted, "
     "revealed, open"),
    (lambda d: _q(d, seconds=-1), "questions[0].seconds: expected a number of seconds"),
    (lambda d: _q(d, seconds=10**400), "questions[0].seconds: expected a number of seconds"),
    (lambda d: {**d, "handed_in": "0001-01-01T00:00:00+01:00"}, "out of the range of dates"),
    (lambda d: _q(d, attempts=[{"verdict": "maybe"}]), "questions[0].attempts[0].verdict"),
    (lambda d: _q(d, attempts=[{"verdict": "misconception"}]),
     "questions[0].attempts[0].kind: a named slip needs its kind"),
    (lambda d: _q(d, attempts=[{"verdict": "shape", "kind": "x"}]),
     "only a named slip (verdict 'misconception') has a kind"),
    (lambda d: _q(d, attempts=[RIGHT, {"verdict": "not_yet"}], outcome="hinted"),
     "an answer was checked after the right one"),
    (lambda d: _q(d, attempts=[{"verdict": "not_yet"}], outcome="first"),
     "the outcome is 'first', but no attempt was right"),
    (lambda d: _q(d, attempts=[RIGHT], outcome="revealed"), "an attempt was right, but the outcome"),
    (lambda d: _q(d, attempts=[{"verdict": "shape"}, RIGHT], outcome="first"),
     "the outcome is 'first' (right on the first try), but there were 2 attempts"),
    (lambda d: _q(d, attempts=[RIGHT] * 1001), "questions[0].attempts: 1001 of them"),
]


def _q(data: dict, **change) -> dict:
    return {**data, "questions": [{**data["questions"][0], **change}] + data["questions"][1:]}


@pytest.mark.parametrize("break_it, said", BROKEN)
def test_a_broken_results_file_is_refused_saying_where(break_it, said):
    data = results(broadcast(), "Ada", {"attempts": [RIGHT], "outcome": "first"})
    HandIn.from_dict(data)  # (whole, it reads)
    with pytest.raises(HandInError) as info:
        HandIn.from_dict(break_it(data))
    assert said in str(info.value)


def test_what_is_not_a_results_file_at_all_is_refused_before_it_is_read():
    with pytest.raises(HandInError, match="the file is not JSON"):
        HandIn.from_json("{\"format\": ")
    with pytest.raises(HandInError, match="NaN is not a JSON number|not JSON"):
        HandIn.from_json('{"seconds": NaN}')
    with pytest.raises(HandInError, match="not UTF-8 text"):
        HandIn.from_json(b"\xff\xfe{}")
    with pytest.raises(HandInError, match="expected a JSON object, got a list"):
        HandIn.from_json("[]")
    with pytest.raises(HandInError, match=f"at most {MAX_BYTES:,}"):
        HandIn.from_json(" " * (MAX_BYTES + 1))
    with pytest.raises(HandInError, match="nests lists or objects deeper"):
        HandIn.from_json("[" * 100_000 + "]" * 100_000)


# ---------------------------------------------------------------- the class


def test_the_summary_counts_per_step_question_and_misconception(tmp_path):
    tr = broadcast()
    write(tmp_path, "ada.json", results(
        tr, "Ada", {"attempts": [RIGHT], "outcome": "first"},
        {"attempts": [RIGHT], "outcome": "first"},
        {"attempts": [slip("broadcast_not_summed"), slip("broadcast_not_summed"), RIGHT],
         "outcome": "hinted"}))
    write(tmp_path, "bob.json", results(
        tr, "Bob", {"attempts": [{"verdict": "shape"}, RIGHT], "outcome": "hinted"},
        {"hints": 2, "outcome": "revealed"},
        {"attempts": [slip("broadcast_mean"), slip("broadcast_not_summed")],
         "outcome": "revealed"},
        {"skipped": True}))
    s = gv.class_summary(tmp_path, tr)
    rows = {(r.step, r.misconception): (r.students, r.first, r.hinted, r.revealed, r.open)
            for r in s.rows}
    assert rows == {(0, None): (2, 1, 1, 0, 0), (0, "shape"): (1, 0, 1, 0, 0),
                    (1, None): (2, 1, 0, 1, 0),
                    (2, None): (2, 0, 1, 1, 0), (2, "broadcast_not_summed"): (2, 0, 1, 1, 0),
                    (2, "broadcast_mean"): (1, 0, 0, 1, 0),
                    (3, None): (1, 0, 0, 0, 1)}
    # the slips a step's question names first, the most students first
    assert [r.misconception for r in s.rows if r.step == 2] == [None, "broadcast_not_summed",
                                                                "broadcast_mean"]
    assert [(h.step, h.not_first, h.students, h.revealed) for h in s.hardest] == [
        (2, 2, 2, 1), (3, 1, 1, 0), (1, 1, 2, 1), (0, 1, 2, 0)]  # (ties: more revealed first)
    common = s.misconceptions
    assert [(c.kind, c.students, c.steps) for c in common] == [
        ("broadcast_not_summed", 2, (2,)), ("broadcast_mean", 1, (2,))]
    assert common[0].title == "the broadcast sum forgotten"
    assert common[0].why.startswith("That is the gradient before the sum")
    text = str(s)
    assert "a broadcast bias: 2 students handed in" in text
    assert "the broadcast sum forgotten (2 of 2; step 2): That is the gradient" in text
    assert isinstance(s.figure(), Figure)


def test_files_of_another_trace_are_refused_naming_both(tmp_path):
    tr, other = broadcast(), broadcast("another program")
    write(tmp_path, "ada.json", results(tr, "Ada"))
    write(tmp_path, "eve.json", results(other, "Eve"))
    s = gv.class_summary(tmp_path, tr)  # (last week's files in the folder: listed, not fatal)
    assert [h.student for h in s.students] == ["Ada"]
    [(path, said)] = s.skipped
    assert path.name == "eve.json"
    assert said == (f"refused: it holds results for the trace 'another program' (key "
                    f"{trace_key(other)}), not for 'a broadcast bias' (key {trace_key(tr)}), "
                    "the trace given.")
    # none of this trace: nothing to count, said at once
    with pytest.raises(ValueError) as info:
        gv.class_summary(tmp_path / "eve.json", tr)
    assert "none of the 1 files could be read as results for 'a broadcast bias': eve.json: " \
        "refused: it holds results for the trace 'another program'" in str(info.value)
    # the same title, another trace: the program run again, its ops named anew
    with pytest.raises(ValueError, match="The titles are the same, but not the traces"):
        gv.class_summary(tmp_path, gv.trace_gradients(gv.constant(2.0) * 3.0, [],
                                                      title="a broadcast bias"))


def test_damaged_copied_and_foreign_files_are_skipped_and_listed(tmp_path):
    tr = broadcast()
    write(tmp_path, "ada.json", results(tr, "Ada", {"attempts": [RIGHT], "outcome": "first"}))
    write(tmp_path, "ada-copy.json", (tmp_path / "ada.json").read_text())
    write(tmp_path, "cut.json", (tmp_path / "ada.json").read_text()[:40])
    write(tmp_path, "notes.json", {"homework": 3})
    write(tmp_path, "edited.json", _q(results(tr, "Max"), outcome="first"))
    bad_step = results(tr, "Zed")
    bad_step["questions"][1]["target"] = "dL/dX"
    write(tmp_path, "zed.json", bad_step)
    write(tmp_path, "readme.txt", "not read: only .json files of a folder are")
    s = gv.class_summary(tmp_path, tr)
    assert [h.student for h in s.students] == ["Ada"]
    why = {p.name: reason for p, reason in s.skipped}
    assert why["ada.json"] == "a copy of ada-copy.json"  # (read in name order)
    assert why["cut.json"].startswith("damaged: the file is not JSON")
    assert why["notes.json"].startswith("not a results file: format: expected")
    assert why["edited.json"].startswith("damaged: questions[0]: the outcome is 'first'")
    assert why["zed.json"] == ("its questions are not this trace's: step 1's question 0 asks "
                               "dL/d(b broadcast), the file's dL/dX")
    assert set(why) == {"ada.json", "cut.json", "notes.json", "edited.json", "zed.json"}
    assert "Not counted:\n  ada.json: a copy of ada-copy.json" in str(s)


def test_a_name_handed_in_three_times_counts_by_its_latest_file(tmp_path):
    tr = broadcast()
    for name, who, hour in [("a.json", "José", 9), ("b.json", "jose\u0301", 11), ("c.json", "JOSÉ", 10)]:
        write(tmp_path, name, results(tr, who, when=f"2026-11-28T{hour:02}:00:00.000Z"))
    s = gv.class_summary(tmp_path, tr)  # (one name in composed and decomposed forms)
    assert len(s.students) == 1 and s.students[0].student == "jos\u00e9"
    assert s.replaced == ("jos\u00e9 handed in 3 times: b.json (2026-11-28 11:00:00 UTC) counts, "
                          "not a.json (2026-11-28 09:00:00 UTC), c.json (2026-11-28 10:00:00 UTC)",)


def test_a_student_who_hands_in_twice_counts_once_by_the_later_file(tmp_path):
    tr = broadcast()
    later = write(tmp_path, "a.json", results(tr, "Ada", {"attempts": [RIGHT], "outcome": "first"},
                                             when="2026-11-28T11:00:00.000Z"))
    write(tmp_path, "b.json", results(tr, " ada ", when="2026-11-28T10:00:00.000Z"))
    s = gv.class_summary([tmp_path / "b.json", later], tr)
    assert len(s.students) == 1 and s.students[0].answered == 1
    assert s.replaced == ("Ada handed in twice: a.json (2026-11-28 11:00:00 UTC) counts, not "
                          "b.json (2026-11-28 10:00:00 UTC)",)
    assert "Handed in more than once:" in str(s)


def test_what_class_summary_takes(tmp_path):
    tr = broadcast()
    with pytest.raises(ValueError, match="no results files in"):
        gv.class_summary(tmp_path, tr)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        gv.class_summary(tmp_path / "missing", tr)
    with pytest.raises(TypeError, match="files: expected a folder, a results file, or a list"):
        gv.class_summary(3, tr)
    with pytest.raises(TypeError, match="trace: expected the gradviz.Trace the students practised"):
        gv.class_summary(tmp_path, tr.to_json())
    write(tmp_path, "junk.json", "[]")
    with pytest.raises(ValueError, match="none of the 1 files could be read as results"):
        gv.class_summary(tmp_path, tr)


def test_a_title_with_dollars_is_drawn_as_it_is(tmp_path):
    tr = broadcast(title="cost $\\frac{a$ in $")
    write(tmp_path, "x.json", results(tr, "Ada", {"attempts": [slip("broadcast_mean"), RIGHT],
                                                  "outcome": "hinted"}))
    fig = gv.class_summary(tmp_path, tr).figure()
    fig.savefig(tmp_path / "fig.png")
    assert fig.axes[0].get_title(loc="left").replace("\\$", "$").startswith("cost $\\frac{a$ in $")


def test_the_teachers_report_escapes_what_students_typed(tmp_path):
    tr = broadcast()
    write(tmp_path, "x.json", results(tr, "<script>alert(1)</script>",
                                      {"attempts": [slip("broadcast_mean"), RIGHT],
                                       "outcome": "hinted"}))
    s = gv.class_summary(tmp_path, tr)
    page = s.to_html(tmp_path / "class.html")
    text = page.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)" in text
    assert 'href="#step0"' in text and "data:image/png;base64," in text
    assert "<script>alert" not in s._repr_html_()
    with pytest.raises(ValueError, match="does not exist"):
        s.to_html(tmp_path / "no-such-folder" / "class.html")


# ---------------------------------------------------------------- the widget


def test_a_practising_widget_gives_its_results_to_python(tmp_path):
    tr = broadcast()
    w = gv.show(tr, practice=True)
    with pytest.raises(ValueError, match="no name to hand in under"):
        w.results()
    empty = w.results(student="Ada")  # before any answer: every question open
    assert [q.outcome for q in empty.questions] == ["open"] * 4 and empty.trace_key == trace_key(tr)
    w.practice_results = results(tr, "Ada", {"attempts": [RIGHT], "outcome": "first",
                                             "seconds": 4.0})
    got = w.results()
    assert got.student == "Ada" and got.questions[0].outcome == "first"
    path = w.hand_in(tmp_path / "ada.json", student="Ada L.")
    assert HandIn.load(path).student == "Ada L."
    assert gv.class_summary(path, tr).rows[0].first == 1
    w.practice_results = {**results(tr, "Ada"), "version": 7}
    with pytest.raises(ValueError, match="do not read back: version"):
        w.results()
    with pytest.raises(ValueError, match="does not practise"):
        gv.show(tr).results(student="Ada")
    with pytest.raises(TypeError, match="student: expected a name"):
        w.results(student=3)
    with pytest.raises(ValueError, match="results: student: 101 characters; at most 100"):
        w.results(student="x" * 101)
