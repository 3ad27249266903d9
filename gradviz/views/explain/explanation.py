"""The record of a step's words, and the phrases every step kind's words share."""

from __future__ import annotations

from dataclasses import dataclass

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


def _pass_note(trace: Trace, step: Step) -> str:
    if trace.passes > 1:
        return f" (pass {step.pass_index + 1} of {trace.passes})"
    return ""


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _and(items: list[str]) -> str:
    """A list as a sentence says it: "X, W and b"."""
    if len(items) < 2:
        return items[0] if items else "no inputs"
    return ", ".join(items[:-1]) + " and " + items[-1]
