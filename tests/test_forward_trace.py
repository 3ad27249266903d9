"""Traces of forward mode: ``ForwardAccumulator.trace_jvp`` and ``trace_jacobian(mode="forward")``,
their steps, their JSON form, and their answers against the untraced calls."""

import numpy as np
import pytest
from test_gradient_rules import CASES

import gradviz as gv
from gradviz.engine import forwardprop
from gradviz.trace import FORWARD_RULES

FA = gv.autodiff.ForwardAccumulator


def c(values, dtype=gv.float32, name=None):
    return gv.constant(values, dtype, name=name)


def test_a_jvp_trace_steps_forward_from_the_tangent_to_the_target():
    x, w = c([1.0, 2.0], name="x"), c([3.0, 4.0], name="w")
    with FA(x, c([1.0, 0.0])) as acc:
        y = gv.reduce_sum(x * w + gv.sin(x))
    tr = acc.trace_jvp(y)
    assert [s.kind for s in tr.steps] == ["tangent", "forward", "forward", "forward", "forward",
                                          "jvp"]
    assert [s.op_type for s in tr.steps[1:5]] == ["Mul", "Sin", "Add", "Sum"]
    assert [s.rule for s in tr.steps[1:5]] == ["diagonal", "diagonal", "diagonal", "own"]
    assert tr.forward and tr.method == "ForwardAccumulator.jvp" and tr.passes == 1
    mul = tr.steps[1]
    assert mul.tangents_in[0].values.tolist() == [1.0, 0.0] and mul.tangents_in[1] is None
    assert mul.tangents[0].values.tolist() == [3.0, 0.0]  # d(x*w) = dx * w
    end = tr.steps[-1]
    assert end.status == "connected" and end.tangent.values == pytest.approx(3 + np.cos(1.0))
    assert tr.gradients[0].numpy() == acc.jvp(y).numpy()
    # held: x's tangent until Sin reads it, then Mul's and Sin's until the Add, ...
    assert [s.bytes_held for s in tr.steps] == [8, 16, 16, 8, 4, 4]
    assert tr.xs == (tr.steps[0].tensor,) and tr.ys == (end.tensor,)


def test_a_forward_trace_writes_to_json_and_reads_back_the_same():
    x = c([[1.0, -2.0]], name="x")
    with FA(x, c([[0.5, 1.0]])) as acc:
        y = gv.nn.relu(gv.matmul(x, c([[1.0], [2.0]])))
    tr = acc.trace_jvp(y)
    back = gv.Trace.from_json(tr.to_json())
    assert back.steps == tr.steps and back.method == tr.method and back.forward


def test_a_loaded_trace_is_of_one_mode():
    x = c([1.0, 2.0], name="x")
    with FA(x, c([1.0, 0.0])) as acc:
        y = x * x
    data = acc.trace_jvp(y).to_dict()
    back = gv.trace_gradients(y, x).to_dict()
    data["steps"][1] = back["steps"][1]
    data["arrays"] = back["arrays"] if len(back["arrays"]) >= len(data["arrays"]) else data["arrays"]
    with pytest.raises(ValueError, match="a trace is of one mode"):
        gv.Trace.from_dict(data)


def test_a_loaded_forward_step_is_checked_against_its_op():
    x = c([1.0, 2.0], name="x")
    with FA(x, c([1.0, 0.0])) as acc:
        y = x * x
    data = acc.trace_jvp(y).to_dict()
    data["steps"][1]["rule"] = "guessed"
    with pytest.raises(ValueError, match=r"steps\[1\]\.rule: 'guessed' is not one of diagonal"):
        gv.Trace.from_dict(data)
    data = acc.trace_jvp(y).to_dict()
    data["steps"][1]["tangents"] = []
    with pytest.raises(ValueError, match=r"steps\[1\]\.tangents: 0 entries, but op 0 \(Mul\)"):
        gv.Trace.from_dict(data)


def test_what_reaches_no_target_says_why():
    x = c([1.0, 2.0], name="x")
    other = c([5.0, 6.0], name="other")
    with FA(x, c([1.0, 1.0])) as acc:
        stopped = gv.stop_gradient(x) * 2.0
        alone = other * 3.0
        counted = gv.cast(x, gv.int32) + 1
    tr = acc.trace_jvp([stopped, alone, counted])
    ends = [s for s in tr.steps if s.kind == "jvp"]
    assert [e.status for e in ends] == ["unconnected", "unconnected", "integer"]
    assert [e.tangent for e in ends] == [None, None, None]
    assert "only through ops that pass no tangent: stop_gradient" in ends[0].reason
    assert ends[1].reason == "it does not depend on any primal"
    stop = next(s for s in tr.steps if s.kind == "forward" and s.op_type == "StopGradient")
    assert stop.rule == "stop_gradient" and stop.tangents == (None,)
    zero = acc.trace_jvp(stopped, unconnected_gradients="zero")
    assert zero.steps[-1].tangent.values.tolist() == [0.0, 0.0]
    assert zero.gradients[0].numpy().tolist() == [0.0, 0.0]


def test_ops_run_outside_the_block_take_no_step():
    x = c([1.0, 2.0], name="x")
    with FA(x, c([1.0, 1.0])) as acc:
        y = x * 2.0
    z = y + 1.0  # after the block: no tangent
    tr = acc.trace_jvp(z)
    assert [s.kind for s in tr.steps] == ["tangent", "forward", "jvp"]
    assert tr.steps[-1].status == "unconnected"


def test_every_rule_kind_the_engine_gives_is_one_a_trace_records():
    assert set(forwardprop.RULE_KINDS) == set(FORWARD_RULES)


# ---------------------------------------------------------------- a Jacobian, forward


def _jacobians(f, points):
    xs = [gv.constant(np.asarray(p, np.float64)) for p in points]
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = f(*xs)
    forward = tape.trace_jacobian(y, xs, mode="forward")
    return y, xs, forward, tape.jacobian(y, xs), tape.trace_jacobian(y, xs)


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_a_forward_jacobian_is_the_reverse_one_in_its_own_passes(op_type):
    y, xs, forward, reverse, reverse_trace = _jacobians(*CASES[op_type])
    assert forward.passes == sum(x.numpy().size for x in xs if x.dtype.is_floating)
    assert reverse_trace.passes == y.numpy().size
    for got, want in zip(forward.gradients, reverse):
        if want is None:
            assert got is None
            continue
        assert got.shape == want.shape and got.dtype == want.dtype
        assert np.allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12, equal_nan=True)
    kinds = [s.kind for s in forward.steps]
    assert kinds.count("tangent") == kinds.count("jvp") == forward.passes


def test_a_forward_jacobian_counts_one_pass_per_source_element():
    x = c([1.0, 2.0, 3.0], name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.reduce_sum(x * x)
    tr = tape.trace_jacobian(y, x, mode="forward")
    assert tr.passes == 3 and tr.method == "tape.jacobian (forward mode)"
    seeds = [s.tangent.values.tolist() for s in tr.steps if s.kind == "tangent"]
    assert seeds == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    columns = [float(s.tangent.values) for s in tr.steps if s.kind == "jvp"]
    assert columns == [2.0, 4.0, 6.0]
    assert tr.gradients[0].numpy().tolist() == [2.0, 4.0, 6.0]


def test_a_forward_jacobian_of_what_the_tape_did_not_watch_is_none_as_reverse():
    x, w = c([1.0, 2.0], name="x"), c([3.0, 4.0], name="w")
    with gv.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * w
    with pytest.warns(UserWarning, match="w was not watched"):
        tr = tape.trace_jacobian(y, [x, w], mode="forward")
    assert tr.gradients[1] is None and tr.passes == 2
    with pytest.warns(UserWarning):
        zero = tape.trace_jacobian(y, [x, w], unconnected_gradients="zero", mode="forward")
    assert zero.gradients[1].numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_a_mode_other_than_forward_or_reverse_is_refused():
    x = c([1.0], name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match="mode must be 'reverse' .* or 'forward'"):
        tape.trace_jacobian(y, x, mode="sideways")
