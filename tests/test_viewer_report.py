"""Browser tests of the exported HTML report: opened from disk, with all network blocked.

Each test exports a report, opens it in headless Chromium through the
``offline_page`` fixture (every non-file request is aborted and recorded), and
checks what a reader would see: the highlighted diagram elements (classes and
computed style), the step sentence, the counter, and that nothing tried to
reach the network or ran a script smuggled in through a name.
"""

from __future__ import annotations

import copy
import pathlib
import re

import numpy as np
import pytest

import gradviz as gv
import gradviz.views.report as report
from gradviz.views import diagram, explain
from fixtures.traces import linear_regression, scoped_tanh_chain
from fixtures.viewer_page import (load_payload, read_report_data, style_signature, viewer_state,
                                  wait_active_in_view, wait_step)

# Every test here holds under both Graphviz engines (tests/conftest.py).
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("each_layout_engine")]

HOSTILE = 'a"b<script>window.pwned=1</script>&<img src=x onerror="window.pwned=2">'



def open_report(page, path: pathlib.Path):
    page.goto(path.as_uri())
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    return page.locator(".gv-viewer")


def assert_offline_and_clean(page) -> None:
    assert page.blocked_requests == [], f"the report tried to reach the network: {page.blocked_requests}"
    assert page.page_errors == [], f"script errors: {page.page_errors}"
    assert page.console_errors == [], f"console errors: {page.console_errors}"


def expected_active(viewer, k: int) -> list[str]:
    """The ids step k touches that exist in the SVG, per the payload."""
    return viewer.evaluate(
        """(root, k) => {
            const data = root.gvTestData || JSON.parse(document.getElementById(
                root.closest('.gv-report-trace').dataset.payload).textContent);
            const svg = root.querySelector('.gv-diagram svg');
            return [...new Set(data.steps[k].ids)].filter(
                id => svg.querySelector(`[id="${CSS.escape(id)}"]`)).sort();
        }""", k)


# ------------------------------------------------------------------ stepping


def test_report_steps_offline_with_buttons_and_keys(offline_page, tmp_path, screenshot_dir):
    tr = linear_regression()
    path = gv.export_html([tr], tmp_path / "lesson.html", title="Linear regression")
    viewer = open_report(offline_page, path)
    n = len(tr.steps)

    s0 = viewer_state(viewer)
    assert s0["step"] == 0 and s0["counter"].startswith(f"step 0 / {n - 1}")
    assert s0["active"] == expected_active(viewer, 0) != []
    assert s0["sentence"]

    # An element first touched by step 1 looks different once step 1 is shown.
    new_ids = [i for i in expected_active(viewer, 1) if i not in s0["active"]]
    assert new_ids, "step 1 should touch something step 0 did not"
    before = {i: style_signature(viewer, i) for i in new_ids}

    viewer.locator(".gv-next").click()
    wait_step(viewer, 1)
    s1 = viewer_state(viewer)
    assert s1["active"] == expected_active(viewer, 1)
    assert s1["sentence"] != s0["sentence"]
    assert s1["counter"].startswith(f"step 1 / {n - 1}")
    after = {i: style_signature(viewer, i) for i in new_ids}
    assert all(before[i] != after[i] for i in new_ids), (before, after)
    assert set(s0["active"]) - set(s1["active"]) <= set(s1["done"])  # step 0's marks are now done
    offline_page.screenshot(path=screenshot_dir / "report_step2.png", full_page=True)

    # Keys, once the viewer has focus.
    viewer.locator(".gv-sentence").click()
    offline_page.keyboard.press("ArrowRight")
    wait_step(viewer, 2)
    s2 = viewer_state(viewer)
    assert s2["active"] == expected_active(viewer, 2) and s2["sentence"] != s1["sentence"]
    offline_page.keyboard.press("ArrowLeft")
    wait_step(viewer, 1)
    assert viewer_state(viewer)["sentence"] == s1["sentence"]
    offline_page.keyboard.press("End")
    wait_step(viewer, n - 1)
    last = viewer_state(viewer)
    assert "result" in last["counter"]
    assert last["pending"] == []  # at the end every element has been reached
    assert viewer.locator(".gv-results").is_visible()
    assert viewer.evaluate("r => r.classList.contains('gv-at-end')")
    offline_page.screenshot(path=screenshot_dir / "report_last_step.png", full_page=True)
    wait_active_in_view(viewer)  # the diagram box follows the step
    offline_page.keyboard.press("Home")
    wait_step(viewer, 0)
    assert viewer_state(viewer)["active"] == s0["active"]
    wait_active_in_view(viewer)

    # The slider.
    viewer.locator(".gv-slider").fill("4")
    wait_step(viewer, 4)
    assert viewer_state(viewer)["active"] == expected_active(viewer, 4)

    # The first / last buttons, and the final gradients shown with their values.
    viewer.locator(".gv-last").click()
    wait_step(viewer, n - 1)
    results = viewer.locator(".gv-results .gv-result")
    assert results.count() == 2
    assert re.fullmatch(r"W(_\d+)?", results.nth(0).locator(".gv-result-name").text_content())
    # to 4 significant digits, as the formulas and the diagram write them
    assert results.nth(0).locator(".gv-cell-value").first.text_content() == "12.38"
    assert results.nth(1).locator(".gv-cell-value").first.text_content() == "4.418"
    viewer.locator(".gv-first").click()
    wait_step(viewer, 0)
    # the help line says the diagram scrolls and how to see all of it
    assert "box scrolls" in viewer.locator(".gv-help").text_content()
    assert "whole graph" in viewer.locator(".gv-help").text_content()
    assert_offline_and_clean(offline_page)


def test_report_play_runs_to_the_end(offline_page, tmp_path):
    tr = linear_regression()
    viewer = open_report(offline_page, tr.to_html(tmp_path / "play.html"))
    viewer.locator(".gv-speed").select_option("8")
    viewer.locator(".gv-play").click()
    assert viewer.evaluate("r => r.classList.contains('gv-playing')")
    wait_step(viewer, len(tr.steps) - 1, timeout=10_000)
    offline_page.wait_for_function(
        "r => !r.classList.contains('gv-playing')", arg=viewer.element_handle())
    assert_offline_and_clean(offline_page)


def test_results_wait_for_the_steps_that_give_them(offline_page, tmp_path, screenshot_dir):
    # The final gradients were shown as "ready" from the first step on; a
    # result is now dimmed, saying when it will be ready, until the walk gets there.
    tr = linear_regression()
    result_steps = [s.index for s in tr.steps if s.kind == "result"]  # W's, then b's
    viewer = open_report(offline_page, tr.to_html(tmp_path / "results.html"))
    rows = viewer.locator(".gv-results .gv-result")

    def later() -> list[bool]:
        return rows.evaluate_all("rs => rs.map(r => r.classList.contains('gv-result-later'))")

    assert later() == [True, True]
    when = rows.nth(0).locator(".gv-result-when")
    assert when.is_visible() and when.text_content() == f"ready at step {result_steps[0]}"
    assert not rows.nth(0).locator(".gv-result-reason").is_visible()
    offline_page.screenshot(path=screenshot_dir / "report_results_later.png", full_page=True)
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", result_steps[0])
    assert later() == [False, True]
    assert not when.is_visible() and rows.nth(0).locator(".gv-result-reason").is_visible()
    viewer.locator(".gv-last").click()
    assert later() == [False, False]
    viewer.locator(".gv-first").click()
    assert later() == [True, True]
    assert_offline_and_clean(offline_page)


def test_show_hide_toggles(offline_page, tmp_path):
    viewer = open_report(offline_page, linear_regression().to_html(tmp_path / "t.html"))
    viewer.locator(".gv-next").click()
    cell = viewer.locator(".gv-arrays .gv-cell-value").first
    assert cell.is_visible()
    viewer.locator(".gv-toggle-grad").uncheck()
    assert viewer.evaluate("r => r.classList.contains('gv-hide-grad')")
    assert not cell.is_visible()
    viewer.locator(".gv-toggle-grad").check()
    assert cell.is_visible()
    viewer.locator(".gv-toggle-forward").uncheck()
    assert viewer.evaluate("r => r.classList.contains('gv-hide-forward')")
    assert_offline_and_clean(offline_page)


def test_bookkeeping_folds_and_stays_folded(offline_page, tmp_path, screenshot_dir):
    x = gv.Variable(2.0, name="x")
    tr = gv.trace_gradients(x * x * x, x)
    acc = next(s for s in tr.steps if s.kind == "accumulate")
    viewer = open_report(offline_page, tr.to_html(tmp_path / "book.html"))
    book = viewer.locator(".gv-bookkeeping")
    summary = book.locator("summary.gv-book-summary")
    held = book.locator(".gv-book-bytes .gv-book-value")
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", acc.index)
    wait_step(viewer, acc.index)
    # open at first: the total held after the accumulate, the arrays' shapes as words
    assert book.evaluate("d => d.open") and held.is_visible()
    assert held.text_content() == f"{acc.bytes_held} B" == "4 B"
    shapes = viewer.locator(".gv-arrays .gv-array-shape").all_text_contents()
    assert shapes and all(t.startswith("scalar ") for t in shapes), shapes
    offline_page.screenshot(path=screenshot_dir / "report_bookkeeping_open.png", full_page=True)
    # folded by the keyboard (Enter, and Space, which does not play the steps)
    summary.focus()
    offline_page.keyboard.press("Enter")
    assert not book.evaluate("d => d.open") and not held.is_visible()
    assert summary.locator(".gv-book-brief").text_content() == "4 B held"
    assert summary.locator(".gv-book-brief").is_visible()
    offline_page.keyboard.press(" ")
    assert book.evaluate("d => d.open")
    assert not viewer.evaluate("r => r.classList.contains('gv-playing')")
    summary.click()
    assert not book.evaluate("d => d.open")
    # it stays folded from step to step, and shows each step's bytes while folded
    viewer.locator(".gv-next").click()
    wait_step(viewer, acc.index + 1)
    assert not book.evaluate("d => d.open")
    assert summary.locator(".gv-book-brief").text_content() == f"{tr.steps[acc.index + 1].bytes_held} B held"
    viewer.locator(".gv-first").click()
    wait_step(viewer, 0)
    assert not book.evaluate("d => d.open")
    offline_page.screenshot(path=screenshot_dir / "report_bookkeeping_folded.png", full_page=True)
    summary.click()
    assert book.evaluate("d => d.open") and held.text_content() == f"{tr.steps[0].bytes_held} B"
    assert_offline_and_clean(offline_page)


# ------------------------------------------------------------------ escaping


def test_hostile_names_show_as_text_and_run_nothing(offline_page, tmp_path, screenshot_dir):
    x = gv.constant([1.0, -2.0], name=HOSTILE)
    w = gv.Variable(3.0, name=HOSTILE + "w")
    tr = gv.trace_gradients(gv.reduce_sum(x * w), [w])
    tr.title = HOSTILE
    path = gv.export_html(tr, tmp_path / "hostile.html", title=HOSTILE)
    viewer = open_report(offline_page, path)
    viewer.locator(".gv-last").click()
    assert offline_page.evaluate("window.pwned") is None
    assert offline_page.title() == HOSTILE
    assert offline_page.locator("h1").text_content() == HOSTILE
    assert viewer.locator(".gv-title").text_content() == HOSTILE
    assert viewer.locator(".gv-result-name").first.text_content().startswith(HOSTILE + "w")
    # no element was created from the name: the only <img>/<script> are none / ours
    assert offline_page.locator("img").count() == 0
    assert offline_page.locator("script").count() == 4  # theme, data, SVG text, stepper
    svg_text = viewer.locator(".gv-diagram svg").text_content()
    assert "<script>" in svg_text or "a\"b" in svg_text  # the diagram shows the name as text
    offline_page.screenshot(path=screenshot_dir / "report_hostile_names.png", full_page=True)
    assert offline_page.evaluate("window.pwned") is None
    assert_offline_and_clean(offline_page)


def test_hostile_fixture_strings_are_text(offline_page, tmp_path):
    """Every user string of the payload (title, sentence, formula, labels, legend) is text."""
    p = load_payload()
    p["title"] = HOSTILE
    for s in p["steps"]:
        s["sentence"] = HOSTILE + " sentence"
        s["formula"] = HOSTILE + " formula"
        s["title"] = HOSTILE
        for a in s["arrays"]:
            a["label"] = HOSTILE
    p["results"][0]["name"] = HOSTILE
    p["results"][0]["reason"] = HOSTILE
    p["legend"].append({"mark": HOSTILE, "label": HOSTILE})
    path = tmp_path / "fixture.html"
    report.write_text_atomic(path, report._render([p], title=HOSTILE))
    viewer = open_report(offline_page, path)
    viewer.locator(".gv-next").click()
    assert viewer.locator(".gv-sentence").text_content() == HOSTILE + " sentence"
    assert viewer.locator(".gv-formula").text_content() == HOSTILE + " formula"
    assert viewer.locator(".gv-array-label").first.text_content() == HOSTILE
    assert viewer.locator(".gv-result-reason").first.text_content() == HOSTILE
    assert offline_page.locator("img").count() == 0
    assert offline_page.evaluate("window.pwned") is None
    assert_offline_and_clean(offline_page)


def test_svg_with_script_or_remote_links_is_defused(offline_page, tmp_path):
    p = load_payload()
    p["svg"] = p["svg"].replace(
        "</svg>",
        '<script>window.pwned=3</script><image href="https://example.com/x.png"/>'
        '<a href="https://example.com"><text onclick="window.pwned=4">x</text></a></svg>')
    path = tmp_path / "svg.html"
    report.write_text_atomic(path, report._render([p], title="svg"))
    viewer = open_report(offline_page, path)
    viewer.locator(".gv-diagram text", has_text="x").last.click(force=True)
    assert offline_page.evaluate("window.pwned") is None
    assert viewer.locator(".gv-diagram svg script").count() == 0
    assert viewer.locator(".gv-diagram [href]").count() == 0
    assert offline_page.blocked_requests == []


@pytest.mark.parametrize("overview", ["missing", "null", "hostile"])
def test_whole_graph_with_and_without_an_overview(overview, offline_page, tmp_path):
    p = load_payload()
    assert "overview" not in p  # as an older payload
    if overview == "null":
        p["overview"] = None
    elif overview == "hostile":  # an overview is defused like the drawing
        p["overview"] = p["svg"].replace(
            "</svg>", '<script>window.pwned=5</script><image href="https://example.com/y.png"/></svg>')
    path = tmp_path / "overview.html"
    report.write_text_atomic(path, report._render([p], title="overview"))
    viewer = open_report(offline_page, path)
    viewer.locator(".gv-zoom").click()
    zoom = viewer.evaluate("r => r.gvViewer.zoom")
    assert zoom["fit"] and zoom["overview"] == (overview == "hostile"), zoom
    assert viewer.locator(".gv-diagram svg").count() == (2 if overview == "hostile" else 1)
    assert viewer.locator(".gv-diagram svg script").count() == 0
    assert viewer.locator(".gv-diagram [href]").count() == 0
    # Stepping in whole graph highlights the step in what is shown; "zoom to
    # 100%" shows the drawing again, at that step.
    viewer.evaluate("r => r.gvViewer.go(1)")
    assert viewer_state(viewer)["active"] == expected_active(viewer, 1)
    viewer.locator(".gv-zoom").click()
    zoom = viewer.evaluate("r => r.gvViewer.zoom")
    assert not zoom["fit"] and not zoom["overview"], zoom
    assert viewer_state(viewer)["active"] == expected_active(viewer, 1)
    assert offline_page.evaluate("window.pwned") is None
    assert_offline_and_clean(offline_page)


# ------------------------------------------------------------------ several traces


def test_two_traces_step_independently(offline_page, tmp_path, screenshot_dir):
    a, b = linear_regression("first"), linear_regression("second")
    path = gv.export_html([a, b], tmp_path / "two.html", title="Two traces")
    offline_page.goto(path.as_uri())
    offline_page.wait_for_function("document.querySelectorAll('.gv-viewer .gv-diagram svg').length === 2")
    v1, v2 = offline_page.locator(".gv-viewer").nth(0), offline_page.locator(".gv-viewer").nth(1)
    assert v1.locator(".gv-title").text_content() == "first"
    assert v2.locator(".gv-title").text_content() == "second"
    start2 = viewer_state(v2)

    v1.locator(".gv-next").click()
    v1.locator(".gv-next").click()
    wait_step(v1, 2)
    assert viewer_state(v2) == start2

    v2.locator(".gv-sentence").click()
    offline_page.keyboard.press("End")
    wait_step(v2, len(b.steps) - 1)
    assert viewer_state(v1)["step"] == 2
    assert viewer_state(v1)["active"] == expected_active(v1, 2)
    assert viewer_state(v2)["active"] == expected_active(v2, len(b.steps) - 1)
    offline_page.screenshot(path=screenshot_dir / "report_two_traces.png", full_page=True)
    assert_offline_and_clean(offline_page)


# ------------------------------------------------------------------ flags and passes


def test_nonfinite_step_is_flagged_and_reachable(offline_page, tmp_path, screenshot_dir):
    x = gv.Variable([0.0, 1.0], name="x")
    y = gv.reduce_sum(gv.sqrt(x))  # d sqrt(x)/dx = 1/(2 sqrt x): inf at 0
    tr = gv.trace_gradients(y, [x])
    tr.title = "sqrt at zero"
    bad = tr.first_nonfinite_step
    assert bad is not None
    viewer = open_report(offline_page, tr.to_html(tmp_path / "nan.html"))
    badge = viewer.locator(".gv-nonfinite-badge")
    jump = viewer.locator(".gv-jump-nonfinite")
    assert jump.is_visible() and f"step {bad}" in jump.text_content()
    assert not badge.is_visible() or bad == 0
    assert viewer.locator(".gv-flag-tick").count() >= 1
    jump.click()
    wait_step(viewer, bad)
    assert badge.is_visible()
    assert viewer.locator(".gv-step-flag").is_visible()
    offline_page.screenshot(path=screenshot_dir / "report_nonfinite.png", full_page=True)
    assert_offline_and_clean(offline_page)


def test_jacobian_shows_passes(offline_page, tmp_path, screenshot_dir):
    x = gv.Variable([1.0, 2.0, 3.0], name="x")
    with gv.GradientTape() as tape:
        y = x * x
    tr = tape.trace_jacobian(y, x)
    assert tr.passes == 3
    viewer = open_report(offline_page, tr.to_html(tmp_path / "jac.html"))
    passes = viewer.locator(".gv-pass")
    assert passes.is_visible() and passes.text_content() == "pass 1 / 3"
    assert viewer.locator(".gv-pass-seg").count() == 3
    viewer.locator(".gv-last").click()
    assert passes.text_content() == "pass 3 / 3"
    ops = viewer.locator(".gv-book-ops .gv-book-value").text_content()
    assert int(ops) == tr.steps[-1].ops_visited
    # The answer is the whole Jacobian, not the last pass's row.
    results = viewer.locator(".gv-results")
    assert "Final Jacobian" in results.locator(".gv-section-title").text_content()
    assert "Jacobian" in results.locator(".gv-array-label").text_content()
    assert results.locator(".gv-array-caption").is_visible()
    cells = results.locator(".gv-heatmap tr").evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('.gv-cell-value')].map(c => c.textContent))")
    assert cells == [["2", "0", "0"], ["0", "4", "0"], ["0", "0", "6"]]
    assert "3 passes, one row each" in results.locator(".gv-result-reason").text_content()
    assert "final gradient" not in viewer.text_content()
    offline_page.screenshot(path=screenshot_dir / "report_jacobian.png", full_page=True)
    assert_offline_and_clean(offline_page)


def test_fixture_flags_and_passes_without_the_engine(offline_page, tmp_path):
    """The front end's NaN flag and pass counter, from a hand-made payload."""
    p = copy.deepcopy(load_payload())
    p["method"], p["passes"] = "tape.jacobian", 2
    for s in p["steps"][6:]:
        s["pass"] = 1
    p["steps"][4]["nonfinite"] = True
    p["steps"][4]["arrays"][1]["values"] = [["nan"], ["inf"]]
    path = tmp_path / "flags.html"
    report.write_text_atomic(path, report._render([p], title="flags"))
    viewer = open_report(offline_page, path)
    assert viewer.locator(".gv-pass").text_content() == "pass 1 / 2"
    viewer.locator(".gv-jump-nonfinite").click()
    wait_step(viewer, 4)
    assert viewer.locator(".gv-nonfinite-badge").is_visible()
    cells = viewer.locator(".gv-cell-nonfinite .gv-cell-value").all_text_contents()
    assert cells == ["NaN", "\u221e"]
    viewer.locator(".gv-next").click()
    viewer.locator(".gv-next").click()
    assert viewer.locator(".gv-pass").text_content() == "pass 2 / 2"
    assert not viewer.locator(".gv-nonfinite-badge").is_visible()
    assert_offline_and_clean(offline_page)


def many_xs_trace(n: int = 67):
    xs = [gv.Variable(np.full((3, 2), 0.1 * (i + 1), np.float32), name=f"p{i}") for i in range(n)]
    loss = gv.reduce_sum(gv.add_n([x * x for x in xs]))
    tr = gv.trace_gradients(loss, xs)
    tr.title = f"{n} parameters"
    return tr


def test_many_xs_results_are_a_compact_table(offline_page, tmp_path, screenshot_dir):
    # 67 full heatmaps made the results panel unusable: past a few xs it is a
    # table of name / shape / norm, and a row opens to show one x's gradient.
    tr = many_xs_trace()
    viewer = open_report(offline_page, tr.to_html(tmp_path / "many.html"))
    viewer.locator(".gv-last").click()
    results = viewer.locator(".gv-results")
    rows = results.locator(".gv-result-compact")
    assert rows.count() == 67
    viewer.locator(".gv-first").click()  # before the results: each row says when
    assert rows.nth(0).locator(".gv-result-when").is_visible()
    viewer.locator(".gv-last").click()
    assert not rows.nth(0).locator(".gv-result-when").is_visible()
    assert results.locator(".gv-heatmap").count() == 0
    assert results.evaluate("r => r.getBoundingClientRect().height") < 400
    first = rows.nth(0)
    assert first.locator(".gv-result-name").text_content() == "p0"
    assert first.locator(".gv-result-shape").text_content() == "(3,2)"
    # dL/dp0 = 2 * p0 = 0.2 everywhere: norm sqrt(6 * 0.04) = 0.4899
    assert first.locator(".gv-result-norm").text_content() == "0.4899"
    rows.nth(4).locator("summary").click()
    heat = rows.nth(4).locator(".gv-heatmap")
    heat.wait_for(state="visible")  # built by the row's toggle event, which comes as a task
    assert heat.locator(".gv-cell-value").first.text_content() == "1"  # 2 * 0.5
    assert results.locator(".gv-heatmap").count() == 1
    offline_page.screenshot(path=screenshot_dir / "report_many_xs.png", full_page=True)
    assert_offline_and_clean(offline_page)


def test_legend_draws_every_mark(offline_page, tmp_path):
    """Every legend mark has a drawn swatch in the diagram's colours, a run of ops too."""
    p = copy.deepcopy(load_payload())
    p["legend"] = [{"mark": m, "label": label, **diagram.mark_colors(m)}
                   for m, label in explain.legend()]
    path = tmp_path / "legend.html"
    report.write_text_atomic(path, report._render([p], title="legend"))
    viewer = open_report(offline_page, path)
    items = viewer.locator(".gv-legend-item:not(.gv-legend-state)")
    empty = items.evaluate_all(
        "lis => lis.filter(li => !li.querySelector('.gv-legend-swatch path, .gv-legend-swatch ellipse'))"
        ".map(li => li.textContent)")
    assert empty in ([], [explain.LEGEND["active"]])
    group = items.filter(has_text="run of ops").locator(".gv-legend-swatch path").first
    assert group.get_attribute("stroke-dasharray")
    seed = items.filter(has_text="seed").locator(".gv-legend-swatch path").first
    colors = diagram.mark_colors("seed")
    assert (seed.get_attribute("stroke"), seed.get_attribute("fill")) == \
        (colors["stroke"], colors["fill"])
    assert_offline_and_clean(offline_page)


# ------------------------------------------------------------------ a large drawing


# In the page: each steppable element's class state against the one the payload
# gives step k, for the elements the diagram box shows (or all of them).
# (The report's data is read first: read_report_data.)
_WRONG_JS = """([root, k, onlySeen]) => {
    const data = root.gvTestData;
    const svg = root.querySelector('.gv-diagram svg');
    const box = root.querySelector('div.gv-diagram').getBoundingClientRect();
    const first = new Map();
    data.steps.forEach((s, j) => s.ids.forEach(id => { if (!first.has(id)) first.set(id, j); }));
    const active = new Set(data.steps[k].ids);
    const wrong = [];
    let seen = 0;
    for (const [id, f] of first) {
        const e = svg.querySelector(`[id="${CSS.escape(id)}"]`);
        if (!e) continue;
        const r = e.getBoundingClientRect();
        const inBox = r.bottom > box.top && r.top < box.bottom && r.right > box.left && r.left < box.right;
        if (onlySeen && !inBox) continue;
        seen += 1;
        const want = active.has(id) ? 'gv-active' : f < k ? 'gv-done' : 'gv-pending';
        const has = ['gv-active', 'gv-done', 'gv-pending'].filter(c => e.classList.contains(c));
        if (has.length !== 1 || has[0] !== want) wrong.push([id, want, has.join(' ')]);
    }
    return {seen, wrong};
}"""


def test_long_jump_restyles_what_is_on_screen_first(offline_page, tmp_path, screenshot_dir):
    # A jump across a 100-layer chain drawn whole changes the state of ~2,000
    # elements; only those near the diagram box change at once, the rest when
    # scrolled near or in idle time.  What a reader sees is right at every moment.
    from gradviz.views.widget import view_payload

    tr = scoped_tanh_chain(100)
    path = tmp_path / "chain.html"
    report.write_text_atomic(path, report._render([view_payload(tr, collapse=False)], title="chain"))
    viewer = open_report(offline_page, path)
    n = len(tr.steps)
    assert 'data-encoding="gzip+base64"' in path.read_text(encoding="utf-8")  # a large report
    assert read_report_data(viewer) == n
    offline_page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")
    assert viewer.evaluate("r => r.gvViewer.elements") > 1000

    # The jump and the checks in one task: no idle time in between.
    jump = viewer.evaluate(
        f"""(root, k) => {{
            const v = root.gvViewer;
            v.go(k);
            v.flush();
            return {{stale: v.stale, check: ({_WRONG_JS})([root, k, true])}};
        }}""", n - 1)
    assert jump["stale"] > 500  # most of the drawing waits
    assert jump["check"]["seen"] > 5 and jump["check"]["wrong"] == []
    assert viewer_state(viewer)["active"] == expected_active(viewer, n - 1)

    # Scrolled far away at once: what comes into view is right before it is painted.
    far = viewer.evaluate(
        f"""async (root) => {{
            root.gvViewer.go(0);
            root.gvViewer.flush();
            const box = root.querySelector('div.gv-diagram');
            box.scrollTop = box.scrollHeight / 2;
            await new Promise(r => requestAnimationFrame(r));
            return {{stale: root.gvViewer.stale, check: ({_WRONG_JS})([root, 0, true])}};
        }}""")
    assert far["check"]["seen"] > 5 and far["check"]["wrong"] == []
    pending = viewer.locator(".gv-diagram svg .gv-pending.gv-tensor").first
    assert pending.evaluate("e => getComputedStyle(e.querySelector('path, polygon')).stroke") \
        != "rgb(0, 114, 178)"  # not reached yet at step 0: not the blue of done

    # Idle time brings every element up to date (and only then is the picture taken: a
    # screenshot waits for a frame, which late in a long browser session could take
    # longer than its timeout while the idle restyling of 2,000 elements runs)
    offline_page.wait_for_function("r => r.gvViewer.stale === 0", arg=viewer.element_handle())
    offline_page.screenshot(path=screenshot_dir / "report_long_jump.png")
    wrong = f"(root, k) => ({_WRONG_JS})([root, k, false]).wrong"
    assert viewer.evaluate(wrong, 0) == []
    viewer.evaluate("(r, k) => { r.gvViewer.go(k); r.gvViewer.settle(); }", n // 2)
    assert viewer.evaluate("r => r.gvViewer.stale") == 0
    assert viewer.evaluate(wrong, n // 2) == []
    # "Whole graph" on 300 ops stops where the text would become unreadable and
    # says so; what the box shows is still right at once, the rest in idle time.
    viewer.locator(".gv-zoom").click()
    assert viewer.locator(".gv-zoom-note").is_visible()
    seen = f"(root, k) => ({_WRONG_JS})([root, k, true])"
    check = viewer.evaluate(
        f"(root) => {{ root.gvViewer.go(root.gvViewer.steps - 1); root.gvViewer.flush(); "
        f"return ({seen})(root, root.gvViewer.steps - 1); }}")
    assert check["seen"] > 5 and check["wrong"] == []
    viewer.evaluate("r => r.gvViewer.settle()")
    assert viewer.evaluate(wrong, n - 1) == []
    assert_offline_and_clean(offline_page)


def test_float_noise_prints_as_zero_in_the_array_panels(offline_page, tmp_path):
    # A gradient whose mean is float noise (-5.8e-10 beside values near 3),
    # and a small one with a 1e-9 among values near 0.3: both print as 0, as
    # the diagram prints them; the cell's hover text keeps the stored value.
    rng = np.random.default_rng(1)
    w = rng.normal(size=200).astype(np.float32)
    w = (w - w.mean()).astype(np.float32)
    assert 0 < abs(w.astype(np.float64).mean()) < 1e-8
    small = np.array([0.3, -0.1, -0.2, 1e-9], np.float32)
    x, v = gv.Variable(np.zeros(200, np.float32), name="x"), gv.Variable(np.zeros(4, np.float32),
                                                                         name="v")
    tr = gv.trace_gradients(gv.reduce_sum(x * w) + gv.reduce_sum(v * small), [x, v])
    viewer = open_report(offline_page, tr.to_html(tmp_path / "noise.html"))
    results = viewer.locator(".gv-results")
    stats = results.locator(".gv-stat").all_text_contents()
    assert "mean0" in [s.replace(" ", "") for s in stats], stats
    cells = results.locator(".gv-cell").evaluate_all(
        "tds => tds.map(td => [td.textContent, td.dataset.exact])")
    assert ["0", "1e\u22129"] in cells or ["0", "1.00e\u22129"] in cells, cells
    assert_offline_and_clean(offline_page)


def test_image_batches_and_kernels_show_as_images(offline_page, tmp_path, screenshot_dir):
    """An NHWC array is one small image per channel, the example picked from a menu; a
    kernel is one image per input and output channel; the pick stays for the next step."""
    rng = np.random.default_rng(2)
    x = gv.constant(rng.normal(size=(2, 8, 8, 1)), name="digits")
    w = gv.Variable(rng.normal(size=(3, 3, 1, 3)), name="kernel")
    h = gv.nn.max_pool2d(gv.nn.relu(gv.nn.conv2d(x, w, 1, "SAME")), 2, 2, "VALID")
    tr = gv.trace_gradients(gv.reduce_sum(h * h), w)
    viewer = open_report(offline_page, tr.to_html(tmp_path / "cnn.html"))
    pool = next(s.index for s in tr.steps if getattr(s, "op_type", "") == "MaxPool")
    conv = next(s.index for s in tr.steps if getattr(s, "op_type", "") == "Conv2D")
    viewer.evaluate(f"r => r.gvViewer.go({pool})")
    wait_step(viewer, pool)
    grids = viewer.locator(".gv-panel .gv-image-grid")
    # upstream (2,4,4,3): 16 pixels a channel, values printed; dL/dRelu (2,8,8,3): canvases
    assert grids.count() == 2
    upstream, down = grids.nth(0), grids.nth(1)
    assert upstream.locator(".gv-image").count() == 3
    assert upstream.locator("table.gv-image-table td").count() == 3 * 16
    assert down.locator("canvas.gv-image-canvas").count() == 3
    # each canvas holds the picked example's pixels, coloured: not blank
    painted = down.locator("canvas").first.evaluate(
        "c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " const seen = new Set(); for (let i = 0; i < d.length; i += 4) seen.add(d[i] + ',' +"
        " d[i + 1] + ',' + d[i + 2]); return [c.width, c.height, seen.size]; }")
    assert painted[:2] == [8, 8] and painted[2] > 2, painted
    first = down.locator("canvas").first.evaluate("c => c.toDataURL()")
    menu = down.locator("select")
    assert menu.locator("option").all_text_contents() == ["example 0 of 2", "example 1 of 2"]
    menu.select_option("1")
    assert down.locator("canvas").first.evaluate("c => c.toDataURL()") != first
    # the other panel of the step shows the same example
    assert upstream.locator("select").input_value() == "1"
    offline_page.screenshot(path=str(screenshot_dir / "images_max_pool_step.png"), full_page=True)
    # the kernel's gradient: one 3x3 image per output channel, values printed
    viewer.evaluate(f"r => r.gvViewer.go({conv})")
    wait_step(viewer, conv)
    kernel = viewer.locator(".gv-panel .gv-image-grid").last
    captions = kernel.locator(".gv-image-caption").all_text_contents()
    assert captions == ["in 0 \u2192 out 0", "in 0 \u2192 out 1", "in 0 \u2192 out 2"]
    assert kernel.locator("td").count() == 27
    # the example picked at the pool step is still the one shown here
    assert viewer.locator(".gv-panel .gv-image-grid select").first.input_value() == "1"
    offline_page.screenshot(path=str(screenshot_dir / "images_conv_step.png"), full_page=True)
    assert_offline_and_clean(offline_page)


def test_a_forward_trace_steps_from_the_direction_to_the_tangent(offline_page, tmp_path,
                                                                  screenshot_dir):
    """A forward pass in the report: each step lights what it says, the tangents run
    along the edges, and the viewer speaks of tangents."""
    x = gv.constant([1.0, 2.0], name="x")
    w = gv.constant([3.0, 4.0], name="w")
    with gv.autodiff.ForwardAccumulator(x, gv.constant([1.0, 0.5])) as acc:
        y = gv.reduce_sum(x * w + gv.sin(x))
    tr = acc.trace_jvp(y, title="forward mode")
    viewer = open_report(offline_page, tr.to_html(tmp_path / "forward.html"))
    assert viewer.locator(".gv-toggle", has=viewer.page.locator(".gv-toggle-grad")).inner_text() \
        .strip() == "tangent values"
    assert viewer.locator(".gv-results .gv-section-title").inner_text().lower() == \
        "final tangents"
    legend = viewer.locator(".gv-legend").inner_text()
    assert "done: its tangent is computed" in legend and "tangent carried forward" in legend
    assert "gradient" not in legend
    for k, s in enumerate(tr.steps):
        viewer.evaluate("(r, k) => r.gvViewer.go(k)", k)
        wait_step(viewer, k)
        state = viewer_state(viewer)
        assert state["active"] == expected_active(viewer, k) != []
        assert state["sentence"] == explain.describe(tr, k).sentence
        assert viewer.locator(".gv-kind").inner_text() == s.kind
    add = next(s.index for s in tr.steps if s.kind == "forward" and s.op_type == "Add")
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", add)
    wait_step(viewer, add)
    assert viewer.locator(".gv-formula").inner_text().startswith("dAdd = dMul + dSin")
    assert "tangent held" in viewer.locator(".gv-bookkeeping").inner_text()
    offline_page.screenshot(path=screenshot_dir / "report_forward_mode.png", full_page=True)
    assert_offline_and_clean(offline_page)
