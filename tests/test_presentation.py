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
from fixtures.traces import scoped_mlp
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
