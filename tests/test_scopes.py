"""The scopes a reader opens and closes: the tree, repeated layers found, and each view's
drawing, step ids and what in it opens and closes."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from fixtures.traces import scoped_mlp, transformer_layers

import gradviz as gv
from gradviz.views import diagram, navigation, viewdata
from gradviz.views.diagram.scopes import ALL_CLOSED, OPEN_WHOLE, scope_tree, view_options
from gradviz.views.widget import view_payload

pytestmark = pytest.mark.usefixtures("each_layout_engine")

_IDS = re.compile(r'<g id="([^"]+)"')


@pytest.fixture(scope="module")
def layers() -> gv.Trace:
    return transformer_layers(12)


def test_twelve_layers_of_one_structure_are_one_repeat_that_opens_into_them(layers) -> None:
    tree = scope_tree(layers)
    assert len(layers.ops) == 386 and tree.top == ["repeat:layer_0"]
    rep = tree.nodes["repeat:layer_0"]
    assert rep.label == "layer_0 … layer_11 ×12" and rep.kind == "repeat"
    assert rep.children == [f"scope:layer_{i}" for i in range(12)]  # forward order, not by name
    assert rep.ops == 384 and all(tree.nodes[c].ops == 32 for c in rep.children)
    # a layer of 32 ops opens whole: its attention, norm and MLP are no boxes of their own
    assert 32 <= OPEN_WHOLE and tree.nodes["scope:layer_3"].children == []
    assert tree.home("layer_3/attention") == "scope:layer_3"
    assert tree.chain("scope:layer_3") == ["repeat:layer_0", "scope:layer_3"]


def test_scopes_that_differ_in_a_shape_or_an_op_are_no_repeat() -> None:
    x = gv.constant(np.ones((2, 3), np.float32), name="rx")
    h = x
    for i, w in enumerate([(3, 3), (3, 3), (3, 4)]):
        with gv.name_scope(f"r{i}"):
            h = gv.tanh(h @ gv.Variable(np.ones(w, np.float32), name="W"))
    with gv.name_scope("r3"):
        h = gv.sigmoid(h @ gv.Variable(np.ones((4, 4), np.float32), name="W"))
    tree = scope_tree(gv.trace_gradients(gv.reduce_sum(h), x))
    assert tree.top == ["repeat:r0", "scope:r2", "scope:r3"]
    assert tree.nodes["repeat:r0"].children == ["scope:r0", "scope:r1"]
    # the same output shapes, but not the same input: (2,5) @ (5,3) is not (2,3) @ (3,3)
    x = gv.constant(np.ones((2, 5), np.float32), name="rx5")
    h = x
    for i, w in enumerate([(5, 3), (3, 3), (3, 3)]):
        with gv.name_scope(f"q{i}"):
            h = gv.tanh(h @ gv.Variable(np.ones(w, np.float32), name="W"))
    assert scope_tree(gv.trace_gradients(gv.reduce_sum(h), x)).top == ["scope:q0", "repeat:q1"]
    # the same shapes, but summed along another axis
    sq = gv.constant(np.ones((3, 3), np.float32), name="sq")
    with gv.name_scope("a0"):
        s0 = gv.reduce_sum(sq * 2.0, axis=0)
    with gv.name_scope("a1"):
        s1 = gv.reduce_sum(sq * 2.0, axis=1)
    assert scope_tree(gv.trace_gradients(gv.reduce_sum(s0 + s1), sq)).top == ["scope:a0",
                                                                             "scope:a1"]


def test_each_view_opens_its_chain_and_closes_the_rest(layers) -> None:
    tree = scope_tree(layers)
    closed = view_options(tree, ALL_CLOSED)
    assert closed == {"collapse": frozenset(),
                      "fold": frozenset({tuple(f"layer_{i}" for i in range(12))})}
    unfolded = view_options(tree, "repeat:layer_0")
    assert unfolded["fold"] == frozenset() and len(unfolded["collapse"]) == 12
    third = view_options(tree, "scope:layer_3")
    assert third["collapse"] == {f"layer_{i}" for i in range(12)} - {"layer_3"}
    with pytest.raises(ValueError, match="unknown scope view 'scope:nope'"):
        view_options(tree, "scope:nope")


def test_the_folded_run_is_one_box_marked_with_its_count(layers) -> None:
    svg = diagram.layout_svg(layers, legend=False, **view_options(scope_tree(layers), ALL_CLOSED))
    box = re.search(r'<g id="(group\d+)" class="node gv-scope gv-repeat">(.*?)</g>', svg, re.S)
    assert box, svg[:2000]
    assert "layer_0 … layer_11 ×12" in box.group(2) and "32 ops each" in box.group(2)
    # nothing inside the layers is drawn on its own
    drawn = set(_IDS.findall(svg))
    inside = {f"o{o.id}" for o in layers.ops if o.scope.startswith("layer_")}
    assert not drawn & inside


def test_a_large_scoped_model_opens_closed_and_every_view_steps_its_own_elements(layers) -> None:
    data = view_payload(layers, "report_html", all_views=True)
    scopes = data["scopes"]
    assert scopes["base"] == ALL_CLOSED and data["drawing_note"] is None
    assert set(scopes["views"]) == {ALL_CLOSED, "repeat:layer_0"} | {
        f"scope:layer_{i}" for i in range(12)}
    base_ids = [s["ids"] for s in data["steps"]]
    for key, view in scopes["views"].items():
        svg = view["svg"] or data["svg"]
        drawn = set(_IDS.findall(svg))
        ids = [view["ids"].get(str(k), own) for k, own in enumerate(base_ids)]
        assert all(i in drawn for step in ids for i in step), key
        assert set(view["boxes"]) <= drawn and set(view["clusters"]) <= drawn
        edges = view["edges"] if view["edges"] is not None else data["edges"]
        assert edges and all(t in drawn and h in drawn and e in drawn for t, h, e in edges), key
    # layer 3 open: its steps light its own ops; layer 5's still light layer 5's box
    third = scopes["views"]["scope:layer_3"]
    assert third["open"] == ["repeat:layer_0", "scope:layer_3"]
    assert list(third["clusters"].values()) == ["scope:layer_3"]
    steps = layers.steps
    in_3 = next(s.index for s in steps if s.kind == "backward"
                and layers.ops[s.op].scope.startswith("layer_3/"))
    in_5 = next(s.index for s in steps if s.kind == "backward"
                and layers.ops[s.op].scope.startswith("layer_5/"))
    assert f"o{steps[in_3].op}" in third["ids"][str(in_3)]
    box_5 = next(b for b, k in third["boxes"].items() if k == "scope:layer_5")
    assert str(in_5) not in third["ids"] or third["ids"][str(in_5)][0] == box_5
    assert data["steps"][in_3]["scope"] == layers.ops[steps[in_3].op].scope
    # all closed: every layer's step lights the one box
    box = next(iter(scopes["views"][ALL_CLOSED]["boxes"]))
    assert base_ids[in_3][0] == base_ids[in_5][0] == box
    assert scopes["views"][ALL_CLOSED]["boxes"] == {box: "repeat:layer_0"}


def test_a_small_model_keeps_its_open_drawing_and_its_views_wait_to_be_asked_for() -> None:
    tr = scoped_mlp()
    data = viewdata.view_data(tr)
    scopes = data["scopes"]
    assert scopes["base"] == "" and data["svg"] == diagram.layout_svg(tr, legend=False)
    assert scopes["views"][""]["svg"] is None and scopes["views"][""]["ids"] == {}
    assert all(v is None for k, v in scopes["views"].items() if k != "")
    clusters = scopes["views"][""]["clusters"]
    assert sorted(clusters.values()) == sorted(scopes["nodes"]) and clusters
    json.dumps(data, allow_nan=False)


def test_the_widget_lays_out_a_view_when_its_reader_asks(layers) -> None:
    w = gv.show(layers)
    sent: list[dict] = []
    w.send = sent.append  # (no front end here: keep what it would have been sent)
    w._on_message(w, {"kind": "scope_view", "key": "scope:layer_7"}, [])
    assert sent[-1]["key"] == "scope:layer_7" and sent[-1]["view"]["svg"].startswith("<svg")
    assert sent[-1]["view"]["open"] == ["repeat:layer_0", "scope:layer_7"]
    w._on_message(w, {"kind": "scope_view", "key": "scope:nope"}, [])
    assert sent[-1]["view"] is None and "no scope view 'scope:nope'" in sent[-1]["error"]
    w._on_message(w, {"kind": "something else"}, [])
    assert len(sent) == 2


def test_a_report_past_its_view_budget_leaves_the_last_nodes_closed(layers) -> None:
    data = view_payload(layers, "show")
    opts = viewdata.drawing_options(layers, viewdata.view_options("show"))
    small = navigation.with_scope_views(layers, data, opts, budget=500_000)
    views, nodes = small["scopes"]["views"], small["scopes"]["nodes"]
    assert 0 < len(views) < 14 and all(v is not None for v in views.values())
    assert [k for k, n in nodes.items() if not n["opens"]] == [
        k for k in data["scopes"]["views"] if k not in views]
    assert data["scopes"]["views"]["scope:layer_0"] is None  # the widget's own, untouched
    for view in views.values():  # no button for a view the report does not hold
        assert set(view["boxes"].values()) <= set(views)
        assert all((nodes[k]["parent"] or ALL_CLOSED) in views for k in view["clusters"].values())


def test_a_view_the_kernel_cannot_lay_out_is_answered_at_once(layers, monkeypatch) -> None:
    w = gv.show(layers)
    sent: list[dict] = []
    w.send = sent.append

    def fails(*args):
        raise diagram.LayoutError("dot ran out of time")
    monkeypatch.setattr(navigation, "scope_view", fails)
    w._on_message(w, {"kind": "scope_view", "key": "scope:layer_2"}, [])
    assert sent == [{"kind": "scope_view", "key": "scope:layer_2", "view": None,
                     "error": "LayoutError: dot ran out of time"}]


def test_a_long_run_opens_one_instance_at_a_time_the_rest_folded_around_it() -> None:
    from fixtures.traces import scoped_tanh_chain
    from gradviz.views.diagram.scopes import MAX_VIEWS, UNFOLD_MAX, fold_opens
    tr = scoped_tanh_chain(40)
    tree = scope_tree(tr)
    rep = tree.nodes["repeat:layer0"]
    assert len(rep.children) == 40 > UNFOLD_MAX
    names = [f"layer{i}" for i in range(40)]
    assert view_options(tree, "repeat:layer0") == {
        "collapse": frozenset({"layer0"}), "fold": frozenset({tuple(names[1:])})}
    assert view_options(tree, "scope:layer5") == {
        "collapse": frozenset(), "fold": frozenset({tuple(names[:5]), tuple(names[6:])})}
    # a click on a folded run pages on: to the instance next to the one open
    assert fold_opens(tree, "scope:layer5", tuple(names[:5])) == "scope:layer4"
    assert fold_opens(tree, "scope:layer5", tuple(names[6:])) == "scope:layer6"
    assert fold_opens(tree, ALL_CLOSED, tuple(names)) == "repeat:layer0"
    opens = [k for k, n in tree.nodes.items() if n.opens]
    assert len(opens) == 40 + 1 <= MAX_VIEWS
    data = view_payload(tr, "report_html", all_views=True)
    page = data["scopes"]["views"]["scope:layer5"]
    assert sorted(page["boxes"].values()) == ["scope:layer4", "scope:layer6"]
    assert page["svg"].count("gv-repeat") == 2 and "layer0 … layer4 ×5" in page["svg"]


def test_a_model_of_one_scope_too_large_to_open_keeps_the_drawing_it_had() -> None:
    h = gv.constant(np.ones(3, np.float32), name="big_x")
    with gv.name_scope("big"):
        for _ in range(300):
            h = gv.tanh(h)
    tr = gv.trace_gradients(gv.reduce_sum(h), h)
    data = viewdata.view_data(tr)
    assert not scope_tree(tr).nodes["scope:big"].opens  # 300 ops of its own
    # drawn as before (auto: the scope collapsed), its box not a button: it cannot open
    assert data["scopes"]["base"] == "" and data["svg"] == diagram.layout_svg(tr, legend=False)
    assert data["scopes"]["views"][""]["boxes"] == {} and 'class="node gv-scope"' in data["svg"]
