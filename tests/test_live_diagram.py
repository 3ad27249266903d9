"""The live diagram (gradviz.views.diagram.live): one layout that new values fill in.

Under both layout engines: the template's SVG, filled, says what the ordinary
diagram says (every hover text, every value); the same program at other
values is the same picture with other numbers, laid out once; every number
fits the room the layout gave it; a program of another structure is laid out
anew, once.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import gradviz as gv
from fixtures.traces import linear_regression, two_layer_mlp
from gradviz.views.diagram import _options, _plan, layout_svg
from gradviz.views.diagram.labels import ROOM
from gradviz.views.diagram.live import LiveLayouts, fill, live_svg, template

pytestmark = pytest.mark.usefixtures("each_layout_engine")

_GROUP = re.compile(r'<g id="([^"]+)" class="[^"]*">(.*?)</g>', re.DOTALL)


def titles(svg: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<title>([^<]*)</title>", svg)]


def value_text(svg: str) -> dict[str, str]:
    """Each element's values, its value lines joined, with no spaces."""
    out = {}
    for gid, body in _GROUP.findall(svg):
        lines = re.findall(r'<text class="gv-(?:grad|forward)-value"[^>]*>([^<]*)</text>', body)
        if lines:
            out[gid] = re.sub(r"[\s\u00a0]", "", html.unescape("".join(lines)))
    return out


def geometry(svg: str) -> str:
    """The SVG with every text and hover text emptied: where everything is drawn."""
    return re.sub(r"(<text[^>]*>)[^<]*</text>", r"\1</text>",
                  re.sub(r"<title>[^<]*</title>", "<title></title>", svg))


def regression(w: float, b: float) -> gv.Trace:
    X = gv.constant([[2.0], [3.0]], name="X")
    Y = gv.constant([[3.0], [2.0]], name="Y")
    W = gv.Variable(w, name="W")
    B = gv.Variable(b, name="b")
    cost = gv.multiply(0.5, gv.reduce_sum((X * W + B - Y) ** 2), name="cost")
    return gv.trace_gradients(cost, [W, B], title="lr")


@pytest.mark.parametrize("make", [linear_regression, two_layer_mlp])
def test_filled_template_says_what_the_diagram_says(make):
    tr = make()
    live, _ = live_svg(tr, LiveLayouts(), legend=False)
    plain = layout_svg(tr, legend=False)
    assert titles(live) == titles(plain)
    assert value_text(live) == value_text(plain)
    assert "@" not in "".join(re.findall(r">([^<]*)<", live))  # no token left


def test_other_values_are_the_same_picture_laid_out_once():
    layouts = LiveLayouts()
    first, key = live_svg(regression(1.6649098, 0.54648024), layouts)
    assert layouts.runs == 1
    for w, b in [(-3.0, 0.1), (1e-7, -250000.0), (0.0, 0.0)]:
        svg, k = live_svg(regression(w, b), layouts)
        assert k == key and layouts.runs == 1
        assert geometry(svg) == geometry(first)
        assert value_text(svg) != value_text(first)
        # and it says what that trace's own diagram says
        assert value_text(svg) == value_text(layout_svg(regression(w, b)))


def test_every_number_fits_its_room():
    # the widest numbers format_number writes, in every place of the drawing
    plan = _plan(regression(-1.234567e-5, -9.87654e6), _options(live=True))
    source, fills = template(plan.graph.source)
    for m in re.finditer(r'gv-(?:grad|forward)-value">(@+)(\d+)</FONT>', source):
        text, pad = fills[int(m.group(2))]
        assert pad + len(text) <= len(m.group(1)) + len(m.group(2)), (text, pad)
    widest = [t for t, _ in fills if "e-05" in t or "e+06" in t]
    assert widest and all(len(n) <= ROOM for t in widest
                          for n in re.findall(r"-?\d[\d.e+-]*", t))


def test_an_array_is_centred_in_its_room_in_a_node_and_left_in_an_edge_label():
    tr = regression(1.0, 0.5)
    svg, _ = live_svg(tr, LiveLayouts())
    lines = re.findall(r'<text class="gv-grad-value"[^>]*>([^<]*)</text>', svg)
    assert any(line.startswith("\u00a0") for line in lines)  # a node's values, centred
    edges = re.findall(r'<g id="e\d+_\d+" class="edge[^"]*gv-grad[^"]*">(.*?)</g>', svg, re.DOTALL)
    firsts = [re.findall(r'gv-grad-value"[^>]*>([^<]*)<', e)[0] for e in edges]
    assert len(firsts) >= 5 and not [t for t in firsts if t.startswith("\u00a0")]


def test_another_structure_is_laid_out_once_and_kept():
    layouts = LiveLayouts()

    def run(v: float) -> gv.Trace:
        x = gv.Variable(v, name="v")
        return gv.trace_gradients(x * x if v >= 0 else gv.exp(x), [x])

    a, ka = live_svg(run(1.0), layouts)
    b, kb = live_svg(run(-1.0), layouts)
    assert ka != kb and layouts.runs == 2
    again, k = live_svg(run(2.0), layouts)
    assert k == ka and layouts.runs == 2 and geometry(again) == geometry(a)


def test_fill_escapes_what_it_writes():
    svg = fill('<title>@0</title><text class="gv-forward-value" x="1">@@1</text>',
               [('a "b" <c> & d\ne', 0), ("[1, 2]", 1)])
    assert svg == ('<title>a "b" &lt;c&gt; &amp; d&#10;e</title>'
                   '<text class="gv-forward-value" x="1">\u00a0[1, 2]</text>')


def test_a_name_with_quotes_and_backslashes_keeps_its_hover_text():
    x = gv.Variable(np.float32(2.0), name='x_"q"')
    with gv.name_scope("s\\t"):
        y = gv.multiply(x, x, name="m")
    tr = gv.trace_gradients(y, [x])
    live, _ = live_svg(tr, LiveLayouts())
    assert titles(live) == titles(layout_svg(tr))
