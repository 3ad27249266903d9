"""`pip install gradviz` is the whole install: the wheel, in a fresh virtualenv
outside the repository, on a PATH with no Graphviz, traces, draws, builds the
widget's payload and exports a report that steps in Chromium.

The wheel is built by ``python -m build`` from a copy of the checkout's files
that git tracks or would (nothing it ignores, and nothing the build writes
lands in the checkout);
pip installs it and its dependencies from the package index (or pip's cache)
into a virtualenv made for it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import REPO_ROOT

from fixtures.viewer_page import viewer_state, wait_step

pytestmark = pytest.mark.browser

# Run by the wheel's own Python, in a folder outside the repository.
USE = r"""
import json, shutil, sys
import gradviz as gv
from gradviz.views.widget import view_payload

w = gv.Variable([[0.5, -1.0], [2.0, 0.25]], name="W")
x = gv.constant([[1.0], [3.0]], name="x")
b = gv.constant([0.1, -0.2], name="b")
loss = gv.reduce_sum(gv.tanh(gv.matmul(w, x) + b))
tr = gv.trace_gradients(loss, [w])
svg = tr.to_svg()
payload = view_payload(tr)
widget = gv.show(tr)
tr.to_html(sys.argv[1], title="From the wheel")
print(json.dumps({
    "gradviz": gv.__file__, "dot": shutil.which("dot"), "engine": gv.layout_engine(),
    "svg": svg[:4], "payload_steps": len(payload["steps"]), "widget_steps": widget.num_steps,
    "steps": len(tr.steps),
}))
"""


def run(argv: list[str], *, timeout: float, **kw) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    assert done.returncode == 0, (
        f"{' '.join(map(str, argv))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n"
        f"{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv, outside the repository, with the built wheel installed."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    tracked = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                  cwd=REPO_ROOT, timeout=60).stdout.split("\0")
    for name in filter(None, tracked):
        if (REPO_ROOT / name).is_file():  # a file deleted but not yet committed is skipped
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / name, source / name)
    run([sys.executable, "-m", "build", "--outdir", str(root / "dist"), str(source)],
        timeout=600)
    wheels = list((root / "dist").glob("gradviz-*.whl"))
    assert len(wheels) == 1, wheels
    venv = root / "venv"
    # pip, run from here, installs into the new environment's Python (--python):
    # the same install as that environment's own pip, without the 5 s of putting
    # pip into it, and without compiling every dependency's .pyc files (15 s).
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=300)
    run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--disable-pip-version-check", "--no-compile", "-q", str(wheels[0])], timeout=900)
    return venv


def test_the_wheel_carries_the_front_end(installed: Path):
    done = run([str(installed / "bin" / "python"), "-c",
                "import gradviz.views.static as s, pathlib; "
                "print(sorted(p.name for p in pathlib.Path(list(s.__path__)[0]).iterdir()))"],
               timeout=60, cwd=installed)
    names = json.loads(done.stdout.replace("'", '"'))
    assert {"stepper.js", "stepper.css", "diagram.css", "marks.json"} <= set(names)
    assert "viewer" not in names  # the sources of stepper.js stay in the repository


def test_with_no_graphviz_on_path_it_traces_draws_and_exports_a_report_that_steps(
        installed: Path, tmp_path: Path, offline_page):
    work = tmp_path / "elsewhere"
    work.mkdir()
    script = work / "use.py"
    script.write_text(USE)
    env = {"PATH": str(installed / "bin"), "HOME": str(work), "MPLCONFIGDIR": str(work / "mpl")}
    if "SYSTEMROOT" in os.environ:
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    report = work / "report.html"
    done = run([str(installed / "bin" / "python"), str(script), str(report)], cwd=work,
               env=env, timeout=300)
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["dot"] is None, "the PATH given still has a dot on it"
    assert Path(facts["gradviz"]).is_relative_to(installed), facts["gradviz"]
    assert facts["engine"] == "pygraphviz"
    assert facts["svg"] == "<svg"
    assert facts["payload_steps"] == facts["widget_steps"] == facts["steps"] > 3
    assert "Fontconfig warning" not in done.stderr
    assert "Error" not in done.stderr, done.stderr

    page = offline_page
    page.goto(report.as_uri())
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer = page.locator(".gv-viewer")
    assert viewer_state(viewer)["counter"].startswith(f"step 0 / {facts['steps'] - 1}")
    page.keyboard.press("ArrowRight")
    wait_step(viewer, 1)
    state = viewer_state(viewer)
    assert state["step"] == 1 and state["active"] and state["sentence"]
    assert page.locator(".gv-diagram svg g.node").count() > 3
    assert page.blocked_requests == [] and page.page_errors == [] and page.console_errors == []
