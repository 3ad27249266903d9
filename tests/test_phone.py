"""Browser tests of a report read on a phone: 390x844 CSS px, touch, as an iPhone 12-15.

A student opens the report a teacher sent from their phone. Each test exports a
report, opens it from disk in a mobile, touch-emulating Chromium context with
the network blocked, and checks at every step what the student can do with a
thumb: nothing wider than the screen, every control at least 44 px each way
(WCAG 2.5.5's target size; a checkbox and its label are one target), and both
"next" and the step's sentence on screen together, whether the student taps
from the top of the page or from far down among the arrays.
"""

from __future__ import annotations

import pytest

import gradviz as gv
from fixtures.traces import add_n_of, scoped_mlp, tiny_cnn
from fixtures.viewer_page import wait_step
from harness import block_network

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
TARGET_PX = 44


@pytest.fixture
def phone(browser, request, screenshot_dir):
    """A page in a phone's viewport, touch and mobile emulation on, offline."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True,
                                  device_scale_factor=2, service_workers="block")
    blocked = block_network(context)
    page = context.new_page()
    page.blocked_requests = blocked
    page.page_errors = []
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    yield page
    context.close()


# Every element that sticks out of the screen where no box of its own clips it
# (the diagram box and an array's box scroll within the screen: their contents may
# be wider); and the page's own width.
_TOO_WIDE_JS = """() => {
    const vw = document.documentElement.clientWidth;
    const clippedInside = (e) => {
        for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
            const s = getComputedStyle(a);
            if (s.overflowX !== 'visible' || s.contain === 'strict' || s.contain.includes('paint')) {
                const r = a.getBoundingClientRect();
                if (r.left >= -0.5 && r.right <= vw + 0.5) return true;
            }
        }
        return false;
    };
    const wide = [];
    for (const e of document.querySelectorAll('body *')) {
        if (!e.getClientRects().length) continue;
        const r = e.getBoundingClientRect();
        if (r.width > 0 && (r.left < -0.5 || r.right > vw + 0.5) && !clippedInside(e)) {
            wide.push(`${e.tagName.toLowerCase()}.${e.getAttribute('class') || ''} `
                      + `${Math.round(r.left)}..${Math.round(r.right)}`);
        }
    }
    return {vw, pageWidth: document.documentElement.scrollWidth, wide: wide.slice(0, 12)};
}"""

# Every control a finger may use in the viewer and the page around it, with the
# box of what a tap hits: a checkbox's label holds it.  (An array's box is a stop
# of the keyboard so that it scrolls from there, not a control to tap.)
_TARGETS_JS = """() => {
    const shown = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden';
    const controls = [...document.querySelectorAll(
        'button, select, input, summary, a[href], [role="button"], [tabindex="0"]:not(.gv-viewer, .gv-array)')]
        .filter(e => shown(e) && !e.closest('svg'));
    return controls.map(e => {
        const target = e.closest('label') || e;
        const r = target.getBoundingClientRect();
        return {what: `${e.tagName.toLowerCase()}.${e.getAttribute('class') || ''}`
                      + `${e.type ? '[' + e.type + ']' : ''} ${(e.textContent || e.title || '').trim().slice(0, 20)}`,
                width: r.width, height: r.height};
    });
}"""

# Whether "next" and the step's sentence are both on screen, whole.
_IN_REACH_JS = """(root) => {
    const onScreen = (e) => { const r = e.getBoundingClientRect();
        return r.height > 0 && r.top >= -0.5 && r.bottom <= innerHeight + 0.5; };
    const sentence = root.querySelector('.gv-sentence');
    const bar = root.querySelector('.gv-controls').getBoundingClientRect();
    const s = sentence.getBoundingClientRect();
    return {next: onScreen(root.querySelector('.gv-next')),
            // the first lines at least, and not under the controls that stay on top
            sentence: s.height > 0 && s.top >= bar.bottom - 0.5 && s.top + 40 <= innerHeight};
}"""


def open_report(page, traces, tmp_path):
    path = gv.export_html(traces, tmp_path / "phone.html", title="Gradients on a phone")
    page.goto(path.as_uri())
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    return page.locator(".gv-viewer")


def assert_fits_the_phone(page, where: str) -> None:
    seen = page.evaluate(_TOO_WIDE_JS)
    assert seen["vw"] == PHONE["width"], seen
    assert seen["pageWidth"] <= PHONE["width"], f"{where}: the page is {seen['pageWidth']} px wide"
    assert seen["wide"] == [], f"{where}: wider than the screen: {seen['wide']}"


def assert_targets(page, where: str) -> None:
    small = [t for t in page.evaluate(_TARGETS_JS)
             if t["width"] < TARGET_PX - 0.5 or t["height"] < TARGET_PX - 0.5]
    assert small == [], f"{where}: controls under {TARGET_PX} px: {small}"


def test_every_step_fits_a_phone_with_next_and_the_sentence_in_reach(phone, tmp_path,
                                                                      screenshot_dir):
    viewers = open_report(phone, [tiny_cnn(), scoped_mlp()], tmp_path)
    assert viewers.count() == 2
    assert len(phone.evaluate(_TARGETS_JS)) >= 30
    assert_targets(phone, "on opening")
    for v in range(2):
        viewer = viewers.nth(v)
        n = viewer.evaluate("r => r.gvViewer.steps")
        viewer.scroll_into_view_if_needed()
        viewer.evaluate("r => r.scrollIntoView({block: 'start'})")
        for k in range(1, n):
            # A tap on "next" from the top of the viewer: the sentence is just under it.
            viewer.locator(".gv-next").tap()
            wait_step(viewer, k)
            reach = viewer.evaluate(_IN_REACH_JS)
            assert reach == {"next": True, "sentence": True}, f"trace {v + 1}, step {k}: {reach}"
            assert_fits_the_phone(phone, f"trace {v + 1}, step {k}")
            assert_targets(phone, f"trace {v + 1}, step {k}")
            if v == 0 and k in (1, 4, n - 1):
                phone.screenshot(path=screenshot_dir / f"phone_step{k}.png")
        # Scrolled far down among the arrays and results, "next" is still on
        # screen, and a tap brings the new step's sentence back under it.
        viewer.evaluate("r => r.gvViewer.go(1)")
        wait_step(viewer, 1)
        viewer.locator(".gv-footer").scroll_into_view_if_needed()
        viewer.locator(".gv-next").tap()
        wait_step(viewer, 2)
        assert viewer.evaluate(_IN_REACH_JS) == {"next": True, "sentence": True}
    assert phone.blocked_requests == [] and phone.page_errors == []


def test_the_phone_layout_puts_the_step_before_the_diagram_and_follows_it(phone, tmp_path):
    viewer = open_report(phone, [scoped_mlp()], tmp_path)
    order = viewer.evaluate("""r => ['.gv-controls', '.gv-step-title', '.gv-sentence',
        'div.gv-diagram', '.gv-arrays', '.gv-options'].map(s => r.querySelector(s).getBoundingClientRect().top)""")
    assert order == sorted(order), f"controls, title, sentence, diagram, arrays, options: {order}"
    box = viewer.locator("div.gv-diagram").bounding_box()
    assert box["width"] >= 0.9 * PHONE["width"] - 40 and box["height"] >= 200, box
    # The diagram follows the step: the step's elements are inside the box.
    n = viewer.evaluate("r => r.gvViewer.steps")
    for k in (n // 2, n - 1):
        viewer.evaluate("(r, k) => r.gvViewer.go(k)", k)
        wait_step(viewer, k)
        phone.wait_for_function("r => !r.gvViewer.moving", arg=viewer.element_handle())
        outside = viewer.evaluate("""r => {
            const b = r.querySelector('div.gv-diagram').getBoundingClientRect();
            return [...r.querySelectorAll('div.gv-diagram > svg.gv-svg g.node.gv-active')]
                .map(e => e.getBoundingClientRect())
                .filter(e => e.right < b.left || e.left > b.right || e.bottom < b.top || e.top > b.bottom)
                .length;
        }""")
        assert outside == 0, f"step {k}: {outside} of the step's nodes out of the box"


def test_a_wide_screen_keeps_the_diagram_beside_the_panel_and_small_controls(offline_page, tmp_path):
    # The phone's rules are the phone's: at 1280 px nothing of them applies.
    viewer = open_report(offline_page, [scoped_mlp()], tmp_path)
    diagram = viewer.locator("div.gv-diagram").bounding_box()
    panel = viewer.locator(".gv-panel").bounding_box()
    assert panel["x"] > diagram["x"] + diagram["width"] - 1 and abs(panel["y"] - diagram["y"]) < 2
    assert viewer.locator(".gv-next").bounding_box()["height"] < TARGET_PX
    assert viewer.evaluate("r => getComputedStyle(r.querySelector('.gv-controls')).position") == "static"


def test_practice_on_a_phone_fits_and_its_controls_take_a_finger(phone, tmp_path, screenshot_dir):
    path = gv.export_html([scoped_mlp()], tmp_path / "practice.html", title="Practice",
                          practice=True)
    phone.goto(path.as_uri())
    phone.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = phone.locator(".gv-viewer")
    # The first step that asks, with its answer boxes.
    k = viewer.evaluate("""r => { for (let k = 0; k < r.gvViewer.steps; k++) {
        r.gvViewer.go(k); if (r.querySelector('.gv-question .gv-answer-cell, .gv-question input')) return k; }
        return -1; }""")
    assert k >= 0
    wait_step(viewer, k)
    viewer.locator(".gv-step-title").scroll_into_view_if_needed()
    assert_fits_the_phone(phone, f"practice, step {k}")
    assert_targets(phone, f"practice, step {k}")
    viewer.locator(".gv-hand-in").tap()
    assert_targets(phone, "practice, the hand-in form open")
    assert_fits_the_phone(phone, "practice, the hand-in form open")
    phone.screenshot(path=screenshot_dir / "phone_practice.png")
    assert phone.page_errors == []


def test_many_results_on_a_phone_keep_their_table(phone, tmp_path):
    # More than six xs: the results are a compact table, each row a <summary>.
    viewer = open_report(phone, [add_n_of(12)], tmp_path)
    viewer.evaluate("r => r.gvViewer.go(r.gvViewer.steps - 1)")
    rows = viewer.locator("summary.gv-results-row")
    assert rows.count() == 12
    viewer.locator(".gv-results").scroll_into_view_if_needed()
    # Every row is a grid of the header's four columns, not squeezed into a flex row.
    columns = viewer.evaluate("""r => Array.from(r.querySelectorAll('.gv-results-row'),
        (e) => [getComputedStyle(e).display, getComputedStyle(e).gridTemplateColumns.split(' ').length])""")
    assert len(columns) == 13 and set(map(tuple, columns)) == {("grid", 4)}, columns
    assert_fits_the_phone(phone, "twelve results")
    assert_targets(phone, "twelve results")
