"""Nested structures of tensors, flattened and rebuilt as TensorFlow's ``tf.nest`` does.

A structure is a tensor, or a list, tuple, namedtuple or dict of structures.
A dict flattens in the sorted order of its keys, as in TensorFlow, and comes
back a plain dict in its own key order.  ``GradientTape.gradient`` uses this to give
back its gradients in the shape its sources were given in.

>>> import gradviz as gv
>>> a, b = gv.constant(1.0, name="nest_a"), gv.constant(2.0, name="nest_b")
>>> [t.name for t in flatten({"z": a, "y": [b, (a,)]}, "sources")]
['nest_b:0', 'nest_a:0', 'nest_a:0']
>>> pack({"z": a, "y": [b, (a,)]}, [1, 2, 3])
{'z': 3, 'y': [1, (2,)]}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .graph import Tensor

__all__ = ["flatten", "flatten_up_to", "leaves", "not_a_tensor", "leaf_paths", "pack", "paired_leaves"]


def _children(structure: Any) -> list | None:
    """The parts of a list, tuple or dict in flattening order; None for a leaf."""
    if isinstance(structure, dict):
        try:
            keys = sorted(structure)
        except TypeError:
            raise TypeError(f"a dict of tensors needs keys that sort (as in TensorFlow), got "
                            f"{', '.join(sorted({type(k).__name__ for k in structure}))} "
                            "keys") from None
        return [(f"[{k!r}]", structure[k]) for k in keys]
    if isinstance(structure, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(structure)]
    return None


def _leaves(structure: Any, path: str) -> Iterator[tuple[str, Any]]:
    parts = _children(structure)
    if parts is None:
        yield path, structure
        return
    for key, part in parts:
        yield from _leaves(part, path + key)


def leaves(structure: Any) -> list:
    """Everything in ``structure`` that is not a list, tuple or dict, in TensorFlow's order."""
    return [leaf for _, leaf in _leaves(structure, "")]


def leaf_paths(structure: Any, what: str = "") -> list[tuple[str, Any]]:
    """Each leaf of ``structure`` with its place (``what['w'][1]``), in TensorFlow's order."""
    return list(_leaves(structure, what))


def flatten(structure: Any, what: str, allow_empty: bool = False) -> list[Tensor]:
    """The tensors of ``structure``, in TensorFlow's order.

    Raises TypeError naming the place of anything that is not a tensor
    (``sources['w'][1]``), and ValueError for a structure with no tensor in it
    unless ``allow_empty``.
    """
    flat = []
    for path, leaf in _leaves(structure, what):
        if not isinstance(leaf, Tensor):
            raise TypeError(not_a_tensor(path, leaf) + ". A structure of tensors may nest "
                            "lists, tuples and dicts")
        flat.append(leaf)
    if not flat and not allow_empty:
        raise ValueError(f"{what} must be a tensor or a structure holding at least one "
                         f"(a list, tuple or dict of tensors), got {structure!r}")
    return flat


def not_a_tensor(place: str, value: Any) -> str:
    """The message for ``value`` found at ``place`` where a tensor belongs."""
    kind = type(value).__name__
    kind = f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
    return (f"{place} is {kind} ({value!r:.40}), not a gradviz tensor: gradients are taken of "
            "tensors computed with gradviz ops, with respect to tensors they were computed "
            "from; wrap values with gv.constant(...) or gv.Variable(...)")


def flatten_up_to(structure: Any, values: Any, what: str) -> list:
    """``values``, given in the shape of ``structure``, as one item per tensor of it.

    The items may be anything (an array, a number, None).  ``values`` may also
    be a flat list with one item per tensor, as TensorFlow takes it.
    """
    out: list = []

    def walk(s: Any, v: Any, path: str) -> None:
        parts = _children(s)
        if parts is None:
            out.append(v)
        elif isinstance(s, dict):
            if not isinstance(v, dict) or set(v) != set(s):
                raise ValueError(f"{path} must be a dict with the keys {sorted(s)!r}, as the "
                                 f"target has, got {v!r:.60}")
            for k in sorted(s):
                walk(s[k], v[k], f"{path}[{k!r}]")
        else:
            if not isinstance(v, (list, tuple)) or len(v) != len(s):
                raise ValueError(f"{path} must be a list of {len(s)}, as the target is, got "
                                 f"{v!r:.60}")
            for i, (part, value) in enumerate(zip(s, v)):
                walk(part, value, f"{path}[{i}]")

    try:
        walk(structure, values, what)
    except ValueError:
        count = len(flatten(structure, "structure", allow_empty=True))
        if isinstance(values, (list, tuple)) and len(values) == count and not any(
                isinstance(v, (list, tuple, dict)) for v in values):
            return list(values)  # flat: one per tensor
        raise
    return out


def paired_leaves(structure: Any, other: Any, names: tuple[str, str]) -> list[tuple]:
    """The leaves of two structures of the same shape, in pairs, in TensorFlow's order.

    As ``tf.nest.map_structure`` checks two structures: a leaf where the other
    has a list, a list of another length or a dict of other keys is a
    ValueError, a list where the other has a tuple (or dict) a TypeError.  Each
    message names the place, in both (``names``: what each structure is called).
    """
    first, second = names
    pairs: list[tuple] = []

    def walk(s: Any, o: Any, path: str) -> None:
        parts, others = _children(s), _children(o)
        where = f"{first}{path} is {_kind(s)} but {second}{path} is {_kind(o)}"
        if parts is None or others is None:
            if parts is not None or others is not None:
                raise ValueError(f"{where}: {second} must have the structure of {first}")
            pairs.append((s, o))
            return
        if type(s) is not type(o) and not (isinstance(s, dict) and isinstance(o, dict)):
            raise TypeError(f"{where}: {second} must have the structure of {first}, "
                            "the same kinds of sequence included")
        if len(parts) != len(others) or (isinstance(s, dict) and sorted(s) != sorted(o)):
            raise ValueError(f"{first}{path} holds {_size(s)} but {second}{path} holds "
                             f"{_size(o)}: {second} must have the structure of {first}")
        for (key, part), (_, twin) in zip(parts, others):
            walk(part, twin, path + key)

    walk(structure, other, "")
    return pairs


def _kind(value: Any) -> str:
    if isinstance(value, Tensor):
        return "a tensor"
    kind = type(value).__name__
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _size(value: Any) -> str:
    if isinstance(value, dict):
        return f"the keys {sorted(value, key=repr)!r}"
    return f"{len(value)} item{'s' if len(value) != 1 else ''}"


def pack(structure: Any, flat: list) -> Any:
    """``flat`` (one item per tensor of ``structure``) in the shape of ``structure``."""
    items = iter(flat)
    packed = _pack(structure, items)
    if next(items, items) is not items:
        raise ValueError("pack: more items than the structure has places")
    return packed


def _pack(structure: Any, items: Iterator) -> Any:
    parts = _children(structure)
    if parts is None:
        return next(items)
    if isinstance(structure, dict):
        done = {k: _pack(structure[k], items) for k in sorted(structure)}
        return {k: done[k] for k in structure}  # (any dict comes back a plain dict)
    values = [_pack(v, items) for _, v in parts]
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):  # a namedtuple
        return type(structure)(*values)
    return type(structure)(values)
