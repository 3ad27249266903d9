"""The annotated diagram: a trace drawn as one graphviz layout, restyled per step.

The forward graph (tensors as rounded boxes, ops as ellipses, or an op and
its only output as one box, op above tensor; name scopes as clusters; in a trace too large to draw whole, collapsed scopes and runs of
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
``o{op}``              an op node; in the compact drawing (the default), an op with
                       one output is one node with it, and the output's ``t{tensor}``
                       and the edge ``o{op}_out0`` show as ``o{op}``
``e{op}_{i}``          the edge from the op's input ``i`` to the op
``o{op}_out{k}``       the edge from the op to its output ``k``
``seed{tensor}``       the seed mark of a y (``seed{tensor}_e``: its arrow)
``res{x_index}``       the result mark of an x (``res{x_index}_e``: its arrow)
``red{op}_{i}``        a broadcast reduction on the path of edge ``e{op}_{i}``, which
                       then runs from it to the op; ``..._e`` runs from the input
                       (or its ``acc``) to it and carries the summed gradient
``acc{tensor}``        a fan-out sum on the path from a tensor to the ops reading
                       it (their in-edges start at it); ``..._e`` runs from the
                       tensor to it and carries the total
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
['o0', 'e0_0', 'e0_1']
>>> step_ids(tr, 1, compact=False)
['o0', 'o0_out0', 't1', 'e0_0', 'e0_1']
>>> svg = to_svg(tr, step=1)
>>> svg.startswith("<svg") and 'id="e0_1"' in svg
True

The diagram is made in stages, one module of this package each; this is the public
API and the per-trace cache, and it offers every name of the others that
other code reaches as ``diagram.X``:

- :mod:`~gradviz.views.diagram.plan`: the options, and the plan: what is
  collapsed or grouped;
- :mod:`~gradviz.views.diagram.draw`: the plan drawn as a ``graphviz.Digraph``,
  stage by stage (``_Drawing``);
- :mod:`~gradviz.views.diagram.labels`: the text and colours of every node,
  edge and the legend;
- :mod:`~gradviz.views.diagram.layout`: the graph laid out by Graphviz, the
  ``dot`` program or the Graphviz inside pygraphviz (:func:`layout_engine`);
- :mod:`~gradviz.views.diagram.svg`: Graphviz's SVG output made smaller and
  cheaper to paint.
"""

from __future__ import annotations

import pathlib
import re
import threading
from collections.abc import Iterable
from importlib import resources
from typing import Any

import graphviz
import numpy as np

from .draw import LARGE_GRAPH_NODES, _draw
from .labels import COLORS
from . import layout
from .layout import LayoutError, layout_engine
from .plan import (AUTO_COLLAPSE_OPS, MAX_SCOPE_DEPTH, RANKDIRS, _build_plan, _Ids, _Options,
                   _opt_kwargs, _options, _Plan, made_once)
from . import slide
from .svg import _tidy
from ..files import check_path, write_bytes_atomic
from ..marks import MARKS
from ..options import ViewOptions, resolve_step, shown, view_options
from ...trace import (AccumulateStep, BackwardStep, CutStep, ForwardStep, JvpStep, ReduceStep,
                      ResultStep, SeedStep, Step, TangentStep, Trace)

# Not used here: offered for the code that reaches them as ``diagram.X`` (the
# tests) or looks for them here (ARCHITECTURE.md).
from .labels import MARK_FILLS, _op_detail
from .svg import _compact, _fold_translate, _straight_sides
from ..explain import format_shape

__all__ = [
    "RANKDIRS",
    "AUTO_COLLAPSE_OPS",
    "MAX_SCOPE_DEPTH",
    "LARGE_GRAPH_NODES",
    "COLORS",
    "to_dot",
    "to_svg",
    "to_png",
    "png_size",
    "layout_svg",
    "layout_engine",
    "LayoutError",
    "step_ids",
    "step_classes",
    "states",
    "styled_svg",
    "element_ids",
    "diagram_css",
]


# ---------------------------------------------------------------- the plan, cached


class _TraceCache:
    """One trace's drawings: a plan per options, and the lock under which each is made."""

    def __init__(self) -> None:
        self.plans: dict[_Options, _Plan] = {}  # each one whole: put in once drawn
        # Held while a plan is made, so that threads drawing the trace at once
        # share one making; reentrant, so a stage that draws under it cannot
        # deadlock.  (The trace's own records are made under the trace's lock.)
        self.lock = threading.RLock()

    def __deepcopy__(self, memo: dict) -> _TraceCache:
        return _TraceCache()  # a copied trace draws on its own


_CACHES_LOCK = threading.Lock()  # held only to give a trace its _TraceCache


def _cache(trace: Trace) -> _TraceCache:
    # One cache per trace object: the plans (and their layouts) live exactly as
    # long as the trace.
    return made_once(trace.__dict__, "_gv_diagram", _CACHES_LOCK, _TraceCache)


def _plan(trace: Trace, opts: _Options) -> _Plan:
    """The plan of ``trace`` drawn with ``opts``, its graph drawn: made once, then cached.

    A plan enters the cache only once it is whole; threads asking for it
    while it is made wait for it (the trace's lock), so none sees it half made.
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"expected a gradviz Trace, got {type(trace).__name__}")
    cache = _cache(trace)

    def make() -> _Plan:
        plan = _build_plan(trace, opts)
        plan.graph = _draw(plan)
        return plan

    return made_once(cache.plans, opts, cache.lock, make)


def _steps(trace: Trace) -> tuple[Step, ...]:
    """The trace's steps (which the trace makes once, however many threads ask)."""
    if not isinstance(trace, Trace):
        raise TypeError(f"expected a gradviz Trace, got {type(trace).__name__}")
    return trace.steps


# ---------------------------------------------------------------- public API


def to_dot(trace: Trace, *, rankdir: str = "TB", collapse: Any = None, values: bool = True,
           legend: bool = True, compact: bool = True, brief: bool = False,
           source: bool = True) -> graphviz.Digraph:
    """The forward graph plus every mark of the backward pass, as a ``graphviz.Digraph``.

    ``rankdir`` is the direction the forward pass runs (TB, LR, BT, RL);
    ``collapse`` is True (collapse every top-level name scope, then group runs
    of ops as auto does if more than :data:`AUTO_COLLAPSE_OPS` remain), False (none:
    every op is drawn, however long ``dot`` takes), None (auto: collapse the
    largest scopes, then if need be group runs of consecutive ops, until at
    most :data:`AUTO_COLLAPSE_OPS` nodes stand for ops) or an iterable of
    scope names; name scopes nest as clusters at most :data:`MAX_SCOPE_DEPTH`
    deep, deeper ones drawn in the cluster at that depth, which says so;
    ``values`` shows value previews on tensors and gradient labels;
    ``legend`` draws the legend as a node of the graph (the viewer, which has
    its own legend beside the diagram, leaves it out);
    ``compact`` draws an op with one output and that output as one node (the
    op's type on top, the tensor below), so the graph is about half as tall;
    ``compact=False`` draws every op as an ellipse and every tensor as a box;
    ``brief`` gives each node one short line and edges no gradient labels (the
    hover texts stay): the overview the viewer's "whole graph" fits;
    ``source=False`` leaves each op's line of code out of its hover text.

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
    if not isinstance(source, bool):
        raise ValueError(f"source must be True or False, got {source!r}")
    plan = _plan(trace if source else trace.without_source(),
                 _options(rankdir, collapse, values, legend, compact, brief))
    return plan.graph.copy()


def layout_svg(trace: Trace, **options: Any) -> str:
    """The laid-out diagram as SVG text with no step classes: laid out once per trace and options.

    The result is cached on the trace (per layout engine: see
    :mod:`~gradviz.views.diagram.layout`), so stepping through it never lays
    it out again.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> layout_svg(tr) is layout_svg(tr)
    True
    """
    plan = _plan(trace, _options(**options))
    engine = layout_engine()
    return made_once(plan.svgs, engine, plan.lock,
                     lambda: _tidy(layout.render(plan.graph.source)))


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
    [['o0', 'seed1', 'seed1_e'], ['t0', 'acc0', 'acc0_e', 'e0_0', 'e0_1'], ['t0', 'res0', 'res0_e']]
    """
    plan = _plan(trace, _options(**options))
    return list(plan_step_ids(plan, _check_step(trace, k)))


def plan_step_ids(plan: _Plan, k: int) -> list[str]:
    """The ids step ``k`` (in range) touches in ``plan``'s drawing: made once, then
    cached (treat the list as read-only)."""
    ids = plan.step_cache.get(k)
    if ids is None:
        # Made whole from the whole plan, then put in: threads asking at once
        # may each make the same list, and none sees a part of one.
        ids = plan.step_cache[k] = _step_ids(plan, plan.trace.steps[k])
    return ids


def _step_ids(plan: _Plan, s: Step) -> list[str]:
    tr = plan.trace
    on_path = plan.path_nodes

    def into(op: int, i: int, t: int) -> list[str]:
        # A gradient flowing back along an op's input edge reaches the
        # tensor itself only when no reduce or sum mark stands on the way.
        if f"red{op}_{i}" in on_path or f"acc{t}" in on_path:
            return [_Ids.in_edge(op, i)]
        return [_Ids.in_edge(op, i), f"t{t}"]

    raw: list[str] = []
    if isinstance(s, SeedStep):
        raw = [f"seed{s.tensor}", f"seed{s.tensor}_e"]
        if f"acc{s.tensor}" not in on_path:
            raw.insert(0, f"t{s.tensor}")
    elif isinstance(s, BackwardStep):
        op = tr.ops[s.op]
        raw.append(f"o{s.op}")
        for k, t in enumerate(op.outputs):
            if k < len(s.upstream) and s.upstream[k] is not None:
                raw += [_Ids.out_edge(s.op, k), f"t{t}"]
        for i, t in enumerate(op.inputs):
            if i < len(s.grads) and s.grads[i] is not None:
                raw += into(s.op, i, t)
    elif isinstance(s, ReduceStep):
        mid = f"red{s.op}_{s.input_index}"
        if mid in on_path:  # the summed gradient flows on to the input (or its fan-out sum)
            raw = [mid, f"{mid}_e"] + ([] if f"acc{s.tensor}" in on_path else [f"t{s.tensor}"])
        else:  # hidden in a collapsed scope or group: what stands for the edge
            raw = [_Ids.in_edge(s.op, s.input_index), mid, f"t{s.tensor}"]
    elif isinstance(s, AccumulateStep):
        raw = [f"t{s.tensor}", f"acc{s.tensor}", f"acc{s.tensor}_e"]
        for c in s.contributions:
            if c.op is None or c.input_index is None:
                raw.append(f"seed{s.tensor}_e")
            elif f"red{c.op}_{c.input_index}" in on_path:
                raw.append(f"red{c.op}_{c.input_index}_e")
            else:
                raw.append(_Ids.in_edge(c.op, c.input_index))
    elif isinstance(s, CutStep):
        if s.op is not None and s.input_index is not None:
            mid = f"cut{s.op}_{s.input_index}"
            if s.reason == "stop_gradient":  # the StopGradient's one step: the gradient at
                # its output arrives, and stops at the op
                raw = [f"o{s.op}"]
                for k, t in enumerate(tr.ops[s.op].outputs):
                    raw += [_Ids.out_edge(s.op, k), f"t{t}"]
            raw += [_Ids.in_edge(s.op, s.input_index), mid, f"{mid}_e"]
        else:
            mid = f"cutt{s.tensor}"
            raw = [f"t{s.tensor}", mid, f"{mid}_e"]
            op_id = tr.tensors[s.tensor].op
            if op_id is not None and op_id in plan.drawn_ops:
                raw.insert(0, _Ids.out_edge(op_id, tr.ops[op_id].outputs.index(s.tensor)))
    elif isinstance(s, ResultStep):
        raw = [f"t{s.tensor}", f"res{s.x_index}", f"res{s.x_index}_e"]
    elif isinstance(s, TangentStep):  # forward mode starts at the primal
        raw = [f"dir{s.x_index}", f"dir{s.x_index}_e", f"t{s.tensor}"]
    elif isinstance(s, ForwardStep):  # the tangents arrive along the edges, the op gives its own
        op = tr.ops[s.op]
        raw = [_Ids.in_edge(s.op, i) for i, t in enumerate(s.tangents_in) if t is not None]
        raw.append(f"o{s.op}")
        for k, t in enumerate(op.outputs):
            if k < len(s.tangents) and s.tangents[k] is not None:
                raw += [_Ids.out_edge(s.op, k), f"t{t}"]
    elif isinstance(s, JvpStep):
        raw = [f"t{s.tensor}", f"jvp{s.y_index}", f"jvp{s.y_index}_e"]
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
    first = plan.first_touch
    if first is None:
        with plan.lock:
            first = plan.first_touch
            if first is None:
                first = {}
                for s in plan.trace.steps:
                    for i in step_ids(plan.trace, s.index, **_opt_kwargs(plan.opts)):
                        first.setdefault(i, s.index)
                plan.first_touch = first  # whole, once made
    return first



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
    if step is None:
        return states(_first_touch(plan), (), None)
    k = _check_step(trace, step)
    return states(_first_touch(plan), step_ids(trace, k, **options), k)


def states(first: dict[str, int], active: Iterable[str], k: int | None) -> dict[str, str]:
    """Element id -> step state after step ``k``, from the step that first touches each
    (``first``) and the ids step ``k`` touches (``active``); ``k=None``: all done.

    The viewer's JavaScript (``static/viewer/diagram.js``) applies the same rule.

    >>> states({"a": 0, "b": 1, "c": 2}, ["b"], 1)
    {'a': 'gv-done', 'b': 'gv-active', 'c': 'gv-pending'}
    >>> states({"a": 0, "b": 1}, [], None)
    {'a': 'gv-done', 'b': 'gv-done'}
    """
    if k is None:
        return {i: "gv-done" for i in first}
    active = set(active)
    return {i: "gv-active" if i in active else ("gv-done" if f < k else "gv-pending")
            for i, f in first.items()}


_G_OPEN = re.compile(r'<g id="([^"]*)" class="([^"]*)"')


def to_svg(trace: Trace, step: int | None = None, *, legend: bool = True, brief: bool = False,
           crop: bool = False, inline: bool | None = None, **options: Any) -> str:
    """The diagram as one SVG string showing the state after ``step``.

    It is the cached layout of :func:`layout_svg` with ``diagram.css``
    embedded in a ``<style>`` element and the step classes set; ``step=None``
    shows the whole pass done.  The output is deterministic.  ``options`` are
    the view options every renderer takes (:mod:`gradviz.views.options`):
    ``start_step`` is ``step``'s other name; ``values="gradient"`` or
    ``"forward"`` hides the other kind, ``"none"`` lays the diagram out without
    any; ``font_size`` scales the picture so that its smallest text is that
    many px; ``bookkeeping`` has nothing to hide in a bare SVG; ``practice``
    hides the gradient values, a worksheet to fill in.  ``legend`` and
    ``brief`` are the diagram's own (see :func:`to_dot`).

    ``crop=True`` makes a picture for a slide: the part of the drawing around
    what the step touches, whole boxes only, 16:9 and 1280 px wide (a 16:9
    slide's width at 96 dpi); it needs a step.  ``inline=True`` (the default
    when cropping) writes the step's look into the SVG itself, as attributes,
    with no ``<style>`` and no filter, so it looks the same in a browser,
    librsvg, Inkscape, PowerPoint and Keynote (:mod:`~gradviz.views.diagram.slide`).

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> '<g id="res0" class="node gv-mark gv-result gv-pending"' in to_svg(tr, step=0)
    True
    >>> to_svg(tr, start_step=0) == to_svg(tr, step=0)
    True
    >>> slide = to_svg(tr, step=1, crop=True, legend=False)
    >>> "<style" in slide, 'width="1280" height="720"' in slide
    (False, True)
    """
    opts = view_options("to_svg", **options)
    trace = shown(trace, opts)
    if step is not None and opts.start_step is not None:
        raise TypeError("to_svg() got both step and start_step: they are one option, give one")
    if opts.start_step is not None:
        step = resolve_step(opts.start_step, len(_steps(trace)), None)
    for name, flag in (("crop", crop), ("inline", inline)):
        if not (isinstance(flag, bool) or (name == "inline" and flag is None)):
            raise TypeError(f"to_svg(): {name} must be True or False, got {flag!r}")
    if crop and step is None:
        raise ValueError("to_svg(crop=True) crops about a step: give step=k (0 is the first "
                         "step, -1 the last), or leave crop out for the whole pass")
    if crop and opts.font_size is not None:
        raise ValueError("to_svg(crop=True) sizes the picture for a slide itself: leave out "
                         "font_size, or leave out crop and give font_size for the whole diagram")
    kwargs = {**opts.layout, "values": opts.values != "none", "legend": legend, "brief": brief}
    svg = styled_svg(layout_svg(trace, **kwargs), step_classes(trace, step, **kwargs), opts)
    if crop:
        svg = slide.crop(svg, step_ids(trace, step, **kwargs))
    if crop if inline is None else inline:
        svg = slide.inline_look(svg, diagram_css())
    return svg


def to_png(trace: Trace, path: Any, step: int | None = None, *, width: int | None = None,
           **options: Any) -> pathlib.Path:
    """Write the picture :func:`to_svg` makes (its look written in) to ``path`` as a PNG.

    ``width`` is the PNG's width in px (its height follows the picture):
    by default 1920 for a cropped picture (a 1080p slide), else twice the
    diagram's own size.  ``options`` are :func:`to_svg`'s (``crop``,
    ``legend``, the view options).  The PNG is drawn by resvg, which comes in
    the ``resvg-py`` wheel, and the file written all at once; the path is the
    one written.

    >>> import gradviz as gv, pathlib, tempfile
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> out = to_png(gv.trace_gradients(x * x, x), pathlib.Path(tempfile.mkdtemp()) / "s.png",
    ...              step=1, crop=True)
    >>> out.read_bytes()[:8] == b"\\x89PNG\\r\\n\\x1a\\n", png_size(out.read_bytes())
    (True, (1920, 1080))
    """
    target = check_path(path, "step.png")
    if width is not None and (isinstance(width, bool) or not isinstance(width, int)
                              or not 16 <= width <= MAX_PNG_WIDTH):
        raise ValueError(f"to_png(): width must be a whole number of px from 16 to "
                         f"{MAX_PNG_WIDTH}, got {width!r}")
    options.setdefault("inline", True)
    svg = to_svg(trace, step, **options)
    if width is None:
        width = 1920 if options.get("crop") else 2 * round(_svg_width(svg))
        width = max(16, min(width, MAX_PNG_WIDTH))
    write_bytes_atomic(target, slide.png(svg, width))
    return target


#: The widest PNG :func:`to_png` draws, in px (8K).
MAX_PNG_WIDTH = 7680


def _svg_width(svg: str) -> float:
    """The SVG's width in px, from its root's ``width`` (px, or pt at 4/3 px)."""
    m = re.search(r'<svg[^>]* width="([\d.]+)(pt|px)?"', svg)
    if not m:
        return 800.0
    return float(m.group(1)) * (4 / 3 if m.group(2) == "pt" else 1)


def png_size(data: bytes) -> tuple[int, int]:
    """The (width, height) a PNG's header gives, in px.

    >>> png_size(bytes(16) + (640).to_bytes(4, "big") + (360).to_bytes(4, "big"))
    (640, 360)
    """
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def styled_svg(svg: str, classes: dict[str, str], opts: ViewOptions) -> str:
    """A laid-out ``svg`` standing alone: each element's step state from ``classes``
    (id -> class), the root's classes and size for ``opts``, ``diagram.css`` inside.

    >>> from gradviz.views.options import view_options
    >>> out = styled_svg('<svg class="gv-svg"><g id="a" class="node">', {"a": "gv-done"},
    ...                  view_options("to_svg", values="forward"))
    >>> out.startswith('<svg class="gv-svg gv-hide-grad">'), '<g id="a" class="node gv-done">' in out
    (True, True)
    """
    def restyle(m: re.Match) -> str:
        state = classes.get(m.group(1))
        if state is None:
            return m.group(0)
        return f'<g id="{m.group(1)}" class="{m.group(2)} {state}"'

    svg = _svg_root(_G_OPEN.sub(restyle, svg), opts)
    head_end = svg.index(">", svg.index("<svg")) + 1
    return svg[:head_end] + "\n<style>\n" + diagram_css() + "</style>" + svg[head_end:]


_FONT_SIZE = re.compile(r' font-size="([\d.]+)"')


def _svg_root(svg: str, opts: ViewOptions) -> str:
    """The ``<svg>`` element's classes (values hidden) and size (``font_size``) for ``opts``."""
    # practice=True: a worksheet, its gradients left to fill in.
    grads = opts.shows_gradients and not opts.practice
    hide = " ".join(c for c, shown in (("gv-hide-grad", grads),
                                       ("gv-hide-forward", opts.shows_forward)) if not shown)
    if hide and opts.values != "none":
        svg = svg.replace('<svg class="gv-svg"', f'<svg class="gv-svg {hide}"', 1)
    if opts.font_size is not None:
        sizes = [float(f) for f in _FONT_SIZE.findall(svg)]
        if sizes:  # dot's sizes are in pt, the viewBox's unit: 4/3 px each
            scale = opts.font_size / (min(sizes) * 4 / 3)
            svg = _scaled(svg, scale)
    return svg


def _scaled(svg: str, scale: float) -> str:
    """The SVG drawn ``scale`` times its size (its viewBox, and so its layout, unchanged)."""
    def size(m: re.Match) -> str:
        return f'{m.group(1)}="{float(m.group(2)) * scale:.2f}pt"'

    head_end = svg.index(">") + 1
    return re.sub(r'(width|height)="([\d.]+)pt"', size, svg[:head_end]) + svg[head_end:]


def element_ids(trace: Trace, **options: Any) -> list[str]:
    """Every id the layout's SVG gives a node, edge or cluster, in document order.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dg_x")
    >>> sorted(element_ids(gv.trace_gradients(x * x, x)))
    ['acc0', 'acc0_e', 'e0_0', 'e0_1', 'legend', 'o0', 'res0', 'res0_e', 'seed1', 'seed1_e', 't0']
    """
    return [m.group(1) for m in _G_OPEN.finditer(layout_svg(trace, **options))
            if m.group(1) != "graph0"]


_CSS: str | None = None


def diagram_css() -> str:
    r"""The step-state rules, ``gradviz/views/static/diagram.css``, in the marks' colours.

    The file names a mark's colour as ``$mark``; the mark table gives it.

    >>> css = diagram_css()
    >>> ".gv-active" in css, "$" in re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    (True, False)
    """
    global _CSS
    if _CSS is None:
        text = resources.files("gradviz.views").joinpath("static/diagram.css").read_text("utf-8")
        _CSS = fill_mark_colors(text)
    return _CSS


def fill_mark_colors(css: str) -> str:
    """``css`` with each ``$mark`` outside comments replaced by that mark's colour.

    >>> fill_mark_colors("stroke: $cut;")
    'stroke: #D55E00;'
    >>> fill_mark_colors("stroke: $plaid;")
    Traceback (most recent call last):
    ...
    ValueError: diagram.css names the colour of an unknown mark $plaid (the marks: tensor, op, gradient, seed, reduce, accumulate, cut, result, unconnected, tangent, direction, jvp, scope, group, bundle, active)
    """
    def color(m: re.Match) -> str:
        if m.group(1) not in MARKS:
            raise ValueError(f"diagram.css names the colour of an unknown mark ${m.group(1)} "
                             f"(the marks: {', '.join(MARKS)})")
        return MARKS[m.group(1)].color

    parts = re.split(r"(/\*.*?\*/)", css, flags=re.DOTALL)  # odd parts: the comments
    return "".join(p if i % 2 else re.sub(r"\$([a-z_]+)", color, p) for i, p in enumerate(parts))


def mark_colors(mark: str) -> dict[str, str]:
    """The border ("stroke") and "fill" of a mark as the legend draws it.

    Both legends, the diagram's and the viewer's, take them from the mark table.

    >>> mark_colors("seed"), mark_colors("gradient")
    ({'stroke': '#BF6F00', 'fill': '#FBE8C4'}, {'stroke': '#0072B2', 'fill': 'none'})
    """
    m = MARKS[mark]
    return {"stroke": m.color, "fill": m.fill}
