"""What a renderer asks for: a step's words (:func:`describe`).

:func:`describe` hands each step kind to its own module (``seed``,
``backward``, ``reduce``, ``accumulate``, ``cut``, ``result``); a new step
kind is a module there and a line here.
"""

from __future__ import annotations

import numpy as np

from ...trace import (AccumulateStep, BackwardStep, CutStep, ReduceStep, ResultStep, SeedStep,
                      Step, Trace)
from .accumulate import _accumulate
from .backward import _backward
from .cut import _cut
from .explanation import Explanation
from .reduce import _reduce
from .result import _result
from .seed import _seed

__all__ = ["describe"]


def describe(trace: Trace, step: int | Step) -> Explanation:
    """Title, sentence and formula for one step (an index into ``trace.steps`` or a step).

    >>> import gradviz as gv
    >>> X = gv.constant([[1.0, 2.0], [3.0, 4.0]], name="mm_X")
    >>> W = gv.constant([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], name="mm_W")
    >>> tr = gv.trace_gradients(gv.matmul(X, W), X)
    >>> print(describe(tr, 1).formula)
    dL/dmm_X = grad @ mm_W.T: (2,3) @ (3,2) -> (2,2) = [[21, 30], [21, 30]]
    """
    if isinstance(step, (int, np.integer)) and not isinstance(step, bool):
        n = len(trace.steps)
        if not -n <= int(step) < n:
            raise ValueError(f"step {int(step)} out of range: the trace has {n} steps "
                             f"(0..{n - 1})")
        step = trace.steps[int(step)]
    if isinstance(step, SeedStep):
        return _seed(trace, step)
    if isinstance(step, BackwardStep):
        return _backward(trace, step)
    if isinstance(step, ReduceStep):
        return _reduce(trace, step)
    if isinstance(step, AccumulateStep):
        return _accumulate(trace, step)
    if isinstance(step, CutStep):
        return _cut(trace, step)
    if isinstance(step, ResultStep):
        return _result(trace, step)
    raise TypeError(f"describe: expected a step index or a trace step, got {type(step).__name__}")

