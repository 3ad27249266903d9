"""Numbers, shapes and arrays as text: how the sentences, formulas and labels write them."""

from __future__ import annotations

import contextlib
import contextvars
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...trace import ArrayData

__all__ = ["format_shape", "format_number", "format_array", "preview_lines", "marked_values",
           "value_spans"]

# While set, format_array wraps the values it writes in these two private-use
# characters, so that a viewer can find them in a sentence and hide them until
# the reader asks (see marked_values and value_spans).
_MARKING = contextvars.ContextVar("gv_marking_values", default=False)
_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKED = re.compile(f"{_OPEN}(.*?){_CLOSE}", re.S)


@contextlib.contextmanager
def marked_values() -> Iterator[None]:
    """Within it, the words mark each array's values they write (see :func:`value_spans`)."""
    token = _MARKING.set(True)
    try:
        yield
    finally:
        _MARKING.reset(token)


def value_spans(text: str) -> tuple[str, list[int]]:
    """Marked ``text`` as plain text, and where its values are: ``[start, end, start,
    end, ...]``, counted in UTF-16 code units, as a browser's strings count.

    >>> with marked_values():
    ...     text = f"ready: {format_array(ArrayData.of(np.array([2.0, 4.0])))}."
    >>> value_spans(text)
    ('ready: [2, 4].', [7, 13])
    >>> value_spans("no values")
    ('no values', [])
    """
    plain: list[str] = []
    spans: list[int] = []
    at = 0  # UTF-16 units written so far
    last = 0
    for m in _MARKED.finditer(text):
        before = text[last:m.start()]
        plain += [before, m.group(1)]
        at += _utf16(before)
        spans += [at, at + _utf16(m.group(1))]
        at += _utf16(m.group(1))
        last = m.end()
    plain.append(text[last:])
    return "".join(plain), spans


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def format_shape(shape: tuple[int, ...] | list[int]) -> str:
    """A shape as the diagram and the sentences write it; a scalar is called one.

    >>> format_shape(()), format_shape((3,)), format_shape((2, 1))
    ('scalar', '(3,)', '(2,1)')
    """
    shape = tuple(shape)
    if not shape:
        return "scalar"
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ",".join(str(d) for d in shape) + ")"


def format_number(v: Any, digits: int = 4) -> str:
    """One number, short: 4 significant digits, ``nan``/``inf`` spelled out.

    >>> format_number(12.376228), format_number(3), format_number(float("nan"))
    ('12.38', '3', 'nan')
    >>> format_number(-0.0), format_number(1e-7)
    ('0', '1e-07')
    """
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f == 0:
        return "0"
    if f == int(f) and abs(f) < 1e6:
        return str(int(f))
    return f"{f:.{digits}g}"


#: A value this small next to the largest magnitude in its array is float
#: noise (float32 keeps about 7 digits; a sum of n terms loses a few more)
#: and prints as 0: a gradient's mean of -2.484e-09 beside a max of 0.176 is 0.
NOISE = 1e-6


def _magnitude(values: np.ndarray) -> float:
    """The largest finite magnitude among ``values`` (0 when there is none)."""
    if values.dtype.kind != "f" or not values.size:
        return 0.0
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else 0.0


def _quiet(v: Any, scale: float) -> Any:
    """``v``, or 0.0 when it is float noise next to ``scale`` (see :data:`NOISE`).

    >>> _quiet(-2.484e-09, 0.299), _quiet(0.176, 0.299), _quiet(3, 0.0)
    (0.0, 0.176, 3)
    """
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and abs(v) <= NOISE * scale:
        return 0.0
    return v


def _nested(values: np.ndarray, scale: float | None = None) -> str:
    if scale is None:
        scale = _magnitude(values)
    if values.ndim == 0:
        return format_number(_quiet(values.item(), scale))
    return "[" + ", ".join(_nested(v, scale) for v in values) + "]"


def preview_lines(a: ArrayData | None, max_elems: int = 6, max_rows: int = 4) -> list[str]:
    """A few short lines showing an array: every value when it is small, else a summary.

    Matrices are written one row per line, so a 2x2 gradient reads like one.
    A value that is float noise next to the array's largest prints as 0.

    >>> preview_lines(ArrayData.of(np.array([[1.0, 2.0], [3.0, 4.0]])))
    ['[[1, 2],', ' [3, 4]]']
    >>> preview_lines(ArrayData.of(np.arange(100.0)))
    ['min 0 mean 49.5 max 99']
    >>> preview_lines(ArrayData.of(np.array([0.5, 3e-9, -0.25])))
    ['[0.5, 0, -0.25]']
    """
    if a is None:
        return ["None"]
    if a.values is not None and a.size <= max_elems:
        v = a.values
        if v.ndim == 2 and 1 < v.shape[0] <= max_rows and v.shape[1] > 1:
            scale = _magnitude(v)
            rows = [_nested(r, scale) for r in v]
            return ["[" + rows[0] + ","] + [" " + r + "," for r in rows[1:-1]] + [" " + rows[-1] + "]"]
        return [_nested(v)]
    return [format_array(a, max_elems=max_elems)]


def format_array(a: ArrayData | None, max_elems: int = 6) -> str:
    """An array on one line: its values when small, else ``min .. mean .. max``.

    A mean (or min, or max) that is float noise next to the larger of ``|min|``
    and ``|max|`` prints as 0: a centred gradient's mean is 0, not ``-2.484e-09``.

    >>> format_array(ArrayData.of(np.array([2.0, 4.0])))
    '[2, 4]'
    >>> format_array(ArrayData.of(np.full((3, 3), 2.0)))
    'min 2 mean 2 max 2'
    >>> format_array(ArrayData.of(np.array([-0.299, 0.176, 0.123] * 3) - 3.3e-10))
    'min -0.299 mean 0 max 0.176'
    """
    if a is None:
        return "None"
    if a.values is not None and a.size <= max_elems:
        text = _nested(a.values)
    elif a.min is None:
        return "no finite values" if a.size else "empty"
    else:
        bad = " (has nan/inf)" if a.nonfinite else ""
        scale = max(abs(a.min), abs(a.max))
        low, mean, high = (format_number(_quiet(v, scale)) for v in (a.min, a.mean, a.max))
        text = f"min {low} mean {mean} max {high}{bad}"
    return f"{_OPEN}{text}{_CLOSE}" if _MARKING.get() else text


def _sh(a: ArrayData | None) -> str:
    """An array's shape as text; ``?`` where there is no array."""
    return "?" if a is None else format_shape(a.shape)


def _named_shape(name: str, shape: tuple[int, ...]) -> str:
    """A name with its shape, as a sentence says it: ``X (2,1)``, ``W (scalar)``."""
    return f"{name} (scalar)" if not tuple(shape) else f"{name} {format_shape(shape)}"


def _small(a: ArrayData | None) -> bool:
    """Whether the words write the array's values out (in full, after its shapes)."""
    return a is not None and a.values is not None and a.size <= 4
