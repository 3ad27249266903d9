"""A step's diagram as a picture that stands alone: its look written in, cropped for a slide.

The diagram the viewer steps shows each step's state by classes that
``diagram.css`` styles, the current step lit by CSS filters.  A picture for a
slide cannot count on either: PowerPoint, Keynote and Inkscape drop or ignore
much of a ``<style>``, and librsvg (``rsvg-convert``) draws a filtered edge as
nothing but its arrowhead.  So a picture is written out:

- :func:`inline_look`: every rule of ``diagram.css`` that matches an element
  becomes that element's presentation attributes (``stroke``, ``fill``,
  ``opacity``...), by the CSS cascade (specificity, then order); what CSS hides
  is left out; the edge labels' white halo is a white copy of each text under
  it; and the current step's black outline and yellow glow, filters on screen,
  are a thicker black stroke over a wide yellow copy of each outline.  No
  ``<style>`` and no filter is left.
- :func:`crop`: the part of the drawing around what a step touches and the
  nodes its edges join, at 16:9, holding only whole boxes: a box the frame
  would cut is left out (the edges to it run off the picture).

Both read the SVG as XML (lxml), and match ``diagram.css``'s selectors with
cssselect, so the picture follows the stylesheet: there is one look, written
once.  :func:`gradviz.views.diagram.to_svg` and ``to_png`` use them.
"""

from __future__ import annotations

import copy
import pathlib
import re
from dataclasses import dataclass

import tinycss2
from cssselect import GenericTranslator, SelectorError, parse as parse_selector
from lxml import etree

from ..marks import MARKS

__all__ = ["inline_look", "crop", "png", "SLIDE_WIDTH", "SLIDE_ASPECT", "Box"]

SVG_NS = "http://www.w3.org/2000/svg"
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
#: A cropped picture's width in px: 13.33 inches at 96 dpi, the width of a
#: 16:9 slide in PowerPoint and Keynote, so that it fills one as placed.
SLIDE_WIDTH = 1280
SLIDE_ASPECT = 16 / 9
#: Room kept all round what a step touches, in the drawing's units (pt).
CONTEXT = 24.0
#: The narrowest crop, in pt: at SLIDE_WIDTH px, the diagram's 11 pt text then
#: reads at most 22 px, 3% of the slide's height.
MIN_CROP_WIDTH = 640.0

# The properties of diagram.css a picture writes as attributes.  The rest are
# the viewer's (a filter, the root's size in a page): a picture has its own.
_PAINT = ("stroke", "fill", "opacity", "stroke-dasharray", "stroke-width",
          "stroke-linejoin", "font-family", "font-weight")
_SHAPES = ("path", "polygon", "ellipse", "polyline")
# The current step's look without a filter: its outlines drawn this wide in
# black, over a copy this wide in the glow's yellow (diagram.css's colours).
_ACTIVE_WIDTH = "2.5"
_GLOW = "#F0E442"
_GLOW_WIDTH = "8"
# Fonts a renderer without Helvetica or Arial may have, metric twins first.
_SANS_FALLBACK = "Liberation Sans,Arimo,DejaVu Sans"
_MONO_FALLBACK = "Liberation Mono,Cousine,DejaVu Sans Mono"


# ---------------------------------------------------------------- the look, inline


@dataclass(frozen=True)
class _Rule:
    xpath: str
    specificity: tuple[int, int, int]
    order: int
    declarations: tuple[tuple[str, str], ...]


def _rules(css: str) -> list[_Rule]:
    """The style rules of ``css``, one per selector, in cascade order."""
    out: list[_Rule] = []
    translator = GenericTranslator()
    for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        if rule.type != "qualified-rule":
            continue
        decls = tuple((d.name, tinycss2.serialize(d.value).strip())
                      for d in tinycss2.parse_declaration_list(rule.content, skip_comments=True,
                                                               skip_whitespace=True)
                      if d.type == "declaration")
        try:
            selectors = parse_selector(tinycss2.serialize(rule.prelude))
        except SelectorError as e:
            raise ValueError(f"diagram.css: a selector a picture cannot follow: "
                             f"{tinycss2.serialize(rule.prelude).strip()!r} ({e})") from e
        for sel in selectors:
            out.append(_Rule(translator.selector_to_xpath(sel), sel.specificity(), len(out), decls))
    out.sort(key=lambda r: (r.specificity, r.order))
    return out


_RULES: dict[str, list[_Rule]] = {}


def _parse(svg: str) -> etree._Element:
    """The SVG as an element tree, its elements named without their namespace (as
    the stylesheet's selectors name them)."""
    root = etree.fromstring(svg.encode("utf-8"), etree.XMLParser(remove_blank_text=False,
                                                                  resolve_entities=False,
                                                                  no_network=True))
    for el in root.iter(etree.Element):
        el.tag = etree.QName(el).localname
    etree.cleanup_namespaces(root)
    return root


def _text(root: etree._Element) -> str:
    out = etree.tostring(root, encoding="unicode")
    if " xmlns=" not in out[:out.index(">")]:
        out = out.replace("<svg", f'<svg xmlns="{SVG_NS}"', 1)
    return out


def _classes(el: etree._Element) -> set[str]:
    return set((el.get("class") or "").split())


def inline_look(svg: str, css: str) -> str:
    """``svg`` (the diagram with its step classes set) with ``css`` written into it.

    >>> svg = ('<svg xmlns="http://www.w3.org/2000/svg"><g class="a">'
    ...        '<path class="p" stroke="red" d="M0,0L1,1"/><text>x</text></g></svg>')
    >>> inline_look(svg, ".a > path { stroke: blue; filter: blur(2px) } .a text { visibility: hidden }")
    '<svg xmlns="http://www.w3.org/2000/svg"><g class="a"><path class="p" stroke="blue" d="M0,0L1,1"/></g></svg>'
    """
    root = _parse(svg)
    for style in root.findall(".//style"):
        _remove(style)
    rules = _RULES.get(css)
    if rules is None:
        rules = _RULES[css] = _rules(css)
    computed: dict[etree._Element, dict[str, str]] = {}
    for rule in rules:
        for el in root.xpath(rule.xpath):
            computed.setdefault(el, {}).update(rule.declarations)
    hidden = []
    for el, props in computed.items():
        if props.get("visibility") == "hidden":
            hidden.append(el)
            continue
        if props.get("paint-order") == "stroke" and el.tag == "text":
            _halo(el, props)
            continue
        for name in _PAINT:
            if name in props:
                el.set(name, _value(props[name]))
    for el in hidden:
        _remove(el)
    for el in root.iter("g"):
        if "gv-active" in _classes(el):
            _light(el)
    graph = root.find("g")
    if graph is not None and graph.get("font-family"):
        graph.set("font-family", _with_fallback(graph.get("font-family"), "sans-serif",
                                                _SANS_FALLBACK))
    for el in root.iter(etree.Element):  # Graphviz writes it too
        for name in ("stroke", "fill"):
            if el.get(name) == "transparent":
                el.set(name, "none")
    for el in root.iter("text"):
        if (el.text or "").startswith(("\xa0", " ")):
            # the indent of a matrix's later rows, which librsvg drops otherwise
            el.set(_XML_SPACE, "preserve")
        family = el.get("font-family")
        if family:
            el.set("font-family", _with_fallback(family, "monospace", _MONO_FALLBACK))
    return _text(root)


def _with_fallback(family: str, generic: str, fallback: str) -> str:
    """The font list ``family`` with ``fallback`` before its ``generic`` family.

    >>> _with_fallback("Helvetica,Arial,sans-serif", "sans-serif", "Arimo")
    'Helvetica,Arial,Arimo,sans-serif'
    """
    names = [n.strip() for n in family.split(",")]
    if generic not in names or fallback in family:
        return family
    at = names.index(generic)
    return ",".join(names[:at] + [fallback] + names[at:])


def _value(v: str) -> str:
    v = v.replace("px", "") if re.fullmatch(r"[\d.]+px", v) else v
    # SVG 1.1's renderers (older librsvg, PowerPoint) do not know "transparent".
    return "none" if v == "transparent" else v.replace('"', "'")


def _remove(el: etree._Element) -> None:
    """Take ``el`` out, keeping the text that followed it."""
    parent = el.getparent()
    prev = el.getprevious()
    if el.tail:
        if prev is not None:
            prev.tail = (prev.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def _halo(text: etree._Element, props: dict[str, str]) -> None:
    """A white copy of ``text`` under it, stroked: what ``paint-order: stroke`` draws."""
    for name in _PAINT:
        if name in props and name not in ("stroke", "stroke-width", "stroke-linejoin"):
            text.set(name, _value(props[name]))
    under = copy.deepcopy(text)
    under.tail = "\n"
    under.set("class", "gv-halo")
    under.set("aria-hidden", "true")
    colour = _value(props.get("stroke", "#ffffff"))
    under.set("fill", colour)
    under.set("stroke", colour)
    under.set("stroke-width", _value(props.get("stroke-width", "3")))
    under.set("stroke-linejoin", props.get("stroke-linejoin", "round"))
    text.addprevious(under)


def _light(g: etree._Element) -> None:
    """The current step's element ``g`` drawn lit: its outlines thick and black over
    a wide yellow copy of each (the glow the viewer draws with a filter)."""
    black = MARKS["active"].color
    shapes = [el for el in g if el.tag in _SHAPES and el.get("stroke") not in ("none", None)]
    if not shapes:
        return
    first = shapes[0]
    for shape in shapes:
        glow = copy.deepcopy(shape)
        glow.attrib.pop("class", None)
        glow.set("fill", "none")
        glow.set("stroke", _GLOW)
        glow.set("stroke-width", _GLOW_WIDTH)
        glow.set("stroke-linejoin", "round")
        glow.set("stroke-dasharray", "none")
        glow.tail = "\n"
        first.addprevious(glow)
        shape.set("stroke", black)
        shape.set("stroke-width", _ACTIVE_WIDTH)
        if "edge" in _classes(g) and shape.tag == "polygon":  # an arrowhead
            shape.set("fill", black)


# ---------------------------------------------------------------- the crop


@dataclass
class Box:
    """A box in the drawing's units: left, top, right, bottom."""

    x0: float
    y0: float
    x1: float
    y1: float

    def __or__(self, other: Box | None) -> Box:
        if other is None:
            return self
        return Box(min(self.x0, other.x0), min(self.y0, other.y0),
                   max(self.x1, other.x1), max(self.y1, other.y1))

    def reaches(self, point: tuple[float, float]) -> bool:
        return self.x0 <= point[0] <= self.x1 and self.y0 <= point[1] <= self.y1

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def holds(self, other: Box) -> bool:
        return (self.x0 <= other.x0 and other.x1 <= self.x1
                and self.y0 <= other.y0 and other.y1 <= self.y1)

    def within(self, outer: Box | None) -> Box:
        """The box moved (not resized) to lie inside ``outer`` along each axis where it fits,
        centred on ``outer`` where it does not.

        >>> Box(-10, 0, 30, 10).within(Box(0, 0, 100, 100))
        Box(x0=0, y0=0, x1=40, y1=10)
        >>> Box(-10, 0, 30, 10).within(Box(0, 0, 20, 100))
        Box(x0=-10.0, y0=0, x1=30.0, y1=10)
        """
        if outer is None:
            return self
        lo, hi = [self.x0, self.y0], [self.x1, self.y1]
        for axis, (a, b) in enumerate(((outer.x0, outer.x1), (outer.y0, outer.y1))):
            size = hi[axis] - lo[axis]
            if size >= b - a:
                shift = (a + b) / 2 - (lo[axis] + hi[axis]) / 2
            else:
                shift = max(a - lo[axis], 0) + min(b - hi[axis], 0)
            lo[axis] += shift
            hi[axis] += shift
        return Box(lo[0], lo[1], hi[0], hi[1])

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def padded(self, d: float) -> Box:
        return Box(self.x0 - d, self.y0 - d, self.x1 + d, self.y1 + d)

    def framed(self, min_width: float, aspect: float) -> Box:
        """The box grown about its centre to at least ``min_width`` wide and to ``aspect``.

        >>> Box(0, 0, 100, 10).framed(160, 16 / 9)
        Box(x0=-30.0, y0=-40.0, x1=130.0, y1=50.0)
        """
        w = max(self.width, min_width, self.height * aspect)
        h = w / aspect
        cx, cy = (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2
        return Box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


_PAIRS = re.compile(r"(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)")
# How near a node an edge's end lies, in pt: Graphviz ends an edge at the
# node's outline, or its arrowhead's tip there.
_TOUCH = 4.0


def _ends(edge: etree._Element) -> list[tuple[float, float]]:
    """Where the edge ``edge`` starts and ends: its line's ends and its arrowheads."""
    out: list[tuple[float, float]] = []
    for el in edge:
        pairs = [(float(x), float(y)) for x, y in _PAIRS.findall(el.get("d") or el.get("points") or "")]
        if el.tag == "path" and pairs:
            out += [pairs[0], pairs[-1]]
        elif el.tag == "polygon":
            out += pairs
    return out
# How wide a text is, per em and character: generous, so that a kept label is whole.
_EM_WIDTH = 0.62


def _box(el: etree._Element) -> Box | None:
    """The box ``el`` and what it holds cover (text by an estimate of its width)."""
    tag = el.tag
    if tag in ("path", "polygon", "polyline"):
        nums = _PAIRS.findall(el.get("d") or el.get("points") or "")
        if not nums:
            return None
        xs, ys = [float(x) for x, _ in nums], [float(y) for _, y in nums]
        pad = float(el.get("stroke-width") or 1) / 2
        return Box(min(xs), min(ys), max(xs), max(ys)).padded(pad)
    if tag == "ellipse":
        cx, cy = float(el.get("cx", 0)), float(el.get("cy", 0))
        rx, ry = float(el.get("rx", 0)), float(el.get("ry", 0))
        return Box(cx - rx, cy - ry, cx + rx, cy + ry)
    if tag == "text":
        x, y = float(el.get("x", 0)), float(el.get("y", 0))
        size = float(el.get("font-size") or 14)
        w = _EM_WIDTH * size * len("".join(el.itertext()))
        anchor = el.get("text-anchor", "start")
        x0 = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
        return Box(x0, y - 0.8 * size, x0 + w, y + 0.25 * size)
    box = None
    for child in el:
        if isinstance(child.tag, str):
            b = _box(child)
            if b is not None:
                box = b | box
    return box


def _offset(graph: etree._Element) -> tuple[float, float]:
    """The translation on the top group, where the drawing keeps one."""
    m = re.search(r"translate\((-?[\d.]+)[ ,]+(-?[\d.]+)\)", graph.get("transform") or "")
    return (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)


def crop(svg: str, ids: list[str], *, width: int = SLIDE_WIDTH, aspect: float = SLIDE_ASPECT,
         min_width: float = MIN_CROP_WIDTH) -> str:
    """``svg`` cropped about the elements ``ids``, ``width`` px wide at ``aspect``.

    The frame is what the ids cover and the nodes at either end of their
    edges (the step's inputs and outputs), :data:`CONTEXT` more all round, at
    least ``min_width`` wide, widened to ``aspect`` and moved inside the
    drawing where it fits.  A node the frame cuts is left out, and so is
    every part outside it; an edge may run off the frame, its label kept only
    if all its lines are whole.
    """
    root = _parse(svg)
    graph = root.find("g")
    if graph is None:
        raise ValueError("crop: the SVG has no drawing (no top group) to crop")
    dx, dy = _offset(graph)
    parts = [(el, _box(el)) for el in graph if isinstance(el.tag, str) and el.tag == "g"]
    boxes = {el.get("id"): b for el, b in parts if b is not None}
    wanted = [boxes[i] for i in ids if i in boxes]
    if not wanted:
        raise ValueError(f"crop: none of the elements {ids} is in the drawing")
    focus = wanted[0]
    for b in wanted[1:]:
        focus = focus | b
    ends = [pt for el, _ in parts if el.get("id") in ids and "edge" in _classes(el)
            for pt in _ends(el)]
    for el, b in parts:
        if b is not None and "node" in _classes(el) and el.get("id") != "legend" \
                and any(b.padded(_TOUCH).reaches(pt) for pt in ends):
            focus = focus | b
    frame = focus.padded(CONTEXT).framed(min_width, aspect).within(_box(graph))
    for el, b in parts:
        classes = _classes(el)
        if b is None or not frame.overlaps(b) or ("node" in classes and not frame.holds(b)):
            _remove(el)
        elif "node" not in classes:  # an edge's label goes whole, all its lines, or stays
            texts = list(el.iter("text"))
            if any(not frame.holds(_box(t)) for t in texts):
                for t in texts:
                    _remove(t)
    for el in list(graph):  # the drawing's own white ground, now the frame's
        if el.tag == "polygon":
            _remove(el)
    x, y, w, h = frame.x0 + dx, frame.y0 + dy, frame.width, frame.height
    ground = etree.Element("rect", x=f"{x:.2f}", y=f"{y:.2f}", width=f"{w:.2f}",
                           height=f"{h:.2f}", fill="#ffffff")
    ground.tail = "\n"
    root.insert(0, ground)
    root.set("viewBox", f"{x:.2f} {y:.2f} {w:.2f} {h:.2f}")
    root.set("width", str(width))
    root.set("height", str(round(width / aspect)))
    return _text(root)


# ---------------------------------------------------------------- PNG


def png(svg: str, width: int) -> bytes:
    """The picture ``svg`` drawn ``width`` px wide as PNG bytes, on white.

    resvg draws it (the ``resvg-py`` wheel: the renderer inside, nothing to
    install beside pip).  It finds the system's fonts, and matplotlib's DejaVu
    fonts where the system has no sans-serif or monospace font of the names
    the picture asks for.
    """
    import matplotlib
    import resvg_py

    root = _parse(svg)
    _, _, w, h = (float(v) for v in root.get("viewBox").split())
    root.set("width", str(width))  # in px, the PNG's: its height follows the viewBox
    root.set("height", str(max(1, round(width * h / w))))
    fonts = str(pathlib.Path(matplotlib.get_data_path()) / "fonts" / "ttf")
    try:
        return bytes(resvg_py.svg_to_bytes(svg_string=_text(root), background="#ffffff",
                                           font_dirs=[fonts], sans_serif_family="DejaVu Sans",
                                           monospace_family="DejaVu Sans Mono", dpi=96))
    except ValueError as e:
        raise ValueError(f"to_png(): resvg could not draw the picture: {e}") from e
