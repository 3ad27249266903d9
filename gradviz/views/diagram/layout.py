"""Graphviz's layout, from whichever Graphviz this machine has.

Two engines lay out the same DOT source and write the same SVG:

- ``"dot"``: the Graphviz program ``dot`` on ``PATH``, run as a subprocess
  with a timeout; a program that hangs, fails or prints something other than
  SVG is one clear :class:`LayoutError`.
- ``"pygraphviz"``: the Graphviz library that pygraphviz's wheels (2.0 and
  newer) carry inside them, run in this process.  ``pip install gradviz``
  brings it where a wheel exists (Windows x64, macOS, Linux x86-64 and
  aarch64), so no system package is needed.

By default ``dot`` is used when it is on ``PATH``, and pygraphviz otherwise;
the environment variable ``GRADVIZ_LAYOUT`` (``dot`` or ``pygraphviz``)
forces one, and ``GRADVIZ_LAYOUT_TIMEOUT`` (seconds, default 120) is how long
``dot`` may take.  Both engines are Graphviz with HTML-like labels, so every
node, edge, cluster and legend entry carries the same text, ids and classes;
only the coordinates differ slightly between Graphviz versions.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

ENGINES = ("dot", "pygraphviz")
ENGINE_VARIABLE = "GRADVIZ_LAYOUT"
TIMEOUT_VARIABLE = "GRADVIZ_LAYOUT_TIMEOUT"
DEFAULT_TIMEOUT = 120.0


class LayoutError(RuntimeError):
    """Graphviz could not lay out a diagram: missing, hung, failed, or wrote no SVG."""


def layout_engine() -> str:
    """The engine the next diagram is laid out with: ``"dot"`` or ``"pygraphviz"``.

    ``GRADVIZ_LAYOUT`` chooses one; unset, ``dot`` when it is on ``PATH``,
    else pygraphviz's bundled Graphviz.  With neither, a :class:`LayoutError`
    says how to get one on this system.

    >>> layout_engine() in ENGINES
    True
    """
    forced = os.environ.get(ENGINE_VARIABLE, "").strip()
    if forced:
        if forced not in ENGINES:
            why = (" (gradviz has no WebAssembly engine: the WebAssembly Graphviz on PyPI "
                   "cannot draw its labels)" if forced.lower() == "wasm" else "")
            raise ValueError(
                f"{ENGINE_VARIABLE}={forced!r} is not a layout engine{why}; accepted: "
                + ", ".join(ENGINES) + " (or unset it, to use dot when it is on PATH and "
                "pygraphviz otherwise)")
        if forced == "dot" and _dot_program() is None:
            raise LayoutError(f"{ENGINE_VARIABLE}=dot, but no program 'dot' is on PATH. "
                              + _how_to_get("dot"))
        if forced == "pygraphviz" and not _has_pygraphviz():
            raise LayoutError(f"{ENGINE_VARIABLE}=pygraphviz, but pygraphviz cannot be "
                              "imported here. " + _how_to_get("pygraphviz"))
        return forced
    if _dot_program() is not None:
        return "dot"
    if _has_pygraphviz():
        return "pygraphviz"
    raise LayoutError(
        "gradviz needs Graphviz to draw a diagram, and this Python has neither the program "
        "'dot' on PATH nor the package pygraphviz. "
        + _how_to_get(None))


def render(source: str) -> str:
    """``source`` (DOT) laid out by Graphviz and written as SVG text."""
    engine = layout_engine()
    if engine == "dot":
        return _run_dot(source)
    return _run_pygraphviz(source)


# ---------------------------------------------------------------- the engines


def _dot_program() -> str | None:
    return shutil.which("dot")


def _has_pygraphviz() -> bool:
    try:
        import pygraphviz  # noqa: F401
    except ImportError:
        return False
    return True


def _timeout() -> float:
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"{TIMEOUT_VARIABLE}={text!r} is not a number of seconds; "
                         "accepted: a positive number such as 120")
    return seconds


def _run_dot(source: str) -> str:
    program = _dot_program()
    assert program is not None  # layout_engine() chose it
    timeout = _timeout()
    try:
        # Its own process group, so that a timeout stops whatever it started too.
        proc = subprocess.Popen([program, "-Tsvg"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=os.name == "posix")
    except OSError as e:
        raise LayoutError(f"Graphviz's dot ({program}) could not be started: {e}") from None
    try:
        out, err = proc.communicate(source.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise LayoutError(
            f"Graphviz's dot ({program}) did not finish laying out the diagram within "
            f"{timeout:g} s, so it was stopped. It may be hung; if the graph is just large, "
            f"allow more time with {TIMEOUT_VARIABLE}=<seconds>, draw fewer nodes "
            f"(collapse=True), or try {ENGINE_VARIABLE}=pygraphviz.") from None
    stderr = _tail(err)
    if proc.returncode != 0:
        raise LayoutError(f"Graphviz's dot ({program}) failed with exit status "
                          f"{proc.returncode}" + (f": {stderr}" if stderr else " and printed "
                                                  "nothing on stderr"))
    svg = out.decode("utf-8", errors="replace")
    if "<svg" not in svg or "</svg>" not in svg:
        printed = svg.strip()[:200] or "nothing"
        raise LayoutError(f"Graphviz's dot ({program}) exited normally but did not write SVG: "
                          f"it printed {printed!r}" + (f"; on stderr: {stderr}" if stderr else ""))
    return svg


def _stop(proc: subprocess.Popen) -> None:
    """Kill a program that ran out of time, with anything it started, and reap it."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
    proc.communicate()


def _run_pygraphviz(source: str) -> str:
    import pygraphviz

    graph = pygraphviz.AGraph(string=source)
    try:
        with _without_fontconfig_warnings():
            graph.layout(prog="dot")
            return graph.draw(format="svg").decode("utf-8")
    finally:
        graph.close()


@contextmanager
def _without_fontconfig_warnings() -> Iterator[None]:
    """Run a block with the C library's stderr caught; pass on all but Fontconfig's warnings.

    The fontconfig inside pygraphviz's wheel reads the system's font
    configuration, and where that is newer than it (Debian 12, say) it warns
    about elements it does not know, under a learner's first diagram.  The
    fonts are found all the same.  Anything else written there (Graphviz's
    own warnings, a Fontconfig error) is passed on, through ``sys.stderr``,
    so a notebook shows it under the cell.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, AttributeError, ValueError):
        yield  # no file descriptor 2 (pythonw), or a stderr without flush: nothing to catch
        return
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            text = caught.read().decode("utf-8", errors="replace")
            kept = [line for line in text.splitlines(keepends=True)
                    if not line.startswith("Fontconfig warning:")]
            if kept:
                sys.stderr.write("".join(kept))


def _tail(stderr: bytes, lines: int = 8) -> str:
    """The last lines of a program's stderr, as one line of text."""
    text = stderr.decode("utf-8", errors="replace").strip().splitlines()
    return " / ".join(line.strip() for line in text[-lines:] if line.strip())


def _how_to_get(which: str | None) -> str:
    """How to install Graphviz (the program, pygraphviz, or either) on this system."""
    pip = ("pip install 'pygraphviz>=2' (its wheels carry Graphviz: Windows x64, macOS, "
           "Linux x86-64 and aarch64)")
    if sys.platform == "darwin":
        program = "brew install graphviz"
    elif sys.platform == "win32":
        program = ("the Windows installer from https://graphviz.org/download/, ticking "
                   "'add Graphviz to the system PATH', then restart Jupyter")
    else:
        program = ("apt-get install graphviz (Debian, Ubuntu); dnf, pacman or zypper: "
                   "the package graphviz")
    if which == "dot":
        return f"Install Graphviz with {program}, or unset {ENGINE_VARIABLE}."
    if which == "pygraphviz":
        return f"Install it with {pip}, or unset {ENGINE_VARIABLE}."
    return f"Get one: {pip}; or the program: {program}."
