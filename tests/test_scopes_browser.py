"""Finding one's way in a 386-op model, in a real browser: scopes opened and closed by
click and by keyboard, a step inside a closed scope, the ×12 block opened, search and
jump, a node's dependencies lit; in the offline report and in JupyterLab."""

from __future__ import annotations

import pytest
from fixtures.traces import transformer_layers
from fixtures.viewer_page import wait_step

import gradviz as gv

pytestmark = pytest.mark.browser

SHOWN = ".gv-diagram svg:not([style*='display: none'])"


@pytest.fixture(scope="module")
def layers() -> gv.Trace:
    return transformer_layers(12)


def view_of(viewer) -> str:
    return viewer.evaluate("r => r.gvViewer.scopeView")


def wait_view(viewer, key: str) -> None:
    viewer.page.wait_for_function(
        "([r, key]) => r.gvViewer.scopeView === key", arg=[viewer.element_handle(), key],
        timeout=60_000)


def shown(viewer, selector: str):
    return viewer.locator(f"{SHOWN} {selector}")


def first_step_in(trace: gv.Trace, scope: str) -> int:
    """The first backward step of an op in ``scope`` (or a scope inside it)."""
    return next(s.index for s in trace.steps if s.kind == "backward" and (
        trace.ops[s.op].scope == scope or trace.ops[s.op].scope.startswith(scope + "/")))


def crumbs(viewer) -> list[str]:
    return [c.strip() for c in viewer.locator(".gv-crumbs .gv-crumb").all_inner_texts()]


def find_your_way(viewer, trace: gv.Trace, shots=None, prefix: str = "") -> None:
    """The walk a reader takes through the model, asserting what they see."""
    page = viewer.page
    # Closed at first: the twelve layers are one box marked ×12.
    assert view_of(viewer) == "/" and crumbs(viewer) == ["all closed"]
    block = shown(viewer, "[data-gv-scope='open']")
    assert block.count() == 1 and "layer_0 … layer_11 ×12" in block.text_content()
    assert block.get_attribute("role") == "button"
    # (named by what pressing does, then the words it shows)
    assert block.get_attribute("aria-label").startswith("open layer_0 … layer_11 ×12, ")
    # A step inside the closed block: the box lights up; the panel says which op works.
    k5 = first_step_in(trace, "layer_5/attention")
    viewer.evaluate(f"r => r.gvViewer.go({k5})")
    wait_step(viewer, k5)
    assert block.get_attribute("class").split()[-1] == "gv-active"
    note = viewer.locator(".gv-scope-note")
    assert note.is_visible() and "Inside layer_0 … layer_11 ×12, drawn closed" in note.inner_text()
    assert "layer_5/attention" in note.inner_text()
    viewer.press("ArrowRight")  # steps still play inside it
    wait_step(viewer, k5 + 1)
    assert block.get_attribute("class").split()[-1] == "gv-active"
    if shots:
        page.screenshot(path=str(shots / f"{prefix}scopes-closed.png"))
    # Open the ×12 block by a click: its twelve instances, each a box.
    block.click()
    wait_view(viewer, "repeat:layer_0")
    boxes = shown(viewer, "[data-gv-scope='open']")
    assert boxes.count() == 12
    assert crumbs(viewer) == ["all closed", "layer_0 … layer_11 ×12"]
    # Open layer_3 by the keyboard: focus its box, press Enter.
    third = shown(viewer, "[aria-label^='open layer_3,']")
    third.focus()
    page.keyboard.press("Enter")
    wait_view(viewer, "scope:layer_3")
    assert crumbs(viewer) == ["all closed", "layer_0 … layer_11 ×12", "layer_3"]
    border = shown(viewer, "[aria-label='close layer_3']")
    assert border.count() == 1
    assert shown(viewer, "[data-gv-scope='open']").count() == 11  # the other layers, closed
    k3 = first_step_in(trace, "layer_3")
    viewer.evaluate(f"r => r.gvViewer.go({k3})")
    wait_step(viewer, k3)
    assert shown(viewer, f"[id='o{trace.steps[k3].op}']").get_attribute("class").split()[-1] \
        == "gv-active"
    assert viewer.locator(".gv-scope-note").is_hidden()
    if shots:
        page.screenshot(path=str(shots / f"{prefix}scopes-layer3-open.png"))
    # Close it by its border (its label), with the keyboard too: back to the instances.
    border.focus()
    page.keyboard.press("Enter")
    wait_view(viewer, "repeat:layer_0")
    viewer.locator(".gv-crumbs .gv-crumb-all").click()
    wait_view(viewer, "/")
    # Search: a tensor by name opens its layer and jumps to its first step.
    search = viewer.locator(".gv-search")
    search.fill("layer_8/mlp/Relu")
    search.press("Enter")
    wait_view(viewer, "scope:layer_8")
    relu = next(t for t in trace.tensors if t.name.startswith("layer_8/mlp/Relu"))
    step = viewer.evaluate("r => r.gvViewer.step")
    assert step == min(s.index for s in trace.steps if getattr(s, "op", None) == relu.op
                       or getattr(s, "tensor", None) == relu.id
                       or (s.kind == "backward" and relu.id in trace.ops[s.op].inputs))
    assert "layer_8/mlp/Relu: step" in viewer.locator(".gv-nav-status").inner_text()
    selected = viewer.evaluate("r => r.gvViewer.selected")
    assert selected == f"o{relu.op}"
    # Its dependencies lit: what it reads (up) and what reads it (down), the rest faded.
    lit = {w: shown(viewer, f"[data-gv-dep='{w}']").count() for w in ("self", "up", "down")}
    assert lit["self"] == 1 and lit["up"] > 3 and lit["down"] > 3, lit
    up_ids = set(viewer.evaluate(
        f"r => Array.from(r.querySelectorAll(\"{SHOWN} [data-gv-dep='up']\"), e => e.id)"))
    matmul = trace.ops[relu.op].inputs[0]  # the Relu reads h @ W1: upstream of it
    assert f"o{trace.tensors[matmul].op}" in up_ids
    assert f"o{relu.op}" not in up_ids
    if shots:
        page.screenshot(path=str(shots / f"{prefix}scopes-upstream-lit.png"))
    viewer.focus()
    page.keyboard.press("Escape")
    assert viewer.evaluate("r => r.gvViewer.selected") is None
    assert shown(viewer, "[data-gv-dep]").count() == 0
    # A click on a node lights its dependencies too (a second click would go to its step).
    shown(viewer, f"[id='o{relu.op}']").click()
    assert viewer.evaluate("r => r.gvViewer.selected") == f"o{relu.op}"
    page.keyboard.press("Escape")
    # The jump list: where layer_2's backward starts.
    jump = viewer.locator(".gv-scope-jump")
    k2 = min(k for k, s in enumerate(trace.steps)
             if _scope_of(trace, s) == "layer_2" or _scope_of(trace, s).startswith("layer_2/"))
    option = jump.locator("option", has_text="layer_2 ·")
    jump.select_option(option.get_attribute("value"))
    wait_step(viewer, k2)
    wait_view(viewer, "scope:layer_2")
    ticks = viewer.locator(".gv-timeline .gv-scope-tick")
    assert ticks.count() == 13  # where layer_11 ... layer_0 and the final gradients begin
    assert "final gradients · steps 591–650" in jump.inner_text()
    assert "layer_3 · steps 395–443" in jump.inner_text()  # (as the README says)


def _scope_of(trace: gv.Trace, s) -> str:
    op = getattr(s, "op", None)
    return trace.ops[op].scope if op is not None else trace.tensors[s.tensor].scope


def test_a_report_of_twelve_layers_opens_closes_searches_and_lights_dependencies(
        layers, offline_page, tmp_path, screenshot_dir):
    path = gv.export_html(layers, tmp_path / "layers.html", title="twelve transformer layers")
    offline_page.set_viewport_size({"width": 1400, "height": 1000})
    offline_page.goto(path.as_uri())
    offline_page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = offline_page.locator(".gv-viewer")
    find_your_way(viewer, layers, screenshot_dir, "report-")
    assert offline_page.blocked_requests == [] and offline_page.page_errors == []


CELLS = [
    "import sys\n"
    "sys.path.insert(0, {tests!r})\n"
    "import gradviz as gv\n"
    "from fixtures.traces import transformer_layers\n"
    "trace = transformer_layers(12)",
    "w = gv.show(trace)\nw",
]


def test_the_widget_in_jupyterlab_asks_the_kernel_for_each_scope_it_opens(
        layers, lab, page, screenshot_dir):
    import pathlib
    tests = str(pathlib.Path(__file__).parent)
    nb = lab.write_notebook("scopes_lab.ipynb", [CELLS[0].format(tests=tests), CELLS[1]])
    page.set_viewport_size({"width": 1400, "height": 1000})
    lab.open_notebook(page, nb)
    lab.collapse_left(page)
    lab.run_all(page)
    viewer = page.locator(".jp-OutputArea-output .gv-viewer").first
    viewer.locator(".gv-diagram svg").wait_for(timeout=60_000)
    # (the widget's payload holds its own drawing only: each other view comes from the kernel)
    assert viewer.evaluate("r => r.gvViewer.steps") == len(layers.steps)
    find_your_way(viewer, layers, screenshot_dir, "lab-")
    assert lab.error_outputs(page) == []


def test_a_small_model_drawn_open_closes_a_scope_and_comes_back_as_drawn(
        offline_page, tmp_path):
    from fixtures.traces import scoped_mlp
    tr = scoped_mlp()
    path = gv.export_html(tr, tmp_path / "mlp.html")
    offline_page.goto(path.as_uri())
    offline_page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = offline_page.locator(".gv-viewer")
    # Drawn open as ever; each scope's border is a button that closes it.
    assert view_of(viewer) == "" and crumbs(viewer) == ["all closed"]
    assert shown(viewer, "[data-gv-scope='close']").count() == 3
    k = first_step_in(tr, "layer1")
    viewer.evaluate(f"r => r.gvViewer.go({k})")
    wait_step(viewer, k)
    assert viewer.locator(".gv-scope-note").is_hidden()  # nothing is closed
    # Search finds what is drawn already: the drawing stays as it is.
    search = viewer.locator(".gv-search")
    search.fill("layer2/W2")
    search.press("Enter")
    viewer.page.wait_for_function(
        "r => r.querySelector('.gv-nav-status').textContent.startsWith('layer2/W2')",
        arg=viewer.element_handle())
    assert view_of(viewer) == "" and viewer.evaluate("r => r.gvViewer.selected") == \
        f"t{next(t.id for t in tr.tensors if t.name.startswith('layer2/W2'))}"
    # Closing layer1 (a click on its label) closes its level: every scope a box.
    shown(viewer, "[aria-label='close layer1'] text").first.click()
    wait_view(viewer, "/")
    assert crumbs(viewer) == ["as drawn", "all closed"]
    assert shown(viewer, "[data-gv-scope='open']").count() == 3
    # A step inside layer1 now lights its box, and the panel says so.
    viewer.evaluate(f"r => r.gvViewer.go({k})")
    wait_step(viewer, k)
    box = shown(viewer, "[aria-label^='open layer1,']")
    assert box.get_attribute("class").split()[-1] == "gv-active"
    assert "Inside layer1, drawn closed" in viewer.locator(".gv-scope-note").inner_text()
    viewer.locator(".gv-crumb-drawn").click()
    wait_view(viewer, "")
    assert offline_page.page_errors == [] and offline_page.blocked_requests == []


def test_practice_keeps_an_asked_steps_values_hidden_in_a_scope_opened(
        layers, offline_page, tmp_path):
    path = gv.export_html(layers, tmp_path / "practice.html", practice=True)
    offline_page.goto(path.as_uri())
    offline_page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = offline_page.locator(".gv-viewer")
    k = first_step_in(layers, "layer_11")
    viewer.evaluate(f"r => r.gvViewer.go({k})")
    wait_step(viewer, k)
    assert viewer.locator(".gv-practice-body input, .gv-practice-body textarea").count() > 0
    viewer.evaluate("r => r.gvViewer.openScope('scope:layer_11')")
    wait_view(viewer, "scope:layer_11")
    # the opened drawing lights the step's own elements, values and all: none shows
    shown_values = viewer.evaluate(f"""r => {{
        const svg = r.querySelector("{SHOWN}");
        const lit = Array.from(svg.querySelectorAll('.gv-active .gv-grad-value'));
        return [lit.length, lit.filter(e => getComputedStyle(e).visibility !== 'hidden').length];
    }}""")
    assert shown_values[0] > 0 and shown_values[1] == 0, shown_values
    assert offline_page.page_errors == []


def test_a_handout_printed_with_a_scope_open_shows_that_scope(layers, offline_page, tmp_path):
    path = gv.export_html(layers, tmp_path / "handout.html")
    offline_page.goto(path.as_uri())
    offline_page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = offline_page.locator(".gv-viewer")
    k = first_step_in(layers, "layer_3")
    closed = viewer.evaluate(f"r => r.gvViewer.stepIds({k})")  # the ×12 box
    viewer.evaluate("r => r.gvViewer.openScope('scope:layer_3')")
    wait_view(viewer, "scope:layer_3")
    viewer.evaluate(f"r => r.gvViewer.go({k})")
    wait_step(viewer, k)
    ids = viewer.evaluate(f"r => r.gvViewer.stepIds({k})")
    assert ids and not set(ids) & set(closed)
    assert viewer.evaluate(f"r => r.gvViewer.handout([{k}])") == 1
    printed = offline_page.evaluate("""() => {
        const svg = document.querySelector('.gv-handout .gv-handout-svg');
        return {lit: Array.from(svg.querySelectorAll('.gv-active'), e => e.dataset.gvId),
                box: svg.getAttribute('viewBox'),
                texts: Array.from(svg.querySelectorAll('text'), t => t.textContent)};
    }""")
    # the step's own elements in the drawing shown lit, cropped about them, inside layer_3
    assert sorted(printed["lit"]) == sorted(ids)
    shown_box = viewer.evaluate(f"r => r.querySelector(\"{SHOWN}\").getAttribute('viewBox')")
    assert printed["box"] != shown_box
    assert {"layer_3", "layer_norm", "batchnorm"} <= set(printed["texts"])  # its clusters
    assert offline_page.page_errors == []
