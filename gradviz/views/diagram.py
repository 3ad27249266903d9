"""The annotated diagram: a trace drawn as one graphviz layout, restyled per step.

The forward graph (tensors as rounded boxes, ops as ellipses, name scopes as
clusters; in a trace too large to draw whole, collapsed scopes and runs of
ops as single nodes) and every mark of the backward pass (gradient labels on
edges, seeds, broadcast reductions, fan-out accumulations, cuts, results and
a legend) go into ONE layout, run through ``dot`` once per trace and options.
A step is shown by setting three classes on SVG elements, never by laying
out again, so nothing moves while stepping:

``gv-pending``
    touched by a later step (gradient labels and marks hidden or faint);
``gv-done``
    touched by an earlier step (shown normally);
``gv-active``
    touched by the current step (thick outline, bold text).

The rules live in ``gradviz/views/static/diagram.css``, shared with the viewer's
JavaScript, which toggles the same classes in the browser.

Stable SVG element ids, derived from the trace's ids only:

=====================  ===================================================
``t{tensor}``          a tensor node
``o{op}``              an op node
``e{op}_{i}``          the edge from the op's input ``i`` to the op
``o{op}_out{k}``       the edge from the op to its output ``k``
``seed{tensor}``       the seed mark of a y (``seed{tensor}_e``: its arrow)
``res{x_index}``       the result mark of an x (``res{x_index}_e``: its arrow)
``red{op}_{i}``        a broadcast reduction on edge ``e{op}_{i}`` (``..._e``: its link)
``acc{tensor}``        a fan-out accumulation at a tensor (``..._e``: its link)
``cut{op}_{i}``        a cut on edge ``e{op}_{i}`` (``..._e``: its link)
``cutt{tensor}``       a cut at a tensor listed in stop_gradients (``..._e``: its link)
``scope{n}``           a collapsed name scope (``cluster{n}`` when drawn open)
``group{n}``           a run of consecutive ops drawn as one node (auto-collapse of
                       a large trace), numbered in forward order
``legend``             the legend
=====================  ===================================================

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="dg_x")
>>> tr = gv.trace_gradients(x * x, x)
>>> step_ids(tr, 1)
['o0', 'o0_out0', 't1', 'e0_0', 't0', 'e0_1']
>>> svg = to_svg(tr, step=1)
>>> svg.startswith("<svg") and 'id="e0_1"' in svg
True

The options and the plan (what is collapsed or grouped) are in
:mod:`~gradviz.views.diagram_plan`; the names of it that other code reaches
as ``diagram.X`` are offered here too.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from importlib import resources
from typing import Any

import graphviz
import numpy as np

from . import explain
from .diagram_plan import (AUTO_COLLAPSE_OPS, RANKDIRS, _build_plan, _common_scope, _Group, _Ids,
                           _Options, _opt_kwargs, _options, _outermost, _parent, _Plan,
                           _scope_chain)
from .explain import display_name, format_shape, preview_lines
from .marks import MARKS, NODE_FILLS, Mark
from ..trace import (AccumulateStep, ArrayData, BackwardStep, CutStep, ReduceStep, ResultStep,
                     SeedStep, Step, Trace)

__all__ = [
    "RANKDIRS",
    "AUTO_COLLAPSE_OPS",
    "LARGE_GRAPH_NODES",
    "COLORS",
    "to_dot",
    "to_svg",
    "layout_svg",
    "step_ids",
    "step_classes",
    "element_ids",
    "diagram_css",
]

#: Past this many drawn nodes, dot's speed knobs are turned on (fewer network
#: simplex and crossing-minimisation iterations, straight-segment splines).
#: Below it the full search is cheap and gives tidier pictures.
LARGE_GRAPH_NODES = 300

#: The diagram's colours, from the mark table (static/marks.json, see
#: gradviz.views.marks): each step mark's line colour, and the fills of op,
#: tensor, scope and group nodes.
COLORS = {
    **{m: MARKS[m].color for m in ("gradient", "seed", "reduce", "accumulate", "cut", "result",
                                   "unconnected")},
    "op": MARKS["op"].fill,
    **NODE_FILLS,
    "scope": MARKS["scope"].fill,
    "group": MARKS["group"].fill,
}

#: The fill of each step mark, a pale tint of its colour (from the mark table).
MARK_FILLS = {m: MARKS[m].fill for m in ("seed", "reduce", "accumulate", "cut", "result",
                                          "unconnected")}

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
_MAX_NAME = 28  # longer names are shortened in labels (the tooltip keeps them whole)

_STATE_CLASSES = ("gv-pending", "gv-done", "gv-active")


# ---------------------------------------------------------------- the plan, cached


def _cache(trace: Trace) -> dict[_Options, _Plan]:
    # One dict per trace object, keyed by options: the plan (and its one layout)
    # lives exactly as long as the trace.
    c = trace.__dict__.get("_gv_diagram")
    if c is None:
        c = trace.__dict__["_gv_diagram"] = {}
    return c


def _plan(trace: Trace, opts: _Options) -> _Plan:
    """The plan of ``trace`` drawn with ``opts``, its graph drawn: made once, then cached."""
    if not isinstance(trace, Trace):
        raise TypeError(f"expected a gradviz Trace, got {type(trace).__name__}")
    cache = _cache(trace)
    plan = cache.get(opts)
    if plan is None:
        plan = cache[opts] = _build_plan(trace, opts)
        plan.graph = _draw(plan)
    return plan


# ---------------------------------------------------------------- drawing


def _esc(text: str) -> str:
    """Text for an HTML-like label: every user string goes through here."""
    return html.escape(text, quote=True)


def _short(text: str, limit: int = _MAX_NAME) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _font(text: str, *, size: int | None = None, color: str | None = None,
          face: str | None = None) -> str:
    attrs = "".join(f' {k}="{v}"' for k, v in (("POINT-SIZE", size), ("COLOR", color),
                                                 ("FACE", face)) if v is not None)
    return f"<FONT{attrs}>{text}</FONT>"


class _Value(str):
    """A line of gradient values: drawn in _GRAD_FACE, so it gets class gv-grad-value."""


def _vals(lines: list[str]) -> list[str]:
    return [_Value(line) for line in lines]


def _lines(lines: list[str], **font: Any) -> str:
    return "<BR/>".join(
        _font(_esc(line), **(dict(font, face=_GRAD_FACE) if isinstance(line, _Value) else font))
        for line in lines)


def _html(body: str) -> str:
    # graphviz treats a string wrapped in <...> as an HTML-like label.
    return f"<{body}>"


def _grad_label(arrays: list[ArrayData | None], values: bool, arrow: str) -> str:
    """Label of an edge gradient flows along: shape and a short preview."""
    arrays = [a for a in arrays if a is not None]
    if not arrays:
        return ""
    a = arrays[-1]
    head = f"{arrow} {format_shape(a.shape)}"
    if a.nonfinite:
        head += " \u26a0 nan/inf"
    if len(arrays) > 1 and len({(x.shape, _key(x)) for x in arrays}) > 1:
        lines = [head, f"{len(arrays)} passes"]
    elif values:
        lines = [head] + _vals(preview_lines(a, max_elems=4, max_rows=3))
    else:
        lines = [head]
    return _html(_lines(lines, size=9, color=COLORS["gradient"]))


def _key(a: ArrayData) -> tuple:
    return a.head + (a.min, a.max)


def _draw(plan: _Plan) -> graphviz.Digraph:
    tr, opts = plan.trace, plan.opts
    scope_index = {s: n for n, s in enumerate(plan.scopes)}

    containers: dict[str, str | None] = {}

    def container(scope: str) -> str | None:
        """The outermost collapsed scope holding ``scope`` (memoised: called per element)."""
        if scope not in containers:
            containers[scope] = _outermost(scope, plan.collapsed)
        return containers[scope]

    def vis_tensor(t: int) -> str:
        n = plan.tensor_group.get(t)
        if n is not None:
            return f"group{n}"
        c = container(tr.tensors[t].scope)
        return f"scope{scope_index[c]}" if c else f"t{t}"

    def vis_op(o: int) -> str:
        n = plan.op_group.get(o)
        if n is not None:
            return f"group{n}"
        c = container(tr.ops[o].scope)
        return f"scope{scope_index[c]}" if c else f"o{o}"

    alias = plan.alias
    for t in tr.tensors:
        v = vis_tensor(t.id)
        if v != f"t{t.id}":
            alias[f"t{t.id}"] = v
    for o in tr.ops:
        if o.id in plan.drawn_ops:
            v = vis_op(o.id)
            if v != f"o{o.id}":
                alias[f"o{o.id}"] = v

    # -- gather what the steps put on the picture (one pass over the steps)
    edge_grads: dict[str, list[ArrayData | None]] = {}
    seeds: dict[int, list[SeedStep]] = {}
    results: dict[int, list[ResultStep]] = {}
    reduces: dict[tuple[int, int], list[ReduceStep]] = {}
    accums: dict[int, list[AccumulateStep]] = {}
    cut_edges: dict[tuple[int, int], list[CutStep]] = {}
    cut_tensors: dict[int, list[CutStep]] = {}
    for s in tr.steps:
        if isinstance(s, BackwardStep):
            for i, g in enumerate(s.grads):
                if g is not None:
                    edge_grads.setdefault(_Ids.in_edge(s.op, i), []).append(g)
        elif isinstance(s, SeedStep):
            seeds.setdefault(s.tensor, []).append(s)
        elif isinstance(s, ResultStep):
            results.setdefault(s.x_index, []).append(s)
        elif isinstance(s, ReduceStep):
            reduces.setdefault((s.op, s.input_index), []).append(s)
        elif isinstance(s, AccumulateStep):
            accums.setdefault(s.tensor, []).append(s)
        elif isinstance(s, CutStep):
            if s.op is not None and s.input_index is not None:
                cut_edges.setdefault((s.op, s.input_index), []).append(s)
            else:
                cut_tensors.setdefault(s.tensor, []).append(s)

    large = len(tr.tensors) + len(plan.drawn_ops) > LARGE_GRAPH_NODES
    g = graphviz.Digraph("gradviz", engine="dot")
    graph_attr = {
        "rankdir": opts.rankdir, "class": "gv-graph", "bgcolor": "white",
        "fontname": _FONT, "fontsize": "11", "nodesep": "0.25", "ranksep": "0.3",
        "outputorder": "edgesfirst",  # nodes paint over edges: labels stay readable
        "newrank": "true",  # rank the marks globally, across cluster borders
    }
    if large:
        # Measured in bench/render.py: these cut dot's time several-fold on
        # 1000-op traces while keeping the ranks (and so the reading order) intact.
        # nslimit bounds the x-coordinate network simplex, which dominates
        # (17.8 s of 19 s on a 750-op chain; 1.2 s with nslimit=0.05); mclimit and
        # searchsize trim crossing minimisation.  Ranks, hence reading order, are
        # unaffected; only horizontal compactness suffers a little.
        graph_attr.update({"nslimit": "0.1", "mclimit": "0.3", "searchsize": "20",
                           "remincross": "false"})
    g.attr("graph", **graph_attr)
    g.attr("node", fontname=_FONT, fontsize="10", margin="0.08,0.04")
    g.attr("edge", fontname=_FONT, fontsize="9", arrowsize="0.7", color="#444444")

    # Which subgraph each node goes into: the innermost open scope.
    bodies: dict[str | None, list[tuple[str, dict[str, str]]]] = {None: []}

    def home(scope: str) -> str | None:
        chain = _scope_chain(scope)
        for k, p in enumerate(chain):
            if p in plan.collapsed or p in plan.absorbed:
                return chain[k - 1] if k else None
        return chain[-1] if chain else None

    def add_node(scope_home: str | None, name: str, attrs: dict[str, str]) -> None:
        bodies.setdefault(scope_home, []).append((name, attrs))

    arrow = _BACK_ARROW[opts.rankdir]
    xs, ys = set(tr.xs), set(tr.ys)

    # -- tensors
    for t in tr.tensors:
        if f"t{t.id}" in alias:
            continue
        # Leaves are drawn outside their scope's cluster (see below): say the scope.
        name = display_name(t, scoped=t.kind != "computed")
        meta = f"{format_shape(t.shape)} {t.dtype}"
        if t.kind != "computed":
            meta += f" \u00b7 {t.kind}"
        body = f"<B>{_esc(_short(name))}</B><BR/>" + _font(_esc(meta), size=8, color="#444444")
        if opts.values:
            body += "<BR/>" + _lines(preview_lines(t.value, max_elems=6, max_rows=3), size=9,
                                     face=_FWD_FACE)
        cls = f"gv-tensor gv-{t.kind}" + (" gv-x" if t.id in xs else "") + (
            " gv-y" if t.id in ys else "")
        attrs = {"id": f"t{t.id}", "class": cls, "label": _html(body), "shape": "box",
                 "style": "rounded,filled", "fillcolor": COLORS.get(t.kind, "#FFFFFF")}
        if len(name) > _MAX_NAME:
            # The label shortens the name; hovering shows it whole.
            attrs["tooltip"] = graphviz.escape(t.name)
        if t.kind == "variable":
            attrs["penwidth"] = "1.8"
        # A cluster holds a scope's ops and the tensors they compute.  Leaves
        # (constants, variables) are drawn just outside it: a leaf ranks right
        # above its first use, i.e. inside the previous layer's band of ranks, and
        # since dot keeps clusters disjoint, every following layer would be pushed
        # sideways (a 30-layer MLP became a staircase 28,000 pt wide).
        add_node(home(t.scope) if t.kind == "computed" else None, f"t{t.id}", attrs)
    plan.marks.update({"tensor"})

    # -- ops
    for o in tr.ops:
        if o.id not in plan.drawn_ops or f"o{o.id}" in alias:
            continue
        sub = _op_detail(o.type, o.attrs)
        body = f"<B>{_esc(o.type)}</B>" + (("<BR/>" + _font(_esc(sub), size=8)) if sub else "")
        attrs = {"id": f"o{o.id}", "class": "gv-op" + ("" if o.on_path else " gv-offpath"),
                 "label": _html(body), "shape": "ellipse", "style": "filled",
                 "fillcolor": COLORS["op"]}
        if not o.on_path:
            attrs["fontcolor"] = "#666666"
        add_node(home(o.scope), f"o{o.id}", attrs)
    plan.marks.add("op")

    # -- collapsed scopes
    n_ops_in: dict[str | None, int] = {}
    n_t_in: dict[str | None, int] = {}
    for o in tr.ops:
        if o.id in plan.drawn_ops:
            c = container(o.scope)
            n_ops_in[c] = n_ops_in.get(c, 0) + 1
    for t in tr.tensors:
        c = container(t.scope)
        n_t_in[c] = n_t_in.get(c, 0) + 1
    for s in sorted(plan.collapsed):
        n = scope_index[s]
        n_ops, n_t = n_ops_in.get(s, 0), n_t_in.get(s, 0)
        body = (f"<B>{_esc(_short(s.rsplit('/', 1)[-1]))}</B><BR/>"
                + _font(_esc(f"{n_ops} ops, {n_t} tensors (collapsed)"), size=8))
        parent = _scope_chain(s)[-2] if "/" in s else None
        add_node(parent, f"scope{n}", {"id": f"scope{n}", "class": "gv-scope",
                                       "label": _html(body), "shape": "box3d",
                                       "style": "filled", "fillcolor": COLORS["scope"],
                                       "tooltip": graphviz.escape(s)})
        plan.marks.add("scope")

    # -- groups: runs of ops drawn as one node (auto-collapse of a large trace)
    readers = plan.readers

    def unlinked(t: int, head: str) -> bool:
        """Is the edge from tensor ``t`` into node ``head`` left out of a grouped drawing?

        A leaf (a constant or variable: a weight, say) read all along a long
        trace would pull an edge from its first reader to every later group,
        each crossing the groups between; those long edges cost ``dot``
        minutes (a 1,600-op trace reading 40 weights ran for more than 5
        minutes; 0.2 s without them).  So a leaf gets an edge to the first node
        reading it only; the other groups that read it name it in their label.
        """
        if not head.startswith("group"):
            return False
        info = tr.tensors[t]
        return ((info.op is None or info.op not in plan.drawn_ops)
                and vis_op(readers[t][0]) != head)

    for n, grp in enumerate(plan.groups):
        gid = f"group{n}"
        homes = [home(s) for s in grp.scopes] + [home(tr.ops[o].scope) for o in grp.ops
                                                 if _outermost(tr.ops[o].scope, plan.absorbed)
                                                 is None]
        label, tooltip = _group_label(tr, grp, gid, vis_tensor, vis_op, readers, unlinked)
        add_node(_common_scope(homes), gid, {
            "id": gid, "class": "gv-group", "label": label, "shape": "box3d",
            "style": "filled,dashed", "fillcolor": COLORS["group"], "tooltip": tooltip})
        plan.marks.add("group")

    edges: list[tuple[str, str, dict[str, str]]] = []

    # -- forward edges, with the gradient each one carries back
    cut_out: dict[str, CutStep] = {}
    for t_id, cs in cut_tensors.items():
        op_id = tr.tensors[t_id].op
        if op_id is not None and op_id in plan.drawn_ops:
            k = tr.ops[op_id].outputs.index(t_id)
            cut_out[_Ids.out_edge(op_id, k)] = cs[0]
    for o in tr.ops:
        if o.id not in plan.drawn_ops:
            continue
        head = vis_op(o.id)
        for i, t in enumerate(o.inputs):
            eid = _Ids.in_edge(o.id, i)
            tail = vis_tensor(t)
            if tail == head or (plan.groups and unlinked(t, head)):
                alias[eid] = head
                continue
            cls = "gv-in"
            attrs = {"id": eid}
            grads = edge_grads.get(eid)
            if grads:
                label = _grad_label(grads, opts.values, arrow)
                if label:
                    attrs["label"] = label
                    cls += " gv-grad"
                    plan.marks.add("gradient")
            if (o.id, i) in cut_edges:
                cls += " gv-cutedge"
            if len(o.inputs) > 1 and o.type in _ORDERED_INPUTS and o.id not in plan.op_group:
                # Order matters for these ops: say which input is which (not
                # drawn at a group, where it could not be told which op it meant).
                attrs["headlabel"] = str(i)
                attrs["labelfontsize"] = "8"
                attrs["labelfontcolor"] = "#777777"
            attrs["class"] = cls
            edges.append((tail, head, attrs))
        for k, t in enumerate(o.outputs):
            eid = _Ids.out_edge(o.id, k)
            t_vis = vis_tensor(t)
            if t_vis == head:
                alias[eid] = head
                continue
            cls = "gv-out" + (" gv-cutedge" if eid in cut_out else "")
            attrs = {"id": eid, "class": cls}
            if len(o.outputs) > 1 and o.id not in plan.op_group:
                attrs["taillabel"] = str(k)
                attrs["labelfontsize"] = "8"
            edges.append((head, t_vis, attrs))

    # -- marks
    def mark_node(mid: str, mark: str, label: str, **extra: str) -> None:
        attrs = {"id": mid, "class": f"gv-mark gv-{mark}", "label": label,
                 "fontsize": "9", "color": COLORS[mark]}
        attrs.update(extra)
        add_node(None, mid, attrs)  # marks stay outside clusters, like leaves
        plan.marks.add(mark)

    def link(tail: str, head: str, lid: str, mark: str, **extra: str) -> None:
        attrs = {"id": lid, "class": f"gv-mark gv-link gv-{mark}-link", "color": COLORS[mark],
                 "arrowhead": "none", "style": "dotted", "penwidth": "1.4"}
        attrs.update(extra)
        edges.append((tail, head, attrs))

    def layout_only(tail: str, head: str, lid: str) -> None:
        # Invisible: only pulls the mark next to the edge it annotates (dot
        # omits invisible edges from the SVG).
        edges.append((tail, head, {"id": lid, "style": "invis", "weight": "0"}))

    for t_id, ss in seeds.items():
        mid = f"seed{t_id}"
        lines = []
        for s in ss[:2]:
            src = f"grad_ys[{s.y_index}]" if s.given else "ones (default)"
            lines.append(f"seed: {src}")
            if opts.values:
                lines += _vals(preview_lines(s.grad, max_elems=4, max_rows=3))
        if ss[0].num_ys > 1:
            lines.append(f"summed over {ss[0].num_ys} ys")
        if len({s.pass_index for s in ss}) > 1:
            lines = [f"seed: one-hot per pass ({len(ss)} passes)"]
        label = _html(_lines(lines, size=9))
        mark_node(mid, "seed", label, shape="invhouse", style="filled,bold",
                  fillcolor=MARK_FILLS["seed"], penwidth="2")
        edges.append((vis_tensor(t_id), mid, {
            "id": f"{mid}_e", "class": "gv-mark gv-seed-link", "dir": "back",
            "color": COLORS["seed"], "penwidth": "2", "arrowtail": "normal"}))

    for x_index, rs in results.items():
        r = rs[-1]
        mid = f"res{x_index}"
        if f"t{r.tensor}" in alias:
            # An x inside a collapsed scope: a model has many parameters, and a
            # row of result boxes would dwarf the graph.  The scope node stands
            # for them (the viewer lists every final gradient anyway).
            alias[mid] = alias[f"{mid}_e"] = alias[f"t{r.tensor}"]
            continue
        name = _short(display_name(tr.tensors[r.tensor], scoped=True))
        unconnected = r.status != "connected"
        if unconnected:
            what = "None" if r.grad is None else "zeros"
            lines = [f"xs[{x_index}] {name}: {what}",
                     "integer: no gradient" if r.status == "integer" else "unconnected"]
            if r.grad is not None and opts.values:
                lines += _vals(preview_lines(r.grad, max_elems=6, max_rows=3))
            mark = "unconnected"
            extra = {"style": "dashed,filled", "fillcolor": MARK_FILLS["unconnected"], "shape": "box"}
        else:
            lines = [f"dL/d{name}  (xs[{x_index}])"]
            if len(rs) > 1:
                lines.append(f"{len(rs)} rows, one per pass")
            elif opts.values:
                lines += _vals(preview_lines(r.grad, max_elems=6, max_rows=3))
                if r.grad is not None and r.grad.nonfinite:
                    lines.append("\u26a0 has nan/inf")
            mark = "result"
            extra = {"style": "filled", "fillcolor": MARK_FILLS["result"], "shape": "box",
                     "peripheries": "2"}
        label = _html(_lines(lines, size=9))
        mark_node(mid, mark, label, **extra)
        edges.append((mid, vis_tensor(r.tensor), {
            "id": f"{mid}_e", "class": f"gv-mark gv-{mark}-link", "dir": "back",
            # None: nothing flows (no arrow); zeros: a hollow arrow.
            "arrowtail": ("none" if r.grad is None else "empty") if unconnected else "normal",
            "color": COLORS[mark], "penwidth": "1.6",
            "style": "dashed" if unconnected else "solid"}))

    for (op_id, i), rs in reduces.items():
        eid = _Ids.in_edge(op_id, i)
        mid = f"red{op_id}_{i}"
        if eid in alias or op_id not in plan.drawn_ops:
            alias[mid] = alias.get(eid, vis_op(op_id))
            alias[f"{mid}_e"] = alias[mid]
            continue
        r = rs[-1]
        lines = [f"\u03a3 axes {tuple(r.axes)}",
                 f"{format_shape(r.shape_before)} \u2192 {format_shape(r.shape_after)}"]
        if opts.values and len(rs) == 1:
            lines += _vals(preview_lines(r.grad, max_elems=4, max_rows=3))
        t_in = tr.ops[op_id].inputs[i]
        mark_node(mid, "reduce", _html(_lines(lines, size=9)),
                  shape="invtrapezium", style="filled", fillcolor=MARK_FILLS["reduce"], margin="0,0")
        link(vis_tensor(t_in), mid, f"{mid}_e", "reduce")
        layout_only(mid, vis_op(op_id), f"{mid}_l")

    for t_id, accs in accums.items():
        mid = f"acc{t_id}"
        if f"t{t_id}" in alias:
            alias[mid] = alias[f"{mid}_e"] = alias[f"t{t_id}"]
            continue
        a = accs[-1]
        n = len(a.contributions)
        lines = [f"+ sum of {n}"]
        if opts.values and len(accs) == 1:
            terms = [explain.format_array(c.grad, max_elems=2) for c in a.contributions]
            text = " + ".join(terms) if len(" + ".join(terms)) <= 30 else f"{n} terms"
            lines.append(_Value(f"{text} ="))
            lines += _vals(preview_lines(a.total, max_elems=4, max_rows=3))
        else:
            lines.append(f"\u2192 {format_shape(a.total.shape)}")
        mark_node(mid, "accumulate", _html(_lines(lines, size=9)),
                  shape="hexagon", style="filled", fillcolor=MARK_FILLS["accumulate"])
        link(vis_tensor(t_id), mid, f"{mid}_e", "accumulate")

    for (op_id, i), cs in cut_edges.items():
        eid = _Ids.in_edge(op_id, i)
        mid = f"cut{op_id}_{i}"
        if eid in alias or op_id not in plan.drawn_ops:
            alias[mid] = alias.get(eid, vis_op(op_id))
            alias[f"{mid}_e"] = alias[mid]
            continue
        reason = cs[0].reason
        lines = ["\u2702 cut", _CUT_SHORT.get(reason, reason)]
        t_in = tr.ops[op_id].inputs[i]
        mark_node(mid, "cut", _html(_lines(lines, size=9)), shape="octagon",
                  style="filled", fillcolor=MARK_FILLS["cut"])
        link(vis_tensor(t_in), mid, f"{mid}_e", "cut", arrowhead="tee", style="dashed")
        layout_only(mid, vis_op(op_id), f"{mid}_l")

    for t_id, cs in cut_tensors.items():
        mid = f"cutt{t_id}"
        if f"t{t_id}" in alias:
            alias[mid] = alias[f"{mid}_e"] = alias[f"t{t_id}"]
            continue
        reason = cs[0].reason
        lines = ["\u2702 cut", _CUT_SHORT.get(reason, reason)]
        mark_node(mid, "cut", _html(_lines(lines, size=9)), shape="octagon",
                  style="filled", fillcolor=MARK_FILLS["cut"])
        link(mid, vis_tensor(t_id), f"{mid}_e", "cut", arrowtail="tee", dir="back",
             style="dashed")
        op_id = tr.tensors[t_id].op
        if op_id is not None and op_id in plan.drawn_ops and vis_op(op_id) != vis_tensor(t_id):
            layout_only(vis_op(op_id), mid, f"{mid}_l")

    # -- emit: nested clusters for open scopes, in scope order
    open_children: dict[str | None, list[str]] = {}
    # A cluster left with nothing in it (its ops went into groups) is not drawn.
    filled = {p for s, body in bodies.items() if s is not None and body
              for p in _scope_chain(s)}
    hidden = plan.collapsed | plan.absorbed
    for s in plan.scopes:  # sorted, so children come in name order
        if s in filled and _outermost(s, hidden) is None:
            open_children.setdefault(_parent(s), []).append(s)

    def emit(parent: graphviz.Digraph, scope: str | None) -> None:
        for name, attrs in bodies.get(scope, []):
            parent.node(name, **attrs)
        for s in open_children.get(scope, ()):
            n = scope_index[s]
            with parent.subgraph(name=f"cluster{n}") as sub:
                sub.attr(id=f"cluster{n}", label=_html(_font(_esc(s.rsplit("/", 1)[-1]),
                                                             size=10, color="#555555")),
                         labeljust="l", style="rounded,dashed", color="#999999",
                         **{"class": "gv-cluster"})
                emit(sub, s)

    emit(g, None)
    for tail, head, attrs in edges:
        g.edge(tail, head, **attrs)

    if plan.opts.legend:
        g.node("legend", id="legend", label=_legend_label(plan.marks), shape="plain",
               **{"class": "gv-legend"})
    return g



def _counted(items: list[str], limit: int) -> str:
    """"3 Tanh, 2 Mul": the commonest first (ties by first appearance), at most ``limit``."""
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


def _group_label(tr: Trace, grp: _Group, gid: str, vis_tensor: Any, vis_op: Any,
                 readers: dict[int, list[int]], unlinked: Any) -> tuple[str, str]:
    """A group node's label and tooltip: which ops, of what types, and the shapes at its edge.

    The inputs are the tensors its ops read that are drawn outside it (named
    when no edge is drawn for them); the outputs are the tensors computed
    inside that a y is, or an op outside reads.
    """
    ops = [tr.ops[o] for o in grp.ops]
    ins: dict[int, None] = {}
    quiet: dict[int, None] = {}
    outs: dict[int, None] = {}
    ys = set(tr.ys)
    for o in ops:
        for t in o.inputs:
            if vis_tensor(t) != gid:
                ins[t] = None
                if unlinked(t, gid):
                    quiet[t] = None
        for t in o.outputs:
            if t in ys or any(vis_op(c) != gid for c in readers.get(t, ())):
                outs[t] = None
    first, last = grp.ops[0], grp.ops[-1]
    title = f"ops {first}\u2013{last}"
    lines = [_font(_esc(f"{len(ops)} ops: {_counted([o.type for o in ops], 3)}"), size=8)]
    if grp.scopes:
        names = ", ".join(_short(s, 16) for s in grp.scopes[:2])
        more = f" +{len(grp.scopes) - 2}" if len(grp.scopes) > 2 else ""
        lines.append(_font(_esc(f"scopes {names}{more}"), size=8))
    lines.append(_font(_esc(f"in {_shapes([tr.tensors[t].shape for t in ins])} \u2192 "
                            f"out {_shapes([tr.tensors[t].shape for t in outs])}"),
                       size=8, color="#444444"))
    if quiet:
        names = [_short(display_name(tr.tensors[t], scoped=True), 16) for t in quiet]
        more = f" +{len(names) - 2}" if len(names) > 2 else ""
        lines.append(_font(_esc(f"also reads {', '.join(names[:2])}{more}"), size=8,
                           color="#444444"))
    label = _html(f"<B>{_esc(title)}</B><BR/>" + "<BR/>".join(lines))
    tooltip = (f"{title}, drawn as one node (the trace is too large to draw "
               f"every op): {_counted([o.type for o in ops], 1000)}")
    if grp.scopes:
        tooltip += f"; name scopes {', '.join(grp.scopes)}"
    return label, graphviz.escape(tooltip)


# Ops whose inputs play different parts: their in-edges say which input is which.
_ORDERED_INPUTS = frozenset({"Sub", "RealDiv", "Pow", "MatMul", "SelectV2",
                             "SigmoidCrossEntropyWithLogits",
                             "SoftmaxCrossEntropyWithLogits"})

_CUT_SHORT = {
    "stop_gradient": "stop_gradient op",
    "stop_gradients": "in stop_gradients",
    "integer": "integer tensor",
    "no_gradient": "no gradient rule",
    "not_watched": "not watched by tape",
}


def _op_detail(op_type: str, attrs: dict[str, Any]) -> str:
    """A short second line for ops whose attributes change the maths."""
    if op_type == "MatMul":
        t = [n for n in ("transpose_a", "transpose_b") if attrs.get(n)]
        return ", ".join(t)
    if op_type in ("Sum", "Mean", "Max"):
        axis = attrs.get("axis")
        s = "all axes" if axis is None else f"axis {tuple(axis) if isinstance(axis, list) else axis}"
        return s + (", keepdims" if attrs.get("keepdims") else "")
    if op_type == "Transpose" and "perm" in attrs:
        return f"perm {tuple(attrs['perm'])}"
    if op_type == "Cast" and "DstT" in attrs:
        return f"to {attrs['DstT']}"
    if op_type in ("ConcatV2", "Pack", "Split", "Unpack", "Softmax", "LogSoftmax") and "axis" in attrs:
        return f"axis {attrs['axis']}"
    return ""


def mark_colors(mark: str) -> dict[str, str]:
    """The border ("stroke") and "fill" of a mark as the legend draws it.

    Both legends, the diagram's and the viewer's, take them from the mark table.

    >>> mark_colors("seed"), mark_colors("gradient")
    ({'stroke': '#E69F00', 'fill': '#FBE8C4'}, {'stroke': '#0072B2', 'fill': 'none'})
    """
    m = MARKS[mark]
    return {"stroke": m.color, "fill": m.fill}


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
                  f'<FONT POINT-SIZE="8" COLOR="{fg}">{_esc(m.sample)}</FONT></TD></TR></TABLE>')
        return f'<TD CELLPADDING="1">{swatch}</TD>'
    width = {"thick": 3, "double": 2}.get(m.border, 1)
    css = f' STYLE="{m.border}"' if m.border == "dashed" else ""
    return (f'<TD BORDER="{width}" COLOR="{border}" BGCOLOR="{fill}"{css} '
            f'CELLPADDING="2"><FONT POINT-SIZE="8" COLOR="{fg}">{_esc(m.sample)}</FONT></TD>')


def _legend_label(marks: set[str]) -> str:
    order = [m for m in explain.LEGEND if m in marks or m == "active"]
    rows = []
    for mark, meaning in explain.legend(order):
        cell = _swatch_cell(MARKS[mark])
        rows.append(f'<TR>{cell}<TD ALIGN="LEFT"><FONT POINT-SIZE="9">{_esc(meaning)}'
                    '</FONT></TD></TR>')
    return _html('<TABLE BORDER="1" COLOR="#BBBBBB" CELLBORDER="0" CELLSPACING="3" '
                 'CELLPADDING="1" BGCOLOR="#FFFFFF"><TR><TD COLSPAN="2" ALIGN="LEFT">'
                 '<B>legend</B></TD></TR>' + "".join(rows) + "</TABLE>")


# ---------------------------------------------------------------- public API


def to_dot(trace: Trace, *, rankdir: str = "TB", collapse: Any = None,
           values: bool = True, legend: bool = True) -> graphviz.Digraph:
    """The forward graph plus every mark of the backward pass, as a ``graphviz.Digraph``.

    ``rankdir`` is the direction the forward pass runs (TB, LR, BT, RL);
    ``collapse`` is True (collapse every top-level name scope, then group runs
    of ops as auto does if more than :data:`AUTO_COLLAPSE_OPS` remain), False (none:
    every op is drawn, however long ``dot`` takes), None (auto: collapse the
    largest scopes, then if need be group runs of consecutive ops, until at
    most :data:`AUTO_COLLAPSE_OPS` nodes stand for ops) or an iterable of
    scope names;
    ``values`` shows value previews on tensors and gradient labels;
    ``legend`` draws the legend as a node of the graph (the viewer, which has
    its own legend beside the diagram, leaves it out).

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> dot = to_dot(gv.trace_gradients(x * x, x))
    >>> 'id=e0_1' in dot.source and 'id=seed1' in dot.source
    True
    >>> to_dot(gv.trace_gradients(x * x, x), rankdir="XX")
    Traceback (most recent call last):
    ...
    ValueError: unknown rankdir: 'XX' (must be one of TB, LR, BT, RL)
    """
    plan = _plan(trace, _options(rankdir, collapse, values, legend))
    return plan.graph.copy()


# Graphviz prefixes its SVG with an XML prolog, a DOCTYPE and comments; none of
# them is needed to display or inline the SVG, and comments only add bytes.
_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)
_TITLE = re.compile(r"<title>[^<]*</title>\n?")

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
    """'-148407.89' -> -14840789: graphviz's two-decimal numbers as exact integers."""
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("-").partition(".")
    return sign * (int(whole) * 100 + int((frac + "00")[:2]))


def _decimal(h: int) -> str:
    """The shortest text of ``h`` hundredths, as graphviz writes it: 556, 148452.5, -0.07."""
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


def layout_svg(trace: Trace, **options: Any) -> str:
    """The laid-out diagram as SVG text with no step classes: ``dot`` runs once per trace and options.

    The result is cached on the trace, so stepping through it never lays it
    out again.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> layout_svg(tr) is layout_svg(tr)
    True
    """
    plan = _plan(trace, _options(**options))
    if plan.svg is None:
        raw = plan.graph.pipe(format="svg", encoding="utf-8")
        svg = _COMMENT.sub("", _PROLOG.sub("", raw, count=1))
        svg = svg.replace("<svg ", '<svg class="gv-svg" ', 1)
        # graphviz writes every "-" as "&#45;", even in class names; a plain
        # hyphen is valid XML and keeps the ids and classes greppable.
        svg = svg.replace("&#45;", "-")
        # Every <text> repeats the default font; say it once on the root group
        # (SVG presentation attributes inherit) and drop the per-element <title>s,
        # which only repeat ids: a third off a large diagram.
        svg = svg.replace(f' font-family="{_FONT}"', "")
        svg = svg.replace('<g id="graph0" class="graph ',
                          f'<g id="graph0" font-family="{_FONT}" class="graph ', 1)
        svg = _TITLE.sub("", svg)
        svg = _VALUE_TEXT.sub(lambda m: f'<text class="{m.group(2)}" {m.group(1).rstrip()}', svg)
        plan.svg = _compact(_fold_translate(svg))
    return plan.svg


def _check_step(trace: Trace, step: Any) -> int:
    n = len(trace.steps)
    if isinstance(step, np.integer):
        step = int(step)
    if isinstance(step, bool) or not isinstance(step, int):
        raise ValueError(f"step must be an integer, got {step!r}")
    if not -n <= step < n:
        raise ValueError(f"step {step} out of range: the trace has {n} steps"
                         + (f" (0..{n - 1})" if n else ""))
    return step % n


def step_ids(trace: Trace, k: int, **options: Any) -> list[str]:
    """The SVG element ids that step ``k`` touches, in a stable order.

    Work is proportional to the step itself (its op's inputs and outputs,
    its contributions), never to the number of steps before it.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> [step_ids(tr, k) for k in (0, 2, 3)]
    [['t1', 'seed1', 'seed1_e'], ['t0', 'acc0', 'acc0_e', 'e0_0', 'e0_1'], ['t0', 'res0', 'res0_e']]
    """
    plan = _plan(trace, _options(**options))
    k = _check_step(trace, k)
    ids = plan.step_cache.get(k)
    if ids is None:
        ids = plan.step_cache[k] = _step_ids(plan, trace.steps[k])
    return list(ids)


def _step_ids(plan: _Plan, s: Step) -> list[str]:
    tr = plan.trace
    raw: list[str] = []
    if isinstance(s, SeedStep):
        raw = [f"t{s.tensor}", f"seed{s.tensor}", f"seed{s.tensor}_e"]
    elif isinstance(s, BackwardStep):
        op = tr.ops[s.op]
        raw.append(f"o{s.op}")
        for k, t in enumerate(op.outputs):
            if k < len(s.upstream) and s.upstream[k] is not None:
                raw += [_Ids.out_edge(s.op, k), f"t{t}"]
        for i, t in enumerate(op.inputs):
            if i < len(s.grads) and s.grads[i] is not None:
                raw += [_Ids.in_edge(s.op, i), f"t{t}"]
    elif isinstance(s, ReduceStep):
        mid = f"red{s.op}_{s.input_index}"
        raw = [_Ids.in_edge(s.op, s.input_index), mid, f"{mid}_e", f"t{s.tensor}"]
    elif isinstance(s, AccumulateStep):
        raw = [f"t{s.tensor}", f"acc{s.tensor}", f"acc{s.tensor}_e"]
        for c in s.contributions:
            if c.op is None or c.input_index is None:
                raw.append(f"seed{s.tensor}_e")
            else:
                raw.append(_Ids.in_edge(c.op, c.input_index))
    elif isinstance(s, CutStep):
        if s.op is not None and s.input_index is not None:
            mid = f"cut{s.op}_{s.input_index}"
            raw = [_Ids.in_edge(s.op, s.input_index), mid, f"{mid}_e"]
        else:
            mid = f"cutt{s.tensor}"
            raw = [f"t{s.tensor}", mid, f"{mid}_e"]
            op_id = tr.tensors[s.tensor].op
            if op_id is not None and op_id in plan.drawn_ops:
                raw.insert(0, _Ids.out_edge(op_id, tr.ops[op_id].outputs.index(s.tensor)))
    elif isinstance(s, ResultStep):
        raw = [f"t{s.tensor}", f"res{s.x_index}", f"res{s.x_index}_e"]
    alias = plan.alias
    out: list[str] = []
    seen: set[str] = set()
    for i in raw:
        i = alias.get(i, i)
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def _first_touch(plan: _Plan) -> dict[str, int]:
    if plan.first_touch is None:
        first: dict[str, int] = {}
        for s in plan.trace.steps:
            for i in step_ids(plan.trace, s.index, **_opt_kwargs(plan.opts)):
                first.setdefault(i, s.index)
        plan.first_touch = first
    return plan.first_touch


def step_classes(trace: Trace, step: int | None = None, **options: Any) -> dict[str, str]:
    """Element id -> ``gv-pending`` / ``gv-done`` / ``gv-active`` for the state after ``step``.

    Elements no step touches (the plain forward graph, the legend) are absent.
    ``step=None`` means the whole pass is done: nothing is active.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> c = step_classes(tr, 0)
    >>> c["seed1"], c["res0"]
    ('gv-active', 'gv-pending')
    """
    plan = _plan(trace, _options(**options))
    first = _first_touch(plan)
    if step is None:
        return {i: "gv-done" for i in first}
    k = _check_step(trace, step)
    active = set(step_ids(trace, k, **options))
    return {i: "gv-active" if i in active else ("gv-done" if f < k else "gv-pending")
            for i, f in first.items()}


_G_OPEN = re.compile(r'<g id="([^"]*)" class="([^"]*)"')


def to_svg(trace: Trace, step: int | None = None, **options: Any) -> str:
    """The diagram as one SVG string showing the state after ``step``.

    It is the cached layout of :func:`layout_svg` with ``diagram.css``
    embedded in a ``<style>`` element and the step classes set; ``step=None``
    shows the whole pass done.  The output is deterministic.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> '<g id="res0" class="node gv-mark gv-result gv-pending"' in to_svg(tr, step=0)
    True
    """
    svg = layout_svg(trace, **options)
    classes = step_classes(trace, step, **options)

    def restyle(m: re.Match) -> str:
        state = classes.get(m.group(1))
        if state is None:
            return m.group(0)
        return f'<g id="{m.group(1)}" class="{m.group(2)} {state}"'

    svg = _G_OPEN.sub(restyle, svg)
    head_end = svg.index(">", svg.index("<svg")) + 1
    return svg[:head_end] + "\n<style>\n" + diagram_css() + "</style>" + svg[head_end:]


def element_ids(trace: Trace, **options: Any) -> list[str]:
    """Every id the layout's SVG gives a node, edge or cluster, in document order.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> sorted(element_ids(gv.trace_gradients(x * x, x)))
    ['acc0', 'acc0_e', 'e0_0', 'e0_1', 'legend', 'o0', 'o0_out0', 'res0', 'res0_e', 'seed1', 'seed1_e', 't0', 't1']
    """
    return [m.group(1) for m in _G_OPEN.finditer(layout_svg(trace, **options))
            if m.group(1) != "graph0"]


_CSS: str | None = None


def diagram_css() -> str:
    """The contents of ``gradviz/views/static/diagram.css`` (the step-state rules).

    >>> ".gv-active" in diagram_css()
    True
    """
    global _CSS
    if _CSS is None:
        _CSS = resources.files("gradviz.views").joinpath("static/diagram.css").read_text("utf-8")
    return _CSS
