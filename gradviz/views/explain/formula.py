"""A formula that runs: what a step writes, and the step's own arrays its names stand for.

Every formula the words show is a NumPy expression.  Read with ``from numpy
import *`` and the four helpers below (``softmax``, ``log_softmax``,
``sigmoid``, ``put``), with each name bound to the array it names in the
step, it gives the gradient the engine computed: ``grad[:, None] * (...)``
where NumPy would otherwise broadcast along the wrong axis, ``.T`` and
``keepdims=True`` where they are meant, ``n = 6`` with its value.
:meth:`Formula.evaluate` does exactly that, and ``tests/test_formulas.py``
checks it for every step of many traces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...trace import ArrayData
from .formatting import _small, format_array

__all__ = ["Formula", "formula_namespace"]


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x) / sum(exp(x)) along ``axis`` (shifted by the max, as the engine does)."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log(softmax(x)) along ``axis``, computed stably."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x))."""
    return 1 / (1 + np.exp(-x))


def put(a: np.ndarray, index: Any, values: np.ndarray) -> np.ndarray:
    """A copy of ``a`` with ``values`` written at ``index``: ``b = a.copy(); b[index] = values``."""
    out = np.array(a, copy=True)
    out[index] = values
    return out


_NAMESPACE: dict[str, Any] = {}


def formula_namespace() -> dict[str, Any]:
    """The names a formula may use besides the step's own: NumPy's, and the helpers above.

    >>> ns = formula_namespace()
    >>> ns["sum"] is np.sum, sorted(k for k in ns if getattr(ns[k], "__module__", "") == __name__)
    (True, ['log_softmax', 'put', 'sigmoid', 'softmax'])
    """
    if not _NAMESPACE:
        _NAMESPACE.update((k, getattr(np, k)) for k in dir(np) if not k.startswith("_"))
        _NAMESPACE.update(softmax=softmax, log_softmax=log_softmax, sigmoid=sigmoid, put=put)
    return _NAMESPACE


@dataclass(frozen=True)
class Formula:
    """One line of maths: ``target = expr[, where]: shapes[ = value]``.

    ``names`` maps each name ``expr`` uses for the step's data, exactly as
    written there (a quoted name with its quotes), to what it stands for: an
    :class:`ArrayData`, a number, or a list or dict of them (``grad[1]`` for
    the second output's gradient, ``grad_ys[0]``).
    """

    target: str  # "dL/dW"
    expr: str  # "grad * X"
    names: dict[str, Any] = field(default_factory=dict)
    shapes: str = ""  # "(2,1) -> (2,1)"
    result: ArrayData | None = None  # what the engine computed
    where: str = ""  # "n = 6": a name the expression uses, with its value

    def __str__(self) -> str:
        text = f"{self.target} = {self.expr}"
        if self.where:
            text += f", {self.where}"
        if self.shapes:
            text += f": {self.shapes}"
        if _small(self.result):
            text += f" = {format_array(self.result)}"
        return text

    def evaluate(self) -> np.ndarray:
        """The expression run by NumPy on the step's own arrays.

        >>> import gradviz as gv
        >>> from gradviz.views.explain import step_formulas
        >>> X = gv.constant([[1.0], [2.0]], name="ev_X")
        >>> W = gv.Variable(3.0, name="ev_W")
        >>> tr = gv.trace_gradients(gv.reduce_mean(X * W), W)
        >>> f = step_formulas(tr, 1)[0]
        >>> print(f)
        dL/dMul = broadcast_to(grad, shape(Mul)) / n, n = 2: scalar -> (2,1) = [[0.5], [0.5]]
        >>> f.evaluate().tolist()
        [[0.5], [0.5]]
        """
        env: dict[str, Any] = {}
        idents: dict[str, str] = {}
        for k, (token, value) in enumerate(self.names.items()):
            idents[token] = f"__gv{k}"
            env[f"__gv{k}"] = _values(value, token)
        code = self.expr
        if idents:
            alternatives = sorted(idents, key=len, reverse=True)
            pattern = "|".join(re.escape(t) if t.startswith("'") else
                               rf"(?<![\w.']){re.escape(t)}(?![\w'])" for t in alternatives)
            code = re.sub(pattern, lambda m: idents[m.group()], code)
        with np.errstate(all="ignore"):
            return np.asarray(eval(code, {"__builtins__": {}}, {**formula_namespace(), **env}))


def _values(value: Any, token: str) -> Any:
    """What a name stands for, as NumPy arrays (a trace keeps only a summary of big ones)."""
    if isinstance(value, ArrayData):
        if value.values is None:
            raise ValueError(f"cannot evaluate: the trace keeps only a summary of {token} "
                             f"(shape {value.shape}), not its values")
        return value.values
    if isinstance(value, dict):
        return {k: _values(v, token) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [None if v is None else _values(v, token) for v in value]
    return value
