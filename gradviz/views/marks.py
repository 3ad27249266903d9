"""The visual marks: what each one is called, looks like and means, in one table.

The table is ``static/marks.json``.  The Python diagram reads it here (colours,
fills, the legend's swatches and meanings, the sheet); the viewer's legend
(``static/viewer/legend.js``) imports the same file, and the build of the
viewer's script (``scripts/build_frontend.py``) puts it in.  A new mark is one
entry there, in legend order.

>>> MARKS["seed"].color, MARKS["seed"].fill
('#BF6F00', '#FBE8C4')
>>> list(MARKS)[:3]
['tensor', 'op', 'gradient']
>>> SHEET
{'light': '#FFFFFF', 'dark': '#FFFFFF'}
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["Mark", "MARKS", "NODE_FILLS", "SHEET", "load_sheet", "load_table"]

_THEMES = ("light", "dark")
_BORDERS = frozenset({"rounded", "solid", "dashed", "double", "thick", "none"})


@dataclass(frozen=True)
class Mark:
    """One visual mark of the diagram."""

    mark: str  # its name: the class gv-<mark> in the SVG, the key in the legend
    meaning: str  # the legend's text: the shape in words, then what it stands for
    color: str  # line and text colour
    fill: str  # fill colour, or "none"
    sample: str  # the text of the diagram legend's swatch
    border: str  # how the diagram legend draws the swatch's border
    swatch: dict[str, Any] | None  # the viewer legend's drawing (see marks.json)


def load_table(text: str) -> tuple[dict[str, Mark], dict[str, str]]:
    """The marks and the node fills from the text of a marks table.

    >>> marks, fills = load_table('{"marks": [], "node_fills": {}}')
    >>> marks, fills
    ({}, {})
    >>> load_table('{"marks": [{"mark": "x"}], "node_fills": {}}')
    Traceback (most recent call last):
    ...
    ValueError: marks.json: mark 'x' lacks border, color, fill, meaning, sample, swatch
    """
    data = json.loads(text)
    fields = {"mark", "meaning", "color", "fill", "sample", "border", "swatch"}
    marks: dict[str, Mark] = {}
    for entry in data["marks"]:
        name = entry.get("mark")
        missing = sorted(fields - set(entry))
        if missing:
            raise ValueError(f"marks.json: mark {name!r} lacks {', '.join(missing)}")
        if entry["border"] not in _BORDERS:
            raise ValueError(f"marks.json: mark {name!r} has border {entry['border']!r} "
                             f"(must be one of {', '.join(sorted(_BORDERS))})")
        if name in marks:
            raise ValueError(f"marks.json: mark {name!r} is described twice")
        marks[name] = Mark(**{k: entry[k] for k in fields})
    return marks, dict(data["node_fills"])


def load_sheet(text: str) -> dict[str, str]:
    """The sheet the diagram is drawn on in each theme of the page, from the text of a
    marks table.

    >>> load_sheet('{"sheet": {"light": "#FFFFFF", "dark": "#FFFFFF"}}')
    {'light': '#FFFFFF', 'dark': '#FFFFFF'}
    >>> load_sheet('{"sheet": {"light": "white"}}')
    Traceback (most recent call last):
    ...
    ValueError: marks.json: sheet needs light and dark, each #RRGGBB, not {'light': 'white'}
    """
    sheet = json.loads(text).get("sheet")
    if (not isinstance(sheet, dict) or set(sheet) != set(_THEMES)
            or not all(isinstance(c, str) and re.fullmatch(r"#[0-9A-Fa-f]{6}", c)
                       for c in sheet.values())):
        raise ValueError(f"marks.json: sheet needs {' and '.join(_THEMES)}, each #RRGGBB, "
                         f"not {sheet!r}")
    return {theme: sheet[theme] for theme in _THEMES}


def _read() -> str:
    return resources.files("gradviz.views").joinpath("static/marks.json").read_text("utf-8")


#: Every mark, in legend order.
MARKS: dict[str, Mark]
#: The fill of a tensor node by its kind (variable, constant, computed).
NODE_FILLS: dict[str, str]
MARKS, NODE_FILLS = load_table(_read())
#: The diagram's sheet in the page's light and dark themes.  White in both: the
#: diagram keeps its white sheet in the dark theme, so that every mark's colours
#: and their contrast (WCAG AA, tests/test_colour_access.py) are the same in both.
SHEET: dict[str, str] = load_sheet(_read())
