"""Browser tests of presentation mode: the viewer on a 1920x1080 screen, read from a hall.

Each test exports a report of a name-scoped two-layer MLP, opens it from disk
(``offline_page``: every non-file request is aborted) in a 1920x1080 page, and
checks what a projector would show: the viewer filling the screen, the
diagram's text of the step at 20 px or more, the step inside the visible box,
the side strip's sentence in large type, and the normal layout given back on
leaving.  The last test presents the widget in a real JupyterLab: the same
front end, inside the page of another application.
"""

from __future__ import annotations

import pytest

import gradviz as gv
from fixtures.traces import scoped_mlp, tiny_cnn
from fixtures.viewer_page import wait_step

pytestmark = pytest.mark.browser

SCREEN = {"width": 1920, "height": 1080}
PRESENT_PX = 20
# Layout rounds the SVG's size to 1/64 px, so text asked for at 20 px measures 19.9999.
ROUNDING = 0.01


def open_on_screen(page, tmp_path):
    page.set_viewport_size(SCREEN)
    path = gv.export_html([scoped_mlp()], tmp_path / "mlp.html", title="MLP")
    page.goto(path.as_uri())
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = page.locator(".gv-viewer")
    viewer.evaluate("r => r.focus()")
    return viewer


# What the viewer shows of the current step: the diagram box and, for every
# <text> of the step's elements (.gv-active) that is in the box, its size on
# screen (its font-size in the SVG's units times the SVG's scale on screen:
# what a person in the hall sees, whatever the zoom or the fullscreen did).
_SEEN_JS = """(root) => {
    const boxEl = root.querySelector('div.gv-diagram');
    const box = boxEl.getBoundingClientRect();
    // The box's inside, without its border and scroll bars.
    const inner = {left: box.left + boxEl.clientLeft, top: box.top + boxEl.clientTop};
    inner.right = inner.left + boxEl.clientWidth;
    inner.bottom = inner.top + boxEl.clientHeight;
    const svg = root.querySelector('.gv-diagram svg:not([style*="display: none"])');
    const active = [...svg.querySelectorAll('.gv-active')];
    const overlaps = (r) => r.width > 0 && r.bottom > inner.top && r.top < inner.bottom
        && r.right > inner.left && r.left < inner.right;
    const inside = (r) => r.left >= inner.left - 1 && r.right <= inner.right + 1
        && r.top >= inner.top - 1 && r.bottom <= inner.bottom + 1;
    const texts = active.flatMap(e => [...e.querySelectorAll('text')])
        .filter(t => getComputedStyle(t).visibility !== 'hidden' && overlaps(t.getBoundingClientRect()));
    const sentence = root.querySelector('.gv-sentence');
    return {
        presenting: root.classList.contains('gv-presenting'),
        fullscreen: document.fullscreenElement === root,
        box: {width: box.width, height: box.height},
        textPx: texts.map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a),
        outside: active.filter(e => !inside(e.getBoundingClientRect())).map(e => e.id),
        activeCount: active.length,
        sentencePx: parseFloat(getComputedStyle(sentence).fontSize),
        sentenceVisible: sentence.getBoundingClientRect().right <= innerWidth,
    };
}"""


def seen(viewer) -> dict:
    return viewer.evaluate(_SEEN_JS)


def show_step(viewer, k: int) -> dict:
    """Go to step k, wait until the box has panned to it, and say what is seen."""
    viewer.evaluate("(r, k) => { r.gvViewer.go(k); r.gvViewer.settle(); }", k)
    wait_step(viewer, k)
    viewer.page.wait_for_function("r => !r.gvViewer.moving", arg=viewer.element_handle())
    return seen(viewer)


def wait_presenting(viewer, on: bool) -> None:
    viewer.page.wait_for_function(
        "([r, on]) => r.classList.contains('gv-presenting') === on && !r.gvViewer.moving",
        arg=[viewer.element_handle(), on])


def assert_normal_layout(s: dict) -> None:
    assert not s["presenting"] and not s["fullscreen"]
    assert s["box"]["width"] < 1440 and s["box"]["height"] <= 640, s["box"]


def assert_offline_and_clean(page) -> None:
    assert page.blocked_requests == [], page.blocked_requests
    assert page.page_errors == [], page.page_errors
    assert page.console_errors == [], page.console_errors


def test_f_presents_the_step_in_large_text_and_escape_gives_the_page_back(
        offline_page, tmp_path, screenshot_dir):
    viewer = open_on_screen(offline_page, tmp_path)
    n = viewer.evaluate("r => r.gvViewer.steps")
    normal = show_step(viewer, 0)
    assert_normal_layout(normal)
    assert min(normal["textPx"]) < PRESENT_PX  # without the mode, text too small for a hall

    offline_page.keyboard.press("f")
    wait_presenting(viewer, True)
    s = seen(viewer)
    assert s["fullscreen"]
    assert s["box"]["width"] >= 0.65 * SCREEN["width"], s["box"]
    assert s["box"]["height"] >= 0.80 * SCREEN["height"], s["box"]
    assert s["sentencePx"] >= 22 and s["sentenceVisible"]

    for k in sorted({0, 2, 3, 5, 7, n // 2, n - 1}):
        s = show_step(viewer, k)
        assert s["activeCount"] and s["textPx"], f"step {k}: no text of the step in view"
        assert min(s["textPx"]) >= PRESENT_PX - ROUNDING, (k, sorted(s["textPx"])[:5])
        assert s["outside"] == [], f"step {k}: outside the visible box: {s['outside']}"

    s5 = show_step(viewer, 5)
    offline_page.screenshot(path=screenshot_dir / "present_1920.png")

    offline_page.keyboard.press("+")
    wait_presenting(viewer, True)
    larger = seen(viewer)
    assert min(larger["textPx"]) >= 1.15 * min(s5["textPx"])
    assert larger["sentencePx"] >= 1.15 * s5["sentencePx"]
    offline_page.keyboard.press("-")
    offline_page.keyboard.press("-")
    wait_presenting(viewer, True)
    smaller = seen(viewer)
    assert min(smaller["textPx"]) <= min(s5["textPx"]) / 1.15
    assert smaller["sentencePx"] <= s5["sentencePx"] / 1.15

    offline_page.keyboard.press("Escape")
    wait_presenting(viewer, False)
    offline_page.wait_for_function("() => document.fullscreenElement === null")
    back = seen(viewer)
    assert_normal_layout(back)
    assert viewer.locator(".gv-zoom-level").text_content() == "100%"  # the reader's zoom, given back
    assert back["sentencePx"] < 22

    offline_page.keyboard.press("f")
    wait_presenting(viewer, True)
    offline_page.keyboard.press("f")
    wait_presenting(viewer, False)
    assert_normal_layout(seen(viewer))
    assert_offline_and_clean(offline_page)


def test_the_present_button_enters_and_leaves_by_click(offline_page, tmp_path):
    viewer = open_on_screen(offline_page, tmp_path)
    button = viewer.locator(".gv-present")
    assert button.get_attribute("title") == "presentation mode (f)"
    assert button.get_attribute("aria-pressed") == "false"
    button.click()
    wait_presenting(viewer, True)
    assert button.get_attribute("aria-pressed") == "true"
    s = seen(viewer)
    assert s["fullscreen"] and s["box"]["width"] >= 0.65 * SCREEN["width"]
    assert min(s["textPx"]) >= PRESENT_PX - ROUNDING
    button.click()
    wait_presenting(viewer, False)
    assert button.get_attribute("aria-pressed") == "false"
    assert_normal_layout(seen(viewer))
    assert_offline_and_clean(offline_page)


def test_f_right_after_escape_stays_in_the_mode_when_the_exit_is_told_late(
        offline_page, tmp_path):
    # Escape asks the browser to leave fullscreen, which says so later (its
    # fullscreenchange); f pressed before then enters the mode again, and no late
    # word of the mode's own entry or exit may end it as the browser leaving would.
    viewer = open_on_screen(offline_page, tmp_path)
    offline_page.keyboard.press("f")
    wait_presenting(viewer, True)
    offline_page.wait_for_function("r => document.fullscreenElement === r",
                                   arg=viewer.element_handle())
    viewer.evaluate("""r => {
        for (const key of ["Escape", "f"])
            r.dispatchEvent(new KeyboardEvent("keydown", {key, bubbles: true}));
    }""")
    offline_page.wait_for_function("() => document.fullscreenElement === null")
    # Under load the browser tells the first f's entry only now, together with
    # the exit, and both read "not fullscreen": told once more, as then.
    offline_page.evaluate("() => document.dispatchEvent(new Event('fullscreenchange'))")
    offline_page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r)))")
    assert viewer.evaluate("r => r.classList.contains('gv-presenting')")
    offline_page.keyboard.press("Escape")
    wait_presenting(viewer, False)
    assert_normal_layout(seen(viewer))


def test_without_fullscreen_the_mode_fills_the_window_and_leaves_with_the_browser(
        offline_page, tmp_path):
    # As in an iframe that may not go fullscreen: the request is refused.
    offline_page.add_init_script(
        "Element.prototype.requestFullscreen = () => Promise.reject(new TypeError('not allowed'));")
    viewer = open_on_screen(offline_page, tmp_path)
    offline_page.keyboard.press("f")
    wait_presenting(viewer, True)
    s = seen(viewer)
    assert not s["fullscreen"]
    assert s["box"]["width"] >= 0.65 * SCREEN["width"] and s["box"]["height"] >= 0.80 * SCREEN["height"]
    assert min(s["textPx"]) >= PRESENT_PX - ROUNDING
    offline_page.keyboard.press("Escape")  # no fullscreen to leave: the viewer's own key
    wait_presenting(viewer, False)
    assert_normal_layout(seen(viewer))
    assert_offline_and_clean(offline_page)


def test_leaving_fullscreen_by_the_browser_leaves_the_mode(offline_page, tmp_path):
    viewer = open_on_screen(offline_page, tmp_path)
    offline_page.keyboard.press("f")
    wait_presenting(viewer, True)
    offline_page.wait_for_function("() => document.fullscreenElement !== null")
    offline_page.evaluate("() => document.exitFullscreen()")
    wait_presenting(viewer, False)
    assert_normal_layout(seen(viewer))


def test_outside_the_mode_plus_zooms_and_text_can_be_asked_for_by_size(offline_page, tmp_path):
    viewer = open_on_screen(offline_page, tmp_path)
    offline_page.keyboard.press("+")
    offline_page.wait_for_function(
        "r => r.querySelector('.gv-zoom-level').textContent === '125%'", arg=viewer.element_handle())
    assert not seen(viewer)["presenting"]
    viewer.evaluate("r => r.gvViewer.setTextSize(24)")
    s = show_step(viewer, 3)
    assert abs(viewer.evaluate("r => r.gvViewer.textSize") - 24) < ROUNDING
    assert min(s["textPx"]) >= 24 - ROUNDING
    assert_normal_layout(s)
    # Text asked for by size stays that size on a step too big for the box.
    viewer.evaluate("r => r.gvViewer.setTextSize(40)")
    big = show_step(viewer, 5)
    assert big["outside"], "step 5 should not fit in the box at 40 px"
    assert min(big["textPx"]) >= 40 - ROUNDING


# The sizes of every text in the side strip, the image grids' included, and of
# the images themselves; and whether the strip scrolls rather than squeezes.
_STRIP_JS = """(root) => {
    const panel = root.querySelector('.gv-panel');
    const px = (sel) => [...panel.querySelectorAll(sel)].map(e => parseFloat(getComputedStyle(e).fontSize));
    const squeezed = [...panel.children].filter(e => !e.hidden && e.scrollHeight > e.clientHeight + 1
        && getComputedStyle(e).overflowY === 'visible').map(e => e.className);
    return {
        sentence: px('.gv-sentence'), formula: px('.gv-formula'),
        cells: px('.gv-image-table td.gv-cell'), captions: px('.gv-image-caption'),
        notes: px('.gv-image-note'), picks: px('.gv-image-pick'), shapes: px('.gv-array-shape'),
        canvases: [...panel.querySelectorAll('canvas.gv-image-canvas')].map(c => c.getBoundingClientRect().width),
        scrolls: panel.scrollHeight > panel.clientHeight && getComputedStyle(panel).overflowY === 'auto',
        squeezed,
    };
}"""


def test_plus_sizes_every_text_of_the_strip_and_the_strip_scrolls(offline_page, tmp_path,
                                                                   screenshot_dir):
    offline_page.set_viewport_size({"width": 1600, "height": 1000})
    trace = tiny_cnn()
    path = gv.export_html([trace], tmp_path / "cnn.html", title="CNN")
    offline_page.goto(path.as_uri())
    offline_page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = offline_page.locator(".gv-viewer")
    viewer.evaluate("r => r.focus()")
    # The step of the convolution: its arrays are images, a grid of numbers each.
    k = next(k for k, s in enumerate(trace.steps) if s.kind == "backward"
             and trace.ops[s.op].type == "Conv2D")
    show_step(viewer, k)
    offline_page.keyboard.press("f")
    wait_presenting(viewer, True)
    before = viewer.evaluate(_STRIP_JS)
    assert before["cells"] and before["canvases"] and before["picks"], before
    for _ in range(3):
        offline_page.keyboard.press("+")
    offline_page.wait_for_function(
        "r => Math.abs(parseFloat(r.style.getPropertyValue('--gv-present-scale')) - 1.728) < 0.01",
        arg=viewer.element_handle())
    after = viewer.evaluate(_STRIP_JS)
    for what in ("sentence", "formula", "cells", "captions", "notes", "picks", "shapes", "canvases"):
        grew = min(a / b for a, b in zip(after[what], before[what]))
        assert grew >= 1.7, f"{what} grew only {grew:.2f} times with three +: {before[what]} -> {after[what]}"
    # Larger type makes the strip scroll; no part of it is squeezed under its text.
    assert after["scrolls"] and after["squeezed"] == [], after
    offline_page.screenshot(path=screenshot_dir / "present_grids_plus3.png")
    viewer.evaluate("r => { const p = r.querySelector('.gv-panel'); p.scrollTop = p.scrollHeight; }")
    offline_page.screenshot(path=screenshot_dir / "present_grids_plus3_scrolled.png")
    assert_offline_and_clean(offline_page)


def test_plus_sizes_the_practice_box_too(offline_page, tmp_path):
    offline_page.set_viewport_size({"width": 1600, "height": 1000})
    path = gv.export_html([scoped_mlp()], tmp_path / "practice.html", title="Practice", practice=True)
    offline_page.goto(path.as_uri())
    offline_page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = offline_page.locator(".gv-viewer")
    viewer.evaluate("r => r.focus()")
    offline_page.keyboard.press("f")
    wait_presenting(viewer, True)
    parts = (".gv-practice-bar", ".gv-practice-bar .gv-btn", ".gv-question-prompt",
             ".gv-answer-shape-label", ".gv-answer-shape", ".gv-answer-buttons .gv-btn")
    sizes = """(r, parts) => parts.map(p => { const e = r.querySelector('.gv-panel ' + p);
        return e ? parseFloat(getComputedStyle(e).fontSize) : null; })"""
    before = viewer.evaluate(sizes, list(parts))
    assert None not in before, dict(zip(parts, before))
    for _ in range(3):
        offline_page.keyboard.press("+")
    offline_page.wait_for_function(
        "r => Math.abs(parseFloat(r.style.getPropertyValue('--gv-present-scale')) - 1.728) < 0.01",
        arg=viewer.element_handle())
    after = viewer.evaluate(sizes, list(parts))
    grew = {p: round(a / b, 2) for p, a, b in zip(parts, after, before)}
    assert min(grew.values()) >= 1.7, grew
    assert min(before) >= 14, dict(zip(parts, before))  # from the back of a hall, before any +


# The boxes of the bar's parts a person reads or presses, in presentation mode.
_BAR_JS = """(root) => {
    const parts = root.querySelectorAll(
        '.gv-header .gv-title, .gv-header .gv-method, .gv-counter, .gv-kind, .gv-controls .gv-btn, '
        + '.gv-speed-label, .gv-slider, .gv-options-label, .gv-toggle, .gv-options .gv-btn, .gv-zoom-level, '
        + '.gv-nav .gv-crumb, .gv-nav .gv-search, .gv-nav .gv-scope-jump, .gv-nav .gv-options-label');
    return [...parts].filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden')
        .map(e => { const r = e.getBoundingClientRect();
                    return {what: e.className || e.tagName, left: r.left, right: r.right, top: r.top,
                            bottom: r.bottom, inside: e.parentElement.closest('.gv-counter') !== null}; });
}"""


@pytest.mark.parametrize("width,height", [(1280, 800), (1600, 1000), (1920, 1080), (2560, 1440)])
def test_the_bar_of_the_mode_has_nothing_over_anything(offline_page, tmp_path, screenshot_dir,
                                                       width, height):
    offline_page.set_viewport_size({"width": width, "height": height})
    viewer = open_on_screen(offline_page, tmp_path)
    offline_page.set_viewport_size({"width": width, "height": height})
    offline_page.keyboard.press("f")
    wait_presenting(viewer, True)
    parts = [p for p in viewer.evaluate(_BAR_JS) if not p["inside"]]
    assert len(parts) >= 15, parts
    for p in parts:
        assert p["left"] >= 0 and p["right"] <= width, f"{p['what']} leaves the screen at {width} px: {p}"
    overlapping = [(a["what"], b["what"]) for i, a in enumerate(parts) for b in parts[i + 1:]
                   if a["left"] < b["right"] - 1 and b["left"] < a["right"] - 1
                   and a["top"] < b["bottom"] - 1 and b["top"] < a["bottom"] - 1]
    assert overlapping == [], f"at {width}x{height}: {overlapping}"
    # The diagram keeps most of the screen under the bar.
    box = viewer.locator("div.gv-diagram").bounding_box()
    assert box["height"] >= 0.75 * height, box
    offline_page.screenshot(path=screenshot_dir / f"present_bar_{width}.png")


def test_a_click_that_focuses_the_diagram_does_not_step(offline_page, tmp_path):
    viewer = open_on_screen(offline_page, tmp_path)
    viewer.evaluate("r => { r.gvViewer.go(2); r.blur(); }")
    wait_step(viewer, 2)
    # A node whose first step is far from step 2: the jump a lecturer did not ask for.
    target = viewer.evaluate("""r => {
        const steppable = [...r.querySelectorAll('.gv-diagram > svg.gv-svg g.node.gv-steppable')];
        const far = steppable.find(e => r.gvViewer.firstStep(e.id) > 4);
        return far && [far.id, r.gvViewer.firstStep(far.id)];
    }""")
    assert target, "no node whose first step is past step 4"
    node_id, k = target
    node = viewer.locator(f".gv-diagram > svg.gv-svg [id='{node_id}']")
    node.click()
    note = viewer.locator(".gv-pick-note")
    assert viewer.get_attribute("data-step") == "2", "the focusing click stepped"
    assert viewer.evaluate("r => r.contains(document.activeElement)")
    assert viewer.evaluate("r => r.gvViewer.selected") == node_id
    assert note.is_visible()
    assert f"Click it again to go to step {k}" in note.inner_text()
    # The note sits over the diagram's top corner.
    nb, db = note.bounding_box(), viewer.locator("div.gv-diagram").bounding_box()
    assert db["x"] <= nb["x"] < db["x"] + 20 and db["y"] <= nb["y"] < db["y"] + 20, (nb, db)
    # Keys step from there, as the page's line says; a step forgets the pick, so
    # a click after stepping (to bring the focus back, say) picks again.
    offline_page.keyboard.press("ArrowRight")
    wait_step(viewer, 3)
    assert note.is_hidden()
    node.click()
    assert viewer.get_attribute("data-step") == "3" and note.is_visible()
    # The second click on the picked node goes to its first step.
    node.click()
    wait_step(viewer, k)
    assert note.is_hidden()
    # Escape clears the pick: the next click picks again without stepping.
    offline_page.keyboard.press("Escape")
    viewer.evaluate("r => r.gvViewer.go(0)")
    wait_step(viewer, 0)
    node.click()
    assert viewer.get_attribute("data-step") == "0"
    assert note.is_visible()
    assert_offline_and_clean(offline_page)
    assert "again to go to its step" in offline_page.locator(".gv-report-header").inner_text()


LAB_CELLS = [
    "import numpy as np\n"
    "import gradviz as gv\n"
    "rng = np.random.default_rng(0)\n"
    "x = gv.constant(rng.normal(size=(4, 3)).astype(np.float32), name='x')\n"
    "with gv.name_scope('layer1'):\n"
    "    W1 = gv.Variable(rng.normal(size=(3, 2)).astype(np.float32), name='W1')\n"
    "    h = gv.relu(gv.matmul(x, W1))\n"
    "loss = gv.reduce_mean(h * h)\n"
    "gv.show(gv.trace_gradients(loss, [W1], title='one layer'), step=2)",
]


def test_the_widget_presents_in_jupyterlab(lab, page):
    page.set_viewport_size(SCREEN)
    nb = lab.write_notebook("present_lab.ipynb", LAB_CELLS)
    lab.open_notebook(page, nb)
    lab.run_all(page)
    viewer = page.locator(".jp-OutputArea-output .gv-viewer").first
    viewer.locator(".gv-diagram svg").wait_for()
    assert_normal_layout(seen(viewer))
    viewer.locator(".gv-present").click()
    wait_presenting(viewer, True)
    s = seen(viewer)
    assert s["fullscreen"]
    assert s["box"]["width"] >= 0.65 * SCREEN["width"] and s["box"]["height"] >= 0.80 * SCREEN["height"]
    assert s["textPx"] and min(s["textPx"]) >= PRESENT_PX - ROUNDING
    assert s["outside"] == []
    page.keyboard.press("f")  # the button has focus: its key reaches the viewer
    wait_presenting(viewer, False)
    assert_normal_layout(seen(viewer))
