"""Every size a convolution or pool takes is bounded before anything is allocated.

A stride, dilation or kernel size is one of TensorFlow's int32 attributes, and
gets its message past 2**31 - 1; a window that gradviz would work out in memory
(the padded input, or its windows) past ``nn.WINDOW_LIMIT`` values is refused with
the sizes and the limit; the shapes TensorFlow 2.21 takes (no output channels, an
empty batch) are computed, and the ones it refuses (no input channels, a kernel
without taps, max-pool padding as wide as the window) get its message.  Each case
here is quick: the refusals come before any large array exists.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradviz as gv
from gradviz.engine import nn

F32 = np.float32
IMAGE, KERNEL = np.zeros((1, 4, 4, 3), F32), np.zeros((3, 3, 3, 2), F32)


def zeros(*shape: int) -> np.ndarray:
    return np.zeros(shape, F32)


def test_the_limits_are_two_to_the_27_values_and_two_to_the_16_taps():
    # 1 GiB of float64 for one array (the padded input, or the im2col matrix), and a
    # 256 x 256 window for the loops over a kernel's taps
    assert (nn.WINDOW_LIMIT, nn.TAP_LIMIT) == (2 ** 27, 2 ** 16)


# ---------------------------------------------------------------- TensorFlow's int32 attributes


@pytest.mark.parametrize("call, attr, value", [
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 2 ** 62, "VALID"), "strides", 2 ** 62),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 2 ** 62, "SAME"), "strides", 2 ** 62),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 2 ** 31, "SAME"), "strides", 2 ** 31),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 2 ** 64, "SAME"), "strides", 2 ** 64),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, -2 ** 62, "SAME"), "strides", -2 ** 62),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, [1, 1, 1, 2 ** 62], "SAME"), "strides", 2 ** 62),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, np.uint64(2 ** 63), "SAME"), "strides", 2 ** 63),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, "SAME", dilations=2 ** 31), "dilations", 2 ** 31),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, "SAME", dilations=2 ** 62), "dilations",
     2 ** 62),
    (lambda: gv.nn.conv1d(IMAGE[0], KERNEL[0], 2 ** 62, "SAME"), "strides", 2 ** 62),
    (lambda: gv.nn.max_pool2d(IMAGE, 2 ** 31, 1, "SAME"), "ksize", 2 ** 31),
    (lambda: gv.nn.max_pool2d(IMAGE, 2, 2 ** 31, "SAME"), "strides", 2 ** 31),
    (lambda: gv.nn.max_pool2d(IMAGE, 2, 2 ** 64, "SAME"), "strides", 2 ** 64),
    (lambda: gv.nn.avg_pool2d(IMAGE, 2 ** 62, 1, "SAME"), "ksize", 2 ** 62),
    (lambda: gv.nn.avg_pool2d(IMAGE, 2, 2 ** 62, "SAME"), "strides", 2 ** 62),
], ids=lambda v: str(v) if isinstance(v, (str, int)) else "")
def test_a_size_past_int32_gets_tensorflows_message(call, attr, value):
    # TensorFlow 2.21: "Attr strides has value 4611686018427387904 out of range for an
    # int32" (past 2**63 its Python wrapper fails with a SystemError instead)
    with pytest.raises(ValueError, match=f"Attr {attr} has value {value} out of range for an "
                       "int32 .*from -2147483648 to 2147483647"):
        call()


def test_the_largest_int32_stride_still_computes_as_in_tensorflow():
    # (passes before too: the check must not refuse what TensorFlow takes)
    assert gv.nn.conv2d(IMAGE, KERNEL, 2 ** 31 - 1, "SAME").shape == (1, 1, 1, 2)
    assert gv.nn.max_pool2d(IMAGE, 2, 2 ** 31 - 1, "VALID").shape == (1, 1, 1, 3)


# ---------------------------------------------------------------- windows held in memory


def test_same_padding_for_a_huge_dilation_is_refused_before_padding():
    # the kernel reaches 20001 cells, so SAME pads 4 rows to 20004: 1.2e9 values
    with pytest.raises(ValueError, match="Conv2D: the input padded for its window would be "
                       "1x20004x20004x3 \\(1,200,480,048 values\\), more than the "
                       "134,217,728 \\(2\\*\\*27\\)"):
        gv.nn.conv2d(IMAGE, KERNEL, 1, "SAME", dilations=10000)


@pytest.mark.parametrize("call, op_type", [
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, "SAME", dilations=2 ** 31 - 1), "Conv2D"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, [[0, 0], [2 ** 30, 0], [0, 0], [0, 0]]), "Conv2D"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, [[0, 0], [2 ** 62, 0], [0, 0], [0, 0]]), "Conv2D"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, [[0, 0], [0, 0], [0, 2 ** 64], [0, 0]]), "Conv2D"),
    (lambda: gv.nn.conv2d(zeros(0, 4, 4, 3), KERNEL, 1, "SAME", dilations=10000), "Conv2D"),
])
def test_a_padded_input_past_the_limit_is_refused(call, op_type):
    with pytest.raises(ValueError, match=f"^{op_type}: the input padded for its window would "
                       "be .* values\\), more than the 134,217,728 \\(2\\*\\*27\\)"):
        call()


@pytest.mark.parametrize("call, op_type, shape", [
    # 64 x 4097 windows of 4096 taps: 1.07e9 values from a 2 MB input
    (lambda: gv.nn.max_pool2d(zeros(1, 64, 8192, 1), [1, 4096], 1, "VALID"), "MaxPool",
     "1x64x4097x1x4096x1"),
    (lambda: gv.nn.avg_pool2d(zeros(1, 64, 8192, 1), [1, 4096], 1, "VALID"), "AvgPool",
     "1x64x4097x1x4096x1"),
    (lambda: gv.nn.conv2d(zeros(1, 64, 8192, 1), zeros(1, 4096, 1, 1), 1, "VALID"), "Conv2D",
     "1x64x4097x1x4096x1"),
])
def test_windows_past_the_limit_are_refused(call, op_type, shape):
    with pytest.raises(ValueError, match=f"^{op_type}: its windows would be {shape} "
                       "\\(1,074,003,968 values\\), more than the 134,217,728"):
        call()


@pytest.mark.parametrize("call, op_type, taps", [
    (lambda: gv.nn.max_pool2d(IMAGE, 10000, 1, "SAME"), "MaxPool", "10000x10000 window has "
     "100,000,000"),
    (lambda: gv.nn.avg_pool2d(IMAGE, 10000, 1, "SAME"), "AvgPool", "10000x10000 window has "
     "100,000,000"),
    (lambda: gv.nn.max_pool2d(IMAGE, 2 ** 31 - 1, 1, "SAME"), "MaxPool",
     "2147483647x2147483647 window has 4,611,686,014,132,420,609"),
    # an empty batch has nothing to pool, but the kernels would still visit each tap
    (lambda: gv.nn.max_pool2d(zeros(0, 4, 4, 3), 10000, 1, "SAME"), "MaxPool",
     "10000x10000 window has 100,000,000"),
    (lambda: gv.nn.conv2d(IMAGE, zeros(300, 300, 3, 1), 1, "SAME"), "Conv2D",
     "300x300 window has 90,000"),
])
def test_a_window_of_more_taps_than_the_limit_is_refused(call, op_type, taps):
    with pytest.raises(ValueError, match=f"^{op_type}: a {taps} taps, more than the 65,536"):
        call()


def _attrs(y: gv.Tensor) -> dict:
    return dict(y.op.attrs)


@pytest.mark.parametrize("which", ["AvgPoolGrad", "Conv2DBackpropInput"])
def test_a_gradient_op_bounds_its_window_too(which):
    # the gradient of a pool (or a convolution) of a 40000 x 40000 input to one value,
    # asked of the gradient op directly: given only the input's shape, it would fill a
    # 1.6e9-value array, though nothing is padded (VALID)
    g = gv.constant(zeros(1, 1, 1, 1))
    with pytest.raises(ValueError, match=f"^{which}: the gradient of its input would be "
                       "1x40000x40000x1 \\(1,600,000,000 values\\), more than the "
                       "134,217,728 .*: it is an array of the input's shape"):
        if which == "AvgPoolGrad":
            attrs = {**_attrs(gv.nn.avg_pool2d(zeros(1, 2, 2, 1), 2, 2, "VALID")),
                     "ksize": [100, 100], "strides": [40000, 40000]}
            nn.avg_pool_grad([1, 40000, 40000, 1], g, attrs)
        else:
            attrs = {**_attrs(gv.nn.conv2d(zeros(1, 2, 2, 1), zeros(2, 2, 1, 1), 2, "VALID")),
                     "strides": [40000, 40000]}
            nn.conv2d_backprop_input([1, 40000, 40000, 1], gv.constant(zeros(2, 2, 1, 1)),
                                        g, attrs)


@pytest.mark.parametrize("which", ["input", "filter"])
def test_a_conv_gradient_of_the_wrong_size_is_refused(which):
    # an out_backprop larger than the window gives would be read past the input's end
    attrs = _attrs(gv.nn.conv2d(IMAGE, KERNEL, 1, "SAME"))
    g = gv.constant(zeros(1, 5, 5, 2))
    op_type = "Conv2DBackpropInput" if which == "input" else "Conv2DBackpropFilter"
    with pytest.raises(ValueError, match=f"^{op_type}: Size of out_backprop doesn't match "
                       "computed: actual = 5, computed = 4 spatial_dim: 1 input: 4 filter: 3 "
                       "output: 5 stride: 1 dilation: 1"):
        if which == "input":
            nn.conv2d_backprop_input([1, 4, 4, 3], gv.constant(KERNEL), g, attrs)
        else:
            nn.conv2d_backprop_filter(gv.constant(IMAGE), [3, 3, 3, 2], g, attrs)


def test_a_pool_gradient_of_the_wrong_size_is_refused():
    x = gv.constant(IMAGE)
    attrs = _attrs(gv.nn.avg_pool2d(x, 2, 1, "SAME"))
    with pytest.raises(ValueError, match="^AvgPoolGrad: Size of out_backprop doesn't match"):
        nn.avg_pool_grad([1, 4, 4, 3], gv.constant(zeros(1, 5, 5, 3)), attrs)
    attrs = _attrs(gv.nn.max_pool2d(x, 2, 1, "SAME"))
    big = gv.constant(zeros(1, 5, 5, 3))
    with pytest.raises(ValueError, match="^MaxPoolGrad: Size of out_backprop doesn't match"):
        nn.max_pool_grad(x, big, big, attrs)


# ---------------------------------------------------------------- empty and zero sizes


def test_no_output_channels_gives_an_empty_output_and_gradients_as_in_tensorflow():
    # TensorFlow 2.21: tf.nn.conv2d of a (3, 3, 3, 0) filter is (1, 4, 4, 0)
    x, w = gv.Variable(IMAGE + 1), gv.Variable(zeros(3, 3, 3, 0))
    with gv.GradientTape() as tape:
        y = gv.nn.conv2d(x, w, 1, "SAME")
        loss = gv.reduce_sum(y)
    assert y.shape == (1, 4, 4, 0)
    dx, dw = tape.gradient(loss, [x, w])
    assert dx.shape == (1, 4, 4, 3) and not dx.numpy().any()
    assert dw.shape == (3, 3, 3, 0)


@pytest.mark.parametrize("x, w", [(IMAGE, zeros(3, 3, 0, 2)), (zeros(1, 4, 4, 0),
                                                                 zeros(3, 3, 0, 2))])
def test_a_filter_without_input_channels_gets_tensorflows_message(x, w):
    with pytest.raises(ValueError, match="^Conv2D: filter depth must be stricly positive, got 0"):
        gv.nn.conv2d(x, w, 1, "SAME")


@pytest.mark.parametrize("w, padding", [(zeros(0, 3, 3, 2), "SAME"), (zeros(3, 0, 3, 2), "VALID")])
def test_a_kernel_without_taps_gets_tensorflows_message(w, padding):
    with pytest.raises(ValueError, match="^Conv2D: filter must not have zero elements \\(i.e. "
                       "all dimensions must be non-zero\\)"):
        gv.nn.conv2d(IMAGE, w, 1, padding)


def test_a_kernel_without_taps_and_no_output_channels_is_empty_as_in_tensorflow():
    # TensorFlow checks the filter only when there is an output to compute
    assert gv.nn.conv2d(IMAGE, zeros(0, 3, 3, 0), 1, "SAME").shape == (1, 4, 4, 0)


@pytest.mark.parametrize("pads, side", [
    ([[0, 0], [2, 0], [0, 0], [0, 0]], "Top"), ([[0, 0], [0, 2], [0, 0], [0, 0]], "Bottom"),
    ([[0, 0], [0, 0], [2, 0], [0, 0]], "Left"), ([[0, 0], [0, 0], [0, 3], [0, 0]], "Right"),
])
def test_max_pool_padding_as_wide_as_the_window_gets_tensorflows_message(pads, side):
    # a window of padding only would have no maximum: TensorFlow refuses it
    amount = max(max(p) for p in pads)
    with pytest.raises(ValueError, match=f"^MaxPool: {side} padding {amount} needs to be "
                       "smaller than the window size 2"):
        gv.nn.max_pool2d(IMAGE, 2, 1, pads)


def test_max_pool_padding_narrower_than_the_window_still_computes():
    # (passes before too) a 2 x 3 window takes 2 columns of padding on the left
    y = gv.nn.max_pool2d(IMAGE, [2, 3], 1, [[0, 0], [0, 0], [2, 0], [0, 0]])
    assert y.shape == (1, 3, 4, 3)


# ---------------------------------------------------------------- an empty batch, nothing padded


@pytest.mark.parametrize("call, op_type", [
    (lambda: gv.nn.avg_pool2d(zeros(0, 400, 400, 1), 100, 1, "SAME"), "AvgPool"),
    (lambda: gv.nn.avg_pool2d(zeros(1, 400, 400, 0), 100, 1, "SAME"), "AvgPool"),
    (lambda: gv.nn.max_pool2d(zeros(0, 400, 400, 1), 100, 1, "SAME"), "MaxPool"),
    (lambda: nn.avg_pool_grad(
        [0, 400, 400, 1], gv.constant(zeros(0, 400, 400, 1)),
        _attrs(gv.nn.avg_pool2d(zeros(1, 2, 2, 1), 2, 1, "SAME")) | {"ksize": [100, 100]}),
     "AvgPoolGrad"),
])
def test_an_empty_batch_or_channel_axis_counts_as_one_in_the_windows(call, op_type):
    # pins that an empty batch or channel axis is refused exactly where one image of one
    # channel would be (400 x 400 windows of 100 x 100 taps: 1.6e9 values), at once: an
    # average pool works out each window's count of input cells whatever the batch (this
    # one took over a second while the same pool of one image was refused)
    with pytest.raises(ValueError, match=f"^{op_type}: its windows would be "
                       "[01]x400x400x100x100x[01] \\(1,600,000,000 values\\), more than the "
                       "134,217,728 .* x channels, an empty batch or channel axis counted as "
                       "1: "):
        call()


def test_an_empty_batch_within_the_limit_pools_to_an_empty_output_as_in_tensorflow():
    # (passes before too) TensorFlow 2.21: tf.nn.avg_pool2d of a (0, 40, 40, 1) input is
    # (0, 40, 40, 1); and so is its gradient
    x = gv.Variable(zeros(0, 40, 40, 1))
    with gv.GradientTape() as tape:
        y = gv.nn.avg_pool2d(x, 10, 1, "SAME")
        loss = gv.reduce_sum(y)
    assert y.shape == (0, 40, 40, 1)
    assert tape.gradient(loss, x).shape == (0, 40, 40, 1)


def _brute_counts(win: nn.Window) -> np.ndarray:
    """Each window's input (not padding) cells, counted tap by tap."""
    (oh, ow), (kh, kw), (sh, sw), (dh, dw) = win.out_hw, win.ksize, win.strides, win.dilations
    (t, _), (left, _) = win.pads
    h, w = win.in_hw
    counts = np.zeros((1, oh, ow, 1))
    for y in range(oh):
        for x in range(ow):
            counts[0, y, x, 0] = sum(0 <= y * sh + i * dh - t < h
                                     and 0 <= x * sw + j * dw - left < w
                                     for i in range(kh) for j in range(kw))
    return counts


@pytest.mark.parametrize("padding", ["SAME", "VALID", [[1, 0], [0, 2]], [[2, 3], [1, 1]]])
@pytest.mark.parametrize("dilations", [(1, 1), (2, 1), (1, 3)])
@pytest.mark.parametrize("strides", [(1, 1), (2, 1), (1, 3), (3, 2)])
def test_window_counts_are_those_of_each_window_cell_by_cell(padding, dilations, strides):
    # (passes before too) counts() is worked out per axis, an (OH,) by (OW,) outer product,
    # so that nothing as large as the windows is summed: the same counts as visiting them
    kind, pairs = (padding, None) if isinstance(padding, str) else ("EXPLICIT", padding)
    for in_hw in [(1, 1), (2, 5), (5, 2), (7, 6)]:
        for ksize in [(1, 1), (2, 3), (3, 2), (3, 3)]:
            try:
                win = nn.window("AvgPool", in_hw, ksize, strides, dilations, kind, pairs,
                                batch=1, depth=1)
            except ValueError:  # a window that reaches past a VALID input
                continue
            counts = win.counts()
            assert counts.shape == (1, *win.out_hw, 1) and counts.dtype == np.float64
            assert np.array_equal(counts, _brute_counts(win)), (in_hw, ksize)


@pytest.mark.parametrize("kind, pairs", [("VALID", None), ("EXPLICIT", [[0, 0], [0, 0]])])
def test_an_input_past_the_limit_is_taken_where_nothing_is_padded(kind, pairs):
    # pins that the padded-input check applies only where padding copies the input: a
    # 20000 x 20000 image (4e8 values) in 2 x 2 windows 4 apart is 1e8 window values,
    # within the limit, and VALID or zero padding is the input itself (shapes only here:
    # nothing is allocated)
    win = nn.window("MaxPool", (20000, 20000), (2, 2), (4, 4), (1, 1), kind, pairs, batch=1,
                    depth=1)
    assert win.out_hw == (5000, 5000) and win.pads == ((0, 0), (0, 0))
    # one row of padding does copy it, and is refused
    with pytest.raises(ValueError, match="^MaxPool: the input padded for its window would be "
                       "1x20001x20000x1"):
        nn.window("MaxPool", (20000, 20000), (2, 2), (4, 4), (1, 1), "EXPLICIT",
                  [[1, 0], [0, 0]], batch=1, depth=1)
