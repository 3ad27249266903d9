"""Convolution and pooling as TensorFlow's ``tf.nn``: values worked out by hand for the
cases that are easy to get wrong, TensorFlow's error messages, the gradient op types a
backward pass builds, and gradients of gradients.  Every rule is also checked against
finite differences, first and second order, in ``test_gradient_rules.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradviz as gv

RNG = np.random.default_rng(3)


def grid(h: int, w: int) -> gv.Tensor:
    """0, 1, 2, ... as a (1, h, w, 1) image."""
    return gv.constant(np.arange(h * w, dtype=np.float64).reshape(1, h, w, 1))


def plane(t: gv.Tensor) -> list:
    """The one image and channel of a (1, h, w, 1) tensor, as lists."""
    return t.numpy()[0, :, :, 0].tolist()


def ones_kernel(k: int) -> np.ndarray:
    return np.ones((k, k, 1, 1))


# ---------------------------------------------------------------- values by hand


def test_same_padding_of_an_odd_size_puts_the_extra_row_and_column_after():
    # 5 wide, kernel 2, stride 2: 3 outputs need 6 cells, so one zero goes below and
    # right (TensorFlow's SAME puts the odd one after), and the last window holds 4, 9
    y = gv.nn.conv2d(grid(5, 5), ones_kernel(2), 2, "SAME")
    assert plane(y) == [[12, 20, 13], [52, 60, 33], [41, 45, 24]]
    assert y.op.get_attr("pads") == [[0, 1], [0, 1]]


def test_same_padding_with_stride_2_over_an_even_size_pads_only_after():
    x = gv.Variable(np.zeros((1, 4, 4, 1)))
    with gv.GradientTape() as tape:
        y = gv.nn.conv2d(x, ones_kernel(3), 2, "SAME")
    assert y.shape == (1, 2, 2, 1) and y.op.get_attr("pads") == [[0, 1], [0, 1]]
    # windows cover rows 0-2 and 2-4: row 2 is in both, so it gets the gradient twice
    counts = [[1, 1, 2, 1], [1, 1, 2, 1], [2, 2, 4, 2], [1, 1, 2, 1]]
    assert plane(tape.gradient(y, x)) == counts


def test_dilation_2_spreads_the_taps_two_apart():
    # taps at (i, j), (i, j+2), (i+2, j), (i+2, j+2): 4 x[i, j] + 24 on a 5-wide grid
    y = gv.nn.conv2d(grid(5, 5), ones_kernel(2), 1, "VALID", dilations=2)
    assert plane(y) == [[24, 28, 32], [44, 48, 52], [64, 68, 72]]


def test_dilation_and_stride_together_step_two_and_reach_two_apart():
    # 1, 2, ..., 7 in a row; kernel [1, 10] with taps two apart, moved two at a time.
    # TensorFlow 2.21 gives these numbers too (its CPU kernel computes the gradients
    # of a dilated conv in float32 with SAME or VALID padding).
    x = gv.Variable(np.arange(1.0, 8.0).reshape(1, 1, 7, 1))
    w = gv.Variable(np.array([1.0, 10.0]).reshape(1, 2, 1, 1))
    with gv.GradientTape(persistent=True) as tape:
        valid = gv.nn.conv2d(x, w, 2, "VALID", dilations=2)
        # SAME: 4 outputs reaching 3 cells need 9, so one zero goes on each side
        same = gv.nn.conv2d(x, w, 2, "SAME", dilations=2)
    # VALID windows at 0, 2, 4 read x[0] and x[2], x[2] and x[4], x[4] and x[6]
    assert plane(valid) == [[31, 53, 75]]
    assert plane(tape.gradient(valid, x)) == [[1, 0, 11, 0, 11, 0, 10]]
    assert tape.gradient(valid, w).numpy().ravel().tolist() == [1 + 3 + 5, 3 + 5 + 7]
    assert same.op.get_attr("pads") == [[0, 0], [1, 1]]
    assert plane(same) == [[20, 42, 64, 6]]
    assert plane(tape.gradient(same, x)) == [[0, 11, 0, 11, 0, 11, 0]]
    assert tape.gradient(same, w).numpy().ravel().tolist() == [0 + 2 + 4 + 6, 2 + 4 + 6 + 0]


def test_stride_2_input_gradient_skips_the_cells_no_window_reached():
    x = gv.Variable(np.zeros((1, 5, 5, 1)))
    with gv.GradientTape() as tape:
        y = gv.nn.conv2d(x, np.arange(4.0).reshape(2, 2, 1, 1), 2, "VALID")
    g = plane(tape.gradient(y, x))
    # each 2x2 window gets the kernel [[0, 1], [2, 3]]; the last row and column are
    # in no window (VALID drops them)
    assert g == [[0, 1, 0, 1, 0], [2, 3, 2, 3, 0], [0, 1, 0, 1, 0], [2, 3, 2, 3, 0],
                 [0, 0, 0, 0, 0]]


def test_explicit_padding_pads_as_given():
    y = gv.nn.conv2d(grid(2, 2), ones_kernel(2), 1, [[0, 0], [1, 0], [0, 1], [0, 0]])
    # [[0, 1], [2, 3]] with a row of zeros above and a column right
    assert plane(y) == [[1, 1], [6, 4]]


def test_max_pool_gives_a_tie_to_the_first_maximum_in_row_major_order():
    x = gv.Variable(np.array([[1.0, 3.0, 5.0, 5.0],
                              [3.0, 2.0, 5.0, 5.0]]).reshape(1, 2, 4, 1))
    with gv.GradientTape() as tape:
        y = gv.nn.max_pool2d(x, 2, 2, "VALID")
    assert plane(y) == [[3, 5]]
    assert plane(tape.gradient(y, x)) == [[0, 1, 1, 0], [0, 0, 0, 0]]


def test_max_pool_overlapping_windows_add_up_at_the_winner():
    x = gv.Variable(np.array([[0.0, 1, 0], [1, 9, 1], [0, 1, 0]]).reshape(1, 3, 3, 1))
    with gv.GradientTape() as tape:
        y = gv.nn.max_pool2d(x, 2, 1, "VALID")
    assert plane(tape.gradient(y, x)) == [[0, 0, 0], [0, 4, 0], [0, 0, 0]]


def test_max_pool_same_padding_never_wins_over_negative_values():
    x = gv.constant(-np.arange(1.0, 10.0).reshape(1, 3, 3, 1))
    assert plane(gv.nn.max_pool2d(x, 2, 2, "SAME")) == [[-1, -3], [-7, -9]]


def test_avg_pool_same_padding_averages_only_the_input_cells():
    x = gv.Variable(np.arange(9.0).reshape(1, 3, 3, 1))
    with gv.GradientTape() as tape:
        y = gv.nn.avg_pool2d(x, 2, 2, "SAME")
    assert plane(y) == [[2, 3.5], [6.5, 8]]
    assert plane(tape.gradient(y, x)) == [[0.25, 0.25, 0.5], [0.25, 0.25, 0.5],
                                          [0.5, 0.5, 1.0]]


def test_bias_add_sums_the_bias_gradient_over_every_axis_but_the_last():
    x = gv.constant(RNG.normal(size=(2, 3, 4)))
    b = gv.Variable(np.zeros(4))
    with gv.GradientTape() as tape:
        y = gv.nn.bias_add(x, b)
    assert tape.gradient(y, b).numpy().tolist() == [6.0] * 4


def test_conv1d_is_a_conv2d_over_a_height_of_one():
    x, w = RNG.normal(size=(2, 7, 3)), RNG.normal(size=(3, 3, 4))
    y = gv.nn.conv1d(x, w, 2, "SAME")
    y2 = gv.nn.conv2d(x[:, None], w[None], [1, 2], "SAME")
    assert y.shape == (2, 4, 4)
    np.testing.assert_allclose(y.numpy(), y2.numpy()[:, 0])
    assert y.op.type == "Reshape" and y.op.inputs[0].op.type == "Conv2D"
    assert y.op.name.startswith("conv1d/")


def test_conv2d_matches_a_plain_loop_for_every_padding_stride_and_dilation():
    x, w = RNG.normal(size=(2, 6, 7, 3)), RNG.normal(size=(3, 2, 3, 4))
    for padding in ("SAME", "VALID", [[0, 0], [2, 1], [0, 3], [0, 0]]):
        for strides, dilations in ((1, 1), (2, 1), ([1, 3], 1), (1, 2), (1, [2, 1]), (2, 2),
                                  ([2, 3], [3, 2])):
            y = gv.nn.conv2d(x, w, strides, padding, dilations=dilations)
            np.testing.assert_allclose(y.numpy(), _loop_conv(x, w, y.op.attrs), atol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID", [[0, 0], [2, 1], [0, 3], [0, 0]]],
                         ids=["SAME", "VALID", "explicit"])
def test_dilated_strided_conv_gradients_match_finite_differences(padding):
    def conv(x, w):
        return gv.nn.conv2d(x, w, [2, 3], padding, dilations=[3, 2])

    def input_gradient(x, w):  # its own gradient is the second order
        with gv.GradientTape() as tape:
            tape.watch(x)
            y = gv.reduce_sum(gv.tanh(conv(x, w)))
        return tape.gradient(y, x)

    points = [RNG.normal(size=(2, 8, 9, 2)), RNG.normal(size=(2, 3, 2, 3))]
    for f in (conv, input_gradient):
        result = gv.check_gradients(f, points)
        assert result.passed, result


def _loop_conv(x, w, attrs):
    """The definition, one output at a time."""
    (t, b), (left, r) = attrs["pads"]
    xp = np.pad(x, ((0, 0), (t, b), (left, r), (0, 0)))
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    kh, kw = w.shape[:2]
    oh = (xp.shape[1] - (kh - 1) * dh - 1) // sh + 1
    ow = (xp.shape[2] - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * sh: i * sh + (kh - 1) * dh + 1: dh,
                       j * sw: j * sw + (kw - 1) * dw + 1: dw]
            out[:, i, j] = np.einsum("nhwc,hwco->no", patch, w)
    return out


# ---------------------------------------------------------------- the gradient ops


def test_the_backward_pass_builds_tensorflows_gradient_ops():
    x, w = gv.Variable(RNG.normal(size=(1, 4, 4, 1))), gv.Variable(RNG.normal(size=(3, 3, 1, 2)))
    with gv.GradientTape() as tape:
        y = gv.nn.max_pool2d(gv.nn.conv2d(x, w, 1, "SAME"), 2, 2, "VALID")
        loss = gv.reduce_sum(gv.nn.avg_pool2d(y, 2, 2, "VALID"))
    gx, gw = tape.gradient(loss, [x, w])
    assert gx.op.type == "Conv2DBackpropInput" and gw.op.type == "Conv2DBackpropFilter"
    assert gx.op.inputs[1].op.type == "MaxPoolGrad"
    assert gx.op.inputs[1].op.inputs[2].op.type == "AvgPoolGrad"


def test_a_gradient_through_conv_and_pools_can_be_differentiated_again():
    x0, w0 = RNG.normal(size=(1, 5, 5, 2)), RNG.normal(size=(3, 3, 2, 2))

    def penalty(xv, wv):
        """The squared size of the first gradients, as a gradient penalty is."""
        x, w = gv.Variable(xv), gv.Variable(wv)
        with gv.GradientTape(persistent=True) as outer:
            with gv.GradientTape() as inner:
                h = gv.nn.conv2d(x, w, 2, "SAME")
                loss = gv.reduce_sum(gv.nn.max_pool2d(h, 2, 1, "SAME") ** 2.0)
                loss += gv.reduce_sum(gv.nn.avg_pool2d(gv.tanh(h), 2, 1, "SAME") ** 2.0)
            gx, gw = inner.gradient(loss, [x, w])
            z = gv.reduce_sum(gx * gx) + gv.reduce_sum(gw * gw)
        return z, outer.gradient(z, [x, w])

    _, (dx, dw) = penalty(x0, w0)
    for analytic, point, which in ((dx, x0, 0), (dw, w0, 1)):
        numeric = np.zeros_like(point)
        for idx in np.ndindex(point.shape):
            shifted = []
            for sign in (1, -1):
                p = point.copy()
                p[idx] += sign * 1e-6
                args = (p, w0) if which == 0 else (x0, p)
                shifted.append(float(penalty(*args)[0].numpy()))
            numeric[idx] = (shifted[0] - shifted[1]) / 2e-6
        # a central difference of a penalty near 1e5 carries rounding of about 1e-5
        # whatever the element, so the tolerance is relative to the largest gradient
        scale = np.abs(numeric).max()
        np.testing.assert_allclose(analytic.numpy(), numeric, rtol=1e-5, atol=1e-7 * scale)


def test_float32_stays_float32():
    x = gv.constant(np.ones((1, 3, 3, 1), np.float32))
    w = gv.Variable(np.ones((2, 2, 1, 1), np.float32))
    with gv.GradientTape() as tape:
        y = gv.nn.avg_pool2d(gv.nn.max_pool2d(gv.nn.conv2d(x, w, 1, "SAME"), 2, 1, "SAME"),
                             2, 1, "SAME")
    assert y.dtype == gv.float32 and tape.gradient(y, w).dtype == gv.float32


# ---------------------------------------------------------------- bad arguments


IMAGE, KERNEL = np.zeros((1, 4, 4, 3)), np.zeros((3, 3, 3, 2))


@pytest.mark.parametrize("call, error, message", [
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, [1, 1, 1], "SAME"), ValueError,
     "strides should be of length 1, 2 or 4. Received: strides=\\[1, 1, 1\\] of length 3"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 0, "SAME"), ValueError,
     "Row and column strides should be larger than 0."),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, [1, -1], "SAME"), ValueError,
     "Row and column strides should be larger than 0."),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, [2, 1, 1, 1], "SAME"), ValueError,
     "does not yet support strides in the batch and depth dimensions"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, "SAME", dilations=0), ValueError,
     "Dilated rates should be larger than 0."),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1.5, "SAME"), TypeError,
     "strides must be an int or a list of 1, 2 or 4 ints"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, "same"), ValueError,
     "padding must be \"SAME\", \"VALID\" or a list"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, "EXPLICIT"), ValueError,
     "'EXPLICIT' is not a valid value for `padding`"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, [[0, 0], [-1, 0], [0, 0], [0, 0]]), ValueError,
     "All elements of explicit_paddings must be nonnegative"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, [[1, 0], [0, 0], [0, 0], [0, 0]]), ValueError,
     "Nonzero explicit padding in the batch or depth dimensions is not supported"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, [[0, 0], [1], [0, 0], [0, 0]]), ValueError,
     "each element of `padding` must be a list/tuple of size 2"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, [[0, 0], [0, 0], [0, 0]]), ValueError,
     "When padding is a list, it must be of size 4"),
    (lambda: gv.nn.conv2d(IMAGE[0], KERNEL, 1, "SAME"), ValueError,
     "input must be 4-dimensional, got .* of shape \\(4, 4, 3\\)"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL[0], 1, "SAME"), ValueError,
     "filter must be 4-dimensional"),
    (lambda: gv.nn.conv2d(IMAGE, np.zeros((3, 3, 2, 2)), 1, "SAME"), ValueError,
     "input depth must be evenly divisible by filter depth: 3 vs 2"),
    (lambda: gv.nn.conv2d(np.zeros((1, 4, 4, 4)), np.zeros((3, 3, 2, 2)), 1, "SAME"),
     ValueError, "grouped convolutions are not supported: .* has 4 channels and .* takes 2, "
     "which TensorFlow reads as 2 groups"),
    (lambda: gv.nn.conv2d(np.zeros((1, 2, 2, 3)), np.zeros((4, 4, 3, 1)), 1, "VALID"),
     ValueError, "Computed output size would be negative: -1 \\[input_size: 2, "
     "effective_filter_size: 4, stride: 1\\]"),
    (lambda: gv.nn.conv2d(np.zeros((1, 3, 3, 3)), np.zeros((2, 2, 3, 1)), 1, "VALID",
                          dilations=4), ValueError,
     "Computed output size would be negative: -1 \\[input_size: 3, effective_filter_size: 5"),
    (lambda: gv.nn.conv2d(np.zeros((1, 4, 4, 3), np.int32), np.zeros((3, 3, 3, 2), np.int32),
                          1, "SAME"), TypeError, "expects a float tensor"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL.astype(np.float32), 1, "SAME"), TypeError,
     "has dtype float64 but .* has dtype float32"),
    (lambda: gv.nn.conv2d(IMAGE, KERNEL, 1, "SAME", data_format="NCHW"), ValueError,
     "data_format must be \"NHWC\""),
    (lambda: gv.nn.max_pool2d(IMAGE, 0, 1, "SAME"), ValueError,
     "Sliding window ksize must be positive. The specified or inferred ksize is: 1,0,0,1"),
    (lambda: gv.nn.avg_pool2d(IMAGE, [2, -1], 1, "SAME"), ValueError,
     "ksize must be a positive int32 value, got:-1"),
    (lambda: gv.nn.max_pool2d(IMAGE, 2, [1, -1], "SAME"), ValueError,
     "Stride must be > 0, but got -1"),
    (lambda: gv.nn.avg_pool2d(IMAGE, 2, [2, 1, 1, 1], "SAME"), ValueError,
     "Pooling is not yet supported on the batch dimension."),
    (lambda: gv.nn.max_pool2d(IMAGE, [1, 2, 2, 2], 1, "SAME"), ValueError,
     "MaxPooling supports exactly one of pooling across depth or pooling across width/height."),
    (lambda: gv.nn.max_pool2d(IMAGE, [1, 1, 1, 3], [1, 1, 1, 3], "VALID"), ValueError,
     "pooling across the channels is not supported"),
    (lambda: gv.nn.max_pool2d(IMAGE, 2, [1, 1, 1, 2], "SAME"), ValueError,
     "pooling across the channels is not supported"),
    (lambda: gv.nn.max_pool2d(IMAGE, 6, 1, "VALID"), ValueError,
     "Computed output size would be negative: -1 \\[input_size: 4, effective_filter_size: 6"),
    (lambda: gv.nn.avg_pool2d(IMAGE, 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]), ValueError,
     "padding must be \"SAME\" or \"VALID\""),
    (lambda: gv.nn.conv1d(IMAGE, KERNEL, 1, "SAME"), ValueError,
     "input must be 3-dimensional"),
    (lambda: gv.nn.conv1d(IMAGE[0], KERNEL[0], [1, 2], "SAME"), ValueError,
     "stride should be of length 1 or 3. Received: stride=\\[1, 2\\] of length 2"),
    (lambda: gv.nn.conv1d(IMAGE[0], KERNEL[0], [2, 1, 1], "SAME"), ValueError,
     "does not yet support strides in the batch and depth dimensions"),
    (lambda: gv.nn.bias_add(IMAGE, np.zeros((3, 1))), ValueError, "Biases must be 1D: \\[3,1\\]"),
    (lambda: gv.nn.bias_add(IMAGE, 1.0), ValueError, "Biases must be 1D: \\[\\]"),
    (lambda: gv.nn.bias_add(IMAGE, "b"), TypeError, "BiasAdd: argument bias "),
    (lambda: gv.nn.bias_add(np.zeros(3), np.zeros(3)), ValueError,
     "Input tensor must be at least 2D: \\[3\\]"),
    (lambda: gv.nn.bias_add(IMAGE, np.zeros(2)), ValueError,
     "Must provide as many biases as the last dimension of the input tensor: \\[2\\] vs. "
     "\\[1,4,4,3\\]"),
])
def test_bad_arguments_get_tensorflows_message(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_python_bias_takes_the_values_dtype():
    x = gv.constant(np.zeros((2, 3), np.float32))
    y = gv.nn.bias_add(x, [1, 2, 3])
    assert y.dtype == gv.float32 and y.numpy().tolist() == [[1, 2, 3], [1, 2, 3]]


def test_the_op_type_starts_every_message():
    with pytest.raises(ValueError, match="^Conv2D: "):
        gv.nn.conv2d(IMAGE, KERNEL, 0, "SAME")
    with pytest.raises(ValueError, match="^MaxPool: "):
        gv.nn.max_pool2d(IMAGE, 0, 1, "SAME")
    with pytest.raises(ValueError, match="^AvgPool: "):
        gv.nn.avg_pool2d(IMAGE, 2, 1, "same")


def test_a_zero_sized_output_is_allowed_as_in_tensorflow():
    # (input 2 - reach 3 + stride 1) / 1 = 0: an empty output, not an error
    y = gv.nn.conv2d(np.zeros((1, 2, 2, 1)), np.zeros((3, 3, 1, 1)), 1, "VALID")
    assert y.shape == (1, 0, 0, 1)


def test_nn_namespace_has_tensorflows_activation_names():
    assert gv.nn.relu is gv.relu and gv.nn.softmax is gv.softmax
    assert gv.nn.softmax_cross_entropy_with_logits is gv.softmax_cross_entropy_with_logits


# ---------------------------------------------------------------- the words


def _step(tr, op_type):
    return next(s.index for s in tr.steps if s.kind == "backward" and s.op_type == op_type)


def test_conv_and_pool_steps_say_what_the_backward_does_with_the_steps_numbers():
    from gradviz.views.explain import describe
    x = gv.Variable(RNG.normal(size=(1, 5, 5, 1)), name="nn_img")
    w = gv.Variable(RNG.normal(size=(3, 3, 1, 2)), name="nn_kern")
    tr = gv.trace_gradients(gv.reduce_sum(gv.nn.max_pool2d(
        gv.nn.conv2d(x, w, 2, "SAME"), 2, 1, "SAME")), [x, w])
    conv = describe(tr, _step(tr, "Conv2D"))
    assert "flipped top to bottom and left to right" in conv.sentence
    assert ("the 3×3 kernel moved with stride 2 over the 5×5 input, with SAME padding of "
            "zeros adding 1 row above, 1 below, 1 column left and 1 right, so it stood at "
            "3×3 positions") in conv.sentence
    assert "1 zero between neighbours" in conv.sentence
    assert "nn_kern[::-1, ::-1].swapaxes(2, 3)" in conv.formula
    pool = describe(tr, _step(tr, "MaxPool"))
    assert "sends each window's gradient to the element of Conv2D that won it" in pool.sentence
    assert "padding of -inf, which never wins," in pool.sentence


def test_a_strided_dilated_conv_step_says_each_in_its_place():
    from gradviz.views.explain import describe
    x = gv.Variable(RNG.normal(size=(1, 9, 9, 1)), name="nn_img2")
    w = gv.Variable(RNG.normal(size=(2, 2, 1, 1)), name="nn_kern2")
    tr = gv.trace_gradients(gv.reduce_sum(gv.nn.conv2d(x, w, [3, 2], "VALID", dilations=2)),
                            [x, w])
    sentence = describe(tr, _step(tr, "Conv2D")).sentence
    # reach 3: (9 - 3) // 3 + 1 = 3 rows, (9 - 3) // 2 + 1 = 4 columns
    assert ("the 2×2 kernel, its taps 2 apart (dilation), moved with stride (3, 2) over the "
            "9×9 input") in sentence
    assert "stood at 3×4 positions" in sentence
    assert "2 zeros between rows and 1 zero between columns" in sentence


def test_a_max_pool_step_counts_its_ties():
    from gradviz.views.explain import describe
    x = gv.Variable(np.array([[1.0, 1.0, 2.0, 0.0], [0.0, 1.0, 0.0, 2.0]]).reshape(1, 2, 4, 1),
                    name="nn_ties")
    tr = gv.trace_gradients(gv.nn.max_pool2d(x, 2, 2, "VALID"), x)
    assert ("2 of the 2 windows had a tie for the maximum, and in each the first maximum, "
            "reading row by row, took the gradient") in describe(tr, _step(tr, "MaxPool")).sentence
    relu = gv.nn.relu(x - 5.0)  # every value 0: every window a tie of zeros
    tr = gv.trace_gradients(gv.nn.max_pool2d(relu, 2, 2, "VALID"), x)
    assert ("2 of the 2 windows had a tie for the maximum, all between zeros (a ReLU's, most "
            "likely)") in describe(tr, _step(tr, "MaxPool")).sentence


def test_the_diagram_labels_conv_and_pool_nodes_with_their_window():
    x = gv.Variable(RNG.normal(size=(1, 5, 5, 1)), name="nn_lab_x")
    w = gv.Variable(RNG.normal(size=(3, 3, 1, 1)), name="nn_lab_w")
    tr = gv.trace_gradients(gv.reduce_sum(gv.nn.avg_pool2d(
        gv.nn.conv2d(x, w, 2, [[0, 0], [1, 2], [0, 1], [0, 0]], dilations=1), 2, 2, "VALID")),
        [x, w])
    dot = tr.to_dot().source
    assert "3×3, stride 2, pad 1,2,0,1" in dot and "2×2, stride 2, VALID" in dot


# ---------------------------------------------------------------- the fast paths


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis, keepdims", [((0, 1, 2), False), ((0, 1, 2), True), (0, False),
                                            ((0, 1), True)])
def test_a_large_sum_over_leading_axes_is_numpys_sum(dtype, axis, keepdims):
    v = RNG.normal(size=(32, 28, 28, 8)).astype(dtype)
    v[3, 4, 5, 6] = np.nan
    v[1, 2, 3, 1] = np.inf
    got = gv.reduce_sum(v, axis, keepdims=keepdims).numpy()
    want = np.sum(v.astype(np.float64), axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == dtype
    # as exact as the float type allows: within a millionth of the sum of magnitudes
    scale = np.sum(np.abs(np.nan_to_num(v, posinf=0)), axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=0, atol=float(scale.max()) * (
        1e-6 if dtype == np.float32 else 1e-14))


def test_the_kept_columns_belong_to_their_own_input():
    """The filter gradient reuses the forward's im2col only for the very same input."""
    w = gv.Variable(RNG.normal(size=(3, 3, 1, 2)))
    a, b = RNG.normal(size=(2, 6, 6, 1)), RNG.normal(size=(2, 6, 6, 1))
    with gv.GradientTape() as tape:
        ya = gv.nn.conv2d(a, w, 1, "SAME")
        yb = gv.nn.conv2d(b, w, 1, "SAME")  # same shape and window, other values
        loss = gv.reduce_sum(ya * 2.0)
    ga = tape.gradient(loss, w).numpy()
    assert gv.reduce_sum(yb).numpy() != gv.reduce_sum(ya).numpy()
    want = 2 * np.einsum("nhwijc->ijc", np.lib.stride_tricks.sliding_window_view(
        np.pad(a, ((0, 0), (1, 1), (1, 1), (0, 0))), (3, 3), axis=(1, 2)
    ).transpose(0, 1, 2, 4, 5, 3))[..., None].repeat(2, axis=3)
    np.testing.assert_allclose(ga, want, rtol=1e-12)


def test_a_cnn_trace_saves_and_loads_with_its_windows_and_words():
    from gradviz.views.explain import describe
    x = gv.constant(RNG.normal(size=(1, 6, 6, 1)), name="nn_json_x")
    w = gv.Variable(RNG.normal(size=(3, 3, 1, 2)), name="nn_json_w")
    h = gv.nn.max_pool2d(gv.nn.conv2d(x, w, 2, [[0, 0], [1, 0], [0, 1], [0, 0]]), 2, 1, "SAME")
    tr = gv.trace_gradients(gv.reduce_sum(gv.nn.avg_pool2d(h, 2, 1, "VALID")), w)
    back = gv.Trace.from_json(tr.to_json())
    assert back.to_json() == tr.to_json()
    assert back.tensors == tr.tensors and back.ops == tr.ops and back.steps == tr.steps
    for s in tr.steps:
        assert describe(back, s.index) == describe(tr, s.index)
    bad = tr.to_json().replace('"padding":"EXPLICIT"', '"padding":"FULL"')
    assert bad != tr.to_json()
    with pytest.raises(ValueError, match='padding: expected "SAME", "VALID" or "EXPLICIT"'):
        gv.Trace.from_json(bad)
