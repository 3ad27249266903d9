"""The line of code behind a node or a step, in words.

A trace keeps, for each op, the line of code that made it
(:class:`gradviz.trace.source.Source`); a constant or Variable keeps its own,
and a computed tensor is its op's.  A step is about its op, or else its tensor.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="code_x")
>>> tr = gv.trace_gradients(x * x, x)
>>> src = step_source(tr, tr.steps[1])
>>> src.code, src.function, src.line > 0
('tr = gv.trace_gradients(x * x, x)', '<module>', True)
"""

from __future__ import annotations

from ...trace import Step, Trace
from ...trace.source import Source

__all__ = ["node_source", "step_source", "source_lines", "source_said"]


def node_source(trace: Trace, *, op: int | None = None, tensor: int | None = None
                ) -> Source | None:
    """The line that made op ``op``, or tensor ``tensor`` (a computed one: its op's)."""
    if op is not None:
        return trace.ops[op].source
    t = trace.tensors[tensor]
    return t.source if t.op is None else trace.ops[t.op].source


def step_source(trace: Trace, s: Step) -> Source | None:
    """The line behind a step: its op's, or else its tensor's."""
    op = getattr(s, "op", None)
    if op is not None:
        return node_source(trace, op=op)
    tensor = getattr(s, "tensor", None)
    return None if tensor is None else node_source(trace, tensor=tensor)


def source_said(src: Source) -> dict[str, str]:
    """A viewer's line: ``{"code": the line's text, "place": "In [3], line 2"}``."""
    return {"code": src.code, "place": src.place}


def source_lines(src: Source | None) -> list[str]:
    """A hover text's lines: the code, then where it is (a file in full)."""
    if src is None:
        return []
    where = src.where(full=True)
    return [f"from: {src.code}", f"at: {where}"] if src.code else [f"made at: {where}"]
