"""The lessons run top to bottom: every cell, every assert on the seed figures.

Each notebook in ``notebooks/`` is executed in a fresh ``python3`` kernel with
this checkout's gradviz first on the kernel's path.  A cell that raises fails
the test (the lessons assert the figures they reproduce, so a wrong engine
fails here).  An executed lesson must also have displayed the step-through
widget and at least one image, because that is what a student opens it for.
The notebooks are committed without outputs; this test never writes them back.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from harness import ANSI, REPO_ROOT, kernel_env
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
LESSONS = (
    "01_what_gradients_computes",
    "02_grad_ys",
    "03_stopping_gradients",
    "04_jacobians_and_vjps",
    "05_writing_a_gradient",
    "06_gradients_in_parts",
    "07_training",
)
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
FOUND = sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb"))


def test_there_are_exactly_the_seven_lessons():
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
    assert "exercise" in nb.cells[-1].source.lower(), f"{name} must end with exercises"


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


@pytest.mark.parametrize("name", FOUND)
def test_notebook_runs_and_shows_the_widget_and_a_plot(name):
    nb = nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(CHECK_FORMULAS))
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS_DIR)}})
    try:
        client.execute(env=kernel_env())
    except CellExecutionError as exc:
        text = ANSI.sub("", str(exc))
        pytest.fail(f"{name}: a cell raised\n{text}", pytrace=False)

    # every formula the lesson's traces show runs and gives the engine's gradient
    check = nb.cells.pop()
    (line,) = [o.text for o in check.outputs if o.get("name") == "stdout"]
    found = json.loads(line.removeprefix("FORMULAS "))
    assert found["traces"] >= 1, f"{name}: no trace left in the lesson's variables to check"
    assert found["wrong"] == [], f"{name}: formulas that do not give the engine's gradient"

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


def test_lesson_02_draws_its_32_branch_fan_in_with_a_few_branches():
    """Lesson 02's fan-in has 32 branches; the diagram it steps through draws 4.

    Drawn whole, one branch pass of the 32-branch model is 228 nodes and 227
    edges converging on one ``AddN``, wider than any screen.  The lesson keeps
    the 32-branch model for its numbers and its memory plot, prints how many of
    that ``AddN``'s 32 inputs receive a gradient, and shows the same pass on
    the same model built with 4 branches.
    """
    nb = nbformat.read(NOTEBOOKS_DIR / "02_grad_ys.ipynb", as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS_DIR)}}).execute(env=kernel_env())
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
