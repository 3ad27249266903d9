"""Data types with TensorFlow's rules: Python floats are float32, ints int32.

>>> import gradviz as gv
>>> gv.float32 == "float32", gv.as_dtype(float), gv.int32.is_integer
(True, gv.float32, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "DType",
    "as_dtype",
    "bool_",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
]


class DType:
    """A tensor's element type; compares equal to the matching NumPy dtype."""

    __slots__ = ("np", "name")

    def __init__(self, np_dtype: np.dtype) -> None:
        self.np = np_dtype  # the NumPy dtype
        self.name = np_dtype.name  # e.g. "float32"

    @property
    def as_numpy_dtype(self) -> type:
        """The NumPy scalar type, as TensorFlow spells it."""
        return self.np.type

    @property
    def is_floating(self) -> bool:
        return self.np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self.np.kind in "iu"

    @property
    def is_bool(self) -> bool:
        return self.np.kind == "b"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.np == other.np
        if other is None:  # np.dtype(None) is float64, but no dtype equals None
            return False
        try:
            return self.np == np.dtype(other)  # type: ignore[arg-type]
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.np)

    def __repr__(self) -> str:
        return f"gv.{self.name}"


_BY_NP: dict[np.dtype, DType] = {}


def _make(name: str) -> DType:
    d = DType(np.dtype(name))
    _BY_NP[d.np] = d
    return d


float16 = _make("float16")
float32 = _make("float32")
float64 = _make("float64")
int8 = _make("int8")
int16 = _make("int16")
int32 = _make("int32")
int64 = _make("int64")
uint8 = _make("uint8")
bool_ = _make("bool")

_PYTHON_TYPES = {float: float32, int: int32, bool: bool_}
_ACCEPTED = "gv.float32, gv.float64, gv.int32, ... , a NumPy dtype, or a name such as 'float32'"


def as_dtype(value: Any) -> DType:
    """Turn a gradviz DType, a NumPy dtype, a name or a Python type into a DType."""
    if isinstance(value, DType):
        return value
    if value is None:  # (NumPy would read None as float64)
        raise ValueError(f"expected a dtype, got None (accepted: {_ACCEPTED})")
    if isinstance(value, type) and value in _PYTHON_TYPES:
        return _PYTHON_TYPES[value]
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"not a dtype: {value!r} (accepted: {_ACCEPTED})") from None
    found = _BY_NP.get(np_dtype)
    if found is None:
        supported = ", ".join(sorted(d.name for d in _BY_NP.values()))
        raise TypeError(f"unsupported dtype {np_dtype.name!r} (supported: {supported})")
    return found


def from_numpy(np_dtype: np.dtype) -> DType:
    """The DType of a NumPy dtype (fast path for the engine)."""
    d = _BY_NP.get(np_dtype)
    return d if d is not None else as_dtype(np_dtype)
