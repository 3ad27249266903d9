"""A convolution's or a pool's window in words: its size, stride, dilation and padding.

The diagram's op label takes the short form (``window_text``); a backward step's
sentence ends with the long one, in the step's own numbers (``window_sentence``).

>>> window_text({"ksize": [3, 3], "strides": [2, 2], "dilations": [1, 1],
...              "padding": "SAME", "pads": [[0, 1], [0, 1]]})
'3×3, stride 2, SAME'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...trace import BackwardStep, OpInfo, Trace
from .formula import windows

__all__ = ["window_text", "window_sentence", "window_shapes"]

#: The op types whose attributes describe a window.
WINDOW_OPS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool",
              "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad")
_POOLS = ("MaxPool", "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad")


def _pair(v: Any) -> str:
    """``2`` for (2, 2), ``(2, 1)`` otherwise."""
    v = tuple(v)
    return str(v[0]) if v[0] == v[1] else str(v)


def _has_window(attrs: dict[str, Any]) -> bool:
    return all(k in attrs for k in ("ksize", "strides", "padding", "pads"))


def window_text(attrs: dict[str, Any]) -> str:
    """The window in a few words, for a diagram's op label: ``3×3, stride 2, SAME``."""
    if not _has_window(attrs):
        return ""
    kh, kw = attrs["ksize"]
    parts = [f"{kh}×{kw}"]
    if tuple(attrs["strides"]) != (1, 1):
        parts.append(f"stride {_pair(attrs['strides'])}")
    if tuple(attrs.get("dilations", (1, 1))) != (1, 1):
        parts.append(f"dilation {_pair(attrs['dilations'])}")
    if attrs["padding"] == "EXPLICIT":
        (t, b), (left, r) = attrs["pads"]
        parts.append(f"pad {t},{b},{left},{r}")
    else:
        parts.append(attrs["padding"])
    return ", ".join(parts)


def _padding_words(attrs: dict[str, Any], of_max: bool) -> str:
    (t, b), (left, r) = attrs["pads"]
    kind = {"SAME": "SAME padding", "VALID": "VALID padding",
            "EXPLICIT": "explicit padding"}.get(attrs["padding"], "padding")
    if not (t or b or left or r):
        return f"{kind}, which adds nothing"
    fill = " of -inf, which never wins," if of_max else " of zeros"
    return (f"{kind}{fill} adding {t} row{'s' * (t != 1)} above, {b} below, "
            f"{left} column{'s' * (left != 1)} left and {r} right")


def window_shapes(trace: Trace, op: OpInfo) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shapes of the input the window moved over and of the output it made, for a
    forward op or one of the gradient ops (which are given the input's shape, and take
    the forward's output, or a gradient shaped like it, as an input)."""
    in_shape = (op.attrs.get("input_sizes") or op.attrs.get("orig_input_shape")
                or trace.tensors[op.inputs[0]].shape)
    if op.type in ("Conv2D", "MaxPool", "AvgPool"):
        out = op.outputs[0]
    else:  # dy, the upstream gradient shaped as the forward's output (or pooled itself)
        out = op.inputs[0 if op.type == "AvgPoolGrad" else 1]
    return tuple(in_shape), tuple(trace.tensors[out].shape)


def window_sentence(trace: Trace, s: BackwardStep) -> str:
    """The step's window in its own numbers, a sentence to follow the rule's:
    "Here the 3×3 kernel moved with stride 2 over img (5×5), ... so it stood at 3×3
    positions." Empty for an op without a window."""
    op = trace.ops[s.op]
    attrs = op.attrs
    if s.op_type not in WINDOW_OPS or not _has_window(attrs):
        return ""
    try:
        in_shape, out_shape = window_shapes(trace, op)
        (kh, kw), (oh, ow) = attrs["ksize"], out_shape[1:3]
        h, w = in_shape[1:3]
    except (IndexError, KeyError, TypeError, ValueError):
        return ""
    pool = s.op_type in _POOLS
    what = f"the {kh}×{kw} {'window' if pool else 'kernel'}"
    moved = f"with stride {_pair(attrs['strides'])}" if tuple(attrs["strides"]) != (1, 1) \
        else "one step at a time"
    dil = ""
    if tuple(attrs.get("dilations", (1, 1))) != (1, 1):
        dil = f", its taps {_pair(attrs['dilations'])} apart (dilation),"
    pads = _padding_words(attrs, of_max=s.op_type.startswith("MaxPool"))
    text = (f" Here {what}{dil} moved {moved} over the {h}×{w} input, with {pads}, so it "
            f"stood at {oh}×{ow} positions")
    if s.op_type == "Conv2D" and tuple(attrs["strides"]) != (1, 1):
        text += (f"; for the input's gradient, the upstream gradient first gets "
                 f"{_gaps(attrs['strides'])}, for the positions the stride skipped, and "
                 "padding, so that the flipped kernel reaches every input cell")
    if s.op_type == "MaxPool":
        ties, at_zero = _ties(trace, op)
        if ties:
            zeros = (", all between zeros (a ReLU's, most likely)" if at_zero == ties
                     else f", {at_zero} of them between zeros" if at_zero else "")
            text += (f"; {ties} of the {oh * ow * out_shape[0] * out_shape[3]} windows had a "
                     f"tie for the maximum{zeros}, and in each the first maximum, reading row "
                     "by row, took the gradient")
    return text + "."


def _gaps(strides: Any) -> str:
    """The zeros a strided convolution's input gradient puts between upstream values:
    "1 zero between neighbours", "2 zeros between rows and 1 zero between columns"."""
    def zeros(n: int) -> str:
        return f"{n} zero{'' if n == 1 else 's'}"
    sh, sw = strides
    if sh == sw:
        return f"{zeros(sh - 1)} between neighbours"
    return f"{zeros(sh - 1)} between rows and {zeros(sw - 1)} between columns"


def _ties(trace: Trace, op: Any) -> tuple[int, int]:
    """How many windows of a MaxPool hold their maximum more than once, and how many of
    those have 0 as their maximum ((0, 0) if the trace does not keep the values)."""
    x = trace.tensors[op.inputs[0]].value
    if x is None or x.values is None:
        return 0, 0
    attrs = op.attrs
    pad = (tuple(tuple(p) for p in attrs["pads"]) if attrs["padding"] == "EXPLICIT"
           else attrs["padding"])
    patches = windows(np.asarray(x.values), tuple(attrs["ksize"]), tuple(attrs["strides"]),
                      pad, fill=-np.inf)
    top = patches.max(axis=(3, 4), keepdims=True)
    tied = (patches == top).sum(axis=(3, 4)) > 1
    return int(tied.sum()), int((tied & (top[:, :, :, 0, 0] == 0)).sum())
