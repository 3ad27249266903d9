"""The README's example runs exactly as written (extracted, so the two cannot drift)."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Example", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README.md has no ```python block under ## Example"
    return match.group(1)


def test_readme_puts_the_two_commands_first():
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    assert first_block.lstrip().startswith("make lab") and "make test" in first_block


def test_readme_example_runs_as_written(tmp_path, monkeypatch):
    code = readme_example()
    assert len(code.strip().splitlines()) <= 14
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), namespace)
    assert out.getvalue().strip() == "[12.3762, 4.4175]"
    report = tmp_path / "linear_regression.html"
    assert report.stat().st_size > 1000
    assert "linear regression" in report.read_text(encoding="utf-8")
    # the last line displays the widget in a notebook
    bundle = namespace["trace"]._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data


def test_readme_practice_example_prints_what_it_says(tmp_path, monkeypatch):
    text = README.read_text(encoding="utf-8")
    section = text.split("### Practice", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    said = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(readme_example(), "README.md", "exec"), namespace)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), namespace)
    assert out.getvalue() == said


def test_readme_what_if_example_runs_with_the_example_s_data():
    text = README.read_text(encoding="utf-8")
    section = text.split("### What if", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(readme_example().replace("trace.to_html", "# "), "README.md", "exec"),
             namespace)
        exec(compile(code, "README.md", "exec"), namespace)
    what_if = namespace["what_if"]
    assert [round(float(g), 4) for g in what_if.trace.gradients] == [12.3762, 4.4175]
    what_if.set(W=0.70)
    below = float(what_if.trace.gradients[0])
    what_if.set(W=0.72)
    assert below < 0 < float(what_if.trace.gradients[0])  # "passes through 0"


def test_readme_lists_every_lesson_under_its_title():
    """The list under "## The lessons" links each notebook once, in order, by the title the
    notebook opens with (its first heading, without the number)."""
    import nbformat

    text = README.read_text(encoding="utf-8")
    section = text.split("## The lessons", 1)[1].split("\n## ", 1)[0]
    linked = re.findall(r"^\d+\. \[(.+?)\]\(notebooks/(\S+?\.ipynb)\)", section, re.M)
    notebooks = sorted((README.parent / "notebooks").glob("*.ipynb"))
    assert [path for _, path in linked] == [p.name for p in notebooks]
    for title, path in linked:
        heading = nbformat.read(README.parent / "notebooks" / path, as_version=4).cells[0].source
        assert heading.splitlines()[0].split(" · ", 1)[1] == title, (path, title)


def test_readme_hand_in_examples_run_with_the_example_s_trace(tmp_path, monkeypatch):
    text = README.read_text(encoding="utf-8")
    section = text.split("### Handing in practice", 1)[1].split("\n### ", 1)[0]
    student, teacher = re.findall(r"```python\n(.*?)```", section, re.S)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(readme_example(), "README.md", "exec"), namespace)
    # the student's block, but for w.results(): no name was typed in a viewer here
    student = student.replace("w.results()", "w.results(student='Ada')")
    exec(compile(student, "README.md", "exec"), namespace)
    Path("handed-in").mkdir()
    Path("ada.json").rename("handed-in/ada.json")
    exec(compile(teacher, "README.md", "exec"), namespace)
    summary = namespace["summary"]
    assert [h.student for h in summary.students] == ["Ada"]
    assert Path("class.html").stat().st_size > 1000
