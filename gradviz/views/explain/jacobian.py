"""Jacobian traces: one backward pass per row, found and stacked once per trace, and named."""

from __future__ import annotations

import math

import numpy as np

from ...trace import ArrayData, ResultStep, Trace
from .names import _name

__all__ = ["is_jacobian", "jacobian_array", "jacobian_name", "jacobian_rows"]


def jacobian_rows(trace: Trace, x_index: int) -> list[ResultStep]:
    """The result steps of xs[x_index], one per pass: in a Jacobian trace, row k is pass k.

    Found once per trace, not once per call.
    """
    by_x = trace.__dict__.get("_gv_result_rows")
    if by_x is None:
        by_x = {}
        for s in trace.steps:
            if isinstance(s, ResultStep):
                by_x.setdefault(s.x_index, []).append(s)
        trace.__dict__["_gv_result_rows"] = by_x
    return list(by_x.get(x_index, ()))


def jacobian_array(trace: Trace, x_index: int) -> ArrayData | None:
    """The whole Jacobian dy/dx of xs[x_index]: the passes' rows stacked, shaped y.shape + x.shape.

    None when some row is missing or kept only its summary (a large x).

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="ja_x")
    >>> with gv.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> jacobian_array(tape.trace_jacobian(y, x), 0).values.tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    # Stacked once per x: the steps, their words and the results all show it.
    cache = trace.__dict__.setdefault("_gv_jacobians", {})
    if x_index not in cache:
        cache[x_index] = _stack_rows(trace, jacobian_rows(trace, x_index))
    return cache[x_index]


def _stack_rows(trace: Trace, rows: list[ResultStep]) -> ArrayData | None:
    if not rows or any(r.grad is None or r.grad.values is None for r in rows):
        return None
    stacked = np.stack([np.asarray(r.grad.values) for r in rows])
    y_shape = trace.tensors[trace.ys[0]].shape if len(trace.ys) == 1 else None
    if y_shape is not None and math.prod(y_shape) == len(rows):
        stacked = stacked.reshape(tuple(y_shape) + stacked.shape[1:])
    return ArrayData.of(stacked)


def is_jacobian(trace: Trace) -> bool:
    """Whether the trace is a Jacobian of several passes, one row per pass."""
    return trace.method == "tape.jacobian" and trace.passes > 1


def jacobian_name(trace: Trace, x: str) -> str:
    """The Jacobian of the ys with respect to x, spelt as given: "dy/dx", "dy1/dy2/dx"."""
    ys = "/".join(_name(trace, y) for y in trace.ys)
    return f"d{ys}/d{x}"
