"""The diagram kept safe: one trace drawn from many threads, name scopes nested
however deep, a layout timeout of any size, and a ``dot`` that writes without end."""

from __future__ import annotations

import contextlib
import re
import shutil
import threading
import time

import pytest

import gradviz as gv
from fixtures.fake_programs import fake_dot
from fixtures.traces import linear_regression, scoped_mlp
from gradviz.views import diagram
from gradviz.views.diagram import layout, layout_svg, step_ids, to_dot, to_svg
from gradviz.views.diagram.layout import LayoutError
from gradviz.views.diagram.live import LiveLayouts, live_svg
from gradviz.views.diagram.plan import MAX_SCOPE_DEPTH


def in_threads(n: int, work) -> list:
    """``work()`` run by ``n`` threads let go at once: each one's result or exception."""
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work()
        except Exception as e:  # noqa: BLE001 - handed back to the test
            results[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


# ---------------------------------------------------------------- threads


def test_a_plan_is_never_seen_half_made(monkeypatch):
    # Thread A is made to stop in the middle of drawing the plan until thread B
    # has looked the plan up (or has waited a while for it): B must get the
    # whole plan, never the one A has not finished.
    tr = scoped_mlp()
    a_drawing, b_done = threading.Event(), threading.Event()
    draw = diagram._draw

    def slow_draw(plan):
        if threading.current_thread().name == "A":
            a_drawing.set()
            b_done.wait(timeout=0.3)
        return draw(plan)

    monkeypatch.setattr(diagram, "_draw", slow_draw)
    got: dict[str, object] = {}

    def a() -> None:
        got["A"] = to_dot(tr).source

    def b() -> None:
        a_drawing.wait(timeout=5)
        try:
            got["B"] = to_dot(tr).source
        except Exception as e:  # noqa: BLE001 - the test reads it
            got["B"] = e
        finally:
            b_done.set()

    threads = [threading.Thread(target=a, name="A"), threading.Thread(target=b, name="B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not isinstance(got["B"], Exception), repr(got["B"])
    assert got["B"] == got["A"]
    assert step_ids(tr, 1) == step_ids(scoped_mlp(), 1)


def test_six_threads_drawing_one_trace_share_one_layout(monkeypatch):
    runs = []
    render = layout.render

    def slow_render(source: str) -> str:
        runs.append(1)
        time.sleep(0.2)  # every thread arrives while the first is laying out
        return render(source)

    monkeypatch.setattr(layout, "render", slow_render)
    tr = linear_regression()
    results = in_threads(6, lambda: to_svg(tr, step=2))
    errors = [r for r in results if isinstance(r, Exception)]
    assert not errors, repr(errors[0])
    assert len(set(results)) == 1 and results[0].startswith("<svg")
    assert len(runs) == 1
    assert layout_svg(tr) is layout_svg(tr)


def test_six_threads_drawing_one_trace_the_plain_way():
    # The case as it was met: a fresh trace drawn from six threads at once.
    for _ in range(3):
        tr = scoped_mlp()
        results = in_threads(6, lambda: to_svg(tr))
        errors = [r for r in results if isinstance(r, Exception)]
        assert not errors, repr(errors[0])
        assert len(set(results)) == 1


def test_a_live_view_lays_one_template_out_once_from_many_threads(monkeypatch):
    runs = []
    render = layout.render

    def slow_render(source: str) -> str:
        runs.append(1)
        time.sleep(0.2)
        return render(source)

    monkeypatch.setattr(layout, "render", slow_render)
    layouts = LiveLayouts()

    def run() -> str:
        W = gv.Variable(2.0, name="W")
        return live_svg(gv.trace_gradients(W * W, [W]), layouts)[1]

    keys = in_threads(6, run)
    errors = [k for k in keys if isinstance(k, Exception)]
    assert not errors, repr(errors[0])
    assert len(set(keys)) == 1
    assert len(runs) == 1 and layouts.runs == 1


def test_in_process_layouts_from_many_threads_leave_stderr_where_it_was(monkeypatch):
    # The in-process engine points the process's stderr at a file while
    # Graphviz runs: two layouts at once must not leave it pointing there.
    pytest.importorskip("pygraphviz")
    import os

    monkeypatch.setenv("GRADVIZ_LAYOUT", "pygraphviz")
    before = os.fstat(2)
    source = to_dot(linear_regression()).source
    entered = []
    quiet = layout._without_fontconfig_warnings

    @contextlib.contextmanager
    def slow_quiet():
        with quiet():
            entered.append(1)
            time.sleep(0.1)  # the other thread arrives meanwhile
            yield

    monkeypatch.setattr(layout, "_without_fontconfig_warnings", slow_quiet)
    results = in_threads(4, lambda: layout.render(source))
    errors = [r for r in results if isinstance(r, Exception)]
    assert not errors, repr(errors[0])
    after = os.fstat(2)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)


# ---------------------------------------------------------------- deep name scopes


def nested(depth: int, *, op_per_level: bool = False) -> gv.Trace:
    """A tensor made inside ``depth`` nested name scopes (s0/s1/...), the scopes entered
    in a loop; with ``op_per_level``, an op in each of them."""
    x = gv.constant([1.0, 2.0], name="x")
    y = x
    with contextlib.ExitStack() as stack:
        for i in range(depth):
            stack.enter_context(gv.name_scope(f"s{i}"))
            if op_per_level:
                y = y * 1.5
        if not op_per_level:
            y = x * x
    return gv.trace_gradients(gv.reduce_sum(y), x)


def cluster_depth(source: str) -> int:
    """How deep the DOT source's clusters nest."""
    depth = deepest = 0
    for line in source.splitlines():
        if re.match(r"\s*subgraph cluster", line):
            depth += 1
            deepest = max(deepest, depth)
        elif line.strip() == "}":
            depth -= 1
    return deepest


@pytest.mark.parametrize("collapse", [None, False, True])
def test_a_thousand_nested_name_scopes_are_drawn_folded(collapse):
    tr = nested(1000)
    svg = to_svg(tr, collapse=collapse)
    assert svg.startswith("<svg") and "</svg>" in svg
    source = to_dot(tr, collapse=collapse).source
    assert cluster_depth(source) <= MAX_SCOPE_DEPTH
    if collapse is False:
        # The innermost cluster drawn says what it stands for.
        assert cluster_depth(source) == MAX_SCOPE_DEPTH
        assert f"s{MAX_SCOPE_DEPTH - 1}/\u2026/s999" in source
        assert f"{1000 - MAX_SCOPE_DEPTH} more scopes inside" in source


def test_ops_at_every_depth_are_all_drawn_within_the_folded_clusters():
    depth = MAX_SCOPE_DEPTH + 24
    tr = nested(depth, op_per_level=True)
    source = to_dot(tr, collapse=False).source
    assert cluster_depth(source) == MAX_SCOPE_DEPTH
    svg = layout_svg(tr, collapse=False)
    for o in tr.ops:
        if o.inputs:
            assert f'id="o{o.id}"' in svg
    # A scope below the fold can still be collapsed by name.
    deep = "/".join(f"s{i}" for i in range(MAX_SCOPE_DEPTH + 10))
    assert any(i.startswith("scope") for i in diagram.element_ids(tr, collapse=[deep]))


# ---------------------------------------------------------------- the layout's bounds


@pytest.mark.parametrize("value", ["inf", "1e7", "nan", "-inf", "86401", "0", "-1"])
def test_a_timeout_out_of_range_says_what_is_accepted(monkeypatch, value):
    monkeypatch.setenv("GRADVIZ_LAYOUT", "dot")
    monkeypatch.setenv("GRADVIZ_LAYOUT_TIMEOUT", value)
    with pytest.raises(ValueError, match=re.escape(
            f"GRADVIZ_LAYOUT_TIMEOUT={value!r} is not a number of seconds; accepted: a "
            f"positive number such as 120, at most {layout.MAX_TIMEOUT:g} (a day)")):
        linear_regression().to_svg()


@pytest.mark.parametrize("value", ["86400", "0.5", " 120 "])
def test_a_timeout_in_range_is_taken(monkeypatch, value):
    monkeypatch.setenv("GRADVIZ_LAYOUT", "dot")
    monkeypatch.setenv("GRADVIZ_LAYOUT_TIMEOUT", value)
    assert linear_regression().to_svg().startswith("<svg")


def test_a_dot_that_floods_its_output_is_stopped_at_the_cap(tmp_path, monkeypatch):
    # At most 200 MB then a long sleep, so that even a reader without a cap
    # ends (at the timeout) rather than filling the memory.
    yes, head, sleep = (shutil.which(p) for p in ("yes", "head", "sleep"))
    dot = fake_dot(tmp_path, monkeypatch, f"{yes} | {head} -c 200000000\n{sleep} 30\n")
    # The timeout is long: what stops this dot is the cap, which its message says.
    monkeypatch.setenv("GRADVIZ_LAYOUT_TIMEOUT", "60")
    monkeypatch.setattr(layout, "MAX_OUTPUT_BYTES", 1_000_000)
    with pytest.raises(LayoutError) as caught:
        linear_regression().to_svg()
    assert str(caught.value).startswith(
        f"Graphviz's dot ({dot}) wrote more than 1 MB, so it was stopped")


def test_a_dot_that_floods_its_stderr_is_read_to_its_tail(tmp_path, monkeypatch):
    yes, head = shutil.which("yes"), shutil.which("head")
    fake_dot(tmp_path, monkeypatch, f"{yes} warning | {head} -c 50000000 >&2\n"
                                    "echo 'Error: the end' >&2\nexit 2\n")
    with pytest.raises(LayoutError, match=r"failed with exit status 2: warning / .* / "
                                          r"Error: the end$"):
        linear_regression().to_svg()
