"""The diagram's colours against WCAG 2.1 AA, and its marks under colour-vision deficiencies.

Every colour comes from where the diagram takes it: the mark table
(``static/marks.json`` through :mod:`gradviz.views.marks`), the greys of
:mod:`gradviz.views.diagram.labels`, the step states of ``diagram.css``, and the
sheet of each theme (``SHEET``).  Contrast is WCAG 2.1's: text 4.5:1
(1.4.3), a line that tells a mark's shape 3:1 (1.4.11).  A deficiency is
simulated by Machado, Oliveira and Fernandes (2009) at severity 1.0.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import pytest

from gradviz.views import marks
from gradviz.views.diagram import draw, labels
from gradviz.views.marks import MARKS, NODE_FILLS, SHEET

STATIC = Path(marks.__file__).parent / "static"
CSS = (STATIC / "diagram.css").read_text(encoding="utf-8")
THEMES = sorted(SHEET)

TEXT = 4.5  # WCAG 1.4.3, text under 18 pt (the diagram's is 11 to 12 px)
LINE = 3.0  # WCAG 1.4.11, the parts of a graphic needed to understand it


# ------------------------------------------------------------------ colour science


def _rgb(colour: str) -> tuple[float, float, float]:
    """``#RRGGBB`` (or white, black: Graphviz's names the diagram uses) as 0..1 sRGB."""
    colour = {"white": "#FFFFFF", "black": "#000000"}.get(colour.lower(), colour)
    assert re.fullmatch(r"#[0-9A-Fa-f]{6}", colour), colour
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(min(1.0, max(0.0, c)) * 255):02X}" for c in rgb)


def _decode(c: float) -> float:
    # sRGB to linear light (the 0.04045 knee of IEC 61966-2-1, as WCAG 2.2 writes it)
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _encode(c: float) -> float:
    return 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def _linear(colour: str) -> tuple[float, float, float]:
    return tuple(_decode(c) for c in _rgb(colour))  # type: ignore[return-value]


def luminance(colour: str) -> float:
    """WCAG's relative luminance."""
    r, g, b = _linear(colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio, 1 to 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def over(colour: str, alpha: float, ground: str) -> str:
    """``colour`` at opacity ``alpha`` over ``ground``, blended in sRGB as a browser does."""
    return _hex(tuple(alpha * c + (1 - alpha) * g  # type: ignore[arg-type]
                      for c, g in zip(_rgb(colour), _rgb(ground))))


#: Machado, Oliveira and Fernandes (2009), severity 1.0: linear RGB to linear RGB.
MACHADO = {
    "deuteranopia": ((0.367322, 0.860646, -0.227968),
                     (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "protanopia": ((0.152286, 1.052583, -0.204868),
                   (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "tritanopia": ((1.255528, -0.076749, -0.178779),
                   (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}
DEFICIENCIES = sorted(MACHADO)


def simulate(colour: str, deficiency: str | None) -> str:
    """``colour`` as seen with ``deficiency`` (None: as it is): decoded, the matrix, clipped,
    encoded."""
    if deficiency is None:
        return _hex(_rgb(colour))
    lin = _linear(colour)
    seen = (sum(m * c for m, c in zip(row, lin)) for row in MACHADO[deficiency])
    return _hex(tuple(_encode(min(1.0, max(0.0, c))) for c in seen))  # type: ignore[arg-type]


def lab(colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB colour."""
    r, g, b = _linear(colour)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(a: str, b: str) -> float:
    """CIE76 colour difference."""
    return math.dist(lab(a), lab(b))


def test_the_formulas_give_the_known_values() -> None:
    assert contrast("#FFFFFF", "#000000") == pytest.approx(21)
    assert contrast("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)
    assert contrast("#E69F00", "#FFFFFF") == pytest.approx(2.25, abs=0.01)  # Okabe-Ito's orange
    assert over("#000000", 0.5, "#FFFFFF") == "#808080"
    assert delta_e("#FFFFFF", "#000000") == pytest.approx(100, abs=0.01)
    for deficiency in DEFICIENCIES:  # greys stay grey; each row of a matrix sums to 1
        assert simulate("#777777", deficiency) == "#777777"
    # pure red and green, as far apart as colours get, come five times closer under deuteranopia
    assert delta_e(simulate("#FF0000", "deuteranopia"),
                   simulate("#00FF00", "deuteranopia")) < delta_e("#FF0000", "#00FF00") / 5


# ------------------------------------------------------------------ what is drawn on what


#: The step marks: what a step of the backward pass draws.
STEP_MARKS = ("seed", "reduce", "accumulate", "cut", "result", "unconnected", "gradient",
              "tangent", "direction", "jvp")
#: The marks told by their outline (a step mark's, a collapsed scope's, a group's, a
#: bundle's), and the lines of the diagram's own that tell something, with their colour.
LINES = {
    **{m: MARKS[m].color for m in STEP_MARKS + ("scope", "group", "bundle", "tensor", "op",
                                                 "active")},
    "forward edge": labels._EDGE_LINE,
    "open scope's border": labels._CLUSTER_LINE,
}
#: Lines drawn for looks only, under no minimum (see labels.py).
DECORATIVE = {labels._RULE, labels._LEGEND_FRAME}

#: The white halo under an edge's label (diagram.css: the text's stroke, painted under it).
HALO = re.search(r"\.edge text \{[^}]*stroke: (#[0-9A-Fa-f]{6})", CSS).group(1)
#: How faint a reduce or sum node is before its step (diagram.css).
PENDING = float(re.search(r"\.gv-sum\.gv-pending \{\s*opacity: ([0-9.]+)", CSS).group(1))
#: The current step's colour: its outline, and the text of its gradient's label.
ACTIVE = MARKS["active"].color

BLACK = MARKS["tensor"].color  # a node's own text: Graphviz's default, the tensor's colour
NODES = {**{f"{k} tensor": v for k, v in NODE_FILLS.items()}, "op": MARKS["op"].fill,
         "scope": MARKS["scope"].fill, "group": MARKS["group"].fill}
MARK_GROUNDS = {f"{m} mark": f for m, f in labels.MARK_FILLS.items()}


def _legend_cells() -> list[tuple[str, str, str]]:
    """(mark, its sample's text colour, the swatch's fill), as the diagram's legend draws them."""
    cells = []
    for m in MARKS.values():
        cell = labels._swatch_cell(m)
        fill = re.findall(r'BGCOLOR="([^"]+)"', cell)[-1]
        text = re.search(r'<FONT POINT-SIZE="11" COLOR="([^"]+)"', cell).group(1)
        cells.append((m.mark, text, fill))
    return cells


def _legend_ground() -> str:
    return re.search(r'BGCOLOR="([^"]+)"', labels._legend_label(set(MARKS))).group(1)


def texts(theme: str) -> list[tuple[str, str, str, str]]:
    """Every text of the diagram in ``theme``: (what, its colour, what it is on, that colour)."""
    sheet = SHEET[theme]
    out = []
    # names, values and the words of each mark: black on every fill and on the sheet
    for ground, colour in {**NODES, **MARK_GROUNDS, "sheet": sheet}.items():
        out.append(("text", BLACK, ground, colour))
    # a secondary line (shape and dtype, attributes, counts) on nodes and in a cluster's label
    for ground, colour in {**NODES, "sheet": sheet}.items():
        out.append(("secondary line", labels._QUIET, ground, colour))
    # an op on no path: on its ellipse, or on the node it shares with its output
    for ground, colour in NODES.items():
        if ground not in ("scope", "group"):
            out.append(("off-path op", labels._OFF_PATH, ground, colour))
    out += [("scope name", labels._SCOPE_TEXT, "sheet", sheet),
            ("input number", labels._SCOPE_TEXT, "edge halo", HALO),
            ("input number", labels._SCOPE_TEXT, "sheet", sheet)]
    # a gradient's label on an edge: the halo under it, the sheet around it
    for colour, what in ((MARKS["gradient"].color, "gradient label"),
                         (ACTIVE, "current gradient label")):
        out += [(what, colour, "edge halo", HALO), (what, colour, "sheet", sheet)]
    # a reduce or sum node before its step: the whole node faint on the sheet
    for m in ("reduce", "accumulate"):
        out.append((f"pending {m} text", over(BLACK, PENDING, sheet), f"pending {m} mark",
                    over(MARKS[m].fill, PENDING, sheet)))
    # the legend: each sample on its swatch, the words on the legend's ground
    for mark, colour, fill in _legend_cells():
        out.append((f"legend sample of {mark}", colour, f"{mark} swatch", fill))
    out.append(("legend words", BLACK, "legend", _legend_ground()))
    return out


def test_every_colour_of_the_diagram_code_is_checked() -> None:
    """A colour written into labels.py or draw.py is one of those checked here (or decorative)."""
    checked = ({c.upper() for _, c, _, _ in texts(THEMES[0])}
               | {c.upper() for _, _, _, c in texts(THEMES[0])}
               | {c.upper() for c in LINES.values()} | {c.upper() for c in DECORATIVE})
    for module in (labels, draw):
        source = Path(module.__file__).read_text(encoding="utf-8")
        for colour in set(re.findall(r"#[0-9A-Fa-f]{6}\b", source)):
            assert colour.upper() in checked, (
                f"{Path(module.__file__).name} draws {colour}, which no contrast test checks")


# ------------------------------------------------------------------ contrast, per theme


def test_the_sheet_is_the_diagrams_ground() -> None:
    """The table's sheet is what the diagram is drawn on, in each theme."""
    source = draw._new_digraph("TB", large=False).source
    ground = re.search(r"bgcolor=(\S+)", source).group(1).strip('"')
    for theme in THEMES:
        assert _hex(_rgb(ground)) == SHEET[theme].upper(), (
            f"the diagram is drawn on {ground}, the {theme} theme's sheet is {SHEET[theme]}")


@pytest.mark.parametrize("theme", THEMES)
def test_text_has_4_5_to_1_on_what_it_is_drawn_on(theme: str) -> None:
    low = [f"{what} {fg} on {ground} {bg}: {contrast(fg, bg):.2f}:1"
           for what, fg, ground, bg in texts(theme) if contrast(fg, bg) < TEXT]
    assert not low, f"text under {TEXT}:1 in the {theme} theme: " + "; ".join(low)


@pytest.mark.parametrize("theme", THEMES)
def test_each_marks_line_has_3_to_1_on_the_sheet(theme: str) -> None:
    sheet = SHEET[theme]
    low = [f"{mark} {colour} on the sheet {sheet}: {contrast(colour, sheet):.2f}:1"
           for mark, colour in LINES.items() if contrast(colour, sheet) < LINE]
    assert not low, f"lines under {LINE}:1 in the {theme} theme: " + "; ".join(low)


def test_each_marks_line_has_3_to_1_on_its_own_fill() -> None:
    """A mark's outline reads against its pale tint inside as well as the sheet outside."""
    low = [f"{m.mark} {m.color} on its fill {m.fill}: {contrast(m.color, m.fill):.2f}:1"
           for m in MARKS.values() if m.fill != "none" and contrast(m.color, m.fill) < LINE]
    assert not low, "; ".join(low)


# ------------------------------------------------------------------ colour-vision deficiencies


def _look(mark: str) -> tuple[object, ...]:
    """What tells a mark apart besides colour: the viewer's swatch (path, dash) and the
    diagram legend's border."""
    m = MARKS[mark]
    swatch = m.swatch or {}
    return swatch.get("d"), swatch.get("ellipse"), bool(swatch.get("dash")), m.border


#: Colours closer than this (CIE76) are not told apart by colour.  2.3 is just
#: noticeable for large patches side by side; the marks are thin lines and small
#: swatches apart from each other, where a difference reads several times smaller,
#: so a pair must be this far apart before its colour alone counts.
APART = 20.0


def test_every_pair_of_step_marks_differs_in_shape_or_line_style() -> None:
    same = [f"{a} and {b}" for a, b in itertools.combinations(STEP_MARKS, 2)
            if _look(a) == _look(b)]
    assert not same, f"told apart by colour alone: {', '.join(same)}"


@pytest.mark.parametrize("deficiency", [None, *DEFICIENCIES])
def test_marks_a_deficiency_brings_together_differ_in_shape_or_line_style(
        deficiency: str | None) -> None:
    """Each pair of marks whose line colours are closer than APART (as seen, with
    ``deficiency``) differs in its shape or line style."""
    seen = {m: simulate(MARKS[m].color, deficiency) for m in MARKS}
    together = []
    for a, b in itertools.combinations(MARKS, 2):
        far = delta_e(seen[a], seen[b])
        if far < APART and _look(a) == _look(b):
            full = delta_e(MARKS[a].color, MARKS[b].color)
            together.append(f"{a} {MARKS[a].color} and {b} {MARKS[b].color} (seen as {seen[a]} "
                            f"and {seen[b]}, \u0394E {far:.1f}; {full:.1f} in full colour)")
    assert not together, (f"{deficiency or 'full colour'}: only colour would tell apart "
                          + "; ".join(together))


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("deficiency", DEFICIENCIES)
def test_contrast_holds_under_a_deficiency(deficiency: str, theme: str) -> None:
    """Each mark's line keeps 3:1 on the sheet as seen with ``deficiency``, and coloured text
    its 4.5:1."""
    sheet = simulate(SHEET[theme], deficiency)
    low = []
    for mark, colour in LINES.items():
        seen = simulate(colour, deficiency)
        if contrast(seen, sheet) < LINE:
            low.append(f"{mark} {colour} (seen as {seen}): {contrast(seen, sheet):.2f}:1")
    for what, fg, ground, bg in texts(theme):
        fg_seen, bg_seen = simulate(fg, deficiency), simulate(bg, deficiency)
        if contrast(fg_seen, bg_seen) < TEXT:
            low.append(f"{what} {fg} on {ground} {bg} (seen as {fg_seen} on {bg_seen}): "
                       f"{contrast(fg_seen, bg_seen):.2f}:1")
    assert not low, f"{deficiency}, {theme} theme: " + "; ".join(low)
