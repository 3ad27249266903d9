"""TensorFlow's everyday ops at the values its documentation singles out, written out by hand.

Each number here is what TensorFlow 2.21 gives, run (``make crosscheck`` runs the same
cases beside it): ``xlogy(0, 0)`` is 0 with a gradient of 0, ``divide_no_nan`` is 0 at
a zero divisor, ``round`` takes halves to the even number, ``floor`` gives no gradient.
Every op's rule is checked against finite differences in ``tests/test_gradient_rules.py``.
"""

import numpy as np
import pytest

import gradviz as gv
from gradviz.engine import elementwise
from gradviz.engine.ops import OpType


def grads(f, *values):
    """f(*xs) and its gradients for each x, as lists."""
    xs = [gv.constant(np.array(v, np.float32)) for v in values]
    with gv.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = f(*xs)
    return y.numpy().tolist(), [None if g is None else g.numpy().tolist()
                                for g in tape.gradient(y, xs)]


def test_xlogy_of_zero_is_zero_with_a_zero_gradient():
    y, (gx, gy) = grads(gv.math.xlogy, [0.0, 0.0, 1.0, 2.0], [0.0, 2.0, 0.0, 4.0])
    assert y[:3] == [0.0, 0.0, -np.inf] and y[3] == pytest.approx(2 * np.log(4))
    assert gx[:3] == [0.0, 0.0, -np.inf] and gx[3] == pytest.approx(np.log(4))
    assert gy == [0.0, 0.0, np.inf, 0.5]


def test_xlog1py_and_xdivy_are_zero_where_x_is_zero():
    assert grads(gv.math.xlog1py, [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]) == (
        [0.0, 0.0, 0.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert grads(gv.math.xdivy, [0.0, 0.0, 1.0], [0.0, 2.0, 0.0]) == (
        [0.0, 0.0, np.inf], [[0.0, 0.0, np.inf], [0.0, 0.0, -np.inf]])


def test_divide_no_nan_is_zero_at_a_zero_divisor_and_so_are_its_gradients():
    y, (gx, gy) = grads(gv.math.divide_no_nan, [0.0, 1.0, 3.0], [0.0, 0.0, 2.0])
    assert y == [0.0, 0.0, 1.5]
    assert gx == [0.0, 0.0, 0.5] and gy == [0.0, 0.0, -0.75]


def test_multiply_no_nan_is_zero_where_y_is_zero_even_times_inf_or_nan():
    y, (gx, gy) = grads(gv.math.multiply_no_nan, [np.inf, np.nan, 2.0], [0.0, 0.0, 3.0])
    assert y == [0.0, 0.0, 6.0]
    assert gx == [0.0, 0.0, 3.0]
    assert gy[2] == 2.0 and np.isinf(gy[0]) and np.isnan(gy[1])  # x * grad: inf, NaN


def test_round_takes_halves_to_the_even_number_and_keeps_integers():
    x = gv.constant([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
    assert gv.round(x).numpy().tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]
    ints = gv.round(gv.constant([-3, 4]))
    assert ints.dtype == gv.int32 and ints.numpy().tolist() == [-3, 4]


@pytest.mark.parametrize("f", [gv.floor, gv.math.ceil, gv.round, lambda x: x // 2.0])
def test_flat_ops_give_none_and_zeros_only_when_asked(f):
    y, g = grads(f, [-1.5, 0.5, 2.0])
    assert g == [None]
    x = gv.constant([-1.5, 0.5, 2.0])
    assert gv.gradients(f(x), x, unconnected_gradients="zero")[0].numpy().tolist() == [0, 0, 0]


def test_floor_and_ceil_round_toward_minus_and_plus_infinity():
    x = gv.constant([-1.5, -0.5, 0.5, 1.5])
    assert gv.floor(x).numpy().tolist() == [-2.0, -1.0, 0.0, 1.0]
    assert gv.math.ceil(x).numpy().tolist() == [-1.0, -0.0, 1.0, 2.0]


def test_floordiv_and_floormod_follow_the_sign_of_the_divisor_as_python():
    a, b = gv.constant([7, -7, 7, -7]), gv.constant([2, 2, -2, -2])
    assert (a // b).numpy().tolist() == [3, -4, -4, 3] == [7 // 2, -7 // 2, 7 // -2, -7 // -2]
    assert (a % b).numpy().tolist() == [1, 1, -1, -1] == [7 % 2, -7 % 2, 7 % -2, -7 % -2]
    assert (a // b).dtype == gv.int32
    floats = gv.constant([7.0, 1.0, -7.0]) // gv.constant([0.1, 0.1, 0.0])
    assert floats.numpy().tolist() == [70.0, 10.0, -np.inf]  # floor(x / y), as TensorFlow's


def test_floormod_passes_grad_to_x_and_minus_floor_of_the_quotient_to_y():
    y, (gx, gy) = grads(gv.math.floormod, [7.5, -7.5, 1.0], [2.0, 2.0, 3.0])
    assert y == [1.5, 0.5, 1.0]
    assert gx == [1.0, 1.0, 1.0] and gy == [-3.0, 4.0, -0.0]


def test_an_integer_division_by_zero_is_refused():
    for f, op_type in ((gv.math.floordiv, "FloorDiv"), (gv.math.floormod, "FloorMod")):
        with pytest.raises(ZeroDivisionError, match=f"{op_type}: integer division by zero"):
            f(gv.constant([7, 1]), gv.constant([2, 0]))


def test_atan2_gives_the_angle_in_each_quadrant():
    y, (gy, gx) = grads(gv.atan2, [1.0, 1.0, -1.0, -1.0, 0.0], [1.0, -1.0, -1.0, 1.0, -1.0])
    assert np.allclose(y, [np.pi / 4, 3 * np.pi / 4, -3 * np.pi / 4, -np.pi / 4, np.pi])
    assert np.allclose(gy, [0.5, -0.5, -0.5, 0.5, -1.0])  # x / (x² + y²)
    assert np.allclose(gx, [-0.5, -0.5, 0.5, 0.5, 0.0])  # -y / (x² + y²)
    assert gv.atan2(y=1.0, x=0.0).numpy() == pytest.approx(np.pi / 2)


def test_log1p_expm1_and_reciprocal_at_their_edges():
    y, (g,) = grads(gv.math.log1p, [-1.0, 0.0, 1e-7])
    assert y[:2] == [-np.inf, 0.0] and y[2] == pytest.approx(1e-7, rel=1e-6)
    assert g[:2] == [np.inf, 1.0]
    y, (g,) = grads(gv.math.expm1, [0.0, 1e-7, 1.0])
    assert y[0] == 0.0 and y[1] == pytest.approx(1e-7, rel=1e-6)
    assert g[0] == 1.0 and g[2] == pytest.approx(np.e, rel=1e-6)
    assert grads(gv.math.reciprocal, [0.0, -2.0, 4.0]) == (
        [np.inf, -0.5, 0.25], [[-np.inf, -0.25, -0.0625]])


def test_cumsum_exclusive_and_reverse():
    x = [1.0, 2.0, 4.0]
    cases = {(False, False): [1.0, 3.0, 7.0], (True, False): [0.0, 1.0, 3.0],
             (False, True): [7.0, 6.0, 4.0], (True, True): [6.0, 4.0, 0.0]}
    w = gv.constant([1.0, 10.0, 100.0])
    for (exclusive, reverse), want in cases.items():
        y, (g,) = grads(lambda t, e=exclusive, r=reverse: gv.math.cumsum(
            t, exclusive=e, reverse=r) * w, x)
        assert [v / s for v, s in zip(y, [1, 10, 100])] == want
        # each input's gradient: the weights of the running sums it went into
        into = {(False, False): [111, 110, 100], (True, False): [110, 100, 0],
                (False, True): [1, 11, 111], (True, True): [0, 1, 11]}
        assert g == into[(exclusive, reverse)]


def test_not_equal_is_an_op_and_so_is_the_operator():
    x = gv.constant([1.0, 2.0, 3.0])
    ne = x != 2.0
    assert ne.op.type == "NotEqual" and ne.numpy().tolist() == [True, False, True]
    assert gv.not_equal(gv.constant([True, False]), True).numpy().tolist() == [False, True]
    assert (x != None) is True  # noqa: E711 - as TensorFlow's
    assert x == x and not (x == gv.constant([1.0, 2.0, 3.0]))  # == stays identity
    assert len({x, gv.identity(x)}) == 2  # so tensors are still keys
    assert gv.get_gradient_function("NotEqual") is None


def test_the_float_only_ops_refuse_integers_and_bools_by_name():
    with pytest.raises(TypeError, match="Xlogy: expects a float tensor"):
        gv.math.xlogy(gv.constant([1]), gv.constant([2]))
    with pytest.raises(TypeError, match="Log1p: expects a float tensor"):
        gv.math.log1p(gv.constant([1]))
    with pytest.raises(TypeError, match="Atan2: .*bool"):
        gv.atan2(gv.constant([True]), 1.0)
    with pytest.raises(TypeError, match="FloorDiv: .*bool"):
        gv.constant([True]) // gv.constant([True])


def test_the_table_is_the_one_place_an_elementwise_op_is_declared():
    for e in elementwise.TABLE:
        fn = getattr(gv.math, e.name)
        assert fn.__name__ == e.name and fn.__doc__ == e.doc
        assert getattr(OpType, e.constant) == e.op_type
        assert (getattr(gv, e.name, None) is fn) == e.top
        assert len(e.formulas) == len(e.grads) == len(e.roles)
        assert all((f is None) == (g is None) for f, g in zip(e.formulas, e.grads))


def test_segment_ops_give_an_empty_segment_zero_and_no_gradient():
    data = [[1.0, 2.0], [1.0, 4.0], [5.0, 6.0], [0.0, 6.0]]
    ids = [0, 0, 2, 2]
    y, (g,) = grads(lambda d: gv.math.segment_sum(d, ids), data)
    assert y == [[2.0, 6.0], [0.0, 0.0], [5.0, 12.0]] and g == [[1.0, 1.0]] * 4
    y, (g,) = grads(lambda d: gv.math.segment_mean(d, ids), data)
    assert y == [[1.0, 3.0], [0.0, 0.0], [2.5, 6.0]] and g == [[0.5, 0.5]] * 4
    y, (g,) = grads(lambda d: gv.math.segment_max(d, ids), data)
    assert y == [[1.0, 4.0], [0.0, 0.0], [5.0, 6.0]]
    assert g == [[0.5, 0.0], [0.5, 1.0], [1.0, 0.5], [0.0, 0.5]]  # ties share
    with pytest.raises(ValueError, match="SegmentSum: segment ids are not increasing"):
        gv.math.segment_sum(data, [0, 2, 1, 2])


def test_a_euclidean_norm_of_zeros_has_a_nan_gradient_as_in_tensorflow():
    y, (g,) = grads(lambda x: gv.math.reduce_euclidean_norm(x, axis=1), [[3.0, 4.0], [0.0, 0.0]])
    assert y == [5.0, 0.0]
    assert g[0] == pytest.approx([0.6, 0.8]) and np.isnan(g[1]).all()


@pytest.mark.parametrize("masks, index", [
    (dict(begin=[0, 1, 0], end=[2, 3, 4], strides=[1, 1, 2]), np.s_[0:2, 1:3, 0:4:2]),
    (dict(begin=[1, 1, 0], end=[2, 3, 4], begin_mask=0b101), np.s_[:2, 1:3, :4]),
    (dict(begin=[0, 2, -1], end=[2, 0, 0], strides=[1, -1, -2], end_mask=0b100),
     np.s_[0:2, 2:0:-1, -1::-2]),
    (dict(begin=[1, 0], end=[2, 2], shrink_axis_mask=0b01), np.s_[1, 0:2]),
    (dict(begin=[0, -1], end=[0, 0], ellipsis_mask=0b01, shrink_axis_mask=0b10), np.s_[..., -1]),
    (dict(begin=[0, 0, 1], end=[0, 0, 3], ellipsis_mask=0b001, new_axis_mask=0b010),
     np.s_[..., None, 1:3]),
])
def test_strided_slice_reads_tensorflows_masks(masks, index):
    cube = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    y = gv.strided_slice(gv.constant(cube), **masks)
    assert y.op.type == "StridedSlice" and y.numpy().tolist() == cube[index].tolist()


def test_strided_slice_refuses_two_ellipses_and_a_zero_stride():
    x = gv.constant(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="Multiple ellipses"):
        gv.strided_slice(x, [0, 0], [1, 1], [1, 1], ellipsis_mask=0b11)
    with pytest.raises(ValueError, match=r"strides\[1\] must be non-zero"):
        gv.strided_slice(x, [0, 0], [1, 1], [1, 0])


def test_roll_reverse_slice_and_repeat_move_the_gradient_back():
    w = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    _, (g,) = grads(lambda t: gv.roll(t, 1, 1) * w, x)
    assert g == [[2.0, 3.0, 1.0], [5.0, 6.0, 4.0]]
    _, (g,) = grads(lambda t: gv.reverse(t, [0]) * w, x)
    assert g == [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]]
    _, (g,) = grads(lambda t: gv.slice(t, [1, 1], [1, -1]), x)
    assert g == [[0.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
    y, (g,) = grads(lambda t: gv.repeat(t, [2, 0, 1], axis=1), [[1.0, 2.0, 3.0]])
    assert y == [[1.0, 1.0, 3.0]] and g == [[2.0, 0.0, 1.0]]


def test_the_diagonal_the_band_and_the_trace():
    m = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    y, (g,) = grads(gv.linalg.trace, m)
    assert y == 6.0 and g == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert gv.linalg.diag([1.0, 2.0], num_rows=3, num_cols=2).numpy().tolist() == [
        [1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]
    assert gv.linalg.band_part(gv.constant(m), 0, -1).numpy().tolist() == [
        [1.0, 2.0, 3.0], [0.0, 5.0, 6.0]]  # the upper triangle
    assert gv.linalg.matrix_transpose(gv.constant(m)).shape == (3, 2)
    assert gv.tensordot(gv.constant(m), gv.constant(m), [[0], [0]]).numpy().tolist() == [
        [17.0, 22.0, 27.0], [22.0, 29.0, 36.0], [27.0, 36.0, 45.0]]


def test_what_tensorflow_refuses_or_allows_at_the_edges():
    x = gv.constant(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="StridedSlice: end is required with strides or masks"):
        gv.strided_slice(x, [1], strides=[1])
    with pytest.raises(ValueError, match=r"Slice: Expected begin\[0\] in \[0, 2\], but got -1"):
        gv.slice(x, [-1, 0], [1, 1])
    with pytest.raises(ValueError, match=r"Slice: Expected size\[0\] in \[0, 1\], but got 2"):
        gv.slice(x, [1, 0], [2, 1])
    with pytest.raises(TypeError, match="MatrixDiagV3: cannot use 0.5"):
        gv.linalg.diag(gv.constant([1, 2]), padding_value=0.5)
    unsigned = gv.round(gv.constant(np.array([3, 250], np.uint8)))
    assert unsigned.dtype == gv.uint8 and unsigned.numpy().tolist() == [3, 250]
    assert gv.repeat(gv.constant(np.zeros((0, 3), np.float32)), [1, 2, 3], axis=1).shape == (0, 6)
    ne = gv.constant([1.0, 2.0]) != gv.constant([1.0, 2.0, 3.0])  # no broadcast: True
    assert ne.dtype == gv.bool_ and ne.numpy().item() is True
