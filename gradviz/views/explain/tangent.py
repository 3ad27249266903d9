"""Forward mode's first and last steps in words: a primal's tangent, a target's tangent.

A forward pass starts where a backward pass ends: at the primals, each given the
direction it moves in (its tangent, ``dx``).  It ends at the targets, each with
its tangent ``dy = J·dx``, the Jacobian-vector product.  A Jacobian in forward
mode runs one pass per element of the sources, each moving that element alone:
pass k gives column k.
"""

from __future__ import annotations

import math

import numpy as np

from ...trace import ArrayData, JvpStep, TangentStep, Trace
from .explanation import Explanation, _pass_note
from .formatting import _named_shape, _small, format_array, format_shape
from .forward import tangent_name
from .names import _name, display_name

__all__ = ["forward_columns", "forward_jacobian_array", "is_forward_jacobian"]


def is_forward_jacobian(trace: Trace) -> bool:
    """Whether the trace is a Jacobian in forward mode: a pass per source element."""
    return trace.forward and trace.method.startswith("tape.jacobian")


def forward_columns(trace: Trace, x_index: int) -> list[JvpStep]:
    """The target's tangent in each pass that moved an element of xs[x_index], in order:
    the columns of the Jacobian for that source."""
    return list(_passes(trace)[1].get(x_index, ()))


def _passes(trace: Trace) -> tuple[dict[int, tuple[TangentStep, int]], dict[int, list[JvpStep]]]:
    """Found once per trace: each pass's tangent step and the element of its source it
    moves (the passes moving one source go through its elements in order, so element k
    gives column k + 1), and each source's columns."""
    found = trace.__dict__.get("_gv_forward_passes")
    if found is None:
        moved: dict[int, tuple[TangentStep, int]] = {}
        by_x: dict[int, list[JvpStep]] = {}
        count: dict[int, int] = {}  # source -> the passes that moved it so far
        for s in trace.steps:
            if isinstance(s, TangentStep):
                moved[s.pass_index] = (s, count.get(s.x_index, 0))
                count[s.x_index] = count.get(s.x_index, 0) + 1
            elif isinstance(s, JvpStep) and s.pass_index in moved:
                by_x.setdefault(moved[s.pass_index][0].x_index, []).append(s)
        found = trace.__dict__["_gv_forward_passes"] = (moved, by_x)
    return found


def forward_jacobian_array(trace: Trace, x_index: int) -> ArrayData | None:
    """The Jacobian dy/dx for xs[x_index] from its columns, shaped y.shape + x.shape; None
    where a column is None or kept only its summary.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="fj_x")
    >>> with gv.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> forward_jacobian_array(tape.trace_jacobian(y, x, mode="forward"), 0).values.tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    cache = trace.__dict__.setdefault("_gv_forward_jacobians", {})
    if x_index not in cache:
        cols = forward_columns(trace, x_index)
        if not cols or any(c.tangent is None or c.tangent.values is None for c in cols):
            cache[x_index] = None
        else:
            y_shape = tuple(trace.tensors[cols[0].tensor].shape)
            x_shape = tuple(trace.tensors[trace.xs[x_index]].shape)
            stacked = np.stack([np.asarray(c.tangent.values) for c in cols], axis=-1)
            if math.prod(x_shape) == len(cols):
                stacked = stacked.reshape(y_shape + x_shape)
            cache[x_index] = ArrayData.of(stacked)
    return cache[x_index]


def _tangent(trace: Trace, s: TangentStep) -> Explanation:
    x = _name(trace, s.tensor)
    d = tangent_name(x)
    if is_forward_jacobian(trace):
        element = _passes(trace)[0][s.pass_index][1]
        column = element + 1
        sentence = (f"Pass {s.pass_index + 1} of {trace.passes} moves element {element} of "
                    f"{_named_shape(x, s.tangent.shape)} alone: {d} is one there and zero "
                    f"elsewhere. This pass carries it forward through every op and gives "
                    f"column {column} of the Jacobian for {x}: forward mode costs one pass per "
                    f"element of the sources.")
        formula = f"{d} = e_{element} = {format_array(s.tangent)}"
    else:
        sentence = (f"{_named_shape(x, s.tangent.shape)}, primals[{s.x_index}], starts with "
                    f"its tangent {d}: the direction it moves in. Forward mode carries a "
                    f"tangent beside every value computed from {x}, op by op, as the program "
                    f"runs.")
        formula = f"{d} = tangents[{s.x_index}] = {format_array(s.tangent)}"
    if s.nonfinite:
        sentence += " Warning: the tangent holds NaN or Inf."
    return Explanation(f"tangent of {x}" + _pass_note(trace, s), sentence, formula)


def _tangent_arrays(trace: Trace, s: TangentStep) -> list[tuple[str, ArrayData]]:
    return [(f"tangent {tangent_name(_name(trace, s.tensor))}", s.tangent)]


def _jvp(trace: Trace, s: JvpStep) -> Explanation:
    y = display_name(trace.tensors[s.tensor], scoped=True)
    d = tangent_name(_name(trace, s.tensor))
    shape = trace.tensors[s.tensor].shape
    if s.status != "connected":
        reason = s.reason.rstrip(".") if s.reason else "no primal's tangent reaches it"
        if s.tangent is None:
            sentence = f"{y} (targets[{s.y_index}]) gets no tangent, None: {reason}."
            formula = f"{d} = None"
        else:
            sentence = (f"{y} (targets[{s.y_index}]) gets zeros shaped like it, "
                        f"{format_shape(shape)}: {reason}.")
            formula = f"{d} = zeros_like({y}) = {format_array(s.tangent)}"
        return Explanation(f"tangent of {y}" + _pass_note(trace, s), sentence, formula)
    if is_forward_jacobian(trace):
        moved, k = _passes(trace)[0][s.pass_index]
        cols = forward_columns(trace, moved.x_index)
        x = _name(trace, moved.tensor)
        sentence = (f"Column {k + 1} of the Jacobian d{_name(trace, s.tensor)}/d{x} is ready: "
                    f"{d}, how {_named_shape(y, shape)} moves when element {k} of {x} does")
        sentence += f": {format_array(s.tangent)}." if _small(s.tangent) else "."
        formula = f"column {k + 1} of d{_name(trace, s.tensor)}/d{x} = {format_array(s.tangent)}"
        if k == len(cols) - 1:
            full = forward_jacobian_array(trace, moved.x_index)
            sentence += (f" It is the last column: the Jacobian for {x} is complete, "
                         f"{len(cols)} passes, one column each")
            sentence += f": {format_array(full)}." if full is not None and full.size <= 6 else "."
            if full is not None:
                formula = f"d{_name(trace, s.tensor)}/d{x} = {format_array(full)}"
        return Explanation(f"tangent of {y}" + _pass_note(trace, s), sentence, formula)
    sentence = (f"The tangent of {_named_shape(y, shape)}, targets[{s.y_index}], is ready: "
                f"{d} = {_jvp_of(trace)}, how {y} moves when the primals move along their "
                f"tangents (a Jacobian-vector product, in one forward pass)")
    sentence += f": {format_array(s.tangent)}." if _small(s.tangent) else "."
    if s.tangent is not None and s.tangent.nonfinite:
        sentence += " Warning: it holds NaN or Inf."
    return Explanation(f"tangent of {y}" + _pass_note(trace, s), sentence,
                       f"{d} = {format_array(s.tangent)}")


def _jvp_of(trace: Trace) -> str:
    """The product a target's tangent is, in the primals' names: ``J·dx``, or for several
    primals the sum of each one's part, ``J_x·dx + J_w·dw``."""
    names = [_name(trace, x) for x in trace.xs]
    if len(names) == 1:
        return f"J\u00b7{tangent_name(names[0])}"
    parts = [f"J_{n}\u00b7{tangent_name(n)}" for n in names[:3]]
    return " + ".join(parts) + (" + \u2026" if len(names) > 3 else "")


def _jvp_arrays(trace: Trace, s: JvpStep) -> list[tuple[str, ArrayData]]:
    if s.tangent is None:
        return []
    d = tangent_name(_name(trace, s.tensor))
    if not is_forward_jacobian(trace):
        return [(f"tangent {d} = {_jvp_of(trace)}", s.tangent)]
    moved, k = _passes(trace)[0][s.pass_index]
    cols = forward_columns(trace, moved.x_index)
    x = _name(trace, moved.tensor)
    jname = f"d{_name(trace, s.tensor)}/d{x}"
    out = [(f"column {k + 1} of {jname}", s.tangent)]
    full = forward_jacobian_array(trace, moved.x_index) if k == len(cols) - 1 else None
    if full is not None:
        out.append((f"Jacobian {jname} (one column per pass)", full))
    return out
