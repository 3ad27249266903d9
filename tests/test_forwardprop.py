"""Forward mode: ForwardAccumulator's behaviour, TensorFlow's documented results, and every
op's JVP rule against finite differences."""

import gc
import weakref

import numpy as np
import pytest
from test_gradient_rules import CASES, NOT_DIFFERENTIABLE, PIECEWISE_LINEAR, _op_types

import gradviz as gv
from gradviz.engine import jvp_rules
from gradviz.engine.ops import OpType

FA = gv.autodiff.ForwardAccumulator


def c(values, dtype=gv.float32):
    return gv.constant(values, dtype)


# ---------------------------------------------------------------- TensorFlow's documented results


def test_the_hessian_vector_product_of_the_documentation():
    # tf.autodiff.ForwardAccumulator's docstring: y = sum(v ** 3) at v = (1, 2);
    # the gradient is 3 v**2 = (3, 12), and along (1, 0) the Hessian diag(6 v) gives (6, 0)
    v = gv.Variable([1.0, 2.0])
    with FA(v, c([1.0, 0.0])) as acc:
        with gv.GradientTape() as tape:
            y = gv.reduce_sum(v ** 3.0)
        backward = tape.gradient(y, v)
    assert backward.numpy().tolist() == [3.0, 12.0]
    assert acc.jvp(backward).numpy().tolist() == [6.0, 0.0]


def test_nested_accumulators_of_the_documentation():
    # d/dx x**3.5 = 3.5 x**2.5 and d2/dx2 = 3.5 * 2.5 x**1.5 at x = 1.1; the outer
    # accumulator sees the inner one's tangents, the inner one does not see the outer's
    primal = c(1.1)
    with FA(primal, c(1.0)) as outer:
        with FA(primal, c(1.0)) as inner:
            primal_out = primal ** c(3.5)
    inner_jvp = inner.jvp(primal_out)
    assert float(inner_jvp) == pytest.approx(3.5 * 1.1 ** 2.5, rel=1e-6)  # 4.4417057
    assert float(outer.jvp(inner_jvp)) == pytest.approx(3.5 * 2.5 * 1.1 ** 1.5, rel=1e-6)
    assert inner.jvp(outer.jvp(primal_out)) is None


def test_a_jvp_is_the_directional_derivative():
    x = c([1.0, 2.0])
    with FA(x, c([1.0, 0.5])) as acc:
        y = x * x
        z = gv.reduce_sum(gv.reshape(y, [1, 2]) @ c([[1.0], [2.0]]))
    assert acc.jvp(y).numpy().tolist() == [2.0, 2.0]  # 2 x t
    assert float(acc.jvp(z)) == 6.0  # 2 + 2 * 2
    assert acc.jvp(x).numpy().tolist() == [1.0, 0.5]  # a primal's tangent is its own


# ---------------------------------------------------------------- what carries a tangent


def test_what_carries_no_tangent_gets_none_or_zeros():
    x = c([1.0, 2.0])
    before = x * 3.0
    with FA(x, c([1.0, 0.5])) as acc:
        stopped = gv.stop_gradient(x) * 2.0
        through_int = gv.cast(gv.cast(x, gv.int32), gv.float32)
        as_int = gv.cast(x, gv.int32)
        inside = x * 3.0
    after = x * 3.0
    assert [acc.jvp(t) for t in (before, stopped, through_int, as_int, after)] == [None] * 5
    assert acc.jvp(inside).numpy().tolist() == [3.0, 1.5]
    zeros = acc.jvp([stopped, as_int], unconnected_gradients="zero")
    assert [z.numpy().tolist() for z in zeros] == [[0.0, 0.0], [0, 0]]
    assert zeros[1].dtype == gv.int32
    zeros = acc.jvp(c(3.0), unconnected_gradients=gv.UnconnectedGradients.ZERO)
    assert float(zeros) == 0.0


def test_an_integer_primal_keeps_its_tangent_but_passes_none_on():
    xi = c([1, 2], gv.int32)
    with pytest.warns(UserWarning, match="integers carry no tangent"):
        acc = FA(xi, c([1, 1], gv.int32))
    with acc:
        y = xi * 2
        z = gv.cast(xi, gv.float32) * 2.0
    assert acc.jvp(xi).numpy().tolist() == [1, 1]
    assert acc.jvp(y) is None and acc.jvp(z) is None


def test_a_variable_as_primal_carries_its_tangent_through_reads_and_assignments():
    v = gv.Variable([1.0, 2.0])
    w = gv.Variable([1.0, 2.0])
    with FA(v, np.array([1.0, 0.0])) as acc:  # a float64 array: made the primal's dtype
        v.assign([3.0, 4.0])
        y = v * 2.0 + w
    assert acc.jvp(y).numpy().tolist() == [2.0, 0.0]
    assert acc.jvp(v).numpy().tolist() == [1.0, 0.0]
    assert acc.jvp(w) is None
    assert acc.jvp(w, unconnected_gradients="zero").numpy().tolist() == [0.0, 0.0]


def test_structures_of_primals_and_targets():
    a, b = c([1.0, 2.0]), c(3.0)
    with FA({"a": a, "b": [b]}, {"a": c([1.0, 0.0]), "b": [2.0]}) as acc:
        y = a * b
    got = acc.jvp({"k": [y, a], "j": (b,)})
    assert list(got) == ["k", "j"] and isinstance(got["j"], tuple)
    assert got["k"][0].numpy().tolist() == [3.0 + 2.0, 4.0]  # ta b + a tb
    assert acc.jvp([]) == []
    with FA([], []) as empty:
        assert empty.jvp(y) is None


def test_an_accumulator_records_each_time_its_block_is_entered():
    x = c([1.0, 2.0])
    acc = FA(x, c([1.0, 0.5]))
    with acc:
        z = x * 3.0
    between = z * 3.0
    with acc:
        w = z * 3.0
    assert acc.jvp(w).numpy().tolist() == [9.0, 4.5]
    assert acc.jvp(between) is None


def test_a_tangent_is_not_itself_carried_forward():
    x = c([1.0, 2.0])
    with FA(x, c([1.0, 0.5])) as acc:
        j = acc.jvp(x * 2.0)
        z = j * 3.0
    assert j.numpy().tolist() == [2.0, 1.0] and acc.jvp(z) is None


def test_two_accumulators_follow_their_own_directions():
    x = c([1.0, 2.0])
    with FA(x, c([1.0, 3.0])) as a1:
        with FA(x, c([2.0, 1.0])) as a2:
            y = x * x * x
    assert a1.jvp(y).numpy().tolist() == [3.0, 36.0]  # 3 x**2 t1
    assert a2.jvp(y).numpy().tolist() == [6.0, 12.0]  # 3 x**2 t2
    # the outer one sees the inner one's tangents: d/dx (3 x**2 t2) . t1 = 6 x t1 t2
    assert a1.jvp(a2.jvp(y)).numpy().tolist() == [12.0, 36.0]
    assert a2.jvp(a1.jvp(y)) is None  # the inner one does not see the outer one's


# ---------------------------------------------------------------- with tapes


def test_reverse_over_forward_needs_the_tape_outside():
    x = c([1.0, 2.0])
    with gv.GradientTape() as tape:
        tape.watch(x)
        with FA(x, c([1.0, 0.5])) as acc:
            y = x * x * x
        j = acc.jvp(y)  # 3 x**2 t
    assert tape.gradient(j, x).numpy().tolist() == [6.0, 6.0]  # 6 x t
    # a tape entered after the accumulator does not see the tangents' ops, as in TensorFlow
    with FA(x, c([1.0, 0.5])) as acc:
        with gv.GradientTape() as tape:
            tape.watch(x)
            j = acc.jvp(x * x * x)
    with pytest.warns(UserWarning, match="a tangent that a ForwardAccumulator entered inside "
                      "the tape's `with` block computed.*enter the tape first"):
        assert tape.gradient(j, x) is None


def test_the_gradient_of_a_jvp_with_respect_to_its_tangent():
    x, t = c([0.0, 2.0]), c([1.0, 0.5])
    with gv.GradientTape() as tape:
        tape.watch(t)
        with FA(x, t) as acc:
            y = gv.sin(x)
        j = acc.jvp(y)  # cos(x) t: linear in t
    assert np.allclose(tape.gradient(j, t).numpy(), np.cos([0.0, 2.0]))


def test_a_hessian_vector_product_through_a_small_network():
    rng = np.random.default_rng(3)
    xv, wv, tv = rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    x, w = gv.constant(xv), gv.Variable(wv)

    def loss_grad(w):
        with gv.GradientTape() as tape:
            tape.watch(w)
            loss = gv.reduce_mean(gv.nn.softmax(gv.tanh(x @ w)) ** 2.0)
        return tape.gradient(loss, w)

    with FA(w, gv.constant(tv)) as acc:
        g = loss_grad(w)
    h = 1e-6
    fd = (loss_grad(gv.constant(wv + h * tv)).numpy()
          - loss_grad(gv.constant(wv - h * tv)).numpy()) / (2 * h)
    assert np.allclose(acc.jvp(g).numpy(), fd, rtol=1e-5, atol=1e-8)


# ---------------------------------------------------------------- bad input


def test_a_tangent_of_the_wrong_shape_or_dtype_is_refused():
    x = c([1.0, 2.0])
    for bad in (c([1.0, 0.5, 2.0]), c(1.0), c([[1.0, 0.5]])):
        with pytest.raises(ValueError, match=r"has shape .* but .* has shape \(2,\)"):
            FA(x, bad)
    with pytest.raises(ValueError, match="tangent of .* has dtype float64, but .* float32"):
        FA(x, c([1.0, 0.5], gv.float64))
    with pytest.raises(ValueError, match="tangent of .* is None"):
        FA(x, None)


def test_structures_that_differ_are_refused_naming_the_place():
    x = c([1.0, 2.0])
    with pytest.raises(ValueError, match=r"primals is a tensor but tangents is a list"):
        FA(x, [1.0, 2.0])  # a list is a structure, as in TensorFlow: gv.constant it
    with pytest.raises(TypeError, match=r"primals is a list but tangents is a tuple"):
        FA([x], (c([1.0, 1.0]),))
    with pytest.raises(ValueError, match=r"primals holds 1 item but tangents holds 2 items"):
        FA([x], [c([1.0, 1.0]), c(1.0)])
    with pytest.raises(ValueError, match=r"holds the keys \['a'\] but tangents holds"):
        FA({"a": x}, {"b": c([1.0, 1.0])})


def test_other_misuse_is_refused():
    x = c([1.0, 2.0])
    with pytest.raises(ValueError, match="given as a primal more than once"):
        FA([x, x], [x, x])
    with pytest.raises(TypeError, match="a primal is a float"):
        FA(1.0, 1.0)
    acc = FA(x, c([1.0, 1.0]))
    with pytest.raises(ValueError, match="already recording"):
        with acc:
            with acc:
                pass
    assert not acc._recording  # left on the way out
    with pytest.raises(TypeError, match=r"primals\[1\] is a float"):
        acc.jvp([x, 3.0])
    with pytest.raises(ValueError, match="'bad' is not accepted"):
        acc.jvp(x, unconnected_gradients="bad")


def test_a_value_the_program_drops_is_freed_with_its_tangent():
    x = gv.constant(np.ones(1000, np.float32))
    refs = []
    with FA(x, gv.ones_like(x)) as acc:
        for _ in range(5):
            y = gv.tanh(gv.exp(x) * 0.5)  # y's tangent refers to y (1 - y**2)
            refs.append(weakref.ref(y))
            del y
        gc.collect()
        assert [r() for r in refs] == [None] * 5
        kept = gv.exp(x)
    gc.collect()
    assert acc.jvp(kept) is not None  # one the program keeps keeps its tangent


def test_recompute_grad_keeps_nothing_without_an_accumulator_and_goes_forward_with_one():
    inside = []

    def block(a):
        h = gv.tanh(a) * 3.0
        inside.append(weakref.ref(h))
        return h * 2.0

    checkpointed = gv.recompute_grad(block)
    x = c([1.0, 2.0])
    y = checkpointed(x)
    gc.collect()
    assert inside[0]() is None and y is not None  # its inside freed: what it is for
    with FA(x, c([1.0, 0.5])) as acc:
        y = checkpointed(x)
    assert np.allclose(acc.jvp(y).numpy(), 6.0 * (1 - np.tanh([1.0, 2.0]) ** 2) * [1.0, 0.5])


def test_a_tape_stopped_inside_an_accumulator_keeps_its_place():
    # recompute_grad stops every tape for its block; reverse over forward must still work
    x = c([1.0, 2.0])
    checkpointed = gv.recompute_grad(lambda a: a * 1.0)
    with gv.GradientTape() as tape:
        tape.watch(x)
        with FA(x, c([1.0, 0.0])) as acc:
            checkpointed(x)
            with tape.stop_recording():
                pass
            y = x * x * x
        j = acc.jvp(y)
    assert tape.gradient(j, x).numpy().tolist() == [6.0, 0.0]


def test_an_op_without_a_gradient_rule_says_forward_mode_needs_one():
    cube = gv.define_op("ForwardDocCube", lambda v: v ** 3)
    x = c([1.0, 2.0])
    with pytest.raises(NotImplementedError, match=r"tangent of a ForwardDocCube op comes from "
                       r"its gradient rule.*RegisterGradient\('ForwardDocCube'\)"):
        with FA(x, c([1.0, 0.0])):
            cube(x)
    assert cube(x).numpy().tolist() == [1.0, 8.0]  # outside the block it runs


def test_an_accumulator_left_by_an_exception_stops_recording():
    x = c([1.0, 2.0])
    acc = FA(x, c([1.0, 1.0]))
    with pytest.raises(KeyError):
        with acc:
            raise KeyError("boom")
    assert acc.jvp(x * 2.0) is None


# ---------------------------------------------------------------- every op's rule


def _tangents(points, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, np.shape(p)) for p in points]


def _forward(f, points, tangents):
    xs = [gv.constant(np.asarray(p, np.float64)) for p in points]
    with FA(xs, [gv.constant(t) for t in tangents]) as acc:
        y = f(*xs)
    return y, acc.jvp(y, unconnected_gradients="zero")


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_jvp_matches_finite_differences(op_type):
    f, points = CASES[op_type]
    tangents = _tangents(points, 7)
    y, jvp = _forward(f, points, tangents)
    assert op_type in _op_types(y)
    h = 1e-6
    up = f(*[gv.constant(np.asarray(p, np.float64) + h * t) for p, t in zip(points, tangents)])
    down = f(*[gv.constant(np.asarray(p, np.float64) - h * t)
               for p, t in zip(points, tangents)])
    fd = (up.numpy() - down.numpy()) / (2 * h)
    assert jvp.shape == y.shape and jvp.dtype == y.dtype
    assert np.allclose(jvp.numpy(), fd, rtol=1e-6, atol=1e-7), (jvp.numpy(), fd)


@pytest.mark.parametrize("op_type", sorted(t for t, (_, points) in CASES.items()
                                            if len(points) > 1))
def test_jvp_with_only_the_first_input_moving_matches_finite_differences(op_type):
    """The others take no part: broadcast inputs, zero-filled ones in a rule transposed."""
    f, points = CASES[op_type]
    moving = _tangents(points[:1], 17)[0]
    xs = [gv.constant(np.asarray(p, np.float64)) for p in points]
    with FA(xs[0], gv.constant(moving)) as acc:
        y = f(*xs)
    h = 1e-6
    rest = [gv.constant(np.asarray(p, np.float64)) for p in points[1:]]
    fd = (f(gv.constant(np.asarray(points[0], np.float64) + h * moving), *rest).numpy()
          - f(gv.constant(np.asarray(points[0], np.float64) - h * moving), *rest).numpy()
          ) / (2 * h)
    assert np.allclose(acc.jvp(y, unconnected_gradients="zero").numpy(), fd, rtol=1e-6,
                       atol=1e-7)


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_jvp_is_the_transpose_of_the_gradient(op_type):
    """<u, J t> = <Jᵀu, t>: forward and reverse mode give the same Jacobian."""
    f, points = CASES[op_type]
    tangents = _tangents(points, 11)
    y, jvp = _forward(f, points, tangents)
    u = np.random.default_rng(5).uniform(-1.0, 1.0, y.shape)
    xs = [gv.constant(np.asarray(p, np.float64)) for p in points]
    grads = gv.gradients(f(*xs), xs, grad_ys=gv.constant(u), unconnected_gradients="zero")
    reverse = sum(float(np.sum(gv.convert_to_tensor(g).numpy() * t))
                  for g, t in zip(grads, tangents))
    assert float(np.sum(u * jvp.numpy())) == pytest.approx(reverse, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("op_type", sorted(set(CASES) - PIECEWISE_LINEAR))
def test_forward_over_reverse_matches_finite_differences(op_type):
    """A Hessian-vector product: the JVP rules of the gradient ops each rule builds."""
    f, points = CASES[op_type]
    tangents = _tangents(points, 13)

    def grads(xs):
        y = f(*xs)
        gs = gv.gradients(y, xs, grad_ys=gv.constant(np.full(y.shape, 0.7)),
                          unconnected_gradients="zero")
        return [gv.convert_to_tensor(g) for g in gs]

    xs = [gv.constant(np.asarray(p, np.float64)) for p in points]
    with FA(xs, [gv.constant(t) for t in tangents]) as acc:
        gs = grads(xs)
    h = 1e-5
    up = grads([gv.constant(np.asarray(p, np.float64) + h * t) for p, t in zip(points, tangents)])
    down = grads([gv.constant(np.asarray(p, np.float64) - h * t)
                  for p, t in zip(points, tangents)])
    for g, a, b in zip(acc.jvp(gs, unconnected_gradients="zero"), up, down):
        fd = (a.numpy() - b.numpy()) / (2 * h)
        assert np.allclose(g.numpy(), fd, rtol=1e-5, atol=1e-6), (op_type, g.numpy(), fd)


def test_a_cast_between_floats_casts_the_tangent():
    x = c([1.0, 2.0], gv.float64)
    with FA(x, c([0.5, 0.25], gv.float64)) as acc:
        y = gv.cast(x, gv.float32) * 2.0
    assert acc.jvp(y).dtype == gv.float32 and acc.jvp(y).numpy().tolist() == [1.0, 0.5]


def test_a_custom_gradient_goes_forward_through_its_own_ops_else_its_grad_fn():
    @gv.custom_gradient
    def scaled_identity(x):
        def grad_fn(dy):
            return dy * 3.0  # a made-up gradient: forward mode does not follow it here
        return gv.identity(x), grad_fn

    @gv.custom_gradient
    def sine_outside(x):  # computed in NumPy: its result has no tangent of its own
        def grad_fn(dy):
            return dy * gv.cos(x)
        return gv.constant(np.sin(x.numpy())), grad_fn

    @gv.custom_gradient
    def one_of_each(x):
        def grad_fn(da, db):
            return da * 3.0 + db * 5.0
        return [gv.identity(x), gv.constant(np.sin(x.numpy()))], grad_fn

    x = c([1.0, 2.0])
    with FA(x, c([1.0, 0.5])) as acc:
        y = scaled_identity(x)
        z = sine_outside(x)
        a, b = one_of_each(x)
    # as TensorFlow's accumulator: the tangent the function's own ops computed wins,
    # and a result with none gets grad_fn transposed
    assert acc.jvp(y).numpy().tolist() == [1.0, 0.5]
    assert np.allclose(acc.jvp(z).numpy(), np.cos([1.0, 2.0]) * [1.0, 0.5])
    assert acc.jvp(a).numpy().tolist() == [1.0, 0.5]  # its own, not 3 t
    assert acc.jvp(b).numpy().tolist() == [5.0, 2.5]  # grad_fn's: 5 t


def test_every_rule_of_its_own_and_every_diagonal_op_is_checked_above():
    own = {t for t in OpType.all() if jvp_rules.jvp_rule_kind(t) == "own"}
    separately = {OpType.CAST, OpType.IDENTITY, OpType.STOP_GRADIENT}  # tests above
    assert (own | jvp_rules.DIAGONAL) - separately <= set(CASES)
    # and every other op goes forward through its gradient rule, which every op has
    assert all(gv.get_gradient_function(t) is not None or t in NOT_DIFFERENTIABLE
               for t in OpType.all() if t not in (OpType.CONST, OpType.VARIABLE))
