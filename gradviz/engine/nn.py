"""Convolution and pooling, NHWC as TensorFlow's ``tf.nn``, and the ``gv.nn`` namespace.

``conv2d``, ``conv1d``, ``max_pool2d``, ``avg_pool2d`` and ``bias_add`` take
TensorFlow's arguments and give its values; their gradients are ops of their
own (``Conv2DBackpropInput``, ``Conv2DBackpropFilter``, ``MaxPoolGrad``,
``MaxPoolGradGrad``, ``AvgPoolGrad``), as in TensorFlow, so a gradient can be
differentiated again and a diagram can name what the backward pass did.

Every kernel is a few whole-array NumPy operations, one loop at most over the
kernel's taps, never over pixels: a convolution gathers its input's windows
as the rows of one matrix (im2col: ``Window.columns``) for one matrix product,
and keeps them for its filter gradient; pooling takes one strided slice of the
padded input per tap; a gradient adds each tap's share back the same way
(``Window.fold``).

Every size is checked before anything is allocated: a stride, dilation or window size
is one of TensorFlow's int32 attributes, and ``Window.bounded`` refuses a window of
more than ``TAP_LIMIT`` taps, or whose padded input or windows would hold more than
``WINDOW_LIMIT`` values, with the sizes and the limit in its message.

>>> import gradviz as gv
>>> x = gv.constant(np.arange(16.0).reshape(1, 4, 4, 1), name="nn_doc_x")
>>> gv.nn.max_pool2d(x, 2, 2, "VALID").numpy()[0, :, :, 0].tolist()
[[5.0, 7.0], [13.0, 15.0]]
>>> w = gv.constant(np.ones((2, 2, 1, 1)), name="nn_doc_w")
>>> gv.nn.conv2d(x, w, 2, "VALID").numpy()[0, :, :, 0].tolist()
[[10.0, 18.0], [42.0, 50.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .array_ops import squeeze
from .graph import Tensor, constant, make_op, name_scope
from .elementwise import erfc, rsqrt, squared_difference
from .ops import (OpType, _as_tensor, _float_only, _mixed, _pair, cast, log_softmax, reduce_mean,
                  relu, reshape, sigmoid, sigmoid_cross_entropy_with_logits, softmax,
                  softmax_cross_entropy_with_logits, stop_gradient, tanh, where)
from .ops import pow as _pow

__all__ = [
    "avg_pool2d", "batch_normalization", "bias_add", "conv1d", "conv2d", "dropout", "gelu",
    "layer_norm", "leaky_relu", "max_pool2d", "moments",
    "log_softmax", "relu", "sigmoid", "sigmoid_cross_entropy_with_logits", "softmax",
    "softmax_cross_entropy_with_logits",
    "avg_pool", "avg_pool_grad", "conv2d_backprop_filter", "conv2d_backprop_input",
    "leaky_relu_grad", "max_pool_grad", "max_pool_grad_grad",
]

_PADDINGS = ("SAME", "VALID")

#: The most values gradviz works out for one window: in the padded input (SAME and explicit
#: padding are applied in memory, which TensorFlow's kernels never do), and in the windows,
#: N x OH x OW x KH x KW x C (a convolution gathers them as one im2col matrix; a pool goes
#: over them tap by tap). 2**27 values are 1 GiB of float64, a few times what a lesson needs.
WINDOW_LIMIT = 2 ** 27
#: The most taps a window may have (a 256 x 256 window): the kernels loop over the taps in
#: Python, one whole-array operation each, so this bounds their time when arrays are small.
TAP_LIMIT = 2 ** 16
#: TensorFlow's window attributes (ksize, strides, dilations) are int32s
_INT32 = (-2 ** 31, 2 ** 31 - 1)


# ---------------------------------------------------------------- the window geometry


class Window(NamedTuple):
    """Where a kernel (or pooling window) sits over the height and width of an input.

    ``pads`` is the padding actually applied, ``((top, bottom), (left, right))``:
    TensorFlow's SAME puts the odd one at the bottom and the right.
    """

    ksize: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    padding: str  # "SAME", "VALID" or "EXPLICIT"
    pads: tuple[tuple[int, int], tuple[int, int]]
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]

    def attrs(self) -> dict[str, Any]:
        """The op's attributes: what the diagram, the words and the gradient ops read."""
        return {"ksize": list(self.ksize), "strides": list(self.strides),
                "dilations": list(self.dilations), "padding": self.padding,
                "pads": [list(p) for p in self.pads]}

    @classmethod
    def of(cls, op_type: str, attrs: dict[str, Any], shape: Sequence[int],
           out_hw: Sequence[int], *, shape_only: bool = False) -> Window:
        """The window an op's attributes describe over an NHWC input of ``shape``, worked out
        and bounded as ``window`` does, and checked against the output size the op was
        given (``out_hw``, of its upstream gradient or its forward output): any other
        would read past the padded input's end. ``shape_only``: the op is given only the
        input's shape, and makes an array of it (see ``Window.bounded``)."""
        padding = attrs["padding"]
        win = window(op_type, shape[1:3], attrs["ksize"], attrs["strides"], attrs["dilations"],
                     padding, attrs["pads"] if padding == "EXPLICIT" else None,
                     batch=shape[0], depth=shape[3], shape_only=shape_only)
        for d in range(2):
            if win.out_hw[d] != out_hw[d]:
                raise ValueError(
                    f"{op_type}: Size of out_backprop doesn't match computed: actual = "
                    f"{out_hw[d]}, computed = {win.out_hw[d]} spatial_dim: {d + 1} input: "
                    f"{win.in_hw[d]} filter: {win.ksize[d]} output: {out_hw[d]} stride: "
                    f"{win.strides[d]} dilation: {win.dilations[d]} (the gradient's height and "
                    f"width must be those of the forward op's output, {list(win.out_hw)})")
        return win

    def bounded(self, op_type: str, batch: int, depth: int, *,
                shape_only: bool = False) -> Window:
        """This window over ``batch`` images of ``depth`` channels, if gradviz can work it
        out: at most ``TAP_LIMIT`` taps, and at most ``WINDOW_LIMIT`` values in the padded
        input and in the windows; else a ValueError with the sizes, before anything is
        allocated. Unpadded, the input is not copied, and only a gradient op given just
        its shape (``shape_only``: AvgPoolGrad, Conv2DBackpropInput) makes an array of
        it. An empty batch or channel axis still counts as one: an empty op is refused
        where one image of one channel would be (an average works out each window's
        count of input cells whatever the batch)."""
        (kh, kw), (oh, ow), (t, b), (left, r) = self.ksize, self.out_hw, *self.pads
        taps = kh * kw
        if taps > TAP_LIMIT:
            raise ValueError(
                f"{op_type}: a {kh}x{kw} window has {taps:,} taps, more than the "
                f"{TAP_LIMIT:,} (2**16, a 256x256 window) gradviz goes over one at a time; "
                "use a smaller window (a convolution reaches as far with fewer taps and a "
                "dilation)")
        hp, wp = self.in_hw[0] + t + b, self.in_hw[1] + left + r
        padded = max(1, batch * depth) * hp * wp
        counted = "an empty batch or channel axis counted as 1"
        empty, also = ("", "") if batch * depth else (f" ({counted})", f", {counted}")
        if (t or b or left or r) and padded > WINDOW_LIMIT:
            reach = "x".join(str((k - 1) * d + 1) for k, d in zip(self.ksize, self.dilations))
            raise ValueError(
                f"{op_type}: the input padded for its window would be "
                f"{batch}x{hp}x{wp}x{depth} ({padded:,} values), more than the "
                f"{WINDOW_LIMIT:,} (2**27) gradviz holds for one window{empty}: it pads in "
                f"memory, here by {[list(p) for p in self.pads]} ({self.padding} padding of "
                f"a {self.in_hw[0]}x{self.in_hw[1]} input for a window reaching {reach} "
                "cells); use less padding, a smaller window or dilation, or VALID")
        if shape_only and padded > WINDOW_LIMIT:
            raise ValueError(
                f"{op_type}: the gradient of its input would be {batch}x{hp}x{wp}x{depth} "
                f"({padded:,} values), more than the {WINDOW_LIMIT:,} (2**27) gradviz holds "
                f"for one window{empty}: it is an array of the input's shape; use a smaller "
                "input or batch")
        windows = max(1, batch * depth) * oh * ow * taps
        if windows > WINDOW_LIMIT:
            raise ValueError(
                f"{op_type}: its windows would be {batch}x{oh}x{ow}x{kh}x{kw}x{depth} "
                f"({windows:,} values), more than the {WINDOW_LIMIT:,} (2**27) gradviz holds "
                "for one window (batch x output height x output width x window height x "
                f"window width x channels{also}: a convolution gathers them as one matrix, "
                "a pool goes over them tap by tap); use a larger stride, a smaller window, "
                "or a smaller input or batch")
        return self

    def padded(self, x: np.ndarray, fill: float = 0) -> np.ndarray:
        """``x`` (NHWC) with the padding around its height and width."""
        (t, b), (left, r) = self.pads
        if not (t or b or left or r):
            return x
        return np.pad(x, ((0, 0), (t, b), (left, r), (0, 0)), constant_values=fill)

    def windows(self, xp: np.ndarray) -> np.ndarray:
        """The padded input's windows, a read-only view shaped (N, OH, OW, KH, KW, C)."""
        n, _, _, c = xp.shape
        (oh, ow), (kh, kw) = self.out_hw, self.ksize
        s0, s1, s2, s3 = xp.strides
        (sh, sw), (dh, dw) = self.strides, self.dilations
        return as_strided(xp, (n, oh, ow, kh, kw, c),
                          (s0, s1 * sh, s2 * sw, s1 * dh, s2 * dw, s3), writeable=False)

    def columns(self, xp: np.ndarray) -> np.ndarray:
        """im2col: each window of the padded input as a row, (N*OH*OW, KH*KW*C).

        With one channel, the windows are gathered one tap at a time into a tap-major
        array and returned transposed (a view, which a matrix product takes as it
        is): six times faster than copying the window view, whose innermost axes
        are too short for a fast copy.
        """
        n, _, _, c = xp.shape
        (oh, ow), (kh, kw) = self.out_hw, self.ksize
        if c != 1:
            return self.windows(xp).reshape(n * oh * ow, kh * kw * c)
        cols = np.empty((kh * kw, n, oh, ow, 1), xp.dtype)
        for t, (i, j) in enumerate(self.taps()):
            cols[t] = self.tap(xp, i, j)
        return cols.reshape(kh * kw, n * oh * ow).T

    def tap(self, xp: np.ndarray, i: int, j: int) -> np.ndarray:
        """The strided slice of the padded input that kernel tap (i, j) sees, (N, OH, OW, C)."""
        (oh, ow), (sh, sw), (dh, dw) = self.out_hw, self.strides, self.dilations
        return xp[:, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                  j * dw: j * dw + sw * (ow - 1) + 1: sw]

    def taps(self) -> list[tuple[int, int]]:
        """The kernel taps in row-major order: the order in which TensorFlow scans a window."""
        return [(i, j) for i in range(self.ksize[0]) for j in range(self.ksize[1])]

    def padded_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        (t, b), (left, r) = self.pads
        return (shape[0], shape[1] + t + b, shape[2] + left + r, shape[3])

    def crop(self, xp: np.ndarray) -> np.ndarray:
        """The input's own part of a padded array."""
        (t, _), (left, _) = self.pads
        h, w = self.in_hw
        return xp[:, t: t + h, left: left + w]

    def fold(self, parts: Any, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
        """Add what each tap contributes back into an input of ``shape``:
        ``parts(i, j)`` is tap (i, j)'s (N, OH, OW, C) share."""
        padded = self.padded_shape(shape)
        # where windows do not overlap (stride at least the window's reach, as in a
        # 2x2 pool with stride 2), each cell gets at most one part: write, not add;
        # and where they tile the input too, every cell gets one
        reach = [(k - 1) * d + 1 for k, d in zip(self.ksize, self.dilations)]
        apart = all(s >= r for s, r in zip(self.strides, reach))
        tiled = apart and all(s == r and o * s == p for s, r, o, p in
                              zip(self.strides, reach, self.out_hw, padded[1:3]))
        out = (np.empty if tiled else np.zeros)(padded, dtype)
        for i, j in self.taps():
            if apart:
                self.tap(out, i, j)[...] = parts(i, j)
            else:
                self.tap(out, i, j)[...] += parts(i, j)
        return self.crop(out)

    def counts(self) -> np.ndarray:
        """How many input (not padding) cells each window holds, (1, OH, OW, 1): the
        product of the input rows its taps reach and the input columns, worked out per
        axis (nothing as large as the windows is visited)."""
        rows, cols = (self._axis_counts(d) for d in range(2))
        return np.multiply.outer(rows, cols).astype(np.float64)[None, :, :, None]

    def _axis_counts(self, d: int) -> np.ndarray:
        """Along axis ``d``, how many of each window's taps land on the input, (O,): window
        o's tap k is at o*s + k*rate - before, inside when 0 <= it < size, so k runs from
        ceil((before - o*s) / rate) to ceil((before + size - o*s) / rate) - 1, within
        [0, K - 1]."""
        start = np.arange(self.out_hw[d], dtype=np.int64) * self.strides[d] - self.pads[d][0]
        rate = self.dilations[d]
        first = np.maximum(0, -(start // rate))  # ceil(-start / rate)
        stop = np.minimum(self.ksize[d], -((start - self.in_hw[d]) // rate))
        return np.maximum(0, stop - first)


def _cdiv(a: int, b: int) -> int:
    """C++'s integer division (toward zero), which TensorFlow's shape arithmetic uses."""
    return -(-a // b) if a < 0 else a // b


def window(op_type: str, in_hw: Sequence[int], ksize: Sequence[int], strides: Sequence[int],
           dilations: Sequence[int], padding: str,
           explicit: Sequence[Sequence[int]] | None = None, *, batch: int,
           depth: int, shape_only: bool = False) -> Window:
    """Output size and padding per spatial dimension, as TensorFlow's
    ``GetWindowedOutputSizeVerbose`` computes them, for ``batch`` images of ``depth``
    channels: refused (``Window.bounded``) where gradviz could not hold it."""
    outs, pads = [], []
    for d in range(2):
        size, k, s, rate = in_hw[d], ksize[d], strides[d], dilations[d]
        effective = (k - 1) * rate + 1
        if padding == "VALID":
            out, pad = _cdiv(size - effective + s, s), (0, 0)
        elif padding == "SAME":
            out = _cdiv(size + s - 1, s)
            needed = max(0, (out - 1) * s + effective - size)
            pad = (needed // 2, needed - needed // 2)
        else:
            pad = tuple(explicit[d])
            out = _cdiv(size + pad[0] + pad[1] - effective + s, s)
        if out < 0:
            raise ValueError(f"{op_type}: Computed output size would be negative: {out} "
                             f"[input_size: {size}, effective_filter_size: {effective}, "
                             f"stride: {s}] (the {'height' if d == 0 else 'width'} of the "
                             "input is smaller than the kernel's reach; pad it, or use "
                             "padding=\"SAME\")")
        outs.append(out)
        pads.append(pad)
    return Window(tuple(ksize), tuple(strides), tuple(dilations), padding, tuple(pads),
                  tuple(in_hw), tuple(outs)).bounded(op_type, batch, depth,
                                                     shape_only=shape_only)


# ---------------------------------------------------------------- argument checks


def _sequence(op_type: str, arg: str, value: Any) -> list[int]:
    """TensorFlow's ``_get_sequence``: an int, or a list of 1, 2 or 4 ints, as 4 ints."""
    items = [value] if isinstance(value, (int, np.integer)) else value
    try:
        items = list(items)
    except TypeError:
        raise TypeError(f"{op_type}: {arg} must be an int or a list of 1, 2 or 4 ints, got "
                        f"{value!r}") from None
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{op_type}: {arg} must be an int or a list of 1, 2 or 4 ints, "
                            f"got {value!r}")
    items = [int(v) for v in items]
    if len(items) not in (1, 2, 4):
        raise ValueError(f"{op_type}: {arg} should be of length 1, 2 or 4. Received: "
                         f"{arg}={value!r} of length {len(items)} (an int, [h, w] or "
                         "[1, h, w, 1])")
    for v in items:
        if not _INT32[0] <= v <= _INT32[1]:
            raise ValueError(f"{op_type}: Attr {arg} has value {v} out of range for an int32 "
                             f"({arg}={value!r}: TensorFlow's window sizes are int32s, from "
                             f"{_INT32[0]} to {_INT32[1]})")
    if len(items) == 1:
        return [1, items[0], items[0], 1]
    if len(items) == 2:
        return [1, *items, 1]
    return items


def _ints(op_type: str, arg: str, value: Any, what: str) -> tuple[int, int]:
    """A convolution's strides or dilations as (h, w), refused along batch or depth."""
    items = _sequence(op_type, arg, value)
    if items[0] != 1 or items[3] != 1:
        raise ValueError(f"{op_type}: Current implementation does not yet support {what} "
                         f"in the batch and depth dimensions. ({arg}={items}: the first "
                         "and last must be 1, as the window moves over height and width "
                         "only)")
    return items[1], items[2]


def _pool_window(op_type: str, ksize: Any, strides: Any) -> tuple[tuple[int, int],
                                                                   tuple[int, int]]:
    """A pool's ksize and strides as (h, w) pairs, checked as TensorFlow's pooling
    kernels check them (their messages, which differ between MaxPool and AvgPool)."""
    k, s = _sequence(op_type, "ksize", ksize), _sequence(op_type, "strides", strides)
    if k[0] != 1 or s[0] != 1:
        raise ValueError(f"{op_type}: Pooling is not yet supported on the batch dimension. "
                         f"(ksize={k}, strides={s}: the first of each must be 1)")
    if k[3] != 1 and k[1:3] != [1, 1]:
        raise ValueError(f"{op_type}: MaxPooling supports exactly one of pooling across "
                         f"depth or pooling across width/height. (ksize={k}: the last must "
                         "be 1 for a window over height and width)")
    if k[3] != 1 or s[3] != 1:
        raise ValueError(f"{op_type}: pooling across the channels is not supported (ksize={k},"
                         f" strides={s}): the window moves over height and width only, so "
                         "the last of ksize and strides must be 1")
    if min(k) <= 0:
        message = (f"ksize must be a positive int32 value, got:{min(k)}"
                   if op_type == OpType.AVG_POOL else "Sliding window ksize must be positive. "
                   f"The specified or inferred ksize is: {','.join(map(str, k))}")
        raise ValueError(f"{op_type}: {message} (ksize={k}: each must be at least 1)")
    if min(s) <= 0:
        raise ValueError(f"{op_type}: Stride must be > 0, but got {min(s)} (strides={s}: each "
                         "must be at least 1)")
    return (k[1], k[2]), (s[1], s[2])


def _positive(op_type: str, arg: str, hw: tuple[int, int], message: str) -> None:
    if hw[0] <= 0 or hw[1] <= 0:
        raise ValueError(f"{op_type}: {message} ({arg} {list(hw)}: each must be at least 1)")


def _padding(op_type: str, padding: Any, explicit_ok: bool) -> tuple[str, list | None]:
    """"SAME", "VALID", or (where accepted) explicit pairs: [[0, 0], [t, b], [l, r], [0, 0]]
    (or [[t, b], [l, r]]); returns the kind and the (top, bottom), (left, right) pairs."""
    accepted = ('"SAME", "VALID" or a list of [before, after] pairs, one per dimension'
                if explicit_ok else '"SAME" or "VALID"')
    if isinstance(padding, str):
        if padding == "EXPLICIT" and explicit_ok:
            raise ValueError(f"{op_type}: 'EXPLICIT' is not a valid value for `padding`. To use "
                             "explicit padding, `padding` must be a list.")
        if padding not in _PADDINGS:
            raise ValueError(f"{op_type}: padding must be {accepted}, got {padding!r}")
        return padding, None
    if not explicit_ok or not isinstance(padding, (list, tuple)):
        raise ValueError(f"{op_type}: padding must be {accepted}, got {padding!r}")
    pairs = []
    for i, pair in enumerate(padding):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in pair):
            element = (f"of size {len(pair)}" if isinstance(pair, (list, tuple))
                       and len(pair) != 2 else f"= {pair!r}")
            raise ValueError(f"{op_type}: When `padding` is a list, each element of `padding` "
                             f"must be a list/tuple of size 2. Received: padding={padding!r} "
                             f"with element at index {i} {element}")
        pairs.append((int(pair[0]), int(pair[1])))
    if len(pairs) == 4:
        if pairs[0] != (0, 0) or pairs[3] != (0, 0):
            raise ValueError(f"{op_type}: Nonzero explicit padding in the batch or depth "
                             f"dimensions is not supported (padding={padding!r})")
        pairs = pairs[1:3]
    elif len(pairs) != 2:
        raise ValueError(f"{op_type}: When padding is a list, it must be of size 4. Received: "
                         f"padding={padding!r} of size {len(pairs)}")
    if any(v < 0 for pair in pairs for v in pair):
        raise ValueError(f"{op_type}: All elements of explicit_paddings must be nonnegative, "
                         f"got padding={padding!r}")
    return "EXPLICIT", pairs


def _nhwc(op_type: str, x: Any, arg: str) -> Tensor:
    t = _as_tensor(x, op_type, arg)
    _float_only(op_type, t)
    if t.ndim != 4:
        raise ValueError(f"{op_type}: {arg} must be 4-dimensional, got {t.name} of shape "
                         f"{t.shape} (NHWC: batch, height, width, channels)")
    return t


# ---------------------------------------------------------------- convolution


def conv2d(input: Any, filters: Any, strides: Any, padding: Any,  # noqa: A002 - TF's name
           data_format: str = "NHWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """A 2-D convolution (a cross-correlation, as in every deep-learning library).

    ``input`` is NHWC, ``filters`` is (height, width, in channels, out channels);
    ``strides`` and ``dilations`` are an int, [h, w] or [1, h, w, 1]; ``padding``
    is "SAME", "VALID", or explicit [before, after] pairs per dimension.
    """
    op_type = OpType.CONV2D
    if data_format != "NHWC":
        raise ValueError(f"{op_type}: data_format must be \"NHWC\", got {data_format!r} "
                         "(transpose an NCHW tensor first: gv.transpose(x, [0, 2, 3, 1]))")
    x = _nhwc(op_type, input, "input")
    w = _as_tensor(filters, op_type, "filters")
    if w._dtype != x._dtype:
        raise _mixed(op_type, x, w)
    if w.ndim != 4:
        raise ValueError(f"{op_type}: filter must be 4-dimensional, got {w.name} of shape "
                         f"{w.shape} (height, width, in channels, out channels)")
    if w.shape[2] == 0:
        raise ValueError(f"{op_type}: filter depth must be stricly positive, got 0 ({w.name} of "
                         f"shape {w.shape} takes no input channels; its third dimension must "
                         f"be {x.name}'s channels, {x.shape[3]})")
    if x.shape[3] % w.shape[2] == 0 and x.shape[3] != w.shape[2]:
        raise ValueError(f"{op_type}: grouped convolutions are not supported: {x.name} has "
                         f"{x.shape[3]} channels and {w.name} of shape {w.shape} takes "
                         f"{w.shape[2]}, which TensorFlow reads as {x.shape[3] // w.shape[2]} "
                         "groups; gradviz takes a filter whose third dimension is the input's "
                         "channels")
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"{op_type}: input depth must be evenly divisible by filter depth: "
                         f"{x.shape[3]} vs {w.shape[2]} ({x.name} has {x.shape[3]} "
                         f"channel{'' if x.shape[3] == 1 else 's'}, {w.name} of shape {w.shape} "
                         f"expects {w.shape[2]})")
    s = _ints(op_type, "strides", strides, "strides")
    d = _ints(op_type, "dilations", 1 if dilations is None else dilations, "dilations")
    _positive(op_type, "strides", s, "Row and column strides should be larger than 0.")
    _positive(op_type, "dilations", d, "Dilated rates should be larger than 0.")
    kind, pairs = _padding(op_type, padding, explicit_ok=True)
    win = window(op_type, x.shape[1:3], w.shape[:2], s, d, kind, pairs, batch=x.shape[0],
                 depth=x.shape[3])
    out = (x.shape[0], *win.out_hw, w.shape[3])
    if 0 in w.shape[:2] and 0 not in out:
        raise ValueError(f"{op_type}: filter must not have zero elements (i.e. all dimensions "
                         f"must be non-zero) ({w.name} of shape {w.shape} has no taps; "
                         f"TensorFlow takes such a kernel only when the output, here "
                         f"{out}, is empty)")
    return make_op(op_type, (x, w), _conv(win, x._value, w._value), win.attrs(), name)


def _columns(win: Window, x: np.ndarray) -> np.ndarray:
    """The im2col of ``x``: gathered for a Conv2D, and reused by its filter gradient.

    A backward pass asks for the columns of an input the forward pass gathered just
    before; the last few are kept (up to ``_COLUMNS_BYTES`` in all), by the input array
    itself, which the engine never changes in place.
    """
    key = (id(x), win)
    hit = _COLUMNS.get(key)
    if hit is not None and hit[0] is x:
        return hit[1]
    cols = win.columns(win.padded(x))
    if cols.nbytes <= _COLUMNS_BYTES:
        while _COLUMNS and sum(c.nbytes for _, c in _COLUMNS.values()) + cols.nbytes \
                > _COLUMNS_BYTES:
            del _COLUMNS[next(iter(_COLUMNS))]  # the oldest first
        _COLUMNS[key] = (x, cols)
    return cols


_COLUMNS: dict[tuple[int, Window], tuple[np.ndarray, np.ndarray]] = {}
_COLUMNS_BYTES = 64 << 20


def _conv(win: Window, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """im2col and one matrix product: (N*OH*OW, KH*KW*C) @ (KH*KW*C, O)."""
    kh, kw, c, o = w.shape  # (sizes, not -1: there may be no output channels)
    out = _columns(win, x) @ w.reshape(kh * kw * c, o)
    return out.reshape(x.shape[0], *win.out_hw, o)


def _backprop_input(win: Window, w: np.ndarray, g: np.ndarray,
                    shape: Sequence[int]) -> np.ndarray:
    """Each output position's gradient spread back over its window, weighted by the kernel."""
    n, oh, ow, o = g.shape
    kh, kw, c, _ = w.shape
    cols = (g.reshape(n * oh * ow, o) @ w.reshape(kh * kw * c, o).T).reshape(n, oh, ow, kh,
                                                                                kw, c)
    return win.fold(lambda i, j: cols[:, :, :, i, j], shape, g.dtype)


def _backprop_filter(win: Window, x: np.ndarray, g: np.ndarray,
                     shape: Sequence[int]) -> np.ndarray:
    """Each kernel weight's input value times the gradient, summed over every position."""
    n, oh, ow, o = g.shape
    return (_columns(win, x).T @ g.reshape(n * oh * ow, o)).reshape(shape)


def conv2d_backprop_input(input_sizes: Sequence[int], filters: Tensor, out_backprop: Tensor,
                          attrs: dict[str, Any], name: str | None = None) -> Tensor:
    """dL/d(input) of a Conv2D whose window ``attrs`` describe: the upstream gradient
    convolved with the kernel flipped in space (in and out channels swapped)."""
    win = Window.of(OpType.CONV2D_BACKPROP_INPUT, attrs, input_sizes, out_backprop.shape[1:3],
                    shape_only=True)
    value = _backprop_input(win, filters._value, out_backprop._value, input_sizes)
    return make_op(OpType.CONV2D_BACKPROP_INPUT, (filters, out_backprop), value,
                   {**attrs, "input_sizes": list(input_sizes)}, name)


def conv2d_backprop_filter(input: Tensor, filter_sizes: Sequence[int],  # noqa: A002
                           out_backprop: Tensor, attrs: dict[str, Any],
                           name: str | None = None) -> Tensor:
    """dL/d(filters) of a Conv2D whose window ``attrs`` describe: each weight collects its
    input value times the upstream gradient, over every position the kernel visited."""
    win = Window.of(OpType.CONV2D_BACKPROP_FILTER, attrs, input.shape, out_backprop.shape[1:3])
    value = _backprop_filter(win, input._value, out_backprop._value, filter_sizes)
    return make_op(OpType.CONV2D_BACKPROP_FILTER, (input, out_backprop), value,
                   {**attrs, "filter_sizes": list(filter_sizes)}, name)


def conv1d(input: Any, filters: Any, stride: Any, padding: Any,  # noqa: A002 - TF's name
           data_format: str = "NWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """A 1-D convolution of an NWC ``input`` with (width, in, out) ``filters``.

    As in TensorFlow, it is a Conv2D over a height of 1: the input and the filters
    are reshaped to have one, and the result back (the ops sit in a ``conv1d``
    name scope).
    """
    op_type = "Conv1D"
    if data_format != "NWC":
        raise ValueError(f"{op_type}: data_format must be \"NWC\", got {data_format!r}")
    x = _as_tensor(input, op_type, "input")
    w = _as_tensor(filters, op_type, "filters")
    if x.ndim != 3:
        raise ValueError(f"{op_type}: input must be 3-dimensional, got {x.name} of shape "
                         f"{x.shape} (NWC: batch, width, channels)")
    if w.ndim != 3:
        raise ValueError(f"{op_type}: filters must be 3-dimensional, got {w.name} of shape "
                         f"{w.shape} (width, in channels, out channels)")

    def one(arg: str, value: Any) -> list[int]:
        if isinstance(value, (list, tuple)):
            if len(value) == 3:
                if value[0] != 1 or value[2] != 1:
                    raise ValueError(
                        f"{op_type}: Current implementation does not yet support "
                        f"{arg.rstrip('s')}s in the batch and depth dimensions. "
                        f"({arg}={value!r}: the first and last must be 1, as the window "
                        "moves over the width only)")
                value = value[1:2]
            if len(value) != 1:
                raise ValueError(f"{op_type}: {arg} should be of length 1 or 3. Received: "
                                 f"{arg}={value!r} of length {len(value)} (an int, [w] or "
                                 "[1, w, 1])")
            value = value[0]
        return [1, value]

    _padding(op_type, padding, explicit_ok=False)
    with name_scope(name or "conv1d"):
        x4 = reshape(x, [x.shape[0], 1, x.shape[1], x.shape[2]], name="ExpandDims")
        w4 = reshape(w, [1, *w.shape], name="ExpandDims")
        y = conv2d(x4, w4, one("stride", stride), padding,
                   dilations=one("dilations", 1 if dilations is None else dilations))
        return reshape(y, [y.shape[0], y.shape[2], y.shape[3]], name="Squeeze")


# ---------------------------------------------------------------- pooling


def _pool_args(op_type: str, input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
               data_format: str, explicit_ok: bool) -> tuple[Tensor, Window]:
    if data_format != "NHWC":
        raise ValueError(f"{op_type}: data_format must be \"NHWC\", got {data_format!r}")
    x = _nhwc(op_type, input, "input")
    k, s = _pool_window(op_type, ksize, strides)
    kind, pairs = _padding(op_type, padding, explicit_ok)
    for (before, after), size, sides in zip(pairs or (), k, (("Top", "Bottom"),
                                                               ("Left", "Right"))):
        for side, pad in zip(sides, (before, after)):
            if pad >= size:
                raise ValueError(f"{op_type}: {side} padding {pad} needs to be smaller than the "
                                 f"window size {size} (padding={padding!r}, ksize "
                                 f"{list(k)}: a window of padding only would have no maximum)")
    return x, window(op_type, x.shape[1:3], k, s, (1, 1), kind, pairs, batch=x.shape[0],
                     depth=x.shape[3])


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002 - TF's name
               data_format: str = "NHWC", name: str | None = None) -> Tensor:
    """The largest value of each ``ksize`` window (padding never wins: it counts as -inf)."""
    x, win = _pool_args(OpType.MAX_POOL, input, ksize, strides, padding, data_format, True)
    xp = win.padded(x._value, -np.inf)
    taps = [win.tap(xp, i, j) for i, j in win.taps()]
    value = taps[0].copy()
    for tap in taps[1:]:
        np.maximum(value, tap, out=value)
    return make_op(OpType.MAX_POOL, (x,), value, win.attrs(), name)


def _winners(win: Window, x: np.ndarray, y: np.ndarray) -> Any:
    """Per tap, where that tap holds its window's maximum and no earlier tap did: the first
    maximum in row-major order wins a tie, as TensorFlow's CPU kernel scans."""
    xp = win.padded(x, -np.inf)
    taken = np.zeros(y.shape, bool)
    masks = []
    for i, j in win.taps():
        hit = (win.tap(xp, i, j) == y) & ~taken
        taken |= hit
        masks.append(hit)
    return masks


def max_pool_grad(orig_input: Tensor, orig_output: Tensor, grad: Tensor, attrs: dict[str, Any],
                  name: str | None = None) -> Tensor:
    """dL/d(input) of a MaxPool: each window's gradient goes to the element that won."""
    win = Window.of(OpType.MAX_POOL_GRAD, attrs, orig_input.shape, orig_output.shape[1:3])
    masks = _winners(win, orig_input._value, orig_output._value)
    g = grad._value
    with np.errstate(invalid="ignore"):  # (an Inf gradient times a 0 mask: NaN, as in TF)
        value = win.fold(lambda i, j: g * masks[i * win.ksize[1] + j], orig_input.shape,
                         g.dtype)
    return make_op(OpType.MAX_POOL_GRAD, (orig_input, orig_output, grad), value, attrs, name)


def max_pool_grad_grad(orig_input: Tensor, orig_output: Tensor, grad: Tensor,
                       attrs: dict[str, Any], name: str | None = None) -> Tensor:
    """The backward of MaxPoolGrad: in each window, ``grad`` (input-shaped) at the winner."""
    win = Window.of(OpType.MAX_POOL_GRAD_GRAD, attrs, orig_input.shape,
                    orig_output.shape[1:3])
    masks = _winners(win, orig_input._value, orig_output._value)
    gp = win.padded(grad._value)
    value = np.zeros(orig_output.shape, grad._dtype)
    for k, (i, j) in enumerate(win.taps()):
        value[masks[k]] = win.tap(gp, i, j)[masks[k]]
    return make_op(OpType.MAX_POOL_GRAD_GRAD, (orig_input, orig_output, grad), value, attrs,
                   name)


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002 - TF's name
               data_format: str = "NHWC", name: str | None = None) -> Tensor:
    """The mean of each ``ksize`` window; with SAME padding, of its input cells only."""
    x, win = _pool_args(OpType.AVG_POOL, input, ksize, strides, padding, data_format, False)
    return make_op(OpType.AVG_POOL, (x,), _avg(win, x._value), win.attrs(), name)


def _avg(win: Window, x: np.ndarray) -> np.ndarray:
    xp = win.padded(x)
    total = sum(win.tap(xp, i, j) for i, j in win.taps())
    return (total / win.counts()).astype(x.dtype)


def avg_pool_grad(orig_input_shape: Sequence[int], grad: Tensor, attrs: dict[str, Any],
                  name: str | None = None) -> Tensor:
    """dL/d(input) of an AvgPool: each window's gradient shared equally among its cells."""
    win = Window.of(OpType.AVG_POOL_GRAD, attrs, orig_input_shape, grad.shape[1:3],
                    shape_only=True)
    share = (grad._value / win.counts()).astype(grad._dtype)
    value = win.fold(lambda i, j: share, orig_input_shape, grad._dtype)
    return make_op(OpType.AVG_POOL_GRAD, (grad,), value,
                   {**attrs, "orig_input_shape": list(orig_input_shape)}, name)


def avg_pool(x: Tensor, attrs: dict[str, Any], out_hw: Sequence[int],
             name: str | None = None) -> Tensor:
    """An AvgPool of ``x`` with the window of ``attrs`` (the backward of AvgPoolGrad)."""
    win = Window.of(OpType.AVG_POOL, attrs, x.shape, out_hw)
    return make_op(OpType.AVG_POOL, (x,), _avg(win, x._value), win.attrs(), name)


# ---------------------------------------------------------------- bias


def _dims(shape: tuple[int, ...]) -> str:
    """A shape as TensorFlow's messages print it: [3,1]."""
    return f"[{','.join(map(str, shape))}]"


def bias_add(value: Any, bias: Any, data_format: str | None = None,
             name: str | None = None) -> Tensor:
    """``value + bias``, ``bias`` 1-D and added along the last axis (the channels)."""
    op_type = OpType.BIAS_ADD
    if data_format not in (None, "NHWC", "N...C"):
        raise ValueError(f"{op_type}: data_format must be None or \"NHWC\" (the bias goes "
                         f"along the last axis), got {data_format!r}")
    # a Python number or list takes value's dtype
    x, b = _pair(op_type, value, bias, names=("value", "bias"))
    if x._dtype.kind not in "iuf":
        _float_only(op_type, x)
    if b.ndim != 1:
        raise ValueError(f"{op_type}: Biases must be 1D: {_dims(b.shape)} ({b.name})")
    if x.ndim < 2:
        raise ValueError(f"{op_type}: Input tensor must be at least 2D: {_dims(x.shape)} "
                         f"({x.name})")
    if b.shape[0] != x.shape[-1]:
        raise ValueError(f"{op_type}: Must provide as many biases as the last dimension of the "
                         f"input tensor: {_dims(b.shape)} vs. {_dims(x.shape)}")
    return make_op(op_type, (x, b), x._value + b._value, None, name)


# ---------------------------------------------------------------- activations


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * x``: a relu that lets a little through."""
    x = _as_tensor(features, OpType.LEAKY_RELU, "features")
    _float_only(OpType.LEAKY_RELU, x)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)):
        raise TypeError(f"LeakyRelu: alpha must be a number, got {alpha!r}")
    a = float(np.float32(alpha))  # a float32 attribute, as TensorFlow's: 0.2 is 0.2000000030
    value = np.where(x._value > 0, x._value, x._value * x._dtype.type(a))
    return make_op(OpType.LEAKY_RELU, (x,), value, {"alpha": a}, name)


def leaky_relu_grad(grad: Tensor, x: Tensor, alpha: float, name: str | None = None) -> Tensor:
    """``grad`` where ``x > 0``, else ``alpha * grad``: the backward of LeakyRelu."""
    g = grad._value
    value = np.where(x._value > 0, g, g * g.dtype.type(alpha))
    return make_op(OpType.LEAKY_RELU_GRAD, (grad, x), value, {"alpha": alpha}, name)


_F32_COEFF = float(np.float32(0.044715))
_F32_HALF_SQRT2 = float(np.float32(0.7071067811865476))


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Tensor:
    """The Gaussian error linear unit, ``x * P(X <= x)`` for a standard normal X, made as
    TensorFlow makes it in a ``Gelu`` scope: exactly, ``0.5 * x * erfc(-x / sqrt(2))``, or
    (``approximate``) with ``tanh``. Its constants 1/sqrt(2) and 0.044715 are rounded to
    float32 first, in float64 too, as TensorFlow's ``cast`` of a Python number does."""
    x = _as_tensor(features, "Gelu", "features")
    if x._dtype.kind != "f":
        raise ValueError(f"Gelu: `features.dtype` must be a floating point tensor.Received:"
                         f"features.dtype={x.dtype.name} ({x.name})")
    if not isinstance(approximate, (bool, np.bool_)):
        raise TypeError(f"Gelu: approximate must be True or False, got {approximate!r}")
    with name_scope(name or "Gelu"):
        if approximate:
            inner = 0.7978845608028654 * (x + _F32_COEFF * _pow(x, 3.0))
            return 0.5 * x * (1.0 + tanh(inner))
        return 0.5 * x * erfc(-x * _F32_HALF_SQRT2)


# ---------------------------------------------------------------- normalisation and dropout


def moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
            name: str | None = None) -> tuple[Tensor, Tensor]:
    """The mean and variance of ``x`` over ``axes``, made as TensorFlow makes them in a
    ``moments`` scope: the variance is the mean of ``squared_difference(x, mean)`` with the
    mean held still (``stop_gradient``), which changes no gradient, since the squared
    deviations' derivative with respect to their own mean sums to 0. (``shift`` is
    unused, as in TensorFlow.)"""
    t = _as_tensor(x, "moments", "x")
    if axes is None or isinstance(axes, (int, np.integer)):
        raise TypeError(f"moments: axes must be a list of ints, such as [0] or [-1], got "
                        f"{axes!r}")
    with name_scope(name or "moments"):
        mean = reduce_mean(t, list(axes), keepdims=True, name="mean")
        variance = reduce_mean(squared_difference(t, stop_gradient(mean)), list(axes),
                               keepdims=True, name="variance")
        if not keepdims:
            mean, variance = squeeze(mean, list(axes)), squeeze(variance, list(axes))
        return mean, variance


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: float, name: str | None = None) -> Tensor:
    """``(x - mean) / sqrt(variance + variance_epsilon) * scale + offset``, made as
    TensorFlow makes it in a ``batchnorm`` scope: ``x * inv + (offset - mean * inv)``
    with ``inv = rsqrt(variance + variance_epsilon) * scale`` (``scale`` and ``offset``
    may be None)."""
    with name_scope(name or "batchnorm"):
        inv = rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        t = _as_tensor(x, "batchnorm", "x")
        # cast to x's dtype, as TensorFlow's (a cast to the dtype it has is no op)
        inv, shift = (v if v.dtype == t.dtype else cast(v, t.dtype) for v in (inv, shift))
        return t * inv + shift


def layer_norm(x: Any, axis: Any = -1, scale: Any = None, offset: Any = None,
               epsilon: float = 1e-3, name: str | None = None) -> Tensor:
    """Each example normalised over ``axis`` (the features): its ``moments``, then
    ``batch_normalization`` with ``scale`` and ``offset`` (gamma and beta), in a
    ``layer_norm`` scope the diagram shows as one box or opens."""
    t = _as_tensor(x, "layer_norm", "x")
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    with name_scope(name or "layer_norm"):
        mean, variance = moments(t, axes, keepdims=True)
        return batch_normalization(t, mean, variance, offset, scale, epsilon)


def dropout(x: Any, rate: float, noise_shape: Any = None, seed: int | None = None,
            name: str | None = None) -> Tensor:
    """Each value of ``x`` kept with probability ``1 - rate`` and scaled by
    ``1 / (1 - rate)``, else 0, in a ``dropout`` scope: the kept values pass their gradient
    on scaled, the dropped ones pass none. ``seed`` makes the choice repeatable (NumPy's
    generator: the same seed picks the same values in gradviz, not those TensorFlow
    picks)."""
    t = _as_tensor(x, "dropout", "x")
    _float_only("dropout", t)
    if isinstance(rate, Tensor) and rate.ndim == 0 and rate.dtype.is_floating:
        rate = float(rate._value)
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.number)) or \
            not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be a scalar tensor or a float in the range "
                         f"[0, 1), got {rate!r}")
    shape = t.shape if noise_shape is None else tuple(int(d) for d in noise_shape)
    try:
        np.broadcast_shapes(shape, t.shape)  # (a larger one broadcasts x, as TensorFlow's)
    except ValueError:
        raise ValueError(f"dropout: noise_shape {shape} does not broadcast with {t.name}'s "
                         f"shape {t.shape}") from None
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"dropout: seed must be an int or None, got {seed!r}")
    keep = np.random.default_rng(seed).random(shape) >= rate
    with name_scope(name or "dropout"):
        mask = constant(keep, name="keep_mask")
        return where(mask, t * (1.0 / (1.0 - float(rate))), 0.0)
