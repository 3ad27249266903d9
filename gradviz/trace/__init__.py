"""The trace: a backward pass recorded as plain data, on top of the engine.

- :mod:`~gradviz.trace.records`: the records (arrays, the forward graph, the step kinds).
- :mod:`~gradviz.trace.recorder`: the :class:`Recorder` the engine's walk reports to,
  and the packaging of a finished walk as a :class:`Trace`.
- :mod:`~gradviz.trace.tracing`: ``trace_gradients`` and the tape that can trace.
- :mod:`~gradviz.trace.trace`: the :class:`Trace` itself; :mod:`~gradviz.trace.json_form`
  and :mod:`~gradviz.trace.fields`: its JSON form, and every check a loaded trace passes.

The trace imports the engine and nothing of the views (see ARCHITECTURE.md).
"""

from .records import (CUT_REASONS, PREVIEW_LIMIT, STEP_KINDS, AccumulateStep, ArrayData,
                      BackwardStep, Contribution, CutStep, OpInfo, ReduceStep, ResultStep,
                      SeedStep, Step, TensorInfo)
from .recorder import Recorder
from .trace import Trace
from .tracing import GradientTape, trace_gradients

__all__ = [
    "PREVIEW_LIMIT",
    "ArrayData",
    "TensorInfo",
    "OpInfo",
    "Contribution",
    "SeedStep",
    "BackwardStep",
    "ReduceStep",
    "AccumulateStep",
    "CutStep",
    "ResultStep",
    "Step",
    "STEP_KINDS",
    "CUT_REASONS",
    "Trace",
    "Recorder",
    "GradientTape",
    "trace_gradients",
]
