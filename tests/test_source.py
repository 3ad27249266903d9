"""Every node knows the line of code that made it: a script's file and line, a notebook's cell.

The engine keeps where the first frame outside gradviz was when each op was
made; a trace turns that into a :class:`Source` (file, line, function, the
line's text, the cell), keeps it in its JSON, and every renderer shows it,
or leaves it out with ``source=False``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

import gradviz as gv
from gradviz.engine.graph import source_here
from gradviz.trace.source import Source, Sources
from gradviz.views.viewdata import view_data
from harness import REPO_ROOT, kernel_env


def line_of(code: str) -> int:
    """The line of this file that holds ``code`` (once)."""
    lines = [k for k, text in enumerate(Path(__file__).read_text().splitlines(), 1)
             if text.strip() == code]
    assert len(lines) == 1, code
    return lines[0]


def made_at(t: gv.Tensor) -> Source | None:
    """The line the engine recorded for ``t``'s op, as a trace reads it."""
    return Sources()(t.op._source)


# ---------------------------------------------------------------- the engine records the line

x = gv.constant([1.0, -2.0], name="src_x")
w = gv.Variable([0.5, 3.0], name="src_w")

#: Each way a program makes an op, each on a line of its own: the op's line is the lambda's.
MAKERS = [
    lambda: x + w,
    lambda: 2.0 + x,
    lambda: x - w,
    lambda: 1.0 - x,
    lambda: x * w,
    lambda: x * 1.01,
    lambda: x / w,
    lambda: -x,
    lambda: x ** 2.0,
    lambda: x[0],
    lambda: abs(x),
    lambda: x >= w,
    lambda: gv.add(x, w),
    lambda: gv.tanh(x),
    lambda: gv.exp(x),
    lambda: gv.nn.relu(x),
    lambda: gv.reduce_sum(x),
    lambda: gv.reduce_mean(x * w),
    lambda: gv.matmul(gv.reshape(x, (1, 2)), gv.reshape(w, (2, 1))),
    lambda: gv.concat([x, w], axis=0),
    lambda: gv.stack([x, w])[1],
    lambda: gv.split(gv.concat([x, w], 0), 2)[0],
    lambda: gv.reduce_variance(x),
    lambda: gv.nn.softmax(x),
    lambda: gv.einsum("i,i->", x, w),
    lambda: gv.where(x > 0.0, x, w),
    lambda: gv.identity(x),
]


@pytest.mark.parametrize("k", range(len(MAKERS)))
def test_each_op_records_the_line_that_made_it(k):
    make = MAKERS[k]
    out = make()
    src = made_at(out)
    assert src is not None
    assert (src.file, src.line, src.function) == (__file__, make.__code__.co_firstlineno,
                                                  "<lambda>")
    assert src.code.startswith("lambda: ") and src.cell is None


def test_ops_written_out_of_others_record_the_users_line():
    # reduce_variance is gradviz's, made of a Mean, a Sub, a Square and a Mean: all
    # of them were made by this line
    tr = gv.trace_gradients(gv.reduce_variance(x * w), [w])
    lines = {o.type: o.source.line for o in tr.ops}
    here = line_of("tr = gv.trace_gradients(gv.reduce_variance(x * w), [w])")
    assert len(lines) >= 4 and set(lines.values()) == {here}


def test_a_variable_and_a_named_constant_record_theirs_and_a_number_its_readers():
    v = gv.Variable(2.0, name="src_v")
    c = gv.constant(4.0, name="src_c")
    y = v * c + 1.01
    tr = gv.trace_gradients(y, [v])
    by_name = {t.name: t for t in tr.tensors}
    assert by_name["src_v:0"].source.line == line_of('v = gv.Variable(2.0, name="src_v")')
    assert by_name["src_c:0"].source.code == 'c = gv.constant(4.0, name="src_c")'
    # the 1.01 was made with the Add, by the line of `y = ...`: it takes that line
    one_o_one = next(t for t in tr.tensors if t.kind == "constant" and t.name != "src_c:0")
    assert one_o_one.source == tr.ops[-1].source
    assert one_o_one.source.line == line_of("y = v * c + 1.01")
    # a computed tensor is its op's
    assert all(t.source is None for t in tr.tensors if t.kind == "computed")


def test_a_functions_ops_name_the_function_and_a_custom_gradient_its_call():
    def layer(h, W):
        return gv.nn.relu(gv.matmul(h, W))

    @gv.custom_gradient
    def clip(h):
        def grad(dy):
            return dy
        return gv.identity(h * 1.0), grad

    W = gv.Variable(np.eye(2, dtype=np.float32), name="src_W")
    h = gv.constant([[1.0, -1.0]], name="src_h")
    with gv.GradientTape() as tape:
        y = gv.reduce_sum(clip(layer(h, W)))
    tr = tape.trace_gradient(y, W)
    by_type = {o.type: o.source for o in tr.ops}
    assert by_type["MatMul"].function.endswith("<locals>.layer")
    assert by_type["MatMul"].code == "return gv.nn.relu(gv.matmul(h, W))"
    assert by_type["MatMul"].line == by_type["Relu"].line == line_of(
        "return gv.nn.relu(gv.matmul(h, W))")
    assert by_type["Sum"].line == line_of("y = gv.reduce_sum(clip(layer(h, W)))")
    assert by_type["Sum"].function.endswith("custom_gradient_its_call")
    # a custom gradient is one op, made where the function was called
    assert by_type["CustomGradient"] == by_type["Sum"]


def test_ops_a_backward_pass_builds_record_the_line_that_began_it():
    v = gv.Variable(3.0, name="src_v2")
    with gv.GradientTape() as outer:
        with gv.GradientTape() as inner:
            y = v * v * v
        dy = inner.gradient(y, v)  # 3 v^2, built by the backward pass
    tr = outer.trace_gradient(dy, v)
    built = [o for o in tr.ops if o.source is not None and "inner.gradient" in o.source.code]
    assert built, [o.source for o in tr.ops]
    assert all(o.source.code == "dy = inner.gradient(y, v)  # 3 v^2, built by the backward pass"
               for o in built)


def test_recording_can_be_switched_off_and_back():
    with gv.record_source(False):
        off = x * w
        assert source_here() is None
    on = x * w
    assert off.op._source is None and made_at(on) is not None
    gv.record_source(False)
    try:
        assert (x * w).op._source is None
    finally:
        gv.record_source(True)
    assert (x * w).op._source is not None
    tr = gv.trace_gradients(off, [w])
    assert [o.source for o in tr.ops] == [None]
    # x and w were made with recording on: theirs are the only lines the trace holds
    rows = json.loads(tr.to_json())["sources"]
    assert [r[3] for r in rows] == ['x = gv.constant([1.0, -2.0], name="src_x")',
                                    'w = gv.Variable([0.5, 3.0], name="src_w")']
    with pytest.raises(TypeError, match=r"record_source: expected True or False, got 'no'"):
        gv.record_source("no")


def test_each_thread_records_its_own_lines():
    got = {}

    def work(name):
        got[name] = made_at(gv.tanh(x) * w)

    threads = [threading.Thread(target=work, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got["a"].code == got["b"].code == "got[name] = made_at(gv.tanh(x) * w)"
    assert got["a"].function.endswith("<locals>.work")


# ---------------------------------------------------------------- a script and a notebook

SCRIPT = '''\
import sys
import gradviz as gv

def layer(x, W, b):
    return gv.relu(x @ W + b)

x = gv.constant([[1.0, -2.0]], name="x")
W1 = gv.Variable([[0.5, -1.0], [2.0, 0.25]], name="W1")
b1 = gv.Variable([0.1, 0.2], name="b1")
with gv.GradientTape() as tape:
    h = layer(x, W1, b1)
    loss = gv.reduce_sum(h * h)
open(sys.argv[1], "w").write(tape.trace_gradient(loss, [W1, b1]).to_json())
'''


def test_a_script_records_its_file_lines_and_functions(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    out = tmp_path / "trace.json"
    subprocess.run([sys.executable, str(script), str(out)], check=True, env=kernel_env(),
                   cwd=tmp_path, timeout=120)
    tr = gv.Trace.from_json(out.read_text())
    by_type = {o.type: o.source for o in tr.ops}
    assert by_type["MatMul"] == by_type["Add"] == by_type["Relu"] == Source(
        str(script), 5, "layer", "return gv.relu(x @ W + b)", None)
    assert by_type["Mul"] == by_type["Sum"] == Source(
        str(script), 12, "<module>", "loss = gv.reduce_sum(h * h)", None)
    w1 = next(t for t in tr.tensors if t.name == "W1:0")
    assert w1.source.line == 8 and w1.source.code.startswith("W1 = gv.Variable(")
    assert by_type["MatMul"].place == "model.py:5, in layer"
    # the step panel says it
    data = view_data(tr)
    matmul = next(s for s in data["steps"] if s["title"] == "MatMul backward")
    assert data["sources"][matmul["source"]] == {"code": "return gv.relu(x @ W + b)",
                                                 "place": "model.py:5, in layer"}


NOTEBOOK = [
    "import gradviz as gv",
    'x = gv.constant([[1.0, -2.0]], name="x")\n'
    'W1 = gv.Variable([[0.5, -1.0], [2.0, 0.25]], name="W1")\n'
    'b1 = gv.Variable([0.1, 0.2], name="b1")',
    "with gv.GradientTape() as tape:\n"
    "    h = gv.relu(x @ W1 + b1)\n"
    "    loss = gv.reduce_sum(h * h)",
    "trace = tape.trace_gradient(loss, [W1, b1])\n"
    "open(OUT, 'w').write(trace.to_json())",
]


def test_a_notebook_records_each_cell_and_the_line_within_it(tmp_path):
    out = tmp_path / "trace.json"
    cells = [f"OUT = {str(out)!r}"] + NOTEBOOK
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=kernel_env())
    assert [c.execution_count for c in nb.cells] == [1, 2, 3, 4, 5]
    tr = gv.Trace.from_json(out.read_text())
    by_type = {o.type: o.source for o in tr.ops}
    relu = by_type["Relu"]
    assert relu == by_type["MatMul"] == Source(None, 2, "<module>",
                                               "h = gv.relu(x @ W1 + b1)", 4)
    assert relu.place == "In [4], line 2"
    assert by_type["Sum"].cell == 4 and by_type["Sum"].line == 3
    w1 = next(t for t in tr.tensors if t.name == "W1:0")
    assert (w1.source.cell, w1.source.line) == (3, 2)
    data = view_data(tr)
    step = next(s for s in data["steps"] if s["title"] == "Relu backward")
    assert data["sources"][step["source"]] == {"code": "h = gv.relu(x @ W1 + b1)",
                                               "place": "In [4], line 2"}


def test_a_cell_run_again_with_the_same_text_keeps_each_runs_number(tmp_path):
    # IPython names a cell's file by its text: the ops of the first run of a text
    # still say its own In [n] once the same text has run again
    out = tmp_path / "trace.json"
    cells = [f"OUT = {str(out)!r}", "import gradviz as gv",
             'x = gv.constant([1.0, 2.0], name="x")',
             "a = gv.tanh(x)",  # In [4]
             "first = a",
             "a = gv.tanh(x)",  # In [6]: the same text
             "open(OUT, 'w').write(gv.trace_gradients(gv.reduce_sum(first * a), x).to_json())"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=kernel_env())
    tr = gv.Trace.from_json(out.read_text())
    assert sorted((o.source.cell, o.source.code) for o in tr.ops if o.type == "Tanh") == [
        (4, "a = gv.tanh(x)"), (6, "a = gv.tanh(x)")]
    x_source = next(t.source for t in tr.tensors if t.name == "x:0")
    assert (x_source.cell, x_source.line) == (3, 1)


def test_code_without_a_file_or_lines_still_writes_a_trace_that_loads():
    import ast
    ns = {"gv": gv, "x": x}
    exec(compile("y = gv.tanh(x)", "", "exec"), ns)  # no file name
    tree = ast.parse("z = gv.exp(x)")
    for node in ast.walk(tree):
        if hasattr(node, "lineno"):
            node.lineno = node.end_lineno = 0  # no line
    exec(compile(tree, "gen.py", "exec"), ns)
    tr = gv.trace_gradients(ns["y"] + ns["z"], x)
    made = {o.type: o.source for o in tr.ops}
    assert made["Tanh"].file == "<unknown>" and made["Exp"] is None
    assert gv.Trace.from_json(tr.to_json()).ops == tr.ops


# ---------------------------------------------------------------- the trace keeps it

def sourced_trace() -> gv.Trace:
    W = gv.Variable([[1.0, -2.0]], name="src_W2")
    h = gv.constant([[3.0], [0.5]], name="src_h2")
    return gv.trace_gradients(gv.reduce_sum(gv.tanh(gv.matmul(W, h)) * 1.5), [W],
                              title="sourced")


def test_a_trace_round_trips_its_sources_each_line_once():
    tr = sourced_trace()
    d = json.loads(tr.to_json())
    assert d["version"] == 3
    assert len(d["sources"]) == 3  # W's line, h's line, and the line of every op
    again = gv.Trace.from_json(tr.to_json())
    assert again.ops == tr.ops and again.tensors == tr.tensors
    assert all(o.source is not None for o in again.ops)
    assert again.to_json() == tr.to_json()


def test_a_trace_written_before_sources_loads_without_them():
    from fixtures.traces import version_2
    old = gv.Trace.from_dict(version_2(json.loads(sourced_trace().to_json())))
    assert all(o.source is None for o in old.ops) and all(t.source is None for t in old.tensors)
    data = view_data(old)
    assert "source" not in json.dumps(data["steps"]) and data["sources"] == []


@pytest.mark.parametrize("change,message", [
    (lambda d: d["ops"][0].update(source=99), r"trace\.ops\[0\]\.source: expected an index "
                                               r"into trace\.sources \(0 to 2\), got 99"),
    (lambda d: d["ops"][0].update(source="0"), r"trace\.ops\[0\]\.source: expected an index"),
    (lambda d: d["sources"][0].pop(), r"trace\.sources\[0\]: expected \[file, line, function, "
                                      r"code, cell\], got 4 fields"),
    (lambda d: d["sources"][0].__setitem__(1, 0), r"trace\.sources\[0\]\[1\] \(line\): expected "
                                                  r"a whole number from 1, got 0"),
    (lambda d: d["sources"][0].__setitem__(1, True), r"\[1\] \(line\): expected a whole number"),
    (lambda d: d["sources"][0].__setitem__(3, "a\nb"), r"\[3\] \(code\): 'a\\nb' is not one "
                                                       r"line of text"),
    (lambda d: d["sources"][0].__setitem__(0, 3), r"\[0\] \(file\): expected a string, got int"),
    (lambda d: d["sources"][0].__setitem__(2, ""), r"\[2\] \(function\): expected text, got an "
                                                   r"empty string"),
    (lambda d: d["sources"][0].__setitem__(4, -1), r"\[4\] \(cell\): expected a whole number"),
    (lambda d: d.update(sources={}), r"trace\.sources: expected a list, got dict"),
    (lambda d: d.update(version=2), r"trace\.(tensors|ops)\[\d+\]\.source: expected nothing: "
                                    r"the trace has no sources"),
])
def test_damaged_sources_are_named(change, message):
    d = json.loads(sourced_trace().to_json())
    change(d)
    with pytest.raises(ValueError, match=message):
        gv.Trace.from_dict(d)


# ---------------------------------------------------------------- source=False leaves it out

def _leaks(text: str, tr: gv.Trace) -> list[str]:
    """The paths and lines of code of ``tr`` that ``text`` holds."""
    found = []
    for src in {o.source for o in tr.ops} | {t.source for t in tr.tensors} - {None}:
        for part in (src.file, src.code, Path(src.file).name, src.function):
            if part and part != "<module>" and part in text:
                found.append(part)
    return found


def test_source_false_leaves_no_path_or_code_in_any_renderer(tmp_path):
    tr = sourced_trace()
    here = Path(__file__).name
    report = tr.to_html(tmp_path / "with.html")
    assert _leaks(report.read_text(encoding="utf-8"), tr)  # (what the test looks for is there)
    assert here in report.read_text(encoding="utf-8")
    outputs = {
        "to_html": tr.to_html(tmp_path / "without.html", source=False).read_text(
            encoding="utf-8"),
        "export_html": gv.export_html([tr, tr], tmp_path / "two.html",
                                      source=False).read_text(encoding="utf-8"),
        "to_svg": tr.to_svg(source=False) + tr.to_svg(step=2, crop=True, source=False),
        "to_dot": tr.to_dot(source=False).source,
        "show": json.dumps(gv.show(tr, source=False).payload),
        "to_json": tr.to_json(source=False),
        "view_data": json.dumps(view_data(tr, source=False)),
    }
    for name, text in outputs.items():
        assert not _leaks(text, tr), name
        assert here not in text and str(REPO_ROOT) not in text, name
    assert not json.loads(tr.to_json(source=False))["sources"]
    # the trace itself keeps them
    assert all(o.source is not None for o in tr.ops)
    assert tr.without_source() is tr.without_source()
    with pytest.raises(TypeError, match="to_json: source must be True or False"):
        tr.to_json(source="no")


def test_the_report_and_the_widget_show_the_line_by_default(tmp_path):
    tr = sourced_trace()
    payload = gv.show(tr).payload
    matmul = next(s for s in payload["steps"] if s["title"] == "MatMul backward")
    line = sourced_trace.__code__.co_firstlineno + 3
    # each line once: every step of the one line of the program points at one row
    assert [s.get("source") for s in payload["steps"]].count(matmul["source"]) >= 5
    assert payload["sources"][matmul["source"]] == {
        "code": "return gv.trace_gradients(gv.reduce_sum(gv.tanh(gv.matmul(W, h)) * 1.5), [W],",
        "place": f"{Path(__file__).name}:{line}, in sourced_trace"}
    page = tr.to_html(tmp_path / "r.html").read_text(encoding="utf-8")
    assert re.search(r"test_source\.py:\d+, in sourced_trace", page)
    assert "from: return gv.trace_gradients(" in tr.to_svg()  # the hover text


# ---------------------------------------------------------------- in the page

def open_report(page, path: Path, fragment: str = ""):
    page.goto(path.as_uri() + fragment)
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    return page.locator(".gv-viewer").first


def test_the_page_shows_the_steps_line_and_keeps_it_in_hidden_hover_texts(offline_page,
                                                                            tmp_path):
    tr = sourced_trace()
    k = next(s.index for s in tr.steps if getattr(s, "op", None) is not None
             and tr.ops[s.op].type == "MatMul")
    made = line_of("return gv.trace_gradients(gv.reduce_sum(gv.tanh(gv.matmul(W, h)) * 1.5), [W],")
    place = f"{Path(__file__).name}:{made}, in sourced_trace"
    viewer = open_report(offline_page, tr.to_html(tmp_path / "r.html", values="none"),
                         f"#t1/step{k}")
    line = viewer.locator(".gv-step-source")
    assert line.inner_text() == ("from return gv.trace_gradients(gv.reduce_sum(gv.tanh("
                                 f"gv.matmul(W, h)) * 1.5), [W], \u00b7 {place}")
    assert line.locator("code").inner_text().startswith("return gv.trace_gradients(")
    # values hidden: a tensor's hover text keeps what it is and its line, not its values
    w = viewer.locator(".gv-diagram svg g.gv-tensor").filter(has_text="src_W2").first
    w.hover(force=True)
    said = w.locator("> title").text_content().split("\n")
    assert said[0] == "src_W2:0" and said[-1] == "(values hidden)"
    assert said[1].startswith('from: W = gv.Variable([[1.0, -2.0]], name="src_W2")')
    assert said[2].startswith("at: ") and len(said) == 4
    # practice shows the line above its question
    viewer = open_report(offline_page, tr.to_html(tmp_path / "p.html", practice=True),
                         f"#t1/step{k}")
    box = viewer.locator(".gv-panel")
    assert box.locator(".gv-step-source").is_visible()
    assert box.locator(".gv-step-source").bounding_box()["y"] < box.locator(
        ".gv-practice").first.bounding_box()["y"]
    # and source=False: no line at all
    viewer = open_report(offline_page, tr.to_html(tmp_path / "n.html", source=False),
                         f"#t1/step{k}")
    assert viewer.locator(".gv-step-source").is_hidden()
    assert offline_page.page_errors == []


def test_blocks_of_two_threads_ending_in_either_order_leave_recording_as_it_was():
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    inside = []

    def a():
        with gv.record_source(False):
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def b():
        a_in.wait(10)
        with gv.record_source(False):
            b_in.set()
            a_out.wait(10)  # a's block ends first, inside b's
            inside.append((gv.record_source.on(), (x * w).op._source))

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inside == [(False, None)]  # b's block still held
    assert gv.record_source.on() and (x * w).op._source is not None
    # a call outside a block stays in force past a block inside it
    gv.record_source(False)
    try:
        with gv.record_source(True):
            assert gv.record_source.on()
        assert not gv.record_source.on()
    finally:
        gv.record_source(True)
    assert gv.record_source.on()


def test_explore_takes_source_too():
    view = gv.explore(lambda a: gv.tanh(a) * a, a=0.5, view={"source": False})
    assert "source" not in json.dumps(view.viewer.payload["steps"])
    view = gv.explore(lambda a: gv.tanh(a) * a, a=0.5)
    assert view.viewer.payload["sources"][0]["code"].startswith("view = gv.explore(lambda a:")
