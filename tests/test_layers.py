"""The layers point one way: views -> trace -> engine (ARCHITECTURE.md).

Imports are read with ``ast`` from the source files, relative ones resolved to
the module they name, so a renamed alias or an import inside a function is
seen as well as a top-level one.  The one import that points up the layers is
the seam the trace's rendering conveniences go through, known here by name.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = REPO_ROOT / "gradviz"

#: Bottom to top: a layer may import the layers before it, never those after.
LAYERS = ("engine", "trace", "views")
#: The one seam up the layers: (file, function) — the trace hands itself to the views.
SEAM = ("gradviz/trace/trace.py", "_views")


def _modules(layer: str) -> list[pathlib.Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str, module: str,
            is_package: bool = False) -> list[tuple[str, str | None, int]]:
    """(imported module, enclosing function or None, line) for each import in ``source``.

    ``from .. import views`` names the module ``gradviz.views``; ``from ..trace
    import Trace`` names ``gradviz.trace``.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[str, str | None, int]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, function or child.name)
                continue
            if isinstance(child, ast.Import):
                found.extend((a.name, function, child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if child.module is None or target == "gradviz":
                    # `from .. import views`: each name is a module of the package
                    found.extend((f"{target}.{a.name}", function, child.lineno)
                                 for a in child.names)
                else:
                    found.append((target, function, child.lineno))
            visit(child, function)

    visit(ast.parse(source), None)
    return found


def layer_of(module: str) -> str | None:
    """The layer a module belongs to; "gradviz" itself (which loads every layer) is the top."""
    parts = module.split(".")
    if parts[0] != "gradviz":
        return None
    if len(parts) == 1 or parts[1] not in LAYERS:
        return "gradviz"
    return parts[1]


def up_imports(layer: str) -> list[tuple[str, str, str | None, int]]:
    """Imports from modules of ``layer`` into a layer above it (or into gradviz itself)."""
    rank = LAYERS.index(layer)
    above = set(LAYERS[rank + 1:]) | {"gradviz"}
    bad = []
    for path in _modules(layer):
        name = _module_name(path)
        for target, function, line in imports(path.read_text(encoding="utf-8"), name,
                                              path.name == "__init__.py"):
            if layer_of(target) in above:
                bad.append((path.relative_to(REPO_ROOT).as_posix(), target, function, line))
    return bad


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_and_each_of_its_modules_imports(layer: str) -> None:
    importlib.import_module(f"gradviz.{layer}")
    for path in _modules(layer):
        importlib.import_module(_module_name(path))


def test_the_engine_imports_nothing_of_the_trace_or_the_views() -> None:
    assert up_imports("engine") == []


def test_the_trace_imports_nothing_of_the_views_but_through_its_one_seam() -> None:
    bad = up_imports("trace")
    outside = [b for b in bad if (b[0], b[2]) != SEAM]
    assert outside == [], "the trace imports the views outside the seam " + "::".join(SEAM)
    # the seam exists, and is what it says: the one place the trace reaches the views
    assert [(b[0], b[1], b[2]) for b in bad] == [(SEAM[0], "gradviz.views", SEAM[1])]


def test_the_views_import_the_trace_and_the_engine_not_the_top_package() -> None:
    assert up_imports("views") == []


def test_architecture_names_the_seam() -> None:
    text = (REPO_ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert SEAM[0] in text, f"ARCHITECTURE.md does not name the seam's file {SEAM[0]}"
    assert f"`{SEAM[1]}" in text, f"ARCHITECTURE.md does not name the seam {SEAM[1]}"


@pytest.mark.parametrize("source, module, expected", [
    ("from ..views import diagram", "gradviz.engine.ops", "gradviz.views"),
    ("from .. import views", "gradviz.trace.trace", "gradviz.views"),
    ("def f():\n    import gradviz.views.widget as w", "gradviz.engine.tape",
     "gradviz.views.widget"),
    ("from gradviz import views", "gradviz.engine.graph", "gradviz.views"),
    ("from . import graph", "gradviz.engine.ops", "gradviz.engine.graph"),
])
def test_the_import_reader_resolves_what_a_module_names(source: str, module: str,
                                                        expected: str) -> None:
    # the checks above are only as good as this reading: an up-import written any
    # of these ways is found, with the layer it points to
    (target, _, _), = imports(source, module)
    assert target == expected


def test_an_engine_module_importing_the_views_would_be_caught(tmp_path, monkeypatch) -> None:
    fake = tmp_path / "gradviz" / "engine"
    fake.mkdir(parents=True)
    (fake / "leaky.py").write_text("def f():\n    from ..views import widget\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "gradviz")
    monkeypatch.setattr(sys.modules[__name__], "REPO_ROOT", tmp_path)
    assert up_imports("engine") == [("gradviz/engine/leaky.py", "gradviz.views", "f", 2)]


def test_old_flat_module_names_are_still_attributes_of_gradviz() -> None:
    # `from gradviz import plots` is how the lessons import the plots
    import gradviz as gv
    from gradviz import plots
    from gradviz.views import plots as views_plots

    assert plots is views_plots
    assert gv.ops is importlib.import_module("gradviz.engine.ops")
    assert gv.widget is importlib.import_module("gradviz.views.widget")
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        gv.nonesuch  # noqa: B018


def test_the_old_trace_module_names_are_names_of_the_trace_package() -> None:
    # every public name the flat gradviz/trace.py had, before the layers
    import gradviz.trace

    before = ["AccumulateStep", "ArrayData", "BackwardStep", "CUT_REASONS", "Contribution",
              "CutStep", "FORMAT_VERSION", "HEAD_LIMIT", "NOT_TEXT", "OpInfo", "PREVIEW_LIMIT",
              "Recorder", "ReduceStep", "ResultStep", "STEP_KINDS", "SeedStep", "Step",
              "TensorInfo", "Trace", "check_title"]
    assert [name for name in before if not hasattr(gradviz.trace, name)] == []
