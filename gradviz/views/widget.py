"""The step-through viewer as a JupyterLab widget (an anywidget over ``static/stepper.js``).

The whole trace view (one laid-out SVG plus every step) is sent to the browser
once, in the ``payload`` trait; the browser does all the stepping.  Python owns
the ``step`` trait too, so ``w.step = 5`` in a cell moves the viewer and a click
in the viewer updates ``w.step``.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="x")
>>> w = gv.show(gv.trace_gradients(x * x, x))
>>> w.num_steps, w.step
(4, 0)
>>> w.step = 99          # clamped into 0..num_steps-1
>>> w.step
3

Displayed in a notebook, the viewer is two outputs: the widget, then a picture
of its last step (:mod:`gradviz.views.picture`) for a page that cannot run the
widget (see :meth:`TraceWidget._ipython_display_`).
"""

from __future__ import annotations

import json
import pathlib
import weakref
from dataclasses import replace
from typing import Any

import anywidget
import traitlets
from IPython.display import display

from .options import shown, view_options
from .picture import picture_html, picture_note
from ..trace import Trace

__all__ = ["TraceWidget", "show", "view_payload", "with_picture", "fallback_bundle",
           "display_with_fallback", "FALLBACK_CLASS", "SPEED_RANGE"]

_STATIC = pathlib.Path(__file__).parent / "static"

#: Accepted play speeds, in steps per second (inclusive bounds).
SPEED_RANGE = (0.1, 20.0)

#: The class of the output a viewer displays after its widget: the picture of its
#: last step, for a page that cannot run the widget.  ``static/stepper.css`` hides it
#: only right after an output where the live viewer runs (JupyterLab, Notebook 7):
#: ``.jp-OutputArea-child:has(.gv-viewer) + .jp-OutputArea-child:has(> .jp-OutputArea-output
#: > .gv-widget-fallback)``.
FALLBACK_CLASS = "gv-widget-fallback"

# trace_data(trace, ...) per trace and layout options: displaying a trace twice, or
# showing it and exporting it, lays it out with ``dot`` only once.
_PAYLOADS: weakref.WeakKeyDictionary[Any, dict[str, dict]] = weakref.WeakKeyDictionary()


def view_payload(trace: Any, renderer: str = "show", *, all_views: bool = False,
                 **options: Any) -> dict:
    """The view data for ``trace`` (see :func:`gradviz.views.viewdata.view_data`).

    ``options`` are the view options (:mod:`gradviz.views.options`; an unknown
    one is a ``TypeError`` that names ``renderer``).  The part that depends on
    the layout is cached on the trace per layout, so every renderer of the same
    trace shares one; only ``view``, how the viewer opens, is made per call.
    Treat the returned dict as read-only.

    A trace in name scopes carries the drawing of each choice of open scopes
    (:mod:`gradviz.views.navigation`): laid out only when a widget's reader asks
    for one, or with ``all_views`` all at once (a report, which has no kernel to ask).

    >>> import gradviz as gv
    >>> x = gv.constant(3.0, name="x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> view_payload(tr)["steps"] is view_payload(tr, values="none")["steps"]
    True
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"expected a gradviz.Trace, got {type(trace).__name__} "
                        "(build one with gv.trace_gradients(...) or tape.trace_gradient(...))")
    from .navigation import with_scope_views
    from .viewdata import drawing_options, trace_data, view_settings, with_questions

    opts = view_options(renderer, **options)
    trace = shown(trace, opts)
    key = json.dumps(opts.layout, sort_keys=True, default=repr)
    per_trace = _PAYLOADS.setdefault(trace, {})
    if key not in per_trace:
        per_trace[key] = trace_data(trace, replace(opts, practice=False))
    data = per_trace[key]
    if all_views:
        if key + " views" not in per_trace:
            per_trace[key + " views"] = with_scope_views(trace, data, drawing_options(trace, opts))
        data = per_trace[key + " views"]
    if opts.practice:  # the questions, worked out only for a viewer that asks them
        asked = key + (" views" if all_views else "") + " practice"
        if asked not in per_trace:
            per_trace[asked] = with_questions(trace, data)
        data = per_trace[asked]
    return {**data, "view": view_settings(trace, opts)}


class TraceWidget(anywidget.AnyWidget):
    """A trace's step-through viewer: diagram, controls, step panel, final gradients.

    Traits (all synced with the browser):

    - ``payload``: the view data, sent once (see :func:`view_payload`).
    - ``step``: the current step, 0-based.  Python clamps it into
      ``0..num_steps-1``: ``w.step = 10**6`` shows the last step, ``w.step = -3``
      the first.  A value that is not an integer raises ``TraitError``.
    - ``show_grad_values`` / ``show_forward_values``: print values or not.
    - ``speed``: play speed in steps per second, within :data:`SPEED_RANGE`
      (a ``ValueError`` outside it).
    - ``practice_results``: set by a practising viewer (``practice=True``) at each
      answer: how every question went so far, read by :meth:`results`.

    Usually made by :func:`show`; ``TraceWidget(payload=view_data)`` also works.

    >>> w = TraceWidget(payload={"title": "t", "steps": [{"index": 0}, {"index": 1}]})
    >>> w.step = -1
    >>> w.step
    0
    >>> w.last(); w.step
    1
    """

    _esm = _STATIC / "stepper.js"
    _css = _STATIC / "stepper.css"

    payload = traitlets.Dict().tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    show_grad_values = traitlets.Bool(True).tag(sync=True)
    show_forward_values = traitlets.Bool(True).tag(sync=True)
    speed = traitlets.Float(1.0).tag(sync=True)
    practice_results = traitlets.Dict().tag(sync=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # (trace, its drawing's options): where a scope view the reader opens is laid
        # out (set by show(); a widget made from a bare payload opens none it lacks)
        self._scope_source: tuple[Trace, Any] | None = None
        self.on_msg(self._on_message)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """The viewer asks for a scope view its payload does not hold: lay it out, send it."""
        if not isinstance(content, dict) or content.get("kind") != "scope_view":
            return
        key = content.get("key")
        scopes = self.payload.get("scopes") or {}
        if self._scope_source is None or key not in (scopes.get("views") or {}):
            self.send({"kind": "scope_view", "key": key, "view": None,
                       "error": f"no scope view {key!r} to lay out"})
            return
        from .navigation import scope_view
        trace, opts = self._scope_source
        try:
            view = scope_view(trace, opts, key)
        except Exception as exc:  # (a layout that failed or timed out: say so, at once)
            self.send({"kind": "scope_view", "key": key, "view": None,
                       "error": f"{type(exc).__name__}: {exc}"})
            return
        self.send({"kind": "scope_view", "key": key, "view": view})

    @property
    def num_steps(self) -> int:
        """How many steps the trace has."""
        steps = self.payload.get("steps")
        return len(steps) if isinstance(steps, list) else 0

    @traitlets.validate("step")
    def _clamp_step(self, proposal: dict) -> int:
        value = proposal["value"]
        return max(0, min(max(self.num_steps - 1, 0), value))

    @traitlets.validate("speed")
    def _check_speed(self, proposal: dict) -> float:
        value = proposal["value"]
        lo, hi = SPEED_RANGE
        if not lo <= value <= hi:
            raise ValueError(f"speed: {value!r} steps per second is out of range "
                             f"(must be between {lo} and {hi})")
        return value

    @traitlets.validate("payload")
    def _check_payload(self, proposal: dict) -> dict:
        value = proposal["value"]
        if not isinstance(value.get("steps", []), list):
            raise ValueError("payload['steps'] must be a list of step dicts "
                             f"(got {type(value.get('steps')).__name__})")
        return value

    @traitlets.observe("payload")
    def _reclamp(self, change: dict) -> None:
        # A new payload with fewer steps must not leave ``step`` past its end.
        self.step = self.step

    def summary(self) -> str:
        """One line for the widget's ``text/plain``: what it shows, and at which step.

        >>> TraceWidget(payload={"title": "fit", "steps": [{}, {}, {}]}).summary()
        'gradviz viewer: fit, step 0 / 2'
        """
        last = max(self.num_steps - 1, 0)
        return f"gradviz viewer: {_title(self.payload)}, step {self.step} / {last}"

    def _widget_bundle(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """The widget's own bundle, its ``text/plain`` the :meth:`summary`; None once closed."""
        if self.comm is None:
            return None
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        return {**data, "text/plain": self.summary()}, metadata

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """The widget's bundle with the picture of its last step as its ``text/html``, in one.

        For a caller that publishes one bundle (a trace as a cell's last
        expression, see ``Trace._repr_mimebundle_``): a front end that has no
        widget model for it and skips the widget's entry shows the picture.
        Displayed by IPython, the viewer is two outputs instead
        (:meth:`_ipython_display_`).
        """
        return with_picture(self._widget_bundle(**kwargs), picture_html(self.payload))

    def _ipython_display_(self) -> None:
        """Display the widget, then the picture of its last step as an output of its own.

        ``jupyter nbconvert --execute`` stores the widget's state by default, and
        then renders an output holding the widget's entry as the widget alone: an
        empty box wherever its JavaScript does not load.  The picture, in the
        next output (:func:`fallback_bundle`), shows there, on GitHub and in a
        notebook reopened with no kernel; where the live viewer's stylesheet is
        loaded, it is hidden (:data:`FALLBACK_CLASS`).
        """
        display_with_fallback(self._widget_bundle(), fallback_bundle(self.payload),
                              self.summary())

    def results(self, student: str | None = None) -> Any:
        """What the student did in this practising viewer, as a results file holds it
        (:class:`~gradviz.views.practice.HandIn`): per question, the attempts and
        their verdicts, hints, revealed or skipped, and seconds on screen.

        ``student`` is the name to hand in under; by default the one typed in the
        viewer's "hand in" box.  Save it with ``.save(path)``, or :meth:`hand_in`.
        """
        from .practice.handin import (FORMAT, VERSION, HandIn, HandInError,  # noqa: PLC0415
                                      check_name, timestamp)

        if not (self.payload.get("view") or {}).get("practice"):
            raise ValueError("this viewer does not practise, so it has no results: show the "
                             "trace with gv.show(trace, practice=True) and answer its questions")
        data = dict(self.practice_results) or {
            "format": FORMAT, "version": VERSION, "student": "",
            "trace": {"key": self.payload.get("trace_key", ""), "title": self.payload.get("title", "")},
            "questions": [
                {"step": k, "index": i, "target": q["target"], "attempts": [], "hints": 0,
                 "outcome": "open", "skipped": False, "seconds": 0}
                for k, s in enumerate(self.payload.get("steps") or [])
                for i, q in enumerate(s.get("questions") or [])]}
        if student is not None:
            if not isinstance(student, str):
                raise TypeError(f"student: expected a name (str), got {type(student).__name__}")
            try:
                data["student"] = check_name(student)
            except HandInError as exc:
                raise ValueError(f"results: {exc}") from None
        if not str(data.get("student", "")).strip():
            raise ValueError("results: no name to hand in under; type it in the viewer's "
                             "\"hand in\" box, or give one: results(student=\"Ada\")")
        data["handed_in"] = timestamp()
        try:
            return HandIn.from_dict(data)
        except HandInError as exc:
            raise ValueError(f"results: the viewer's results do not read back: {exc}") from None

    def hand_in(self, path: Any, student: str | None = None) -> pathlib.Path:
        """Save :meth:`results` as a results file at ``path``; the absolute path written."""
        return self.results(student).save(path)

    def first(self) -> None:
        """Go to the first step."""
        self.step = 0

    def last(self) -> None:
        """Go to the last step."""
        self.step = max(self.num_steps - 1, 0)

    def next(self) -> None:
        """Go one step forward (stays on the last step)."""
        self.step = self.step + 1

    def previous(self) -> None:
        """Go one step back (stays on the first step)."""
        self.step = self.step - 1


def with_picture(bundle: tuple[dict, dict] | dict | None,
                 picture: str) -> tuple[dict, dict] | None:
    """A widget's mime bundle (``data`` or ``(data, metadata)``) with ``picture`` as its
    ``text/html``, a ``(data, metadata)`` pair; None stays None (a closed widget).

    >>> with_picture({"text/plain": "w"}, "<div>p</div>")
    ({'text/plain': 'w', 'text/html': '<div>p</div>'}, {})
    """
    if bundle is None:
        return None
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
    return ({**data, "text/html": picture} if picture else dict(data)), metadata


def fallback_bundle(payload: dict, note: str = "") -> dict | None:
    """The output a viewer of ``payload`` displays after its widget: the picture of
    its last step (:func:`~gradviz.views.picture.picture_html`, ``note`` under its
    title) in an element of class :data:`FALLBACK_CLASS`, with a matching
    ``text/plain``; None for a payload with no drawing.

    >>> fallback_bundle({"title": "t", "steps": [{}]}) is None
    True
    """
    picture = picture_html(payload, note)
    if not picture:
        return None
    last = len(payload["steps"]) - 1
    about = _title(payload) + (f", {note}" if note else "")
    return {"text/html": f'<div class="{FALLBACK_CLASS}">{picture}</div>',
            "text/plain": f"{about}. {picture_note(last)}"}


def display_with_fallback(bundle: tuple[dict, dict] | None, fallback: dict | None,
                          summary: str) -> None:
    """Publish a widget's ``bundle`` (``(data, metadata)``), then ``fallback`` as a
    second output (:func:`fallback_bundle`; None: none).  A closed widget
    (``bundle`` None) shows its ``summary`` line alone, as IPython shows what has
    no widget to display.
    """
    if bundle is None:
        display({"text/plain": summary}, raw=True)
        return
    data, metadata = bundle
    display(data, metadata=metadata, raw=True)
    if fallback is not None:
        display(fallback, raw=True)


def _title(payload: dict) -> str:
    return str(payload.get("title") or "gradviz trace")


def show(trace: Any, step: int | None = None, **options: Any) -> TraceWidget:
    """The step-through viewer for ``trace``.

    ``options`` are the view options every renderer takes
    (:mod:`gradviz.views.options`): ``values="none"`` opens with every value
    hidden, ``start_step`` (or ``step``, its older name) at that step, and so
    on.  The layout is computed once per trace and layout options, then reused.

    >>> import gradviz as gv
    >>> W = gv.Variable(2.0, name="W")
    >>> w = gv.show(gv.trace_gradients(3.0 * W, [W]), step=1)
    >>> type(w).__name__, w.step, w.payload["steps"][0]["kind"]
    ('TraceWidget', 1, 'seed')
    >>> w = gv.show(gv.trace_gradients(3.0 * W, [W]), start_step=-1, values="forward")
    >>> w.step, w.show_grad_values, w.show_forward_values
    (2, False, True)
    """
    if step is not None:
        if "start_step" in options:
            raise TypeError("show() got both step and start_step: they are one option, give one")
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError(f"step: expected an integer, got {type(step).__name__} {step!r}")
        options["start_step"] = step
    payload = view_payload(trace, "show", **options)
    view = payload["view"]
    widget = TraceWidget(payload=payload)
    from .viewdata import drawing_options
    opts = view_options("show", **options)
    widget._scope_source = (shown(trace, opts), drawing_options(trace, opts))
    widget.show_grad_values = view["values"] in ("all", "gradient")
    widget.show_forward_values = view["values"] in ("all", "forward")
    widget.step = view["start_step"]
    return widget
