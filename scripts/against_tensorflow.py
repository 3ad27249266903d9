"""Run gradviz's convolution, pooling and bias ops beside TensorFlow's and compare.

The test suite runs without TensorFlow: its expected values are worked out by hand.
This script is how those were checked, and how to check them again against a new
TensorFlow release.  It needs TensorFlow in the Python that runs it, and gradviz's
engine (NumPy only) importable::

    python -m venv /tmp/tf && /tmp/tf/bin/pip install tensorflow-cpu
    PYTHONPATH=. /tmp/tf/bin/python scripts/against_tensorflow.py

For every case it compares the forward value, the gradients of sum(tanh(y)) and,
from those, the gradients of the sum of their squares (the second order, through
the gradient ops).  Then it compares the error messages of bad arguments.  It
prints a table and exits with 1 when anything differs.

Where TensorFlow's CPU kernels compute nothing (the gradients of a dilated
convolution, except in float32 with SAME or VALID padding) the case is left out.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import gradviz as gv  # noqa: E402

TOLERANCE = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-10}
EXPLICIT = [[0, 0], [2, 1], [0, 3], [0, 0]]


def cases(rng: np.random.Generator) -> list[tuple[str, Callable[[Any], Callable], list]]:
    """(name, op given a library, inputs) for every combination worth checking."""
    out = []
    for dtype in (np.float32, np.float64):
        for padding, strides, dilations, hw in itertools.product(
                ("SAME", "VALID", EXPLICIT), (1, 2, [1, 3], [3, 2]), (1, 2),
                ((5, 5), (6, 7), (8, 9))):
            if dilations > 1 and (dtype is np.float64 or padding is EXPLICIT):
                continue  # TensorFlow's CPU kernels have no gradient for these
            x = rng.standard_normal((2, *hw, 3)).astype(dtype)
            w = rng.standard_normal((3, 2, 3, 4)).astype(dtype)
            out.append((f"conv2d {padding if isinstance(padding, str) else 'explicit'} "
                        f"strides={strides} dilations={dilations}",
                        lambda lib, p=padding, s=strides, d=dilations:
                        lambda a, b: lib.nn.conv2d(a, b, s, p, dilations=d), [x, w]))
        for padding, (ksize, strides), hw in itertools.product(
                ("SAME", "VALID"), ((2, 2), (3, 2), (3, 1), ([2, 3], [1, 2]), (3, 3)),
                ((5, 5), (6, 7), (4, 9))):
            ties = rng.integers(-2, 3, size=(2, *hw, 2)).astype(dtype)
            for pool, x in (("max_pool2d", ties), ("max_pool2d", np.maximum(ties, 0)),
                            ("avg_pool2d", rng.standard_normal((2, *hw, 2)).astype(dtype))):
                out.append((f"{pool} {padding} ksize={ksize} strides={strides}",
                            lambda lib, f=pool, p=padding, k=ksize, s=strides:
                            lambda a: getattr(lib.nn, f)(a, k, s, p), [x]))
        for padding in ("SAME", "VALID"):
            out.append((f"conv1d {padding} stride=2",
                        lambda lib, p=padding: lambda a, b: lib.nn.conv1d(a, b, 2, p),
                        [rng.standard_normal((2, 9, 3)).astype(dtype),
                         rng.standard_normal((3, 3, 4)).astype(dtype)]))
        out.append(("bias_add", lambda lib: lambda a, b: lib.nn.bias_add(a, b),
                    [rng.standard_normal((2, 3, 4, 5)).astype(dtype),
                     rng.standard_normal(5).astype(dtype)]))
    return out


def run(lib: Any, f: Callable, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """y = f(*inputs), the gradients of sum(tanh(y)), and the gradients of the sum of
    their squares, in ``lib`` (tf or gv: the same API)."""
    xs = [lib.constant(a) for a in inputs]
    with lib.GradientTape(persistent=True) as outer:
        outer.watch(xs)
        with lib.GradientTape() as inner:
            inner.watch(xs)
            y = f(*xs)
            loss = lib.reduce_sum(lib.tanh(y))
        grads = inner.gradient(loss, xs)
        again = lib.add_n([lib.reduce_sum(g * g) for g in grads])
    seconds = outer.gradient(again, xs)
    return [y.numpy(), *(g.numpy() for g in grads),
            *(np.zeros_like(a) if g is None else g.numpy() for a, g in zip(inputs, seconds))]


def difference(ours: np.ndarray, theirs: np.ndarray) -> float:
    """Largest difference, relative to the larger of 1 and TensorFlow's largest value."""
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        return float("inf")
    return float(np.abs(ours - theirs).max(initial=0) / max(1.0, np.abs(theirs).max(initial=0)))


BAD_ARGUMENTS = [
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
]


#: bad arguments where gradviz words it otherwise on purpose, and why
WORDED_OTHERWISE = {
    "conv1d stride of length 2": "TensorFlow's 'of length 1, 1 or 3' repeats the 1",
}


def message(call: Callable[[], Any]) -> str | None:
    """The error's text without TensorFlow's node prefix and op suffix, or None."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - each library raises its own types
        text = str(e).split("}}")[-1].strip()
        return re.sub(r" \[Op:\w+\]( name: ?)?$", "", text)
    return None


def main() -> int:
    print(f"TensorFlow {tf.__version__} against gradviz")
    worst: dict[str, float] = {}
    failures = []
    for name, op, inputs in cases(np.random.default_rng(1)):
        theirs, ours = run(tf, op(tf), inputs), run(gv, op(gv), inputs)
        err = max(difference(a, b) for a, b in zip(ours, theirs))
        dtype = inputs[0].dtype
        key = f"{name.split()[0]} {dtype.name}"
        worst[key] = max(worst.get(key, 0.0), err)
        if err > TOLERANCE[dtype]:
            failures.append(f"{name} {dtype.name}: differs by {err:.1e}")
    print(f"\n{'op and dtype':<22} {'largest difference':>20}")
    for key, err in sorted(worst.items()):
        print(f"{key:<22} {err:>20.1e}")
    x, w = np.zeros((1, 4, 4, 3)), np.zeros((3, 3, 3, 2))
    print(f"\n{'bad argument':<28} TensorFlow's message found in gradviz's")
    for name, call in BAD_ARGUMENTS:
        theirs, ours = message(lambda: call(tf, x, w)), message(lambda: call(gv, x, w))
        same = theirs is not None and ours is not None and theirs in ours
        reason = WORDED_OTHERWISE.get(name)
        print(f"{name:<28} {'yes' if same else f'no, on purpose: {reason}' if reason else 'NO'}")
        if not same and not reason:
            failures.append(f"{name}: TensorFlow says {theirs!r}, gradviz {ours!r}")
    print()
    for failure in failures:
        print("DIFFERS:", failure)
    print(f"{len(failures)} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
