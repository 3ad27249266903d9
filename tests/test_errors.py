"""Bad input gets a clear error naming what was wrong and what is accepted."""

import warnings

import numpy as np
import pytest

import gradviz as gv


def test_grad_ys_wrong_length():
    x = gv.constant([1.0, 2.0])
    with pytest.raises(ValueError, match=r"grad_ys has 2 entries but there is 1 y: give one per y"):
        gv.gradients(x * x, x, grad_ys=[gv.ones([2]), gv.ones([2])])


def test_grad_ys_wrong_shape_names_entry_and_shapes():
    x = gv.constant([1.0, 2.0])
    y = x * x
    with pytest.raises(ValueError, match=r"grad_ys\[0\] has shape \(3,\) but y\[0\] \(.*\) has shape \(2,\)"):
        gv.gradients(y, x, grad_ys=[gv.ones([3])])


def test_grad_ys_wrong_dtype_is_a_type_error():
    x = gv.constant([1.0, 2.0])
    with pytest.raises(TypeError, match=r"grad_ys\[0\] has dtype float64 but y\[0\] .* has dtype float32"):
        gv.gradients(x * x, x, grad_ys=[np.ones(2)])


def test_mixing_float_dtypes_names_both():
    a = gv.constant([1.0], gv.float32)
    b = gv.constant([1.0], gv.float64)
    with pytest.raises(TypeError, match=r"Add: .* has dtype float32 but .* has dtype float64"):
        a + b


def test_python_scalars_take_the_tensor_dtype():
    a = gv.constant([1.0], gv.float64)
    assert (a * 2).dtype == gv.float64
    assert (2.5 + a).dtype == gv.float64
    i = gv.constant([1, 2])
    assert (i * 2).dtype == gv.int32
    with pytest.raises(TypeError, match="without losing its fractional part"):
        i * 2.5


def test_default_dtypes_follow_tensorflow():
    assert gv.constant(1.0).dtype == gv.float32
    assert gv.constant(1).dtype == gv.int32
    assert gv.constant([[1.0, 2.0]]).dtype == gv.float32
    assert gv.constant(np.array([1.0])).dtype == gv.float64
    assert gv.constant(np.float64(1.0)).dtype == gv.float64


def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"MatMul: inner dimensions do not match: a has shape \(2, 3\) and b has shape \(2, 3\)"):
        gv.matmul(gv.ones([2, 3]), gv.ones([2, 3]))
    with pytest.raises(ValueError, match=r"MatMul: a must have rank >= 2"):
        gv.matmul(gv.ones([3]), gv.ones([3, 1]))


def test_broadcast_mismatch_names_shapes():
    with pytest.raises(ValueError, match=r"Mul: shapes \(2, 3\) .* and \(4,\) .* cannot be broadcast"):
        gv.ones([2, 3]) * gv.ones([4])


def test_bad_unconnected_value():
    x = gv.constant(1.0)
    with pytest.raises(ValueError, match=r"unconnected_gradients: 'zeros' is not accepted \(must be 'none', 'zero'"):
        gv.gradients(x * x, x, unconnected_gradients="zeros")


@pytest.mark.parametrize("axis", [2, -3, [0, 0]])
def test_bad_axis(axis):
    with pytest.raises(ValueError, match=r"Sum: axis"):
        gv.reduce_sum(gv.ones([2, 3]), axis=axis)


def test_axis_message_says_the_accepted_range():
    with pytest.raises(ValueError, match=r"accepted: -2\.\.1"):
        gv.reduce_sum(gv.ones([2, 3]), axis=2)


def test_gradients_of_a_python_float_explain_what_to_do():
    x = gv.constant(1.0)
    with pytest.raises(TypeError, match=r"ys\[0\] is a float .* not a gradviz tensor.*gv\.constant"):
        gv.gradients(3.0, x)
    with pytest.raises(TypeError, match=r"xs\[0\] is a float"):
        gv.gradients(x * x, 2.0)


def test_gradient_of_an_integer_tensor_is_none_with_a_reason():
    i = gv.constant([1, 2, 3])
    y = gv.reduce_sum(i * 2)
    with pytest.warns(UserWarning, match="integers are constants .* its gradient is None"):
        assert gv.gradients(y, i) == [None]
    with pytest.warns(UserWarning, match="integers are constants .* its gradient is zeros"):
        (zero,) = gv.gradients(y, i, unconnected_gradients="zero")
    assert zero.dtype == gv.int32 and zero.numpy().tolist() == [0, 0, 0]
    with pytest.warns(UserWarning, match="integers are constants"):
        tr = gv.trace_gradients(y, i)
    (res,) = tr.results
    assert res.status == "integer" and "integer" in res.reason


def test_cast_to_int_cuts_the_flow():
    x = gv.constant([1.5, 2.5])
    y = gv.cast(gv.cast(x, gv.int32), gv.float32) * 2.0 + x
    assert gv.gradients(y, x)[0].numpy().tolist() == [1.0, 1.0]
    tr = gv.trace_gradients(y, x)
    cuts = [s for s in tr.steps if s.kind == "cut"]
    assert [c.reason for c in cuts] == ["integer"]


def test_reshape_error():
    with pytest.raises(ValueError, match=r"Reshape: cannot reshape .* of shape \(2, 3\) \(6 values\) to \(4, 2\)"):
        gv.reshape(gv.ones([2, 3]), [4, 2])


def test_non_numeric_constant():
    with pytest.raises(TypeError, match="cannot make a tensor from 'abc'"):
        gv.constant("abc")


def test_unknown_dtype():
    with pytest.raises(TypeError, match="not a dtype"):
        gv.cast(gv.ones([1]), "floatish")


def test_variable_assign_checks_shape_and_dtype():
    v = gv.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError, match=r"value has shape \(3,\), the variable has shape \(2,\)"):
        v.assign([1.0, 2.0, 3.0])
    v.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [2.0, 3.0]


def test_integers_never_overflow_silently():
    assert gv.constant(2**40).dtype == gv.int64
    assert gv.constant([2**31]).numpy().tolist() == [2**31]
    with pytest.raises(TypeError, match=r"300 does not fit in int8 \(range -128\.\.127\)"):
        gv.constant(np.int8(1)) + 300


def test_integer_to_a_negative_power_says_so():
    with pytest.raises(ValueError, match="negative integer power"):
        gv.constant(2) ** -1


def test_transpose_rejects_a_bad_perm():
    with pytest.raises(ValueError, match=r"perm \[0, 5\] is not a permutation of 0\.\.1"):
        gv.transpose(gv.ones([2, 3]), [0, 5])


@pytest.mark.parametrize("shape,error", [([2.7], TypeError), ([-1], ValueError), ("ab", TypeError)])
def test_bad_shapes(shape, error):
    with pytest.raises(error, match="ones: shape"):
        gv.ones(shape)


def test_rule_gradient_of_a_wrong_shape_is_not_summed_silently():
    doubled = gv.define_op("DoubledWrongGrad", lambda a: a * 2,
                           gradient=lambda op, g: (gv.constant([[1.0, 2.0], [3.0, 4.0]]),))
    x = gv.constant([1.0, 2.0])
    with pytest.raises(ValueError, match=r"returned shape \(2, 2\) for input 0 .* of shape \(2,\)"):
        gv.gradients(doubled(x), x)


def test_empty_stop_gradients_and_xs_are_accepted():
    x = gv.constant(1.0)
    assert gv.gradients(x * x, [x], stop_gradients=[])[0].numpy() == 2.0
    assert gv.gradients(x * x, []) == []


def test_jacobian_of_a_list_says_one_target():
    x = gv.constant([1.0])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y1, y2 = x * 2.0, x * 3.0
    with pytest.raises(ValueError, match="target must be one tensor"):
        tape.jacobian([y1, y2], x)


def test_collected_output_gives_a_clear_error():
    op = gv.exp(gv.constant([1.0])).op
    with pytest.raises(RuntimeError, match="keep a reference"):
        gv.get_gradient_function(op)(op, gv.ones([1]))


def test_nan_producing_ops_do_not_warn():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = gv.constant([0.0, 1.0])
        gv.gradients(gv.reduce_sum(gv.sqrt(x) + gv.log(x)), x)


def test_python_numbers_too_big_for_the_dtype_are_refused_by_name():
    x = gv.constant([1.0, 2.0])
    with pytest.raises(TypeError, match=r"Mul: cannot use 1000000000.* with .* float32"):
        x * 10 ** 40


def test_broadcast_to_checks_the_shape_before_allocating():
    with pytest.raises(ValueError, match=r"BroadcastTo: cannot broadcast .* \(2,\) to "
                                         r"\(1000000, 1000000, 3\)"):
        gv.broadcast_to(gv.constant([1.0, 2.0]), [10 ** 6, 10 ** 6, 3])


@pytest.mark.parametrize("call", [
    lambda x: gv.cast(x, None),
    lambda x: gv.ones([2], dtype=None),
    lambda x: gv.zeros([2], dtype=None),
])
def test_none_is_not_a_dtype(call):
    # NumPy reads None as float64: a cast to None silently became one
    with pytest.raises(ValueError, match=r"expected a dtype, got None \(accepted: gv\.float32"):
        call(gv.constant([1.0, 2.0]))


def test_no_dtype_equals_none():
    assert gv.float64 != None  # noqa: E711 - the comparison under test
    assert not (gv.constant([1.0], gv.float64).dtype == None)  # noqa: E711


@pytest.mark.parametrize("call", [
    lambda b: b * 2.0, lambda b: b + b, lambda b: b - b, lambda b: b / b, lambda b: b ** 2,
    lambda b: -b, lambda b: abs(b), lambda b: gv.square(b), lambda b: gv.sign(b),
    lambda b: gv.relu(b), lambda b: gv.maximum(b, b), lambda b: gv.minimum(b, b),
    lambda b: b > b, lambda b: b <= b, lambda b: gv.reduce_sum(b), lambda b: gv.reduce_mean(b),
    lambda b: gv.reduce_max(b), lambda b: gv.add_n([b, b]),
    lambda b: gv.matmul(gv.reshape(b, [1, 2]), gv.reshape(b, [2, 1])),
])
def test_bool_tensors_take_no_arithmetic(call):
    b = gv.constant([True, False])
    with pytest.raises(TypeError, match=r"is a bool tensor.*cast it first, e\.g\. gv\.cast"):
        call(b)


def test_bool_tensors_still_select_compare_equal_and_cast():
    b = gv.constant([1.0, 2.0]) > 1.5
    assert gv.equal(b, b).numpy().tolist() == [True, True]
    assert gv.where(b, b, gv.equal(b, b)).numpy().tolist() == [True, True]
    assert (gv.cast(b, gv.float32) * 2.0).numpy().tolist() == [0.0, 2.0]
    assert gv.stop_gradient(gv.reshape(gv.concat([b, b], 0), [2, 2])).shape == (2, 2)


@pytest.mark.parametrize("call", [
    lambda z: gv.softmax(z), lambda z: gv.log_softmax(z),
    lambda z: gv.softmax_cross_entropy_with_logits(labels=z, logits=z),
])
def test_a_softmax_over_an_empty_axis_says_so(call):
    with pytest.raises(ValueError, match=r"axis 1 of .* \(shape \(2, 0\)\) has size 0"):
        call(gv.constant(np.zeros((2, 0), np.float32)))
    # an empty batch is fine: each (absent) row still has its logits
    assert gv.softmax(gv.constant(np.zeros((0, 3), np.float32))).shape == (0, 3)


@pytest.mark.parametrize("call,message", [
    (lambda: gv.constant([0, 1, 2], gv.bool_), "bools and numbers do not turn into each other"),
    (lambda: gv.constant(True, gv.float32), "bools and numbers do not turn into each other"),
    (lambda: gv.constant([1.0]) * True, "cannot use True with"),
    (lambda: gv.equal(gv.constant([True, False]), 2), "cannot use 2 with"),
    (lambda: gv.constant(1e300, gv.float32), r"does not fit in float32 \(largest magnitude 3.403e\+38\)"),
    (lambda: gv.constant(np.array([1e300]), gv.float32), "does not fit in float32"),
    (lambda: gv.constant([1.0]) * 1e300, r"Mul: cannot use 1e\+300 with a float32 tensor: it does "
                                         r"not fit in float32 \(largest magnitude 3.403e\+38\)"),
    (lambda: gv.constant(1.0, gv.float16) + 70000.0, "does not fit in float16"),
])
def test_conversions_that_would_change_a_value_are_refused(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_an_array_gradient_is_converted_like_a_constant():
    x = gv.constant([1.0, 2.0])

    def rule_returning(g):
        @gv.custom_gradient
        def f(v):
            return v * 1.0, lambda dy: g
        return gv.gradients(f(x), x)[0]

    # a float64 array that fits is narrowed to float32; one that does not is refused
    assert rule_returning(np.array([0.5, 0.25])).dtype == gv.float32
    assert rule_returning(np.array([0.5, 0.25])).numpy().tolist() == [0.5, 0.25]
    with pytest.raises(TypeError, match=r"returned ndarray for input 0, which is not a gradient "
                                        r"of its dtype float32 \(.*does not fit in float32"):
        rule_returning(np.array([1e300, 1.0]))
    with pytest.raises(TypeError, match="bools and numbers do not turn into each other"):
        rule_returning(np.array([True, False]))


def test_a_registered_rule_may_return_one_array_for_one_input():
    op = gv.define_op("Twice", lambda v: v * 2)

    @gv.RegisterGradient("Twice")
    def _twice_grad(op, grad):
        return 2 * grad.numpy()  # an ndarray: the one input's gradient, not one per element

    x = gv.constant([1.0, 2.0])
    assert gv.gradients(op(x), x)[0].numpy().tolist() == [2.0, 2.0]


def test_a_defined_op_result_that_overflows_its_dtype_is_refused():
    op = gv.define_op("Huge", lambda v: v.astype(np.float64) * 1e40)
    with pytest.raises(TypeError, match=r"Huge: forward's result: .* does not fit in float32"):
        op(gv.constant([1.0, 2.0]))


def test_negating_an_unsigned_tensor_is_refused():
    with pytest.raises(TypeError, match=r"unsigned dtype uint8, which Neg does not take .*255"):
        -gv.constant(np.array([1, 2], np.uint8))


@pytest.mark.parametrize("dtype,expected", [(np.int8, gv.float32), (np.int16, gv.float32),
                                            (np.uint8, gv.float32), (np.int32, gv.float64),
                                            (np.int64, gv.float64)])
def test_integer_division_gives_tensorflows_float(dtype, expected):
    a = gv.constant(np.array([1, 2], dtype))
    assert (a / a).dtype == expected


def test_means_and_maxima_over_empty_axes():
    floats = gv.constant(np.zeros((0, 3), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "Mean of empty slice" would be an error
        assert np.isnan(gv.reduce_mean(floats).numpy())  # the mean of nothing: NaN, as in TF
    assert gv.reduce_mean(floats, axis=1).shape == (0,)
    assert gv.reduce_max(floats, axis=1).shape == (0,)  # each (absent) row has 3 values
    # the maximum of nothing: -inf, an integer type's least value (TensorFlow 2.21's, make
    # crosscheck), the identity of max, and its gradient is empty
    assert gv.reduce_max(floats, axis=0).numpy().tolist() == [-np.inf] * 3
    ints = gv.reduce_max(gv.constant(np.zeros((0, 2), np.int32)), axis=0)
    assert ints.numpy().tolist() == [np.iinfo(np.int32).min] * 2
    with gv.GradientTape() as tape:
        tape.watch(floats)
        top = gv.reduce_max(floats, axis=0)
    assert tape.gradient(top, floats).shape == (0, 3)
    with pytest.raises(ValueError, match=r"Mean: .*the mean of no integers is undefined"):
        gv.reduce_mean(gv.constant(np.zeros(0, np.int32)))


@pytest.mark.parametrize("call", [
    lambda x: gv.reduce_sum(x, keepdims="False"),
    lambda x: gv.matmul(x, x, transpose_a="no"),
])
def test_yes_no_arguments_must_be_bools(call):
    with pytest.raises(TypeError, match="must be True or False"):
        call(gv.ones([2, 2]))
