"""A sparse gradient, as TensorFlow's ``tf.IndexedSlices``: the rows of a tensor a gather read.

An embedding table of 10,000 rows, looked up for a batch of 6 tokens, gets a
gradient in 6 rows only. TensorFlow's gather gives it as ``values`` (one slice
per index) and ``indices`` (which row each is), with the table's
``dense_shape``; so does gradviz's. A row that appears twice gets two slices,
which add when the gradient is made dense (``gv.convert_to_tensor``). Several
sparse gradients of one tensor aggregate as TensorFlow aggregates them: their
slices concatenated; with a dense one among them, the sum is dense.

>>> import gradviz as gv
>>> E = gv.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="E")
>>> with gv.GradientTape() as tape:
...     y = gv.reduce_sum(gv.gather(E, [2, 0, 2]))
>>> g = tape.gradient(y, E)
>>> g.indices.numpy().tolist(), g.values.shape, g.dense_shape
([2, 0, 2], (3, 2), (3, 2))
>>> gv.convert_to_tensor(g).numpy().tolist()
[[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes
from .graph import Tensor, convert_to_tensor

__all__ = ["IndexedSlices"]


class IndexedSlices:
    """``values[k]`` is the slice at row ``indices[k]`` of a tensor of ``dense_shape``;
    rows not listed are zero, and a row listed twice gets the sum of its slices."""

    __slots__ = ("values", "indices", "dense_shape", "_dense")

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None) -> None:
        self.values = convert_to_tensor(values)
        self.indices = convert_to_tensor(indices)
        if self.indices._dtype.kind not in "iu" or self.indices.ndim != 1:
            raise TypeError(f"IndexedSlices: indices must be a vector of integers, got "
                            f"{self.indices.name} of dtype {self.indices.dtype.name} and "
                            f"shape {self.indices.shape}")
        if self.values.ndim < 1 or self.values.shape[0] != self.indices.shape[0]:
            raise ValueError(f"IndexedSlices: values must have one slice per index: "
                             f"{self.indices.shape[0]} indices, values of shape "
                             f"{self.values.shape}")
        if dense_shape is None:
            rows = int(self.indices._value.max()) + 1 if self.indices.shape[0] else 0
            dense_shape = (rows, *self.values.shape[1:])
        if isinstance(dense_shape, Tensor):
            dense_shape = dense_shape._value.tolist()
        self.dense_shape = tuple(int(d) for d in dense_shape)
        rows = self.indices._value
        if rows.size and (rows.min() < 0 or rows.max() >= self.dense_shape[0]):
            raise ValueError(f"IndexedSlices: indices must be rows of the dense shape "
                             f"{self.dense_shape}, 0 to {self.dense_shape[0] - 1}; got "
                             f"{rows.min()} to {rows.max()}")
        if self.dense_shape[1:] != self.values.shape[1:]:
            raise ValueError(f"IndexedSlices: values of shape {self.values.shape} are not "
                             f"slices of a tensor of shape {self.dense_shape}")
        self._dense: np.ndarray | None = None

    @classmethod
    def of_rows(cls, values: Tensor, indices: Tensor, dense_shape: tuple[int, ...]
                ) -> IndexedSlices:
        """One the engine makes from rows it knows are right (a gather's, already checked
        in range): without the checks a user's arguments need."""
        made = cls.__new__(cls)
        made.values, made.indices, made.dense_shape, made._dense = (
            values, indices, dense_shape, None)
        return made

    # what a tensor of dense_shape would say
    @property
    def dtype(self) -> dtypes.DType:
        return self.values.dtype

    @property
    def _dtype(self) -> np.dtype:
        return self.values._dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dense_shape

    @property
    def name(self) -> str:
        return self.values.name

    @property
    def _value(self) -> np.ndarray:
        """The dense array (each row's slices added), worked out once: what the walk's
        bookkeeping and a trace read."""
        if self._dense is None:
            self._dense = dense_array(self.values._value, self.indices._value, self.dense_shape)
        return self._dense

    def rows(self) -> list[int]:
        """The row of each slice, in order (a row repeats where it was gathered twice)."""
        return [int(i) for i in self.indices._value.tolist()]

    def __neg__(self) -> IndexedSlices:
        from .ops import negative
        return IndexedSlices(negative(self.values), self.indices, self.dense_shape)

    def __repr__(self) -> str:
        return (f"IndexedSlices(indices={self.indices._value.tolist()!r}, "
                f"values=<{self.values.dtype.name} {self.values.shape}>, "
                f"dense_shape={list(self.dense_shape)!r})")

    def __getattr__(self, name: str) -> Any:
        if name in ("numpy", "__array__"):
            raise AttributeError(
                f"'IndexedSlices' object has no attribute {name!r}: it is a sparse gradient "
                "(the rows a gather read, as in TensorFlow); gv.convert_to_tensor(g) makes "
                "it a dense tensor, or read g.values and g.indices")
        raise AttributeError(f"'IndexedSlices' object has no attribute {name!r}")


def dense_array(values: np.ndarray, indices: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The dense array of ``shape`` whose row ``indices[k]`` gets ``values[k]`` added."""
    out = np.zeros(shape, values.dtype)
    np.add.at(out, indices, values)
    return out
