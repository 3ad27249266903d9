"""The two layout engines: which is chosen, that they draw the same diagram, and
that a missing, hung or broken Graphviz is one clear error."""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

import gradviz as gv
from fixtures.fake_programs import fake_dot
from fixtures.traces import linear_regression, scoped_mlp, scoped_tanh_chain, two_layer_mlp
from gradviz.views.diagram import layout_svg
from gradviz.views.diagram.layout import LayoutError, _without_fontconfig_warnings


@pytest.fixture
def no_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with no ``dot`` on it (an empty folder)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("GRADVIZ_LAYOUT", raising=False)


@pytest.fixture
def no_pygraphviz(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import pygraphviz`` fails, as where it is not installed."""
    monkeypatch.setitem(sys.modules, "pygraphviz", None)


# ---------------------------------------------------------------- which engine


def test_dot_is_used_when_it_is_on_path(monkeypatch):
    monkeypatch.delenv("GRADVIZ_LAYOUT", raising=False)
    if shutil.which("dot") is None:
        pytest.fail("dot is not on PATH: make test installs Graphviz (scripts/setup.sh)")
    assert gv.layout_engine() == "dot"


def test_without_dot_pygraphviz_lays_out_and_the_diagram_is_drawn(no_dot):
    assert gv.layout_engine() == "pygraphviz"
    svg = linear_regression().to_svg()
    assert svg.startswith("<svg") and 'class="gv-svg"' in svg


@pytest.mark.parametrize("engine", ["dot", "pygraphviz"])
def test_the_environment_variable_forces_an_engine(monkeypatch, engine):
    monkeypatch.setenv("GRADVIZ_LAYOUT", engine)
    assert gv.layout_engine() == engine


@pytest.mark.parametrize("value", ["wasm", "DOT", "neato", "1"])
def test_a_bad_engine_name_says_what_is_accepted(monkeypatch, value):
    monkeypatch.setenv("GRADVIZ_LAYOUT", value)
    with pytest.raises(ValueError, match=rf"GRADVIZ_LAYOUT='{value}' is not a layout "
                                         r"engine( \(.*\))?; accepted: dot, pygraphviz"):
        gv.layout_engine()
    with pytest.raises(ValueError, match="GRADVIZ_LAYOUT="):
        linear_regression().to_svg()


def test_asking_for_webassembly_says_why_there_is_none(monkeypatch):
    monkeypatch.setenv("GRADVIZ_LAYOUT", "wasm")
    with pytest.raises(ValueError, match=r"no WebAssembly engine: the WebAssembly Graphviz on "
                                         r"PyPI cannot draw its labels\); accepted: dot, "):
        gv.layout_engine()


def test_forcing_dot_where_there_is_none_says_how_to_install_it(no_dot, monkeypatch):
    monkeypatch.setenv("GRADVIZ_LAYOUT", "dot")
    with pytest.raises(LayoutError, match=r"GRADVIZ_LAYOUT=dot, but no program 'dot' is on "
                                          r"PATH\. Install Graphviz with apt-get install graphviz"):
        gv.layout_engine()


def test_forcing_pygraphviz_where_it_cannot_be_imported_says_so(no_pygraphviz, monkeypatch):
    monkeypatch.setenv("GRADVIZ_LAYOUT", "pygraphviz")
    with pytest.raises(LayoutError, match=r"pygraphviz cannot be imported here\. Install it "
                                          r"with pip install 'pygraphviz>=2'"):
        gv.layout_engine()


@pytest.mark.parametrize("platform, program", [
    ("linux", "apt-get install graphviz"),
    ("darwin", "brew install graphviz"),
    ("win32", "the Windows installer from https://graphviz.org/download/"),
])
def test_with_no_graphviz_at_all_the_first_drawing_says_what_to_install(
        no_dot, no_pygraphviz, monkeypatch, tmp_path, platform, program):
    monkeypatch.setattr(sys, "platform", platform)
    tr = linear_regression()
    with pytest.raises(LayoutError) as caught:
        tr.to_svg()
    message = str(caught.value)
    assert "neither the program 'dot' on PATH nor the package pygraphviz" in message
    assert "pip install 'pygraphviz>=2'" in message
    assert program in message
    assert "ExecutableNotFound" not in message
    # A report is not left half-written.
    with pytest.raises(LayoutError):
        tr.to_html(tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


# ---------------------------------------------------------------- a dot that misbehaves


def test_a_hung_dot_is_stopped_at_the_timeout(tmp_path, monkeypatch):
    # sleep runs as a child of the script: the timeout stops both.
    dot = fake_dot(tmp_path, monkeypatch, f"{shutil.which('sleep')} 60\n")
    monkeypatch.setenv("GRADVIZ_LAYOUT_TIMEOUT", "1.5")
    start = time.monotonic()
    with pytest.raises(LayoutError) as caught:
        linear_regression().to_svg()
    assert time.monotonic() - start < 10
    assert str(caught.value).startswith(
        f"Graphviz's dot ({dot}) did not finish laying out the diagram within 1.5 s, "
        "so it was stopped.")
    assert "GRADVIZ_LAYOUT_TIMEOUT" in str(caught.value)


def test_a_dot_that_fails_names_itself_and_its_stderr(tmp_path, monkeypatch):
    dot = fake_dot(tmp_path, monkeypatch,
                   "echo 'Error: <stdin>: syntax error in line 1 near x' >&2\nexit 3\n")
    with pytest.raises(LayoutError) as caught:
        linear_regression().to_svg()
    assert str(caught.value) == (f"Graphviz's dot ({dot}) failed with exit status 3: "
                                 "Error: <stdin>: syntax error in line 1 near x")


def test_a_dot_that_exits_at_once_without_reading_is_not_a_broken_pipe(tmp_path, monkeypatch):
    dot = fake_dot(tmp_path, monkeypatch, "exit 1\n")
    with pytest.raises(LayoutError, match=re.escape(
            f"Graphviz's dot ({dot}) failed with exit status 1 and printed nothing on stderr")):
        scoped_mlp().to_svg()  # a source larger than a pipe's buffer


def test_a_dot_that_prints_garbage_says_what_it_printed(tmp_path, monkeypatch):
    dot = fake_dot(tmp_path, monkeypatch, f"{shutil.which('cat')} >/dev/null\n"
                   "echo 'Format: \"svg\" not recognized'\necho 'Warning: no fonts' >&2\n")
    with pytest.raises(LayoutError) as caught:
        linear_regression().to_svg()
    assert str(caught.value) == (f"Graphviz's dot ({dot}) exited normally but did not write SVG: "
                                 "it printed 'Format: \"svg\" not recognized'; "
                                 "on stderr: Warning: no fonts")


@pytest.mark.parametrize("value", ["soon", "0", "-5"])
def test_a_bad_timeout_says_what_is_accepted(monkeypatch, value):
    monkeypatch.setenv("GRADVIZ_LAYOUT", "dot")
    monkeypatch.setenv("GRADVIZ_LAYOUT_TIMEOUT", value)
    with pytest.raises(ValueError, match=rf"GRADVIZ_LAYOUT_TIMEOUT='{value}' is not a number of "
                                         "seconds; accepted: a positive number"):
        linear_regression().to_svg()


# ---------------------------------------------------------------- the same diagram


_ELEMENT = re.compile(r'<g id="([^"]+)" class="([^"]+)">(.*?)(?=<g id="|\Z)', re.DOTALL)


def drawn(svg: str) -> dict[str, tuple[str, list[str], list[str]]]:
    """Each element of a diagram: its class, its texts in order, and its hover text."""
    return {m.group(1): (m.group(2), re.findall(r"<text[^>]*>([^<]*)</text>", m.group(3)),
                         re.findall(r"<title>([^<]*)</title>", m.group(3)))
            for m in _ELEMENT.finditer(svg)}


def long_chain():
    """Long enough that its scopes are collapsed and runs of ops grouped."""
    return scoped_tanh_chain(60)


@pytest.mark.parametrize("make", [linear_regression, two_layer_mlp, scoped_mlp, long_chain])
@pytest.mark.parametrize("options", [
    {}, {"compact": False, "rankdir": "LR"}, {"brief": True, "values": False},
    {"collapse": True, "legend": False},
], ids=["default", "loose-LR", "brief", "collapsed"])
def test_both_engines_draw_the_same_nodes_edges_clusters_and_legend(monkeypatch, make, options):
    tr = make()
    svgs = {}
    for engine in ("dot", "pygraphviz"):
        monkeypatch.setenv("GRADVIZ_LAYOUT", engine)
        svgs[engine] = layout_svg(tr, **options)
    by_dot, by_pygraphviz = drawn(svgs["dot"]), drawn(svgs["pygraphviz"])
    assert len(by_dot) > 5
    assert by_dot == by_pygraphviz
    kinds = {c.split()[0] for c, _, _ in by_dot.values()}
    assert {"node", "edge"} <= kinds
    # Both come out of the same tidying: one transform-free dialect.
    for svg in svgs.values():
        assert "xml:space" not in svg and "<!--" not in svg and " transform=" not in svg


def test_each_engine_lays_out_once_per_trace(monkeypatch):
    tr = linear_regression()
    monkeypatch.setenv("GRADVIZ_LAYOUT", "dot")
    first = layout_svg(tr)
    monkeypatch.setenv("GRADVIZ_LAYOUT", "pygraphviz")
    other = layout_svg(tr)
    assert layout_svg(tr) is other
    monkeypatch.setenv("GRADVIZ_LAYOUT", "dot")
    assert layout_svg(tr) is first


def test_fontconfig_warnings_are_dropped_and_everything_else_passed_on(capfd):
    # pygraphviz's own fontconfig, reading a newer system's font configuration,
    # warns under a learner's first diagram; Graphviz's own warnings still show.
    with _without_fontconfig_warnings():
        os.write(2, b'Fontconfig warning: "/usr/share/fontconfig/conf.avail/05-reset-dirs-'
                    b'sample.conf", line 6: unknown element "reset-dirs"\n')
        os.write(2, b"Warning: Unable to reclaim box space in spline routing\n")
    err = capfd.readouterr().err
    assert "Fontconfig" not in err
    assert err == "Warning: Unable to reclaim box space in spline routing\n"


def test_the_error_is_reachable_from_the_package(no_dot, no_pygraphviz):
    with pytest.raises(gv.LayoutError):
        linear_regression().to_svg()
    assert gv.LayoutError is LayoutError and issubclass(LayoutError, RuntimeError)
