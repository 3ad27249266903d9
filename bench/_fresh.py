"""Measuring in a fresh Python: a script run beside the repository, and the memory part of it takes.

:func:`run` runs a piece of code in a new Python whose ``sys.path`` starts with the
repository (so ``gradviz``), its ``tests`` (so ``fixtures``) and ``bench`` (so this
module), and gives what it printed; the code's own arguments are ``sys.argv[1:]``.
In that code, :func:`peak_from_here` starts the process's peak resident size again
from its present size, and :func:`peak_since` says how far above it the peak has
gone since: the memory the part between them took (Linux: ``/proc/self``).

This module only runs and reads; it is not a benchmark itself.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["ROOT", "run", "peak_from_here", "peak_since"]

ROOT = Path(__file__).resolve().parent.parent

_PATH = "import sys\nsys.path[:0] = [{root!r}, {root!r} + '/tests', {root!r} + '/bench']\n"


def run(code: str, *args: object) -> str:
    """What ``code`` prints, run in a fresh Python with ``args`` as ``sys.argv[1:]``."""
    prelude = _PATH.format(root=str(ROOT))
    return subprocess.run([sys.executable, "-c", prelude + code, *map(str, args)],
                          capture_output=True, text=True, check=True, cwd=ROOT).stdout


def _status(key: str) -> float:
    """A size from /proc/self/status (``VmRSS:``, ``VmHWM:``), in megabytes."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024


def peak_from_here() -> float:
    """Start the peak resident size again from the present one; the present one (MB)."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
        f.write("5")
    return _status("VmRSS:")


def peak_since(before: float) -> float:
    """How far (MB) the peak resident size has gone above ``before`` (peak_from_here's)."""
    return _status("VmHWM:") - before
