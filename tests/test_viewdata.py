"""The viewer's payload: exact shape, JSON-safe, consistent with the diagram and the words."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from test_diagram import (SEEDS, _n, chain_trace, linreg_trace, matmul_stop_trace,
                          square_trace, unconnected_trace)

import gradviz as gv
from gradviz.views import diagram, explain, viewdata
from gradviz.trace import ArrayData
from gradviz.views.viewdata import array_dict, view_data
from fixtures.traces import linear_regression, scoped_tanh_chain, tanh_chain, two_layer_mlp

TOP = {"title", "method", "mode", "passes", "drawing_note", "svg", "overview", "css", "steps", "sources", "results", "legend", "tensors",
       "scopes", "edges", "view"}
STEP = {"index", "kind", "scope", "pass", "ops_visited", "bytes_held", "ids", "title",
        "sentence", "formula", "arrays"}
ARRAY = {"label", "shape", "dtype", "values", "min", "max", "mean"}  # + "nonfinite" if true
RESULT = {"x_index", "name", "step", "shape", "status", "reason", "norm", "array"}


def check_array(a: dict) -> None:
    assert set(a) - {"nonfinite"} == ARRAY and a.get("nonfinite", True) is True
    assert isinstance(a["label"], str) and isinstance(a["dtype"], str)
    assert all(isinstance(d, int) for d in a["shape"])
    if a["values"] is not None:
        assert np.asarray(a["values"], dtype=object).shape == tuple(a["shape"])


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_payload_shape_on_every_seed_case(name: str) -> None:
    tr = SEEDS[name]()
    data = view_data(tr)
    assert set(data) == TOP
    json.dumps(data, allow_nan=False)  # strictly JSON
    assert data["svg"].startswith("<svg") and data["svg"] == diagram.layout_svg(tr, legend=False)
    assert data["css"] == diagram.diagram_css()
    assert data["method"] == "gradients" and data["passes"] == 1
    assert len(data["steps"]) == len(tr.steps)
    for k, s in enumerate(data["steps"]):
        assert set(s) - {"values_at", "nonfinite", "questions", "source"} == STEP
        assert s.get("nonfinite", True) is True
        src = explain.step_source(tr, tr.steps[k])
        said = None if src is None else {"code": src.code, "place": src.place}
        assert (data["sources"][s["source"]] if "source" in s else None) == said
        assert s["index"] == k and s["kind"] == tr.steps[k].kind
        assert s["ids"] == diagram.step_ids(tr, k)
        title, sentence, formula = explain.describe(tr, k)
        assert (s["title"], s["sentence"], s["formula"]) == (title, sentence, formula)
        text = f"{s['sentence']}\n{s['formula'] or ''}"  # (ASCII here: UTF-16 = str)
        at = s.get("values_at", [])
        assert len(at) % 2 == 0 and all(0 <= a < b <= len(text) for a, b in zip(at[::2], at[1::2]))
        for a in s["arrays"]:
            check_array(a)
    assert [r["x_index"] for r in data["results"]] == list(range(len(tr.xs)))
    for r in data["results"]:  # the step that gives each result is its result step
        assert data["steps"][r["step"]]["kind"] == "result"
        assert tr.steps[r["step"]].x_index == r["x_index"]
    for r in data["results"]:
        assert set(r) - {"reason_values_at"} == RESULT
        if r["array"] is not None:
            check_array(r["array"])
    assert {e["mark"] for e in data["legend"]} >= {"tensor", "op", "active"}
    assert set(data["tensors"]) == {f"t{t.id}" for t in tr.tensors}
    assert all(set(v) - {"op"} == {"name", "shape", "dtype"} for v in data["tensors"].values())
    assert all(v.get("op") == tr.tensors[int(k[1:])].op for k, v in data["tensors"].items())


def test_the_viewer_legend_has_the_colours_the_diagram_draws() -> None:
    # linear regression has a seed, broadcast reductions and results
    tr = linreg_trace()
    data = view_data(tr)
    entries = {e["mark"]: e for e in data["legend"]}
    assert {"seed", "reduce", "result"} <= set(entries)
    for mark, e in entries.items():
        assert set(e) == {"mark", "label", "stroke", "fill"}
        assert (e["stroke"], e["fill"]) == tuple(diagram.mark_colors(mark).values())
    dot = diagram.to_dot(tr).source
    for mark in ("seed", "reduce", "result"):
        stroke, fill = entries[mark]["stroke"], entries[mark]["fill"]
        node = next(line for line in dot.splitlines()
                    if re.search(f'class="gv-(mark|sum) gv-{mark}"', line))
        assert f'color="{stroke}"' in node and f'fillcolor="{fill}"' in node, node


def test_the_viewer_svg_leaves_the_legend_to_the_viewer() -> None:
    # The viewer draws its own legend; one inside the SVG repeated it and was
    # clipped when the viewer zoomed in to follow a step.
    tr = linreg_trace()
    data = view_data(tr)
    assert 'id="legend"' not in data["svg"] and "gv-legend" not in data["svg"]
    assert data["legend"]  # the viewer's own legend still lists the marks
    assert 'id="legend"' in diagram.to_svg(tr)  # the standalone SVG keeps its legend
    assert "legend" not in diagram.element_ids(tr, legend=False)
    with pytest.raises(ValueError, match="legend must be True or False"):
        diagram.layout_svg(tr, legend="no")


def test_arrays_per_step_kind() -> None:
    tr = linreg_trace()
    steps = view_data(tr)["steps"]
    kinds = {s["kind"]: s for s in steps}
    assert [a["label"] for a in kinds["seed"]["arrays"]] == ["seed: ones (default)"]
    add = steps[5]
    assert add["title"] == "Add backward"
    assert add["arrays"][0]["label"].startswith("upstream dL/d")
    # Labelled as the step's formula names the inputs: W's gradient read "dL/db (W)"
    # (Mul's letter b) in a lesson whose bias is called b; now "dL/db" is the bias's.
    pred, bias = (explain.display_name(tr.tensors[t]) for t in tr.ops[1].inputs)
    # b is a scalar broadcast to (2,1): its gradient before the sum has a name of its own
    assert [a["label"] for a in add["arrays"][1:]] == [f"dL/d{pred}", f"dL/d({bias} broadcast)"]
    mul = steps[7]
    X, W = (explain.display_name(tr.tensors[t]) for t in tr.ops[0].inputs)
    assert mul["title"] == "Mul backward" and f"dL/d({W} broadcast) = grad * {X}" in mul["formula"]
    assert [a["label"] for a in mul["arrays"][1:]] == [f"dL/d({W} broadcast)"]
    reduce = steps[8]
    assert reduce["kind"] == "reduce"
    before, after = reduce["arrays"]
    assert before["label"] == f"before: dL/d({W} broadcast), summed over axes (0, 1)"
    assert before["shape"] == [2, 1]
    assert after["label"].startswith("after: dL/d") and after["shape"] == []
    assert after["values"] == pytest.approx(12.376228)
    assert before["values"] == [[1.7525997], [10.623629]]  # float32, written shortest


def test_accumulate_and_results() -> None:
    data = view_data(square_trace())
    acc = data["steps"][2]
    assert [a["values"] for a in acc["arrays"]] == [[1.0, 2.0], [1.0, 2.0], [2.0, 4.0]]
    assert acc["arrays"][-1]["label"].startswith("total dL/d")
    (res,) = data["results"]
    assert res["status"] == "connected" and res["array"]["values"] == [2.0, 4.0]
    none = view_data(unconnected_trace("none"))["results"][0]
    assert none["status"] == "unconnected" and none["array"] is None and "no y" in none["reason"]
    zero = view_data(unconnected_trace("zero"))["results"][0]
    assert zero["array"]["values"] == [[0.0, 0.0]]
    cut = next(s for s in view_data(matmul_stop_trace())["steps"] if s["kind"] == "cut")
    assert "stop_gradient" in cut["sentence"]
    (upstream,) = cut["arrays"]  # the gradient that stops at StopGradient, as the words say
    assert upstream["label"].startswith("upstream dL/d") and upstream["shape"] == [2, 3]
    assert "gets grad, the gradient arriving at its output" in cut["sentence"]


def test_nonfinite_numbers_become_strings() -> None:
    x = gv.constant([0.0, 1.0], name=_n("x"))
    with np.errstate(divide="ignore"):  # log(0) = -inf and 1/0 = inf are the point
        tr = gv.trace_gradients(gv.log(x), x)
    data = view_data(tr)
    text = json.dumps(data, allow_nan=False)
    assert '"inf"' in text
    flagged = [s for s in data["steps"] if s.get("nonfinite")]
    assert flagged
    back = next(a for a in flagged[0]["arrays"] if a.get("nonfinite"))
    assert "inf" in back["values"]
    assert back["min"] == 1.0 and back["max"] == 1.0  # stats of the finite values


def test_jacobian_results_stack_the_rows() -> None:
    x = gv.constant([1.0, 2.0])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    data = view_data(tape.trace_jacobian(y, x))
    assert data["passes"] == 2 and data["method"] == "tape.jacobian"
    assert sorted({s["pass"] for s in data["steps"]}) == [0, 1]
    (res,) = data["results"]
    assert res["array"]["values"] == [[2.0, 0.0], [0.0, 4.0]]
    assert res["array"]["label"].startswith("Jacobian")
    first, last = [s for s in data["steps"] if s["kind"] == "result"]
    assert [a["label"].split(" of ")[0] for a in first["arrays"]] == ["row 1"]
    assert last["arrays"][0]["values"] == [0.0, 4.0]
    assert last["arrays"][1]["values"] == [[2.0, 0.0], [0.0, 4.0]]
    # The panel's sentence is about the whole Jacobian, not the last pass's row.
    assert "Jacobian" in res["reason"] and "[[2, 0], [0, 4]]" in res["reason"]
    assert "final gradient" not in res["reason"]



def test_a_jacobian_too_large_to_stack_shows_its_rows_summaries_combined() -> None:
    x = gv.Variable(np.linspace(-1.0, 1.0, 300), name="big_x")
    with gv.GradientTape() as tape:
        y = gv.reduce_sum(gv.reshape(x, (3, 100)) * 2.0, axis=1)
    (res,) = view_data(tape.trace_jacobian(y, x))["results"]
    a = res["array"]
    assert a["label"].startswith("Jacobian") and a["values"] is None
    assert a["shape"] == [3, 300]
    # each row: 2 on its block of 100, 0 elsewhere
    assert (a["min"], a["max"]) == (0.0, 2.0) and a["mean"] == pytest.approx(2 / 3)
    assert "nonfinite" not in a


def test_view_data_asks_for_the_words_once_per_step_and_once_for_the_results(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # One walk over the steps: each step's words and labelled arrays come in one
    # call, the results in one more; nothing else is asked step by step.
    asked: dict[str, int] = {}

    def counted(name, f):
        def call(*args, **kwargs):
            asked[name] = asked.get(name, 0) + 1
            return f(*args, **kwargs)
        return call

    for name in explain.__all__:
        f = getattr(explain, name)
        if callable(f) and not isinstance(f, type):
            monkeypatch.setattr(explain, name, counted(name, f))
    x = gv.constant([1.0, 2.0])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    for tr in (square_trace(), linreg_trace(), tape.trace_jacobian(y, x)):
        asked.clear()
        view_data(tr)
        assert asked.pop("step_words") == len(tr.steps)
        assert asked.pop("result_words") == 1
        assert asked.pop("is_forward_jacobian") == 1  # what the results answer for
        asked.pop("format_array", None)  # the diagram's labels
        # each step's words (and the results') mark their values, then say where they are
        assert asked.pop("marked_values") == len(tr.steps) + 1
        assert asked.pop("value_spans") == 2 * len(tr.steps) + len(tr.xs)
        assert asked == {"legend": 1}


def test_options_reach_the_diagram() -> None:
    tr = linreg_trace()
    assert view_data(tr, rankdir="LR")["svg"] == diagram.layout_svg(tr, rankdir="LR", legend=False)
    with pytest.raises(ValueError, match="unknown rankdir"):
        view_data(tr, rankdir="sideways")


def _ids(svg: str) -> list[str]:
    return re.findall(r'<g id="([^"]*)"', svg)


def test_a_small_drawing_comes_with_a_brief_overview() -> None:
    tr = two_layer_mlp()
    data = view_data(tr)
    assert data["overview"] == diagram.layout_svg(tr, legend=False, values=False, brief=True)
    assert data["overview"] != data["svg"]
    # The same elements under the same ids, so the steps' ids restyle it too,
    # each with its hover text.
    assert _ids(data["overview"]) == _ids(data["svg"])
    assert data["overview"].count("<title>") == data["svg"].count("<title>")
    # Smaller: brief, a two-layer MLP is about 380 x 510 pt, not 1030 x 1240.
    size = lambda svg: [float(v) for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups()]
    assert all(o < 0.5 * f for o, f in zip(size(data["overview"]), size(data["svg"])))
    assert view_data(tr, rankdir="LR")["overview"] == diagram.layout_svg(
        tr, rankdir="LR", legend=False, values=False, brief=True)


def test_the_overview_counts_the_nodes_that_stand_for_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    tr = scoped_tanh_chain(20)  # 62 ops drawn whole; collapsed, 20 scopes and 2 ops
    assert view_data(tr)["overview"] is None
    collapsed = view_data(tr, collapse=True)
    assert collapsed["overview"] is not None
    assert _ids(collapsed["overview"]) == _ids(collapsed["svg"])
    monkeypatch.setattr(viewdata, "OVERVIEW_OPS", 6)
    assert view_data(two_layer_mlp(title="7 ops"))["overview"] is None


def test_no_overview_for_a_large_drawing() -> None:
    assert view_data(scoped_tanh_chain(40))["overview"] is None  # 122 op nodes
    assert view_data(two_layer_mlp(), values=False)["overview"] is not None


def test_hostile_names_stay_data() -> None:
    x = gv.constant([1.0], name='a"b<script>&')
    data = view_data(gv.trace_gradients(x * 2.0, x))
    assert data["tensors"]["t0"]["name"].startswith('a"b<script>&')
    assert "<script" not in data["svg"]


def test_a_1000_op_payload_is_small() -> None:
    h = gv.constant(np.ones((2, 3), np.float32), name=_n("x"))
    params = []
    for i in range(333):
        with gv.name_scope(f"blk{i // 10}"), gv.name_scope(f"l{i}"):
            W = gv.Variable(np.full((3, 3), 0.1, np.float32))
            b = gv.Variable(np.zeros(3, np.float32))
            h = gv.tanh(gv.matmul(h, W) + b)
        params += [W, b]
    tr = gv.trace_gradients(gv.reduce_sum(h), params)
    assert len(tr.ops) >= 1000
    size = len(json.dumps(view_data(tr)))
    assert size < 5 * 1024 * 1024, size


def test_a_5000_op_payload_without_scopes_is_under_5_mb() -> None:
    tr = chain_trace()
    data = view_data(tr)
    size = len(json.dumps(data))
    assert size < 5 * 1024 * 1024, size
    assert data["svg"] == diagram.layout_svg(tr, legend=False)
    assert [s["ids"] for s in data["steps"][:50]] == [diagram.step_ids(tr, k, legend=False)
                                                      for k in range(50)]
    # 10,000 arrays of 16 values would not fit: they keep their summary.
    arrays = [a for s in data["steps"] for a in s["arrays"]]
    assert len(arrays) > 10_000
    big = [a for a in arrays if a["shape"] == [4, 4]]
    assert big and all(a["values"] is None and a["min"] is not None for a in big)
    assert data["results"][0]["array"]["values"] is not None  # the answer keeps its values


def test_the_largest_step_arrays_lose_their_values_first(monkeypatch: pytest.MonkeyPatch) -> None:
    tr = linreg_trace()
    full = view_data(tr)
    sizes = sorted({int(np.prod(a["shape"])) for s in full["steps"] for a in s["arrays"]})
    assert sizes[0] < sizes[-1]
    total_small = sum(int(np.prod(a["shape"])) for s in full["steps"] for a in s["arrays"]
                      if int(np.prod(a["shape"])) < sizes[-1])
    monkeypatch.setattr(viewdata, "STEP_VALUES_BUDGET", total_small)
    cut = view_data(tr)
    for s in cut["steps"]:
        for a in s["arrays"]:
            kept = a["values"] is not None
            assert kept == (int(np.prod(a["shape"])) < sizes[-1]), a
    assert cut["results"] == full["results"]


def test_float32_stats_are_written_at_float32_precision() -> None:
    a = array_dict("g", ArrayData.of(np.array([0.1, 0.2, 0.7], np.float32)))
    assert a["min"] == 0.1 and a["max"] == 0.7  # not 0.10000000149011612
    assert json.dumps(a["mean"]) == "0.33333334"  # the float32 nearest 1/3, written shortest
    b = array_dict("g", ArrayData.of(np.array([0.1, 0.2, 0.7])))
    assert b["min"] == 0.1 and b["mean"] == pytest.approx(1 / 3)


def test_a_drawing_that_groups_runs_of_ops_says_so_and_how_to_choose():
    assert viewdata.view_data(linear_regression())["drawing_note"] is None
    data = viewdata.view_data(tanh_chain(600))
    note = data["drawing_note"]
    assert note.startswith("60") and "runs of consecutive ops" in note
    assert "gv.name_scope" in note and "collapse=" in note
