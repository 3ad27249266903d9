"""A step's picture for a slide, in a real Chromium.

- The viewer's "picture" button saves the current step's picture, SVG or PNG,
  as a download: cropped about the step, 16:9, its look written in, the same
  elements lit as ``trace.to_svg(step=k, crop=True)`` lights.
- The look Python writes into a picture (``inline=True``) is the look the
  stylesheet gives the diagram in the browser, element for element: one look,
  written once, in ``diagram.css``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from matplotlib import image

from fixtures.traces import scoped_mlp, two_layer_mlp
from gradviz.views import diagram
from gradviz.views.diagram import slide

pytestmark = pytest.mark.browser

NS = "{http://www.w3.org/2000/svg}"
SHAPES = {f"{NS}{t}" for t in ("path", "polygon", "ellipse", "polyline")}


def open_report(page, path):
    page.goto(path.as_uri())
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    return page.locator(".gv-viewer").first


def saved(page, viewer, which: str):
    """Press "picture", then `which` ("svg" or "png"): the download's path and name."""
    if viewer.locator(".gv-picture-form").is_hidden():
        viewer.locator(".gv-save-picture").click()
    with page.expect_download() as info:
        viewer.locator(f".gv-picture-{which}").click()
    download = info.value
    assert download.failure() is None
    return download.path(), download.suggested_filename


def lit(root: ET.Element) -> set[str]:
    """The ids of the elements drawn lit: a black outline over a yellow copy."""
    out = set()
    for g in root.iter(f"{NS}g"):
        shapes = [s for s in g if s.tag in SHAPES]
        if any(s.get("stroke") == slide._GLOW for s in shapes) and \
                any(s.get("stroke") == "#000000" and s.get("stroke-width") == "2.5" for s in shapes):
            out.add(g.get("id"))
    return out


def test_the_picture_button_saves_the_current_step_for_a_slide(offline_page, tmp_path, screenshot_dir):
    tr = two_layer_mlp()
    path = tr.to_html(tmp_path / "mlp.html", title="Two-layer MLP")
    viewer = open_report(offline_page, path)
    k = 6
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", k)
    file, name = saved(offline_page, viewer, "svg")
    assert name == f"mlp-step{k}.svg"
    assert viewer.locator(".gv-picture-form").is_hidden()
    text = file.read_text(encoding="utf-8")
    assert "<style" not in text and "filter" not in text
    root = ET.fromstring(text)
    assert (root.get("width"), root.get("height")) == ("1280", "720")
    x, y, w, h = (float(v) for v in root.get("viewBox").split())
    assert w / h == pytest.approx(16 / 9, rel=1e-3)
    # The step's elements, lit as Python lights them in its own picture of the step.
    python = ET.fromstring(tr.to_svg(step=k, crop=True, legend=False))
    ids = set(diagram.step_ids(tr, k, legend=False))
    assert lit(root) == lit(python) == {i for i in ids if i in lit(python)} != set()
    # Pending marks are left out, as in Python's; every box is whole in the frame.
    marks = lambda r: {g.get("id") for g in r.iter(f"{NS}g") if "gv-mark" in (g.get("class") or "")}
    assert marks(root) == marks(python)
    for g in root.iter(f"{NS}g"):
        if "node" in (g.get("class") or "").split():
            for s in g:
                for px, py in re.findall(r"(-?[\d.]+),(-?[\d.]+)", s.get("d") or s.get("points") or ""):
                    assert x - 1 <= float(px) <= x + w + 1 and y - 1 <= float(py) <= y + h + 1, g.get("id")
    (screenshot_dir / "picture_saved.svg").write_text(text, encoding="utf-8")

    # As PNG: the same picture, 1920 x 1080.
    png, name = saved(offline_page, viewer, "png")
    assert name == f"mlp-step{k}.png"
    data = png.read_bytes()
    assert diagram.png_size(data) == (1920, 1080)
    rgb = image.imread(png)[..., :3]
    assert 0.005 < (rgb.mean(axis=2) < 0.5).mean() < 0.3
    (screenshot_dir / "picture_saved.png").write_bytes(data)

    # Values the reader hid stay out of the picture.
    viewer.locator(".gv-toggle-grad").click()
    file, _ = saved(offline_page, viewer, "svg")
    assert 'class="gv-grad-value"' not in file.read_text(encoding="utf-8")
    assert offline_page.page_errors == [] and offline_page.blocked_requests == []


def test_the_picture_of_a_step_in_an_opened_scope_is_that_drawing(offline_page, tmp_path):
    tr = scoped_mlp()
    viewer = open_report(offline_page, tr.to_html(tmp_path / "s.html", collapse=True))
    k = next(k for k, s in enumerate(tr.steps) if s.kind == "backward")
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", k)
    root = ET.fromstring(viewer.evaluate("r => r.gvViewer.picture()"))
    assert lit(root), "the step's box is lit in the picture"
    assert offline_page.page_errors == []


# The painted look of each element: per group with an id, its shapes' stroke, fill
# and dashes and its texts' fill and halo, as the browser computes them, leaving out what is hidden and
# the copies a picture adds (the halo under a label, the glow under a lit outline).
_LOOK = """() => {
  const out = {};
  const paint = (v) => (v === "rgba(0, 0, 0, 0)" ? "none" : v);  // transparent is none
  for (const g of document.querySelectorAll("svg g[id]")) {
    if (getComputedStyle(g).visibility === "hidden") continue;
    const parts = [];
    for (const e of g.children) {
      if (!["path", "polygon", "ellipse", "polyline", "text"].includes(e.localName)) continue;
      if (e.classList.contains("gv-halo") || e.getAttribute("stroke") === "#F0E442") continue;
      const cs = getComputedStyle(e);
      if (cs.visibility === "hidden") continue;
      if (e.localName === "text") {  // its fill, and whether a white halo lies under it
        const halo = (cs.paintOrder.startsWith("stroke") && paint(cs.stroke) !== "none") ||
          !!(e.previousElementSibling && e.previousElementSibling.classList.contains("gv-halo"));
        parts.push(["text", paint(cs.fill), halo]);
      } else parts.push([e.localName, paint(cs.stroke), paint(cs.fill), cs.strokeDasharray]);
    }
    out[g.id] = { active: g.classList.contains("gv-active"), opacity: getComputedStyle(g).opacity, parts };
  }
  return out;
}"""


@pytest.mark.parametrize("values", ["all", "forward"])
def test_the_written_in_look_is_the_stylesheets(page, values):
    tr = two_layer_mlp()
    for k in (0, 4, 6, len(tr.steps) - 1):
        page.set_content(tr.to_svg(step=k, values=values))
        styled = page.evaluate(_LOOK)
        page.set_content(tr.to_svg(step=k, values=values, inline=True))
        written = page.evaluate(_LOOK)
        assert set(written) == set(styled), f"step {k}: {set(written) ^ set(styled)}"
        for i, want in styled.items():
            got = written[i]
            assert got["opacity"] == want["opacity"], (k, i)
            if want["active"]:  # lit by a thicker black stroke instead of a filter
                assert [p[0] for p in got["parts"]] == [p[0] for p in want["parts"]], (k, i)
            else:
                assert got["parts"] == want["parts"], (k, i, got, want)
