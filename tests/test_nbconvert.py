"""A viewer in a notebook converted by ``jupyter nbconvert --to html --execute``, read offline.

nbconvert stores the widgets' state by default, and then renders an output that
holds a widget's entry as the widget alone: a ``<script>`` that the widget
manager from a CDN would fill, so an empty box offline.  A displayed viewer is
therefore two outputs: the widget, then the picture of its last step in an
element of class ``gv-widget-fallback`` (``gradviz.views.widget``).  Here the
real command converts a small notebook, with its defaults and without the
widget state, and headless Chromium opens each page with the network blocked:
the picture and its note must show, once.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from gradviz.views.picture import picture_svg
from gradviz.views.widget import FALLBACK_CLASS
from harness import kernel_env, write_notebook

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TITLE = "linear regression"
CELL = ("import gradviz as gv\n"
        "X = gv.constant([[2.0], [3.0]], name='X')\n"
        "Y = gv.constant([[3.0], [2.0]], name='Y')\n"
        "W = gv.Variable(1.6649098, name='W')\n"
        "b = gv.Variable(0.54648024, name='b')\n"
        "cost = 0.5 * gv.reduce_sum((X * W + b - Y) ** 2)\n"
        f"trace = gv.trace_gradients(cost, [W, b], title={TITLE!r})\n"
        "gv.show(trace)")
NOTE = "the last: in JupyterLab with a running kernel, the viewer steps through it live."


def converted(tmp_path: Path, *options: str) -> Path:
    """The notebook of :data:`CELL` run and converted to HTML by the real command."""
    nb = write_notebook(tmp_path / "viewer.ipynb", [CELL])
    jupyter = Path(sys.executable).with_name("jupyter")
    done = subprocess.run([str(jupyter), "nbconvert", "--to", "html", "--execute", *options,
                           "--output-dir", str(tmp_path / "out"), str(nb)],
                          capture_output=True, text=True, timeout=180, env=kernel_env())
    assert done.returncode == 0, done.stderr
    return tmp_path / "out" / "viewer.html"


def test_displaying_a_viewer_publishes_the_widget_then_its_picture(tmp_path: Path):
    nb = nbformat.read(write_notebook(tmp_path / "viewer.ipynb", [CELL]), as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=kernel_env())
    outputs = nb.cells[0].outputs
    assert [o.output_type for o in outputs] == ["display_data", "display_data"], outputs
    widget, fallback = (o.data for o in outputs)
    assert set(widget) == {WIDGET_MIME, "text/plain"}
    assert widget["text/plain"].startswith(f"gradviz viewer: {TITLE}, step 0 / ")
    last = int(widget["text/plain"].rsplit("/ ", 1)[1])
    assert last >= 5
    state = nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    assert state[widget[WIDGET_MIME]["model_id"]]["state"]["payload"]["title"] == TITLE
    assert set(fallback) == {"text/html", "text/plain"}
    assert fallback["text/html"].startswith(f'<div class="{FALLBACK_CLASS}"><div class="gv-picture"')
    assert f"Step {last} / {last}: result for b" in fallback["text/html"]
    assert picture_svg(fallback["text/html"]).startswith('<svg class="gv-svg')
    assert fallback["text/plain"] == f"{TITLE}. A picture of step {last}, {NOTE}"


def _look(page) -> dict:
    """What the page shows of each picture: its diagram decoded and measured."""
    return page.locator(f".{FALLBACK_CLASS} img.gv-picture-diagram").evaluate_all("""async imgs => {
        const out = [];
        for (const img of imgs) {
            await img.decode();
            const box = img.getBoundingClientRect();
            const c = document.createElement('canvas');
            c.width = img.naturalWidth; c.height = img.naturalHeight;
            const g = c.getContext('2d');
            g.drawImage(img, 0, 0);
            const px = g.getImageData(0, 0, c.width, c.height).data;
            let ink = 0;
            for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && px[i] < 128) ink++;
            out.push({src: img.getAttribute('src'), width: box.width, height: box.height, ink});
        }
        return out;
    }""")


def _check_the_picture(page, html_path: Path) -> None:
    from playwright.sync_api import expect

    page.goto(html_path.as_uri())
    fallback = page.locator(f".{FALLBACK_CLASS}")
    expect(fallback).to_have_count(1)
    expect(fallback).to_be_visible()
    expect(page.locator(".gv-picture")).to_have_count(1)  # once: in the fallback, nowhere else
    expect(fallback.locator(".gv-picture")).to_be_visible()
    expect(fallback).to_contain_text(TITLE)
    expect(fallback).to_contain_text("result for b")
    expect(fallback).to_contain_text(NOTE)
    expect(fallback.get_by_text(NOTE)).to_be_visible()
    (drawing,) = _look(page)
    svg = base64.b64decode(drawing["src"].split("base64,", 1)[1]).decode("utf-8")
    assert svg.startswith('<svg class="gv-svg') and "gv-active" in svg  # the diagram, last step lit
    assert drawing["width"] > 300 and drawing["height"] > 100, drawing
    assert drawing["ink"] > 500, drawing  # painted: labels and edges, not a blank image
    assert page.page_errors == []


@pytest.mark.browser
def test_nbconvert_with_its_defaults_shows_the_picture_offline(tmp_path: Path, offline_page,
                                                               screenshot_dir):
    page = offline_page
    html_path = converted(tmp_path)
    text = html_path.read_text(encoding="utf-8")
    # the widget state was stored, so the widget's output is the widget manager's script
    assert "application/vnd.jupyter.widget-state+json" in text
    assert f'<script type="{WIDGET_MIME}">' in text
    _check_the_picture(page, html_path)
    # the manager from the CDN did not load: the widget's own output shows nothing
    assert any("unpkg.com" in url or "jsdelivr" in url for url in page.blocked_requests), \
        page.blocked_requests
    page.locator(f".{FALLBACK_CLASS}").scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "nbconvert_default_fallback.png", full_page=True)


@pytest.mark.browser
def test_nbconvert_without_the_widget_state_shows_the_picture_once(tmp_path: Path, offline_page):
    page = offline_page
    html_path = converted(tmp_path, "--ExecutePreprocessor.store_widget_state=False")
    text = html_path.read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" not in text
    _check_the_picture(page, html_path)
    # the widget's output falls back to its one line of text
    from playwright.sync_api import expect

    expect(page.get_by_text(f"gradviz viewer: {TITLE}, step 0 / ")).to_be_visible()


LAB_CELLS = [
    CELL,  # a trace shown: the viewer runs, its picture is hidden
    "import ipywidgets\n"
    "from IPython.display import display\n"
    "out = ipywidgets.Output()\n"
    "display(out)\n"
    "with out:\n"
    "    display(gv.show(trace, step=2))",  # inside an Output widget: the same, one level down
    "from IPython.display import HTML\n"
    f"HTML('<div class=\"{FALLBACK_CLASS}\">a picture with no viewer before it</div>')",
]


@pytest.mark.browser
def test_in_jupyterlab_a_running_viewer_hides_its_picture_and_only_its_own(lab, page):
    nb = lab.write_notebook("fallback_lab.ipynb", LAB_CELLS)
    lab.open_notebook(page, nb)
    lab.run_all(page)
    viewers = page.locator(".jp-OutputArea-output .gv-viewer")
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-OutputArea-output .gv-viewer .gv-diagram > svg.gv-svg').length === 2")
    assert [viewers.nth(i).is_visible() for i in range(2)] == [True, True]
    pictures = page.locator(f".{FALLBACK_CLASS}")
    page.wait_for_function(f"() => document.querySelectorAll('.{FALLBACK_CLASS}').length === 3")
    # The two viewers' pictures are hidden, with their outputs (no empty row left);
    # a picture no running viewer comes right before stays, stylesheet loaded or not.
    shown = [pictures.nth(i).is_visible() for i in range(3)]
    assert shown == [False, False, True], shown
    assert page.evaluate(f"""() => Array.from(document.querySelectorAll('.{FALLBACK_CLASS}'),
        (e) => getComputedStyle(e.closest('.jp-OutputArea-child')).display)""") == ["none", "none", "flex"]
    assert pictures.nth(2).inner_text() == "a picture with no viewer before it"
