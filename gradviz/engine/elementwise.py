"""Elementwise ops declared in one table, each in one entry.

An :class:`Elementwise` entry gives all that an elementwise op is:

- its TensorFlow op type and public name, and the parameters TensorFlow gives it;
- its value, a NumPy function of the input arrays;
- its gradient for each input, a function ``(grad, *inputs, output) -> tensor``
  built of gradviz ops (so it can be differentiated again), or None where the
  input gets no gradient (as a VJP per argument, the way autograd declares
  them); a gradient may keep the broadcast shape, which the engine sums back;
  what two inputs' gradients share (``atan2``'s ``grad / (x**2 + y**2)``) is
  ``common``, made once, as TensorFlow's rule makes it;
- how its rule reads: the idea, completing "it ...", and a formula per input
  that runs as NumPy (the words of :mod:`gradviz.views.explain.rules`).

From the table come the public functions (here, in ``gv.math`` and, where
TensorFlow has them at the top, in ``gv``), their op types (``OpType``), their
gradient rules (:mod:`gradviz.engine.gradient_rules`), their place among forward
mode's diagonal ops (:mod:`gradviz.engine.jvp_rules`) and their words.  Adding
the next elementwise op is one entry.  Ops whose value or gradient needs more
than an elementwise function keep their own code in ``ops.py`` and
``math_ops.py``.

Each gradient is the one TensorFlow 2.21 computes, checked by ``make
crosscheck``: ``xlogy``'s partial derivatives are taken as 0 where x is 0, so
``xlogy(0, 0)`` is 0 with a gradient of 0; ``floor``, ``ceil``, ``round`` and
``floordiv`` give no gradient (None, not zeros).

>>> import gradviz as gv
>>> x = gv.constant([0.0, 1.0])
>>> gv.math.xlogy(x, gv.constant([0.0, 2.0])).numpy().tolist()
[0.0, 0.6931471824645996]
>>> gv.gradients(gv.math.log1p(x), x)[0].numpy().tolist()
[1.0, 0.5]
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import graph as _graph
from .graph import Tensor, constant
from .ops import (ANY, FLOAT, NUMBER, OpType, _binary, _check_kind, _pair, _quiet,
                  _refuse_bools, _unary, cast, exp, negative, square)

__all__ = ["Elementwise", "TABLE"]

Grad = Callable[..., Tensor]


@dataclass(frozen=True)
class Elementwise:
    """One elementwise op: its value, its gradient per input, and its words."""

    op_type: str  # TensorFlow's op type ("Log1p")
    name: str  # the public function ("log1p")
    value: Callable[..., np.ndarray]  # NumPy arrays in, the output array out
    grads: tuple[Grad | None, ...]  # per input: (grad, *inputs, output) -> its gradient
    idea: str  # the rule in words, completing "it ...", with {role} and {role:use}
    formulas: tuple[str | None, ...]  # per input: its gradient as a NumPy formula
    doc: str
    kinds: str = FLOAT  # the dtype kinds it accepts (NumPy's letters), as TensorFlow's kernel
    args: tuple[str, ...] = ()  # its parameters, TensorFlow's names: ("x",) or ("x", "y")
    top: bool = False  # also at the top, gv.<name>, as TensorFlow has tf.<name>
    comparison: bool = False  # a bool output: declared not differentiable, as TensorFlow's
    #: what the inputs' gradients share, made once: (grad, *inputs, output) -> tensor, which
    #: each function of ``grads`` then takes in the upstream gradient's place
    common: Grad | None = None

    @property
    def roles(self) -> tuple[str, ...]:
        """The words the idea and formulas use for the inputs."""
        return ("x",) if len(self.grads) == 1 else ("a", "b")

    @property
    def constant(self) -> str:
        """Its name among ``OpType``'s: ``LOG1P``."""
        return self.name.upper()


# ---------------------------------------------------------------- values


def _zero_where_zero(fn: Callable[..., np.ndarray], arg: int = 0
                     ) -> Callable[..., np.ndarray]:
    """``fn(x, y)``, but 0 where operand ``arg`` is 0 (even where fn is NaN or infinite)."""
    def value(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = fn(x, y)
        return np.where((x, y)[arg] == 0, out.dtype.type(0), out)
    return value


def _integer_checked(fn: Callable[..., np.ndarray], op_type: str) -> Callable[..., np.ndarray]:
    """``fn``, refusing an integer division by zero, as TensorFlow's kernel does (a float
    one gives inf or NaN)."""
    def value(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if x.dtype.kind in "iu" and not np.all(y):
            raise ZeroDivisionError(f"{op_type}: integer division by zero (the divisor holds "
                                    "a 0; cast both to a float dtype to get inf or NaN there)")
        with np.errstate(all="ignore"):
            return fn(x, y)
    return value


def _floor_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # floats as TensorFlow's kernel, floor(x / y) (NumPy's // rounds 7.0 // 0.1 to 69.0)
    return np.floor_divide(x, y) if x.dtype.kind in "iu" else np.floor(x / y)


# ---------------------------------------------------------------- the table


def _not_zero(x: Tensor) -> Tensor:
    """1 where x is not 0, else 0, in x's dtype (TensorFlow's ``not_zero_x``)."""
    return cast(not_equal(x, 0), x.dtype)


_ERF = np.vectorize(math.erf, otypes=[np.float64])
_ERFC = np.vectorize(math.erfc, otypes=[np.float64])
_TWO_OVER_SQRT_PI = 1.1283791670955126

TABLE: tuple[Elementwise, ...] = (
    # the ops of a transformer block
    Elementwise(
        "Sin", "sin", np.sin, (lambda g, x, y: g * cos(x),),
        "uses d(sin {x})/d{x} = cos({x})", ("grad * cos(x)",),
        "Sine, elementwise.", top=True),
    Elementwise(
        "Cos", "cos", np.cos, (lambda g, x, y: -g * sin(x),),
        "uses d(cos {x})/d{x} = -sin({x})", ("-grad * sin(x)",),
        "Cosine, elementwise.", top=True),
    Elementwise(
        "Rsqrt", "rsqrt", _quiet(lambda v: np.reciprocal(np.sqrt(v))),
        (lambda g, x, y: g * -0.5 * y * y * y,),
        "uses d({x}**-0.5)/d{x} = -0.5 * {x}**-1.5, which is -0.5 * {y}**3, {y} being its "
        "output", ("grad * -0.5 * y**3",),
        "``1 / sqrt(x)``, elementwise (a layer norm divides by it)."),
    Elementwise(
        "Erf", "erf", lambda v: _ERF(v).astype(v.dtype),
        (lambda g, x, y: g * _TWO_OVER_SQRT_PI * exp(-square(x)),),
        "uses d(erf {x})/d{x} = 2/sqrt(pi) * exp(-{x}**2), the bell curve erf is the area "
        "under", ("grad * 2 / sqrt(pi) * exp(-x**2)",),
        "The error function, ``2/sqrt(pi)`` times the integral of ``exp(-t**2)`` from 0 to x "
        "(the exact GELU is made of it)."),
    Elementwise(
        "Erfc", "erfc", lambda v: _ERFC(v).astype(v.dtype),
        (lambda g, x, y: g * -_TWO_OVER_SQRT_PI * exp(-square(x)),),
        "uses d(erfc {x})/d{x} = -2/sqrt(pi) * exp(-{x}**2) (erfc is 1 - erf)",
        ("-grad * 2 / sqrt(pi) * exp(-x**2)",),
        "``1 - erf(x)``, without losing the digits ``1 - erf(x)`` loses for large x."),
    Elementwise(
        "SquaredDifference", "squared_difference", lambda a, b: np.square(a - b),
        (lambda c, x, y, z: c, lambda c, x, y, z: negative(c)),
        "uses d(({a} - {b})**2)/d{a:use} = 2 * ({a} - {b}) and its negative for {b:use}",
        ("2 * grad * (a - b)", "-2 * grad * (a - b)"),
        "``(x - y) ** 2``, elementwise, broadcasting as ``x - y`` does.", kinds=NUMBER,
        common=lambda g, x, y, z: 2.0 * g * (x - y)),
    # TensorFlow's everyday vocabulary
    Elementwise(
        "Log1p", "log1p", _quiet(np.log1p),
        (lambda g, x, y: g * reciprocal(1 + x),),
        "uses d(log(1 + {x}))/d{x} = 1 / (1 + {x})", ("grad / (1 + x)",),
        "``log(1 + x)``, elementwise, without losing the digits ``log(1 + x)`` loses for "
        "x near 0."),
    Elementwise(
        "Expm1", "expm1", _quiet(np.expm1),
        (lambda g, x, y: g * exp(x),),
        "uses d(exp({x}) - 1)/d{x} = exp({x})", ("grad * exp(x)",),
        "``exp(x) - 1``, elementwise, without losing the digits ``exp(x) - 1`` loses for "
        "x near 0."),
    Elementwise(
        "Reciprocal", "reciprocal", _quiet(np.reciprocal),
        (lambda g, x, y: -g * y * y,),
        "uses d(1/{x})/d{x} = -1/{x}**2, which is -{y}**2, {y} being its output",
        ("-grad * y * y",),
        "``1 / x``, elementwise (infinite at 0, as a division by 0 is)."),
    Elementwise(
        "Floor", "floor", np.floor, (None,),
        "is flat between whole numbers and jumps at them, so, as in TensorFlow, it passes "
        "no gradient at all (None, not zeros)", (None,),
        "The largest whole number not above x, elementwise (as a float).", top=True),
    Elementwise(
        "Ceil", "ceil", np.ceil, (None,),
        "is flat between whole numbers and jumps at them, so, as in TensorFlow, it passes "
        "no gradient at all (None, not zeros)", (None,),
        "The smallest whole number not below x, elementwise (as a float)."),
    Elementwise(
        "Round", "round", np.round, (None,),
        "is flat between its jumps, so, as in TensorFlow, it passes no gradient at all "
        "(None, not zeros)", (None,),
        "x rounded to the nearest whole number, elementwise; halves go to the even one "
        "(``round(2.5)`` is 2), as TensorFlow's; integers stay as they are.", kinds=NUMBER,
        top=True),
    Elementwise(
        "Atan2", "atan2", _quiet(np.arctan2),
        (lambda c, y, x, z: x * c, lambda c, y, x, z: negative(y) * c),
        "uses d atan2({a}, {b})/d{a:use} = {b} / ({a}**2 + {b}**2) and, for {b:use}, "
        "-{a} / ({a}**2 + {b}**2)",
        ("b * (grad / (b**2 + a**2))", "-a * (grad / (b**2 + a**2))"),
        "The angle of the point (x, y) from the x axis, in (-pi, pi], elementwise: "
        "``atan(y / x)`` in the right quadrant.", args=("y", "x"), top=True,
        common=lambda g, y, x, z: g / (square(x) + square(y))),
    Elementwise(
        "Xlogy", "xlogy", _zero_where_zero(lambda x, y: x * np.log(y)),
        (lambda g, x, y, z: xlogy(_not_zero(x), y) * g,
         lambda g, x, y, z: xdivy(x, y) * g),
        "uses d({a} log {b})/d{a:use} = log({b}) and, for {b:use}, {a} / {b}, each taken as 0 "
        "where {a} is 0 (so xlogy(0, 0) = 0 has the gradient 0, not NaN)",
        ("where(a == 0, 0, log(b)) * grad", "where(a == 0, 0, a / b) * grad"),
        "``x * log(y)``, elementwise, but 0 where x is 0 (even where y is 0): a cross-entropy "
        "term, whose 0 * log(0) counts as 0."),
    Elementwise(
        "Xlog1py", "xlog1py", _zero_where_zero(lambda x, y: x * np.log1p(y)),
        (lambda g, x, y, z: xlog1py(_not_zero(x), y) * g,
         lambda g, x, y, z: xdivy(x, y + 1) * g),
        "uses d({a} log(1 + {b}))/d{a:use} = log(1 + {b}) and, for {b:use}, {a} / (1 + {b}), "
        "each taken as 0 where {a} is 0",
        ("where(a == 0, 0, log1p(b)) * grad", "where(a == 0, 0, a / (b + 1)) * grad"),
        "``x * log(1 + y)``, elementwise, but 0 where x is 0."),
    Elementwise(
        "Xdivy", "xdivy", _zero_where_zero(lambda x, y: x / y),
        (lambda g, x, y, z: xdivy(_not_zero(x), y) * g,
         lambda g, x, y, z: xdivy(negative(x), y ** 2) * g),
        "uses d({a}/{b})/d{a:use} = 1/{b} and, for {b:use}, -{a}/{b}**2, each taken as 0 "
        "where {a} is 0",
        ("where(a == 0, 0, 1 / b) * grad", "where(a == 0, 0, -a / b**2) * grad"),
        "``x / y``, elementwise, but 0 where x is 0 (even where y is 0)."),
    Elementwise(
        "MulNoNan", "multiply_no_nan", _zero_where_zero(np.multiply, 1),
        (lambda g, x, y, z: multiply_no_nan(g, y),
         lambda g, x, y, z: multiply_no_nan(x, g)),
        "multiplies the upstream gradient by the other input, as Mul's rule does, but each "
        "product is 0 where its second factor is 0 ({b} for {a:use}, the upstream gradient "
        "for {b:use}), even times NaN or inf",
        ("where(b == 0, 0, grad * b)", "where(grad == 0, 0, a * grad)"),
        "``x * y``, elementwise, but 0 where y is 0, even where x is NaN or infinite."),
    Elementwise(
        "FloorDiv", "floordiv", _integer_checked(_floor_divide, "FloorDiv"), (None, None),
        "is flat between its jumps, so, as in TensorFlow, it passes no gradient at all "
        "(None, not zeros)", (None, None),
        "``floor(x / y)``, elementwise (``x // y``); integers stay integers, and an integer "
        "division by 0 is refused.", kinds=NUMBER),
    Elementwise(
        "FloorMod", "floormod", _integer_checked(np.mod, "FloorMod"),
        (lambda g, x, y, z: g,
         lambda g, x, y, z: g * negative(floordiv(x, y))),
        "uses {a} mod {b} = {a} - floor({a}/{b}) * {b}: {a:use} gets the upstream gradient "
        "unchanged, and {b:use} gets it times -floor({a}/{b})",
        ("grad", "grad * -floor(a / b)"),
        "The remainder of ``x // y``, elementwise (``x % y``), with the sign of y, as "
        "Python's; integers stay integers, and an integer division by 0 is refused.",
        kinds=NUMBER),
    Elementwise(
        "NotEqual", "not_equal", np.not_equal, (None, None),
        "is a comparison: its bool output has no gradient", (None, None),
        "``x != y`` elementwise (bool; not differentiable).", kinds=ANY, top=True,
        comparison=True),
)

# ---------------------------------------------------------------- the public functions


def _unary_op(e: Elementwise) -> Callable[..., Tensor]:
    op_type, value, kinds = e.op_type, e.value, e.kinds

    def op(x: Any, name: str | None = None) -> Tensor:
        return _unary(op_type, value, x, name, kinds)
    return op


def _binary_op(e: Elementwise) -> Callable[..., Tensor]:
    op_type, value, kinds, names = e.op_type, e.value, e.kinds, e.args or ("x", "y")
    bools = "b" in kinds

    def op(x: Any, y: Any, name: str | None = None) -> Tensor:
        if kinds == FLOAT:  # say so before anything is made
            _refuse_bools(op_type, x, y)
            x, y = _pair(op_type, x, y, names)
            _check_kind(op_type, x, kinds)
        return _binary(op_type, value, x, y, name, bools)
    if names == ("y", "x"):  # atan2(y, x): TensorFlow's names, as keywords take them
        def op_yx(y: Any, x: Any, name: str | None = None) -> Tensor:
            return op(y, x, name)
        return op_yx
    return op


def _public(e: Elementwise) -> Callable[..., Tensor]:
    fn = (_unary_op if len(e.grads) == 1 else _binary_op)(e)
    fn.__name__ = fn.__qualname__ = e.name
    fn.__doc__ = e.doc
    fn.__module__ = __name__
    return fn


for _e in TABLE:
    setattr(OpType, _e.constant, _e.op_type)
    globals()[_e.name] = _public(_e)
    __all__.append(_e.name)
del _e


def not_equals(x: Tensor, other: Any) -> Any:
    """``x != other`` as TensorFlow 2's operator: None is simply not equal (True), a shape
    that does not broadcast with x's gives a bool tensor True, anything else is
    ``not_equal``."""
    if other is None:
        return True
    shape = other.shape if isinstance(other, Tensor) else np.shape(other)
    try:
        np.broadcast_shapes(x.shape, shape)
    except ValueError:
        return constant(True)
    return not_equal(x, other)


_graph._elementwise = sys.modules[__name__]  # Tensor's operators // % != call this module
