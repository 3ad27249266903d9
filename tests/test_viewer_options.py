"""The view options in a real browser: hidden values, the start step, the
bookkeeping panel, and links to a step (``#t2/step4``, and the older ``#t2/s5``), in an exported report
opened from disk with the network blocked.

"Hidden" is checked on what a reader can see: every text node the browser
renders (``checkVisibility``) and every hover text (SVG ``<title>``) of the page.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gradviz as gv
from fixtures.viewer_page import wait_step

pytestmark = pytest.mark.browser

# What the reader can read in an element: rendered text, and the hover texts.
VISIBLE_TEXT = """(root) => {
  const out = [];
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode, el = node.parentElement;
    if (!el || !node.textContent.trim() || el.closest("script, style, title")) continue;
    if (el.checkVisibility({ visibilityProperty: true })) out.push(node.textContent);
  }
  for (const t of root.querySelectorAll("svg title")) out.push(t.textContent);
  return out.join("\\n");
}"""


def regression() -> gv.Trace:
    """A fit whose gradients are numbers no counter or size could print by chance."""
    W = gv.Variable(0.37, name="W")
    b = gv.Variable(0.19, name="b")
    X = gv.constant([[1.1], [2.3], [3.7]], name="X")
    y = gv.constant([[2.0], [4.1], [6.3]], name="y")
    return gv.trace_gradients(gv.reduce_mean(gv.square(X * W + b - y)), [W, b], title="fit")


def gradient_texts(tr: gv.Trace) -> set[str]:
    """Every gradient value of the trace as the page could print it (4 significant digits)."""
    texts = set()
    for s in tr.steps:
        for name in ("grad", "total"):
            a = getattr(s, name, None)
            if a is not None and a.values is not None:
                for v in np.ravel(a.values):
                    texts.add(f"{abs(float(v)):.4g}")
        for a in getattr(s, "grads", ()) or ():
            if a is not None and a.values is not None:
                texts |= {f"{abs(float(v)):.4g}" for v in np.ravel(a.values)}
    # short ones ("1", "0.5") could be anything on the page: keep the telling ones
    return {t for t in texts if len(t.replace(".", "")) >= 3}


def open_report(page, path: pathlib.Path, fragment: str = ""):
    page.goto(path.as_uri() + fragment)
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    return page.locator(".gv-viewer")


def test_hidden_values_are_nowhere_in_the_page_until_revealed(offline_page, tmp_path):
    tr = regression()
    secrets = gradient_texts(tr)
    assert len(secrets) >= 5
    path = tr.to_html(tmp_path / "hidden.html", values="none", start_step=-1)
    viewer = open_report(offline_page, path)
    wait_step(viewer, len(tr.steps) - 1)
    # every step, including the last, where every final gradient is reached
    for k in (len(tr.steps) - 1, 0, 3, 6):
        viewer.evaluate("(root, k) => root.gvViewer.go(k)", k)
        text = offline_page.locator("body").evaluate(VISIBLE_TEXT)
        leaked = sorted(t for t in secrets if t in text)
        assert not leaked, f"step {k}: gradient values in the page with values hidden: {leaked}"
        assert "(hidden)" in viewer.locator(".gv-sentence").inner_text() + \
            viewer.locator(".gv-formula").inner_text() or k == 0
    assert not viewer.locator(".gv-toggle-grad").is_checked()
    assert not viewer.locator(".gv-toggle-forward").is_checked()
    # Revealed, they are there: the check above could fail.
    viewer.evaluate("(root) => root.gvViewer.go(root.gvViewer.steps - 1)")
    viewer.locator(".gv-toggle-grad").check()
    text = offline_page.locator("body").evaluate(VISIBLE_TEXT)
    final = f"{abs(float(tr.steps[-2].grad.values)):.4g}"  # the result of W or b
    assert final in text
    assert "(hidden)" not in viewer.locator(".gv-sentence").inner_text()
    assert offline_page.page_errors == [] and offline_page.blocked_requests == []


def test_final_gradients_show_nothing_the_step_has_not_reached(offline_page, tmp_path):
    tr = regression()
    results = {f"{abs(float(s.grad.values)):.4g}" for s in tr.steps if s.kind == "result"}
    viewer = open_report(offline_page, tr.to_html(tmp_path / "r.html"))  # values shown
    box = viewer.locator(".gv-results")
    wait_step(viewer, 0)
    in_box = box.evaluate(VISIBLE_TEXT)
    shown = [t for t in results if t in in_box]
    assert not shown, f"results shown at step 1, before the walk reached them: {shown}"
    assert "ready at step" in in_box
    viewer.evaluate("(root) => root.gvViewer.go(root.gvViewer.steps - 1)")
    assert all(t in box.inner_text() for t in results)
    assert "ready at step" not in box.inner_text()


def test_a_report_opens_at_its_start_step_without_bookkeeping(offline_page, tmp_path):
    tr = regression()
    path = tr.to_html(tmp_path / "s.html", start_step=4, bookkeeping=False)
    viewer = open_report(offline_page, path)
    wait_step(viewer, 4)
    assert viewer.locator(".gv-counter-text").inner_text() == f"step 4 / {len(tr.steps) - 1}"
    assert not viewer.locator(".gv-bookkeeping").is_visible()
    other = open_report(offline_page, tr.to_html(tmp_path / "b.html"))
    assert other.locator(".gv-bookkeeping").is_visible()


def test_a_link_opens_a_trace_at_a_step_and_stepping_updates_it(offline_page, tmp_path):
    one, two = regression(), regression()
    path = gv.export_html([one, two], tmp_path / "two.html", title="two fits")
    open_report(offline_page, path, "#t2/step4")
    first, second = offline_page.locator(".gv-viewer").all()
    wait_step(second, 4)
    assert second.locator(".gv-counter-text").inner_text().startswith("step 4 / ")
    assert first.get_attribute("data-step") == "0"
    assert second.evaluate("(root) => root === document.activeElement")
    top = second.evaluate("(root) => root.closest('.gv-report-trace').getBoundingClientRect().top")
    assert abs(top) < 5, "the linked trace is scrolled to the top of the window"
    second.press("ArrowRight")
    wait_step(second, 5)
    offline_page.wait_for_function("() => location.hash === '#t2/step5'")  # once the reader pauses
    first.evaluate("(root) => root.gvViewer.go(2)")
    offline_page.evaluate("location.hash = '#t1/step8'")
    wait_step(first, 8)
    # opened afresh: a link past the end opens the last step; one to no trace, the first
    offline_page.goto("about:blank")
    open_report(offline_page, path, "#t1/step999")
    wait_step(offline_page.locator(".gv-viewer").first, len(one.steps) - 1)
    offline_page.goto("about:blank")
    open_report(offline_page, path, "#t7/step2")
    assert [v.get_attribute("data-step") for v in offline_page.locator(".gv-viewer").all()] == ["0", "0"]
    # The older form counted steps from 1: it opens the step it was made for, and
    # the address is written again as the page numbers steps.
    offline_page.goto("about:blank")
    open_report(offline_page, path, "#t2/s5")
    wait_step(offline_page.locator(".gv-viewer").nth(1), 4)
    offline_page.wait_for_function("() => location.hash === '#t2/step4'")
    offline_page.goto("about:blank")
    open_report(offline_page, path, "#t7/step2")
    assert [v.get_attribute("data-step") for v in offline_page.locator(".gv-viewer").all()] == ["0", "0"]
    assert offline_page.page_errors == []


def test_a_gradient_before_its_step_keeps_its_values_out_of_its_hover_text(offline_page, tmp_path):
    tr = regression()
    viewer = open_report(offline_page, tr.to_html(tmp_path / "tips.html"))  # values shown
    # the edge carrying the gradient back to W, pending at step 1, reached at the end
    edge = viewer.locator(".gv-diagram svg g.gv-grad.gv-pending").first
    edge_id = edge.get_attribute("id")
    edge.locator("path").first.hover(force=True)
    title = viewer.locator(f'[id="{edge_id}"] > title')
    assert title.text_content().endswith("(values hidden)")
    assert not any(t in title.text_content() for t in gradient_texts(tr))
    viewer.evaluate("(root) => root.gvViewer.go(root.gvViewer.steps - 1)")
    offline_page.mouse.move(0, 0)
    viewer.locator(f'[id="{edge_id}"] > path').first.hover(force=True)
    assert "(values hidden)" not in title.text_content()
    assert any(t in title.text_content() for t in gradient_texts(tr))


def test_font_size_sets_the_diagrams_smallest_text(offline_page, tmp_path):
    tr = regression()
    viewer = open_report(offline_page, tr.to_html(tmp_path / "big.html", font_size=26))
    offline_page.wait_for_function("r => r.gvViewer.textSize > 0", arg=viewer.element_handle())
    assert viewer.evaluate("r => r.gvViewer.textSize") == pytest.approx(26, abs=0.05)
    # measured on screen: the smallest rendered text of the diagram
    least = viewer.evaluate("""r => Math.min(...Array.from(
        r.querySelectorAll('.gv-diagram svg text')).map(t => t.getBoundingClientRect().height)
        .filter(h => h > 0))""")
    assert least >= 26 * 0.9  # a text box is about its font size tall
    plain = open_report(offline_page, tr.to_html(tmp_path / "plain.html"))
    offline_page.wait_for_function("r => r.gvViewer.textSize > 0", arg=plain.element_handle())
    assert plain.evaluate("r => r.gvViewer.textSize") < 20
