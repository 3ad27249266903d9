"""The bookkeeping every step records: ``bytes_held``, re-derived from the steps themselves.

``bytes_held`` is the size of the gradient arrays the walk keeps alive after
a step: gradients that arrived at a tensor and wait for its producer's
backward (or for a fan-out sum), totals waiting to be consumed, and the
results kept for the xs.  :func:`replay` derives it independently of the
engine, from the step records alone: each step adds what it produces and
removes what it consumes,

- seed: the y's initial gradient arrives (when the y is on a path to an x);
- backward: the gradient at each output is consumed (an x keeps its own as its
  result), the gradient it gives each needed float input arrives;
- reduce: the broadcast gradient is replaced by the summed one;
- accumulate: the contributions are replaced by their total;
- cut: at a StopGradient (``stop_gradient``) or a tensor in stop_gradients
  (``stop_gradients``), the gradient at the op's output is consumed; any other
  cut holds nothing that was not held before;
- result: a connected x's gradient is held already; a result made for an x
  no gradient reaches (zeros) is held from then on.

A pass ends holding nothing but its results, and a Jacobian's later passes
carry the rows the earlier ones returned.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest
from fixtures import traces as fixtures
from fixtures.traces import version_1
from hypothesis import HealthCheck, given, settings
from test_trace_properties import programs

import gradviz as gv
from gradviz.trace import Trace

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")


def _nbytes(shape: tuple[int, ...], dtype: str) -> int:
    return math.prod(shape) * np.dtype(dtype).itemsize


def replay(tr: Trace) -> list[int]:
    """Bytes of gradient held after each step of ``tr``, from its step records alone.

    Raises AssertionError where the steps do not fit together (a step consumes
    a gradient that is not held, a pass ends with gradients still waiting).
    """
    xs = set(tr.xs)
    connected = {(r.pass_index, r.tensor) for r in tr.results if r.status == "connected"}
    # tensor -> the gradients waiting at it: [(where from, bytes)], where from
    # is (op, input index), "seed" or "total"
    pending: dict[int, list[tuple[object, int]]] = {}
    kept: dict[tuple[int, int], int] = {}  # (pass, x) -> its gradient's bytes
    made = 0  # bytes of results made for xs no gradient reaches
    held: list[int] = []

    def is_float(t: int) -> bool:
        return np.dtype(tr.tensors[t].dtype).kind == "f"

    def consume(p: int, t: int, nbytes: int, where: str) -> None:
        waiting = pending.pop(t, [])
        assert [b for _, b in waiting] == [nbytes], (
            f"{where}: consumes {nbytes} bytes at tensor {t}, but {waiting} are held there")
        if t in xs:  # an x keeps its gradient as its result
            kept[p, t] = nbytes

    for k, s in enumerate(tr.steps):
        where = f"step {s.index} ({s.kind})"
        p = s.pass_index
        if s.kind == "seed":
            producer = tr.tensors[s.tensor].op
            on_path = (producer is not None and tr.ops[producer].on_path) \
                or (p, s.tensor) in connected
            if is_float(s.tensor) and on_path:
                pending.setdefault(s.tensor, []).append(("seed", s.grad.nbytes))
        elif s.kind == "backward":
            op = tr.ops[s.op]
            for out, up in zip(op.outputs, s.upstream):
                if up is not None:
                    consume(p, out, up.nbytes, where)
            for i, (t, g) in enumerate(zip(op.inputs, s.grads)):
                if g is not None and s.needed[i] and is_float(t):
                    pending.setdefault(t, []).append(((s.op, i), g.nbytes))
        elif s.kind == "reduce":
            waiting = pending.get(s.tensor, [])
            before = _nbytes(s.shape_before, s.grad.dtype)
            j = next(j for j, (src, _) in enumerate(waiting) if src == (s.op, s.input_index))
            assert waiting[j][1] == before, f"{where}: replaces {waiting[j]}, not {before} bytes"
            waiting[j] = ((s.op, s.input_index), s.grad.nbytes)
        elif s.kind == "accumulate":
            waiting = pending.get(s.tensor, [])
            sources = [("seed" if c.op is None else (c.op, c.input_index), c.grad.nbytes)
                       for c in s.contributions]
            assert sorted(waiting, key=repr) == sorted(sources, key=repr), (
                f"{where}: sums {sources}, but {waiting} are held at tensor {s.tensor}")
            pending[s.tensor] = [("total", s.total.nbytes)]
        elif s.kind == "cut":
            op = tr.ops[s.op] if s.op is not None else None
            if s.reason == "stop_gradient":
                assert s.upstream is not None, f"{where}: a StopGradient's cut names its upstream"
                consume(p, op.outputs[0], s.upstream.nbytes, where)
            elif s.reason == "stop_gradients":
                for out in op.outputs:
                    if out in pending:
                        consume(p, out, sum(b for _, b in pending[out]), where)
        elif s.kind == "result":
            if s.status == "connected":
                if (p, s.tensor) not in kept:
                    consume(p, s.tensor, s.grad.nbytes, where)
                assert kept[p, s.tensor] == s.grad.nbytes, f"{where}: the result is not held"
            elif s.grad is not None:
                made += s.grad.nbytes
        held.append(sum(b for w in pending.values() for _, b in w) + sum(kept.values()) + made)
        last_of_pass = k + 1 == len(tr.steps) or tr.steps[k + 1].pass_index != p
        if last_of_pass:
            assert not pending, f"pass {p} ends with gradients still waiting: {pending}"
    return held


def assert_bookkeeping(tr: Trace) -> None:
    """Every step's ``bytes_held`` is what :func:`replay` derives, in the trace and its JSON."""
    expected = replay(tr)
    for s, want in zip(tr.steps, expected):
        assert s.bytes_held == want, (
            f"step {s.index} ({s.kind}): bytes_held {s.bytes_held}, but {want} are held; "
            f"all steps: {[(t.kind, t.bytes_held) for t in tr.steps]} vs {expected}")
    back = Trace.from_json(tr.to_json())
    assert [s.bytes_held for s in back.steps] == expected


# ---------------------------------------------------------------- the programs


def cube() -> Trace:
    x = gv.Variable(2.0, name="x")
    return gv.trace_gradients(x * x * x, x)


def fan_out() -> Trace:
    x = gv.constant([1.0, 2.0], name="x")
    h = gv.tanh(x)
    return gv.trace_gradients(gv.reduce_sum(h * h + h), x)


def fan_out_of_an_intermediate() -> Trace:
    x = gv.constant(np.ones((2, 3), np.float32), name="x")
    h = x * 2.0
    return gv.trace_gradients(gv.reduce_sum(h * h) + gv.reduce_mean(h), x)


def broadcast() -> Trace:
    X = gv.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3), name="X")
    W = gv.Variable(np.ones((1, 3), np.float32), name="W")
    b = gv.Variable(0.5, name="b")
    return gv.trace_gradients(gv.reduce_sum((X * W + b) ** 2), [W, b, X])


def broadcast_fan_out() -> Trace:
    b = gv.Variable(np.ones(3, np.float32), name="b")
    X = gv.constant(np.ones((4, 3), np.float32), name="X")
    return gv.trace_gradients(gv.reduce_sum(X * b + b), b)


def several_ys() -> Trace:
    x = gv.constant(2.0, name="x")
    h = x * 3.0
    return gv.trace_gradients([h, h * h], x)


def same_y_twice() -> Trace:
    x = gv.constant([1.0, 2.0], name="x")
    y = x * 3.0
    return gv.trace_gradients([y, y], [x, x])


def with_grad_ys() -> Trace:
    x = gv.constant([1.0, 2.0, 3.0], name="x")
    return gv.trace_gradients([x * x, gv.exp(x)], x,
                              grad_ys=[gv.constant([1.0, 0.5, 2.0]), None])


def y_is_an_x() -> Trace:
    x = gv.constant([1.0, 2.0], name="x")
    return gv.trace_gradients([x, x * x], [x])


def stop_gradient_op() -> Trace:
    a = gv.Variable(1.0, name="a")
    b = gv.Variable(2.0, name="b")
    return gv.trace_gradients(gv.stop_gradient(a * b) + a, [a, b])


def stop_gradient_of_a_matrix() -> Trace:
    a = gv.constant(np.ones((2, 2), np.float32), name="a")
    c = gv.matmul(a, a)
    return gv.trace_gradients(c * gv.stop_gradient(c), a)


def stop_gradients_argument() -> Trace:
    a = gv.constant(0.0, name="a")
    b = 2 * a
    return gv.trace_gradients(a + b * b, [a, b], stop_gradients=[b])


def stop_gradients_on_a_non_x() -> Trace:
    a = gv.constant([1.0, 2.0], name="a")
    h = gv.tanh(a)
    return gv.trace_gradients(gv.reduce_sum(h * a), a, stop_gradients=[h])


def integer_inputs() -> Trace:
    x = gv.constant([1.5, 2.5], name="x")
    k = gv.constant([2, 3], name="k")
    i = gv.cast(x, gv.int32)
    y = x * gv.cast(k, gv.float32) + gv.cast(i * k, gv.float32)
    return gv.trace_gradients(gv.reduce_sum(y), [x, k, i])


def integer_y() -> Trace:
    x = gv.constant([1.5, 2.5], name="x")
    return gv.trace_gradients([gv.cast(x, gv.int32), x * x], x)


@pytest.fixture(params=["none", "zero"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


def unconnected(mode: str) -> Trace:
    a = gv.constant([[1.0, 2.0]], name="a")
    b = gv.constant([[3.0], [4.0]], name="b")
    c = gv.constant(1.0, name="c")
    return gv.trace_gradients(gv.reduce_sum(a * b), [a, c, b, c], unconnected_gradients=mode)


def tape_jacobian(mode: str) -> Trace:
    x = gv.constant([1.0, 2.0, 3.0], name="x")
    u = gv.constant(4.0, name="u")
    with gv.GradientTape() as tape:
        tape.watch(x)
        tape.watch(u)
        h = gv.tanh(x)
        y = h * h + x * 2.0
    return tape.trace_jacobian(y, [x, u], unconnected_gradients=mode)


def tape_gradient_partly_watched() -> Trace:
    x = gv.constant([1.0, 2.0], name="x")
    w = gv.constant([3.0, 4.0], name="w")
    pre = x * 3.0  # before the tape: not recorded, so a cut (not_watched) on the way
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.reduce_sum(pre * x + x * x)
    return tape.trace_gradient(y, [x, w])


def split_outputs() -> Trace:
    x = gv.constant(np.arange(6.0, dtype=np.float32), name="x")
    a, b, c = gv.split(x, 3)
    return gv.trace_gradients(gv.reduce_sum(a * c) + gv.reduce_sum(a), x)


PROGRAMS = [cube, fan_out, fan_out_of_an_intermediate, broadcast, broadcast_fan_out,
            several_ys, same_y_twice, with_grad_ys, y_is_an_x, stop_gradient_op,
            stop_gradient_of_a_matrix, stop_gradients_argument, stop_gradients_on_a_non_x,
            integer_inputs, integer_y, tape_gradient_partly_watched, split_outputs,
            fixtures.linear_regression, fixtures.two_layer_mlp,
            lambda: fixtures.deep_mlp(3), lambda: fixtures.scoped_tanh_chain(3)]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: getattr(f, "__name__", "fixture"))
def test_bytes_held_is_what_the_steps_hold(program) -> None:
    assert_bookkeeping(program())


@pytest.mark.parametrize("program", [unconnected, tape_jacobian])
def test_bytes_held_with_unconnected_xs(program, mode: str) -> None:
    tr = program(mode)
    assert_bookkeeping(tr)
    if mode == "zero":  # the zeros made for an unconnected x are held from its result on
        made = [r for r in tr.results if r.status != "connected"]
        assert made and all(r.grad is not None for r in made)
        assert tr.steps[-1].bytes_held == sum(r.grad.nbytes for r in tr.results)


def test_the_accumulate_step_holds_its_total() -> None:
    tr = cube()
    assert [(s.kind, s.bytes_held) for s in tr.steps] == [
        ("seed", 4), ("backward", 8), ("backward", 12), ("accumulate", 4), ("result", 4)]


def test_a_jacobian_holds_the_rows_it_has_made() -> None:
    tr = tape_jacobian("none")
    assert tr.passes == 3
    ends = [s.bytes_held for s in tr.steps if s.kind == "result" and s.x_index == 0]
    assert ends == [12, 24, 36]  # one (3,) float32 row of dy/dx per pass, kept


def test_replay_notices_a_wrong_count() -> None:
    tr = fan_out()
    k = next(s.index for s in tr.steps if s.kind == "accumulate")
    steps = list(tr.steps)
    steps[k] = dataclasses.replace(steps[k], bytes_held=steps[k].bytes_held - 8)
    damaged = Trace(tensors=tr.tensors, ops=tr.ops, ys=tr.ys, xs=tr.xs, steps=tuple(steps))
    with pytest.raises(AssertionError, match="accumulate"):
        assert_bookkeeping(damaged)


_EXPLORE = bool(os.environ.get("GRADVIZ_EXPLORE"))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=not _EXPLORE, database=None, max_examples=6000 if _EXPLORE else 300)
@given(programs())
def test_bytes_held_in_random_programs(program) -> None:
    assert_bookkeeping(program())


# ---------------------------------------------------------------- a StopGradient's one step


def test_a_stop_gradient_is_one_step_its_cut() -> None:
    tr = stop_gradient_op()
    assert [s.kind for s in tr.steps] == ["seed", "backward", "cut", "result", "result"]
    cut = tr.steps[2]
    assert cut.reason == "stop_gradient" and tr.ops[cut.op].type == "StopGradient"
    assert cut.upstream.values.tolist() == 1.0  # what arrived at StopGradient's output
    # the cut stands for the op's backward: a visited op, which releases the gradient
    assert [s.ops_visited for s in tr.steps] == [0, 1, 2, 2, 2]
    assert [s.bytes_held for s in tr.steps] == [4, 8, 4, 4, 4]
    back = Trace.from_json(tr.to_json())
    assert back.steps == tr.steps and back.steps[2].upstream == cut.upstream


def test_only_a_stop_gradient_cut_carries_an_upstream() -> None:
    data = stop_gradients_argument().to_dict()
    cut = next(s for s in data["steps"] if s["kind"] == "cut")
    assert cut["reason"] == "stop_gradients" and cut["upstream"] is None
    cut["upstream"] = data["steps"][0]["grad"]
    with pytest.raises(ValueError, match=r"steps\[\d+\]\.upstream: only a stop_gradient cut"):
        Trace.from_dict(data)
    data = version_1(stop_gradient_op().to_dict())  # (each array in place, to damage one)
    cut = next(s for s in data["steps"] if s["kind"] == "cut")
    del cut["upstream"]  # a trace written before the field: it loads, without it
    assert Trace.from_dict(data).steps[2].upstream is None
    cut["upstream"] = {**cut.get("upstream", data["steps"][0]["grad"]), "shape": [2],
                       "values": [1.0, 1.0]}
    with pytest.raises(ValueError, match=r"upstream: a gradient of shape \(2,\)"):
        Trace.from_dict(data)
