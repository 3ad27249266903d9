"""The scopes a reader opens and closes: the scope tree, runs of repeated scopes, and the
drawing each choice of open scopes is.

A trace's name scopes with ops in them form a tree (:class:`ScopeNode`).
Consecutive sibling scopes of one structure (``layer_0`` ... ``layer_11``: the
same ops, in the same order, wired the same way, with the same shapes) are one
more node, a *repeat*, drawn as one box marked ×12 whose children are its
instances.

A *view* is what the reader has open: one node and its ancestors, every other
node closed (a node of at most :data:`OPEN_WHOLE` ops opens whole: the scopes
inside it are no nodes of their own) (so siblings close as one opens, and nothing opens that the reader
did not ask for).  Its key is the open node's key, or :data:`ALL_CLOSED` for
none; each is one drawing, the plan options of :func:`view_options`.  Views
are laid out ahead of time (a report must open offline), so they are few: one
per node, at most :data:`MAX_VIEWS`, nearest the top first.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="sc_x")
>>> h = x
>>> for i in range(3):
...     with gv.name_scope(f"sc_layer_{i}"):
...         h = gv.tanh(h * 2.0)
>>> tree = scope_tree(gv.trace_gradients(gv.reduce_sum(h), x))
>>> [(n.key, n.label) for n in tree.nodes.values()][:2]
[('repeat:sc_layer_0', 'sc_layer_0 … sc_layer_2 ×3'), ('scope:sc_layer_0', 'sc_layer_0')]
>>> sorted(view_options(tree, "scope:sc_layer_1")["collapse"])
['sc_layer_0', 'sc_layer_2']
>>> view_options(tree, ALL_CLOSED)
{'collapse': frozenset(), 'fold': frozenset({('sc_layer_0', 'sc_layer_1', 'sc_layer_2')})}
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .labels import repeat_name
from .plan import AUTO_COLLAPSE_OPS, MAX_SCOPE_DEPTH, _parent, _scope_chain, made_once
from ...trace import Trace

__all__ = ["ScopeNode", "ScopeTree", "scope_tree", "view_options", "fold_opens", "ALL_CLOSED",
           "MAX_VIEWS", "OPEN_WHOLE", "UNFOLD_MAX"]

#: The view with every top-level scope (and run of scopes) closed.
ALL_CLOSED = "/"

#: A node with at most this many ops opens whole: the scopes inside it are drawn open
#: with it, and are not boxes of their own.  A transformer layer of 32 ops reads best
#: whole (its attention, norm and MLP side by side); a node larger than this opens one
#: level, its children closed.
OPEN_WHOLE = 60

#: An opened run of at most this many repeated scopes shows each as a box; a longer
#: one shows its first, and the rest folded (a click pages on through them).
UNFOLD_MAX = 16

#: At most this many views (one per node that opens) are laid out for one trace: a
#: report lays them all out ahead (about 0.05 s each for a few dozen nodes, 0.2 s
#: for a 32-op layer with its values).  A node past this many, nearest the top
#: first, is drawn closed and does not open.
MAX_VIEWS = 64


@dataclass
class ScopeNode:
    """A box the reader opens: a name scope, or a run of sibling scopes of one structure."""

    key: str  # "scope:<full name>" or "repeat:<first instance's full name>"
    kind: str  # "scope" or "repeat"
    scopes: tuple[str, ...]  # the scope; a repeat's instances, in forward order
    label: str  # what the reader sees: the scope's last name, or "a … b ×N"
    parent: str | None  # the node it is drawn in (None: the top level)
    ops: int  # drawn ops inside
    first_op: int  # the first of them, by id (forward order)
    children: list[str] = field(default_factory=list)
    opens: bool = True  # has a view of its own (see MAX_VIEWS)

    @property
    def scope(self) -> str:
        return self.scopes[0]


@dataclass
class ScopeTree:
    """A trace's scope nodes, parents before children, and the top level's children."""

    nodes: dict[str, ScopeNode]
    top: list[str]
    # full scope name -> the key of the scope node (only scopes with drawn ops)
    by_scope: dict[str, str]

    def chain(self, key: str) -> list[str]:
        """``key`` and the nodes it is drawn in, outermost first."""
        out = []
        k: str | None = key
        while k is not None:
            out.append(k)
            k = self.nodes[k].parent
        return out[::-1]

    def home(self, scope: str) -> str | None:
        """The innermost node holding ``scope`` (None: the top level)."""
        for s in reversed(_scope_chain(scope)):
            key = self.by_scope.get(s)
            if key is not None:
                return key
        return None


_LOCK = threading.Lock()


def scope_tree(trace: Trace) -> ScopeTree:
    """The trace's scope tree (made once per trace)."""
    return made_once(trace.__dict__, "_gv_scope_tree", _LOCK, lambda: _build(trace))


def _build(trace: Trace) -> ScopeTree:
    drawn = [o for o in trace.ops if o.inputs]
    ops_in: dict[str, list[int]] = defaultdict(list)  # scope -> its subtree's drawn ops
    for o in drawn:
        for s in _scope_chain(o.scope)[:MAX_SCOPE_DEPTH]:
            ops_in[s].append(o.id)
    children: dict[str | None, list[str]] = defaultdict(list)
    for s in sorted(ops_in, key=lambda s: ops_in[s][0]):  # forward order
        children[_parent(s)].append(s)
    nodes: dict[str, ScopeNode] = {}
    by_scope: dict[str, str] = {}
    signatures: dict[str, tuple] = {}

    def signature(s: str) -> tuple:
        if s not in signatures:
            signatures[s] = _signature(trace, s, ops_in[s])
        return signatures[s]

    def add(parent: str | None, parent_key: str | None) -> list[str]:
        keys: list[str] = []
        sibs = children.get(parent, [])
        i = 0
        while i < len(sibs):
            j = i + 1
            while j < len(sibs) and signature(sibs[j]) == signature(sibs[i]):
                j += 1
            run = sibs[i:j]
            under = parent_key
            if len(run) > 1:
                key = f"repeat:{run[0]}"
                nodes[key] = ScopeNode(key, "repeat", tuple(run), repeat_name(run), parent_key,
                                       sum(len(ops_in[s]) for s in run), ops_in[run[0]][0])
                keys.append(key)
                under = key
            for s in run:
                key = f"scope:{s}"
                nodes[key] = ScopeNode(key, "scope", (s,), s.rsplit("/", 1)[-1], under,
                                       len(ops_in[s]), ops_in[s][0])
                by_scope[s] = key
                if len(run) == 1:
                    keys.append(key)
                else:
                    nodes[under].children.append(key)  # type: ignore[index]
                if len(ops_in[s]) > OPEN_WHOLE:
                    nodes[key].children = add(s, key)
            i = j
        return keys

    top = add(None, None)
    # Views nearest the top first, and no node whose own ops are more than a
    # drawing can hold one by one.
    budget = MAX_VIEWS
    for key in sorted(nodes, key=lambda k: (k.count("/"), nodes[k].first_op)):
        n = nodes[key]
        own = n.ops - sum(nodes[c].ops for c in n.children)
        n.opens = budget > 0 and own <= AUTO_COLLAPSE_OPS
        budget -= n.opens
    return ScopeTree(nodes, top, by_scope)


def _signature(trace: Trace, scope: str, ops: list[int]) -> tuple:
    """What makes two scopes the same structure: each op's type and attributes, which
    scope inside it is in (by order of first use and depth, not by name: ``blk0/l0``
    and ``blk1/l10`` are the same place), its output shapes, and where each of its
    inputs comes from (an output of an earlier op of the scope, or the scope's n-th
    outside input, with its shape)."""
    local: dict[int, tuple[int, int]] = {}
    outside: dict[int, int] = {}
    inner: dict[str, int] = {}  # the scopes inside, by first use (their names may differ)
    out = []
    for i, op_id in enumerate(ops):
        o = trace.ops[op_id]
        ins = tuple(local[t] if t in local
                    else (-1, outside.setdefault(t, len(outside)), tuple(trace.tensors[t].shape))
                    for t in o.inputs)
        shapes = tuple(tuple(trace.tensors[t].shape) for t in o.outputs)
        where = inner.setdefault(o.scope, len(inner))
        out.append((o.type, where, o.scope.count("/"), ins, shapes,
                    json.dumps(o.attrs, sort_keys=True, default=repr)))
        for k, t in enumerate(o.outputs):
            local[t] = (i, k)
    return tuple(out)


def view_options(tree: ScopeTree, key: str) -> dict[str, Any]:
    """The diagram options (``collapse`` and ``fold``) of view ``key``: its node and the
    nodes it is drawn in open, every other node at those levels closed."""
    if key != ALL_CLOSED and key not in tree.nodes:
        raise ValueError(f"unknown scope view {key!r}")
    chain = [] if key == ALL_CLOSED else tree.chain(key)
    open_ = set(chain)
    collapse: set[str] = set()
    fold: set[tuple[str, ...]] = set()

    def close(run: list[str]) -> None:  # sibling scopes closed: one box, or one box for all
        if len(run) > 1:
            fold.add(tuple(tree.nodes[k].scope for k in run))
        elif run:
            collapse.add(tree.nodes[run[0]].scope)

    for level in [tree.top] + [tree.nodes[k].children for k in chain]:
        for k in level:
            n = tree.nodes[k]
            if k not in open_:
                if n.kind == "repeat":
                    fold.add(n.scopes)
                else:
                    collapse.add(n.scope)
            elif n.kind == "repeat":
                # Opened: its instances, each a box; but a long run's instances before
                # and after the one open (or after the first) folded, so that its
                # drawing stays small
                kids = n.children
                inside = next((i for i, c in enumerate(kids) if c in open_), None)
                if len(kids) <= UNFOLD_MAX:
                    collapse.update(tree.nodes[c].scope for c in kids if c not in open_)
                elif inside is not None:
                    close(kids[:inside])
                    close(kids[inside + 1:])
                else:
                    close(kids[:1])
                    close(kids[1:])
                open_.update(kids)  # (handled here, not as a level of their own)
    return {"collapse": frozenset(collapse), "fold": frozenset(fold)}


def fold_opens(tree: ScopeTree, key: str, run: tuple[str, ...]) -> str | None:
    """The node a click on the folded ``run`` of scopes opens in view ``key``: the whole
    repeat where it is all of one, else the instance nearest the one open (paging on
    through a long run), or its first."""
    first = tree.by_scope.get(run[0])
    rep = tree.nodes[first].parent if first else None
    if rep is None or tree.nodes[rep].kind != "repeat":
        return None
    if tuple(tree.nodes[rep].scopes) == run:
        return rep
    chain = [] if key == ALL_CLOSED else tree.chain(key)
    kids = tree.nodes[rep].children
    inside = next((i for i, c in enumerate(kids) if c in chain), None)
    last = tree.by_scope[run[-1]]
    if inside is not None and kids.index(last) < inside:
        return last
    return first
