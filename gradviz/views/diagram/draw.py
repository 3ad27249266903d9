"""A plan drawn: the forward graph and every mark of the backward pass as one ``Digraph``.

:func:`_draw` runs the stages of a :class:`_Drawing` in order: first the
forward graph (tensors, ops, collapsed scopes, groups of ops, the edges with
the gradient each carries back), then the step marks (seeds, results,
reductions, accumulations, cuts), then the open scopes as nested clusters and
the legend.  Nodes and edges are collected first and handed to Graphviz at
the end: which scopes get a cluster (not one whose nodes all went into
groups) is only known once every node is placed.

Along the way the drawing fills in the plan's ``alias`` (the id of an element
hidden in a collapsed scope or a group -> the node standing for it) and
``marks`` (the legend entries used).  The element ids are listed in
:mod:`gradviz.views.diagram`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import graphviz

from .labels import (COLORS, MARK_FILLS, _BACK_ARROW, _CLUSTER_LINE, _EDGE_LINE, _FONT,
                     _FORWARD_ARROW, _OFF_PATH, _SCOPE_TEXT, _accumulate_label, _direction_label,
                     _jvp_label,
                     _bundle_label, _bundled_edge_label, _cluster_label, _cut_label,
                     _cut_tooltip, _esc, _folded_cluster_label, _grad_label, _grad_tooltip, _group_label, _html, _legend_label, _op_label,
                     _op_tensor_label, _op_tensor_tooltip, _op_tooltip, _reduce_label,
                     _result_label, _scope_label, _seed_label, _short, _tensor_label,
                     _tensor_tooltip, _GATHERS, gathered_rows, live_values)
from .plan import (MAX_SCOPE_DEPTH, _common_scope, _folded, _Group, _Ids, _outermost, _parent,
                   _Plan, _scope_chain)
from ..explain import display_name, format_shape, gradient_target
from ...trace import (AccumulateStep, ArrayData, BackwardStep, CutStep, ForwardStep, JvpStep,
                      OpInfo, ReduceStep, ResultStep, SeedStep, Step, TangentStep, TensorInfo)

#: Past this many drawn nodes, dot's speed knobs are turned on (fewer network
#: simplex and crossing-minimisation iterations, straight-segment splines).
#: Below it the full search is cheap and gives tidier pictures.
LARGE_GRAPH_NODES = 300

#: Past this many drawn nodes, nodes and edges carry no hover text.  The hover
#: texts (about 150 bytes each, with the values) made the report of a 1,000-op
#: trace drawn whole (bench/viewer.py, "expanded") 5.5 MB, past its 5 MB
#: budget; a drawing that large is read by zooming and clicking, not hovering.
MAX_HOVER_NODES = 600

# Ops whose inputs play different parts: their in-edges say which input is which.
_ORDERED_INPUTS = frozenset({"Sub", "RealDiv", "Pow", "MatMul", "SelectV2",
                             "SigmoidCrossEntropyWithLogits",
                             "SoftmaxCrossEntropyWithLogits"})

#: A closed scope's 3-D box: its lip takes 4 pt at the top and right that dot still
#: centres the label over, and Chromium's Liberation Sans runs a few pt wider than
#: dot's metrics, so the box gets more room round its label than a plain node
#: (0.08,0.04 inch): without it the text ran past the front face.
_BOX3D_MARGIN = "0.2,0.11"

_Attrs = dict[str, str]


def _draw(plan: _Plan) -> graphviz.Digraph:
    """The plan's graph, drawn stage by stage (each stage is a :class:`_Drawing` method)."""
    d = _Drawing(plan)
    d.merge_outputs()
    d.alias_hidden()
    d.sums_on_path()
    with live_values(plan.opts.live):
        # the forward graph
        d.tensors()
        d.ops()
        d.collapsed_scopes()
        d.groups()
        d.bundles()
        d.forward_edges()
        # the marks of the backward pass, outside every cluster
        d.seeds()
        d.results()
        d.reduces()
        d.accumulations()
        d.cut_edges()
        d.cut_tensors()
        # the marks of a forward pass
        d.directions()
        d.jvps()
    d.bundle_edges()
    plan.edges = [(tail, head, attrs["id"]) for tail, head, attrs in d.edges
                  if attrs.get("style") != "invis"]
    # into Graphviz: nodes in their clusters, then edges, then the legend
    return d.emit()


@dataclass
class _StepMarks:
    """What the steps put on the picture, gathered in one pass over the steps."""

    edge_grads: dict[str, list[ArrayData | None]] = field(default_factory=dict)  # e{op}_{i}
    seeds: dict[int, list[SeedStep]] = field(default_factory=dict)  # by tensor
    results: dict[int, list[ResultStep]] = field(default_factory=dict)  # by x_index
    reduces: dict[tuple[int, int], list[ReduceStep]] = field(default_factory=dict)  # (op, i)
    accums: dict[int, list[AccumulateStep]] = field(default_factory=dict)  # by tensor
    cut_edges: dict[tuple[int, int], list[CutStep]] = field(default_factory=dict)  # (op, i)
    cut_tensors: dict[int, list[CutStep]] = field(default_factory=dict)  # by tensor
    # forward mode: each primal's tangent, each target's (the in-edges carry the tangents)
    directions: dict[int, list[TangentStep]] = field(default_factory=dict)  # by x_index
    jvps: dict[int, list[JvpStep]] = field(default_factory=dict)  # by y_index

    @classmethod
    def gather(cls, steps: list[Step]) -> _StepMarks:
        """Each step's mark (or edge gradient), filed under where it is drawn."""
        m = cls()
        for s in steps:
            if isinstance(s, BackwardStep):
                for i, g in enumerate(s.grads):
                    if g is not None:
                        m.edge_grads.setdefault(_Ids.in_edge(s.op, i), []).append(g)
            elif isinstance(s, SeedStep):
                m.seeds.setdefault(s.tensor, []).append(s)
            elif isinstance(s, ResultStep):
                m.results.setdefault(s.x_index, []).append(s)
            elif isinstance(s, ReduceStep):
                m.reduces.setdefault((s.op, s.input_index), []).append(s)
            elif isinstance(s, AccumulateStep):
                m.accums.setdefault(s.tensor, []).append(s)
            elif isinstance(s, CutStep):
                if s.op is not None and s.input_index is not None:
                    m.cut_edges.setdefault((s.op, s.input_index), []).append(s)
                else:
                    m.cut_tensors.setdefault(s.tensor, []).append(s)
            elif isinstance(s, ForwardStep):  # a tangent arrives along each moving input's edge
                for i, t in enumerate(s.tangents_in):
                    if t is not None:
                        m.edge_grads.setdefault(_Ids.in_edge(s.op, i), []).append(t)
            elif isinstance(s, TangentStep):
                m.directions.setdefault(s.x_index, []).append(s)
            elif isinstance(s, JvpStep):
                m.jvps.setdefault(s.y_index, []).append(s)
        return m


def _new_digraph(rankdir: str, large: bool) -> graphviz.Digraph:
    """An empty ``Digraph`` with the diagram's graph, node and edge defaults."""
    g = graphviz.Digraph("gradviz", engine="dot")
    graph_attr = {
        "rankdir": rankdir, "class": "gv-graph", "bgcolor": "white",
        "fontname": _FONT, "fontsize": "12", "nodesep": "0.4", "ranksep": "0.3",
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
    # Text at least 11 px at the viewer's default zoom (1:1): labels give their own sizes.
    g.attr("node", fontname=_FONT, fontsize="12", margin="0.08,0.04")
    g.attr("edge", fontname=_FONT, fontsize="11", arrowsize="0.7", color=_EDGE_LINE)
    return g


class _Drawing:
    """One plan being drawn: the nodes and edges so far, and what places them.

    Nodes are kept per scope they are drawn in (``bodies``; None is the top
    level) until :meth:`emit` nests the clusters; edges are kept in order.
    """

    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        self.tr = plan.trace
        self.opts = plan.opts
        self.alias = plan.alias
        self.scope_index = {s: n for n, s in enumerate(plan.scopes)}
        self.steps = _StepMarks.gather(self.tr.steps)
        self.bodies: dict[str | None, list[tuple[str, _Attrs]]] = {None: []}
        self.edges: list[tuple[str, str, _Attrs]] = []
        # forward mode: tangents flow along the edges, not back against them
        self.forward = self.tr.forward
        self.arrow = (_FORWARD_ARROW if self.forward else _BACK_ARROW)[self.opts.rankdir]
        self._containers: dict[str, str | None] = {}
        self._homes: dict[str, str | None] = {}
        # Compact drawing: tensor -> the op drawn as one node with it (merge_outputs).
        self.merged: dict[int, int] = {}
        # Parallel edges into or out of a group or bundle, drawn once: (tail, head,
        # class) -> [the drawn edge's attributes, how many it stands for].
        self.parallel: dict[tuple[str, str, str], list] = {}

    # -- where things are drawn

    def container(self, scope: str) -> str | None:
        """The outermost collapsed scope holding ``scope`` (memoised: called per element)."""
        if scope not in self._containers:
            self._containers[scope] = _outermost(scope, self.plan.collapsed)
        return self._containers[scope]

    def vis_tensor(self, t: int) -> str:
        """The id of the node that shows tensor ``t``: its own, its scope's or its group's."""
        n = self.plan.tensor_group.get(t)
        if n is not None:
            return f"group{n}"
        n = self.plan.tensor_bundle.get(t)
        if n is not None:
            return f"bundle{n}"
        c = self.container(self.tr.tensors[t].scope)
        if c:
            return f"scope{self.scope_index[c]}"
        o = self.merged.get(t)
        return f"t{t}" if o is None else f"o{o}"

    def name(self, t: int) -> str:
        """Tensor ``t``'s name as hover texts give it (with its scope)."""
        return display_name(self.tr.tensors[t], scoped=True)

    def shown(self, t: int) -> bool:
        """Is tensor ``t`` drawn, on its own or with its op (not hidden in a scope or group)?"""
        return not self.vis_tensor(t).startswith(("scope", "group", "bundle"))

    def vis_op(self, o: int) -> str:
        """The id of the node that shows op ``o``: its own, its scope's or its group's."""
        n = self.plan.op_group.get(o)
        if n is not None:
            return f"group{n}"
        n = self.plan.op_bundle.get(o)
        if n is not None:
            return f"bundle{n}"
        c = self.container(self.tr.ops[o].scope)
        return f"scope{self.scope_index[c]}" if c else f"o{o}"

    def home(self, scope: str) -> str | None:
        """The cluster a node of ``scope`` goes into: the innermost open scope (None: top).

        Memoised: called per element, and a deep scope has a long chain.
        """
        if scope not in self._homes:
            hidden = self.plan.collapsed | self.plan.absorbed
            outer = _outermost(scope, hidden) if hidden else None
            self._homes[scope] = (scope or None) if outer is None else _parent(outer)
        return self._homes[scope]

    def unlinked(self, t: int, head: str) -> bool:
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
        info = self.tr.tensors[t]
        return ((info.op is None or info.op not in self.plan.drawn_ops)
                and self.vis_op(self.plan.readers[t][0]) != head)

    # -- adding nodes and edges

    def add_node(self, scope_home: str | None, name: str, attrs: _Attrs) -> None:
        """Node ``name`` goes into ``scope_home``'s cluster (None: the top level); a scope
        nested deeper than :data:`MAX_SCOPE_DEPTH` is drawn in its ancestor at that depth."""
        self.bodies.setdefault(_folded(scope_home), []).append((name, attrs))

    def mark_node(self, mid: str, mark: str, label: str, **extra: str) -> None:
        """A step mark's node, outside every cluster (like the leaves); ``extra`` must give
        its hover text (``tooltip``)."""
        attrs = {"id": mid, "class": f"gv-mark gv-{mark}", "label": label,
                 "fontsize": "11", "color": COLORS[mark]}
        attrs.update(extra)
        self.add_node(None, mid, attrs)
        self.plan.marks.add(mark)

    def link(self, tail: str, head: str, lid: str, mark: str, **extra: str) -> None:
        """The dotted line tying a mark to what it annotates."""
        attrs = {"id": lid, "class": f"gv-mark gv-link gv-{mark}-link", "color": COLORS[mark],
                 "arrowhead": "none", "style": "dotted", "penwidth": "1.4"}
        attrs.update(extra)
        self.edges.append((tail, head, attrs))

    def layout_only(self, tail: str, head: str, lid: str) -> None:
        # Invisible: only pulls the mark next to the edge it annotates (dot
        # omits invisible edges from the SVG).
        self.edges.append((tail, head, {"id": lid, "style": "invis", "weight": "0"}))

    def hide_in(self, mid: str, element: str) -> None:
        """Mark ``mid`` and its link show as what stands for ``element``, which is hidden."""
        self.alias[mid] = self.alias[f"{mid}_e"] = self.alias[element]

    def hide_on_edge(self, mid: str, op_id: int, eid: str) -> bool:
        """Is edge ``eid`` (into op ``op_id``) hidden?  If so, mark ``mid`` and its link
        show as what stands for it."""
        if eid in self.alias or op_id not in self.plan.drawn_ops:
            self.alias[mid] = self.alias.get(eid, self.vis_op(op_id))
            self.alias[f"{mid}_e"] = self.alias[mid]
            return True
        return False

    # -- the forward graph

    def merge_outputs(self) -> None:
        """Compact drawing: each drawn op with one output, and that output, become one node.

        The node keeps the op's id (``o{op}``); the tensor's id and the edge
        between them show as it.
        """
        if not self.opts.compact:
            return
        for o in self.tr.ops:
            if o.id not in self.plan.drawn_ops or len(o.outputs) != 1:
                continue
            (t,) = o.outputs
            if (self.vis_op(o.id) == f"o{o.id}" and self.vis_tensor(t) == f"t{t}"
                    and self.home(self.tr.tensors[t].scope) == self.home(o.scope)):
                self.merged[t] = o.id

    def alias_hidden(self) -> None:
        """Each tensor and op hidden in a collapsed scope or group -> the node showing it."""
        for t in self.tr.tensors:
            v = self.vis_tensor(t.id)
            if v != f"t{t.id}":
                self.alias[f"t{t.id}"] = v
        for o in self.tr.ops:
            if o.id in self.plan.drawn_ops:
                v = self.vis_op(o.id)
                if v != f"o{o.id}":
                    self.alias[f"o{o.id}"] = v

    def sums_on_path(self) -> None:
        """Which fan-out sums are drawn on the path (their tensor is drawn): ``plan.path_nodes``.

        A tensor read by several ops gets its gradient as the sum of their
        contributions: the sum node sits between the tensor and its readers,
        so each contribution flows into it and the total flows on into the
        tensor.  A broadcast reduction sits on its edge the same way (see
        :meth:`in_edge`).
        """
        for t_id in self.steps.accums:
            if self.shown(t_id):
                self.plan.path_nodes.add(f"acc{t_id}")

    def sum_node(self, t: int) -> str | None:
        """The fan-out sum node on tensor ``t``'s path (``acc{t}``), if it has one."""
        node = f"acc{t}"
        return node if node in self.plan.path_nodes else None

    def tensors(self) -> None:
        """A rounded box per drawn tensor: name, shape, dtype, kind and values."""
        xs, ys = set(self.tr.xs), set(self.tr.ys)
        for t in self.tr.tensors:
            if f"t{t.id}" in self.alias:
                continue
            # Leaves are drawn outside their scope's cluster (see below): say the scope.
            name = display_name(t, scoped=t.kind != "computed")
            cls = f"gv-tensor gv-{t.kind}" + (" gv-x" if t.id in xs else "") + (
                " gv-y" if t.id in ys else "")
            # Hovering shows the whole name (the label shortens a long one) and every value.
            attrs = {"id": f"t{t.id}", "class": cls,
                     "label": _tensor_label(t, name, self.opts.values), "shape": "box",
                     "style": "rounded,filled", "fillcolor": COLORS.get(t.kind, "#FFFFFF"),
                     "tooltip": _tensor_tooltip(t)}
            if t.kind == "variable":
                attrs["penwidth"] = "1.8"
            # A cluster holds a scope's ops and the tensors they compute.  Leaves
            # (constants, variables) are drawn just outside it: a leaf ranks right
            # above its first use, i.e. inside the previous layer's band of ranks, and
            # since dot keeps clusters disjoint, every following layer would be pushed
            # sideways (a 30-layer MLP became a staircase 28,000 pt wide).
            self.add_node(self.home(t.scope) if t.kind == "computed" else None, f"t{t.id}", attrs)
        self.plan.marks.add("tensor")

    def ops(self) -> None:
        """An ellipse per drawn op; greyed if it lies on no path from a y to an x."""
        merged_out = {o: t for t, o in self.merged.items()}
        for o in self.tr.ops:
            if o.id not in self.plan.drawn_ops or f"o{o.id}" in self.alias:
                continue
            attrs = {"id": f"o{o.id}", "class": "gv-op" + ("" if o.on_path else " gv-offpath"),
                     "label": _op_label(o), "shape": "ellipse", "style": "filled",
                     "fillcolor": COLORS["op"], "tooltip": _op_tooltip(o, self.tr)}
            if o.id in merged_out:
                attrs.update(self.merged_attrs(o, self.tr.tensors[merged_out[o.id]]))
            if not o.on_path:
                attrs["fontcolor"] = _OFF_PATH
            self.add_node(self.home(o.scope), f"o{o.id}", attrs)
        self.plan.marks.add("op")

    def merged_attrs(self, o: OpInfo, t: TensorInfo) -> _Attrs:
        """The attributes of op ``o`` drawn as one node with its output ``t``."""
        name = display_name(t, scoped=False)
        cls = f"gv-op gv-tensor gv-merged gv-{t.kind}" + (
            " gv-x" if t.id in self.tr.xs else "") + (" gv-y" if t.id in self.tr.ys else "")
        return {"class": cls + ("" if o.on_path else " gv-offpath"),
                "label": _op_tensor_label(o, t, name, self.opts.values), "shape": "box",
                "style": "rounded,filled", "fillcolor": COLORS.get(t.kind, "#FFFFFF"),
                "margin": "0.04,0.02",
                "tooltip": _op_tensor_tooltip(o, t, self.tr)}

    def collapsed_scopes(self) -> None:
        """A 3-D box per collapsed scope, counting the ops and tensors it hides."""
        n_ops_in: dict[str | None, int] = {}
        n_t_in: dict[str | None, int] = {}
        for o in self.tr.ops:
            if o.id in self.plan.drawn_ops:
                c = self.container(o.scope)
                n_ops_in[c] = n_ops_in.get(c, 0) + 1
        for t in self.tr.tensors:
            c = self.container(t.scope)
            n_t_in[c] = n_t_in.get(c, 0) + 1
        for s in sorted(self.plan.collapsed):
            n = self.scope_index[s]
            self.add_node(_parent(s), f"scope{n}", {
                "id": f"scope{n}", "class": "gv-scope",
                "label": _scope_label(s, n_ops_in.get(s, 0), n_t_in.get(s, 0)),
                "shape": "box3d", "margin": _BOX3D_MARGIN, "style": "filled",
                "fillcolor": COLORS["scope"], "tooltip": graphviz.escape(s)})
            self.plan.marks.add("scope")

    def groups(self) -> None:
        """A dashed 3-D box per run of ops drawn as one node (auto-collapse of a large trace)."""
        tr = self.tr
        for n, grp in enumerate(self.plan.groups):
            gid = f"group{n}"
            homes = [self.home(s) for s in grp.scopes] + [
                self.home(tr.ops[o].scope) for o in grp.ops
                if _outermost(tr.ops[o].scope, self.plan.absorbed) is None]
            label, tooltip = _group_label(tr, grp, *self.group_border(grp, gid))
            if grp.repeat:  # sibling scopes of one structure: drawn as a collapsed scope is
                self.add_node(_common_scope(homes), gid, {
                    "id": gid, "class": "gv-scope gv-repeat", "label": label, "shape": "box3d",
                    "margin": _BOX3D_MARGIN, "style": "filled", "fillcolor": COLORS["scope"],
                    "tooltip": tooltip})
                self.plan.marks.add("scope")
                continue
            self.add_node(_common_scope(homes), gid, {
                "id": gid, "class": "gv-group", "label": label, "shape": "box3d",
                "style": "filled,dashed", "fillcolor": COLORS["group"], "tooltip": tooltip})
            self.plan.marks.add("group")

    def bundles(self) -> None:
        """A dashed box per bundle of a wide op's inputs, outside every cluster (as leaves are)."""
        for n, b in enumerate(self.plan.bundles):
            label, tooltip = _bundle_label(self.tr, b)
            self.add_node(None, f"bundle{n}", {
                "id": f"bundle{n}", "class": "gv-bundle", "label": label, "shape": "box",
                "style": "rounded,filled,dashed", "fillcolor": COLORS["group"],
                "tooltip": tooltip})
            self.plan.marks.add("bundle")

    def group_border(self, grp: _Group, gid: str) -> tuple[list[int], list[int], list[int]]:
        """What crosses group ``gid``'s border: (ins, outs, quiet).

        ``ins``: the tensors its ops read that are drawn outside it; ``quiet``:
        those of them with no edge drawn (see :meth:`unlinked`); ``outs``: the
        tensors computed inside that a y is, or an op outside reads.  In first
        use order, each once.
        """
        ins: dict[int, None] = {}
        quiet: dict[int, None] = {}
        outs: dict[int, None] = {}
        ys = set(self.tr.ys)
        for o in (self.tr.ops[o] for o in grp.ops):
            for t in o.inputs:
                if self.vis_tensor(t) != gid:
                    ins[t] = None
                    if self.unlinked(t, gid):
                        quiet[t] = None
            for t in o.outputs:
                if t in ys or any(self.vis_op(c) != gid for c in self.plan.readers.get(t, ())):
                    outs[t] = None
        return list(ins), list(outs), list(quiet)

    def forward_edges(self) -> None:
        """Each op's in- and out-edges, an in-edge labelled with the gradient it carries back."""
        cut_out: set[str] = set()  # out-edges into a tensor cut in stop_gradients
        for t_id in self.steps.cut_tensors:
            op_id = self.tr.tensors[t_id].op
            if op_id is not None and op_id in self.plan.drawn_ops:
                k = self.tr.ops[op_id].outputs.index(t_id)
                cut_out.add(_Ids.out_edge(op_id, k))
        for o in self.tr.ops:
            if o.id not in self.plan.drawn_ops:
                continue
            head = self.vis_op(o.id)
            for i, t in enumerate(o.inputs):
                self.in_edge(o, i, t, head)
            for k, t in enumerate(o.outputs):
                eid = _Ids.out_edge(o.id, k)
                t_vis = self.vis_tensor(t)
                if t_vis == head:
                    self.alias[eid] = head
                    continue
                cls = "gv-out" + (" gv-cutedge" if eid in cut_out else "")
                attrs = {"id": eid, "class": cls}
                if len(o.outputs) > 1 and o.id not in self.plan.op_group:
                    attrs["taillabel"] = str(k)
                    attrs["labelfontsize"] = "11"
                self.add_edge(head, t_vis, attrs)

    def in_edge(self, o: OpInfo, i: int, t: int, head: str) -> None:
        """The edge from op ``o``'s input ``i`` (tensor ``t``) into ``head``, the node showing o.

        It starts at the tensor, or at the tensor's fan-out sum when it has
        one; a broadcast reduction on it splits it in two (:meth:`reduce_on_path`).
        """
        eid = _Ids.in_edge(o.id, i)
        tail = self.vis_tensor(t)
        if tail == head or (self.plan.groups and self.unlinked(t, head)):
            self.alias[eid] = head
            return
        tail = self.sum_node(t) or tail
        # (a reduction on an edge into a bundle is one of many: the edge stands for it)
        rs = None if head.startswith("bundle") else self.steps.reduces.get((o.id, i))
        if rs:
            tail = self.reduce_on_path(o.id, i, rs, tail)
        cls = "gv-in"
        attrs = {"id": eid}
        grads = self.steps.edge_grads.get(eid)
        if grads:
            rows = gathered_rows(self.tr, o) if i == 0 and o.type in _GATHERS else ""
            label = _grad_label(grads, self.opts.values, self.arrow, rows)
            if label:
                attrs["label"] = label
                # Still in the broadcast shape where a reduction follows: not yet dL/db.
                said = ""
                if rs:
                    broadcast = gradient_target(self.name(t), rs[-1].shape_before,
                                                rs[-1].shape_after)
                    said = f": {broadcast}, before the broadcast is summed"
                if rows:
                    said += (f"; sparse (an IndexedSlices, as TensorFlow's): only {rows} of "
                             f"{self.name(t)} get a gradient")
                if self.forward:
                    what = f"tangent of {self.name(t)} carried forward into {o.type}, its input {i}"
                else:
                    what = f"gradient {o.type} sends back to its input {i}, {self.name(t)}{said}"
                attrs["tooltip"] = _grad_tooltip(grads, what)
                cls += " gv-grad"
                self.plan.marks.add("tangent" if self.forward else "gradient")
        if (o.id, i) in self.steps.cut_edges:
            cls += " gv-cutedge"
        if len(o.inputs) > 1 and o.type in _ORDERED_INPUTS and o.id not in self.plan.op_group:
            # Order matters for these ops: say which input is which (not
            # drawn at a group, where it could not be told which op it meant).
            attrs["headlabel"] = str(i)
            attrs["labelfontsize"] = "11"
            attrs["labelfontcolor"] = _SCOPE_TEXT
        attrs["class"] = cls
        self.add_edge(tail, head, attrs)

    def add_edge(self, tail: str, head: str, attrs: _Attrs) -> None:
        """An edge; one into or out of a group or bundle that another already draws (same
        ends, same class, no input number) shows as that one, which counts them."""
        if (tail.startswith(("group", "bundle")) or head.startswith(("group", "bundle"))) \
                and "headlabel" not in attrs and "taillabel" not in attrs:
            key = (tail, head, attrs["class"])
            drawn = self.parallel.get(key)
            if drawn is not None:
                drawn[1] += 1
                self.alias[attrs["id"]] = drawn[0]["id"]
                return
            self.parallel[key] = [attrs, 1]
        self.edges.append((tail, head, attrs))

    def bundle_edges(self) -> None:
        """Each edge drawn for several says how many, in place of one gradient's label."""
        for attrs, count in self.parallel.values():
            if count > 1:
                grads = "gv-grad" in attrs["class"].split()
                attrs["label"] = _bundled_edge_label(count, self.arrow if grads else "")
                attrs["tooltip"] = graphviz.escape(
                    f"{count} edges drawn as one" + (": a gradient flows back along each"
                                                     if grads else ""))

    def reduce_on_path(self, op_id: int, i: int, rs: list[ReduceStep], tail: str) -> str:
        """The reduce mark of edge ``e{op}_{i}``, drawn on it: the node standing for it.

        The op's gradient (the broadcast shape) flows back into the mark and
        the summed gradient (the input's shape) flows on from it, along the
        edge ``red{op}_{i}_e`` into ``tail`` (the input, or its fan-out sum).
        """
        mid = f"red{op_id}_{i}"
        t = self.tr.ops[op_id].inputs[i]
        name, before, after = self.name(t), rs[-1].shape_before, rs[-1].shape_after
        funnel = "invtrapezium" if self.opts.rankdir == "BT" else "trapezium"
        self.add_node(None, mid, {
            "id": mid, "class": "gv-sum gv-reduce", "label": _reduce_label(rs, self.opts.values),
            "tooltip": _grad_tooltip([r.grad for r in rs], (
                f"broadcast reduction: {gradient_target(name, before, after)} summed over axes "
                f"{tuple(rs[-1].axes)} into dL/d{name}, {format_shape(before)} \u2192 "
                f"{format_shape(after)}")),
            "shape": funnel, "style": "filled", "fillcolor": MARK_FILLS["reduce"],
            "color": COLORS["reduce"], "penwidth": "1.6", "margin": "0.02,0.02"})
        self.plan.marks.add("reduce")
        self.plan.path_nodes.add(mid)
        grads = [r.grad for r in rs]
        self.edges.append((tail, mid, {
            "id": f"{mid}_e", "class": "gv-in gv-grad gv-reduced",
            "label": _grad_label(grads, self.opts.values, self.arrow),
            "tooltip": _grad_tooltip(grads, f"dL/d{name}: the gradient summed back to the "
                                            f"shape of {name}")}))
        return mid

    # -- the marks of the backward pass

    def seeds(self) -> None:
        """A seed mark at each y, its arrow into the y: the gradient starts there."""
        for t_id, ss in self.steps.seeds.items():
            mid = f"seed{t_id}"
            self.mark_node(mid, "seed", _seed_label(ss, self.opts.values), shape="invhouse",
                           style="filled,bold", fillcolor=MARK_FILLS["seed"], penwidth="2",
                           tooltip=_grad_tooltip([s.grad for s in ss],
                                                 f"seed: the first gradient of {self.name(t_id)}"))
            # A y that other ops also read: its seed is one of the contributions.
            self.edges.append((self.sum_node(t_id) or self.vis_tensor(t_id), mid, {
                "id": f"{mid}_e", "class": "gv-mark gv-seed-link", "dir": "back",
                "color": COLORS["seed"], "penwidth": "2", "arrowtail": "normal"}))

    def results(self) -> None:
        """A result mark at each x (or why it has no gradient), the arrow from the x into it."""
        for x_index, rs in self.steps.results.items():
            r = rs[-1]
            mid = f"res{x_index}"
            if not self.shown(r.tensor):
                # An x inside a collapsed scope: a model has many parameters, and a
                # row of result boxes would dwarf the graph.  The scope node stands
                # for them (the viewer lists every final gradient anyway).
                self.hide_in(mid, f"t{r.tensor}")
                continue
            name = _short(display_name(self.tr.tensors[r.tensor], scoped=True))
            y_index = next((i for i, y in enumerate(self.tr.ys) if y == r.tensor), None)
            label = _result_label(rs, name, self.opts.values, y_index)
            unconnected = r.status != "connected"
            what = (f"Jacobian of xs[{x_index}], one row per pass" if len(rs) > 1
                    else f"final gradient of xs[{x_index}]")
            hover = _grad_tooltip([q.grad for q in rs],
                                  f"{what}, {self.name(r.tensor)}: {r.status}"
                                  + (f"\n{r.reason}" if unconnected and r.reason else ""))
            if unconnected:
                mark = "unconnected"
                self.mark_node(mid, mark, label, style="dashed,filled",
                               fillcolor=MARK_FILLS["unconnected"], shape="box", tooltip=hover)
            else:
                mark = "result"
                self.mark_node(mid, mark, label, style="filled", fillcolor=MARK_FILLS["result"],
                               shape="box", peripheries="2", tooltip=hover)
            self.edges.append((mid, self.vis_tensor(r.tensor), {
                "id": f"{mid}_e", "class": f"gv-mark gv-{mark}-link", "dir": "back",
                # None: nothing flows (no arrow); zeros: a hollow arrow.
                "arrowtail": ("none" if r.grad is None else "empty") if unconnected else "normal",
                "color": COLORS[mark], "penwidth": "1.6",
                "style": "dashed" if unconnected else "solid"}))

    def directions(self) -> None:
        """A direction mark at each primal, its arrow into the primal: forward mode starts
        there."""
        for x_index, ts in self.steps.directions.items():
            t_id = ts[-1].tensor
            mid = f"dir{x_index}"
            if not self.shown(t_id):
                self.hide_in(mid, f"t{t_id}")
                continue
            name = _short(display_name(self.tr.tensors[t_id]))
            self.mark_node(mid, "direction", _direction_label(ts, name, self.opts.values),
                           shape="house", style="filled,bold", fillcolor=MARK_FILLS["direction"],
                           penwidth="2", tooltip=_grad_tooltip(
                               [t.tangent for t in ts],
                               f"direction: the tangent {self.name(t_id)} moves along"))
            self.edges.append((mid, self.vis_tensor(t_id), {
                "id": f"{mid}_e", "class": "gv-mark gv-direction-link",
                "color": COLORS["direction"], "penwidth": "2"}))

    def jvps(self) -> None:
        """A jvp mark at each target, the arrow from the target into it: its tangent, J·dx."""
        for y_index, js in self.steps.jvps.items():
            j = js[-1]
            mid = f"jvp{y_index}"
            if not self.shown(j.tensor):
                self.hide_in(mid, f"t{j.tensor}")
                continue
            name = _short(display_name(self.tr.tensors[j.tensor]))
            hover = _grad_tooltip([q.tangent for q in js],
                                  f"tangent of {self.name(j.tensor)}, targets[{y_index}]: "
                                  f"{j.status}" + (f"\n{j.reason}" if j.reason else ""))
            if j.status != "connected":
                mark = "unconnected"
                self.mark_node(mid, mark, _jvp_label(js, name, self.opts.values),
                               style="dashed,filled", fillcolor=MARK_FILLS["unconnected"],
                               shape="box", tooltip=hover)
            else:
                mark = "jvp"
                self.mark_node(mid, mark, _jvp_label(js, name, self.opts.values),
                               style="rounded,filled", fillcolor=MARK_FILLS["jvp"], shape="box",
                               peripheries="2", tooltip=hover)
            self.edges.append((self.vis_tensor(j.tensor), mid, {
                "id": f"{mid}_e", "class": f"gv-mark gv-{mark}-link",
                "arrowhead": "normal" if mark == "jvp" else "none",
                "color": COLORS[mark], "penwidth": "1.6",
                "style": "solid" if mark == "jvp" else "dashed"}))

    def reduces(self) -> None:
        """Reductions on hidden edges show as what stands for the edge, and one on an edge
        into a bundle as that edge (the rest are drawn on their edge's path by
        :meth:`in_edge`)."""
        for op_id, i in self.steps.reduces:
            mid = f"red{op_id}_{i}"
            eid = _Ids.in_edge(op_id, i)
            if mid not in self.plan.path_nodes and not self.hide_on_edge(mid, op_id, eid):
                self.alias[mid] = self.alias[f"{mid}_e"] = eid  # an edge into a bundle

    def accumulations(self) -> None:
        """A sum node on each fan-out tensor's path: its gradient contributions flow in,
        the total flows on into the tensor along ``acc{t}_e``."""
        for t_id, accs in self.steps.accums.items():
            mid = f"acc{t_id}"
            if self.sum_node(t_id) is None:
                self.hide_in(mid, f"t{t_id}")
                continue
            self.add_node(None, mid, {
                "id": mid, "class": "gv-sum gv-accumulate",
                "label": _accumulate_label(accs, self.opts.values), "shape": "hexagon",
                "tooltip": _grad_tooltip([a.total for a in accs], (
                    f"fan-out sum: {self.name(t_id)} is read "
                    f"{len(accs[-1].contributions)} times; its gradient is the sum")),
                "style": "filled", "fillcolor": MARK_FILLS["accumulate"],
                "color": COLORS["accumulate"], "penwidth": "1.6", "margin": "0.02,0.02"})
            self.plan.marks.add("accumulate")
            totals = [a.total for a in accs]
            self.edges.append((self.vis_tensor(t_id), mid, {
                "id": f"{mid}_e", "class": "gv-in gv-grad gv-summed",
                "label": _grad_label(totals, self.opts.values, self.arrow),
                "tooltip": _grad_tooltip(totals, f"total gradient of {self.name(t_id)}, "
                                         f"the sum of {len(accs[-1].contributions)} contributions")}))

    def cut_edges(self) -> None:
        """A cut mark beside each edge no gradient flows back along."""
        for (op_id, i), cs in self.steps.cut_edges.items():
            mid = f"cut{op_id}_{i}"
            if self.hide_on_edge(mid, op_id, _Ids.in_edge(op_id, i)):
                continue
            t_in = self.tr.ops[op_id].inputs[i]
            self.mark_node(mid, "cut", _cut_label(cs[0].reason), shape="octagon",
                           style="filled", fillcolor=MARK_FILLS["cut"],
                           tooltip=_cut_tooltip(cs[0].reason, self.name(t_in)))
            self.link(self.vis_tensor(t_in), mid, f"{mid}_e", "cut", arrowhead="tee",
                      style="dashed")
            self.layout_only(mid, self.vis_op(op_id), f"{mid}_l")

    def cut_tensors(self) -> None:
        """A cut mark at each tensor listed in stop_gradients."""
        for t_id, cs in self.steps.cut_tensors.items():
            mid = f"cutt{t_id}"
            if not self.shown(t_id):
                self.hide_in(mid, f"t{t_id}")
                continue
            self.mark_node(mid, "cut", _cut_label(cs[0].reason), shape="octagon",
                           style="filled", fillcolor=MARK_FILLS["cut"],
                           tooltip=_cut_tooltip(cs[0].reason, self.name(t_id)))
            self.link(mid, self.vis_tensor(t_id), f"{mid}_e", "cut", arrowtail="tee", dir="back",
                      style="dashed")
            op_id = self.tr.tensors[t_id].op
            if (op_id is not None and op_id in self.plan.drawn_ops
                    and self.vis_op(op_id) != self.vis_tensor(t_id)):
                self.layout_only(self.vis_op(op_id), mid, f"{mid}_l")

    # -- into Graphviz

    def emit(self) -> graphviz.Digraph:
        """The ``Digraph``: nodes in nested clusters for the open scopes, edges, legend."""
        large = len(self.tr.tensors) + len(self.plan.drawn_ops) > LARGE_GRAPH_NODES
        g = _new_digraph(self.opts.rankdir, large)
        if self.opts.brief:
            self.shorten_labels()
            g.attr("graph", nodesep="0.15", ranksep="0.15")
            g.attr("node", height="0.2", width="0.3")  # as small as one line of text
        if sum(map(len, self.bodies.values())) > MAX_HOVER_NODES:
            self.drop_hover_text()
        # A cluster left with nothing in it (its ops went into groups) is not drawn.
        filled = {p for s, body in self.bodies.items() if s is not None and body
                  for p in _scope_chain(s)}
        hidden = self.plan.collapsed | self.plan.absorbed
        open_children: dict[str | None, list[str]] = {}
        for s in self.plan.scopes:  # sorted, so children come in name order
            if s in filled and _outermost(s, hidden) is None:
                open_children.setdefault(_parent(s), []).append(s)
        self._emit_scope(g, None, open_children)
        for tail, head, attrs in self.edges:
            g.edge(tail, head, **attrs)
        if self.opts.legend:
            g.node("legend", id="legend", label=_legend_label(self.plan.marks), shape="plain",
                   **{"class": "gv-legend"})
        return g

    def shorten_labels(self) -> None:
        """A brief drawing: each node says in one line what it is, edges say nothing.

        The hover texts stay, as do collapsed scopes' and groups' labels.
        """
        merged_out = {o: t for t, o in self.merged.items()}
        for body in self.bodies.values():
            for name, attrs in body:
                short = self.brief_text(name, merged_out)
                if short is not None:
                    attrs["label"] = _html(_esc(short))
                    attrs["margin"] = "0.06,0.02"
        for _, _, attrs in self.edges:
            attrs.pop("label", None)

    def brief_text(self, name: str, merged_out: dict[int, int]) -> str | None:
        """Node ``name``'s one line in a brief drawing (None: its label stays)."""
        kind, num = re.fullmatch(r"([a-z]+)(\d*).*", name).groups()
        if kind == "t":
            return _short(display_name(self.tr.tensors[int(num)], scoped=False), 20)
        if kind == "o":
            o = self.tr.ops[int(num)]
            t = merged_out.get(o.id)
            out = "" if t is None else display_name(self.tr.tensors[t], scoped=False)
            return o.type if out in ("", o.type) else f"{o.type}: {_short(out, 16)}"
        if kind == "res":
            r = self.steps.results[int(num)][-1]
            return f"dL/d{_short(self.name(r.tensor), 16)}" if r.status == "connected" else "None"
        return {"red": "\u03a3", "acc": "\u2295", "seed": "seed", "cut": "\u2702 cut",
                "cutt": "\u2702 cut"}.get(kind)

    def drop_hover_text(self) -> None:
        """No hover text but the names of collapsed scopes and groups (see MAX_HOVER_NODES)."""
        for body in self.bodies.values():
            for _, attrs in body:
                if not attrs["class"].startswith(("gv-scope", "gv-group")):
                    attrs.pop("tooltip", None)
        for _, _, attrs in self.edges:
            attrs.pop("tooltip", None)

    def folded_inside(self, scope: str) -> list[str]:
        """The scopes drawn inside ``scope``'s cluster without one of their own: those
        below :data:`MAX_SCOPE_DEPTH`, when ``scope`` is at that depth."""
        if scope.count("/") + 1 < MAX_SCOPE_DEPTH:
            return []
        prefix = scope + "/"
        return [s for s in self.plan.scopes if s.startswith(prefix)]

    def _emit_scope(self, parent: graphviz.Digraph, scope: str | None,
                    open_children: dict[str | None, list[str]]) -> None:
        """``scope``'s nodes into ``parent``, then each open child scope as a cluster."""
        for name, attrs in self.bodies.get(scope, []):
            parent.node(name, **attrs)
        for s in open_children.get(scope, ()):
            n = self.scope_index[s]
            inside = self.folded_inside(s)
            label = _folded_cluster_label(s, inside) if inside else _cluster_label(s)
            with parent.subgraph(name=f"cluster{n}") as sub:
                sub.attr(id=f"cluster{n}", label=label, labeljust="l",
                         style="rounded,dashed", color=_CLUSTER_LINE, **{"class": "gv-cluster"})
                self._emit_scope(sub, s, open_children)
