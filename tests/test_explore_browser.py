"""What-if in a real JupyterLab: drag an input's slider and watch the gradients move,
with the diagram standing still.

A learner drags the slider of ``gv.explore``: the kernel runs the program
again, and the viewer must show the new numbers (on the diagram, in the step
panel and in the final gradients) while every node and edge stays exactly
where it was, in the same SVG: the layout is not made again.  A program whose
structure changes with the value is drawn anew, once.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

CELLS = [
    "import gradviz as gv",
    # the lesson's linear regression, W on a slider, b on a slider of the default range
    # and step (its value is not a whole number of steps from that range's end)
    """\
def cost_of(W, b):
    X = gv.constant([[2.0], [3.0]], name="X")
    Y = gv.constant([[3.0], [2.0]], name="Y")
    return gv.multiply(0.5, gv.reduce_sum((X * W + b - Y) ** 2), name="cost")

ex = gv.explore(cost_of, W=gv.slider(1.0, -2.0, 4.0, step=0.01), b=0.54648024, title="what if")
ex""",
    # moved from code to values off the sliders' steps, then back: the sliders
    # take them as given (they do not snap them and send back another value)
    "ex.set(W=0.705, b=0.123456)\nex.set(W=1.0, b=0.54648024)",
    # a program whose structure follows the value: a square above 0, exp below
    """\
def branchy(v):
    return v * v if float(v.numpy()) >= 0 else gv.exp(v)

ex2 = gv.explore(branchy, v=gv.slider(1.0, -1.0, 1.0, step=0.5), title="branchy")
ex2""",
]

# Where every node and edge is drawn: each shape's geometry, by element id.
B = 0.54648024

GEOMETRY_JS = """(svg) => Object.fromEntries([...svg.querySelectorAll('g[id]')].map((g) => [g.id,
    [...g.querySelectorAll(':scope > path, :scope > polygon, :scope > ellipse, :scope > polyline')]
      .map((e) => ['d', 'points', 'cx', 'cy', 'rx', 'ry'].map((a) => e.getAttribute(a)).join(' '))
      .join(' | ') + ' @ ' + [...g.querySelectorAll(':scope > text')]
      .map((t) => t.getAttribute('x') + ',' + t.getAttribute('y')).join(' ')]))"""

TEXTS_JS = "(svg) => [...svg.querySelectorAll('text.gv-grad-value')].map((t) => t.textContent.trim())"


def final_dw(viewer) -> float:
    """dcost/dW as the final gradients say it."""
    text = viewer.locator(".gv-results").inner_text()
    return float(re.search(r"gradient for W \(scalar\), xs\[0\], is ready: (\S+)\.", text).group(1))


def drag(page, handle, dx: float) -> None:
    """Drag ``handle`` ``dx`` px to the right, with the mouse, in small moves."""
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for i in range(1, 11):
        page.mouse.move(x + dx * i / 10, y)
    page.mouse.up()


def test_dragging_a_slider_moves_the_numbers_not_the_picture(lab, page, screenshot_dir):
    nb = lab.write_notebook("explore_lab.ipynb", CELLS)
    lab.open_notebook(page, nb)
    lab.collapse_left(page)
    lab.run_all(page)
    out = page.locator(".jp-OutputArea-output .gv-explore").first
    viewer = out.locator(".gv-viewer")
    viewer.wait_for(state="visible", timeout=20_000)
    svg = viewer.locator(".gv-diagram svg").first
    svg.wait_for()
    # opens at the last step: every gradient drawn
    assert viewer.get_attribute("data-step") == str(viewer.evaluate("r => r.gvViewer.steps") - 1)
    page.evaluate("(svg) => { svg.dataset.seen = 'before'; }", svg.element_handle())
    before = page.evaluate(GEOMETRY_JS, svg.element_handle())
    texts = page.evaluate(TEXTS_JS, svg.element_handle())
    # sum((X W + b - Y) X) = 13 W + 5 b - 12, at W = 1 and b as given: the sliders
    # shown, and moved from code, did not move the values (a slider snaps to its
    # steps, and would send what it snapped to back to the kernel)
    lab.wait_for_idle(page)
    page.wait_for_timeout(1000)
    lab.wait_for_idle(page)
    assert final_dw(viewer) == pytest.approx(13 + 5 * B - 12, abs=6e-4)  # as shown: 4 digits
    readouts = out.locator(".gv-explore-inputs .widget-readout")
    assert [readouts.nth(i).inner_text() for i in range(2)] == ["1.000", "0.5465"]
    out.scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "explore_before.png")

    handle = out.locator(".gv-explore-inputs .noUi-handle").first
    drag(page, handle, 60)
    readout = out.locator(".gv-explore-inputs .widget-readout").first
    page.wait_for_function("([r, v]) => r.textContent.trim() !== v",
                           arg=[readout.element_handle(), "1"])
    w = float(readout.inner_text())
    assert w > 1.0
    page.wait_for_function("([svg, t]) => JSON.stringify(" + TEXTS_JS + "(svg)) !== t",
                           arg=[svg.element_handle(), repr(texts).replace("'", '"')])
    lab.wait_for_idle(page)
    page.wait_for_timeout(300)
    after = page.evaluate(GEOMETRY_JS, svg.element_handle())
    # the same SVG element, every shape and text where it was
    assert svg.evaluate("s => s.dataset.seen") == "before"
    assert after == before
    assert page.evaluate(TEXTS_JS, svg.element_handle()) != texts
    # the final gradient is the kernel's for the value the slider shows
    want = 13 * w + 5 * B - 12
    assert final_dw(viewer) == pytest.approx(want, rel=1e-3)
    page.screenshot(path=screenshot_dir / "explore_after.png")

    # a program that changes its structure is drawn anew, once
    out2 = page.locator(".jp-OutputArea-output .gv-explore").nth(1)
    svg2 = out2.locator(".gv-diagram svg").first
    svg2.wait_for()
    assert "Mul" in out2.locator("div.gv-diagram").inner_text()
    handle2 = out2.locator(".gv-explore-inputs .noUi-handle").first
    handle2.focus()
    for _ in range(3):  # 1.0 -> -0.5, by the slider's keys
        page.keyboard.press("ArrowLeft")
    page.wait_for_function("(o) => o.querySelector('div.gv-diagram').textContent.includes('Exp')",
                           arg=out2.element_handle())
    assert "Mul" not in out2.locator("div.gv-diagram").inner_text()
    assert lab.error_outputs(page) == []
