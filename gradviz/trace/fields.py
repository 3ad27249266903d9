"""Checks for the fields of a trace read from JSON, one field at a time.

Every check names the field it read (``trace.steps[3].grad.shape``) and what
it accepts, so a damaged file says where it is damaged.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..engine.graph import NOT_TEXT

def check_title(value: Any) -> str:
    """A title for a trace or a report: text a page can hold."""
    if not isinstance(value, str):
        raise TypeError(f"title: expected a string, got {type(value).__name__} {_short(value)}")
    if _SURROGATE.search(value):
        raise ValueError(f"title: {_short(value)} holds a lone surrogate, which is not text")
    return value


_NUMERIC_DTYPES = {"bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
                   "uint8"}


def _check_id(v: Any, expected: int, where: str) -> None:
    if type(v) is not int or v != expected:  # (True == 1, but is no id)
        raise ValueError(f"{where}: expected {expected}, got {_short(v)}")


def _is_int(a: Any) -> bool:
    return isinstance(a, int) and not isinstance(a, bool)


def _is_ints(a: Any) -> bool:
    return isinstance(a, list) and all(_is_int(x) for x in a)


_BOOL_ATTR = (lambda a: isinstance(a, bool), "true or false")
_INT_ATTR = (_is_int, "an integer")
_INTS_ATTR = (_is_ints, "a list of integers")
_PAIR_ATTR = (lambda a: _is_ints(a) and len(a) == 2 and min(a) > 0, "two positive integers")
_STR_ATTR = (lambda a: isinstance(a, str), "a string")
#: The attributes renderers read, per op type: (check, what it accepts).  Every
#: other attribute is carried as it is.
_ATTR_TYPES: dict[str, dict[str, tuple]] = {
    "MatMul": {"transpose_a": _BOOL_ATTR, "transpose_b": _BOOL_ATTR},
    **dict.fromkeys(("Sum", "Mean", "Max"), {
        "axis": (lambda a: a is None or _is_int(a) or _is_ints(a),
                 "null, an integer or a list of integers"),
        "keepdims": _BOOL_ATTR}),
    "Transpose": {"perm": _INTS_ATTR},
    "Cast": {"SrcT": _STR_ATTR, "DstT": _STR_ATTR},
    **dict.fromkeys(("ConcatV2", "Pack", "Unpack", "Split", "Softmax", "LogSoftmax",
                     "SoftmaxCrossEntropyWithLogits"), {"axis": _INT_ATTR}),
    **dict.fromkeys(("Reshape", "BroadcastTo"), {"shape": _INTS_ATTR}),
    **dict.fromkeys(("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool",
                     "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad"), {
        "ksize": _PAIR_ATTR, "strides": _PAIR_ATTR, "dilations": _PAIR_ATTR,
        "padding": (lambda a: a in ("SAME", "VALID", "EXPLICIT"),
                    '"SAME", "VALID" or "EXPLICIT"'),
        "pads": (lambda a: isinstance(a, list) and len(a) == 2 and all(
            _is_ints(p) and len(p) == 2 for p in a), "two [before, after] lists of integers"),
        "input_sizes": _INTS_ATTR, "filter_sizes": _INTS_ATTR, "orig_input_shape": _INTS_ATTR}),
}
_ATTR_DEPTH = 8  # how deeply an attribute's lists and objects may nest


def _attrs(v: Any, op_type: str, where: str) -> dict[str, Any]:
    attrs = _expect(v, dict, where)
    for name, (ok, accepted) in _ATTR_TYPES.get(op_type, {}).items():
        if name in attrs and not ok(attrs[name]):
            raise ValueError(f"{where}.{name}: expected {accepted}, got {_short(attrs[name])}")
    stack = [(attrs, 1)]
    while stack:  # not recursive: a hostile file may nest a thousand levels
        value, depth = stack.pop()
        for k in value if isinstance(value, dict) else ():
            _expect(k, str, where)
        for x in value.values() if isinstance(value, dict) else value:
            if isinstance(x, float) and not math.isfinite(x):  # JSON's NaN, or 1e999
                raise ValueError(f"{where}: {x} is not a JSON number (write \"nan\" or "
                                 "\"inf\" as strings)")
            if isinstance(x, str):
                _expect(x, str, where)
            if isinstance(x, (dict, list)):
                if depth >= _ATTR_DEPTH:
                    raise ValueError(f"{where}: nested more than {_ATTR_DEPTH} levels deep")
                stack.append((x, depth + 1))
    return attrs


def _expect(v: Any, typ: type, where: str) -> Any:
    ok = isinstance(v, typ) and not (typ is int and isinstance(v, bool))
    if not ok:
        raise ValueError(f"{where}: expected {_TYPE_WORDS.get(typ, typ.__name__)}, "
                         f"got {type(v).__name__} {_short(v)}")
    if typ is str and _SURROGATE.search(v):  # JSON's "\udfff": no text a page can hold
        raise ValueError(f"{where}: {_short(v)} holds a lone surrogate, which is not text")
    return v


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_MAX_TEXT = 1000  # the longest name or scope a loaded trace may have (the diagram draws it)


_TYPE_WORDS = {dict: "an object", list: "a list", str: "a string", int: "an integer",
               bool: "true or false"}


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _number(v: Any, where: str) -> float:
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{where}: expected a number, got {_short(v)}")
    try:
        return float(v)
    except OverflowError:  # an integer of 400 digits
        raise ValueError(f"{where}: {_short(v)} is beyond a float's range") from None


def _int_tuple(v: Any, where: str) -> tuple[int, ...]:
    v = _expect(v, list, where)
    for x in v:
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= _MAX_SIZE:
            raise ValueError(f"{where}: expected non-negative integers (below 2**63), "
                             f"got {_short(x)}")
    return tuple(v)


_MAX_SIZE = 2 ** 63 - 1  # the largest dimension (or count) an array can have
_MAX_RANK = 32  # the most dimensions a trace's array may have (NumPy allows 64)


def _shape(v: Any, where: str) -> tuple[int, ...]:
    shape = _int_tuple(v, where)
    if len(shape) > _MAX_RANK:
        raise ValueError(f"{where}: {len(shape)} dimensions; at most {_MAX_RANK} are accepted")
    return shape


def _count(v: Any, where: str) -> int:
    v = _expect(v, int, where)
    if not 0 <= v <= _MAX_SIZE:
        raise ValueError(f"{where}: expected a count (0 to 2**63 - 1), got {v}")
    return v


def _dtype(v: Any, where: str) -> str:
    v = _expect(v, str, where)
    if v not in _NUMERIC_DTYPES:
        raise ValueError(f"{where}: {_short(v)} is not a dtype a trace holds "
                         f"(one of {', '.join(sorted(_NUMERIC_DTYPES))})")
    return v


def _text(v: Any, where: str, empty: bool = False,
          what: tuple[str, str] = ("a name", "a name the diagram can draw")) -> str:
    """A name or an op type: text the diagram can draw (``empty``: "" is allowed).

    ``what``: what the text is, in the messages (when empty, when not so)."""
    v = _expect(v, str, where)
    if not v and not empty:
        raise ValueError(f"{where}: expected {what[0]}, got an empty string")
    if len(v) > _MAX_TEXT or NOT_TEXT.search(v):
        raise ValueError(f"{where}: {_short(v)} is not {what[1]} (at most "
                         f"{_MAX_TEXT} characters, no control characters)")
    return v


def _scope(v: Any, where: str) -> str:
    """A name scope: "" or names joined by "/" (the diagram draws one cluster per name)."""
    v = _text(v, where, empty=True)
    if v and not all(v.split("/")):
        raise ValueError(f"{where}: {_short(v)} is not a name scope (\"\" or names "
                         "joined by \"/\", none empty)")
    return v
