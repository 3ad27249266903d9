"""Self-contained HTML reports: the step-through viewer in one offline file.

The report inlines everything a browser needs (the laid-out SVG, every step,
``static/stepper.js`` and ``static/stepper.css``, the diagram's CSS), so it works
opened from disk with no network and no kernel, e.g. from a USB stick.  The
same ``render`` function as the JupyterLab widget runs it, fed by a tiny
in-page model.  A large trace's data is gzipped (:data:`COMPRESS_OVER`) and
unzipped by the page itself.  A Content-Security-Policy in the page forbids every network
request and lets only the report's own script run.

>>> import gradviz as gv, pathlib, tempfile
>>> W = gv.Variable(2.0, name="W")
>>> tr = gv.trace_gradients(3.0 * W, [W])
>>> out = pathlib.Path(tempfile.mkdtemp()) / "lesson.html"
>>> gv.export_html([tr], out, title="one weight").name
'lesson.html'
>>> "<script type=\\"application/json\\"" in out.read_text(encoding="utf-8")
True
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import math
import os
import pathlib
import re
from collections.abc import Iterable
from typing import Any

from ..trace import Trace
from ..trace.fields import check_title
from .files import check_path, write_text_atomic

__all__ = ["export_html", "to_html", "report_html", "write_text_atomic"]

_STATIC = pathlib.Path(__file__).parent / "static"

# The in-page model for render({model, el}): the same traits as TraceWidget.
# In a block of its own, so that its names cannot meet the viewer's.
_BOOT = r"""
{
// The theme switch: dark or light as the reader last chose (kept for every
// report on this computer, and set before the page is drawn: _THEME_SCRIPT),
// else as the browser prefers, followed live.
const themeSwitch = document.querySelector(".gv-theme-switch");
if (themeSwitch) {
  const prefersDark = matchMedia("(prefers-color-scheme: dark)");
  const THEME_KEY = "gradviz-theme";
  const show = () => {
    const chosen = document.documentElement.dataset.gvTheme;
    themeSwitch.setAttribute("aria-pressed", String(chosen ? chosen === "dark" : prefersDark.matches));
  };
  themeSwitch.addEventListener("click", () => {
    const dark = themeSwitch.getAttribute("aria-pressed") !== "true";
    document.documentElement.dataset.gvTheme = dark ? "dark" : "light";
    try { localStorage.setItem(THEME_KEY, dark ? "dark" : "light"); } catch { /* a page without storage */ }
    show();
  });
  prefersDark.addEventListener("change", show);
  themeSwitch.hidden = false;
  show();
}
function gvModel(state) {
  const handlers = new Map();
  return {
    get: (key) => state[key],
    set(key, value) {
      if (state[key] === value) return;
      state[key] = value;
      for (const fn of Array.from(handlers.get("change:" + key) || [])) fn();
    },
    save_changes() {},
    on(event, fn) {
      if (!handlers.has(event)) handlers.set(event, new Set());
      handlers.get(event).add(fn);
    },
    off(event, fn) {
      if (handlers.has(event)) handlers.get(event).delete(fn);
    },
  };
}
// A link to a step: #t2/step4 is the report's second trace at step 4 (#step4:
// the first trace), the trace counted from 1 as the page's headings count them,
// the step as the page and trace.steps number it, from 0.  Stepping writes the
// link back.  The older form #t2/s5 counted steps from 1: it still opens the
// step it was made for (here step 4), and is written back in the new form.
function linked() {
  const m = /^#(?:t(\d+)\/?)?(?:(step|s)(\d+))?$/.exec(location.hash);
  if (!m || !(m[1] || m[3])) return null;
  const step = m[3] === undefined ? null : Number(m[3]) - (m[2] === "s" ? 1 : 0);
  return { trace: Number(m[1] || 1) - 1, step };
}
const viewers = [];
const LINK_DELAY_MS = 150;
const clampStep = (v, k) => Math.max(0, Math.min(v.steps - 1, k));
function openLink(link) {
  const v = link && viewers[link.trace];
  if (v && link.step !== null) v.model.set("step", clampStep(v, link.step));
  return v || null;
}
const link = linked();
// A data block's text: as written, or for a large one gzipped, as base64 (data-encoding).
async function readBlock(id) {
  const block = document.getElementById(id);
  if (block.dataset.encoding !== "gzip+base64") return block.textContent;
  const text = atob(block.textContent.replace(/\s/g, ""));
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  const unzipped = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(unzipped).text();
}
for (const host of document.querySelectorAll(".gv-report-trace")) {
  const mount = host.querySelector(".gv-report-mount");
  let payload;
  try {
    payload = JSON.parse(await readBlock(host.dataset.payload));
    if (host.dataset.svg) payload.svg = await readBlock(host.dataset.svg);
  } catch (err) {
    mount.textContent = "This trace's data could not be read: " + err;
    continue;
  }
  mount.textContent = "";
  // How the viewer opens: the report's view options, then the link's step.
  const view = payload.view || {};
  const values = view.values || "all";
  const v = { host, steps: Array.isArray(payload.steps) ? payload.steps.length : 0 };
  const n = viewers.push(v);
  const linkedHere = link && link.trace === n - 1 && link.step !== null;
  v.model = gvModel({ payload, speed: 1,
                      step: linkedHere ? clampStep(v, link.step) : Number(view.start_step) || 0,
                      show_grad_values: values === "all" || values === "gradient",
                      show_forward_values: values === "all" || values === "forward",
                      practice_key: host.dataset.practiceKey || null });
  // Written once the reader pauses: replaceState costs a few ms, too much for
  // every frame of a jump across the slider.
  let linkTimer = 0;
  v.model.on("change:step", () => {
    clearTimeout(linkTimer);
    linkTimer = setTimeout(() => {
      history.replaceState(null, "", `#t${n}/step${Number(v.model.get("step"))}`);
    }, LINK_DELAY_MS);
  });
  // A link opens in the form stepping writes (an older #s5 becomes #t1/step4).
  if (linkedHere) history.replaceState(null, "", `#t${n}/step${clampStep(v, link.step)}`);
  render({ model: v.model, el: mount });
}
// A lesson's exercises, after its traces (exercises.js).
const exercisesHost = document.querySelector(".gv-report-exercises");
if (exercisesHost) {
  const mount = exercisesHost.querySelector(".gv-report-mount");
  try {
    const exercises = JSON.parse(await readBlock(exercisesHost.dataset.exercises));
    mount.textContent = "";
    createExercises(mount, exercises);
  } catch (err) {
    mount.textContent = "The exercises could not be read: " + err;
  }
}
const opened = link && viewers[link.trace];
if (opened) opened.host.scrollIntoView({ block: "start" });
addEventListener("hashchange", () => {
  const v = openLink(linked());
  if (v) v.host.scrollIntoView({ block: "start" });
});
const firstViewer = opened ? opened.host.querySelector(".gv-viewer") : document.querySelector(".gv-viewer");
if (firstViewer) firstViewer.focus({ preventScroll: true });
}
"""
# The theme the reader chose, set in <head> before anything is drawn (the page's
# module runs only once the body is read: a dark choice would first show light).
# The key is _BOOT's THEME_KEY.
_THEME_SCRIPT = ('try { const t = localStorage.getItem("gradviz-theme"); '
                 'if (t === "dark" || t === "light") document.documentElement.dataset.gvTheme = t; } '
                 'catch { /* a page without storage */ }')
_PAGE_CSS = """
/* The page follows the reader's colour scheme (light or dark) until the switch
   in the header sets one (data-gv-theme on html, _BOOT); the viewer's colours
   (stepper.css) follow the same scheme through light-dark(). */
:root { color-scheme: light dark; --gv-page-link: light-dark(#0969da, #4493f8);
  --gv-page-muted: light-dark(#59636e, #9198a1); }
:root[data-gv-theme="light"] { color-scheme: light; }
:root[data-gv-theme="dark"] { color-scheme: dark; }
@supports not (color: light-dark(#000, #fff)) {  /* an older browser: the light page */
  :root { --gv-page-link: #0969da; --gv-page-muted: #59636e; }
  html { background: #eef1f5; }
  .gv-report-mount { background: #fff; }
  .gv-theme-switch { display: none; }  /* no dark theme to switch to */
}
html { background: light-dark(#eef1f5, #010409); }
body { margin: 0; padding: 24px 28px 40px; font-family: system-ui, -apple-system, "Segoe UI",
  Roboto, "Helvetica Neue", Arial, sans-serif; color: light-dark(#1f2328, #e6edf3); }
.gv-report-header, .gv-report-trace, .gv-report-footer { max-width: 1440px; margin: 0 auto; }
.gv-report-header { position: relative; }
.gv-report-nav { margin: 0 0 8px; font-size: 13px; }
.gv-report-nav a { color: var(--gv-page-link); text-decoration: none; }
.gv-report-nav a:hover, .gv-report-nav a:focus-visible { text-decoration: underline; }
.gv-report-nav a + a { margin-left: 18px; }
.gv-report-header h1 { font-size: 22px; margin: 0 0 4px; overflow-wrap: anywhere; }
.gv-report-header p { margin: 0 0 12px; color: var(--gv-page-muted); font-size: 13px; }
.gv-report-toc { margin: 0 0 16px; padding: 0 0 0 20px; font-size: 13px; }
.gv-report-toc a { color: var(--gv-page-link); }
.gv-report-trace { margin-bottom: 28px; }
.gv-report-trace > h2 { font-size: 13px; font-weight: 600; color: var(--gv-page-muted); margin: 0 0 6px;
  text-transform: uppercase; letter-spacing: 0.06em; }
.gv-report-mount { background: light-dark(#fff, #0d1117); border-radius: 8px; }
.gv-report-footer { font-size: 12px; color: var(--gv-page-muted); }
.gv-theme-switch { float: right; margin: 0 0 8px 16px; font: inherit; font-size: 13px; cursor: pointer;
  color: inherit; background: light-dark(#ffffff, #151b23); border: 1px solid light-dark(#8c959f, #656c76);
  border-radius: 6px; padding: 5px 10px; }
.gv-theme-switch[aria-pressed="true"] { background: light-dark(#0969da, #1f6feb); border-color: transparent;
  color: #ffffff; }
:is(a, .gv-theme-switch):focus-visible { outline: 2px solid var(--gv-page-link); outline-offset: 2px; }
/* A phone: the viewer takes the width; links are targets a finger can hit. */
@media (max-width: 600px) {
  body { padding: 12px 6px 28px; }
  .gv-report-header { padding: 0 6px; }
  .gv-report-nav a, .gv-report-toc a { display: inline-block; min-height: 44px; line-height: 44px; }
  .gv-theme-switch { min-height: 44px; }
  .gv-report-toc { margin-bottom: 8px; }
}
@media print {
  :root, :root[data-gv-theme] { color-scheme: light; }  /* paper is white */
  html { background: #fff; }
  body { padding: 0; }
  .gv-theme-switch { display: none; }
  .gv-report-header p { display: none; }  /* how to step: not on paper */
  .gv-report-nav { display: none; }  /* links to other pages: nothing to click on paper */
  .gv-report-trace + .gv-report-trace { break-before: page; }
}
"""


def _static(name: str) -> str:
    return (_STATIC / name).read_text(encoding="utf-8")


def _finite_json(value: Any) -> Any:
    """Replace NaN/Inf floats by the strings the viewer expects ("nan", "inf", "-inf")."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_json(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)  # NumPy scalars and arrays
    if callable(tolist):
        return _finite_json(tolist())
    raise TypeError(f"view data holds a {type(value).__name__}, which JSON cannot carry")


def _script_json(data: Any) -> str:
    """JSON text that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` become ``\\u003c`` etc. (so no ``</script>`` can end
    the block early) and U+2028/U+2029 are escaped; ``JSON.parse`` reads it back.

    >>> _script_json({"name": "</script><b>&"})
    '{"name":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                          default=_json_default)
    except ValueError:  # a NaN/Inf float somewhere: send it as the viewer's strings
        text = json.dumps(_finite_json(data), ensure_ascii=False, allow_nan=False,
                          separators=(",", ":"), default=_json_default)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# What could end a <script> data block early or change how the HTML parser
# reads it.  Graphviz's SVG has none of them (user strings in it are
# escaped as &lt;, and layout_svg drops comments).
_NOT_RAW = re.compile(r"<!--|</?script", re.IGNORECASE)


def _svg_block(svg: Any) -> str | None:
    """The SVG as the raw text of a ``<script type="image/svg+xml">``, or None.

    Written into the JSON, every ``"`` of the SVG became ``\\"`` and every
    ``<`` and ``>`` six characters: a fifth more bytes (4.5 MB instead of
    3.7 for a 1,000-op diagram drawn whole).  A data block is raw text, so
    the SVG goes in as it is, unless it holds something that could end the
    block: then it stays in the JSON.

    >>> _svg_block('<svg><text>a &lt; b</text></svg>')
    '<svg><text>a &lt; b</text></svg>'
    >>> _svg_block('<svg><script>x()</script></svg>') is None
    True
    """
    if not isinstance(svg, str) or _NOT_RAW.search(svg):
        return None
    return svg


def _raw_text(text: str, tag: str) -> str:
    """Make package JS/CSS safe as the raw text of a <script>/<style> element."""
    text = re.sub(f"</(?={tag})", r"<\\/", text, flags=re.IGNORECASE)
    return text.replace("<!--", "<\\!--")


def _check_traces(traces: Any) -> list:
    accepted = "a gradviz.Trace or a non-empty list of Traces"
    if isinstance(traces, Trace):
        return [traces]
    if isinstance(traces, (str, bytes, dict)) or not isinstance(traces, Iterable):
        raise TypeError(f"traces: expected {accepted}, got {type(traces).__name__}")
    items = list(traces)
    if not items:
        raise ValueError(f"traces: the list is empty (expected {accepted})")
    for i, t in enumerate(items):
        if not isinstance(t, Trace):
            raise TypeError(f"traces[{i}]: expected a gradviz.Trace, got {type(t).__name__} "
                            "(build one with gv.trace_gradients(...) or tape.trace_gradient(...))")
    return items


# "scheme:" at the start of a URL (RFC 3986): http:, file:, javascript:, data:, ...
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# ASCII control characters: a browser drops tabs and newlines from a URL and trims
# the rest, so "java\tscript:" would still be a scheme; none belongs in a link.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAV_ACCEPTED = ("a list of (text, href) pairs of non-empty strings, each href relative "
                 "to the report, such as [(\"All lessons\", \"index.html\")]")


def _check_nav(nav: Any) -> list[tuple[str, str]]:
    """The report's navigation links, checked: ``(text, href)`` pairs, hrefs relative.

    The report promises to work offline, from any folder it is copied to, so a
    link may lead only to a file beside it: no scheme (``http:``, ``file:``,
    ``javascript:``), no host (``//host``), no path from the root (``/x``).

    >>> _check_nav([("All lessons", "index.html"), ("Practise", "practice/01_a.html#s2")])
    [('All lessons', 'index.html'), ('Practise', 'practice/01_a.html#s2')]
    >>> _check_nav([("Home", "https://example.org/")])
    Traceback (most recent call last):
    ...
    ValueError: nav[0]: the href 'https://example.org/' has the scheme 'https:', which leaves
    the report; the report works offline, so a link must be a relative URL, such as
    'index.html' or '../lesson.html'
    """
    if nav is None:
        return []
    if not isinstance(nav, (list, tuple)):
        raise TypeError(f"nav: expected {_NAV_ACCEPTED}, got {type(nav).__name__}")
    links = []
    for i, item in enumerate(nav):
        where = f"nav[{i}]"
        if not isinstance(item, (list, tuple)):
            raise TypeError(f"{where}: expected a (text, href) pair, got {type(item).__name__} "
                            f"{_short(item)} (nav takes {_NAV_ACCEPTED})")
        if len(item) != 2:
            raise ValueError(f"{where}: expected a (text, href) pair, got {len(item)} items "
                             f"{_short(item)} (nav takes {_NAV_ACCEPTED})")
        for part, value in zip(("text", "href"), item):
            if not isinstance(value, str):
                raise TypeError(f"{where}: the {part} must be a string, got "
                                f"{type(value).__name__} {_short(value)}")
            if not value.strip():
                raise ValueError(f"{where}: the {part} is empty; a link needs a text to show "
                                 "and an href to go to")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"{where}: the {part} {_short(value)} holds a lone "
                                 "surrogate, which is not text") from None
        text, href = item
        _check_href(href, where)
        links.append((text, href))
    return links


def _check_href(href: str, where: str) -> None:
    """Refuse an href that could reach the network or leave the report's folder."""
    relative = "a link must be a relative URL, such as 'index.html' or '../lesson.html'"
    if _CONTROL.search(href):
        raise ValueError(f"{where}: the href {href!r} holds a control character (a tab, a "
                         f"newline, ...); {relative}")
    bare = href.strip(" ")
    scheme = _SCHEME.match(bare)
    if scheme:
        raise ValueError(f"{where}: the href {href!r} has the scheme {scheme.group(0)!r}, which "
                         f"leaves the report; the report works offline, so {relative}")
    # A browser reads a backslash here as a slash: \\host and /\host name a host too.
    if bare[:2].replace("\\", "/") == "//":
        raise ValueError(f"{where}: the href {href!r} names a host, which the report never "
                         f"reaches; the report works offline, so {relative}")
    if bare[:1] in ("/", "\\"):
        raise ValueError(f"{where}: the href {href!r} is a path from the root of the disk, "
                         f"which breaks when the reports are copied elsewhere; {relative}")


def _check_exercises(exercises: Any) -> list[dict]:
    """Each exercise as the page's JSON, or a TypeError saying what is accepted."""
    if exercises is None:
        return []
    from .practice import Exercise  # noqa: PLC0415  (practice is read only when asked for)

    accepted = "a list of exercises made with gv.exercise(...) or gv.exercise.value(...), ..."
    if isinstance(exercises, Exercise) or not isinstance(exercises, (list, tuple)):
        raise TypeError(f"exercises: expected {accepted}, got {type(exercises).__name__}")
    for i, ex in enumerate(exercises):
        if not isinstance(ex, Exercise):
            raise TypeError(f"exercises[{i}]: expected an exercise ({accepted}), got "
                            f"{type(ex).__name__}")
    return [ex.to_dict() for ex in exercises]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def report_html(traces: Any, title: str = "gradviz report", *, nav: Any = None,
                exercises: Any = None, **options: Any) -> str:
    """The HTML text of a report of ``traces`` (what :func:`export_html` writes).

    ``nav`` and ``exercises`` are as :func:`export_html` takes them.

    >>> import gradviz as gv
    >>> x = gv.constant(2.0, name="x")
    >>> page = report_html(gv.trace_gradients(x * x, x), title="x squared")
    >>> page.startswith("<!doctype html>"), "<title>x squared</title>" in page
    (True, True)
    """
    from .widget import view_payload

    items = _check_traces(traces)
    check_title(title)
    links = _check_nav(nav)
    asked = _check_exercises(exercises)
    return _render([view_payload(t, "report_html", all_views=True, **options) for t in items],
                   title, links, asked)


def _render(payloads: list[dict], title: str, nav: list[tuple[str, str]] | None = None,
            exercises: list[dict] | None = None, *, aside: str | None = None,
            page_css: str = "") -> str:
    """The report page for view-data payloads (one stepper per payload), with ``nav``'s
    links (checked by :func:`_check_nav`) above the heading and the ``exercises``
    (:meth:`Exercise.to_dict <gradviz.views.practice.Exercise.to_dict>`) after the traces.

    ``aside`` is HTML (made safe by the caller) set beside the first trace's viewer,
    in a ``.gv-report-class`` grid that ``page_css``, added to the page's style, lays
    out: the teacher's summary (:mod:`gradviz.views.practice.classroom`), whose links
    such as ``#step4`` open a step."""
    esc = html.escape
    module = _raw_text(_static("stepper.js") + "\n" + _BOOT, "script")
    # Only the page's own two scripts may run, each named by its hash.
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest())
                      .decode("ascii") + "'" for script in (module, _THEME_SCRIPT))
    css_parts = [_PAGE_CSS, _static("stepper.css"), page_css]
    for p in payloads:  # the diagram's CSS, once per distinct text
        css = str(p.get("css") or "")
        if css and css not in css_parts:
            css_parts.append(css)
    # Each viewer also inserts its payload's CSS itself; the copy in <head> styles
    # the page before the script runs.
    style = _raw_text("\n".join(css_parts), "style")
    csp = ("default-src 'none'; "
           f"script-src {hashes}; "
           "style-src 'unsafe-inline'; img-src data:; font-src data:; "
           "connect-src 'none'; form-action 'none'; base-uri 'none'")
    n = len(payloads)
    out = [
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{esc(csp)}\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"generator\" content=\"gradviz\">\n",
        f"<title>{esc(title)}</title>\n<script>{_THEME_SCRIPT}</script>\n"
        f"<style>\n{style}\n</style>\n</head>\n<body>\n",
        "<header class=\"gv-report-header\">\n"
        "<button type=\"button\" class=\"gv-theme-switch\" aria-pressed=\"false\" hidden>"
        "Dark theme</button>\n",
        "<nav class=\"gv-report-nav\" aria-label=\"Related pages\">"
        + "".join(f"<a href=\"{esc(href)}\">{esc(text)}</a>" for text, href in nav)
        + "</nav>\n" if nav else "",
        f"<h1>{esc(title)}</h1>\n",
        f"<p>{n} trace{'s' if n != 1 else ''} \u00b7 click a diagram, then step with "
        "\u2190 \u2192 (Home / End, Space to play) \u00b7 click a node to light what it "
        "depends on, again to go to its step \u00b7 works offline"
        + (" \u00b7 practice: answer each step's question to see its values, then hand "
           "in your answers as a file"
           if any((p.get("view") or {}).get("practice") for p in payloads) else "")
        + "</p>\n",
    ]
    if n > 1 or exercises:
        out.append("<ol class=\"gv-report-toc\">\n")
        for i, p in enumerate(payloads, 1):
            out.append(f"<li><a href=\"#gv-trace-{i}\">{esc(str(p.get('title') or f'trace {i}'))}"
                       "</a></li>\n")
        if exercises:
            out.append(f"<li><a href=\"#gv-exercises\">Exercises ({len(exercises)})</a></li>\n")
        out.append("</ol>\n")
    out.append("</header>\n<main>\n")
    for i, p in enumerate(payloads, 1):
        # The diagram travels beside the data, as SVG text (see _svg_block).
        svg = _svg_block(p.get("svg"))
        data = p if svg is None else {k: v for k, v in p.items() if k != "svg"}
        data_json = _script_json(data)
        if aside is not None and i == 1:
            out.append("<div class=\"gv-report-class\">\n<section class=\"gv-report-aside\" "
                       f"aria-label=\"The class's practice\">{aside}</section>\n")
        out += [
            f"<section class=\"gv-report-trace\" id=\"gv-trace-{i}\" "
            f"data-payload=\"gv-payload-{i}\"",
            "" if svg is None else f" data-svg=\"gv-svg-{i}\"",
            f" data-practice-key=\"{_practice_key(data_json, svg, i)}\""
            if (p.get("view") or {}).get("practice") else "",
            ">\n",
            f"<h2>Trace {i} of {n}</h2>\n" if n > 1 else "",
            "<div class=\"gv-report-mount\"><noscript>This report needs JavaScript to show "
            "the step-through viewer.</noscript></div>\n",
            _data_block(f"gv-payload-{i}", "application/json", data_json),
            "" if svg is None else _data_block(f"gv-svg-{i}", "image/svg+xml", svg),
            "</section>\n",
            "</div>\n" if aside is not None and i == 1 else "",
        ]
    if exercises:
        out += [
            "<section class=\"gv-report-trace gv-report-exercises\" id=\"gv-exercises\" "
            "data-exercises=\"gv-exercises-data\">\n",
            f"<h2>Exercises ({len(exercises)})</h2>\n",
            "<div class=\"gv-report-mount\"><noscript>The exercises need JavaScript.</noscript>"
            "</div>\n",
            _data_block("gv-exercises-data", "application/json", _script_json(exercises)),
            "</section>\n",
        ]
    out += [
        "</main>\n<footer class=\"gv-report-footer\">Made with gradviz: differentiation, reverse "
        "and forward, step by step.</footer>\n",
        f"<script type=\"module\">{module}</script>\n</body>\n</html>\n",
    ]
    return "".join(out)


#: A data block (a trace's data, its diagram) longer than this many characters is
#: written gzipped, as base64, and unzipped by the page (``DecompressionStream``):
#: a 10,000-op trace's report was 8.7 MB of repetitive JSON, and shrinks about
#: sevenfold.  A smaller block stays as it is, readable in the page's source.
COMPRESS_OVER = 512 * 1024


def _data_block(block_id: str, kind: str, text: str) -> str:
    """A ``<script>`` data block holding ``text`` (made safe for it by the caller): as it
    is, or past :data:`COMPRESS_OVER` gzipped (no time stamp: the same trace gives the
    same bytes), in base64 lines, its ``data-encoding`` saying so."""
    if len(text) <= COMPRESS_OVER:
        return f"<script type=\"{kind}\" id=\"{block_id}\">{text}</script>\n"
    packed = base64.encodebytes(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0))
    return (f"<script type=\"application/octet-stream\" id=\"{block_id}\" "
            f"data-encoding=\"gzip+base64\" data-type=\"{kind}\">\n"
            f"{packed.decode('ascii')}</script>\n")


def _practice_key(data_json: str, svg: str | None, position: int) -> str:
    """Where a practising reader's progress is kept (localStorage): the trace's content
    hash and its place in the report, so the same report keeps it across visits, a
    changed trace starts afresh, and the same trace twice keeps two."""
    digest = hashlib.sha256((data_json + (svg or "")).encode("utf-8")).hexdigest()[:20]
    return f"gradviz-practice:{digest}:{position}"


def export_html(traces: Any, path: str | os.PathLike, title: str = "gradviz report", *,
                nav: Any = None, exercises: Any = None, **options: Any) -> pathlib.Path:
    """Write one self-contained HTML report with a step-through viewer per trace.

    ``traces`` is a :class:`gradviz.Trace` or a non-empty list of them; ``path``
    is the file to write (its directory must exist).  Nothing in the page
    reaches the network.  The file appears complete or not at all: it is
    rendered in memory, written to a temp file in the same directory and moved
    into place, so a failure leaves neither a partial report nor a temp file.
    A report written over an older file keeps that file's permissions; a
    read-only file is refused (``PermissionError``) and left as it was.
    Returns the absolute path written.  ``options`` are the view options every
    renderer takes (:mod:`gradviz.views.options`), for every trace of the
    report: ``values="none"`` hands out a report whose values stay hidden until
    the reader reveals them, ``rankdir="LR"`` lays the diagrams out left to right.

    ``nav`` puts a line of links above the report's heading, to the pages it
    belongs with: a list of ``(text, href)`` pairs, in order.  Each href is a
    URL relative to the report (``"index.html"``, ``"../lesson.html#s3"``);
    one with a scheme (``http:``, ``javascript:``), a host (``//host``) or a
    path from the root is refused, since the report never reaches the network
    and keeps working when its folder is copied elsewhere.  The links are not
    printed.

    ``exercises`` (a list of :func:`gradviz.exercise` s) are asked after the
    traces, as the notebook asks them: the reader answers in the page and hears
    what ``check`` would say, the slip named, a hint after a wrong answer.

    >>> import gradviz as gv, pathlib, tempfile
    >>> x = gv.constant(2.0, name="x")
    >>> out = gv.export_html(gv.trace_gradients(x * x, x), pathlib.Path(tempfile.mkdtemp()) / "r.html")
    >>> out.is_absolute(), out.stat().st_size > 0
    (True, True)
    >>> gv.export_html([], out)
    Traceback (most recent call last):
    ...
    ValueError: traces: the list is empty (expected a gradviz.Trace or a non-empty list of Traces)

    A lesson's report that links back to the index beside it:

    >>> out = gv.export_html(gv.trace_gradients(x * x, x), out, title="x squared",
    ...                      nav=[("All lessons", "index.html"), ("Practise it", "practice/x.html")])
    >>> page = out.read_text(encoding="utf-8")
    >>> page[page.index("<nav"):page.index("</nav>") + 6]
    '<nav class="gv-report-nav" aria-label="Related pages"><a href="index.html">All lessons</a><a
    href="practice/x.html">Practise it</a></nav>'
    >>> gv.export_html(gv.trace_gradients(x * x, x), out, nav=[("Home", "javascript:alert(1)")])
    Traceback (most recent call last):
    ...
    ValueError: nav[0]: the href 'javascript:alert(1)' has the scheme 'javascript:', which leaves
    the report; the report works offline, so a link must be a relative URL, such as 'index.html'
    or '../lesson.html'
    """
    return _write(_check_traces(traces), path, title, "export_html", options, nav, exercises)


def to_html(trace: Trace, path: str | os.PathLike, title: str = "gradviz trace", *,
            nav: Any = None, **options: Any) -> pathlib.Path:
    """:func:`export_html` of one trace (what ``Trace.to_html`` calls)."""
    return _write(_check_traces(trace), path, title, "to_html", options, nav)


def _write(items: list, path: Any, title: str, renderer: str, options: dict,
           nav: Any = None, exercises: Any = None) -> pathlib.Path:
    """Check everything, render the page in memory, then write it at once."""
    from .widget import view_payload

    check_title(title)
    links = _check_nav(nav)
    asked = _check_exercises(exercises)
    target = check_path(path)
    page = _render([view_payload(t, renderer, all_views=True, **options) for t in items],
                   title, links, asked)
    write_text_atomic(target, page)
    return target
