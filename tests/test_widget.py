"""Unit tests for gradviz.views.widget: traits, clamping, show(), the mime bundle, the layout cache."""

from __future__ import annotations

import subprocess

import pytest
import traitlets

from fixtures.traces import linear_regression
from fixtures.viewer_page import load_payload
from gradviz.views import widget as widget_module
from gradviz.views.widget import _STATIC, FALLBACK_CLASS, TraceWidget, show, view_payload

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def payload() -> dict:
    return load_payload()



# ------------------------------------------------------------------ the widget alone


def test_front_end_is_the_package_files(payload):
    w = TraceWidget(payload=payload)
    assert w._esm == (_STATIC / "stepper.js").read_text(encoding="utf-8")
    assert w._css == (_STATIC / "stepper.css").read_text(encoding="utf-8")
    assert "export default { render }" in w._esm


def test_traits_and_defaults(payload):
    w = TraceWidget(payload=payload)
    assert w.num_steps == len(payload["steps"]) == 11
    assert (w.step, w.show_grad_values, w.show_forward_values, w.speed) == (0, True, True, 1.0)
    synced = {name for name in w.traits(sync=True)}
    assert {"payload", "step", "show_grad_values", "show_forward_values", "speed"} <= synced


@pytest.mark.parametrize("value, expected", [(0, 0), (5, 5), (10, 10), (11, 10), (10**9, 10),
                                             (-1, 0), (-10**9, 0)])
def test_step_is_clamped(payload, value, expected):
    w = TraceWidget(payload=payload)
    w.step = value
    assert w.step == expected


def test_step_navigation_methods(payload):
    w = TraceWidget(payload=payload)
    w.previous()
    assert w.step == 0
    w.next()
    w.next()
    assert w.step == 2
    w.last()
    assert w.step == 10
    w.next()
    assert w.step == 10
    w.first()
    assert w.step == 0


def test_step_rejects_non_integers(payload):
    w = TraceWidget(payload=payload)
    with pytest.raises(traitlets.TraitError):
        w.step = "3"
    with pytest.raises(traitlets.TraitError):
        w.step = 2.5


def test_new_payload_with_fewer_steps_reclamps(payload):
    w = TraceWidget(payload=payload)
    w.step = 9
    short = dict(payload, steps=payload["steps"][:3])
    w.payload = short
    assert w.step == 2


def test_empty_payload_keeps_step_zero():
    w = TraceWidget(payload={"steps": []})
    w.step = 4
    assert (w.num_steps, w.step) == (0, 0)


def test_bad_payload_and_speed_are_clear_errors(payload):
    with pytest.raises(ValueError, match=r"payload\['steps'\] must be a list"):
        TraceWidget(payload={"steps": "nope"})
    w = TraceWidget(payload=payload)
    with pytest.raises(ValueError, match="speed: 0.0 steps per second is out of range"):
        w.speed = 0.0
    w.speed = 4
    assert w.speed == 4.0


def test_mimebundle_holds_the_widget_view(payload):
    w = TraceWidget(payload=payload)
    w.step = 4
    data, _metadata = w._repr_mimebundle_()
    assert data[WIDGET_MIME]["model_id"] == w.model_id
    assert data[WIDGET_MIME]["version_major"] == 2
    # one short line, not the widget's repr
    assert data["text/plain"] == f"gradviz viewer: {payload['title']}, step 4 / 10"


class _Shown:
    """What ``display(..., raw=True)`` published, in order: (data, metadata) per output."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.outputs: list[tuple[dict, dict]] = []

        def display(data, *, metadata=None, raw=False):
            assert raw, "a bundle displayed as an object, not as raw data"
            self.outputs.append((data, metadata or {}))

        monkeypatch.setattr(widget_module, "display", display)


def test_displayed_it_is_the_widget_then_its_picture(monkeypatch):
    shown = _Shown(monkeypatch)
    w = show(linear_regression(), step=2)
    w._ipython_display_()
    (widget, metadata), (fallback, no_metadata) = shown.outputs
    assert set(widget) == {WIDGET_MIME, "text/plain"}  # no text/html: nbconvert's pick is no choice
    assert widget[WIDGET_MIME]["model_id"] == w.model_id
    assert widget["text/plain"] == f"gradviz viewer: linear regression, step 2 / {w.num_steps - 1}"
    assert metadata == w._repr_mimebundle_()[1] and no_metadata == {}
    assert set(fallback) == {"text/html", "text/plain"}
    html = fallback["text/html"]
    assert html.startswith(f'<div class="{FALLBACK_CLASS}"><div class="gv-picture"')
    # the same picture a one-bundle caller gets, wrapped
    assert html == f'<div class="{FALLBACK_CLASS}">{w._repr_mimebundle_()[0]["text/html"]}</div>'
    last = w.num_steps - 1
    assert fallback["text/plain"] == (f"linear regression. A picture of step {last}, the last: in "
                                      "JupyterLab with a running kernel, the viewer steps through it live.")


def test_displayed_without_a_drawing_or_closed_it_shows_what_it_has(monkeypatch, payload):
    shown = _Shown(monkeypatch)
    w = TraceWidget(payload={"title": "t", "steps": [{"index": 0}, {"index": 1}]})
    w._ipython_display_()
    assert [set(data) for data, _ in shown.outputs] == [{WIDGET_MIME, "text/plain"}]  # no picture
    shown.outputs.clear()
    w = TraceWidget(payload=payload)
    w.close()
    w._ipython_display_()
    assert shown.outputs == [({"text/plain": f"gradviz viewer: {payload['title']}, step 0 / 10"}, {})]


def test_ipython_displays_it_with_its_own_method(monkeypatch):
    """IPython asks _ipython_display_ before any mime bundle: what a cell's ``w`` runs."""
    from IPython.core.formatters import DisplayFormatter

    shown = _Shown(monkeypatch)
    w = show(linear_regression())
    assert DisplayFormatter().format(w) == ({}, {})  # displayed by the method, nothing left to format
    assert [WIDGET_MIME in data for data, _ in shown.outputs] == [True, False]


def test_a_trace_left_as_a_cells_value_displays_as_show_does(monkeypatch):
    from IPython.core.formatters import DisplayFormatter

    shown = _Shown(monkeypatch)
    assert DisplayFormatter().format(linear_regression()) == ({}, {})
    (widget, _), (fallback, _) = shown.outputs
    assert set(widget) == {WIDGET_MIME, "text/plain"}
    assert fallback["text/html"].startswith(f'<div class="{FALLBACK_CLASS}">')


# ------------------------------------------------------------------ with a real trace


def test_show_builds_the_widget_from_a_trace():
    tr = linear_regression()
    w = show(tr, step=3)
    assert isinstance(w, TraceWidget)
    assert w.step == 3
    assert w.num_steps == len(tr.steps)
    assert [s["kind"] for s in w.payload["steps"]] == [s.kind for s in tr.steps]
    assert "<svg" in w.payload["svg"]
    with pytest.raises(ValueError, match=r"start_step 1000000 is out of range: the trace has \d+ steps"):
        show(tr, step=10**6)
    assert show(tr, step=-1).step == len(tr.steps) - 1


def test_show_rejects_what_is_not_a_trace():
    with pytest.raises(TypeError, match="expected a gradviz.Trace, got dict"):
        show({"steps": []})
    with pytest.raises(TypeError, match="step: expected an integer"):
        show(linear_regression(), step="2")


def test_trace_as_last_expression_displays_the_widget():
    tr = linear_regression()
    data, _metadata = tr._repr_mimebundle_()
    assert set(data) >= {WIDGET_MIME, "text/plain"}
    from ipywidgets.widgets.widget import _instances  # ipywidgets 8's live-widget registry

    widget = _instances[data[WIDGET_MIME]["model_id"]]
    assert isinstance(widget, TraceWidget)
    assert widget.num_steps == len(tr.steps)


class _DotCounter:
    """Counts subprocesses that run graphviz's ``dot``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs = 0
        real_init = subprocess.Popen.__init__

        def counting_init(popen, args, *a, **kw):
            argv = [args] if isinstance(args, (str, bytes)) else list(args)
            if argv and str(argv[0]).rsplit("/", 1)[-1] == "dot":
                self.runs += 1
            return real_init(popen, args, *a, **kw)

        monkeypatch.setattr(subprocess.Popen, "__init__", counting_init)


def test_displaying_twice_lays_out_once(monkeypatch, tmp_path):
    dot = _DotCounter(monkeypatch)
    tr = linear_regression()
    tr._repr_mimebundle_()
    first = dot.runs
    assert first >= 1, "the counter saw no dot run: the test would prove nothing"
    tr._repr_mimebundle_()
    show(tr, step=2)
    tr.to_html(tmp_path / "r.html", values="none", start_step=-1, bookkeeping=False,
               font_size=24)  # view options that change no layout
    assert dot.runs == first
    assert view_payload(tr)["steps"] is view_payload(tr, values="gradient")["steps"]
