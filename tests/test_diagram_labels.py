"""The diagram's words: scalars, values in full or a summary that means something, text
sizes, hover text, and the merged op+tensor and on-path Σ / ⊕ labels."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import graphviz
import numpy as np
import pytest
from test_diagram import SVG, _n, classes, groups, linreg_trace, square_trace, text_of

import gradviz as gv
from gradviz.trace import AccumulateStep, ArrayData, BackwardStep, ReduceStep, Trace
from gradviz.views import diagram, explain
from gradviz.views.diagram import labels
from gradviz.views.diagram.layout import render
from gradviz.views.diagram.svg import _tidy

# Every test here holds under both Graphviz engines (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("each_layout_engine")

LABELS_PY = Path(labels.__file__)


def matrix_trace() -> Trace:
    """A 3x3 and a 4x2 matrix, each with a gradient that is centred (its mean is float noise)."""
    rng = np.random.default_rng(0)
    a = gv.Variable(rng.normal(size=(3, 3)), name=_n("a"))
    w = gv.Variable(rng.normal(size=(4, 2)), name=_n("w"))
    big = gv.Variable(rng.normal(size=(5, 4)), name=_n("big"))
    # d(sum((x - mean x)^2 ... )): a centring op makes each gradient sum to ~0
    loss = sum(gv.reduce_sum(gv.square(v - gv.reduce_mean(v))) for v in (a, w, big))
    return gv.trace_gradients(loss, [a, w, big])


def edge_grad(tr: Trace, tensor: int) -> tuple[str, ArrayData]:
    """The id of an edge carrying a gradient back to ``tensor``, and that gradient."""
    for s in tr.steps:
        if isinstance(s, BackwardStep):
            for i, g in enumerate(s.grads):
                if g is not None and tr.ops[s.op].inputs[i] == tensor:
                    return f"e{s.op}_{i}", g
    raise LookupError(tensor)


# ---------------------------------------------------------------- scalars


def test_a_scalar_is_called_scalar_everywhere_on_the_diagram() -> None:
    tr = linreg_trace()
    svg = diagram.layout_svg(tr)
    assert "()" not in "".join(t for e in ET.fromstring(svg).iter(f"{SVG}text")
                               for t in e.itertext())
    g = groups(svg)
    (y,) = tr.ys
    assert "scalar float32" in text_of(g[f"o{tr.tensors[y].op}"])  # y, with its op
    assert labels._shapes([(), (), (3,)]) == "2\u00d7scalar, (3,)"
    # the step panel and the diagram spell shapes the same way
    assert explain.format_shape(()) == "scalar" and explain.format_shape((1,)) == "(1,)"


# ---------------------------------------------------------------- values


def test_small_gradients_show_every_value_a_row_a_line() -> None:
    tr = matrix_trace()
    g = groups(diagram.layout_svg(tr))
    for x, rows in zip(tr.xs[:2], (3, 4)):
        eid, grad = edge_grad(tr, x)
        lines = [("".join(t.itertext()), t.get("class"))
                 for t in g[eid].iter(f"{SVG}text")]
        values = [text for text, cls in lines if cls == "gv-grad-value"]
        assert len(values) == rows  # one line per row
        shown = [float(v) for v in re.findall(r"-?\d[\d.e+-]*", " ".join(values))]
        assert np.allclose(shown, grad.values.reshape(-1), rtol=1e-3, atol=1e-12)
        # the rows start at the same x, so the columns line up
        xs = {t.get("x") for t in g[eid].iter(f"{SVG}text") if t.get("class") == "gv-grad-value"}
        assert len(xs) == 1


def test_a_larger_gradient_is_a_summary_whose_mean_of_noise_is_zero() -> None:
    tr = matrix_trace()
    eid, grad = edge_grad(tr, tr.xs[2])
    assert grad.size == 20 and grad.mean != 0 and abs(grad.mean) < 1e-9
    text = text_of(groups(diagram.layout_svg(tr))[eid])
    assert re.search(r"min -\d[\d.]* mean 0 max \d", text), text
    assert "e-" not in text  # no float noise printed


def test_noise_prints_as_zero_and_real_values_do_not() -> None:
    noisy = ArrayData.of(np.array([-0.299, 0.176, 0.123] * 5) - 3.3e-10)
    assert explain.format_array(noisy) == "min -0.299 mean 0 max 0.176"
    tiny = ArrayData.of(np.array([1e-9, 3e-9] * 10))  # small, but not next to anything larger
    assert explain.format_array(tiny) == "min 1e-09 mean 2e-09 max 3e-09"
    assert explain.preview_lines(ArrayData.of(np.array([1.0, 2e-9, -1.0]))) == ["[1, 0, -1]"]


def test_long_value_lines_are_wrapped() -> None:
    a = ArrayData.of(np.linspace(-1.2345, 1.2345, 12))
    lines = labels._value_lines(a)
    assert 1 < len(lines) <= 4 and all(len(line) <= 40 for line in lines)
    assert [float(v) for v in re.findall(r"-?\d[\d.]*", " ".join(lines))] == pytest.approx(
        a.values, rel=1e-3)
    assert labels._value_lines(ArrayData.of(np.arange(13.0))) == ["min 0 mean 6 max 12"]


# ---------------------------------------------------------------- text sizes


def test_no_text_under_11_points_in_any_label() -> None:
    sizes = [int(n) for n in re.findall(r'POINT-SIZE="(\d+)"', LABELS_PY.read_text())]
    assert sizes and min(sizes) >= 11
    for tr in (linreg_trace(), matrix_trace(), square_trace()):
        source = diagram.to_dot(tr).source
        sizes = [int(n) for n in re.findall(r'POINT-SIZE="(\d+)"', source)]
        assert sizes and min(sizes) >= 11


# ---------------------------------------------------------------- hover text


def test_tensor_and_op_tooltips_say_everything() -> None:
    tr = matrix_trace()
    t = tr.tensors[tr.xs[0]]
    tip = labels._tensor_tooltip(t)
    # the line of code that made it, with the file in full
    made = ('from: a = gv.Variable(rng.normal(size=(3, 3)), name=_n("a"))\n'
            f"at: {Path(__file__)}:{matrix_trace.__code__.co_firstlineno + 3}, in matrix_trace")
    assert tip.startswith(f"{t.name}\n(3,3) float64, variable\n{made}\n[[")
    assert len(tip.splitlines()) == 2 + 2 + 3
    assert labels._tensor_tooltip(tr.without_source().tensors[t.id]).startswith(
        f"{t.name}\n(3,3) float64, variable\n[[")
    matmul = gv.matmul(gv.constant(np.ones((2, 3), np.float32), name=_n("p")),
                       gv.constant(np.ones((4, 3), np.float32), name=_n("q")), transpose_b=True)
    mtr = gv.trace_gradients(gv.reduce_sum(matmul), [])
    op = next(o for o in mtr.ops if o.type == "MatMul")
    tip = labels._op_tooltip(op, mtr)
    assert tip.startswith(f"MatMul op {op.name}\nfrom: matmul = gv.matmul(gv.constant(")
    assert tip.splitlines()[2].startswith(f"at: {Path(__file__)}:")
    tip = labels._op_tooltip(mtr.without_source().ops[op.id], mtr)
    assert tip.startswith(f"MatMul op {op.name}\nattributes: ")
    assert "transpose_b=True" in tip
    assert "(2,3) float32" in tip and "(4,3) float32" in tip and "outputs: " in tip


def test_large_arrays_say_what_the_trace_keeps() -> None:
    big = ArrayData.of(np.arange(1000.0).reshape(10, 100))
    tip = labels._grad_tooltip([big], "gradient flowing back to b")
    assert tip.splitlines() == [
        "gradient flowing back to b", "(10,100) float64",
        "first 8 of 1000 values: 0, 1, 2, 3, 4, 5, 6, 7, \u2026",
        "min 0 mean 499.5 max 999 norm 1.824e+04",
        "(the trace keeps every value of arrays up to 64 elements)"]
    whole = ArrayData.of(np.linspace(0.123456, 9.87654, 64))
    tip = labels._grad_tooltip([whole], "g")
    assert len(tip) <= labels._MAX_TOOLTIP and "0.1235" in tip
    assert labels._grad_tooltip([None], "g") == "g\nno gradient"


def test_tooltips_are_safe_for_graphviz() -> None:
    # graphviz reads backslash escapes (\N: the node's name) in a tooltip; escape keeps them text
    hostile = labels._tooltip(['a "quoted" \\N <b> & name'])
    assert hostile == graphviz.escape('a "quoted" \\N <b> & name') == 'a "quoted" \\\\N <b> & name'
    long = labels._tooltip(["x" * 5000])
    assert len(long) == labels._MAX_TOOLTIP and long.endswith("\u2026")


def test_tooltips_become_titles_of_the_elements_own_groups() -> None:
    tr = square_trace()
    x = tr.tensors[0]
    eid, grad = edge_grad(tr, x.id)
    g = graphviz.Digraph()
    g.node("t0", id="t0", **{"class": "gv-tensor"}, label=labels._tensor_label(x, "x", True),
           tooltip=labels._tensor_tooltip(x))
    g.node("o1", id="o1", **{"class": "gv-op"}, label="Mul",
           tooltip=labels._op_tooltip(tr.ops[0], tr))
    g.node("t2", id="t2", label="plain")
    g.edge("t0", "o1", id=eid, label=labels._grad_label([grad], True, "\u2191"),
           tooltip=labels._grad_tooltip([grad], "gradient flowing back to x"),
           **{"class": "gv-in gv-grad"})
    svg = _tidy(render(g.source))
    assert ' id="a_' not in svg and "<a " not in svg
    els = groups(svg)
    assert classes(els["t0"]) == {"node", "gv-tensor"}
    assert classes(els[eid]) == {"edge", "gv-in", "gv-grad"}
    titles = {i: [t.text for t in e.findall(f"{SVG}title")] for i, e in els.items()}
    said = titles["t0"][0].splitlines()
    assert said[:2] == [x.name, "(2,) float32, constant"] and said[-1] == "[1, 2]"
    assert said[2].startswith("from: ") and said[3].startswith("at: ")
    assert titles[eid] == ["gradient flowing back to x\n(2,) float32\n[1, 2]"]
    assert titles["o1"][0].startswith("Mul op ")
    assert titles["t2"] == [] and titles["graph0"] == []
    # the shapes are the group's own children again (diagram.css selects "> path")
    assert els[eid].find(f"{SVG}path") is not None


# ---------------------------------------------------------------- new node labels


def test_op_tensor_label_is_a_two_row_table_in_a_rounded_box() -> None:
    tr = matrix_trace()
    op = next(o for o in tr.ops if o.type == "Mean")
    t = tr.tensors[op.outputs[0]]
    label = labels._op_tensor_label(op, t, "m", True)
    assert label.startswith('<<TABLE BORDER="0"') and label.count("<TR>") == 2
    assert "<HR/>" in label and "<B>Mean</B>" in label and "axis (0, 1)" in label
    g = graphviz.Digraph()
    g.node("n", id="n", label=label, shape="box", style="rounded,filled")
    text = text_of(groups(_tidy(render(g.source)))["n"])
    assert text.startswith("Mean axis (0, 1) m scalar float64")


def test_on_path_sum_labels_say_what_they_add() -> None:
    grad = ArrayData.of(np.array([2.0]))
    r = ReduceStep(0, 0, 1, 0, False, 3, 0, 1, (0,), (4, 1), (1,), grad)
    assert labels._reduce_label([r], False) == (
        '<<FONT POINT-SIZE="11">\u03a3 over axes (0,)</FONT><BR/>'
        '<FONT POINT-SIZE="11">(4,1) \u2192 (1,)</FONT>>')
    acc = next(s for s in square_trace().steps if isinstance(s, AccumulateStep))
    label = labels._accumulate_label([acc], True)
    assert label.startswith('<<FONT POINT-SIZE="11">\u2295 sum of 2</FONT>')
    assert "[2, 4]" in label
