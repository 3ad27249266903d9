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
forces one, and ``GRADVIZ_LAYOUT_TIMEOUT`` (seconds, more than 0 and at most
a day; default 120) is how long ``dot`` may take.  ``dot`` may write at most
:data:`MAX_OUTPUT_BYTES` of SVG: past that it is stopped at once.  The
Graphviz inside pygraphviz runs in this process, one layout at a time, and
cannot be stopped midway: it has neither bound, but it is the library the
wheel carries, not whatever program is called ``dot``.

Both engines are Graphviz with HTML-like labels, so every node, edge, cluster
and legend entry carries the same text, ids and classes; only the coordinates
differ slightly between Graphviz versions.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

ENGINES = ("dot", "pygraphviz")
ENGINE_VARIABLE = "GRADVIZ_LAYOUT"
TIMEOUT_VARIABLE = "GRADVIZ_LAYOUT_TIMEOUT"
DEFAULT_TIMEOUT = 120.0
#: The longest ``GRADVIZ_LAYOUT_TIMEOUT`` accepted, in seconds: a day.  A
#: layout that has not finished in a day will not; and the waits below take
#: no more than that (an infinite or 1e7-second one overflowed them).
MAX_TIMEOUT = 86400.0
#: The most SVG ``dot`` may write, in bytes.  A diagram drawn whole
#: (``collapse=False``) comes out of ``dot`` at about 5.3 KB per op (1,000 ops:
#: 5.3 MB; 2,000 ops: 10.6 MB), so a 5,000-op model drawn whole is about 27 MB,
#: and auto-collapse keeps any model near 1.2 MB.  128 MiB is five times the
#: 5,000-op model drawn whole (which already takes ``dot`` minutes): only a
#: program gone wrong writes more, and it is stopped rather than read into
#: memory until the timeout.
MAX_OUTPUT_BYTES = 128 * 2**20
# The end of ``dot``'s stderr kept for the error message: its last lines are
# what is shown, and a program writing warnings without end fills no memory.
_STDERR_TAIL_BYTES = 64 * 2**10
_CHUNK = 64 * 2**10


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


def _timeout(text: str | None = None) -> float:
    """``GRADVIZ_LAYOUT_TIMEOUT`` (or ``text``) in seconds: more than 0, at most :data:`MAX_TIMEOUT`.

    >>> _timeout("90"), _timeout("")
    (90.0, 120.0)
    >>> _timeout("inf")
    Traceback (most recent call last):
    ...
    ValueError: GRADVIZ_LAYOUT_TIMEOUT='inf' is not a number of seconds; accepted: a positive number such as 120, at most 86400 (a day)
    """
    if text is None:
        text = os.environ.get(TIMEOUT_VARIABLE, "")
    text = text.strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= MAX_TIMEOUT:  # (nan is neither)
        raise ValueError(f"{TIMEOUT_VARIABLE}={text!r} is not a number of seconds; accepted: a "
                         f"positive number such as 120, at most {MAX_TIMEOUT:g} (a day)")
    return seconds


def _run_dot(source: str) -> str:
    program = _dot_program()
    assert program is not None  # layout_engine() chose it
    timeout = _timeout()
    try:
        # Its own process group, so that stopping it stops whatever it started too.
        proc = subprocess.Popen([program, "-Tsvg"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=os.name == "posix")
    except OSError as e:
        raise LayoutError(f"Graphviz's dot ({program}) could not be started: {e}") from None
    # Each pipe has a thread of its own, so that none fills while another is
    # waited on; the output's stops the program as soon as it passes the cap.
    out = _Reader(proc.stdout, MAX_OUTPUT_BYTES,
                  lambda: _kill(proc) if proc.returncode is None else None)
    err = _Reader(proc.stderr, None)
    feed = threading.Thread(target=_feed, args=(proc.stdin, source.encode("utf-8")),
                            daemon=True)
    for t in (out, err, feed):
        t.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc, out, err, feed)
        raise LayoutError(
            f"Graphviz's dot ({program}) did not finish laying out the diagram within "
            f"{timeout:g} s, so it was stopped. It may be hung; if the graph is just large, "
            f"allow more time with {TIMEOUT_VARIABLE}=<seconds>, draw fewer nodes "
            f"(collapse=True), or try {ENGINE_VARIABLE}=pygraphviz.") from None
    except BaseException:  # KeyboardInterrupt, say: leave no dot running
        _stop(proc, out, err, feed)
        raise
    _finish(proc, out, err, feed)
    stderr = _tail(err.data)
    if out.overflow:
        raise LayoutError(
            f"Graphviz's dot ({program}) wrote more than {_megabytes(MAX_OUTPUT_BYTES)}, "
            f"so it was stopped: no diagram gradviz draws is that large, so this dot is "
            f"not working as Graphviz's should" + (f" (on stderr: {stderr})" if stderr else "")
            + f". Try {ENGINE_VARIABLE}=pygraphviz.")
    if proc.returncode != 0:
        raise LayoutError(f"Graphviz's dot ({program}) failed with exit status "
                          f"{proc.returncode}" + (f": {stderr}" if stderr else " and printed "
                                                  "nothing on stderr"))
    svg = out.data.decode("utf-8", errors="replace")
    if "<svg" not in svg or "</svg>" not in svg:
        printed = svg.strip()[:200] or "nothing"
        raise LayoutError(f"Graphviz's dot ({program}) exited normally but did not write SVG: "
                          f"it printed {printed!r}" + (f"; on stderr: {stderr}" if stderr else ""))
    return svg


def _megabytes(n: int) -> str:
    """``n`` bytes in MB, as an error message says it.

    >>> _megabytes(128 * 2**20), _megabytes(1_000_000)
    ('134 MB', '1 MB')
    """
    return f"{n / 1e6:.0f} MB"


class _Reader(threading.Thread):
    """A pipe read to its end in a thread of its own.

    With a ``limit``, what is read is kept until it passes the limit; then
    ``overflow`` is set, ``stop()`` is called, and nothing more is kept.
    Without one, only the last :data:`_STDERR_TAIL_BYTES` are kept.
    """

    def __init__(self, pipe: IO[bytes], limit: int | None,
                 stop: Callable[[], None] | None = None) -> None:
        super().__init__(daemon=True)
        self.pipe, self.limit, self.stop = pipe, limit, stop
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflow = False

    def run(self) -> None:
        try:
            while chunk := self.pipe.read1(_CHUNK):  # type: ignore[attr-defined]
                if self.overflow:
                    continue  # drained until the stopped program's pipe closes
                self.chunks.append(chunk)
                self.size += len(chunk)
                if self.limit is None:
                    while self.size - len(self.chunks[0]) >= _STDERR_TAIL_BYTES:
                        self.size -= len(self.chunks.pop(0))
                elif self.size > self.limit:
                    self.overflow = True
                    self.chunks.clear()
                    if self.stop is not None:
                        self.stop()
        except (OSError, ValueError):
            pass  # the pipe closed under it: what was read is all there is
        finally:
            self.pipe.close()

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """``data`` written to the program's stdin, which is then closed."""
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # it exited (or was stopped) without reading it all: its exit status says why
    finally:
        try:
            pipe.close()
        except (BrokenPipeError, OSError):
            pass


def _kill(proc: subprocess.Popen) -> None:
    """Kill a program, with anything it started."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


def _stop(proc: subprocess.Popen, *threads: threading.Thread) -> None:
    """Stop a program that ran out of time or room, with anything it started; reap it and
    let its pipes' threads end."""
    _kill(proc)
    proc.wait()
    for t in threads:
        t.join(timeout=5)  # (a program that left the group may hold a pipe: not waited for)


def _finish(proc: subprocess.Popen, *threads: threading.Thread) -> None:
    """After the program exited: its pipes read to their end, and anything it started
    that still holds them stopped."""
    for t in threads:
        t.join(timeout=1)
    if any(t.is_alive() for t in threads):
        _kill(proc)  # its group lives on (the pipes are open): the group's id is not reused
        for t in threads:
            t.join(timeout=5)


# One in-process layout at a time: Graphviz's library keeps global state, and
# the stderr catching below points the whole process's file descriptor 2.
_PYGRAPHVIZ_LOCK = threading.Lock()


def _run_pygraphviz(source: str) -> str:
    import pygraphviz

    with _PYGRAPHVIZ_LOCK:
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
