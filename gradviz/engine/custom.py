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

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import dtypes, graph, nest, ops
from . import tape as _tape
from .backprop import _rule_name, gradients
from .gradient_rules import RegisterGradient
from .graph import (MAX_NAME, Operation, Tensor, Variable, _safe_cast, _short, constant,
                    convert_to_tensor, make_multi_op, make_op, plain_name, read_only)
from .ops import _as_tensor

__all__ = ["custom_gradient", "recompute_grad", "grad_pass_through", "define_op",
           "check_gradients", "GradientCheck"]

CUSTOM_GRADIENT = "CustomGradient"


def custom_gradient(f: Callable | None = None) -> Callable:
    """Decorate ``f(*args) -> (y, grad_fn)`` so that ``grad_fn`` is y's backward.

    As ``tf.custom_gradient``: the arguments may be tensors, numbers or
    lists, tuples and dicts of them (nested), and ``y`` a tensor or such a
    structure.  ``grad_fn`` takes one upstream gradient per tensor of ``y``
    and returns one gradient per tensor of the arguments (a single one when
    there is one; any nesting, counted flat).  The forward ops inside ``f``
    still run, but the gradient goes only through ``grad_fn``.  Keyword
    arguments reach ``f`` but are not differentiated.

    Variables that ``f`` reads and was not given are handed to ``grad_fn`` as
    the keyword ``variables``; it then returns ``(input_grads,
    variable_grads)``, one per variable.  On a method, ``self`` is no argument.

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
    if f is None:  # @gv.custom_gradient()
        return custom_gradient
    if not callable(f):
        raise TypeError(f"custom_gradient decorates a function, got {type(f).__name__}")
    return _CustomGradient(f)


class _CustomGradient:
    """A function with a custom gradient; bound on an instance like a method."""

    def __init__(self, f: Callable) -> None:
        self._f = f
        functools.update_wrapper(self, f)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        # as a method: `self` is bound into the function, so it is no argument
        return self if instance is None else _CustomGradient(self._f.__get__(instance, owner))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call_custom(self._f, args, kwargs)


def _call_custom(f: Callable, args: tuple, kwargs: dict) -> Any:
    name = getattr(f, "__name__", "custom")
    xs = [_as_tensor(a, CUSTOM_GRADIENT, f"argument {i}")
          for i, a in enumerate(nest.leaves(args))]
    with _VariableWatcher() as watcher:
        result = f(*nest.pack(args, xs), **kwargs)
    if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
        raise TypeError(f"custom_gradient: {name} must return (y, grad_fn), got "
                        f"{type(result).__name__}")
    y, grad_fn = result
    ys = [_as_tensor(t, CUSTOM_GRADIENT, f"y[{i}]") for i, t in enumerate(nest.leaves(y))]
    if not ys:
        raise ValueError(f"custom_gradient: {name} returned no tensor as y")
    given = xs + [t for t in nest.leaves(kwargs) if isinstance(t, Tensor)]
    variables = [v for v in watcher.variables if all(v is not t for t in given)]
    if variables and not _takes_variables(grad_fn):
        raise TypeError(f"custom_gradient: {name} reads the Variables "
                        f"{', '.join(plain_name(v.name) for v in variables)}, which are not its "
                        "arguments, so its grad_fn must accept the keyword argument `variables` "
                        "(and return (input_grads, variable_grads))")
    # the op carries the user's grad_fn, as TensorFlow's tape does: it is the
    # one rule that cannot live in the table, because the user wrote it inline
    attrs = {"fn": name, "grad_fn": grad_fn, "num_args": len(xs)}
    if any(getattr(t, "_tangents", None) for t in ys):
        # forward mode gives each output the tangent of the value f computed, as
        # TensorFlow's accumulator does (held only then: recompute_grad keeps nothing
        # else; callable, as grad_fn, so a trace leaves it out)
        attrs["computed"] = lambda: ys
    if getattr(f, "_recomputes", False):
        attrs["recompute"] = True  # (gv.recompute_grad's, which the step's words tell apart)
    inputs = tuple(xs + variables)
    if len(ys) == 1 and isinstance(y, Tensor):
        return make_op(CUSTOM_GRADIENT, inputs, ys[0]._value, attrs, name)
    outs = make_multi_op(CUSTOM_GRADIENT, inputs, [t._value for t in ys], attrs, name)
    return nest.pack(y, list(outs))


def _takes_variables(fn: Callable) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True  # (a builtin: let the call say)
    return any(p.name == "variables" and p.kind != p.POSITIONAL_ONLY or p.kind == p.VAR_KEYWORD
               for p in params)


class _VariableWatcher:
    """Collects the trainable float Variables the ops made inside its block read."""

    def __init__(self) -> None:
        self.variables: list[Variable] = []

    def __enter__(self) -> _VariableWatcher:
        # told of every op the thread makes, as its tapes are
        self._watching = graph.this_thread().tapes
        self._watching.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._watching.remove(self)

    def _record(self, op: Operation) -> None:
        for t in op.inputs:
            if isinstance(t, Variable) and t.watchable \
                    and all(t is not v for v in self.variables):
                self.variables.append(t)


@RegisterGradient(CUSTOM_GRADIENT)
def _custom_gradient_grad(op: Operation, *grads: Tensor) -> tuple:
    grad_fn, n = op.get_attr("grad_fn"), op.attrs.get("num_args", len(op.inputs))
    variables = list(op.inputs[n:])
    name = op.get_attr("fn")
    if variables:
        result = grad_fn(*grads, variables=variables)
        if not (isinstance(result, (list, tuple)) and len(result) == 2):
            raise TypeError(f"custom_gradient: the grad_fn of {name} was given variables, so it "
                            "must return (input_grads, variable_grads), got "
                            f"{type(result).__name__}")
        result, variable_grads = result
        variable_grads = nest.leaves(variable_grads)
        if len(variable_grads) != len(variables):
            raise ValueError(f"custom_gradient: the grad_fn of {name} returned "
                             f"{len(variable_grads)} variable gradients for {len(variables)} "
                             "variables; return one per variable, in the order given")
    else:
        result, variable_grads = grad_fn(*grads), []
    # one gradient per argument, nested as the arguments or flat; anything but a
    # list or tuple (a tensor, an array: never iterated into per-element
    # "gradients") is the one argument's
    input_grads = nest.leaves(result) if isinstance(result, (list, tuple, dict)) else [result]
    if len(input_grads) != n:
        raise ValueError(f"custom_gradient: the grad_fn of {name} returned {len(input_grads)} "
                         f"gradient{'s' if len(input_grads) != 1 else ''}, expected {n}: one "
                         "per tensor argument")
    return tuple(input_grads) + tuple(variable_grads)


# a trace names the user's own grad_fn as the rule that ran, not this wrapper
_custom_gradient_grad.name_for = lambda op: _rule_name(op.get_attr("grad_fn"))  # type: ignore


def recompute_grad(f: Callable) -> Callable:
    """``f`` that keeps nothing of its forward pass for the backward, as
    ``tf.recompute_grad``: the backward runs ``f`` again, under a tape.

    The gradients are the same as without it; what a gradient checkpoint
    saves is memory, paid for with a second forward pass.  Its arguments get
    zeros where ``f`` does not use them.

    >>> import gradviz as gv
    >>> block = gv.recompute_grad(lambda x: gv.tanh(x) * x)
    >>> x = gv.constant([0.5, -1.0], gv.float64)
    >>> gv.gradients(block(x), x)[0].numpy().round(4).tolist()
    [0.8553, -1.1816]
    """
    if not callable(f):
        raise TypeError(f"recompute_grad takes a function, got {type(f).__name__}")

    def forward(*args: Any, **kwargs: Any) -> tuple:
        with _tape.stopped_tapes():
            result = f(*args, **kwargs)

        def grad_fn(*upstream: Tensor, variables: list | None = None) -> Any:
            extra = list(variables or [])
            with _tape.GradientTape() as tape:
                xs = [ops.identity(t) for t in nest.leaves(args)]
                tape.watch(xs + extra)
                again = f(*nest.pack(args, xs), **kwargs)
            grads = tape.gradient(again, xs + extra, output_gradients=list(upstream),
                                  unconnected_gradients="zero")
            return (grads[:len(xs)], grads[len(xs):]) if variables else grads[:len(xs)]

        return result, grad_fn

    forward.__name__ = getattr(f, "__name__", "recompute")
    forward.__doc__ = f.__doc__
    forward._recomputes = True  # type: ignore[attr-defined]
    return custom_gradient(forward)


def grad_pass_through(f: Callable) -> Callable:
    """``f`` whose backward is the identity, as ``tf.grad_pass_through``: its value is
    ``f``'s, and the upstream gradient goes to its arguments unchanged (the
    straight-through estimator: ``grad_pass_through(gv.round)(x)`` rounds, and its
    gradient is 1). A custom gradient, so the diagram shows f's ops inside it.

    >>> import gradviz as gv
    >>> x = gv.constant([0.4, 1.6])
    >>> gv.gradients(gv.grad_pass_through(gv.round)(x) * 3.0, x)[0].numpy().tolist()
    [3.0, 3.0]
    """
    if not callable(f):
        raise TypeError(f"grad_pass_through takes a function, got {type(f).__name__}")

    def passed(*args: Any, **kwargs: Any) -> tuple:
        def grad_fn(*upstream: Tensor, variables: list | None = None) -> Any:
            grads = upstream[0] if len(upstream) == 1 else list(upstream)
            return (grads, [None] * len(variables)) if variables else grads
        return f(*args, **kwargs), grad_fn

    passed.__name__ = getattr(f, "__name__", "grad_pass_through")
    passed.__doc__ = f.__doc__
    return custom_gradient(passed)


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
    vector ``v`` (so the check covers the whole Jacobian: ``d(v·f)/dx``), and a
    scalar is left as it is, so ``analytic`` and ``numeric`` are ``df/dx``.
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
    # a scalar is its own gradient's target: projected on 1, its gradients are dy/dx themselves
    v = np.random.default_rng(seed).standard_normal(y.shape) if y.shape else np.float64(1.0)
    analytic = [convert_to_tensor(g) for g in  # (a sparse gradient, made dense)
                gradients(y, tensors, grad_ys=constant(v), unconnected_gradients="zero")]

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
