"""The annotated diagram on the seed cases: stable ids, step classes, marks, escaping."""

from __future__ import annotations

import functools
import itertools
import re
import xml.etree.ElementTree as ET

import graphviz
import numpy as np
import pytest

import gradviz as gv
from gradviz.trace import BackwardStep, Trace
from gradviz.views import diagram
from gradviz.views.explain import display_name

# Every test here holds under both Graphviz engines (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("each_layout_engine")

SVG = "{http://www.w3.org/2000/svg}"
_uid = itertools.count()


def _n(name: str) -> str:
    """A name unique in this process (the engine suffixes repeated names)."""
    return f"{name}{next(_uid)}"


# ---------------------------------------------------------------- the seed cases
# (also imported by test_explain.py and test_viewdata.py)


def linreg_trace() -> Trace:
    X = gv.constant([[2.0], [3.0]], name=_n("X"))
    Y = gv.constant([[3.0], [2.0]], name=_n("Y"))
    W = gv.Variable(1.6649098, name=_n("W"))
    b = gv.Variable(0.54648024, name=_n("b"))
    pred = X * W + b
    cost = 0.5 * gv.reduce_sum((pred - Y) ** 2)
    return gv.trace_gradients(cost, [W, b])


def partial_trace(stop: bool) -> Trace:
    a = gv.constant(0.0, name=_n("a"))
    b = 2 * a
    return gv.trace_gradients(a + b, [a, b], stop_gradients=[a, b] if stop else None)


def unconnected_trace(mode: str) -> Trace:
    a = gv.ones([1, 2], name=_n("a"))
    b = gv.ones([3, 1], name=_n("b"))
    return gv.trace_gradients([b], [a], unconnected_gradients=mode)


def matmul_stop_trace() -> Trace:
    a = gv.constant([[1.0, 2.0], [3.0, 4.0]], name=_n("a"))
    b = gv.constant([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], name=_n("b"))
    c = gv.matmul(a, b)
    return gv.trace_gradients(c * gv.stop_gradient(c), a)


def square_trace() -> Trace:
    x = gv.constant([1.0, 2.0], name=_n("x"))
    return gv.trace_gradients(x * x, x)


SEEDS = {
    "linreg": linreg_trace,
    "partial": lambda: partial_trace(False),
    "partial_stop": lambda: partial_trace(True),
    "unconnected_none": lambda: unconnected_trace("none"),
    "unconnected_zero": lambda: unconnected_trace("zero"),
    "matmul_stop": matmul_stop_trace,
    "x_times_x": square_trace,
}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def groups(svg: str) -> dict[str, ET.Element]:
    """id -> <g> element; fails on a duplicate id."""
    out: dict[str, ET.Element] = {}
    for g in parse(svg).iter(f"{SVG}g"):
        i = g.get("id")
        if i is None:
            continue
        assert i not in out, f"duplicate id {i!r}"
        out[i] = g
    return out


def classes(g: ET.Element) -> set[str]:
    return set((g.get("class") or "").split())


def text_of(g: ET.Element) -> str:
    return " ".join("".join(t.itertext()) for t in g.iter(f"{SVG}text"))


@pytest.fixture(params=sorted(SEEDS))
def seed(request: pytest.FixtureRequest) -> tuple[str, Trace]:
    return request.param, SEEDS[request.param]()


# ---------------------------------------------------------------- stable ids


@pytest.mark.parametrize("compact", [True, False])
def test_one_element_per_node_and_edge(seed: tuple[str, Trace], compact: bool) -> None:
    _, tr = seed
    g = groups(diagram.layout_svg(tr, compact=compact))
    for t in tr.tensors:
        if compact and t.op is not None and len(tr.ops[t.op].outputs) == 1:
            # One node with its op: the op's type above, the tensor below.
            assert f"t{t.id}" not in g and f"o{t.op}_out0" not in g
            assert {"node", "gv-merged", "gv-op", "gv-tensor"} <= classes(g[f"o{t.op}"])
            assert display_name(t, scoped=False) in text_of(g[f"o{t.op}"])
            continue
        assert "node" in classes(g[f"t{t.id}"])
    for o in tr.ops:
        assert "node" in classes(g[f"o{o.id}"])
        for i in range(len(o.inputs)):
            assert "edge" in classes(g[f"e{o.id}_{i}"])
        for k in range(len(o.outputs) if len(o.outputs) > 1 or not compact else 0):
            assert "edge" in classes(g[f"o{o.id}_out{k}"])
    for s in tr.steps:
        if s.kind == "seed":
            assert f"seed{s.tensor}" in g
        if s.kind == "result":
            assert f"res{s.x_index}" in g
    assert "legend" in g
    # Nothing but trace-derived ids: no graphviz "node12" / "edge7" fallbacks.
    assert not [i for i in g if re.fullmatch(r"(node|edge|clust)\d+", i)]


def test_every_node_and_gradient_edge_has_hover_text(seed: tuple[str, Trace]) -> None:
    _, tr = seed
    g = groups(diagram.layout_svg(tr, legend=False))
    for i, el in g.items():
        if "node" in classes(el) or "gv-grad" in classes(el):
            title = el.find(f"{SVG}title")
            assert title is not None and title.text, i
            # A dtype: the hover text gives the values' shape and dtype.
            assert re.search(r"float32|no gradient|cut at", title.text), (i, title.text)


def test_every_step_id_is_in_the_svg(seed: tuple[str, Trace]) -> None:
    _, tr = seed
    g = groups(diagram.layout_svg(tr))
    for k in range(len(tr.steps)):
        ids = diagram.step_ids(tr, k)
        assert ids and len(ids) == len(set(ids))
        assert set(ids) <= set(g), (k, set(ids) - set(g))


def test_active_elements_are_exactly_the_step_ids(seed: tuple[str, Trace]) -> None:
    _, tr = seed
    for k in range(len(tr.steps)):
        g = groups(diagram.to_svg(tr, step=k))
        active = {i for i, e in g.items() if "gv-active" in classes(e)}
        assert active == set(diagram.step_ids(tr, k)), k
        for i, e in g.items():
            c = classes(e) & {"gv-pending", "gv-done", "gv-active"}
            assert len(c) <= 1, (i, c)


def test_done_and_pending_follow_the_first_step_touching_them() -> None:
    tr = linreg_trace()
    first: dict[str, int] = {}
    for k in range(len(tr.steps)):
        for i in diagram.step_ids(tr, k):
            first.setdefault(i, k)
    k = 5
    g = groups(diagram.to_svg(tr, step=k))
    active = set(diagram.step_ids(tr, k))
    for i, f in first.items():
        want = "gv-active" if i in active else ("gv-done" if f < k else "gv-pending")
        assert want in classes(g[i]), (i, want)
    # Untouched: the forward graph that no gradient reaches, and the legend.
    assert not classes(g["legend"]) & {"gv-pending", "gv-done", "gv-active"}
    # step=None: everything touched is done, nothing active.
    g = groups(diagram.to_svg(tr))
    assert not [i for i, e in g.items() if "gv-active" in classes(e)]
    assert all("gv-done" in classes(g[i]) for i in first)


def test_x_times_x_draws_two_distinct_edges_and_an_accumulation() -> None:
    tr = square_trace()
    (mul,) = tr.ops
    assert mul.inputs[0] == mul.inputs[1]
    g = groups(diagram.layout_svg(tr))
    paths = [g[f"e{mul.id}_{i}"].find(f"{SVG}path").get("d") for i in (0, 1)]
    assert paths[0] != paths[1]
    # Both carry the gradient they sent back: [1, 2] each.
    for i in (0, 1):
        assert "[1, 2]" in text_of(g[f"e{mul.id}_{i}"])
    acc = next(s for s in tr.steps if s.kind == "accumulate")
    assert set(diagram.step_ids(tr, acc.index)) >= {f"t{acc.tensor}", f"acc{acc.tensor}",
                                                     f"e{mul.id}_0", f"e{mul.id}_1"}
    assert "[1, 2] + [1, 2] =" in text_of(g[f"acc{acc.tensor}"])
    assert "[2, 4]" in text_of(g[f"acc{acc.tensor}"])
    assert {"gv-sum", "gv-accumulate"} <= classes(g[f"acc{acc.tensor}"])
    # The sum sits on the gradient's path: both contributions flow into it
    # (the edges leave it, in forward direction) and the total flows on into x.
    ends = edge_ends(tr)
    for i in (0, 1):
        assert ends[f"e{mul.id}_{i}"] == (f"acc{acc.tensor}", f"o{mul.id}")
    assert ends[f"acc{acc.tensor}_e"] == (f"t{acc.tensor}", f"acc{acc.tensor}")
    assert "[2, 4]" in text_of(g[f"acc{acc.tensor}_e"])


# ---------------------------------------------------------------- marks


def edge_ends(tr: Any) -> dict[str, tuple[str, str]]:
    """Edge id -> (tail, head) node names, read from the diagram's DOT source."""
    ends = {}
    for line in diagram.to_dot(tr).source.splitlines():
        m = re.match(r"\s*(\w+) -> (\w+) \[.*\bid=(\w+)", line)
        if m:
            ends[m.group(3)] = (m.group(1), m.group(2))
    return ends


def test_linreg_marks_seed_reductions_results_and_gradient_labels() -> None:
    tr = linreg_trace()
    g = groups(diagram.layout_svg(tr))
    (y,) = tr.ys
    assert "seed: ones (default)" in text_of(g[f"seed{y}"])
    reduces = [s for s in tr.steps if s.kind == "reduce"]
    assert len(reduces) == 2
    for r in reduces:
        mark = g[f"red{r.op}_{r.input_index}"]
        mid = f"red{r.op}_{r.input_index}"
        assert {"gv-sum", "gv-reduce"} <= classes(mark)
        assert "\u03a3 over axes (0, 1)" in text_of(mark)
        assert "(2,1) \u2192 scalar" in text_of(mark)  # a scalar is "scalar", not ()
        # On the gradient's path: the op's broadcast gradient flows back into
        # the mark, the summed one on into the input; at its step the mark
        # and the summed edge light up, not the op's edge (an earlier step).
        t_in = f"t{tr.ops[r.op].inputs[r.input_index]}"
        assert edge_ends(tr)[f"e{r.op}_{r.input_index}"] == (mid, f"o{r.op}")
        assert edge_ends(tr)[f"{mid}_e"] == (t_in, mid)
        assert diagram.step_ids(tr, r.index) == [mid, f"{mid}_e", t_in]
    res = {s.x_index: s for s in tr.steps if s.kind == "result"}
    assert "12.38" in text_of(g["res0"]) and "4.418" in text_of(g["res1"])
    assert {"gv-mark", "gv-result"} <= classes(g["res0"])
    assert set(diagram.step_ids(tr, res[0].index)) == {f"t{res[0].tensor}", "res0", "res0_e"}
    # Each edge a gradient flows along carries it, with its shape.
    for s in tr.steps:
        if isinstance(s, BackwardStep):
            for i, grad in enumerate(s.grads):
                if grad is not None:
                    e = g[f"e{s.op}_{i}"]
                    assert "gv-grad" in classes(e)
                    shape = diagram.format_shape(grad.shape) if grad.shape else "scalar"
                    assert shape in text_of(e)
    assert {"gv-grad-value", "gv-forward-value"} <= {
        c for t in parse(diagram.layout_svg(tr)).iter(f"{SVG}text")
        for c in (t.get("class") or "").split()}


def test_given_and_summed_seeds() -> None:
    x = gv.constant([1.0, 2.0], name=_n("x"))
    y1, y2 = x * 3.0, gv.reduce_sum(x)
    tr = gv.trace_gradients([y1, y2], x, grad_ys=[gv.constant([2.0, 3.0]), None])
    g = groups(diagram.layout_svg(tr))
    assert "seed: grad_ys[0]" in text_of(g[f"seed{tr.ys[0]}"])
    assert "summed over 2 ys" in text_of(g[f"seed{tr.ys[0]}"])
    assert "seed: ones (default)" in text_of(g[f"seed{tr.ys[1]}"])


def test_stop_gradient_op_is_a_cut_edge_with_its_reason() -> None:
    tr = matmul_stop_trace()
    cut = next(s for s in tr.steps if s.kind == "cut")
    assert cut.reason == "stop_gradient"
    g = groups(diagram.layout_svg(tr))
    edge = g[f"e{cut.op}_{cut.input_index}"]
    assert "gv-cutedge" in classes(edge)
    mark = g[f"cut{cut.op}_{cut.input_index}"]
    assert {"gv-mark", "gv-cut"} <= classes(mark)
    assert "stop_gradient op" in text_of(mark)
    # its one step: the StopGradient node, where the gradient arrives, and the cut edge
    assert set(diagram.step_ids(tr, cut.index)) == {
        f"o{cut.op}", f"e{cut.op}_{cut.input_index}", f"cut{cut.op}_{cut.input_index}",
        f"cut{cut.op}_{cut.input_index}_e"}
    assert not [s for s in tr.steps if s.kind == "backward" and s.op == cut.op]
    # The cut edge is dashed only once the cut has happened (by CSS).
    assert "gv-cutedge.gv-done > path" in diagram.diagram_css()


def test_stop_gradients_argument_cuts_the_tensors_producer() -> None:
    tr = partial_trace(True)
    cut = next(s for s in tr.steps if s.kind == "cut")
    assert cut.reason == "stop_gradients" and cut.input_index is None
    g = groups(diagram.layout_svg(tr, compact=False))
    assert "in stop_gradients" in text_of(g[f"cutt{cut.tensor}"])
    out = f"o{cut.op}_out{tr.ops[cut.op].outputs.index(cut.tensor)}"
    assert "gv-cutedge" in classes(g[out])
    assert out in diagram.step_ids(tr, cut.index, compact=False)
    # Drawn compact, the tensor is one node with its producer: the cut marks it.
    producer = tr.tensors[cut.tensor].op
    assert diagram.step_ids(tr, cut.index) == [f"o{producer}", f"cutt{cut.tensor}",
                                               f"cutt{cut.tensor}_e"]


def test_integer_cut() -> None:
    v = gv.Variable(2.0, name=_n("v"))
    i = gv.cast(v, gv.int32)
    with pytest.warns(UserWarning, match="integers are constants"):
        tr = gv.trace_gradients(gv.cast(i, gv.float32) * v, [v, i])
    cut = next(s for s in tr.steps if s.kind == "cut")
    g = groups(diagram.layout_svg(tr))
    assert cut.reason == "integer"
    assert "integer tensor" in text_of(g[f"cut{cut.op}_{cut.input_index}"])
    assert "integer" in text_of(g["res1"]) and "gv-unconnected" in classes(g["res1"])


@pytest.mark.parametrize("mode,shown", [("none", "None"), ("zero", "zeros")])
def test_unconnected_results(mode: str, shown: str) -> None:
    tr = unconnected_trace(mode)
    g = groups(diagram.layout_svg(tr))
    assert {"gv-mark", "gv-unconnected"} <= classes(g["res0"])
    assert shown in text_of(g["res0"]) and "unconnected" in text_of(g["res0"])
    if mode == "zero":
        assert "[[0, 0]]" in text_of(g["res0"])


def test_legend_lists_exactly_the_marks_used() -> None:
    g = groups(diagram.layout_svg(matmul_stop_trace()))
    legend = text_of(g["legend"])
    assert "cut (red octagon" in legend and "seed (orange" in legend
    assert "broadcast reduction" not in legend and "fan-out" not in legend
    legend = text_of(groups(diagram.layout_svg(linreg_trace()))["legend"])
    assert "broadcast reduction" in legend and "cut (" not in legend


# ---------------------------------------------------------------- escaping


def test_hostile_names_come_out_as_text() -> None:
    evil = 'a"b<script>&'
    x = gv.constant([1.0, 2.0], name=evil)
    with gv.name_scope('s"<b>&'):
        y = x * x
    tr = gv.trace_gradients(y, x)
    tr.title = "<script>alert(1)</script>"
    svg = diagram.to_svg(tr, step=0)
    root = parse(svg)  # well-formed XML
    assert not [e for e in root.iter() if e.tag.split("}")[-1] in ("script", "b", "foreignObject")]
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert any(evil in t for t in texts)
    assert any('s"<b>&' in t for t in texts)
    assert "<script" not in svg
    assert "alert" not in svg


# ---------------------------------------------------------------- one layout


def test_step_states_change_paint_only() -> None:
    # stroke-width and font-weight in the state rules made the browser
    # recompute each touched element's geometry: a jump on a 1000-op drawing
    # took 160 ms.  Colours, dashes, opacity, visibility and filters repaint only.
    css = re.sub(r"/\*.*?\*/", "", diagram.diagram_css(), flags=re.DOTALL)
    layout_props = {"stroke-width", "font-weight", "font-size", "font-family", "width",
                    "height", "transform", "letter-spacing", "display"}
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        if not re.search(r"gv-(pending|done|active)", selector):
            continue
        props = {d.split(":")[0].strip() for d in body.split(";") if ":" in d}
        assert not props & layout_props, (selector.strip(), props & layout_props)
    assert "drop-shadow(0 0 0.7px #000000)" in css  # the active step's black halo


RAW = """<svg width="62pt" height="52pt" viewBox="0.00 0.00 62.00 52.00">
<g id="graph0" class="graph" transform="scale(1 1) rotate(0) translate(4 48.89)">
<polygon fill="white" stroke="transparent" points="-4,4 -4,-48.89 58,-48.89 58,4 -4,4"/>
<g id="t0" class="node"><path fill="#ffffff" stroke="black" d="M10,-40.89C10,-40.89 20,-40.89 20,-40.89 26,-40.89 26,-34.89 26,-34.89"/>
<text text-anchor="start" x="12.5" y="-30.39" font-size="10.00">a &lt; b</text>
<ellipse fill="none" stroke="black" cx="27" cy="-18" rx="27" ry="18"/></g>
</g>
</svg>"""


def test_layout_has_no_transform_and_states_the_defaults_once() -> None:
    # A transform on the group holding everything stops Chromium from culling
    # the drawing when it paints a step: 47 ms a step at 1,000 ops, 9 ms without.
    svg = diagram.layout_svg(linreg_trace())
    assert " transform=" not in svg
    assert 'text-anchor="start"' not in svg and not re.search(r'font-size="\d+\.00"', svg)
    # Values take their monospace font from diagram.css, not from each <text>.
    assert '<text class="gv-forward-value"' in svg and "Courier" not in svg
    assert re.search(r'\.gv-grad-value \{\s*font-family: "Courier New", Courier, monospace;',
                     diagram.diagram_css())
    folded = diagram._compact(diagram._fold_translate(RAW))
    assert folded == RAW.replace(' transform="scale(1 1) rotate(0) translate(4 48.89)"', "").replace(
        'points="-4,4 -4,-48.89 58,-48.89 58,4 -4,4"', 'points="0,52.89 0,0 62,0 62,52.89 0,52.89"').replace(
        'd="M10,-40.89C10,-40.89 20,-40.89 20,-40.89 26,-40.89 26,-34.89 26,-34.89"',
        'd="M14,8L24,8C30,8 30,14 30,14"').replace(
        '<text text-anchor="start" x="12.5" y="-30.39" font-size="10.00">',
        '<text x="16.5" y="18.5" font-size="10">').replace('cx="27" cy="-18"', 'cx="31" cy="30.89"')


@pytest.mark.parametrize("odd", [
    '<rect x="1" y="2" width="3" height="4"/>',  # geometry in width/height
    '<text x="1.125" y="2">three decimals</text>',
    '<path fill="none" stroke="black" d="M1,2Q3,4 5,6"/>',  # a command graphviz does not write
    "<g transform='translate(1 2)'></g>",  # a tag it does not read
])
def test_fold_leaves_geometry_it_cannot_move_alone(odd: str) -> None:
    raw = RAW.replace("</g>\n</g>", f"</g>\n{odd}\n</g>")
    assert diagram._fold_translate(raw) == raw


def test_straight_sides_keep_curves_and_dashed_shapes() -> None:
    assert diagram._straight_sides("M1,2C1,2 5,2 5,2 7,2 9,4 9,6") == "M1,2L5,2C7,2 9,4 9,6"
    assert diagram._straight_sides("M1,2C1,2 5,2 5,2 5,2 5,8 5,8") == "M1,2L5,2 5,8"
    dashed = '<path fill="white" stroke="#999999" stroke-dasharray="5,2" d="M1,2C1,2 5,2 5,2"/>'
    assert diagram._compact(dashed) == dashed  # dashes follow the curve's parameter
    edge = '<path fill="none" stroke="#444444" d="M1,2C1,2 5,2 5,2"/>'
    assert diagram._compact(edge) == edge


def test_graphviz_runs_once_for_a_whole_step_through(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = []
    orig = diagram.layout.render

    def counting(source):
        runs.append(1)
        return orig(source)

    monkeypatch.setattr(diagram.layout, "render", counting)
    tr = linreg_trace()
    layouts = {diagram.to_svg(tr, step=k).split("<style>")[0] for k in range(len(tr.steps))}
    diagram.to_svg(tr)
    assert len(runs) == 1
    assert len(layouts) == 1  # the same layout at every step: nothing moves
    from gradviz.views.viewdata import view_data
    # The viewer's drawing has no legend: its own options, its own layout; and
    # (a small drawing) its overview without values, one layout more.
    view_data(tr)
    view_data(tr)
    for k in range(len(tr.steps)):
        diagram.step_ids(tr, k, legend=False)
    assert len(runs) == 3
    diagram.layout_svg(tr, rankdir="LR")
    assert len(runs) == 4  # other options, another layout


def test_layout_is_the_same_at_every_step_apart_from_classes() -> None:
    tr = linreg_trace()
    strip = re.compile(r" gv-(pending|done|active)")
    css_free = [strip.sub("", diagram.to_svg(tr, step=k)) for k in range(len(tr.steps))]
    assert len(set(css_free)) == 1


def test_output_is_deterministic() -> None:
    text = linreg_trace().to_json()
    a, b = Trace.from_json(text), Trace.from_json(text)
    assert diagram.to_svg(a, step=3) == diagram.to_svg(b, step=3)
    assert diagram.to_dot(a).source == diagram.to_dot(b).source


def test_trace_methods_delegate_here() -> None:
    tr = square_trace()
    assert isinstance(tr.to_dot(), graphviz.Digraph)
    assert tr.to_svg(step=1) == diagram.to_svg(tr, step=1)


# ---------------------------------------------------------------- options


def test_bad_options_are_clear_errors() -> None:
    tr = square_trace()
    with pytest.raises(ValueError, match=r"unknown rankdir: 'XX' \(must be one of TB, LR, BT, RL\)"):
        diagram.to_dot(tr, rankdir="XX")
    with pytest.raises(ValueError, match="values must be one of 'all', 'gradient', 'forward', 'none'"):
        diagram.to_svg(tr, values="yes")
    with pytest.raises(ValueError, match="unknown name scope 'nope'"):
        diagram.to_svg(tr, collapse=["nope"])
    with pytest.raises(ValueError, match=r"step 4 out of range: the trace has 4 steps \(0..3\)"):
        diagram.to_svg(tr, step=4)
    with pytest.raises(ValueError, match="step must be an integer"):
        diagram.step_ids(tr, 1.5)
    with pytest.raises(TypeError, match="to_svg\\(\\) got an unknown option 'colour'"):
        diagram.to_svg(tr, colour="red")


@pytest.mark.parametrize("rankdir,arrow", [("LR", "\u2190"), ("BT", "\u2193"), ("TB", "\u2191")])
def test_rankdir_turns_the_gradient_arrows(rankdir: str, arrow: str) -> None:
    tr = square_trace()
    g = groups(diagram.layout_svg(tr, rankdir=rankdir))
    assert text_of(g["e0_0"]).startswith(f"{arrow} (2,)")


def test_values_false_keeps_shapes_and_drops_values() -> None:
    tr = linreg_trace()
    g = groups(diagram.layout_svg(tr, values=False))
    assert "gv-forward-value" not in diagram.layout_svg(tr, values=False)
    edge = next(i for i, e in g.items() if "gv-grad" in classes(e))
    assert re.search(r"\(\d+,\d+\)|scalar", text_of(g[edge]))


# ---------------------------------------------------------------- name scopes


def scoped_trace(layers: int = 3) -> Trace:
    h = gv.constant(np.ones((2, 3), np.float32), name=_n("x"))
    params = []
    for i in range(layers):
        with gv.name_scope(f"layer{i}"):
            W = gv.Variable(np.full((3, 3), 0.1, np.float32), name="W")
            b = gv.Variable(np.zeros(3, np.float32), name="b")
            h = gv.tanh(gv.matmul(h, W) + b)
        params += [W, b]
    return gv.trace_gradients(gv.reduce_sum(h), params)


def test_scopes_are_clusters_when_open() -> None:
    tr = scoped_trace()
    svg = diagram.layout_svg(tr, collapse=False)
    clusters = [g for g in parse(svg).iter(f"{SVG}g") if "cluster" in classes(g)]
    assert len(clusters) == 3
    assert all(re.fullmatch(r"cluster\d+", c.get("id")) for c in clusters)
    assert {"layer0", "layer1", "layer2"} <= {text_of(c).split()[0] for c in clusters}


def test_a_collapsed_scope_is_one_node_that_steps_touch() -> None:
    tr = scoped_trace()
    svg = diagram.layout_svg(tr, collapse=["layer1"])
    g = groups(svg)
    scope_ids = [i for i in g if i.startswith("scope")]
    assert len(scope_ids) == 1
    sid = scope_ids[0]
    inside = [o for o in tr.ops if o.scope == "layer1"]
    assert inside and not any(f"o{o.id}" in g for o in inside)
    assert "3 ops" in text_of(g[sid])
    touching = [k for k in range(len(tr.steps))
                if sid in diagram.step_ids(tr, k, collapse=["layer1"])]
    backward_inside = [s.index for s in tr.steps
                       if s.kind == "backward" and tr.ops[s.op].scope == "layer1"]
    assert set(backward_inside) <= set(touching)
    for k in range(len(tr.steps)):
        assert set(diagram.step_ids(tr, k, collapse=["layer1"])) <= set(g)
    # Active at a step inside the scope.
    g = groups(diagram.to_svg(tr, step=backward_inside[0], collapse=["layer1"]))
    assert "gv-active" in classes(g[sid])


def test_collapse_true_and_auto() -> None:
    tr = scoped_trace()
    g = groups(diagram.layout_svg(tr, collapse=True))
    assert len([i for i in g if i.startswith("scope")]) == 3
    # Auto leaves a small trace open...
    assert not [i for i in groups(diagram.layout_svg(tr)) if i.startswith("scope")]
    # ...and collapses a large one until at most AUTO_COLLAPSE_OPS nodes stand
    # for ops (open ops plus one node per collapsed scope).
    big = scoped_trace(layers=diagram.AUTO_COLLAPSE_OPS // 3 + 20)
    assert len(big.ops) > diagram.AUTO_COLLAPSE_OPS
    plan = diagram._plan(big, diagram._options())
    drawn = len(plan.drawn_ops) - sum(1 for o in big.ops if f"o{o.id}" in plan.alias)
    assert plan.collapsed
    assert 0 < drawn + len(plan.collapsed) <= diagram.AUTO_COLLAPSE_OPS


# ---------------------------------------------------------------- every op type

_ZOO = {
    "split": lambda x, y: gv.split(x, 3, axis=1)[0] + gv.split(x, 3, axis=1)[2],
    "unstack": lambda x, y: gv.unstack(x)[0] * 2.0,
    "concat": lambda x, y: gv.concat([x, y], axis=0),
    "stack": lambda x, y: gv.stack([x, y]),
    "slice": lambda x, y: x[0, 1:],
    "transpose_reshape": lambda x, y: gv.reshape(gv.transpose(x), [6]),
    "softmax": lambda x, y: gv.softmax(x) + gv.log_softmax(y),
    "xent": lambda x, y: gv.reduce_sum(gv.sigmoid_cross_entropy_with_logits(labels=y, logits=x))
    + gv.reduce_sum(gv.softmax_cross_entropy_with_logits(labels=y, logits=x)),
    "reductions": lambda x, y: gv.reduce_max(x, axis=1) + gv.reduce_mean(y, axis=1),
    "where": lambda x, y: gv.where(gv.greater(x, 0.0), x, y),
    "max_min_div": lambda x, y: gv.maximum(x, y) + gv.minimum(x, y) + x / y,
    "unary": lambda x, y: gv.sqrt(gv.abs(x)) + gv.exp(x) + gv.sigmoid(x) + gv.relu(x)
    + gv.tanh(x) - gv.negative(x) + gv.square(x) + gv.sign(x),
    "addn_broadcast": lambda x, y: gv.add_n([x, y, x]) + gv.broadcast_to(gv.reduce_sum(x, 0), [2, 3]),
    "identity_like": lambda x, y: gv.identity(x) * gv.ones_like(x) + gv.zeros_like(y),
}


@pytest.mark.parametrize("case", sorted(_ZOO))
def test_every_op_draws_and_steps(case: str) -> None:
    x = gv.Variable(np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.2]], np.float32), name=_n("x"))
    y = gv.Variable(np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]], np.float32), name=_n("y"))
    tr = gv.trace_gradients(_ZOO[case](x, y), [x, y])
    g = groups(diagram.layout_svg(tr))
    for o in tr.ops:
        assert f"o{o.id}" in g and all(f"e{o.id}_{i}" in g for i in range(len(o.inputs)))
    for k in range(len(tr.steps)):
        assert set(diagram.step_ids(tr, k)) <= set(g), (case, k)


def test_second_derivative_helper_ops_draw() -> None:
    v = gv.Variable(np.array([0.3, -0.7], np.float32), name=_n("v"))
    with gv.GradientTape() as outer:
        with gv.GradientTape() as inner:
            y = gv.tanh(v) + gv.sigmoid(v) + gv.relu(v) + gv.sqrt(v * v + 1.0)
        grad = inner.gradient(y, v)
    tr = outer.trace_gradient(grad, v)
    types = {s.op_type for s in tr.steps if s.kind == "backward"}
    assert {"TanhGrad", "SigmoidGrad", "SqrtGrad"} <= types
    g = groups(diagram.layout_svg(tr))
    for k in range(len(tr.steps)):
        assert set(diagram.step_ids(tr, k)) <= set(g)


# ---------------------------------------------------------------- large traces without scopes


@functools.lru_cache(maxsize=None)
def chain_trace(links: int = 2500) -> Trace:
    """y = tanh(y) * 1.01, ``links`` times, then summed: 2 * links + 1 ops and no name scopes.

    Cached: building and recording 5,000 ops takes a couple of seconds, and
    the diagram's layout is cached on the trace too.
    """
    x = gv.constant(np.ones((4, 4), np.float32), name=_n("chain_x"))
    y = x
    for _ in range(links):
        y = gv.tanh(y) * 1.01
    return gv.trace_gradients(gv.reduce_sum(y), x)


def standing_for_ops(ids: list[str] | dict[str, ET.Element]) -> list[str]:
    """The drawn nodes that stand for ops: open ops, collapsed scopes, groups."""
    return [i for i in ids if re.fullmatch(r"(o|scope|group)\d+", i)]


def test_a_5000_op_trace_without_scopes_collapses_into_groups() -> None:
    tr = chain_trace()
    assert len(tr.ops) == 5001 and not any(o.scope for o in tr.ops)
    svg = diagram.layout_svg(tr)  # drawn open, this took minutes in dot
    assert len(svg) < 1_000_000
    g = groups(svg)
    standing = standing_for_ops(g)
    assert 0 < len(standing) <= diagram.AUTO_COLLAPSE_OPS
    assert all(i.startswith("group") for i in standing)
    # The groups are consecutive runs that cover every op once, in forward order.
    plan = diagram._plan(tr, diagram._options())
    covered = [o for grp in plan.groups for o in grp.ops]
    assert covered == [o.id for o in tr.ops]
    assert all(grp.ops == tuple(range(grp.ops[0], grp.ops[-1] + 1)) for grp in plan.groups)
    # The x and the y stay drawn, with their result and seed marks.
    (x,), (y,) = tr.xs, tr.ys
    assert {f"t{x}", f"t{y}", "res0", f"seed{y}"} <= set(g)
    # Each group says honestly what it stands for.
    first = plan.groups[0].ops
    text = text_of(g["group0"])
    assert f"ops 0\u2013{first[-1]}" in text
    n_tanh = sum(tr.ops[o].type == "Tanh" for o in first)
    assert f"{n_tanh} Tanh" in text and f"{len(first) - n_tanh} Mul" in text
    assert "in (4,4) \u2192 out (4,4)" in text
    assert {"gv-group", "node"} <= classes(g["group0"])
    assert "run of ops" in text_of(g["legend"])


def test_collapse_true_groups_runs_when_there_are_no_scopes_to_collapse() -> None:
    # collapse=True only collapsed scopes: a scope-less 5,000-op trace was
    # handed to dot whole and the layout took minutes.
    tr = chain_trace()
    plan = diagram._plan(tr, diagram._options(collapse=True))
    assert plan.groups
    assert [o for grp in plan.groups for o in grp.ops] == [o.id for o in tr.ops]
    standing = standing_for_ops(groups(diagram.layout_svg(tr, collapse=True)))
    assert 0 < len(standing) <= diagram.AUTO_COLLAPSE_OPS


def test_every_step_of_a_grouped_trace_touches_drawn_elements() -> None:
    tr = chain_trace()
    plan = diagram._plan(tr, diagram._options())
    drawn = set(diagram.element_ids(tr))
    for s in tr.steps:
        ids = diagram.step_ids(tr, s.index)
        assert ids and set(ids) <= drawn, (s.index, set(ids) - drawn)
        if isinstance(s, BackwardStep):
            # The op's own node is its group's.
            assert ids[0] == f"group{plan.op_group[s.op]}", s.index
    # Active elements are exactly the step's ids (a few steps: each to_svg
    # restyles the whole SVG).
    n = len(tr.steps)
    for k in (0, 1, n // 2, n - 2, n - 1):
        g = groups(diagram.to_svg(tr, step=k))
        active = {i for i, e in g.items() if "gv-active" in classes(e)}
        assert active == set(diagram.step_ids(tr, k)), k
    # The first backward step (the Sum) crosses from the last group to the y;
    # the last one (the first Tanh) from the x into the first group.
    last = len(plan.groups) - 1
    assert diagram.step_ids(tr, 1) == [f"group{last}", f"o{tr.ops[-1].id}_out0", f"t{tr.ys[0]}"]
    assert diagram.step_ids(tr, n - 2) == ["group0", "e0_0", f"t{tr.xs[0]}"]


def test_small_traces_are_not_grouped() -> None:
    # 241 ops: under the budget, every op is drawn as before.
    tr = chain_trace(120)
    assert len(tr.ops) <= diagram.AUTO_COLLAPSE_OPS
    ids = diagram.element_ids(tr)
    assert not [i for i in ids if i.startswith("group")]
    assert len(standing_for_ops(ids)) == len(tr.ops)
    assert diagram.to_dot(tr).source == diagram.to_dot(tr, collapse=False).source


def test_collapse_false_draws_every_op_of_a_huge_trace() -> None:
    # The user's explicit choice: no error, no grouping (only the DOT source is
    # built here; dot itself would take minutes).
    tr = chain_trace()
    src = diagram.to_dot(tr, collapse=False).source
    assert "group" not in src
    assert set(re.findall(r"^\s*o(\d+) \[", src, re.M)) == {str(o.id) for o in tr.ops}


def rnn_trace(steps: int) -> Trace:
    """h = tanh(h @ W + h @ U + b), ``steps`` times: 3 weights read by every step."""
    W = gv.Variable(np.full((3, 3), 0.1, np.float32), name=_n("W"))
    U = gv.Variable(np.full((3, 3), 0.2, np.float32), name=_n("U"))
    b = gv.Variable(np.zeros(3, np.float32), name=_n("b"))
    h = gv.constant(np.ones((1, 3), np.float32), name=_n("h0"))
    for _ in range(steps):
        h = gv.tanh(gv.matmul(h, W) + gv.matmul(h, U) + b)
    return gv.trace_gradients(gv.reduce_sum(h), [W, U, b])


def test_weights_read_by_every_group_are_named_not_linked() -> None:
    tr = rnn_trace(60)  # 301 ops
    g = groups(diagram.layout_svg(tr))
    assert standing_for_ops(g) and len(standing_for_ops(g)) <= diagram.AUTO_COLLAPSE_OPS
    W = tr.xs[0]
    # W stays drawn with its result, linked to the first group reading it only;
    # the others name it.
    assert {f"t{W}", "res0", "res1", "res2"} <= set(g)
    edges_from_w = {f"e{o.id}_{i}" for o in tr.ops for i, t in enumerate(o.inputs) if t == W}
    assert len(edges_from_w) == 60 and len(edges_from_w & set(g)) == 1
    assert sum("also reads" in text_of(e) for i, e in g.items() if i.startswith("group")) > 10
    # Its accumulation step lights every group that read it.
    acc = next(s for s in tr.steps if s.kind == "accumulate" and s.tensor == W)
    lit = [i for i in diagram.step_ids(tr, acc.index) if i.startswith("group")]
    assert len(lit) > 10
    for k in range(len(tr.steps)):
        assert set(diagram.step_ids(tr, k)) <= set(g)


def test_too_many_small_scopes_are_swallowed_by_groups() -> None:
    # 400 scopes of 2 ops: collapsing every one still leaves 400 nodes.
    x = gv.Variable(np.ones(3, np.float32), name=_n("x"))
    y = x
    for i in range(400):
        with gv.name_scope(f"tiny{i}"):
            y = gv.tanh(y) * 0.9
    tr = gv.trace_gradients(gv.reduce_sum(y), x)
    g = groups(diagram.layout_svg(tr))
    assert 0 < len(standing_for_ops(g)) <= diagram.AUTO_COLLAPSE_OPS
    assert not [i for i in g if i.startswith(("scope", "cluster"))]
    assert "scopes tiny0, tiny1" in text_of(g["group0"])
    for k in range(len(tr.steps)):
        assert set(diagram.step_ids(tr, k)) <= set(g)


def test_scopes_keep_their_names_when_the_plain_ops_between_them_are_grouped() -> None:
    x = gv.Variable(np.ones(3, np.float32), name=_n("x"))
    y = x
    for blk in range(3):
        with gv.name_scope(f"blk{blk}"):
            for _ in range(20):
                y = gv.tanh(y) * 0.9
        for _ in range(100):
            y = gv.sigmoid(y) + 0.1
    tr = gv.trace_gradients(gv.reduce_sum(y), x)
    g = groups(diagram.layout_svg(tr))
    scope_nodes = [i for i in g if i.startswith("scope")]
    assert len(scope_nodes) == 3
    assert {text_of(g[i]).split()[0] for i in scope_nodes} == {"blk0", "blk1", "blk2"}
    assert [i for i in g if i.startswith("group")]
    assert len(standing_for_ops(g)) <= diagram.AUTO_COLLAPSE_OPS
    for k in range(len(tr.steps)):
        assert set(diagram.step_ids(tr, k)) <= set(g)


def test_a_drawing_past_the_hover_budget_carries_no_hover_text(monkeypatch) -> None:
    # The budget keeps a huge drawing's report within its size (bench/viewer.py);
    # a small limit stands in for a huge trace here.
    monkeypatch.setattr(diagram.draw, "MAX_HOVER_NODES", 3)
    svg = diagram.layout_svg(linreg_trace())
    assert "<title>" not in svg and 'id="t0"' in svg
    monkeypatch.setattr(diagram.draw, "MAX_HOVER_NODES", 10_000)
    assert "<title>" in diagram.layout_svg(linreg_trace())


def test_a_brief_drawing_says_each_node_in_one_line_and_keeps_every_id(seed: tuple[str, Trace]) -> None:
    _, tr = seed
    full = groups(diagram.layout_svg(tr, legend=False))
    brief = groups(diagram.layout_svg(tr, legend=False, values=False, brief=True))
    assert list(brief) == list(full)
    for i, el in brief.items():
        texts = [t for t in el.iter(f"{SVG}text")]
        if "node" in classes(el) and not i.startswith(("scope", "group")):
            assert len(texts) == 1, (i, text_of(el))
        if "gv-grad" in classes(el):  # no gradient label (an input's number may stay)
            assert all(len(t.text or "") <= 2 for t in texts), (i, text_of(el))
            assert el.find(f"{SVG}title") is not None, i
    for o in tr.ops:
        if f"o{o.id}" in brief:
            assert text_of(brief[f"o{o.id}"]).startswith(o.type)


# ---------------------------------------------------------------- wide ops: bundles


def _wide_source(tr, **options):
    return diagram.to_dot(tr, **options).source


def test_a_wide_ops_leaf_inputs_past_the_first_three_are_one_bundle():
    from fixtures.traces import add_n_of

    tr = add_n_of(20)
    ids = diagram.element_ids(tr)
    assert "bundle0" in ids and {"t0", "t1", "t2"} <= set(ids)
    assert not {f"t{k}" for k in range(3, 20)} & set(ids)  # hidden in the bundle
    src = _wide_source(tr)
    assert "17 more inputs" in src and "w3 \u2026 w19" in src
    assert src.count("\u00d717") == 1  # one edge, counting the 17
    add_n = next(s for s in tr.steps if s.kind == "backward")
    lit = diagram.step_ids(tr, add_n.index)
    assert "bundle0" in lit and len(lit) < 12  # not 40 elements
    result = next(s for s in tr.steps if s.kind == "result" and s.x_index == 7)
    assert "bundle0" in diagram.step_ids(tr, result.index)  # w7's result is in it
    # drawn open, every input is its own node again
    assert "bundle0" not in diagram.element_ids(tr, collapse=False)


def test_a_fan_out_into_a_wide_op_bundles_its_branches():
    from fixtures.traces import used_n_times

    tr = used_n_times(20)  # x * k for k < 20, summed by add_n
    ids = diagram.element_ids(tr)
    assert "bundle0" in ids and sum(i.startswith("o") and "_" not in i for i in ids) == 4
    src = _wide_source(tr)
    assert "made by 17 Mul" in src and src.count("\u00d717") == 2  # x's sum in, AddN out
    mul = next(s for s in tr.steps if s.kind == "backward" and s.op_type == "Mul"
               and tr.ops[s.op].name == "Mul_11")
    lit = diagram.step_ids(tr, mul.index)
    assert lit[0] == "bundle0" and all(i in ids for i in lit)
    # x's fan-out sum: its 20 contributions arrive along three edges and the counted one
    # (e3_0, which the 17 edges into the bundle show as)
    acc = next(s for s in tr.steps if s.kind == "accumulate")
    assert diagram.step_ids(tr, acc.index) == ["t0", "acc0", "acc0_e", "e3_0", "e2_0", "e1_0",
                                               "e0_0"]
    edge = next(line for line in src.splitlines() if "id=e3_0 " in line)
    assert "\u00d717" in edge and "17 edges drawn as one" in edge


def test_inputs_read_elsewhere_cut_or_a_y_stay_drawn():
    xs = [gv.Variable(np.float32(k), name=f"v{k}") for k in range(12)]
    shared = gv.add_n(xs)  # every v is read again below: none is this AddN's alone
    tr = gv.trace_gradients(shared + gv.add_n([v * 2.0 for v in xs]), xs)
    ids = diagram.element_ids(tr)
    assert all(f"t{tr.xs[k]}" in ids for k in range(12))  # each v drawn
    # the other AddN's inputs, v * 2, are its own: their Muls are one bundle, which
    # every v past the first three feeds (one edge each)
    assert [i for i in ids if i.startswith("bundle") and "_" not in i] == ["bundle0"]
    # a stop_gradient in each branch: its cut is drawn, so the branch stays
    x = gv.Variable(np.float32(1.0), name="x")
    tr = gv.trace_gradients(gv.add_n([gv.stop_gradient(x * float(k)) + x for k in range(12)]), x)
    src = _wide_source(tr)
    assert "bundle" not in src.replace("bundle (dashed box)", "")


def test_a_broadcast_into_a_bundle_is_its_edge_not_a_mark_per_branch():
    x = gv.Variable(np.ones(3, np.float32), name="x")
    cs = [gv.constant(np.full((2, 3), k, np.float32), name=f"c{k}") for k in range(12)]
    tr = gv.trace_gradients(gv.reduce_sum(gv.add_n([x * c for c in cs])), x)
    ids = diagram.element_ids(tr)
    assert sorted(i for i in ids if i.startswith("red") and not i.endswith("_e")) == [
        "red0_0", "red1_0", "red2_0"]  # the three Muls drawn; the other nine are the bundle's
    for s in tr.steps:
        assert set(diagram.step_ids(tr, s.index)) <= set(ids), s
    hidden = next(s for s in tr.steps if s.kind == "reduce" and s.op == 7)
    assert diagram.step_ids(tr, hidden.index)[0] == "e3_0"  # the counted edge into the bundle
