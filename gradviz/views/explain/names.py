"""Tensors by name: as a student reads them, and as a formula writes them."""

from __future__ import annotations

import re
from collections import Counter

from ...trace import TensorInfo, Trace
from .formatting import format_number

__all__ = ["display_name"]


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


#: A name longer than this is cut in a formula, as the diagram's labels cut it.
_FORMULA_NAME_MAX = 28
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
    ``layer2/W``), cut after ``_FORMULA_NAME_MAX`` characters like the
    diagram's labels (unless that makes two read the same), and quoted when
    the name is not one plain word or is a word the formula already uses
    (a tensor called ``grad``).
    """
    tids = list(dict.fromkeys(tids))
    values = {t: _number(trace.tensors[t]) for t in tids}
    values = {t: v for t, v in values.items() if v is not None}
    full = {t: _name(trace, t) for t in tids if t not in values}
    same = Counter(full.values())
    full = {t: display_name(trace.tensors[t], scoped=True) if same[n] > 1 else n
            for t, n in full.items()}

    def spell(n: str, cut: bool) -> str:
        quote = not _PLAIN.fullmatch(n) or n in taken
        if cut and len(n) > _FORMULA_NAME_MAX:
            n = n[:_FORMULA_NAME_MAX - 1] + "\u2026"
        return f"'{n}'" if quote else n

    short = {t: spell(n, True) for t, n in full.items()}
    same = Counter(short.values())
    return {t: values[t] if t in values else spell(full[t], same[short[t]] == 1) for t in tids}


#: The engine's own name for a constant made from a Python number (`0.5 * x`).
_AUTO_CONST = re.compile(r"Const(_\d+)?")


def _number(t: TensorInfo) -> str | None:
    """A Python-number constant by its value, e.g. ``2`` in ``Sub**(2-1)``; else None."""
    if t.kind != "constant" or t.shape != () or not _AUTO_CONST.fullmatch(display_name(t)):
        return None
    text = format_number(t.value.values.item())
    return f"({text})" if text.startswith("-") else text
