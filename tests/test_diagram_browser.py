"""The diagram as a person sees it: headless Chromium, 1280 px wide, three steps of a real trace.

Screenshots go to ``build/screenshots/diagram_step_<k>.png`` (first, middle and
last step of the linear-regression trace).
"""

from __future__ import annotations

from typing import Any

import pytest
from test_diagram import classes, groups, linreg_trace

from gradviz.views import diagram

# Every test here holds under both Graphviz engines (tests/conftest.py).
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("each_layout_engine")]

# The computed style of the first shape (or text) inside an SVG group.
_STYLE_JS = """([id, sel, prop]) => {
  const g = document.getElementById(id);
  const el = g && g.querySelector(sel);
  return el ? getComputedStyle(el).getPropertyValue(prop) : null;
}"""


def show(page: Any, svg: str) -> None:
    page.set_content("<!doctype html><html><head><meta charset='utf-8'></head>"
                     "<body style='margin:8px;background:#fff'>" + svg + "</body></html>")


def style(page: Any, element_id: str, selector: str, prop: str) -> str | None:
    return page.evaluate(_STYLE_JS, [element_id, selector, prop])


def test_linreg_steps_in_chromium(page: Any, screenshot_dir: Any) -> None:
    tr = linreg_trace()
    n = len(tr.steps)
    first, middle, last = 0, n // 2, n - 1
    grad_edge = next(i for i, g in groups(diagram.layout_svg(tr)).items()
                     if "gv-grad" in classes(g))
    for k in (first, middle, last):
        show(page, diagram.to_svg(tr, step=k))
        page.screenshot(path=screenshot_dir / f"diagram_step_{k}.png", full_page=True)

        # The step's elements are highlighted with a black outline thickened
        # by a black halo and a glow (not colour alone), all paint: the
        # outline's width, which would re-lay out the SVG, never changes.
        active = diagram.step_ids(tr, k)
        node = next(i for i in active if i[0] in "to" and "_" not in i)
        shape = "path, polygon, ellipse"
        assert style(page, node, shape, "stroke") == "rgb(0, 0, 0)"
        halo = page.evaluate("id => getComputedStyle(document.getElementById(id)).filter", node)
        assert halo.count("drop-shadow") == 4 and "rgb(0, 0, 0)" in halo, halo
        # Elements the step does not touch keep their normal outline, no halo.
        untouched = next(f"t{t.id}" for t in tr.tensors
                         if all(f"t{t.id}" not in diagram.step_ids(tr, j) for j in range(n)))
        for i in (node, untouched):  # the width dot drew, untouched by any state
            drawn = page.evaluate("""([id, sel]) => {
              const e = document.getElementById(id).querySelector(sel);
              return (e.getAttribute('stroke-width') || '1') + 'px'; }""", [i, shape])
            assert style(page, i, shape, "stroke-width") == drawn, (k, i)
        assert page.evaluate("id => getComputedStyle(document.getElementById(id)).filter",
                             untouched) == "none"

        # Gradient labels: hidden before the gradient gets there, readable after.
        grad_visibility = style(page, grad_edge, "text", "visibility")
        result_visibility = style(page, "res0", "text", "visibility")
        if k == first:
            assert grad_visibility == "hidden" and result_visibility == "hidden"
            assert style(page, f"seed{tr.ys[0]}", "text", "visibility") == "visible"
        if k == last:
            assert grad_visibility == "visible" and result_visibility == "visible"
            assert "12.38" in page.evaluate(
                "() => document.getElementById('res0').textContent")

        # Legible at 1280 px without zooming: nothing is scaled down, and the
        # tensor names render at least 12 px tall.
        box = page.evaluate("""() => {
          const s = document.querySelector('svg');
          const r = s.getBoundingClientRect();
          const t = document.querySelector('#t0 text').getBoundingClientRect();
          return {w: r.width, vw: s.viewBox.baseVal.width, text: t.height};
        }""")
        assert box["w"] <= 1280 and box["w"] >= box["vw"] * 4 / 3 - 1
        assert box["text"] >= 12
