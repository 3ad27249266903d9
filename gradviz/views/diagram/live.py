"""A live diagram: one layout that new values of the same program fill in.

``gv.explore`` runs a program again each time an input moves.  Its diagram must
not move with it: the same ops and shapes are drawn where they were, and only
the numbers change.  So the layout is made from a *template* of the drawing,
its graph with every value written as a token of the room that value may take,
and each run of the program fills the template's SVG with its own values:

- a line of values in a label (class ``gv-grad-value`` or ``gv-forward-value``)
  becomes ``@@@@12``: its token, as wide as the line is with each number given
  :data:`~gradviz.views.diagram.labels.ROOM` characters (the drawing is made
  ``live``, so lines wrap by that room too);
- a hover text becomes ``@13``.

The template's source, with no values left in it, says what the layout depends
on: two runs with the same template share one layout, found by the template's
hash in the cache the caller keeps (:class:`LiveLayouts`), and a run that
changes the program's structure lays it out once more.

>>> import gradviz as gv
>>> layouts = LiveLayouts()
>>> def run(w):
...     W = gv.Variable(w, name="W")
...     return gv.trace_gradients(W * W, [W])
>>> svg1, key1 = live_svg(run(3.0), layouts)
>>> svg2, key2 = live_svg(run(-0.25), layouts)
>>> key1 == key2, layouts.runs, "-0.5" in svg2, "-0.5" in svg1
(True, 1, True, False)
"""

from __future__ import annotations

import hashlib
import html
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from . import layout
from .labels import room
from .plan import made_once
from .svg import _tidy
from ...trace import Trace

__all__ = ["LiveLayouts", "live_svg", "template", "fill"]

# A line of values as drawn: its font (the face names the class) and its text.
_VALUE_LINE = re.compile(r'(<FONT[^>]*FACE="Courier New,Courier,monospace,gv-(?:grad|forward)-value">)'
                         r"([^<]*)</FONT>")
_LINE_BREAK = '<BR ALIGN="LEFT"/>'
# A hover text as python-graphviz writes it: quoted, or a bare word.
_TOOLTIP = re.compile(r'\btooltip=("(?:[^"\\]|\\.)*"|[^\s\]"]+)')
# The tokens as the laid-out template's SVG carries them.
_TEXT_TOKEN = re.compile(r'(<text class="gv-(?:grad|forward)-value"[^>]*>)@+(\d+)</text>')
_TITLE_TOKEN = re.compile(r"<title>@(\d+)</title>")


@dataclass
class LiveLayouts:
    """The laid-out templates of one live view, by template hash; ``runs`` counts the layouts made."""

    svgs: dict[str, str] = field(default_factory=dict)
    runs: int = 0
    # Held while a template is laid out: runs at once share one layout.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)


def _unquote(value: str) -> str:
    """A DOT attribute value as Graphviz reads it (the escapes ``graphviz.escape`` writes undone).

    >>> _unquote('"a \\\\"b\\\\" \\\\\\\\ c"'), _unquote("W")
    ('a "b" \\\\ c', 'W')
    """
    if not value.startswith('"'):
        return value
    return re.sub(r"\\(.)", r"\1", value[1:-1], flags=re.DOTALL)


def template(source: str) -> tuple[str, list[tuple[str, int]]]:
    """``source`` with each value line and hover text replaced by a token, and what fills each.

    Token ``k`` stands for ``fills[k]``: ``(text, pad)``, the text and, for a line of
    values in a node, the no-break spaces before it that centre the lines of
    its array in their room (0 for a hover text, and in a left-aligned label).

    >>> src = ('a [label=<<FONT FACE="Courier New,Courier,monospace,gv-grad-value">[1.5, 2]</FONT>'
    ...        '<BR ALIGN="LEFT"/>> tooltip="a\\n[1.5, 2]"]')
    >>> t, fills = template(src)
    >>> t.replace("@" * 23, "@...@")
    'a [label=<<FONT FACE="Courier New,Courier,monospace,gv-grad-value">@...@1</FONT><BR ALIGN="LEFT"/>> tooltip="@0"]'
    >>> fills
    [('a\\n[1.5, 2]', 0), ('[1.5, 2]', 8)]
    """
    fills: list[tuple[str, int]] = []

    def tip(m: re.Match) -> str:
        fills.append((_unquote(m.group(1)), 0))
        return f'tooltip="@{len(fills) - 1}"'

    source = _TOOLTIP.sub(tip, source)
    out: list[str] = []
    done = 0
    block: list[tuple[int, str]] = []  # the lines of one array: (fill index, text)

    def centre(left: bool) -> None:
        # The lines start at one x; the widest is centred in the widest room,
        # unless its label is left-aligned (a gradient's, beside its edge).
        if block and not left:
            pad = (max(room(t) for _, t in block) - max(len(t) for _, t in block)) // 2
            for k, t in block:
                fills[k] = (t, pad)
        block.clear()

    left = False
    for m in _VALUE_LINE.finditer(source):
        between = source[done:m.start()]
        if between != _LINE_BREAK:
            centre(left)
            label = source.rfind("label=<", 0, m.start())
            left = 'BALIGN="LEFT"' in source[label:m.start()]
        text = html.unescape(m.group(2))
        fills.append((text, 0))
        k = len(fills) - 1
        block.append((k, text))
        width = max(room(text), len(str(k)) + 1)
        out += [between, m.group(1), str(k).rjust(width, "@"), "</FONT>"]
        done = m.end()
    centre(left)
    out.append(source[done:])
    return "".join(out), fills


def fill(svg: str, fills: list[tuple[str, int]]) -> str:
    """The template's laid-out ``svg`` with every token replaced by what ``fills`` gives it.

    >>> fill('<title>@0</title><text class="gv-grad-value" x="1">@@@1</text>',
    ...      [("a\\n<b>", 0), ("[1, 2]", 2)])
    '<title>a&#10;&lt;b&gt;</title><text class="gv-grad-value" x="1">\\xa0\\xa0[1, 2]</text>'
    """
    def text(m: re.Match) -> str:
        t, pad = fills[int(m.group(2))]
        return f"{m.group(1)}{chr(0xA0) * pad}{html.escape(t, quote=False)}</text>"

    def title(m: re.Match) -> str:
        t, _ = fills[int(m.group(1))]
        return f"<title>{html.escape(t, quote=False).replace(chr(10), '&#10;')}</title>"

    return _TITLE_TOKEN.sub(title, _TEXT_TOKEN.sub(text, svg))


def live_svg(trace: Trace, layouts: LiveLayouts, **options: Any) -> tuple[str, str]:
    """``trace``'s diagram (``options`` as :func:`~gradviz.views.diagram.layout_svg` takes)
    laid out as a live template, and the template's key.

    The layout comes from ``layouts`` when a trace with the same template was
    laid out before; otherwise Graphviz lays it out once and ``layouts`` keeps it.
    """
    from . import _options, _plan  # (the package imports this module)

    plan = _plan(trace, _options(**{**options, "live": True}))
    source, fills = template(plan.graph.source)
    engine = layout.layout_engine()
    key = f"{engine}:{hashlib.sha256(source.encode()).hexdigest()[:24]}"

    def lay_out() -> str:
        svg = _tidy(layout.render(source))
        layouts.runs += 1
        return svg

    return fill(made_once(layouts.svgs, key, layouts.lock, lay_out), fills), key
