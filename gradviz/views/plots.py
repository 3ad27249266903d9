"""Plots where a picture says it better: arrays, gradient norms, memory, Jacobian cost.

Every function returns a :class:`matplotlib.figure.Figure` and draws nothing
as a side effect: no pyplot, no global state, no ``show()``.  In a notebook
with ``%matplotlib inline`` a figure as the last expression of a cell is
displayed; elsewhere save it with :func:`to_svg` (deterministic bytes) or
``fig.savefig(...)``.

>>> import numpy as np
>>> fig = heatmap(np.array([[21.0, 30.0], [21.0, 30.0]]), title="d sum(c) / da")
>>> fig.axes[0].get_title()
'd sum(c) / da'
>>> to_svg(fig) == to_svg(fig)
True
"""

from __future__ import annotations

import io
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib import colormaps, rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..trace import Trace

__all__ = [
    "heatmap",
    "gradient_norms",
    "memory_over_pass",
    "jacobian_vs_vjp_cost",
    "to_svg",
    "HEATMAP_MAX_VALUES",
]

#: The most cells :func:`heatmap` prints values into; larger arrays are drawn
#: as colours only (and arrays of more than 100 times this are refused).
HEATMAP_MAX_VALUES = 144

# A fixed palette, so the same data always gets the same colours.
_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


# ---------------------------------------------------------------- helpers


def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """A fresh figure with one axes, or the figure that ``ax`` belongs to."""
    if ax is None:
        fig = Figure(figsize=figsize, layout="constrained")
        return fig, fig.add_subplot()
    if not isinstance(ax, Axes):
        raise ValueError(f"ax: expected a matplotlib Axes or None, got {type(ax).__name__}")
    return ax.get_figure(root=True), ax


def _settle(fig: Figure, owned: bool) -> Figure:
    """Fix the layout of a figure this module made, so every drawing is the same.

    A constrained layout keeps nudging things on each draw (more so with a
    colour bar in an inset): it is run until it settles, then switched off.
    A figure the caller passed in (through ``ax``) is left to the caller.
    """
    if owned:
        for _ in range(3):
            fig.draw_without_rendering()
        fig.set_layout_engine("none")
    return fig


def _check_title(title: Any) -> str | None:
    if title is not None and not isinstance(title, str):
        raise ValueError(f"title: expected a str or None, got {type(title).__name__}")
    return title


def _numbers(values: Any, what: str) -> np.ndarray:
    """A 1-D float array from a sequence of real numbers, or a clear ValueError."""
    if isinstance(values, (str, bytes, Mapping)):
        raise ValueError(f"{what}: expected a sequence of numbers, got {type(values).__name__}")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a sequence of numbers, got {_short(values)}") from None
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a flat sequence of numbers, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{what}: the sequence is empty (give at least one number)")
    return arr


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 50 else r[:47] + "..."


def _format_bytes(n: float) -> str:
    """Bytes in a short decimal unit, as the step-through viewer writes them.

    >>> _format_bytes(12), _format_bytes(2048), _format_bytes(3_000_000)
    ('12 B', '2.05 kB', '3 MB')
    """
    for unit, size in (("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def to_svg(fig: Figure) -> str:
    """The figure as SVG text, byte-for-byte the same every time it is drawn.

    Element ids come from a fixed hash salt, the metadata carries no date and
    the layout is settled before saving, so two figures drawn from the same
    data give the same bytes.

    >>> fig = Figure(figsize=(2, 1)); _ = fig.add_subplot().plot([0, 1], [1, 0])
    >>> svg = to_svg(fig)
    >>> svg.startswith("<?xml") and svg == to_svg(fig) and "<dc:date>" not in svg
    True
    """
    if not isinstance(fig, Figure):
        raise ValueError(f"fig: expected a matplotlib Figure, got {type(fig).__name__}")
    # A constrained layout moves things by a few micro-points on its first
    # draws (at the SVG's 72 dpi) before it settles: draw until two drawings
    # agree, so every call, on a fresh figure or on one drawn before, gives the
    # same bytes.
    previous = None
    with rc_context({"svg.hashsalt": "gradviz", "svg.fonttype": "path"}):
        for _ in range(6):
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata={"Date": None})
            svg = buf.getvalue()
            if svg == previous:
                break
            previous = svg
    return svg


# ---------------------------------------------------------------- heatmap


def heatmap(array: Any, title: str | None = None, *, ax: Axes | None = None,
            values: bool | None = None, digits: int = 4,
            row_labels: Sequence[str] | None = None,
            col_labels: Sequence[str] | None = None) -> Figure:
    """A small array as coloured cells with its values printed in them.

    The colours diverge around zero (blue negative, red positive, white 0),
    so the sign of a gradient is seen at a glance.  ``array`` is anything
    NumPy reads (a gradviz tensor too) with at most 2 dimensions: a vector
    is drawn as one row, a scalar as one cell.  Values are printed when the
    array has at most :data:`HEATMAP_MAX_VALUES` elements (``values=`` forces
    it either way).  Draws into ``ax`` when given, else a new figure.

    >>> fig = heatmap([[573.0, 816.0], [1295.0, 1844.0]], title="dL/da")
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['573', '816', '1295', '1844']
    >>> heatmap(np.zeros((2, 2, 2)))
    Traceback (most recent call last):
    ...
    ValueError: heatmap: expected a scalar, vector or matrix, got 3 dimensions (shape (2, 2, 2)); reshape it first
    """
    title = _check_title(title)
    try:
        a = np.asarray(array)
    except (TypeError, ValueError) as e:
        raise ValueError(f"heatmap: cannot read {_short(array)} as an array ({e})") from None
    if a.dtype.kind not in "biuf":
        raise ValueError(f"heatmap: expected numbers, got an array of dtype {a.dtype}")
    if a.ndim > 2:
        raise ValueError(f"heatmap: expected a scalar, vector or matrix, got {a.ndim} dimensions "
                         f"(shape {a.shape}); reshape it first")
    if a.size == 0:
        raise ValueError(f"heatmap: the array is empty (shape {a.shape})")
    if a.size > 100 * HEATMAP_MAX_VALUES:
        raise ValueError(f"heatmap: {a.size} values is too many to look at cell by cell "
                         f"(at most {100 * HEATMAP_MAX_VALUES}); plot a slice or a summary")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits: expected a positive integer, got {digits!r}")
    m = a.astype(np.float64).reshape((1, -1) if a.ndim < 2 else a.shape)
    for labels, n, what in ((row_labels, m.shape[0], "row_labels"),
                            (col_labels, m.shape[1], "col_labels")):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{what}: {len(labels)} labels for {n} {what[:3]}s")
    finite = m[np.isfinite(m)]
    vmax = float(np.abs(finite).max()) if finite.size else 0.0
    vmax = vmax or 1.0  # an all-zero array is drawn white, not as a division by zero
    rows, cols = m.shape
    # square cells of about 0.6 inch (smaller for bigger arrays), plus room for
    # the row labels, the colour bar and the title
    cell = max(0.25, min(0.6, 9.0 / cols, 7.0 / rows))
    label_width = 0.08 * max((len(str(t)) for t in row_labels), default=0) if row_labels else 0.3
    owned = ax is None
    fig, ax = _new_axes(ax, (max(2.8, cols * cell + label_width + 1.2), rows * cell + 0.9))
    cmap = colormaps["RdBu_r"].with_extremes(bad="#bbbbbb")  # NaN/Inf cells in grey
    image = ax.imshow(np.ma.masked_invalid(m), cmap=cmap, vmin=-vmax, vmax=vmax,
                      aspect="equal", interpolation="nearest")  # square cells: shapes read true
    show_values = a.size <= HEATMAP_MAX_VALUES if values is None else bool(values)
    if show_values:
        for (i, j), v in np.ndenumerate(m):
            dark = math.isfinite(v) and abs(v) > 0.6 * vmax
            ax.text(j, i, _cell_text(v, digits), ha="center", va="center", fontsize=9,
                    color="white" if dark else "#1f2328")
    ax.set_xticks(range(cols), labels=list(col_labels) if col_labels is not None else None)
    ax.set_yticks(range(rows), labels=list(row_labels) if row_labels is not None else None)
    if a.ndim < 2:
        ax.set_yticks([])  # a vector's single row needs no number
    if cols == 1 and col_labels is None:
        ax.set_xticks([])  # nor does a column vector's single column
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    # a colour bar as tall as the cells (not the whole panel) and about a third
    # of a cell wide, so a one-row array does not get a bar three times its height
    cax = ax.inset_axes([1 + 0.15 / cols, 0, 0.3 / max(cols, 2), 1])
    fig.colorbar(image, cax=cax)
    cax.tick_params(labelsize=8)
    ax.set_title(title if title is not None else f"shape {a.shape} {a.dtype}", fontsize=10)
    return _settle(fig, owned)


def _cell_text(v: float, digits: int) -> str:
    """One cell's value: ``digits`` significant digits, ints without a point.

    >>> _cell_text(12.376228, 4), _cell_text(30.0, 4), _cell_text(float("nan"), 4)
    ('12.38', '30', 'nan')
    """
    if not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if v == int(v) and abs(v) < 10**digits:
        return str(int(v))
    return f"{v:.{digits}g}"


# ---------------------------------------------------------------- gradient norms


def gradient_norms(history: Mapping[str, Sequence[float]], *, steps: Sequence[float] | None = None,
                   log: bool = True, title: str | None = "Gradient norm per parameter",
                   ax: Axes | None = None, vanishing: float | None = None,
                   exploding: float | None = None) -> Figure:
    """Each parameter's gradient norm over training steps, one line per parameter.

    ``history`` maps a parameter's name to its gradient norm at each step
    (all the same length).  On the default log scale a vanishing gradient
    shows as a line diving down and an exploding one as a line shooting up;
    ``vanishing`` / ``exploding`` draw dashed reference levels.  A norm of 0
    cannot be drawn on a log scale and leaves a gap; NaN or Inf also leave
    a gap (and are counted in the legend).

    >>> fig = gradient_norms({"W": [1.0, 0.5, 0.25], "b": [0.3, 0.2, 0.1]})
    >>> ax = fig.axes[0]
    >>> ax.get_yscale(), ax.get_xlabel(), [l.get_label() for l in ax.get_lines()]
    ('log', 'training step', ['W', 'b'])
    >>> gradient_norms({"W": [1.0, -2.0]})
    Traceback (most recent call last):
    ...
    ValueError: gradient_norms: history['W'] has a negative value (-2.0 at index 1); a norm is never negative
    """
    title = _check_title(title)
    if not isinstance(history, Mapping) or not history:
        raise ValueError("gradient_norms: history must be a non-empty dict mapping each "
                         f"parameter's name to its norms per step, got {_short(history)}")
    series: dict[str, np.ndarray] = {}
    for name, vals in history.items():
        if not isinstance(name, str):
            raise ValueError(f"gradient_norms: history keys must be parameter names (str), "
                             f"got {_short(name)}")
        arr = _numbers(vals, f"gradient_norms: history[{name!r}]")
        bad = np.flatnonzero(arr < 0)
        if bad.size:
            raise ValueError(f"gradient_norms: history[{name!r}] has a negative value "
                             f"({arr[bad[0]]} at index {bad[0]}); a norm is never negative")
        series[name] = arr
    lengths = {len(v) for v in series.values()}
    if len(lengths) != 1:
        detail = ", ".join(f"{k}: {len(v)}" for k, v in series.items())
        raise ValueError(f"gradient_norms: every parameter needs one norm per step; lengths "
                         f"differ ({detail})")
    n = lengths.pop()
    x = np.arange(n, dtype=np.float64) if steps is None else _numbers(steps, "gradient_norms: steps")
    if len(x) != n:
        raise ValueError(f"gradient_norms: steps has {len(x)} entries but each parameter has "
                         f"{n} norms")
    for level, what in ((vanishing, "vanishing"), (exploding, "exploding")):
        if level is not None and not (isinstance(level, numbers.Real) and level > 0):
            raise ValueError(f"gradient_norms: {what} must be a positive number, got {level!r}")
    owned = ax is None
    fig, ax = _new_axes(ax, (6.4, 3.6))
    for k, (name, arr) in enumerate(series.items()):
        plotted = arr.copy()
        if log:
            plotted[plotted <= 0] = np.nan
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        label = name if not bad else f"{name} ({bad} NaN/Inf)"
        ax.plot(x, plotted, color=_COLORS[k % len(_COLORS)], lw=1.6,
                marker="o" if n <= 30 else None, ms=3, label=label)
    if vanishing is not None:
        ax.axhline(vanishing, color="#59636e", ls="--", lw=1, label=f"vanishing < {vanishing:g}")
    if exploding is not None:
        ax.axhline(exploding, color="#b35900", ls="--", lw=1, label=f"exploding > {exploding:g}")
    if log:
        ax.set_yscale("log")
    if n > 1:  # the whole run, even where the lines stop (NaN) before its end
        pad = 0.03 * float(np.nanmax(x) - np.nanmin(x))
        ax.set_xlim(float(np.nanmin(x)) - pad, float(np.nanmax(x)) + pad)
    ax.set_xlabel("training step")
    ax.set_ylabel("gradient norm ‖g‖₂" + (" (log scale)" if log else ""))
    if title is not None:
        ax.set_title(title, fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _settle(fig, owned)


# ---------------------------------------------------------------- memory over a pass


def memory_over_pass(traces: Any, *, title: str | None = "Gradient bytes held during the backward pass",
                     ax: Axes | None = None, carry: bool = True) -> Figure:
    """Bytes of gradient held after each step of one or more backward passes.

    ``traces`` is a list of :class:`gradviz.Trace` (labelled by their titles)
    or a dict mapping a label to a trace or to a *list* of traces run one
    after another.  A list is drawn end to end and, with ``carry`` (the
    default), the gradients each earlier trace returned (which the caller
    keeps) are added to the later ones, so computing a model's gradients
    branch by branch is compared honestly with computing them in one pass.
    The carry is conservative: a result that a later pass takes as its
    ``grad_ys`` is counted twice (as kept, and as that pass's seed).  Each
    line's peak is marked and written in the legend.  The numbers are the
    traces' own ``step.bytes_held``.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0, 3.0], name="x")
    >>> tr = gv.trace_gradients(gv.reduce_sum(x * x), x, title="sum of squares")
    >>> fig = memory_over_pass([tr])
    >>> line = fig.axes[0].get_lines()[0]
    >>> line.get_label(), list(line.get_ydata()) == [s.bytes_held for s in tr.steps]
    ('sum of squares (peak 24 B)', True)
    """
    title = _check_title(title)
    if isinstance(traces, Trace):
        traces = [traces]
    if isinstance(traces, Mapping):
        items = list(traces.items())
    elif isinstance(traces, Iterable) and not isinstance(traces, (str, bytes)):
        items = [(t.title if isinstance(t, Trace) and t.title else f"trace {i + 1}", t)
                 for i, t in enumerate(traces)]
    else:
        raise ValueError("memory_over_pass: expected a list of gradviz Traces or a dict of "
                         f"label -> Trace (or list of Traces), got {type(traces).__name__}")
    if not items:
        raise ValueError("memory_over_pass: no traces given")
    owned = ax is None
    fig, ax = _new_axes(ax, (6.4, 3.6))
    top = 0
    for k, (label, value) in enumerate(items):
        if not isinstance(label, str):
            raise ValueError(f"memory_over_pass: labels must be str, got {_short(label)}")
        sequence = list(value) if isinstance(value, (list, tuple)) else [value]
        if not sequence:
            raise ValueError(f"memory_over_pass: {label!r} has an empty list of traces")
        ys: list[int] = []
        starts: list[int] = []
        carried = 0
        for j, tr in enumerate(sequence):
            if not isinstance(tr, Trace):
                raise ValueError(f"memory_over_pass: {label!r} item {j} is a "
                                 f"{type(tr).__name__}, not a gradviz Trace")
            if not tr.steps:
                raise ValueError(f"memory_over_pass: {label!r} item {j} has no steps")
            starts.append(len(ys))
            ys.extend(carried + s.bytes_held for s in tr.steps)
            if carry:
                carried += sum(r.grad.nbytes for r in tr.results if r.grad is not None)
        color = _COLORS[k % len(_COLORS)]
        peak = max(ys)
        top = max(top, peak)
        x = np.arange(len(ys))
        ax.plot(x, ys, drawstyle="steps-post", color=color, lw=1.6,
                label=f"{label} (peak {_format_bytes(peak)})")
        ax.plot([ys.index(peak)], [peak], "o", color=color, ms=5)
        for s in starts[1:]:
            ax.axvline(s - 0.5, color=color, alpha=0.12, lw=0.8)  # a new pass starts
    # ticks at round numbers of the unit the peak is read in (0, 20, 40 kB ...)
    unit = next((size for size in (10**6, 10**3) if top >= size), 1)
    ax.set_yticks(MaxNLocator(nbins=6, steps=[1, 2, 4, 5, 10]).tick_values(0, top / unit) * unit)
    ax.set_ylim(0, top * 1.15 if top else 1)
    ax.yaxis.set_major_formatter(lambda v, _pos: _format_bytes(v))
    ax.set_xlabel("backward step (one pass after another)")
    ax.set_ylabel("gradient bytes held")
    if title is not None:
        ax.set_title(title, fontsize=11)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _settle(fig, owned)


# ---------------------------------------------------------------- Jacobian vs VJP


def jacobian_vs_vjp_cost(ns: Sequence[int], jacobian_costs: Any, vjp_costs: Any, *,
                         metric: str = "cost", log: bool = False,
                         title: str | None = "Full Jacobian vs one vector-Jacobian product",
                         ax: Axes | None = None) -> Figure:
    """The cost of a full Jacobian against one VJP as the output size N grows.

    ``ns`` are the output sizes.  ``jacobian_costs`` and ``vjp_costs`` are
    either one number per N (one panel, its y label is ``metric``) or dicts
    mapping a metric name (e.g. ``"backward passes"``, ``"ops visited"``,
    ``"seconds"``) to one number per N, with the same keys: one panel per
    metric, side by side.  ``ax`` is accepted only for a single panel.

    >>> fig = jacobian_vs_vjp_cost([1, 2, 4], {"backward passes": [1, 2, 4]},
    ...                            {"backward passes": [1, 1, 1]})
    >>> ax = fig.axes[0]
    >>> ax.get_ylabel(), [l.get_ydata().tolist() for l in ax.get_lines()]
    ('backward passes', [[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]])
    """
    title = _check_title(title)
    n = _numbers(ns, "jacobian_vs_vjp_cost: ns")
    if np.any(n <= 0) or np.any(n != np.round(n)):
        raise ValueError(f"jacobian_vs_vjp_cost: ns must be positive whole numbers, got "
                         f"{_short(list(ns))}")
    if np.any(np.diff(n) <= 0):
        raise ValueError("jacobian_vs_vjp_cost: ns must be increasing")
    if isinstance(jacobian_costs, Mapping) != isinstance(vjp_costs, Mapping):
        raise ValueError("jacobian_vs_vjp_cost: give both costs as dicts of metric -> values, "
                         "or both as sequences of numbers")
    if isinstance(jacobian_costs, Mapping):
        if not jacobian_costs or set(jacobian_costs) != set(vjp_costs):
            raise ValueError("jacobian_vs_vjp_cost: the two dicts must have the same, non-empty "
                             f"metrics; got {sorted(map(str, jacobian_costs))} and "
                             f"{sorted(map(str, vjp_costs))}")
        panels = [(str(k), jacobian_costs[k], vjp_costs[k]) for k in jacobian_costs]
    else:
        if not isinstance(metric, str):
            raise ValueError(f"metric: expected a str, got {type(metric).__name__}")
        panels = [(metric, jacobian_costs, vjp_costs)]
    checked = []
    for name, jac, vjp in panels:
        jac = _numbers(jac, f"jacobian_vs_vjp_cost: jacobian_costs[{name!r}]")
        vjp = _numbers(vjp, f"jacobian_vs_vjp_cost: vjp_costs[{name!r}]")
        for arr, what in ((jac, "jacobian_costs"), (vjp, "vjp_costs")):
            if len(arr) != len(n):
                raise ValueError(f"jacobian_vs_vjp_cost: {what}[{name!r}] has {len(arr)} values "
                                 f"for {len(n)} ns")
            if np.any(arr < 0) or not np.all(np.isfinite(arr)):
                raise ValueError(f"jacobian_vs_vjp_cost: {what}[{name!r}] must be finite and "
                                 "non-negative")
        checked.append((name, jac, vjp))
    if ax is not None and len(checked) > 1:
        raise ValueError(f"jacobian_vs_vjp_cost: ax draws one panel but {len(checked)} metrics "
                         "were given; leave ax=None")
    owned = ax is None
    if owned:
        fig = Figure(figsize=(3.6 * len(checked) + 0.6, 3.4), layout="constrained")
        axes = list(fig.subplots(1, len(checked), squeeze=False)[0])
    else:
        fig, ax = _new_axes(ax, (4.0, 3.4))
        axes = [ax]
    for ax, (name, jac, vjp) in zip(axes, checked):
        ax.plot(n, jac, "o-", color=_COLORS[1], lw=1.6, ms=4, label="full Jacobian (N VJPs)")
        ax.plot(n, vjp, "s-", color=_COLORS[0], lw=1.6, ms=4, label="one VJP")
        if log:
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
        ax.set_xlabel("N = number of outputs")
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    if title is not None:
        fig.suptitle(title, fontsize=11)
    return _settle(fig, owned)
