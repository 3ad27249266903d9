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

import linecache
import sys
from dataclasses import dataclass
from types import CodeType
from typing import Any

from ..engine.graph import NOT_TEXT
from .fields import _MAX_TEXT, _expect, _is_int, _short

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
        if self.cell is not None:
            where = f"In [{self.cell}], line {self.line}"
        else:
            where = f"{_base_name(self.file or '?')}:{self.line}"
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
    v = _expect(v, str, where)
    if not v and not empty:
        raise ValueError(f"{where}: expected text, got an empty string")
    if len(v) > _MAX_TEXT or NOT_TEXT.search(v):
        raise ValueError(f"{where}: {_short(v)} is not one line of text (at most "
                         f"{_MAX_TEXT} characters, no control characters)")
    return v


class Sources:
    """The engine's raw sources made :class:`Source`, each line once (many ops share one)."""

    def __init__(self) -> None:
        self._made: dict[tuple[CodeType, int], Source | None] = {}
        self._cells: dict[str, int] | None = None

    def __call__(self, raw: tuple[CodeType, int] | None) -> Source | None:
        if raw is None:
            return None
        made = self._made.get(raw, self)
        if made is self:
            made = self._made[raw] = self._make(*raw)
        return made

    def _make(self, code: CodeType, offset: int) -> Source | None:
        line = _line_at(code, offset)
        if line is None:
            return None
        filename = code.co_filename
        cell = self._cell(filename)
        text = linecache.getline(filename, line).expandtabs(4).strip()
        text = NOT_TEXT.sub(" ", text)
        if len(text) > MAX_CODE:
            text = text[:MAX_CODE - 1] + "…"
        file = None if cell is not None else NOT_TEXT.sub("?", filename)[-_MAX_TEXT:]
        function = NOT_TEXT.sub("?", code.co_qualname)[:_MAX_TEXT]
        return Source(file, line, function, text, cell)

    def _cell(self, filename: str) -> int | None:
        """The execution count of the IPython cell compiled as ``filename``, if it is one."""
        if self._cells is None:
            self._cells = _ipython_cells()
        return self._cells.get(filename)


def _line_at(code: CodeType, offset: int) -> int | None:
    """The line of the instruction at byte ``offset`` of ``code`` (frame.f_lineno, later)."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return None


def _ipython_cells() -> dict[str, int]:
    """IPython's cells by the name it compiled each under: {name: execution count}.

    IPython keeps this table to say ``Cell In[3], line 2`` in its tracebacks
    (``CachingCompiler.format_code_name``); outside IPython there is none.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    table = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if _is_int(v) and v > 0}
