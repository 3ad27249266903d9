"""The diagram box keeps the step in view: exported reports in headless Chromium.

For a broadcast trace, a fan-out and a stop_gradient with grad_ys, each opened
as a report at 1400x900 and at 1024x640 and stepped with the keys, at every
step (once the box has finished panning) the test checks what a reader sees:

- every highlighted element (nodes, edges with their labels) lies inside the
  visible part of the diagram box;
- the box is at the reader's zoom (1 by default), or zoomed out just enough
  for a step that would not fit at it;
- it did not move sideways for a step that was already in view across;
- no two gradient labels on screen overlap;
- the diagram and the explanation sit side by side, the explanation in view;
- a reduce step highlights its sum node and the edge into the input, which
  carries the input's shape.

Then the zoom controls: buttons and keys, and "whole graph": on a two-layer
MLP it shows the overview (the drawing without values), fitted to the box with
its text readable, steps in it, and goes back to the drawing with values at
100%; on a 40-layer chain (no overview) it zooms the drawing out as far as the
text stays readable and says so.  Screenshots go
to ``build/screenshots/view_<trace>_<width>_s<k>.png``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import gradviz as gv
from fixtures.traces import deep_mlp, scoped_tanh_chain, two_layer_mlp
from fixtures.viewer_page import wait_step

# Every test here holds under both Graphviz engines (tests/conftest.py).
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("each_layout_engine")]

SIZES = [(1400, 900), (1024, 640)]
EDGE = 24  # px the viewer keeps between the step and the box's edges
TOL = 1.5  # px of rounding


def broadcast_trace() -> gv.Trace:
    """A (4,1) matmul output plus a (1,) bias: the bias's gradient is summed over axis 0."""
    X = gv.constant(np.array([[1.0], [2.0], [3.0], [4.0]], np.float32), name="X")
    Y = gv.constant(np.array([[2.0], [4.1], [5.9], [8.2]], np.float32), name="Y")
    W = gv.Variable(np.array([[0.5]], np.float32), name="W")
    b = gv.Variable(np.array([0.1], np.float32), name="b")
    loss = gv.reduce_mean((gv.matmul(X, W) + b - Y) ** 2, name="loss")
    return gv.trace_gradients(loss, [W, b], title="broadcast bias")


def fan_out_trace() -> gv.Trace:
    x = gv.constant(2.0, name="x")
    y = x * x + 3 * x
    return gv.trace_gradients(y, [x], title="fan-out")


def stop_gradient_trace() -> gv.Trace:
    a = gv.constant(2.0, name="a")
    b = gv.constant(3.0, name="b")
    d = gv.stop_gradient(a * b) + a * a
    return gv.trace_gradients(d, [a, b], grad_ys=gv.constant(2.0), title="stop_gradient")


TRACES = {"broadcast": broadcast_trace, "fan_out": fan_out_trace,
          "stop_gradient": stop_gradient_trace}


@pytest.fixture
def sized_page(browser: Any, request: pytest.FixtureRequest, screenshot_dir: Any):
    """A page of the size the test is parametrized with (``size``), offline."""
    from harness import block_network

    width, height = request.getfixturevalue("size")
    context = browser.new_context(viewport={"width": width, "height": height}, service_workers="block")
    blocked = block_network(context)
    page = context.new_page()
    page.page_errors = []
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    yield page
    assert blocked == [] and page.page_errors == []
    context.close()


def open_report(page: Any, trace: gv.Trace, tmp_path: Any) -> Any:
    page.goto(trace.to_html(tmp_path / "view.html").as_uri())
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = page.locator(".gv-viewer")
    settle(viewer)
    return viewer


_FRAMES_JS = """(n) => new Promise(done => {
    const next = () => (n-- > 0 ? requestAnimationFrame(next) : setTimeout(done, 0));
    next();
})"""


def settle(viewer: Any) -> None:
    """Wait until the diagram box has finished panning.

    Two frames first: a resize is seen by the viewer's ResizeObserver after the
    frame's animation callbacks, and followed in the frame after.
    """
    viewer.page.evaluate(_FRAMES_JS, 2)
    viewer.page.wait_for_function("r => !r.gvViewer.moving", arg=viewer.element_handle())
    viewer.page.evaluate(_FRAMES_JS, 1)


# What the reader sees, in window px: the box's visible client area (within the
# window), the box's scroll and zoom, the union of the highlighted elements,
# each highlighted element, the union of each given step's elements, each
# shown gradient label's text, and the panel's place.
_SEE_JS = """(root, nextIds) => {
    const box = root.querySelector('div.gv-diagram');
    const svg = Array.from(box.querySelectorAll('svg')).find(s => s.style.display !== 'none');
    const br = box.getBoundingClientRect();
    const left = br.left + box.clientLeft, top = br.top + box.clientTop;
    const visible = [Math.max(left, 0), Math.max(top, 0),
                     Math.min(left + box.clientWidth, innerWidth), Math.min(top + box.clientHeight, innerHeight)];
    const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const union = (rs) => rs.length ? [Math.min(...rs.map(r => r[0])), Math.min(...rs.map(r => r[1])),
                                       Math.max(...rs.map(r => r[2])), Math.max(...rs.map(r => r[3]))] : null;
    const sized = (r) => r[2] > r[0] || r[3] > r[1];
    const active = Array.from(svg.querySelectorAll('.gv-active')).map(e => ({id: e.id, r: rect(e)}))
        .filter(a => sized(a.r));
    const byId = (id) => svg.querySelector(`[id="${CSS.escape(id)}"]`);
    const next = union(nextIds.map(byId).filter(e => e).map(rect).filter(sized));
    const labels = [];
    for (const g of svg.querySelectorAll('g.gv-grad:not(.gv-pending)')) {
        const texts = Array.from(g.querySelectorAll('text'))
            .filter(t => getComputedStyle(t).visibility !== 'hidden' && t.textContent.trim());
        if (texts.length) labels.push({id: g.id, r: union(texts.map(rect))});
    }
    const panel = root.querySelector('.gv-panel').getBoundingClientRect();
    const sentence = root.querySelector('.gv-sentence').getBoundingClientRect();
    return {visible, client: [box.clientWidth, box.clientHeight], scroll: [box.scrollLeft, box.scrollTop],
            zoom: root.gvViewer.zoom, active, union: union(active.map(a => a.r)), next, labels,
            diagram: rect(box), panel: [panel.left, panel.top, panel.right, panel.bottom],
            sentence: [sentence.left, sentence.top, sentence.right, sentence.bottom],
            window: [innerWidth, innerHeight]};
}"""


def see(viewer: Any, next_ids: list[str] | None = None) -> dict:
    return viewer.evaluate(_SEE_JS, next_ids or [])


def inside(r: list[float], box: list[float], margin: float = 0) -> bool:
    return (r[0] >= box[0] + margin - TOL and r[1] >= box[1] + margin - TOL
            and r[2] <= box[2] - margin + TOL and r[3] <= box[3] - margin + TOL)


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - TOL and b[0] < a[2] - TOL and a[1] < b[3] - TOL and b[1] < a[3] - TOL


def fits(width: float, height: float, client: list[float]) -> bool:
    return width <= client[0] - 2 * EDGE + TOL and height <= client[1] - 2 * EDGE + TOL


def check_zoom(s: dict, base: float, where: str) -> None:
    """At the reader's zoom `base`, or zoomed out just enough for a step too big for it."""
    scale = s["zoom"]["scale"]
    u = s["union"]
    w, h = (u[2] - u[0]) / scale, (u[3] - u[1]) / scale  # the step's size at zoom 1
    if abs(scale - base) < 0.01:
        return
    assert scale < base, f"{where}: zoomed in to {scale}, the reader's zoom is {base}"
    assert not fits(w * base, h * base, s["client"]), f"{where}: zoomed out to {scale} for a step that fits"
    need = min((s["client"][0] - 2 * EDGE) / w, (s["client"][1] - 2 * EDGE) / h)
    assert scale == pytest.approx(need, rel=0.03), f"{where}: zoomed out more than needed"


def overlapping_labels(s: dict, where: str) -> list[str]:
    labels = s["labels"]
    return [f"{where}: the labels of {a['id']} and {b['id']} overlap"
            for i, a in enumerate(labels) for b in labels[i + 1:] if overlap(a["r"], b["r"])]


def shape_text(shape: tuple[int, ...]) -> str:
    return "".join(str(tuple(shape)).split())


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("name", TRACES)
def test_every_step_is_in_view(name, size, sized_page, tmp_path, screenshot_dir):
    trace = TRACES[name]()
    viewer = open_report(sized_page, trace, tmp_path)
    steps = viewer.evaluate("""r => JSON.parse(document.getElementById(
            r.closest('.gv-report-trace').dataset.payload).textContent).steps.map(s => s.ids)""")
    n = len(trace.steps)
    viewer.locator(".gv-step-title").click()
    sized_page.keyboard.press("Home")
    wait_step(viewer, 0)
    settle(viewer)
    before = None
    # What the picture gets wrong (labels that overlap, a reduce step's marks),
    # said once every step has been checked for being in view.
    picture: list[str] = []
    for k in range(n):
        if k:
            before = see(viewer, steps[k])
            sized_page.keyboard.press("ArrowRight")
            wait_step(viewer, k)
            settle(viewer)
        where = f"{name} at {size[0]}x{size[1]}, step {k}"
        s = see(viewer)
        sized_page.screenshot(path=screenshot_dir / f"view_{name}_{size[0]}_s{k + 1}.png")
        assert s["active"], f"{where}: nothing highlighted"
        for a in s["active"]:
            assert inside(a["r"], s["visible"]), f"{where}: {a['id']} {a['r']} is out of view {s['visible']}"
        check_zoom(s, 1.0, where)
        # No sideways move for a step already in view across at the zoom it is shown at.
        if before is not None and before["next"] and abs(before["zoom"]["scale"] - s["zoom"]["scale"]) < 1e-3:
            nx = before["next"]
            if nx[0] >= before["visible"][0] + EDGE - TOL and nx[2] <= before["visible"][2] - EDGE + TOL:
                assert abs(s["scroll"][0] - before["scroll"][0]) < 1, f"{where}: the box moved sideways"
        picture += overlapping_labels(s, where)
        # The explanation beside the diagram, its sentence in view.
        assert s["panel"][0] >= s["diagram"][2], f"{where}: the panel is not beside the diagram"
        assert s["sentence"][1] >= 0 and s["sentence"][3] <= s["window"][1], f"{where}: the sentence is out of view"

        step = trace.steps[k]
        if step.kind == "reduce":
            ids = {a["id"] for a in s["active"]}
            mark = f"red{step.op}_{step.input_index}"
            if mark not in ids or f"{mark}_e" not in ids:
                picture.append(f"{where}: the sum node {mark} and its edge are not both highlighted: {sorted(ids)}")
            label = viewer.evaluate(
                "(r, id) => r.querySelector(`.gv-diagram svg [id=\"${id}\"]`)?.textContent ?? ''", f"{mark}_e")
            if shape_text(step.shape_after) not in re.sub(r"\s", "", label):
                picture.append(f"{where}: the edge {mark}_e into the input does not carry its shape "
                               f"{shape_text(step.shape_after)}: {label!r}")
    assert picture == []


@pytest.mark.parametrize("size", [(1024, 640)], ids=["1024x640"])
def test_zoom_buttons_and_keys(size, sized_page, tmp_path):
    viewer = open_report(sized_page, broadcast_trace(), tmp_path)
    level = viewer.locator(".gv-zoom-level")
    assert level.text_content() == "100%"
    for cls, words in ((".gv-zoom-in", "zoom in"), (".gv-zoom-out", "zoom out")):
        button = viewer.locator(cls)
        assert words in button.get_attribute("aria-label") and words in button.get_attribute("title")
    # "whole graph" is named by the words it shows; its title says more.
    assert viewer.locator(".gv-zoom").get_attribute("aria-label") is None
    assert "whole diagram" in viewer.locator(".gv-zoom").get_attribute("title")
    viewer.locator(".gv-zoom-in").click()
    settle(viewer)
    assert level.text_content() == "125%"
    # The reader's zoom holds while stepping, as long as each step fits at it.
    viewer.locator(".gv-step-title").click()
    for k in range(1, 4):
        sized_page.keyboard.press("ArrowRight")
        wait_step(viewer, k)
        settle(viewer)
        s = see(viewer)
        check_zoom(s, 1.25, f"step {k} at 125%")
        for a in s["active"]:
            assert inside(a["r"], s["visible"]), (k, a)
    # 0: the whole graph, and again: back to 100%; then - and + from there.
    sized_page.keyboard.press("0")
    settle(viewer)
    assert viewer.evaluate("r => r.gvViewer.zoom.fit") and viewer.locator(".gv-zoom").text_content() == "zoom to 100%"
    sized_page.keyboard.press("0")
    settle(viewer)
    assert level.text_content() == "100%" and viewer.locator(".gv-zoom").text_content() == "whole graph"
    sized_page.keyboard.press("-")
    settle(viewer)
    assert level.text_content() == "80%"
    viewer.locator(".gv-zoom-in").click()
    settle(viewer)
    assert level.text_content() == "100%"
    s = see(viewer)
    for a in s["active"]:
        assert inside(a["r"], s["visible"]), a
    assert sized_page.locator(".gv-viewer").count() == 1


# The drawing shown in the diagram box (the overview or the drawing with values):
# how many SVGs the box holds and shows, the shown one's width in the layout's
# units, whether all of it lies in the box, its smallest visible text in px, its
# values, the elements it highlights, and the zoom and its note.
_SHOWN_JS = """r => {
    const box = r.querySelector('div.gv-diagram');
    const svgs = Array.from(box.querySelectorAll('svg'));
    const shown = svgs.filter(s => getComputedStyle(s).display !== 'none');
    const svg = shown[0];
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const sizes = Array.from(svg.querySelectorAll('text[font-size]'))
        .filter(t => getComputedStyle(t).visibility !== 'hidden' && t.textContent.trim())
        .map(t => parseFloat(t.getAttribute('font-size')) * scale);
    const sr = svg.getBoundingClientRect(), br = box.getBoundingClientRect();
    const whole = sr.left >= br.left - 1 && sr.top >= br.top - 1 &&
                  sr.right <= br.left + box.clientLeft + box.clientWidth + 1 &&
                  sr.bottom <= br.top + box.clientTop + box.clientHeight + 1;
    return {svgs: svgs.length, shown: shown.length, width: svg.viewBox.baseVal.width,
            least: Math.min(...sizes), whole, note: !r.querySelector('.gv-zoom-note').hidden,
            values: svg.querySelectorAll('.gv-forward-value, .gv-grad-value').length,
            active: Array.from(svg.querySelectorAll('.gv-active')).map(e => e.id).sort(),
            zoom: r.gvViewer.zoom, level: r.querySelector('.gv-zoom-level').textContent};
}"""

# Each element's hover text, in every SVG the box holds: {id: title} per SVG.
_TITLES_JS = """r => Array.from(r.querySelectorAll('div.gv-diagram svg')).map(svg => Object.fromEntries(
    Array.from(svg.querySelectorAll('g[id]')).filter(g => g.querySelector(':scope > title'))
        .map(g => [g.id, g.querySelector(':scope > title').textContent])))"""


def shown(viewer: Any) -> dict:
    return viewer.evaluate(_SHOWN_JS)


def payload_step_ids(viewer: Any) -> list[list[str]]:
    return viewer.evaluate("""r => JSON.parse(document.getElementById(
            r.closest('.gv-report-trace').dataset.payload).textContent).steps.map(s => s.ids)""")


# The MLP's overview is brief (one line per node, no gradient labels): about
# 375 x 510 pt, its least text 11 pt.  It fits the box whole with its text at
# 8 px or more at both sizes: the 1024x640 box is 528 x 416 px inside, so it
# shows at about 61%, its text near 9 px.  (The drawing without values but
# with every label, 637 x 719 pt, needed 523 px of height there.)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_whole_graph_shows_the_overview(size, sized_page, tmp_path, screenshot_dir):
    trace = two_layer_mlp()  # 7 ops: small enough for an overview
    viewer = open_report(sized_page, trace, tmp_path)
    steps = payload_step_ids(viewer)
    full = shown(viewer)
    assert full["values"] and not full["zoom"]["overview"] and full["svgs"] == 1, full
    viewer.locator(".gv-zoom").click()
    settle(viewer)
    sized_page.screenshot(path=screenshot_dir / f"view_mlp_whole_{size[0]}.png")
    out = shown(viewer)
    assert out["svgs"] == 2 and out["shown"] == 1 and out["zoom"]["overview"] and out["zoom"]["fit"], out
    assert out["values"] == 0 and out["width"] < 0.7 * full["width"], out
    assert out["least"] >= 7.9, out
    assert (out["whole"], out["note"]) == (True, False), out
    titles = viewer.evaluate(_TITLES_JS)
    assert len(titles[0]) > 20 and titles[1] == titles[0]  # the same hover text in both
    # Stepping in whole graph restyles the overview: each step's elements, in view.
    viewer.locator(".gv-step-title").click()
    for k in range(len(trace.steps)):
        if k:
            sized_page.keyboard.press("ArrowRight")
            wait_step(viewer, k)
            settle(viewer)
        out = shown(viewer)
        assert out["zoom"]["overview"] and out["active"] == sorted(steps[k]), (k, out)
        assert active_out_of_view(viewer) == [], k
    # Back a few steps, then 0: the drawing with values at 100%, at that step.
    for _ in range(5):
        sized_page.keyboard.press("ArrowLeft")
    k = len(trace.steps) - 6
    wait_step(viewer, k)
    sized_page.keyboard.press("0")
    settle(viewer)
    sized_page.screenshot(path=screenshot_dir / f"view_mlp_back_{size[0]}.png")
    out = shown(viewer)
    assert not out["zoom"]["overview"] and not out["zoom"]["fit"], out
    assert out["shown"] == 1 and out["values"] and out["active"] == sorted(steps[k]), out
    # (At 100%, or zoomed out just enough for a step too big for the box at it.)
    check_zoom(see(viewer), 1.0, f"step {k} after whole graph")
    assert active_out_of_view(viewer) == [], k
    # A zoom key leaves the overview too, for the drawing at 100%.
    sized_page.keyboard.press("0")
    settle(viewer)
    assert shown(viewer)["zoom"]["overview"]
    sized_page.keyboard.press("-")
    settle(viewer)
    out = shown(viewer)
    assert not out["zoom"]["overview"] and out["active"] == sorted(steps[k]), out
    check_zoom(see(viewer), 1.0, f"step {k} after whole graph and -")


@pytest.mark.parametrize("size", [(1400, 900)], ids=["1400x900"])
def test_whole_graph_of_twenty_ops_fits_readable(size, sized_page, tmp_path, screenshot_dir):
    trace = deep_mlp(6)  # 20 ops, 12 xs: an overview one line a node, 640 x 770 pt
    viewer = open_report(sized_page, trace, tmp_path)
    viewer.locator(".gv-zoom").click()
    settle(viewer)
    sized_page.screenshot(path=screenshot_dir / "view_mlp20_whole_1400.png")
    out = shown(viewer)
    assert out["zoom"]["overview"] and out["least"] >= 7.9, out
    assert (out["whole"], out["note"]) == (True, False), out


@pytest.mark.parametrize("size", [(1024, 640)], ids=["1024x640"])
def test_whole_graph_without_an_overview_zooms_the_drawing(size, sized_page, tmp_path, screenshot_dir):
    viewer = open_report(sized_page, scoped_tanh_chain(40), tmp_path)  # 122 ops drawn: no overview
    viewer.locator(".gv-zoom").click()
    settle(viewer)
    sized_page.screenshot(path=screenshot_dir / f"view_chain40_whole_{size[0]}.png")
    out = shown(viewer)
    assert out["svgs"] == 1 and out["zoom"]["fit"] and not out["zoom"]["overview"], out
    assert out["values"] and out["least"] >= 7.9 and out["note"] and not out["whole"], out
    assert active_out_of_view(viewer) == []
    sized_page.keyboard.press("0")
    settle(viewer)
    out = shown(viewer)
    assert out["level"] == "100%" and not out["note"] and out["svgs"] == 1, out


def active_out_of_view(viewer: Any) -> list[str]:
    s = see(viewer)
    return [a["id"] for a in s["active"] if not inside(a["r"], s["visible"])]


@pytest.mark.parametrize("size", [(1400, 900)], ids=["1400x900"])
def test_resizing_keeps_the_step_in_view(size, sized_page, tmp_path):
    trace = broadcast_trace()
    viewer = open_report(sized_page, trace, tmp_path)
    for k in range(len(trace.steps)):
        sized_page.set_viewport_size({"width": 1400, "height": 900})
        viewer.evaluate("(r, k) => r.gvViewer.go(k)", k)
        settle(viewer)
        sized_page.set_viewport_size({"width": 1024, "height": 640})
        settle(viewer)
        assert active_out_of_view(viewer) == [], k


@pytest.mark.parametrize("size", [(1024, 640)], ids=["1024x640"])
def test_reduced_motion_pans_at_once(size, sized_page, tmp_path):
    sized_page.emulate_media(reduced_motion="reduce")
    trace = stop_gradient_trace()
    viewer = open_report(sized_page, trace, tmp_path)
    for k in range(len(trace.steps)):
        moving = viewer.evaluate("""async (r, k) => {
            r.gvViewer.go(k);
            const frame = () => new Promise(done => requestAnimationFrame(done));
            await frame();
            await frame();
            return r.gvViewer.moving;
        }""", k)
        assert moving is False, k
        assert active_out_of_view(viewer) == [], k
