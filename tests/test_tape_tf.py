"""GradientTape and custom gradients in the cases TensorFlow documents, its results
written out by hand (no TensorFlow at test time)."""

import collections
import warnings

import numpy as np
import pytest

import gradviz as gv


def values(structure):
    """A structure of tensors (or None) as the same structure of Python lists/floats."""
    if isinstance(structure, dict):
        return {k: values(v) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        return type(structure)(values(v) for v in structure) if not hasattr(structure, "_fields") \
            else type(structure)(*(values(v) for v in structure))
    return None if structure is None else structure.numpy().tolist()


# ---------------------------------------------------------------- what a tape watches


def test_a_variable_read_by_an_op_without_a_gradient_is_watched():
    w = gv.Variable(2.0, name="w")
    with gv.GradientTape() as tape:
        positive = w > 0  # a comparison: no gradient, but it reads w
    assert positive.numpy()
    assert tape.watched_variables() == [w]
    v = gv.Variable([1.0, -1.0], name="v")
    with gv.GradientTape() as tape:
        gv.stop_gradient(v)  # reads v too
    assert tape.watched_variables() == [v]
    with gv.GradientTape(watch_accessed_variables=False) as tape:
        _ = w > 0
    assert tape.watched_variables() == []


def test_a_source_that_is_the_target_gets_the_output_gradient_watched_or_not():
    x = gv.constant(3.0)
    with gv.GradientTape() as tape:  # x not watched
        _ = x * x
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not watched" warning: the answer is not None
        assert tape.gradient(x, x).numpy() == 1.0
    v = gv.constant([1.0, 2.0])
    with gv.GradientTape() as tape:
        pass
    assert tape.gradient(v, v, output_gradients=gv.constant([5.0, 7.0])).numpy().tolist() \
        == [5.0, 7.0]
    # watched and also reached through an op: its own seed adds to what comes back
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert values(tape.gradient([y, x], x)) == 7.0  # 2x + 1
    w = gv.Variable(2.0)
    with gv.GradientTape() as tape:
        pass
    assert tape.gradient(w, w).numpy() == 1.0


def test_an_unwatched_source_gets_none_though_recorded_ops_use_it():
    # the tape records x * w because w is watched, but x itself was neither watched nor
    # made by a recorded op: TensorFlow 2.21 gives None (make crosscheck), and so does gradviz
    x = gv.constant(3.0, name="tf_unwatched_x")
    w = gv.Variable(2.0)
    with gv.GradientTape(persistent=True) as tape:
        y = x * w
        z = x * x + x * w
    for target in (y, z):
        with pytest.warns(UserWarning, match=r"tf_unwatched_x was not watched by the tape, and "
                                             r"no op the tape recorded made it"):
            assert tape.gradient(target, x) is None
    assert tape.gradient(y, w).numpy() == 3.0
    s = gv.stop_gradient(x)
    with gv.GradientTape() as tape:
        y = s * w
    with pytest.warns(UserWarning, match="output of stop_gradient"):
        assert tape.gradient(y, s) is None


def test_a_source_that_is_the_target_in_gv_gradients_too():
    x = gv.constant([1.0, 2.0])
    assert gv.gradients(x, x)[0].numpy().tolist() == [1.0, 1.0]
    assert gv.gradients([x * x, x], x)[0].numpy().tolist() == [3.0, 5.0]


def test_the_trace_and_diagram_show_a_source_that_is_its_own_target():
    x = gv.constant([1.0, 2.0], name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.reduce_sum(x * x, name="y")
    tr = tape.trace_gradient([y, x], x, title="y and x")
    assert tr.ys[1] == tr.xs[0]
    assert tr.gradients[0].numpy().tolist() == [3.0, 5.0]
    from gradviz.views.explain import step_words
    seeds = [k for k, s in enumerate(tr.steps) if s.kind == "seed" and s.tensor == tr.xs[0]]
    assert "x is also a source, xs[0]" in step_words(tr, seeds[0]).sentence
    (result,) = [k for k, s in enumerate(tr.steps) if s.kind == "result"]
    assert "x is also a target, ys[1], so its gradient includes its own seed" \
        in step_words(tr, result).sentence
    svg = tr.to_svg()
    assert "also ys[1]: its own seed adds in" in svg


# ---------------------------------------------------------------- structures


def test_gradient_mirrors_the_structure_of_sources():
    a = gv.Variable(1.0, name="a")
    b = gv.Variable(2.0, name="b")
    Pair = collections.namedtuple("Pair", "first second")
    with gv.GradientTape(persistent=True) as tape:
        y = a * b + b * b  # dy/da = b = 2, dy/db = a + 2b = 5
    assert values(tape.gradient(y, a)) == 2.0
    assert values(tape.gradient(y, [a, b])) == [2.0, 5.0]
    assert values(tape.gradient(y, (a, b))) == (2.0, 5.0)
    assert values(tape.gradient(y, {"w": a, "b": [b, (a,)]})) == {"w": 2.0, "b": [5.0, (2.0,)]}
    got = tape.gradient(y, Pair(a, b))
    assert isinstance(got, Pair) and values(got) == Pair(2.0, 5.0)
    assert list(tape.gradient(y, {"z": a, "a": b})) == ["z", "a"]  # the dict's own order


def test_gradient_takes_a_nested_target_and_output_gradients_in_its_structure():
    x = gv.constant(3.0)
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        sq, cube = x * x, x * x * x
    # d(sq + cube)/dx = 2x + 3x^2 = 33
    assert values(tape.gradient({"sq": sq, "more": [cube]}, x)) == 33.0
    # weighted: 2 * 6 + 10 * 27 = 282, given in the target's structure or flat
    weights = {"sq": gv.constant(2.0), "more": [gv.constant(10.0)]}
    assert values(tape.gradient({"sq": sq, "more": [cube]}, x, output_gradients=weights)) \
        == 282.0
    flat = [gv.constant(10.0), gv.constant(2.0)]  # sorted keys: "more" before "sq"
    assert values(tape.gradient({"sq": sq, "more": [cube]}, x, output_gradients=flat)) == 282.0
    with pytest.raises(ValueError, match=r"output_gradients must be a dict with the keys "
                                         r"\['more', 'sq'\]"):
        tape.gradient({"sq": sq, "more": [cube]}, x, output_gradients={"sq": 1.0})


def test_jacobian_mirrors_the_structure_of_sources():
    x = gv.constant([1.0, 2.0])
    s = gv.constant(3.0)
    with gv.GradientTape() as tape:
        tape.watch([x, s])
        y = x * x * s
    jac = tape.jacobian(y, {"x": x, "s": (s,)})
    assert values(jac) == {"x": [[6.0, 0.0], [0.0, 12.0]], "s": ([1.0, 4.0],)}


def test_a_structure_holding_something_else_names_its_place():
    x = gv.constant(1.0)
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(TypeError, match=r"sources\['b'\]\[1\] is a float \(2.0\), not a "
                                        r"gradviz tensor"):
        tape.gradient(y, {"a": x, "b": [x, 2.0]})


# ---------------------------------------------------------------- reset, stop_recording


def test_reset_forgets_what_was_recorded():
    # TensorFlow's example: reset() inside the block is a new tape from there on
    x = gv.constant(2.0)
    with gv.GradientTape() as tape:
        tape.watch(x)
        loss = x * x  # forgotten: d/dx would be 2x = 4
        tape.reset()
        tape.watch(x)
        loss = loss + 3.0 * x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tape.gradient(loss, x).numpy() == 3.0
    with pytest.raises(ValueError, match="not recording; call reset"):
        tape.reset()


def test_reset_forgets_the_watched_variables():
    w = gv.Variable(1.0)
    with gv.GradientTape() as tape:
        _ = w * 2.0
        tape.reset()
    assert tape.watched_variables() == []


def test_stop_recording_leaves_ops_off_the_tape():
    x = gv.constant(4.0)
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x ** 2  # a constant to the tape
        z = x * y
    assert tape.gradient(z, x).numpy() == 16.0  # y's value, not d(x^3)/dx = 48
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tape.gradient(y, x) is None  # as in TensorFlow's example
    with pytest.raises(RuntimeError, match="not recording"):
        with tape.stop_recording():
            pass


def test_a_used_non_persistent_tape_entered_again_records_afresh():
    x = gv.constant(2.0)
    tape = gv.GradientTape()
    with tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).numpy() == 4.0
    with pytest.raises(RuntimeError, match="non-persistent tape can compute one set"):
        tape.gradient(y, x)
    with tape:
        tape.watch(x)
        z = x * x * x
    assert tape.gradient(z, x).numpy() == 12.0


# ---------------------------------------------------------------- exception types


def test_exception_types_follow_tensorflow():
    tape = gv.GradientTape()
    with pytest.raises(ValueError, match=r"GradientTape.watch: tensor is a float \(3.0\)"):
        tape.watch(3.0)
    with pytest.raises(ValueError, match=r"tensor\[1\]\[0\] is a float"):
        tape.watch([gv.constant(1.0), [1.0]])
    with tape:
        with pytest.raises(ValueError, match="already recording"):
            with tape:
                pass
    x = gv.constant(1.0)
    with gv.GradientTape() as once:
        once.watch(x)
        y = x * x
    once.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent tape"):
        once.jacobian(y, x)


# ---------------------------------------------------------------- Jacobians


def test_batch_jacobian_as_tensorflow_documents_it():
    x = gv.constant([[1.0, 2.0], [3.0, 4.0]])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    got = tape.batch_jacobian(y, x, experimental_use_pfor=False, parallel_iterations=4)
    assert got.numpy().tolist() == [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]


def test_batch_jacobian_of_a_dense_layer_and_its_passes():
    # y[b] = x[b] @ W: each example's Jacobian is W transposed, (3, 2)
    w = np.arange(6.0).reshape(2, 3)
    x = gv.constant(np.ones((4, 2)), gv.float64)
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gv.matmul(x, gv.constant(w, gv.float64))
    got = tape.batch_jacobian(y, x)
    assert got.shape == (4, 3, 2) and got.dtype == gv.float64
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(w.T, (4, 3, 2)))
    # rows that depend on each other add up, as TensorFlow's do: y = sum over the batch
    with gv.GradientTape() as tape:
        tape.watch(x)
        mixed = gv.reshape(gv.reduce_sum(x, axis=0), [1, 2]) + 0.0 * x  # (4, 2)
    np.testing.assert_array_equal(tape.batch_jacobian(mixed, x).numpy(),
                                  np.broadcast_to(4.0 * np.eye(2), (4, 2, 2)))


@pytest.mark.parametrize("target_shape, source_shape, message", [
    ((3,), (3, 2), r"target has shape \(3,\) \(rank 1\); it must have rank 2 or more"),
    ((3, 2), (3,), r"source has shape \(3,\) \(rank 1\)"),
    ((3, 2), (4, 2), r"first \(batch\) dimensions of target \(3, 2\) and source \(4, 2\) "
                     r"must match"),
])
def test_batch_jacobian_rank_and_batch_checks(target_shape, source_shape, message):
    x = gv.constant(np.ones(source_shape, np.float32))
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.constant(np.ones(target_shape, np.float32)) * gv.reduce_sum(x)
    with pytest.raises(ValueError, match=message):
        tape.batch_jacobian(y, x)


def test_jacobian_loop_options_are_checked_then_ignored():
    x = gv.constant([1.0, 2.0])
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    assert tape.jacobian(y, x, experimental_use_pfor=False).numpy().tolist() \
        == [[2.0, 0.0], [0.0, 4.0]]
    with pytest.raises(ValueError, match="parallel_iterations must be a positive int"):
        tape.jacobian(y, x, parallel_iterations=0)
    with pytest.raises(TypeError, match="experimental_use_pfor must be True or False"):
        tape.batch_jacobian(y, x, experimental_use_pfor="yes")


# ---------------------------------------------------------------- custom gradients


def test_custom_gradient_log1pexp_as_tensorflow_documents_it():
    # the numerically stable gradient of log(1 + e^x): 1 - 1 / (1 + e^x), 1.0 at x = 100
    @gv.custom_gradient
    def log1pexp(x):
        e = gv.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return gv.log(1 + e), grad

    x = gv.constant(100.0)
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert tape.gradient(y, x).numpy() == 1.0


def test_custom_gradient_clip_gradients_on_a_variable():
    # TensorFlow's example: clip_by_norm(dy, 0.5) of dy = 1 is 0.5, times d(v*v)/dv = 4
    @gv.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return dy * 0.5 / gv.maximum(gv.abs(dy), 0.5)
        return gv.identity(y), backward

    v = gv.Variable(2.0)
    with gv.GradientTape() as tape:
        output = clip_gradients(v * v)
    assert tape.gradient(output, v).numpy() == 2.0


def test_custom_gradient_on_a_method():
    class Scale:
        def __init__(self, factor):
            self.factor = factor

        @gv.custom_gradient
        def __call__(self, x):
            return x * self.factor, lambda dy: dy * 100.0  # a made-up backward

    layer = Scale(3.0)
    x = gv.constant([1.0, 2.0])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    assert y.numpy().tolist() == [3.0, 6.0]
    assert tape.gradient(y, x).numpy().tolist() == [100.0, 100.0]
    assert Scale.__call__.__name__ == "__call__"


def test_custom_gradient_with_nested_inputs_and_outputs():
    @gv.custom_gradient
    def product_and_sum(pair, scale):
        a, b = pair

        def grad(d_product, d_sum):  # one upstream gradient per output tensor
            return [d_product * b + d_sum, d_product * a + d_sum], d_sum * 0.0
        return {"product": a * b * scale, "sum": a + b}, grad

    a, b = gv.constant(2.0), gv.constant(5.0)
    with gv.GradientTape() as tape:
        tape.watch([a, b])
        out = product_and_sum((a, b), 1.0)
        loss = out["product"] + out["sum"]
    assert sorted(out) == ["product", "sum"] and out["product"].numpy() == 10.0
    # the grad_fn gets its upstream gradients in flattening order: sorted keys
    assert values(tape.gradient(loss, [a, b])) == [6.0, 3.0]


def test_custom_gradient_unused_output_gets_zeros():
    seen = []

    @gv.custom_gradient
    def two(x):
        def grad(d0, d1):
            seen.append((d0.numpy().tolist(), d1.numpy().tolist()))
            return d0 + d1
        return (x * 2.0, x * 3.0), grad

    x = gv.constant([1.0, 1.0])
    first, _ = two(x)
    gv.gradients(first, x)
    assert seen == [([1.0, 1.0], [0.0, 0.0])]


def test_custom_gradient_hands_variables_to_grad_fn():
    w = gv.Variable(3.0, name="w")

    @gv.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            assert variables == [w]
            return dy * w, [dy * x * 10.0]  # a made-up variable gradient, 10x the true one
        return x * w, grad

    x = gv.constant(2.0)
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    assert values(tape.gradient(y, [x, w])) == [3.0, 20.0]


def test_custom_gradient_errors_name_what_is_wrong():
    w = gv.Variable(3.0, name="w_err")

    @gv.custom_gradient
    def no_keyword(x):
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match=r"reads the Variables w_err.*must accept the keyword "
                                        r"argument `variables`"):
        no_keyword(gv.constant(1.0))

    @gv.custom_gradient
    def too_few_variable_grads(x):
        return x * w, lambda dy, variables=None: (dy, [])

    y = too_few_variable_grads(gv.constant(1.0))
    with pytest.raises(ValueError, match="returned 0 variable gradients for 1 variables"):
        gv.gradients(y, w)

    @gv.custom_gradient
    def two_args(a, b):
        return a * b, lambda dy: [dy]

    a = gv.constant(1.0)
    with pytest.raises(ValueError, match=r"returned 1 gradient, expected 2: one per tensor "
                                         r"argument"):
        gv.gradients(two_args(a, gv.constant(2.0)), a)


def test_recompute_grad_gives_the_same_gradients_and_records_no_forward():
    w = gv.Variable(np.array([[0.5, -1.0], [2.0, 0.25]]), name="dense_w")

    def block(x):
        return gv.tanh(gv.matmul(x, w)) * x

    x = gv.constant(np.array([[1.0, 2.0], [-0.5, 0.3]]))
    with gv.GradientTape() as plain:
        plain.watch(x)
        expected = gv.reduce_sum(block(x))
    want = plain.gradient(expected, [x, w])
    checkpointed = gv.recompute_grad(block)
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.reduce_sum(checkpointed(x))
        recorded = {op.type for op in tape._ops}
    assert recorded == {"CustomGradient", "Sum"}  # tanh and matmul ran off the tape
    assert y.numpy() == expected.numpy()
    got = tape.gradient(y, [x, w])
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12)
    assert checkpointed.__name__ == "block"


def test_a_custom_gradient_step_says_whose_backward_ran():
    from gradviz.views.explain import step_words
    w = gv.Variable(3.0, name="cg_words_w")

    @gv.custom_gradient
    def product_and_sum(pair):
        a, b = pair

        def clipped(d_product, d_sum, variables=None):
            return [d_product * b + d_sum, d_product * a + d_sum], [d_product * 0.0]
        return {"product": a * b * w, "sum": a + b}, clipped

    a, b = gv.constant(2.0, name="cg_a"), gv.constant(5.0, name="cg_b")
    with gv.GradientTape() as tape:
        tape.watch([a, b])
        out = product_and_sum((a, b))
        loss = out["product"] + out["sum"]
    tr = tape.trace_gradient(loss, [a, b, w])
    assert [g.numpy().tolist() for g in tr.gradients] == [6.0, 3.0, 0.0]
    (k,) = [k for k, s in enumerate(tr.steps) if s.kind == "backward"
            and s.op_type == "CustomGradient"]
    assert tr.steps[k].rule == "clipped"  # the user's own grad_fn, not the engine's wrapper
    words = step_words(tr, k)
    assert words.sentence.startswith("product_and_sum was decorated with @custom_gradient, "
                                     "so its backward is the grad_fn it returned (clipped)")
    assert "for each of its arguments, cg_a (scalar) and cg_b (scalar), and, through the " \
           "keyword variables=, for the Variables product_and_sum reads, cg_words_w" \
        in words.sentence
    assert words.formula.startswith("dL/dcg_a = grad_fn(*grad, variables)[0][0]")
    assert "dL/dcg_words_w = grad_fn(*grad, variables)[1][0]" in words.formula

    block = gv.recompute_grad(lambda x: gv.tanh(x * w))
    x = gv.constant([0.5, 1.0], name="cg_x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.reduce_sum(block(x))
    tr = tape.trace_gradient(y, x)
    (k,) = [k for k, s in enumerate(tr.steps) if s.kind == "backward"
            and s.op_type == "CustomGradient"]
    assert "was wrapped in recompute_grad, so its forward pass kept nothing for this step: " \
           "grad_fn runs <lambda> again under a tape" in step_words(tr, k).sentence
    assert gv.Trace.from_json(tr.to_json()).ops[tr.steps[k].op].attrs["recompute"] is True


def test_watched_variables_lists_variables_in_creation_order():
    first, second = gv.Variable(1.0), gv.Variable(2.0)
    x = gv.constant(3.0)
    with gv.GradientTape() as tape:
        tape.watch(x)  # watched, but not a Variable
        _ = second * first
        tape.watch(first)
    assert tape.watched_variables() == [first, second]


def test_an_unwatched_source_used_by_a_recorded_op_off_the_path_gets_one_warning():
    x = gv.constant(3.0, name="tf_off_path_x")
    w = gv.Variable(2.0)
    with gv.GradientTape() as tape:
        z = x * x  # not recorded: x is not watched
        _ = x * w  # recorded (w is watched), but z does not depend on it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tape.gradient(z, x) is None
    assert [str(c.message) for c in caught] == [
        "GradientTape.gradient: tf_off_path_x was not watched by the tape, and no op the tape "
        "recorded made it: call tape.watch() on it inside the `with` block, before using it "
        "(Variables are watched automatically); its gradient is None, as in TensorFlow"]


# ---------------------------------------------------------------- found by make crosscheck


def test_a_variable_watched_after_an_op_read_it_gets_none_and_is_told_why():
    v = gv.Variable([1.0, 2.0], name="tf_late_v")
    w = gv.constant([3.0, 4.0])
    with gv.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = v * w  # recorded (w is watched), reading v unwatched
        tape.watch(v)
    with pytest.warns(UserWarning, match=r"tf_late_v was read by an op of the tape's `with` "
                                         r"block before the tape watched it.*None, as in "
                                         r"TensorFlow"):
        assert tape.gradient(y, v) is None
    c = gv.constant([1.0, 2.0])
    with gv.GradientTape() as tape:  # a constant watched late is reached through the op
        tape.watch(w)
        y = c * w
        tape.watch(c)
    assert tape.gradient(y, c).numpy().tolist() == [3.0, 4.0]


def test_a_frozen_variable_is_not_said_to_be_watched_automatically():
    f = gv.Variable([1.0, 2.0], trainable=False, name="tf_frozen")
    w = gv.constant([3.0, 4.0])
    with gv.GradientTape() as tape:
        tape.watch(w)
        y = f * w
    with pytest.warns(UserWarning, match=r"tf_frozen was not watched .*\(a Variable made with "
                                         r"trainable=False is not watched automatically\)"):
        assert tape.gradient(y, f) is None


def test_an_unwatched_target_that_is_its_own_source():
    a = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="tf_own_a")
    w = gv.constant([[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]])
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(w)
        product = a * w
        xent = gv.softmax_cross_entropy_with_logits(labels=gv.softmax(w), logits=a)
        other = w * 2.0
    # its own output gradient alone, where no recorded op on the way back reads it...
    assert values(tape.gradient([other, a], a)) == [[1.0] * 3] * 2
    # ...or where TensorFlow's op reads it through a reshape of its own (the cross-entropy)
    assert values(tape.gradient([xent, a], a)) == [[1.0] * 3] * 2
    # but None where a recorded op reads it directly, as TensorFlow 2.21 gives
    with pytest.warns(UserWarning, match=r"tf_own_a is also a target, but the tape neither "
                                         r"watched it nor made it"):
        assert tape.gradient([product, a], a) is None
    with pytest.warns(UserWarning, match="a Jacobian"):
        assert tape.jacobian(a, a) is None
    with pytest.warns(UserWarning, match="its gradient is zeros"):
        jac = tape.batch_jacobian(a, a, unconnected_gradients="none")
    assert jac.shape == (2, 3, 3) and not jac.numpy().any()  # zeros, never None
