"""Browser test of the step-through widget in a real JupyterLab.

A notebook builds the linear-regression trace and leaves it as the last
expression of a cell; the test runs all cells in JupyterLab (headless Chromium)
and checks what a student sees: the widget appears; next, the right arrow and
the slider each move the highlighted step in the SVG (classes and computed
style) and change the sentence; the picture button saves the step's picture;
play runs to the end by itself; and the step is synced with the kernel both ways.
"""

from __future__ import annotations

import json
import pathlib
import xml.etree.ElementTree as ET

import pytest

from fixtures.viewer_page import style_signature, viewer_state, wait_step
from test_viewer_options import VISIBLE_TEXT

pytestmark = pytest.mark.browser

SVG = "http://www.w3.org/2000/svg"

CELLS = [
    "import gradviz as gv\n"
    "X = gv.constant([[2.], [3.]], name='X')\n"
    "Y = gv.constant([[3.], [2.]], name='Y')\n"
    "W = gv.Variable(1.6649098, name='W')\n"
    "b = gv.Variable(0.54648024, name='b')\n"
    "pred = X * W + b\n"
    "cost = 0.5 * gv.reduce_sum((pred - Y) ** 2)\n"
    "trace = gv.trace_gradients(cost, [W, b])\n"
    "trace.title = 'linear regression'",
    "trace",
    "w = gv.show(trace, step=2)\nw",
]

# Runs code in the notebook's kernel and returns what it printed.
_KERNEL_EXEC = """async (code) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const future = kernel.requestExecute({code});
    let out = '';
    future.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
    await future.done;
    return out;
}"""


def kernel_steps(page) -> list[dict]:
    """What each step of the notebook's ``trace`` should show (its ids and sentence),
    from the kernel's own view data."""
    return json.loads(page.evaluate(_KERNEL_EXEC, (
        "import json; print(json.dumps([{'ids': s['ids'], 'sentence': s['sentence']} "
        "for s in gv.show(trace).payload['steps']]))")))


def expected_active(viewer, payload_steps, k):
    ids = set(payload_steps[k]["ids"])
    return sorted(i for i in ids if viewer.evaluate(
        "(r, id) => !!r.querySelector(`.gv-diagram svg [id=\"${CSS.escape(id)}\"]`)", i))


def test_widget_steps_in_jupyterlab(lab, page, screenshot_dir):
    nb = lab.write_notebook("viewer_lab.ipynb", CELLS)
    lab.open_notebook(page, nb)
    lab.collapse_left(page)
    lab.run_all(page)
    steps = kernel_steps(page)
    n = len(steps)

    viewers = page.locator(".jp-OutputArea-output .gv-viewer")
    viewers.first.wait_for(state="visible", timeout=20_000)
    assert viewers.count() == 2
    viewer = viewers.first
    viewer.locator(".gv-diagram svg").wait_for()
    assert viewer.locator(".gv-title").text_content() == "linear regression"
    s0 = viewer_state(viewer)
    assert s0["step"] == 0 and s0["counter"].startswith(f"step 0 / {n - 1}")
    assert s0["active"] == expected_active(viewer, steps, 0) != []
    viewer.scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "widget_lab_start.png")

    # 1. the next button
    new_ids = [i for i in expected_active(viewer, steps, 1) if i not in s0["active"]]
    before = {i: style_signature(viewer, i) for i in new_ids}
    viewer.locator(".gv-next").click()
    wait_step(viewer, 1)
    s1 = viewer_state(viewer)
    assert s1["active"] == expected_active(viewer, steps, 1)
    assert s1["sentence"] != s0["sentence"] and s1["sentence"] == steps[1]["sentence"]
    assert all(style_signature(viewer, i) != before[i] for i in new_ids)

    # 2. the right arrow, once the viewer has focus
    viewer.locator(".gv-step-title").click()
    page.keyboard.press("ArrowRight")
    wait_step(viewer, 2)
    s2 = viewer_state(viewer)
    assert s2["active"] == expected_active(viewer, steps, 2)
    assert s2["sentence"] == steps[2]["sentence"] != s1["sentence"]
    assert page.locator(".jp-Notebook .jp-Cell").count() == len(CELLS)  # the notebook ignored the key

    # 3. the slider
    before = {i: style_signature(viewer, i) for i in expected_active(viewer, steps, 6)
              if i not in s2["active"]}
    viewer.locator(".gv-slider").fill("6")
    wait_step(viewer, 6)
    s6 = viewer_state(viewer)
    assert s6["active"] == expected_active(viewer, steps, 6)
    assert s6["sentence"] == steps[6]["sentence"]
    assert all(style_signature(viewer, i) != sig for i, sig in before.items())
    page.wait_for_function("r => !r.gvViewer.moving", arg=viewer.element_handle())
    page.screenshot(path=screenshot_dir / "widget_lab_step6.png")
    # The picture button saves this step's picture for a slide, from the notebook too.
    viewer.locator(".gv-save-picture").click()
    with page.expect_download() as info:
        viewer.locator(".gv-picture-svg").click()
    assert info.value.suggested_filename == "linear-regression-step6.svg"
    picture = ET.fromstring(pathlib.Path(info.value.path()).read_text(encoding="utf-8"))
    assert picture.find(f"{{{SVG}}}style") is None and picture.get("width") == "1280"
    lit = {g.get("id") for g in picture.iter(f"{{{SVG}}}g") if "gv-active" in (g.get("class") or "")}
    assert lit == set(s6["active"])
    # In the notebook's output area at a 1280 px window, the diagram and the
    # explanation sit side by side, and the step is in the diagram's box.
    place = viewer.evaluate("""r => {
        const box = r.querySelector('div.gv-diagram'), b = box.getBoundingClientRect();
        const p = r.querySelector('.gv-panel').getBoundingClientRect();
        const inner = [b.left + box.clientLeft, b.top + box.clientTop,
                       b.left + box.clientLeft + box.clientWidth, b.top + box.clientTop + box.clientHeight];
        const out = Array.from(box.querySelectorAll('svg .gv-active')).map(e => e.getBoundingClientRect())
            .filter(q => q.left < inner[0] - 1 || q.top < inner[1] - 1 || q.right > inner[2] + 1 || q.bottom > inner[3] + 1);
        return {beside: p.left >= b.right, top: Math.abs(p.top - b.top), out: out.length};
    }""")
    assert place == {"beside": True, "top": 0, "out": 0}, place

    # 4. play runs to the end by itself
    viewer.locator(".gv-speed").select_option("8")
    viewer.locator(".gv-play").click()
    wait_step(viewer, n - 1, timeout=10_000)
    page.wait_for_function("r => !r.classList.contains('gv-playing')", arg=viewer.element_handle())
    end = viewer_state(viewer)
    assert end["pending"] == [] and end["sentence"] == steps[-1]["sentence"]
    assert viewer.locator(".gv-results .gv-result").count() == 2
    page.screenshot(path=screenshot_dir / "widget_lab_end.png")

    # 5. the step is synced with the kernel, both ways (second viewer: w)
    second = viewers.nth(1)
    assert viewer_state(second)["step"] == 2
    second.locator(".gv-next").click()
    wait_step(second, 3)
    # the comm update and the execute request travel the same channel, in order
    assert page.evaluate(_KERNEL_EXEC, "print(w.step)").strip() == "3"
    page.evaluate(_KERNEL_EXEC, "w.step = 10**6")
    wait_step(second, n - 1)
    assert page.evaluate(_KERNEL_EXEC, "print(w.step)").strip() == str(n - 1)
    # With the file browser open beside the notebook too, the explanation stays
    # beside the diagram.
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
    page.wait_for_function("() => !window.jupyterapp.shell.leftCollapsed")
    page.wait_for_function("""r => r.querySelector('.gv-panel').getBoundingClientRect().left >=
        r.querySelector('div.gv-diagram').getBoundingClientRect().right""", arg=viewer.element_handle())
    page.screenshot(path=screenshot_dir / "widget_lab_left_area_open.png")
    assert lab.error_outputs(page) == []


def test_widget_opens_as_its_view_options_say(lab, page):
    # A teacher's quiz cell: every value hidden, at the last step, no bookkeeping.
    cells = [CELLS[0], "gv.show(trace, values='none', start_step=-1, bookkeeping=False)"]
    nb = lab.write_notebook("viewer_lab_options.ipynb", cells)
    lab.open_notebook(page, nb)
    lab.collapse_left(page)
    lab.run_all(page)
    viewer = page.locator(".jp-OutputArea-output .gv-viewer").first
    viewer.wait_for(state="visible", timeout=20_000)
    viewer.locator(".gv-diagram svg").wait_for()
    n = int(page.evaluate(_KERNEL_EXEC, "print(len(trace.steps))"))
    wait_step(viewer, n - 1)
    assert not viewer.locator(".gv-bookkeeping").is_visible()
    assert not viewer.locator(".gv-toggle-grad").is_checked()
    assert "(hidden)" in viewer.locator(".gv-sentence").inner_text()
    answers = ("12.38", "4.418")  # dcost/dW, dcost/db
    seen = viewer.evaluate(VISIBLE_TEXT)
    assert not [a for a in answers if a in seen], "values shown with values='none'"
    viewer.locator(".gv-toggle-grad").check()
    seen = viewer.evaluate(VISIBLE_TEXT)
    assert all(a in seen for a in answers)
    assert lab.error_outputs(page) == []


CNN_CELLS = [
    "import numpy as np\n"
    "import gradviz as gv\n"
    "rng = np.random.default_rng(0)\n"
    "digits = np.zeros((2, 8, 8, 1)); digits[0, 1:7, 3:5] = 1; digits[1, 2:6, 1:7] = 1\n"
    "x = gv.constant(digits, name='digits')\n"
    "kernel = gv.Variable(rng.normal(size=(3, 3, 1, 4)).round(2), name='kernel')\n"
    "W = gv.Variable(rng.normal(size=(64, 3)).round(2), name='W')\n"
    "h = gv.nn.relu(gv.nn.conv2d(x, kernel, 1, 'SAME'))\n"
    "pooled = gv.nn.max_pool2d(h, 2, 2, 'VALID')\n"
    "logits = gv.reshape(pooled, [2, 64]) @ W\n"
    "labels = gv.constant(np.eye(3)[[0, 2]], name='labels')\n"
    "loss = gv.reduce_mean(gv.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))\n"
    "trace = gv.trace_gradients(loss, [kernel, W], title='a small CNN')\n"
    "pool = next(s.index for s in trace.steps if getattr(s, 'op_type', '') == 'MaxPool')\n"
    "conv = next(s.index for s in trace.steps if getattr(s, 'op_type', '') == 'Conv2D')\n"
    "print(pool, conv)",
    "gv.show(trace, step=pool)",
]


def test_widget_draws_a_cnns_images_in_jupyterlab(lab, page, screenshot_dir):
    nb = lab.write_notebook("cnn_lab.ipynb", CNN_CELLS)
    lab.open_notebook(page, nb)
    lab.collapse_left(page)
    lab.run_all(page)
    pool, conv = map(int, page.evaluate(_KERNEL_EXEC, "print(pool, conv)").split())
    viewer = page.locator(".jp-OutputArea-output .gv-viewer").first
    viewer.wait_for(state="visible", timeout=20_000)
    wait_step(viewer, pool)
    assert viewer.locator(".gv-step-title").text_content() == "MaxPool backward"
    grids = viewer.locator(".gv-panel .gv-image-grid")
    assert grids.count() == 2
    # dL/dRelu (2,8,8,4): four 8x8 canvases, the example picked from a menu
    assert grids.nth(1).locator("canvas.gv-image-canvas").count() == 4
    grids.nth(1).locator("select").select_option("1")
    assert grids.nth(0).locator("select").input_value() == "1"
    viewer.locator(".gv-panel").scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "widget_lab_max_pool.png")
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", conv)
    wait_step(viewer, conv)
    assert viewer.locator(".gv-step-title").text_content() == "Conv2D backward"
    assert "flipped top to bottom and left to right" in viewer.locator(".gv-sentence").inner_text()
    kernel = viewer.locator(".gv-panel .gv-image-grid").last
    assert kernel.locator(".gv-image").count() == 4 and kernel.locator("td").count() == 36
    viewer.locator(".gv-panel").scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "widget_lab_conv.png")
    assert lab.error_outputs(page) == []
