"""`make reports`: every lesson executed into an offline HTML report, plus an index.

The build runs once per module into a temporary folder (``--out``), exactly as
``scripts/build_reports.py`` runs for ``make reports``.  The browser tests then
open ``index.html`` from disk in headless Chromium with the network blocked,
follow a link to a lesson and step one of its traces, or to a lesson's practice
report, answer one of its questions and come back, as a student would.  What
the build does with small lessons of its own is tested once, in
test_build_reports.py.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from gradviz.views.picture import picture_svg
from fixtures.reports import run_build
from harness import REPO_ROOT

# Every test here holds under both Graphviz engines (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("each_layout_engine")

LESSONS = sorted(p.stem for p in (REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, each_layout_engine: str) -> Path:
    """The reports of every lesson, built into a temporary folder by each layout engine."""
    out = tmp_path_factory.mktemp("reports")
    result = run_build("--out", str(out))
    assert result.returncode == 0, f"build failed:\n{result.stdout}\n{result.stderr}"
    return out


def lesson_titles() -> dict[str, str]:
    titles = {}
    for name in LESSONS:
        nb = nbformat.read(REPO_ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        titles[name] = nb.cells[0].source.splitlines()[0].lstrip("# ").replace("`", "")
    return titles


def nav_of(page: str) -> str:
    """The report's navigation line, as written."""
    m = re.search(r'<nav class="gv-report-nav"[^>]*>.*?</nav>', page)
    assert m, "the report has no navigation line"
    return m.group(0)


def test_build_writes_one_report_per_lesson_and_an_index(reports: Path):
    assert sorted(p.stem for p in reports.glob("*.html") if p.name != "index.html") == LESSONS
    assert sorted(p.stem for p in (reports / "practice").glob("*.html")) == LESSONS
    assert not list(reports.glob(".staging-*")) and not list(reports.rglob("*.tmp"))
    index = (reports / "index.html").read_text(encoding="utf-8")
    entries = {e["file"]: e for e in json.loads((reports / ".lessons.json").read_text("utf-8"))}
    for name, title in lesson_titles().items():
        assert f'<a href="{name}.html">{html.escape(title)}</a>' in index
        assert f'<a class="gv-practice" href="practice/{name}.html">' in index
        assert entries[f"{name}.html"]["practice"] == f"practice/{name}.html"
        page = (reports / f"{name}.html").read_text(encoding="utf-8")
        assert f"<title>{html.escape(title)}</title>" in page
        assert "<script src" not in page and "http://" not in page.split("<script", 1)[0]
        assert "data-practice-key" not in page
        assert nav_of(page).endswith('><a href="index.html">All lessons</a>'
                                     f'<a href="practice/{name}.html">Practise this lesson</a></nav>')
        practice = (reports / "practice" / f"{name}.html").read_text(encoding="utf-8")
        assert f"<title>Practice \u00b7 {html.escape(title)}</title>" in practice
        assert "<script src" not in practice
        # practice on: each trace keeps its learner's progress under its own key
        assert practice.count("data-practice-key=") == page.count('class="gv-report-trace"') >= 1
        assert nav_of(practice).endswith('><a href="../index.html">All lessons</a>'
                                         f'<a href="../{name}.html">The lesson</a></nav>')
        # the lesson's exercises, asked after its traces in the practice report only
        asked = exercises_in(practice)
        assert len(asked) == entries[f"{name}.html"]["exercises"] == exercise_count(name) >= 3
        assert asked[0]["form"] in ("step", "value", "shape", "count", "choice", "nones")
        assert exercises_in(page) == []


def exercises_in(page: str) -> list[dict]:
    """The exercises a report asks (its ``gv-exercises-data`` block), as JSON."""
    m = re.search(r'<script type="application/json" id="gv-exercises-data">(.*?)</script>', page,
                  re.DOTALL)
    return json.loads(m.group(1)) if m else []


def exercise_count(name: str) -> int:
    """How many exercises the lesson asks: its ``exN.check(...)`` cells."""
    nb = nbformat.read(REPO_ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    return sum(bool(re.fullmatch(r"ex\d+\.check\(\.\.\.\)", c.source.strip()))
               for c in nb.cells if c.cell_type == "code")


@pytest.mark.browser
def test_index_opens_offline_and_a_lesson_steps(reports: Path, offline_page, screenshot_dir):
    from playwright.sync_api import expect

    page = offline_page
    page.goto((reports / "index.html").as_uri())
    links = page.locator(".gv-lessons a:not(.gv-notebook):not(.gv-practice)")
    expect(links).to_have_count(len(LESSONS))
    page.screenshot(path=screenshot_dir / "reports_index.png", full_page=True)

    title = lesson_titles()["03_stopping_gradients"]
    page.get_by_role("link", name=title).click()
    page.wait_for_url("**/03_stopping_gradients.html")
    expect(page).to_have_title(title)

    viewers = page.locator(".gv-viewer")
    expect(viewers.first).to_be_visible()
    assert viewers.count() >= 2  # the lesson displays several traces
    viewer = viewers.nth(1)  # "partial derivatives: stop_gradients=[a, b]"
    expect(viewer.locator(".gv-title")).to_contain_text("stop_gradients")
    counter = viewer.locator(".gv-counter-text")
    expect(counter).to_have_text("step 0 / 4")

    viewer.locator(".gv-next").click()
    expect(counter).to_have_text("step 1 / 4")
    assert viewer.locator("svg .gv-active").count() >= 1
    expect(viewer.locator(".gv-prev")).to_be_enabled()

    # the cut step: stepping on to it names the reason in the step's sentence
    viewer.locator(".gv-last").click()
    expect(counter).to_have_text("step 4 / 4")
    viewer.locator(".gv-prev").click()
    viewer.locator(".gv-prev").click()
    expect(viewer.locator(".gv-kind")).to_have_text("cut")
    expect(viewer.locator(".gv-sentence")).to_contain_text("stop_gradients")
    expect(viewer.locator(".gv-results")).to_contain_text("1")
    viewer.scroll_into_view_if_needed()
    viewer.screenshot(path=screenshot_dir / "report_03_stopping_gradients.png")

    assert page.blocked_requests == [], f"the report tried the network: {page.blocked_requests}"
    assert page.page_errors == [] and page.console_errors == []


def report_questions(path: Path) -> list[list[list[dict]]]:
    """Each trace's questions, step by step, read from the report's own data blocks."""
    page = path.read_text(encoding="utf-8")
    traces = []
    for attrs, text in re.findall(r'<script ([^>]*id="gv-payload-\d+"[^>]*)>(.*?)</script>',
                                  page, re.S):
        if 'data-encoding="gzip+base64"' in attrs:
            text = gzip.decompress(base64.b64decode(text)).decode("utf-8")
        traces.append([s.get("questions", []) for s in json.loads(text)["steps"]])
    return traces


def a_question_with_a_slip(path: Path) -> tuple[int, int, dict, dict]:
    """(trace, step, question, slip): the first question a step asks first that has a
    named slip and asks the whole array, a stop_gradients cut ignored if there is one."""
    found = [(t, k, q, w) for t, steps in enumerate(report_questions(path))
             for k, qs in enumerate(steps) for q in qs[:1] if q["focus"] is None
             for w in q["wrong"] if w["shape"] == q["shape"]]
    assert found, f"{path.name} asks no question with a named slip"
    return min(found, key=lambda c: c[3]["kind"] != "cut_ignored")


@pytest.mark.browser
def test_index_leads_to_a_practice_report_and_back(reports: Path, offline_page, screenshot_dir):
    """Index -> a lesson's practice report: a slip is named, a guess is "not yet", the
    right answer shows the step; the navigation line leads back to the index."""
    from playwright.sync_api import expect
    from test_practice_browser import answer, go

    name = "03_stopping_gradients"
    title = lesson_titles()[name]
    page = offline_page
    page.goto((reports / "index.html").as_uri())
    lesson = page.locator(".gv-lessons li").filter(
        has=page.get_by_role("link", name=title, exact=True))
    lesson.locator("a.gv-practice").click()
    page.wait_for_url(f"**/practice/{name}.html")
    expect(page).to_have_title(f"Practice \u00b7 {title}")
    expect(page.locator(".gv-report-header")).to_contain_text("answer each step's question")

    t, k, q, slip = a_question_with_a_slip(reports / "practice" / f"{name}.html")
    viewer = page.locator(".gv-viewer").nth(t)
    viewer.scroll_into_view_if_needed()
    viewer.locator(".gv-diagram svg").first.wait_for()
    go(viewer, k)
    expect(viewer.locator(".gv-question-prompt")).to_have_text(q["prompt"])
    expect(viewer.locator(".gv-sentence")).to_be_hidden()  # asked before it is shown

    said = answer(viewer, q["shape"], slip["values"])
    assert said == f"{slip['title'][:1].upper()}{slip['title'][1:]}. {slip['why']}"
    assert viewer.locator(".gv-feedback:visible").last.get_attribute("data-kind") == slip["kind"]
    right = np.asarray(q["answer"], dtype=np.float64)
    guess = right * 1.37 + 0.5  # none of the slips
    assert all(not np.allclose(guess, w["values"]) for w in q["wrong"])
    assert answer(viewer, q["shape"], guess) == "Not yet: that is none of the usual slips."
    viewer.locator(".gv-practice").scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / f"practice_report_{name}.png")
    said = answer(viewer, q["shape"], right)
    assert said.startswith(f"Right: {q['target']}"), said
    expect(viewer.locator(".gv-question-hinted")).to_contain_text("Right after 2 wrong tries.")
    expect(viewer.locator(".gv-sentence")).to_be_visible()  # the step, shown once answered

    # the lesson's first exercise, after the traces: a stop_gradients sum to work out
    from gradviz.views.practice import SLIPS
    exercise = page.locator(".gv-exercise").first
    exercise.scroll_into_view_if_needed()
    expect(page.locator(".gv-exercise")).to_have_count(exercise_count(name))
    feedback = exercise.locator(".gv-feedback")
    exercise.locator(".gv-exercise-input").fill("[9, 4, 1]")  # the total derivatives
    exercise.locator(".gv-exercise-input").press("Enter")
    title, why = SLIPS["cut_ignored"]
    expect(feedback).to_have_text(f"{title[:1].upper()}{title[1:]}. {why}")
    assert feedback.get_attribute("data-kind") == "cut_ignored"
    exercise.locator(".gv-exercise-input").fill("[1, 4, 1]")
    exercise.locator(".gv-exercise-check").click()
    expect(feedback).to_have_text("Right: [1, 4, 1].")
    page.locator(".gv-report-exercises").screenshot(
        path=screenshot_dir / f"practice_exercises_{name}.png")

    page.locator(".gv-report-nav").get_by_role("link", name="All lessons").click()
    page.wait_for_url("**/index.html")
    expect(page.locator(".gv-lessons a.gv-practice")).to_have_count(len(LESSONS))
    assert page.blocked_requests == [], f"the report tried the network: {page.blocked_requests}"
    assert page.page_errors == [] and page.console_errors == []


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def viewer_outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if WIDGET_MIME in o.get("data", {})]


def test_the_lessons_run_are_saved_with_a_picture_for_each_viewer(reports: Path):
    index = (reports / "index.html").read_text(encoding="utf-8")
    for name in LESSONS:
        lesson = nbformat.read(REPO_ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        saved = nbformat.read(reports / "notebooks" / f"{name}.ipynb", as_version=4)
        assert [c.source for c in saved.cells] == [c.source for c in lesson.cells]
        assert "widgets" not in saved.metadata  # no widget state: the pictures show instead
        outputs = [o for c in saved.cells if c.cell_type == "code" for o in c.outputs]
        assert not [o for o in outputs if o.output_type == "error"]
        viewers = viewer_outputs(saved)
        assert viewers, f"{name} shows no viewer"
        # Each viewer's output is followed by its picture, an output of its own.
        for c in saved.cells:
            outs = c.get("outputs", [])
            for i, o in enumerate(outs):
                if WIDGET_MIME not in o.get("data", {}):
                    continue
                assert "text/html" not in o.data
                picture = outs[i + 1].data["text/html"]
                assert picture.startswith('<div class="gv-widget-fallback"')
                assert picture.count('<div class="gv-picture"') == 1
                assert picture_svg(picture).startswith('<svg class="gv-svg')
        assert f'href="notebooks/{name}.ipynb"' in index


@pytest.mark.browser
def test_nbconvert_of_a_saved_lesson_shows_its_pictures_offline(reports: Path, tmp_path: Path,
                                                                 offline_page, screenshot_dir):
    from playwright.sync_api import expect

    name = "01_what_gradients_computes"
    saved = reports / "notebooks" / f"{name}.ipynb"
    jupyter = Path(sys.executable).with_name("jupyter")
    done = subprocess.run([str(jupyter), "nbconvert", "--to", "html", "--output-dir", str(tmp_path),
                           str(saved)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    converted = (tmp_path / f"{name}.html").read_text(encoding="utf-8")
    n = len(viewer_outputs(nbformat.read(saved, as_version=4)))
    images = re.findall(r'<img [^>]*class="gv-picture-diagram"[^>]*>', converted)
    drawings = [base64.b64decode(re.search(r'src="data:image/svg\+xml;base64,([^"]*)"', i)[1])
                .decode("utf-8") for i in images]
    assert converted.count('<div class="gv-picture"') == len(drawings) == n >= 2
    assert all(d.startswith('<svg class="gv-svg') and "gv-active" in d for d in drawings)

    page = offline_page
    page.goto((tmp_path / f"{name}.html").as_uri())
    pictures = page.locator(".gv-picture")
    expect(pictures).to_have_count(n)
    first = pictures.first
    first.scroll_into_view_if_needed()
    expect(first).to_contain_text("result for b")
    # The drawing is painted with its step states: the gradients' blue, and the
    # last step's yellow glow (pixels counted on a canvas).
    look = first.evaluate("""async p => {
        const img = p.querySelector('img.gv-picture-diagram');
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.naturalWidth; c.height = img.naturalHeight;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        const px = g.getImageData(0, 0, c.width, c.height).data;
        let blue = 0, glow = 0;
        for (let i = 0; i < px.length; i += 4) {
            const [r, gr, b] = [px[i], px[i + 1], px[i + 2]];
            if (r < 20 && Math.abs(gr - 114) < 12 && Math.abs(b - 178) < 12) blue++;
            if (r > 200 && gr > 180 && b < 140) glow++;
        }
        return {width: img.getBoundingClientRect().width, blue, glow};
    }""")
    assert look["width"] > 300 and look["blue"] > 200 and look["glow"] > 50, look
    assert first.locator(".gv-picture-legend li img").count() >= 6
    first.screenshot(path=screenshot_dir / "nbconvert_01_picture.png")
    # the what-if explorer's picture names the values it was drawn at
    expect(page.locator(".gv-picture", has_text="at W = ")).to_have_count(1)
    assert page.page_errors == []
