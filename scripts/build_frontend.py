"""Build the viewer's one script from its ES modules.

Usage::

    python scripts/build_frontend.py          # write gradviz/views/static/stepper.js
    python scripts/build_frontend.py --check  # exit 1 if stepper.js is not up to date

The viewer's front end is written as ES modules in ``gradviz/views/static/viewer/``
(``viewer.js`` is the entry; see ARCHITECTURE.md).  The JupyterLab widget needs
one ES module and the offline report one inline script, so this puts the modules
together into ``static/stepper.js``, which both run and which is committed (a
test checks that it is up to date; ``make frontend`` rebuilds it).

Putting them together is concatenation, in dependency order, because the
modules keep to a small subset of ES module syntax that makes it exact:

- imports are ``import { a, b } from "./name.js";`` (names of functions or
  constants the other module exports) or ``import NAME from "../file.json"
  with { type: "json" };`` (inlined as ``const NAME = <the JSON>;``);
- exports are ``export function|const|let|class name``, and the entry's
  ``export default``;
- no two modules declare the same top-level name (they end up in one scope).

Anything else is an error naming the file and line, so the build never writes
a script that differs in meaning from its modules.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
STATIC = ROOT / "gradviz" / "views" / "static"
SOURCES = STATIC / "viewer"
ENTRY = "viewer.js"
OUTPUT = STATIC / "stepper.js"

_IMPORT = re.compile(
    r'^import\s+(?:\{(?P<names>[^}]*)\}|(?P<default>[A-Za-z_$][\w$]*))\s+from\s+"(?P<path>[^"]+)"'
    r'(?P<json>\s+with\s+\{\s*type:\s*"json"\s*\})?\s*;[ \t]*$',
    re.MULTILINE)
_DECLARATION = re.compile(
    r"^(?P<export>export\s+)?(?:async\s+)?(?:function\*?|const|let|var|class)\s+(?P<name>[A-Za-z_$][\w$]*)",
    re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_$][\w$]*")

HEADER = """\
// gradviz step-through viewer: the ES modules of gradviz/views/static/viewer/,
// put together by scripts/build_frontend.py (`make frontend`).  Do not edit this
// file: edit the modules and build again (a test fails while it is out of date).
"""


class BuildError(ValueError):
    """A module the build cannot put together exactly."""


@dataclass
class Module:
    name: str  # file name inside the sources folder, e.g. "dom.js"
    body: str  # the text without its import statements
    imports: dict[str, list[str]] = field(default_factory=dict)  # module -> names
    json: dict[str, pathlib.Path] = field(default_factory=dict)  # const name -> file
    exports: set[str] = field(default_factory=set)
    declared: set[str] = field(default_factory=set)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def read_module(path: pathlib.Path) -> Module:
    """One module: its imports, exports and top-level names, and its body."""
    text = path.read_text(encoding="utf-8")
    mod = Module(path.name, "")
    for m in _IMPORT.finditer(text):
        where = f"{path.name}:{_line(text, m.start())}"
        target = m["path"]
        if m["default"]:
            if not (m["json"] and target.endswith(".json")):
                raise BuildError(f"{where}: a default import must be a JSON file imported "
                                 f'with {{ type: "json" }} (got {target!r})')
            mod.json[m["default"]] = (path.parent / target).resolve()
            continue
        if not (target.startswith("./") and target.endswith(".js") and "/" not in target[2:]):
            raise BuildError(f"{where}: import from {target!r}: only modules beside it "
                             '("./name.js") can be imported')
        names = [n.strip() for n in m["names"].split(",") if n.strip()]
        bad = [n for n in names if not _NAME.fullmatch(n)]
        if bad:
            raise BuildError(f"{where}: import {{ {bad[0]} }}: import names as they are "
                             "(no `as`)")
        mod.imports.setdefault(target[2:], []).extend(names)
    body = _IMPORT.sub("", text)
    for m in re.finditer(r"^[ \t]*(import|export)\b.*$", body, re.MULTILINE):
        stmt = m.group(0).strip()
        if stmt.startswith("import"):
            raise BuildError(f"{path.name}: unsupported import {stmt!r} (see the build's "
                             "docstring for the forms it accepts)")
        if not (_DECLARATION.match(stmt) or stmt.startswith("export default")):
            raise BuildError(f"{path.name}: unsupported export {stmt!r} (export a "
                             "declaration: export function|const|let|class name)")
        if m.start(1) != m.start(0):
            raise BuildError(f"{path.name}: {stmt.split()[0]} inside a block: {stmt!r}")
    for m in _DECLARATION.finditer(body):
        mod.declared.add(m["name"])
        if m["export"]:
            mod.exports.add(m["name"])
    mod.declared |= set(mod.json)
    mod.body = body
    return mod


def _order(modules: dict[str, Module], entry: str) -> list[str]:
    """The modules the entry needs, each after the modules it imports."""
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            cycle = " -> ".join(visiting[visiting.index(name):] + [name])
            raise BuildError(f"import cycle: {cycle}")
        if name not in modules:
            raise BuildError(f"{visiting[-1]} imports ./{name}, which does not exist")
        visiting.append(name)
        for dep in modules[name].imports:
            visit(dep)
        visiting.pop()
        order.append(name)

    visit(entry)
    return order


def bundle(sources: pathlib.Path = SOURCES, entry: str = ENTRY) -> str:
    """The one script: every module the entry needs, in dependency order."""
    modules = {p.name: read_module(p) for p in sorted(sources.glob("*.js"))}
    if entry not in modules:
        raise BuildError(f"no entry module {entry} in {sources}")
    order = _order(modules, entry)
    unused = sorted(set(modules) - set(order))
    if unused:
        raise BuildError(f"{', '.join(unused)}: not imported by {entry} or what it imports")
    owner: dict[str, str] = {}
    for name in order:
        mod = modules[name]
        for dep, names in mod.imports.items():
            missing = [n for n in names if n not in modules[dep].exports]
            if missing:
                raise BuildError(f"{name} imports {missing[0]} from ./{dep}, which does not "
                                 "export it")
        for decl in sorted(mod.declared):
            if decl in owner:
                raise BuildError(f"{decl} is declared at the top of both {owner[decl]} and "
                                 f"{name}: in one script they would clash; rename one")
            owner[decl] = name
        if name != entry and re.search(r"^export\s+default\b", mod.body, re.MULTILINE):
            raise BuildError(f"{name}: only the entry ({entry}) has an export default")
    parts = [HEADER]
    for name in order:
        mod = modules[name]
        body = mod.body
        if name != entry:  # its exports are the bundle's internals
            body = re.sub(r"^export\s+(?=(?:async\s+)?(?:function|const|let|var|class)\b)", "",
                          body, flags=re.MULTILINE)
        consts = "".join(
            f"const {const} = {json.dumps(json.loads(path.read_text(encoding='utf-8')), ensure_ascii=False)};\n"
            for const, path in sorted(mod.json.items()))
        body = re.sub(r"\n{3,}", "\n\n", consts + body.strip("\n"))
        parts.append(f"\n// {'-' * 60} viewer/{name}\n\n{body}\n")
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if the built file is not up to date")
    args = parser.parse_args(argv)
    try:
        text = bundle()
    except BuildError as err:
        print(f"build_frontend: {err}", file=sys.stderr)
        return 2
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else None
    if args.check:
        if current != text:
            print(f"build_frontend: {OUTPUT.relative_to(ROOT)} is out of date with "
                  f"{SOURCES.relative_to(ROOT)}/: run `make frontend`", file=sys.stderr)
            return 1
        return 0
    if current != text:
        tmp = OUTPUT.with_suffix(".js.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(OUTPUT)
        print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(order_names(text))} modules)")
    else:
        print(f"{OUTPUT.relative_to(ROOT)} is up to date")
    return 0


def order_names(text: str) -> list[str]:
    """The modules a built script holds, in order (from its section lines)."""
    return re.findall(r"^// -+ viewer/(\S+)$", text, re.MULTILINE)


if __name__ == "__main__":
    sys.exit(main())
