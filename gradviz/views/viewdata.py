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
['from Mul input 0', 'from Mul input 1', 'total dL/dvd_x']
>>> data["results"][0]["array"]["values"]
[2.0, 4.0]
>>> json.loads(json.dumps(data)) == data
True
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from . import explain
from .diagram import (_opt_kwargs, _options, _plan, diagram_css, layout_svg, mark_colors,
                      step_ids)
from .explain import display_name, input_names, is_jacobian, jacobian_name
from ..trace import (AccumulateStep, ArrayData, BackwardStep, CutStep, ReduceStep, ResultStep,
                     SeedStep, Step, Trace)
from ..trace.records import _json_number as _number  # NaN and infinities as "nan", "inf", "-inf"

__all__ = ["view_data", "array_dict", "step_arrays", "STEP_VALUES_BUDGET"]

#: At most this many numbers are written out in all the steps' arrays of one
#: payload (about 13 bytes each in JSON).  Past it, the largest arrays keep only
#: their summary (shape, min, mean, max), so that a long trace still fits the
#: report's 5 MB: a 5,000-op chain of (4,4) tensors has 10,000 step arrays,
#: which made 4 MB of a 6.8 MB payload; as summaries the payload is 4.7 MB.
#: bench/render.py's 1000-op model writes 24,000 numbers and keeps them all.
STEP_VALUES_BUDGET = 100_000


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


def array_dict(label: str, a: ArrayData) -> dict[str, Any]:
    """One array of the view data: label, shape, dtype, values (small arrays only), stats.

    >>> from gradviz.trace import ArrayData
    >>> array_dict("g", ArrayData.of(np.array([1.0, np.nan], np.float32)))
    {'label': 'g', 'shape': [2], 'dtype': 'float32', 'values': [1.0, 'nan'], 'min': 1.0, 'max': 1.0, 'mean': 1.0, 'nonfinite': True}
    """
    return {
        "label": label,
        "shape": [int(d) for d in a.shape],
        "dtype": a.dtype,
        "values": None if a.values is None else _values(np.asarray(a.values)),
        "min": _stat(a.min, a.dtype),
        "max": _stat(a.max, a.dtype),
        "mean": _stat(a.mean, a.dtype),
        "nonfinite": bool(a.nonfinite),
    }


def _name(trace: Trace, tid: int) -> str:
    return display_name(trace.tensors[tid])


def _backward_index(trace: Trace) -> dict[tuple[int, int], BackwardStep]:
    """(pass, op) -> that op's backward step, built once per trace.

    A reduce step needs the gradient before its reduction, which its op's
    backward step holds; this keeps finding it O(1).
    """
    idx = trace.__dict__.get("_gv_backward_index")
    if idx is None:
        idx = {(s.pass_index, s.op): s for s in trace.steps if isinstance(s, BackwardStep)}
        trace.__dict__["_gv_backward_index"] = idx
    return idx


def step_arrays(trace: Trace, step: Step) -> list[dict[str, Any]]:
    """The arrays a step involves, labelled the way the step's sentence speaks of them.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="vd_x2")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> [a["label"] for a in step_arrays(tr, tr.steps[1])]
    ['upstream dL/dMul...', 'dL/dvd_x2 (as input 0)', 'dL/dvd_x2 (as input 1)']
    """
    out: list[dict[str, Any]] = []
    if isinstance(step, SeedStep):
        label = f"seed grad_ys[{step.y_index}]" if step.given else "seed: ones (default)"
        out.append(array_dict(label, step.grad))
    elif isinstance(step, BackwardStep):
        op = trace.ops[step.op]
        for k, u in enumerate(step.upstream):
            if u is not None and k < len(op.outputs):
                out.append(array_dict(f"upstream dL/d{_name(trace, op.outputs[k])}", u))
        # Named as the step's formula names them: X * W gives "dL/dW", not "dL/db (W)".
        names = input_names(trace, step)
        for i, g in enumerate(step.grads):
            if g is not None and i < len(op.inputs):
                out.append(array_dict(f"dL/d{names[i]}", g))
    elif isinstance(step, ReduceStep):
        before = _backward_index(trace).get((step.pass_index, step.op))
        if (before is not None and step.input_index < len(before.grads)
                and before.grads[step.input_index] is not None):
            out.append(array_dict(f"before: summed over axes {tuple(step.axes)}",
                                  before.grads[step.input_index]))
        out.append(array_dict(f"after: dL/d{_name(trace, step.tensor)}", step.grad))
    elif isinstance(step, AccumulateStep):
        for c in step.contributions:
            if c.op is None:
                label = "from the seed"
            else:
                label = f"from {trace.ops[c.op].type} input {c.input_index}"
            out.append(array_dict(label, c.grad))
        out.append(array_dict(f"total dL/d{_name(trace, step.tensor)}", step.total))
    elif isinstance(step, ResultStep):
        if step.grad is not None and is_jacobian(trace):
            jname = jacobian_name(trace, _name(trace, step.tensor))
            out.append(array_dict(f"row {step.pass_index + 1} of {jname}", step.grad))
            full = (explain.jacobian_array(trace, step.x_index)
                    if step.pass_index == trace.passes - 1 else None)
            if full is not None:  # the last row completes the Jacobian: show it whole
                out.append(array_dict(f"Jacobian {jname} (one row per pass)", full))
        elif step.grad is not None:
            out.append(array_dict(f"dL/d{_name(trace, step.tensor)}", step.grad))
    elif isinstance(step, CutStep):
        pass  # a cut produces nothing
    return out


# ---------------------------------------------------------------- results


def _results(trace: Trace) -> list[dict[str, Any]]:
    out = []
    for x_index in range(len(trace.xs)):
        rs = explain.jacobian_rows(trace, x_index)  # one result per pass
        if not rs:
            continue
        last = rs[-1]
        name = display_name(trace.tensors[last.tensor], scoped=True)
        if is_jacobian(trace):
            # The answer of a Jacobian trace is the whole matrix, not the last pass's row.
            reason = last.reason or explain.describe_jacobian(trace, x_index).sentence
        else:
            reason = last.reason or explain.describe(trace, last).sentence
        if last.grad is None:
            array = None
        elif len(rs) == 1:
            array = array_dict(f"dL/d{name}", last.grad)
        else:
            array = _jacobian(trace, name, rs)
        # The L2 norm (Frobenius for a Jacobian): one number per x for the
        # compact results table of a trace with many xs.
        norms = [r.grad.norm for r in rs if r.grad is not None]
        norm = (_stat(math.hypot(*norms), last.grad.dtype)
                if norms and all(n is not None for n in norms) and last.grad is not None
                else None)
        out.append({"x_index": x_index, "name": name, "step": last.index,
                    "shape": [int(d) for d in trace.tensors[last.tensor].shape],
                    "status": last.status, "reason": reason, "norm": norm, "array": array})
    return out


def _jacobian(trace: Trace, name: str, rs: list[ResultStep]) -> dict[str, Any]:
    """One pass per row: stack the rows into the Jacobian when every row kept its values."""
    grads = [r.grad for r in rs]
    if any(g is None for g in grads):
        return array_dict(f"dL/d{name} (last of {len(rs)} passes)",
                          next(g for g in reversed(grads) if g is not None))
    label = f"Jacobian {jacobian_name(trace, name)} (one row per pass)"
    full = explain.jacobian_array(trace, rs[-1].x_index)
    if full is not None:
        return array_dict(label, full)
    # Too big to keep every value: combine the rows' summaries.
    finite = [g for g in grads if g.min is not None]
    shape = [len(grads)] + list(grads[0].shape)
    dtype = grads[0].dtype
    return {"label": label, "shape": shape, "dtype": dtype, "values": None,
            "min": _stat(min(g.min for g in finite), dtype) if finite else None,
            "max": _stat(max(g.max for g in finite), dtype) if finite else None,
            # (each row's mean over the rows: the mean of equal-sized rows, without overflow)
            "mean": _stat(sum(g.mean / len(finite) for g in finite), dtype) if finite else None,
            "nonfinite": any(g.nonfinite for g in grads)}


# ---------------------------------------------------------------- the payload


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


def _step_entry(trace: Trace, s: Step, ids: list[str]) -> dict[str, Any]:
    """One step of the payload: its place in the walk, its SVG ``ids``, words and arrays."""
    words = explain.describe(trace, s)
    return {
        "index": s.index,
        "kind": s.kind,
        "pass": s.pass_index,
        "ops_visited": s.ops_visited,
        "bytes_held": s.bytes_held,
        "nonfinite": bool(s.nonfinite),
        "ids": ids,
        "title": words.title,
        "sentence": words.sentence,
        "formula": words.formula,
        "arrays": step_arrays(trace, s),
    }


def view_data(trace: Trace, **options: Any) -> dict[str, Any]:
    """The JSON-safe payload for the viewer: one laid-out SVG plus every step's state.

    ``options`` are the diagram's (``rankdir``, ``collapse``, ``values``).  The
    SVG leaves out the diagram's own legend (``legend=False`` unless asked for):
    the viewer draws its legend beside the diagram, and a legend inside the SVG
    repeated it and was clipped whenever the viewer zoomed in to follow a step.
    Shape::

        {"title", "method", "passes", "svg", "css",
         "steps": [{"index", "kind", "pass", "ops_visited", "bytes_held", "nonfinite",
                    "ids", "title", "sentence", "formula", "arrays": [array, ...]}],
         "results": [{"x_index", "name", "step" (the step that gives it), "shape",
                      "status", "reason", "norm": float | None, "array": array | None}],
         "legend": [{"mark", "label", "stroke", "fill"}],
         "tensors": {"t3": {"name", "shape", "dtype"}}}

    where an array is ``{"label", "shape", "dtype", "values" (nested list, or
    None for arrays of more than 64 values), "min", "max", "mean", "nonfinite"}``
    and non-finite numbers are the strings "nan", "inf", "-inf".  In a long
    trace, the steps' largest arrays keep only their summary (values None) so
    that at most :data:`STEP_VALUES_BUDGET` numbers are written out.
    """
    opts = _options(**{"legend": False, **options})
    kwargs = _opt_kwargs(opts)
    plan = _plan(trace, opts)
    svg = layout_svg(trace, **kwargs)
    steps = [_step_entry(trace, s, step_ids(trace, s.index, **kwargs)) for s in trace.steps]
    _fit_values(steps, STEP_VALUES_BUDGET)
    marks = [m for m in explain.LEGEND if m in plan.marks or m == "active"]
    return {
        "title": trace.title,
        "method": trace.method,
        "passes": trace.passes,
        "svg": svg,
        "css": diagram_css(),
        "steps": steps,
        "results": _results(trace),
        "legend": [{"mark": m, "label": label, **mark_colors(m)}
                   for m, label in explain.legend(marks)],
        "tensors": {f"t{t.id}": {"name": t.name, "shape": list(t.shape), "dtype": t.dtype}
                    for t in trace.tensors},
    }
