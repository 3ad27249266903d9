"""The lessons run top to bottom: every cell, every assert on the seed figures.

Each notebook in ``notebooks/`` is executed in a fresh ``python3`` kernel with
this checkout's gradviz first on the kernel's path, two at a time (the
``lessons`` fixture runs every lesson the session selected, once).  A cell that raises fails
the test (the lessons assert the figures they reproduce, so a wrong engine
fails here).  An executed lesson must also have displayed the step-through
widget and at least one image, because that is what a student opens it for.
The notebooks are committed without outputs; this test never writes them back.

Every lesson ends with at least three exercises (``gv.exercise``): a cell that
asks, and a cell ``exN.check(...)`` where the learner types the answer.  The
test runs each as committed (it must ask for an answer), then with answers
typed as a learner would, by hand in :data:`ANSWERS`: the right one and at
least one wrong one, and reads what the check displayed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
from typing import NamedTuple

import nbformat
import pytest
from harness import ANSI, REPO_ROOT, kernel_env
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
LESSONS = (
    "01_what_gradients_computes",
    "02_grad_ys",
    "03_stopping_gradients",
    "04_jacobians_and_vjps",
    "05_writing_a_gradient",
    "06_gradients_in_parts",
    "07_training",
    "08_convolutions",
    "09_attention",
)
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
FOUND = sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb"))


def test_there_are_exactly_the_nine_lessons():
    assert tuple(FOUND) == LESSONS


@pytest.mark.parametrize("name", FOUND)
def test_notebook_is_committed_clean(name):
    nb = nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name} has no code cells"
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{name}: cells {dirty} were committed with outputs; clear them"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), (
        f"{name} must open with a '# title' Markdown cell (the reports use it)")
    headings = [i for i, c in enumerate(nb.cells)
                if c.cell_type == "markdown" and c.source.startswith("## Exercises")]
    assert headings, f"{name} has no '## Exercises' section"
    checks = [c for c in nb.cells[headings[-1]:] if CHECK_CELL.match(c.source.strip())]
    assert len(checks) >= 3, f"{name}: {len(checks)} exercises to check, at least 3 wanted"
    assert CHECK_CELL.match(nb.cells[-1].source.strip()), f"{name} must end with its exercises"
    # a cell that makes an exercise works out its answer: folded, its one visible line a comment
    for cell in nb.cells:
        if cell.cell_type == "code" and re.search(r"^ex\d+ = gv\.exercise", cell.source, re.M):
            assert cell.metadata.get("jupyter", {}).get("source_hidden"), (
                f"{name}: fold the cell that makes an exercise:\n{cell.source}")
            assert cell.source.startswith("#"), f"{name}: its first line shows: {cell.source}"


#: A cell where the learner answers an exercise, as the lesson leaves it.
CHECK_CELL = re.compile(r"^(ex\d+)\.check\(\.\.\.\)$")

#: What a learner types for each exercise, worked out by hand, and what the check must
#: say: "right", "not_yet", or the slip it names.  Each exercise is answered rightly
#: and wrongly at least once.
ANSWERS: dict[str, dict[str, list[tuple[str, str]]]] = {
    "01_what_gradients_computes": {
        "ex1": [("12.38", "right"), ("[[1.753], [10.62]]", "broadcast_not_summed"),
                ("6.19", "broadcast_mean")],
        # residuals 0.8763 + 3.5412 + (4 * 1.6649 + 0.5465 - 5 = 2.2061)
        "ex2": [("6.624", "right"), ("[[0.876], [3.54], [2.21]]", "broadcast_not_summed"),
                ("4.42", "not_yet")],
        "ex3": [("6.19", "right"), ("12.38", "mean_not_divided")],
        "ex4": [("(1,)", "right"), ("(2, 1)", "broadcast_not_summed")],
    },
    "02_grad_ys": {
        "ex1": [("[0.5, 0.25, 0.1667]", "right"), ("[2, 4, 6]", "derivative_not_inverted"),
                ("[1, 1, 1]", "grad_ys_ignored")],
        "ex2": [("1", "right"), ("32", "other_sources_walked")],
        "ex3": [("'a'", "right"), ("'b'", "surrogate_squared"),
                ("'c'", "grad_ys_must_be_derivative")],
    },
    "03_stopping_gradients": {
        # d/db = 1 + 3; d/da = 1 only: nothing flows through b
        "ex1": [("[1, 4, 1]", "right"), ("[9, 4, 1]", "cut_ignored"),
                ("[1, 1, 1]", "every_tensor_held")],
        "ex2": [("['k', 'u']", "right"), ("['u']", "integer_gets_gradient"),
                ("['k']", "unconnected_zero"), ("['q', 'k', 'u']", "stopped_gets_nothing")],
        "ex3": [("'a'", "right"), ("'b'", "unconnected_zero"), ("'c'", "unconnected_learns")],
    },
    "04_jacobians_and_vjps": {
        "ex1": [("4", "right"), ("16", "passes_per_input"), ("1", "passes_one"),
                ("32", "not_yet")],
        "ex2": [("[0, 1]", "right"), ("[1, 0]", "other_row"), ("[1, 1]", "rows_summed")],
        "ex3": [("[4, 12]", "right"), ("[2, 6]", "fan_out_one")],
        "ex4": [("16", "right"), ("4", "forward_passes_per_output"), ("5", "not_yet")],
        # dy = dx * w + dw * x = [1*3 + 0, 0 + 2*2]
        "ex5": [("[3, 4]", "right"), ("[3, 0]", "product_rule_term_missing"),
                ("[4, 1]", "tangent_forgotten"), ("[1, 1]", "not_yet")],
    },
    "05_writing_a_gradient": {
        "ex1": [("[[573, 816], [1295, 1844]]", "right"),
                ("[[573, 1295], [816, 1844]]", "matmul_result_transposed")],
        "ex2": [("(3, 4)", "right"), ("(2, 4)", "shape_of_upstream"),
                ("(4, 3)", "shape_transposed")],
        "ex3": [("[-1, 0.5, 1]", "right"), ("[-3, 0.5, 2]", "custom_gradient_ignored")],
    },
    "06_gradients_in_parts": {
        "ex1": [("100", "right"), ("1", "passes_one"), ("12", "passes_per_input")],
        "ex2": [("(8, 2, 3)", "right"), ("(8, 2, 8, 3)", "jacobian_full")],
        "ex3": [("'a'", "right"), ("'b'", "per_example_gradient_product"),
                ("'c'", "summed_rows_as_jacobian")],
    },
    "07_training": {
        "ex1": [("1 / 4 ** 5", "right"), ("0.5 ** 5", "value_for_slope"),
                ("0.25", "one_layer_slope"), ("5 / 4", "slopes_added")],
        # softmax over one logit is 1, and 1 * sum(labels) - labels = 0
        "ex2": [("[[0], [0], [0], [0]]", "right"),
                ("[[0.25], [0], [0], [0.25]]", "softmax_minus_labels")],
        "ex3": [("'a'", "right"), ("'b'", "overshoot_assumed")],
    },
    "08_convolutions": {
        # each output's gradient spreads over its window with the kernel as it is: 1 * k at
        # the top left, 2 * k at the bottom right, overlapping in the middle
        "ex1": [("[[[[1], [2], [0]], [[3], [6], [4]], [[0], [6], [8]]]]", "right"),
                ("[[[[4], [3], [0]], [[2], [9], [6]], [[0], [4], [2]]]]", "kernel_not_flipped"),
                ("[[1, 2, 0], [3, 6, 4], [0, 6, 8]]", "wrong_shape")],
        # winners: 5 in the top window, 6 in the bottom one
        "ex2": [("[[[[0], [1]], [[0], [0]], [[0], [0]], [[2], [0]]]]", "right"),
                ("[[[[0], [1]], [[0], [0]], [[0], [0]], [[0], [2]]]]", "not_yet"),
                ("[[[[1], [1]], [[1], [1]], [[2], [2]], [[2], [2]]]]", "pool_gradient_everywhere"),
                ("[[[[0.25], [0.25]], [[0.25], [0.25]], [[0.5], [0.5]], [[0.5], [0.5]]]]",
                 "pool_averaged")],
        "ex3": [("(3, 3, 1, 2)", "right"), ("(2, 6, 6, 2)", "shape_of_upstream")],
    },
    "09_attention": {
        # "the" is read twice: dL/dx[0, 3] + dL/dx[4, 3] = -0.02086 + -0.1258
        "ex1": [("-0.1467", "right"), ("-0.1258", "gather_one_contribution"),
                ("-0.02086", "not_yet")],
        # p = softmax([2, 1, 0]) = [0.6652, 0.2447, 0.0900]; p * (g - p[0])
        "ex2": [("[[0.2227, -0.1628, -0.0599]]", "right"),
                ("[[0.2227, 0, 0]]", "softmax_diagonal")],
        "ex3": [("[[0.25, -0.5]]", "right"), ("[[0.5, -1]]", "scale_left_out")],
    },
}


def with_answers(nb: nbformat.NotebookNode, name: str) -> list[tuple[int, str, str]]:
    """Add, after each exercise's answer cell, one cell per answer typed for it; the
    (cell index, exercise, what the check must say) of every answer cell, the cell as
    committed first ("unanswered")."""
    typed = ANSWERS[name]
    cells, expected, asked = [], [], []
    for cell in nb.cells:
        cells.append(cell)
        m = CHECK_CELL.match(cell.source.strip()) if cell.cell_type == "code" else None
        if not m:
            continue
        ex = m.group(1)
        asked.append(ex)
        expected.append((len(cells) - 1, ex, "unanswered"))
        for answer, says in typed.get(ex, []):
            cells.append(new_code_cell(f"{ex}.check({answer})"))
            expected.append((len(cells) - 1, ex, says))
    assert sorted(asked) == sorted(typed), (
        f"{name}: exercises {asked}, answers typed for {sorted(typed)}")
    for ex, answers in typed.items():
        says = {s for _, s in answers}
        assert "right" in says and says - {"right"}, f"{name} {ex}: type a right and a wrong answer"
    nb.cells = cells
    return expected


def feedback_shown(cell: nbformat.NotebookNode) -> str:
    """The HTML a check cell displayed (its feedback box)."""
    shown = [o.data["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]
    assert len(shown) == 1, f"cell {cell.source!r} displayed {len(shown)} HTML outputs"
    return shown[0]


# Run after a lesson, in its kernel: every formula of every trace the lesson made
# (kept in a variable, or in a list, tuple or dict of them) against the engine.
CHECK_FORMULAS = """
import json as _json
from gradviz import Trace as _Trace
from gradviz.views.explain import formula_mismatches as _mismatches
_found = {}
for _k, _v in list(globals().items()):
    for _t in (_v.values() if isinstance(_v, dict) else _v if isinstance(_v, (list, tuple))
               else [_v]):
        if isinstance(_t, _Trace):
            _found[id(_t)] = _t
print("FORMULAS " + _json.dumps({"traces": len(_found), "steps": sum(len(_t.steps) for _t in
      _found.values()), "wrong": [m for _t in _found.values() for m in _mismatches(_t)]}))
"""


#: How many lessons run at once, each in its own kernel (a kernel is a process).
AT_ONCE = max(1, min(2, os.cpu_count() or 1))


class Run(NamedTuple):
    """A lesson as executed with the answers typed in and the formula check after it."""

    nb: nbformat.NotebookNode  # the cells as committed, each exercise's answers after it
    expected: list[tuple[int, str, str]]  # see with_answers
    error: str | None  # what a cell raised, or None
    formulas: nbformat.NotebookNode  # the CHECK_FORMULAS cell, run after the lesson


def run_lessons(names: list[str]) -> dict[str, Run]:
    """Execute ``names``, :data:`AT_ONCE` at a time, each in a fresh kernel; a cell that
    raises ends only its own lesson's run."""

    async def one(name: str, slots: asyncio.Semaphore) -> Run:
        nb = nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)
        expected = with_answers(nb, name)
        nb.cells.append(nbformat.v4.new_code_cell(CHECK_FORMULAS))
        client = NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(NOTEBOOKS_DIR)}})
        error = None
        async with slots:
            try:
                await client.async_execute(env=kernel_env())
            except CellExecutionError as exc:
                error = ANSI.sub("", str(exc))
        check = nb.cells.pop()
        return Run(nb, expected, error, check)

    async def every() -> dict[str, Run]:
        slots = asyncio.Semaphore(AT_ONCE)
        return dict(zip(names, await asyncio.gather(*(one(n, slots) for n in names))))

    # in a thread of its own: a browser test's Playwright keeps an event loop running in
    # this one, where asyncio.run refuses to start another
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, every()).result()


@pytest.fixture(scope="module")
def lessons(request: pytest.FixtureRequest) -> dict[str, Run]:
    """Every lesson a test of this module selected, run once, together, before the first
    of them is checked; a test of a lesson not selected runs it alone."""
    here = request.node.path
    names = sorted({item.callspec.params["name"] for item in request.session.items
                    if item.path == here and "name" in getattr(
                        getattr(item, "callspec", None), "params", {})})
    runs = run_lessons(names)

    class Runs(dict):
        def __missing__(self, name: str) -> Run:
            self[name] = run_lessons([name])[name]
            return self[name]

    return Runs(runs)


@pytest.mark.parametrize("name", FOUND)
def test_notebook_runs_and_shows_the_widget_and_a_plot(name, lessons):
    nb, expected, error, check = lessons[name]
    if error is not None:
        pytest.fail(f"{name}: a cell raised\n{error}", pytrace=False)

    # every formula the lesson's traces show runs and gives the engine's gradient
    # (the kernel may flush one print in two pieces: the text, then its newline)
    line = "".join(o.text for o in check.outputs if o.get("name") == "stdout").strip()
    assert line.count("FORMULAS ") == 1, f"{name}: the check printed {line!r}"
    found = json.loads(line.removeprefix("FORMULAS "))
    assert found["traces"] >= 1, f"{name}: no trace left in the lesson's variables to check"
    assert found["wrong"] == [], f"{name}: formulas that do not give the engine's gradient"

    # every exercise asks, and each answer typed gets the feedback it must
    for index, ex, says in expected:
        asked = [o.data["text/html"] for c in nb.cells if c.cell_type == "code"
                 and re.search(rf"^{ex} = gv\.exercise", c.source, re.MULTILINE)
                 for o in c.outputs if "text/html" in o.get("data", {})]
        assert any("class='gv-question" in h for h in asked), f"{name}: {ex} asks nothing"
        shown = feedback_shown(nb.cells[index])
        verdict = says if says in ("right", "not_yet", "unanswered") else "misconception"
        assert f"class='gv-feedback gv-{verdict}'" in shown, (
            f"{name}: {nb.cells[index].source} should say {says}:\n{shown}")
        if verdict == "misconception":
            assert f"data-kind='{says}'" in shown, f"{name}: {nb.cells[index].source}: {shown}"

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, f"{name}: error outputs {[(o.ename, o.evalue) for o in errors]}"
    mimes = [m for o in outputs for m in o.get("data", {})]
    assert WIDGET_MIME in mimes, f"{name} displayed no step-through widget"
    assert any(m.startswith("image/") for m in mimes), f"{name} displayed no plot"
    # every widget shown is a gradviz viewer whose state nbclient kept, or an
    # explorer (gv.explore: its inputs' controls, then a viewer)
    state = nb.metadata.get("widgets", {}).get(
        "application/vnd.jupyter.widget-state+json", {}).get("state", {})
    shown = [o.data[WIDGET_MIME]["model_id"] for o in outputs if WIDGET_MIME in o.get("data", {})]
    for model_id in shown:
        assert model_id in state, f"{name}: widget {model_id} has no saved state"
        widget = state[model_id]["state"]
        if "gv-explore" in widget.get("_dom_classes", []):
            model_id = widget["children"][-1].removeprefix("IPY_MODEL_")
            assert model_id in state, f"{name}: explorer's viewer {model_id} has no saved state"
            widget = state[model_id]["state"]
        assert widget.get("payload", {}).get("steps"), f"{name}: widget {model_id} has no steps"
    # nothing a student would read as a problem: no warnings or tracebacks on stderr
    stderr = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not stderr, f"{name} wrote to stderr:\n" + "\n".join(stderr)


def executed(lessons: dict[str, Run], name: str) -> nbformat.NotebookNode:
    """A lesson as the runs above executed it (its cells as committed, each exercise's
    answers typed after it), after it had run cleanly."""
    nb, _, error, _ = lessons[name]
    assert error is None, f"{name}: a cell raised\n{error}"
    return nb


def test_lesson_02_draws_its_32_branch_fan_in_with_a_few_branches(lessons):
    """Lesson 02's fan-in has 32 branches; the diagram it steps through draws 4.

    Drawn whole, one branch pass of the 32-branch model is 228 nodes and 227
    edges converging on one ``AddN``, wider than any screen.  The lesson keeps
    the 32-branch model for its numbers and its memory plot, prints how many of
    that ``AddN``'s 32 inputs receive a gradient, and shows the same pass on
    the same model built with 4 branches.
    """
    nb = executed(lessons, "02_grad_ys")
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    printed = "".join(o.text for o in outputs if o.output_type == "stream")
    assert "32 branches: the branch 0 pass sends a gradient to 1 of AddN's 32 inputs" in printed
    assert "4 branches: the branch 0 pass sends a gradient to 1 of AddN's 4 inputs" in printed

    state = nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    shown = [state[o.data[WIDGET_MIME]["model_id"]]["state"]["payload"]
             for o in outputs if WIDGET_MIME in o.get("data", {})]
    fan_in = [p for p in shown if ">AddN<" in p["svg"]]
    assert len(fan_in) == 1, f"expected one widget drawing the AddN fan-in, got {len(fan_in)}"
    for svg in (fan_in[0]["svg"], fan_in[0]["overview"]):
        if svg is None:  # no overview: the drawing is too large for one
            continue
        branches = set(re.findall(r">(input\d+)<", svg))
        assert branches == {f"input{i}" for i in range(4)}, sorted(branches)
        nodes, edges = svg.count('class="node'), svg.count('class="edge')
        assert nodes <= 40 and edges <= 40, f"{nodes} nodes, {edges} edges: not 4 branches"


def printed(nb: nbformat.NotebookNode) -> str:
    return "".join(o.text for c in nb.cells if c.cell_type == "code" for o in c.outputs
                   if o.output_type == "stream" and o.name == "stdout")


def test_lesson_08_checks_the_flipped_kernel_and_the_routing_by_hand(lessons):
    text = printed(executed(lessons, "08_convolutions"))
    found = re.search(r"largest value ([\d.]+); the hand-made flipped-kernel convolution is off by "
                      r"at most ([\d.e+-]+), the same without the flip by ([\d.]+)", text)
    assert found, text
    largest, flipped, unflipped = map(float, found.groups())
    assert flipped < 1e-4 * largest and unflipped > largest / 10  # the flip is what agrees
    # a 2x2 max-pool over (2, 6, 6, 2): one input of each of its 36 windows gets a gradient
    assert "36 of 144 inputs of the pool get a gradient: one per window, 36 windows" in text
    assert "<GradientCheck passed" in text
    # the saliency map: the pixels out of every winning, active window's reach get exactly 0
    assert re.search(r"pixels whose gradient is exactly 0: \['\d+ of 64 in image 0', "
                     r"'\d+ of 64 in image 1'\]", text), text


def test_lesson_09_shows_a_sparse_embedding_gradient_and_checks_qkv_by_hand(lessons):
    text = printed(executed(lessons, "09_attention"))
    # only the rows of the sentence's five words change; "a", "dog" and "<pad>" do not
    assert "rows read: [1, 2, 3, 4, 1, 5]" in text
    assert "rows with a gradient: ['the', 'cat', 'sat', 'on', 'mat']" in text
    for name in "QKV":
        found = re.search(rf"d{name}: hand-written NumPy vs the engine, largest difference "
                          r"([\d.e+-]+)", text)
        assert found and float(found.group(1)) < 1e-6, text
