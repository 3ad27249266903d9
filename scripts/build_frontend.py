"""Build the viewer's one script from its ES modules.

Usage::

    python scripts/build_frontend.py          # write gradviz/views/static/stepper.js
    python scripts/build_frontend.py --check  # exit 1 if stepper.js is not up to date

The viewer's front end is written as ES modules in ``gradviz/views/static/viewer/``
(``viewer.js`` is the entry; see ARCHITECTURE.md).  The JupyterLab widget needs
one ES module and the offline report one inline script, so this puts the modules
together into ``static/stepper.js``, which both run and which is committed (a
test checks that it is up to date; ``make frontend`` rebuilds it).

Putting them together is concatenation, in dependency order, with each module
in a scope of its own (as an ES module is) that hands on its exports.  That is
exact because the modules keep to a small subset of ES module syntax:

- imports come first in a module, and are ``import { a, b } from "./name.js";``
  (names the module beside it exports) or ``import NAME from "../file.json"
  with { type: "json" };`` (inlined as ``const NAME = <the JSON>;``);
- exports are ``export function|const|class name``, one name each (not
  ``let``: a live binding that changes would not be seen), and the entry's
  ``export default``;
- no import cycles.

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
    r'import\s+(?:\{(?P<names>[^}]*)\}|(?P<default>[A-Za-z_$][\w$]*))\s+from\s+"(?P<path>[^"]+)"'
    r'(?P<json>\s+with\s+\{\s*type:\s*"json"\s*\})?\s*;')
_EXPORT = re.compile(r"export\s+(?:async\s+)?(?:function\*?|const|class)\s+(?P<name>[A-Za-z_$][\w$]*)")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_FILE = re.compile(r"[a-z][a-z0-9_]*\.js")

HEADER = """\
// gradviz step-through viewer: the ES modules of gradviz/views/static/viewer/,
// put together by scripts/build_frontend.py (`make frontend`).  Do not edit this
// file: edit the modules and build again (a test fails while it is out of date).
// Each module but the entry runs in a scope of its own and hands on what it exports.
"""


class BuildError(ValueError):
    """A module the build cannot put together exactly."""


@dataclass
class Module:
    name: str  # file name inside the sources folder, e.g. "dom.js"
    head: str  # its opening comments
    body: str  # the code after its imports, without the export keywords
    imports: dict[str, list[str]] = field(default_factory=dict)  # module -> names
    json: dict[str, pathlib.Path] = field(default_factory=dict)  # const name -> file
    exports: list[str] = field(default_factory=list)  # in the order they are declared
    default_export: bool = False


def _scope_name(module: str) -> str:
    """The constant a module's exports are kept in: dom.js -> __gv_dom."""
    return "__gv_" + module[:-3]


def _read_import(mod: Module, path: pathlib.Path, line: str, where: str) -> None:
    m = _IMPORT.fullmatch(line.strip())
    if not m:
        raise BuildError(f"{where}: unsupported import {line.strip()!r} (the forms the "
                         'build accepts: import { a, b } from "./name.js"; and import NAME '
                         'from "../file.json" with { type: "json" };)')
    target = m["path"]
    if m["default"]:
        if not (m["json"] and target.endswith(".json")):
            raise BuildError(f"{where}: a default import must be a JSON file imported "
                             f'with {{ type: "json" }} (got {target!r})')
        mod.json[m["default"]] = (path.parent / target).resolve()
        return
    if not (target.startswith("./") and _FILE.fullmatch(target[2:])):
        raise BuildError(f"{where}: import from {target!r}: only modules beside it "
                         '("./name.js", a lower-case name) can be imported')
    names = [n.strip() for n in m["names"].split(",") if n.strip()]
    bad = [n for n in names if not _NAME.fullmatch(n)]
    if bad:
        raise BuildError(f"{where}: import {{ {bad[0]} }}: import names as they are "
                         "(no `as`, no comments)")
    mod.imports.setdefault(target[2:], []).extend(names)


def read_module(path: pathlib.Path) -> Module:
    """One module: its imports (at its top), its exports, and its body.

    Imports come first, after the module's opening comments.  Exports are
    ``export function|const|class name`` at the start of a line, one name
    each, and the entry's ``export default``; anything else starting with
    ``import`` or ``export`` is an error naming the line.
    """
    if not _FILE.fullmatch(path.name):
        raise BuildError(f"{path.name}: module files are named in lower case (name.js)")
    lines = path.read_text(encoding="utf-8").split("\n")
    mod = Module(path.name, "", "")
    head: list[str] = []  # the opening comments, without the imports
    i, in_comment = 0, False
    while i < len(lines):
        text = lines[i].strip()
        if in_comment or text.startswith("/*"):
            in_comment = "*/" not in text
        elif text.startswith("import"):
            _read_import(mod, path, lines[i], f"{path.name}:{i + 1}")
            i += 1
            continue
        elif text and not text.startswith("//"):
            break
        if text or (head and head[-1].strip()):  # one blank line where the imports were
            head.append(lines[i])
        i += 1
    body = []
    for n, line in enumerate(lines[i:], start=i + 1):
        word = re.match(r"[ \t]*(import|export)\b", line)
        if word and word.group(1) == "import":
            raise BuildError(f"{path.name}:{n}: imports go at the top of the module, "
                             f"before any code: {line.strip()!r}")
        if word and line[0] in " \t":
            raise BuildError(f"{path.name}:{n}: export inside a block: {line.strip()!r}")
        if word:
            if line.startswith("export default"):
                mod.default_export = True
            elif m := _EXPORT.match(line):
                mod.exports.append(m["name"])
                line = line[len("export"):].lstrip()
            else:
                raise BuildError(f"{path.name}:{n}: unsupported export {line.strip()!r} "
                                 "(export one declaration per name: export "
                                 "function|const|class name; let and var are not exported, "
                                 "as the build cannot keep them live)")
        body.append(line)
    mod.head = "\n".join(head).strip("\n")
    mod.body = "\n".join(body).strip("\n")
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


def _check(modules: dict[str, Module], order: list[str], entry: str) -> None:
    unused = sorted(set(modules) - set(order))
    if unused:
        raise BuildError(f"{', '.join(unused)}: not imported by {entry} or what it imports")
    for name in order:
        mod = modules[name]
        seen: set[str] = set(mod.json)
        for dep, names in mod.imports.items():
            for n in names:
                if n not in modules[dep].exports:
                    raise BuildError(f"{name} imports {n} from ./{dep}, which does not "
                                     "export it")
                if n in seen:
                    raise BuildError(f"{name} imports the name {n} twice")
                seen.add(n)
        if mod.default_export and name != entry:
            raise BuildError(f"{name}: only the entry ({entry}) has an export default")
        if "__gv_" in mod.head + mod.body:
            raise BuildError(f"{name}: names starting __gv_ are the build's own")


def _imports_of(mod: Module) -> str:
    """The module's imports, as constants at the top of its scope."""
    out = []
    for const, path in sorted(mod.json.items()):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise BuildError(f"{mod.name} imports {path.name}, which cannot be read as "
                             f"JSON: {err}") from None
        out.append(f"const {const} = {json.dumps(data)};\n")
    for dep, names in mod.imports.items():
        out.append(f"const {{ {', '.join(names)} }} = {_scope_name(dep)};\n")
    return "".join(out)


def bundle(sources: pathlib.Path = SOURCES, entry: str = ENTRY) -> str:
    """The one script: every module the entry needs, in dependency order.

    A module other than the entry becomes ``const __gv_name = (() => { ...;
    return { its exports }; })();``, so its top-level names stay its own, as
    in an ES module; its imports are constants taken from those objects.  The
    entry is put last, at the top level, so the script's ``export default``
    (and, in the report, the code after it) sees its names.
    """
    modules = {p.name: read_module(p) for p in sorted(sources.glob("*.js"))}
    if entry not in modules:
        raise BuildError(f"no entry module {entry} in {sources}")
    order = _order(modules, entry)
    _check(modules, order, entry)
    parts = [HEADER]
    for name in order:
        mod = modules[name]
        head = f"\n// {'-' * 60} viewer/{name}\n\n" + (mod.head + "\n\n" if mod.head else "")
        imports = _imports_of(mod)
        if name == entry:
            parts.append(f"{head}{imports}\n{mod.body}\n")
        else:
            parts.append(f"{head}const {_scope_name(name)} = (() => {{\n{imports}\n{mod.body}\n\n"
                         f"return {{ {', '.join(mod.exports)} }};\n}})();\n")
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
