"""Tests of the test harness itself: a real JupyterLab, a real Chromium, a real offline page."""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from harness import REPO_ROOT, LabServer, write_notebook


def test_write_notebook_writes_valid_code_cells(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "deep" / "nb.ipynb", ["a = 1", "print(a)"])
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert [c.cell_type for c in nb.cells] == ["code", "code"]
    assert [c.source for c in nb.cells] == ["a = 1", "print(a)"]
    assert nb.metadata.kernelspec.name == "python3"


def test_write_notebook_refuses_a_single_string(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="list of source strings"):
        write_notebook(tmp_path / "nb.ipynb", "print(1)")


@pytest.mark.browser
def test_lab_runs_a_notebook_and_shows_its_widget(lab: LabServer, page, screenshot_dir: Path) -> None:
    from playwright.sync_api import expect

    nb = lab.write_notebook(
        "harness/hello.ipynb",
        [
            "import importlib.util, sys\n"
            "print('kernel:', sys.prefix)\n"
            "print('gradviz at:', importlib.util.find_spec('gradviz').submodule_search_locations[0])",
            "print('harness says', 6 * 7)",
            "import ipywidgets\n"
            "ipywidgets.IntSlider(value=7, min=0, max=10, description='harness')",
        ],
    )
    lab.open_notebook(page, nb)
    lab.run_all(page)

    outputs = page.locator(".jp-OutputArea-output")
    # The kernel is this interpreter, importing this checkout's gradviz.
    first = outputs.filter(has_text="kernel:")
    expect(first).to_be_visible()
    # (the environment, not the executable's name: python and python3 are one interpreter)
    assert first.inner_text().splitlines() == [
        f"kernel: {sys.prefix}",
        f"gradviz at: {REPO_ROOT / 'gradviz'}",
    ]
    # Output computed by the kernel (6 * 7), not echoed from the source.
    expect(outputs.filter(has_text="harness says")).to_have_text("harness says 42")
    # The slider is rendered by the widget manager, not left as a text repr.
    slider = page.locator(".jp-OutputArea-output .widget-slider")
    expect(slider).to_be_visible()
    expect(slider.locator(".widget-label").first).to_have_text("harness")
    expect(slider.locator(".widget-readout")).to_have_text("7")
    assert "IntSlider(" not in outputs.last.inner_text()

    page.screenshot(path=screenshot_dir / "harness-lab-widget.png")
    assert (screenshot_dir / "harness-lab-widget.png").stat().st_size > 1000


@pytest.mark.browser
def test_run_all_reports_a_cell_that_raised(lab: LabServer, page) -> None:
    nb = lab.write_notebook("harness/raises.ipynb", ["x = 1", "1 / 0"])
    lab.open_notebook(page, nb)
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        lab.run_all(page)


@pytest.mark.browser
def test_offline_page_blocks_and_records_network_requests(offline_page, tmp_path: Path) -> None:
    (tmp_path / "local.js").write_text("window.localScriptRan = true;", encoding="utf-8")
    page_file = tmp_path / "report.html"
    page_file.write_text(
        """<!doctype html><html><head><title>offline</title>
<script src="local.js"></script>
<script src="http://example.invalid/x.js"></script>
</head><body><p id="status">waiting</p>
<script>
fetch("https://example.invalid/data.json")
  .then(() => { document.getElementById("status").textContent = "fetched"; })
  .catch(() => { document.getElementById("status").textContent = "fetch failed"; });
</script></body></html>""",
        encoding="utf-8",
    )
    offline_page.goto(page_file.as_uri())
    offline_page.wait_for_function(
        "() => document.getElementById('status').textContent !== 'waiting'"
    )

    # Local files load; nothing else does, and every attempt is on record.
    assert offline_page.evaluate("() => window.localScriptRan") is True
    assert offline_page.text_content("#status") == "fetch failed"
    assert "http://example.invalid/x.js" in offline_page.blocked_requests
    assert "https://example.invalid/data.json" in offline_page.blocked_requests
    assert all(not url.startswith("file:") for url in offline_page.blocked_requests)


@pytest.mark.browser
def test_offline_page_lets_a_self_contained_page_through_untouched(offline_page, tmp_path: Path) -> None:
    page_file = tmp_path / "inline.html"
    page_file.write_text(
        "<!doctype html><title>t</title><p id='p'>x</p>"
        "<script>document.getElementById('p').textContent = 'ran: ' + (2 + 3);</script>"
        "<img src='data:image/gif;base64,R0lGODlhAQABAAAAACw='>",
        encoding="utf-8",
    )
    offline_page.goto(page_file.as_uri())
    assert offline_page.text_content("#p") == "ran: 5"
    assert offline_page.blocked_requests == []
    assert offline_page.page_errors == []


def _command_line(process) -> str:
    """A process's command line, or "" for one that has ended meanwhile (a zombie or gone)."""
    import psutil
    try:
        return " ".join(process.cmdline())
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return ""


def test_lab_server_stops_with_everything_it_started(tmp_path: Path) -> None:
    import psutil  # installed with ipykernel
    server = LabServer(root=tmp_path / "root", workdir=tmp_path).start()
    try:
        request = urllib.request.Request(server.api_url("kernels"), data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            kernel = json.load(response)
        assert kernel["name"] == "python3"
        # Wait until the kernel process exists among the server's descendants.
        server_process = psutil.Process(server.proc.pid)
        deadline = time.monotonic() + 30
        while not any("ipykernel" in _command_line(p) for p in server_process.children(recursive=True)):
            assert time.monotonic() < deadline, f"no kernel process appeared\n{server.log_tail()}"
            time.sleep(0.1)
        started = [server_process, *server_process.children(recursive=True)]
    finally:
        server.stop()
    gone, alive = psutil.wait_procs(started, timeout=10)
    running = [p for p in alive if _command_line(p)]  # a zombie has ended; only its entry is left
    assert running == [], f"still running after stop(): {[_command_line(p) for p in running]}"
    assert server.proc is None
