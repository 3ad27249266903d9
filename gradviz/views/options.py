"""The view options: one set, checked in one place, for every renderer of a trace.

``to_svg``, ``to_html``, ``export_html`` and ``show`` all take the same
keyword options, with the same meaning:

``rankdir``
    the direction the forward pass runs: ``"TB"`` (default), ``"LR"``, ``"BT"``, ``"RL"``.
``collapse``, ``compact``
    what the diagram draws as one node (see :func:`gradviz.views.diagram.to_dot`).
``values``
    which values are shown: ``"all"`` (default, or ``True``), ``"gradient"``,
    ``"forward"`` or ``"none"`` (or ``False``).  A viewer (the widget, a
    report) hides the others everywhere, in the diagram, the step's sentence
    and formula and the final gradients, until the reader ticks them on; a
    bare SVG leaves them out.
``start_step``
    the step shown first (0-based; a negative step counts from the end).  A
    bare SVG shows the state after it; without it, the whole pass done.
``bookkeeping``
    show the viewer's bookkeeping panel (pass, ops visited, gradient bytes
    held): ``True`` (default) or ``False``.  A bare SVG has none.
``font_size``
    the size, in CSS px, of the diagram's smallest text: a projector wants 20
    or more.  ``None`` (default) draws it at its natural size.
``practice``
    predict, then see: ``False`` (default) or ``True``.  A viewer asks each
    step's question (:mod:`gradviz.views.practice`) and keeps the values the
    step produces hidden until it is answered, revealed or skipped, and
    sums up at the end; a bare SVG leaves the gradient values out, a
    worksheet to fill in.
``source``
    show each op's line of code, and the file or notebook cell it is in:
    ``True`` (default) or ``False``.  A trace holds them as they were
    recorded (``gv.record_source``); ``source=False`` leaves every line of
    code and file path out of what is rendered, for a report handed out
    (:meth:`gradviz.Trace.without_source`).

>>> opts = view_options("to_html", rankdir="lr", values=False, start_step=-1)
>>> opts.rankdir, opts.values, opts.start_step
('LR', 'none', -1)
>>> view_options("to_html", fontsize=20)
Traceback (most recent call last):
...
TypeError: to_html() got an unknown option 'fontsize' (did you mean 'font_size'?); accepted: rankdir, collapse, compact, values, start_step, bookkeeping, font_size, practice, source
"""

from __future__ import annotations

import difflib
import math
import operator
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ViewOptions", "view_options", "shown", "resolve_step", "VIEW_OPTIONS", "RANKDIRS", "VALUES",
           "FONT_SIZE_RANGE"]

#: The options every renderer takes, in the order the error lists them.
VIEW_OPTIONS = ("rankdir", "collapse", "compact", "values", "start_step", "bookkeeping",
                "font_size", "practice", "source")

#: Accepted values of ``rankdir``: the direction the forward pass runs.
RANKDIRS = ("TB", "LR", "BT", "RL")

#: What ``values`` accepts (besides True, "all", and False, "none").
VALUES = ("all", "gradient", "forward", "none")

#: ``font_size`` in CSS px: from small print to a lecture hall's back row.
FONT_SIZE_RANGE = (6.0, 72.0)


@dataclass(frozen=True)
class ViewOptions:
    """The view options, checked (see the module's docstring for what each means)."""

    rankdir: str = "TB"
    collapse: Any = None
    compact: bool = True
    values: str = "all"
    start_step: int | None = None
    bookkeeping: bool = True
    font_size: float | None = None
    practice: bool = False
    source: bool = True

    @property
    def layout(self) -> dict[str, Any]:
        """The options that change the diagram's layout (a viewer lays it out with values)."""
        return {"rankdir": self.rankdir, "collapse": self.collapse, "compact": self.compact}

    @property
    def shows_gradients(self) -> bool:
        return self.values in ("all", "gradient")

    @property
    def shows_forward(self) -> bool:
        return self.values in ("all", "forward")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def view_options(renderer: str, **options: Any) -> ViewOptions:
    """``options`` checked for ``renderer`` (its name, for the messages).

    An option no renderer knows is a ``TypeError`` naming the accepted ones; a
    known option with a value it cannot take is a ``ValueError`` saying what
    it accepts.  (``collapse`` is checked with the diagram's other options, by
    :func:`gradviz.views.diagram.plan._options`, which knows the trace's scopes.)
    """
    unknown = sorted(set(options) - set(VIEW_OPTIONS))
    if unknown:
        raise TypeError(_unknown_message(renderer, unknown[0]))
    opts = ViewOptions(**options)
    return ViewOptions(
        rankdir=_rankdir(opts.rankdir),
        collapse=opts.collapse,
        compact=_flag("compact", opts.compact),
        values=_values(opts.values),
        start_step=_step(opts.start_step),
        bookkeeping=_flag("bookkeeping", opts.bookkeeping),
        font_size=_font_size(opts.font_size),
        practice=_flag("practice", opts.practice),
        source=_flag("source", opts.source),
    )


def shown(trace: Any, opts: ViewOptions) -> Any:
    """The trace a renderer shows: without its lines of code when ``opts.source`` is False."""
    return trace if opts.source else trace.without_source()


def _unknown_message(renderer: str, name: str) -> str:
    close = difflib.get_close_matches(name, VIEW_OPTIONS, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"{renderer}() got an unknown option {name!r}{hint}; "
            f"accepted: {', '.join(VIEW_OPTIONS)}")


def _rankdir(value: Any) -> str:
    if not isinstance(value, str) or value.upper() not in RANKDIRS:
        raise ValueError(f"unknown rankdir: {value!r} (must be one of {', '.join(RANKDIRS)})")
    return value.upper()


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def _values(value: Any) -> str:
    if value is True:
        return "all"
    if value is False:
        return "none"
    if isinstance(value, str) and value.lower() in VALUES:
        return value.lower()
    raise ValueError(f"values must be one of {', '.join(map(repr, VALUES))} "
                     f"(or True for 'all', False for 'none'), got {value!r}")


def _step(value: Any) -> int | None:
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise ValueError(f"start_step must be an integer step number (0-based; "
                         f"negative counts from the end), got {value!r}") from None


def _font_size(value: Any) -> float | None:
    if value is None:
        return None
    lo, hi = FONT_SIZE_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not lo <= value <= hi:
        raise ValueError(f"font_size must be a number of px from {lo:g} to {hi:g} "
                         f"(or None for the natural size), got {value!r}")
    return float(value)


def resolve_step(start_step: int | None, n_steps: int, default: int | None) -> int | None:
    """``start_step`` as an index into ``n_steps`` steps (``default`` when None).

    >>> resolve_step(-1, 4, 0), resolve_step(None, 4, 0), resolve_step(None, 0, 0)
    (3, 0, 0)
    >>> resolve_step(4, 4, 0)
    Traceback (most recent call last):
    ...
    ValueError: start_step 4 is out of range: the trace has 4 steps (0..3, or -4..-1 from the end)
    """
    if start_step is None:
        return default
    if not -n_steps <= start_step < n_steps:
        where = f" (0..{n_steps - 1}, or -{n_steps}..-1 from the end)" if n_steps else ""
        raise ValueError(f"start_step {start_step} is out of range: the trace has "
                         f"{n_steps} steps{where}")
    return start_step % n_steps
