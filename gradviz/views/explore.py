"""What if: a program's inputs as sliders, every gradient following them as they move.

``gv.explore(build, W=1.5, b=0.0)`` calls ``build(W=..., b=...)`` with each
input as a ``gv.Variable`` of that name; ``build`` writes the forward pass and
returns what to differentiate (a tensor, or a list of them), and the explorer
shows the backward pass of its gradients with respect to every input.  Each
scalar input gets a slider; an array of up to :data:`MAX_VALUES` values gets
one number box per value, laid out as the array is.  Moving one runs ``build``
and the backward pass again, in the kernel, and hands the viewer the new
values: while the program keeps its ops and shapes, its diagram keeps its
layout (:mod:`gradviz.views.diagram.live`), so only the numbers and colours
move.  A program whose structure changes with the values (Python ``if`` on a
value) is laid out again, once per structure.

A slider's range and step default to the rule of ipywidgets' ``interact``
(a value ``v > 0`` slides over ``[-v, 3v]``, ``v < 0`` over ``[3v, -v]``; 0
here over ``[-1, 1]``; a round step near a hundredth of the range) and are given with :func:`slider`:
``gv.explore(build, W=gv.slider(1.5, -2, 5, step=0.05))``.  The values a
slider takes are its starting value (or the last value given by
:meth:`Explorer.set`) plus whole steps, within the range: the program runs at
exactly the values given.  A range lies within what the input's dtype holds
(float32's ±3.4e38, unless the value is a float64 NumPy one) and is at most
the largest float wide; a step is at most the range and moves the value.

Where ``build`` fails at new values, the diagram stays at the last values that
ran, and so do :attr:`Explorer.values` and :attr:`Explorer.trace`.
:meth:`Explorer.set` raises build's error and moves nothing.  A control moved
by hand stays where the hand put it, and the line above the diagram says that
build failed there and names the values the diagram still shows.  The next
move runs ``build`` at what all the controls then show, so a learner can go
one box at a time through values where it fails, to values where it runs.
Once it runs again, the line hides and the controls, the values, the trace and
the diagram agree.  ``set`` runs at the values it is given and, for the other
inputs, at the last values that ran.  Where it succeeds, every control moves
to those values, so a failed move by hand is dropped.

>>> import gradviz as gv
>>> def build(W, b):
...     return gv.square(3.0 * W + b - 1.0)
>>> ex = gv.explore(build, W=0.5, b=0.0)
>>> [float(g.numpy()) for g in ex.trace.gradients]
[3.0, 1.0]
>>> laid_out = ex.layouts.runs  # one layout for this program
>>> ex.set(W=0.0)
>>> [float(g.numpy()) for g in ex.trace.gradients], ex.layouts.runs == laid_out
([-6.0, -2.0], True)
>>> gv.explore(build, W=0.5)
Traceback (most recent call last):
...
TypeError: explore(): build's input 'b' has no value: give it as explore(build, ..., b=...)
>>> gv.explore(lambda W: gv.cast(W, gv.int32), W=0.5)
Traceback (most recent call last):
...
TypeError: explore(): build returned an int32 tensor, whose gradient is None (an integer
or bool tensor is a constant for differentiation, as in TensorFlow): return a float tensor
(float16, float32 or float64) computed in floats from the inputs
"""

from __future__ import annotations

import html
import inspect
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import ipywidgets
import numpy as np
from anywidget import AnyWidget

from .diagram.live import LiveLayouts
from .explain import format_number
from .options import shown, view_options
from .picture import picture_html
from .viewdata import trace_data, view_settings
from .widget import TraceWidget, display_with_fallback, fallback_bundle, with_picture
from ..engine.graph import Tensor, Variable, upstream
from ..trace import Trace, trace_gradients

__all__ = ["explore", "slider", "Slider", "Explorer", "MAX_VALUES"]

#: An input of more values than this is not one to move by hand: make it a
#: constant inside ``build``.
MAX_VALUES = 16

#: The largest float: no range is wider (its steps could not be counted).
_WIDEST = float(np.finfo(np.float64).max)

#: The view options ``explore`` takes (``practice`` asks what the sliders show).
_VIEW = ("rankdir", "collapse", "compact", "values", "start_step", "bookkeeping", "font_size",
         "source")


@dataclass(frozen=True)
class Slider:
    """An input's starting value and how it moves: a range ``[min, max]`` and a ``step``.

    ``None`` takes the default (see :mod:`gradviz.views.explore`); an array's
    values share the range and step given.
    """

    value: Any
    min: float | None = None
    max: float | None = None
    step: float | None = None


def slider(value: Any, min: float | None = None, max: float | None = None,
           step: float | None = None) -> Slider:
    """An input for :func:`explore` that starts at ``value`` and moves over ``[min, max]`` by ``step``.

    >>> slider(1.5, -2, 5, step=0.05)
    Slider(value=1.5, min=-2, max=5, step=0.05)
    """
    return Slider(value, min, max, step)


def _nice_step(span: float, least: float = 0.0) -> float:
    """A round step near a hundredth of ``span``, at least ``least``: 1, 2 or 5 times a power of 10.

    The round number is read from its decimal spelling (``5e-15``), so that a
    tiny span gets a tiny step, not one rounded to 0.

    >>> _nice_step(6.66), _nice_step(2.0), _nice_step(300), _nice_step(4e-13)
    (0.1, 0.02, 5.0, 5e-15)
    >>> _nice_step(2e-323, least=5e-324)  # a hundredth of it is below the least step
    5e-324
    """
    raw = span / 100
    if not raw > least:
        return least
    e = math.floor(math.log10(raw))
    return next(float(f"{m}e{e}") for m in (1, 2, 5, 10) if raw <= float(f"{m}e{e}") * 1.0001)


def _default_range(v: float, top: float = _WIDEST) -> tuple[float, float]:
    """``interact``'s range for a number: ``[-v, 3v]`` for ``v > 0``, mirrored below 0; ``[-1, 1]`` at 0.

    It stays within ``±top``, the largest number the input holds, and at most
    the largest float wide (the far end moves in).

    >>> _default_range(1.5), _default_range(-2.0), _default_range(0.0)
    ((-1.5, 4.5), (-6.0, 2.0), (-1.0, 1.0))
    >>> _default_range(2e38, top=3.4e38), _default_range(1e308)
    ((-2e+38, 3.4e+38), (0.0, 1.7976931348623157e+308))
    """
    if v == 0:
        return -1.0, 1.0
    lo, hi = (-v, min(3 * v, top)) if v > 0 else (max(3 * v, -top), -v)
    if math.isinf(hi - lo):
        lo, hi = (hi - _WIDEST, hi) if v > 0 else (lo, lo + _WIDEST)
    return lo, hi


def _gap(v: float, dtype: np.dtype) -> float:
    """How far apart ``dtype``'s numbers are at ``v`` (just below ``|v|``): less would not move it.

    >>> _gap(1.0, np.dtype(np.float32)), _gap(0.0, np.dtype(np.float64))
    (5.960464477539063e-08, 5e-324)
    """
    a = dtype.type(abs(v))
    return float(np.nextafter(a, dtype.type(1)) if a == 0 else a - np.nextafter(a, dtype.type(0)))


@dataclass
class _Input:
    """One input, checked: its name, its values (float, at most MAX_VALUES) and how they move."""

    name: str
    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    step: np.ndarray


def _number(name: str, what: str, v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(v)):
        raise TypeError(f"explore(): input {name!r}: {what} must be a finite number, got {v!r}")
    return float(v)


def _checked_value(name: str, given: Any, dtype: np.dtype | None = None) -> np.ndarray:
    """``given`` as an input's values: a number or 1 to MAX_VALUES numbers, finite in ``dtype``.

    The one check of a value, for :func:`explore`'s starting values and
    :meth:`Explorer.set`'s alike.  ``dtype`` None chooses: float32, as a
    Variable of Python numbers is, but a float64 NumPy value stays float64.

    >>> _checked_value("W", 2).dtype, _checked_value("W", np.array([1.0, 2.0])).dtype
    (dtype('float32'), dtype('float64'))
    >>> _checked_value("W", True)
    Traceback (most recent call last):
    ...
    TypeError: explore(): input 'W' must be a number or an array of numbers, got True
    """
    try:
        value = np.asarray(given)
    except Exception:  # ragged lists and the like
        value = np.asarray(None)
    if value.dtype.kind not in "iuf":  # (a bool is no number to slide; nor a string of one)
        raise TypeError(f"explore(): input {name!r} must be a number or an array of numbers, "
                        f"got {given!r}")
    if value.size == 0 or value.size > MAX_VALUES:
        raise ValueError(f"explore(): input {name!r} has {value.size} values: an input to move is "
                         f"a number or an array of 1 to {MAX_VALUES} values (make a larger array "
                         "a constant inside build)")
    if dtype is None:
        wide = isinstance(given, (np.ndarray, np.floating)) and value.dtype == np.float64
        dtype = np.dtype(np.float64 if wide else np.float32)
    with np.errstate(over="ignore"):  # (a number too large for dtype becomes inf: refused below)
        cast = value.astype(dtype)
    if not np.all(np.isfinite(cast)):
        held = "" if not np.all(np.isfinite(value)) else \
            f" (a {dtype} input holds numbers within ±{np.finfo(dtype).max:.4g})"
        raise ValueError(f"explore(): input {name!r} must be finite, got {given!r}{held}")
    return cast


def _as_input(name: str, given: Any) -> _Input:
    spec = given if isinstance(given, Slider) else Slider(given)
    value = _checked_value(name, spec.value)
    top = float(np.finfo(value.dtype).max)  # the largest number the input holds
    lo, hi, step = (_number(name, what, v) for what, v in
                    (("min", spec.min), ("max", spec.max), ("step", spec.step)))
    for what, end in (("min", lo), ("max", hi)):
        if end is not None and abs(end) > top:
            wider = "" if value.dtype == np.float64 else \
                "; a float64 NumPy value takes a wider range"
            raise ValueError(f"explore(): input {name!r}: {what} must lie within ±{top:.4g} (the "
                             f"largest {value.dtype}{wider}), got {end:.4g}")
    flat = value.reshape(-1).astype(np.float64)
    ranges = [_default_range(float(v), top) for v in flat]
    los = np.array([lo if lo is not None else r[0] for r in ranges])
    his = np.array([hi if hi is not None else r[1] for r in ranges])
    bad = np.flatnonzero((los >= his) | (flat < los) | (flat > his))
    if bad.size:
        k = bad[0]
        if los[k] >= his[k]:
            raise ValueError(f"explore(): input {name!r}: min must be below max, got min="
                             f"{los[k]:g}, max={his[k]:g}")
        raise ValueError(f"explore(): input {name!r} starts at {spec.value!r}, outside its range "
                         f"[{los[k]:g}, {his[k]:g}]")
    with np.errstate(over="ignore"):
        wide = np.flatnonzero(np.isinf(his - los))
    if wide.size:
        k = wide[0]
        raise ValueError(f"explore(): input {name!r}: the range [{los[k]:g}, {his[k]:g}] is wider "
                         f"than a float holds: max - min must be at most {_WIDEST:.4g}")
    if step is not None and step <= 0:
        raise ValueError(f"explore(): input {name!r}: step must be above 0, got {step:g}")
    steps = np.array([_step(name, step, float(v), float(l), float(h), value.dtype)
                      for v, l, h in zip(flat, los, his)])
    return _Input(name, value, los, his, steps)


def _step(name: str, step: float | None, v: float, lo: float, hi: float, dtype: np.dtype) -> float:
    """The step of value ``v`` over ``[lo, hi]``: ``step`` checked, or a round one (see _nice_step).

    A step fits in the range, moves the value (it is at least the gap between
    ``dtype``'s numbers at ``v``) and cuts the range into a number of steps a
    float can count.
    """
    gap = _gap(v, dtype)
    if gap > hi - lo:
        raise ValueError(f"explore(): input {name!r}: the range [{lo!r}, {hi!r}] is too narrow to "
                         f"move its value {v:.4g} ({dtype} numbers there are {gap:.4g} apart)")
    if step is None:
        return _nice_step(hi - lo, max(gap, (hi - lo) / _WIDEST))
    if step > hi - lo:
        raise ValueError(f"explore(): input {name!r}: step must be at most max - min = "
                         f"{hi - lo:.4g}, got {step:.4g}")
    if step < gap:
        raise ValueError(f"explore(): input {name!r}: step {step:.4g} is too small to move its "
                         f"value {v:.4g} ({dtype} numbers there are {gap:.4g} apart): give a "
                         f"step of at least {gap:.4g}")
    if math.isinf((hi - lo) / step):
        raise ValueError(f"explore(): input {name!r}: step {step:.4g} cuts the range [{lo:g}, "
                         f"{hi:g}] into more steps than a float counts: give a step of at least "
                         f"{(hi - lo) / _WIDEST:.4g}")
    return step


def _ends(lo: float, hi: float, step: float, v: float) -> tuple[float, float]:
    """The ends of a slider over ``[lo, hi]`` that takes ``v`` plus whole steps.

    The browser's slider snaps its value to its min plus whole steps, and sends
    the snapped value back: a value off that grid would be moved as soon as it
    is shown (a starting ``W = 1.6649098`` became 1.66).  So the ends move in, by
    less than a step, to put ``v`` on the grid.

    >>> [round(e, 7) for e in _ends(-1.0, 3.0, 0.01, 1.6649098)]
    [-0.9950902, 2.9949098]
    """
    return (v - math.floor((v - lo) / step + 1e-9) * step,
            v + math.floor((hi - v) / step + 1e-9) * step)


def _check_names(build: Callable, inputs: dict[str, Any]) -> None:
    """Each input a parameter of ``build``, and each parameter without a default given."""
    try:
        params = inspect.signature(build).parameters
    except (TypeError, ValueError):  # a builtin without a signature: let the call say
        return
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    named = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for name in inputs:
        if name not in named and not takes_any:
            raise TypeError(f"explore(): build takes no input named {name!r} (its inputs: "
                            f"{', '.join(named) or 'none'})")
    for n, p in params.items():
        if p.kind is p.POSITIONAL_ONLY or (p.default is p.empty and n not in inputs
                                           and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)):
            raise TypeError(f"explore(): build's input {n!r} has no value: give it as "
                            f"explore(build, ..., {n}=...)")


class Explorer(ipywidgets.VBox):
    """The explorer :func:`explore` makes: its inputs' controls above a :class:`TraceWidget`.

    - ``viewer``: the trace's viewer, updated in place as the inputs move;
    - ``trace``: the trace at ``values``, the one the viewer shows;
    - ``values``: each input's value where ``build`` last ran (a NumPy array);
    - ``layouts``: the layouts made so far (``layouts.runs`` of them: one per
      structure the program took);
    - ``error``: the line above the diagram that says why ``build`` failed at the
      values last given, and which values the diagram still shows (hidden
      while it runs);
    - ``set(**values)``: move inputs from code, as the controls do.

    ``values``, ``trace`` and the viewer always agree: they are at the last
    values where ``build`` ran.  The controls show the same values, unless a
    move by hand has just failed.  Nothing can be raised to the hand on a
    control, so the control stays where it was put, and ``error`` says that
    build failed there and names the values the diagram still shows.  The next
    move runs build at what all the controls then show, not at ``values`` with
    one number changed.  So a learner who types ``a = 5``, then ``b = 6``,
    reaches ``(5, 6)`` from ``(1, 2)`` even though build fails at
    ``(5, 2)``.  Once build runs again, ``error`` hides and all of them agree.
    :meth:`set` raises build's error and moves nothing; where it runs, it
    moves every control (see :meth:`set`).
    """

    def __init__(self, build: Callable, inputs: dict[str, _Input], title: str,
                 options: dict[str, Any]) -> None:
        self._build = build
        self._inputs = inputs
        self._title = title
        self._opts = view_options("explore", **options)
        self.layouts = LiveLayouts()
        self._quiet = False
        self.values = {n: i.value.copy() for n, i in inputs.items()}
        self.trace = self._run(self.values)
        self.viewer = TraceWidget(payload=self._payload(self.trace))
        view = self.viewer.payload["view"]
        self.viewer.show_grad_values = view["values"] in ("all", "gradient")
        self.viewer.show_forward_values = view["values"] in ("all", "forward")
        self.viewer.step = view["start_step"]
        self.error = ipywidgets.HTML(layout=ipywidgets.Layout(display="none"))
        self.error.add_class("gv-explore-error")
        self._controls = {n: self._make_controls(i) for n, i in inputs.items()}
        #: what the controls showed at the last values that ran (set puts a control back to it)
        self._at = self._control_values()
        self._box = ipywidgets.HBox([c for c, _ in self._controls.values()],
                                    layout=ipywidgets.Layout(flex_flow="row wrap"))
        self._box.add_class("gv-explore-inputs")
        super().__init__([self._box, self.error, self.viewer])
        self.add_class("gv-explore")

    def _note(self) -> str:
        """The values the viewer shows, for its picture: ``at W = 1.5, b = 0``."""
        return "at " + ", ".join(f"{n} = {_spelled(v)}" for n, v in self.values.items())

    def _widget_bundle(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """The explorer's own bundle, with a one-line ``text/plain``; None once closed.

        The viewer's own metadata comes along: in Colab, asking an anywidget for
        its bundle is what turns on the widget manager that can show it.
        """
        if self.comm is None or self.viewer.comm is None:
            return None
        _, metadata = AnyWidget._repr_mimebundle_(self.viewer) or ({}, {})
        data = super()._repr_mimebundle_(**kwargs)
        if data is None:
            return None
        return {**data, "text/plain": self._summary()}, metadata

    def _summary(self) -> str:
        last = max(self.viewer.num_steps - 1, 0)
        return (f"gradviz explorer: {self.viewer.payload.get('title') or self._title}, "
                f"{self._note()}, step {self.viewer.step} / {last}")

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """The explorer's bundle with its viewer's picture (:mod:`gradviz.views.picture`),
        which names the inputs' values, as ``text/html``, in one (see
        :meth:`TraceWidget._repr_mimebundle_`)."""
        return with_picture(self._widget_bundle(**kwargs),
                            picture_html(self.viewer.payload, self._note()))

    def _ipython_display_(self) -> None:
        """Display the explorer, then its viewer's picture as an output of its own,
        as a viewer displays itself (:meth:`TraceWidget._ipython_display_`)."""
        display_with_fallback(self._widget_bundle(),
                              fallback_bundle(self.viewer.payload, self._note()), self._summary())

    # ------------------------------------------------------------ the controls

    def _slider(self, inp: _Input, value: float) -> ipywidgets.FloatSlider:
        """A scalar input's slider at ``value``, its ends on the grid through it (see _ends)."""
        lo, hi = _ends(float(inp.lo[0]), float(inp.hi[0]), float(inp.step[0]), value)
        w = ipywidgets.FloatSlider(value=value, min=lo, max=hi, step=float(inp.step[0]),
                                   description=inp.name, continuous_update=True,
                                   readout_format=".4g", style={"description_width": "initial"},
                                   layout=ipywidgets.Layout(margin="0 24px 4px 0"))
        w.add_class("gv-explore-input")
        w.observe(self._moved, "value")
        return w

    def _make_controls(self, inp: _Input) -> tuple[ipywidgets.Widget, list[ipywidgets.Widget]]:
        """A slider for a scalar, a grid of number boxes for an array; each moves its value."""
        if inp.value.ndim == 0:
            w = self._slider(inp, float(inp.value))
            return w, [w]
        fields = []
        for k, v in enumerate(inp.value.reshape(-1)):
            index = np.unravel_index(k, inp.value.shape)
            w = ipywidgets.BoundedFloatText(value=float(v), min=float(inp.lo[k]),
                                            max=float(inp.hi[k]), step=float(inp.step[k]),
                                            layout=ipywidgets.Layout(width="7em"))
            w.tooltip = f"{inp.name}[{', '.join(map(str, index))}]"
            w.add_class("gv-explore-input")
            w.observe(self._moved, "value")
            fields.append(w)
        cols = inp.value.shape[-1]
        grid = ipywidgets.GridBox(fields, layout=ipywidgets.Layout(
            grid_template_columns=f"repeat({cols}, 7em)", grid_gap="2px"))
        label = ipywidgets.Label(f"{inp.name} {'x'.join(map(str, inp.value.shape))}")
        return ipywidgets.HBox([label, grid], layout=ipywidgets.Layout(margin="0 24px 4px 0")), fields

    def _moved(self, change: dict[str, Any]) -> None:
        """A control moved by hand: build runs at what all the controls show, not at
        ``values`` with the one number ``change`` gives.

        Where build fails, nothing can be raised to the hand on the control.
        The control stays where the hand put it (in a drag, the slider stays
        under the mouse).  The line above the diagram says build failed there
        and names the values the diagram still shows, the last that ran.
        ``values`` and ``trace`` stay at those values too.  The next move reads
        every control again, so a second field typed after a failed first one
        runs with both.
        """
        if self._quiet:
            return
        shown = self._shown()
        if all(np.array_equal(shown[n], v) for n, v in self.values.items()):
            # (back at the values that ran, in the inputs' dtypes: nothing to run)
            self._at = self._control_values()
            self.error.layout.display = "none"
            return
        try:
            trace = self._run(shown)
        except Exception as e:  # build's own errors
            self._say_failed(shown, e)
            return
        self._show(shown, trace)

    def _control_values(self) -> dict[str, np.ndarray]:
        """Each input's value as its controls show it (float64, the input's shape)."""
        return {n: np.array([w.value for w in fields], dtype=np.float64)
                .reshape(self._inputs[n].value.shape)
                for n, (_, fields) in self._controls.items()}

    def _shown(self) -> dict[str, np.ndarray]:
        """Each input's value as its controls show it, in the input's dtype: what build runs at."""
        return {n: a.astype(self.values[n].dtype) for n, a in self._control_values().items()}

    @contextmanager
    def _quietly(self) -> Iterator[None]:
        """Move controls without running build (their observers look at ``_quiet``)."""
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def _move_controls(self, given: dict[str, np.ndarray]) -> None:
        """Put the controls of the inputs ``given`` at their values, quietly.

        A slider is made anew when the value is off its grid (the browser would
        snap it to the grid and send that back: see _ends).
        """
        with self._quietly():
            for name, a in given.items():
                control, fields = self._controls[name]
                if isinstance(control, ipywidgets.FloatSlider):
                    x = float(a)
                    off = (x - control.min) / control.step
                    if abs(off - round(off)) > 1e-6:
                        new_control = self._slider(self._inputs[name], x)
                        self._controls[name] = (new_control, [new_control])
                        self._box.children = [new_control if c is control else c
                                              for c in self._box.children]
                        control.close()
                        continue
                for w, x in zip(fields, a.reshape(-1)):
                    w.value = float(x)

    # ------------------------------------------------------------ running

    def _run(self, values: dict[str, np.ndarray]) -> Trace:
        xs = {n: Variable(v, name=n) for n, v in values.items()}
        ys = self._build(**xs)
        if isinstance(ys, Tensor):
            ys = [ys]
        if not isinstance(ys, (list, tuple)) or not ys or \
                not all(isinstance(y, Tensor) for y in ys):
            raise TypeError("explore(): build must return the tensor to differentiate (or a list "
                            f"of them), got {type(ys).__name__}")
        if not any(y.dtype.is_floating for y in ys):
            # the engine, as TensorFlow, seeds no integer y: every gradient would be None
            kinds = list(dict.fromkeys(y.dtype.name for y in ys))
            said = (f"only {' and '.join(kinds)} tensors" if len(ys) > 1 else
                    f"{'an' if kinds[0][0] in 'aeiou' else 'a'} {kinds[0]} tensor")
            raise TypeError(f"explore(): build returned {said}, whose gradient is None (an integer "
                            "or bool tensor is a constant for differentiation, as in TensorFlow): "
                            "return a float tensor (float16, float32 or float64) computed in "
                            "floats from the inputs")
        trace = trace_gradients(list(ys), list(xs.values()), title=self._title)
        unused = [k for k, g in enumerate(trace.gradients) if g is None]
        if unused:
            k = unused[0]
            name, x = list(xs.items())[k]
            if x in upstream(ys):  # used, but every path from the ys to it is cut
                why = next(s.reason for s in trace.steps if s.kind == "result" and s.x_index == k)
                raise ValueError(f"explore(): input {name!r} gets no gradient (it is None), though "
                                 f"build uses it: {why}; compute what build returns from it in "
                                 "float ops that carry a gradient")
            raise ValueError(f"explore(): what build returns does not depend on input "
                             f"{name!r} (its gradient is None): use it in build, or leave it out")
        return trace

    def _payload(self, trace: Trace) -> dict[str, Any]:
        data = trace_data(shown(trace, self._opts), self._opts, live=self.layouts)
        return {**data, "view": view_settings(trace, self._opts)}

    def _show(self, values: dict[str, np.ndarray], trace: Trace,
              given: dict[str, np.ndarray] | None = None) -> None:
        """Make ``values`` and their ``trace`` the explorer's, and the viewer's (at its step);
        the controls of the inputs ``given`` move to them (see _move_controls)."""
        payload = self._payload(trace)
        payload["view"]["start_step"] = self.viewer.step
        self._move_controls(given or {})
        self._at = self._control_values()
        self.values, self.trace = values, trace
        self.error.layout.display = "none"
        self.viewer.payload = payload

    def _say_failed(self, values: dict[str, np.ndarray], e: Exception) -> None:
        """Say above the diagram, which stays, why build failed at ``values``, and which
        values the diagram still shows."""
        self.error.value = (f"<b>build failed at {html.escape(_said(values))}</b>: "
                            f"{type(e).__name__}: {html.escape(str(e))}<br>"
                            "the diagram still shows the last values that ran: "
                            f"{html.escape(_said(self.values))}")
        self.error.layout.display = None

    def set(self, **values: Any) -> None:
        """Move inputs to ``values`` (each of its input's shape), as dragging their controls does.

        Each value is checked as :func:`explore` checks a starting value, and
        must lie in its input's range.  ``build`` runs at ``values``, with every
        input not named at :attr:`values`, the last values that ran.  A control
        left by hand where build failed does not count: its number is dropped.
        Where build runs, ``values``, ``trace`` and the viewer move, and so does
        every control, the dropped ones included.  Then all of them agree.
        Where build fails, ``set`` raises build's own error, with a note that
        says at which values, and nothing moves.  The line above the diagram
        says why, as after a failed move by hand.

        >>> import gradviz as gv
        >>> def build(a, b):  # runs only while a < b
        ...     return b - a if float(a.numpy()) < float(b.numpy()) else 1 / 0
        >>> ex = gv.explore(build, a=gv.slider(1.0, 0.0, 9.0), b=gv.slider(2.0, 0.0, 9.0))
        >>> ex.set(a=5.0, b=6.0)  # one run, at both (at a=5, b=2 build would fail)
        >>> [float(v) for v in ex.values.values()]
        [5.0, 6.0]

        >>> import gradviz as gv
        >>> ex = gv.explore(lambda W: W * W, W=1.0)
        >>> ex.set(W=[1.0, 2.0])
        Traceback (most recent call last):
        ...
        ValueError: explore(): input 'W' is a scalar: got an array of shape (2,)
        >>> ex.set(W="2")
        Traceback (most recent call last):
        ...
        TypeError: explore(): input 'W' must be a number or an array of numbers, got '2'
        """
        new, given = dict(self.values), {}
        for name, v in values.items():
            if name not in self._inputs:
                raise TypeError(f"explore(): no input named {name!r} (the inputs: "
                                f"{', '.join(self._inputs)})")
            inp = self._inputs[name]
            a = _checked_value(name, v, inp.value.dtype)
            if a.shape != inp.value.shape:
                have = "a scalar" if not inp.value.shape else f"of shape {inp.value.shape}"
                raise ValueError(f"explore(): input {name!r} is {have}: got "
                                 f"{'a scalar' if not a.shape else f'an array of shape {a.shape}'}")
            shown = np.asarray(v, dtype=np.float64)  # as the controls show it
            flat = shown.reshape(-1)
            if np.any(flat < inp.lo) or np.any(flat > inp.hi):
                k = int(np.argmax((flat < inp.lo) | (flat > inp.hi)))
                raise ValueError(f"explore(): input {name!r}: {flat[k]:g} is outside its range "
                                 f"[{inp.lo[k]:g}, {inp.hi[k]:g}]")
            new[name], given[name] = a, shown
        # build runs once for all of them; only then does anything move: every
        # control, to set's values or back to what it showed at the last values that ran
        given = {**self._at, **given}
        try:
            trace = self._run(new)
        except Exception as e:
            self._say_failed(new, e)
            if hasattr(e, "add_note"):  # (Python 3.11 on)
                e.add_note(f"explore(): build failed at {_said(new)}; the explorer stays at "
                           f"{_said(self.values)}")
            raise
        self._show(new, trace, given)


def _spelled(v: np.ndarray) -> str:
    """An input's value as the picture's note says it: a number, or a nested list.

    >>> _spelled(np.array(1.6649098)), _spelled(np.array([[1.0, 2.5]]))
    ('1.665', '[[1, 2.5]]')
    """
    if v.ndim == 0:
        return format_number(v.item())
    return "[" + ", ".join(_spelled(row) for row in v) + "]"


def _said(values: dict[str, np.ndarray]) -> str:
    return ", ".join(f"{n}={np.array2string(v, precision=4)}" for n, v in values.items())


def explore(build: Callable[..., Tensor | Sequence[Tensor]], /, *, title: str = "what if",
            view: dict[str, Any] | None = None, **inputs: Any) -> Explorer:
    """``build``'s backward pass with a control for each input: move one, watch every gradient.

    ``inputs`` name ``build``'s inputs and give each a starting value (a
    number or an array of at most :data:`MAX_VALUES` values) or a
    :func:`slider` with its range and step.  ``view`` holds view options
    (:mod:`gradviz.views.options`, all but ``practice``); the viewer opens at
    the last step, every gradient drawn, unless ``view`` says otherwise.  See
    :mod:`gradviz.views.explore`.
    """
    if not callable(build):
        raise TypeError(f"explore(): build must be a function of the inputs, got "
                        f"{type(build).__name__}")
    if not inputs:
        raise TypeError("explore(): give build's inputs and their values, as in "
                        "explore(build, W=1.5, b=0.0)")
    options = dict(view or {})
    bad = sorted(set(options) - set(_VIEW))
    if bad:
        raise TypeError(f"explore(): view option {bad[0]!r} is not one explore takes "
                        f"(accepted: {', '.join(_VIEW)})")
    options.setdefault("start_step", -1)
    _check_names(build, inputs)
    checked = {name: _as_input(name, given) for name, given in inputs.items()}
    return Explorer(build, checked, title, options)
