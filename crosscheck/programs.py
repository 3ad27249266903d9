"""Random programs over every op, run in gradviz and in TensorFlow.

A program is data: leaves (constants, Variables, integer tensors, made from
seeded random arrays), steps (one op each, on earlier tensors), and how it is
differentiated:

- ``gradients``: ``lib.gradients(ys, xs, grad_ys, stop_gradients,
  unconnected_gradients)``, several ys and xs, integer tensors among them, and
  the gradients of the gradients (TensorFlow builds it in a graph);
- ``tape``: a ``GradientTape`` (persistent or not, watching accessed Variables or
  not) with steps before, inside and after its block, ``watch`` before or after
  a tensor's use, ``stop_recording``, ``reset``, and calls of ``gradient`` (with
  ``output_gradients``, structures of targets and sources, a source that is its
  own target), ``jacobian`` and ``batch_jacobian``; sometimes inside an outer
  tape that takes the second order.

``program(seed, k)`` makes program ``k`` of a run seeded ``seed``; ``run(lib,
program)`` runs it and gives its labelled results (``outcome.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .libs import Runner, dense, fn, is_tensorflow
from .outcome import TOLERANCE, Recording, Result

__all__ = ["OPS", "Program", "describe", "program", "run", "tolerance_floor"]

MAX_SIZE = 96  # elements in a tensor a program makes


@dataclass
class Entry:
    """What the generator knows of a tensor of the program."""

    shape: tuple[int, ...]
    kind: str = "f"  # "f" the program's float dtype, "g" the other float, "i" int32, "b" bool
    positive: bool = False  # its values are > 0 (a safe input to log, sqrt, divide)


@dataclass
class Leaf:
    index: int  # its place among the program's tensors
    kind: str  # "const", "var" (a trainable Variable), "frozen" (trainable=False)
    value: np.ndarray


@dataclass
class Step:
    op: str  # a key of OPS
    inputs: tuple[int, ...]
    attrs: dict[str, Any]
    outputs: tuple[int, ...]


@dataclass
class Program:
    seed: tuple[int, int]
    mode: str  # "gradients" or "tape"
    dtype: np.dtype
    leaves: list[Leaf] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    query: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- the ops, in both libraries


def _custom_square(lib: Any) -> Callable[[Any], Any]:
    """x², whose gradient is clipped to [-1, 1] (a custom gradient)."""
    @lib.custom_gradient
    def clipped_square(x: Any) -> Any:
        def grad(dy: Any) -> Any:
            return lib.maximum(lib.minimum(dy * 2.0 * x, 1.0), -1.0)
        return lib.square(x), grad
    return clipped_square


def _custom_product(lib: Any) -> Callable[[Any, Any], Any]:
    """a · b, whose gradient goes to a only, doubled (None for b)."""
    @lib.custom_gradient
    def half_product(a: Any, b: Any) -> Any:
        def grad(dy: Any) -> Any:
            return dy * b * 2.0, None
        return a * b, grad
    return half_product


def _index(spec: list) -> tuple:
    return tuple(slice(*it) if isinstance(it, list) else None if it == "newaxis" else it
                 for it in spec)


def _dtype(lib: Any, kind: str, program_dtype: np.dtype) -> Any:
    other = np.float64 if program_dtype == np.float32 else np.float32
    return {"f": lib.as_dtype(program_dtype), "g": lib.as_dtype(other),
            "i": lib.int32}[kind]


def layer_norm(lib: Any) -> Callable[..., Any]:
    """gradviz's ``gv.nn.layer_norm``; in TensorFlow, what it says it is: ``tf.nn.moments``
    over the last axis, then ``tf.nn.batch_normalization`` (epsilon 1e-3, Keras's)."""
    if not is_tensorflow(lib):
        return lambda x, scale, offset: lib.nn.layer_norm(x, -1, scale, offset)

    def norm(x: Any, scale: Any, offset: Any) -> Any:
        mean, variance = lib.nn.moments(x, [-1], keepdims=True)
        return lib.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)
    return norm


#: op name -> how each library runs it: (lib, inputs, attrs, program dtype) -> tensor(s)
OPS: dict[str, Callable[..., Any]] = {
    **{name: (lambda n: lambda lib, x, a, d: fn(lib, n)(x[0]))(name) for name in (
        "negative", "square", "sqrt", "exp", "log", "abs", "sign", "tanh", "sigmoid", "relu",
        "identity", "stop_gradient", "ones_like", "zeros_like", "sin", "cos", "rsqrt", "erf",
        "softplus", "leaky_relu", "gelu", "is_finite")},
    **{name: (lambda n: lambda lib, x, a, d: fn(lib, n)(x[0], x[1]))(name) for name in (
        "add", "subtract", "multiply", "divide", "pow", "maximum", "minimum", "equal",
        "greater", "greater_equal", "less", "less_equal", "squared_difference",
        "divide_no_nan")},
    "gelu_tanh": lambda lib, x, a, d: fn(lib, "gelu")(x[0], approximate=True),
    **{name: (lambda n: lambda lib, x, a, d: fn(lib, n)(x[0], axis=a["axis"],
                                                          keepdims=a["keepdims"]))(name)
       for name in ("reduce_min", "reduce_logsumexp", "reduce_variance", "reduce_prod")},
    **{name: (lambda n: lambda lib, x, a, d: fn(lib, n)(x[0], a["axis"], exclusive=a["exclusive"],
                                                          reverse=a["reverse"]))(name)
       for name in ("cumsum", "cumprod")},
    "expand_dims": lambda lib, x, a, d: lib.expand_dims(x[0], a["axis"]),
    "squeeze": lambda lib, x, a, d: lib.squeeze(x[0], a["axis"]),
    "tile": lambda lib, x, a, d: lib.tile(x[0], a["multiples"]),
    "pad": lambda lib, x, a, d: lib.pad(x[0], a["paddings"], mode=a["mode"],
                                        constant_values=a["value"]),
    "clip_by_value": lambda lib, x, a, d: lib.clip_by_value(x[0], a["low"], a["high"]),
    "einsum": lambda lib, x, a, d: lib.einsum(a["equation"], x[0], x[1]),
    "moments": lambda lib, x, a, d: lib.nn.moments(x[0], a["axes"], keepdims=a["keepdims"]),
    "layer_norm": lambda lib, x, a, d: layer_norm(lib)(x[0], x[1], x[2]),
    "one_hot": lambda lib, x, a, d: lib.one_hot(x[0], a["depth"], axis=a["axis"],
                                                dtype=_dtype(lib, "f", d)),
    "argmax": lambda lib, x, a, d: fn(lib, a["which"])(x[0], axis=a["axis"],
                                                       output_type=lib.int32),
    "gather": lambda lib, x, a, d: lib.gather(x[0], x[1], axis=a["axis"],
                                              batch_dims=a["batch_dims"]),
    "embedding_lookup": lambda lib, x, a, d: lib.nn.embedding_lookup(x[0], x[1]),
    "gather_nd": lambda lib, x, a, d: lib.gather_nd(x[0], x[1]),
    "op_neg": lambda lib, x, a, d: -x[0],
    "op_abs": lambda lib, x, a, d: abs(x[0]),
    "op_add": lambda lib, x, a, d: x[0] + x[1],
    "op_sub": lambda lib, x, a, d: x[0] - x[1],
    "op_mul": lambda lib, x, a, d: x[0] * x[1],
    "op_div": lambda lib, x, a, d: x[0] / x[1],
    "op_matmul": lambda lib, x, a, d: x[0] @ x[1],
    "op_scalar": lambda lib, x, a, d: {"radd": lambda t: 2.0 + t, "rsub": lambda t: 1.0 - t,
                                       "mul": lambda t: t * 0.5, "rdiv": lambda t: 1.0 / t,
                                       "pow": lambda t: t ** a["power"]}[a["how"]](x[0]),
    "matmul": lambda lib, x, a, d: lib.matmul(x[0], x[1], transpose_a=a["ta"],
                                              transpose_b=a["tb"]),
    "add_n": lambda lib, x, a, d: lib.add_n(list(x)),
    "reduce_sum": lambda lib, x, a, d: lib.reduce_sum(x[0], axis=a["axis"],
                                                      keepdims=a["keepdims"]),
    "reduce_mean": lambda lib, x, a, d: lib.reduce_mean(x[0], axis=a["axis"],
                                                        keepdims=a["keepdims"]),
    "reduce_max": lambda lib, x, a, d: lib.reduce_max(x[0], axis=a["axis"],
                                                      keepdims=a["keepdims"]),
    "reshape": lambda lib, x, a, d: lib.reshape(x[0], a["shape"]),
    "transpose": lambda lib, x, a, d: lib.transpose(x[0], perm=a["perm"]),
    "broadcast_to": lambda lib, x, a, d: lib.broadcast_to(x[0], a["shape"]),
    "concat": lambda lib, x, a, d: lib.concat(list(x), axis=a["axis"]),
    "stack": lambda lib, x, a, d: lib.stack(list(x), axis=a["axis"]),
    "split": lambda lib, x, a, d: lib.split(x[0], a["splits"], axis=a["axis"]),
    "unstack": lambda lib, x, a, d: lib.unstack(x[0], axis=a["axis"]),
    "slice": lambda lib, x, a, d: x[0][_index(a["index"])],
    "cast": lambda lib, x, a, d: lib.cast(x[0], _dtype(lib, a["to"], d)),
    "softmax": lambda lib, x, a, d: fn(lib, "softmax")(x[0], axis=a["axis"]),
    "log_softmax": lambda lib, x, a, d: fn(lib, "log_softmax")(x[0], axis=a["axis"]),
    "sigmoid_xent": lambda lib, x, a, d: fn(lib, "sigmoid_cross_entropy_with_logits")(
        labels=x[0], logits=x[1]),
    "softmax_xent": lambda lib, x, a, d: fn(lib, "softmax_cross_entropy_with_logits")(
        labels=x[0], logits=x[1]),
    "where": lambda lib, x, a, d: lib.where(x[0], x[1], x[2]),
    "bias_add": lambda lib, x, a, d: lib.nn.bias_add(x[0], x[1]),
    "conv2d": lambda lib, x, a, d: lib.nn.conv2d(x[0], x[1], a["strides"], a["padding"],
                                                 dilations=a["dilations"]),
    "conv1d": lambda lib, x, a, d: lib.nn.conv1d(x[0], x[1], a["stride"], a["padding"]),
    "max_pool2d": lambda lib, x, a, d: lib.nn.max_pool2d(x[0], a["ksize"], a["strides"],
                                                         a["padding"]),
    "avg_pool2d": lambda lib, x, a, d: lib.nn.avg_pool2d(x[0], a["ksize"], a["strides"],
                                                         a["padding"]),
    "custom_square": lambda lib, x, a, d: _custom_square(lib)(x[0]),
    "custom_product": lambda lib, x, a, d: _custom_product(lib)(x[0], x[1]),
    "recompute": lambda lib, x, a, d: lib.recompute_grad(lambda t: lib.tanh(t) * t)(x[0]),
    "ones": lambda lib, x, a, d: lib.ones(a["shape"], _dtype(lib, "f", d)),
    "zeros": lambda lib, x, a, d: lib.zeros(a["shape"], _dtype(lib, "f", d)),
}


# ---------------------------------------------------------------- making a program


class _Maker:
    """Builds one random program, knowing each tensor's shape, kind and sign."""

    def __init__(self, rng: np.random.Generator, prog: Program) -> None:
        self.rng = rng
        self.p = prog

    # -- tensors

    def new(self, shape: tuple[int, ...], kind: str = "f", positive: bool = False) -> int:
        self.p.entries.append(Entry(tuple(shape), kind, positive))
        return len(self.p.entries) - 1

    def leaf(self, shape: tuple[int, ...], kind: str = "f", positive: bool = False) -> int:
        """A new leaf: a constant, or in a tape program sometimes a Variable."""
        rng = self.rng
        if kind == "i":
            value = rng.integers(-3, 4, size=shape).astype(np.int32)
        elif positive:
            value = rng.uniform(0.5, 2.0, size=shape)
        else:
            value = rng.standard_normal(shape)
            if rng.random() < 0.15:  # ties and zeros, where the rules choose a side
                value = np.round(value)
        if kind == "f":
            value = value.astype(self.p.dtype)
        how = "const"
        if kind == "f" and self.p.mode == "tape":
            how = rng.choice(["const", "var", "frozen"], p=[0.6, 0.32, 0.08])
        i = self.new(shape, kind, positive)
        self.p.leaves.append(Leaf(i, str(how), np.asarray(value)))
        return i

    def shape(self, rank: int | None = None) -> tuple[int, ...]:
        rank = int(self.rng.integers(0, 4)) if rank is None else rank
        return tuple(int(d) for d in self.rng.integers(1, 5, size=rank))

    def pick(self, ok: Callable[[Entry], bool]) -> int | None:
        """An existing tensor that passes ``ok``, the recent ones likelier; None if none does."""
        found = [i for i, e in enumerate(self.p.entries) if ok(e)]
        if not found:
            return None
        weights = np.arange(1, len(found) + 1, dtype=float) ** 1.5
        return found[int(self.rng.choice(len(found), p=weights / weights.sum()))]

    def operand(self, kind: str = "f", positive: bool = False,
                ok: Callable[[Entry], bool] = lambda e: True, shape: Any = None) -> int:
        """An existing tensor that fits, or (sometimes, or when none does) a new leaf."""
        if self.rng.random() > 0.25:
            found = self.pick(lambda e: e.kind == kind and (e.positive or not positive) and ok(e)
                              and (shape is None or e.shape == tuple(shape)))
            if found is not None:
                return found
        while shape is None or not ok(Entry(tuple(shape), kind, positive)):
            shape = self.shape()  # (each op asks for shapes of rank 3 or less)
        return self.leaf(tuple(shape), kind, positive)

    def partner(self, shape: tuple[int, ...], positive: bool = False) -> int:
        """A tensor that broadcasts with ``shape``: the same, some axes 1, or fewer axes."""
        roll = self.rng.random()
        if roll < 0.4:
            other = shape
        else:
            other = tuple(1 if self.rng.random() < 0.4 else d for d in shape)
            if roll > 0.8:
                other = other[int(self.rng.integers(0, len(other) + 1)):]
        return self.operand(positive=positive, shape=other)

    def entry(self, i: int) -> Entry:
        return self.p.entries[i]

    def step(self, op: str, inputs: tuple[int, ...], outs: list[Entry],
             **attrs: Any) -> Step | None:
        if any(int(np.prod(e.shape)) > MAX_SIZE for e in outs):
            return None
        outputs = tuple(self.new(e.shape, e.kind, e.positive) for e in outs)
        s = Step(op, tuple(inputs), attrs, outputs)
        self.p.steps.append(s)
        return s

    def axis(self, rank: int) -> int:
        return int(self.rng.integers(-rank, rank))

    # -- one op each

    def make(self, op: str) -> Step | None:
        return getattr(self, f"_{op}", self._elementwise)(op)

    _UNARY = {"negative", "square", "exp", "abs", "sign", "tanh", "sigmoid", "relu", "identity",
              "stop_gradient", "ones_like", "zeros_like", "op_neg", "op_abs", "custom_square",
              "recompute", "sin", "cos", "erf", "softplus", "leaky_relu", "gelu", "gelu_tanh",
              "is_finite"}
    _POSITIVE_IN = {"sqrt", "log", "rsqrt"}
    _POSITIVE_OUT = {"square", "exp", "abs", "sigmoid", "ones_like", "op_abs", "sqrt", "softmax",
                     "softplus", "rsqrt"}
    _BINARY = {"add", "subtract", "multiply", "maximum", "minimum", "op_add", "op_sub", "op_mul",
               "equal", "greater", "greater_equal", "less", "less_equal", "custom_product",
               "squared_difference", "divide_no_nan"}

    def _elementwise(self, op: str) -> Step | None:
        if op in self._UNARY or op in self._POSITIVE_IN:
            x = self.operand(positive=op in self._POSITIVE_IN)
            e = self.entry(x)
            positive = (op in self._POSITIVE_OUT
                        or op in ("stop_gradient", "identity") and e.positive)
            return self.step(op, (x,), [Entry(e.shape, "b" if op == "is_finite" else "f",
                                              positive)])
        a = self.operand(positive=op == "pow")
        shape = self.entry(a).shape
        if op == "custom_product":
            b = self.operand(shape=shape)
        else:
            b = self.partner(shape, positive=op in ("divide", "op_div"))
        out = np.broadcast_shapes(shape, self.entry(b).shape)
        kind = "b" if op in ("equal", "greater", "greater_equal", "less", "less_equal") else "f"
        return self.step(op, (a, b), [Entry(out, kind, op in ("pow",))])

    _divide = _op_div = _pow = _elementwise

    def _op_scalar(self, op: str) -> Step | None:
        how = str(self.rng.choice(["radd", "rsub", "mul", "rdiv", "pow"]))
        x = self.operand(positive=how in ("rdiv", "pow"))
        e = self.entry(x)
        return self.step(op, (x,), [Entry(e.shape, "f", how in ("rdiv", "pow") or
                                          how == "mul" and e.positive)],
                         how=how, power=float(self.rng.choice([2.0, 0.5, 3.0, -1.0])))

    def _matmul(self, op: str) -> Step | None:
        ta, tb = (bool(b) for b in self.rng.integers(0, 2, size=2)) if op == "matmul" else (
            False, False)
        a = self.operand(ok=lambda e: len(e.shape) == 2)
        m, k = self.entry(a).shape[::-1] if ta else self.entry(a).shape
        n = int(self.rng.integers(1, 4))
        b = self.operand(shape=(n, k) if tb else (k, n))
        return self.step(op, (a, b), [Entry((m, n))], ta=ta, tb=tb)

    _op_matmul = _matmul

    def _add_n(self, op: str) -> Step | None:
        a = self.operand()
        shape = self.entry(a).shape
        more = [self.operand(shape=shape) for _ in range(int(self.rng.integers(1, 3)))]
        return self.step(op, (a, *more), [Entry(shape)])

    def _reduce(self, op: str) -> Step | None:
        x = self.operand(positive=False)
        shape = self.entry(x).shape
        keepdims = bool(self.rng.integers(0, 2))
        roll = self.rng.random()
        if not shape or roll < 0.3:
            axis: Any = None
            axes = set(range(len(shape)))
        elif roll < 0.7:
            axis = self.axis(len(shape))
            axes = {axis % len(shape)}
        else:
            axes = {int(a) for a in self.rng.choice(len(shape), size=int(
                self.rng.integers(1, len(shape) + 1)), replace=False)}
            axis = sorted(axes)
        out = tuple(1 if i in axes else d for i, d in enumerate(shape) if keepdims or i not in axes)
        return self.step(op, (x,), [Entry(out, "f", self.entry(x).positive)],
                         axis=axis, keepdims=keepdims)

    _reduce_sum = _reduce_mean = _reduce_max = _reduce_min = _reduce_logsumexp = _reduce
    _reduce_variance = _reduce_prod = _reduce

    def _cumsum(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        e = self.entry(x)
        return self.step(op, (x,), [Entry(e.shape, "f", e.positive and op == "cumprod")],
                         axis=self.axis(len(e.shape)), exclusive=bool(self.rng.integers(0, 2)),
                         reverse=bool(self.rng.integers(0, 2)))

    _cumprod = _cumsum

    def _expand_dims(self, op: str) -> Step | None:
        x = self.operand()
        e = self.entry(x)
        axis = int(self.rng.integers(-len(e.shape) - 1, len(e.shape) + 1))
        out = list(e.shape)
        out.insert(axis % (len(e.shape) + 1), 1)
        return self.step(op, (x,), [Entry(tuple(out), "f", e.positive)], axis=axis)

    def _squeeze(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: 1 in e.shape)
        e = self.entry(x)
        ones = [i for i, d in enumerate(e.shape) if d == 1]
        axis: Any = None if self.rng.random() < 0.4 else [
            int(self.rng.choice(ones)) - (len(e.shape) if self.rng.random() < 0.3 else 0)]
        gone = ones if axis is None else [axis[0] % len(e.shape)]
        out = tuple(d for i, d in enumerate(e.shape) if i not in gone)
        return self.step(op, (x,), [Entry(out, "f", e.positive)], axis=axis)

    def _tile(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        e = self.entry(x)
        reps = [int(m) for m in self.rng.integers(1, 4, size=len(e.shape))]
        out = tuple(d * m for d, m in zip(e.shape, reps))
        return self.step(op, (x,), [Entry(out, "f", e.positive)], multiples=reps)

    def _pad(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        e = self.entry(x)
        mode = str(self.rng.choice(["CONSTANT", "REFLECT", "SYMMETRIC"]))
        most = {"CONSTANT": 2, "REFLECT": 0, "SYMMETRIC": 1}[mode]
        pairs = [[int(p) for p in self.rng.integers(0, min(2, d - 1 + most) + 1, size=2)]
                 for d in e.shape]
        out = tuple(d + b + a for d, (b, a) in zip(e.shape, pairs))
        value = float(self.rng.choice([0.0, 1.5]))
        return self.step(op, (x,), [Entry(out, "f", e.positive and value > 0)], paddings=pairs,
                         mode=mode, value=value)

    def _clip_by_value(self, op: str) -> Step | None:
        x = self.operand()
        low = float(self.rng.choice([-1.0, -0.5, 0.0]))
        return self.step(op, (x,), [Entry(self.entry(x).shape)], low=low,
                         high=low + float(self.rng.choice([0.5, 1.0, 1.5])))

    #: an einsum's subscripts and, per letter of the second operand, where the first has it
    _EINSUMS = ("ij,jk->ik", "ij,kj->ik", "bqd,bkd->bqk", "bqk,bkd->bqd", "ij,j->i",
                "bi,bi->b", "ij,jk->k", "ij,kl->ijkl")

    def _einsum(self, op: str) -> Step | None:
        equation = str(self.rng.choice(self._EINSUMS))
        (left, right), out = equation.split("->")[0].split(","), equation.split("->")[1]
        a = self.operand(ok=lambda e: len(e.shape) == len(left))
        sizes = dict(zip(left, self.entry(a).shape))
        for c in right:
            sizes.setdefault(c, int(self.rng.integers(1, 4)))
        b = self.operand(shape=tuple(sizes[c] for c in right))
        return self.step(op, (a, b), [Entry(tuple(sizes[c] for c in out))], equation=equation)

    def _moments(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        shape = self.entry(x).shape
        axes = sorted(int(a) for a in self.rng.choice(
            len(shape), size=int(self.rng.integers(1, len(shape) + 1)), replace=False))
        keepdims = bool(self.rng.integers(0, 2))
        out = tuple(1 if i in axes else d for i, d in enumerate(shape) if keepdims or i not in axes)
        return self.step(op, (x,), [Entry(out), Entry(out)], axes=axes, keepdims=keepdims)

    def _layer_norm(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1 and e.shape[-1] >= 2)
        shape = self.entry(x).shape
        scale, offset = (self.operand(shape=shape[-1:]) for _ in range(2))
        return self.step(op, (x, scale, offset), [Entry(shape)])

    def _one_hot(self, op: str) -> Step | None:
        i = self.operand(kind="i", ok=lambda e: len(e.shape) <= 2)
        shape = self.entry(i).shape
        depth = int(self.rng.integers(2, 5))
        axis = int(self.rng.integers(-1, len(shape) + 1))
        out = list(shape)
        out.insert(len(shape) if axis == -1 else axis, depth)
        return self.step(op, (i,), [Entry(tuple(out))], depth=depth, axis=axis)

    def _indices_into(self, shape: tuple[int, ...], size: int) -> int:
        """A new int32 leaf of ``shape`` whose values index an axis of ``size``."""
        i = self.leaf(shape, "i")
        self.p.leaves[-1].value = self.rng.integers(0, size, size=shape).astype(np.int32)
        return i

    def _gather(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        shape = self.entry(x).shape
        b = int(self.rng.integers(0, len(shape))) if op == "gather" and \
            self.rng.random() < 0.3 else 0
        axis = 0 if op == "embedding_lookup" else int(self.rng.integers(b, len(shape)))
        rest = tuple(int(d) for d in self.rng.integers(1, 4, size=int(self.rng.integers(0, 3))))
        ids = self._indices_into(shape[:b] + rest, shape[axis])
        out = shape[:axis] + rest + shape[axis + 1:]
        return self.step(op, (x, ids), [Entry(out, "f", self.entry(x).positive)],
                         **({} if op == "embedding_lookup" else
                            {"axis": axis - (len(shape) if self.rng.random() < 0.2 else 0),
                             "batch_dims": b}))

    _embedding_lookup = _gather

    def _gather_nd(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        shape = self.entry(x).shape
        depth = int(self.rng.integers(1, len(shape) + 1))
        lead = tuple(int(d) for d in self.rng.integers(1, 4, size=int(self.rng.integers(1, 3))))
        i = self.leaf((*lead, depth), "i")
        self.p.leaves[-1].value = np.stack(
            [self.rng.integers(0, shape[k], size=lead) for k in range(depth)],
            axis=-1).astype(np.int32)
        return self.step(op, (x, i), [Entry(lead + shape[depth:], "f", self.entry(x).positive)])

    def _argmax(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        shape = self.entry(x).shape
        axis = self.axis(len(shape))
        out = shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
        return self.step(op, (x,), [Entry(out, "i")], axis=axis,
                         which=str(self.rng.choice(["argmax", "argmin"])))

    def _reshape(self, op: str) -> Step | None:
        x = self.operand()
        e = self.entry(x)
        size = int(np.prod(e.shape))
        dims, left = [], size
        for _ in range(int(self.rng.integers(0, 4))):
            d = int(self.rng.choice([f for f in range(1, left + 1) if left % f == 0]))
            dims.append(d)
            left //= d
        dims.append(left)
        shape = [int(d) for d in self.rng.permutation(dims)]
        out = tuple(shape)
        if len(shape) > 1 and self.rng.random() < 0.3:
            shape[int(self.rng.integers(0, len(shape)))] = -1
        return self.step(op, (x,), [Entry(out, "f", e.positive)], shape=shape)

    def _transpose(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 2)
        e = self.entry(x)
        perm = None if self.rng.random() < 0.3 else [int(p) for p in
                                                     self.rng.permutation(len(e.shape))]
        out = tuple(e.shape[::-1]) if perm is None else tuple(e.shape[p] for p in perm)
        return self.step(op, (x,), [Entry(out, "f", e.positive)], perm=perm)

    def _broadcast_to(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) < 3)
        e = self.entry(x)
        shape = [int(self.rng.integers(1, 4)) if d == 1 else d for d in e.shape]
        if self.rng.random() < 0.6:
            shape.insert(0, int(self.rng.integers(1, 4)))
        return self.step(op, (x,), [Entry(tuple(shape), "f", e.positive)], shape=shape)

    def _concat(self, op: str) -> Step | None:
        a = self.operand(ok=lambda e: len(e.shape) >= 1)
        shape = self.entry(a).shape
        axis = self.axis(len(shape))
        other = list(shape)
        other[axis] = int(self.rng.integers(1, 4))
        b = self.operand(shape=tuple(other))
        out = list(shape)
        out[axis] = shape[axis] + other[axis]
        return self.step(op, (a, b), [Entry(tuple(out))], axis=axis)

    def _stack(self, op: str) -> Step | None:
        a = self.operand()
        shape = self.entry(a).shape
        more = [self.operand(shape=shape) for _ in range(int(self.rng.integers(1, 3)))]
        axis = self.axis(len(shape) + 1)
        out = list(shape)
        out.insert(axis % (len(shape) + 1), 1 + len(more))
        return self.step(op, (a, *more), [Entry(tuple(out))], axis=axis)

    def _split(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: any(d >= 2 for d in e.shape))
        shape = self.entry(x).shape
        axis = int(self.rng.choice([i for i, d in enumerate(shape) if d >= 2]))
        n = shape[axis]
        if self.rng.random() < 0.5:
            parts = [int(p) for p in range(2, n + 1) if n % p == 0]
            splits: Any = int(self.rng.choice(parts))
            sizes = [n // splits] * splits
        else:
            cut = int(self.rng.integers(1, n))
            sizes = splits = [cut, n - cut]
        outs = []
        for s in sizes:
            o = list(shape)
            o[axis] = s
            outs.append(Entry(tuple(o)))
        return self.step(op, (x,), outs, splits=splits, axis=axis)

    def _unstack(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        shape = self.entry(x).shape
        axis = self.axis(len(shape))
        out = shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
        return self.step(op, (x,), [Entry(out)] * shape[axis], axis=axis)

    def _slice(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        e = self.entry(x)
        spec: list = []
        for d in e.shape:
            roll = self.rng.random()
            if roll < 0.25:
                spec.append(int(self.rng.integers(-d, d)))
            elif roll < 0.5:
                spec.append([None, None, None])
            else:
                start = int(self.rng.integers(0, d))
                step = int(self.rng.choice([1, 1, 2, -1]))
                spec.append([start, None, step] if step > 0 else [None, start, step])
        if self.rng.random() < 0.2:
            spec.insert(int(self.rng.integers(0, len(spec) + 1)), "newaxis")
        out = np.zeros(e.shape)[_index(spec)].shape
        if 0 in out:
            return None
        return self.step(op, (x,), [Entry(out, "f", e.positive)], index=spec)

    def _cast(self, op: str) -> Step | None:
        frm = str(self.rng.choice(["f", "f", "i", "g"]))
        if frm != "f" and self.pick(lambda e: e.kind == frm) is None:
            frm = "f"
        x = self.operand(kind=frm)
        to = {"f": str(self.rng.choice(["i", "g", "f"])), "i": "f", "g": "f"}[frm]
        return self.step(op, (x,), [Entry(self.entry(x).shape, to)], to=to)

    def _softmax(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 1)
        shape = self.entry(x).shape
        return self.step(op, (x,), [Entry(shape, "f", op == "softmax")],
                         axis=self.axis(len(shape)))

    _log_softmax = _softmax

    def _sigmoid_xent(self, op: str) -> Step | None:
        logits = self.operand(ok=lambda e: op == "sigmoid_xent" or len(e.shape) >= 1)
        shape = self.entry(logits).shape
        if op == "sigmoid_xent":
            labels = self.operand(shape=shape, positive=True)
        else:  # a distribution per row (edges.py has rows that are not: a deliberate difference)
            labels = self.leaf(shape, positive=True)
            value = self.p.leaves[-1].value
            self.p.leaves[-1].value = (value / value.sum(axis=-1, keepdims=True)).astype(
                value.dtype)
        out = shape if op == "sigmoid_xent" else shape[:-1]
        return self.step(op, (labels, logits), [Entry(out)])

    _softmax_xent = _sigmoid_xent

    def _where(self, op: str) -> Step | None:
        cond = self.pick(lambda e: e.kind == "b")
        if cond is None:
            return self._elementwise("greater")
        shape = self.entry(cond).shape
        a, b = self.partner(shape), self.partner(shape)
        out = np.broadcast_shapes(shape, self.entry(a).shape, self.entry(b).shape)
        return self.step(op, (cond, a, b), [Entry(out)])

    def _bias_add(self, op: str) -> Step | None:
        x = self.operand(ok=lambda e: len(e.shape) >= 2)
        shape = self.entry(x).shape
        return self.step(op, (x, self.operand(shape=shape[-1:])), [Entry(shape)])

    def _image(self, rank: int) -> int:
        def fits(e: Entry) -> bool:
            return len(e.shape) == rank and all(d >= 3 for d in e.shape[1:-1])
        found = self.pick(lambda e: e.kind == "f" and fits(e)) if self.rng.random() < 0.5 else None
        if found is not None:
            return found
        spatial = [int(d) for d in self.rng.integers(3, 7, size=rank - 2)]
        return self.leaf((int(self.rng.integers(1, 3)), *spatial, int(self.rng.integers(1, 3))))

    def _conv2d(self, op: str) -> Step | None:
        x = self._image(4)
        n, h, w, c = self.entry(x).shape
        kh, kw = int(self.rng.integers(1, min(h, 3) + 1)), int(self.rng.integers(1, min(w, 3) + 1))
        k = self.leaf((kh, kw, c, int(self.rng.integers(1, 3))))
        padding = str(self.rng.choice(["SAME", "VALID"]))
        strides = int(self.rng.choice([1, 2]))
        dilations = 1  # (dilated: edges.py, where TensorFlow's CPU kernels compute them)
        ekh, ekw = (kh - 1) * dilations + 1, (kw - 1) * dilations + 1
        if padding == "VALID" and (ekh > h or ekw > w):
            padding = "SAME"
        oh, ow = ((-(-h // strides), -(-w // strides)) if padding == "SAME" else
                  ((h - ekh) // strides + 1, (w - ekw) // strides + 1))
        return self.step(op, (x, k), [Entry((n, oh, ow, self.entry(k).shape[-1]))],
                         strides=strides, padding=padding, dilations=dilations)

    def _conv1d(self, op: str) -> Step | None:
        x = self._image(3)
        n, w, c = self.entry(x).shape
        kw = int(self.rng.integers(1, min(w, 3) + 1))
        k = self.leaf((kw, c, int(self.rng.integers(1, 3))))
        padding = str(self.rng.choice(["SAME", "VALID"]))
        stride = int(self.rng.choice([1, 2]))
        ow = -(-w // stride) if padding == "SAME" else (w - kw) // stride + 1
        return self.step(op, (x, k), [Entry((n, ow, self.entry(k).shape[-1]))],
                         stride=stride, padding=padding)

    def _max_pool2d(self, op: str) -> Step | None:
        x = self._image(4)
        n, h, w, c = self.entry(x).shape
        ksize = int(self.rng.integers(1, min(h, w, 3) + 1))
        strides = int(self.rng.choice([1, 2]))
        padding = str(self.rng.choice(["SAME", "VALID"]))
        oh, ow = ((-(-h // strides), -(-w // strides)) if padding == "SAME" else
                  ((h - ksize) // strides + 1, (w - ksize) // strides + 1))
        return self.step(op, (x,), [Entry((n, oh, ow, c))], ksize=ksize, strides=strides,
                         padding=padding)

    _avg_pool2d = _max_pool2d

    def _ones(self, op: str) -> Step | None:
        shape = self.shape()
        return self.step(op, (), [Entry(shape, "f", op == "ones")], shape=list(shape))

    _zeros = _ones


#: how often each op is picked, relative to the others
_WEIGHT = {"conv2d": 0.5, "conv1d": 0.3, "max_pool2d": 0.4, "avg_pool2d": 0.4, "ones": 0.4,
           "zeros": 0.4, "gelu_tanh": 0.5, "embedding_lookup": 0.5, "gather_nd": 0.5,
           "is_finite": 0.3, "argmax": 0.5, "one_hot": 0.5,
           "recompute": 0.4, "custom_square": 0.5, "custom_product": 0.5}


def program(seed: int, k: int) -> Program:
    """Program ``k`` of the run seeded ``seed``: the same every time."""
    rng = np.random.default_rng([seed, k])
    mode = "gradients" if k % 2 == 0 else "tape"
    dtype = np.dtype(np.float32 if rng.random() < 0.6 else np.float64)
    prog = Program((seed, k), mode, dtype)
    maker = _Maker(rng, prog)
    names = sorted(OPS)
    weights = np.array([_WEIGHT.get(n, 1.0) for n in names])
    for _ in range(int(rng.integers(2, 9))):
        for _attempt in range(5):
            if maker.make(str(rng.choice(names, p=weights / weights.sum()))) is not None:
                break
    prog.query = (_gradients_query if mode == "gradients" else _tape_query)(rng, prog)
    if any(s.op in ("recompute", "softmax_xent") for s in prog.steps):
        # TensorFlow's recompute_grad has no second order ("tried to transpose grad"), and
        # its softmax_cross_entropy_with_logits none with respect to the labels (edges.py)
        prog.query["second"] = prog.query["nested"] = False
    return prog


def _float(prog: Program, i: int) -> bool:
    return prog.entries[i].kind in ("f", "g")


def _some(rng: np.random.Generator, items: list[int], most: int) -> list[int]:
    n = int(rng.integers(1, min(most, len(items)) + 1))
    weights = np.arange(1, len(items) + 1, dtype=float)
    return [items[int(j)] for j in rng.choice(len(items), size=n, replace=False,
                                                p=weights / weights.sum())]


def _seed_for(rng: np.random.Generator, prog: Program, i: int) -> np.ndarray:
    e = prog.entries[i]
    dtype = prog.dtype if e.kind == "f" else np.dtype(np.float64 if prog.dtype == np.float32
                                                       else np.float32)
    return rng.standard_normal(e.shape).astype(dtype)


def _gradients_query(rng: np.random.Generator, prog: Program) -> dict[str, Any]:
    every = list(range(len(prog.entries)))
    floats = [i for i in every if _float(prog, i)]
    ys = _some(rng, floats, 3)
    xs = _some(rng, [i for i in every if prog.entries[i].kind != "b"], 4)
    grad_ys = None
    if rng.random() < 0.4:
        grad_ys = [None if rng.random() < 0.3 else _seed_for(rng, prog, y) for y in ys]
    stop = _some(rng, floats, 3) if rng.random() < 0.3 else None
    return {"ys": ys, "xs": xs, "grad_ys": grad_ys, "stop": stop,
            "unconnected": str(rng.choice(["none", "zero"])), "second": bool(rng.random() < 0.4)}


def _structure(rng: np.random.Generator, items: list[int]) -> Any:
    """``items`` as a tensor, a list, a tuple or a dict (nested sometimes)."""
    if len(items) == 1 and rng.random() < 0.5:
        return items[0]
    how = rng.random()
    if how < 0.4:
        return list(items)
    if how < 0.6:
        return tuple(items)
    if how < 0.85 or len(items) < 2:
        return {f"k{j}": i for j, i in enumerate(items)}
    return {"first": items[0], "rest": [tuple(items[1:])]}


def _tape_query(rng: np.random.Generator, prog: Program) -> dict[str, Any]:
    n = len(prog.steps)
    pre = int(rng.integers(0, n + 1)) if rng.random() < 0.25 else 0
    post = int(rng.integers(0, n - pre + 1)) if rng.random() < 0.2 else 0
    every = list(range(len(prog.entries)))
    made_at = {i: 0 for i in every}  # which step makes each tensor (leaves: before all)
    for s_i, s in enumerate(prog.steps):
        for o in s.outputs:
            made_at[o] = s_i + 1
    watch: list[tuple[int, int]] = []  # (before step, tensor)
    for i in every:
        if prog.entries[i].kind != "b" and rng.random() < (0.5 if made_at[i] == 0 else 0.08):
            at = pre if rng.random() < 0.85 else int(rng.integers(pre, n - post + 1))
            watch.append((max(at, made_at[i]), i))
    inside = list(range(pre, n - post))
    stop_recording = None
    if inside and rng.random() < 0.15:
        a = int(rng.choice(inside))
        stop_recording = (a, int(rng.integers(a + 1, n - post + 1)))
    reset = int(rng.choice(inside)) if inside and rng.random() < 0.1 else None
    persistent = bool(rng.random() < 0.6)
    nested = bool(rng.random() < 0.2)
    floats = [i for i in every if _float(prog, i)]
    calls = []
    for _ in range(1 if nested else int(rng.integers(1, 3))):
        kind = str(rng.choice(["gradient", "gradient", "gradient", "jacobian", "batch_jacobian"]))
        sources = _some(rng, [i for i in every if prog.entries[i].kind != "b"], 3)
        call: dict[str, Any] = {"kind": kind, "unconnected": str(rng.choice(["none", "zero"]))}
        small = [i for i in floats if int(np.prod(prog.entries[i].shape)) <= 12]
        if kind == "batch_jacobian":
            pairs = [(t, s) for t in floats for s in every if prog.entries[s].kind != "b"
                     and len(prog.entries[t].shape) >= 2 and len(prog.entries[s].shape) >= 2
                     and prog.entries[t].shape[0] == prog.entries[s].shape[0]
                     and int(np.prod(prog.entries[t].shape[1:])) <= 12]
            if pairs:
                call["target"], call["sources"] = pairs[int(rng.integers(0, len(pairs)))]
                calls.append(call)
                continue
            kind = call["kind"] = "jacobian"
        if kind == "jacobian" and small:
            call["target"] = small[int(rng.integers(0, len(small)))]
            call["sources"] = _structure(rng, sources)
            calls.append(call)
            continue
        call["kind"] = "gradient"
        targets = _some(rng, floats, 2)
        if rng.random() < 0.15:
            sources.append(targets[0])  # a source that is its own target
        call["target"] = _structure(rng, targets)
        call["sources"] = _structure(rng, sources)
        if rng.random() < 0.3:
            # (never a None among them: for a target that is also a source, TensorFlow 2.21
            # aborts the whole process on a failed check in pywrap_tfe_src.cc)
            seeds = [_seed_for(rng, prog, t) for t in targets]
            call["output_gradients"] = seeds[0] if isinstance(call["target"], int) else seeds
        calls.append(call)
    return {"pre": pre, "post": post, "watch": watch, "stop_recording": stop_recording,
            "reset": reset, "persistent": persistent, "watch_accessed": bool(rng.random() < 0.85),
            "nested": nested, "calls": calls}


# ---------------------------------------------------------------- running a program


def _make_leaf(lib: Any, leaf: Leaf) -> Any:
    if leaf.kind == "var":
        return lib.Variable(leaf.value)
    if leaf.kind == "frozen":
        return lib.Variable(leaf.value, trainable=False)
    return lib.constant(leaf.value)


def _run_step(lib: Any, prog: Program, step: Step, pool: dict[int, Any]) -> None:
    out = OPS[step.op](lib, [pool[i] for i in step.inputs], step.attrs, prog.dtype)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    for i, t in zip(step.outputs, outs):
        pool[i] = t


def _built(spec: Any, pool: dict[int, Any]) -> Any:
    if isinstance(spec, dict):
        return {k: _built(v, pool) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return type(spec)(_built(v, pool) for v in spec)
    return pool[spec]


def _flat(result: Any, path: str = "") -> list[tuple[str, Any]]:
    """A result structure's tensors with their paths: ``[0]`` a list's, ``(0)`` a tuple's,
    ``{k}`` a dict's (so a different structure is a different label)."""
    if isinstance(result, dict):
        return [p for k in sorted(result) for p in _flat(result[k], f"{path}{{{k}}}")]
    if isinstance(result, list):
        return [p for j, v in enumerate(result) for p in _flat(v, f"{path}[{j}]")]
    if isinstance(result, tuple):
        return [p for j, v in enumerate(result) for p in _flat(v, f"{path}({j})")]
    return [(path, result)]


def _sum_of_squares(lib: Any, grads: list[Any]) -> Any:
    """Σ g² over the float gradients (None when there are none)."""
    grads = [dense(lib, g) for g in grads]
    parts = [lib.reduce_sum(g * g) for g in grads
             if g is not None and g.dtype.is_floating]
    if not parts:
        return None
    dtype = parts[0].dtype
    return lib.add_n([lib.cast(p, dtype) for p in parts])


def _run_gradients(lib: Any, prog: Program, rec: Recording, pool: dict[int, Any]) -> None:
    q = prog.query
    for step in prog.steps:
        _run_step(lib, prog, step, pool)
    for i in sorted(pool):
        rec.add(f"t{i}", pool[i])
    xs = [pool[i] for i in q["xs"]]
    grad_ys = None if q["grad_ys"] is None else [
        None if g is None else lib.constant(g) for g in q["grad_ys"]]
    stop = None if q["stop"] is None else [pool[i] for i in q["stop"]]
    grads = lib.gradients([pool[i] for i in q["ys"]], xs, grad_ys=grad_ys,
                          stop_gradients=stop, unconnected_gradients=q["unconnected"])
    for j, g in enumerate(grads):
        rec.add(f"d/dxs[{j}]", g)
    if q["second"] and (h := _sum_of_squares(lib, grads)) is not None:
        for j, g in enumerate(lib.gradients(h, xs, unconnected_gradients=q["unconnected"])):
            rec.add(f"d2/dxs[{j}]", g)


def _call(tape: Any, call: dict[str, Any], pool: dict[int, Any], lib: Any) -> Any:
    target, sources = _built(call["target"], pool), _built(call["sources"], pool)
    if call["kind"] == "gradient":
        seeds = call.get("output_gradients")
        if seeds is not None:
            seeds = (lib.constant(seeds) if isinstance(seeds, np.ndarray) else
                     [None if s is None else lib.constant(s) for s in seeds])
        return tape.gradient(target, sources, output_gradients=seeds,
                             unconnected_gradients=call["unconnected"])
    return getattr(tape, call["kind"])(target, sources,
                                       unconnected_gradients=call["unconnected"])


def _run_tape(lib: Any, prog: Program, rec: Recording, pool: dict[int, Any]) -> None:
    q = prog.query
    steps, n = prog.steps, len(prog.steps)
    for step in steps[:q["pre"]]:
        _run_step(lib, prog, step, pool)
    watch_at: dict[int, list[int]] = {}
    for at, i in q["watch"]:
        watch_at.setdefault(at, []).append(i)
    outer = lib.GradientTape(persistent=True) if q["nested"] else contextlib.nullcontext()
    with outer:
        if q["nested"]:
            outer.watch([pool[i] for at, i in q["watch"] if at == q["pre"] and i in pool])
        tape = lib.GradientTape(persistent=q["persistent"],
                                watch_accessed_variables=q["watch_accessed"])
        with tape:
            for s in range(q["pre"], n - q["post"]):
                if s == q["reset"]:
                    tape.reset()
                for i in watch_at.get(s, []):
                    tape.watch(pool[i])
                stopped = q["stop_recording"] is not None and \
                    q["stop_recording"][0] <= s < q["stop_recording"][1]
                with tape.stop_recording() if stopped else contextlib.nullcontext():
                    _run_step(lib, prog, steps[s], pool)
            for i in watch_at.get(n - q["post"], []):
                tape.watch(pool[i])
        for step in steps[n - q["post"]:]:
            _run_step(lib, prog, step, pool)
        for i in sorted(pool):
            rec.add(f"t{i}", pool[i])
        first = None
        for c, call in enumerate(q["calls"]):
            result = _call(tape, call, pool, lib)
            first = result if first is None else first
            for path, g in _flat(result):
                rec.add(f"{call['kind']}#{c}{path}", g)
    if q["nested"] and (h := _sum_of_squares(lib, [g for _, g in _flat(first)])) is not None:
        sources = _built(q["calls"][0]["sources"], pool)
        for path, g in _flat(outer.gradient(h, sources)):
            rec.add(f"second order{path}", g)


def tolerance_floor(prog: Program) -> float:
    """The least tolerance for ``prog``'s results: float32's if float32 is anywhere in it."""
    if prog.dtype == np.float32 or any(e.kind == "g" for e in prog.entries):
        return TOLERANCE[np.dtype(np.float32)]
    return 0.0


def run(lib: Any, prog: Program) -> list[tuple[str, Result]]:
    """Run ``prog`` in ``lib`` (tf or gv): its labelled results, ending with the exception
    that stopped it, if one did."""
    runner = Runner(lib, graph=prog.mode == "gradients")
    rec = Recording(runner)
    with runner.building():
        pool = {leaf.index: _make_leaf(lib, leaf) for leaf in prog.leaves}
        try:
            (_run_gradients if prog.mode == "gradients" else _run_tape)(lib, prog, rec, pool)
        except Exception as e:  # noqa: BLE001 - compared with the other library's
            return rec.results(e)
    return rec.results()


# ---------------------------------------------------------------- describing a program


def describe(prog: Program) -> str:
    """The program as lines a reader can follow (and rewrite by hand to debug)."""
    lines = [f"program {prog.seed[1]} of seed {prog.seed[0]}: {prog.mode}, {prog.dtype}"]
    for leaf in prog.leaves:
        what = {"const": "constant", "var": "Variable",
                "frozen": "Variable(trainable=False)"}[leaf.kind]
        value = np.array2string(leaf.value, precision=4, separator=", ").replace("\n", "")
        lines.append(f"  t{leaf.index} = {what}({value})")
    for k, s in enumerate(prog.steps):
        outs = ", ".join(f"t{o}" for o in s.outputs)
        args = ", ".join(f"t{i}" for i in s.inputs)
        attrs = ", ".join(f"{a}={v!r}" for a, v in s.attrs.items())
        lines.append(f"  [step {k}] {outs} = {s.op}({args}{', ' if attrs and args else ''}{attrs})")
    for key, value in prog.query.items():
        lines.append(f"  {key}: {value!r}".replace("\n", ""))
    return "\n".join(lines)
