"""What a renderer asks for: a step's words, its labelled arrays, or both in one call.

Each step kind has its own module (``seed``, ``backward``, ``reduce``,
``accumulate``, ``cut``, ``result``; forward mode's ``tangent`` for its first
and last steps and ``forward`` for an op's) with two functions: its words, and its
arrays labelled the way those words name them.  :data:`_KINDS` says which
module takes which kind of step; a new step kind is a module and a row there.
:func:`step_words` and :func:`result_words` are what the viewer's payload is
built from: one call per step, one call for the results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...trace import (AccumulateStep, ArrayData, BackwardStep, CutStep, ForwardStep, JvpStep,
                      ReduceStep, ResultStep, SeedStep, Step, TangentStep, Trace)
from .accumulate import _accumulate, _accumulate_arrays
from .backward import _backward, _backward_arrays
from .cut import _cut, _cut_arrays
from .explanation import Explanation
from .forward import _forward, _forward_arrays, tangent_name
from .formula import Formula
from .jacobian import is_jacobian, jacobian_array, jacobian_name, jacobian_rows
from .names import display_name
from .reduce import _reduce, _reduce_arrays
from .result import _result, _result_arrays, describe_jacobian
from .seed import _seed, _seed_arrays
from .tangent import (_jvp, _jvp_arrays, _tangent, _tangent_arrays, forward_columns,
                      forward_jacobian_array, is_forward_jacobian)

__all__ = ["describe", "step_formulas", "formula_mismatches", "labelled_arrays", "StepWords", "step_words", "ResultWords",
           "result_words"]

#: Each step kind: its record class, the function giving its words (an
#: Explanation), and the one giving its arrays as (label, array) pairs.
_KINDS = (
    (SeedStep, _seed, _seed_arrays),
    (BackwardStep, _backward, _backward_arrays),
    (ReduceStep, _reduce, _reduce_arrays),
    (AccumulateStep, _accumulate, _accumulate_arrays),
    (CutStep, _cut, _cut_arrays),
    (ResultStep, _result, _result_arrays),
    (TangentStep, _tangent, _tangent_arrays),
    (ForwardStep, _forward, _forward_arrays),
    (JvpStep, _jvp, _jvp_arrays),
)


def _kind(trace: Trace, step: int | Step, who: str) -> tuple[Step, Callable, Callable]:
    """The step (looked up when given as an index), its words and its arrays' labeller."""
    if isinstance(step, (int, np.integer)) and not isinstance(step, bool):
        n = len(trace.steps)
        if not -n <= int(step) < n:
            raise ValueError(f"step {int(step)} out of range: the trace has {n} steps "
                             f"(0..{n - 1})")
        step = trace.steps[int(step)]
    for cls, words, arrays in _KINDS:
        if isinstance(step, cls):
            return step, words, arrays
    raise TypeError(f"{who}: expected a step index or a trace step, got {type(step).__name__}")


def describe(trace: Trace, step: int | Step) -> Explanation:
    """Title, sentence and formula for one step (an index into ``trace.steps`` or a step).

    >>> import gradviz as gv
    >>> X = gv.constant([[1.0, 2.0], [3.0, 4.0]], name="mm_X")
    >>> W = gv.constant([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], name="mm_W")
    >>> tr = gv.trace_gradients(gv.matmul(X, W), X)
    >>> print(describe(tr, 1).formula)
    dL/dmm_X = grad @ mm_W.T: (2,3) @ (3,2) -> (2,2) = [[21, 30], [21, 30]]
    """
    step, words, _ = _kind(trace, step, "describe")
    return words(trace, step)


def step_formulas(trace: Trace, step: int | Step) -> tuple[Formula, ...]:
    """A step's formulas that run as NumPy (see :class:`Formula`); none for a step whose
    maths is not an expression (a cut, a result, a rule known only by its function).

    >>> import gradviz as gv
    >>> X = gv.constant([[1.0, 2.0], [3.0, 4.0]], name="sf_X")
    >>> W = gv.constant([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], name="sf_W")
    >>> (f,) = step_formulas(gv.trace_gradients(gv.matmul(X, W), X), 1)
    >>> f.expr, f.evaluate().tolist()
    ('grad @ sf_W.T', [[21.0, 30.0], [21.0, 30.0]])
    """
    return describe(trace, step).formulas


def formula_mismatches(trace: Trace, rtol: float = 1e-4) -> list[str]:
    """Every formula of every step run as NumPy and compared with what the engine computed.

    Returns one line per formula that gives a different array (or fails to run);
    none when the words are all true.  A formula whose arrays the trace keeps only
    as summaries (over 64 elements) cannot be run and is left out.

    >>> import gradviz as gv
    >>> x = gv.Variable([[1.0, 2.0], [3.0, 4.0]], name="fm_x")
    >>> formula_mismatches(gv.trace_gradients(gv.reduce_sum(gv.softmax(x * x), 0), x))
    []
    """
    out = []
    for step in trace.steps:
        for f in step_formulas(trace, step):
            want = f.result.values if f.result is not None else None
            if want is None:
                continue
            try:
                got = f.evaluate()
            except ValueError as e:
                if "only a summary" in str(e):
                    continue
                out.append(f"step {step.index}: {f}: {type(e).__name__}: {e}")
                continue
            except Exception as e:  # a formula that does not run is a wrong formula
                out.append(f"step {step.index}: {f}: {type(e).__name__}: {e}")
                continue
            if not _same(got, want, rtol):
                out.append(f"step {step.index}: {f}: gives {got.tolist()}, "
                           f"the engine {want.tolist()}")
    return out


def _same(got: np.ndarray, want: np.ndarray, rtol: float) -> bool:
    """Equal shapes and values, up to float rounding (NaN equal to NaN)."""
    if got.shape != want.shape:
        return False
    if want.dtype.kind not in "fc":
        return bool(np.array_equal(got, want))
    finite = np.abs(want[np.isfinite(want)])
    scale = float(finite.max()) if finite.size else 1.0
    return bool(np.allclose(got, want, rtol=rtol, atol=rtol * max(scale, 1e-30), equal_nan=True))


def labelled_arrays(trace: Trace, step: int | Step) -> list[tuple[str, ArrayData]]:
    """(label, array) for each array the step involves, named as its sentence names them.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="la_x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> [label for label, _ in labelled_arrays(tr, 1)]
    ['upstream dL/dMul...', 'dL/dla_x (as input 0)', 'dL/dla_x (as input 1)']
    """
    step, _, arrays = _kind(trace, step, "labelled_arrays")
    return arrays(trace, step)


@dataclass(frozen=True)
class StepWords:
    """Everything one step's entry says: its words and the arrays it shows, labelled."""

    title: str  # as describe() gives them
    sentence: str
    formula: str
    arrays: list[tuple[str, ArrayData]]  # (label, array), named as the sentence names them


def step_words(trace: Trace, step: int | Step) -> StepWords:
    """A step's title, sentence, formula and labelled arrays, in one call.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="sw_x")
    >>> words = step_words(gv.trace_gradients(x * x, x), 2)
    >>> words.title, [label for label, _ in words.arrays]
    ('accumulate', ['g1: from Mul input 0', 'g2: from Mul input 1', 'total dL/dsw_x'])
    """
    step, words, arrays = _kind(trace, step, "step_words")
    title, sentence, formula = words(trace, step)
    return StepWords(title, sentence, formula, arrays(trace, step))


@dataclass(frozen=True)
class ResultWords:
    """What the results say of one x: its name, why it got what it got, and the answer.

    In forward mode, the answers are the targets' tangents (``x_index`` is then the
    target's index), or a forward Jacobian's per source, one column per pass."""

    x_index: int
    name: str  # with its scope, e.g. "layer1/W"
    rows: list[ResultStep | JvpStep]  # its result step per pass: one, or one per row of a
    #   Jacobian (in forward mode, the target's tangent per pass)
    reason: str  # the result's own reason, else its sentence
    label: str | None  # the answer's label, e.g. "dL/dW"; None when x gets None
    # The answer: None when x gets None, or when a Jacobian's rows kept only
    # their summaries (too large to stack; ``rows`` hold them).
    array: ArrayData | None


def result_words(trace: Trace) -> list[ResultWords]:
    """Each x's result, in xs order (an x with no result step is left out).

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="rw_x")
    >>> (r,) = result_words(gv.trace_gradients(x * x, x))
    >>> r.name, r.label, r.array.values.tolist()
    ('rw_x', 'dL/drw_x', [2.0, 4.0])
    """
    if trace.forward:
        return _forward_results(trace)
    out = []
    for x_index in range(len(trace.xs)):
        rows = jacobian_rows(trace, x_index)  # one result per pass
        if not rows:
            continue
        last = rows[-1]
        name = display_name(trace.tensors[last.tensor], scoped=True)
        if is_jacobian(trace):
            # The answer of a Jacobian trace is the whole matrix, not the last pass's row.
            reason = last.reason or describe_jacobian(trace, x_index).sentence
        else:
            reason = last.reason or describe(trace, last).sentence
        label, array = _answer(trace, name, rows)
        out.append(ResultWords(x_index, name, rows, reason, label, array))
    return out


def _answer(trace: Trace, name: str,
            rows: list[ResultStep]) -> tuple[str | None, ArrayData | None]:
    """The label and array answering one x: its gradient, or its Jacobian (one row per pass)."""
    grads = [r.grad for r in rows]
    if grads[-1] is None:
        return None, None
    if len(rows) == 1:
        return f"dL/d{name}", grads[-1]
    if any(g is None for g in grads):  # some pass gave None: no whole Jacobian, show the last row
        return f"dL/d{name} (last of {len(rows)} passes)", grads[-1]
    label = f"Jacobian {jacobian_name(trace, name)} (one row per pass)"
    return label, jacobian_array(trace, rows[-1].x_index)


def _forward_results(trace: Trace) -> list[ResultWords]:
    """A forward trace's answers: each target's tangent, or for a Jacobian in forward mode
    each source's Jacobian, one column per pass."""
    out = []
    if is_forward_jacobian(trace):
        for x_index in range(len(trace.xs)):
            cols = forward_columns(trace, x_index)
            if not cols:
                continue
            name = display_name(trace.tensors[trace.xs[x_index]], scoped=True)
            last = cols[-1]
            reason = last.reason or describe(trace, last).sentence
            if any(c.tangent is None for c in cols):
                out.append(ResultWords(x_index, name, cols, reason, None, None))
                continue
            jname = jacobian_name(trace, name)
            label = (f"Jacobian {jname} (one column per pass)" if len(cols) > 1
                     else f"Jacobian {jname}")
            # (None: columns too large to stack; their summaries are shown)
            out.append(ResultWords(x_index, name, cols, reason, label,
                                   forward_jacobian_array(trace, x_index)))
        return out
    for s in trace.steps:
        if isinstance(s, JvpStep):
            name = display_name(trace.tensors[s.tensor], scoped=True)
            label = (None if s.tangent is None
                     else f"tangent {tangent_name(display_name(trace.tensors[s.tensor]))}")
            out.append(ResultWords(s.y_index, name, [s], s.reason or describe(trace, s).sentence,
                                   label, s.tangent))
    return out
