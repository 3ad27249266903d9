"""Your own gradients: ``custom_gradient``, new ops, and checking them numerically.

>>> import gradviz as gv
>>> cube = gv.define_op("DocCubed", lambda x: x ** 3)
>>> @gv.RegisterGradient("DocCubed")
... def _cubed_grad(op, grad):
...     (x,) = op.inputs
...     return grad * 3.0 * gv.square(x)
>>> gv.check_gradients(cube, [[0.5, -1.0, 2.0]]).passed
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import dtypes
from .backprop import gradients
from .gradient_rules import RegisterGradient
from .graph import MAX_NAME, Operation, Tensor, _safe_cast, _short, constant, make_op, read_only
from .ops import _as_tensor

__all__ = ["custom_gradient", "define_op", "check_gradients", "GradientCheck"]

CUSTOM_GRADIENT = "CustomGradient"


def custom_gradient(f: Callable) -> Callable:
    """Decorate ``f(*xs) -> (y, grad_fn)`` so that ``grad_fn(dy)`` is y's backward.

    ``grad_fn`` returns one gradient per tensor argument of ``f`` (a single
    tensor when there is one).  The forward ops inside ``f`` still run, but the
    gradient goes only through ``grad_fn``.

    >>> import gradviz as gv
    >>> @gv.custom_gradient
    ... def clip_grad_identity(x):
    ...     def grad_fn(dy):
    ...         return gv.minimum(gv.maximum(dy, -1.0), 1.0)   # clip the gradient
    ...     return gv.identity(x), grad_fn
    >>> x = gv.constant([1.0, 2.0])
    >>> gv.gradients(clip_grad_identity(x) * 5.0, x)[0].numpy().tolist()
    [1.0, 1.0]
    """
    name = getattr(f, "__name__", "custom")

    def wrapper(*args: Any) -> Tensor:
        xs = tuple(_as_tensor(a, CUSTOM_GRADIENT, f"argument {i}") for i, a in enumerate(args))
        result = f(*xs)
        if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
            raise TypeError(f"custom_gradient: {name} must return (y, grad_fn), got "
                            f"{type(result).__name__}")
        y, grad_fn = result
        y = _as_tensor(y, CUSTOM_GRADIENT, "y")
        # the op carries the user's grad_fn, as TensorFlow's tape does: it is the
        # one rule that cannot live in the table, because the user wrote it inline
        return make_op(CUSTOM_GRADIENT, xs, y._value, {"fn": name, "grad_fn": grad_fn}, name)

    wrapper.__name__ = name
    wrapper.__doc__ = f.__doc__
    return wrapper


@RegisterGradient(CUSTOM_GRADIENT)
def _custom_gradient_grad(op: Operation, grad: Tensor) -> tuple:
    result = op.get_attr("grad_fn")(grad)
    # one gradient per argument as a list or tuple; anything else (a tensor, an
    # array: never iterated into per-element "gradients") is the one argument's
    return tuple(result) if isinstance(result, (list, tuple)) else (result,)


def define_op(op_type: str, forward: Callable[..., Any], *,
              gradient: Callable | None = None) -> Callable[..., Tensor]:
    """A new op: ``forward`` maps NumPy arrays to a NumPy array.

    Returns a wrapper ``op(*inputs, name=None)``.  Register its gradient with
    ``@gv.RegisterGradient(op_type)`` (or pass ``gradient=``); until then,
    differentiating through it raises ``NotImplementedError`` naming the type.
    """
    if not isinstance(op_type, str) or not op_type.isidentifier() or len(op_type) > MAX_NAME:
        raise ValueError(f"define_op: op_type must be a name like 'Cube' (at most {MAX_NAME} "
                         f"characters), got {_short(op_type)}")
    if gradient is not None:
        RegisterGradient(op_type)(gradient)

    def op(*inputs: Any, name: str | None = None) -> Tensor:
        ts = tuple(_as_tensor(x, op_type, f"input {i}") for i, x in enumerate(inputs))
        try:  # (read-only: a forward that writes to its inputs would change the tensors)
            value = np.asarray(forward(*(read_only(t._value) for t in ts)))
        except Exception as e:
            e.add_note(f"(in the forward function of the {op_type} op)")
            raise
        if value.dtype.kind not in "biuf":
            raise TypeError(f"{op_type}: forward returned dtype {value.dtype}, not numbers")
        if ts and value.dtype != ts[0]._dtype and value.dtype.kind == ts[0]._dtype.kind:
            value = _safe_cast(value, ts[0]._dtype, value, f"{op_type}: forward's result")
        elif not any(np.may_share_memory(value, t._value) for t in ts):
            value = value.copy()  # an array the function may keep and change later
        return make_op(op_type, ts, value, None, name or op_type)  # (named now: see make_op)

    op.__name__ = op_type.lower()
    op.__doc__ = f"The {op_type} op (defined with gv.define_op)."
    return op


@dataclass(frozen=True)
class GradientCheck:
    """Analytic gradients against central differences, per x."""

    max_errors: tuple[float, ...]  # largest |analytic - numeric| per x
    max_relative: tuple[float, ...]  # the same divided by max(1, |numeric|)
    tolerance: float  # the relative error a pass allows
    analytic: tuple[np.ndarray, ...]  # the engine's gradients
    numeric: tuple[np.ndarray, ...]  # the finite-difference estimates

    @property
    def passed(self) -> bool:
        """True when every x is within the tolerance."""
        return all(e <= self.tolerance for e in self.max_relative)

    def __repr__(self) -> str:
        rows = ", ".join(f"x{i}: {e:.2e}" for i, e in enumerate(self.max_errors))
        return f"<GradientCheck {'passed' if self.passed else 'FAILED'}: largest error {rows}>"


def check_gradients(f: Callable[..., Any], xs: Sequence[Any], *, delta: float = 1e-6,
                    tolerance: float = 1e-5, seed: int = 0) -> GradientCheck:
    """Compare the engine's gradients of ``f`` at ``xs`` with central differences.

    Everything is computed in float64.  ``f`` takes one tensor per x and
    returns a tensor; a non-scalar result is projected on a fixed random
    vector ``v`` (so the check covers the whole Jacobian: ``d(v·f)/dx``).
    """
    if not isinstance(xs, (list, tuple)) or not xs:
        raise ValueError("check_gradients: xs must be a non-empty list of points (one per "
                         "argument of f)")
    points = [np.array(x.numpy() if isinstance(x, Tensor) else x, dtype=np.float64)
              for x in xs]
    tensors = [constant(p) for p in points]
    y = f(*tensors)
    if not isinstance(y, Tensor):
        raise TypeError(f"check_gradients: f must return a tensor, got {type(y).__name__}")
    if y.dtype != dtypes.float64:
        raise TypeError(f"check_gradients: f returned dtype {y.dtype.name}; with float64 inputs "
                        "it must compute in float64 (avoid float32 constants inside f)")
    v = np.random.default_rng(seed).standard_normal(y.shape)
    analytic = gradients(y, tensors, grad_ys=constant(v), unconnected_gradients="zero")

    def projected(args: list[np.ndarray]) -> float:
        return float(np.sum(v * f(*[constant(a) for a in args]).numpy()))

    numeric = []
    for i, p in enumerate(points):
        est = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            plus = [q.copy() for q in points]
            minus = [q.copy() for q in points]
            plus[i][idx] += delta
            minus[i][idx] -= delta
            est[idx] = (projected(plus) - projected(minus)) / (2 * delta)
        numeric.append(est)
    errors, relative = [], []
    for a, n in zip(analytic, numeric):
        diff = np.abs(a.numpy() - n)
        errors.append(float(diff.max()) if diff.size else 0.0)
        relative.append(float((diff / np.maximum(1.0, np.abs(n))).max()) if diff.size else 0.0)
    return GradientCheck(tuple(errors), tuple(relative), tolerance,
                         tuple(a.numpy() for a in analytic), tuple(numeric))
