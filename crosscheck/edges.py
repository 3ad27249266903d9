"""Every op on its edge cases: its value, its gradients and their gradients.

Where a rule has to choose (a tie in max, abs and relu at 0, sqrt and log at 0,
0 ** 0, an empty tensor, a softmax of huge logits, a pool whose window holds
two maxima), the choice is TensorFlow's only if TensorFlow, run, agrees.  Each
case runs ``y = f(*inputs)`` under two tapes that watch every float input and
gives y, the gradients of ``sum(y * w)`` (``w`` fixed per case), and the
gradients of the sum of their squares (the second order, through the
gradient ops).  The grid of convolutions and pools comes from the script that
first checked ``gv.nn`` against ``tf.nn``.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .libs import Runner, dense, fn
from .outcome import Recording, Result

__all__ = ["OPS_COVERED", "cases"]

F32, F64 = np.float32, np.float64
EXPLICIT = [[0, 0], [2, 1], [0, 3], [0, 0]]


def _a(values: Any, dtype: Any = F32) -> np.ndarray:
    return np.array(values, dtype=dtype)


def run(lib: Any, f: Callable[..., Any], inputs: list[np.ndarray], seed: int,
        order: int = 2) -> list[tuple[str, Result]]:
    """y = f(*inputs); then, up to ``order``, the gradients of sum(y * w) and those of the
    sum of their squares."""
    rec = Recording(Runner(lib))
    try:
        xs = [lib.constant(a) for a in inputs]
        floats = [x for x, a in zip(xs, inputs) if a.dtype.kind == "f"]
        with lib.GradientTape(persistent=True) as outer:
            outer.watch(floats)
            with lib.GradientTape() as inner:
                inner.watch(floats)
                y = f(*xs)
            rec.add("y", y)
            if order == 0:
                return rec.results()
            w = np.random.default_rng(seed).uniform(0.5, 1.5, size=tuple(y.shape))
            grads = inner.gradient(y, xs, output_gradients=lib.constant(
                w.astype(y.numpy().dtype)))
            for k, g in enumerate(grads):
                rec.add(f"dy/dx{k}", g)
            parts = [lib.reduce_sum(g * g) for g in (dense(lib, g) for g in grads)
                     if g is not None]
            again = lib.add_n(parts) if parts and order == 2 else None
        if again is not None:
            for k, g in enumerate(outer.gradient(again, xs)):
                rec.add(f"d2/dx{k}", g)
    except Exception as e:  # noqa: BLE001 - compared with the other library's
        return rec.results(e)
    return rec.results()


def _custom_clip(lib: Any) -> Callable[[Any], Any]:
    @lib.custom_gradient
    def clip_gradient(x: Any) -> Any:
        def grad(dy: Any) -> Any:
            return lib.maximum(lib.minimum(dy, 0.5), -0.5)
        return lib.identity(x * 3.0), grad
    return clip_gradient


def _custom_with_variable(lib: Any, x: Any) -> Any:
    """A custom gradient over a Variable it reads: its grad_fn gives the Variable's too."""
    v = lib.Variable(np.array([2.0, -1.0], F32))

    @lib.custom_gradient
    def scaled(a: Any) -> Any:
        def grad(dy: Any, variables: Any = None) -> Any:
            return dy * v, [lib.reduce_sum(dy * a, axis=0) * 10.0]
        return a * v, grad
    return scaled(x)


def _op_cases() -> list[tuple[str, Callable[[Any], Callable[..., Any]], list[np.ndarray], int]]:
    """(name, f given a library, inputs, order): the ops' edge cases."""
    signed = _a([[-2.0, -1.0, 0.0], [0.0, 1.0, 2.0]])
    positive = _a([[0.5, 1.0, 4.0], [2.0, 0.25, 9.0]])
    with_zero = _a([[0.0, 1.0, 4.0], [2.0, 0.25, 0.0]])
    ties = _a([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
    empty = np.zeros((0, 3), F32)
    out: list = []

    def add(name: str, f: Callable[..., Any], *inputs: np.ndarray, order: int = 2) -> None:
        out.append((name, f, list(inputs), order))

    for name in ("negative", "square", "exp", "abs", "sign", "tanh", "sigmoid", "relu",
                 "identity", "stop_gradient", "ones_like", "zeros_like", "softmax",
                 "log_softmax"):
        for label, x in (("at and around 0", signed), ("float64", signed.astype(F64)),
                         ("empty", empty)):
            add(f"{name} {label}", lambda lib, n=name: fn(lib, n), x)
    for name in ("sqrt", "log"):
        add(f"{name} of positives", lambda lib, n=name: fn(lib, n), positive)
        add(f"{name} at 0", lambda lib, n=name: fn(lib, n), with_zero)
    add("exp of large values", lambda lib: lib.exp, _a([80.0, 90.0, -120.0]))
    add("softmax of huge logits", lambda lib: fn(lib, "softmax"), _a([[1000.0, 1000.0, -5.0]]))
    add("log_softmax of huge logits", lambda lib: fn(lib, "log_softmax"),
        _a([[1000.0, 1000.0, -5.0]]))
    add("softmax over axis 0", lambda lib: lambda x: fn(lib, "softmax")(x, axis=0), signed)
    for name in ("add", "subtract", "multiply", "maximum", "minimum"):
        add(f"{name} with ties", lambda lib, n=name: fn(lib, n), ties, ties[::-1].copy())
        add(f"{name} broadcast", lambda lib, n=name: fn(lib, n), signed, _a([[1.0], [0.0]]))
        add(f"{name} of a tensor and itself", lambda lib, n=name: lambda x: fn(lib, n)(x, x),
            ties)
    add("divide", lambda lib: lib.divide, signed, positive)
    add("divide by 0", lambda lib: lib.divide, positive, with_zero)
    add("pow of positives", lambda lib: lib.pow, positive, signed)
    add("pow of 0 and negatives", lambda lib: lib.pow, signed, _a([[2.0, 3.0, 0.0],
                                                                    [2.0, 0.0, 1.0]]))
    add("pow by a python float", lambda lib: lambda x: x ** 2.0, signed)
    add("operators", lambda lib: lambda a, b: (-a + b * 2.0 - 1.0 / b) @ lib.transpose(a),
        signed, positive)
    add("abs()", lambda lib: abs, signed)
    for ta, tb in itertools.product((False, True), repeat=2):
        add(f"matmul transpose_a={ta} transpose_b={tb}",
            lambda lib, ta=ta, tb=tb: lambda a, b: lib.matmul(a, b, transpose_a=ta,
                                                              transpose_b=tb),
            _a(np.arange(6).reshape((3, 2) if ta else (2, 3)) - 2.5),
            _a(np.arange(12).reshape((4, 3) if tb else (3, 4)) / 4.0))
    add("matmul batched", lambda lib: lib.matmul, np.ones((2, 2, 3), F32),
        _a(np.arange(12).reshape(2, 3, 2)))
    add("matmul of an empty inner dimension", lambda lib: lib.matmul, np.zeros((2, 0), F32),
        np.zeros((0, 3), F32))
    add("add_n of one", lambda lib: lambda x: lib.add_n([x]), signed)
    add("add_n of three", lambda lib: lambda a, b: lib.add_n([a, b, a]), signed, positive)
    for name in ("reduce_sum", "reduce_mean", "reduce_max"):
        for axis, keep in ((None, False), (0, False), (1, True), ([0, 1], True), (-1, False)):
            add(f"{name} axis={axis} keepdims={keep} with ties",
                lambda lib, n=name, a=axis, k=keep: lambda x: getattr(lib, n)(x, axis=a,
                                                                             keepdims=k),
                ties)
        add(f"{name} of an empty axis", lambda lib, n=name: lambda x: getattr(lib, n)(x, axis=0),
            empty)
    add("reduce_max of infinities", lambda lib: lambda x: lib.reduce_max(x, axis=1),
        _a([[-np.inf, -np.inf], [np.inf, 1.0]]))
    add("reshape with -1", lambda lib: lambda x: lib.reshape(x, [3, -1]), signed)
    add("reshape to a scalar", lambda lib: lambda x: lib.reshape(x, []), _a([[2.0]]))
    add("transpose", lambda lib: lambda x: lib.transpose(x, perm=[2, 0, 1]),
        _a(np.arange(24).reshape(2, 3, 4)))
    add("broadcast_to", lambda lib: lambda x: lib.broadcast_to(x, [2, 3, 3]), _a([[1.0], [2.0],
                                                                                 [3.0]]))
    add("concat", lambda lib: lambda a, b: lib.concat([a, b, a], axis=0), signed, positive)
    add("concat with an empty part", lambda lib: lambda a, b: lib.concat([a, b], axis=0),
        signed, empty)
    add("stack axis -1", lambda lib: lambda a, b: lib.stack([a, b], axis=-1), signed, positive)
    add("split in 3", lambda lib: lambda x: lib.split(x, 3, axis=1)[1] * 2.0, signed)
    add("split by sizes, one part unused", lambda lib: lambda x: lib.split(x, [1, 2], axis=1)[0],
        signed)
    add("unstack", lambda lib: lambda x: lib.unstack(x, axis=1)[2], signed)
    for index in ((slice(None, None, -1),), (Ellipsis, 1), (None, 0, slice(1, None)),
                  (1, slice(None, None, 2)), (-1, -1), (slice(5, 9),)):
        add(f"slice {index}", lambda lib, i=index: lambda x: x[i], signed)
    add("cast to float64", lambda lib: lambda x: lib.cast(x, lib.float64) * 2.0, signed)
    add("cast to int32 and back", lambda lib: lambda x: lib.cast(lib.cast(x, lib.int32),
                                                                  lib.float32), signed)
    add("cast an integer", lambda lib: lambda i: lib.cast(i, lib.float32) * 2.0,
        np.array([1, 2, 3], np.int32))
    add("cast to the same dtype", lambda lib: lambda x: lib.cast(x, lib.float32), signed)
    add("where", lambda lib: lambda c, a, b: lib.where(c > 0.0, a, b), signed, positive,
        _a([[1.0], [2.0]]))
    add("comparisons", lambda lib: lambda a, b: lib.where(lib.equal(a, b), a, b) + lib.where(
        lib.less_equal(a, b), b, a) * lib.cast(lib.greater_equal(a, b), lib.float32),
        ties, ties[::-1].copy())
    add("sigmoid_cross_entropy_with_logits",
        lambda lib: lambda z, x: fn(lib, "sigmoid_cross_entropy_with_logits")(labels=z, logits=x),
        _a([[0.0, 0.3, 1.0], [1.0, 0.5, 0.0]]), _a([[-3.0, 0.5, 2.0], [100.0, -100.0, 0.7]]))
    add("sigmoid_cross_entropy_with_logits at logits 0",
        lambda lib: lambda z, x: fn(lib, "sigmoid_cross_entropy_with_logits")(labels=z, logits=x),
        _a([0.0, 0.3, 1.0]), _a([0.0, 0.0, 0.0]))
    labels = _a([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    add("softmax_cross_entropy_with_logits",
        lambda lib: lambda z, x: fn(lib, "softmax_cross_entropy_with_logits")(labels=z, logits=x),
        labels, signed, order=1)
    add("softmax_cross_entropy_with_logits, second order in the logits",
        lambda lib: lambda x: fn(lib, "softmax_cross_entropy_with_logits")(
            labels=lib.constant(labels), logits=x), signed)
    add("softmax_cross_entropy_with_logits over axis 0",
        lambda lib: lambda x: fn(lib, "softmax_cross_entropy_with_logits")(
            labels=lib.constant(_a([[0.2, 0.3, 0.5], [0.8, 0.7, 0.5]])), logits=x, axis=0),
        signed)
    add("softmax_cross_entropy_with_logits, second order in the labels",
        lambda lib: lambda z, x: fn(lib, "softmax_cross_entropy_with_logits")(labels=z, logits=x),
        labels, signed)
    add("softmax_cross_entropy_with_logits, labels not summing to 1",
        lambda lib: lambda z, x: fn(lib, "softmax_cross_entropy_with_logits")(labels=z, logits=x),
        _a([[0.5, 0.5, 0.5], [2.0, 0.0, 0.0]]), signed, order=1)
    add("bias_add", lambda lib: lib.nn.bias_add, _a(np.arange(24).reshape(2, 3, 4) / 10.0),
        _a([1.0, -1.0, 0.0, 2.0]))
    add("custom_gradient", lambda lib: _custom_clip(lib), signed)
    add("custom_gradient with variables", lambda lib: lambda x: _custom_with_variable(lib, x),
        _a([[1.0, 2.0], [3.0, 4.0]]))
    add("recompute_grad", lambda lib: lambda x: lib.recompute_grad(
        lambda t: lib.tanh(t) * t)(x), signed, order=1)  # (TensorFlow's: no second order)
    out.extend(_transformer_cases())
    out.extend(_vocabulary_cases())
    return out


def _vocabulary_cases() -> list[tuple[str, Callable[[Any], Callable[..., Any]],
                                      list[np.ndarray], int]]:
    """The elementwise table's ops on their edge cases: TensorFlow's special values (x = 0
    in xlogy, y = 0 in multiply_no_nan, an integer division, halves in round)."""
    signed = _a([[-2.0, -1.0, 0.0], [0.0, 1.0, 2.0]])
    halves = _a([[-2.5, -1.5, -0.5], [0.5, 1.5, 2.5]])
    with_zero = _a([[0.0, 1.0, 4.0], [2.0, 0.25, 0.0]])
    x_zero = _a([[0.0, 0.0, 1.0], [0.0, 2.0, -1.0]])
    y_zero = _a([[0.0, 2.0, 0.0], [-1.0, 0.0, 3.0]])
    out: list = []

    def add(name: str, f: Callable[..., Any], *inputs: np.ndarray, order: int = 2) -> None:
        out.append((name, f, list(inputs), order))

    for name, x in (("log1p", _a([[-1.0, -0.5, 0.0], [1e-7, 1.0, 3.0]])),
                    ("expm1", _a([[-3.0, -1e-7, 0.0], [1e-7, 1.0, 20.0]])),
                    ("reciprocal", with_zero * signed + _a([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])),
                    ("floor", halves), ("ceil", halves), ("round", halves)):
        add(f"{name} at its edges", lambda lib, n=name: fn(lib, n), x)
        add(f"{name} float64", lambda lib, n=name: fn(lib, n), x.astype(F64))
    add("round of integers", lambda lib: fn(lib, "round"), np.array([-2, 0, 3], np.int32),
        order=0)
    add("floor times its input", lambda lib: lambda x: fn(lib, "floor")(x) * x, halves)
    for name in ("xlogy", "xlog1py", "xdivy", "multiply_no_nan", "atan2", "floormod",
                 "floordiv", "not_equal"):
        add(f"{name} at zeros", lambda lib, n=name: fn(lib, n), x_zero, y_zero)
        add(f"{name} broadcast", lambda lib, n=name: fn(lib, n), signed + 0.5,
            _a([[1.5], [-0.75]]))
        add(f"{name} float64", lambda lib, n=name: fn(lib, n), x_zero.astype(F64),
            (y_zero + 0.5).astype(F64))
    add("multiply_no_nan of inf and nan by 0", lambda lib: fn(lib, "multiply_no_nan"),
        _a([np.inf, np.nan, 2.0, -np.inf]), _a([0.0, 0.0, np.inf, 1.0]))
    add("xlogy of 0 and nan", lambda lib: fn(lib, "xlogy"), _a([0.0, 0.0, 1.0]),
        _a([np.nan, np.inf, np.nan]))
    add("atan2 in every quadrant and at the origin", lambda lib: fn(lib, "atan2"),
        _a([1.0, 1.0, -1.0, -1.0, 0.0, 0.0]), _a([1.0, -1.0, -1.0, 1.0, 0.0, -1.0]))
    for name in ("floordiv", "floormod"):
        add(f"{name} of integers", lambda lib, n=name: fn(lib, n),
            np.array([7, -7, 7, -7], np.int32), np.array([2, 2, -2, -2], np.int32), order=0)
        add(f"{name} by 0.0", lambda lib, n=name: fn(lib, n), _a([7.0, -7.0, 0.0]),
            _a([0.0, 0.0, 0.0]))
        add(f"{name} of values near a multiple", lambda lib, n=name: fn(lib, n),
            _a([7.0, 1.0, -0.3, 6.0]), _a([0.1, 0.1, 0.1, 3.0]))
    add("the operators // % and !=", lambda lib: lambda a, b: lib.stack(
        [a // b, a % b, 5.0 // b, 5.0 % b, lib.cast(a != b, a.dtype), lib.cast(a != 1.0, a.dtype)]),
        signed + 0.5, _a([[1.5, -1.5, 2.0], [0.5, 1.0, 3.0]]))
    add("not_equal of bools", lambda lib: fn(lib, "not_equal"), np.array([True, False, True]),
        np.array([True, True, False]), order=0)
    out.extend(_array_cases())
    return out


def _array_cases() -> list[tuple[str, Callable[[Any], Callable[..., Any]],
                                 list[np.ndarray], int]]:
    """Moving, cutting, repeating and reducing arrays, segments and matrices, on their edges:
    an empty segment, ties in a segment's maximum, a zero norm, a non-square diagonal."""
    rng = np.random.default_rng(60)
    m = rng.standard_normal((4, 3)).astype(F32)
    cube = rng.standard_normal((2, 3, 4)).astype(F32)
    ties = _a([[1.0, 2.0], [1.0, 4.0], [5.0, 6.0], [0.0, 6.0], [3.0, -1.0]])
    out: list = []

    def add(name: str, f: Callable[..., Any], *inputs: np.ndarray, order: int = 2) -> None:
        out.append((name, f, list(inputs), order))

    add("roll along two axes", lambda lib: lambda x: lib.roll(x, [1, -1], [0, 1]), m)
    add("roll by more than the axis, twice along one axis",
        lambda lib: lambda x: lib.roll(x, [5, -2], [1, 1]), m)
    add("reverse along two axes", lambda lib: lambda x: lib.reverse(x, [0, -1]), cube)
    add("reverse along no axis", lambda lib: lambda x: lib.reverse(x, []), m)
    add("slice to the end", lambda lib: lambda x: lib.slice(x, [1, 0], [-1, 2]), m)
    add("slice of nothing", lambda lib: lambda x: lib.slice(x, [2, 1], [0, 2]), m)
    add("slice of a cube", lambda lib: lambda x: lib.slice(x, [1, 0, 1], [1, 2, -1]), cube)
    add("identity_n", lambda lib: lambda a, b: lib.concat(
        [lib.reshape(t, [-1]) for t in lib.identity_n([a * 2.0, b])], 0), m, m[0])
    add("identity_n, one output used", lambda lib: lambda a, b: lib.identity_n([a, b])[1] * 3.0,
        m, m[1])
    add("grad_pass_through of round", lambda lib: lambda x: lib.grad_pass_through(
        lambda t: lib.round(t) * 3.0)(x), m)
    add("grad_pass_through of a matrix product", lambda lib: lambda x: lib.grad_pass_through(
        lambda t: lib.matmul(t, t, transpose_b=True))(x[:, :3]), m[:3])
    for axis in (None, 0, -1, [0, 1]):
        add(f"reduce_euclidean_norm axis={axis}", lambda lib, a=axis: lambda x: fn(
            lib, "reduce_euclidean_norm")(x, axis=a), m)
    add("reduce_euclidean_norm keepdims, of a zero row", lambda lib: lambda x: fn(
        lib, "reduce_euclidean_norm")(x, axis=1, keepdims=True), _a([[3.0, 4.0], [0.0, 0.0]]))
    add("reduce_euclidean_norm of integers", lambda lib: lambda x: fn(
        lib, "reduce_euclidean_norm")(x), np.array([3, 4, 12], np.int32), order=0)
    for name in ("reduce_any", "reduce_all"):
        add(f"{name} over axis 1 and all", lambda lib, n=name: lambda x: lib.stack(
            [lib.cast(fn(lib, n)(x, axis=1), lib.float32), lib.cast(fn(lib, n)(
                lib.reshape(x, [-1])[:2], keepdims=False), lib.float32) + [0.0, 0.0]]),
            np.array([[True, False], [True, True]]), order=0)
    for name in ("segment_sum", "segment_mean", "segment_max"):
        add(f"{name} with an empty segment and ties", lambda lib, n=name: lambda x: fn(
            lib, n)(x, [0, 0, 2, 2, 3]), ties)
        add(f"{name} of one segment", lambda lib, n=name: lambda x: fn(lib, n)(x, [0, 0, 0]),
            cube[0])
        add(f"{name} of integers", lambda lib, n=name: lambda x: fn(lib, n)(x, [1, 1, 3]),
            np.array([[4, -7], [1, 2], [3, 3]], np.int32), order=0)
    for shape in ((3,), (2, 3)):
        add(f"linalg.diag of {shape}", lambda lib: lambda d: lib.linalg.diag(d),
            rng.standard_normal(shape).astype(F32))
    add("linalg.diag of 2 values in a 4x2 matrix", lambda lib: lambda d: lib.linalg.diag(
        d, num_rows=4, num_cols=2), _a([1.5, -2.0]))
    for x in (m, cube, m.T.copy()):
        add(f"linalg.diag_part of {x.shape}", lambda lib: lib.linalg.diag_part, x)
        add(f"linalg.trace of {x.shape}", lambda lib: lib.linalg.trace, x)
        add(f"linalg.matrix_transpose of {x.shape}", lambda lib: lib.linalg.matrix_transpose, x)
    for low, up in ((0, -1), (-1, 0), (1, 0), (0, 0), (2, 1), (-1, -1)):
        add(f"linalg.band_part {low} {up}",
            lambda lib, lo=low, u=up: lambda x: lib.linalg.band_part(x, lo, u), cube)
    for axes, a, b in ((1, m, m.T.copy()), (0, m[0], m[1]), (2, cube, cube[0].T.copy()),
                       ([[0], [0]], m, m), ([[1, 0], [0, 1]], cube[0], cube[0].T.copy()),
                       ([2, 0], cube, rng.standard_normal((4, 2)).astype(F32))):
        add(f"tensordot axes={axes} of {a.shape} and {b.shape}",
            lambda lib, ax=axes: lambda p, q: lib.tensordot(p, q, ax), a, b)
    for repeats, axis, x in ((2, None, m), (2, 0, m), ([2, 0, 1, 3], 0, m),
                             ([1, 3, 0, 2], 1, cube[0]), (0, 1, m), ([2, 1], -1, m[:, :2]),
                             ([1, 2], 1, cube[:, :2])):
        add(f"repeat {repeats} axis={axis} of {x.shape}",
            lambda lib, r=repeats, a=axis: lambda t: lib.repeat(t, r, axis=a), x)
    for args, masks in (
            (([0, 1, 0], [2, 3, 4], [1, 1, 2]), {}),
            (([1, 1, 0], [2, 3, 4], [1, 1, 1]), {"begin_mask": 0b101}),
            (([0, 0, 1], [0, 2, 3], [1, 1, 1]), {"end_mask": 0b011}),
            (([0, 2, -1], [2, 0, 0], [1, -1, -2]), {"end_mask": 0b100}),
            (([1, 0], [2, 2], [1, 1]), {"shrink_axis_mask": 0b01}),
            (([0, -1], [0, 0], [1, 1]), {"ellipsis_mask": 0b01, "shrink_axis_mask": 0b10}),
            (([0, 0, 1], [0, 0, 3], [1, 1, 1]), {"ellipsis_mask": 0b001, "new_axis_mask": 0b010}),
            (([0, 0, 0], [2, 0, 2], [1, 1, 1]), {"new_axis_mask": 0b010}),
            (([1, 0, 0], [0, 0, 3], [1, 1, 2]), {"ellipsis_mask": 0b010,
                                                  "shrink_axis_mask": 0b001}),
            (([0, 5], [0, -5], [1, -1]), {"begin_mask": 0b01, "end_mask": 0b01})):
        add(f"strided_slice {args} {masks}",
            lambda lib, a=args, k=masks: lambda t: lib.strided_slice(t, *a, **k), cube)
    add("repeat beside an empty axis", lambda lib: lambda t: lib.repeat(t, [1, 2, 3], axis=1),
        np.zeros((2, 3, 0), F32))
    add("!= of shapes that do not broadcast, and of None", lambda lib: lambda a, b: lib.stack(
        [lib.cast(a != b, F32), lib.constant(1.0 if (a != None) is True else 0.0)]),  # noqa: E711
        m[0], m[:, 0].copy())
    add("floormod of values near a multiple, the gradient", lambda lib: lambda a, b: fn(
        lib, "floormod")(a, b), _a([7.0, 1.0, -3.5]), _a([0.1, 0.3, 0.7]))
    add("round of unsigned integers", lambda lib: fn(lib, "round"), np.array([3, 250], np.uint8),
        order=0)
    add("where broadcasting a column condition", lambda lib: lambda a, b: lib.where(
        lib.constant([[True], [False], [True], [False]]), a, b), m, m[0])
    add("where broadcasting all three", lambda lib: lambda a, b: lib.where(
        lib.constant([True, False, True]), a, b), m[:1], m[:, :1].copy())
    return out


def _transformer_cases() -> list[tuple[str, Callable[[Any], Callable[..., Any]],
                                       list[np.ndarray], int]]:
    """The ops of a transformer block on their edge cases."""
    signed = _a([[-2.0, -1.0, 0.0], [0.0, 1.0, 2.0]])
    ties = _a([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
    rng = np.random.default_rng(50)
    out: list = []

    def add(name: str, f: Callable[..., Any], *inputs: np.ndarray, order: int = 2) -> None:
        out.append((name, f, list(inputs), order))

    for name in ("sin", "cos", "erf", "erfc", "softplus", "leaky_relu", "gelu"):
        for label, x in (("at and around 0", signed), ("float64", signed.astype(F64))):
            add(f"{name} {label}", lambda lib, n=name: fn(lib, n), x)
    add("softplus of large values", lambda lib: fn(lib, "softplus"),
        _a([-100.0, -20.0, 20.0, 100.0]))
    add("gelu approximate", lambda lib: lambda x: fn(lib, "gelu")(x, approximate=True), signed)
    add("leaky_relu alpha 0.01", lambda lib: lambda x: fn(lib, "leaky_relu")(x, alpha=0.01),
        signed)
    add("rsqrt of positives", lambda lib: fn(lib, "rsqrt"), _a([[0.25, 1.0, 4.0]]))
    add("rsqrt at 0", lambda lib: fn(lib, "rsqrt"), _a([0.0, 1.0]), order=1)
    add("squared_difference broadcast", lambda lib: fn(lib, "squared_difference"), signed,
        _a([[1.0], [0.5]]))
    for name in ("reduce_min", "reduce_logsumexp", "reduce_variance", "reduce_std",
                 "reduce_prod"):
        for axis, keep in ((None, False), (0, True), (-1, False), ([0, 1], True)):
            add(f"{name} axis={axis} keepdims={keep} with ties",
                lambda lib, n=name, a=axis, k=keep: lambda x: fn(lib, n)(x, axis=a, keepdims=k),
                ties)
    add("reduce_logsumexp of huge and infinite values",
        lambda lib: lambda x: lib.reduce_logsumexp(x, axis=1),
        _a([[1000.0, 1000.0, -5.0], [-np.inf, -np.inf, -np.inf]]), order=1)
    with_zeros = _a([[0.0, 2.0, 3.0], [0.0, 0.0, -1.5]])
    add("reduce_prod with zeros", lambda lib: lambda x: fn(lib, "reduce_prod")(x, axis=1),
        with_zeros)
    for exclusive, reverse in itertools.product((False, True), repeat=2):
        for name in ("cumsum", "cumprod"):
            add(f"{name} exclusive={exclusive} reverse={reverse} with zeros",
                lambda lib, n=name, e=exclusive, r=reverse: lambda x: fn(lib, n)(
                    x, 1, exclusive=e, reverse=r), with_zeros)
    add("cumsum over axis -2", lambda lib: lambda x: fn(lib, "cumsum")(x, -2), signed)
    add("divide_no_nan by zeros", lambda lib: fn(lib, "divide_no_nan"), signed, with_zeros)
    add("reduce_min of an empty axis", lambda lib: lambda x: lib.reduce_min(x, axis=0),
        np.zeros((0, 3), F32))
    add("clip_by_value with values on the bounds",
        lambda lib: lambda x: lib.clip_by_value(x, -1.0, 1.0), signed)
    add("clip_by_value by tensors", lambda lib: lambda x, lo: lib.clip_by_value(x, lo, 1.5),
        signed, _a([[-1.0, 0.0, 0.5], [0.0, -3.0, 1.0]]))
    for index, (x, axis) in enumerate(((signed, 0), (signed, -1), (signed, 2), (signed, -3))):
        add(f"expand_dims axis={axis}", lambda lib, a=axis: lambda t: lib.expand_dims(t, a), x)
    add("squeeze every axis of 1", lambda lib: lib.squeeze, _a([[[1.0], [2.0]]]))
    add("squeeze axis -1", lambda lib: lambda t: lib.squeeze(t, [-1]), _a([[[1.0], [2.0]]]))
    add("tile", lambda lib: lambda t: lib.tile(t, [2, 1, 3]), _a(np.arange(6).reshape(1, 2, 3)))
    add("tile by 0", lambda lib: lambda t: lib.tile(t, [0, 2]), signed)
    for mode in ("CONSTANT", "REFLECT", "SYMMETRIC", "reflect"):
        add(f"pad {mode}", lambda lib, m=mode: lambda t: lib.pad(t, [[1, 1], [2, 2]], mode=m),
            signed)
    add("pad SYMMETRIC by the whole axis", lambda lib: lambda t: lib.pad(
        t, [[2, 0], [3, 3]], mode="SYMMETRIC"), signed)
    add("pad with a constant value", lambda lib: lambda t: lib.pad(
        t, [[0, 1], [1, 0]], constant_values=-7.5), signed)
    x3, y3 = rng.standard_normal((2, 3, 4)).astype(F32), rng.standard_normal((2, 5, 4)).astype(F32)
    for equation, a, b in (("bqd,bkd->bqk", x3, y3), ("bqk,bkd->bqd", x3[:, :, :3],
                                                         rng.standard_normal((2, 3, 6))),
                           ("ij,jk->ik", signed, positive_3x2()), ("ij,jk", signed, positive_3x2()),
                           ("ij,jk->k", signed, positive_3x2()), ("i,j->ij", signed[0], signed[1]),
                           ("...qd,...kd->...qk", x3, y3), ("bij,bj->bi", x3, x3[:, 0]),
                           ("bhqd,bhkd->bhqk", x3.reshape(1, 2, 3, 4), y3.reshape(1, 2, 5, 4))):
        add(f"einsum {equation}", lambda lib, e=equation: lambda p, q: lib.einsum(e, p, q),
            a, b.astype(a.dtype))
    add("matmul broadcasting batch dimensions", lambda lib: lib.matmul,
        rng.standard_normal((2, 1, 3, 4)).astype(F32), rng.standard_normal((5, 4, 2)).astype(F32))
    add("matmul of a batch by a matrix", lambda lib: lib.matmul,
        rng.standard_normal((3, 2, 4)).astype(F32), rng.standard_normal((4, 2)).astype(F32))
    add("moments over the last axis", lambda lib: lambda t: lib.nn.moments(t, [-1])[1], signed)
    add("moments keepdims, the mean and the variance", lambda lib: lambda t: lib.add_n(
        list(lib.nn.moments(t, [0], keepdims=True))), ties)
    add("layer_norm", lambda lib: lambda t, g, b: _layer_norm(lib)(t, g, b),
        rng.standard_normal((4, 5)).astype(F32), _a([1.0, 0.5, 2.0, 1.0, -1.0]),
        _a([0.0, 0.1, 0.0, -0.2, 0.3]))
    add("layer_norm of a constant row", lambda lib: lambda t, g, b: _layer_norm(lib)(t, g, b),
        _a([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]), _a([1.0, 1.0, 1.0]), _a([0.0, 0.0, 0.0]))
    add("batch_normalization without scale and offset", lambda lib: lambda t, m, v: fn(
        lib, "batch_normalization")(t, m, v, None, None, 1e-5), signed, _a([0.5, 0.0, -1.0]),
        _a([1.0, 4.0, 0.25]))
    add("one_hot", lambda lib: lambda i: lib.one_hot(i, 4), np.array([0, 3, -1, 4, 2], np.int32))
    add("one_hot on axis 0 with values", lambda lib: lambda i: lib.one_hot(
        i, 3, on_value=5.0, off_value=-1.0, axis=0), np.array([[0, 2], [1, 1]], np.int32))
    add("one_hot times a matrix", lambda lib: lambda w: lib.matmul(lib.one_hot(
        lib.constant([1, 0, 1]), 3), w), signed.T.copy())
    for name in ("argmax", "argmin"):
        add(f"{name} with ties", lambda lib, n=name: lambda t: lib.cast(
            fn(lib, n)(t, axis=1), lib.float32) * 2.0, ties, order=0)
        add(f"{name} by default", lambda lib, n=name: lambda t: fn(lib, n)(t), ties, order=0)
    add("is_finite", lambda lib: lambda t: fn(lib, "is_finite")(t),
        _a([np.inf, -np.inf, np.nan, 1.0]), order=0)
    table = rng.standard_normal((5, 3)).astype(F32)
    ids = np.array([1, 3, 1], np.int32)
    add("gather with a repeated row", lambda lib: lib.gather, table, ids)
    add("gather along axis 1", lambda lib: lambda p, i: lib.gather(p, i, axis=1), table,
        np.array([[2, 0], [2, 2]], np.int32))
    add("gather along axis -1", lambda lib: lambda p, i: lib.gather(p, i, axis=-1), table,
        np.array([0, 2], np.int32))
    add("gather in batches", lambda lib: lambda p, i: lib.gather(p, i, axis=1, batch_dims=1),
        table, np.array([[0, 2], [1, 1], [2, 2], [0, 0], [1, 0]], np.int32))
    add("gather in batches along a later axis", lambda lib: lambda p, i: lib.gather(
        p, i, axis=2, batch_dims=1), rng.standard_normal((2, 3, 4)).astype(F32),
        np.array([[3, 0], [1, 1]], np.int32))
    add("embedding_lookup", lambda lib: lib.nn.embedding_lookup, table,
        np.array([[0, 4], [4, 2]], np.int32))
    add("embedding_lookup twice: two sparse gradients aggregate",
        lambda lib: lambda p: lib.nn.embedding_lookup(p, [1, 2]) * 2.0
        + lib.nn.embedding_lookup(p, [2, 2]), table)
    add("a gather and a dense use: the sum is dense",
        lambda lib: lambda p: lib.gather(p, [0, 0]) + p[:2] * 3.0, table)
    add("a gather of an op's output", lambda lib: lambda p: lib.gather(lib.tanh(p), [4, 1]),
        table)
    add("a gather of a gather", lambda lib: lambda p: lib.gather(lib.gather(p, [1, 3, 1]),
                                                                [2, 0]), table)
    add("gather_nd of rows", lambda lib: lib.gather_nd, table, np.array([[3], [1], [3]], np.int32))
    add("gather_nd of elements", lambda lib: lib.gather_nd, table,
        np.array([[3, 1], [0, 2], [3, 1]], np.int32))
    add("indexing with a list, read as a tuple of indices", lambda lib: lambda p: p[[1, 0]],
        table)
    add("scatter_nd with a repeated position", lambda lib: lambda u: lib.scatter_nd(
        [[1, 0], [3, 2], [1, 0]], u, [4, 3]), _a([1.0, 2.0, 4.0]))
    add("unsorted_segment_sum with a dropped id", lambda lib: lambda d: fn(
        lib, "unsorted_segment_sum")(d, [2, 0, 2, -1], 3), table[:4])
    add("gather by a scalar index", lambda lib: lambda p: lib.gather(p, 2), table)
    add("one_hot of int values", lambda lib: lambda i: lib.one_hot(i, 3, on_value=5, off_value=0),
        np.array([2, 0], np.int32), order=0)
    add("matmul of a batch by a matrix, the inner dimension empty", lambda lib: lib.matmul,
        np.zeros((2, 3, 0), F32), np.zeros((0, 4), F32))
    add("cumsum exclusive over an empty axis", lambda lib: lambda x: fn(lib, "cumsum")(
        x, 1, exclusive=True), np.zeros((2, 0), F32))
    add("unsorted_segment_sum with every id dropped", lambda lib: lambda d: fn(
        lib, "unsorted_segment_sum")(d, [-1, -1], 0), table[:2])
    add("divide_no_nan of integers", lambda lib: lambda: fn(lib, "divide_no_nan")(
        lib.constant([3, 4, 0]), lib.constant([2, 0, 0])), order=0)
    add("batch_normalization of float16 by Python numbers", lambda lib: lambda t: fn(
        lib, "batch_normalization")(t, 0.5, 4.0, None, None, 1e-3), signed.astype(np.float16))
    add("dropout at rate 0", lambda lib: lambda t: lib.nn.dropout(t, 0.0, seed=1), signed)
    add("dropout: a kept value's gradient is 1 / (1 - rate), a dropped one's 0",
        lambda lib: lambda t: _dropout_check(lib, t), signed + 3.0, order=0)
    return out


def positive_3x2() -> np.ndarray:
    return _a([[0.5, 1.0], [4.0, 2.0], [0.25, 9.0]])


def _layer_norm(lib: Any) -> Callable[..., Any]:
    from .programs import layer_norm
    return layer_norm(lib)


def _dropout_check(lib: Any, x: Any) -> Any:
    """Which values dropout keeps differs between the libraries (their generators); what a
    kept and a dropped value do does not: y * (1 - rate) is x or 0, and dy/dx is y / x."""
    rate = 0.25
    with lib.GradientTape() as tape:
        tape.watch(x)
        y = lib.nn.dropout(x, rate, seed=7)
    g = tape.gradient(y, x)
    kept = lib.cast(lib.greater(lib.abs(y), 0.0), x.dtype)
    return lib.stack([y * (1.0 - rate) - x * kept, g - kept / (1.0 - rate)])


def _nn_cases(rng: np.random.Generator
              ) -> list[tuple[str, Callable[[Any], Callable[..., Any]], list[np.ndarray], int]]:
    """Convolution, pooling and bias over a grid of paddings, strides, dilations and pools."""
    out = []
    for dtype in (F32, F64):
        for padding, strides, dilations, hw in itertools.product(
                ("SAME", "VALID", EXPLICIT), (1, 2, [1, 3], [3, 2]), (1, 2),
                ((5, 5), (6, 7), (8, 9))):
            x = rng.standard_normal((2, *hw, 3)).astype(dtype)
            w = rng.standard_normal((3, 2, 3, 4)).astype(dtype)
            out.append((f"conv2d {padding if isinstance(padding, str) else 'explicit'} "
                        f"strides={strides} dilations={dilations} {hw} {dtype.__name__}",
                        lambda lib, p=padding, s=strides, d=dilations:
                        lambda a, b: lib.nn.conv2d(a, b, s, p, dilations=d), [x, w],
                        # TensorFlow 2.21's CPU kernels compute no gradient of a dilated
                        # convolution ("do not yet support dilation rates larger than 1"):
                        # its value only (tests/test_nn.py checks the gradients by finite
                        # differences)
                        0 if dilations > 1 else 2))
        for padding, (ksize, strides), hw in itertools.product(
                ("SAME", "VALID"), ((2, 2), (3, 2), (3, 1), ([2, 3], [1, 2]), (3, 3)),
                ((5, 5), (6, 7), (4, 9))):
            ties = rng.integers(-2, 3, size=(2, *hw, 2)).astype(dtype)
            for pool, x in (("max_pool2d", ties), ("max_pool2d", np.maximum(ties, 0)),
                            ("avg_pool2d", rng.standard_normal((2, *hw, 2)).astype(dtype))):
                out.append((f"{pool} {padding} ksize={ksize} strides={strides} {hw} "
                            f"{'ties ' if pool == 'max_pool2d' else ''}{dtype.__name__}"
                            f"{' at 0' if x is not ties and pool == 'max_pool2d' else ''}",
                            lambda lib, f=pool, p=padding, k=ksize, s=strides:
                            lambda a: getattr(lib.nn, f)(a, k, s, p), [x], 2))
        for padding in ("SAME", "VALID"):
            out.append((f"conv1d {padding} stride=2 {dtype.__name__}",
                        lambda lib, p=padding: lambda a, b: lib.nn.conv1d(a, b, 2, p),
                        [rng.standard_normal((2, 9, 3)).astype(dtype),
                         rng.standard_normal((3, 3, 4)).astype(dtype)], 2))
        out.append((f"bias_add NHWC {dtype.__name__}",
                    lambda lib: lambda a, b: lib.nn.bias_add(a, b),
                    [rng.standard_normal((2, 3, 4, 5)).astype(dtype),
                     rng.standard_normal(5).astype(dtype)], 2))
    # a filter of no output channels: an empty output, and gradients of zeros
    out.append(("conv2d of no output channels", lambda lib: lambda a, b: lib.nn.conv2d(
        a, b, 1, "SAME"), [rng.standard_normal((1, 4, 4, 3)), np.zeros((3, 3, 3, 0))], 2))
    return out


#: the gv ops (by their names in gv and gv.nn) that these cases run
OPS_COVERED = {
    "negative", "square", "exp", "abs", "sign", "tanh", "sigmoid", "relu", "identity",
    "stop_gradient", "ones_like", "zeros_like", "softmax", "log_softmax", "sqrt", "log",
    "add", "subtract", "multiply", "maximum", "minimum", "divide", "pow", "matmul", "add_n",
    "reduce_sum", "reduce_mean", "reduce_max", "reshape", "transpose", "broadcast_to",
    "concat", "stack", "split", "unstack", "strided_slice", "cast", "where", "equal",
    "less_equal", "greater_equal", "sigmoid_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits", "bias_add", "custom_gradient", "recompute_grad",
    "conv2d", "conv1d", "max_pool2d", "avg_pool2d",
    "sin", "cos", "erf", "erfc", "softplus", "leaky_relu", "gelu", "rsqrt", "squared_difference",
    "reduce_min", "reduce_logsumexp", "reduce_variance", "reduce_std", "clip_by_value",
    "reduce_prod", "cumsum", "cumprod", "divide_no_nan",
    "expand_dims", "squeeze", "tile", "pad", "einsum", "moments", "layer_norm",
    "batch_normalization", "one_hot", "argmax", "argmin", "is_finite", "dropout", "gather",
    "embedding_lookup", "gather_nd", "scatter_nd", "unsorted_segment_sum",
    "log1p", "expm1", "reciprocal", "floor", "ceil", "round", "atan2", "xlogy", "xlog1py",
    "xdivy", "multiply_no_nan", "floordiv", "floormod", "not_equal",
    "roll", "reverse", "slice", "identity_n", "grad_pass_through", "reduce_euclidean_norm",
    "reduce_any", "reduce_all", "segment_sum", "segment_mean", "segment_max", "diag",
    "diag_part", "trace", "matrix_transpose", "band_part", "tensordot", "repeat",
    "prevent_gradient",  # (raises when differentiated: errors.py and forward.py run it)
}


def cases() -> Iterator[tuple[str, Callable[[Any], list], float]]:
    """(name, run in a library, tolerance floor) for every edge case."""
    for name, make, inputs, order in _op_cases() + _nn_cases(np.random.default_rng(1)):
        seed = zlib.crc32(name.encode())
        floor = 0.0 if all(a.dtype != F32 for a in inputs) else 2e-4
        yield (name, lambda lib, make=make, inputs=inputs, seed=seed, order=order:
               run(lib, make(lib), inputs, seed, order), floor)


# ---------------------------------------------------------------- what the tape watches


def _issue_constant(lib: Any) -> list:
    """An unwatched constant used by recorded ops: TensorFlow gives it None."""
    x, c = lib.constant([1.0, 2.0]), lib.constant([3.0, 4.0])
    with lib.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
        z = y * c
    return tape.gradient(z, [x, c, y])


def _issue_stop_gradient(lib: Any) -> list:
    """A stop_gradient's output, and a cast from an integer, as sources."""
    x, i = lib.constant([1.0, 2.0]), lib.constant([1, 2])
    with lib.GradientTape(persistent=True) as tape:
        tape.watch(x)
        s = lib.stop_gradient(x * 2.0)
        f = lib.cast(i, lib.float32)
        y = s * x * f
    return tape.gradient(y, [x, s, f])


def _own_target(lib: Any, make: Callable[[Any, Any, Any], Any], variable: bool = False,
                kind: str = "gradient") -> Any:
    """d[y, a]/da (or a Jacobian of a with respect to itself) where the tape never watched
    ``a``, a constant (or a Variable it did not watch) that ``make`` uses beside a watched w."""
    value = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], F32)
    a = lib.Variable(value, trainable=False) if variable else lib.constant(value)
    w = lib.constant(value[::-1].copy())
    with lib.GradientTape(persistent=True) as tape:
        tape.watch(w)
        y = make(lib, a, w)
    if kind == "gradient":
        return [tape.gradient([y, a], a)]
    return [getattr(tape, kind)(a, a), getattr(tape, kind)(a, a, unconnected_gradients="zero")]


def _jacobian_of_a_trainable_variable(lib: Any) -> list:
    v = lib.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], F32))
    with lib.GradientTape(persistent=True) as tape:
        pass
    return [tape.jacobian(v, v), tape.batch_jacobian(v, v)]


def _batch_jacobian_unconnected(lib: Any) -> list:
    x = lib.constant(np.ones((2, 3), np.float64))
    y = lib.constant(np.ones((2, 2), F32))
    with lib.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = y * 2.0
    return [tape.batch_jacobian(z, x), tape.batch_jacobian(z, x, unconnected_gradients="zero")]


def _watched_after_use(lib: Any, variable: bool) -> list:
    """Watched after an op (recorded for another input) read it: a constant then gets its
    gradient through that op; a Variable, read afresh by each op, does not."""
    a = lib.Variable([1.0, 2.0], trainable=False) if variable else lib.constant([1.0, 2.0])
    w = lib.constant([3.0, 4.0])
    with lib.GradientTape() as tape:
        tape.watch(w)
        y = a * w
        tape.watch(a)
    return [tape.gradient(y, a)]


def _zeros_like_on_the_tape(lib: Any) -> list:
    x = lib.constant([1.0, 2.0])
    with lib.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = lib.zeros_like(x)
        y = lib.concat([z, z], axis=0)
    return [tape.gradient(y, z), tape.gradient(y, x), tape.gradient([z, y], z)]


def _namespaces(lib: Any) -> list:
    """1 for each op of gv.nn, gv.math and gv.linalg that TensorFlow's namespace of that name
    has too (gv.nn.layer_norm is gradviz's own, as the README says)."""
    import gradviz as gv
    names = [(space, n) for space in ("nn", "math", "linalg")
             for n in getattr(gv, space).__all__ if (space, n) != ("nn", "layer_norm")]
    return [lib.constant([1.0 if hasattr(getattr(lib, space), n) else 0.0
                          for space, n in names])]


#: (name, f given a library -> tensors or None): what the tape watches, as TensorFlow's does
_TAPE: list[tuple[str, Callable[[Any], Any]]] = [
    ("every op of gv.nn, gv.math and gv.linalg is in TensorFlow's namespace of that name",
     _namespaces),
    ("an unwatched constant used by recorded ops (the issue's program)", _issue_constant),
    ("a stop_gradient's output and a cast from an integer as sources", _issue_stop_gradient),
    ("an unwatched constant, also the target, that a recorded multiply uses",
     lambda lib: _own_target(lib, lambda lib, a, w: a * w)),
    ("an unwatched constant, also the target, that a recorded matmul uses",
     lambda lib: _own_target(lib, lambda lib, a, w: lib.matmul(a, w, transpose_b=True))),
    ("an unwatched constant, also the target, as the logits of a cross-entropy",
     lambda lib: _own_target(lib, lambda lib, a, w: fn(
         lib, "softmax_cross_entropy_with_logits")(labels=lib.nn.softmax(w), logits=a))),
    ("an unwatched constant, also the target, as the labels of a cross-entropy",
     lambda lib: _own_target(lib, lambda lib, a, w: fn(
         lib, "softmax_cross_entropy_with_logits")(labels=a, logits=w))),
    ("an unwatched constant, also the target, in a softmax over axis 0",
     lambda lib: _own_target(lib, lambda lib, a, w: fn(lib, "softmax")(a * 1.0, axis=0) + w)),
    ("an unwatched frozen Variable, also the target, that a recorded multiply reads",
     lambda lib: _own_target(lib, lambda lib, a, w: a * w, variable=True)),
    ("the Jacobian of an unwatched constant with respect to itself",
     lambda lib: _own_target(lib, lambda lib, a, w: a * w, kind="jacobian")),
    ("the batch Jacobian of an unwatched constant with respect to itself",
     lambda lib: _own_target(lib, lambda lib, a, w: a * w, kind="batch_jacobian")),
    ("the Jacobians of an unwatched trainable Variable with respect to itself",
     _jacobian_of_a_trainable_variable),
    ("a batch Jacobian that nothing connects", _batch_jacobian_unconnected),
    ("a constant watched after a recorded op read it",
     lambda lib: _watched_after_use(lib, variable=False)),
    ("a Variable watched after a recorded op read it",
     lambda lib: _watched_after_use(lib, variable=True)),
    ("zeros_like on the tape", _zeros_like_on_the_tape),
]


def _tape_run(lib: Any, f: Callable[[Any], Any]) -> list[tuple[str, Result]]:
    rec = Recording(Runner(lib))
    try:
        for k, g in enumerate(f(lib)):
            rec.add(f"result {k}", g)
    except Exception as e:  # noqa: BLE001 - compared with the other library's
        return rec.results(e)
    return rec.results()


def tape_cases() -> Iterator[tuple[str, Callable[[Any], list], float]]:
    """(name, run in a library, tolerance floor) for what the tape watches."""
    for name, f in _TAPE:
        yield name, lambda lib, f=f: _tape_run(lib, f), 0.0
