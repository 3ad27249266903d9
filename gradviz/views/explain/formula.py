"""A formula that runs: what a step writes, and the step's own arrays its names stand for.

Every formula the words show is a NumPy expression.  Read with ``from numpy
import *`` and the helpers below (``softmax``, ``log_softmax``, ``sigmoid``,
``put``, and for convolution and pooling ``windows``, ``unwindows``,
``conv2d``, ``dilate``, ``first_max``), with each name bound to the array it names in the
step, it gives the gradient the engine computed: ``grad[:, None] * (...)``
where NumPy would otherwise broadcast along the wrong axis, ``.T`` and
``keepdims=True`` where they are meant, ``n = 6`` with its value.
:meth:`Formula.evaluate` does exactly that, and ``tests/test_formulas.py``
checks it for every step of many traces.
"""

from __future__ import annotations

import math
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


# Convolution and pooling, written for reading: NHWC arrays, padding "SAME", "VALID" or
# ((top, bottom), (left, right)), as TensorFlow's.  Written apart from the engine's
# kernels on purpose, so that a formula checks the engine rather than repeating it.


def _pads(size: int, k: int, stride: int, rate: int, padding: Any, d: int) -> tuple[int, int]:
    reach = (k - 1) * rate + 1
    if padding == "VALID":
        return 0, 0
    if padding == "SAME":
        needed = max(0, (-(-size // stride) - 1) * stride + reach - size)
        return needed // 2, needed - needed // 2
    return tuple(padding[d])


def windows(x: np.ndarray, ksize: tuple[int, int], strides: tuple[int, int] = (1, 1),
            padding: Any = "VALID", dilations: tuple[int, int] = (1, 1),
            fill: float = 0) -> np.ndarray:
    """Every window the kernel sees, shaped (N, OH, OW, KH, KW, C): ``x`` padded with
    ``fill``, each window a ``ksize`` block, ``dilations`` apart within, ``strides`` apart."""
    pads = [_pads(x.shape[1 + d], ksize[d], strides[d], dilations[d], padding, d)
            for d in range(2)]
    xp = np.pad(x, ((0, 0), *pads, (0, 0)), constant_values=fill)
    reach = [(ksize[d] - 1) * dilations[d] + 1 for d in range(2)]
    view = np.lib.stride_tricks.sliding_window_view(xp, reach, axis=(1, 2))
    view = view[:, ::strides[0], ::strides[1], :, ::dilations[0], ::dilations[1]]
    return view.transpose(0, 1, 2, 4, 5, 3)


def unwindows(patches: np.ndarray, shape: tuple[int, ...], strides: tuple[int, int] = (1, 1),
              padding: Any = "VALID", dilations: tuple[int, int] = (1, 1)) -> np.ndarray:
    """The reverse of ``windows``: every window's values added back where they came from,
    into an array of ``shape`` (a cell in several windows gets the sum)."""
    n, oh, ow, kh, kw, c = patches.shape
    pads = [_pads(shape[1 + d], (kh, kw)[d], strides[d], dilations[d], padding, d)
            for d in range(2)]
    out = np.zeros((n, shape[1] + sum(pads[0]), shape[2] + sum(pads[1]), c), patches.dtype)
    (sh, sw), (dh, dw) = strides, dilations
    for i in range(kh):
        for j in range(kw):  # one tap's windows never overlap each other
            out[:, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                j * dw: j * dw + sw * (ow - 1) + 1: sw] += patches[:, :, :, i, j]
    return out[:, pads[0][0]: pads[0][0] + shape[1], pads[1][0]: pads[1][0] + shape[2]]


def conv2d(x: np.ndarray, w: np.ndarray, strides: tuple[int, int] = (1, 1),
           padding: Any = "VALID", dilations: tuple[int, int] = (1, 1)) -> np.ndarray:
    """TensorFlow's conv2d: each window times the kernel (KH, KW, C, O), summed."""
    return np.einsum("nyxijc,ijco->nyxo", windows(x, w.shape[:2], strides, padding, dilations),
                     w)


def dilate(a: np.ndarray, strides: tuple[int, int]) -> np.ndarray:
    """``a`` (NHWC) with ``strides - 1`` zeros put between neighbours along height and width."""
    n, h, w, c = a.shape
    out = np.zeros((n, (h - 1) * strides[0] + 1 if h else 0,
                    (w - 1) * strides[1] + 1 if w else 0, c), a.dtype)
    out[:, ::strides[0], ::strides[1]] = a
    return out


def first_max(patches: np.ndarray) -> np.ndarray:
    """1 where a window (axes 3 and 4) holds its maximum, only the first in row-major order."""
    n, oh, ow, kh, kw, c = patches.shape
    flat = patches.transpose(0, 1, 2, 5, 3, 4).reshape(n, oh, ow, c, kh * kw)
    one = np.zeros_like(flat)
    np.put_along_axis(one, np.argmax(flat, axis=-1)[..., None], 1, axis=-1)
    return one.reshape(n, oh, ow, c, kh, kw).transpose(0, 1, 2, 4, 5, 3)


def erf(x: Any) -> np.ndarray:
    """The error function, elementwise (NumPy has none; Python's ``math.erf`` per value)."""
    return np.vectorize(math.erf, otypes=[float])(x)


def erfc(x: Any) -> np.ndarray:
    """``1 - erf(x)``, elementwise."""
    return np.vectorize(math.erfc, otypes=[float])(x)


def unmirror(grad: np.ndarray, pads: Any, mode: str) -> np.ndarray:
    """The reverse of ``pad(x, pads, mode='reflect' or 'symmetric')``: each padded position's
    value added back to the position it mirrors, axis by axis."""
    edge = 0 if mode == "SYMMETRIC" else 1
    out = np.asarray(grad)
    for axis, (before, after) in enumerate(pads):
        a = np.moveaxis(out, axis, 0)
        n = a.shape[0] - before - after
        core = a[before: before + n].copy()
        for i in range(before):  # position i mirrors before - i - 1 + edge
            core[before - i - 1 + edge] += a[i]
        for j in range(after):  # position before + n + j mirrors n - 1 - edge - j
            core[n - 1 - edge - j] += a[before + n + j]
        out = np.moveaxis(core, 0, axis)
    return out


def segment_sum(data: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    """``n`` sums: sum ``s`` adds the slices of ``data`` whose id is ``s`` (a negative id
    drops its slice, as TensorFlow's ``unsorted_segment_sum``)."""
    ids = np.asarray(ids)
    out = np.zeros((n, *np.shape(data)[ids.ndim:]), np.asarray(data).dtype)
    kept = ids >= 0
    np.add.at(out, ids[kept], np.asarray(data)[kept])
    return out


def scatter_nd(indices: np.ndarray, updates: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Zeros of ``shape`` with each update added at the position its row of ``indices``
    names (the last axis of ``indices`` holds the coordinates)."""
    out = np.zeros(shape, np.asarray(updates).dtype)
    np.add.at(out, tuple(np.moveaxis(np.asarray(indices), -1, 0)), updates)
    return out


def running_sum(a: np.ndarray, axis: int, exclusive: bool = False,
                reverse: bool = False) -> np.ndarray:
    """Running sums along ``axis`` (TensorFlow's ``cumsum``): ``exclusive``, each leaves
    itself out; ``reverse``, from the end."""
    return _running(np.cumsum, 0, a, axis, exclusive, reverse)


def running_product(a: np.ndarray, axis: int, exclusive: bool = False,
                    reverse: bool = False) -> np.ndarray:
    """Running products along ``axis`` (TensorFlow's ``cumprod``)."""
    return _running(np.cumprod, 1, a, axis, exclusive, reverse)


def _running(fn: Any, start: int, a: np.ndarray, axis: int, exclusive: bool,
             reverse: bool) -> np.ndarray:
    a = np.flip(a, axis) if reverse else np.asarray(a)
    out = fn(a, axis=axis)
    if exclusive and out.shape[axis]:
        out = np.concatenate([np.full_like(np.take(out, [0], axis=axis), start),
                              np.take(out, range(out.shape[axis] - 1), axis=axis)], axis)
    return np.flip(out, axis) if reverse else out


def product_of_others(x: np.ndarray, axis: Any) -> np.ndarray:
    """For each element, the product of the other elements of its reduction over ``axis``
    (the products before it times those after it, so no division)."""
    x = np.asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, [*axes, *rest])
    flat = moved.reshape(-1, int(np.prod([x.shape[a] for a in rest])))
    others = (running_product(flat, 0, exclusive=True)
              * running_product(flat, 0, exclusive=True, reverse=True))
    order = [*axes, *rest]
    return np.transpose(others.reshape(moved.shape), [order.index(a) for a in range(x.ndim)])


def gather_nd(a: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The values of ``a`` at the positions the rows of ``indices`` name."""
    return np.asarray(a)[tuple(np.moveaxis(np.asarray(indices), -1, 0))]


def ungather(grad: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], axis: int = 0,
             batch_dims: int = 0) -> np.ndarray:
    """The reverse of ``take(x, indices, axis)`` (batch by batch over the first
    ``batch_dims`` axes): each gathered slice added back where it was read from."""
    grad, indices = np.asarray(grad), np.asarray(indices)
    out = np.zeros(shape, grad.dtype)
    a = axis - batch_dims
    for b in np.ndindex(*shape[:batch_dims]):
        ids, k = indices[b], indices[b].ndim
        # out's axis first (a view), and the gradient's gathered axes first, to match
        np.add.at(np.moveaxis(out[b], a, 0), ids,
                  np.moveaxis(grad[b], list(range(a, a + k)), list(range(k))))
    return out


_NAMESPACE: dict[str, Any] = {}


def formula_namespace() -> dict[str, Any]:
    """The names a formula may use besides the step's own: NumPy's, and the helpers above.

    >>> ns = formula_namespace()
    >>> ns["sum"] is np.sum, sorted(k for k in ns if getattr(ns[k], "__module__", "") == __name__)
    (True, ['conv2d', 'dilate', 'erf', 'erfc', 'first_max', 'gather_nd', 'log_softmax', 'product_of_others', 'put', 'running_product', 'running_sum', 'scatter_nd', 'segment_sum', 'sigmoid', 'softmax', 'ungather', 'unmirror', 'unwindows', 'windows'])
    """
    if not _NAMESPACE:
        _NAMESPACE.update((k, getattr(np, k)) for k in dir(np) if not k.startswith("_"))
        _NAMESPACE.update(softmax=softmax, log_softmax=log_softmax, sigmoid=sigmoid, put=put,
                          windows=windows, unwindows=unwindows, conv2d=conv2d, dilate=dilate,
                          first_max=first_max, erf=erf, erfc=erfc, unmirror=unmirror,
                          segment_sum=segment_sum, scatter_nd=scatter_nd, ungather=ungather,
                          gather_nd=gather_nd, running_sum=running_sum,
                          running_product=running_product, product_of_others=product_of_others)
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
