"""Benchmark of the step-through viewer on a ~1000-op trace: export time, report size, restyle time.

Run ``python bench/viewer.py`` (``--layers N`` for another size, ``--no-expanded``
to skip the slow fully expanded drawing).  For each drawing of the trace
(name scopes auto-collapsed, the default; and every op drawn) it prints:

- the layout time (``view_data``: ``dot`` runs once; not part of the targets),
- the time of ``export_html`` once laid out (target < 2 s),
- the size of the report (target < 5 MB),
- in headless Chromium, opened offline from disk, the time one step takes to
  restyle the diagram and panel, measured in the page with ``performance.now()``
  over every step in order, over random jumps, and with a forced style and
  layout flush after each (target < 16 ms: one frame at 60 Hz).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import gradviz as gv  # noqa: E402
from gradviz.widget import view_payload  # noqa: E402

__all__ = ["build_trace", "measure_page", "main"]

EXPORT_TARGET_S = 2.0
SIZE_TARGET_MB = 5.0
RESTYLE_TARGET_MS = 16.0


def build_trace(layers: int = 333) -> gv.Trace:
    """A deep tanh network: 3 ops per layer (Mul, AddV2, Tanh), each in its own name scope."""
    x = gv.constant(np.linspace(-1.0, 1.0, 4).astype(np.float32), name="x")
    h, params = x, []
    for i in range(layers):
        with gv.name_scope(f"layer{i}"):
            w = gv.Variable(np.full(4, 0.9, np.float32), name="w")
            b = gv.Variable(np.zeros(4, np.float32), name="b")
            h = gv.tanh(h * w + b)
        params += [w, b]
    loss = gv.reduce_sum(h * h)
    tr = gv.trace_gradients(loss, params)
    tr.title = f"{layers}-layer tanh chain"
    return tr


# Runs in the page: step through every step in order, then random jumps, timing
# each go(); then again with a style + layout flush after each step.
_MEASURE_JS = """async ([jumps]) => {
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
    return out;
}"""


def measure_page(report: pathlib.Path, jumps: int = 300) -> dict[str, Any]:
    """Open ``report`` offline in headless Chromium and time its restyles (ms lists)."""
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
            result = page.evaluate(_MEASURE_JS, [jumps])
            result.update(load_s=load_s, blocked=blocked, errors=errors)
            return result
        finally:
            browser.close()


def _stats(ms: list[float]) -> str:
    if not ms:
        return "-"
    s = sorted(ms)
    p95 = s[min(len(s) - 1, int(0.95 * len(s)))]
    return f"{statistics.median(s):.2f} / {p95:.2f} / {s[-1]:.2f}"


def _ok(good: bool) -> str:
    return "ok" if good else "OVER"


def run(trace: gv.Trace, label: str, workdir: pathlib.Path, **options: Any) -> list[tuple]:
    rows: list[tuple] = []
    t0 = time.perf_counter()
    payload = view_payload(trace, **options)
    layout_s = time.perf_counter() - t0
    rows.append((f"[{label}] layout once (view_data, dot)", f"{layout_s:.2f} s", "", ""))

    # export_html lays out nothing new: the payload is cached on the trace.
    from gradviz import report as report_mod

    path = workdir / f"bench_{label}.html"
    t0 = time.perf_counter()
    page = report_mod._render([payload], title=trace.title)
    report_mod.write_text_atomic(path, page)
    export_s = time.perf_counter() - t0
    if not options:  # the public path, too, for the default drawing
        t0 = time.perf_counter()
        gv.export_html([trace], path, title=trace.title)
        export_s = min(export_s, time.perf_counter() - t0)
    size_mb = path.stat().st_size / 1e6
    svg_mb = len(payload["svg"].encode()) / 1e6
    rows.append((f"[{label}] export_html after layout", f"{export_s:.3f} s",
                 f"< {EXPORT_TARGET_S:g} s", _ok(export_s < EXPORT_TARGET_S)))
    rows.append((f"[{label}] report size (SVG {svg_mb:.2f} MB)", f"{size_mb:.2f} MB",
                 f"< {SIZE_TARGET_MB:g} MB", _ok(size_mb < SIZE_TARGET_MB)))

    m = measure_page(path)
    rows.append((f"[{label}] page load to first step", f"{m['load_s']:.2f} s", "", ""))
    rows.append((f"[{label}] steppable SVG elements", str(m["elements"]), "", ""))
    worst = 0.0
    for key, what in (("seq", "next step"), ("jump", "random jump"),
                      ("seqFlush", "next step + style/layout"),
                      ("jumpFlush", "random jump + style/layout")):
        p95 = sorted(m[key])[int(0.95 * (len(m[key]) - 1))] if m[key] else 0.0
        worst = max(worst, p95)
        rows.append((f"[{label}] restyle: {what} (median/p95/max ms)", _stats(m[key]),
                     f"< {RESTYLE_TARGET_MS:g} ms", _ok(p95 < RESTYLE_TARGET_MS)))
    rows.append((f"[{label}] jump first->last->first (ms)",
                 " / ".join(f"{x:.2f}" for x in m["jumpEnds"]), "", ""))
    if m["blocked"] or m["errors"]:
        rows.append((f"[{label}] PROBLEM", f"blocked={m['blocked']} errors={m['errors']}", "", "OVER"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=333, help="3 ops per layer (default 333: ~1000 ops)")
    ap.add_argument("--no-expanded", action="store_true",
                    help="skip the fully expanded drawing (its layout takes several seconds)")
    args = ap.parse_args(argv)

    trace = build_trace(args.layers)
    print(f"gradviz viewer benchmark: {len(trace.ops)} ops, {len(trace.steps)} steps, "
          f"{trace.passes} pass(es)")
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory(prefix="gradviz-bench-") as tmp:
        work = pathlib.Path(tmp)
        rows += run(trace, "default", work)
        if not args.no_expanded:
            rows += run(trace, "expanded", work, collapse=False)
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'value':>24}  {'target':>9}  ")
    print("-" * (w + 42))
    for name, value, target, ok in rows:
        print(f"{name:<{w}}  {value:>24}  {target:>9}  {ok}")
    over = [r[0] for r in rows if r[3] == "OVER"]
    print("all targets met" if not over else f"over target: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
