"""The questions and their named wrong answers: each misconception on a case worked by
hand, and, over many random programs, every question accepting its right answer and
catching each named wrong answer as its own kind.

The hand-worked numbers are written out in the comments; the tests never ask the
engine or the question for the numbers they check.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from test_trace_properties import programs

import gradviz as gv
from gradviz.views import practice, viewdata
from gradviz.views.practice import MISCONCEPTIONS, Question, questions, step_questions


def _sig(v: float) -> float:
    return 1 / (1 + math.exp(-v))


def _only(trace: gv.Trace, kind: str, target: str | None = None) -> Question:
    """The one question of the trace at a step of ``kind`` (asking for ``target``)."""
    found = [q for q in questions(trace) if q.step_kind == kind
             and (target is None or q.target == target)]
    assert len(found) == 1, [(q.step, q.target) for q in found]
    return found[0]


def _wrong(q: Question) -> dict[str, list]:
    """kind -> the wrong answers of that kind, as lists."""
    out: dict[str, list] = {}
    for w in q.wrong:
        out.setdefault(w.kind, []).append(np.round(w.value, 5).tolist())
    return out


def _caught(q: Question, answer, kind: str) -> None:
    feedback = q.check(answer)
    assert (feedback.verdict, feedback.kind) == ("misconception", kind), feedback
    assert feedback.message.startswith(MISCONCEPTIONS[kind][0].upper() + MISCONCEPTIONS[kind][1:])


# ---------------------------------------------------------------- each kind, by hand


def test_the_broadcast_sum_forgotten_summed_over_the_wrong_axes_or_averaged():
    X = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="X")
    b = gv.constant([1.0, 2.0, 3.0], name="b")
    q = _only(gv.trace_gradients(X * b, b), "reduce")
    # Mul gives b grad * X = X in the broadcast shape (2,3); summed over axis 0: [5, 7, 9]
    assert q.answer.tolist() == [5, 7, 9] and q.shape == (3,)
    assert q.check([5, 7, 9]).right and q.check([5.02, 6.99, 9]).right
    _caught(q, [[1, 2, 3], [4, 5, 6]], "broadcast_not_summed")
    _caught(q, [6, 15], "broadcast_wrong_axes")  # rows summed: 1+2+3, 4+5+6
    _caught(q, [2.5, 3.5, 4.5], "broadcast_mean")  # (1+4)/2, (2+5)/2, (3+6)/2
    assert "axes (1,)" in q.check([6, 15]).message
    # the shape alone, asked first: the broadcast shape is the forgotten sum
    assert q.check_shape((2, 3)).kind == "broadcast_not_summed"
    assert q.check_shape((3,)).right
    assert q.check_shape((2,)).kind == "broadcast_wrong_axes"
    assert q.check_shape((4,)).verdict == "shape"


def test_summed_over_the_wrong_axes_in_the_right_shape():
    # the classic: b (3,) broadcast down the rows of a (3,3); summing along the rows
    # instead gives a (3,) answer too, with other numbers
    X = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], name="X")
    b = gv.constant([1.0, 1.0, 1.0], name="b")
    q = _only(gv.trace_gradients(X * b, b), "reduce")
    assert q.answer.tolist() == [12, 15, 18]  # columns: 1+4+7, 2+5+8, 3+6+9
    _caught(q, [6, 15, 24], "broadcast_wrong_axes")  # rows: 1+2+3, 4+5+6, 7+8+9
    assert q.check_shape((3,)).right


def test_a_jacobian_asks_for_one_row_a_pass():
    x = gv.constant([1.0, 2.0], name="x")
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tr = tape.trace_jacobian(y, x)
    seeds = [q for q in questions(tr) if q.step_kind == "seed"]
    assert [q.answer.tolist() for q in seeds] == [[1, 0], [0, 1]]
    _caught(seeds[0], [1, 1], "grad_ys_ignored")  # every row at once
    rows = [q for q in questions(tr) if q.step_kind == "result"]
    assert [q.prompt for q in rows] == [
        "What is row 1 of the Jacobian for x, the gradient this pass gives it?",
        "What is row 2 of the Jacobian for x, the gradient this pass gives it?"]
    assert [q.answer.tolist() for q in rows] == [[2, 0], [0, 4]]  # d(x*x)/dx = diag(2x)


def test_one_fan_out_contribution_instead_of_their_sum():
    x = gv.constant([1.0, 2.0], name="x")
    w = gv.constant([3.0, -1.0], name="w")
    q = _only(gv.trace_gradients(x * w + x, x), "accumulate")
    # x is used by Mul (gets grad * w = [3, -1]) and by Add (gets [1, 1]): [4, 0]
    assert q.answer.tolist() == [4, 0]
    assert sorted(_wrong(q)["fan_out_one"]) == [[1, 1], [3, -1]]
    _caught(q, [3, -1], "fan_out_one")
    _caught(q, [1, 1], "fan_out_one")
    assert "used twice" in q.prompt and [label for label, _ in q.given] == [
        "g1: from Add input 1", "g2: from Mul input 0"]


def test_mul_multiplied_by_the_wrong_input():
    X = gv.constant([[1.0], [2.0]], name="X")
    W = gv.Variable(3.0, name="W")
    q = _only(gv.trace_gradients(gv.reduce_sum(X * W), W), "backward",
              "dL/d(W broadcast)")
    # dL/dW = grad * X = [[1], [2]] (before the broadcast sum); grad * W = [[3], [3]]
    assert q.answer.tolist() == [[1], [2]]
    _caught(q, [[3], [3]], "mul_wrong_input")
    assert "other factor, X" in q.check([[3], [3]]).message
    assert q.prompt == "What gradient does Mul send towards W, dL/d(W broadcast)?"
    assert [label for label, _ in q.given] == ["upstream dL/dMul", "X (forward value)",
                                               "W (forward value)"]
    # Mul hands W a (2,1) gradient, summed to W's shape by the next step
    assert "broadcast shape (2,1)" in q.check_shape(()).message


def test_sigmoid_derivative_from_the_input_or_taken_at_the_output():
    x = gv.constant([0.5, -1.0], name="x")
    q = _only(gv.trace_gradients(gv.sigmoid(x), x), "backward")
    s = [_sig(0.5), _sig(-1.0)]  # 0.62246, 0.26894
    assert np.allclose(q.answer, [s[0] * (1 - s[0]), s[1] * (1 - s[1])])  # 0.23500, 0.19661
    _caught(q, [0.5 * (1 - 0.5), -1.0 * (1 + 1.0)], "derivative_from_input")  # [0.25, -2]
    ss = [_sig(v) for v in s]  # sigmoid applied to the output again: 0.65078, 0.56683
    _caught(q, [ss[0] * (1 - ss[0]), ss[1] * (1 - ss[1])], "derivative_at_output")
    _caught(q, [0.227, 0.246], "derivative_at_output")  # typed to 3 digits
    assert q.check([0.235, 0.197]).right


def test_tanh_derivative_from_the_input_or_taken_at_the_output():
    x = gv.constant([0.5, -1.0], name="x")
    seed = gv.constant([2.0, 3.0], name="seed")
    q = _only(gv.trace_gradients(gv.tanh(x), x, grad_ys=seed), "backward")
    t = [math.tanh(0.5), math.tanh(-1.0)]  # 0.46212, -0.76159
    assert np.allclose(q.answer, [2 * (1 - t[0] ** 2), 3 * (1 - t[1] ** 2)])  # 1.5729, 1.2599
    _caught(q, [2 * (1 - 0.25), 3 * (1 - 1.0)], "derivative_from_input")  # [1.5, 0]
    _caught(q, [2 * (1 - math.tanh(t[0]) ** 2), 3 * (1 - math.tanh(t[1]) ** 2)],
            "derivative_at_output")
    # the upstream left out: the local derivative alone, 1 - tanh**2
    _caught(q, [1 - t[0] ** 2, 1 - t[1] ** 2], "upstream_forgotten")


def test_matmul_factors_in_the_wrong_order_or_the_transpose_moved():
    A = gv.constant([[1.0, 2.0], [3.0, 4.0]], name="A")
    B = gv.constant([[5.0, 6.0], [7.0, 8.0]], name="B")
    G = gv.constant([[1.0, 2.0], [0.0, 1.0]], name="G")
    q = _only(gv.trace_gradients(gv.matmul(A, B), A, grad_ys=G), "backward")
    # dL/dA = G @ B.T = [[1,2],[0,1]] @ [[5,7],[6,8]]
    assert q.answer.tolist() == [[17, 23], [6, 8]]
    _caught(q, [[5, 17], [6, 20]], "matmul_order")  # B.T @ G
    _caught(q, [[5, 6], [17, 20]], "matmul_transpose")  # G.T @ B: the transpose moved
    _caught(q, [[19, 22], [7, 8]], "matmul_transpose")  # G @ B: the transpose left out
    _caught(q, [[5, 7], [16, 22]], "matmul_transpose")  # G.T @ B.T
    _caught(q, [[11, 15], [11, 15]], "upstream_forgotten")  # ones @ B.T
    _caught(q, [[-17, -23], [-6, -8]], "wrong_sign")


def test_a_stop_gradient_cut_ignored():
    x = gv.constant([1.0, 2.0], name="x")
    q = _only(gv.trace_gradients(x * gv.stop_gradient(x), x), "result")
    # through Mul only: grad * stop_gradient(x) = x; the cut would have added x again
    assert q.answer.tolist() == [1, 2]
    _caught(q, [2, 4], "cut_ignored")
    assert "StopGradient" in q.check([2, 4]).message


def test_a_stop_gradients_cut_ignored_gives_the_total_derivative():
    # TensorFlow's documented example: d(a + b)/da with b = 2a held constant is 1;
    # the total derivative, the cut ignored, is 3.
    a = gv.constant(0.0, name="a")
    b = 2.0 * a
    tr = gv.trace_gradients(a + b, [a, b], stop_gradients=[a, b])
    q = _only(tr, "result", "dL/da")
    assert q.answer.tolist() == 1
    _caught(q, 3, "cut_ignored")
    assert "stop_gradients" in q.check(3).message


def test_grad_ys_ignored():
    y = gv.constant([0.5, -1.0], name="y")
    q = _only(gv.trace_gradients(gv.tanh(y), y, grad_ys=gv.constant([2.0, 3.0])), "seed")
    assert q.answer.tolist() == [2, 3]
    _caught(q, [1, 1], "grad_ys_ignored")
    assert q.given[0][0] == "grad_ys[0], the seed given"


@pytest.mark.parametrize("build, target, right, slip", [
    (lambda a, b: a - b, "dL/db", [-1, -1], [1, 1]),  # Sub: the second input gets -grad
    (lambda a, b: -(a * b), "dL/dMul", [-1, -1], [1, 1]),  # Neg: -grad
    (lambda a, b: a / b, "dL/db", [-1 / 9, -2 / 16], [1 / 9, 2 / 16]),  # -a / b**2
])
def test_the_wrong_sign(build, target, right, slip):
    a = gv.constant([1.0, 2.0], name="a")
    b = gv.constant([3.0, 4.0], name="b")
    tr = gv.trace_gradients(build(a, b), [a, b])
    q = next(q for q in questions(tr) if q.step_kind == "backward" and q.target == target)
    assert np.allclose(q.answer, right)
    _caught(q, slip, "wrong_sign")


def test_the_wrong_sign_at_negation_says_why():
    a = gv.constant([1.0, 2.0], name="a")
    q = _only(gv.trace_gradients(-a, a), "backward")
    assert q.answer.tolist() == [-1, -1]
    assert "Negation flips the sign" in q.check([1, 1]).message


def test_the_right_numbers_in_the_wrong_shape():
    X = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="X")
    q = _only(gv.trace_gradients(X * X, X), "accumulate")
    # 2 * X, shape (2,3)
    assert q.answer.tolist() == [[2, 4, 6], [8, 10, 12]]
    _caught(q, [2, 4, 6, 8, 10, 12], "wrong_shape")  # flat
    _caught(q, [[2, 8], [4, 10], [6, 12]], "wrong_shape")  # transposed
    assert q.check([[2, 4], [6, 8], [10, 12]]).kind == "wrong_shape"  # reshaped
    assert q.check([1, 2, 3]).verdict == "shape"


def test_mean_not_divided_and_relu_mask_forgotten():
    x = gv.constant([1.0, 2.0, 3.0, 4.0], name="x")
    q = _only(gv.trace_gradients(gv.reduce_mean(x), x), "backward")
    assert q.answer.tolist() == [0.25] * 4
    _caught(q, [1, 1, 1, 1], "mean_not_divided")
    z = gv.constant([-1.0, 2.0], name="z")
    q = _only(gv.trace_gradients(gv.relu(z), z), "backward")
    assert q.answer.tolist() == [0, 1]
    _caught(q, [1, 1], "mask_forgotten")


def test_kernel_not_flipped():
    # a 1-D picture: x = [1, 2, 3], kernel [1, 10] (VALID): y = [21, 32]; with grad
    # ones, x's gradient is the flipped kernel slid over the gradient: [1, 11, 10],
    # while the kernel as it stands gives [10, 11, 1]
    x = gv.constant(np.array([1.0, 2.0, 3.0]).reshape(1, 1, 3, 1), name="img1d")
    w = gv.constant(np.array([1.0, 10.0]).reshape(1, 2, 1, 1), name="k1d")
    q = next(q for q in gv.questions(gv.trace_gradients(gv.nn.conv2d(x, w, 1, "VALID"), x))
             if q.step_kind == "backward")
    assert q.answer.reshape(-1).tolist() == [1, 11, 10]
    _caught(q, np.array([10.0, 11.0, 1.0]).reshape(1, 1, 3, 1), "kernel_not_flipped")


def test_pool_gradient_sent_to_every_element_or_not_shared():
    x = gv.constant(np.array([[1.0, 4.0], [3.0, 2.0]]).reshape(1, 2, 2, 1), name="pool_in")
    q = next(q for q in gv.questions(gv.trace_gradients(gv.nn.max_pool2d(x, 2, 2, "VALID"),
                                                        x)) if q.step_kind == "backward")
    assert q.answer.reshape(-1).tolist() == [0, 1, 0, 0]
    _caught(q, np.ones((1, 2, 2, 1)), "pool_gradient_everywhere")
    q = next(q for q in gv.questions(gv.trace_gradients(gv.nn.avg_pool2d(x, 2, 2, "VALID"),
                                                        x)) if q.step_kind == "backward")
    assert q.answer.reshape(-1).tolist() == [0.25] * 4
    _caught(q, np.ones((1, 2, 2, 1)), "pool_not_shared")


# ---------------------------------------------------------------- checking


def test_not_yet_gives_the_formula_then_the_answer():
    X = gv.constant([[1.0], [2.0]], name="X")
    W = gv.Variable(3.0, name="W")
    q = _only(gv.trace_gradients(gv.reduce_sum(X * W), W), "backward",
              "dL/d(W broadcast)")
    first, second = q.check([[7], [7]]), q.check([[7], [7]], hints=1)
    assert first.verdict == second.verdict == "not_yet"
    assert first.hint == "dL/d(W broadcast) = grad * X: (2,1) -> (2,1)"
    assert second.hint == "dL/d(W broadcast) = [[1], [2]]"


def test_coinciding_kinds_are_said():
    # x * x: "the wrong input" of Mul is the right one, and so is the upstream left out
    x = gv.constant([1.0, 2.0], name="x")
    q = next(q for q in questions(gv.trace_gradients(x * x, x)) if q.step_kind == "backward")
    assert {"mul_wrong_input", "upstream_forgotten"} <= set(q.same_as_right)
    assert "mul_wrong_input" not in {w.kind for w in q.wrong}
    # ones seeded: grad_ys ignored gives the right numbers, so it is not asked for
    y = gv.constant([1.0, 2.0], name="y")
    q = _only(gv.trace_gradients(y * 2.0, y, grad_ys=gv.ones_like(y)), "seed")
    assert q.same_as_right == ("grad_ys_ignored",) and q.wrong[0].kind == "wrong_shape"


def test_a_large_answer_asks_one_element():
    x = gv.constant(np.linspace(-1, 1, 20).reshape(4, 5), name="x")
    q = _only(gv.trace_gradients(gv.tanh(x), x), "backward")
    assert q.focus is not None and len(q.focus) == 1 and len(q.focus[0]) == 2
    (at,) = q.focus
    assert q.check(float(q.answer[at])).right and q.check([float(q.answer[at])]).right
    assert q.check(q.answer).right  # the whole array is fine too
    assert f"It has 20 values: give dL/dx[{at[0]},{at[1]}]." in q.prompt
    slip = next(w for w in q.wrong if w.kind == "derivative_from_input")
    _caught(q, float(slip.value[at]), "derivative_from_input")
    _never_right(q)


@pytest.mark.parametrize("answer, said", [
    ("0.5", "not str"), (None, "not NoneType"), ([[1, 2], [3]], "equal length"),
    ([1, float("nan")], "no NaN"),
])
def test_a_bad_answer_says_what_is_accepted(answer, said):
    x = gv.constant([1.0, 2.0], name="x")
    q = questions(gv.trace_gradients(x * x, x))[0]
    with pytest.raises(ValueError, match="number") as err:
        q.check(answer)
    assert said in str(err.value)
    with pytest.raises(ValueError, match=r"tuple of sizes such as \(2, 3\)"):
        q.check_shape((2.5,))


def test_steps_whose_arrays_are_summaries_ask_nothing():
    big = gv.constant(np.ones((9, 9)), name="big")  # 81 values: the trace keeps a summary
    tr = gv.trace_gradients(gv.reduce_sum(big * 2.0), big)
    asked = {q.step_kind for q in questions(tr)}
    assert asked == {"seed"}  # the seed of Sum is a scalar; every other array has 81 values
    assert all(q.answer.size <= 64 for q in questions(tr))


# ---------------------------------------------------------------- never a slip called right


def _cnn() -> gv.Trace:
    """A small CNN: conv, ReLU, a 2x2 max pool, weighted: the max pool's question is about
    32 values, half of them its windows' winners."""
    rng = np.random.default_rng(0)
    x = gv.constant(rng.normal(size=(1, 4, 4, 1)).round(2), name="cnn_x")
    w = gv.Variable(rng.normal(size=(3, 3, 1, 2)).round(2), name="cnn_w")
    h = gv.nn.relu(gv.nn.conv2d(x, w, 1, "SAME"), name="relu")
    v = gv.constant(rng.normal(size=(1, 2, 2, 2)).round(2), name="cnn_v")
    return gv.trace_gradients(gv.reduce_sum(gv.nn.max_pool2d(h, 2, 2, "VALID") * v), w)


def hand_worked_traces() -> list[gv.Trace]:
    """The programs of the hand-worked cases below that a fixed slack or a single element
    asked got wrong, for the page's checker to be held to as well."""
    rng = np.random.default_rng(3)
    z = gv.constant(rng.normal(size=(1, 4, 4, 2)).round(2), name="pre")
    v = gv.constant(rng.normal(size=(1, 4, 4, 2)).round(2), name="weights")
    sat = gv.constant([-46.0, -45.0], name="sat")
    X, W = gv.constant([1e20, 3e20], name="huge"), gv.Variable(2.0, name="W")
    mX = gv.constant([[1.0, 2.0], [3.0, 4.0]], name="mX")
    mW = gv.Variable([[1.0, 0.0], [0.0, 1.0]], name="mW")
    t = gv.constant([0.5, -1.0], name="t")
    mp = gv.constant(np.array([[1.0, 3.0], [2.0, 0.0]]).reshape(1, 2, 2, 1), name="mp")
    Q = gv.Variable(np.random.default_rng(109).normal(size=(5, 4)).round(2), name="Q")
    K = gv.constant(np.random.default_rng(110).normal(size=(5, 4)).round(2), name="K")
    pool = gv.constant(np.arange(25.0).reshape(1, 5, 5, 1), name="pool")
    small = gv.constant([5.0, -1.0], name="small")
    sm = gv.constant([0.0, math.log(3.0), 1.0], name="sm")
    return [
        _cnn(),
        gv.trace_gradients(gv.reduce_sum(gv.relu(z) * v), z),
        gv.trace_gradients(gv.reduce_sum(gv.matmul(Q, K, transpose_b=True) * 0.5), Q),
        gv.trace_gradients(gv.reduce_sum(gv.nn.avg_pool2d(pool, 2, 1, "VALID")), pool),
        gv.trace_gradients(gv.reduce_sum(gv.relu(small) * gv.constant([10.0, 0.05])), small),
        gv.trace_gradients(gv.softmax(sm), sm, grad_ys=gv.constant([1.0, 0.0, 2.0])),
        gv.trace_gradients(gv.sigmoid(sat), sat, grad_ys=gv.constant([1.0, 2.0])),
        gv.trace_gradients(gv.reduce_sum(X * W), W),
        gv.trace_gradients(gv.matmul(mX, mW), mW, grad_ys=gv.constant([[1.0, 0.0], [0.0, 2.0]])),
        gv.trace_gradients(gv.tanh(t), t),
        gv.trace_gradients(gv.nn.max_pool2d(mp, 2, 2, "VALID"), mp,
                           grad_ys=gv.constant(np.full((1, 1, 1, 1), 4.0))),
    ]


def _at_focus(q: Question, value: np.ndarray):
    """A whole array's values at the elements the question asks."""
    picked = [float(value[at]) for at in q.focus]
    return picked[0] if len(picked) == 1 else picked


def _never_right(q: Question, whole: bool = True) -> None:
    """No slip that differs from the right answer anywhere is called right: not its whole
    array (unless ``whole`` is False: checked already), nor its values at the elements
    asked."""
    for kind, value in q.slips:
        if kind in q.same_as_right:
            continue
        assert not whole or not q.check(value).right, (q.prompt, kind)
        if q.focus is not None and value.shape == q.shape:
            feedback = q.check(_at_focus(q, value))
            assert feedback.verdict == "misconception", (q.prompt, kind, feedback)


def test_the_max_pool_question_asks_where_every_slip_differs():
    q = next(q for q in questions(_cnn()) if "MaxPool send to relu" in q.prompt)
    assert q.shape == (1, 4, 4, 2) and q.focus is not None
    everywhere = next(w for w in q.wrong if w.kind == "pool_gradient_everywhere").value
    # one element asked is a window's winner, one is not: at a winner the gradient sent
    # everywhere is the right number, at the others it is not
    winners = [bool(q.answer[at] != 0) for at in q.focus]
    assert True in winners and False in winners
    assert any(everywhere[at] != q.answer[at] for at in q.focus)
    assert "which together tell the usual slips apart" in q.prompt
    _never_right(q)
    _caught(q, _at_focus(q, everywhere), "pool_gradient_everywhere")
    assert q.check(_at_focus(q, q.answer)).right


def test_a_large_question_in_a_notebook_gives_every_value_it_needs():
    tr = _cnn()
    q = next(q for q in questions(tr) if "MaxPool send to relu" in q.prompt)
    ex = gv.exercise(tr, step=q.step)
    text, html = str(ex.ask()), ex.ask()._repr_html_()
    relu = dict(q.given)["relu (forward value)"]
    assert relu.size == 32
    for v in ("0.701", "2.226", "0.5317"):  # a few of relu's 32 values, none elided
        assert v in text and v in html
    assert " mean " not in text and ", ...," not in text
    assert f"answer {q.asked} as a list of 2 numbers in that order" in text
    assert ex.check([float(q.answer[at]) for at in q.focus]).right


def test_the_relu_question_asks_where_the_mask_blocks():
    rng = np.random.default_rng(3)
    z = gv.constant(rng.normal(size=(1, 4, 4, 2)).round(2), name="pre")
    v = gv.constant(rng.normal(size=(1, 4, 4, 2)).round(2), name="weights")
    q = next(q for q in questions(gv.trace_gradients(gv.reduce_sum(gv.relu(z) * v), z))
             if q.prompt.startswith("What gradient does Relu"))
    assert q.focus is not None and q.shape == (1, 4, 4, 2)
    assert any(z.numpy()[at] <= 0 for at in q.focus)  # where the mask blocks the gradient
    forgot = next(w for w in q.wrong if w.kind == "mask_forgotten").value
    _caught(q, _at_focus(q, forgot), "mask_forgotten")
    _never_right(q)


def test_vanishing_and_huge_gradients_are_checked_as_closely_as_any():
    # sigmoid(-46) = 1.05e-20: the gradient y * (1 - y) is 1.05e-20 too, weighted 1 and 2
    x = gv.constant([-46.0, -45.0], name="sat")
    q = _only(gv.trace_gradients(gv.sigmoid(x), x, grad_ys=gv.constant([1.0, 2.0])),
              "backward")
    assert 1e-20 < q.answer[0] < 1.1e-20 and q.resolution.eps == 2.0**-23
    assert q.check([_sig(-46) * (1 - _sig(-46)), 2 * _sig(-45) * (1 - _sig(-45))]).right
    assert q.check([0, 0]).verdict == "not_yet"
    _caught(q, -q.answer, "wrong_sign")
    _caught(q, q.answer / [1, 2], "upstream_forgotten")
    for w in q.wrong:
        _caught(q, w.value, w.kind)
    # and 1e+20: W * X with X of that size gives W the gradient X
    X = gv.constant([1e20, 3e20], name="huge")
    W = gv.Variable(2.0, name="W")
    q = _only(gv.trace_gradients(gv.reduce_sum(X * W), W), "backward",
              "dL/d(W broadcast)")
    assert q.check([1.0004e20, 2.9996e20]).right and q.check([0, 0]).verdict == "not_yet"
    _caught(q, [-1e20, -3e20], "wrong_sign")
    _caught(q, [2, 2], "mul_wrong_input")


def test_the_transposed_product_tanh_as_sigmoid_and_max_pool_as_average():
    # y = X @ W with W square, seeded G: dL/dW = X.T @ G = [[1, 3], [2, 4]] @ [[1, 0],
    # [0, 2]] = [[1, 6], [2, 8]]; the product transposed, G.T @ X, is [[1, 2], [6, 8]]
    X = gv.constant([[1.0, 2.0], [3.0, 4.0]], name="mX")
    W = gv.Variable([[1.0, 0.0], [0.0, 1.0]], name="mW")
    G = gv.constant([[1.0, 0.0], [0.0, 2.0]])
    q = _only(gv.trace_gradients(gv.matmul(X, W), W, grad_ys=G), "backward")
    assert q.answer.tolist() == [[1, 6], [2, 8]]
    _caught(q, [[1, 2], [6, 8]], "matmul_result_transposed")
    # tanh at [0.5, -1]: y = [0.46212, -0.76159]; its rule 1 - y**2 = [0.78645, 0.41997];
    # sigmoid's form y * (1 - y) = [0.24856, -1.34164]
    t = gv.constant([0.5, -1.0], name="t")
    q = _only(gv.trace_gradients(gv.tanh(t), t), "backward")
    assert np.allclose(q.answer, [0.78645, 0.41997], atol=1e-5)
    _caught(q, [0.24856, -1.34164], "derivative_of_other")
    # and sigmoid at [0, 1]: y = [0.5, 0.73106]; tanh's form 1 - y**2 = [0.75, 0.46555]
    s = gv.constant([0.0, 1.0], name="s")
    q = _only(gv.trace_gradients(gv.sigmoid(s), s), "backward")
    _caught(q, [0.75, 0.46555], "derivative_of_other")
    # a 2x2 max pool of [[1, 3], [2, 0]] with grad 4: the winner 3 gets 4, the rest 0;
    # shared as an average pool shares it, each gets 4 / 4 = 1
    x = gv.constant(np.array([[1.0, 3.0], [2.0, 0.0]]).reshape(1, 2, 2, 1), name="mp")
    q = _only(gv.trace_gradients(gv.nn.max_pool2d(x, 2, 2, "VALID"), x,
                                 grad_ys=gv.constant(np.full((1, 1, 1, 1), 4.0))), "backward")
    assert q.answer.reshape(-1).tolist() == [0, 4, 0, 0]
    _caught(q, np.ones((1, 2, 2, 1)), "pool_averaged")
    _caught(q, np.full((1, 2, 2, 1), 4.0), "pool_gradient_everywhere")


def test_a_small_element_counts_as_much_as_a_large_one():
    # relu([5, -1]) weighted [10, 0.05]: right [10, 0]; the mask forgotten gives [10, 0.05],
    # 0.05 off where the right number is 0, however large the other element is
    x = gv.constant([5.0, -1.0], name="x")
    c = gv.constant([10.0, 0.05], name="c")
    q = _only(gv.trace_gradients(gv.reduce_sum(gv.relu(x) * c), x), "backward", "dL/dx")
    assert q.answer.tolist() == [10, 0]
    _caught(q, [10, 0.05], "mask_forgotten")
    assert not q.check([10, 0.09]).right and q.check([10.04, 0.0]).right
    # x * x at [10, 0.25]: the sum 2x = [20, 0.5]; [20, 0.7] is 40% off at 0.5
    y = gv.constant([10.0, 0.25], name="y")
    q = _only(gv.trace_gradients(y * y, y), "accumulate")
    assert not q.check([20, 0.7]).right and q.check([20, 0.502]).right


def test_softmax_with_its_jacobian_diagonal_alone():
    # softmax([0, ln 3]) = [0.25, 0.75], seeded [1, 0]: the rule y * (g - sum(g * y)) gives
    # [0.25 * 0.75, 0.75 * -0.25] = [0.1875, -0.1875]; the diagonal alone, g * y * (1 - y),
    # gives [0.1875, 0]
    z = gv.constant([0.0, math.log(3.0)], name="z")
    q = _only(gv.trace_gradients(gv.softmax(z), z, grad_ys=gv.constant([1.0, 0.0])),
              "backward")
    assert np.allclose(q.answer, [0.1875, -0.1875])
    _caught(q, [0.1875, 0.0], "softmax_diagonal")


def test_a_final_gradient_knows_the_slips_of_the_step_that_made_it():
    # attention's scores, S = Q @ K.T: the final dL/dQ is the MatMul step's answer, so its
    # slips are the result's too, and the elements asked tell them apart
    rng = np.random.default_rng(109)
    Q = gv.Variable(rng.normal(size=(5, 4)).round(2), name="Q")
    K = gv.constant(rng.normal(size=(5, 4)).round(2), name="K")
    T = gv.constant(rng.normal(size=(5, 5)).round(2), name="T")
    tr = gv.trace_gradients(gv.reduce_sum(gv.matmul(Q, K, transpose_b=True) * T), Q)
    q = _only(tr, "result")
    assert q.focus is not None and "matmul_transpose" in {w.kind for w in q.wrong}
    _never_right(q)
    # overlapping windows: a corner is in one window, the middle in four; the gradient
    # from one window alone, 0.25 everywhere, is right only at the corners
    x = gv.constant(np.arange(25.0).reshape(1, 5, 5, 1), name="x")
    q = _only(gv.trace_gradients(gv.reduce_sum(gv.nn.avg_pool2d(x, 2, 1, "VALID")), x),
              "backward", "dL/dx")
    assert q.focus is not None and not q.check(_at_focus(q, np.full(q.shape, 0.25))).right


def test_a_focus_answered_with_the_wrong_count_says_how_many():
    x = gv.constant(np.linspace(-1, 1, 20).reshape(4, 5), name="x")
    q = _only(gv.trace_gradients(gv.tanh(x), x), "backward")
    (at,) = q.focus
    said = q.check([0.5, 0.5])
    assert (said.verdict, said.message) == (
        "shape", f"This question asks for 1 value, dL/dx[{at[0]},{at[1]}], in that order, or "
        "the whole array, shape (4,5); that is 2 values.")


def test_a_slip_giving_the_right_numbers_is_said_when_right():
    x = gv.constant([1.0, 2.0], name="x")
    q = next(q for q in questions(gv.trace_gradients(x * x, x)) if q.step_kind == "backward")
    said = q.check(q.answer).message
    assert said.startswith("Right: ")
    assert "On this step slips give these numbers too, to the precision checked" in said
    assert MISCONCEPTIONS["mul_wrong_input"] in said
    assert q.to_dict()["coincide_note"] == said[said.index(" On this step"):]


def test_the_gradient_before_a_broadcast_sum_has_its_own_name():
    X = gv.constant(np.arange(6.0).reshape(3, 2), name="X")
    b = gv.Variable(np.array([1.0, 2.0]), name="b")
    tr = gv.trace_gradients(gv.reduce_sum(gv.tanh(X + b)), b)
    own = re.compile(r"dL/db(?![\w(])")
    before = _only(tr, "backward", "dL/d(b broadcast)")
    assert before.shape == (3, 2)
    for q in questions(tr):
        words = [q.target, q.prompt, *q.hints, *(w.why for w in q.wrong)]
        words += [q.check_shape(shape).message for shape in ((3, 2), (2,), (6,))]
        words += [q.check(np.zeros(q.shape)).message, q.check(q.answer).message]
        for text in words:
            for m in re.finditer(r"dL/db has shape (\([\d,]*\))", text):
                assert m.group(1) == "(2,)", text
        if own.search(q.target):
            assert q.shape == (2,), q.prompt
        for label, a in q.given:
            if own.search(label):
                assert tuple(a.shape) == (2,), label


@pytest.mark.parametrize("answer, said", [
    ([["1.753"], ["10.62"]], "not str"), ([[True], [1.0]], "not bool"),
    (np.array(["2020-01-01", "2020-01-02"], "datetime64[D]"), "datetime64"),
    (np.zeros(2, dtype=[("a", "f8")]), "holds [('a', '<f8')] values"),
    (np.array([1.0, "a"], dtype=object), "holds object values"), ([1j, 2], "not complex"),
    ([[10**400], [1]], "beyond float64"), (list(range(5000)), "at most 4096 values"),
    ([[1], [2, 3]], "equal length"), ({1: 2}, "not dict"),
])
def test_answers_are_numbers_only(answer, said):
    x = gv.constant([[1.0], [2.0]], name="x")
    q = questions(gv.trace_gradients(x * x, x))[0]
    with pytest.raises(ValueError, match="an answer is a number") as err:
        q.check(answer)
    assert said in str(err.value)


def test_a_deep_answer_or_a_shape_of_other_things_is_refused_clearly():
    x = gv.constant([1.0, 2.0], name="x")
    q = questions(gv.trace_gradients(x * x, x))[0]
    deep: list = [1.0]
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested at most 32 deep"):
        q.check(deep)
    for shape in ((True, 1), {2: 1}, "2,1", (2.0,), (-1,), [[2]]):
        with pytest.raises(ValueError, match=r"a shape is a tuple of sizes such as \(2, 3\)"):
            q.check_shape(shape)
    assert q.check_shape(np.array([2])).right and q.check_shape(np.int64(2)).right


# ---------------------------------------------------------------- the notebook API


def test_exercise_asks_and_checks_with_the_next_hint_each_time():
    X = gv.constant([[1.0], [2.0]], name="X")
    W = gv.Variable(3.0, name="W")
    tr = gv.trace_gradients(gv.reduce_sum(X * W), W)
    ex = gv.exercise(tr, step=2)
    html = ex.ask()._repr_html_()
    assert "What gradient does Mul send towards W, dL/d(W broadcast)?" in html and "upstream dL/dMul" in html
    assert "shape (2,1)" in str(ex.ask())
    assert ex.check([[9], [9]]).hint.startswith("dL/d(W broadcast) = grad * X")
    assert ex.check([[9], [9]]).hint == "dL/d(W broadcast) = [[1], [2]]"
    feedback = ex.check([[3], [3]])
    assert feedback.kind == "mul_wrong_input" and "gv-misconception" in feedback._repr_html_()
    assert ex.check([[1], [2]]).right and "gv-right" in ex.check([[1], [2]])._repr_html_()
    assert gv.exercise(tr).question.step == 0  # the first step with a question
    assert gv.exercise(tr, step=-1).question.step_kind == "result"
    assert ex.reveal() == "dL/d(W broadcast) = [[1], [2]]"


def test_exercise_picks_an_input_and_refuses_clearly():
    a = gv.constant([1.0, 2.0], name="a")
    b = gv.constant([3.0, 4.0], name="b")
    tr = gv.trace_gradients(a * gv.stop_gradient(b) - b, [a, b])
    backward = next(s.index for s in tr.steps if getattr(s, "op_type", "") == "Sub")
    assert gv.exercise(tr, step=backward, which="b").question.target == "dL/db"
    assert gv.exercise(tr, step=backward, which=1).question.target == "dL/db"
    with pytest.raises(ValueError, match="asks about Mul, b"):
        gv.exercise(tr, step=backward, which="c")
    cut = next(s.index for s in tr.steps if s.kind == "cut")
    with pytest.raises(ValueError, match=rf"step {cut} \(cut\) has no question; the steps "):
        gv.exercise(tr, step=cut)
    with pytest.raises(ValueError, match="out of range"):
        gv.exercise(tr, step=99)
    with pytest.raises(TypeError, match="expected a Trace"):
        gv.exercise("trace")


# ---------------------------------------------------------------- the payload


def test_the_payload_carries_each_steps_questions_as_strict_json():
    x = gv.constant([0.5, -1.0], name="x")
    tr = gv.trace_gradients(gv.sigmoid(x) * 3.0, x)
    data = viewdata.view_data(tr, practice=True)
    text = json.dumps(data, allow_nan=False)
    steps = json.loads(text)["steps"]
    for s in tr.steps:
        asked = [q.to_dict() for q in step_questions(tr, s)]
        assert steps[s.index].get("questions", []) == json.loads(json.dumps(asked))
    q = steps[2]["questions"][0]
    assert q["prompt"] == "What gradient does Sigmoid send to x?" and q["shape"] == [2]
    kinds = [w["kind"] for w in q["wrong"]]
    assert kinds[:2] == ["derivative_from_input", "derivative_at_output"]
    assert q["wrong"][0]["values"] == [0.75, -6.0]  # 3 * x * (1 - x)


def test_the_payload_says_how_a_four_dimensional_answer_is_drawn():
    """The element map of an answer draws it as the array panels do: an image's
    channels (NHWC), a kernel's input-to-output pairs (HWIO)."""
    steps = viewdata.view_data(_cnn(), practice=True)["steps"]
    asked = {q["target"]: q for s in steps for q in s.get("questions", [])}
    assert asked["dL/dcnn_w"]["layout"] == "HWIO" and asked["dL/drelu"]["layout"] == "NHWC"
    assert asked["dL/dcnn_w"]["focus"] is not None  # 18 values: asked at a few
    given = {g["label"]: g.get("layout") for g in asked["dL/drelu"]["given"]}
    assert given == {"upstream dL/dMaxPool": "NHWC", "relu (forward value)": "NHWC"}


def test_an_exported_report_carries_the_questions(tmp_path):
    x = gv.constant([0.5, -1.0], name="x")
    tr = gv.trace_gradients(gv.sigmoid(x) * 3.0, x)
    page = tr.to_html(tmp_path / "practice.html", practice=True)
    html = Path(page).read_text(encoding="utf-8")
    for q in questions(tr):
        assert json.dumps(q.prompt)[1:-1] in html
        assert all(f'"{w.kind}"' in html for w in q.wrong)


def test_the_payload_keeps_the_first_steps_questions_within_its_budget(monkeypatch):
    X = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="X")
    b = gv.constant([1.0, 2.0, 3.0], name="b")
    tr = gv.trace_gradients(gv.tanh(X * b), b)
    first = len(json.dumps([q.to_dict() for q in step_questions(tr, 0)]))
    monkeypatch.setattr(viewdata, "QUESTION_BYTES_BUDGET", first)
    steps = viewdata.view_data(tr, practice=True)["steps"]
    assert [s["index"] for s in steps if "questions" in s] == [0]


# ---------------------------------------------------------------- random programs
#
# Programs a learner would write: finite values of ordinary size, shapes that
# broadcast, every op a question has slips for, tensors used more than once, weighted
# seeds, stop_gradient and stop_gradients.  (``programs`` from the trace's property
# tests, full of NaN, infinities and zero-size arrays, is run as well: where it asks
# anything, the same must hold.)

# (4, 5) and the shapes that broadcast to it: answers of more than 16 values, asked by a few
_SHAPES = [(), (3,), (2, 3), (3, 3), (2, 1), (1, 3), (3, 2), (4, 5), (4, 1), (1, 5)]


def _matmul(rnd, a, b):
    fits = [(ta, tb) for ta in (False, True) for tb in (False, True)
            if len(a.shape) == len(b.shape) == 2
            and a.shape[0 if ta else 1] == b.shape[1 if tb else 0]]
    if not fits:
        raise ValueError("no transpose makes these shapes fit")
    ta, tb = rnd.choice(fits)
    return gv.matmul(a, b, transpose_a=ta, transpose_b=tb)


_UNARY = {
    "sigmoid": gv.sigmoid, "tanh": gv.tanh, "relu": gv.relu, "neg": lambda a: -a,
    "square": gv.square, "exp": lambda a: gv.exp(a * 0.5), "mean": gv.reduce_mean,
    "mean0": lambda a: gv.reduce_mean(a, axis=0), "stop": gv.stop_gradient,
    "sum_keep": lambda a: gv.reduce_sum(a, axis=-1, keepdims=True), "softmax": gv.softmax,
    "transpose": gv.transpose, "scaled": lambda a: a * 1.5,
    "times_stopped": lambda a: a * gv.stop_gradient(a),
}
# the ops with slips of their own, drawn twice as often as the rest
_UNARY_DRAWN = sorted(_UNARY) + ["mean", "relu", "sigmoid", "tanh"]
_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (gv.square(b) + 1.0), "maximum": gv.maximum,
}


@st.composite
def learner_programs(draw):
    """A function tracing a random small program with ordinary numbers."""
    leaves = [(f"v{i}", draw(hnp.arrays(np.float64, draw(st.sampled_from(_SHAPES)),
                                        elements=st.floats(-2, 2).map(lambda v: round(v, 2)))))
              for i in range(draw(st.integers(1, 3)))]
    rnd = draw(st.randoms(use_true_random=False))
    method = draw(st.sampled_from(["gradients", "gradients", "tape.gradient", "tape.jacobian"]))
    weighted, stopped = draw(st.booleans()), draw(st.booleans())

    def build(tape=None):
        pool = [gv.constant(a, name=name) for name, a in leaves]
        for t in pool if tape is not None else ():
            tape.watch(t)
        for _ in range(rnd.randint(2, 8)):
            pick = lambda: rnd.choice(pool[-2:] if rnd.random() < 0.6 else pool)  # noqa: E731
            kind = rnd.choice(["unary", "binary", "binary", "matmul"])
            try:
                if kind == "unary":
                    pool.append(_UNARY[rnd.choice(_UNARY_DRAWN)](pick()))
                elif kind == "binary":
                    pool.append(_BINARY[rnd.choice(sorted(_BINARY))](pick(), pick()))
                else:
                    pool.append(_matmul(rnd, pick(), pick()))
            except (TypeError, ValueError):
                pass
        return pool

    def trace() -> gv.Trace:
        if method == "gradients":
            pool = build()
        else:
            with gv.GradientTape(persistent=True) as tape:
                pool = build(tape)
        y = pool[-1]
        xs = pool[:len(leaves)]
        shape = tuple(y.shape)
        weights = gv.constant(np.linspace(0.5, 2.0, max(1, math.prod(shape))).reshape(shape),
                              dtype=y.dtype) if weighted else None
        if method == "tape.jacobian":
            return tape.trace_jacobian(y, xs)
        if method == "tape.gradient":
            return tape.trace_gradient(y, xs, output_gradients=weights)
        cut = pool[len(leaves):-1][:1] if stopped else None  # made from a leaf, likely
        return gv.trace_gradients(y, xs, grad_ys=weights, stop_gradients=cut)

    return trace


def _knows_its_answers(trace: gv.Trace) -> set[str]:
    """Check every question of ``trace``; the kinds of wrong answer it knew."""
    seen: set[str] = set()
    for q in questions(trace):
        assert q.check(q.answer).right, q
        for w in q.wrong:
            feedback = q.check(w.value)
            assert (feedback.verdict, feedback.kind) == ("misconception", w.kind), (q, w)
            assert w.why[:1].isupper() and w.why.endswith("."), w.why  # a whole sentence
            seen.add(w.kind)
        _never_right(q, whole=False)  # whole, each slip is checked just below
        _FOCUS_SEEN.add(0 if q.focus is None else len(q.focus))
        # every slip tried: the right answer where the question says so, else the kind
        # it reports (its own, or the one whose ``also`` names it)
        for kind, value in q.slips:
            feedback = q.check(value)
            if feedback.right:
                assert kind in q.same_as_right, (q.prompt, kind)
                continue
            assert feedback.verdict == "misconception", (q.prompt, kind, value, feedback)
            assert feedback.kind == kind or any(kind in w.also for w in q.wrong
                                                if w.kind == feedback.kind), (q.prompt, kind)
        # what the payload carries, rounded to five digits, is still told apart
        d = json.loads(json.dumps(q.to_dict(), allow_nan=False))
        assert q.check(d["answer"]).right
        for w in d["wrong"]:
            assert q.check(w["values"]).kind == w["kind"], (q.prompt, w)
        assert set(d["same_as_right"]) | {w["kind"] for w in d["wrong"]} <= set(MISCONCEPTIONS)
    return seen


_KINDS_SEEN: set[str] = set()
_FOCUS_SEEN: set[int] = set()  # how many elements questions asked (0: all of them)


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(learner_programs())
@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")
def test_every_question_of_random_programs_knows_its_answers(program):
    _KINDS_SEEN.update(_knows_its_answers(program()))


def _window_traces() -> list[gv.Trace]:
    """Convolutions and pools, which the random programs (1-D and 2-D) do not draw."""
    rng = np.random.default_rng(5)
    x = gv.Variable(rng.normal(size=(1, 4, 4, 1)).round(2), name="win_x")
    w = gv.Variable(rng.normal(size=(2, 2, 1, 2)).round(2), name="win_w")
    out = []
    for padding, strides in (("SAME", 1), ("VALID", 2), ("SAME", 2)):
        y = gv.nn.conv2d(x, w, strides, padding)
        out.append(gv.trace_gradients(gv.reduce_sum(gv.nn.max_pool2d(y, 2, 1, padding)
                                                    * gv.nn.avg_pool2d(y, 2, 1, padding)),
                                      [x, w]))
    return out


def _block_traces():
    """A transformer block's ops: an embedding read with a repeated token, attention
    scaled by 1/sqrt(d) (by a multiply and by a divide), a layer norm, a GELU."""
    rng = np.random.default_rng(5)
    E = gv.Variable(rng.standard_normal((6, 4)).astype(np.float32), name="E")
    Wq = gv.Variable(rng.standard_normal((4, 4)).astype(np.float32), name="Wq")
    x = gv.nn.embedding_lookup(E, [1, 4, 1])
    q = x @ Wq
    scores = gv.matmul(q, x, transpose_b=True) * float(1.0 / np.sqrt(4.0))
    scores_div = gv.matmul(q, x, transpose_b=True) / gv.constant(2.0)
    h = gv.nn.layer_norm(gv.softmax(scores) @ x + gv.softmax(scores_div) @ x)
    loss = gv.reduce_sum(gv.nn.gelu(h) * gv.constant(rng.standard_normal((3, 4)).astype(
        np.float32)))
    return [gv.trace_gradients(loss, [E, Wq])]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_every_question_of_conv_and_pool_knows_its_answers():
    for trace in _window_traces() + hand_worked_traces() + _block_traces():
        _KINDS_SEEN.update(_knows_its_answers(trace))


def _forward_traces() -> list[gv.Trace]:
    """Forward mode over every op of the gradient rules' cases, each input moving along a
    direction of two decimals (forward steps ask their own questions)."""
    from test_gradient_rules import CASES

    rng = np.random.default_rng(11)
    out = []
    for f, points in CASES.values():
        xs = [gv.constant(np.asarray(p, np.float64), name=f"in{i}")
              for i, p in enumerate(points)]
        moving = [x for x in xs if x.dtype.is_floating]
        directions = [gv.constant(rng.uniform(-1.0, 1.0, x.shape).round(2)) for x in moving]
        with gv.autodiff.ForwardAccumulator(moving, directions) as acc:
            y = f(*xs)
        out.append(acc.trace_jvp(y))
    return out


def test_every_question_of_forward_steps_knows_its_answers():
    for trace in _forward_traces():
        _KINDS_SEEN.update(_knows_its_answers(trace))


def test_the_random_programs_reach_every_kind():
    """The property tests above are only as good as the kinds their programs reach."""
    if not _KINDS_SEEN:  # run alone: run the property tests first
        test_every_question_of_random_programs_knows_its_answers()
        test_every_question_of_conv_and_pool_knows_its_answers()
        test_every_question_of_forward_steps_knows_its_answers()
    assert set(MISCONCEPTIONS) - _KINDS_SEEN == set(), _KINDS_SEEN
    assert {0, 1, 2} <= _FOCUS_SEEN  # whole answers, and foci of one and of several


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")
def test_questions_of_programs_with_nan_and_empty_arrays_hold_too(program):
    _knows_its_answers(program())


def test_a_wide_op_asks_a_few_questions_each_carrying_what_it_needs():
    """An add_n of 1,000 asks about its first three inputs, each question giving the
    upstream and its own input only (1,000 questions of 1,001 arrays each took 15 s)."""
    from fixtures.traces import add_n_of, used_n_times

    tr = add_n_of(1000)
    add_n = next(s for s in tr.steps if s.kind == "backward")
    asked = step_questions(tr, add_n)
    assert [q.target for q in asked] == ["dL/dw0", "dL/dw1", "dL/dw2"]
    assert all(len(q.given) <= 2 for q in asked)
    assert asked[1].check(1.0).right and not asked[1].check(-1.0).right
    # a sum of 1,000 contributions is not asked by hand
    fan = used_n_times(1000)
    assert step_questions(fan, next(s for s in fan.steps if s.kind == "accumulate")) == ()
    # with every question within the budget, the payload is quick to make
    steps = viewdata.view_data(tr, practice=True)["steps"]
    assert [q["target"] for q in steps[add_n.index]["questions"]] == ["dL/dw0", "dL/dw1", "dL/dw2"]
