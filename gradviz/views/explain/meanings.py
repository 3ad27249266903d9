"""What each mark of the diagram means, in legend order (from the mark table)."""

from __future__ import annotations

from ..marks import MARKS

__all__ = ["LEGEND", "legend"]


#: Every mark the diagram can draw, with what it means (from the mark table,
#: static/marks.json, in legend order).
LEGEND: dict[str, str] = {name: m.meaning for name, m in MARKS.items()}


def legend(marks: list[str] | None = None) -> list[tuple[str, str]]:
    """(mark, meaning) pairs, for the given marks or for all of them.

    >>> legend(["seed", "cut"])
    [('seed', "seed (orange pentagon): a y's first gradient, ones or grad_ys"), ('cut', 'cut (red octagon, dashed edge): the flow stops, with why')]
    """
    keys = list(LEGEND) if marks is None else list(marks)
    unknown = [k for k in keys if k not in LEGEND]
    if unknown:
        raise ValueError(f"unknown legend mark {unknown[0]!r} (must be one of "
                         f"{', '.join(LEGEND)})")
    return [(k, LEGEND[k]) for k in keys]
