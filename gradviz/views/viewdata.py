"""The view data: everything a step-through viewer needs, as JSON-safe plain data.

The JupyterLab widget and the HTML report both consume :func:`view_data`: the
diagram laid out once (``svg``), its step CSS (``css``), and per step the SVG
element ids it touches, its words and the arrays involved.  The browser steps
through it with no kernel and no further layout.

>>> import json
>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="vd_x")
>>> data = view_data(gv.trace_gradients(x * x, x))
>>> [s["kind"] for s in data["steps"]]
['seed', 'backward', 'accumulate', 'result']
>>> data["steps"][2]["ids"]
['t0', 'acc0', 'acc0_e', 'e0_0', 'e0_1']
>>> [a["label"] for a in data["steps"][2]["arrays"]]
['g1: from Mul input 0', 'g2: from Mul input 1', 'total dL/dvd_x']
>>> data["results"][0]["array"]["values"]
[2.0, 4.0]
>>> json.loads(json.dumps(data)) == data
True
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import numpy as np

from . import explain, practice
from .diagram import (AUTO_COLLAPSE_OPS, _opt_kwargs, _options, _plan, _Options, _Plan,
                      diagram_css, layout_svg, mark_colors, step_ids)
from .diagram.live import LiveLayouts, live_svg
from .diagram.scopes import ALL_CLOSED, scope_tree, view_options as scope_view_options
from .navigation import scope_views, step_scope
from .options import ViewOptions, resolve_step, shown, view_options
from ..trace import ArrayData, Step, Trace
from ..trace.records import _json_number as _number  # NaN and infinities as "nan", "inf", "-inf"

__all__ = ["view_data", "trace_data", "view_settings", "drawing_options", "array_dict", "step_arrays",
           "STEP_VALUES_BUDGET", "QUESTION_BYTES_BUDGET", "asked_questions", "OVERVIEW_OPS"]

#: At most this many numbers are written out in all the steps' arrays of one
#: payload (about 13 bytes each in JSON).  Past it, the largest arrays keep only
#: their summary (shape, min, mean, max), so that a long trace still fits the
#: report's 5 MB: a 5,000-op chain of (4,4) tensors has 10,000 step arrays,
#: which made 4 MB of a 6.8 MB payload; as summaries the payload is 4.7 MB.
#: bench/render.py's 1000-op model writes 24,000 numbers and keeps them all.
STEP_VALUES_BUDGET = 100_000

#: A drawing in which at most this many nodes stand for ops also comes as an
#: overview: the same layout brief and without values (``brief=True,
#: values=False``: one short line a node, no gradient labels), which the
#: viewer's "whole graph" shows.  Labels make a drawing large: a two-layer MLP
#: is 1030 x 1243 pt with them and about 375 x 510 pt brief, and only the
#: brief one fits a 1024 x 640 window with its text readable; a 20-op MLP's
#: overview fits a 1400 x 900 window.  Beyond about 30 ops the viewer says to
#: zoom in, as it does for the full drawing.  A larger drawing gets none
#: (``null``): one ``dot`` run less, and a payload no larger than before.
OVERVIEW_OPS = 40

#: At most this many bytes of JSON hold the steps' questions.  The first steps keep
#: theirs until the budget is spent: a lesson's trace asks 20 to 80 questions of
#: about 1.5 KB each, and a 5,000-op chain (4.4 MB without them) still fits the
#: report's 5 MB.
QUESTION_BYTES_BUDGET = 300_000


# ---------------------------------------------------------------- arrays


def _values(a: np.ndarray) -> Any:
    if a.dtype.kind == "f":
        if a.dtype == np.float32:
            # The shortest text that reads back as the same float32: 0.87629986,
            # not 0.8762998580932617 (what float() of a float32 gives).
            flat = [_number(float(np.format_float_positional(v, unique=True, trim="-")))
                    if np.isfinite(v) else _number(float(v)) for v in a.reshape(-1)]
        else:
            flat = [_number(float(v)) for v in a.reshape(-1)]
    elif a.dtype.kind == "b":
        flat = [bool(v) for v in a.reshape(-1)]
    else:
        flat = [int(v) for v in a.reshape(-1)]
    return _nest(flat, a.shape)


def _nest(flat: list, shape: tuple[int, ...]) -> Any:
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return flat
    step = math.prod(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _stat(v: float | None, dtype: str) -> float | None:
    """A summary number for JSON: None when there is no finite one.

    (Stats are float64: a float32 array's norm or mean can lie beyond float32's
    range, and is then written as the float64 it is, not as an infinity.)
    """
    if v is None or not math.isfinite(v):
        return None
    if dtype == "float32" and abs(v) <= _FLOAT32_MAX:
        # Written at the array's own precision, like its values: 2.187112e-09,
        # not 2.1871120470251526e-09 (the three stats were a third of the bytes
        # of an array shown as a summary).
        return float(np.format_float_positional(np.float32(v), unique=True, trim="-"))
    return float(v)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def array_dict(label: str, a: ArrayData, layout: str | None = None) -> dict[str, Any]:
    """One array of the view data: label, shape, dtype, values (small arrays only), stats.

    >>> from gradviz.trace import ArrayData
    >>> array_dict("g", ArrayData.of(np.array([1.0, np.nan], np.float32)))
    {'label': 'g', 'shape': [2], 'dtype': 'float32', 'values': [1.0, 'nan'], 'min': 1.0, 'max': 1.0, 'mean': 1.0, 'nonfinite': True}

    ``nonfinite`` is there only when true: a payload holds thousands of arrays.
    A four-dimensional array says how its axes read (``layout``): "NHWC" for
    images, "HWIO" for a convolution's kernel (see :func:`array_layout`).
    """
    return {
        "label": label,
        "shape": [int(d) for d in a.shape],
        "dtype": a.dtype,
        "values": None if a.values is None else _values(np.asarray(a.values)),
        "min": _stat(a.min, a.dtype),
        "max": _stat(a.max, a.dtype),
        "mean": _stat(a.mean, a.dtype),
        **_flagged(a.nonfinite),
        **({"layout": layout} if layout else {}),
    }


#: Where a convolution's kernel (height, width, in, out) is an op's input or output.
_KERNELS = {"Conv2D": ("in", 1), "Conv2DBackpropInput": ("in", 0),
            "Conv2DBackpropFilter": ("out", 0)}


def array_layout(trace: Trace, a: ArrayData | None) -> str | None:
    """How a four-dimensional array's axes read: "HWIO" when it is shaped as a kernel of
    a convolution in the trace (its value, or a gradient of it) and as no image of it,
    else "NHWC"; None for any other rank.

    >>> import gradviz as gv
    >>> x = gv.constant(np.zeros((1, 4, 4, 1)), name="lay_x")
    >>> w = gv.Variable(np.zeros((3, 3, 1, 2)), name="lay_w")
    >>> tr = gv.trace_gradients(gv.nn.conv2d(x, w, 1, "SAME"), w)
    >>> [array_layout(tr, tr.tensors[t].value) for t in tr.ops[-1].inputs]
    ['NHWC', 'HWIO']
    """
    if a is None or len(a.shape) != 4:
        return None
    kernels = trace.__dict__.get("_gv_kernel_shapes")
    if kernels is None:
        kernels, images = set(), set()
        for op in trace.ops:
            side, k = _KERNELS.get(op.type, (None, None))
            for t in [*op.inputs, *op.outputs]:
                shape = tuple(trace.tensors[t].shape)
                if len(shape) != 4:
                    continue
                mine = side is not None and t == (op.inputs if side == "in" else op.outputs)[k]
                (kernels if mine else images).add(shape)
        kernels = trace.__dict__["_gv_kernel_shapes"] = kernels - images
    return "HWIO" if tuple(a.shape) in kernels else "NHWC"


def _flagged(nonfinite: bool) -> dict[str, bool]:
    """``{"nonfinite": True}``, or nothing: the flag is sent only where it is up."""
    return {"nonfinite": True} if nonfinite else {}


def step_arrays(trace: Trace, step: Step) -> list[dict[str, Any]]:
    """The arrays a step involves, labelled the way the step's sentence speaks of them.

    (The labels are :func:`gradviz.views.explain.labelled_arrays`.)

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="vd_x2")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> [a["label"] for a in step_arrays(tr, tr.steps[1])]
    ['upstream dL/dMul...', 'dL/dvd_x2 (as input 0)', 'dL/dvd_x2 (as input 1)']
    """
    return [array_dict(label, a, array_layout(trace, a))
            for label, a in explain.labelled_arrays(trace, step)]


# ---------------------------------------------------------------- results


def _results(trace: Trace) -> list[dict[str, Any]]:
    """The results table: what each x got, asked of explain in one call."""
    out = []
    with explain.marked_values():
        words = explain.result_words(trace)
    forward_jacobian = explain.is_forward_jacobian(trace)
    for r in words:
        reason, reason_at = explain.value_spans(r.reason) if r.reason else (r.reason, [])
        last = r.rows[-1]
        answers = [_answer(row) for row in r.rows]
        # the tensor answered for: x (a forward Jacobian's rows are its target's tangents)
        tensor = trace.xs[r.x_index] if forward_jacobian else last.tensor
        if r.label is None:
            array = None
        elif r.array is not None:
            array = array_dict(r.label, r.array, array_layout(trace, r.array))
        else:  # a Jacobian too big to stack: its rows' (or columns') summaries
            shape = ([*trace.tensors[last.tensor].shape, *trace.tensors[tensor].shape]
                     if forward_jacobian else None)
            array = _rows_summary(r.label, answers, shape)
        # The L2 norm (Frobenius for a Jacobian): one number per x for the
        # compact results table of a trace with many xs.
        norms = [a.norm for a in answers if a is not None]
        norm = (_stat(math.hypot(*norms), answers[-1].dtype)
                if norms and all(n is not None for n in norms) and answers[-1] is not None
                else None)
        out.append({"x_index": r.x_index, "name": r.name, "step": last.index,
                    "shape": [int(d) for d in trace.tensors[tensor].shape],
                    "status": last.status, "reason": reason, "norm": norm, "array": array,
                    **({"reason_values_at": reason_at} if reason_at else {})})
    return out


def _answer(row: Step) -> ArrayData | None:
    """A result's array: a result step's gradient, a forward trace's tangent."""
    return row.tangent if row.kind == "jvp" else row.grad


def _rows_summary(label: str, grads: list[ArrayData],
                  shape: list[int] | None = None) -> dict[str, Any]:
    """A Jacobian whose rows kept only their summaries: the rows' summaries combined
    (``shape``: the Jacobian's, where its rows are not its first axis)."""
    finite = [g for g in grads if g.min is not None]
    shape = [len(grads)] + list(grads[0].shape) if shape is None else [int(d) for d in shape]
    dtype = grads[0].dtype
    return {"label": label, "shape": shape, "dtype": dtype, "values": None,
            "min": _stat(min(g.min for g in finite), dtype) if finite else None,
            "max": _stat(max(g.max for g in finite), dtype) if finite else None,
            # (each row's mean over the rows: the mean of equal-sized rows, without overflow)
            "mean": _stat(sum(g.mean / len(finite) for g in finite), dtype) if finite else None,
            **_flagged(any(g.nonfinite for g in grads))}


# ---------------------------------------------------------------- the payload


def _op_nodes(plan: _Plan) -> int:
    """How many nodes stand for ops: each op drawn whole, and each scope or group hiding some."""
    return len({plan.alias.get(f"o{op}", f"o{op}") for op in plan.drawn_ops})


def _overview(trace: Trace, opts: _Options, plan: _Plan) -> str | None:
    """The drawing laid out brief and without values, for "whole graph"; None when not
    worth it.

    Neither changes an element id, so the viewer restyles it with the steps'
    ids as it does the full drawing.
    """
    if _op_nodes(plan) > OVERVIEW_OPS:
        return None
    return layout_svg(trace, **{**_opt_kwargs(opts), "values": False, "brief": True})


def _fit_values(steps: list[dict[str, Any]], budget: int) -> None:
    """Drop the values of the largest step arrays until at most ``budget`` numbers remain.

    Arrays of one size are kept or dropped together, so which arrays show
    their values does not depend on where they sit in the trace.
    """
    arrays = [a for s in steps for a in s["arrays"] if a["values"] is not None]
    sizes = [math.prod(a["shape"]) for a in arrays]
    if sum(sizes) <= budget:
        return
    per_size: Counter[int] = Counter()  # size -> the numbers all arrays of that size hold
    for n in sizes:
        per_size[n] += n
    limit, total = -1, 0
    for n in sorted(per_size):
        if total + per_size[n] > budget:
            break
        limit, total = n, total + per_size[n]
    for a, n in zip(arrays, sizes):
        if n > limit:
            a["values"] = None


def _questions(trace: Trace, budget: int) -> dict[int, list[dict[str, Any]]]:
    """step index -> its questions as JSON, in step order until ``budget`` bytes are spent
    (a step keeps all its questions or none)."""
    out: dict[int, list[dict[str, Any]]] = {}
    for s in trace.steps:
        asked, size = [], 0
        for q in practice.step_questions(trace, s):
            asked.append(_question_dict(trace, q))
            size += len(json.dumps(asked[-1])) + 2  # (a list's ", " between them)
            if size > budget:
                return out  # none is worked out past the budget
        if asked:
            budget -= size
            out[s.index] = asked
    return out


def _question_dict(trace: Trace, q: practice.Question) -> dict[str, Any]:
    """A question as JSON, its four-dimensional arrays saying how their axes read (the
    answer's ``layout`` places the focus in the picture the array panels draw)."""
    d = q.to_dict()
    layout = array_layout(trace, trace.tensors[q.tensor].value) if len(q.shape) == 4 else None
    if layout:
        d["layout"] = layout
    for g, (_, a) in zip(d["given"], q.given):
        if (given := array_layout(trace, a)) is not None:
            g["layout"] = given
    return d


class _SourceTable:
    """The lines of code of a payload's steps, each once (a line makes many ops)."""

    def __init__(self) -> None:
        self.rows: list[dict[str, str]] = []
        self._index: dict[Any, int] = {}

    def row(self, src: Any) -> int:
        k = self._index.get(src)
        if k is None:
            k = self._index[src] = len(self.rows)
            self.rows.append(explain.source_said(src))
        return k


def _step_entry(trace: Trace, s: Step, ids: list[str], source: _SourceTable) -> dict[str, Any]:
    """One step of the payload: its place in the walk, its SVG ``ids``, words and arrays.

    Its words and labelled arrays come from one call, :func:`explain.step_words`.
    ``values_at`` (only when there are any) says where the sentence and the
    formula write values: ``[start, end, start, end, ...]`` in UTF-16 units of
    the text ``sentence + "\n" + formula`` (flat and in one text: it is on
    almost every step of a payload that must stay within 5 MB).
    """
    with explain.marked_values():
        words = explain.step_words(trace, s)
    sentence, _ = explain.value_spans(words.sentence)
    text, values_at = explain.value_spans(f"{words.sentence}\n{words.formula or ''}")
    entry = {
        "index": s.index,
        "kind": s.kind,
        "scope": step_scope(trace, s),
        "pass": s.pass_index,
        "ops_visited": s.ops_visited,
        "bytes_held": s.bytes_held,
        **_flagged(s.nonfinite),
        "ids": ids,
        "title": words.title,
        "sentence": sentence,
        "formula": text[len(sentence) + 1:] if words.formula is not None else None,
        "arrays": [array_dict(label, a, array_layout(trace, a)) for label, a in words.arrays],
    }
    src = explain.step_source(trace, s)
    if src is not None:  # the line of code that made its op (or its tensor), by its row
        entry["source"] = source.row(src)
    if values_at:
        # Where the sentence and formula write gradient values, so that a viewer
        # with values hidden shows neither until asked.
        entry["values_at"] = values_at
    return entry


def view_data(trace: Trace, **options: Any) -> dict[str, Any]:
    """The JSON-safe payload for the viewer: one laid-out SVG plus every step's state.

    ``options`` are the view options (:mod:`gradviz.views.options`): the
    layout's (``rankdir``, ``collapse``, ``compact``) and the viewer's
    (``values``, ``start_step``, ``bookkeeping``, ``font_size``, ``practice``), which go in
    ``view`` (see :func:`view_settings`).  The diagram is always laid out with
    its values, so that a viewer that opens with them hidden can reveal them.
    It is :func:`trace_data` and :func:`view_settings` in one dict.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="vd_y")
    >>> view_data(gv.trace_gradients(x * x, x), values="none", start_step=-1)["view"]
    {'values': 'none', 'start_step': 3, 'bookkeeping': True, 'font_size': None, 'practice': False}
    """
    opts = view_options("view_data", **options)
    trace = shown(trace, opts)
    return {**trace_data(trace, opts), "view": view_settings(trace, opts)}


def view_settings(trace: Trace, opts: ViewOptions) -> dict[str, Any]:
    """How a viewer opens: the values shown, the first step, bookkeeping, text size, and
    whether it asks each step's question first (practice)."""
    return {"values": opts.values,
            "start_step": resolve_step(opts.start_step, len(trace.steps), 0),
            "bookkeeping": opts.bookkeeping,
            "font_size": opts.font_size,
            "practice": opts.practice}


def trace_data(trace: Trace, opts: ViewOptions, live: LiveLayouts | None = None) -> dict[str, Any]:
    """The payload's part that depends on the trace and the layout only (cached by the widget).

    With ``live`` (``gv.explore``), the drawing is a live template's, laid out
    once for every trace with the same template (:mod:`gradviz.views.diagram.live`):
    the payload then says which in ``layout``, so that a viewer given a new
    payload with the same ``layout`` keeps its diagram and changes its values
    only; and its steps ask no questions.

    The SVG leaves out the diagram's own legend: the viewer draws its legend
    beside the diagram, and a legend inside the SVG repeated it and was clipped
    whenever the viewer zoomed in to follow a step.  Shape::

        {"layout" (live only), "title", "method", "mode" ("forward" for a trace of forward
         mode, else "reverse"), "passes", "drawing_note" (None, or
         what the drawing left out and how to choose), "svg", "overview", "css",
         "edges": [[tail node, head node, edge id], ...] (the drawing's),
         "scopes": None, or the scope views (gradviz.views.navigation.scope_views),
         "steps": [{"index", "kind", "scope", "pass", "ops_visited", "bytes_held", "nonfinite" (if true),
                    "ids", "title", "sentence", "formula", "arrays": [array, ...],
                    "values_at" (optional): [start, end, ...] in sentence + "\n" + formula,
                    "source" (optional): its line of code's index in "sources",
                    "questions" (optional): [question, ...]}],
         "sources": [{"code", "place"}, ...]: the steps' lines of code, each once,
         "results": [{"x_index", "name", "step" (the step that gives it), "shape",
                      "status", "reason", "norm": float | None, "array": array | None,
                      "reason_values_at" (optional): [start, end, ...] in the reason}],
         "legend": [{"mark", "label", "stroke", "fill"}],
         "tensors": {"t3": {"name", "shape", "dtype", "op" (the op making it, if one does)}}}

    where an array is ``{"label", "shape", "dtype", "values" (nested list, or
    None for arrays of more than 64 values), "min", "max", "mean", "nonfinite" (only
    when true)}``
    and non-finite numbers are the strings "nan", "inf", "-inf".  In a long
    trace, the steps' largest arrays keep only their summary (values None) so
    that at most :data:`STEP_VALUES_BUDGET` numbers are written out.

    A question (:meth:`gradviz.views.practice.Question.to_dict`) is one gradient
    the step produces, asked: ``{"step", "kind", "tensor", "input_index",
    "target", "prompt", "given": [{"label", "shape", "values", "layout" (a
    four-dimensional array's)}], "shape", "answer", "layout" (a four-dimensional
    answer's), "focus" (the elements asked, or null: all of them), "rtol",
    "resolution" ({"eps", "tiny"}: the dtype's), "wrong": [{"kind", "title", "why",
    "shape", "values", "also" (optional)}], "same_as_right", "coincide_note",
    "shape_note", "hints": [formula, answer]}``,
    every number finite.  With ``practice`` only (:func:`with_questions`), steps
    keep their questions in order until :data:`QUESTION_BYTES_BUDGET` bytes are
    written.

    ``overview`` is the same drawing laid out brief and without values (same
    element ids), which the viewer shows for "whole graph", or None for a
    drawing of more than :data:`OVERVIEW_OPS` op nodes.
    """
    diagram_opts = drawing_options(trace, opts, live is not None)
    tree = scope_tree(trace) if live is None else None
    kwargs = _opt_kwargs(diagram_opts)
    plan = _plan(trace, diagram_opts)
    if live is None:
        svg, key, overview = layout_svg(trace, **kwargs), "", _overview(trace, diagram_opts, plan)
    else:  # ("whole graph" then zooms out the drawing: the values are what moves)
        (svg, key), overview = live_svg(trace, live, **kwargs), None
    sources = _SourceTable()
    steps = [_step_entry(trace, s, step_ids(trace, s.index, **kwargs), sources)
             for s in trace.steps]
    _fit_values(steps, STEP_VALUES_BUDGET)
    data = {
        **({"layout": key} if live is not None else {}),
        "title": trace.title,
        "method": trace.method,
        "mode": "forward" if trace.forward else "reverse",
        "passes": trace.passes,
        "drawing_note": _drawing_note(trace, plan),
        "svg": svg,
        "overview": overview,
        "css": diagram_css(),
        "steps": steps,
        "sources": sources.rows,
        "results": _results(trace),
        "legend": [{"mark": m, "label": label, **mark_colors(m)}
                   for m, label in explain.legend() if m in plan.marks or m == "active"],
        "tensors": {f"t{t.id}": {"name": t.name, "shape": list(t.shape), "dtype": t.dtype,
                                 **({"op": t.op} if t.op is not None else {})}
                    for t in trace.tensors},
        "scopes": scope_views(trace, tree, plan) if tree and tree.nodes else None,
        # the drawing's edges, (tail node, head node, edge id): a node's dependencies
        "edges": [list(e) for e in plan.edges],
    }
    return with_questions(trace, data) if opts.practice and live is None else data


def drawing_options(trace: Trace, opts: ViewOptions, live: bool = False) -> _Options:
    """The options of a payload's own drawing: the layout options, and with
    ``collapse=None`` (auto) a model too large to draw whole and in name scopes
    drawn with every scope closed (the reader opens what they look for)."""
    diagram_opts = _options(**opts.layout, legend=False, live=live)
    if live or diagram_opts.collapse is not None:
        return diagram_opts
    tree = scope_tree(trace)
    auto = _plan(trace, diagram_opts)
    if not tree.nodes or not (auto.collapsed or auto.groups):
        return diagram_opts
    closed = _options(**{**_opt_kwargs(diagram_opts), **scope_view_options(tree, ALL_CLOSED)})
    # (only where the scopes make a small drawing whose every box opens: not a model of
    # one scope too large to open, nor hundreds of ops outside any scope)
    if (all(tree.nodes[k].opens for k in tree.top)
            and _op_nodes(_plan(trace, closed)) <= AUTO_COLLAPSE_OPS):
        return closed
    return diagram_opts


def _drawing_note(trace: Trace, plan: Any) -> str | None:
    """What the viewer says above a drawing that could not draw every op (runs of ops
    drawn as one box each), and how to choose what is drawn; None when every op is."""
    groups = [g for g in plan.groups if not g.repeat]
    if not groups:
        return None
    grouped, drawn = sum(len(g.ops) for g in groups), len(plan.drawn_ops)
    which = "all of them" if grouped == drawn else f"{grouped:,} of them"
    return (f"{drawn:,} ops: too many to draw one by one, so {which} are drawn as "
            f"{len(groups)} runs of consecutive ops (dashed boxes). Put the "
            "model's parts in gv.name_scope blocks to have them collapse by name, and pass "
            "collapse= (the scopes to draw as one box, or False for every op) to choose.")


def with_questions(trace: Trace, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (:func:`trace_data` of ``trace``) with each step's practice questions, the
    first steps' first, within :data:`QUESTION_BYTES_BUDGET`; ``data`` itself is left
    as it was.  Only a viewer that practises shows questions, so only its payload
    has them: without ``practice`` none is worked out.  ``trace_key`` says which trace
    it is (:func:`gradviz.views.practice.trace_key`), for the results a student hands
    in (:mod:`gradviz.views.practice.handin`)."""
    asked = asked_questions(trace)
    steps = [{**s, "questions": asked[k]} if k in asked else s
             for k, s in enumerate(data["steps"])]
    return {**data, "steps": steps, "trace_key": practice.trace_key(trace)}


def asked_questions(trace: Trace) -> dict[int, list[dict[str, Any]]]:
    """step index -> the questions a practising viewer asks there, as JSON (each step's
    own, in order, until :data:`QUESTION_BYTES_BUDGET` bytes are spent)."""
    return _questions(trace, QUESTION_BYTES_BUDGET)
