"""Traces of forward mode: ``ForwardAccumulator.trace_jvp`` and ``trace_jacobian(mode="forward")``,
their steps, their JSON form, and their answers against the untraced calls."""

import numpy as np
import pytest
from test_gradient_rules import CASES

import gradviz as gv
from gradviz.engine.jvp_rules import DIAGONAL
from gradviz.views import diagram, explain
from gradviz.views.practice import questions
from gradviz.views.explain.forward import JVP_IDEAS
from gradviz.views.explain.rules import OP_RULES
from gradviz.views.viewdata import view_data

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


# ---------------------------------------------------------------- its words and formulas


def _forward_trace(f, points, seed=3):
    rng = np.random.default_rng(seed)
    xs = [gv.constant(np.asarray(p, np.float64), name=f"in{i}") for i, p in enumerate(points)]
    moving = [x for x in xs if x.dtype.is_floating]
    with FA(moving, [gv.constant(rng.uniform(-1.0, 1.0, x.shape)) for x in moving]) as acc:
        y = f(*xs)
    return acc.trace_jvp(y)


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_every_forward_formula_runs_and_gives_the_engines_tangent(op_type):
    tr = _forward_trace(*CASES[op_type])
    assert explain.formula_mismatches(tr) == []
    for s in tr.steps:
        words = explain.step_words(tr, s)
        assert words.title and words.sentence.endswith(".") and words.formula
        if s.kind != "forward" or all(t is None for t in s.tangents):
            continue
        if s.rule == "custom":  # the user's function: said in words
            assert not explain.describe(tr, s).formulas
        else:  # a formula for each output that moves, run above
            assert len(explain.describe(tr, s).formulas) == sum(
                t is not None for t in s.tangents), s.op_type


def test_each_op_that_is_not_elementwise_says_its_tangent_in_words():
    # an elementwise op says its gradient rule with the tangent in the gradient's place;
    # an op of integer or boolean results, and stop_gradient, say why none moves
    said_by_rule = {"Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual",
                    "IsFinite", "ArgMax", "ArgMin", "OneHot", "StopGradient", "Any", "All"}
    missing = set(OP_RULES) - DIAGONAL - set(JVP_IDEAS) - said_by_rule
    assert not missing, f"ops without their tangent in words: {sorted(missing)}"


def test_the_product_rule_reads_and_runs_as_written_by_hand():
    x, w = c([1.0, 2.0], name="x"), c([3.0, 4.0], name="w")
    with FA([x, w], [c([1.0, 0.0]), c([0.0, 2.0])]) as acc:
        y = x * w
    tr = acc.trace_jvp(y)
    words = explain.describe(tr, 2)
    assert words.title == "Mul forward"
    assert words.sentence.startswith("Mul of x (2,) and w (2,) gets the tangents dx (2,) and "
                                     "dw (2,).")
    assert "the parts add" in words.sentence
    # d(x*w) = dx * w + dw * x = [1*3 + 0*1, 0*4 + 2*2]
    assert words.formula == "dMul = dx * w + dw * x: (2,), (2,) -> (2,) = [3, 4]"
    (f,) = words.formulas
    assert f.evaluate().tolist() == [3.0, 4.0]


def test_a_matmul_tangent_and_its_transposes_run():
    a = c(np.arange(6.0).reshape(2, 3), name="A")
    b = c(np.arange(12.0).reshape(4, 3), name="B")
    with FA([a, b], [c(np.ones((2, 3))), c(np.full((4, 3), 0.5))]) as acc:
        y = gv.matmul(a, b, transpose_b=True)
    tr = acc.trace_jvp(y)
    assert explain.describe(tr, 2).formulas[0].expr == "dA @ B.T + A @ dB.T"
    assert explain.formula_mismatches(tr) == []


def test_what_passes_no_tangent_says_why():
    x = c([1.0, 2.0], name="x")
    with FA(x, c([1.0, 1.0])) as acc:
        y = gv.stop_gradient(x) * 2.0
    tr = acc.trace_jvp(y)
    stop = explain.describe(tr, 1)
    assert "stop_gradient passes no tangent" in stop.sentence
    assert stop.formula == "dStopGradient = None"
    end = explain.describe(tr, len(tr.steps) - 1)
    assert end.sentence.startswith("Mul (targets[0]) gets no tangent, None: it depends on a "
                                   "primal only through ops that pass no tangent")


def test_a_forward_jacobian_says_its_passes_and_columns():
    x = c([1.0, 2.0], name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tr = tape.trace_jacobian(y, x, mode="forward")
    first = explain.describe(tr, 0)
    assert first.sentence.startswith("Pass 1 of 2 moves element 0 of x (2,) alone")
    assert first.formula == "dx = e_0 = [1, 0]"
    last = explain.describe(tr, len(tr.steps) - 1)
    assert last.sentence.startswith("Column 2 of the Jacobian dMul/dx is ready")
    assert "It is the last column" in last.sentence
    assert last.formula == "dMul/dx = [[2, 0], [0, 4]]"
    (r,) = explain.result_words(tr)
    assert r.label == "Jacobian dMul/dx (one column per pass)"
    assert r.array.values.tolist() == [[2.0, 0.0], [0.0, 4.0]]


# ---------------------------------------------------------------- drawn and stepped


def test_the_diagram_draws_the_tangents_forward_and_each_step_lights_its_part():
    x, w = c([1.0, 2.0], name="x"), c([3.0, 4.0], name="w")
    with FA(x, c([1.0, 0.0])) as acc:
        y = gv.reduce_sum(x * w)
    tr = acc.trace_jvp(y)
    svg = tr.to_svg()
    assert 'id="dir0"' in svg and 'id="jvp0"' in svg
    assert "\u2193 (2,)" in svg and "\u2191" not in svg  # tangents run along the edges
    assert [diagram.step_ids(tr, k) for k in range(len(tr.steps))] == [
        ["dir0", "dir0_e", "t0"], ["e0_0", "o0"], ["e1_0", "o1"], ["o1", "jvp0", "jvp0_e"]]
    data = view_data(tr)
    assert data["mode"] == "forward" and view_data(gv.trace_gradients(y, x))["mode"] == "reverse"
    marks = [m["mark"] for m in data["legend"]]
    assert {"tangent", "direction", "jvp"} <= set(marks) and "gradient" not in marks
    assert data["results"][0]["name"] == "Sum" and data["results"][0]["step"] == 3
    back = gv.Trace.from_json(tr.to_json())
    assert back.to_svg(step=1) == tr.to_svg(step=1)


def test_a_target_that_is_not_a_tensor_is_refused_naming_its_place():
    x = c([1.0, 2.0], name="x")
    with FA(x, c([1.0, 0.0])) as acc:
        y = x * x
    with pytest.raises(TypeError, match=r"trace_jvp: target\[1\] is a float \(1\.0\), not a "
                                        r"gradviz tensor"):
        acc.trace_jvp([y, 1.0])
    with pytest.raises(ValueError, match="unconnected_gradients"):
        acc.trace_jvp(y, unconnected_gradients="some")


def test_a_target_apart_from_the_primals_and_a_primal_as_target():
    x, other = c([1.0, 2.0], name="x"), c([5.0], name="other")
    with FA(x, c([1.0, 0.0])) as acc:
        y = other * 2.0
    apart = acc.trace_jvp(y)
    assert [s.kind for s in apart.steps] == ["tangent", "jvp"]
    assert apart.steps[-1].reason == "it does not depend on any primal"
    itself = acc.trace_jvp(x)
    assert itself.steps[-1].status == "connected"
    assert itself.steps[-1].tangent.values.tolist() == [1.0, 0.0]
    for tr in (apart, itself):
        tr.to_svg()
        assert gv.Trace.from_json(tr.to_json()).steps == tr.steps


# ---------------------------------------------------------------- what a review found


def test_one_tensor_as_both_inputs_has_two_parts_and_practice_knows_them():
    x = c([1.0, 2.0], name="x")
    with FA(x, c([1.0, 3.0])) as acc:
        y = x * x
    tr = acc.trace_jvp(y)
    words = explain.describe(tr, 1)
    assert "gets the tangent dx (2,) (one tensor as several of its inputs)" in words.sentence
    assert words.formula == "dMul = dx * x + dx * x: (2,), (2,) -> (2,) = [2, 12]"
    (q,) = questions(tr)
    right = q.check([2.0, 12.0])
    assert right.right and "part left out" not in right.message
    one_part = q.check([1.0, 6.0])  # dx * x: one use of x alone
    assert one_part.kind == "product_rule_term_missing"
    assert "the part of x (as input 0) alone, dx * x" in one_part.message
    assert not q.check([0.0, 0.0]).right and q.check([0.0, 0.0]).kind is None
    assert q.check([2.0, 4.0]).kind == "tangent_forgotten"  # 1 * x + 1 * x


def test_a_forward_jacobian_of_a_large_source_numbers_each_pass_s_element():
    x = c(np.arange(70.0), name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.reduce_sum(x * x)
    tr = tape.trace_jacobian(y, x, mode="forward")
    starts = [s for s in tr.steps if s.kind == "tangent"]
    assert [explain.describe(tr, s).sentence.split(" alone")[0] for s in starts[:3]] == [
        "Pass 1 of 70 moves element 0 of x (70,)", "Pass 2 of 70 moves element 1 of x (70,)",
        "Pass 3 of 70 moves element 2 of x (70,)"]
    assert explain.describe(tr, starts[69]).formula.startswith("dx = e_69 = ")


def test_a_forward_jacobian_too_large_to_stack_says_its_shape_and_summary():
    x = c([1.0, 2.0], name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.tile(x * x, [35])  # 70 values a column: kept as summaries
    (r,) = view_data(tape.trace_jacobian(y, x, mode="forward"))["results"]
    assert r["shape"] == [2] and r["array"]["shape"] == [70, 2]
    assert r["array"]["values"] is None and r["array"]["label"].endswith("(one column per pass)")
    assert r["array"]["min"] == 0.0 and r["array"]["max"] == 4.0


def test_a_forward_jacobian_with_zero_for_unconnected_records_the_zeros():
    x = c([1.0, 2.0], name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = gv.stop_gradient(x) * 2.0
    tr = tape.trace_jacobian(y, x, unconnected_gradients="zero", mode="forward")
    assert tr.gradients[0].numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    last = tr.steps[-1]
    assert last.kind == "jvp" and last.tangent.values.tolist() == [0.0, 0.0]
    assert explain.describe(tr, last).sentence.startswith("Mul (targets[0]) gets zeros shaped "
                                                          "like it")
    assert explain.result_words(tr)[0].array.values.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_a_variable_assigned_after_the_block_keeps_the_value_its_steps_read():
    v = gv.Variable([1.0, 2.0], name="v")
    with FA(v, c([1.0, 0.0])) as acc:
        y = v * v
    v.assign([5.0, 6.0])
    tr = acc.trace_jvp(y)
    assert tr.tensors[tr.xs[0]].value.values.tolist() == [1.0, 2.0]
    assert explain.formula_mismatches(tr) == []


def test_what_is_held_counts_what_is_still_read_and_each_answer_once():
    x, w = c(np.ones(100), name="x"), c([3.0], name="w")
    with FA([x, w], [c(np.ones(100)), c([1.0])]) as acc:
        y = w * 2.0
    tr = acc.trace_jvp([y, y, y])
    # x's tangent is read by no op of the trace; y's is one answer, listed three times
    assert [(s.kind, s.bytes_held) for s in tr.steps] == [
        ("tangent", 0), ("tangent", 4), ("forward", 4), ("jvp", 4), ("jvp", 4), ("jvp", 4)]


def test_a_wide_op_counts_the_inputs_that_do_not_move():
    xs = [c([1.0], name=f"a{i}") for i in range(12)]
    with FA(xs[:3], [c([1.0])] * 3) as acc:
        total = gv.add_n(xs)
    sentence = explain.describe(acc.trace_jvp(total), 3).sentence
    assert "gets the tangents da0 (1,), da1 (1,) and da2 (1,); a3, a4, a5 and 6 more do " \
           "not move." in sentence


def test_the_target_s_tangent_names_each_primal_s_direction():
    x, w = c([1.0, 2.0], name="x"), c([3.0, 4.0], name="w")
    with FA([x, w], [c([1.0, 0.0]), c([0.0, 1.0])]) as acc:
        y = x * w
    assert "dMul = J_x\u00b7dx + J_w\u00b7dw, how Mul moves" in explain.describe(
        acc.trace_jvp(y), 3).sentence
    with FA(x, c([1.0, 0.0])) as acc:
        y = x * w
    assert "dMul = J\u00b7dx, how Mul moves" in explain.describe(acc.trace_jvp(y), 2).sentence


def test_an_output_that_never_moves_says_the_transposed_rule_gives_none():
    x = c([1.0, -2.0], name="x")
    with FA(x, c([1.0, 1.0])) as acc:
        y = gv.sign(x)
    sentence = explain.describe(acc.trace_jvp(y), 1).sentence
    assert sentence.endswith("by running the gradient rule transposed, which gives none here.")
