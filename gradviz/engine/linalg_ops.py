"""Matrices as TensorFlow's ``tf.linalg`` takes them: a tensor's last two axes, the axes
before them a batch.

Ops of their own, as in TensorFlow (``MatrixDiagV3``, ``MatrixDiagPartV3``,
``MatrixBandPart``: the main diagonal, ``k = 0``), and the functions TensorFlow writes
in Python out of other ops, written here out of the same ones, in a name scope of
TensorFlow's name: ``matrix_transpose`` (a Transpose), ``trace`` (the sum of the
diagonal) and ``tensordot`` (transposes and reshapes around one MatMul).

>>> import gradviz as gv
>>> m = gv.constant([[1.0, 2.0], [3.0, 4.0]])
>>> gv.linalg.trace(m).numpy().item(), gv.linalg.diag_part(m).numpy().tolist()
(5.0, [1.0, 4.0])
>>> gv.tensordot(m, m, axes=1).numpy().tolist()
[[7.0, 10.0], [15.0, 22.0]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .array_ops import _int, _ints
from .graph import Tensor, make_op, name_scope
from .ops import (OpType, _as_tensor, _like, _one_axis, _same_dtype, matmul, reduce_sum, reshape,
                  transpose)

__all__ = ["band_part", "diag", "diag_part", "matrix_transpose", "tensordot", "trace"]


def _matrices(op_type: str, x: Any, arg: str) -> Tensor:
    t = _as_tensor(x, op_type, arg)
    if t.ndim < 2:
        raise ValueError(f"{op_type}: {arg} must be a matrix or a batch of them (rank 2 or "
                         f"more), got {t.name} of shape {t.shape}")
    return t


def matrix_transpose(a: Any, name: str | None = None, conjugate: bool = False) -> Tensor:
    """Each matrix of ``a`` transposed: its last two axes swapped (a Transpose, as
    TensorFlow makes it)."""
    x = _matrices("matrix_transpose", a, "a")
    with name_scope(name or "matrix_transpose"):
        return transpose(x, [*range(x.ndim - 2), x.ndim - 1, x.ndim - 2])


def diag(diagonal: Any, name: str | None = None, k: int = 0, num_rows: int = -1,
         num_cols: int = -1, padding_value: Any = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """Matrices with ``diagonal``'s last axis on their main diagonal and ``padding_value``
    elsewhere, ``num_rows`` by ``num_cols`` (-1: as many as the diagonal has values)."""
    op_type = OpType.MATRIX_DIAG
    d = _as_tensor(diagonal, op_type, "diagonal")
    if _int(op_type, "k", k) != 0:
        raise ValueError(f"{op_type}: gradviz takes the main diagonal only (k=0), got k={k}")
    if d.ndim < 1:
        raise ValueError(f"{op_type}: diagonal must be at least a vector, got {d.name} of "
                         f"shape {d.shape}")
    n = d.shape[-1]
    rows, cols = _int(op_type, "num_rows", num_rows), _int(op_type, "num_cols", num_cols)
    rows, cols = (n if rows == -1 else rows), (n if cols == -1 else cols)
    if min(rows, cols) != n:
        raise ValueError(f"{op_type}: a {rows}x{cols} matrix's main diagonal holds "
                         f"{min(rows, cols)} values, but {d.name} gives {n} (shape {d.shape})")
    fill = _like(padding_value, d, op_type, "padding_value")._value
    if fill.ndim:
        raise ValueError(f"{op_type}: padding_value must be a number, got shape {fill.shape}")
    value = np.full((*d.shape[:-1], rows, cols), fill, d._dtype)
    at = np.arange(n)
    value[..., at, at] = d._value
    return make_op(op_type, (d,), value, {"num_rows": rows, "num_cols": cols,
                                          "padding_value": fill.item()}, name)


def diag_part(input: Any, name: str | None = None, k: int = 0,  # noqa: A002
              padding_value: Any = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """The main diagonal of each matrix of ``input``: ``min(rows, cols)`` values."""
    op_type = OpType.MATRIX_DIAG_PART
    x = _matrices(op_type, input, "input")
    if _int(op_type, "k", k) != 0:
        raise ValueError(f"{op_type}: gradviz takes the main diagonal only (k=0), got k={k}")
    value = np.diagonal(x._value, axis1=-2, axis2=-1).copy()
    return make_op(op_type, (x,), value, None, name)


def band_part(input: Any, num_lower: Any, num_upper: Any,  # noqa: A002
              name: str | None = None) -> Tensor:
    """Each matrix of ``input`` with zeros outside a band: ``num_lower`` diagonals below the
    main one kept and ``num_upper`` above it (-1: all of them). ``band_part(x, 0, -1)`` is
    the upper triangle, ``band_part(x, -1, 0)`` the lower."""
    op_type = OpType.MATRIX_BAND_PART
    x = _matrices(op_type, input, "input")
    low, up = _int(op_type, "num_lower", num_lower), _int(op_type, "num_upper", num_upper)
    rows, cols = x.shape[-2:]
    for arg, v, most in (("num_lower", low, rows), ("num_upper", up, cols)):
        if v < -1 or v > most:
            raise ValueError(f"{op_type}: {arg} must be -1 (all) or 0..{most} for "
                             f"{x.name} of shape {x.shape}, got {v}")
    below = np.subtract.outer(np.arange(rows), np.arange(cols))  # i - j
    keep = ((low < 0) | (below <= low)) & ((up < 0) | (-below <= up))
    value = np.where(keep, x._value, x._dtype.type(0))
    return make_op(op_type, (x,), value, {"num_lower": low, "num_upper": up}, name)


def trace(x: Any, name: str | None = None) -> Tensor:
    """The sum of each matrix's main diagonal (its diagonal part, summed, as TensorFlow
    makes it)."""
    m = _matrices("trace", x, "x")
    with name_scope(name or "Trace"):
        return reduce_sum(diag_part(m), axis=-1)


def _contracted(a: Tensor, b: Tensor, axes: Any) -> tuple[list[int], list[int]]:
    """Which axes of ``a`` and of ``b`` ``tensordot`` sums over, as TensorFlow reads ``axes``:
    an int n (the last n of a with the first n of b) or a pair of lists (or of ints)."""
    if isinstance(axes, Tensor):
        axes = axes._value.tolist()
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            raise ValueError(f"Tensordot: axes must be at most the rank of a and of b "
                             f"({a.ndim} and {b.ndim}) and not negative, got {n}")
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError("Tensordot: axes must be an int or a pair of lists of axes (one for "
                         f"a, one for b), got {axes!r}")
    pair = [_ints("Tensordot", "axes", side) for side in axes]
    if len(pair[0]) != len(pair[1]):
        raise ValueError(f"Tensordot: the two lists of axes must be as long as each other, "
                         f"got {pair[0]} and {pair[1]}")
    out = []
    for t, side, arg in ((a, pair[0], "a"), (b, pair[1], "b")):
        out.append([_one_axis("Tensordot", t.ndim, ax, f"{arg} {t.shape}") for ax in side])
    for i, j in zip(*out):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"Tensordot: axis {i} of a has {a.shape[i]} and axis {j} of b "
                             f"has {b.shape[j]}; summed axes must be as long as each other")
    return out[0], out[1]


def _as_matrix(t: Tensor, summed: list[int], first: bool) -> Tensor:
    """``t`` transposed so its summed axes come last (``first``: first) and reshaped to a
    matrix, each step only where it changes something, as TensorFlow's."""
    free = [ax for ax in range(t.ndim) if ax not in summed]
    perm = summed + free if first else free + summed
    rows = math.prod(t.shape[ax] for ax in free)
    inner = math.prod(t.shape[ax] for ax in summed)
    shape = [inner, rows] if first else [rows, inner]
    moved = t if perm == list(range(t.ndim)) else transpose(t, perm)
    return moved if list(moved.shape) == shape else reshape(moved, shape)


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """The products of ``a`` and ``b`` summed over ``axes`` (see :func:`_contracted`): each
    made a matrix, multiplied, and the result given the free axes of a, then of b, as
    TensorFlow makes it."""
    x, y = _as_tensor(a, "Tensordot", "a"), _as_tensor(b, "Tensordot", "b")
    _same_dtype("Tensordot", [x, y])
    xa, ya = _contracted(x, y, axes)
    with name_scope(name or "Tensordot"):
        product = matmul(_as_matrix(x, xa, False), _as_matrix(y, ya, True))
        shape = [d for ax, d in enumerate(x.shape) if ax not in xa] + \
                [d for ax, d in enumerate(y.shape) if ax not in ya]
        return product if list(product.shape) == shape else reshape(product, shape)
