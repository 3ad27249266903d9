"""Shapes and indices beyond ``ops.py``: axes added and taken away, tiling, padding, one-hot,
and gathering rows, with the sparse gradient that gives (:mod:`.indexed_slices`).

Each an op of TensorFlow's name (``ExpandDims``, ``Squeeze``, ``Tile``, ``PadV2``,
``MirrorPad`` with its gradient op ``MirrorPadGrad``, ``OneHot``, ``GatherV2``,
``GatherNd``, ``ScatterNd``, ``UnsortedSegmentSum``, ``Roll``, ``ReverseV2``, ``Slice``,
``IdentityN``, ``PreventGradient``), with its gradient rule in
:mod:`gradviz.engine.gradient_rules`; ``repeat`` is made, as TensorFlow makes it, of
other ops.  ``dense`` and ``aggregate`` are what the backward
walk does with sparse gradients.

>>> import gradviz as gv
>>> gv.one_hot([2, 0], 3).numpy().tolist()
[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
>>> gv.pad(gv.constant([1.0, 2.0, 3.0]), [[2, 1]], mode="REFLECT").numpy().tolist()
[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes
from .graph import Tensor, constant, make_multi_op, make_op, name_scope, plain_name
from .indexed_slices import IndexedSlices
from .ops import (ANY, OpType, _as_tensor, _check_kind, _dtype_arg, _like, _one_axis, add_n, added,
                  cast, concat, identity, int_list, reshape)

__all__ = ["embedding_lookup", "expand_dims", "gather", "gather_nd", "identity_n",
           "mirror_pad_grad", "one_hot", "pad", "prevent_gradient", "repeat", "reverse", "roll",
           "scatter_nd", "slice", "squeeze", "tile", "unsorted_segment_sum"]


def _int(op_type: str, arg: str, value: Any) -> int:
    if isinstance(value, Tensor) and value.dtype.is_integer and value.ndim == 0:
        value = value._value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op_type}: {arg} must be an int, got {value!r}")
    return int(value)


def expand_dims(input: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` with a new axis of length 1 at ``axis`` (-1: at the end)."""
    x = _as_tensor(input, OpType.EXPAND_DIMS, "input")
    axis = _int(OpType.EXPAND_DIMS, "axis", axis)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(f"ExpandDims: Tried to expand dim index {axis} for tensor with "
                         f"{x.ndim} dimensions. ({x.name} of shape {x.shape}: accepted "
                         f"{-x.ndim - 1}..{x.ndim})")
    at = axis % (x.ndim + 1)
    return make_op(OpType.EXPAND_DIMS, (x,), np.expand_dims(x._value, at), {"axis": at}, name)


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` without its axes of length 1 (only those of ``axis``, if given)."""
    x = _as_tensor(input, OpType.SQUEEZE, "input")
    if axis is None:
        axes = [a for a, d in enumerate(x.shape) if d == 1]
    else:
        items = [axis] if not isinstance(axis, (list, tuple)) else list(axis)
        axes = []
        for a in items:
            a = _int(OpType.SQUEEZE, "axis", a)
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f"Squeeze: Tried to squeeze dim index {a} for tensor with "
                                 f"{x.ndim} dimensions. ({x.name} of shape {x.shape})")
            a %= x.ndim
            if x.shape[a] != 1:
                raise ValueError(f"Squeeze: Can not squeeze dim[{a}], expected a dimension "
                                 f"of 1, got {x.shape[a]} ({x.name} of shape {x.shape})")
            axes.append(a)
        axes = sorted(set(axes))
    value = np.squeeze(x._value, axis=tuple(axes)) if axes else x._value
    return make_op(OpType.SQUEEZE, (x,), value, {"axis": axes}, name)


def tile(input: Any, multiples: Sequence[int], name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` repeated ``multiples[i]`` times along each axis i."""
    x = _as_tensor(input, OpType.TILE, "input")
    if isinstance(multiples, Tensor):
        multiples = multiples.numpy().tolist()
    if not isinstance(multiples, (list, tuple, np.ndarray)) or np.ndim(multiples) != 1 \
            or len(multiples) != x.ndim:
        raise ValueError(f"Tile: Expected multiples argument to be a vector of length "
                         f"{x.ndim} but got {multiples!r} ({x.name} has shape {x.shape}: "
                         "one multiple per axis)")
    reps = [_int(OpType.TILE, "multiples", m) for m in multiples]
    if any(m < 0 for m in reps):
        raise ValueError(f"Tile: Expected multiples[i] >= 0, but got {reps}")
    size = math.prod(d * m for d, m in zip(x.shape, reps))
    if size > _LIMIT:
        raise ValueError(f"Tile: the result would hold {size:,} values, more than the "
                         f"{_LIMIT:,} (2**27) gradviz makes in one op; tile less")
    return make_op(OpType.TILE, (x,), np.tile(x._value, reps), {"multiples": reps}, name)


#: the most values one tile or pad makes (as many as a convolution's windows)
_LIMIT = 2 ** 27
_MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0,
        name: str | None = None) -> Tensor:
    """``tensor`` with ``paddings[i] = [before, after]`` values added on each side of axis i:
    ``constant_values`` (CONSTANT), or the values mirrored without the edge (REFLECT) or
    with it (SYMMETRIC)."""
    x = _as_tensor(tensor, "Pad", "tensor")
    if not isinstance(mode, str) or mode.upper() not in _MODES:
        raise ValueError(f"Pad: mode must be one of {', '.join(_MODES)} (any case), got "
                         f"{mode!r}")
    mode = mode.upper()
    if isinstance(paddings, Tensor):
        paddings = paddings.numpy()
    try:
        pairs = np.asarray(paddings)
        ok = pairs.dtype.kind in "iu" or pairs.size == 0
    except (TypeError, ValueError):
        ok = False
    if not ok or pairs.shape not in ((x.ndim, 2),) and not (x.ndim == 0 and pairs.size == 0):
        raise ValueError(f"Pad: paddings must be a matrix with 2 columns: one [before, after] "
                         f"pair of ints per axis of {x.name} (shape {x.shape}), got "
                         f"{np.asarray(paddings, dtype=object).tolist()!r}")
    pairs = [[int(p) for p in pair] for pair in pairs.reshape(x.ndim, 2)]
    if any(p < 0 for pair in pairs for p in pair):
        raise ValueError(f"Pad: Paddings must be non-negative: {pairs}")
    out_shape = [d + b + a for d, (b, a) in zip(x.shape, pairs)]
    if math.prod(out_shape) > _LIMIT:
        raise ValueError(f"Pad: the result would be {tuple(out_shape)}, more than the "
                         f"{_LIMIT:,} (2**27) values gradviz makes in one op; pad less")
    if mode == "CONSTANT":
        fill = _like(constant_values, x, "Pad", "constant_values")
        if fill.ndim:
            raise ValueError(f"Pad: constant_values must be a scalar, got shape {fill.shape}")
        value = np.pad(x._value, pairs, constant_values=fill._value) if pairs else x._value
        return make_op(OpType.PAD, (x, fill), value, {"paddings": pairs}, name)
    _check_kind("MirrorPad", x, ANY)
    edge = 0 if mode == "SYMMETRIC" else 1
    for d, (b, a) in zip(x.shape, pairs):
        if b > d - edge or a > d - edge:
            raise ValueError(f"MirrorPad: paddings must be no greater than the dimension "
                             f"size: {b}, {a} greater than {d - edge} ({mode} pads each side "
                             f"of an axis of {d} by at most {d - edge})")
    value = np.pad(x._value, pairs, mode="reflect" if edge else "symmetric")
    return make_op(OpType.MIRROR_PAD, (x,), value, {"paddings": pairs, "mode": mode}, name)


def mirror_pad_grad(grad: Tensor, paddings: list[list[int]], mode: str,
                    name: str | None = None) -> Tensor:
    """The backward of MirrorPad: each padded value's gradient added back to the value it
    mirrors, axis by axis."""
    edge = 0 if mode == "SYMMETRIC" else 1
    g = grad._value
    for axis, (b, a) in enumerate(paddings):
        n = g.shape[axis] - b - a
        core = np.take(g, range(b, b + n), axis=axis).copy()
        moved = np.moveaxis(core, axis, 0)
        left = np.moveaxis(np.take(g, range(b), axis=axis), axis, 0)
        right = np.moveaxis(np.take(g, range(b + n, b + n + a), axis=axis), axis, 0)
        for i in range(b):  # padded[i] mirrors x[b - i - 1 + edge]
            moved[b - i - 1 + edge] += left[i]
        for j in range(a):  # padded[b + n + j] mirrors x[n - 1 - edge - j]
            moved[n - 1 - edge - j] += right[j]
        g = core
    return make_op(OpType.MIRROR_PAD_GRAD, (grad,), g, {"paddings": paddings, "mode": mode},
                   name)


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None,
            axis: Any = None, dtype: Any = None, name: str | None = None) -> Tensor:
    """A new axis of ``depth`` (last, or at ``axis``): ``on_value`` (1) at each index and
    ``off_value`` (0) elsewhere; an index outside ``0..depth-1`` gives a row of
    ``off_value``. Its indices are integers: it has no gradient."""
    op_type = OpType.ONE_HOT
    ids = _as_tensor(indices, op_type, "indices")
    if ids._dtype.kind not in "iu":
        raise TypeError(f"OneHot: indices must be integers (int32, int64 or uint8), got "
                        f"{ids.name} of dtype {ids.dtype.name}")
    depth = _int(op_type, "depth", depth)
    if depth < 0:
        raise ValueError(f"OneHot: depth must be non-negative, got: {depth}")
    if dtype is None:  # as TensorFlow: the on (or off) value's own dtype, else float32
        given = on_value if on_value is not None else off_value
        dtype = dtypes.float32 if given is None else _as_tensor(given, op_type, "on_value").dtype
    out = _dtype_arg(op_type, dtype)
    at = -1 if axis is None else _int(op_type, "axis", axis)
    if not -1 <= at <= ids.ndim:
        raise ValueError(f"OneHot: Expected axis to be -1 or between [0, {ids.ndim}).  But "
                         f"received: {at}")
    numbers = []
    for arg, v, default in (("on_value", on_value, 1), ("off_value", off_value, 0)):
        v = default if v is None else v.numpy() if isinstance(v, Tensor) else v
        if np.ndim(v):
            raise ValueError(f"OneHot: {arg} must be a scalar, got {v!r}")
        cast = np.asarray(v).astype(out.np)
        if cast != np.asarray(v):
            raise TypeError(f"OneHot: {arg} {v!r} is not a {out.name} (the dtype of the "
                            "result); give a dtype it fits, or a value of that dtype")
        numbers.append(cast.item())
    if ids._value.size * depth > _LIMIT:
        raise ValueError(f"OneHot: the result would hold {ids._value.size * depth:,} values, more "
                         f"than the {_LIMIT:,} (2**27) gradviz makes in one op")
    hot = ids._value[..., None] == np.arange(depth)
    value = np.where(hot, out.np.type(numbers[0]), out.np.type(numbers[1]))
    if at != -1:
        value = np.moveaxis(value, -1, at)
    return make_op(op_type, (ids,), value.astype(out.np),
                   {"depth": depth, "axis": at, "on_value": numbers[0],
                    "off_value": numbers[1]}, name)


# ---------------------------------------------------------------- moving and cutting


def _ints(op_type: str, arg: str, value: Any) -> list[int]:
    """An int or a list of ints (a tensor of them too), as a list."""
    return int_list(op_type, arg, value, one=True)


def _axes_in(op_type: str, x: Tensor, axes: list[int]) -> list[int]:
    return [_one_axis(op_type, x.ndim, a, f"{x.name} {x.shape}") for a in axes]


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` moved ``shift`` places along ``axis``, what falls off one end coming back
    at the other (several axes: a list of shifts and one of axes)."""
    x = _as_tensor(input, OpType.ROLL, "input")
    shifts, axes = _ints(OpType.ROLL, "shift", shift), _ints(OpType.ROLL, "axis", axis)
    if len(shifts) != len(axes):
        raise ValueError(f"Roll: shift and axis must have the same size, got {len(shifts)} "
                         f"shifts and {len(axes)} axes")
    axes = _axes_in(OpType.ROLL, x, axes)
    value = np.roll(x._value, shifts, axes) if axes else x._value
    return make_op(OpType.ROLL, (x,), value, {"shift": shifts, "axis": axes}, name)


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """``tensor`` read backwards along each axis of ``axis``."""
    x = _as_tensor(tensor, OpType.REVERSE, "tensor")
    axes = _axes_in(OpType.REVERSE, x, _ints(OpType.REVERSE, "axis", axis))
    if len(set(axes)) != len(axes):
        twice = next(a for a in axes if axes.count(a) > 1)
        raise ValueError(f"ReverseV2: axis {twice} specified more than once")
    value = np.flip(x._value, tuple(axes)) if axes else x._value
    return make_op(OpType.REVERSE, (x,), np.ascontiguousarray(value), {"axis": axes}, name)


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """The block of ``input_`` that starts at ``begin`` and is ``size`` long on each axis
    (-1: to the end of that axis)."""
    op_type = OpType.SLICE
    x = _as_tensor(input_, op_type, "input_")
    starts, sizes = _ints(op_type, "begin", begin), _ints(op_type, "size", size)
    if len(starts) != x.ndim or len(sizes) != x.ndim:
        raise ValueError(f"Slice: begin and size must each have one entry per axis of {x.name} "
                         f"(shape {x.shape}), got begin={starts} and size={sizes}")
    for axis, (b, n, d) in enumerate(zip(starts, sizes, x.shape)):
        if not 0 <= b <= d:
            raise ValueError(f"Slice: Expected begin[{axis}] in [0, {d}], but got {b} (axis "
                             f"{axis} of {x.name} has {d}; a negative begin is refused, as in "
                             "TensorFlow)")
        if not (n == -1 or 0 <= n <= d - b):
            raise ValueError(f"Slice: Expected size[{axis}] in [0, {d - b}], but got {n} "
                             f"(begin[{axis}] is {b} on an axis of {d} of {x.name}; -1 reads to "
                             "the end)")
    sizes = [d - b if n == -1 else n for b, n, d in zip(starts, sizes, x.shape)]
    index = tuple(builtins.slice(b, b + n) for b, n in zip(starts, sizes))
    return make_op(op_type, (x,), x._value[index].copy(), {"begin": starts, "size": sizes},
                   name)


def identity_n(input: Any, name: str | None = None) -> list[Tensor]:  # noqa: A002
    """Each tensor of the list ``input`` passed on as it is, all by one op (``IdentityN``)."""
    if isinstance(input, Tensor) or not isinstance(input, (list, tuple)):
        raise TypeError(f"IdentityN: input must be a list of tensors, got {type(input).__name__}")
    xs = tuple(_as_tensor(t, OpType.IDENTITY_N, f"input[{k}]") for k, t in enumerate(input))
    return list(make_multi_op(OpType.IDENTITY_N, xs, [x._value for x in xs], None, name))


def prevent_gradient(input: Any, message: str = "", name: str | None = None  # noqa: A002
                     ) -> Tensor:
    """``input`` as it is, but asking for a gradient through it raises a ``LookupError``
    that says ``message``, as TensorFlow's (for an op whose gradient would be wrong)."""
    x = _as_tensor(input, OpType.PREVENT_GRADIENT, "input")
    if not isinstance(message, str):
        raise TypeError(f"PreventGradient: message must be a str, got {message!r}")
    return make_op(OpType.PREVENT_GRADIENT, (x,), x._value, {"message": message}, name)


def repeat(input: Any, repeats: Any, axis: Any = None,  # noqa: A002 - TensorFlow's name
           name: str | None = None) -> Tensor:
    """Each element of ``input`` (each slice along ``axis``; with no axis, of ``input``
    flattened) ``repeats`` times, or ``repeats[i]`` times the i-th, one after the other.

    Made as TensorFlow makes it, in a ``Repeat`` scope: a new axis tiled by the largest
    repeat, then (for a list of repeats) the copies kept gathered, and reshaped."""
    x = _as_tensor(input, "repeat", "input")
    counts = np.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats)
    if counts.dtype.kind not in "iu" or counts.ndim > 1:
        raise TypeError(f"repeat: repeats must be an int or a list of ints, got {repeats!r}")
    if (counts < 0).any():
        raise ValueError(f"repeat: repeats must not be negative, got {counts.tolist()}")
    with name_scope(name or "Repeat"):
        if axis is None:
            x, ax = reshape(x, [-1]), 0
        else:
            ax = _one_axis("repeat", x.ndim, axis, f"{x.name} {x.shape}")
        n = x.shape[ax]
        if counts.size not in (1, n):
            raise ValueError(f"repeat: repeats has {counts.size} values; axis {ax} of "
                             f"{x.name} has {n} (one each, or one for all)")
        most = int(counts.max(initial=0))
        if most * (x._value.size // max(n, 1)) * n > _LIMIT:
            raise ValueError(f"repeat: the result would hold more than the {_LIMIT:,} (2**27) "
                             "values gradviz makes in one op; repeat less")
        multiples = [1] * (x.ndim + 1)
        multiples[ax + 1] = most
        tiled = tile(expand_dims(x, ax + 1), multiples)
        outer, rest = list(x.shape[:ax]), list(x.shape[ax + 1:])
        if counts.size == 1:
            return reshape(tiled, [*outer, most * n, *rest])
        keep = np.arange(most) < counts.reshape(n, 1)  # which copies each element keeps
        flat = reshape(tiled, [math.prod(outer) * n * most, *rest])
        kept = np.flatnonzero(np.broadcast_to(keep, (*outer, n, most)))
        picked = gather(flat, constant(kept.astype(np.int64), name="kept"))
        total = int(np.broadcast_to(counts, n).sum())  # (not -1: an axis may be empty)
        return picked if ax == 0 else reshape(picked, [*outer, total, *rest])


# ---------------------------------------------------------------- gathering rows


def _indices(op_type: str, indices: Any, arg: str = "indices") -> Tensor:
    """Integer indices as a tensor; a list given is a constant called by its argument's name
    (``indices``, ``ids``), as the diagram and the words then call it."""
    if isinstance(indices, Tensor):
        ids = indices
    else:
        try:
            ids = constant(indices, name=arg)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{op_type}: argument {arg} {e}") from None
    if ids._dtype.kind not in "iu":
        raise TypeError(f"{op_type}: {arg} must be integers (int32 or int64), got "
                        f"{plain_name(ids.name)} of dtype {ids.dtype.name}")
    return ids


def _in_range(op_type: str, ids: np.ndarray, size: int, what: str) -> None:
    if ids.size and 0 <= np.minimum.reduce(ids, axis=None) and \
            np.maximum.reduce(ids, axis=None) < size:
        return  # (ufunc.reduce: ids.min() adds microseconds of dispatch)
    bad = (ids < 0) | (ids >= size)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        where = ",".join(map(str, at))
        raise IndexError(f"{op_type}: indices[{where}] = {int(ids[at])} is not in [0, {size}) "
                         f"({what} has {size}; gradviz, as TensorFlow on a CPU, refuses an "
                         "index outside it, a negative one too)")


def gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None,
           batch_dims: int = 0, name: str | None = None) -> Tensor:
    """The slices of ``params`` at ``indices`` along ``axis`` (0: rows): ``gather(E, [1, 3,
    1])`` is rows 1, 3 and 1 of E. Its gradient with respect to ``params`` along axis 0 is
    sparse, as TensorFlow's: a ``gv.IndexedSlices`` of the rows it read (a row read twice
    gets both its gradients)."""
    op_type = OpType.GATHER
    x = _as_tensor(params, op_type, "params")
    ids = _indices(op_type, indices)
    b = _int(op_type, "batch_dims", batch_dims)
    if b < 0:
        b += ids.ndim
    if not 0 <= b <= ids.ndim:
        raise ValueError(f"{op_type}: batch_dims {batch_dims} is out of range for indices of "
                         f"rank {ids.ndim}")
    if x.ndim == 0:
        raise ValueError(f"{op_type}: params must be at least 1 dimensional ({x.name} is a "
                         "scalar)")
    ax = b if axis is None else _one_axis(op_type, x.ndim, _int(op_type, "axis", axis),
                                          f"params {x.name} {x.shape}")
    if ax < b:
        raise ValueError(f"{op_type}: batch_dims ({b}) must be less than or equal to axis "
                         f"({ax}).")
    if x.shape[:b] != ids.shape[:b]:
        raise ValueError(f"{op_type}: params.shape[:{b}] {x.shape[:b]} must equal "
                         f"indices.shape[:{b}] {ids.shape[:b]} (the batch dimensions)")
    _in_range(op_type, ids._value, x.shape[ax], f"axis {ax} of {x.name} {x.shape}")
    value = _gather_value(x._value, ids._value, ax, b)
    return make_op(op_type, (x, ids), value, {"axis": ax, "batch_dims": b}, name)


def _gather_value(p: np.ndarray, ids: np.ndarray, axis: int, b: int) -> np.ndarray:
    if b == 0:
        return np.take(p, ids, axis=axis)
    batch = p.shape[:b]
    n = math.prod(batch)
    pf, idf = p.reshape(n, *p.shape[b:]), ids.reshape(n, *ids.shape[b:])
    parts = [np.take(pf[k], idf[k], axis=axis - b) for k in range(n)]
    rest = np.take(pf[0] if n else np.zeros(p.shape[b:], p.dtype),
                   idf[0] if n else np.zeros(ids.shape[b:], ids.dtype), axis=axis - b).shape
    return np.stack(parts).reshape(*batch, *rest) if n else np.zeros((*batch, *rest), p.dtype)


def embedding_lookup(params: Any, ids: Any, max_norm: Any = None,
                     name: str | None = None) -> Tensor:
    """The rows of the embedding table ``params`` for the token ids ``ids``: a gather in an
    ``embedding_lookup`` scope, as TensorFlow's (one table; ``max_norm`` is not taken)."""
    if max_norm is not None:
        raise ValueError("embedding_lookup: max_norm is not supported by gradviz (clip the "
                         "rows yourself, e.g. with gv.clip_by_value)")
    if isinstance(params, (list, tuple)):
        raise ValueError("embedding_lookup: gradviz takes one table, not a list of shards")
    with name_scope(name or "embedding_lookup"):
        return identity(gather(params, _indices(OpType.GATHER, ids, "ids")))


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> Tensor:
    """The slices of ``params`` that the last axis of ``indices`` names: ``indices[..., :]``
    is a position (its first ``indices.shape[-1]`` coordinates) in ``params``."""
    op_type = OpType.GATHER_ND
    x = _as_tensor(params, op_type, "params")
    ids = _indices(op_type, indices)
    if _int(op_type, "batch_dims", batch_dims) != 0:
        raise ValueError("GatherNd: gradviz takes batch_dims=0 only (write the batch as a "
                         "coordinate of the indices)")
    if ids.ndim < 1:
        raise ValueError(f"GatherNd: indices must be at least a vector, got shape {ids.shape}")
    depth = ids.shape[-1]
    if depth == 0:
        raise ValueError("GatherNd: indices.shape[-1] is 0: each index names no coordinate "
                         "(TensorFlow then copies all of params per index; gradviz takes at "
                         "least one coordinate: use gv.broadcast_to for the copies)")
    if depth > x.ndim:
        raise ValueError(f"GatherNd: index innermost dimension length must be <= params rank; "
                         f"saw: {depth} vs. {x.ndim}")
    for d in range(depth):
        _in_range(op_type, ids._value[..., d], x.shape[d], f"axis {d} of {x.name} {x.shape}")
    value = x._value[tuple(np.moveaxis(ids._value, -1, 0))]
    return make_op(op_type, (x, ids), np.asarray(value), None, name)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """Zeros of ``shape`` with each of ``updates`` added at the position ``indices`` names
    (the backward of GatherNd)."""
    op_type = OpType.SCATTER_ND
    ids = _indices(op_type, indices)
    u = _as_tensor(updates, op_type, "updates")
    if isinstance(shape, Tensor):
        shape = shape._value.tolist()
    if not isinstance(shape, (list, tuple, np.ndarray)) or np.ndim(shape) != 1:
        raise ValueError(f"ScatterNd: shape must be a list of sizes, such as [4, 3], got "
                         f"{shape!r}")
    dims = tuple(_int(op_type, "shape", d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"ScatterNd: shape {list(dims)} has a negative dimension")
    depth = ids.shape[-1] if ids.ndim else 0
    if ids.ndim < 1 or not 1 <= depth <= len(dims):
        raise ValueError(f"ScatterNd: indices must be at least a vector whose last dimension "
                         f"(1 to {len(dims)}, the rank of shape) gives the coordinates, got "
                         f"indices of shape {ids.shape}")
    if u.shape != ids.shape[:-1] + dims[depth:]:
        raise ValueError(f"ScatterNd: updates.shape {u.shape} must be indices.shape[:-1] + "
                         f"shape[{depth}:], {ids.shape[:-1] + dims[depth:]}")
    for d in range(depth):
        _in_range(op_type, ids._value[..., d], dims[d], f"axis {d} of the shape {dims}")
    value = np.zeros(dims, u._dtype)
    np.add.at(value, tuple(np.moveaxis(ids._value, -1, 0)), u._value)
    return make_op(op_type, (ids, u), value, {"shape": list(dims)}, name)


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    """``num_segments`` sums: segment s adds the slices of ``data`` whose id is s (a negative
    id is dropped). How a sparse gradient becomes dense."""
    op_type = OpType.UNSORTED_SEGMENT_SUM
    x = _as_tensor(data, op_type, "data")
    ids = _indices(op_type, segment_ids, "segment_ids")
    n = _int(op_type, "num_segments", num_segments)
    if n < 0:
        raise ValueError(f"UnsortedSegmentSum: num_segments must be non-negative, got {n}")
    if x.shape[:ids.ndim] != ids.shape:
        raise ValueError(f"UnsortedSegmentSum: segment_ids.shape {ids.shape} must be a prefix "
                         f"of data.shape {x.shape}")
    past = ids._value >= n
    if past.any():
        at = tuple(int(i) for i in np.argwhere(past)[0])
        raise IndexError(f"UnsortedSegmentSum: segment_ids[{','.join(map(str, at))}] = "
                         f"{int(ids._value[at])} is out of range [0, {n}) (a negative id drops "
                         "its slice; one past the segments is refused, as TensorFlow on a CPU "
                         "refuses it)")
    value = np.zeros((n, *x.shape[ids.ndim:]), x._dtype)
    keep = ids._value >= 0
    np.add.at(value, ids._value[keep], x._value[keep])
    return make_op(op_type, (x, ids), value, {"num_segments": n}, name)


# ---------------------------------------------------------------- sparse gradients


def dense(g: IndexedSlices, name: str | None = None) -> Tensor:
    """A sparse gradient as a dense tensor: each row the sum of its slices (TensorFlow's
    ``convert_to_tensor`` of one, an UnsortedSegmentSum)."""
    return unsorted_segment_sum(g.values, g.indices, g.dense_shape[0], name=name)


def aggregate(grads: list) -> Tensor | IndexedSlices:
    """The sum of the gradients that reached one tensor, as TensorFlow aggregates them: dense
    ones with AddN; sparse ones as one IndexedSlices of all their slices, concatenated (their
    indices made int64 where they mix int32 and int64); any dense one among sparse ones
    makes the sum dense."""
    if all(type(g) is Tensor for g in grads):  # (the walk's: of their tensor's shape)
        return added(grads)
    if any(type(g) is Tensor for g in grads):
        return add_n([dense(g) if type(g) is IndexedSlices else g for g in grads])
    kinds = {g.indices._dtype for g in grads}
    indices = [g.indices if len(kinds) == 1 else cast(g.indices, "int64") for g in grads]
    return IndexedSlices(concat([g.values for g in grads], axis=0), concat(indices, axis=0),
                         grads[0].dense_shape)
