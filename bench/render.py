"""Benchmark the diagram: one layout per trace, cheap per-step state.

For engine-built traces of about 50, 200 and 1000 ops (small MLPs whose layers
sit in name scopes, grouped in blocks as a real model's would be), and a
5,000-op chain with no name scopes at all (``tanh(y) * 1.01`` repeated), it
prints:

- layout: seconds for the one layout (``layout_svg``, by the engine in use), and how many ops
  the auto-collapse left drawn, how many scopes it collapsed and how many
  runs of ops it drew as groups (the chain has no scopes to collapse);
- layouts: how many times Graphviz ran while stepping through every step
  (``step_ids`` for all steps, ``to_svg`` at first/middle/last, ``view_data``),
  all with the viewer's options (``legend=False``: the viewer has its own
  legend): must be 1;
- step state: milliseconds to compute one step's state from scratch (its SVG
  ids, sentence and arrays: what ``view_data`` stores per step), median over
  the first 20 and the last 20 steps: late steps must cost no more than early
  ones (target: under 2 ms at 1000 ops);
- bytes per step: the step's JSON (ids only, and the whole step entry);
- payload: the whole ``view_data`` JSON (target for the report: well under 5 MB);
- a slide: seconds for ``to_svg(crop=True)`` and ``to_png(crop=True)`` of the
  middle step, the layout already made (target: the PNG under 2 s);
- questions: milliseconds to work out one step's practice questions from scratch
  (the right answer and every named wrong answer, each a formula run as NumPy),
  mean over every step, and the questions' share of the payload, which keeps the
  first steps' questions within ``QUESTION_BYTES_BUDGET`` (target: under 5 ms a
  step, so that a practice view of a 200-step trace is ready in a second);
- both engines: for the MLPs, seconds for the ``dot`` program and for
  pygraphviz's Graphviz, cold (a fresh Python's first layout, which loads the
  library and the fonts) and warm, on the same drawing; at 1000 ops also
  drawn open (``collapse=False``: every op its own node).  Target: under 2 s
  at 1000 ops with either, both ways.

Then the trace's own size (``tanh_chain`` of tests/fixtures/traces.py, each in a
fresh Python): ``to_json`` of a 1,500-op and a 50,000-op chain, its time per op
(the steps already summarised; summarising them, which any first reading of a
trace pays, is shown apart), its bytes per op and the memory it took (peak
resident size less the size before).  Targets: at most 20 us and 1 KB per op at
1,500 ops; under 1.5 s and 300 MB at 50,000.  And the report of a 10,000-op
chain: its bytes per op beyond the first 1,000 (the 1,000-op chain's report
less), target at most 0.25 KB.

Run: ``python bench/render.py`` (add ``--quick`` for the 50 and 200 op rows only).
It exits 0 once it has run; its last line says which targets were met.
Drawn open (``collapse=False``), the 5,000-op chain takes minutes in ``dot``
(153 to 218 s measured) and a 12.5 MB SVG; that row shows what auto-collapse
makes of it.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import gradviz as gv  # noqa: E402
from gradviz.views import diagram, practice, viewdata  # noqa: E402
from gradviz.views.diagram import layout  # noqa: E402
from _fresh import run as fresh  # noqa: E402
from _table import Target, print_table, print_targets  # noqa: E402

#: Layers per name-scope block: a model is layers grouped in blocks.
LAYERS_PER_BLOCK = 10


def mlp(n_ops: int, tag: str) -> gv.Trace:
    """tanh(h @ W + b) layers (4 ops each: MatMul, Add, Tanh + the loss) in scopes."""
    rng = np.random.default_rng(0)
    h = gv.constant(rng.normal(size=(2, 3)).astype(np.float32), name=f"{tag}_x")
    params = []
    layers = max(1, (n_ops - 2) // 3)
    for i in range(layers):
        with gv.name_scope(f"{tag}block{i // LAYERS_PER_BLOCK}"), gv.name_scope(f"layer{i}"):
            W = gv.Variable(rng.normal(size=(3, 3)).astype(np.float32) * 0.5, name="W")
            b = gv.Variable(np.zeros(3, np.float32), name="b")
            h = gv.tanh(gv.matmul(h, W) + b)
        params += [W, b]
    loss = gv.reduce_sum(gv.square(h), name=f"{tag}_loss")
    return gv.trace_gradients(loss, params)


def chain(n_ops: int, tag: str) -> gv.Trace:
    """tanh(y) * 1.01 repeated on a (4,4) tensor, then summed: about ``n_ops`` ops, no scopes."""
    x = gv.constant(np.ones((4, 4), np.float32), name=f"{tag}_x")
    y = x
    for _ in range(max(1, n_ops // 2)):
        y = gv.tanh(y) * 1.01
    return gv.trace_gradients(gv.reduce_sum(y, name=f"{tag}_loss"), x)


class LayoutCounter:
    """Counts Graphviz layouts (either engine) by wrapping ``layout.render``."""

    def __init__(self) -> None:
        self.runs = 0
        self._orig = layout.render

    def __enter__(self) -> LayoutCounter:
        orig = self._orig

        def counting(source: str) -> str:
            self.runs += 1
            return orig(source)

        layout.render = counting
        return self

    def __exit__(self, *exc) -> None:
        layout.render = self._orig


#: Timed in a fresh Python: the first layout after ``import gradviz``, which
#: loads pygraphviz, its Graphviz and the fonts; then the same layout again.
_COLD = """
import sys, time
import gradviz.views.diagram.layout as L
source = open(sys.argv[1], encoding="utf-8").read()
t = time.perf_counter(); L._run_pygraphviz(source); cold = time.perf_counter() - t
t = time.perf_counter(); L._run_pygraphviz(source); warm = time.perf_counter() - t
print(cold, warm)
"""


def engine_times(trace: gv.Trace, **options) -> dict:
    """Seconds to lay out the viewer's drawing of ``trace``: dot (best of 3), and
    pygraphviz cold (a fresh process's first layout) and warm (best of 3)."""
    source = diagram._plan(trace, diagram._options(**VIEWER, **options)).graph.source
    dot = min(_seconds(layout._run_dot, source) for _ in range(3))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.dot"
        path.write_text(source, encoding="utf-8")
        out = subprocess.run([sys.executable, "-c", _COLD, str(path)], capture_output=True,
                             text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
    cold, warm = map(float, out.stdout.split())
    warm = min([warm] + [_seconds(layout._run_pygraphviz, source) for _ in range(2)])
    return {"dot_s": dot, "cold_s": cold, "warm_s": warm}


def _seconds(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def step_state(trace: gv.Trace, plan, k: int) -> dict:
    """One step's state computed from scratch (no cache): what view_data stores."""
    s = trace.steps[k]
    return viewdata._step_entry(trace, s, diagram._step_ids(plan, s))


#: The diagram options the viewer (view_data) lays out with.
VIEWER = {"legend": False}


def timed_ms(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t) * 1000


def row(n_ops: int, model=mlp) -> dict:
    trace = model(n_ops, f"b{n_ops}{model.__name__}_")
    _ = trace.steps  # build the records now, not inside a timing
    with LayoutCounter() as dots:
        t = time.perf_counter()
        svg = diagram.layout_svg(trace, **VIEWER)
        layout_s = time.perf_counter() - t
        plan = diagram._plan(trace, diagram._options(**VIEWER))
        n = len(trace.steps)
        for k in range(n):
            diagram.step_ids(trace, k, **VIEWER)
        for k in (0, n // 2, n - 1):
            diagram.to_svg(trace, step=k, **VIEWER)
        payload = viewdata.view_data(trace)
    # A slide's picture of the middle step: cropped and its look written in, then as PNG.
    t = time.perf_counter()
    diagram.to_svg(trace, step=n // 2, crop=True, **VIEWER)
    slide_s = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as folder:
        t = time.perf_counter()
        diagram.to_png(trace, Path(folder) / "slide.png", step=n // 2, crop=True, **VIEWER)
        png_s = time.perf_counter() - t
    # Warm the per-trace lookups once, then time steps from scratch: forget the
    # per-step spellings view_data left, so each timed step works its own out.
    step_state(trace, plan, n - 1)
    trace.__dict__.pop("_gv_spellings", None)
    early = [timed_ms(step_state, trace, plan, k) for k in range(min(20, n))]
    late = [timed_ms(step_state, trace, plan, k) for k in range(max(0, n - 20), n)]
    trace.__dict__.pop("_gv_questions", None)  # worked out from scratch
    t = time.perf_counter()
    asked = practice.questions(trace)
    question_ms = (time.perf_counter() - t) * 1000 / n
    question_kb = sum(len(json.dumps(s.get("questions", []))) for s in payload["steps"]) / 1024
    ids_bytes = [len(json.dumps(s["ids"])) for s in payload["steps"]]
    step_bytes = [len(json.dumps(s)) for s in payload["steps"]]
    engines = engine_times(trace) if model is mlp else {}
    if model is mlp and n_ops >= 900:
        # the same model drawn open: every op its own node, the most dot is asked to lay out
        engines["open"] = engine_times(trace, collapse=False)
    drawn_ops = sum(1 for i in diagram.element_ids(trace, **VIEWER) if i[0] == "o" and "_" not in i)
    return {
        "model": model.__name__, "ops": len(trace.ops), "steps": n, "drawn": drawn_ops,
        "scopes": len(plan.collapsed), "groups": len(plan.groups), "layout_s": layout_s,
        "dot_runs": dots.runs,
        "early_ms": statistics.median(early), "late_ms": statistics.median(late),
        "ids_b": statistics.mean(ids_bytes), "step_b": statistics.mean(step_bytes),
        "svg_kb": len(svg) / 1024, "payload_kb": len(json.dumps(payload)) / 1024,
        "questions": len(asked), "question_ms": question_ms, "question_kb": question_kb,
        "slide_s": slide_s, "png_s": png_s, **engines,
    }


# Run in a fresh Python: a chain of n ops, summarised, then written as JSON; the
# time and memory to_json took, and its size.
_TO_JSON = """
import json, sys, time
from _fresh import peak_from_here, peak_since
from fixtures.traces import tanh_chain
trace = tanh_chain(int(sys.argv[1]))
t = time.perf_counter(); trace.steps; summarise_s = time.perf_counter() - t
before = peak_from_here()
best = float("inf")
for _ in range(int(sys.argv[2])):
    t = time.perf_counter(); text = trace.to_json(); best = min(best, time.perf_counter() - t)
print(json.dumps({"ops": len(trace.ops), "to_json_s": best, "bytes": len(text),
                  "memory_mb": peak_since(before), "summarise_s": summarise_s}))
"""

# Run in a fresh Python: the report of a chain of n ops; its size in bytes.
_REPORT = """
import os, sys, tempfile
from fixtures.traces import tanh_chain
trace = tanh_chain(int(sys.argv[1]))
with tempfile.TemporaryDirectory() as folder:
    path = trace.to_html(os.path.join(folder, "chain.html"))
    print(len(trace.ops), os.path.getsize(path))
"""

def trace_sizes() -> tuple[list[dict], dict]:
    """to_json at 1,500 and 50,000 ops; the 10,000-op report's bytes per op past 1,000."""
    print("render: measuring to_json and report sizes ...", file=sys.stderr, flush=True)
    rows = [json.loads(fresh(_TO_JSON, n, repeats)) for n, repeats in ((1500, 10), (50000, 1))]
    (ops_1k, size_1k), (ops_10k, size_10k) = (
        map(int, fresh(_REPORT, n).split()) for n in (1000, 10000))
    report = {"ops": ops_10k, "mb": size_10k / 1e6,
              "per_op": (size_10k - size_1k) / (ops_10k - ops_1k)}
    return rows, report


def main(argv: list[str]) -> int:
    cases = [(50, mlp), (200, mlp)]
    if "--quick" not in argv:
        cases += [(1000, mlp), (5000, chain)]
    rows = []
    for n_ops, model in cases:
        print(f"render: measuring {model.__name__}, about {n_ops} ops ...", file=sys.stderr,
              flush=True)
        rows.append(row(n_ops, model))
    for r in rows:
        r["trace"] = f"{r['model']}, {r['ops']} ops"
    sizes, report = trace_sizes()

    print_table(
        ["trace", "backward\nsteps", "ops drawn\nas nodes", "scopes\ncollapsed",
         "op runs drawn\nas one node", "layout time\n(seconds)", "layouts\nover all steps",
         "SVG size\n(kilobytes)"],
        [[r["trace"], r["steps"], r["drawn"], r["scopes"], r["groups"], f"{r['layout_s']:.2f}",
          r["dot_runs"], f"{r['svg_kb']:.0f}"] for r in rows],
        title=f"The diagram: one layout per trace ({gv.layout_engine()}), with the viewer's "
              "options")
    print()
    timed = [r for r in rows if "dot_s" in r]
    timed += [{**r["open"], "trace": r["trace"] + ", drawn open", "ops": r["ops"]}
              for r in rows if "open" in r]
    print_table(
        ["trace", "dot\n(program;\nseconds)", "pygraphviz,\ncold (seconds)",
         "pygraphviz,\nwarm (seconds)"],
        [[r["trace"], f"{r['dot_s']:.2f}", f"{r['cold_s']:.2f}", f"{r['warm_s']:.2f}"]
         for r in timed],
        title="Both layout engines on the same drawing (cold: a fresh Python's first layout)")
    print()
    print_table(
        ["trace", "one step's state,\nfirst 20 steps\n(ms, median)",
         "one step's state,\nlast 20 steps\n(ms, median)", "SVG ids\n(bytes per step,\nmean)",
         "whole step entry\n(bytes per step,\nmean)", "view_data JSON\n(kilobytes)"],
        [[r["trace"], f"{r['early_ms']:.3f}", f"{r['late_ms']:.3f}", f"{r['ids_b']:.0f}",
          f"{r['step_b']:.0f}", f"{r['payload_kb']:.0f}"] for r in rows],
        title="Per step: what view_data stores for each step, computed from scratch")
    print()
    print_table(
        ["trace", "questions", "one step's questions,\nfrom scratch\n(ms, mean)",
         "questions in\nthe payload\n(kilobytes)"],
        [[r["trace"], r["questions"], f"{r['question_ms']:.2f}", f"{r['question_kb']:.0f}"]
         for r in rows],
        title="Practice: every step's questions and named wrong answers")
    print()
    print_table(
        ["trace", "to_svg(crop=True)\n(seconds)", "to_png(crop=True)\n(seconds)"],
        [[r["trace"], f"{r['slide_s']:.2f}", f"{r['png_s']:.2f}"] for r in rows],
        title="A slide's picture of the middle step (its layout already made)")
    print()
    print_table(
        ["trace", "to_json\n(seconds)", "to_json\n(us per op)", "JSON\n(bytes per op)",
         "memory to_json\ntook (megabytes)", "summarising the\nsteps first\n(seconds)"],
        [[f"chain, {r['ops']} ops", f"{r['to_json_s']:.3f}",
          f"{r['to_json_s'] / r['ops'] * 1e6:.1f}", f"{r['bytes'] / r['ops']:.0f}",
          f"{r['memory_mb']:.0f}", f"{r['summarise_s']:.2f}"] for r in sizes],
        title="The trace as JSON (fresh Python each; to_json of the summarised trace, best of "
              "10 at 1,500 ops)")
    print(f"\nreport of the {report['ops']}-op chain: {report['mb']:.2f} MB, "
          f"{report['per_op']:.0f} bytes per op beyond the first 1,000 ops")
    print("\nmlp: tanh layers in name scopes, grouped in blocks; chain: tanh(y) * 1.01 repeated, "
          "no scopes.\nops drawn as nodes: ops still drawn as their own node after auto-collapse.")
    print()
    targets = []
    for r in rows:
        targets += [
            Target(f"layouts over all steps ({r['trace']})", str(r["dot_runs"]), "exactly 1",
                   r["dot_runs"] == 1),
            Target(f"one step's state, last 20 steps ({r['trace']})", f"{r['late_ms']:.3f} ms",
                   "< 2 ms", r["late_ms"] < 2.0),
            Target(f"view_data JSON ({r['trace']})", f"{r['payload_kb'] / 1024:.2f} MB", "< 5 MB",
                   r["payload_kb"] < 5 * 1024),
            Target(f"one step's questions ({r['trace']})", f"{r['question_ms']:.2f} ms",
                   "< 5 ms", r["question_ms"] < 5.0),
            Target(f"a slide's PNG ({r['trace']})", f"{r['png_s']:.2f} s", "< 2 s",
                   r["png_s"] < 2.0),
        ]
    for r in timed:
        if r["ops"] >= 900:
            for key, engine in (("dot_s", "dot"), ("cold_s", "pygraphviz, cold"),
                                ("warm_s", "pygraphviz, warm")):
                targets.append(Target(f"layout, {engine} ({r['trace']})", f"{r[key]:.2f} s",
                                      "< 2 s", r[key] < 2.0))
    small, large = sizes
    targets += [
        Target(f"to_json per op (chain, {small['ops']} ops)",
               f"{small['to_json_s'] / small['ops'] * 1e6:.1f} us", "<= 20 us",
               small["to_json_s"] / small["ops"] <= 20e-6),
        Target(f"JSON per op (chain, {small['ops']} ops)",
               f"{small['bytes'] / small['ops']:.0f} B", "<= 1 KB", small["bytes"] / small["ops"] <= 1024),
        Target(f"to_json (chain, {large['ops']} ops)", f"{large['to_json_s']:.2f} s", "< 1.5 s",
               large["to_json_s"] < 1.5),
        Target(f"memory to_json took (chain, {large['ops']} ops)", f"{large['memory_mb']:.0f} MB",
               "< 300 MB", large["memory_mb"] < 300),
        Target(f"report per op beyond 1,000 (chain, {report['ops']} ops)",
               f"{report['per_op']:.0f} B", "<= 0.25 KB", report["per_op"] <= 256),
    ]
    print_targets("render", targets)
    return 0  # a benchmark reports; the summary line above says whether targets were met


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
