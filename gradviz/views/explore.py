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
exactly the values given.

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
"""

from __future__ import annotations

import html
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets
import numpy as np
from anywidget import AnyWidget

from .diagram.live import LiveLayouts
from .explain import format_number
from .options import view_options
from .picture import picture_html
from .viewdata import trace_data, view_settings
from .widget import TraceWidget, with_picture
from ..engine.graph import Tensor, Variable
from ..trace import Trace, trace_gradients

__all__ = ["explore", "slider", "Slider", "Explorer", "MAX_VALUES"]

#: An input of more values than this is not one to move by hand: make it a
#: constant inside ``build``.
MAX_VALUES = 16

#: The view options ``explore`` takes (``practice`` asks what the sliders show).
_VIEW = ("rankdir", "collapse", "compact", "values", "start_step", "bookkeeping", "font_size")


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


def _nice_step(span: float) -> float:
    """A round step near a hundredth of ``span``: 1, 2 or 5 times a power of ten.

    >>> _nice_step(6.66), _nice_step(2.0), _nice_step(300)
    (0.1, 0.02, 5.0)
    """
    raw = span / 100
    power = 10.0 ** math.floor(math.log10(raw))
    m = next(m for m in (1, 2, 5, 10) if raw <= m * power * 1.0001)
    return float(np.round(m * power, 12))


def _default_range(v: float) -> tuple[float, float]:
    """``interact``'s range for a number: ``[-v, 3v]`` for ``v > 0``, mirrored below 0; ``[-1, 1]`` at 0.

    >>> _default_range(1.5), _default_range(-2.0), _default_range(0.0)
    ((-1.5, 4.5), (-6.0, 2.0), (-1.0, 1.0))
    """
    if v == 0:
        return -1.0, 1.0
    return (-v, 3 * v) if v > 0 else (3 * v, -v)


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


def _as_input(name: str, given: Any) -> _Input:
    spec = given if isinstance(given, Slider) else Slider(given)
    try:
        value = np.asarray(spec.value)
    except Exception:  # ragged lists and the like
        value = np.asarray(None)
    if value.dtype.kind not in "biuf" or value.dtype.kind == "b":
        raise TypeError(f"explore(): input {name!r} must be a number or an array of numbers, "
                        f"got {spec.value!r}")
    if value.size == 0 or value.size > MAX_VALUES:
        raise ValueError(f"explore(): input {name!r} has {value.size} values: an input to move is "
                         f"a number or an array of 1 to {MAX_VALUES} values (make a larger array "
                         "a constant inside build)")
    # float32, as a Variable of Python numbers is; a float64 NumPy array stays float64
    wide = isinstance(spec.value, (np.ndarray, np.floating)) and value.dtype == np.float64
    value = value.astype(np.float64 if wide else np.float32)
    if not np.all(np.isfinite(value)):
        raise ValueError(f"explore(): input {name!r} must be finite, got {spec.value!r}")
    lo, hi, step = (_number(name, what, v) for what, v in
                    (("min", spec.min), ("max", spec.max), ("step", spec.step)))
    flat = value.reshape(-1).astype(np.float64)
    ranges = [_default_range(float(v)) for v in flat]
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
    if step is not None and step <= 0:
        raise ValueError(f"explore(): input {name!r}: step must be above 0, got {step:g}")
    steps = np.array([step if step is not None else _nice_step(h - l) for l, h in zip(los, his)])
    return _Input(name, value, los, his, steps)


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
    - ``trace``: the trace of the inputs' current values;
    - ``values``: each input's current value (a NumPy array);
    - ``layouts``: the layouts made so far (``layouts.runs`` of them: one per
      structure the program took);
    - ``error``: the line above the diagram that says why ``build`` failed at the
      values last given (hidden while it runs);
    - ``set(**values)``: move inputs from code, as the controls do.
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
        self.viewer = TraceWidget(payload=self._payload())
        view = self.viewer.payload["view"]
        self.viewer.show_grad_values = view["values"] in ("all", "gradient")
        self.viewer.show_forward_values = view["values"] in ("all", "forward")
        self.viewer.step = view["start_step"]
        self.error = ipywidgets.HTML(layout=ipywidgets.Layout(display="none"))
        self.error.add_class("gv-explore-error")
        self._controls = {n: self._make_controls(i) for n, i in inputs.items()}
        self._box = ipywidgets.HBox([c for c, _ in self._controls.values()],
                                    layout=ipywidgets.Layout(flex_flow="row wrap"))
        self._box.add_class("gv-explore-inputs")
        super().__init__([self._box, self.error, self.viewer])
        self.add_class("gv-explore")

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """The explorer's bundle, with its viewer's picture (:mod:`gradviz.views.picture`),
        which names the inputs' values, as ``text/html`` for a page with no kernel.

        The viewer's own metadata comes along: in Colab, asking an anywidget for
        its bundle is what turns on the widget manager that can show it.
        """
        _, metadata = AnyWidget._repr_mimebundle_(self.viewer) or ({}, {})
        data = super()._repr_mimebundle_(**kwargs)
        if data is None:
            return None
        note = "at " + ", ".join(f"{n} = {_spelled(v)}" for n, v in self.values.items())
        return with_picture((data, metadata), picture_html(self.viewer.payload, note))

    # ------------------------------------------------------------ the controls

    def _slider(self, inp: _Input, value: float) -> ipywidgets.FloatSlider:
        """A scalar input's slider at ``value``, its ends on the grid through it (see _ends)."""
        lo, hi = _ends(float(inp.lo[0]), float(inp.hi[0]), float(inp.step[0]), value)
        w = ipywidgets.FloatSlider(value=value, min=lo, max=hi, step=float(inp.step[0]),
                                   description=inp.name, continuous_update=True,
                                   readout_format=".4g", style={"description_width": "initial"},
                                   layout=ipywidgets.Layout(margin="0 24px 4px 0"))
        w.add_class("gv-explore-input")
        w.observe(lambda change: self._moved(inp.name, 0, change["new"]), "value")
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
            w.observe(lambda change, k=k: self._moved(inp.name, k, change["new"]), "value")
            fields.append(w)
        cols = inp.value.shape[-1]
        grid = ipywidgets.GridBox(fields, layout=ipywidgets.Layout(
            grid_template_columns=f"repeat({cols}, 7em)", grid_gap="2px"))
        label = ipywidgets.Label(f"{inp.name} {'x'.join(map(str, inp.value.shape))}")
        return ipywidgets.HBox([label, grid], layout=ipywidgets.Layout(margin="0 24px 4px 0")), fields

    def _moved(self, name: str, k: int, value: float) -> None:
        if self._quiet:
            return
        new = self.values[name].copy()
        new.reshape(-1)[k] = value
        if new.reshape(-1)[k] != self.values[name].reshape(-1)[k]:
            self._update({**self.values, name: new})

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
        trace = trace_gradients(list(ys), list(xs.values()), title=self._title)
        unused = [n for n, g in zip(xs, trace.gradients) if g is None]
        if unused:
            raise ValueError(f"explore(): what build returns does not depend on input "
                             f"{unused[0]!r} (its gradient is None): use it in build, or leave it out")
        return trace

    def _payload(self) -> dict[str, Any]:
        data = trace_data(self.trace, self._opts, live=self.layouts)
        return {**data, "view": view_settings(self.trace, self._opts)}

    def _update(self, values: dict[str, np.ndarray]) -> None:
        """Run ``build`` at ``values``; the viewer gets the new trace, or the error says why not."""
        try:
            trace = self._run(values)
        except Exception as e:  # build's own errors: said above the diagram, which stays
            self.values = values
            self.error.value = (f"<b>build failed at {_said(values)}</b>: "
                                f"{type(e).__name__}: {html.escape(str(e))}")
            self.error.layout.display = None
            return
        self.values, self.trace = values, trace
        self.error.layout.display = "none"
        payload = self._payload()
        payload["view"]["start_step"] = self.viewer.step
        self.viewer.payload = payload

    def set(self, **values: Any) -> None:
        """Move inputs to ``values`` (each of its input's shape), as dragging their controls does.

        >>> import gradviz as gv
        >>> ex = gv.explore(lambda W: W * W, W=1.0)
        >>> ex.set(W=[1.0, 2.0])
        Traceback (most recent call last):
        ...
        ValueError: explore(): input 'W' is a scalar: got an array of shape (2,)
        """
        new, given = dict(self.values), {}
        for name, v in values.items():
            if name not in self._inputs:
                raise TypeError(f"explore(): no input named {name!r} (the inputs: "
                                f"{', '.join(self._inputs)})")
            shape = self._inputs[name].value.shape
            try:
                a = np.asarray(v, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"explore(): input {name!r} must be a number or an array of "
                                f"numbers, got {v!r}") from None
            if a.shape != shape or not np.all(np.isfinite(a)):
                if a.shape == shape:
                    raise ValueError(f"explore(): input {name!r} must be finite, got {v!r}")
                have = "a scalar" if not shape else f"of shape {shape}"
                raise ValueError(f"explore(): input {name!r} is {have}: got "
                                 f"{'a scalar' if not a.shape else f'an array of shape {a.shape}'}")
            inp = self._inputs[name]
            flat = a.reshape(-1).astype(np.float64)
            if np.any(flat < inp.lo) or np.any(flat > inp.hi):
                k = int(np.argmax((flat < inp.lo) | (flat > inp.hi)))
                raise ValueError(f"explore(): input {name!r}: {flat[k]:g} is outside its range "
                                 f"[{inp.lo[k]:g}, {inp.hi[k]:g}]")
            new[name] = a.astype(self.values[name].dtype)
            given[name] = a
        # The controls move quietly; then build runs once for all of them.  A
        # slider is made anew when the value is off its grid (the browser would
        # snap it to the grid and send that back: see _ends).
        self._quiet = True
        try:
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
        finally:
            self._quiet = False
        self._update(new)


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
