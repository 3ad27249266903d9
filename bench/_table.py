"""Plain-text tables for the benchmarks: one layout for results, one for targets.

Every ``bench/*.py`` prints its numbers the same way:

- :func:`print_table` prints a results table, one row per case and one column
  per measure, with headers that spell out their units ("ms per iteration",
  "bytes per step");
- :func:`print_targets` prints the targets as ``target | measured | goal |
  verdict`` (verdict ``met`` or ``MISSED``), then one summary line, and returns
  whether every target was met.

A benchmark reports; it is not a test: a script that ran exits 0 whichever way
its targets went, and the summary line is where a reader looks.

Usage (from a script in ``bench/``, which Python puts first on ``sys.path``)::

    from _table import Target, print_table, print_targets

    print_table(["workload", "implementation", "time\\n(ms per iteration)"],
                [["mlp", "NumPy", "1.52"], ["mlp", "gradviz", "1.80"]], label_columns=2)
    ratio = 1.80 / 1.52
    print_targets("engine", [
        Target("MLP, gradviz / NumPy", f"{ratio:.2f}x", "<= 1.30x", ratio <= 1.3),
    ])  # prints the table and "engine: the one target met"; returns True

This module only prints; it measures nothing and is not a benchmark itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Target", "print_table", "print_targets"]

#: Space between two columns.
GAP = "  "


@dataclass(frozen=True)
class Target:
    """One target of a benchmark, as :func:`print_targets` prints it.

    The script decides ``met`` itself, from the unrounded value, so the
    comparison (``<``, ``<=``, ``==``) stays in the script next to the goal.

    >>> Target("report size, default drawing", "1.21 MB", "< 5 MB", 1.21 < 5)
    Target(name='report size, default drawing', measured='1.21 MB', goal='< 5 MB', met=True)
    """

    name: str  # what is measured, in words: "report size, default drawing"
    measured: str  # the value as printed, with its unit: "1.21 MB"
    goal: str  # the goal as printed, with its unit: "< 5 MB"
    met: bool  # whether the measured value meets the goal


def _lines(head: list[list[str]], body: list[list[str]], right: list[bool]) -> list[str]:
    """Header rows, a rule of dashes, then the body; columns padded to their widest cell."""
    rows = [*head, *body]
    widths = [max(len(row[c]) for row in rows) for c in range(len(right))]
    rule = ["-" * w for w in widths]
    return [
        GAP.join(cell.rjust(w) if r else cell.ljust(w)
                 for cell, w, r in zip(row, widths, right)).rstrip()
        for row in [*head, rule, *body]
    ]


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]], *,
                label_columns: int = 1, title: str | None = None) -> None:
    """Print a results table: one row per case, one column per measure.

    Headers should say the unit in words ("layout time (seconds)", "bytes per
    step"); a ``"\\n"`` in a header splits it over lines, which keeps a table
    with many columns narrow. Cells are printed with ``str()``, so format
    numbers before passing them. The first ``label_columns`` columns name the
    row and are aligned left; the others (the measures) are aligned right.
    ``title``, if given, is printed above.

    >>> print_table(["workload", "time\\n(ms per iteration)", "x NumPy"],
    ...             [["mlp", "1.52", "1.00"], ["chain", "12.30", "8.09"]])
                            time
    workload  (ms per iteration)  x NumPy
    --------  ------------------  -------
    mlp                     1.52     1.00
    chain                  12.30     8.09
    """
    if not headers:
        raise ValueError("print_table: no headers (need at least one column)")
    if not 0 <= label_columns <= len(headers):
        raise ValueError(f"print_table: label_columns={label_columns!r}, must be 0 to "
                         f"{len(headers)} (the number of headers)")
    body = [[str(cell) for cell in row] for row in rows]
    for i, row in enumerate(body):
        if len(row) != len(headers):
            raise ValueError(f"print_table: row {i} has {len(row)} cells, expected "
                             f"{len(headers)} (one per header: {list(headers)!r})")
    split = [h.split("\n") for h in headers]
    depth = max(len(parts) for parts in split)
    # Multi-line headers sit on the rule: shorter ones are padded at the top.
    head = [[""] * (depth - len(parts)) + parts for parts in split]
    head_rows = [[col[line] for col in head] for line in range(depth)]
    right = [False] * label_columns + [True] * (len(headers) - label_columns)
    if title:
        print(title)
    print("\n".join(_lines(head_rows, body, right)))


def print_targets(script: str, targets: Sequence[Target]) -> bool:
    """Print ``targets`` as one table, then a summary line; return whether all were met.

    The table's columns are always target | measured | goal | verdict, the
    verdict ``met`` or ``MISSED``. The summary line starts with ``script`` and
    names the missed targets, so call this last: the summary then ends the
    output.

    >>> print_targets("render", [
    ...     Target("dot runs over every step", "1", "exactly 1", True),
    ...     Target("one step's state", "2.40 ms", "< 2 ms", False)])
    target                    measured  goal       verdict
    ------------------------  --------  ---------  -------
    dot runs over every step         1  exactly 1  met
    one step's state           2.40 ms  < 2 ms     MISSED
    render: 1 of 2 targets MISSED: one step's state
    False
    """
    if not targets:
        print(f"{script}: no targets to check")
        return True
    head = [["target", "measured", "goal", "verdict"]]
    body = [[t.name, t.measured, t.goal, "met" if t.met else "MISSED"] for t in targets]
    print("\n".join(_lines(head, body, [False, True, False, False])))
    missed = [t.name for t in targets if not t.met]
    n = len(targets)
    if not missed:
        print(f"{script}: all {n} targets met" if n > 1 else f"{script}: the one target met")
    else:
        print(f"{script}: {len(missed)} of {n} target{'s' if n > 1 else ''} MISSED: "
              + "; ".join(missed))
    return not missed
