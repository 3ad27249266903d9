"""What a reader finds their way with in a large model: the scope views and each step's
scope.

The payload of a trace with name scopes carries ``scopes`` (:func:`scope_views`):
the scope tree (:mod:`gradviz.views.diagram.scopes`) and one drawing per view,
laid out ahead so that a report opens and closes scopes offline.  Each view
says which of its elements are closed boxes (a click opens that node: ``boxes``)
and which are open scopes (a click closes it, going back to its parent's view:
``clusters``), and its edges, which the viewer follows to light what a node depends
on and what depends on it.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="nav_x")
>>> with gv.name_scope("nav_a"):
...     y = x * x
>>> tr = gv.trace_gradients(gv.reduce_sum(y), x)
>>> tree = scope_tree(tr)
>>> own = _options(legend=False)
>>> data = scope_views(tr, tree, _plan(tr, own))
>>> data["base"], data["views"], data["views"][""]["clusters"]
('', {'': {...}, '/': None, 'scope:nav_a': None}, {'cluster0': 'scope:nav_a'})
>>> data = with_scope_views(tr, {"scopes": data}, own)["scopes"]
>>> data["views"]["/"]["boxes"], data["views"]["/"]["ids"]["2"]
({'scope0': 'scope:nav_a'}, ['scope0', 'e0_0', 'e0_1'])
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .diagram import _opt_kwargs, _options, _Options, _plan, _Plan, layout_svg, plan_step_ids
from .diagram.scopes import ALL_CLOSED, ScopeTree, fold_opens, scope_tree, view_options
from ..trace import Step, Trace

__all__ = ["scope_views", "scope_view", "with_scope_views", "step_scope",
           "LAYOUT_THREADS", "SCOPE_VIEW_BYTES"]

#: Views are laid out this many at a time (each ``dot`` run is a process of its own).
LAYOUT_THREADS = 4

#: A report holds its views' drawings up to this many bytes (gzipped in the page, about
#: a tenth of it): a view of a 30-op transformer layer with its values is about 200 KB.
SCOPE_VIEW_BYTES = 16_000_000

_CLUSTER = re.compile(r'<g id="(cluster\d+)"')


def step_scope(trace: Trace, s: Step) -> str:
    """The name scope a step works in: its op's, or its tensor's."""
    op = getattr(s, "op", None)
    if op is not None:
        return trace.ops[op].scope
    return trace.tensors[s.tensor].scope


def scope_views(trace: Trace, tree: ScopeTree, plan: _Plan) -> dict[str, Any]:
    """The scope tree and its views, ``plan`` being the payload's own drawing: the view
    that drawing is comes whole, the others as None (laid out when asked for:
    :func:`scope_view`, :func:`with_scope_views`).

    Shape::

        {"base": the view the payload's own drawing is ("" when it is none of them),
         "nodes": {key: {"label", "kind" ("scope" or "repeat"), "scopes", "parent",
                         "children", "ops", "opens"}},
         "views": {key: None, or {"open": [node keys, outermost first], "svg" (None:
                         the payload's own), "ids" ({step: element ids} where they are
                         not the step's own), "boxes": {element id: node key} (closed:
                         a click opens it), "clusters": {element id: node key} (open:
                         a click closes it, to its parent's view), "edges": [[tail, head,
                         edge id], ...] (None: the payload's own)}}}
    """
    keys = [ALL_CLOSED] + [k for k, n in tree.nodes.items() if n.opens]
    own = _own_options(plan.opts)
    base = next((k for k in keys if _options(**own, **view_options(tree, k)) == plan.opts), "")
    views: dict[str, Any] = {k: None for k in [base, *keys]}
    views[base] = {**_view(trace, tree, base, plan, plan), "edges": None}  # (the payload's own)
    nodes = {k: {"label": n.label, "kind": n.kind, "scopes": list(n.scopes),
                 "parent": n.parent, "children": n.children, "ops": n.ops, "opens": n.opens}
             for k, n in tree.nodes.items()}
    return {"base": base, "nodes": nodes, "views": views}


def _own_options(opts: _Options) -> dict[str, Any]:
    """A drawing's options but what it collapses and folds: those of every view of it."""
    return {k: v for k, v in _opt_kwargs(opts).items() if k not in ("collapse", "fold")}


def scope_view(trace: Trace, base_opts: _Options, key: str) -> dict[str, Any]:
    """View ``key`` of the payload whose own drawing has ``base_opts``, laid out."""
    tree = scope_tree(trace)
    p = _plan(trace, _options(**_own_options(base_opts), **view_options(tree, key)))
    return _view(trace, tree, key, p, _plan(trace, base_opts))


def with_scope_views(trace: Trace, data: dict[str, Any], base_opts: _Options,
                     budget: int = SCOPE_VIEW_BYTES) -> dict[str, Any]:
    """``data`` (a payload) with every view laid out, nearest the top first, until their
    drawings take ``budget`` bytes; a node whose view is past it does not open.  For a
    page that opens scopes with no kernel to ask: the report.  ``data`` is left as it was."""
    scopes = data.get("scopes")
    if not scopes:
        return data
    tree = scope_tree(trace)
    # nearest the top first, in forward order
    todo = sorted((k for k, v in scopes["views"].items() if v is None),
                  key=lambda k: (0, 0) if k == ALL_CLOSED else (len(tree.chain(k)),
                                                                 tree.nodes[k].first_op))
    with ThreadPoolExecutor(LAYOUT_THREADS) as pool:
        made = list(pool.map(lambda k: scope_view(trace, base_opts, k), todo))
    views = dict(scopes["views"])
    nodes = {k: dict(n) for k, n in scopes["nodes"].items()}
    dropped: set[str] = set()
    for key, view in zip(todo, made):
        budget -= len(view["svg"] or "")
        parent = tree.nodes[key].parent if key in tree.nodes else None
        if budget < 0 or parent in dropped:  # (a view is kept only with the one it closes to)
            del views[key]
            dropped.add(key)
            if key in nodes:
                nodes[key]["opens"] = False
        else:
            views[key] = view
    if dropped:  # no button for a view the report does not hold
        for key, view in views.items():
            views[key] = {**view,
                          "boxes": {i: k for i, k in view["boxes"].items() if k not in dropped},
                          "clusters": {i: k for i, k in view["clusters"].items()
                                       if (nodes[k]["parent"] or ALL_CLOSED) not in dropped}}
    return {**data, "scopes": {**scopes, "nodes": nodes, "views": views}}


def _view(trace: Trace, tree: ScopeTree, key: str, plan: _Plan, base: _Plan) -> dict[str, Any]:
    """View ``key``'s entry, ``plan`` drawing it: its drawing (None where it is ``base``'s,
    the payload's own), the steps' ids where they differ from the payload's own, and what
    in it opens and closes."""
    own = plan.collapsed == base.collapsed and plan.groups == base.groups
    ids: dict[str, list[str]] = {}
    if not own:
        for s in trace.steps:
            mine = plan_step_ids(plan, s.index)
            if mine != plan_step_ids(base, s.index):
                ids[str(s.index)] = list(mine)
    svg = layout_svg(trace, **_opt_kwargs(plan.opts))
    index = {s: n for n, s in enumerate(plan.scopes)}
    boxes: dict[str, str] = {}
    for s in sorted(plan.collapsed):
        home = tree.home(s)
        if home is not None and tree.nodes[home].opens:
            boxes[f"scope{index[s]}"] = home
    for n, g in enumerate(plan.groups):
        node = fold_opens(tree, key, g.scopes) if g.repeat else None
        if node is not None and tree.nodes[node].opens:
            boxes[f"group{n}"] = node
    drawn = set(_CLUSTER.findall(svg))
    clusters = {f"cluster{n}": tree.by_scope[s] for s, n in index.items()
                if f"cluster{n}" in drawn and s in tree.by_scope}
    return {"open": [] if key in ("", ALL_CLOSED) else tree.chain(key),
            "svg": None if own else svg, "ids": ids, "boxes": boxes, "clusters": clusters,
            "edges": [list(e) for e in plan.edges]}
