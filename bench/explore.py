"""Benchmark of what-if (``gv.explore``): one move of a slider, from the kernel to the picture.

Run ``python bench/explore.py`` (``--moves N`` moves per workload).  Two
programs, a tanh chain of about 50 and about 300 ops with one scalar input
read by every layer, are explored; each move of that input costs:

- in the kernel: ``build`` run again, the backward pass traced, the payload
  made (the live layout filled, no Graphviz run: the benchmark checks that
  none happened) and written as the JSON the widget sends;
- in the browser (headless Chromium, the viewer as the widget runs it): the
  JSON read, and the viewer taking the payload in place (the texts of the
  same SVG, the steps, the panel, the final gradients) and painting it,
  timed to the end of the frame that shows it.

The round trip is the sum of the two medians (the websocket between them,
on one machine, adds well under a millisecond).  Target: under 100 ms at 50 ops.
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

import numpy as np  # noqa: E402

import gradviz as gv  # noqa: E402
from _table import Target, print_table, print_targets  # noqa: E402

ROUND_TRIP_TARGET_MS = 100.0


def tanh_chain(layers: int):
    """``build(w)``: a (4,) vector through ``layers`` of tanh(h * w + c_i), then sum(h * h);
    3 ops a layer, ``w`` read by every one of them."""
    cs = [np.linspace(-0.5, 0.5, 4).astype(np.float32) * (i % 3) for i in range(layers)]

    def build(w):
        h = gv.constant(np.linspace(-1.0, 1.0, 4).astype(np.float32), name="x")
        for i, c in enumerate(cs):
            h = gv.tanh(h * w + gv.constant(c, name=f"c{i}"))
        return gv.reduce_sum(h * h)

    return build


def kernel_side(layers: int, moves: int) -> tuple[Any, list[str], list[float], int]:
    """The explorer, the payload JSON of each move, each move's time (ms), the ops traced."""
    ex = gv.explore(tanh_chain(layers), w=gv.slider(0.9, 0.0, 2.0, step=0.001))
    runs = ex.layouts.runs
    texts, ms = [], []
    for k in range(moves):
        t0 = time.perf_counter()
        ex.set(w=0.9 + 0.001 * (k + 1))
        texts.append(json.dumps(ex.viewer.payload))
        ms.append((time.perf_counter() - t0) * 1000)
    if ex.layouts.runs != runs:
        raise SystemExit(f"a move laid the diagram out again ({ex.layouts.runs - runs} runs)")
    return ex, texts, ms, len(ex.trace.ops)


# In the page: render the first payload with a model like anywidget's, then per
# move read the JSON, hand it to the model (the viewer takes it in place) and
# wait for the frame that paints it.
_PAGE_JS = """async (texts) => {
    const handlers = new Map();
    const state = { payload: JSON.parse(texts[0]), step: 0, speed: 1,
                    show_grad_values: true, show_forward_values: true };
    const model = {
        get: (k) => state[k],
        set(k, v) { state[k] = v; for (const fn of handlers.get('change:' + k) || []) fn(); },
        save_changes() {},
        on(e, fn) { if (!handlers.has(e)) handlers.set(e, new Set()); handlers.get(e).add(fn); },
        off(e, fn) { if (handlers.has(e)) handlers.get(e).delete(fn); },
    };
    state.step = state.payload.steps.length - 1;
    const el = document.getElementById('host');
    window.gvRender({ model, el });
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    const svg = el.querySelector('.gv-diagram svg');
    const out = [];
    for (const text of texts.slice(1)) {
        const t0 = performance.now();
        model.set('payload', JSON.parse(text));
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        out.push(performance.now() - t0);
    }
    return { ms: out, same: el.querySelector('.gv-diagram svg') === svg };
}"""


def browser_side(texts: list[str], workdir: pathlib.Path) -> list[float]:
    from playwright.sync_api import sync_playwright

    from harness import launch_chromium

    static = ROOT / "gradviz" / "views" / "static"
    page_html = workdir / "explore.html"
    page_html.write_text(
        "<!doctype html><meta charset='utf-8'><style>"
        + (static / "stepper.css").read_text() + "</style><div id='host'></div>"
        "<script type='module'>" + (static / "stepper.js").read_text()
        + "\nwindow.gvRender = render;</script>", encoding="utf-8")
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_html.as_uri())
            page.wait_for_function("() => window.gvRender")
            got = page.evaluate(_PAGE_JS, texts)
        finally:
            browser.close()
    if not got["same"]:
        raise SystemExit("the viewer drew a new SVG for a move of the same program")
    return got["ms"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=40, help="moves of the slider per workload")
    args = parser.parse_args(argv)
    rows, targets = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in (16, 100):
            ex, texts, kernel_ms, ops = kernel_side(layers, args.moves + 1)
            page_ms = browser_side(texts, pathlib.Path(tmp))
            k, b = statistics.median(kernel_ms[1:]), statistics.median(page_ms)
            rows.append([f"tanh chain, {ops} ops", f"{len(ex.trace.steps)}",
                         f"{len(texts[-1]) / 1e3:.0f}", f"{k:.1f}", f"{b:.1f}", f"{k + b:.1f}"])
            if layers == 16:
                targets.append(Target(f"round trip, {ops} ops", f"{k + b:.1f} ms",
                                      f"< {ROUND_TRIP_TARGET_MS:.0f} ms",
                                      k + b < ROUND_TRIP_TARGET_MS))
    print_table(["workload", "steps", "payload\n(kB)", "kernel\n(ms per move)",
                 "browser\n(ms per move)", "round trip\n(ms per move)"], rows)
    print()
    print_targets("explore", targets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
