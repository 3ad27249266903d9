"""The viewer's front end: ES modules put together into one script, and the mark table.

The modules in ``gradviz/views/static/viewer/`` are built into
``static/stepper.js`` by ``scripts/build_frontend.py`` (see ARCHITECTURE.md).
These tests check that the committed script is the build of the modules, that
the build refuses what it cannot put together exactly, that the modules run as
real ES modules in Chromium and draw the same viewer as the built script, and
that the diagram's legend and the viewer's legend both come from the one mark
table, ``static/marks.json``.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

import pytest

from gradviz.views import diagram, explain, marks
from gradviz.views.viewdata import view_data
from fixtures.traces import linear_regression
from fixtures.viewer_page import load_payload
from test_diagram import groups, partial_trace, text_of

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
STATIC = REPO_ROOT / "gradviz" / "views" / "static"


def _load_build():
    spec = importlib.util.spec_from_file_location("build_frontend",
                                                  REPO_ROOT / "scripts" / "build_frontend.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


build = _load_build()
TABLE = json.loads((STATIC / "marks.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------ the build


def test_the_committed_script_is_the_build_of_the_modules():
    built = (STATIC / "stepper.js").read_text(encoding="utf-8")
    assert built == build.bundle(), (
        "gradviz/views/static/stepper.js is out of date with static/viewer/: run `make frontend`")
    assert build.main(["--check"]) == 0


def test_every_module_is_in_the_script_entry_last():
    modules = sorted(p.name for p in (STATIC / "viewer").glob("*.js"))
    order = build.order_names(build.bundle())
    assert sorted(order) == modules and order[-1] == "viewer.js"
    # each module comes after the modules it imports
    for name in order:
        for dep in build.read_module(STATIC / "viewer" / name).imports:
            assert order.index(dep) < order.index(name), (name, dep)
    built = build.bundle()
    assert not re.search(r"^import ", built, re.M)
    assert len(re.findall(r"^export ", built, re.M)) == 1  # the entry's export default
    assert built.isascii()


def _sources(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    folder = tmp_path / "viewer"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_the_build_puts_modules_together_in_dependency_order(tmp_path):
    (tmp_path / "table.json").write_text('{"a": [1, "\\u2191"]}', encoding="utf-8")
    src = _sources(tmp_path, {
        "viewer.js": '// the entry\nimport { twice } from "./b.js";\n\n'
                     "export default { render: twice };\n",
        "b.js": 'import { one } from "./a.js";\nexport function twice() { return 2 * one; }\n',
        "a.js": '/* a\n   table */\nimport T from "../table.json" with { type: "json" };\n'
                "const n = 0;\nexport const one = T.a[n];\n",
    })
    text = build.bundle(src, "viewer.js")
    assert build.order_names(text) == ["a.js", "b.js", "viewer.js"]
    # each module but the entry in a scope of its own, handing on its exports
    assert ('/* a\n   table */\n\nconst __gv_a = (() => {\nconst T = {"a": [1, "\\u2191"]};\n\n'
            "const n = 0;\nconst one = T.a[n];\n\nreturn { one };\n})();") in text
    assert "const { one } = __gv_a;\n\nfunction twice()" in text
    assert "// the entry\n\nconst { twice } = __gv_b;\n\nexport default { render: twice };" in text
    assert not re.search(r"^import", text, re.M)


def test_modules_keep_their_own_top_level_names(tmp_path):
    """Two modules may use the same private name, as ES modules may."""
    src = _sources(tmp_path, {
        "viewer.js": 'import { a } from "./a.js";\nconst size = 2;\n'
                     "export default { render: () => a() * size };\n",
        "a.js": "const size = 3;\nexport function a() { return size; }\n",
    })
    text = build.bundle(src, "viewer.js")
    assert text.count("const size") == 2


@pytest.mark.parametrize("files, message", [
    ({"viewer.js": 'import { nope } from "./a.js";\nexport default {};\n',
      "a.js": "export const yes = 1;\n"},
     "viewer.js imports nope from ./a.js, which does not export it"),
    ({"viewer.js": 'import { a } from "./a.js";\nexport default {};\n',
      "a.js": 'import { b } from "./b.js";\nexport const a = 1;\n',
      "b.js": 'import { a } from "./a.js";\nexport const b = 1;\n'},
     "import cycle: a.js -> b.js -> a.js"),
    ({"viewer.js": 'import { a as b } from "./a.js";\nexport default {};\n',
      "a.js": "export const a = 1;\n"},
     "viewer.js:1: import { a as b }: import names as they are"),
    ({"viewer.js": 'import * as A from "./a.js";\nexport default {};\n',
      "a.js": "export const a = 1;\n"},
     "viewer.js:1: unsupported import"),
    ({"viewer.js": 'import { a } from "../lib/a.js";\nexport default {};\n'},
     "viewer.js:1: import from '../lib/a.js': only modules beside it"),
    ({"viewer.js": "const a = 1;\nexport { a };\nexport default {};\n"},
     "viewer.js:2: unsupported export"),
    ({"viewer.js": 'import { a } from "./a.js";\nexport default {};\n',
      "a.js": "export let a = 1;\n"},
     "a.js:1: unsupported export 'export let a = 1;'"),
    ({"viewer.js": "const x = 1;\n  export const y = 2;\nexport default {};\n"},
     "viewer.js:2: export inside a block"),
    ({"viewer.js": 'const x = 1;\nimport { a } from "./a.js";\nexport default {};\n',
      "a.js": "export const a = 1;\n"},
     "viewer.js:2: imports go at the top of the module"),
    ({"viewer.js": 'import { a } from "./a.js";\nimport { a } from "./b.js";\nexport default {};\n',
      "a.js": "export const a = 1;\n", "b.js": "export const a = 2;\n"},
     "viewer.js imports the name a twice"),
    ({"viewer.js": 'import { a } from "./a.js";\nexport default {};\n',
      "a.js": "export const a = 1;\nexport default {};\n"},
     "only the entry (viewer.js) has an export default"),
    ({"viewer.js": "export default {};\n", "stray.js": "export const s = 1;\n"},
     "stray.js: not imported by viewer.js"),
    ({"viewer.js": 'import { a } from "./gone.js";\nexport default {};\n'},
     "viewer.js imports ./gone.js, which does not exist"),
    ({"viewer.js": 'import T from "../missing.json" with { type: "json" };\nexport default {};\n'},
     "viewer.js imports missing.json, which cannot be read as JSON"),
    ({"viewer.js": "const __gv_dom = 1;\nexport default {};\n"},
     "names starting __gv_ are the build's own"),
])
def test_the_build_refuses_what_it_cannot_put_together_exactly(tmp_path, files, message):
    src = _sources(tmp_path, files)
    with pytest.raises(build.BuildError, match=re.escape(message)):
        build.bundle(src, "viewer.js")


# ------------------------------------------------------------------ the mark table


def test_the_python_diagram_reads_the_mark_table():
    assert list(marks.MARKS) == [m["mark"] for m in TABLE["marks"]]
    for entry in TABLE["marks"]:
        name = entry["mark"]
        assert explain.LEGEND[name] == entry["meaning"]
        assert diagram.mark_colors(name) == {"stroke": entry["color"], "fill": entry["fill"]}
    for name in ("seed", "reduce", "accumulate", "cut", "result", "unconnected"):
        assert diagram.COLORS[name] == marks.MARKS[name].color
        assert diagram.MARK_FILLS[name] == marks.MARKS[name].fill
    for kind, fill in TABLE["node_fills"].items():
        assert diagram.COLORS[kind] == fill


def test_the_svg_legend_and_the_viewer_legend_come_from_the_table():
    table = {m["mark"]: m for m in TABLE["marks"]}
    for tr in (linear_regression(), partial_trace(True)):
        # the SVG's legend: each mark's meaning, sample and colours, as the table says
        legend_g = groups(diagram.layout_svg(tr))["legend"]
        legend_svg = ET.tostring(legend_g, encoding="unicode").lower()
        payload = view_data(tr)
        used = [e["mark"] for e in payload["legend"]]
        assert len(used) >= 4
        for name in used:
            entry = table[name]
            assert entry["meaning"] in text_of(legend_g)
            if entry["border"] not in ("none", "rounded"):
                assert f'stroke="{entry["color"].lower()}"' in legend_svg, name
            if entry["fill"] != "none":
                assert f'fill="{entry["fill"].lower()}"' in legend_svg, name
        # the viewer's legend entries: the table's words and colours, in its order
        assert used == [m for m in table if m in used]
        for e in payload["legend"]:
            entry = table[e["mark"]]
            assert (e["label"], e["stroke"], e["fill"]) == \
                (entry["meaning"], entry["color"], entry["fill"])
    # the viewer's script holds the table itself, and no drawing of a mark of its own
    built = (STATIC / "stepper.js").read_text(encoding="utf-8")
    assert f"const MARK_TABLE = {json.dumps(TABLE)};" in built
    modules = "".join(p.read_text(encoding="utf-8") for p in (STATIC / "viewer").glob("*.js"))
    for entry in TABLE["marks"]:
        if entry["swatch"] and "d" in entry["swatch"]:
            assert entry["swatch"]["d"] not in modules, entry["mark"]


def test_a_bad_mark_table_is_a_clear_error():
    text = json.dumps({"marks": [{**TABLE["marks"][0], "border": "wavy"}], "node_fills": {}})
    with pytest.raises(ValueError, match="mark 'tensor' has border 'wavy'"):
        marks.load_table(text)
    twice = json.dumps({"marks": TABLE["marks"][:1] * 2, "node_fills": {}})
    with pytest.raises(ValueError, match="described twice"):
        marks.load_table(twice)


# ------------------------------------------------------------------ in the browser

_PAGE = """<!doctype html><meta charset="utf-8"><body>
<div id="modules"></div><div id="built"></div>
<script type="module">
import fromModules from "./viewer/viewer.js";
import fromBuilt from "./stepper.js";
const payload = await (await fetch("./payload.json")).json();
function model(state) {
  const handlers = new Map();
  return {
    get: (k) => state[k],
    set(k, v) { state[k] = v; for (const fn of handlers.get("change:" + k) || []) fn(); },
    save_changes() {},
    on(ev, fn) { if (!handlers.has(ev)) handlers.set(ev, new Set()); handlers.get(ev).add(fn); },
    off(ev, fn) { handlers.get(ev)?.delete(fn); },
  };
}
const state = () => ({ payload, step: 0, show_grad_values: true, show_forward_values: true, speed: 1 });
fromModules.render({ model: model(state()), el: document.getElementById("modules") });
fromBuilt.render({ model: model(state()), el: document.getElementById("built") });
window.ready = true;
</script>"""


@pytest.mark.browser
def test_the_modules_run_as_es_modules_and_draw_what_the_built_script_draws(page):
    """Served over HTTP, the modules import one another (and the mark table as
    JSON) natively; stepped alike, they and the built script draw the same DOM."""
    payload = load_payload()
    files = {"index.html": (_PAGE, "text/html"),
             "payload.json": (json.dumps(payload), "application/json")}
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def serve(route):
        path = route.request.url.split("http://gradviz.test/", 1)[1]
        if path in files:
            body, kind = files[path]
        else:
            target = (STATIC / path).resolve()
            assert STATIC in target.parents and target.is_file(), path
            body = target.read_text(encoding="utf-8")
            kind = "application/json" if path.endswith(".json") else "text/javascript"
        route.fulfill(status=200, body=body, content_type=kind)

    page.route("http://gradviz.test/**", serve)
    page.goto("http://gradviz.test/index.html")
    page.wait_for_function("window.ready === true")
    assert errors == []
    modules, built = page.locator("#modules .gv-viewer"), page.locator("#built .gv-viewer")
    html = "(root) => root.innerHTML"
    assert modules.locator(".gv-legend-swatch path").count() >= 3
    for key in ["ArrowRight", "ArrowRight", "End", "ArrowLeft", "Home"]:
        for viewer in (modules, built):
            viewer.focus()
            viewer.press(key)
        assert modules.get_attribute("data-step") == built.get_attribute("data-step")
        # (each tells a screen reader of the step a moment after the key: wait for both)
        page.wait_for_function("""() => [...document.querySelectorAll('.gv-viewer')].every(
            (r) => r.querySelector('.gv-announce').textContent.startsWith(`Step ${r.dataset.step} of`))""")
        assert modules.evaluate(html) == built.evaluate(html), key
    assert modules.get_attribute("data-step") == "0"
    assert errors == []


def test_the_diagram_css_takes_the_marks_colours_from_the_table():
    raw = (STATIC / "diagram.css").read_text(encoding="utf-8")
    rules = re.sub(r"/\*.*?\*/", "", raw, flags=re.DOTALL)
    for name in ("gradient", "cut", "active"):
        assert f"${name}" in rules
    for name in ("gradient", "cut"):
        assert marks.MARKS[name].color.lower() not in rules.lower()
    css = diagram.diagram_css()
    assert f"stroke: {marks.MARKS['gradient'].color};" in css
    assert f"stroke: {marks.MARKS['cut'].color};" in css
    assert "$" not in re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)


# ------------------------------------------------------------ any Jupyter front end


def test_the_widget_follows_the_conventions_every_front_end_needs():
    """What lets an anywidget run in JupyterLab, Notebook 7, VS Code and Colab alike:
    one self-contained ES module with a default export, no imports to resolve, no
    globals of one front end, and CSS whose every JupyterLab variable has a fallback."""
    script = (STATIC / "stepper.js").read_text(encoding="utf-8")
    assert re.search(r"^export default \{ render \};?\s*$", script, re.MULTILINE)
    assert not re.search(r"^\s*import\s", script, re.MULTILINE)  # nothing to fetch
    assert not re.search(r"\bimport\s*\(", script)  # nor loaded later
    for front_end_only in ("jupyterapp", "requirejs", "require(", "Jupyter.", "IPython",
                           "@jupyterlab", "@lumino", "google.colab", "acquireVsCodeApi"):
        assert front_end_only not in script, front_end_only
    for css_file in ("stepper.css", "diagram.css"):
        css = (STATIC / css_file).read_text(encoding="utf-8")
        bare = re.findall(r"var\(\s*--jp-[\w-]+\s*\)", css)
        assert bare == [], f"{css_file}: JupyterLab variables without a fallback: {bare}"
