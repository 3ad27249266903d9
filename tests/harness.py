"""A real headless Chromium and a real JupyterLab server for gradviz's tests.

The pytest fixtures in ``tests/conftest.py`` wrap what is here; tests use the
fixtures (``browser``, ``page``, ``offline_page``, ``lab``, ``screenshot_dir``)
and may import the helpers directly::

    from harness import write_notebook

Nothing here downloads a browser: Playwright drives the system Chromium
(``/usr/bin/chromium``, or the path in the ``CHROMIUM`` environment variable),
which ``scripts/setup.sh test`` installs.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:  # imported lazily at run time so that a missing package gives a clear message
    from playwright.sync_api import Browser, BrowserContext, Page, Playwright

__all__ = [
    "REPO_ROOT",
    "CHROMIUM_PATH",
    "CHROMIUM_ARGS",
    "LOCAL_SCHEMES",
    "ANSI",
    "kernel_env",
    "write_notebook",
    "chromium_missing_message",
    "launch_chromium",
    "block_network",
    "LabServer",
]

#: The repository root (the folder holding pyproject.toml).
REPO_ROOT = Path(__file__).resolve().parents[1]

#: The Chromium binary the tests drive (Debian's package by default).
CHROMIUM_PATH = os.environ.get("CHROMIUM", "/usr/bin/chromium")

#: Flags that keep Chromium from reaching for the network on its own, and that
#: let it run as root without a GPU.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # /dev/shm is 64 MB in many containers, which large pages can fill, and then
    # they stop painting; shared memory goes to /tmp instead
    "--disable-dev-shm-usage",
)

#: True once the kernel item of JupyterLab's status bar ("Python 3 (ipykernel) | Idle") says Idle.
_KERNEL_IDLE_JS = """() => Array.from(
    document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-TextItem'),
    (item) => item.textContent.trim()).some((text) => /[|]\\s*Idle$/.test(text))"""

#: Notebook 7 has no status bar: its notebook's kernel, asked directly.
_NOTEBOOK_KERNEL_IDLE_JS = """() => {
    const kernel = window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel;
    return kernel?.status === 'idle' && kernel?.connectionStatus === 'connected';
}"""

#: The error outputs of the current notebook, from its model (not its DOM, where
#: a traceback and a warning both render as stderr).
_ERROR_OUTPUTS_JS = """() => {
    const errors = [];
    const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
        const outputs = cells.get(i).outputs;
        if (!outputs) continue;  // markdown and raw cells have none
        for (let j = 0; j < outputs.length; j++) {
            const out = outputs.get(j).toJSON();
            if (out.output_type === 'error') {
                errors.push({cell: i + 1, ename: out.ename, evalue: out.evalue,
                             traceback: out.traceback || []});
            }
        }
    }
    return errors;
}"""

#: Terminal colour codes, as in a kernel's tracebacks; strip them before quoting one.
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

#: URL schemes that never leave the machine; an offline page may load these.
LOCAL_SCHEMES = ("file:", "data:", "blob:")


# --------------------------------------------------------------------- notebooks
def kernel_env() -> dict[str, str]:
    """The environment for a kernel: this checkout first on its path, inline plots."""
    env = dict(os.environ)
    # Kernels must import this checkout's gradviz, installed or not.
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("MPLBACKEND", None)  # an exported MPLBACKEND=Agg would make inline plots vanish
    return env


def write_notebook(path: str | os.PathLike[str], cells: Iterable[str]) -> Path:
    """Write a notebook of code cells (one source string each) to ``path``.

    The notebook asks for the ``python3`` kernel, so JupyterLab opens it with no
    kernel dialog. Parent folders are created. Returns the path.

    >>> import tempfile, nbformat
    >>> p = write_notebook(Path(tempfile.mkdtemp()) / "sub" / "t.ipynb", ["x = 1", "x + 1"])
    >>> [c.source for c in nbformat.read(p, as_version=4).cells]
    ['x = 1', 'x + 1']
    """
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    if isinstance(cells, str):
        raise TypeError("write_notebook: cells must be a list of source strings, not one string")
    nb = new_notebook(
        cells=[new_code_cell(source) for source in cells],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(nb)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# ----------------------------------------------------------------------- browser
def chromium_missing_message() -> str | None:
    """None when the Chromium binary is there, else what to do about it."""
    if os.path.isfile(CHROMIUM_PATH) and os.access(CHROMIUM_PATH, os.X_OK):
        return None
    return (
        f"Chromium was not found at {CHROMIUM_PATH}: the browser tests need it.\n"
        "  Debian/Ubuntu: run `make test` (it installs it as root), or apt-get install -y chromium\n"
        "  elsewhere: install Chromium and set CHROMIUM=/path/to/chromium\n"
        "  (Playwright's own browser downloads are not used.)"
    )


def launch_chromium(playwright: Playwright) -> Browser:
    """Launch the system Chromium, headless, with :data:`CHROMIUM_ARGS`."""
    missing = chromium_missing_message()
    if missing:
        raise FileNotFoundError(missing)
    return playwright.chromium.launch(
        executable_path=CHROMIUM_PATH, headless=True, args=list(CHROMIUM_ARGS)
    )


def block_network(context: BrowserContext) -> list[str]:
    """Abort every request of ``context`` that would leave the machine.

    Requests whose URL starts with one of :data:`LOCAL_SCHEMES` go ahead; every
    other request (http, https, ws, wss, ...) is aborted and its URL appended,
    in order, to the list this returns. Call it before any other route is set:
    Playwright tries routes in reverse order of registration.
    """
    blocked: list[str] = []

    def handle(route: Any) -> None:
        url = route.request.url
        if url.startswith(LOCAL_SCHEMES):
            route.continue_()
        else:
            blocked.append(url)
            route.abort("internetdisconnected")

    def handle_websocket(ws: Any) -> None:
        blocked.append(ws.url)
        ws.close()

    context.route("**/*", handle)
    context.route_web_socket("**/*", handle_websocket)
    return blocked


# ---------------------------------------------------------------------- JupyterLab
def _free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing uses right now (bind to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_unreaped(pid: int, timeout: float) -> bool:
    """Wait up to ``timeout`` s for child ``pid`` to exit, leaving it unreaped."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


class LabServer:
    """A JupyterLab (or Notebook 7) server of its own, for one test session.

    All Jupyter, IPython and matplotlib state lives under ``workdir``; the
    server serves ``root`` and runs notebooks on a kernel that is this Python
    (``sys.executable``) with the repository root on ``PYTHONPATH``.
    ``app="notebook"`` serves Notebook 7 instead of JupyterLab: one notebook a
    page, no status bar, no left area; the same ``window.jupyterapp`` commands.

    Attributes: ``url`` (``http://127.0.0.1:PORT``, no trailing slash),
    ``token``, ``root`` (Path served), ``port``, ``app``, ``log_path`` (the
    server's stdout and stderr).
    """

    #: How often to poll while waiting for something.
    POLL_S = 0.1

    #: Per front end: the module that serves it, its own options, and the page of a notebook.
    APPS = {
        "lab": ("jupyterlab", [
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            "--LabApp.expose_app_in_browser=True",
        ], "lab/tree/{path}?token={token}&reset"),
        "notebook": ("notebook", [
            "--JupyterNotebookApp.expose_app_in_browser=True",
        ], "notebooks/{path}?token={token}"),
    }

    def __init__(self, root: str | os.PathLike[str], workdir: str | os.PathLike[str],
                 app: str = "lab") -> None:
        if app not in self.APPS:
            raise ValueError(f"LabServer: unknown app {app!r} (one of {', '.join(self.APPS)})")
        self.app = app
        self.root = Path(root).resolve()
        self.workdir = Path(workdir).resolve()
        self.token = secrets.token_hex(16)
        self.port = 0
        self.url = ""
        self.log_path = self.workdir / "jupyterlab.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_file: Any = None

    # -- life cycle -------------------------------------------------------------
    def _environment(self) -> dict[str, str]:
        env = kernel_env()
        dirs = {
            "JUPYTER_CONFIG_DIR": self.workdir / "config",
            "JUPYTER_DATA_DIR": self.workdir / "data",
            "JUPYTER_RUNTIME_DIR": self.workdir / "runtime",
            "IPYTHONDIR": self.workdir / "ipython",
            "MPLCONFIGDIR": self.workdir / "matplotlib",
        }
        for name, folder in dirs.items():
            folder.mkdir(parents=True, exist_ok=True)
            env[name] = str(folder)
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        return env

    def _write_settings(self, env: dict[str, str]) -> None:
        settings = Path(env["JUPYTER_CONFIG_DIR"]) / "lab" / "user-settings" / "@jupyterlab"
        _write_json(
            settings / "apputils-extension" / "notification.jupyterlab-settings",
            {"fetchNews": "false", "checkForUpdates": False},
        )
        # Every cell stays in the DOM, so tests can find any output.
        _write_json(
            settings / "notebook-extension" / "tracker.jupyterlab-settings",
            {"windowingMode": "none"},
        )
        _write_json(
            settings / "extensionmanager-extension" / "plugin.jupyterlab-settings",
            {"enabled": False},
        )
        # The kernel named python3 is this interpreter, whatever else is installed.
        _write_json(
            Path(env["JUPYTER_DATA_DIR"]) / "kernels" / "python3" / "kernel.json",
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
                "metadata": {"debugger": True},
            },
        )

    def start(self, timeout: float = 60.0) -> LabServer:
        """Start the server and wait until ``/api/status`` answers.

        Raises RuntimeError (with the tail of the server log) if it exits or
        does not answer within ``timeout`` seconds.
        """
        if self.proc is not None:
            raise RuntimeError("LabServer.start: the server is already running")
        self.root.mkdir(parents=True, exist_ok=True)
        env = self._environment()
        self._write_settings(env)
        # A port picked by binding port 0 can, rarely, be taken by someone else
        # before the server binds it; try again with a new one then.
        for attempt in range(3):
            self.port = _free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self._log_file = open(self.log_path, "ab")
            self._log_file.write(f"---- starting on port {self.port} (attempt {attempt + 1})\n".encode())
            self._log_file.flush()
            self.proc = subprocess.Popen(
                [
                    sys.executable, "-m", self.APPS[self.app][0],
                    "--no-browser", "--allow-root", "--ip=127.0.0.1",
                    f"--port={self.port}", "--ServerApp.port_retries=0",
                    f"--IdentityProvider.token={self.token}",
                    f"--ServerApp.root_dir={self.root}",
                    *self.APPS[self.app][1],
                ],
                cwd=self.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self._log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            if self._wait_ready(timeout):
                return self
            port_taken = "already in use" in self.log_tail(20)
            self.stop()
            if not port_taken:
                break
        raise RuntimeError(
            f"Jupyter ({self.app}) did not answer on {self.url}/api/status within {timeout:.0f} s "
            f"(or exited).\n{self.log_tail()}"
        )

    def _wait_ready(self, timeout: float) -> bool:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.api_url("status"), timeout=2) as response:
                    if response.status == 200:
                        return True
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(self.POLL_S)
        return False

    def api_url(self, endpoint: str) -> str:
        """The URL of a REST endpoint such as ``"status"`` or ``"kernels"``, token included."""
        return f"{self.url}/api/{endpoint}?token={self.token}"

    def shutdown_kernels(self) -> None:
        """Ask the server to shut its kernels down (best effort, a few seconds at most)."""
        try:
            with urllib.request.urlopen(self.api_url("kernels"), timeout=3) as response:
                kernels = json.load(response)
            for kernel in kernels:
                request = urllib.request.Request(
                    self.api_url(f"kernels/{kernel['id']}"), method="DELETE"
                )
                urllib.request.urlopen(request, timeout=5).close()
        except (OSError, ValueError, KeyError):
            pass

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server: its kernels first, then SIGTERM to the server; if it
        lingers, or left anything behind in its process group, SIGKILL that group.
        """
        proc, self.proc = self.proc, None
        # Until the server is reaped, its pid (and so its process group id: it
        # leads a session of its own) cannot be reused: signals reach only it.
        # Hence os.kill/waitid here rather than Popen.poll, which would reap.
        if proc is not None and proc.returncode is None:
            if not _wait_unreaped(proc.pid, 0):
                self.shutdown_kernels()
                os.kill(proc.pid, signal.SIGTERM)
                _wait_unreaped(proc.pid, timeout)
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever lingers in its group
            except (ProcessLookupError, PermissionError):
                pass
        if proc is not None:
            proc.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the server log, framed for an error message."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"(no server log: {exc})"
        tail = "\n".join(text.splitlines()[-lines:])
        return f"--- last {lines} lines of {self.log_path} ---\n{tail}\n--- end of server log ---"

    # -- notebooks ----------------------------------------------------------------
    def write_notebook(self, relative_path: str, cells: Iterable[str]) -> str:
        """Write a code-cell notebook under :attr:`root`; returns ``relative_path``."""
        write_notebook(self.root / relative_path, cells)
        return relative_path

    def copy_in(self, source: str | os.PathLike[str], relative_path: str | None = None) -> str:
        """Copy a file (a notebook of the repository, say) under :attr:`root`."""
        source = Path(source)
        relative_path = relative_path or source.name
        target = self.root / relative_path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return relative_path

    def notebook_url(self, relative_path: str) -> str:
        """The URL that opens a notebook in a fresh workspace (``&reset``)."""
        page = self.APPS[self.app][2].format(path=quote(relative_path), token=self.token)
        return f"{self.url}/{page}"

    def _failure(self, page: Page, what: str, error: BaseException) -> AssertionError:
        try:
            status = page.evaluate(
                "() => document.querySelector('#jp-main-statusbar')?.textContent ?? '(no status bar)'"
            )
        except Exception as exc:  # the page itself may be gone
            status = f"(could not read: {exc})"
        return AssertionError(
            f"{what}: {error}\n  page: {page.url}\n  status bar: {status}\n{self.log_tail()}"
        )

    def open_notebook(self, page: Page, relative_path: str, timeout: float = 60_000) -> None:
        """Open a notebook under :attr:`root` and wait until its kernel is idle.

        ``timeout`` is in milliseconds, for each of: the cells appearing, the
        kernel becoming idle. Raises AssertionError with the server log's tail.
        """
        if not (self.root / relative_path).is_file():
            raise FileNotFoundError(f"open_notebook: no notebook {relative_path!r} under {self.root}")
        from playwright.sync_api import Error as PlaywrightError

        try:
            page.goto(self.notebook_url(relative_path), timeout=timeout)
            page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=timeout)
        except PlaywrightError as exc:
            raise self._failure(page, f"notebook {relative_path!r} did not show its cells", exc) from None
        self.wait_for_idle(page, timeout=timeout)

    def collapse_left(self, page: Page) -> None:
        """Close the left area (the file browser), leaving its width to the notebook.

        Notebook 7 shows one notebook a page, its left area closed: nothing to do.
        """
        if self.app == "notebook":
            return
        page.evaluate("""() => { const app = window.jupyterapp;
            if (!app.shell.leftCollapsed) app.commands.execute('application:toggle-left-area'); }""")

    def wait_for_idle(self, page: Page, timeout: float = 60_000) -> None:
        """Wait until the status bar says the kernel is "Idle" (timeout in ms)."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            page.wait_for_function(
                _KERNEL_IDLE_JS if self.app == "lab" else _NOTEBOOK_KERNEL_IDLE_JS,
                timeout=timeout,
                polling=100,
            )
        except PlaywrightError as exc:
            raise self._failure(page, "the kernel did not become idle", exc) from None

    def run_all(self, page: Page, timeout: float = 120_000, check_errors: bool = True) -> None:
        """Run every cell of the open notebook and wait for the kernel to be idle.

        Uses the ``notebook:run-all-cells`` command, which resolves when all
        cells are done. With ``check_errors`` (the default), a cell that raised
        makes this raise AssertionError quoting the traceback shown in the
        page. ``timeout`` is in milliseconds.
        """
        from playwright.sync_api import Error as PlaywrightError

        try:
            completed = page.evaluate(
                """async (ms) => {
                    const run = window.jupyterapp.commands.execute('notebook:run-all-cells');
                    const late = new Promise((_, reject) => setTimeout(
                        () => reject(new Error(`cells still running after ${ms} ms`)), ms));
                    return await Promise.race([run, late]);
                }""",
                timeout,
            )
        except PlaywrightError as exc:
            raise self._failure(page, "running all cells failed", exc) from None
        self.wait_for_idle(page, timeout=timeout)
        if check_errors:
            errors = self.error_outputs(page)
            if errors:
                raise AssertionError(
                    f"{len(errors)} cell(s) raised an error:\n" + "\n-----\n".join(errors)
                )
            if completed is False:  # no traceback, yet not every cell ran: the kernel died?
                raise AssertionError(
                    f"running all cells did not complete, with no error output.\n{self.log_tail()}"
                )

    @staticmethod
    def error_outputs(page: Page) -> list[str]:
        """Every error output of the open notebook, read from its model.

        One string per error: ``"cell N: EName: value"`` and the traceback's
        last lines (colour codes removed).
        """
        errors = page.evaluate(_ERROR_OUTPUTS_JS)
        return [
            f"cell {e['cell']}: {e['ename']}: {e['evalue']}\n"
            + "\n".join(ANSI.sub("", "\n".join(e["traceback"])).splitlines()[-8:])
            for e in errors
        ]


def _main() -> None:  # pragma: no cover - a manual aid: python tests/harness.py
    """Start a server on a temporary folder and print its URL, until Ctrl-C."""
    with tempfile.TemporaryDirectory(prefix="gradviz-lab-") as tmp:
        server = LabServer(Path(tmp) / "root", tmp).start()
        print(f"{server.url}/lab?token={server.token}  (log: {server.log_path})")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()


if __name__ == "__main__":
    _main()
