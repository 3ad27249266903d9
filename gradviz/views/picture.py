"""The picture a viewer leaves where no kernel runs: its diagram at the last step, with the legend.

A notebook reopened without its kernel, GitHub's notebook viewer and
``jupyter nbconvert --to html`` cannot run the viewer.  So :class:`TraceWidget`
(and ``gv.explore``), displayed, put this picture in an output of its own
right after the widget's (and, for a caller that asks for one mime bundle, in
its ``text/html``).  It is made from the payload the viewer already holds: the
same laid-out SVG, its elements set to the state of the last step as the
viewer draws it, so no second layout runs.

The drawing and each swatch of the legend are images (``<img>`` of an SVG in
a ``data:`` URL, its step states in a ``<style>`` of its own): the sanitisers
of JupyterLab (for a notebook it does not trust) and of GitHub remove inline
``<svg>`` and ``<style>`` elements from HTML outputs, but keep images, so the
picture reads the same everywhere, with none of the viewer's CSS.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="pic_x")
>>> html = picture_html(gv.show(gv.trace_gradients(x * x, x)).payload)
>>> html.startswith('<div class="gv-picture"'), '<img class="gv-picture-diagram"' in html
(True, True)
>>> '<svg class="gv-svg"' in picture_svg(html)
True
"""

from __future__ import annotations

import base64
from html import escape
from typing import Any

from . import diagram
from .marks import MARKS
from .options import view_options

__all__ = ["picture_html", "picture_note", "picture_svg"]

_FONT = "font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"

# What the legend's two step states look like: drawn with attributes, not the
# diagram's classes, so that they keep their look where a <style> is dropped.
_STATES = (
    ({"stroke": MARKS["gradient"].color, "stroke-width": "1.3"}, "done: gradient has flowed here"),
    ({"stroke": MARKS["active"].color, "stroke-width": "3"}, "the last step"),
)


def picture_html(payload: dict[str, Any], note: str = "") -> str:
    """The static picture of a viewer's ``payload`` (:func:`~gradviz.views.widget.view_payload`):
    its title, the diagram as the viewer shows it at the last step, and the legend.

    ``note`` is a line of plain text under the title (``gv.explore`` says which
    inputs the picture is for).  The payload's ``view`` options hold: values
    hidden there are hidden here, and a practice viewer's gradients too.
    An empty string for a payload with no diagram.
    """
    svg, steps = payload.get("svg"), payload.get("steps") or []
    if not svg or not steps:
        return ""
    last = len(steps) - 1
    first: dict[str, int] = {}
    for k, step in enumerate(steps):
        for i in step.get("ids", []):
            first.setdefault(i, k)
    # the options that say what the drawing shows (the rest say how a viewer opens)
    view = {k: v for k, v in (payload.get("view") or {}).items()
            if k in ("values", "font_size", "practice")}
    drawn = diagram.styled_svg(svg, diagram.states(first, steps[last].get("ids", []), last),
                               view_options("show", **view))
    title = str(payload.get("title") or "gradviz trace")
    lines = [f"Step {last} / {last}: {steps[last].get('title', '')}"]
    if note:
        lines.insert(0, note)
    lines.append(picture_note(last))
    caption = "".join(f'<div style="color: #444444; font-size: 12px">{escape(line)}</div>'
                      for line in lines)
    alt = f"The diagram of {title} at its last step, every gradient drawn."
    return (f'<div class="gv-picture" style="{_FONT}; max-width: 100%; overflow-x: auto">'
            f'<div style="font-size: 15px; font-weight: 600">{escape(title)}</div>{caption}'
            f'<img class="gv-picture-diagram" alt="{escape(alt)}" src="{_data_url(drawn)}" '
            'style="display: block; margin: 6px 0; max-width: 100%; height: auto">'
            f'{_legend(payload.get("legend") or [])}</div>')


def picture_note(last: int) -> str:
    """The line under the picture's caption that says what it is: step ``last`` of a viewer.

    >>> print(picture_note(3))
    A picture of step 3, the last: in JupyterLab with a running kernel, the viewer steps through it live.
    """
    return (f"A picture of step {last}, the last: in JupyterLab with a running kernel, "
            "the viewer steps through it live.")


def picture_svg(html: str) -> str:
    """The SVG of the drawing in a picture made by :func:`picture_html` (for tests and tools)."""
    start = html.index(_DATA) + len(_DATA)
    return base64.b64decode(html[start:html.index('"', start)]).decode("utf-8")


_DATA = "data:image/svg+xml;base64,"


def _data_url(svg: str) -> str:
    return _DATA + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def _legend(items: list[dict[str, Any]]) -> str:
    """The viewer's legend (``static/viewer/legend.js``) as plain HTML: the step states,
    then each mark this diagram uses."""
    rows = [_item(_swatch("tensor", {"fill": "#ffffff", **style}), label) for style, label in _STATES]
    for item in items:
        if item.get("mark") in MARKS and item["mark"] != "active":
            colours = {"stroke": item.get("stroke", "#333333"), "fill": item.get("fill", "#ffffff")}
            rows.append(_item(_swatch(item["mark"], colours), str(item.get("label", ""))))
    return ('<div class="gv-picture-legend" style="font-size: 12px">'
            '<div style="font-weight: 600; margin: 4px 0">Legend</div>'
            '<ul style="list-style: none; margin: 0; padding: 0; display: flex; '
            f'flex-wrap: wrap; gap: 4px 16px">{"".join(rows)}</ul></div>')


def _item(swatch: str, label: str) -> str:
    return (f'<li style="display: flex; align-items: center; gap: 6px">{swatch}'
            f'<span>{escape(label)}</span></li>')


def _swatch(mark: str, style: dict[str, str]) -> str:
    """A mark's 36x20 drawing from the mark table, as the viewer's legend draws it (an image)."""
    spec = MARKS[mark].swatch
    if not spec:
        return ""
    stroke = style.get("stroke", "#333333")
    attrs = {"fill": style.get("fill", "#ffffff"), "stroke": stroke,
             "stroke-width": style.get("stroke-width", "2" if spec.get("arrow") else "1.3")}
    if spec.get("dash"):
        attrs["stroke-dasharray"] = "4 2"
    shape = ("ellipse", {"cx": "18", "cy": "10", "rx": "15", "ry": "7"}) if spec.get("ellipse") \
        else ("path", {"d": spec.get("d", "")})
    body = _tag(shape[0], {**shape[1], **attrs})
    if spec.get("arrow"):
        body += _tag("path", {"d": "M4 10l7-4v8z", "fill": stroke})
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="36" height="20" '
           f'viewBox="0 0 36 20">{body}</svg>')
    return f'<img alt="" width="36" height="20" src="{_data_url(svg)}">'


def _tag(name: str, attrs: dict[str, str]) -> str:
    return f"<{name} " + " ".join(f'{k}="{escape(v)}"' for k, v in attrs.items()) + "/>"
