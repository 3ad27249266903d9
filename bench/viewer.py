"""Benchmark of the step-through viewer on a ~1000-op trace: export time, report size, restyle time.

Run ``python bench/viewer.py`` (``--layers N`` for another size, ``--no-expanded``
to skip the slow fully expanded drawing).  For each drawing of the trace
(name scopes auto-collapsed, the default; and every op drawn) it prints:

- the layout time (``dot`` runs once, and once per scope view a report holds; not
  part of the targets),
- the time of ``export_html`` once laid out (target < 2 s),
- the size of the report (target < 5 MB),
- in headless Chromium, opened offline from disk, the time one step takes to
  restyle the diagram and panel, measured in the page with ``performance.now()``
  over every step in order, over random jumps, and with a forced style and
  layout flush after each (target < 16 ms: one frame at 60 Hz);
- for information, not a target: the main thread's whole frame for a step,
  that is the step plus the browser's rendering of it (style, layout, paint,
  compositing), timed from the step to the end of the frame that shows it,
  less the wait for that frame to begin.

Then a model in name scopes (twelve transformer layers, 386 ops): its scope views
laid out, exported, and in Chromium the time to open a view and the restyle time
of a step in each (95th percentile, target < 16 ms).

Then the wide ops, each traced and exported in a fresh Python: an ``add_n`` of
1,000 and of 5,000 Variables (a fan-in of n), and one tensor used 5,000 times (a
fan-out of n): the export's time (``to_html`` of a trace just made, its
summarising and layout included; target < 5 s) and the memory it took (the
process's peak resident size less its size before; target < 500 MB), the
report's size, ``to_svg`` of the fan-out (target < 2 s), and in Chromium the
restyle time of a step, in order and at random (95th percentile, target < 16 ms).
Drawn one by one, 1,000 inputs took 12 s and 1.1 GB to export and froze the
page for 7 to 11 s at the AddN step; 5,000 were killed above 12 GB.

It exits 0 once it has run; its last line says which targets were met.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Any


ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import gradviz as gv  # noqa: E402
from gradviz.views.widget import view_payload  # noqa: E402
from _fresh import run as fresh_python  # noqa: E402
from _table import Target, print_table, print_targets  # noqa: E402
from fixtures.traces import scoped_tanh_chain, transformer_layers  # noqa: E402

__all__ = ["measure_page", "measure_scopes", "in_page", "main"]

EXPORT_TARGET_S = 2.0
SIZE_TARGET_MB = 5.0
RESTYLE_TARGET_MS = 16.0
WIDE_EXPORT_TARGET_S = 5.0
WIDE_MEMORY_TARGET_MB = 500.0
WIDE_SVG_TARGET_S = 2.0

#: The wide workloads: (label, fixture in tests/fixtures/traces.py, n).
WIDE = (("add_n of 1,000", "add_n_of", 1000), ("add_n of 5,000", "add_n_of", 5000),
        ("one tensor used 5,000 times", "used_n_times", 5000))

# Run in a fresh Python: trace one wide workload, export it, and say how long that
# took and how much memory it took (peak resident size, less the size before).
_WIDE_EXPORT = """
import json, sys, time
from _fresh import peak_from_here, peak_since
from fixtures import traces
trace = getattr(traces, sys.argv[1])(int(sys.argv[2]))
before = peak_from_here()
t = time.perf_counter()
trace.to_html(sys.argv[3])
export_s = time.perf_counter() - t
memory_mb = peak_since(before)
fresh = getattr(traces, sys.argv[1])(int(sys.argv[2]))
t = time.perf_counter()
fresh.to_svg()
print(json.dumps({"export_s": export_s, "memory_mb": memory_mb,
                  "svg_s": time.perf_counter() - t}))
"""



# Runs in the page: step through every step in order, then random jumps, timing
# each go(); then again with a style + layout flush after each step.
_MEASURE_JS = """async ([jumps, frames]) => {
    const root = document.querySelector('.gv-viewer');
    const v = root.gvViewer;
    const n = v.steps;
    const probe = root.querySelector('.gv-diagram svg');
    const time = (k, flush) => {
        const t0 = performance.now();
        v.go(k);
        v.flush();
        if (flush) { getComputedStyle(probe.querySelector('.gv-active') || probe).opacity; root.offsetHeight; }
        return performance.now() - t0;
    };
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const out = {steps: n, elements: v.elements, seq: [], jump: [], seqFlush: [], jumpFlush: [], jumpEnds: []};
    // Warm up once through every step (first-time element measurements, JIT).
    for (let k = 0; k < n; k++) time(k, true);
    v.go(0);
    await new Promise(r => requestAnimationFrame(r));
    for (let k = 1; k < n; k++) out.seq.push(time(k, false));
    for (let j = 0; j < jumps; j++) out.jump.push(time(Math.floor(rand() * n), false));
    out.jumpEnds.push(time(0, false), time(n - 1, false), time(0, false));
    v.go(0);
    await new Promise(r => requestAnimationFrame(r));
    for (let k = 1; k < n; k++) out.seqFlush.push(time(k, true));
    for (let j = 0; j < jumps; j++) out.jumpFlush.push(time(Math.floor(rand() * n), true));
    // The whole frame: the step, then the frame's rendering (from its
    // requestAnimationFrame callback to the next task, after the paint).
    const frame = async (k) => {
        const t0 = performance.now();
        v.go(k);
        const t1 = performance.now();
        let t2 = 0;
        await new Promise(r => requestAnimationFrame(() => { t2 = performance.now(); setTimeout(r, 0); }));
        return (t1 - t0) + (performance.now() - t2);
    };
    out.seqFrame = [];
    out.jumpFrame = [];
    v.go(0);
    await new Promise(r => requestAnimationFrame(r));
    for (let k = 1; k <= Math.min(frames, n - 1); k++) out.seqFrame.push(await frame(k));
    for (let j = 0; j < frames; j++) out.jumpFrame.push(await frame(Math.floor(rand() * n)));
    return out;
}"""


# Runs in the page: in each scope view in turn, time opening it (from the view shown
# before: its drawing parsed, inserted, restyled and kept in place), then stepping
# through it in order and at random, each step with a style and layout flush.
_SCOPES_JS = """async ([keys, jumps]) => {
    const root = document.querySelector('.gv-viewer');
    const v = root.gvViewer;
    const n = v.steps;
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const time = (k) => {
        const t0 = performance.now();
        v.go(k);
        v.flush();
        const probe = root.querySelector('.gv-diagram svg:not([style*="none"])');
        getComputedStyle(probe.querySelector('.gv-active') || probe).opacity;
        root.offsetHeight;
        return performance.now() - t0;
    };
    const out = {};
    for (const key of keys) {
        const t0 = performance.now();
        await v.openScope(key);
        root.offsetHeight;
        const open = performance.now() - t0;
        for (let k = 0; k < n; k++) time(k);  // warm up: first measurements, JIT
        const seq = [], jump = [];
        for (let k = 1; k < n; k++) seq.push(time(k));
        for (let j = 0; j < jumps; j++) jump.push(time(Math.floor(rand() * n)));
        out[key] = {open, seq, jump, shown: v.scopeView};
    }
    return out;
}"""


def measure_scopes(report: pathlib.Path, keys: list[str], jumps: int = 200) -> dict[str, Any]:
    """Open ``report`` offline in headless Chromium and time each scope view of ``keys``."""
    return in_page(report, lambda page: {"views": page.evaluate(_SCOPES_JS, [keys, jumps])})


def scoped(workdir: pathlib.Path, layers: int = 12) -> dict[str, Any]:
    """The scoped model: its views laid out (the report's layout), exported, and stepped."""
    trace = transformer_layers(layers)
    t0 = time.perf_counter()
    payload = view_payload(trace, all_views=True)
    layout_s = time.perf_counter() - t0
    path = workdir / "bench_scoped.html"
    t0 = time.perf_counter()
    gv.export_html(trace, path, title=trace.title)
    export_s = time.perf_counter() - t0
    keys = ["repeat:layer_0", "scope:layer_3", "scope:layer_10", "/"]
    return {"workload": f"{trace.title} ({len(trace.ops)} ops, {len(trace.steps)} steps)",
            "views": len(payload["scopes"]["views"]), "layout_s": layout_s,
            "export_s": export_s, "size_mb": path.stat().st_size / 1e6,
            "page": measure_scopes(path, keys)}


def in_page(report: pathlib.Path, measure: Any) -> dict[str, Any]:
    """Open ``report`` offline in headless Chromium and run ``measure(page)`` once its
    diagram shows: its dict, with ``load_s`` (goto to the diagram), ``blocked`` (requests
    that would have left the machine) and ``errors`` (the page's)."""
    from harness import block_network, launch_chromium
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            blocked = block_network(context)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            t0 = time.perf_counter()
            page.goto(report.as_uri())
            page.wait_for_selector(".gv-viewer .gv-diagram svg", timeout=120_000)
            load_s = time.perf_counter() - t0
            result = measure(page)
            result.update(load_s=load_s, blocked=blocked, errors=errors)
            return result
        finally:
            browser.close()


def measure_page(report: pathlib.Path, jumps: int = 300, frames: int = 100) -> dict[str, Any]:
    """Open ``report`` offline in headless Chromium and time its restyles (ms lists)."""
    return in_page(report, lambda page: page.evaluate(_MEASURE_JS, [jumps, frames]))


#: The restyle timings measure_page returns, and how the tables name them.
RESTYLES = (("seq", "next step"), ("jump", "random jump"),
            ("seqFlush", "next step + style/layout flush"),
            ("jumpFlush", "random jump + style/layout flush"))


#: The whole-frame timings (for information, not targets).
FRAMES = (("seqFrame", "next step"), ("jumpFrame", "random jump"))


def _p95(ms: list[float]) -> float:
    """The 95th percentile of ``ms`` (the restyle target's statistic); 0 if empty."""
    return sorted(ms)[int(0.95 * (len(ms) - 1))] if ms else 0.0


def _stats(ms: list[float]) -> list[str]:
    """Median, 95th percentile and max of ``ms``, as table cells."""
    if not ms:
        return ["-", "-", "-"]
    return [f"{x:.2f}" for x in (statistics.median(ms), _p95(ms), max(ms))]


def run(trace: gv.Trace, label: str, workdir: pathlib.Path, **options: Any) -> dict[str, Any]:
    """Lay out, export and open one drawing of ``trace``; its measurements (seconds, MB, ms)."""
    t0 = time.perf_counter()
    payload = view_payload(trace, all_views=True, **options)  # (a report's: every scope view)
    layout_s = time.perf_counter() - t0

    # What export_html does after the layout (the payload is cached on the trace).
    path = workdir / f"bench_{label}.html"
    t0 = time.perf_counter()
    gv.export_html(trace, path, title=trace.title, **options)
    export_s = time.perf_counter() - t0
    return {"drawing": label, "layout_s": layout_s, "export_s": export_s,
            "size_mb": path.stat().st_size / 1e6,
            "svg_mb": len(payload["svg"].encode()) / 1e6, "page": measure_page(path)}


def wide(label: str, fixture: str, n: int, workdir: pathlib.Path) -> dict[str, Any]:
    """One wide workload, exported in a fresh Python and opened in Chromium."""
    path = workdir / f"bench_{fixture}_{n}.html"
    out = fresh_python(_WIDE_EXPORT, fixture, n, path)
    return {"workload": label, **json.loads(out), "size_mb": path.stat().st_size / 1e6,
            "page": measure_page(path, jumps=200, frames=20)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=333, help="3 ops per layer (default 333: ~1000 ops)")
    ap.add_argument("--no-expanded", action="store_true",
                    help="skip the fully expanded drawing (its layout takes several seconds)")
    args = ap.parse_args(argv)

    trace = scoped_tanh_chain(args.layers)
    print(f"gradviz viewer benchmark: {len(trace.ops)} ops, {len(trace.steps)} steps, "
          f"{trace.passes} pass(es)")
    drawings = [("default", {})]
    if not args.no_expanded:
        drawings.append(("expanded", {"collapse": False}))
    with tempfile.TemporaryDirectory(prefix="gradviz-bench-") as tmp:
        runs = [run(trace, label, pathlib.Path(tmp), **options) for label, options in drawings]
        wides = [wide(*w, pathlib.Path(tmp)) for w in WIDE]
        scopes = scoped(pathlib.Path(tmp))

    print()
    print_table(
        ["drawing", "layout once,\nview_data + dot\n(seconds)",
         "export_html\nafter layout\n(seconds)", "report size\n(megabytes)",
         "of which SVG\n(megabytes)", "page load to\nfirst step\n(seconds)", "steppable\nSVG elements",
         "jumps first->last->first\n(ms each)"],
        [[r["drawing"], f"{r['layout_s']:.2f}", f"{r['export_s']:.3f}", f"{r['size_mb']:.2f}",
          f"{r['svg_mb']:.2f}", f"{r['page']['load_s']:.2f}", r["page"]["elements"],
          " / ".join(f"{x:.2f}" for x in r["page"]["jumpEnds"])] for r in runs],
        title="Export and page (default: name scopes auto-collapsed; expanded: every op drawn)")
    for timings, title in (
            (RESTYLES, "Restyle time for one step, headless Chromium, report opened offline "
                       "from disk"),
            (FRAMES, "Whole frame for one step (main thread: the step, style, layout, paint, "
                     "compositing), for information")):
        print()
        print_table(
            ["drawing", "step", "median\n(ms)", "95th percentile\n(ms)", "max\n(ms)"],
            [[r["drawing"], what, *_stats(r["page"][key])] for r in runs for key, what in timings],
            label_columns=2, title=title)
    print()
    print_table(
        ["workload", "export, traced\njust now\n(seconds)", "memory the\nexport took\n(megabytes)",
         "report size\n(megabytes)", "to_svg, traced\njust now\n(seconds)",
         "next step,\n95th percentile\n(ms)", "random jump,\n95th percentile\n(ms)",
         "whole frame,\nnext step, median\n(ms, information)"],
        [[w["workload"], f"{w['export_s']:.2f}", f"{w['memory_mb']:.0f}", f"{w['size_mb']:.2f}",
          f"{w['svg_s']:.2f}", f"{_p95(w['page']['seqFlush']):.2f}",
          f"{_p95(w['page']['jumpFlush']):.2f}",
          f"{statistics.median(w['page']['seqFrame'] or [0]):.1f}"] for w in wides],
        title="Wide ops: each traced and exported in a fresh Python, then stepped in Chromium "
              "(restyle with a style/layout flush)")
    print()
    sv = scopes["page"]["views"]
    print_table(
        ["scope view", "open it, from\nthe view before\n(ms)", "next step,\n95th percentile\n(ms)",
         "random jump,\n95th percentile\n(ms)", "random jump,\nmax\n(ms)"],
        [[key, f"{v['open']:.1f}", f"{_p95(v['seq']):.2f}", f"{_p95(v['jump']):.2f}",
          f"{max(v['jump']):.2f}"] for key, v in sv.items()],
        title=f"Scopes opened and stepped: {scopes['workload']}; {scopes['views']} views laid "
              f"out in {scopes['layout_s']:.1f} s, export after that {scopes['export_s']:.2f} s, "
              f"report {scopes['size_mb']:.2f} MB (restyle with a style/layout flush)")
    problems = [r for r in runs + wides if r["page"]["blocked"] or r["page"]["errors"]]
    if scopes["page"]["blocked"] or scopes["page"]["errors"]:
        print(f"scoped model: blocked requests {scopes['page']['blocked']}, "
              f"page errors {scopes['page']['errors']}")
    for r in problems:
        print(f"{r.get('drawing') or r['workload']}: blocked requests {r['page']['blocked']}, "
              f"page errors {r['page']['errors']}")
    print()
    targets = []
    for r in runs:
        d, m = r["drawing"], r["page"]
        targets += [
            Target(f"export_html after layout ({d})", f"{r['export_s']:.3f} s",
                   f"< {EXPORT_TARGET_S:g} s", r["export_s"] < EXPORT_TARGET_S),
            Target(f"report size ({d})", f"{r['size_mb']:.2f} MB", f"< {SIZE_TARGET_MB:g} MB",
                   r["size_mb"] < SIZE_TARGET_MB),
        ]
        targets += [Target(f"restyle, {what}, 95th percentile ({d})", f"{_p95(m[key]):.2f} ms",
                           f"< {RESTYLE_TARGET_MS:g} ms", _p95(m[key]) < RESTYLE_TARGET_MS)
                    for key, what in RESTYLES]
        targets.append(Target(f"page offline: requests blocked, page errors ({d})",
                              f"{len(m['blocked'])} blocked, {len(m['errors'])} errors", "none",
                              not m["blocked"] and not m["errors"]))
    for w in wides:
        d, m = w["workload"], w["page"]
        targets += [
            Target(f"export, traced just now ({d})", f"{w['export_s']:.2f} s",
                   f"< {WIDE_EXPORT_TARGET_S:g} s", w["export_s"] < WIDE_EXPORT_TARGET_S),
            Target(f"memory the export took ({d})", f"{w['memory_mb']:.0f} MB",
                   f"< {WIDE_MEMORY_TARGET_MB:g} MB", w["memory_mb"] < WIDE_MEMORY_TARGET_MB),
        ]
        targets += [Target(f"restyle, {what}, 95th percentile ({d})", f"{_p95(m[key]):.2f} ms",
                           f"< {RESTYLE_TARGET_MS:g} ms", _p95(m[key]) < RESTYLE_TARGET_MS)
                    for key, what in RESTYLES if "Flush" in key]
        if "used" in d:
            targets.append(Target(f"to_svg, traced just now ({d})", f"{w['svg_s']:.2f} s",
                                  f"< {WIDE_SVG_TARGET_S:g} s", w["svg_s"] < WIDE_SVG_TARGET_S))
    for key, v in sv.items():
        targets += [Target(f"scoped model, {key}: restyle, {what}, 95th percentile",
                           f"{_p95(v[part]):.2f} ms", f"< {RESTYLE_TARGET_MS:g} ms",
                           _p95(v[part]) < RESTYLE_TARGET_MS)
                    for part, what in (("seq", "next step"), ("jump", "random jump"))]
    targets += [
        Target("scoped model: report size", f"{scopes['size_mb']:.2f} MB",
               f"< {SIZE_TARGET_MB:g} MB", scopes["size_mb"] < SIZE_TARGET_MB),
        Target("scoped model: export_html after layout", f"{scopes['export_s']:.3f} s",
               f"< {EXPORT_TARGET_S:g} s", scopes["export_s"] < EXPORT_TARGET_S),
        Target("scoped model: page offline, requests blocked, page errors",
               f"{len(scopes['page']['blocked'])} blocked, {len(scopes['page']['errors'])} errors",
               "none", not scopes["page"]["blocked"] and not scopes["page"]["errors"])]
    print_targets("viewer", targets)
    return 0  # a benchmark reports; the summary line above says whether targets were met


if __name__ == "__main__":
    raise SystemExit(main())
