"""A result step in words: what each x finally gets, a gradient or a Jacobian's row."""

from __future__ import annotations

from ...trace import ArrayData, ResultStep, Trace
from .explanation import Explanation, _pass_note
from .formatting import _named_shape, _small, format_array, format_shape
from .jacobian import is_jacobian, jacobian_array, jacobian_name, jacobian_rows
from .names import _name, display_name

__all__ = ["describe_jacobian"]


def describe_jacobian(trace: Trace, x_index: int) -> Explanation:
    """The final result of a Jacobian trace for xs[x_index]: the whole Jacobian, one row per pass.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dj_x")
    >>> with gv.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> print(describe_jacobian(tape.trace_jacobian(y, x), 0).sentence)  # doctest: +ELLIPSIS
    The Jacobian dMul.../ddj_x for dj_x (2,), xs[0], is complete: 2 passes, one row each, make a (2,2) matrix: [[2, 0], [0, 4]].
    """
    rows = jacobian_rows(trace, x_index)
    if not rows:
        raise ValueError(f"x_index {x_index} has no result in this trace "
                         f"(it has {len(trace.xs)} xs)")
    t = trace.tensors[rows[-1].tensor]
    x = display_name(t, scoped=True)
    jname = jacobian_name(trace, x)
    full = jacobian_array(trace, x_index)
    dims = tuple(full.shape) if full is not None else (len(rows), *t.shape)
    shape = format_shape(dims)
    n = len(rows)
    if any(r.grad is None for r in rows):
        sentence = (f"{x} (xs[{x_index}]) gets None in {sum(r.grad is None for r in rows)} "
                    f"of the {n} passes, so its Jacobian {jname} has no value.")
        return Explanation(f"Jacobian for {x}", sentence, f"{jname} = None")
    kind = "matrix" if len(dims) == 2 else "array"
    sentence = (f"The Jacobian {jname} for {_named_shape(x, t.shape)}, xs[{x_index}], is "
                f"complete: {n} passes, one row each, make a {shape} {kind}")
    # Small enough to read in full: "... make a (2,2) matrix: [[2, 0], [0, 4]]."
    sentence += f": {format_array(full)}." if full is not None and full.size <= 6 else "."
    if any(r.nonfinite for r in rows):
        sentence += " Warning: it holds NaN or Inf."
    formula = f"{jname} = {format_array(full)}" if full is not None else f"{jname}: {shape}"
    return Explanation(f"Jacobian for {x}", sentence, formula)


def _result(trace: Trace, s: ResultStep) -> Explanation:
    x = display_name(trace.tensors[s.tensor], scoped=True)
    t_shape = trace.tensors[s.tensor].shape
    shape = format_shape(t_shape)
    if s.status == "connected" and is_jacobian(trace):
        row = s.pass_index + 1
        jname = jacobian_name(trace, x)
        sentence = f"Row {row} of the Jacobian {jname} ({_named_shape(x, t_shape)}, xs[{s.x_index}]) is ready"
        sentence += f": {format_array(s.grad)}." if _small(s.grad) else "."
        formula = f"row {row} of {jname} = {format_array(s.grad)}"
        if s.pass_index == trace.passes - 1:
            whole = describe_jacobian(trace, s.x_index)
            sentence += " It is the last row: " + whole.sentence[0].lower() + whole.sentence[1:]
            formula = whole.formula
        elif s.nonfinite:
            sentence += " Warning: it holds NaN or Inf."
        return Explanation(f"result for {x}" + _pass_note(trace, s), sentence, formula)
    if s.status == "connected":
        sentence = f"The final gradient for {_named_shape(x, t_shape)}, xs[{s.x_index}], is ready"
        sentence += f": {format_array(s.grad)}." if _small(s.grad) else "."
        also = [i for i, y in enumerate(trace.ys) if y == s.tensor]
        if also:
            sentence += (f" {x} is also a target, ys[{also[0]}], so its gradient includes its "
                         "own seed.")
        if s.nonfinite:
            sentence += " Warning: it holds NaN or Inf."
        formula = f"dL/d{x} = {format_array(s.grad)}"
    else:
        reason = s.reason.rstrip(".") if s.reason else (
            "no y depends on it" if s.status == "unconnected" else "it is an integer tensor")
        if s.status == "integer":
            mode = ""
        elif s.grad is None:
            mode = " (unconnected_gradients='none' gives None)"
        else:
            mode = " (unconnected_gradients='zero' gives zeros shaped like x)"
        if s.grad is None:
            sentence = f"{x} (xs[{s.x_index}]) gets None: {reason}{mode}."
            formula = f"dL/d{x} = None"
        else:
            sentence = (f"{x} (xs[{s.x_index}]) gets zeros shaped like it, {shape}: "
                        f"{reason}{mode}.")
            formula = f"dL/d{x} = zeros_like({x}) = {format_array(s.grad)}"
    return Explanation(f"result for {x}" + _pass_note(trace, s), sentence, formula)


def _result_arrays(trace: Trace, s: ResultStep) -> list[tuple[str, ArrayData]]:
    if s.grad is None:
        return []
    if not is_jacobian(trace):
        return [(f"dL/d{_name(trace, s.tensor)}", s.grad)]
    jname = jacobian_name(trace, _name(trace, s.tensor))
    out = [(f"row {s.pass_index + 1} of {jname}", s.grad)]
    full = jacobian_array(trace, s.x_index) if s.pass_index == trace.passes - 1 else None
    if full is not None:  # the last row completes the Jacobian: show it whole
        out.append((f"Jacobian {jname} (one row per pass)", full))
    return out
