"""A wide op in the report: an ``add_n`` of 1,000 Variables, opened offline in Chromium.

Its inputs past the first three are drawn as one bundle that says how many it
stands for, its edge counting them; its step panel shows a few of its 1,001
arrays and a button for the rest; and stepping through every one of its 1,002
steps with the keys stays within a frame (16 ms) a step.
"""

from __future__ import annotations

import pytest

from fixtures.traces import add_n_of
from fixtures.viewer_page import wait_step

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("each_layout_engine")]

#: One frame at 60 Hz: what one step may take, in the page.
FRAME_MS = 16.0

# Step through every step with the keys (ArrowRight on the viewer, as a reader
# presses it), each key press timed from the event to the restyle done.  A step
# that took a frame or more is stepped into again, up to four times, a tenth of a
# second apart, and keeps its least time (a garbage collection, or another
# program on the machine, that lands on a step once is not that step's cost).
_STEP_WITH_KEYS = """async (root) => {
    const v = root.gvViewer;
    const key = (name) => root.dispatchEvent(new KeyboardEvent("keydown", {key: name, bubbles: true}));
    const into = (k) => {
        const t0 = performance.now();
        key("ArrowRight");
        v.flush();
        root.offsetHeight;  // the restyle and layout the step asks for, done now
        return performance.now() - t0;
    };
    const best = [];
    const reached = [];
    key("Home");
    for (let k = 1; k < v.steps; k++) {
        best.push(into(k));
        reached.push(Number(root.dataset.step));
    }
    for (let again = 0; again < 4; again++) {
        await new Promise((r) => setTimeout(r, 100));
        best.forEach((ms, j) => {
            if (ms < 16) return;
            v.go(j);
            best[j] = Math.min(ms, into(j + 1));
        });
    }
    return {best, reached};
}"""


def test_a_thousand_way_fan_in_is_a_bundle_stepped_within_a_frame(offline_page, tmp_path,
                                                                    screenshot_dir):
    tr = add_n_of(1000)
    path = tr.to_html(tmp_path / "add_n.html")
    offline_page.set_viewport_size({"width": 1280, "height": 900})
    offline_page.goto(path.as_uri())
    viewer = offline_page.locator(".gv-viewer")
    viewer.locator(".gv-diagram svg").wait_for()

    # the bundle: one node for the 997 inputs past the first three, its edge counting them
    bundle = viewer.locator(".gv-diagram svg g.gv-bundle")
    assert bundle.count() == 1
    assert "997 more inputs" in bundle.text_content()
    assert "w3 \u2026 w999" in bundle.text_content()
    counted = viewer.locator(".gv-diagram svg g.edge", has_text="\u00d7997")
    assert counted.count() == 1
    drawn = viewer.evaluate("r => r.querySelectorAll('.gv-diagram svg g.node').length")
    assert drawn < 20, drawn  # not a thousand

    # the AddN step: the bundle and its edge lit, a few arrays and a button for the rest
    viewer.evaluate("r => r.gvViewer.go(1)")
    wait_step(viewer, 1)
    assert "gv-active" in bundle.get_attribute("class")
    assert "gv-active" in counted.get_attribute("class")
    arrays = viewer.locator(".gv-panel .gv-arrays")
    assert arrays.locator(".gv-array").count() == 4
    more = arrays.locator("button.gv-more-arrays")
    assert more.text_content() == "show all 1001 arrays (997 more)"
    assert "and 997 more" in viewer.locator(".gv-sentence").text_content()
    offline_page.screenshot(path=screenshot_dir / "wide_add_n_step.png")
    more.click()
    assert arrays.locator(".gv-array").count() == 1001

    # the final gradients: a jump restyles the rows in view at once, the rest once
    # scrolled to (each row dimmed until the step that gives it)
    viewer.evaluate("r => r.gvViewer.go(600)")
    wait_step(viewer, 600)
    table = viewer.locator(".gv-results-table")
    rows = table.locator(".gv-result-compact")
    assert rows.count() == 100  # made a hundred at a time, as the table is scrolled
    for top in (0, 10**6, 12_000):
        table.evaluate("(t, top) => { t.scrollTop = top; }", top)
        offline_page.wait_for_timeout(100)
        shown = table.evaluate("""t => [...t.querySelectorAll('.gv-result[data-step]')]
            .filter(r => { const a = r.getBoundingClientRect(), b = t.getBoundingClientRect();
                           return a.bottom > b.top && a.top < b.bottom; })
            .map(r => [Number(r.dataset.step), r.classList.contains('gv-result-later')])""")
        assert shown and all(later == (step > 600) for step, later in shown), (top, shown)
    assert 100 < rows.count() < 1000

    # every step, with the keys, within a frame
    viewer.focus()
    timed = viewer.evaluate(_STEP_WITH_KEYS)
    assert timed["reached"] == list(range(1, len(tr.steps)))
    slowest = max(timed["best"])
    assert slowest < FRAME_MS, (
        f"the slowest step took {slowest:.1f} ms: steps "
        f"{[k + 1 for k, ms in enumerate(timed['best']) if ms >= FRAME_MS][:10]}")
    assert offline_page.page_errors == [] and offline_page.blocked_requests == []


def test_a_report_whose_data_is_gzipped_opens_and_steps(offline_page, tmp_path, monkeypatch):
    """Past COMPRESS_OVER a report's data and diagram are gzipped, in base64, and the
    page unzips them itself (here every block is, however small)."""
    import gradviz.views.report as report
    from fixtures.traces import two_layer_mlp

    monkeypatch.setattr(report, "COMPRESS_OVER", 0)
    tr = two_layer_mlp()
    path = tr.to_html(tmp_path / "zipped.html")
    text = path.read_text(encoding="utf-8")
    assert text.count('data-encoding="gzip+base64"') == 2  # the data and the diagram
    assert '<script type="application/json"' not in text
    offline_page.goto(path.as_uri())
    viewer = offline_page.locator(".gv-viewer")
    viewer.locator(".gv-diagram svg").wait_for()
    assert viewer.evaluate("r => r.gvViewer.steps") == len(tr.steps)
    viewer.focus()
    offline_page.keyboard.press("End")
    wait_step(viewer, len(tr.steps) - 1)
    assert viewer.locator(".gv-diagram svg .gv-active").count() > 0
    assert offline_page.page_errors == [] and offline_page.blocked_requests == []
