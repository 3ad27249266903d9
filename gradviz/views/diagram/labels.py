"""The diagram's text and colours: Graphviz HTML-like labels, built from trace records.

One function per kind of label (a tensor, an op, a collapsed scope, a group of
ops, a gradient on an edge, each step mark, the legend), each returning the
``<...>`` string Graphviz reads as an HTML-like label.  Every user string goes
through :func:`_esc`.  Where each label goes is
:mod:`~gradviz.views.diagram.draw`'s business.
"""

from __future__ import annotations

import contextlib
import contextvars
import html
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import graphviz

from .. import explain
from .plan import _Bundle, _Group
from ..explain.windows import WINDOW_OPS, window_text
from ..explain import display_name, format_number, format_shape, preview_lines, source_lines
from ..marks import MARKS, NODE_FILLS, Mark
from ...trace import (CUT_REASONS, HEAD_LIMIT, PREVIEW_LIMIT, AccumulateStep, ArrayData, JvpStep,
                      OpInfo, ReduceStep, ResultStep, SeedStep, TangentStep, TensorInfo, Trace)

#: The diagram's colours, from the mark table (static/marks.json, see
#: gradviz.views.marks): each step mark's line colour, and the fills of op,
#: tensor, scope and group nodes.
COLORS = {
    **{m: MARKS[m].color for m in ("gradient", "seed", "reduce", "accumulate", "cut", "result",
                                   "unconnected", "tangent", "direction", "jvp")},
    "op": MARKS["op"].fill,
    **NODE_FILLS,
    "scope": MARKS["scope"].fill,
    "group": MARKS["group"].fill,
}

#: The fill of each step mark, a pale tint of its colour (from the mark table).
MARK_FILLS = {m: MARKS[m].fill for m in ("seed", "reduce", "accumulate", "cut", "result",
                                          "unconnected", "direction", "jvp")}

_FONT = "Helvetica,Arial,sans-serif"  # Liberation Sans here; same metrics as Arial
# Value text is written with one of two font lists that name the same fonts;
# layout_svg recognises them and tags the <text> with a class (gv-forward-value
# / gv-grad-value) so a viewer can hide values by CSS; diagram.css gives the
# classes their monospace font, once instead of on 11,000 texts at 1,000 ops.
# HTML-like labels give no other way to class a line of text.
_FWD_FACE = "Courier New,Courier,monospace,gv-forward-value"
_GRAD_FACE = "Courier New,Courier,monospace,gv-grad-value"
_VALUE_TEXT = re.compile(r'<text ([^>]*)font-family="Courier New,Courier,monospace,'
                         r'(gv-forward-value|gv-grad-value)"')
# Arrow shown before a gradient label: the direction the gradient travels,
# i.e. against the forward arrows.
_BACK_ARROW = {"TB": "\u2191", "BT": "\u2193", "LR": "\u2190", "RL": "\u2192"}
# A tangent flows forward, along the edges' own direction.
_FORWARD_ARROW = {"TB": "\u2193", "BT": "\u2191", "LR": "\u2192", "RL": "\u2190"}
_MAX_NAME = 28  # longer names are shortened in labels (the tooltip keeps them whole)
# Text sizes: the SVG is shown at scale 1, so nothing is drawn under 11 px;
# what is secondary is told by colour (and names by weight), not by size.
_TEXT = 11
# The greys of the diagram, each checked against what it is drawn on
# (tests/test_colour_access.py): text 4.5:1, a line that tells a shape 3:1.
_QUIET = "#444444"  # the colour of a secondary line (shape and dtype, an op's attributes)
_SCOPE_TEXT = "#555555"  # an open scope's name on the sheet, an input's number at its edge
_OFF_PATH = "#666666"  # the text of an op on no path from a y to an x: greyed, still 4.5:1
_EDGE_LINE = "#444444"  # a forward edge
_CLUSTER_LINE = "#888888"  # an open scope's dashed border: quiet, but 3:1 on the sheet
# Decorative, so under no contrast minimum: the op's tint and bold type already
# part it from its output in one node, and the legend's rows say what they are.
_RULE = "#999999"  # the hair rule between an op and its output drawn as one node
_LEGEND_FRAME = "#BBBBBB"  # the legend's box
_VALUE_ELEMS = 12  # arrays up to this size show every value on the diagram
_VALUE_CHARS = 40  # a longer line of values is wrapped after a comma
_MAX_TOOLTIP = 1200  # hover text is cut past this many characters

_CUT_SHORT = {
    "stop_gradient": "stop_gradient op",
    "stop_gradients": "in stop_gradients",
    "integer": "integer tensor",
    "no_gradient": "rule gives none",
    "not_watched": "not watched by tape",
}


# ---------------------------------------------------------------- text pieces


def _esc(text: str) -> str:
    """Text for an HTML-like label: every user string goes through here."""
    return html.escape(text, quote=True)


def _short(text: str, limit: int = _MAX_NAME) -> str:
    """``text``, cut to ``limit`` characters with an ellipsis.

    >>> _short("gradient_of_the_loss", 10)
    'gradient_\u2026'
    """
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _font(text: str, *, size: int | None = None, color: str | None = None,
          face: str | None = None) -> str:
    """``text`` in a font tag with the given size, colour and face (those not None).

    >>> _font("x", size=11, color="#444444")
    '<FONT POINT-SIZE="11" COLOR="#444444">x</FONT>'
    """
    attrs = "".join(f' {k}="{v}"' for k, v in (("POINT-SIZE", size), ("COLOR", color),
                                                 ("FACE", face)) if v is not None)
    return f"<FONT{attrs}>{text}</FONT>"


#: In a live drawing (``gv.explore``), each number of a line of values is given
#: room for this many characters, the most :func:`format_number` writes for a
#: float (``-1.234e-05``), and lines wrap by that room: the lines an array takes,
#: and their room, then depend on its shape alone, so new values of the same
#: program fit the same layout (:mod:`~gradviz.views.diagram.live`).
ROOM = 10
_NUMBER_TEXT = re.compile(r"(?<![\w.])-?(?:inf|nan|\d+(?:\.\d+)?(?:e[+-]\d+)?)(?![\w.])"
                          r"|\b(?:true|false)\b")
_LIVE: contextvars.ContextVar[bool] = contextvars.ContextVar("gv_live", default=False)


def room(line: str) -> int:
    """The characters ``line`` takes with each of its numbers given :data:`ROOM`.

    >>> room("[0.5, -1.234e-05]"), room("min 0 mean 49.5 max 99")
    (24, 45)
    """
    return len(line) + sum(max(0, ROOM - len(m.group(0))) for m in _NUMBER_TEXT.finditer(line))


@contextlib.contextmanager
def live_values(live: bool) -> Iterator[None]:
    """Within it, lines of values wrap by their :func:`room` when ``live``."""
    token = _LIVE.set(live)
    try:
        yield
    finally:
        _LIVE.reset(token)


def _wrap(line: str, width: int = _VALUE_CHARS,
          measure: Callable[[str], int] = len) -> list[str]:
    """``line`` cut after commas into pieces of at most ``width`` characters (where it can be),
    each piece's length as ``measure`` says.

    >>> _wrap("[1, 2, 3, 4]", 8)
    ['[1, 2,', ' 3, 4]']
    >>> _wrap("[1, 2, 3, 4]", 30, room)
    ['[1, 2,', ' 3, 4]']
    """
    out = [""]
    for piece in re.findall(r"[^,]*,? ?", line)[:-1] or [line]:
        if out[-1] and measure(out[-1]) + measure(piece.rstrip()) > width:
            out[-1] = out[-1].rstrip()
            out.append(" " + piece.lstrip())
        else:
            out[-1] += piece
    return [p.rstrip() for p in out]


def _value_lines(a: ArrayData | None) -> list[str]:
    """An array on the diagram: every value up to 12 elements (a matrix one row a line,
    long lines wrapped), else a summary.

    A line's leading spaces are no-break spaces: SVG drops ordinary ones, and
    the rows of a matrix would not line up.

    >>> import numpy as np
    >>> _value_lines(ArrayData.of(np.arange(6.0).reshape(3, 2)))
    ['[[0, 1],', '\\xa0[2, 3],', '\\xa0[4, 5]]']
    """
    lines = preview_lines(a, max_elems=_VALUE_ELEMS, max_rows=_VALUE_ELEMS)
    measure = room if _LIVE.get() else len
    wrapped = [piece for line in lines for piece in _wrap(line, measure=measure)]
    return [re.sub(r"^ +", lambda m: "\u00a0" * len(m.group(0)), w) for w in wrapped]


class _Value(str):
    """A line of gradient values: drawn in _GRAD_FACE, so it gets class gv-grad-value."""


class _Forward(str):
    """A line of forward values: drawn in _FWD_FACE, so it gets class gv-forward-value."""


def _vals(lines: list[str]) -> list[str]:
    return [_Value(line) for line in lines]


def _line(line: str, font: dict[str, Any]) -> str:
    """One line of a label; a line of values is left-aligned, so a matrix's columns line up."""
    if isinstance(line, (_Value, _Forward)):
        face = _GRAD_FACE if isinstance(line, _Value) else _FWD_FACE
        return _font(_esc(line), **dict(font, face=face)) + '<BR ALIGN="LEFT"/>'
    return _font(_esc(line), **font) + "<BR/>"


def _lines(lines: list[str], **font: Any) -> str:
    """Lines of a label, each in ``font`` (values in their monospace face)."""
    return "".join(_line(line, font) for line in lines).removesuffix("<BR/>")


def _html(body: str) -> str:
    # graphviz treats a string wrapped in <...> as an HTML-like label.
    return f"<{body}>"


def _counted(items: list[str], limit: int) -> str:
    """"3 Tanh, 2 Mul": the commonest first (ties by first appearance), at most ``limit``.

    >>> _counted(["Mul", "Tanh", "Tanh", "Add", "Tanh", "Mul"], 2)
    '3 Tanh, 2 Mul, 1 other'
    """
    ranked = Counter(items).most_common()  # ties keep their first appearance
    text = ", ".join(f"{n} {k}" for k, n in ranked[:limit])
    rest = sum(n for _, n in ranked[limit:])
    return text + (f", {rest} other" if rest else "")


def _shapes(shapes: list[tuple[int, ...]], limit: int = 3) -> str:
    """Distinct shapes, with a count when repeated: "2\u00d7(3,3), (3,)"."""
    if not shapes:
        return "none"
    counts = Counter(shapes)
    parts = [(f"{n}\u00d7" if n > 1 else "") + format_shape(sh)
             for sh, n in list(counts.items())[:limit]]
    return ", ".join(parts) + (", \u2026" if len(counts) > limit else "")


# ---------------------------------------------------------------- the forward graph


def _tensor_body(t: TensorInfo, name: str, values: bool, bold: bool = True) -> str:
    """A tensor's name (``name``, shortened; bold unless told; none if empty), its shape,
    dtype and kind, its values."""
    meta = f"{format_shape(t.shape)} {t.dtype}"
    if t.kind != "computed":
        meta += f" \u00b7 {t.kind}"
    title = _esc(_short(name))
    body = ((f"<B>{title}</B>" if bold else title) + "<BR/>" if name else "") + _font(
        _esc(meta), size=_TEXT, color=_QUIET)
    if values:
        body += "<BR/>" + _lines([_Forward(v) for v in _value_lines(t.value)], size=_TEXT)
    return body


def _tensor_label(t: TensorInfo, name: str, values: bool) -> str:
    """A tensor node's label: its name (``name``, shortened), shape, dtype, kind, values."""
    return _html(_tensor_body(t, name, values))


def _op_body(o: OpInfo) -> str:
    """An op's type in bold, and the attributes that change the maths."""
    sub = _op_detail(o.type, o.attrs)
    return f"<B>{_esc(o.type)}</B>" + (
        ("<BR/>" + _font(_esc(sub), size=_TEXT, color=_QUIET)) if sub else "")


def _op_label(o: OpInfo) -> str:
    """An op node's label: its type, and the attributes that change the maths."""
    return _html(_op_body(o))


def _op_tensor_label(o: OpInfo, t: TensorInfo, name: str, values: bool) -> str:
    """The label of op ``o`` and its one output ``t`` drawn as one node.

    The op (type and attributes) on top, a thin rule, then the tensor as
    :func:`_tensor_label` writes it (without its name when that only repeats
    the op's type): a borderless two-row table, so it sits inside the node's
    own (rounded box) shape.
    """
    # The op's part is tinted like an op node; the tensor's name is not bold,
    # so the op's type reads first.
    return _html('<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2" '
                 f'COLOR="{_RULE}">'
                 f'<TR><TD BGCOLOR="{COLORS["op"]}">{_op_body(o)}</TD></TR><HR/>'
                 f"<TR><TD>{_tensor_body(t, '' if name == o.type else name, values, bold=False)}"
                 "</TD></TR></TABLE>")


def _op_detail(op_type: str, attrs: dict[str, Any]) -> str:
    """A short second line for ops whose attributes change the maths.

    >>> _op_detail("Sum", {"axis": [0, 1], "keepdims": True}), _op_detail("Add", {})
    ('axis (0, 1), keepdims', '')
    """
    if op_type == "MatMul":
        t = [n for n in ("transpose_a", "transpose_b") if attrs.get(n)]
        return ", ".join(t)
    if op_type in ("Sum", "Mean", "Max"):
        axis = attrs.get("axis")
        s = "all axes" if axis is None else f"axis {tuple(axis) if isinstance(axis, list) else axis}"
        return s + (", keepdims" if attrs.get("keepdims") else "")
    if op_type in WINDOW_OPS:
        return window_text(attrs)
    if op_type == "Transpose" and "perm" in attrs:
        return f"perm {tuple(attrs['perm'])}"
    if op_type == "Cast" and "DstT" in attrs:
        return f"to {attrs['DstT']}"
    if op_type in ("ConcatV2", "Pack", "Split", "Unpack", "Softmax", "LogSoftmax") and "axis" in attrs:
        return f"axis {attrs['axis']}"
    return ""


def repeat_name(scopes: tuple[str, ...] | list[str]) -> str:
    """The name of a run of sibling scopes of one structure: its first and last, and
    how many.

    >>> repeat_name(["m/layer_0", "m/layer_1", "m/layer_2"])
    'layer_0 … layer_2 ×3'
    """
    first, last = (s.rsplit("/", 1)[-1] for s in (scopes[0], scopes[-1]))
    joint = ", " if len(scopes) == 2 else " \u2026 "
    return f"{first}{joint}{last} \u00d7{len(scopes)}"


def _repeat_label(tr: Trace, grp: _Group, ins: list[int], outs: list[int]) -> tuple[str, str]:
    """A folded run of scopes' label and tooltip: their names, what one of them holds, and
    the shapes at the run's edge."""
    each = len(grp.ops) // len(grp.scopes)
    prefix = grp.scopes[0] + "/"
    types = [tr.ops[o].type for o in grp.ops
             if tr.ops[o].scope == grp.scopes[0] or tr.ops[o].scope.startswith(prefix)]
    name = repeat_name(grp.scopes)
    lines = [_font(_esc(f"{each} ops each: {_counted(types, 3)}"), size=_TEXT),
             _font(_esc(f"in {_shapes([tr.tensors[t].shape for t in ins])} \u2192 "
                        f"out {_shapes([tr.tensors[t].shape for t in outs])}"),
                   size=_TEXT, color=_QUIET)]
    label = _html(f"<B>{_esc(name)}</B><BR/>" + "<BR/>".join(lines))
    tooltip = (f"{len(grp.scopes)} scopes of one structure drawn as one "
               f"({', '.join(grp.scopes)}): {each} ops each")
    return label, graphviz.escape(tooltip)


def _scope_label(scope: str, n_ops: int, n_tensors: int) -> str:
    """A collapsed scope's label: its last name, and how much it hides."""
    return _html(f"<B>{_esc(_short(scope.rsplit('/', 1)[-1]))}</B><BR/>"
                 + _font(_esc(f"{n_ops} ops, {n_tensors} tensors (collapsed)"), size=_TEXT,
                         color=_QUIET))


def _cluster_label(scope: str) -> str:
    """An open scope's cluster label: its last name."""
    return _html(_font(_esc(scope.rsplit("/", 1)[-1]), size=12, color=_SCOPE_TEXT))


def _folded_cluster_label(scope: str, inside: list[str]) -> str:
    """The label of a cluster that also holds the scopes nested in it too deep to get
    clusters of their own (``inside``): the path they make, and how many they are.

    >>> label = _folded_cluster_label("a/b", ["a/b/c", "a/b/c/d"])
    >>> re.findall(r">([^<>]+)</FONT>", label)
    ['b/…/d', '2 more scopes inside']
    >>> re.findall(r">([^<>]+)</FONT>", _folded_cluster_label("a/b", ["a/b/c", "a/b/d"]))
    ['b/…', '2 more scopes inside']
    >>> re.findall(r">([^<>]+)</FONT>", _folded_cluster_label("a/b", ["a/b/c"]))
    ['b/…/c', '1 more scope inside']
    """
    deepest = max(inside, key=lambda s: s.count("/"))
    # One chain of scopes has one deepest end; branches show only where they start.
    chain = all(deepest.startswith(s + "/") or s == deepest for s in inside)
    end = f"/…/{_short(deepest.rsplit('/', 1)[-1])}" if chain else "/…"
    more = f"{len(inside)} more scope{'s' if len(inside) != 1 else ''} inside"
    return _html(_font(_esc(_short(scope.rsplit("/", 1)[-1]) + end), size=12, color=_SCOPE_TEXT)
                 + "<BR/>" + _font(_esc(more), size=_TEXT, color=_QUIET))


def _group_label(tr: Trace, grp: _Group, ins: list[int], outs: list[int],
                 quiet: list[int]) -> tuple[str, str]:
    """A group node's label and tooltip: which ops, of what types, and the shapes at its edge.

    ``ins`` are the tensors its ops read that are drawn outside it (``quiet``,
    those of them no edge is drawn for, are named); ``outs`` the tensors
    computed inside that a y is, or an op outside reads.
    """
    ops = [tr.ops[o] for o in grp.ops]
    if grp.repeat:
        return _repeat_label(tr, grp, ins, outs)
    first, last = grp.ops[0], grp.ops[-1]
    title = f"ops {first}\u2013{last}"
    lines = [_font(_esc(f"{len(ops)} ops: {_counted([o.type for o in ops], 3)}"), size=_TEXT)]
    if grp.scopes:
        names = ", ".join(_short(s, 16) for s in grp.scopes[:2])
        more = f" +{len(grp.scopes) - 2}" if len(grp.scopes) > 2 else ""
        lines.append(_font(_esc(f"scopes {names}{more}"), size=_TEXT))
    lines.append(_font(_esc(f"in {_shapes([tr.tensors[t].shape for t in ins])} \u2192 "
                            f"out {_shapes([tr.tensors[t].shape for t in outs])}"),
                       size=_TEXT, color=_QUIET))
    if quiet:
        quiet_names = [_short(display_name(tr.tensors[t], scoped=True), 16) for t in quiet]
        more = f" +{len(quiet_names) - 2}" if len(quiet_names) > 2 else ""
        lines.append(_font(_esc(f"also reads {', '.join(quiet_names[:2])}{more}"), size=_TEXT,
                           color=_QUIET))
    label = _html(f"<B>{_esc(title)}</B><BR/>" + "<BR/>".join(lines))
    tooltip = (f"{title}, drawn as one node (the trace is too large to draw "
               f"every op): {_counted([o.type for o in ops], 1000)}")
    if grp.scopes:
        tooltip += f"; name scopes {', '.join(grp.scopes)}"
    return label, graphviz.escape(tooltip)


def _bundle_label(tr: Trace, b: _Bundle) -> tuple[str, str]:
    """A bundle node's label and tooltip: how many inputs it stands for, the first and
    last by name, their shapes, and the ops that make them."""
    names = [display_name(tr.tensors[t], scoped=True) for t in b.inputs]
    title = f"{len(names)} more inputs"
    lines = [_font(_esc(f"{_short(names[0], 16)} \u2026 {_short(names[-1], 16)}"), size=_TEXT)]
    if b.ops:
        lines.append(_font(_esc(f"made by {_counted([tr.ops[o].type for o in b.ops], 3)}"),
                           size=_TEXT))
    lines.append(_font(_esc(_shapes([tr.tensors[t].shape for t in b.inputs])), size=_TEXT,
                       color=_QUIET))
    label = _html(f"<B>{_esc(title)}</B><BR/>" + "<BR/>".join(lines))
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    made = (f", made by {len(b.ops)} ops ({_counted([tr.ops[o].type for o in b.ops], 1000)})"
            if b.ops else "")
    tooltip = (f"{len(names)} inputs of {tr.ops[b.op].type} drawn as one node{made}: {shown}")
    return label, graphviz.escape(tooltip)


def _bundled_edge_label(count: int, arrow: str) -> str:
    """The label of ``count`` parallel edges drawn as one (into or out of a group or
    bundle): how many, and that gradients flow back along them."""
    return f"{arrow} \u00d7{count}".lstrip()


# ---------------------------------------------------------------- the backward pass


#: the ops whose edge from their params may carry a sparse gradient (``gathered_rows``)
_GATHERS = ("GatherV2", "GatherNd")


def gathered_rows(tr: Trace, o: OpInfo) -> str:
    """The rows of its params a gather's sparse gradient reaches, for its edge: ``rows 1, 3
    (1 ×2)``; empty for any other op, and for a gather whose gradient is dense, as
    TensorFlow's (along another axis, in batches), or whose indices the trace keeps only as
    a summary."""
    read = explain.gathered(tr, o)
    if read is None or not read.sparse:
        return ""
    counts = read.counts
    listed = ", ".join(map(str, list(counts)[:6])) + (" \u2026" if len(counts) > 6 else "")
    again = [f"{r} \u00d7{c}" for r, c in counts.items() if c > 1][:3]
    return f"row{'s' if len(counts) > 1 else ''} {listed}" + (
        f" ({', '.join(again)})" if again else "")


def _grad_label(arrays: list[ArrayData | None], values: bool, arrow: str,
                note: str = "") -> str:
    """Label of an edge gradient flows along: shape, and its values (or a summary);
    ``note``, a line under the shape (the rows a sparse gradient reaches)."""
    arrays = [a for a in arrays if a is not None]
    if not arrays:
        return ""
    a = arrays[-1]
    head = f"{arrow} {format_shape(a.shape)}" + (f" · sparse: {note}" if note else "")
    if a.nonfinite:
        head += " \u26a0 nan/inf"
    if len(arrays) > 1 and len({(x.shape, _key(x)) for x in arrays}) > 1:
        lines = [head, f"{len(arrays)} passes"]
    elif values:
        lines = [head] + _vals(_value_lines(a))
    else:
        lines = [head]
    # dot puts an edge's label just right of its line; empty cells keep the
    # text off that line and the next edge's line clear of the text.
    text = _lines(lines, size=_TEXT, color=COLORS["gradient"])
    return _html('<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
                 f'<TD WIDTH="4"></TD><TD ALIGN="LEFT" BALIGN="LEFT">{text}</TD>'
                 '<TD WIDTH="10"></TD></TR></TABLE>')


def _key(a: ArrayData) -> tuple:
    return a.head + (a.min, a.max)


def _seed_label(ss: list[SeedStep], values: bool) -> str:
    """A seed mark: where a y's starting gradient comes from (and its values)."""
    lines = []
    for s in ss[:2]:
        src = f"grad_ys[{s.y_index}]" if s.given else "ones (default)"
        lines.append(f"seed: {src}")
        if values:
            lines += _vals(_value_lines(s.grad))
    if ss[0].num_ys > 1:
        lines.append(f"summed over {ss[0].num_ys} ys")
    if len({s.pass_index for s in ss}) > 1:
        lines = [f"seed: one-hot per pass ({len(ss)} passes)"]
    return _html(_lines(lines, size=_TEXT))


def _direction_label(ts: list[TangentStep], name: str, values: bool) -> str:
    """A direction mark: the tangent a primal starts with (a one-hot per pass in a
    Jacobian)."""
    t = ts[-1]
    if len(ts) > 1:
        lines = [f"d{name}: one-hot per pass", f"({len(ts)} passes)"]
    else:
        lines = [f"d{name} = tangents[{t.x_index}]"]
        if values:
            lines += _vals(_value_lines(t.tangent))
    return _html(_lines(lines, size=_TEXT))


def _jvp_label(js: list[JvpStep], name: str, values: bool) -> str:
    """A jvp mark: a target's tangent, J·dx (or why it has none)."""
    j = js[-1]
    if j.status != "connected":
        lines = [f"d{name}: {'None' if j.tangent is None else 'zeros'}",
                 "integer: no tangent" if j.status == "integer" else "no tangent reaches it"]
    else:
        lines = [f"d{name} = J\u00b7dx  (targets[{j.y_index}])"]
        if len(js) > 1:
            lines.append(f"{len(js)} columns, one per pass")
        elif values:
            lines += _vals(_value_lines(j.tangent))
            if j.tangent is not None and j.tangent.nonfinite:
                lines.append("\u26a0 has nan/inf")
    return _html(_lines(lines, size=_TEXT))


#: what the tape's reasons say of a source it neither watched nor made (gradviz/engine/tape.py)
_OFF_TAPE = ("no op the tape recorded made it", "the tape neither watched it nor made it",
             "the tape did not watch it, so no recorded op leads to it")


def _off_tape(reason: str) -> bool:
    """Whether a result's reason says the tape neither watched nor made the source."""
    return any(phrase in reason for phrase in _OFF_TAPE)


def _result_label(rs: list[ResultStep], name: str, values: bool,
                  y_index: int | None = None) -> str:
    """A result mark: the final gradient of x ``name`` (or why it has none); ``y_index``
    when that x is also a y, whose own seed is part of its gradient."""
    r = rs[-1]
    if r.status != "connected":
        what = "None" if r.grad is None else "zeros"
        lines = [f"xs[{r.x_index}] {name}: {what}",
                 "integer: no gradient" if r.status == "integer" else
                 "not on the tape" if _off_tape(r.reason) else "unconnected"]
        if r.grad is not None and values:
            lines += _vals(_value_lines(r.grad))
    else:
        lines = [f"dL/d{name}  (xs[{r.x_index}])"]
        if y_index is not None:
            lines.append(f"also ys[{y_index}]: its own seed adds in")
        if len(rs) > 1:
            lines.append(f"{len(rs)} rows, one per pass")
        elif values:
            lines += _vals(_value_lines(r.grad))
            if r.grad is not None and r.grad.nonfinite:
                lines.append("\u26a0 has nan/inf")
    return _html(_lines(lines, size=_TEXT))


def _reduce_label(rs: list[ReduceStep], values: bool) -> str:
    """A reduce node on a gradient's path: the axes a broadcast gradient is summed over,
    the shapes before and after, and the values."""
    r = rs[-1]
    lines = [f"\u03a3 over axes {tuple(r.axes)}",
             f"{format_shape(r.shape_before)} \u2192 {format_shape(r.shape_after)}"]
    if values and len(rs) == 1:
        lines += _vals(_value_lines(r.grad))
    return _html(_lines(lines, size=_TEXT))


def _accumulate_label(accs: list[AccumulateStep], values: bool) -> str:
    """A sum node on a gradient's path: a fan-out tensor's gradient contributions added up."""
    a = accs[-1]
    n = len(a.contributions)
    lines = [f"\u2295 sum of {n}"]
    if values and len(accs) == 1:
        terms = [explain.format_array(c.grad, max_elems=2) for c in a.contributions]
        text = " + ".join(terms) if len(" + ".join(terms)) <= 30 else f"{n} terms"
        lines.append(_Value(f"{text} ="))
        lines += _vals(_value_lines(a.total))
    else:
        lines.append(f"\u2192 {format_shape(a.total.shape)}")
    return _html(_lines(lines, size=_TEXT))


def _cut_label(reason: str) -> str:
    """A cut mark: why no gradient flows on.

    >>> _cut_label("stop_gradient")
    '<<FONT POINT-SIZE="11">\u2702 cut</FONT><BR/><FONT POINT-SIZE="11">stop_gradient op</FONT>>'
    """
    return _html(_lines(["\u2702 cut", _CUT_SHORT.get(reason, reason)], size=_TEXT))


# ---------------------------------------------------------------- hover text


def _array_text(a: ArrayData | None) -> list[str]:
    """An array as hover text: every value the trace keeps, a matrix one row a line.

    The trace keeps every value of an array up to ``PREVIEW_LIMIT`` (64)
    elements; of a larger one, its first values and min / mean / max / norm.

    >>> import numpy as np
    >>> _array_text(ArrayData.of(np.arange(100.0)))  # doctest: +NORMALIZE_WHITESPACE
    ['first 8 of 100 values: 0, 1, 2, 3, 4, 5, 6, 7, \u2026',
     'min 0 mean 49.5 max 99 norm 573',
     '(the trace keeps every value of arrays up to 64 elements)']
    """
    if a is None:
        return ["None"]
    if a.values is not None and a.size <= PREVIEW_LIMIT:  # (an image keeps more: the panel)
        return preview_lines(a, max_elems=PREVIEW_LIMIT, max_rows=PREVIEW_LIMIT)
    head = ", ".join(format_number(v) for v in a.head[:HEAD_LIMIT])
    lines = [f"first {len(a.head)} of {a.size} values: {head}, \u2026"]
    if a.norm is not None:
        lines.append(explain.format_array(a) + f" norm {format_number(a.norm)}")
    return lines + [f"(the trace keeps every value of arrays up to {PREVIEW_LIMIT} elements)"]


def _tooltip(lines: list[str]) -> str:
    """Hover text from ``lines``, cut past ``_MAX_TOOLTIP`` characters, quoted for graphviz."""
    text = "\n".join(lines)
    if len(text) > _MAX_TOOLTIP:
        text = text[: _MAX_TOOLTIP - 1] + "\u2026"
    return graphviz.escape(text)


def _tensor_lines(t: TensorInfo) -> list[str]:
    return ([t.name, f"{format_shape(t.shape)} {t.dtype}, {t.kind}"] + source_lines(t.source)
            + _array_text(t.value))


def _tensor_tooltip(t: TensorInfo) -> str:
    """A tensor node's hover text: its full name, shape, dtype, kind and every value."""
    return _tooltip(_tensor_lines(t))


def _op_lines(o: OpInfo, trace: Trace, outputs: bool = True) -> list[str]:
    attrs = ", ".join(f"{k}={v!r}" for k, v in o.attrs.items()) or "none"

    def tensors(ids: tuple[int, ...]) -> str:
        return ", ".join(f"{display_name(trace.tensors[t], scoped=True)} "
                         f"{format_shape(trace.tensors[t].shape)} {trace.tensors[t].dtype}"
                         for t in ids) or "none"

    lines = [f"{o.type} op {o.name}", *source_lines(o.source), f"attributes: {attrs}",
             f"inputs: {tensors(o.inputs)}"]
    if outputs:
        lines.append(f"outputs: {tensors(o.outputs)}")
    if not o.on_path:
        lines.append("on no path from a y to an x: no gradient flows through it")
    return lines


def _op_tooltip(o: OpInfo, trace: Trace) -> str:
    """An op node's hover text: type and name, attributes, the inputs' and outputs' shapes."""
    return _tooltip(_op_lines(o, trace))


def _op_tensor_tooltip(o: OpInfo, t: TensorInfo, trace: Trace) -> str:
    """The hover text of op ``o`` drawn as one node with its output ``t``: the op's, then
    the tensor's (which says the output)."""
    return _tooltip(_op_lines(o, trace, outputs=False) + [""] + _tensor_lines(t))


def _cut_tooltip(reason: str, name: str) -> str:
    """A cut mark's hover text: why no gradient flows on to ``name``."""
    return _tooltip([f"cut at {name}: {CUT_REASONS.get(reason, reason)}"])


def _grad_tooltip(arrays: list[ArrayData | None], what: str) -> str:
    """Hover text of a gradient: ``what`` it is ("gradient flowing back to b"), its shape,
    dtype and values (each pass's, when several passes carry different ones)."""
    arrays = [a for a in arrays if a is not None]
    if not arrays:
        return _tooltip([what, "no gradient"])
    lines = [what]
    several = len(arrays) > 1 and len({(x.shape, _key(x)) for x in arrays}) > 1
    for k, a in enumerate(arrays if several else arrays[-1:]):
        lines.append((f"pass {k}: " if several else "") + f"{format_shape(a.shape)} {a.dtype}")
        lines += _array_text(a)
    return _tooltip(lines)


# ---------------------------------------------------------------- the legend


def _swatch_cell(m: Mark) -> str:
    """The diagram legend's sample of mark ``m``: one table cell."""
    plain = m.border == "none"  # the text alone, in the mark's colour
    fg = m.color if plain else "#000000"
    border = "#FFFFFF" if plain else m.color
    fill = "#FFFFFF" if m.fill == "none" else m.fill
    if m.border == "rounded":
        # TD has no rounded style; a one-cell rounded table does.
        swatch = (f'<TABLE BORDER="1" STYLE="rounded" CELLBORDER="0" CELLPADDING="1" '
                  f'CELLSPACING="0" COLOR="{border}" BGCOLOR="{fill}"><TR><TD>'
                  f'<FONT POINT-SIZE="11" COLOR="{fg}">{_esc(m.sample)}</FONT></TD></TR></TABLE>')
        return f'<TD CELLPADDING="1">{swatch}</TD>'
    width = {"thick": 3, "double": 2}.get(m.border, 1)
    css = f' STYLE="{m.border}"' if m.border == "dashed" else ""
    return (f'<TD BORDER="{width}" COLOR="{border}" BGCOLOR="{fill}"{css} '
            f'CELLPADDING="2"><FONT POINT-SIZE="11" COLOR="{fg}">{_esc(m.sample)}</FONT></TD>')


def _legend_label(marks: set[str]) -> str:
    """The legend: a sample and the meaning of each mark in ``marks`` (and "active")."""
    order = [m for m in explain.LEGEND if m in marks or m == "active"]
    rows = []
    for mark, meaning in explain.legend(order):
        cell = _swatch_cell(MARKS[mark])
        rows.append(f'<TR>{cell}<TD ALIGN="LEFT"><FONT POINT-SIZE="11">{_esc(meaning)}'
                    '</FONT></TD></TR>')
    return _html(f'<TABLE BORDER="1" COLOR="{_LEGEND_FRAME}" CELLBORDER="0" CELLSPACING="3" '
                 'CELLPADDING="1" BGCOLOR="#FFFFFF"><TR><TD COLSPAN="2" ALIGN="LEFT">'
                 '<B>legend</B></TD></TR>' + "".join(rows) + "</TABLE>")
