"""The record of a step's words, and the phrases every step kind's words share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...trace import Step, Trace
from .formula import Formula

__all__ = ["Explanation"]


@dataclass(frozen=True)
class Explanation:
    """What one step did, in words."""

    title: str  # a short heading, e.g. "MatMul backward"
    sentence: str  # one or two plain sentences, specific to the op and shapes
    formula: str  # the maths with shapes, e.g. "dL/dX = grad @ W.T: (2,3) @ (3,2) -> (2,2)"
    # The same maths as formulas that run (``formula`` is their text, joined by "; "),
    # for the steps whose maths is NumPy: each names the step's arrays it uses.
    formulas: tuple[Formula, ...] = ()

    def __iter__(self):
        # Unpacks as (title, sentence, formula).
        return iter((self.title, self.sentence, self.formula))


def _once_per_step(trace: Trace, s: Step, key: str, make: Callable[[Trace, Any], Any]) -> Any:
    """``make(trace, s)``, worked out once per step of a trace and kept in the trace under
    ``key`` (a step object from another trace is worked out, never kept under this one)."""
    cache = trace.__dict__.setdefault(key, {})
    made = cache.get(s.index)
    if made is None:
        made = make(trace, s)
        if s.index < len(trace.steps) and trace.steps[s.index] is s:
            cache[s.index] = made
    return made


def _pass_note(trace: Trace, step: Step) -> str:
    if trace.passes > 1:
        return f" (pass {step.pass_index + 1} of {trace.passes})"
    return ""


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


#: A list longer than this is said by its first :data:`FIRST_FEW` and a count: an
#: ``add_n`` of 1,000 tensors reads "x0, x1, x2 and 997 more", in its sentence,
#: its formulas and its practice alike.
WIDE = 8
FIRST_FEW = 3


def _and_some(items: list[str], count: int | None = None, what: str = "more") -> str:
    """:func:`_and`, or for more than :data:`WIDE` items the first few and how many more.
    ``count`` is how many there are, where ``items`` gives only the first few.

    >>> _and_some(["a", "b"]), _and_some([f"x{i}" for i in range(4)], count=1000)
    ('a and b', 'x0, x1, x2 and 997 more')
    """
    count = len(items) if count is None else count
    if count <= WIDE:
        return _and(items)
    return _and([*items[:FIRST_FEW], f"{count - FIRST_FEW} {what}"])


def _and(items: list[str]) -> str:
    """A list as a sentence says it: "X, W and b"."""
    if len(items) < 2:
        return items[0] if items else "no inputs"
    return ", ".join(items[:-1]) + " and " + items[-1]
