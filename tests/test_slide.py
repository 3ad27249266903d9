"""A step's picture for a slide: ``to_svg(crop=True)``, ``inline=True`` and ``to_png``.

The picture must show the step's state with no stylesheet at all (what
PowerPoint, Keynote and Inkscape keep of an SVG), hold whole boxes at 16:9,
draw the current edge in librsvg (which drew only its arrowhead while the
highlight was a CSS filter), and come out as a PNG of the size asked, with or
without the program ``dot``.  That the written-in look is the stylesheet's
look, element for element, is checked in Chromium in
``tests/test_slide_browser.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

import gradviz as gv
from fixtures.traces import deep_mlp, two_layer_mlp
from gradviz.views import diagram
from gradviz.views.diagram import slide
from gradviz.views.marks import MARKS

NS = "{http://www.w3.org/2000/svg}"
SHAPES = {f"{NS}{t}" for t in ("path", "polygon", "ellipse", "polyline")}
PAIR = re.compile(r"(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)")
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def mlp() -> gv.Trace:
    return two_layer_mlp()


def parsed(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def groups(root: ET.Element) -> dict[str, ET.Element]:
    return {g.get("id"): g for g in root.iter(f"{NS}g") if g.get("id")}


def classes(el: ET.Element) -> set[str]:
    return set((el.get("class") or "").split())


def view_box(root: ET.Element) -> tuple[float, float, float, float]:
    x, y, w, h = (float(v) for v in root.get("viewBox").split())
    return x, y, w, h


def points(el: ET.Element) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in PAIR.findall(el.get("d") or el.get("points") or "")]


def mid_curve(d: str) -> tuple[float, float]:
    """A point on the first cubic of a path ``M p0 C p1 p2 p3 ...``: its middle."""
    p = [np.array(pt, dtype=float) for pt in PAIR.findall(d)[:4]]
    if len(p) < 4 or "C" not in d:
        return tuple((p[0] + p[-1]) / 2)
    return tuple((p[0] + 3 * p[1] + 3 * p[2] + p[3]) / 8)


def test_a_cropped_picture_shows_each_step_with_no_style_at_all(mlp, each_layout_engine):
    gradient = MARKS["gradient"].color.lower()
    for k in range(len(mlp.steps)):
        svg = mlp.to_svg(step=k, crop=True, legend=False)
        assert "<style" not in svg and "filter" not in svg and "transparent" not in svg
        root = parsed(svg)
        assert (root.get("width"), root.get("height")) == ("1280", "720")
        x, y, w, h = view_box(root)
        assert w / h == pytest.approx(16 / 9, rel=1e-3) and w >= slide.MIN_CROP_WIDTH - 0.01
        found = groups(root)
        ids = diagram.step_ids(mlp, k, legend=False)
        assert set(ids) <= set(found), f"step {k}: the picture lacks {set(ids) - set(found)}"
        for i in ids:  # lit without a filter: thick black over a wide yellow copy
            g = found[i]
            assert "gv-active" in classes(g)
            shapes = [s for s in g if s.tag in SHAPES and s.get("stroke") != "none"]
            lit = [s for s in shapes if s.get("stroke") == MARKS["active"].color]
            glow = [s for s in shapes if s.get("stroke") == slide._GLOW]
            assert lit and len(lit) == len(glow), f"step {k}: {i} is not lit"
            assert all(s.get("stroke-width") == slide._ACTIVE_WIDTH for s in lit)
        for i, g in found.items():
            c = classes(g)
            # what the stylesheet hides is not there at all
            assert not {"gv-mark", "gv-pending"} <= c, f"step {k}: pending mark {i} is drawn"
            if {"gv-in", "gv-done"} <= c:  # a gradient that has flowed: blue
                assert [s.get("stroke").lower() for s in g if s.tag == f"{NS}path"] == [gradient]
            if "node" in c:  # whole boxes only
                for s in g:
                    for px, py in points(s):
                        assert x - 1 <= px <= x + w + 1 and y - 1 <= py <= y + h + 1, \
                            f"step {k}: {i} is cut by the frame"


def test_the_crop_keeps_the_step_and_leaves_out_the_rest_of_a_large_diagram():
    tr = deep_mlp(12)
    k = len(tr.steps) // 2
    whole = groups(parsed(tr.to_svg(step=k, collapse=False)))
    picture = groups(parsed(tr.to_svg(step=k, crop=True, collapse=False)))
    assert set(diagram.step_ids(tr, k, collapse=False)) <= set(picture)
    assert len(picture) < len(whole) / 3


def test_an_uncropped_picture_can_have_its_look_written_in_too(mlp):
    svg = mlp.to_svg(step=3, inline=True)
    assert "<style" not in svg and "filter" not in svg
    root = parsed(svg)
    assert root.get("viewBox") == parsed(mlp.to_svg(step=3)).get("viewBox")
    assert "legend" in groups(root)


def test_values_hidden_by_the_options_are_left_out_of_the_picture(mlp):
    shown = mlp.to_svg(step=4, crop=True)
    hidden = mlp.to_svg(step=4, crop=True, values="forward")
    assert 'class="gv-grad-value"' in shown and 'class="gv-grad-value"' not in hidden
    assert 'class="gv-forward-value"' in hidden


def test_a_matrix_keeps_the_indent_of_its_later_rows(mlp):
    root = parsed(mlp.to_svg(step=4, crop=True))
    rows = [t for t in root.iter(f"{NS}text") if (t.text or "").startswith("\xa0[")]
    assert rows and all(t.get("{http://www.w3.org/XML/1998/namespace}space") == "preserve"
                        for t in rows)


def test_librsvg_draws_the_current_edge(mlp, tmp_path, each_layout_engine):
    rsvg = shutil.which("rsvg-convert")
    assert rsvg, "rsvg-convert is not on PATH: run scripts/setup.sh test (Debian: librsvg2-bin)"
    checked = 0
    for k, s in enumerate(mlp.steps):
        if s.kind != "backward":
            continue
        svg = mlp.to_svg(step=k, crop=True, legend=False)
        root = parsed(svg)
        x, y, w, h = view_box(root)
        (tmp_path / "step.svg").write_text(svg, encoding="utf-8")
        subprocess.run([rsvg, "-w", "1280", "-o", str(tmp_path / "step.png"),
                        str(tmp_path / "step.svg")], check=True, timeout=60)
        rgb = image.imread(tmp_path / "step.png")[..., :3]
        assert rgb.shape[:2] == (720, 1280)
        for g in groups(root).values():
            if not {"edge", "gv-active"} <= classes(g):
                continue
            path = [p for p in g if p.tag == f"{NS}path" and p.get("stroke") == "#000000"][0]
            px, py = mid_curve(path.get("d"))
            col, row = round((px - x) * 1280 / w), round((py - y) * 720 / h)
            patch = rgb[max(row - 2, 0):row + 3, max(col - 2, 0):col + 3].mean(axis=2)
            assert patch.size and patch.min() < 0.3, \
                f"step {k}: librsvg left edge {g.get('id')} out at ({col}, {row})"
            checked += 1
    assert checked >= 3


def test_to_png_writes_a_picture_of_the_size_asked(mlp, tmp_path):
    out = mlp.to_png(tmp_path / "slide.png", step=4, crop=True, legend=False)
    assert out == tmp_path / "slide.png"
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and diagram.png_size(data) == (1920, 1080)
    rgb = image.imread(out)[..., :3]
    assert rgb.shape == (1080, 1920, 3)
    ink = (rgb.mean(axis=2) < 0.5).mean()
    assert 0.005 < ink < 0.3, f"the slide has {ink:.1%} dark pixels: no text drawn?"
    small = mlp.to_png(tmp_path / "small.png", step=4, crop=True, width=640)
    assert diagram.png_size(small.read_bytes()) == (640, 360)
    whole = mlp.to_png(tmp_path / "whole.png", step=4)
    wpx, hpx = diagram.png_size(whole.read_bytes())
    root = parsed(mlp.to_svg(step=4))
    assert wpx == round(2 * float(root.get("width")[:-2]) * 4 / 3)
    assert hpx == pytest.approx(wpx * float(root.get("height")[:-2]) / float(root.get("width")[:-2]), abs=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slide.png", "small.png", "whole.png"]


def test_to_png_works_where_dot_is_missing(tmp_path):
    bare = tmp_path / "bin"  # a PATH with no program on it at all
    bare.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "GRADVIZ_LAYOUT"}
    env["PATH"] = str(bare)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "tests")])
    code = ("import shutil, gradviz as gv\n"
            "from fixtures.traces import two_layer_mlp\n"
            "from gradviz.views.diagram import layout_engine, png_size\n"
            "assert shutil.which('dot') is None\n"
            f"out = two_layer_mlp().to_png({str(tmp_path / 'p.png')!r}, step=2, crop=True)\n"
            "print(layout_engine(), *png_size(out.read_bytes()))\n")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["pygraphviz", "1920", "1080"]


def test_bad_requests_for_a_picture_say_what_is_accepted(mlp, tmp_path):
    with pytest.raises(ValueError, match=r"crops about a step: give step=k"):
        mlp.to_svg(crop=True)
    with pytest.raises(ValueError, match="leave out font_size"):
        mlp.to_svg(step=1, crop=True, font_size=20)
    with pytest.raises(TypeError, match="crop must be True or False, got 'yes'"):
        mlp.to_svg(step=1, crop="yes")
    with pytest.raises(ValueError, match="step 99 out of range"):
        mlp.to_svg(step=99, crop=True)
    for width in (0, 10, 10_000, 1.5, True):
        with pytest.raises(ValueError, match="width must be a whole number of px from 16 to 7680"):
            mlp.to_png(tmp_path / "w.png", step=1, width=width)
    with pytest.raises(ValueError, match="is a directory"):
        mlp.to_png(tmp_path, step=1)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_drawing_leaves_no_file_and_keeps_the_old_one(mlp, tmp_path, monkeypatch):
    out = tmp_path / "slide.png"
    out.write_bytes(b"old")

    def broken(svg: str, width: int) -> bytes:
        raise ValueError("to_png(): resvg could not draw the picture: broken")

    monkeypatch.setattr(slide, "png", broken)
    with pytest.raises(ValueError, match="could not draw"):
        mlp.to_png(out, step=1, crop=True)
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["slide.png"]
    out.chmod(0o444)
    monkeypatch.undo()
    with pytest.raises(PermissionError, match="read-only"):
        mlp.to_png(out, step=1, crop=True)
    assert out.read_bytes() == b"old"
