"""Where the user's code made an op: the line, its text, and its notebook cell.

The engine keeps, on each op, only the code object and the instruction offset of
the first frame outside gradviz (:func:`gradviz.engine.graph.source_here`): a
fraction of a microsecond.  Here, when a trace is made, that becomes a
:class:`Source`: the file, the line, the function, the line's text, and in a
notebook the cell (its execution count, ``In [3]``) and the line within it.

A trace that holds sources holds code and file paths; every renderer's
``source=False`` leaves them out (:meth:`gradviz.Trace.without_source`).
"""

from __future__ import annotations

import bisect
import linecache
import sys
from dataclasses import dataclass
from types import CodeType
from typing import Any

from ..engine import graph as _graph
from ..engine.graph import NOT_TEXT
from .fields import _MAX_TEXT, _expect, _is_int, _short, _text

#: The longest line of code a trace keeps; a longer one keeps its start and "…".
MAX_CODE = 200


@dataclass(frozen=True)
class Source:
    """The line of code that made an op (or a constant, or a Variable)."""

    file: str | None  # the file Python ran it from; None for a notebook's cell
    line: int  # 1-based, in the file, or in the cell
    function: str  # its function's qualified name, "<module>" at the top level
    code: str  # the line's text, stripped ("" when it could not be read)
    cell: int | None = None  # a notebook cell's execution count (In [3]), else None

    @property
    def place(self) -> str:
        """Where it is, in words: ``"In [3], line 2"`` or ``"model.py:12, in forward"``."""
        return self.where()

    def where(self, full: bool = False) -> str:
        """:attr:`place`, its file's path in full with ``full``."""
        if self.cell is not None:
            where = f"In [{self.cell}], line {self.line}"
        else:
            file = self.file or "?"
            where = f"{file if full else _base_name(file)}:{self.line}"
        return where if self.function == "<module>" else f"{where}, in {self.function}"

    def to_row(self) -> list[Any]:
        """The JSON form: ``[file, line, function, code, cell]``."""
        return [self.file, self.line, self.function, self.code, self.cell]

    @classmethod
    def from_row(cls, row: Any, where: str) -> Source:
        """A row of a trace's ``sources`` table, checked field by field."""
        row = _expect(row, list, where)
        if len(row) != 5:
            raise ValueError(f"{where}: expected [file, line, function, code, cell], "
                             f"got {len(row)} fields")
        file, line, function, code, cell = row
        return cls(None if file is None else _line_text(file, f"{where}[0] (file)", empty=False),
                   _positive(line, f"{where}[1] (line)"),
                   _line_text(function, f"{where}[2] (function)", empty=False),
                   _line_text(code, f"{where}[3] (code)"),
                   None if cell is None else _positive(cell, f"{where}[4] (cell)"))


def _base_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _positive(v: Any, where: str) -> int:
    if not _is_int(v) or not 1 <= v <= 2 ** 31:
        raise ValueError(f"{where}: expected a whole number from 1, got {_short(v)}")
    return v


def _line_text(v: Any, where: str, empty: bool = True) -> str:
    return _text(v, where, empty, what=("text", "one line of text"))


class Sources:
    """The engine's raw sources made :class:`Source`, each line once (many ops share one).

    Code objects are told apart by identity, not equality: two functions of the same
    text at the same line of two files are equal code objects, but not one line.
    """

    def __init__(self) -> None:
        # (id of the code, offset, cell running) -> (the code, kept so that its id stays
        # its own; the line)
        self._made: dict[tuple[int, int, int], tuple[CodeType, Source | None]] = {}
        self._lines: dict[int, tuple[CodeType, list[int], list[tuple[int, int | None]]]] = {}
        self._cells: dict[str, int] | None = None
        self._inputs: list[str] | None = None

    def __call__(self, raw: tuple[CodeType, int, int] | None) -> Source | None:
        if raw is None:
            return None
        code, offset, run = raw
        key = (id(code), offset, run)
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = (code, self._make(code, offset, run))
        return made[1]

    def _make(self, code: CodeType, offset: int, run: int) -> Source | None:
        line = self._line_at(code, offset)
        if line is None or line < 1:  # (code compiled without lines: nothing to show)
            return None
        filename = code.co_filename
        cell = self._cell(filename, run)
        text = linecache.getline(filename, line).expandtabs(4).strip()
        text = NOT_TEXT.sub(" ", text)
        if len(text) > MAX_CODE:
            text = text[:MAX_CODE - 1] + "…"
        file = None if cell is not None else (
            NOT_TEXT.sub("?", filename)[-_MAX_TEXT:] or "<unknown>")
        name = getattr(code, "co_qualname", code.co_name)  # (Python 3.10 has no qualname)
        function = NOT_TEXT.sub("?", name)[:_MAX_TEXT] or "<unknown>"
        return Source(file, line, function, text, cell)

    def _line_at(self, code: CodeType, offset: int) -> int | None:
        """The line of the instruction at byte ``offset`` of ``code`` (what the frame's
        f_lineno was): its ranges of instructions read once per code object, then
        searched, as a long script's ops all ask its module's code."""
        got = self._lines.get(id(code))
        if got is None:
            ranges = [(start, end, line) for start, end, line in code.co_lines()]
            ranges.sort()
            got = self._lines[id(code)] = (code, [start for start, _, _ in ranges],
                                           [(end, line) for _, end, line in ranges])
        _, starts, rest = got
        k = bisect.bisect_right(starts, offset) - 1
        if k < 0 or offset >= rest[k][0]:
            return None
        return rest[k][1]

    def _cell(self, filename: str, run: int) -> int | None:
        """The execution count of the IPython cell compiled as ``filename``, if it is one,
        for code that ran while cell ``run`` did.

        IPython names a cell's file by its text, and keeps the latest cell of each name:
        a cell run again with the same text takes the name.  Code that ran before
        that (``run`` earlier than the latest) was the latest cell of that text at
        or before ``run``, as the history of inputs has them."""
        if self._cells is None:
            self._cells = _ipython_cells()
        latest = self._cells.get(filename)
        if latest is None or not 0 < run < latest:
            return latest
        text = "".join(linecache.getlines(filename)).rstrip()
        if self._inputs is None:
            self._inputs = _ipython_inputs()
        runs = self._inputs
        earlier = [k for k in range(min(run, len(runs) - 1), 0, -1)
                   if runs[k].rstrip() == text]
        return earlier[0] if earlier else latest


def _shell() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _ipython_inputs() -> list[str]:
    """The cells IPython ran, as it compiled them, by execution count (0: none)."""
    history = getattr(_shell(), "history_manager", None)
    runs = getattr(history, "input_hist_parsed", None)
    return runs if isinstance(runs, list) and all(isinstance(r, str) for r in runs) else [""]


def watch_cells() -> None:
    """Tell the engine which IPython cell runs (``graph.run``), before each cell runs.

    Done once, when gradviz is imported in IPython; the cell importing it runs now."""
    shell = _shell()
    events = getattr(shell, "events", None)
    if events is None or getattr(shell, "_gradviz_watches_cells", False):
        return

    def running(info: Any = None) -> None:
        _graph.run = shell.execution_count

    events.register("pre_run_cell", running)
    shell._gradviz_watches_cells = True
    running()


def _ipython_cells() -> dict[str, int]:
    """IPython's cells by the name it compiled each under: {name: execution count}.

    IPython keeps this table to say ``Cell In[3], line 2`` in its tracebacks
    (``CachingCompiler.format_code_name``); outside IPython there is none.
    """
    table = getattr(getattr(_shell(), "compile", None), "_filename_map", None)
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if _is_int(v) and v > 0}
