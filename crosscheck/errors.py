"""Bad arguments: what each library raises.

Each case calls one op or one differentiation function wrongly and compares
the exception's type.  gradviz raises Python's own types where TensorFlow's
kernels raise ``InvalidArgumentError`` (one entry of ``deliberate.py`` says why).
The convolution, pooling and bias cases compare the message too: gradviz's
must contain TensorFlow's (without its node prefix and op suffix), since
those messages were written to match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .libs import Runner, fn, prevent_gradient
from .outcome import Result, raised

__all__ = ["cases"]

F32 = np.float32


def _m(shape: tuple[int, ...], dtype: Any = F32) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def _c(lib: Any, shape: tuple[int, ...], dtype: Any = F32) -> Any:
    return lib.constant(_m(shape, dtype))


def _tape(lib: Any, persistent: bool = False) -> tuple[Any, Any, Any]:
    """A tape that watched x and made y = x * x."""
    x = lib.constant([1.0, 2.0])
    tape = lib.GradientTape(persistent=persistent)
    with tape:
        tape.watch(x)
        y = x * x
    return tape, x, y


def _twice(lib: Any) -> Any:
    tape, x, y = _tape(lib)
    tape.gradient(y, x)
    return tape.gradient(y, x)


def _reenter(lib: Any) -> Any:
    tape = lib.GradientTape()
    with tape:
        with tape:
            pass


def _other_batch_sizes(lib: Any) -> Any:
    x = lib.constant([[1.0, 2.0]])
    with lib.GradientTape() as tape:
        tape.watch(x)
        y = lib.reshape(x, [2, 1]) * 2.0
    return tape.batch_jacobian(y, x)


def _bad_custom(lib: Any) -> Any:
    @lib.custom_gradient
    def f(a: Any, b: Any) -> Any:
        def grad(dy: Any) -> Any:
            return dy  # one gradient for two inputs
        return a * b, grad
    x = lib.constant([1.0, 2.0])
    with lib.GradientTape() as tape:
        tape.watch(x)
        y = f(x, x)
    return tape.gradient(y, x)


def _prevented(lib: Any) -> Any:
    """A gradient asked through prevent_gradient: a LookupError."""
    x = _c(lib, (2,))
    with lib.GradientTape() as tape:
        tape.watch(x)
        y = prevent_gradient(lib, x * 2.0, "no gradient here")
    return tape.gradient(y, x)


def _passed_two(lib: Any) -> Any:
    """grad_pass_through passes one upstream gradient on: two arguments want two."""
    x, y = _c(lib, (2,)), _c(lib, (2,))
    with lib.GradientTape() as tape:
        tape.watch([x, y])
        z = lib.grad_pass_through(lib.multiply)(x, y)
    return tape.gradient(z, [x, y])


#: (name, call given a library): each must raise
OPS: list[tuple[str, Callable[[Any], Any]]] = [
    ("add float32 and float64", lambda lib: lib.add(_c(lib, (2,)), _c(lib, (2,), np.float64))),
    ("multiply shapes that do not broadcast",
     lambda lib: lib.multiply(_c(lib, (2, 3)), _c(lib, (4,)))),
    ("matmul inner dimensions", lambda lib: lib.matmul(_c(lib, (2, 3)), _c(lib, (2, 3)))),
    ("matmul of a vector", lambda lib: lib.matmul(_c(lib, (3,)), _c(lib, (3, 2)))),
    ("matmul of float32 and float64",
     lambda lib: lib.matmul(_c(lib, (2, 2)), _c(lib, (2, 2), np.float64))),
    ("reshape to another size", lambda lib: lib.reshape(_c(lib, (2, 3)), [4, 2])),
    ("reshape with two -1", lambda lib: lib.reshape(_c(lib, (2, 3)), [-1, -1])),
    ("reduce_sum over axis 2 of a matrix", lambda lib: lib.reduce_sum(_c(lib, (2, 3)), axis=2)),
    ("reduce_max over axis -3 of a matrix",
     lambda lib: lib.reduce_max(_c(lib, (2, 3)), axis=-3)),
    ("transpose with a short perm", lambda lib: lib.transpose(_c(lib, (2, 3)), perm=[0])),
    ("transpose with a repeated axis",
     lambda lib: lib.transpose(_c(lib, (2, 3)), perm=[0, 0])),
    ("broadcast_to a shape it does not fit",
     lambda lib: lib.broadcast_to(_c(lib, (2, 3)), [3, 3])),
    ("concat of different shapes",
     lambda lib: lib.concat([_c(lib, (2, 3)), _c(lib, (3, 2))], axis=0)),
    ("concat of different dtypes",
     lambda lib: lib.concat([_c(lib, (2,)), _c(lib, (2,), np.float64)], axis=0)),
    ("concat over a missing axis", lambda lib: lib.concat([_c(lib, (2,)), _c(lib, (2,))], 1)),
    ("stack of different shapes", lambda lib: lib.stack([_c(lib, (2,)), _c(lib, (3,))])),
    ("split into unequal parts", lambda lib: lib.split(_c(lib, (5,)), 2)),
    ("split by sizes that do not add up", lambda lib: lib.split(_c(lib, (5,)), [2, 2])),
    ("unstack over a missing axis", lambda lib: lib.unstack(_c(lib, (2,)), axis=1)),
    ("index out of range", lambda lib: _c(lib, (2, 3))[5]),
    ("too many indices", lambda lib: _c(lib, (2, 3))[0, 0, 0]),
    ("a float index", lambda lib: _c(lib, (2, 3))[0.5]),
    ("where of different shapes",
     lambda lib: lib.where(lib.constant([True, False]), _c(lib, (2,)), _c(lib, (3,)))),
    ("softmax of integers", lambda lib: fn(lib, "softmax")(_c(lib, (2, 3), np.int32))),
    ("sqrt of integers", lambda lib: lib.sqrt(_c(lib, (3,), np.int32))),
    ("softmax of a scalar", lambda lib: fn(lib, "softmax")(lib.constant(1.0))),
    ("softmax over a missing axis", lambda lib: fn(lib, "softmax")(_c(lib, (2, 3)), axis=2)),
    ("softmax cross entropy of different shapes",
     lambda lib: fn(lib, "softmax_cross_entropy_with_logits")(labels=_c(lib, (2, 3)),
                                                              logits=_c(lib, (2, 4)))),
    ("sigmoid cross entropy of different shapes",
     lambda lib: fn(lib, "sigmoid_cross_entropy_with_logits")(labels=_c(lib, (2, 3)),
                                                              logits=_c(lib, (3,)))),
    ("add_n of different shapes", lambda lib: lib.add_n([_c(lib, (2,)), _c(lib, (3,))])),
    ("expand_dims past the last axis", lambda lib: lib.expand_dims(_c(lib, (2, 3)), 3)),
    ("squeeze an axis longer than 1", lambda lib: lib.squeeze(_c(lib, (2, 1)), [0])),
    ("tile by too few multiples", lambda lib: lib.tile(_c(lib, (2, 3)), [2])),
    ("tile by a negative multiple", lambda lib: lib.tile(_c(lib, (2, 3)), [2, -1])),
    ("pad REFLECT as wide as the axis",
     lambda lib: lib.pad(_c(lib, (2, 3)), [[0, 0], [3, 0]], mode="REFLECT")),
    ("pad SYMMETRIC wider than the axis",
     lambda lib: lib.pad(_c(lib, (2, 3)), [[3, 0], [0, 0]], mode="SYMMETRIC")),
    ("pad by a negative amount", lambda lib: lib.pad(_c(lib, (2, 3)), [[0, -1], [0, 0]])),
    ("pad by too few pairs", lambda lib: lib.pad(_c(lib, (2, 3)), [[1, 1]])),
    ("pad in an unknown mode", lambda lib: lib.pad(_c(lib, (2, 3)), [[1, 1], [0, 0]],
                                                   mode="WRAP")),
    ("one_hot of float indices", lambda lib: lib.one_hot(_c(lib, (3,)), 4)),
    ("einsum of mismatched dimensions",
     lambda lib: lib.einsum("ij,jk->ik", _c(lib, (2, 3)), _c(lib, (4, 2)))),
    ("einsum with too few subscripts",
     lambda lib: lib.einsum("ij,j->i", _c(lib, (2, 3, 1)), _c(lib, (3,)))),
    ("reduce_variance of integers",
     lambda lib: fn(lib, "reduce_variance")(_c(lib, (2, 3), np.int32))),
    ("argmax over a missing axis", lambda lib: lib.argmax(_c(lib, (2, 3)), axis=2)),
    ("gelu of integers", lambda lib: fn(lib, "gelu")(_c(lib, (3,), np.int32))),
    ("rsqrt of integers", lambda lib: fn(lib, "rsqrt")(_c(lib, (3,), np.int32))),
    ("dropout at rate 1", lambda lib: lib.nn.dropout(_c(lib, (3,)), 1.0)),
    ("gather of a row past the end", lambda lib: lib.gather(_c(lib, (3, 2)), [0, 3])),
    ("gather of a negative row", lambda lib: lib.gather(_c(lib, (3, 2)), [-1])),
    ("gather by float indices", lambda lib: lib.gather(_c(lib, (3, 2)), _c(lib, (2,)))),
    ("gather_nd deeper than params",
     lambda lib: lib.gather_nd(_c(lib, (3, 2)), [[0, 1, 0]])),
    ("unsorted_segment_sum with an id past the segments",
     lambda lib: fn(lib, "unsorted_segment_sum")(_c(lib, (2,)), [0, 3], 2)),
    ("one_hot of an int dtype and a float value",
     lambda lib: lib.one_hot([0], 2, on_value=2.5, dtype=lib.int32)),
    ("dropout by a noise shape that does not broadcast",
     lambda lib: lib.nn.dropout(_c(lib, (2, 3)), 0.5, noise_shape=[4, 3])),
    ("indexing with a list longer than the rank", lambda lib: _c(lib, (3, 2))[[1, 0, 1]]),
    ("indexing with an array", lambda lib: _c(lib, (3, 2))[np.array([1, 0])]),
    ("add_n of nothing", lambda lib: lib.add_n([])),
    ("a constant of ragged rows", lambda lib: lib.constant([[1.0, 2.0], [3.0]])),
    ("cast to a dtype that does not exist", lambda lib: lib.cast(_c(lib, (2,)), "float13")),
    ("log1p of integers", lambda lib: fn(lib, "log1p")(_c(lib, (3,), np.int32))),
    ("floor of integers", lambda lib: fn(lib, "floor")(_c(lib, (3,), np.int32))),
    ("xlogy of integers", lambda lib: fn(lib, "xlogy")(_c(lib, (3,), np.int32),
                                                       _c(lib, (3,), np.int32))),
    ("atan2 of float32 and float64", lambda lib: fn(lib, "atan2")(_c(lib, (2,)),
                                                                  _c(lib, (2,), np.float64))),
    ("floordiv of integers by 0", lambda lib: fn(lib, "floordiv")(
        lib.constant([7, 1]), lib.constant([2, 0]))),
    ("floormod of integers by 0", lambda lib: fn(lib, "floormod")(
        lib.constant([7, 1]), lib.constant([0, 3]))),
    ("prevent_gradient, differentiated", lambda lib: _prevented(lib)),
    ("roll by two shifts along one axis", lambda lib: lib.roll(_c(lib, (2, 3)), [1, 2], [0])),
    ("roll along a missing axis", lambda lib: lib.roll(_c(lib, (2, 3)), 1, 2)),
    ("reverse along one axis twice", lambda lib: lib.reverse(_c(lib, (2, 3)), [1, -1])),
    ("slice past the end", lambda lib: lib.slice(_c(lib, (2, 3)), [1, 1], [2, 1])),
    ("slice from a negative begin", lambda lib: lib.slice(_c(lib, (2, 3)), [-1, 0], [1, 1])),
    ("strided_slice with strides but no end", lambda lib: lib.strided_slice(
        _c(lib, (2, 3)), [1], strides=[1])),
    ("diag padded by a fraction of an integer diagonal",
     lambda lib: lib.linalg.diag(lib.constant([1, 2]), padding_value=0.5)),
    ("slice with too few begins", lambda lib: lib.slice(_c(lib, (2, 3)), [1], [1])),
    ("segment_sum of ids not sorted", lambda lib: fn(lib, "segment_sum")(_c(lib, (3,)),
                                                                          [1, 0, 1])),
    ("segment_sum of too few ids", lambda lib: fn(lib, "segment_sum")(_c(lib, (3,)), [0, 0])),
    ("reduce_any of floats", lambda lib: lib.reduce_any(_c(lib, (3,)))),
    ("tensordot over axes of other lengths",
     lambda lib: lib.tensordot(_c(lib, (2, 3)), _c(lib, (2, 3)), 1)),
    ("band_part of a vector", lambda lib: lib.linalg.band_part(_c(lib, (3,)), 0, 0)),
    ("band_part below more diagonals than rows",
     lambda lib: lib.linalg.band_part(_c(lib, (2, 3)), 3, 0)),
    ("diag_part of a vector", lambda lib: lib.linalg.diag_part(_c(lib, (3,)))),
    ("trace of a vector", lambda lib: lib.linalg.trace(_c(lib, (3,)))),
    ("strided_slice with two ellipses", lambda lib: lib.strided_slice(
        _c(lib, (2, 3)), [0, 0], [1, 1], [1, 1], ellipsis_mask=0b11)),
    ("strided_slice by a stride of 0", lambda lib: lib.strided_slice(
        _c(lib, (2, 3)), [0, 0], [1, 1], [1, 0])),
    ("strided_slice shrinking past the end", lambda lib: lib.strided_slice(
        _c(lib, (2, 3)), [2, 0], [3, 1], [1, 1], shrink_axis_mask=0b01)),
    ("strided_slice of begin and end of other lengths", lambda lib: lib.strided_slice(
        _c(lib, (2, 3)), [0, 0], [1], [1, 1])),
    ("repeat by too few counts", lambda lib: lib.repeat(_c(lib, (3,)), [1, 2], axis=0)),
    ("grad_pass_through of a function of two tensors, differentiated",
     lambda lib: _passed_two(lib)),
    ("multiply_no_nan of shapes that do not broadcast",
     lambda lib: fn(lib, "multiply_no_nan")(_c(lib, (2, 3)), _c(lib, (4,)))),
]

#: (name, call given a library): bad arguments to the differentiation functions
GRADIENTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("gradients: grad_ys of another length", lambda lib: lib.gradients(
        [lib.constant([1.0]) * 2.0], [lib.constant(1.0)], grad_ys=[None, None])),
    ("gradients: a grad_ys of another shape", lambda lib: (lambda x: lib.gradients(
        x * 2.0, x, grad_ys=lib.constant([1.0, 2.0, 3.0])))(lib.constant([1.0, 2.0]))),
    ("gradients: a grad_ys of another dtype", lambda lib: (lambda x: lib.gradients(
        x * 2.0, x, grad_ys=lib.constant([1.0, 2.0], lib.float64)))(lib.constant([1.0, 2.0]))),
    ("gradients: unconnected_gradients='zeros'", lambda lib: (lambda x: lib.gradients(
        x * 2.0, x, unconnected_gradients="zeros"))(lib.constant(1.0))),
    ("gradients: a number as ys", lambda lib: lib.gradients(3.0, [lib.constant(1.0)])),
]

TAPE: list[tuple[str, Callable[[Any], Any]]] = [
    ("tape: a second gradient of a non-persistent tape", _twice),
    ("tape: watch a number", lambda lib: lib.GradientTape().watch(3.0)),
    ("tape: a with block inside its own", _reenter),
    ("tape: unconnected_gradients='zeros'", lambda lib: (lambda t, x, y: t.gradient(
        y, x, unconnected_gradients="zeros"))(*_tape(lib))),
    ("tape: output_gradients of another shape", lambda lib: (lambda t, x, y: t.gradient(
        y, x, output_gradients=lib.constant([1.0, 2.0, 3.0])))(*_tape(lib))),
    ("tape: jacobian with unconnected_gradients='zeros'", lambda lib: (lambda t, x, y: t.jacobian(
        y, x, unconnected_gradients="zeros"))(*_tape(lib))),
    ("tape: batch_jacobian of a vector", lambda lib: (lambda t, x, y: t.batch_jacobian(
        y, x))(*_tape(lib, persistent=True))),
    ("tape: batch_jacobian of other batch sizes", _other_batch_sizes),
    ("tape: stop_recording outside the with block",
     lambda lib: lib.GradientTape().stop_recording().__enter__()),
    ("custom_gradient: one gradient for two inputs", _bad_custom),
]


#: convolution, pooling and bias: gradviz's message contains TensorFlow's
NN: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("strides of length 3", lambda lib, x, w: lib.nn.conv2d(x, w, [1, 1, 1], "SAME")),
    ("stride 0", lambda lib, x, w: lib.nn.conv2d(x, w, 0, "SAME")),
    ("batch stride", lambda lib, x, w: lib.nn.conv2d(x, w, [2, 1, 1, 1], "SAME")),
    ("dilation 0", lambda lib, x, w: lib.nn.conv2d(x, w, 1, "SAME", dilations=0)),
    ("batch dilation", lambda lib, x, w: lib.nn.conv2d(x, w, 1, "SAME",
                                                       dilations=[2, 1, 1, 1])),
    ("'EXPLICIT'", lambda lib, x, w: lib.nn.conv2d(x, w, 1, "EXPLICIT")),
    ("negative padding",
     lambda lib, x, w: lib.nn.conv2d(x, w, 1, [[0, 0], [-1, 0], [0, 0], [0, 0]])),
    ("batch padding",
     lambda lib, x, w: lib.nn.conv2d(x, w, 1, [[1, 0], [0, 0], [0, 0], [0, 0]])),
    ("padding pair of 1",
     lambda lib, x, w: lib.nn.conv2d(x, w, 1, [[0, 0], [1], [0, 0], [0, 0]])),
    ("padding of 3 pairs",
     lambda lib, x, w: lib.nn.conv2d(x, w, 1, [[0, 0], [0, 0], [0, 0]])),
    ("depth 3 vs 2", lambda lib, x, w: lib.nn.conv2d(x, w[:, :, :2], 1, "SAME")),
    ("kernel too big", lambda lib, x, w: lib.nn.conv2d(x[:, :2, :2], np.zeros((4, 4, 3, 1)), 1,
                                                       "VALID")),
    ("max ksize 0", lambda lib, x, w: lib.nn.max_pool2d(x, 0, 1, "SAME")),
    ("avg ksize -1", lambda lib, x, w: lib.nn.avg_pool2d(x, [2, -1], 1, "SAME")),
    ("pool stride -1", lambda lib, x, w: lib.nn.max_pool2d(x, 2, [1, -1], "SAME")),
    ("pool over batch", lambda lib, x, w: lib.nn.avg_pool2d(x, 2, [2, 1, 1, 1], "SAME")),
    ("pool over depth and space", lambda lib, x, w: lib.nn.max_pool2d(x, [1, 2, 2, 2], 1, "SAME")),
    ("pool too big", lambda lib, x, w: lib.nn.max_pool2d(x, 6, 1, "VALID")),
    ("conv1d stride of length 2", lambda lib, x, w: lib.nn.conv1d(x[0], w[0], [1, 2], "SAME")),
    ("bias of 2 dims", lambda lib, x, w: lib.nn.bias_add(x, np.zeros((3, 1)))),
    ("bias a number", lambda lib, x, w: lib.nn.bias_add(x, 1.0)),
    ("value of 1 dim", lambda lib, x, w: lib.nn.bias_add(np.zeros(3), np.zeros(3))),
    ("too few biases", lambda lib, x, w: lib.nn.bias_add(x, np.zeros(2))),
    ("a grouped convolution", lambda lib, x, w: lib.nn.conv2d(
        np.zeros((1, 4, 4, 4)), np.zeros((3, 3, 2, 4)), 1, "SAME")),
    ("stride 2**62", lambda lib, x, w: lib.nn.conv2d(x, w, 2 ** 62, "SAME")),
    ("dilation 2**31", lambda lib, x, w: lib.nn.conv2d(x, w, 1, "SAME", dilations=2 ** 31)),
    ("max ksize 2**31", lambda lib, x, w: lib.nn.max_pool2d(x, 2 ** 31, 1, "SAME")),
    ("avg stride -2**62", lambda lib, x, w: lib.nn.avg_pool2d(x, 2, -2 ** 62, "SAME")),
    ("conv1d stride 2**31", lambda lib, x, w: lib.nn.conv1d(x[0], w[0], 2 ** 31, "SAME")),
    ("filter of no input channels", lambda lib, x, w: lib.nn.conv2d(x, w[:, :, :0], 1, "SAME")),
    ("filter of no rows", lambda lib, x, w: lib.nn.conv2d(x, w[:0], 1, "VALID")),
    ("max pool padding as wide as the window",
     lambda lib, x, w: lib.nn.max_pool2d(x, 2, 1, [[0, 0], [0, 2], [0, 0], [0, 0]])),
    ("a SAME window too wide to pad in memory",
     lambda lib, x, w: lib.nn.conv2d(x, w, 1, "SAME", dilations=10000)),
]


def _raises(call: Callable[[], Any], graph: Runner | None = None) -> list[tuple[str, Result]]:
    """What ``call`` raises (in a graph, for tf.gradients), or what it gives if nothing."""
    try:
        if graph is None:
            call()
        else:
            with graph.building():
                call()
    except Exception as e:  # noqa: BLE001 - each library raises its own types
        return [("raised", raised(e))]
    return [("raised", None)]


def _message(call: Callable[[], Any]) -> list[tuple[str, Result]]:
    """What ``call`` raises, and its message without TensorFlow's node prefix and op suffix."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - each library raises its own types
        text = re.sub(r" \[Op:\w+\]( name: ?)?$", "", str(e).split("}}")[-1].strip())
        return [("raised", raised(e)), ("message", np.array(text, dtype=object))]
    return [("raised", None), ("message", np.array("", dtype=object))]


def cases() -> Iterator[tuple[str, Callable[[Any], list], float]]:
    """(name, run in a library, tolerance floor) for every bad argument."""
    for name, call in OPS + TAPE:
        yield name, lambda lib, call=call: _raises(lambda: call(lib)), 0.0
    for name, call in GRADIENTS:
        yield name, lambda lib, call=call: _raises(lambda: call(lib), Runner(lib, graph=True)), 0.0
    x, w = np.zeros((1, 4, 4, 3)), np.zeros((3, 3, 3, 2))
    for name, call in NN:
        yield f"nn: {name}", lambda lib, call=call: _message(lambda: call(lib, x, w)), 0.0
