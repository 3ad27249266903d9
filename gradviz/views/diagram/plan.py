"""What the diagram draws, decided once per trace and options.

The options as given to :mod:`gradviz.views.diagram`'s functions, checked
(:func:`_options`), and the plan (:class:`_Plan`): which name scopes are drawn
as one node, which runs of consecutive ops are (a trace too large to draw
whole), which inputs of a wide op are drawn as one bundle, and, once drawn (``_draw``), under which element id each hidden
element shows, the graph itself and its layout.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import graphviz

from ..options import RANKDIRS
from ...trace import Trace


#: With ``collapse=None`` (auto), name scopes are collapsed, largest first,
#: until at most this many nodes stand for ops.  Measured on MLPs drawn open
#: (bench/render.py's model, collapse=False): 250 ops lay out in 0.65 s into a
#: 1 MB SVG, 1000 ops take 5 s and 3.9 MB, 2000 ops 7 s and 7.8 MB; the SVG
#: (about 4 KB per op with its labels) would blow the report's 5 MB budget.
#: 250 ops is also about what a reader can follow by scrolling one diagram.
#: With auto-collapse a 5,000-op model lays out in about half a second.
#:
#: When scopes cannot get there (a trace without scopes, or with too many
#: small ones), runs of consecutive ops in forward order become ``group{n}``
#: nodes, as short as keeps the count within this budget.  Without that, a
#: 5,000-op chain with no scopes took 150 to 220 s in ``dot`` and made a
#: 12.5 MB SVG; grouped (239 runs of 21 ops) it lays out in 0.2 s into 0.36 MB.
#: Below the budget nothing is grouped, so small traces look exactly as before.
AUTO_COLLAPSE_OPS = 250

#: Name scopes are drawn as clusters nested at most this deep.  A scope deeper
#: than this is drawn inside its ancestor at this depth, whose label says so
#: (``s15/…/s999``, ``984 more scopes inside``); its nodes are all drawn.
#: Nesting has no bound of its own (a loop of ``name_scope`` blocks makes
#: thousands), and each level is a subgraph that the graphviz package writes,
#: and ``dot`` lays out, by recursion: 1,000 levels exhausted Python's stack.
#: 16 boxes inside each other are already more than a reader tells apart,
#: and well past what models nest (model, block, layer, sublayer).
MAX_SCOPE_DEPTH = 16

#: An op reading more than this many tensors is wide (``add_n`` of 1,000
#: Variables, or of 1,000 products ``x * k`` of one tensor): its first
#: :data:`BUNDLE_SHOWN` inputs stay drawn, and the rest are drawn as one
#: ``bundle{n}`` node that says how many it stands for, with one edge in from
#: each tensor they read (counted) and one edge out.  An input qualifies with the
#: branch that makes it, the ops and leaves that feed it alone (at most
#: :data:`BUNDLE_BRANCH_OPS` ops).  Drawn one by one, 1,000 inputs took 12 s
#: to lay out and tidy into a 1.8 MB SVG, and each step of the op lit 2,000
#: elements.
WIDE_INPUTS = 8
BUNDLE_SHOWN = 3
BUNDLE_BRANCH_OPS = 8

#: When runs of ops are grouped, the xs (and the ys) stay drawn as their own
#: nodes, with their result (seed) marks, unless there are more than this many.
_MAX_VISIBLE_ENDS = 16


# ---------------------------------------------------------------- options


@dataclass(frozen=True)
class _Options:
    rankdir: str
    collapse: bool | None | frozenset[str]
    values: bool
    legend: bool  # draw the legend node (a viewer with its own legend leaves it out)
    compact: bool  # an op with one output and that tensor drawn as one node
    brief: bool  # one short line per node, no gradient labels: an overview
    # each value given the room of the widest number, so that the same program
    # with other values fits the same layout (diagram/live.py)
    live: bool = False
    # runs of sibling scopes of one structure, each drawn as one node marked xN
    # (the reader's scope views: diagram/scopes.py)
    fold: frozenset[tuple[str, ...]] = frozenset()


def _options(rankdir: str = "TB", collapse: Any = None, values: bool = True,
             legend: bool = True, compact: bool = True, brief: bool = False,
             live: bool = False, fold: Any = frozenset(), **unknown: Any) -> _Options:
    """The diagram's keyword options, checked and normalised (hashable: a cache key).

    >>> _options(rankdir="lr", collapse="layer1")
    _Options(rankdir='LR', collapse=frozenset({'layer1'}), values=True, legend=True, compact=True, brief=False, live=False, fold=frozenset())
    """
    if unknown:
        name = sorted(unknown)[0]
        raise TypeError(f"unknown diagram option {name!r} (accepted: rankdir, collapse, "
                        "values, legend, compact, brief, live, fold)")
    if not isinstance(rankdir, str) or rankdir.upper() not in RANKDIRS:
        raise ValueError(f"unknown rankdir: {rankdir!r} (must be one of {', '.join(RANKDIRS)})")
    if not isinstance(values, bool):
        raise ValueError(f"values must be True or False, got {values!r}")
    if not isinstance(legend, bool):
        raise ValueError(f"legend must be True or False, got {legend!r}")
    for name, flag in (("compact", compact), ("brief", brief), ("live", live)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name} must be True or False, got {flag!r}")
    if collapse is None or isinstance(collapse, bool):
        c: bool | None | frozenset[str] = collapse
    elif isinstance(collapse, str):
        c = frozenset([collapse])
    elif isinstance(collapse, Iterable):
        c = frozenset(collapse)
        bad = [s for s in c if not isinstance(s, str)]
        if bad:
            raise ValueError(f"collapse: scope names must be strings, got {bad[0]!r}")
    else:
        raise ValueError(f"collapse must be True, False, None (auto) or scope names, "
                         f"got {collapse!r}")
    return _Options(rankdir.upper(), c, values, legend, compact, brief, live, _fold(fold))


def _fold(fold: Any) -> frozenset[tuple[str, ...]]:
    """The ``fold`` option checked: runs of two or more scope names, none in two runs.

    >>> sorted(_fold([["b0", "b1"]]))
    [('b0', 'b1')]
    >>> _fold([["b0"]])
    Traceback (most recent call last):
    ...
    ValueError: fold: each run needs at least two scope names, got ('b0',)
    """
    if not isinstance(fold, Iterable) or isinstance(fold, str):
        raise ValueError(f"fold must be runs of scope names, got {fold!r}")
    runs = frozenset(tuple(run) for run in fold)
    seen: set[str] = set()
    for run in runs:
        if len(run) < 2 or not all(isinstance(s, str) for s in run):
            raise ValueError(f"fold: each run needs at least two scope names, got {run!r}")
        if seen & set(run):
            raise ValueError(f"fold: scope {sorted(seen & set(run))[0]!r} is in two runs")
        seen.update(run)
    return runs


def _opt_kwargs(o: _Options) -> dict[str, Any]:
    """The keyword arguments that give ``o`` back through :func:`_options`."""
    return {"rankdir": o.rankdir, "collapse": o.collapse, "values": o.values,
            "legend": o.legend, "compact": o.compact, "brief": o.brief, "live": o.live,
            "fold": o.fold}


# ---------------------------------------------------------------- the plan


@dataclass(frozen=True)
class _Group:
    """A run of consecutive ops (in forward order) drawn as one node, ``group{n}``."""

    ops: tuple[int, ...]  # the drawn ops it stands for, ascending ids
    scopes: tuple[str, ...]  # collapsed name scopes it swallowed, in forward order
    # A run of sibling scopes of one structure folded into one node (``fold``),
    # rather than a run of ops grouped for size: its scopes are its instances.
    repeat: bool = False


@dataclass(frozen=True)
class _Bundle:
    """Inputs of one wide op, with the branches that make them, drawn as one node,
    ``bundle{n}``."""

    op: int  # the op reading them
    inputs: tuple[int, ...]  # the inputs it stands for, in the op's input order
    ops: tuple[int, ...]  # the ops of their branches, ascending ids
    tensors: tuple[int, ...]  # every tensor it hides: the inputs, and inside the branches


def made_once(table: dict, key: Any, lock: Any, make: Any) -> Any:
    """``table[key]``, made by ``make()`` under ``lock`` the first time it is asked for.

    Threads asking at once share one making, and none sees a part of it: the
    value enters the table only once it is whole.
    """
    value = table.get(key)
    if value is None:
        with lock:
            value = table.get(key)
            if value is None:
                value = table[key] = make()
    return value


@dataclass
class _Plan:
    """Everything decided about one (trace, options) drawing, computed once."""

    trace: Trace
    opts: _Options
    scopes: list[str]  # every scope name (with prefixes), sorted; index = n
    collapsed: set[str]  # scopes drawn as one node
    alias: dict[str, str]  # id of an element hidden in a collapse -> scope{n} / group{n}
    drawn_ops: set[int]  # ops with inputs: drawn as a node or hidden in a collapse
    groups: list[_Group] = field(default_factory=list)  # runs of ops drawn as group{n}
    absorbed: set[str] = field(default_factory=set)  # collapsed scopes inside a group
    op_group: dict[int, int] = field(default_factory=dict)  # op id -> its group's n
    tensor_group: dict[int, int] = field(default_factory=dict)  # tensor id -> its group's n
    readers: dict[int, list[int]] = field(default_factory=dict)  # tensor id -> drawn ops reading it
    bundles: list[_Bundle] = field(default_factory=list)  # a wide op's inputs as bundle{n}
    tensor_bundle: dict[int, int] = field(default_factory=dict)  # tensor id -> its bundle's n
    op_bundle: dict[int, int] = field(default_factory=dict)  # op id -> its bundle's n
    # Reduce and accumulate marks drawn on the gradient's path (red{op}_{i},
    # acc{t}): the gradient reaches the tensor only through them.
    path_nodes: set[str] = field(default_factory=set)
    graph: graphviz.Digraph | None = None
    # The drawn edges as (tail node, head node, edge id): what the viewer follows to
    # light a node's dependencies.
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    marks: set[str] = field(default_factory=set)  # legend entries used
    first_touch: dict[str, int] | None = None  # element id -> first step touching it
    step_cache: dict[int, list[str]] = field(default_factory=dict)
    svgs: dict[str, str] = field(default_factory=dict)  # layout engine -> its SVG, tidied
    # Held while what the plan caches lazily (its layouts, first_touch) is made,
    # so that threads asking at once share one making.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)


class _Ids:
    """The id discipline, in one place."""

    @staticmethod
    def tensor(t: int) -> str:
        return f"t{t}"

    @staticmethod
    def op(o: int) -> str:
        return f"o{o}"

    @staticmethod
    def in_edge(o: int, i: int) -> str:
        return f"e{o}_{i}"

    @staticmethod
    def out_edge(o: int, k: int) -> str:
        return f"o{o}_out{k}"


# ---------------------------------------------------------------- scope names


def _scope_chain(scope: str) -> list[str]:
    """"a/b/c" -> ["a", "a/b", "a/b/c"].

    >>> _scope_chain("a/b/c"), _scope_chain("")
    (['a', 'a/b', 'a/b/c'], [])
    """
    if not scope:
        return []
    parts = scope.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _parent(scope: str) -> str | None:
    return scope.rsplit("/", 1)[0] if "/" in scope else None


def _outermost(scope: str, hidden: set[str]) -> str | None:
    """The outermost scope of ``scope``'s chain that is in ``hidden``, or None.

    >>> _outermost("a/b/c", {"a/b", "a/b/c"}), _outermost("a/b", set())
    ('a/b', None)
    """
    if not hidden or not scope:
        return None
    start = 0
    while True:  # the prefixes one by one, none made that is not needed
        end = scope.find("/", start)
        prefix = scope if end < 0 else scope[:end]
        if prefix in hidden:
            return prefix
        if end < 0:
            return None
        start = end + 1


def _folded(scope: str | None) -> str | None:
    """The cluster a node of ``scope`` is drawn in: the scope, or its ancestor at
    :data:`MAX_SCOPE_DEPTH` when it is deeper.

    >>> _folded("a/b"), _folded("/".join("abcdefghijklmnopqrstuvwxyz"))
    ('a/b', 'a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p')
    """
    if not scope:
        return scope
    end = -1
    for _ in range(MAX_SCOPE_DEPTH):
        end = scope.find("/", end + 1)
        if end < 0:
            return scope
    return scope[:end]


def _common_scope(homes: list[str | None]) -> str | None:
    """The innermost scope holding all of ``homes`` (None: the top level).

    >>> _common_scope(["a/b/c", "a/b", "a/bc"]), _common_scope(["a", None])
    ('a', None)
    """
    if not homes or any(h is None for h in homes):
        return None
    parts = [h.split("/") for h in homes]  # type: ignore[union-attr]
    common: list[str] = []
    for level in zip(*parts):
        if len(set(level)) > 1:
            break
        common.append(level[0])
    return "/".join(common) or None


# ---------------------------------------------------------------- planning


def _build_plan(trace: Trace, opts: _Options) -> _Plan:
    """What to collapse and group; the drawing (``_draw``) fills in the rest of the plan."""
    # Each distinct scope once: a scope nested n deep has n names in its chain.
    all_scopes: set[str] = set()
    for scope in {item.scope for item in (*trace.tensors, *trace.ops)}:
        all_scopes.update(_scope_chain(scope))
    scopes = sorted(all_scopes)
    # Ops with no inputs (a Const or VariableV2 op, if a trace carries one) are
    # pure leaves: their tensor node already says everything.
    drawn_ops = {o.id for o in trace.ops if o.inputs}
    size = {s: 0 for s in scopes}
    for scope, n in Counter(o.scope for o in trace.ops if o.id in drawn_ops).items():
        for s in _scope_chain(scope):
            size[s] += n

    collapsed, visible = _collapse_scopes(opts.collapse, scopes, size, len(drawn_ops))
    plan = _Plan(trace, opts, scopes, collapsed, {}, drawn_ops)
    for o in trace.ops:  # (only drawn ops have inputs)
        for t in o.inputs:
            plan.readers.setdefault(t, []).append(o.id)
    if opts.fold:
        _fold_runs(plan)
    if opts.collapse is not False:  # (False: every op drawn)
        _bundle_inputs(plan)
        visible -= len(plan.op_bundle)
    if (opts.collapse is None or opts.collapse is True) and visible > AUTO_COLLAPSE_OPS:
        # Scopes alone could not bring it down (no scopes, or too many of them):
        # draw runs of consecutive ops as synthetic groups.  collapse=True asks
        # for a small picture too, so it falls back the same way rather than
        # handing dot thousands of nodes (minutes of layout).
        _group_runs(plan)
    return plan


def _fold_runs(plan: _Plan) -> None:
    """Fill ``plan.groups`` with the ``fold`` option's runs: each run of sibling scopes
    drawn as one node standing for all their ops and tensors."""
    known = set(plan.scopes)
    for run in sorted(plan.opts.fold):
        unknown = [s for s in run if s not in known]
        if unknown:
            raise ValueError(f"fold: unknown name scope {unknown[0]!r}")
        n = len(plan.groups)
        inside = set(run)
        ops = sorted(o.id for o in plan.trace.ops if o.id in plan.drawn_ops
                     and _outermost(o.scope, inside) is not None)
        plan.groups.append(_Group(tuple(ops), run, repeat=True))
        plan.op_group.update(dict.fromkeys(ops, n))
        plan.tensor_group.update({t.id: n for t in plan.trace.tensors
                                  if _outermost(t.scope, inside) is not None})
        plan.absorbed.update(run)
    plan.collapsed -= plan.absorbed


def _bundle_inputs(plan: _Plan) -> None:
    """Fill ``plan.bundles``: each wide op's inputs past the first few, with their
    branches, as one node (see :data:`WIDE_INPUTS`)."""
    tr = plan.trace
    ys = set(tr.ys)
    cut_ops = {s.op for s in tr.steps if s.kind == "cut" and s.op is not None}
    cut_tensors = {s.tensor for s in tr.steps if s.kind == "cut"}
    for o in tr.ops:
        if (len(o.inputs) <= WIDE_INPUTS or o.id not in plan.drawn_ops
                or _outermost(o.scope, plan.collapsed) is not None):
            continue
        branches = [b for b in (_branch(plan, o.id, t, ys, cut_ops, cut_tensors)
                                for t in o.inputs) if b is not None]
        if len(branches) <= BUNDLE_SHOWN + 1:
            continue
        hidden = branches[BUNDLE_SHOWN:]
        n = len(plan.bundles)
        ops = sorted(op for ops, _ in hidden for op in ops)
        tensors = [t for _, ts in hidden for t in ts]
        plan.bundles.append(_Bundle(o.id, tuple(ts[0] for _, ts in hidden), tuple(ops),
                                    tuple(tensors)))
        plan.op_bundle.update(dict.fromkeys(ops, n))
        plan.tensor_bundle.update(dict.fromkeys(tensors, n))


def _branch(plan: _Plan, wide: int, t: int, ys: set[int], cut_ops: set[int],
            cut_tensors: set[int]) -> tuple[list[int], list[int]] | None:
    """Input ``t`` of op ``wide`` with the branch that makes it: (its ops, its tensors,
    ``t`` first), or None where ``t`` cannot be hidden with it.

    ``t`` must be read by ``wide`` alone, once; walking back from its op, an op
    joins the branch when all it outputs is read inside the branch, and a leaf
    when only the branch reads it.  Anything else the branch reads (a tensor
    every branch shares, say) stays drawn.  Nothing in it may be a y, be cut,
    sit in a collapsed scope or already be hidden.
    """
    tr = plan.trace
    ops: list[int] = []
    tensors: list[int] = [t]
    inside = {wide}

    def private(u: int) -> bool:
        return (u not in ys and u not in cut_tensors and u not in plan.tensor_bundle
                and _outermost(tr.tensors[u].scope, plan.collapsed) is None
                and all(r in inside for r in plan.readers.get(u, ())))

    if plan.readers.get(t) != [wide] or not private(t):
        return None
    todo = [tr.tensors[t].op]
    while todo:
        q = todo.pop()
        if q is None or q not in plan.drawn_ops:
            continue  # a leaf
        op = tr.ops[q]
        if (len(ops) >= BUNDLE_BRANCH_OPS or q in cut_ops or q in plan.op_bundle
                or _outermost(op.scope, plan.collapsed) is not None):
            return None
        ops.append(q)
        inside.add(q)
        for out in op.outputs:
            if out != t and out not in tensors:
                if not private(out):
                    return None
                tensors.append(out)
        for u in dict.fromkeys(op.inputs):
            if u not in tensors and private(u):
                tensors.append(u)
                todo.append(tr.tensors[u].op)
    return ops, tensors


def _collapse_scopes(c: bool | None | frozenset[str], scopes: list[str], size: dict[str, int],
                     visible: int) -> tuple[set[str], int]:
    """The scopes ``collapse=c`` draws as one node each, and how many nodes then stand for ops.

    ``scopes`` is every scope name, sorted; ``size`` the drawn ops in each;
    ``visible`` the number of drawn ops.

    >>> collapsed, visible = _collapse_scopes(True, ["a", "a/b", "c"],
    ...                                       {"a": 3, "a/b": 2, "c": 1}, 5)
    >>> sorted(collapsed), visible
    (['a', 'c'], 3)
    """
    if c is False:
        return set(), visible
    if c is True:
        collapsed = {s for s in scopes if "/" not in s}
        return collapsed, visible - sum(size[s] - 1 for s in collapsed if size[s])
    if c is None:
        collapsed = set()
        # Largest scopes first, so the fewest, biggest groups disappear; ties by name
        # keep the choice deterministic.
        for s in sorted(scopes, key=lambda s: (-size[s], s)):
            if visible <= AUTO_COLLAPSE_OPS:
                break
            if size[s] < 2 or _outermost(s, collapsed) is not None:
                continue
            inner = [p for p in collapsed if p.startswith(s + "/")]
            collapsed.difference_update(inner)
            visible -= size[s] - 1 - sum(size[p] - 1 for p in inner)
            collapsed.add(s)
        return collapsed, visible
    unknown = sorted(c - set(scopes))
    if unknown:
        raise ValueError(f"collapse: unknown name scope {unknown[0]!r} (the trace has "
                         f"{', '.join(map(repr, scopes)) or 'no scopes'})")
    # A scope inside a collapsed scope is already hidden.
    return {s for s in c if _outermost(_parent(s) or "", c) is None}, visible


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    """``items`` cut into ceil(len / size) consecutive chunks of nearly equal length.

    >>> _chunks(list("abcdefg"), 3)
    [['a', 'b', 'c'], ['d', 'e'], ['f', 'g']]
    """
    k = -(-len(items) // size)
    base, extra = divmod(len(items), k)
    out, i = [], 0
    for j in range(k):
        n = base + (j < extra)
        out.append(items[i:i + n])
        i += n
    return out


def _group_runs(plan: _Plan) -> None:
    """Fill ``plan.groups``: runs of ops drawn as one node each, until the budget holds.

    The units are what would otherwise be drawn for ops: an op on its own or a
    collapsed scope, in forward order (the trace's ids are topological, so a
    run of consecutive units only has edges into later runs).  Runs are as
    short as the budget allows (:func:`_runs`): no more is hidden than must be.
    The tensors then follow their ops into the groups (:func:`_group_tensors`).
    """
    units: dict[tuple[str, Any], list[int]] = {}  # insertion order = forward order
    outer: dict[str, str | None] = {}
    for o in plan.trace.ops:
        if o.id in plan.drawn_ops and o.id not in plan.op_bundle:
            if o.scope not in outer:
                outer[o.scope] = _outermost(o.scope, plan.collapsed)
            s = outer[o.scope]
            units.setdefault(("scope", s) if s else ("op", o.id), []).append(o.id)

    for run in _runs(list(units)):
        if len(run) < 2:
            continue  # one op or one scope stays as it is
        n = len(plan.groups)
        ops = sorted(o for k in run for o in units[k])
        scopes = tuple(k[1] for k in run if k[0] == "scope")
        plan.groups.append(_Group(tuple(ops), scopes))
        for o in ops:
            plan.op_group[o] = n
        plan.absorbed.update(scopes)
    plan.collapsed -= plan.absorbed
    _group_tensors(plan)


def _runs(keys: list[tuple[str, Any]]) -> list[list[tuple[str, Any]]]:
    """Units (``("op", id)`` or ``("scope", name)``, in forward order) cut into runs.

    First, only the stretches of plain ops between collapsed scopes are cut,
    keeping every scope's name on the picture; when even one group per
    stretch is too many, every unit is cut into runs and the scopes are
    swallowed.

    >>> _runs([("op", 0), ("op", 1), ("scope", "s"), ("op", 3)])
    [[('op', 0), ('op', 1)], [('op', 3)]]
    """
    # Phase 1: stretches of plain ops between scopes.
    stretches: list[list[tuple[str, Any]]] = [[]]
    n_scopes = 0
    for k in keys:
        if k[0] == "scope":
            n_scopes += 1
            stretches.append([])
        else:
            stretches[-1].append(k)
    stretches = [r for r in stretches if r]

    def count(size: int) -> int:
        return n_scopes + sum(-(-len(r) // size) for r in stretches)

    longest = max((len(r) for r in stretches), default=1)
    if stretches and count(longest) <= AUTO_COLLAPSE_OPS:
        lo, hi = 2, longest  # the smallest run length that fits (count falls as it grows)
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if count(mid) <= AUTO_COLLAPSE_OPS else (mid + 1, hi)
        return [ch for r in stretches for ch in _chunks(r, lo)]
    # Phase 2: every unit, scopes included.
    return _chunks(keys, -(-len(keys) // AUTO_COLLAPSE_OPS))


def _group_tensors(plan: _Plan) -> None:
    """Fill ``plan.tensor_group``: tensors follow their ops into the groups.

    A leaf goes with its first consumer.  The xs and ys stay visible (their
    seed and result marks are what a reader looks for) unless there are many
    of them.
    """
    tr = plan.trace
    ends = {t for ts in (set(tr.xs), set(tr.ys)) if len(ts) <= _MAX_VISIBLE_ENDS for t in ts}
    hidden = plan.collapsed | plan.absorbed
    scope_group = {s: n for n, g in enumerate(plan.groups) for s in g.scopes}
    outer: dict[str, str | None] = {}
    for t in tr.tensors:
        if t.scope not in outer:
            outer[t.scope] = _outermost(t.scope, hidden)
        s = outer[t.scope]
        if s in plan.collapsed:
            continue  # in a scope that is still drawn as one node
        if t.id in ends or t.id in plan.tensor_bundle:
            continue
        if s is not None:
            n = scope_group.get(s)
        elif t.op is not None and t.op in plan.drawn_ops:
            n = plan.op_group.get(t.op)
        else:
            first = plan.readers.get(t.id)  # a leaf goes with its first consumer
            n = plan.op_group.get(first[0]) if first else None
        if n is not None:
            plan.tensor_group[t.id] = n
