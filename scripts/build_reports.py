"""Build the offline HTML reports of the lessons: one per notebook, plus an index.

Usage::

    .venv/bin/python scripts/build_reports.py [--out reports] [--notebooks notebooks]
                                              [--jobs N] [--timeout SECONDS] [NAME ...]

Each notebook is executed top to bottom in a fresh kernel (with this
checkout's gradviz importable).  One extra cell, added in memory and never
saved, then collects every ``gv.Trace`` the lesson bound to a top-level name
(in the order the names were first assigned) and writes them with
``gv.export_html`` into ``<out>/<notebook>.html`` (traces a lesson keeps
inside a list or dict, e.g. for a plot, are left out): one self-contained file
per lesson, titled with the lesson's first heading, that works offline.  The
same traces go into ``<out>/practice/<notebook>.html`` with practice on
(``practice=True``: each step asks its question before it shows its values).
Each report links back to the index and to its twin (the ``nav`` option).
The executed notebook itself, with its outputs and without that cell, is saved
as ``<out>/notebooks/<notebook>.ipynb``: with no widget state in it, each viewer shows
the picture of its last step wherever no kernel runs (GitHub, ``jupyter
nbconvert --to html``).  ``<out>/index.html`` links them all, and
``<out>/.lessons.json`` lists what it links, for a later build of only some
notebooks.

Everything is built in a staging folder first; only when every notebook has
run cleanly are the reports moved into ``<out>`` (each file replaced
atomically), so a failed build leaves the previous reports as they were.
A failure names the notebook, the cell and the error, and the exit status
is 1.  Give NAMEs (e.g. ``02_grad_ys``) to build only those notebooks; the
index then lists every report present in ``<out>``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import html
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # this checkout's gradviz, installed or not
sys.path.insert(0, str(REPO_ROOT / "tests"))

from gradviz.views.report import write_text_atomic  # noqa: E402 - needs the path above
from harness import ANSI, kernel_env  # noqa: E402  (tests/ is not a package)

#: The cell run after a lesson: export its traces twice (the lesson report, the
#: practice report), timing each export, then report what it wrote.  The
#: placeholders are filled in as Python literals.
COLLECT_CELL = """\
import json as _gv_json
import time as _gv_time
import gradviz as _gv_report
from gradviz.views.practice import Exercise as _gv_Exercise
_gv_named = [(_k, _v) for _k, _v in list(globals().items())
             if isinstance(_v, _gv_report.Trace) and not _k.startswith("_")]
if not _gv_named:
    raise RuntimeError("this notebook binds no gv.Trace to a top-level name, so there is "
                       "nothing to put in its report")
# the lesson's exercises (gv.exercise), in the order they were made: the practice report asks them
_gv_exercises = [_v for _k, _v in list(globals().items())
                 if isinstance(_v, _gv_Exercise) and not _k.startswith("_")]
_gv_seconds = {{}}
for _gv_kind, _gv_path, _gv_title, _gv_nav, _gv_practice, _gv_asked in [
        ("lesson", {path}, {title}, {nav}, False, None),
        ("practice", {practice_path}, {practice_title}, {practice_nav}, True, _gv_exercises or None)]:
    _gv_started = _gv_time.perf_counter()
    _gv_report.export_html([_v for _, _v in _gv_named], _gv_path, title=_gv_title, nav=_gv_nav,
                           practice=_gv_practice, exercises=_gv_asked)
    _gv_seconds[_gv_kind] = _gv_time.perf_counter() - _gv_started
print("GRADVIZ-REPORT " + _gv_json.dumps({{
    "traces": [{{"name": _k, "title": _v.title, "steps": len(_v.steps)}} for _k, _v in _gv_named],
    "exercises": len(_gv_exercises), "export_seconds": _gv_seconds}}))
"""

#: The folder of ``<out>`` the executed notebooks go in (beside the reports, a
#: ``jupyter nbconvert --to html`` of one would overwrite its report).
NOTEBOOKS = "notebooks"

#: The folder of ``<out>`` the practice reports go in, under the lesson's own
#: file name (beside the lesson reports, the index would take them for lessons).
PRACTICE = "practice"

_REPORT_LINE = re.compile(r"^GRADVIZ-REPORT (.*)$", re.MULTILINE)


class BuildError(Exception):
    """A notebook could not be turned into a report; the message says why."""


def lesson_title(nb, fallback: str) -> str:
    """The text of the notebook's first Markdown heading, else ``fallback``.

    >>> import nbformat.v4 as v4
    >>> lesson_title(v4.new_notebook(cells=[v4.new_markdown_cell("intro\\n# 1 · What `stop_gradient` is")]), "x")
    '1 · What stop_gradient is'
    >>> lesson_title(v4.new_notebook(), "01_start")
    '01_start'
    """
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            m = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
            if m:
                return m.group(1).replace("`", "").strip()  # code marks only: names keep their _
    return fallback


def report_links(stem: str) -> dict[str, list[tuple[str, str]]]:
    """The ``nav`` links of a lesson's report and of its practice report (one folder down).

    >>> report_links("01_start")["lesson"]
    [('All lessons', 'index.html'), ('Practise this lesson', 'practice/01_start.html')]
    >>> report_links("01_start")["practice"]
    [('All lessons', '../index.html'), ('The lesson', '../01_start.html')]
    """
    name = quote(f"{stem}.html")  # a file name as a URL path: "#", "?", " " escaped
    return {"lesson": [("All lessons", "index.html"),
                       ("Practise this lesson", f"{PRACTICE}/{name}")],
            "practice": [("All lessons", "../index.html"), ("The lesson", f"../{name}")]}


def _cell_error(exc: Exception) -> str:
    """The useful part of nbclient's CellExecutionError: the cell and the error."""
    text = ANSI.sub("", str(exc))
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-25:])


def build_one(notebook: str, staging: str, timeout: int) -> dict:
    """Execute one notebook and export its traces into ``staging``; a summary dict.

    Runs in a worker process; raises :class:`BuildError` with a readable message.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    path = Path(notebook)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # unreadable JSON, wrong format, missing file
        raise BuildError(f"{path.name}: cannot read the notebook ({exc})") from None
    title = lesson_title(nb, path.stem)
    out = Path(staging) / f"{path.stem}.html"
    practice = Path(staging) / PRACTICE / f"{path.stem}.html"
    practice.parent.mkdir(exist_ok=True)
    links = report_links(path.stem)
    nb.cells.append(nbformat.v4.new_code_cell(COLLECT_CELL.format(
        path=repr(str(out)), title=repr(title), nav=repr(links["lesson"]),
        practice_path=repr(str(practice)), practice_title=repr(f"Practice \u00b7 {title}"),
        practice_nav=repr(links["practice"]))))
    started = time.perf_counter()
    # No widget state is kept: the saved notebooks stay small, and show each
    # viewer's picture (the output after its widget's) wherever no kernel runs,
    # as on GitHub and through nbconvert.
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(path.parent)}})
    # The kernel's own stderr (start-up chatter, a crash) goes to a log that is
    # quoted only if the kernel dies; cell errors come back through nbclient.
    kernel_log = Path(staging) / f"{path.stem}.kernel.log"
    with open(kernel_log, "wb") as log:
        try:
            client.execute(env=kernel_env(), stderr=log)
        except CellTimeoutError as exc:
            raise BuildError(f"{path.name}: a cell ran longer than {timeout} s\n"
                             f"{_cell_error(exc)}") from None
        except CellExecutionError as exc:
            raise BuildError(f"{path.name}: a cell raised an error\n{_cell_error(exc)}") from None
        except DeadKernelError as exc:
            tail = kernel_log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise BuildError(f"{path.name}: the kernel died ({exc})\n{tail}") from None
    printed = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", [])
                      if o.get("output_type") == "stream")
    m = _REPORT_LINE.search(printed)
    if not m or not out.is_file() or not practice.is_file():
        raise BuildError(f"{path.name}: the report was not written (the export cell printed "
                         f"{printed[-300:]!r})")
    said = json.loads(m.group(1))
    nb.cells.pop()  # the export cell, which the lesson does not have
    saved = Path(staging) / NOTEBOOKS / path.name
    saved.parent.mkdir(exist_ok=True)
    nbformat.write(nb, saved)
    return {"notebook": f"{NOTEBOOKS}/{path.name}", "file": out.name,
            "practice": f"{PRACTICE}/{practice.name}", "title": title,
            "traces": said["traces"], "exercises": said["exercises"],
            "seconds": time.perf_counter() - started,
            "export_seconds": said["export_seconds"]}


#: The practice link's text in the index: what the practice report does, never the
#: lesson's title (the lesson's own link is the one its title names).
PRACTICE_LINK = "each step asks its question before it shows the values"


def _practice_text(e: dict) -> str:
    """The practice link's text, with the lesson's exercises it asks after the steps.

    >>> _practice_text({"exercises": 3})
    'each step asks its question before it shows the values, then the 3 exercises'
    """
    n = e.get("exercises") or 0
    return PRACTICE_LINK + (f", then the {n} exercise{'s' if n != 1 else ''}" if n else "")


def _href(relative: str) -> str:
    """A path inside ``<out>`` as a URL: ``/`` kept, ``#``, ``?``, ``%`` and spaces escaped.

    >>> _href("practice/01 a#b.html")
    'practice/01%20a%23b.html'
    """
    return quote(relative)


def index_html(entries: list[dict], title: str = "gradviz lessons") -> str:
    """The index page: one link per lesson report (and its practice report, if it has
    one), titles escaped, no network.

    >>> page = index_html([{"file": "01_a.html", "title": "<b>A</b> & B", "traces": [{}],
    ...                     "practice": "practice/01_a.html"}])
    >>> '<a href="01_a.html">&lt;b&gt;A&lt;/b&gt; &amp; B</a>' in page
    True
    >>> '<a class="gv-practice" href="practice/01_a.html">' in page
    True
    """
    esc = html.escape
    items = []
    for e in entries:
        n = len(e.get("traces", []))
        names = ", ".join(t.get("title") or t.get("name", "") for t in e.get("traces", []))
        items.append(
            f'<li><a href="{esc(_href(e["file"]))}">{esc(e["title"])}</a>'
            f'<span class="meta">{n} trace{"s" if n != 1 else ""}'
            f'{": " + esc(names) if names else ""}</span>'
            # (an entry written before practice reports were built has none)
            + (f'<span class="meta">practise it: <a class="gv-practice" '
               f'href="{esc(_href(e["practice"]))}">{esc(_practice_text(e))}</a></span>'
               if e.get("practice") else "")
            + (f'<span class="meta">the lesson run, as a notebook: <a class="gv-notebook" '
               f'href="{esc(_href(e["notebook"]))}" download>{esc(Path(e["notebook"]).name)}'
               '</a></span>' if e.get("notebook") else "") + '</li>')
    body = "\n".join(items) if items else "<li>No reports were built.</li>"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="gradviz">
<title>{esc(title)}</title>
<style>
body {{ margin: 0; padding: 32px 28px; background: #eef1f5; color: #1f2328;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }}
main {{ max-width: 880px; margin: 0 auto; background: #fff; border-radius: 8px;
  padding: 24px 32px; }}
h1 {{ font-size: 24px; margin: 0 0 6px; }}
p {{ color: #59636e; margin: 0 0 18px; font-size: 14px; }}
ul {{ list-style: none; padding-left: 0; }}
li {{ margin: 0 0 14px; font-size: 17px; }}
a {{ color: #1f6feb; text-decoration: none; }}
a:hover {{ text-decoration: underline; }}
.meta {{ display: block; color: #59636e; font-size: 13px; margin-top: 2px; }}
</style>
</head>
<body>
<main>
<h1>{esc(title)}</h1>
<p>Each lesson's backward passes, to step through in the browser. Every page works
offline: copy this folder to a USB stick and open <code>index.html</code>.</p>
<ul class="gv-lessons">
{body}
</ul>
</main>
</body>
</html>
"""


def _entries_in(out: Path, fresh: list[dict]) -> list[dict]:
    """Index entries: the fresh builds, plus older reports still in ``out``.

    An older entry keeps its practice report and notebook only while their files
    are still there (one written before practice reports has none), so the index
    never links a missing page.
    """
    by_file = {e["file"]: e for e in fresh}
    manifest = out / ".lessons.json"
    if manifest.is_file():
        with contextlib.suppress(ValueError, OSError):
            for e in json.loads(manifest.read_text(encoding="utf-8")):
                if not (isinstance(e, dict) and isinstance(e.get("file"), str)
                        and (out / e["file"]).is_file()) or e["file"] in by_file:
                    continue
                by_file[e["file"]] = {k: v for k, v in e.items()
                                      if k not in ("practice", "notebook")
                                      or (isinstance(v, str) and (out / v).is_file())}
    return [by_file[k] for k in sorted(by_file)]


def build(notebooks: list[Path], out: Path, jobs: int, timeout: int) -> list[dict]:
    """Build every notebook's report into ``out`` and write the index; the entries."""
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".staging-"))
    try:
        results: dict[str, dict] = {}
        errors: list[str] = []
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(build_one, str(nb), str(staging), timeout): nb
                       for nb in notebooks}
            for future in concurrent.futures.as_completed(futures):
                nb = futures[future]
                try:
                    entry = future.result()
                except BuildError as exc:
                    errors.append(str(exc))
                    print(f"FAILED {nb.name}", file=sys.stderr, flush=True)
                    continue
                except Exception as exc:  # a crash in the worker itself
                    errors.append(f"{nb.name}: {type(exc).__name__}: {exc}")
                    print(f"FAILED {nb.name}", file=sys.stderr, flush=True)
                    continue
                results[nb.name] = entry
                took = entry["export_seconds"]
                n = len(entry["traces"])
                print(f"built  {entry['file']:34s} {n} trace{'s' * (n != 1)} "
                      f"in {entry['seconds']:.1f} s (export {took['lesson']:.2f} s, "
                      f"practice {took['practice']:.2f} s)", flush=True)
        if errors:
            raise BuildError("\n\n".join(errors))
        fresh = [results[nb.name] for nb in notebooks]
        (out / NOTEBOOKS).mkdir(exist_ok=True)
        (out / PRACTICE).mkdir(exist_ok=True)
        for entry in fresh:  # each file appears whole: same filesystem, os.replace
            for key in ("file", "practice", "notebook"):
                os.replace(staging / entry[key], out / entry[key])
        entries = _entries_in(out, fresh)
        write_text_atomic(out / ".lessons.json", json.dumps(entries, indent=1))
        write_text_atomic(out / "index.html", index_html(entries))
        return fresh
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Execute the lesson notebooks and write an offline HTML report of each, "
                    "plus index.html.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="notebooks to build, e.g. 02_grad_ys (default: all)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "reports",
                        help="output folder (default: reports/)")
    parser.add_argument("--notebooks", type=Path, default=REPO_ROOT / "notebooks",
                        help="folder of the lesson notebooks (default: notebooks/)")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                        help="notebooks executed at once (default: up to 4)")
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds one cell may run (default: 300)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if not args.notebooks.is_dir():
        print(f"ERROR: the notebooks folder {args.notebooks} does not exist", file=sys.stderr)
        return 1
    found = sorted(args.notebooks.glob("[0-9][0-9]_*.ipynb"))
    if args.names:
        wanted = {n.removesuffix(".ipynb") for n in args.names}
        unknown = wanted - {p.stem for p in found}
        if unknown:
            print(f"ERROR: no such notebook: {', '.join(sorted(unknown))} (found: "
                  f"{', '.join(p.stem for p in found) or 'none'})", file=sys.stderr)
            return 1
        found = [p for p in found if p.stem in wanted]
    if not found:
        print(f"ERROR: no lesson notebooks (NN_name.ipynb) in {args.notebooks}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    try:
        build(found, args.out.resolve(), args.jobs, args.timeout)
    except BuildError as exc:
        print(f"\nERROR: the reports were not updated.\n\n{exc}", file=sys.stderr)
        return 1
    index = args.out.resolve() / "index.html"
    print(f"wrote {len(found)} report{'s' if len(found) != 1 else ''} and {index} "
          f"in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
