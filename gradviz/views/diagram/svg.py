"""Graphviz's SVG made smaller and cheaper to paint; the picture stays the same.

:func:`_tidy` takes ``dot``'s SVG output to what :func:`gradviz.views.diagram.layout_svg`
caches: no prolog or comments, hover text as each element's own ``<title>``
(:func:`_titles`) and no other titles, the default font said once, value texts
classed, the top group's translation folded into the coordinates
(:func:`_fold_translate`) and defaults and straight curves written short
(:func:`_compact`).  Everything here works on the text, by regular
expressions over the narrow dialect ``dot`` writes; what it does not
recognise it leaves as it was.
"""

from __future__ import annotations

import re

from .labels import _FONT, _VALUE_TEXT


# Graphviz prefixes its SVG with an XML prolog, a DOCTYPE and comments; none of
# them is needed to display or inline the SVG, and comments only add bytes.
_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)
# graphviz writes an element's title as its graph name (which only repeats the
# id) and its tooltip as a link wrapped around its shapes:
#   <g id="t0" class="node"><title>t0</title>
#   <g id="a_t0"><a xlink:title="x&#10;[1, 2]"> <path .../> <text ...>x</text> </a></g></g>
# (an edge's label may get a wrapper of its own, id "a_e3_0-label").
_TITLE = re.compile(r"<title>[^<]*</title>(?!\n?<g id=\"a_)\n?")
_FIRST_TIP = re.compile(r'<title>[^<]*</title>\n?<g id="a_[^"]*"><a xlink:title="([^"]*)">\n?'
                        r"(.*?)</a>\n?</g>\n?", re.DOTALL)
_OTHER_TIP = re.compile(r'<g id="a_[^"]*"><a xlink:title="[^"]*">\n?(.*?)</a>\n?</g>\n?',
                        re.DOTALL)


def _titles(svg: str) -> str:
    r"""Each tooltip made the ``<title>`` of its element's own group; other titles dropped.

    An SVG ``<title>`` child is what a browser shows on hover over the
    element; unwrapped, the shapes are children of the element's group again
    (as CSS rules like ``.gv-grad > path`` expect) and no ``a_`` ids are left.

    >>> _titles('<g id="t0" class="node">\n<title>a</title>\n<g id="a_t0"><a xlink:title="x&#10;1">\n'
    ...         '<path d=""/>\n</a>\n</g>\n</g>\n<g id="o1" class="node">\n<title>b</title>\n</g>')
    '<g id="t0" class="node">\n<title>x&#10;1</title>\n<path d=""/>\n</g>\n<g id="o1" class="node">\n</g>'
    """
    svg = _TITLE.sub("", svg)
    svg = _FIRST_TIP.sub(lambda m: f"<title>{m.group(1)}</title>\n{m.group(2)}", svg)
    return _OTHER_TIP.sub(lambda m: m.group(1), svg)


def _tidy(raw: str) -> str:
    """``dot``'s SVG output, tidied: see the module docstring."""
    svg = _COMMENT.sub("", _PROLOG.sub("", raw, count=1))
    svg = svg.replace("<svg ", '<svg class="gv-svg" ', 1)
    # graphviz writes every "-" as "&#45;", even in class names; a plain
    # hyphen is valid XML and keeps the ids and classes greppable.
    svg = svg.replace("&#45;", "-")
    # Newer Graphviz (pygraphviz's 14) keeps each text's spaces with xml:space;
    # 2.43 (Debian's dot) does not: the same text either way, as no label
    # starts or ends with a space that matters.
    svg = svg.replace(' xml:space="preserve"', "")
    # Every <text> repeats the default font; say it once on the root group
    # (SVG presentation attributes inherit) and drop the per-element <title>s
    # that only repeat ids (a third off a large diagram), keeping hover text.
    svg = svg.replace(f' font-family="{_FONT}"', "")
    svg = svg.replace('<g id="graph0" class="graph ',
                      f'<g id="graph0" font-family="{_FONT}" class="graph ', 1)
    svg = _titles(svg)
    svg = _VALUE_TEXT.sub(lambda m: f'<text class="{m.group(2)}" {m.group(1).rstrip()}', svg)
    return _compact(_fold_translate(svg))


# The translation graphviz puts on its top group (the y axis flipped into the
# page) and the coordinates it writes: at most two decimals, no exponent.
_GRAPH_TRANSFORM = re.compile(
    r' transform="scale\(1 1\) rotate\(0\) translate\((-?\d+(?:\.\d{1,2})?) '
    r'(-?\d+(?:\.\d{1,2})?)\)"')
_NUMBER = r"-?\d+(?:\.\d{1,2})?"
_PAIR = re.compile(f"({_NUMBER}),({_NUMBER})")
_TAG = re.compile(r"<([A-Za-z][\w:-]*)((?:\s+[\w:-]+=\"[^\"]*\")*)\s*(/?)>")
_ATTR = re.compile(r'(\s+)([\w:-]+)="([^"]*)"')
_X_ATTRS = frozenset({"x", "cx", "x1", "x2"})
_Y_ATTRS = frozenset({"y", "cy", "y1", "y2"})
# Elements whose geometry is in attributes other than the ones moved here.
_UNMOVABLE = frozenset({"image", "rect", "use", "foreignObject", "pattern", "svg"})


def _hundredths(text: str) -> int:
    """'-148407.89' -> -14840789: graphviz's two-decimal numbers as exact integers.

    >>> _hundredths("-148407.89"), _hundredths("4"), _hundredths("0.5")
    (-14840789, 400, 50)
    """
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("-").partition(".")
    return sign * (int(whole) * 100 + int((frac + "00")[:2]))


def _decimal(h: int) -> str:
    """The shortest text of ``h`` hundredths, as graphviz writes it: 556, 148452.5, -0.07.

    >>> _decimal(55600), _decimal(14845250), _decimal(-7)
    ('556', '148452.5', '-0.07')
    """
    whole, frac = divmod(abs(h), 100)
    text = f"{whole}.{frac:02d}".rstrip("0").rstrip(".")
    return "-" + text if h < 0 else text


def _fold_translate(svg: str) -> str:
    """Move graphviz's ``translate(tx ty)`` on the top group into the coordinates.

    A transform on the group that holds every node and edge makes Chromium
    paint the whole drawing, off screen too, whenever anything in it changes
    (it does not cull across a transform): 47 ms per step on a 1,000-op
    diagram, 9 ms without it.  Graphviz writes y as ``-148407.89`` under
    ``translate(4 148963.89)``; moved, it reads ``556``, which also takes
    0.3 MB off that diagram.  The sums are exact (two-decimal numbers added
    as integers), so every point lands where it did.  Any geometry this does
    not know how to move leaves the SVG as it was.
    """
    head = _GRAPH_TRANSFORM.search(svg)
    if head is None or svg.count(" transform=") != 1:
        return svg
    tx, ty = _hundredths(head.group(1)), _hundredths(head.group(2))

    def pair(m: re.Match) -> str:
        return f"{_decimal(_hundredths(m.group(1)) + tx)},{_decimal(_hundredths(m.group(2)) + ty)}"

    class Unmovable(Exception):
        pass

    def attr(tag: str, m: re.Match) -> str:
        space, name, value = m.groups()
        if name in _X_ATTRS or name in _Y_ATTRS:
            if not re.fullmatch(_NUMBER, value):
                raise Unmovable
            d = tx if name in _X_ATTRS else ty
            return f'{space}{name}="{_decimal(_hundredths(value) + d)}"'
        if name == "points" or (name == "d" and tag == "path"):
            # graphviz writes paths as M x,y C x,y x,y x,y ...: absolute pairs only
            rest = _PAIR.sub("", value)
            if name == "d" and not re.fullmatch(r"[MCL\s]*", rest) or \
                    name == "points" and rest.strip():
                raise Unmovable
            return f'{space}{name}="{_PAIR.sub(pair, value)}"'
        return m.group(0)

    def tag(m: re.Match) -> str:
        name, attrs, close = m.groups()
        if name in _UNMOVABLE:
            raise Unmovable
        return f"<{name}{_ATTR.sub(lambda a: attr(name, a), attrs)}{close}>"

    start = svg.index(">", head.end()) + 1  # the children of the top group
    try:
        body, moved = _TAG.subn(tag, svg[start:])
    except Unmovable:
        return svg
    if moved != len(re.findall(r"<(?![/!?])", svg[start:])):
        return svg  # a tag written in a way _TAG does not read: leave it all as it was
    return svg[:head.start()] + svg[head.end():start] + body


# A rounded box is drawn as a path whose straight sides are cubic curves with
# their control points on their ends: the same line, in four pairs of numbers
# instead of one.
_FILLED_PATH = re.compile(r'<path fill="(?!none")[^"]*"(?![^>]*stroke-dasharray)[^>]* d="([^"]*)"')


def _straight_sides(d: str) -> str:
    """``M p0 C p0 p1 p1 ...`` -> ``M p0 L p1 ...`` for each side that is a straight line.

    Only for filled, undashed shapes: a dash pattern is laid out along the
    curve's parameter, which runs unevenly along such a side.
    """
    if not re.fullmatch(r"M\S+C[^A-Za-z]*", d):
        return d
    pts = d[1:].replace("C", " ").split()
    if (len(pts) - 1) % 3:
        return d
    out, cmd, cur = ["M", pts[0]], "M", pts[0]
    for i in range(1, len(pts) - 2, 3):
        c1, c2, end = pts[i:i + 3]
        seg, pieces = ("L", [end]) if (c1 == cur and c2 == end) else ("C", [c1, c2, end])
        out += ([seg] if seg != cmd else [" "]) + [" ".join(pieces)]
        cmd, cur = seg, end
    return "".join(out)


def _compact(svg: str) -> str:
    """Drop what restates SVG's defaults; write straight sides as lines.

    ``text-anchor="start"`` is the initial value; ``font-size="10.00"`` is 10.
    """
    svg = svg.replace(' text-anchor="start"', "")
    svg = re.sub(r' font-size="(\d+\.\d\d)"',
                 lambda m: f' font-size="{_decimal(_hundredths(m.group(1)))}"', svg)
    return _FILLED_PATH.sub(
        lambda m: m.group(0)[:m.start(1) - m.start(0)] + _straight_sides(m.group(1)) + '"',
        svg)

