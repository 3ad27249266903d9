"""`make reports` on small lessons of a test's own: a failed build, a lesson with
no trace, titles that need escaping, an unknown name, the index kept across
builds, and the script's own examples.

None of this depends on the layout engine, so it runs once; the lessons' own
reports are built and opened per engine in test_reports_browser.py.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
from pathlib import Path

import nbformat
from fixtures.reports import SCRIPT, run_build
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def write_lesson(folder: Path, name: str, title: str, code: str) -> None:
    nb = new_notebook(cells=[new_markdown_cell(f"# {title}\n\nA test lesson."),
                             new_code_cell(code)],
                      metadata={"kernelspec": {"name": "python3", "language": "python",
                                               "display_name": "Python 3"}})
    nbformat.write(nb, folder / f"{name}.ipynb")


def load_build_script():
    """scripts/build_reports.py as a module, for its index functions."""
    spec = importlib.util.spec_from_file_location("build_reports", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_older_entry_without_a_practice_report_stays_in_the_index(tmp_path: Path):
    build = load_build_script()
    for f in ("01_old.html", "02_gone.html", "practice/02_gone.html", "03_new.html",
              "practice/03_new.html"):
        (tmp_path / f).parent.mkdir(exist_ok=True)
        (tmp_path / f).write_text("a report", encoding="utf-8")
    (tmp_path / "practice" / "02_gone.html").unlink()  # its practice report removed since
    (tmp_path / ".lessons.json").write_text(json.dumps([
        {"file": "01_old.html", "title": "Old", "traces": [{"name": "tr"}]},  # before practice
        {"file": "02_gone.html", "title": "Gone", "practice": "practice/02_gone.html"},
        {"file": "missing.html", "title": "Missing"},
        "not an entry"]), encoding="utf-8")
    fresh = [{"file": "03_new.html", "title": "New", "practice": "practice/03_new.html",
              "notebook": "notebooks/03_new.ipynb", "traces": []}]
    entries = build._entries_in(tmp_path, fresh)
    assert [e["file"] for e in entries] == ["01_old.html", "02_gone.html", "03_new.html"]
    assert "practice" not in entries[1]  # never a link to a page that is not there
    index = build.index_html(entries)
    assert index.count('class="gv-practice"') == 1
    assert '<a class="gv-practice" href="practice/03_new.html">' in index
    assert '<a href="01_old.html">Old</a>' in index and '<a href="02_gone.html">Gone</a>' in index


def test_the_build_scripts_examples_hold():
    failed, attempted = doctest.testmod(load_build_script())
    assert attempted >= 4 and failed == 0


def test_failed_build_names_the_cell_and_keeps_old_reports(tmp_path: Path):
    lessons = tmp_path / "notebooks"
    lessons.mkdir()
    out = tmp_path / "reports"
    out.mkdir()
    (out / "index.html").write_text("previous index", encoding="utf-8")
    write_lesson(lessons, "01_fine", "Fine",
                 "import gradviz as gv\nx = gv.constant(2.0, name='x')\n"
                 "tr = gv.trace_gradients(x * x, x)")
    write_lesson(lessons, "02_broken", "Broken", "raise ValueError('the lesson broke here')")

    result = run_build("--out", str(out), "--notebooks", str(lessons), "--jobs", "2")
    assert result.returncode == 1
    assert "02_broken.ipynb: a cell raised an error" in result.stderr
    assert "the lesson broke here" in result.stderr
    assert "the reports were not updated" in result.stderr
    assert (out / "index.html").read_text(encoding="utf-8") == "previous index"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]


def test_lesson_without_traces_and_titles_that_need_escaping(tmp_path: Path):
    lessons = tmp_path / "notebooks"
    lessons.mkdir()
    write_lesson(lessons, "01_no_traces", "Nothing to show", "x = 1")
    out = tmp_path / "reports"
    result = run_build("--out", str(out), "--notebooks", str(lessons))
    assert result.returncode == 1
    assert "binds no gv.Trace to a top-level name" in result.stderr

    (lessons / "01_no_traces.ipynb").unlink()
    write_lesson(lessons, "01_markup", "<script>alert(1)</script> & friends",
                 "import gradviz as gv\nw = gv.Variable(3.0, name='w')\n"
                 "tr = gv.trace_gradients(w * w, w, title='<b>bold</b>')")
    result = run_build("--out", str(out), "--notebooks", str(lessons))
    assert result.returncode == 0, result.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends" in index
    assert "<script>alert" not in index and "<b>bold</b>" not in index
    assert "&lt;b&gt;bold&lt;/b&gt;" in index  # the trace titles are listed, escaped
    entries = json.loads((out / ".lessons.json").read_text(encoding="utf-8"))
    assert entries[0]["traces"] == [{"name": "tr", "title": "<b>bold</b>", "steps": 4}]


def test_unknown_notebook_name_is_a_clear_error(tmp_path: Path):
    result = run_build("--out", str(tmp_path), "99_missing")
    assert result.returncode == 1
    assert "no such notebook: 99_missing" in result.stderr
