"""Fixtures shared by gradviz's tests: a real headless Chromium and a real JupyterLab.

Browser tests are marked ``@pytest.mark.browser``. When Chromium or Playwright
is missing, the fixtures FAIL with what to install: a browser test that did not
run must never be counted as passed.

    browser         (session)  playwright.sync_api.Browser on the system Chromium
    page            (function) a fresh Page in its own context, 1280x900
    offline_page    (function) a fresh Page whose non-local requests are aborted
                               and listed in page.blocked_requests
    lab             (session)  a running JupyterLab (harness.LabServer)
    screenshot_dir  (session)  build/screenshots/ under the repository root
    each_layout_engine (module) runs a module's tests once per layout engine
                               (GRADVIZ_LAYOUT=dot, then pygraphviz): a
                               module opts in with pytestmark (below)

A module whose tests should hold under both Graphviz engines says so once::

    pytestmark = pytest.mark.usefixtures("each_layout_engine")

Example::

    @pytest.mark.browser
    def test_widget_shows(lab, page, screenshot_dir):
        nb = lab.write_notebook("demo.ipynb", ["import gradviz as gv", "..."])
        lab.open_notebook(page, nb)
        lab.run_all(page)                      # raises if a cell raised
        expect(page.locator(".gv-stepper")).to_be_visible()
        page.screenshot(path=screenshot_dir / "demo.png")

A page fixture whose test failed saves a screenshot to
``build/screenshots/failures/<test name>.png``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradviz.views.diagram.layout import ENGINES
from harness import REPO_ROOT, LabServer, block_network, chromium_missing_message, launch_chromium

VIEWPORT = {"width": 1280, "height": 900}
#: Playwright's default wait for each action and assertion, in milliseconds.
DEFAULT_TIMEOUT_MS = 30_000


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    # Keep each phase's report on the test item, so fixtures can tell at
    # teardown whether their test failed.
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="module", params=ENGINES)
def each_layout_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """The module's tests run with ``GRADVIZ_LAYOUT`` set to each engine in turn.

    A diagram's layout is cached per trace and engine, so a trace made once
    for the module is laid out again by the second engine.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADVIZ_LAYOUT", request.param)
        yield request.param


def _test_failed(request: pytest.FixtureRequest) -> bool:
    report = getattr(request.node, "report_call", None)
    return report is None or report.failed


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """``build/screenshots/`` under the repository root (created); save PNGs here."""
    path = REPO_ROOT / "build" / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def _playwright() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.fail(
            f"the Python package playwright is missing ({exc}): run `make test`, "
            "or .venv/bin/pip install -r requirements-test.txt",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        yield playwright


#: A browser older than this (seconds) is replaced at the start of the next test
#: module: one kept for a whole run grew slow to paint late in it (a click waited
#: 30 s for a button to settle, a screenshot timed out), and a new browser for
#: every module costs about 0.8 s each, 20 s a run.
BROWSER_MAX_AGE_S = 120.0


@pytest.fixture(scope="session")
def _browsers(_playwright: Any) -> Iterator[dict[str, Any]]:
    held: dict[str, Any] = {"browser": None, "born": 0.0}
    yield held
    if held["browser"] is not None:
        held["browser"].close()


@pytest.fixture(scope="module")
def browser(_playwright: Any, _browsers: dict[str, Any]) -> Any:
    """A headless ``playwright.sync_api.Browser`` on the system Chromium, shared
    by the test modules of a couple of minutes (:data:`BROWSER_MAX_AGE_S`).

    Fails (never skips) with what to install when Chromium is missing.
    """
    missing = chromium_missing_message()
    if missing:
        pytest.fail(missing, pytrace=False)
    old = _browsers["browser"]
    if old is None or time.monotonic() - _browsers["born"] > BROWSER_MAX_AGE_S:
        if old is not None:
            old.close()
        _browsers["browser"] = launch_chromium(_playwright)
        _browsers["born"] = time.monotonic()
    return _browsers["browser"]


def _save_failure_screenshot(page: Any, request: pytest.FixtureRequest, screenshot_dir: Path) -> None:
    if not _test_failed(request) or page.is_closed():
        return
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)[:120]
    folder = screenshot_dir / "failures"
    folder.mkdir(exist_ok=True)
    try:
        page.screenshot(path=folder / f"{name}.png", full_page=True, timeout=10_000)
    except Exception as exc:  # a screenshot must never hide the real failure
        print(f"could not save a failure screenshot: {exc}")


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest, screenshot_dir: Path) -> Iterator[Any]:
    """A new ``Page`` in a fresh browser context (1280x900), closed afterwards."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    page = context.new_page()
    yield page
    _save_failure_screenshot(page, request, screenshot_dir)
    context.close()


@pytest.fixture
def offline_page(browser: Any, request: pytest.FixtureRequest, screenshot_dir: Path) -> Iterator[Any]:
    """A new ``Page`` that cannot reach the network, for opening files from disk.

    Every request whose URL does not start with ``file:``, ``data:`` or
    ``blob:`` (http, https, ws, ...) is aborted before it leaves the machine.
    The page carries three lists, filled as the page runs:

    - ``page.blocked_requests: list[str]``: URLs of the aborted requests, in order;
    - ``page.page_errors: list[str]``: uncaught JavaScript exceptions;
    - ``page.console_errors: list[str]``: ``console.error`` messages.

    Typical use: ``offline_page.goto(path.as_uri())``, exercise the page, then
    ``assert offline_page.blocked_requests == []``. Service workers are blocked.
    """
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    blocked = block_network(context)  # first route: tried last, catches all
    page = context.new_page()
    page.blocked_requests = blocked
    page.page_errors = []
    page.console_errors = []
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    page.on(
        "console",
        lambda message: page.console_errors.append(message.text) if message.type == "error" else None,
    )
    yield page
    _save_failure_screenshot(page, request, screenshot_dir)
    context.close()


@pytest.fixture(scope="session")
def _lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    yield from _server(tmp_path_factory, "lab")


@pytest.fixture(scope="session")
def _notebook7_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    yield from _server(tmp_path_factory, "notebook")


@pytest.fixture
def lab(_lab_server: LabServer) -> Iterator[LabServer]:
    """A real JupyterLab server for the session, serving a temporary folder; the
    kernels a test started are shut down after it.

    Returns a :class:`harness.LabServer`: ``.url``, ``.token``, ``.root``
    (Path served; put notebooks there, e.g. with ``lab.write_notebook(rel,
    cells)`` or ``lab.copy_in(path)``), ``.open_notebook(page, rel,
    timeout=ms)``, ``.run_all(page, timeout=ms, check_errors=True)``,
    ``.wait_for_idle(page)``, ``.error_outputs(page)``, ``.log_tail()``.
    Kernels run ``sys.executable`` with this checkout's gradviz importable.
    """
    yield _lab_server
    _lab_server.shutdown_kernels()


@pytest.fixture
def notebook7(_notebook7_server: LabServer) -> Iterator[LabServer]:
    """A real Notebook 7 server for the session: the same :class:`harness.LabServer`
    as ``lab``, serving ``/notebooks/...`` pages (one notebook a page)."""
    yield _notebook7_server
    _notebook7_server.shutdown_kernels()


def _server(tmp_path_factory: pytest.TempPathFactory, app: str) -> Iterator[LabServer]:
    workdir = tmp_path_factory.mktemp(f"jupyter-{app}")
    server = LabServer(root=workdir / "root", workdir=workdir, app=app)
    try:
        server.start()
    except RuntimeError as exc:
        server.stop()
        pytest.fail(f"could not start Jupyter ({app}): {exc}", pytrace=False)
    yield server
    server.stop()
