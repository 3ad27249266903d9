"""Cheap checks of the project's setup: system programs, requirements, Makefile, CI, setup.sh."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from harness import REPO_ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

RUNTIME = {"numpy", "matplotlib", "ipywidgets", "anywidget", "graphviz", "jupyterlab"}
TEST_ONLY = {"pytest", "nbclient", "nbformat", "ipykernel", "playwright"}
MAKE_TARGETS = ["help", "setup", "test", "lab", "bench", "reports", "clean"]


def run_make(*args: str) -> subprocess.CompletedProcess[str]:
    """Run make in the repository, unaffected by a make that runs these tests."""
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}}
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=30,
    )


def read_requirements(path: Path) -> tuple[list[Requirement], list[str]]:
    """(requirements, included files) of a pip requirements file; raises on a bad line."""
    requirements, includes = [], []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            includes.append(line[3:].strip())
            continue
        try:
            requirements.append(Requirement(line))
        except Exception as exc:
            raise AssertionError(f"{path.name}:{number}: cannot parse {raw!r}: {exc}") from exc
    return requirements, includes


def test_dot_runs() -> None:
    dot = shutil.which("dot")
    assert dot, "Graphviz `dot` is not on PATH: run scripts/setup.sh (or see README, Install)"
    result = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "graphviz version" in result.stderr + result.stdout


def test_runtime_requirements_parse_and_name_the_runtime_packages() -> None:
    requirements, includes = read_requirements(REPO_ROOT / "requirements.txt")
    assert includes == []
    names = {r.name.lower() for r in requirements}
    assert RUNTIME <= names, f"missing from requirements.txt: {RUNTIME - names}"
    assert not (TEST_ONLY - {"ipykernel"}) & names, "test-only packages belong in requirements-test.txt"
    assert all(r.specifier for r in requirements), "every runtime requirement has a lower bound"


def test_test_requirements_include_runtime_and_name_the_test_tools() -> None:
    requirements, includes = read_requirements(REPO_ROOT / "requirements-test.txt")
    assert includes == ["requirements.txt"]
    names = {r.name.lower() for r in requirements}
    assert TEST_ONLY <= names, f"missing from requirements-test.txt: {TEST_ONLY - names}"


def test_pyproject_packages_gradviz_and_agrees_with_requirements() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["name"] == "gradviz"
    # Every package is found (tests/test_wheel.py builds the wheel and uses it),
    # and the front end's built files it names exist.
    assert pyproject["tool"]["setuptools"]["packages"]["find"]["include"] == ["gradviz*"]
    package_data = pyproject["tool"]["setuptools"]["package-data"]
    assert set(package_data["gradviz"]) == {"py.typed"}
    for name in package_data["gradviz.views.static"]:
        assert (REPO_ROOT / "gradviz" / "views" / "static" / name).is_file(), name
    pytest_options = pyproject["tool"]["pytest"]["ini_options"]
    assert pytest_options["testpaths"] == ["tests", "gradviz"]
    assert "--doctest-modules" in pytest_options["addopts"]
    assert any(m.startswith("browser:") for m in pytest_options["markers"])
    # What the package declares matches what setup.sh installs.
    runtime = {r.name.lower(): (r.specifier, r.marker)
               for r in read_requirements(REPO_ROOT / "requirements.txt")[0]}
    for dependency in map(Requirement, pyproject["project"]["dependencies"]):
        assert runtime.get(dependency.name.lower()) == (dependency.specifier, dependency.marker), (
            f"pyproject.toml has {dependency}, requirements.txt has "
            f"{dependency.name}{runtime.get(dependency.name.lower(), ' (nothing)')}"
        )


def test_ci_runs_make_test_and_fails_when_it_fails() -> None:
    ci = REPO_ROOT / ".ci" / "run"
    text = ci.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    commands = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert "make test" in commands
    assert ci.stat().st_mode & stat.S_IXUSR, ".ci/run must be executable"


@pytest.mark.parametrize("target", MAKE_TARGETS)
def test_makefile_has_target(target: str) -> None:
    # A dry run: make parses the Makefile and knows the target, nothing runs.
    result = run_make("-n", target)
    assert result.returncode == 0, result.stderr


def test_make_with_no_target_shows_lab_and_test_first() -> None:
    result = run_make()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("make lab") and lines[1].startswith("make test"), lines


# ------------------------------------------------------------------ scripts/setup.sh
def test_setup_script_parses() -> None:
    for script in ("scripts/setup.sh", "scripts/lab.sh", ".ci/run"):
        result = subprocess.run(["bash", "-n", script], cwd=REPO_ROOT, capture_output=True, text=True)
        assert result.returncode == 0, f"{script}: {result.stderr}"


def sandbox(tmp_path: Path, *, hide: set[str], uname: str | None = None, python: str | None = None) -> tuple[Path, dict[str, str]]:
    """A copy of the setup files, and an environment whose PATH lacks ``hide``.

    PATH holds links to every program of /usr/bin and /bin except those
    hidden, so the script sees a machine without, say, dot or apt-get.
    """
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "scripts" / "setup.sh", project / "scripts")
    for name in ("requirements.txt", "requirements-test.txt", "pyproject.toml"):
        shutil.copy(REPO_ROOT / name, project)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin"):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = bin_dir / entry.name
            if entry.name not in hide and not target.exists() and os.access(entry.path, os.X_OK):
                target.symlink_to(entry.path)
    python_link = bin_dir / "python3"
    python_link.unlink(missing_ok=True)
    if python is None:
        python_link.symlink_to(sys.executable)
    else:
        python_link.write_text(python)
        python_link.chmod(0o755)
    if uname is not None:
        (bin_dir / "uname").unlink(missing_ok=True)
        (bin_dir / "uname").write_text(f"#!/bin/sh\necho {uname}\n")
        (bin_dir / "uname").chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "CHROMIUM": str(tmp_path / "no-chromium")}
    return project, env


def run_setup(project: Path, env: dict[str, str], mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(project / "scripts" / "setup.sh"), mode],
        env=env, capture_output=True, text=True, timeout=60,
    )


def test_setup_without_apt_get_says_what_to_install_and_fails(tmp_path: Path) -> None:
    project, env = sandbox(tmp_path, hide={"dot", "apt-get", "sudo"})
    result = run_setup(project, env, "test")
    assert result.returncode != 0
    assert "missing: graphviz chromium" in result.stderr
    assert "apt-get install -y graphviz" in result.stderr
    assert "Chromium (browser tests only)" in result.stderr
    assert not (project / ".venv").exists(), "nothing is installed before the system check passes"


def test_setup_without_npm_says_it_installs_axe_core_with_it(tmp_path: Path) -> None:
    project, env = sandbox(tmp_path, hide={"npm", "apt-get", "sudo"})
    result = run_setup(project, env, "test")
    assert result.returncode != 0
    assert "npm is missing: the accessibility tests run axe-core" in result.stdout
    assert "missing: chromium npm" in result.stderr
    assert "apt-get install -y npm" in result.stderr


def test_setup_on_macos_points_to_homebrew(tmp_path: Path) -> None:
    project, env = sandbox(tmp_path, hide={"dot", "apt-get", "sudo"}, uname="Darwin")
    result = run_setup(project, env, "test")
    assert result.returncode != 0
    assert "brew install graphviz" in result.stderr
    assert "brew install --cask chromium" in result.stderr


def test_setup_for_the_lab_asks_for_neither_graphviz_nor_chromium(tmp_path: Path) -> None:
    project, env = sandbox(tmp_path, hide={"dot", "apt-get", "sudo"})
    venv_bin = project / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    (project / ".venv" / ".setup-lab.stamp").touch()
    result = run_setup(project, env, "lab")
    assert result.returncode == 0, result.stderr
    assert "no Graphviz 'dot' on PATH: diagrams are laid out by the Graphviz inside pygraphviz" \
        in result.stdout
    assert "missing" not in result.stdout + result.stderr
    assert "hromium" not in result.stdout + result.stderr


def test_setup_refuses_an_old_python(tmp_path: Path) -> None:
    project, env = sandbox(tmp_path, hide=set(), python="#!/bin/sh\necho 3.9.18\nexit 1\n")
    result = run_setup(project, env, "lab")
    assert result.returncode != 0
    assert "Python 3.9.18; gradviz needs Python 3.10 or newer" in result.stderr


def test_setup_rejects_an_unknown_mode(tmp_path: Path) -> None:
    project, env = sandbox(tmp_path, hide=set())
    result = run_setup(project, env, "everything")
    assert result.returncode == 2
    assert 'must be "lab" or "test"' in result.stderr


def test_setup_skips_pip_when_the_stamp_is_fresh(tmp_path: Path) -> None:
    if not shutil.which("dot"):
        pytest.fail("dot is missing: see test_dot_runs")
    project, env = sandbox(tmp_path, hide=set())
    venv_bin = project / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    (project / ".venv" / ".setup-lab.stamp").touch()
    result = run_setup(project, env, "lab")
    assert result.returncode == 0, result.stderr
    assert "up to date" in result.stdout
    assert "installing" not in result.stdout


# ----------------------------------------------------------------- scripts/check_port.py
def test_check_port_names_a_busy_port_and_another_to_use() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        result = subprocess.run(
            [sys.executable, str(REPO_ROOT / "scripts" / "check_port.py"), str(port)],
            capture_output=True, text=True, timeout=30,
        )
    assert result.returncode == 1
    assert f"port {port} is already in use" in result.stderr
    assert "make lab PORT=" in result.stderr


def test_check_port_accepts_a_free_port() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "check_port.py"), str(port)],
        capture_output=True, text=True, timeout=30,
    )
    assert result.returncode == 0, result.stderr
