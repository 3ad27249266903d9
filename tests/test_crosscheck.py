"""The crosscheck's own parts, without TensorFlow: its programs run in gradviz and reach
every op, its comparison finds each kind of difference, its list of deliberate
differences is well formed.  (``make crosscheck`` runs them beside TensorFlow.)"""

import warnings

import numpy as np
import pytest

import gradviz as gv
from crosscheck import deliberate, edges, errors, forward, programs
from crosscheck.outcome import Raised, compare
from gradviz.engine import array_ops, math_ops, nn, ops

#: public ops that are no op a user calls to build a model: constructors and the gradient
#: ops, which the programs reach through their second order
NOT_OPS = {"OpType", "strided_slice_grad", "relu_grad", "sigmoid_grad", "sqrt_grad",
           "tanh_grad", "avg_pool", "avg_pool_grad", "conv2d_backprop_filter",
           "conv2d_backprop_input", "max_pool_grad", "max_pool_grad_grad", "leaky_relu_grad",
           "mirror_pad_grad"}


def test_every_public_op_is_crosschecked():
    covered = set(programs.OPS) | edges.OPS_COVERED | {"strided_slice"}  # (x[...], "slice")
    public = (set(ops.__all__) | set(nn.__all__) | set(math_ops.__all__)
              | set(array_ops.__all__) | set(gv.nn.__all__) | set(gv.math.__all__)
              | set(gv.linalg.__all__)) - NOT_OPS
    assert public - covered == set()
    assert {"custom_gradient", "recompute_grad"} <= edges.OPS_COVERED


def test_the_programs_are_the_same_each_time_and_differ_between_seeds():
    first = [programs.describe(programs.program(2026, k)) for k in range(20)]
    assert first == [programs.describe(programs.program(2026, k)) for k in range(20)]
    assert first != [programs.describe(programs.program(7, k)) for k in range(20)]


def test_the_programs_run_in_gradviz_and_use_every_op_and_option():
    used, modes, calls = set(), set(), set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the programs watch late, leave sources unwatched, ...
        for k in range(400):
            prog = programs.program(2026, k)
            used.update(s.op for s in prog.steps)
            modes.add(prog.mode)
            calls.update(c["kind"] for c in prog.query.get("calls", []))
            results = programs.run(gv, prog)
            assert results, programs.describe(prog)
            last = results[-1][1]
            if isinstance(last, Raised):  # only the second call of a non-persistent tape
                assert last.type == "RuntimeError" and "non-persistent" in last.message, \
                    programs.describe(prog)
    assert used == set(programs.OPS)
    assert modes == {"gradients", "tape"}
    assert calls == {"gradient", "jacobian", "batch_jacobian"}


def test_every_edge_case_and_bad_argument_runs_in_gradviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, case, _ in edges.cases():
            results = case(gv)
            assert results and results[0][0] == "y", name
            assert not any(isinstance(r, Raised) for _, r in results), (name, results)
        for name, case, _ in errors.cases():
            (label, r), *rest = case(gv)
            assert isinstance(r, Raised), f"{name}: gradviz raised nothing"
        for name, case, _ in edges.tape_cases():
            results = case(gv)
            assert results and not any(isinstance(r, Raised) for _, r in results), name


def test_forward_mode_cases_run_in_gradviz_and_reach_every_op():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ran = []
        for name, case, _ in forward.op_cases():
            results = case(gv)
            assert [label for label, _ in results[:2]] == ["y", "jvp y"], (name, results)
            assert not any(isinstance(r, Raised) for _, r in results), (name, results)
            ran.append(name)
        for name, case, _ in forward.cases():
            results = case(gv)
            assert results and not any(isinstance(r, Raised) for _, r in results), name
        for name, case, _ in forward.error_cases():
            (label, r), *rest = case(gv)
            assert isinstance(r, Raised), f"{name}: gradviz raised nothing"
        for name, case, _ in forward.program_cases(2026, 8):
            results = case(gv)
            assert results and not any(isinstance(r, Raised) for _, r in results), name
    # every op case runs forward, and of the grid of convolutions and pools each op at least
    grid = {n.split()[0] for n, *_ in edges._nn_cases(np.random.default_rng(1))}
    assert {n for n, *_ in edges._op_cases()} <= set(ran)
    assert grid <= {n.split()[0] for n in ran}


def _a(*values, dtype=np.float32):
    return np.array(values, dtype)


@pytest.mark.parametrize("ours, theirs, key", [
    ([("y", _a(1.0, 2.0))], [("y", _a(1.0, 2.5))], "value"),
    ([("y", _a(1.0, 2.0))], [("y", _a(1.0, 2.0, dtype=np.float64))], "value"),
    ([("y", _a(1.0, 2.0))], [("y", _a(1.0))], "value"),
    ([("y", _a(np.nan))], [("y", _a(1.0))], "value"),
    ([("y", _a(np.inf))], [("y", _a(-np.inf))], "value"),
    ([("g", None)], [("g", _a(0.0))], "None"),
    ([("g", _a(0.0))], [("g", None)], "None"),
    ([("y", _a(1.0))], [("y", _a(1.0)), ("g", None)], "length"),
    ([("y", _a(1.0))], [("z", _a(1.0))], "label"),
    ([("raised", Raised("ValueError", "a"))], [("raised", Raised("TypeError", "b"))],
     "raises ValueError where TensorFlow raises TypeError"),
    ([("raised", Raised("ValueError", "a"))], [("raised", None)], "raises"),
    ([("message", np.array("bad stride", dtype=object))],
     [("message", np.array("bad strides", dtype=object))], "message"),
])
def test_compare_names_each_kind_of_difference(ours, theirs, key):
    found = compare(ours, theirs)
    assert [k for _, k, _ in found] == [key]


def test_compare_lets_agreeing_runs_pass_within_the_dtypes_tolerance():
    assert compare([("y", _a(1.0, 2.0))], [("y", _a(1.0, 2.0 + 1e-5))]) == []
    assert compare([("y", _a(np.nan, np.inf))], [("y", _a(np.nan, np.inf))]) == []
    assert compare([("raised", Raised("ValueError", "a"))],
                   [("raised", Raised("ValueError", "other words"))]) == []
    assert compare([("message", np.array("Conv2D: bad stride (each at least 1)", dtype=object))],
                   [("message", np.array("bad stride", dtype=object))]) == []
    f64 = np.array([1.0, 1.0 + 1e-7])
    assert compare([("y", f64)], [("y", np.array([1.0, 1.0]))]) != []
    assert compare([("y", f64)], [("y", np.array([1.0, 1.0]))], floor=2e-4) == []


def test_compare_goes_on_past_a_difference_so_that_each_is_judged():
    # a listed difference in the exception's type must not hide one in the message after it
    ours = [("raised", Raised("ValueError", "a")), ("message", np.array("x", dtype=object)),
            ("d2", _a(1.0))]
    theirs = [("raised", Raised("InvalidArgumentError", "b")),
              ("message", np.array("y", dtype=object)), ("d2", _a(2.0))]
    assert [(label, key) for label, key, _ in compare(ours, theirs)] == [
        ("raised", "raises ValueError where TensorFlow raises InvalidArgumentError"),
        ("message", "message"), ("d2", "value")]


def test_every_deliberate_difference_names_a_case_and_says_why():
    names = {f"edges: {n}" for n, _, _ in edges.cases()} | {
        f"errors: {n}" for n, _, _ in errors.cases()} | {
        f"forward edges: {n}" for n, _, _ in forward.op_cases()} | {
        f"forward errors: {n}" for n, _, _ in forward.error_cases()}
    for d in deliberate.DELIBERATE:
        assert len(d.reason) > 40 and d.key
        if d.case.endswith("*"):
            assert any(n.startswith(d.case[:-1]) for n in names), d.case
        else:
            assert d.case in names, d.case
    assert deliberate.reason_for("errors: matmul inner dimensions", "raised",
                                 "raises ValueError where TensorFlow raises "
                                 "InvalidArgumentError") is not None
    assert deliberate.reason_for("errors: matmul inner dimensions", "message",
                                 "message") is None  # (an entry excuses its own label only)
    assert deliberate.reason_for("programs: program 3", "y", "value") is None
