"""One set of view options for every renderer: to_svg, to_html, export_html and show.

Each option is accepted by all four with the same meaning, and an unknown one
is the same clear error, naming the renderer and the accepted options.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import pytest

import gradviz as gv
from gradviz.views import diagram
from gradviz.views.options import VIEW_OPTIONS

# One value for each option that is not its default.
NON_DEFAULT = {
    "rankdir": "LR",
    "collapse": False,
    "compact": False,
    "values": "gradient",
    "start_step": -1,
    "bookkeeping": False,
    "font_size": 24,
    "practice": True,
    "source": False,
}


def small_trace() -> gv.Trace:
    W = gv.Variable([[1.0, -2.0]], name="W")
    x = gv.constant([[3.0], [0.5]], name="x")
    return gv.trace_gradients(gv.reduce_sum(gv.tanh(gv.matmul(W, x))), [W], title="tanh(Wx)")


def report_payloads(path: Path) -> list[dict]:
    page = path.read_text(encoding="utf-8")
    blocks = re.findall(r'<script type="application/json" id="gv-payload-\d+">(.*?)</script>', page)
    svgs = re.findall(r'<script type="image/svg\+xml" id="gv-svg-\d+">(.*?)</script>', page, re.S)
    return [{**json.loads(b), "svg": svg} for b, svg in zip(blocks, svgs)]


def _svg(tr: gv.Trace, tmp: Path, **o: Any) -> str:
    return tr.to_svg(**o)


def _to_html(tr: gv.Trace, tmp: Path, **o: Any) -> dict:
    return report_payloads(tr.to_html(tmp / "one.html", **o))[0]["view"]


def _export(tr: gv.Trace, tmp: Path, **o: Any) -> dict:
    return report_payloads(gv.export_html([tr, tr], tmp / "two.html", **o))[1]["view"]


def _show(tr: gv.Trace, tmp: Path, **o: Any) -> dict:
    return gv.show(tr, **o).payload["view"]


RENDERERS: dict[str, Callable[..., Any]] = {
    "to_svg": _svg, "to_html": _to_html, "export_html": _export, "show": _show}


def test_the_options_are_the_ones_the_issue_names() -> None:
    assert set(VIEW_OPTIONS) >= {"rankdir", "values", "start_step", "bookkeeping", "font_size"}
    assert set(NON_DEFAULT) == set(VIEW_OPTIONS)


@pytest.mark.parametrize("renderer", sorted(RENDERERS))
@pytest.mark.parametrize("option", VIEW_OPTIONS)
def test_every_renderer_takes_every_option(renderer: str, option: str, tmp_path: Path) -> None:
    out = RENDERERS[renderer](small_trace(), tmp_path, **{option: NON_DEFAULT[option]})
    assert out


@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_an_unknown_option_names_the_accepted_ones(renderer: str, tmp_path: Path) -> None:
    accepted = ", ".join(VIEW_OPTIONS)
    with pytest.raises(TypeError) as err:
        RENDERERS[renderer](small_trace(), tmp_path, fontsize=20)
    assert f"{renderer}() got an unknown option 'fontsize' (did you mean 'font_size'?)" in str(err.value)
    assert str(err.value).endswith(f"accepted: {accepted}")
    assert not list(tmp_path.iterdir()), "a refused report left a file behind"


@pytest.mark.parametrize("renderer", sorted(RENDERERS))
@pytest.mark.parametrize("option,bad,message", [
    ("values", "some", "values must be one of 'all', 'gradient', 'forward', 'none'"),
    ("start_step", 1.5, "start_step must be an integer step number"),
    ("start_step", 99, "start_step 99 is out of range: the trace has 5 steps"),
    ("bookkeeping", "no", "bookkeeping must be True or False"),
    ("font_size", 200, "font_size must be a number of px from 6 to 72"),
    ("practice", "yes", "practice must be True or False"),
    ("source", "no", "source must be True or False"),
    ("rankdir", "sideways", "unknown rankdir: 'sideways'"),
])
def test_a_bad_value_says_what_is_accepted(renderer: str, option: str, bad: Any, message: str,
                                           tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        RENDERERS[renderer](small_trace(), tmp_path, **{option: bad})
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("renderer", ["to_html", "export_html", "show"])
def test_viewers_open_as_the_options_say(renderer: str, tmp_path: Path) -> None:
    tr = small_trace()
    view = RENDERERS[renderer](tr, tmp_path, values="forward", start_step=-2, bookkeeping=False,
                               font_size=22, practice=True)
    assert view == {"values": "forward", "start_step": len(tr.steps) - 2, "bookkeeping": False,
                    "font_size": 22.0, "practice": True}
    default = RENDERERS[renderer](tr, tmp_path)
    assert default == {"values": "all", "start_step": 0, "bookkeeping": True, "font_size": None,
                       "practice": False}


def test_show_sets_its_traits_from_the_options() -> None:
    tr = small_trace()
    w = gv.show(tr, values="none", start_step=2)
    assert (w.step, w.show_grad_values, w.show_forward_values) == (2, False, False)
    w = gv.show(tr, values=True)
    assert (w.step, w.show_grad_values, w.show_forward_values) == (0, True, True)
    with pytest.raises(TypeError, match="both step and start_step"):
        gv.show(tr, step=1, start_step=1)


def test_a_report_lays_out_left_to_right(tmp_path: Path) -> None:
    tr = small_trace()
    (payload,) = report_payloads(tr.to_html(tmp_path / "lr.html", rankdir="LR"))
    assert payload["svg"] == diagram.layout_svg(tr, rankdir="LR", legend=False)
    assert payload["svg"] != diagram.layout_svg(tr, rankdir="TB", legend=False)


def test_a_viewer_keeps_values_in_its_layout_to_reveal_them(tmp_path: Path) -> None:
    tr = small_trace()
    (payload,) = report_payloads(tr.to_html(tmp_path / "hidden.html", values="none"))
    assert 'class="gv-grad-value"' in payload["svg"]


def test_svg_values_option() -> None:
    tr = small_trace()
    root = re.compile(r"<svg [^>]*>")
    assert 'class="gv-svg gv-hide-forward"' in root.search(tr.to_svg(values="gradient")).group()
    assert 'class="gv-svg gv-hide-grad"' in root.search(tr.to_svg(values="forward")).group()
    assert 'class="gv-svg"' in root.search(tr.to_svg(values="all")).group()
    bare = tr.to_svg(values="none")
    assert 'class="gv-grad-value"' not in bare and 'class="gv-forward-value"' not in bare
    # the embedded style hides what the root's class says
    assert ".gv-hide-grad .gv-grad-value" in tr.to_svg(values="forward")
    # practice: a worksheet, the gradients left to fill in, the forward values kept
    assert 'class="gv-svg gv-hide-grad"' in root.search(tr.to_svg(practice=True)).group()
    assert 'class="gv-svg gv-hide-grad gv-hide-forward"' in root.search(
        tr.to_svg(practice=True, values="gradient")).group()


def test_svg_font_size_scales_the_picture_not_the_layout() -> None:
    tr = small_trace()
    size = re.compile(r'<svg class="gv-svg" width="([\d.]+)pt" height="([\d.]+)pt"\s+viewBox="([^"]+)"')
    w0, h0, vb0 = size.search(tr.to_svg()).groups()
    least = min(float(f) for f in re.findall(r' font-size="([\d.]+)"', tr.to_svg()))
    w1, h1, vb1 = size.search(tr.to_svg(font_size=30)).groups()
    assert vb1 == vb0
    scale = 30 / (least * 4 / 3)  # the smallest text, in px at the picture's new size
    assert float(w1) == pytest.approx(float(w0) * scale, abs=0.02)
    assert float(h1) == pytest.approx(float(h0) * scale, abs=0.02)


def test_svg_start_step_is_step() -> None:
    tr = small_trace()
    assert tr.to_svg(start_step=1) == tr.to_svg(1)
    assert tr.to_svg(start_step=-1) == tr.to_svg(len(tr.steps) - 1)
    with pytest.raises(TypeError, match="both step and start_step"):
        tr.to_svg(1, start_step=2)


def test_value_spans_count_as_a_browser_does() -> None:
    import numpy as np

    from gradviz.trace import ArrayData
    from gradviz.views.explain import format_array, marked_values, value_spans

    with marked_values():
        text = f"\U0001d465 is ready: {format_array(ArrayData.of(np.array([1.5, -2.0])))}."
    plain, spans = value_spans(text)
    assert plain == "\U0001d465 is ready: [1.5, -2]."
    # the mathematical x is two UTF-16 units: JavaScript's slice(13, 22) is the values
    assert spans == [13, 22]
    assert plain.encode("utf-16-le")[2 * 13:2 * 22].decode("utf-16-le") == "[1.5, -2]"
    assert format_array(ArrayData.of(np.array([1.5]))) == "[1.5]"  # unmarked outside
