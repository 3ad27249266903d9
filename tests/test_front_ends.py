"""The viewer in every Jupyter front end tested here, with and without a kernel.

- Notebook 7 (a real server, headless Chromium): the widget appears, and
  clicks, keys and the slider step it, as in JupyterLab
  (``tests/test_viewer_lab.py``); ``gv.explore`` shows its controls and viewer;
  no page error is gradviz's (Notebook 7 throws one of its own as a page loads).
- A notebook run and saved without widget state (as ``make reports`` saves
  the lessons), opened again with no kernel running, in JupyterLab and in
  Notebook 7: each viewer's picture (``gradviz.views.picture``, the output
  after the widget's) shows, never the widget manager's "Error displaying
  widget" alone.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from fixtures.viewer_page import viewer_state, wait_step
from harness import kernel_env, write_notebook
from test_viewer_lab import _KERNEL_EXEC, CELLS, expected_active, kernel_steps

pytestmark = pytest.mark.browser

EXPLORE = ("ex = gv.explore(lambda W: 0.5 * gv.reduce_sum((X * W - Y) ** 2), W=1.0)\n"
           "ex")


def test_widget_steps_in_notebook7(notebook7, page, screenshot_dir):
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(error.stack or str(error)))
    nb = notebook7.write_notebook("viewer_nb7.ipynb", [*CELLS, EXPLORE])
    notebook7.open_notebook(page, nb)
    notebook7.run_all(page)
    steps = kernel_steps(page)
    n = len(steps)

    viewers = page.locator(".jp-OutputArea-output .gv-viewer")
    viewers.first.wait_for(state="visible", timeout=20_000)
    assert viewers.count() == 3  # trace, w, and the explorer's viewer
    viewer = viewers.first
    viewer.locator(".gv-diagram svg").wait_for()
    assert viewer.locator(".gv-title").text_content() == "linear regression"
    s0 = viewer_state(viewer)
    assert s0["step"] == 0 and s0["counter"].startswith(f"step 0 / {n - 1}")
    assert s0["active"] == expected_active(viewer, steps, 0) != []

    # a click on next
    viewer.locator(".gv-next").click()
    wait_step(viewer, 1)
    s1 = viewer_state(viewer)
    assert s1["active"] == expected_active(viewer, steps, 1)
    assert s1["sentence"] == steps[1]["sentence"] != s0["sentence"]

    # the right arrow, once the viewer has focus: it steps, and Notebook 7 ignores it
    cells = page.locator(".jp-Notebook .jp-Cell").count()
    viewer.locator(".gv-step-title").click()
    page.keyboard.press("ArrowRight")
    wait_step(viewer, 2)
    assert viewer_state(viewer)["sentence"] == steps[2]["sentence"]
    page.keyboard.press("End")
    wait_step(viewer, n - 1)
    end = viewer_state(viewer)
    assert end["pending"] == [] and end["active"] == expected_active(viewer, steps, n - 1)
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells

    # the slider, and the step synced with the kernel (second viewer: w, opened at 2)
    second = viewers.nth(1)
    second.locator(".gv-slider").fill("5")
    wait_step(second, 5)
    assert page.evaluate(_KERNEL_EXEC, "print(w.step)").strip() == "5"
    viewer.scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "widget_notebook7.png")

    # the explorer: its slider above its viewer, at the last step
    explorer = page.locator(".gv-explore")
    explorer.locator(".widget-slider").first.wait_for(state="visible")
    third = explorer.locator(".gv-viewer")
    assert viewer_state(third)["step"] == int(page.evaluate(
        _KERNEL_EXEC, "print(ex.viewer.num_steps - 1)").strip())
    assert notebook7.error_outputs(page) == []
    # No page error of gradviz's: what Notebook 7 throws on its own is told apart by its stack.
    ours = [e for e in errors if not _from_notebook_itself(e)]
    assert ours == [], "\n-----\n".join(ours)


# Notebook 7 itself (7.6) throws, once as each page loads and before any cell
# runs, "Cannot read properties of undefined (reading 'schema')": its shortcuts
# plugin reads its own settings in a signal that may come before they are
# loaded (a race in its startup, on a page with no gradviz as well).  Such an
# error has every frame of its stack in Notebook 7's own bundle.
_NOTEBOOK_OWN = "/static/notebook/"


def _from_notebook_itself(stack: str) -> bool:
    frames = [line for line in stack.splitlines() if line.strip().startswith("at ")]
    return bool(frames) and all(_NOTEBOOK_OWN in f or "Promise.all" in f for f in frames)


def test_notebook7s_own_error_is_told_apart_by_its_stack():
    schema = ("TypeError: Cannot read properties of undefined (reading 'schema')\n"
              "    at http://127.0.0.1:1/static/notebook/notebook_core.c9a6.js:501:207\n"
              "    at d (http://127.0.0.1:1/static/notebook/notebook_core.c9a6.js:509:200027)\n"
              "    at async Promise.all (index 0)")
    ours = ("TypeError: x is undefined\n"
            "    at render (blob:http://127.0.0.1:1/5f0c:1:20)\n"
            "    at d (http://127.0.0.1:1/static/notebook/notebook_core.c9a6.js:509:200027)")
    assert _from_notebook_itself(schema)
    assert not _from_notebook_itself(ours)
    assert not _from_notebook_itself("TypeError: no stack at all")

def _saved_without_state(path: Path) -> None:
    """Run a notebook of CELLS as ``make reports`` does, keeping no widget state."""
    write_notebook(path, [*CELLS, EXPLORE])
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute(env=kernel_env())
    nbformat.write(nb, path)


@pytest.mark.parametrize("front_end", ["lab", "notebook7"])
def test_a_saved_notebook_reopened_shows_the_pictures(front_end, request, page, screenshot_dir):
    server = request.getfixturevalue(front_end)
    _saved_without_state(server.root / "saved.ipynb")
    server.open_notebook(page, "saved.ipynb")
    pictures = page.locator(".jp-OutputArea-output .gv-picture")
    pictures.first.wait_for(state="visible", timeout=20_000)
    assert pictures.count() == 3
    for k in range(3):
        image = pictures.nth(k).locator("img.gv-picture-diagram")
        image.scroll_into_view_if_needed()
        assert image.evaluate("i => i.complete && i.naturalWidth") > 300
    assert page.locator(".jp-OutputArea-output .gv-viewer").count() == 0
    assert "Error displaying widget" not in page.locator(".jp-Notebook").inner_text()
    assert "at W = 1" in pictures.nth(2).inner_text()
    pictures.first.scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / f"reopened_{front_end}.png")
