"""Tensors by name: as a student reads them, and as a formula writes them."""

from __future__ import annotations

import re
from collections import Counter

from ...trace import TensorInfo, Trace
from .formatting import format_number

__all__ = ["display_name", "gradient_target", "op_names", "op_name", "op_phrase"]


def display_name(t: TensorInfo, scoped: bool = False) -> str:
    """A tensor's name as a student reads it: ``:0`` and (unless ``scoped``) the scope dropped.

    Inside a drawn name scope the scope is said by the cluster around the
    node; elsewhere (results, leaves drawn outside) ``scoped=True`` keeps
    ``layer1/W`` apart from ``layer2/W``.

    >>> import numpy as np
    >>> from gradviz.trace import ArrayData, TensorInfo
    >>> t = TensorInfo(0, "layer1/MatMul:0", 0, "computed", "layer1", (2,), "float32",
    ...                ArrayData.of(np.zeros(2)))
    >>> display_name(t), display_name(t, scoped=True)
    ('MatMul', 'layer1/MatMul')
    """
    name = t.name
    if t.scope and not scoped and name.startswith(t.scope + "/"):
        name = name[len(t.scope) + 1:]
    if name.endswith(":0"):
        name = name[:-2]
    return name or f"tensor {t.id}"


def _name(trace: Trace, tid: int) -> str:
    return display_name(trace.tensors[tid])


# A use of a tensor that is several inputs of one op, as the formulas write it: "x (as input 0)".
_AS_INPUT = re.compile(r"(.*) \((as input \d+)\)")


def gradient_target(use: str, shape: tuple[int, ...], own_shape: tuple[int, ...]) -> str:
    """The name of the gradient an op sends an input: ``dL/db``, or ``dL/d(b broadcast)``
    while it still has the broadcast shape.

    ``use`` is the input as the formulas write it, ``shape`` the gradient's
    shape and ``own_shape`` the input's.  An input broadcast in the forward
    pass (b (2,) added to X (3,2)) gets a gradient in the broadcast shape, and
    only the broadcast reduction that follows sums it to ``dL/db``; until
    then it has a name of its own, so that no (3,2) array is called ``dL/db``.

    >>> gradient_target("b", (2,), (2,))
    'dL/db'
    >>> gradient_target("b", (3, 2), (2,))
    'dL/d(b broadcast)'
    >>> gradient_target("x (as input 1)", (3, 2), (2,))
    'dL/d(x broadcast, as input 1)'
    """
    if tuple(shape) == tuple(own_shape):
        return f"dL/d{use}"
    m = _AS_INPUT.fullmatch(use)
    name, which = (m.group(1), f", {m.group(2)}") if m else (use, "")
    return f"dL/d({name} broadcast{which})"


# A word of a formula: "grad", "b" in "b.T" or "a**(b-1)", but not "T" in "b.T".
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_PLAIN = re.compile(r"[A-Za-z_]\w*")


def _fill(template: str, names: dict[str, str]) -> str:
    """The template with each of its words that ``names`` knows replaced by its name."""
    return _WORD.sub(lambda m: names.get(m.group(), m.group()), template)


def _formula_names(trace: Trace, tids: list[int], taken: set[str]) -> dict[int, str]:
    """How a formula writes each of the tensors ``tids``: tensor id -> text.

    As the sentences write them (:func:`display_name`: no ``:0``, no scope),
    with the scope put back where two would read the same (``layer1/W`` and
    ``layer2/W``), never cut (a long formula wraps), and quoted when the name
    is not one plain word or is a word the formula already uses (a tensor
    called ``grad``).
    """
    tids = list(dict.fromkeys(tids))
    values = {t: _number(trace.tensors[t]) for t in tids}
    values = {t: v for t, v in values.items() if v is not None}
    full = {t: _name(trace, t) for t in tids if t not in values}
    same = Counter(full.values())
    full = {t: display_name(trace.tensors[t], scoped=True) if same[n] > 1 else n
            for t, n in full.items()}
    return {t: values[t] if t in values else _quoted(full[t], taken) for t in tids}


def _quoted(name: str, taken: set[str]) -> str:
    """A name as a formula writes it: quoted unless it is one plain word the formula is free to use."""
    return name if _PLAIN.fullmatch(name) and name not in taken else f"'{name}'"


def op_names(trace: Trace) -> list[str]:
    """Each op's name as the words say it, unique within the trace.

    An op with one output is called as that output is (the diagram shows them
    as one box), so ``Mul`` and ``Mul_1`` for two multiplications; the scope
    comes back where two would read the same.

    >>> import gradviz as gv
    >>> x = gv.constant(2.0, name="on_x")
    >>> op_names(gv.trace_gradients(x * x * x, x))
    ['Mul', 'Mul_1']
    """
    cache = trace.__dict__.get("_gv_op_names")
    if cache is not None:
        return cache

    def base(op, scoped: bool) -> str:
        if len(op.outputs) == 1:
            return display_name(trace.tensors[op.outputs[0]], scoped=scoped)
        name = op.name
        if op.scope and not scoped and name.startswith(op.scope + "/"):
            name = name[len(op.scope) + 1:]
        return name
    names = [base(op, False) for op in trace.ops]
    same = Counter(names)
    names = [base(op, True) if same[n] > 1 else n for op, n in zip(trace.ops, names)]
    same = Counter(names)
    names = [f"{n} (op {op.id})" if same[n] > 1 else n for op, n in zip(trace.ops, names)]
    trace.__dict__["_gv_op_names"] = names
    return names


def op_name(trace: Trace, op: int) -> str:
    """One op's name as the words say it (see :func:`op_names`)."""
    return op_names(trace)[op]


def _counts(trace: Trace) -> tuple[Counter, Counter]:
    """How many ops of each type, and tensors of each display name, the trace has
    (counted once per trace: the words of every step ask)."""
    counts = trace.__dict__.get("_gv_name_counts")
    if counts is None:
        counts = (Counter(o.type for o in trace.ops),
                  Counter(display_name(t) for t in trace.tensors))
        trace.__dict__["_gv_name_counts"] = counts
    return counts


def _type_is_ambiguous(trace: Trace, op: int) -> bool:
    """Whether the op's type alone could mean another op of the trace (so the words
    name it: "Mul backward (Mul_1)")."""
    info = trace.ops[op]
    return op_name(trace, op) != info.type and _counts(trace)[0][info.type] > 1


#: Ops written as the expression they compute, where it is short: ``Mul = x * W``.
_SYMBOLS = {"Mul": "*", "Add": "+", "AddV2": "+", "Sub": "-", "RealDiv": "/", "MatMul": "@",
            "Pow": "**"}
#: Inputs longer than this make the expression too long to help.
_EXPRESSION_NAME_MAX = 12


def op_phrase(trace: Trace, op: int) -> str:
    """An op as a sentence names it: its name, and what it computes when that is short.

    >>> import gradviz as gv
    >>> x = gv.constant(2.0, name="x")
    >>> tr = gv.trace_gradients(x * x * x, x)
    >>> op_phrase(tr, 0), op_phrase(tr, 1)
    ('Mul = x * x', 'Mul_1 = Mul * x')
    """
    info = trace.ops[op]
    name = op_name(trace, op)
    sym = _SYMBOLS.get(info.type)
    if sym is None or len(info.inputs) != 2:
        return name
    a, b = (_number(trace.tensors[t]) or _unique_name(trace, t) for t in info.inputs)
    # too long to help, or a scope's "/" that would read as a division
    if max(len(a), len(b)) > _EXPRESSION_NAME_MAX or "/" in a + b:
        return name
    return f"{name} = {a} {sym} {b}"


def _unique_name(trace: Trace, tid: int) -> str:
    """A tensor's name that no other tensor of the trace has: an op's only output is
    called as its op is (:func:`op_names`); a leaf gets its scope back where needed."""
    t = trace.tensors[tid]
    if t.op is not None and len(trace.ops[t.op].outputs) == 1:
        return op_name(trace, t.op)
    name = display_name(t)
    return display_name(t, scoped=True) if _counts(trace)[1][name] > 1 else name




#: The engine's own name for a constant made from a Python number (`0.5 * x`).
_AUTO_CONST = re.compile(r"Const(_\d+)?")


def _number(t: TensorInfo) -> str | None:
    """A Python-number constant by its value, e.g. ``2`` in ``Sub**(2-1)``; else None."""
    if t.kind != "constant" or t.shape != () or not _AUTO_CONST.fullmatch(display_name(t)):
        return None
    text = format_number(t.value.values.item())
    return f"({text})" if text.startswith("-") else text
