"""The picture a viewer leaves for a page with no kernel (gradviz.views.picture).

It must be the viewer's own drawing (the same laid-out SVG, no second layout)
at the last step as the viewer draws it, with the legend, honour the view
options, and come with every way a trace is shown: ``gv.show``, a trace as a
cell's last expression, and ``gv.explore``: in the one mime bundle of
``_repr_mimebundle_``, and as the output of its own that a displayed viewer
publishes after the widget.  The browser side (nbconvert's page in Chromium)
is in ``tests/test_nbconvert.py`` and ``tests/test_reports_browser.py``.
"""

from __future__ import annotations

import base64
import re
from html import unescape

import numpy as np
import pytest

import gradviz as gv
from fixtures.traces import linear_regression
from gradviz.views import diagram
from gradviz.views.diagram import layout
from gradviz.views.picture import picture_html, picture_svg
from gradviz.views import widget as widget_module
from gradviz.views.widget import FALLBACK_CLASS, TraceWidget

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_G = re.compile(r'<g id="([^"]*)" class="([^"]*)"')
_GEOMETRY = re.compile(r'\s(?:d|points|x|y|cx|cy|rx|ry)="[^"]*"')


def _svg(html: str) -> str:
    svg = picture_svg(html)
    assert svg.startswith("<svg class=\"gv-svg") and svg.endswith("</svg>\n")
    return svg


def _classes(svg: str) -> dict[str, set[str]]:
    return {m.group(1): set(m.group(2).split()) for m in _G.finditer(svg)}


def test_the_picture_is_the_viewers_drawing_at_its_last_step():
    tr = linear_regression()
    w = gv.show(tr)
    data, _ = w._repr_mimebundle_()
    assert set(data) == {"text/plain", WIDGET_MIME, "text/html"}
    svg = _svg(data["text/html"])
    # the same drawing, shape for shape (the payload's own layout)
    assert _GEOMETRY.findall(svg) == _GEOMETRY.findall(w.payload["svg"])
    assert [m.group(1) for m in _G.finditer(svg)] == [m.group(1) for m in _G.finditer(w.payload["svg"])]
    # at the last step: its elements active, every other element a step touched done
    steps = w.payload["steps"]
    touched = {i for s in steps for i in s["ids"]}
    classes = _classes(svg)
    active = {i for i, c in classes.items() if "gv-active" in c}
    done = {i for i, c in classes.items() if "gv-done" in c}
    assert active == set(steps[-1]["ids"]) != set()
    assert done == touched - active
    assert not any("gv-pending" in c for c in classes.values())
    assert "<style>" in svg and ".gv-active" in svg
    # and so, as the diagram module says for that step
    assert {i for i, c in diagram.step_classes(tr, len(tr.steps) - 1).items()
            if c == "gv-active"} == active


def test_the_picture_has_the_title_the_last_step_and_the_legend():
    tr = linear_regression("<b>fit</b> & check")
    html = gv.show(tr)._repr_mimebundle_()[0]["text/html"]
    assert "&lt;b&gt;fit&lt;/b&gt; &amp; check" in html and "<b>fit" not in html
    n = len(tr.steps)
    assert f"Step {n - 1} / {n - 1}: result for b" in html
    assert (f"A picture of step {n - 1}, the last: in JupyterLab with a running kernel, "
            "the viewer steps through it live." in html)
    legend = html[html.index('class="gv-picture-legend"'):]
    labels = [unescape(t) for t in re.findall(r"<span>([^<]*)</span>", legend)]
    marks = [m for m in gv.show(tr).payload["legend"] if m["mark"] != "active"]
    assert labels == ["done: gradient has flowed here", "the last step", *(m["label"] for m in marks)]
    swatches = [base64.b64decode(u).decode() for u in
                re.findall(r'<img alt="" width="36" height="20" src="data:image/svg\+xml;base64,([^"]*)"',
                           legend)]
    assert len(swatches) == len(labels)  # an image each
    assert 'stroke="#0072B2"' in swatches[0]  # done: the gradient's blue, as an attribute
    assert 'stroke-width="3"' in swatches[1]  # the last step: thick
    # nothing a sanitiser removes: no inline <svg> or <style> in the HTML itself
    assert "<svg" not in html and "<style" not in html
    assert 'alt="The diagram of &lt;b&gt;fit&lt;/b&gt; &amp; check at its last step' in html


def test_no_second_layout_is_made(monkeypatch):
    tr = linear_regression()
    w = gv.show(tr)

    def no_layout(source: str) -> str:
        raise AssertionError("the picture ran a layout")

    monkeypatch.setattr(layout, "render", no_layout)
    assert "<svg" in picture_svg(w._repr_mimebundle_()[0]["text/html"])
    assert "<svg" in picture_svg(tr._repr_mimebundle_()[0]["text/html"])  # the cached payload, again


@pytest.mark.parametrize(("options", "root"), [
    ({}, 'class="gv-svg"'),
    ({"values": "gradient"}, 'class="gv-svg gv-hide-forward"'),
    ({"values": "forward"}, 'class="gv-svg gv-hide-grad"'),
    ({"practice": True}, 'class="gv-svg gv-hide-grad"'),
])
def test_the_view_options_hold_in_the_picture(options, root):
    html = gv.show(linear_regression(), **options)._repr_mimebundle_()[0]["text/html"]
    assert picture_svg(html).startswith(f"<svg {root}")


def test_a_trace_as_the_last_expression_and_an_explorer_carry_the_picture():
    data, _ = linear_regression()._repr_mimebundle_()
    assert "text/html" in data and '<svg class="gv-svg"' in picture_svg(data["text/html"])

    X = gv.constant([[2.0], [3.0]], name="X")
    ex = gv.explore(lambda W, b: gv.reduce_sum(X * W + b), W=1.6649098,
                    b=np.array([0.5, 1.0], dtype=np.float32))
    data, metadata = ex._repr_mimebundle_()
    assert set(data) == {"text/plain", WIDGET_MIME, "text/html"}
    assert data[WIDGET_MIME]["model_id"] == ex.model_id
    assert metadata == TraceWidget._repr_mimebundle_(ex.viewer)[1]
    html = data["text/html"]
    assert "at W = 1.665, b = [0.5, 1]" in html
    assert re.search(r">\s*10\s*</text>", picture_svg(html))  # dL/dW = 2 * (2 + 3): X * W is added to both of b
    ex.set(W=0.5)
    html = ex._repr_mimebundle_()[0]["text/html"]
    assert "at W = 0.5, b = [0.5, 1]" in html


def test_a_displayed_explorer_is_the_explorer_then_its_viewers_picture(monkeypatch):
    outputs = []
    monkeypatch.setattr(widget_module, "display",
                        lambda data, *, metadata=None, raw=False: outputs.append((data, metadata)))
    ex = gv.explore(lambda W: gv.reduce_sum(W * W), W=1.5)
    ex.set(W=2.25)
    ex._ipython_display_()
    (explorer, metadata), (fallback, _) = outputs
    assert set(explorer) == {WIDGET_MIME, "text/plain"}
    assert explorer[WIDGET_MIME]["model_id"] == ex.model_id  # the box, controls and viewer
    assert metadata == TraceWidget._repr_mimebundle_(ex.viewer)[1]
    last = ex.viewer.num_steps - 1
    assert explorer["text/plain"] == f"gradviz explorer: what if, at W = 2.25, step {last} / {last}"
    html = fallback["text/html"]
    assert html.startswith(f'<div class="{FALLBACK_CLASS}"><div class="gv-picture"')
    assert "at W = 2.25" in html and re.search(r">\s*4\.5\s*</text>", picture_svg(html))  # 2 * W
    assert fallback["text/plain"].startswith("what if, at W = 2.25. A picture of step ")


def test_a_payload_without_a_drawing_has_no_picture():
    w = TraceWidget(payload={"title": "t", "steps": [{"index": 0}, {"index": 1}]})
    data, _ = w._repr_mimebundle_()
    assert "text/html" not in data and WIDGET_MIME in data
    assert picture_html({}) == ""


def test_in_colab_an_explorer_turns_on_the_widget_manager_its_viewer_needs(monkeypatch):
    """Colab shows third-party widgets only once its custom widget manager is on,
    which anywidget turns on when asked for a bundle. An explorer is an ipywidgets
    box, so it asks its viewer (a stand-in for Colab's module here)."""
    import sys
    import types

    from anywidget import _util

    calls = []
    colab = types.ModuleType("google.colab.output")
    colab.enable_custom_widget_manager = lambda: calls.append("on")
    colab._widgets = types.SimpleNamespace(_installed_url="https://colab.example/manager.js")
    monkeypatch.setitem(sys.modules, "google.colab.output", colab)
    _util.enable_custom_widget_manager_once.cache_clear()
    try:
        ex = gv.explore(lambda W: W * W, W=1.0)
        data, metadata = ex._repr_mimebundle_()
    finally:
        _util.enable_custom_widget_manager_once.cache_clear()
    assert calls == ["on"]
    assert metadata == {WIDGET_MIME: {"colab": {"custom_widget_manager": {
        "url": "https://colab.example/manager.js"}}}}
    assert "text/html" in data and WIDGET_MIME in data


def test_a_hand_made_payload_with_other_view_keys_still_has_its_picture():
    payload = {**gv.show(linear_regression()).payload}
    payload["view"] = {**payload["view"], "theme": "dark", "start_step": 99}
    assert picture_svg(TraceWidget(payload=payload)._repr_mimebundle_()[0]["text/html"])
