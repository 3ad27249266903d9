"""Unit tests for gradviz.views.report: one self-contained, escaped, atomically written HTML file."""

from __future__ import annotations

import base64
import hashlib
import html
import html.parser
import json
import os
import re

import pytest

import gradviz as gv
import gradviz.views.report as report
from fixtures.traces import linear_regression
from fixtures.viewer_page import load_payload

# Every test here holds under both Graphviz engines (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("each_layout_engine")

HOSTILE = 'a"b<script>window.pwned=1</script>&amp;\u2028'



class _Page(html.parser.HTMLParser):
    """Collects tags, their attributes, and the text of script elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self._in_script: dict | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "script":
            self._in_script = a
            self.scripts.append((a, ""))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None

    def handle_data(self, data):
        if self._in_script is not None:
            a, text = self.scripts[-1]
            self.scripts[-1] = (a, text + data)
        else:
            self.text.append(data)


def parse(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    p.close()
    return p


REMOTE = re.compile(r"^\s*(https?:|//|ftp:|ws:|wss:)", re.IGNORECASE)


def remote_urls(page: str) -> list[str]:
    """Every URL in the page (markup, CSS, embedded SVG) that would reach the network."""
    found = []
    p = parse(page)
    for _tag, attrs in p.tags:
        for name, value in attrs.items():
            if name in ("src", "href", "xlink:href", "action", "poster", "data", "srcset") and value:
                if REMOTE.match(value):
                    found.append(value)
    css_and_svg = [t for a, t in p.scripts if a.get("type") == "application/json"]
    css_and_svg.append(page)
    for text in css_and_svg:
        found += re.findall(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", text)
        found += re.findall(r"@import\s+['\"]?([^;'\"]+)", text)
        found += re.findall(r"""(?:href|src)\s*=\s*\\?["']((?:https?:)?//[^"'\\]+)""", text)
    return found


# ------------------------------------------------------------------ the page itself


def test_export_writes_one_self_contained_file(tmp_path):
    out = gv.export_html([linear_regression("regression")], tmp_path / "r.html", title="Lesson 1")
    assert out == (tmp_path / "r.html").resolve()
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>")
    assert remote_urls(page) == []
    p = parse(page)
    scripts = p.scripts
    # the theme the reader chose, set in <head>; per trace a data block and its diagram
    # as SVG text; one module script, the stepper itself
    assert [a.get("type") for a, _ in scripts] == [None, "application/json", "image/svg+xml", "module"]
    assert all("src" not in a for a, _ in scripts)
    assert not [t for t, a in p.tags if t == "link"]
    module = scripts[-1][1]
    stepper = (report._STATIC / "stepper.js").read_text(encoding="utf-8")
    assert stepper.strip() in module, "the report must run the very same stepper.js as the widget"
    style = page[page.index("<style>"):page.index("</style>")]
    assert ".gv-viewer" in style and ".gv-slider" in style
    # the Content-Security-Policy forbids any fetch and allows only this module script
    csp = next(a["content"] for t, a in p.tags
               if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp
    allowed = csp.split("script-src")[1].split(";")[0].split()
    assert "'unsafe-inline'" not in allowed
    # exactly the page's two scripts may run
    runnable = [t for a, t in scripts if a.get("type") in (None, "module")]
    assert sorted(allowed) == sorted(
        "'sha256-" + base64.b64encode(hashlib.sha256(t.encode("utf-8")).digest()).decode("ascii") + "'"
        for t in runnable)


def test_embedded_data_round_trips(tmp_path):
    tr = linear_regression()
    out = tr.to_html(tmp_path / "one.html")
    p = parse(out.read_text(encoding="utf-8"))
    (attrs, text), = [(a, t) for a, t in p.scripts if a.get("type") == "application/json"]
    (svg_attrs, svg), = [(a, t) for a, t in p.scripts if a.get("type") == "image/svg+xml"]
    section, = [a for t, a in p.tags if t == "section"]
    assert section["data-payload"] == attrs["id"] and section["data-svg"] == svg_attrs["id"]
    data = json.loads(text)
    assert "svg" not in data  # the SVG is not written twice
    assert {**data, "svg": svg} == json.loads(json.dumps(gv.show(tr).payload))
    assert len(data["steps"]) == len(tr.steps)
    assert re.fullmatch(r"W(_\d+)?", data["results"][0]["name"])


def test_to_html_uses_the_trace_title(tmp_path):
    tr = linear_regression("my regression")
    page = tr.to_html(tmp_path / "t.html").read_text(encoding="utf-8")
    assert "<title>my regression</title>" in page


def test_several_traces_each_get_a_viewer(tmp_path):
    trs = [linear_regression("first"), linear_regression("second"), linear_regression("third")]
    page = gv.export_html(trs, tmp_path / "three.html").read_text(encoding="utf-8")
    p = parse(page)
    assert sum(a.get("type") == "application/json" for a, _ in p.scripts) == 3
    sections = [a for t, a in p.tags if t == "section"]
    assert [s["data-payload"] for s in sections] == ["gv-payload-1", "gv-payload-2", "gv-payload-3"]
    assert [a["href"] for t, a in p.tags if t == "a"] == ["#gv-trace-1", "#gv-trace-2", "#gv-trace-3"]


# ------------------------------------------------------------------ escaping


def test_user_strings_are_escaped(tmp_path):
    x = gv.constant([1.0, 2.0], name=HOSTILE)
    tr = gv.trace_gradients(gv.reduce_sum(x * x), x)
    tr.title = HOSTILE
    page = gv.export_html([tr], tmp_path / "h.html", title=HOSTILE).read_text(encoding="utf-8")
    assert page.count("<script") == 4  # the theme, the data, the SVG and the stepper, nothing injected
    assert page.count("</script>") == 4
    assert f"<title>{html.escape(HOSTILE)}</title>" in page
    p = parse(page)
    assert HOSTILE in "".join(p.text)  # the heading shows the title as text
    (_, raw), = [(a, t) for a, t in p.scripts if a.get("type") == "application/json"]
    assert not re.search(r"[<>&\u2028\u2029]", raw)
    data = json.loads(raw)
    assert data["title"] == HOSTILE
    assert any(HOSTILE in t["name"] for t in data["tensors"].values())


def test_svg_that_could_end_its_block_stays_in_the_json():
    payload = load_payload()
    payload["svg"] = payload["svg"].replace("</svg>", "<text>x</text><!-- </SCRIPT> --></svg>")
    p = parse(report._render([payload], title="odd svg"))
    assert [a.get("type") for a, _ in p.scripts] == [None, "application/json", "module"]
    (_, raw), = [(a, t) for a, t in p.scripts if a.get("type") == "application/json"]
    assert json.loads(raw)["svg"] == payload["svg"]


def test_script_json_escapes_what_could_end_the_block():
    text = report._script_json({"a": "</script><!--&\u2028\u2029", "n": float("nan")})
    assert not re.search(r"[<>&\u2028\u2029]", text)
    assert json.loads(text) == {"a": "</script><!--&\u2028\u2029", "n": "nan"}


def test_package_js_and_css_cannot_end_their_element_early():
    assert report._raw_text("a = '</script>'; <!-- b", "script") == "a = '<\\/script>'; <\\!-- b"
    assert "</style" not in report._raw_text("x { } </STYLE> y", "style").lower()


# ------------------------------------------------------------------ atomic writes


def test_failure_mid_export_leaves_no_file(tmp_path, monkeypatch):
    calls = []
    real = report._script_json

    def fail_on_second(data):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom while rendering the second trace")
        return real(data)

    monkeypatch.setattr(report, "_script_json", fail_on_second)
    with pytest.raises(RuntimeError, match="boom"):
        gv.export_html([linear_regression(), linear_regression()], tmp_path / "r.html")
    assert list(tmp_path.iterdir()) == []


def test_failure_while_writing_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    out = tmp_path / "r.html"
    out.write_text("the previous report", encoding="utf-8")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        gv.export_html(linear_regression(), out)
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    assert out.read_text(encoding="utf-8") == "the previous report"

    monkeypatch.undo()

    def broken_replace(src, dst):
        raise OSError("cannot rename")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="cannot rename"):
        gv.export_html(linear_regression(), out)
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    assert out.read_text(encoding="utf-8") == "the previous report"


def test_overwrites_an_existing_report(tmp_path):
    out = tmp_path / "r.html"
    out.write_text("old", encoding="utf-8")
    gv.export_html(linear_regression(), out)
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


# ------------------------------------------------------------------ argument errors


@pytest.mark.parametrize("traces, error, message", [
    ([], ValueError, r"traces: the list is empty \(expected a gradviz.Trace or a non-empty list"),
    ("trace.json", TypeError, r"traces: expected a gradviz.Trace or a non-empty list of Traces, got str"),
    (None, TypeError, r"traces: expected .* got NoneType"),
    ({"steps": []}, TypeError, r"got dict"),
])
def test_bad_traces(tmp_path, traces, error, message):
    with pytest.raises(error, match=message):
        gv.export_html(traces, tmp_path / "r.html")
    assert list(tmp_path.iterdir()) == []


def test_bad_item_in_traces_names_its_index(tmp_path):
    with pytest.raises(TypeError, match=r"traces\[1\]: expected a gradviz.Trace, got int"):
        gv.export_html([linear_regression(), 3], tmp_path / "r.html")


def test_bad_paths(tmp_path):
    tr = linear_regression()
    with pytest.raises(ValueError, match=r"the directory .*missing.* does not exist"):
        gv.export_html(tr, tmp_path / "missing" / "r.html")
    with pytest.raises(ValueError, match=r"is a directory; give a file path such as"):
        gv.export_html(tr, tmp_path)
    with pytest.raises(TypeError, match=r"path: expected a file path \(str or pathlib.Path\), got int"):
        gv.export_html(tr, 123)
    with pytest.raises(TypeError, match=r"title: expected a string, got int"):
        gv.export_html(tr, tmp_path / "r.html", title=5)
    assert list(tmp_path.iterdir()) == []


def test_accepts_str_paths_and_tuples(tmp_path):
    out = gv.export_html((linear_regression(),), str(tmp_path / "s.html"))
    assert out.name == "s.html" and out.is_file()


# ------------------------------------------------------------------ front end with a fixture


def test_fixture_payload_renders_without_the_engine(tmp_path):
    payload = load_payload()
    payload["title"] = HOSTILE
    page = report._render([payload], title="fixture")
    assert remote_urls(page) == []
    assert page.count("<script") == 3  # the theme, the data (graphviz's own comments keep this SVG in it), the stepper
    assert HOSTILE not in page


def test_a_title_that_is_not_text_writes_nothing(tmp_path):
    with pytest.raises(ValueError, match="title: .* holds a lone surrogate"):
        gv.export_html(linear_regression(), tmp_path / "r.html", title="lecture \udfff")
    assert list(tmp_path.iterdir()) == []


def test_large_data_blocks_are_gzipped_and_give_the_same_text(tmp_path, monkeypatch):
    import base64
    import gzip

    x = gv.constant([1.0, 2.0], name="x")
    tr = gv.trace_gradients(gv.reduce_sum(x * x), x)
    plain = tr.to_html(tmp_path / "plain.html").read_text(encoding="utf-8")
    monkeypatch.setattr(report, "COMPRESS_OVER", 100)
    zipped = tr.to_html(tmp_path / "zipped.html").read_text(encoding="utf-8")
    blocks = dict(re.findall(r'<script type="(?:application/json|image/svg\+xml)" id="([^"]+)">'
                             r'(.*?)</script>', plain, re.S))
    packed = dict(re.findall(r'<script type="application/octet-stream" id="([^"]+)" '
                             r'data-encoding="gzip\+base64" data-type="[^"]+">\n(.*?)</script>',
                             zipped, re.S))
    assert set(blocks) == set(packed) == {"gv-payload-1", "gv-svg-1"}
    for name, text in blocks.items():
        assert gzip.decompress(base64.b64decode(packed[name])).decode("utf-8") == text
    # the same trace gives the same bytes (no time stamp in the gzip header)
    assert tr.to_html(tmp_path / "again.html").read_text(encoding="utf-8") == zipped


# ------------------------------------------------------------------ navigation links


def nav_links(page: str) -> list[tuple[str, str]]:
    """The (text, href) of each link in the report's <nav>, as a browser reads them."""
    section = page[page.index('<nav class="gv-report-nav"'):page.index("</nav>") + 6]
    p = parse(section)
    hrefs = [a["href"] for t, a in p.tags if t == "a"]
    return list(zip(p.text, hrefs))


def test_nav_links_come_before_the_heading(tmp_path):
    nav = [("All lessons", "index.html"), ("Practise this lesson", "practice/01_a.html#t1/s2")]
    page = gv.export_html(linear_regression(), tmp_path / "r.html", title="Lesson 1",
                          nav=nav).read_text(encoding="utf-8")
    header = page[page.index('<header class="gv-report-header">'):page.index("</header>")]
    assert header.index('<nav class="gv-report-nav"') < header.index("<h1>")
    assert nav_links(page) == nav
    assert remote_urls(page) == []
    # on paper the links are no use: the print style hides them
    printed = page[page.index("@media print"):page.index("</style>")]
    assert re.search(r"\.gv-report-nav\s*\{\s*display:\s*none", printed)
    # the same from a trace's own to_html, and none without nav
    assert nav_links(linear_regression().to_html(tmp_path / "t.html", nav=nav)
                     .read_text(encoding="utf-8")) == nav
    assert 'class="gv-report-nav"' not in gv.export_html(linear_regression(), tmp_path / "n.html") \
        .read_text(encoding="utf-8")
    assert 'class="gv-report-nav"' not in report.report_html(linear_regression(), nav=[])


def test_nav_text_and_href_are_escaped(tmp_path):
    nav = [(HOSTILE, 'a "quoted" <name>.html?x=1&y=2')]
    page = report.report_html(linear_regression(), nav=nav)
    assert page.count("<script") == 4  # nothing injected
    nav_html = page[page.index("<nav"):page.index("</nav>")]
    assert "<script" not in nav_html and '"quoted"' not in nav_html
    assert '&amp;y=2' in nav_html
    assert nav_links(page) == nav


@pytest.mark.parametrize("nav, error, message", [
    ("index.html", TypeError,
     r"nav: expected a list of \(text, href\) pairs of non-empty strings, .* got str"),
    ({"All lessons": "index.html"}, TypeError, r"nav: expected a list of \(text, href\) pairs.* got dict"),
    (["index.html"], TypeError, r"nav\[0\]: expected a \(text, href\) pair, got str 'index.html'"),
    ([("All lessons", "index.html", "extra")], ValueError,
     r"nav\[0\]: expected a \(text, href\) pair, got 3 items"),
    ([("a", "a.html"), ("b",)], ValueError, r"nav\[1\]: expected a \(text, href\) pair, got 1 items"),
    ([("All lessons", None)], TypeError, r"nav\[0\]: the href must be a string, got NoneType"),
    ([(3, "index.html")], TypeError, r"nav\[0\]: the text must be a string, got int 3"),
    ([("  ", "index.html")], ValueError, r"nav\[0\]: the text is empty; a link needs a text"),
    ([("All lessons", "")], ValueError, r"nav\[0\]: the href is empty"),
    ([("x\udfff", "index.html")], ValueError, r"nav\[0\]: the text .* holds a lone surrogate"),
    ([("Home", "https://example.org/")], ValueError,
     r"nav\[0\]: the href 'https://example.org/' has the scheme 'https:', which leaves the "
     r"report; the report works offline, so a link must be a relative URL, such as 'index.html'"),
    ([("ok", "index.html"), ("Run", "JavaScript:alert(1)")], ValueError,
     r"nav\[1\]: the href 'JavaScript:alert\(1\)' has the scheme 'JavaScript:'"),
    ([("Run", " javascript:alert(1)")], ValueError, r"has the scheme 'javascript:'"),
    ([("Run", "java\tscript:alert(1)")], ValueError, r"holds a control character"),
    ([("Data", "data:text/html,hi")], ValueError, r"has the scheme 'data:'"),
    ([("Disk", "file:///etc/passwd")], ValueError, r"has the scheme 'file:'"),
    ([("Host", "//example.org/x.html")], ValueError,
     r"nav\[0\]: the href '//example.org/x.html' names a host, which the report never reaches"),
    ([("Host", "\\\\example.org/x.html")], ValueError, r"names a host"),
    ([("Host", "/\\example.org/x.html")], ValueError, r"names a host"),
    ([("Root", "/home/me/index.html")], ValueError,
     r"is a path from the root of the disk, which breaks when the reports are copied elsewhere"),
])
def test_bad_nav_is_refused_and_nothing_is_written(tmp_path, nav, error, message):
    with pytest.raises(error, match=message):
        gv.export_html(linear_regression(), tmp_path / "r.html", nav=nav)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(error, match=message):
        report.report_html(linear_regression(), nav=nav)


def test_relative_hrefs_of_every_kind_are_taken(tmp_path):
    nav = [("Index", "index.html"), ("Up", "../index.html"), ("Here", "./a.html"),
           ("A step", "#t2/s5"), ("Query", "?x=1"), ("Colon later", "./a:b.html"),
           ("Spaced", "my lesson.html")]
    page = gv.export_html(linear_regression(), tmp_path / "r.html", nav=tuple(nav))
    assert nav_links(page.read_text(encoding="utf-8")) == nav
