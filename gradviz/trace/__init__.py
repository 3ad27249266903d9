"""The trace: a backward pass recorded as plain data, on top of the engine.

- :mod:`~gradviz.trace.records`: the records (arrays, the forward graph, the step kinds).
- :mod:`~gradviz.trace.recorder`: the :class:`Recorder` the engine's walk reports to
  (and the :class:`TangentRecorder` a forward pass reports to),
  and the packaging of a finished walk as a :class:`Trace`.
- :mod:`~gradviz.trace.tracing`: ``trace_gradients``, and the tape and the forward
  accumulator that can trace.
- :mod:`~gradviz.trace.trace`: the :class:`Trace` itself; :mod:`~gradviz.trace.json_form`
  and :mod:`~gradviz.trace.fields`: its JSON form, and every check a loaded trace passes.

The trace imports the engine and nothing of the views (see ARCHITECTURE.md).
"""

from .records import (CUT_REASONS, FORWARD_RULES, IMAGE_LIMIT, PREVIEW_LIMIT, STEP_KINDS,
                      AccumulateStep, ArrayData, BackwardStep, Contribution, CutStep, ForwardStep,
                      JvpStep, OpInfo, ReduceStep, ResultStep, SeedStep, Step, TangentStep,
                      TensorInfo)
from .recorder import Recorder, TangentRecorder
from .trace import Trace
from .tracing import ForwardAccumulator, GradientTape, trace_gradients

# names the trace had when it was one module, kept where code may look for them
from ..engine.graph import NOT_TEXT as NOT_TEXT
from .fields import check_title as check_title
from .records import FORMAT_VERSION as FORMAT_VERSION, HEAD_LIMIT as HEAD_LIMIT

__all__ = [
    "PREVIEW_LIMIT",
    "IMAGE_LIMIT",
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
    "TangentStep",
    "ForwardStep",
    "JvpStep",
    "Step",
    "STEP_KINDS",
    "CUT_REASONS",
    "FORWARD_RULES",
    "Trace",
    "Recorder",
    "TangentRecorder",
    "ForwardAccumulator",
    "GradientTape",
    "trace_gradients",
]

# In IPython, the engine is told which cell runs, so that an op's line names its cell
# (gradviz.trace.source: cells of one text share one file name)
from .source import watch_cells as _watch_cells  # noqa: E402

_watch_cells()
