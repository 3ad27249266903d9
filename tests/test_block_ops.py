"""The ops of a transformer block: hand-worked values where a rule has to choose, the
composites made as TensorFlow makes them, the messages for bad arguments, and the public
namespaces.  (Every rule against finite differences: test_gradient_rules.py; against
TensorFlow, run: make crosscheck.)"""

import html

import numpy as np
import pytest

import gradviz as gv


def grad(f, *values):
    xs = [gv.constant(np.asarray(v, np.float64)) for v in values]
    with gv.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return [None if g is None else g.numpy() for g in tape.gradient(y, xs)]


def test_reduce_variance_std_and_moments_by_hand():
    x = [[1.0, 2.0], [3.0, 5.0]]
    assert gv.math.reduce_variance(gv.constant(x), axis=1).numpy().tolist() == [0.25, 1.0]
    assert gv.math.reduce_std(gv.constant(x), axis=1).numpy().tolist() == [0.5, 1.0]
    mean, var = gv.nn.moments(gv.constant(x), [0])
    assert mean.numpy().tolist() == [2.0, 3.5] and var.numpy().tolist() == [1.0, 2.25]
    mean, var = gv.nn.moments(gv.constant(x), [1], keepdims=True)
    assert mean.shape == var.shape == (2, 1)
    # d var / dx = 2 (x - mean) / n, whatever the stop_gradient on the mean inside
    (g,) = grad(lambda t: gv.nn.moments(t, [1])[1], x)
    assert g.tolist() == [[-0.5, 0.5], [-1.0, 1.0]]


def test_moments_is_made_as_tensorflow_makes_it():
    x = gv.constant([[1.0, 2.0, 4.0]], name="mo_x")
    tr = gv.trace_gradients(gv.nn.moments(x, [1])[1], [x])
    types = {op.type for op in tr.ops}
    assert {"Mean", "SquaredDifference", "StopGradient", "Squeeze"} <= types
    assert all(op.name.startswith("moments/") for op in tr.ops if op.type != "Const")


def test_layer_norm_normalises_each_row_and_sits_in_its_scope():
    x = gv.constant((np.arange(12.0).reshape(3, 4) ** 2).astype(np.float32))
    y = gv.nn.layer_norm(x, epsilon=0.0).numpy()
    assert np.allclose(y.mean(axis=1), 0, atol=1e-6) and np.allclose(y.var(axis=1), 1)
    scaled = gv.nn.layer_norm(x, scale=gv.constant([2.0] * 4), offset=gv.constant([1.0] * 4),
                              epsilon=0.0).numpy()
    assert np.allclose(scaled, 2 * y + 1)
    assert x.op.name not in (y := gv.nn.layer_norm(x)).op.name and \
        y.op.name.startswith("layer_norm")


def test_reduce_min_splits_ties_and_logsumexp_survives_huge_values():
    (g,) = grad(lambda t: gv.reduce_min(t, axis=1), [[1.0, 0.0, 0.0], [2.0, 3.0, 2.5]])
    assert g.tolist() == [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]
    y = gv.reduce_logsumexp(gv.constant([[1000.0, 1000.0], [-np.inf, -np.inf]]), axis=1)
    assert np.allclose(y.numpy(), [1000.0 + np.log(2.0), -np.inf])
    (g,) = grad(lambda t: gv.reduce_logsumexp(t), [0.0, np.log(3.0)])
    assert np.allclose(g, [0.25, 0.75])  # the softmax of the inputs


def test_clip_by_value_keeps_the_gradient_on_its_bounds():
    (g,) = grad(lambda t: gv.clip_by_value(t, -1.0, 1.0), [-2.0, -1.0, 0.0, 1.0, 2.0])
    assert g.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]


def test_elementwise_values_and_the_choices_at_zero():
    x = gv.constant([0.0, 1.0], gv.float64)
    assert np.allclose(gv.nn.gelu(x).numpy(), [0.0, 0.8413447460685429])
    assert np.allclose(gv.nn.gelu(x, approximate=True).numpy(), [0.0, 0.8411919906082768])
    assert np.allclose(gv.math.rsqrt(gv.constant([4.0, 0.25])).numpy(), [0.5, 2.0])
    assert gv.math.rsqrt(gv.constant([0.0])).numpy().tolist() == [np.inf]
    assert np.allclose(gv.nn.softplus(gv.constant([-100.0, 0.0, 100.0])).numpy(),
                       [0.0, np.log(2.0), 100.0])
    (g,) = grad(lambda t: gv.nn.leaky_relu(t, 0.25), [-1.0, 0.0, 2.0])
    assert g.tolist() == [0.25, 0.25, 1.0]  # at 0, the slope of the negative side
    (a, b) = grad(lambda p, q: gv.math.squared_difference(p, q), [3.0], [1.0])
    assert a.tolist() == [4.0] and b.tolist() == [-4.0]


def test_einsum_is_the_product_it_names_and_its_gradient_sums_what_it_summed():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    y = gv.einsum("bqd,bkd->bqk", q, k).numpy()
    assert np.allclose(y, q @ k.transpose(0, 2, 1))
    assert np.allclose(gv.einsum("...qd,...kd->...qk", q, k).numpy(), y)
    assert np.allclose(gv.einsum("ij,jk", q[0], k[0].T).numpy(), q[0] @ k[0].T)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    ga, gb = grad(lambda s, t: gv.einsum("ij,jk->k", s, t), a, b)
    # y_k = sum_ij a_ij b_jk: dy/da_ij = sum_k b_jk (i only in a: broadcast back)
    assert np.allclose(ga, np.broadcast_to(b.sum(axis=1), (2, 3)))
    assert np.allclose(gb, np.broadcast_to(a.sum(axis=0)[:, None], (3, 4)))


def test_matmul_broadcasts_batch_dimensions_and_sums_their_gradients_back():
    a, b = np.ones((2, 1, 3, 4)), np.ones((5, 4, 2))
    assert gv.matmul(a, b).shape == (2, 5, 3, 2)
    ga, gb = grad(gv.matmul, a, b)
    assert ga.shape == (2, 1, 3, 4) and np.all(ga == 5 * 2)
    assert gb.shape == (5, 4, 2) and np.all(gb == 2 * 3)


def test_tile_and_pad_gradients_collect_every_copy():
    (g,) = grad(lambda t: gv.tile(t, [3]), [1.0, 2.0])
    assert g.tolist() == [3.0, 3.0]
    # [1, 2, 3] REFLECT-padded by (2, 1) is [3, 2, 1, 2, 3, 2]
    assert gv.pad(gv.constant([1.0, 2.0, 3.0]), [[2, 1]], mode="REFLECT").numpy().tolist() == \
        [3.0, 2.0, 1.0, 2.0, 3.0, 2.0]
    (g,) = grad(lambda t: gv.pad(t, [[2, 1]], mode="REFLECT"), [1.0, 2.0, 3.0])
    assert g.tolist() == [1.0, 3.0, 2.0]
    # SYMMETRIC by (2, 0): [2, 1, 1, 2, 3]
    (g,) = grad(lambda t: gv.pad(t, [[2, 0]], mode="symmetric"), [1.0, 2.0, 3.0])
    assert g.tolist() == [2.0, 2.0, 1.0]
    (g,) = grad(lambda t: gv.pad(t, [[1, 1], [0, 2]], constant_values=9.0), [[1.0, 2.0]])
    assert g.tolist() == [[1.0, 1.0]]


def test_expand_dims_and_squeeze():
    x = gv.constant([[1.0, 2.0]])
    assert gv.expand_dims(x, -1).shape == (1, 2, 1) and gv.expand_dims(x, 0).shape == (1, 1, 2)
    assert gv.squeeze(gv.expand_dims(x, -1)).shape == (2,)
    assert gv.squeeze(gv.expand_dims(x, -1), [-1]).shape == (1, 2)


def test_one_hot_argmax_and_argmin_give_no_gradient():
    y = gv.one_hot([0, 3, -1, 4], 4)
    assert y.dtype == gv.float32 and y.numpy().tolist() == [
        [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert gv.one_hot([1, 0], 2, axis=0, on_value=5.0, off_value=-1.0).numpy().tolist() == \
        [[-1.0, 5.0], [5.0, -1.0]]
    x = gv.constant([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
    assert gv.argmax(x, axis=1).numpy().tolist() == [1, 0]  # the first of ties
    assert gv.argmax(x, axis=1).dtype == gv.int64
    assert gv.argmin(x, axis=1, output_type=gv.int32).numpy().tolist() == [0, 2]
    with gv.GradientTape() as tape:
        tape.watch(x)
        i = gv.cast(gv.argmax(x, axis=1), gv.float32)
    assert tape.gradient(i, x) is None


def test_dropout_repeats_with_its_seed_and_scales_what_it_keeps():
    x = gv.constant(np.ones((50,)))
    a, b = gv.nn.dropout(x, 0.5, seed=3), gv.nn.dropout(x, 0.5, seed=3)
    assert np.array_equal(a.numpy(), b.numpy())
    assert set(np.unique(a.numpy())) == {0.0, 2.0}
    (g,) = grad(lambda t: gv.nn.dropout(t, 0.5, seed=3), np.ones(50))
    assert np.array_equal(g, a.numpy())
    assert np.array_equal(gv.nn.dropout(x, 0.0, seed=1).numpy(), x.numpy())


@pytest.mark.parametrize("call, error, words", [
    (lambda: gv.expand_dims(gv.ones([2, 3]), 3), ValueError,
     "Tried to expand dim index 3 for tensor with 2 dimensions"),
    (lambda: gv.squeeze(gv.ones([2, 1]), [0]), ValueError,
     "Can not squeeze dim[0], expected a dimension of 1, got 2"),
    (lambda: gv.tile(gv.ones([2, 3]), [2]), ValueError,
     "Expected multiples argument to be a vector of length 2"),
    (lambda: gv.pad(gv.ones([2, 3]), [[0, 0], [3, 0]], mode="REFLECT"), ValueError,
     "paddings must be no greater than the dimension size: 3, 0 greater than 2"),
    (lambda: gv.pad(gv.ones([2, 3]), [[1, 1]]), ValueError, "one [before, after] pair"),
    (lambda: gv.pad(gv.ones([2]), [[1, 1]], mode="WRAP"), ValueError,
     "mode must be one of CONSTANT, REFLECT, SYMMETRIC"),
    (lambda: gv.one_hot(gv.ones([3]), 4), TypeError, "indices must be integers"),
    (lambda: gv.einsum("ij,jk->ik", gv.ones([2, 3]), gv.ones([4, 2])), ValueError,
     "Expected dimension 3 at axis 0 of the input shaped [4, 2] but got dimension 4"),
    (lambda: gv.einsum("ij->ji", gv.ones([2, 3])), ValueError, "einsums of two operands"),
    (lambda: gv.einsum("ii,ij->j", gv.ones([2, 2]), gv.ones([2, 2])), ValueError,
     "repeats a letter"),
    (lambda: gv.math.reduce_variance(gv.constant([1, 2])), TypeError,
     "Input must be either real or complex"),
    (lambda: gv.nn.gelu(gv.constant([1, 2])), ValueError,
     "`features.dtype` must be a floating point tensor"),
    (lambda: gv.nn.dropout(gv.ones([2]), 1.0), ValueError, "in the range [0, 1)"),
    (lambda: gv.argmax(gv.ones([2, 3]), axis=2), ValueError, "axis 2 is out of range"),
])
def test_bad_arguments_say_what_was_wrong(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


def test_the_namespaces_hold_the_public_ops_only():
    for space in (gv.nn, gv.math, gv.linalg, gv.autodiff):
        public = {k for k in dir(space) if not k.startswith("_")}
        assert public == set(space.__all__), space.__name__
        assert all(callable(getattr(space, k)) for k in public), space.__name__
    assert gv.nn.__all__ == [
        "avg_pool2d", "batch_normalization", "bias_add", "conv1d", "conv2d", "dropout",
        "embedding_lookup", "gelu", "layer_norm", "leaky_relu", "log_softmax", "max_pool2d",
        "moments", "relu", "sigmoid", "sigmoid_cross_entropy_with_logits", "softmax",
        "softmax_cross_entropy_with_logits", "softplus", "tanh"]
    assert gv.math.__all__ == [
        "abs", "add", "add_n", "argmax", "argmin", "atan2", "ceil", "cos", "cumprod", "cumsum",
        "divide", "divide_no_nan", "equal", "erf", "erfc", "exp", "expm1", "floor", "floordiv",
        "floormod", "greater", "greater_equal", "is_finite", "less", "less_equal", "log",
        "log1p", "log_softmax", "maximum", "minimum", "multiply", "multiply_no_nan", "negative",
        "not_equal", "pow", "reciprocal", "reduce_all", "reduce_any", "reduce_euclidean_norm",
        "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod",
        "reduce_std", "reduce_sum", "reduce_variance", "round", "rsqrt", "segment_max",
        "segment_mean", "segment_sum", "sigmoid", "sign", "sin", "softmax", "softplus", "sqrt",
        "square", "squared_difference", "subtract", "tanh", "unsorted_segment_sum", "xdivy",
        "xlog1py", "xlogy"]  # (each is in TensorFlow's tf.math, by the same name)
    assert gv.linalg.__all__ == ["band_part", "diag", "diag_part", "einsum", "matmul",
                                 "matrix_transpose", "tensordot", "trace"]
    assert gv.autodiff.__all__ == ["ForwardAccumulator", "GradientTape"]
    top = {k for k in dir(gv) if not k.startswith("_")}
    assert top - set(gv.__all__) <= {"engine", "trace", "views"}  # subpackages, nothing stray
    from gradviz.nn import conv2d  # a namespace imports as a module does
    assert conv2d is gv.nn.conv2d


# ---------------------------------------------------------------- gathering rows


def test_a_gather_gives_the_rows_it_read_as_a_sparse_gradient():
    E = gv.Variable(np.arange(10.0).reshape(5, 2), name="E")
    with gv.GradientTape() as tape:
        y = gv.reduce_sum(gv.nn.embedding_lookup(E, [1, 3, 1]) * [[1.0], [2.0], [3.0]])
    g = tape.gradient(y, E)
    assert isinstance(g, gv.IndexedSlices)
    assert g.indices.numpy().tolist() == [1, 3, 1] and g.dense_shape == (5, 2)
    assert g.values.numpy().tolist() == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    # row 1 twice: its two contributions add when made dense
    assert gv.convert_to_tensor(g).numpy().tolist() == [[0, 0], [4, 4], [0, 0], [2, 2], [0, 0]]
    with pytest.raises(AttributeError, match="gv.convert_to_tensor"):
        g.numpy()
    (h,) = gv.gradients(gv.gather(E, [4]), [E])
    assert isinstance(h, gv.IndexedSlices) and h.indices.numpy().tolist() == [4]


def test_sparse_gradients_aggregate_as_tensorflow_aggregates_them():
    E = gv.constant(np.ones((4, 2)))
    # two gathers: one IndexedSlices, their slices concatenated
    (g,) = gv.gradients(gv.reduce_sum(gv.gather(E, [0, 2])) + gv.reduce_sum(gv.gather(E, [2])), E)
    assert isinstance(g, gv.IndexedSlices) and sorted(g.indices.numpy().tolist()) == [0, 2, 2]
    assert gv.convert_to_tensor(g).numpy()[:, 0].tolist() == [1.0, 0.0, 2.0, 0.0]
    # a gather and a dense use: the sum is dense
    (g,) = gv.gradients(gv.reduce_sum(gv.gather(E, [0, 0])) + gv.reduce_sum(E * 3.0), E)
    assert isinstance(g, gv.Tensor) and g.numpy()[:, 0].tolist() == [5.0, 3.0, 3.0, 3.0]
    # through an op that reads it whole (Mul), the sparse gradient is made dense
    x = gv.constant(np.ones((4, 2)))
    (g,) = gv.gradients(gv.reduce_sum(gv.gather(x * 2.0, [1])), x)
    assert isinstance(g, gv.Tensor) and g.numpy()[:, 0].tolist() == [0.0, 2.0, 0.0, 0.0]


def test_gather_along_another_axis_and_in_batches_is_dense():
    p = gv.constant(np.arange(12.0).reshape(3, 4))
    assert gv.gather(p, [3, 0], axis=1).numpy().tolist() == [[3, 0], [7, 4], [11, 8]]
    (g,) = gv.gradients(gv.gather(p, [3, 3], axis=-1), p)
    assert isinstance(g, gv.Tensor) and g.numpy()[0].tolist() == [0, 0, 0, 2]
    y = gv.gather(p, [[1], [0], [3]], axis=1, batch_dims=1)
    assert y.numpy().tolist() == [[1.0], [4.0], [11.0]]
    (g,) = gv.gradients(y, p)
    assert g.numpy().tolist() == [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]]


def test_gather_nd_rows_are_sparse_and_elements_dense():
    p = gv.constant(np.arange(6.0).reshape(3, 2))
    assert gv.gather_nd(p, [[2, 1], [0, 0]]).numpy().tolist() == [5.0, 0.0]
    (g,) = gv.gradients(gv.gather_nd(p, [[2], [2]]), p)
    assert isinstance(g, gv.IndexedSlices) and g.indices.numpy().tolist() == [2, 2]
    (g,) = gv.gradients(gv.gather_nd(p, [[2, 1], [2, 1]]), p)
    assert isinstance(g, gv.Tensor) and g.numpy().tolist() == [[0, 0], [0, 0], [0, 2]]


def test_indexing_with_a_list_is_read_as_tensorflow_reads_it_and_names_gather():
    E = gv.constant(np.arange(15.0).reshape(5, 3), name="listed")
    with pytest.warns(UserWarning, match=r"listed\[\[1, 2\]\] is listed\[1, 2\]; to pick "):
        assert E[[1, 2]].numpy() == 5.0
    with pytest.raises(IndexError, match=r"use gv.gather\(listed, \[1, 3, 1\]\)"):
        E[[1, 3, 1]]
    with pytest.raises(TypeError, match=r"use gv.gather"):
        E[np.array([1, 0])]


@pytest.mark.parametrize("call, error, words", [
    (lambda: gv.gather(gv.ones([3, 2]), [0, 3]), IndexError, "indices[1] = 3 is not in [0, 3)"),
    (lambda: gv.gather(gv.ones([3, 2]), [-1]), IndexError, "indices[0] = -1 is not in [0, 3)"),
    (lambda: gv.gather(gv.ones([3, 2]), [0.5]), TypeError, "indices must be integers"),
    (lambda: gv.gather(gv.ones([3, 2]), [[0]], axis=0, batch_dims=1), ValueError,
     "batch_dims (1) must be less than or equal to axis (0)"),
    (lambda: gv.gather_nd(gv.ones([3, 2]), [[0, 1, 0]]), ValueError,
     "index innermost dimension length must be <= params rank; saw: 3 vs. 2"),
    (lambda: gv.nn.embedding_lookup([gv.ones([3, 2])] * 2, [0]), ValueError, "one table"),
])
def test_bad_gathers_say_what_was_wrong(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


# ---------------------------------------------------------------- what a learner sees


def _embedding_trace():
    E = gv.Variable(np.arange(10.0).reshape(5, 2), name="E")
    return gv.trace_gradients(gv.reduce_sum(gv.nn.embedding_lookup(E, [1, 3, 1])), [E])


def test_a_gathers_step_says_which_rows_get_a_gradient_and_that_it_is_sparse():
    from gradviz.views import explain
    tr = _embedding_trace()
    step = next(s for s in tr.steps if s.kind == "backward" and s.op_type == "GatherV2")
    words = explain.describe(tr, step)
    assert ("Only rows 1 and 3 of E get a gradient; the other 3 get none; row 1 twice, so its "
            "two contributions add.") in words.sentence
    assert "As in TensorFlow, the gradient is sparse: an IndexedSlices of the 3 slices" \
        in words.sentence
    assert words.formula.startswith("dL/dE = segment_sum(reshape(grad, (-1, 2)), ")
    # along another axis the gradient is dense, and the words do not call it sparse
    p = gv.Variable(np.ones((2, 3)), name="p")
    tr = gv.trace_gradients(gv.reduce_sum(gv.gather(p, [2, 2], axis=1)), [p])
    step = next(s for s in tr.steps if s.kind == "backward" and s.op_type == "GatherV2")
    sentence = explain.describe(tr, step).sentence
    assert "Only index 2 along axis 1 of p gets a gradient; the other 2 get none; index 2 twice" \
        in sentence and "sparse" not in sentence


def test_a_gathers_diagram_edge_names_the_rows_of_its_sparse_gradient():
    import re
    svg = _embedding_trace().to_svg(step=3)
    labels = [html.unescape(t) for t in re.findall(r">([^<]*sparse[^<]*)<", svg)]
    assert "\u2191 (5,2) \u00b7 sparse: rows 1, 3 (1 \u00d72)" in labels
    assert any("only rows 1, 3 (1 \u00d72) of E get a gradient" in t for t in labels)


def test_practice_names_a_row_given_one_gather_instead_of_their_sum():
    tr = _embedding_trace()
    q = next(q for q in gv.questions(tr) if q.prompt == "What gradient does GatherV2 send to E?")
    slip = next(m for m in q.wrong if m.kind == "gather_one_contribution")
    feedback = q.check(slip.value.tolist())
    assert not feedback.right and feedback.kind == "gather_one_contribution"
    assert q.check(q.answer.tolist()).right


# ---------------------------------------------------------------- the corners a review found


def test_corner_cases_of_the_new_ops():
    f32 = np.float32
    y = gv.matmul(gv.constant(np.ones((2, 3, 0), f32)), gv.constant(np.ones((0, 4), f32)))
    assert y.shape == (2, 3, 4) and not y.numpy().any()
    a, b = grad(gv.matmul, np.ones((2, 3, 4)), np.ones((4, 0)))
    assert a.shape == (2, 3, 4) and b.shape == (4, 0)
    empty = gv.constant(np.zeros((2, 0), f32))
    assert gv.math.cumsum(empty, axis=1, exclusive=True).shape == (2, 0)
    (g,) = grad(lambda t: gv.math.reduce_prod(t[:0], axis=0), np.ones((2, 3)))
    assert g.tolist() == [[0.0] * 3] * 2
    x = gv.constant([[1.0, 2.0]])
    assert gv.expand_dims(x, gv.constant(0)).shape == (1, 1, 2)
    assert gv.one_hot([0, 1], gv.constant(3)).shape == (2, 3)
    assert gv.strided_slice(x, (0, 1), name="mine").name.startswith("mine")
    assert gv.pad(gv.constant(1.0), []).numpy() == 1.0
    assert gv.nn.dropout(x, gv.constant(0.5), seed=1).shape == (1, 2)
    (g,) = grad(lambda t: gv.math.unsorted_segment_sum(t, [-1, -1], 0), np.ones((2, 3)))
    assert g.tolist() == [[0.0] * 3] * 2
    assert gv.one_hot([0, 1], 2, on_value=5, off_value=0).dtype == gv.int32  # as TensorFlow
    E = gv.Variable(np.ones((3, 2)), name="E_step")
    with gv.GradientTape() as tape:
        y = gv.reduce_sum(gv.gather(E, [2, 2]))
    E.assign_sub(tape.gradient(y, E))  # a sparse gradient, applied as TensorFlow applies it
    assert E.numpy()[:, 0].tolist() == [1.0, 1.0, -1.0]
    # integers are divided as floats, as TensorFlow divides them
    assert gv.math.divide_no_nan(gv.constant([3, 4]), gv.constant([2, 0])).numpy().tolist() \
        == [1.5, 0.0]
    half = gv.constant(np.ones((2, 3), np.float16))
    assert gv.nn.batch_normalization(half, 0.5, 4.0, None, None, 1e-3).dtype == gv.float16


def test_gather_words_hold_for_a_scalar_index_and_deep_gather_nd_indices():
    from gradviz.views import explain
    x = gv.Variable(np.arange(6.0).reshape(2, 3), name="x")
    tr = gv.trace_gradients(gv.reduce_sum(gv.gather(x, 1) * 2.0), [x])
    assert explain.formula_mismatches(tr) == []
    tr = gv.trace_gradients(gv.reduce_sum(gv.gather_nd(x, [[[1], [1]], [[0], [1]]])), [x])
    step = next(s for s in tr.steps if s.kind == "backward" and s.op_type == "GatherNd")
    assert "sparse" not in explain.describe(tr, step).sentence  # its gradient is dense here


@pytest.mark.parametrize("call, error, words", [
    (lambda: gv.nn.dropout(gv.ones([2, 3]), 0.5, noise_shape=[4, 3]), ValueError,
     "does not broadcast with"),
    (lambda: gv.math.unsorted_segment_sum(gv.ones([2]), [0, 3], 2), IndexError,
     "segment_ids[1] = 3 is out of range [0, 2)"),
    (lambda: gv.scatter_nd(1, gv.constant(1.0), [3]), ValueError, "at least a vector"),
    (lambda: gv.scatter_nd([[1]], gv.constant([1.0]), 3), ValueError, "a list of sizes"),
    (lambda: gv.scatter_nd([[1, 0, 0]], gv.constant([1.0]), [3, 2]), ValueError,
     "(1 to 2, the rank of shape)"),
    (lambda: gv.scatter_nd([[1]], gv.constant([1.0]), [-3]), ValueError, "negative dimension"),
    (lambda: gv.gather_nd(gv.ones([2, 3]), np.zeros((4, 0), np.int32)), ValueError,
     "indices.shape[-1] is 0"),
    (lambda: gv.IndexedSlices(gv.ones([1, 2]), [5], (3, 2)), ValueError,
     "rows of the dense shape (3, 2)"),
    (lambda: gv.one_hot([0], 2, on_value=2.5, dtype=gv.int32), TypeError, "is not a int32"),
])
def test_corner_cases_say_what_was_wrong(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)
