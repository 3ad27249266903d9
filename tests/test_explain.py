"""The words: a specific sentence and formula for every step kind and every op type."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from fixtures.traces import linear_regression
from test_diagram import (_n, chain_trace, linreg_trace, matmul_stop_trace, partial_trace,
                          square_trace, unconnected_trace)

import gradviz as gv
from gradviz.views import diagram, explain
from gradviz.views.explain import describe
from gradviz.trace import Trace


def words(tr: Trace, kind: str, nth: int = 0) -> explain.Explanation:
    return describe(tr, [s for s in tr.steps if s.kind == kind][nth])


def formulas(tr: Trace, op_type: str) -> list[str]:
    """The formula of every backward step of op_type, in step order."""
    return [describe(tr, s).formula for s in tr.steps
            if s.kind == "backward" and s.op_type == op_type]


def x_name(tr: Trace, k: int) -> str:
    """How the trace's sentences spell its k-th x (a trace names tensors afresh)."""
    return explain.display_name(tr.tensors[tr.xs[k]])


def test_explanation_unpacks_as_title_sentence_formula() -> None:
    tr = square_trace()
    title, sentence, formula = describe(tr, 1)
    assert title == "Mul backward" and sentence and formula
    assert describe(tr, tr.steps[1]) == describe(tr, 1) == describe(tr, -3)


def test_seed_default_given_and_several_ys() -> None:
    tr = linreg_trace()
    w = words(tr, "seed")
    assert w.title == "seed"
    y = explain.display_name(tr.tensors[tr.ys[0]])
    assert f"{y} gets the default seed 1, as d{y}/d{y} = 1" in w.sentence
    assert w.formula == f"dL/d{y} = ones_like({y}) = 1"
    x = gv.constant([1.0, 2.0], name=_n("x"))
    tr = gv.trace_gradients([x * 3.0, gv.reduce_sum(x)], x,
                            grad_ys=[gv.constant([2.0, 3.0]), None])
    first, second = words(tr, "seed", 0), words(tr, "seed", 1)
    assert "gets the given seed grad_ys[0] (2,)" in first.sentence
    assert "1 of 2 ys" in first.sentence and "summed" in first.sentence
    assert "grad_ys[0] = [2, 3]" in first.formula
    assert "default seed" in second.sentence and "2 of 2 ys" in second.sentence


def test_non_scalar_default_seed_says_y_is_summed() -> None:
    w = words(unconnected_trace("none"), "seed")
    assert "ones shaped like" in w.sentence and "(3,1)" in w.sentence
    assert "implicitly summed" in w.sentence


@pytest.mark.parametrize("ta,tb,a_shape,b_shape,formula", [
    (False, False, (2, 2), (2, 3), "dL/d{A} = grad @ {B}.T: (2,3) @ (3,2) -> (2,2); "
                                   "dL/d{B} = {A}.T @ grad: (2,2) @ (2,3) -> (2,3)"),
    (True, False, (2, 2), (2, 3), "dL/d{A} = {B} @ grad.T: (2,3) @ (3,2) -> (2,2); "
                                  "dL/d{B} = {A} @ grad: (2,2) @ (2,3) -> (2,3)"),
    (False, True, (2, 2), (3, 2), "dL/d{A} = grad @ {B}: (2,3) @ (3,2) -> (2,2); "
                                  "dL/d{B} = grad.T @ {A}: (3,2) @ (2,2) -> (3,2)"),
    (True, True, (2, 2), (3, 2), "dL/d{A} = {B}.T @ grad.T: (2,3) @ (3,2) -> (2,2); "
                                 "dL/d{B} = grad.T @ {A}.T: (3,2) @ (2,2) -> (3,2)"),
])
def test_matmul_backward_formula_per_transpose(ta, tb, a_shape, b_shape, formula) -> None:
    a = gv.constant(np.arange(4.0, dtype=np.float32).reshape(a_shape), name=_n("A"))
    b = gv.constant(np.arange(6.0, dtype=np.float32).reshape(b_shape), name=_n("B"))
    tr = gv.trace_gradients(gv.matmul(a, b, transpose_a=ta, transpose_b=tb), [a, b])
    w = words(tr, "backward")
    assert w.title == "MatMul backward"
    got = w.formula.split("; ")
    want = formula.format(A=x_name(tr, 0), B=x_name(tr, 1)).split("; ")
    assert len(got) == len(want) and all(g.startswith(f) for g, f in zip(got, want)), got


# MatMul's sentence said "multiplies the upstream gradient by the other factor,
# transposed" in every case, beside dL/dQ = grad @ K for matmul(Q, K, transpose_b=True).
@pytest.mark.parametrize("ta,tb,idea", [
    (False, False, "multiplies the upstream gradient by the other factor, transposed: Q gets "
     "the upstream gradient times K transposed, and K gets Q transposed times the upstream "
     "gradient."),
    (False, True, "multiplies the upstream gradient by the other factor; the forward pass "
     "used K transposed (transpose_b), so Q gets the upstream gradient times K as it is, and "
     "K gets the upstream gradient transposed times Q."),
    (True, False, "multiplies the upstream gradient by the other factor; the forward pass "
     "used Q transposed (transpose_a), so Q gets K times the upstream gradient transposed, "
     "and K gets Q as it is times the upstream gradient."),
    (True, True, "multiplies the upstream gradient by the other factor; the forward pass "
     "used both Q and K transposed (transpose_a and transpose_b), so Q gets K transposed "
     "times the upstream gradient transposed, and K gets the upstream gradient transposed "
     "times Q transposed."),
])
@pytest.mark.parametrize("m,k,n", [(2, 2, 2), (2, 3, 4)])
def test_matmul_sentence_says_what_its_formula_does(ta, tb, idea, m, k, n) -> None:
    with gv.name_scope(_n("attn")):
        q = gv.constant(np.arange(m * k, dtype=np.float32).reshape((k, m) if ta else (m, k)),
                        name="Q")
        kk = gv.constant(np.arange(k * n, dtype=np.float32).reshape((n, k) if tb else (k, n)),
                         name="K")
        tr = gv.trace_gradients(gv.matmul(q, kk, transpose_a=ta, transpose_b=tb), [q, kk])
    w = words(tr, "backward")
    assert w.sentence.endswith(f"gets grad, the gradient arriving at its output MatMul "
                               f"({m},{n}), and {idea}"), w.sentence
    # Each "X gets P times R" clause transposes an operand exactly where its formula does.
    spoken = {"the upstream gradient": "grad", "Q": "Q", "K": "K"}
    clauses = re.findall(r"(Q|K) gets (.+?) times (.+?)(?:, and |\.$)", w.sentence)
    written = dict(re.findall(r"dL/d(Q|K) = (\S+ @ \S+):", w.formula))
    assert [c[0] for c in clauses] == ["Q", "K"] and len(written) == 2, (clauses, written)

    def operand(words_: str) -> str:
        base = words_.removesuffix(" transposed").removesuffix(" as it is")
        return spoken[base] + (".T" if words_.endswith(" transposed") else "")
    for x, left, right in clauses:
        assert f"{operand(left)} @ {operand(right)}" == written[x], (x, left, right, written)


def test_matmul_seed_case_formula_and_values() -> None:
    tr = matmul_stop_trace()
    op = next(o for o in tr.ops if o.type == "MatMul")
    a, b = (explain.display_name(tr.tensors[i]) for i in op.inputs)
    assert words(tr, "backward", 1).formula == (  # (StopGradient has a cut, no backward)
        f"dL/d{a} = grad @ {b}.T: (2,3) @ (3,2) -> (2,2) = [[573, 816], [1295, 1844]]")


def test_backward_names_the_inputs_and_why_some_get_nothing() -> None:
    tr = linreg_trace()
    w = words(tr, "backward", 5)  # X * W: X is a constant
    X, W = (explain.display_name(tr.tensors[i]) for i in tr.ops[0].inputs)
    assert w.title == "Mul backward"
    assert "multiplies the upstream gradient by the other input" in w.sentence
    assert w.sentence.startswith(f"Mul of {X} (2,1) and {W} (scalar) gets grad")
    assert f"{X} needs no gradient (leads to none of the xs)" in w.sentence
    # W is a scalar broadcast to (2,1): Mul's gradient for it is not yet dL/dW.
    assert w.formula == f"dL/d({W} broadcast) = grad * {X}: (2,1) -> (2,1) = [[1.753], [10.62]]"


# ---------------------------------------------------------------- formulas name the tensors
# A formula used to say "dL/db = grad * a" for X * W, with a and b the op's
# inputs: in a lesson whose bias is called b it read as the bias's gradient.


def test_lesson_formulas_name_X_W_and_the_bias_b() -> None:
    # In a scope of its own the lesson's tensors read exactly X, W, b, Y.
    with gv.name_scope(_n("lesson")):
        tr = linear_regression()
    assert {explain.display_name(t) for t in tr.tensors} >= {"X", "W", "b", "Y"}
    up = "(2,1) -> (2,1) = [[0.8763], [3.541]]"
    # pred = X * W: the gradient for W is grad times X; X (a constant) gets none.
    # W is a scalar: the (2,1) gradient Mul sends it is named apart from dL/dW.
    assert formulas(tr, "Mul")[1] == (
        "dL/d(W broadcast) = grad * X: (2,1) -> (2,1) = [[1.753], [10.62]]")
    # cost = 0.5 * Sum: a Python number is written as its value, not "Const_1"
    assert formulas(tr, "Mul")[0] == "dL/dSum = grad * 0.5: scalar -> scalar = 0.5"
    # pred = Mul + b: the bias b is named as itself, and only where it is meant.
    assert formulas(tr, "Add") == [f"dL/dMul = grad: {up}; dL/d(b broadcast) = grad: {up}"]
    # Sub = pred - Y: Y is a constant, so only the first input gets a formula.
    assert formulas(tr, "Sub") == [f"dL/dAdd = grad: {up}"]
    assert formulas(tr, "Pow") == [f"dL/dSub = grad * 2 * Sub**(2-1): {up}"]
    assert formulas(tr, "Sum") == [
        "dL/dPow = broadcast_to(grad, shape(Pow)): scalar -> (2,1) = [[0.5], [0.5]]"]
    for s in tr.steps:
        f = describe(tr, s).formula
        assert "dL/da" not in f and "grad * a" not in f and "grad * b" not in f, f


def test_lesson_sentences_name_X_W_and_the_bias_b() -> None:
    # The sentences said "...; here a = X (2,1), b = W ()" and "passes the
    # gradient to a and its negative to b": a letter b beside the bias b.
    with gv.name_scope(_n("lesson")):
        tr = linear_regression()
    sentences = {s.op_type: describe(tr, s).sentence for s in tr.steps if s.kind == "backward"}
    assert sentences["Sub"] == (
        "Sub of Add (2,1) and Y (2,1) gets grad, the gradient arriving at its output Sub "
        "(2,1), and passes the upstream gradient unchanged to Add and its negative "
        "to Y. Y needs no gradient (leads to none of the xs).")
    assert sentences["Add"] == (
        "Add of Mul (2,1) and b (scalar) gets grad, the gradient arriving at its output Add "
        "(2,1), and passes the upstream gradient unchanged to Mul and b. The gradient for b, "
        "dL/d(b broadcast), still has the broadcast shape (2,1): the broadcast reduction that "
        "follows sums it into dL/db, shaped like b (scalar).")
    assert sentences["Pow"].startswith("Pow of Sub (2,1) and 2 (scalar) gets grad")
    assert ("uses d(Sub**2)/dSub = 2 * Sub**(2-1) and, for the exponent 2, "
            "Sub**2 * log(Sub) (log(Sub) taken as 0 for Sub <= 0, as TensorFlow takes it). The constant 2 needs no gradient"
            ) in sentences["Pow"]
    for s in tr.steps:
        sentence = describe(tr, s).sentence
        assert "here " not in sentence and " a = " not in sentence, sentence
        assert "to a " not in sentence and "to b " not in sentence, sentence


def test_x_minus_x_says_which_input_each_part_goes_to() -> None:
    with gv.name_scope(_n("same")):
        x = gv.constant([1.0, 2.0], name="x")
        tr = gv.trace_gradients([x - x, x / x, x * x], x)
    sentences = {s.op_type: describe(tr, s).sentence for s in tr.steps if s.kind == "backward"}
    assert sentences["Sub"].startswith("Sub of x (2,) and x (2,) gets grad")
    assert sentences["Sub"].endswith("passes the upstream gradient unchanged to x (as input 0) "
                                     "and its negative to x (as input 1).")
    assert ("uses d(x/x)/dx (as input 0) = 1/x and d(x/x)/dx (as input 1) = -x/x**2."
            in sentences["RealDiv"])
    assert sentences["Mul"].startswith("Mul of x (2,) and x (2,) gets grad")
    assert explain.input_names(tr, next(s for s in tr.steps if s.kind == "backward")) == [
        "x (as input 0)", "x (as input 1)"]


def test_ideas_use_the_names_the_formulas_use() -> None:
    # Output y, a quoted name and a cut one read the same in sentence and formula.
    with gv.name_scope(_n("act")):
        z = gv.constant([0.0, 1.0], name="z")
        tr = gv.trace_gradients(gv.tanh(z, name="h"), z)
    assert words(tr, "backward").sentence.endswith(
        "uses d(tanh z)/dz = 1 - tanh(z)**2 = 1 - h**2.")
    with gv.name_scope(_n("odd")):
        g = gv.constant([5.0, 6.0], name="grad")
        w = gv.constant([1.0, 2.0], name="weights_of_the_first_hidden_layer")
        tr = gv.trace_gradients(gv.log(g) - w, [g, w])
    long = "weights_of_the_first_hidden_layer"  # never cut
    assert f"passes the upstream gradient unchanged to Log and its negative to {long}." \
        in words(tr, "backward", 0).sentence
    assert words(tr, "backward", 1).sentence.startswith("Log of 'grad' (2,) gets grad")
    assert "uses d(log 'grad')/d'grad' = 1/'grad'." in words(tr, "backward", 1).sentence


def test_every_idea_fills_its_places_from_its_roles() -> None:
    for t, rule in explain.OP_RULES.items():
        for role, _ in explain._PLACE.findall(rule.idea):
            assert role in rule.roles or role == "y", (t, role)
        assert "{" not in explain._PLACE.sub("", rule.idea), t


def test_formulas_follow_the_tensors_not_the_input_order() -> None:
    # Tensors called b and a, in that order: the old letters would swap them.
    with gv.name_scope(_n("swap")):
        b = gv.constant([3.0, 1.0], name="b")
        a = gv.constant([2.0, 5.0], name="a")
        tr = gv.trace_gradients([b - a, b * a], [a, b])
    assert formulas(tr, "Sub") == ["dL/db = grad: (2,) -> (2,) = [1, 1]; "
                                   "dL/da = -grad: (2,) -> (2,) = [-1, -1]"]
    assert formulas(tr, "Mul") == ["dL/db = grad * a: (2,) -> (2,) = [2, 5]; "
                                   "dL/da = grad * b: (2,) -> (2,) = [3, 1]"]


def test_matmul_formula_in_a_lesson() -> None:
    with gv.name_scope(_n("lesson")):
        X = gv.constant([[2.0], [3.0]], name="X")
        W = gv.Variable([[1.5]], name="W")
        b = gv.Variable(0.5, name="b")
        tr = gv.trace_gradients(gv.reduce_sum(gv.matmul(X, W) + b), [W, b])
    assert formulas(tr, "MatMul") == ["dL/dW = X.T @ grad: (1,2) @ (2,1) -> (1,1) = [[5]]"]
    assert formulas(tr, "Add") == [
        "dL/dMatMul = grad: (2,1) -> (2,1) = [[1], [1]]; "
        "dL/d(b broadcast) = grad: (2,1) -> (2,1) = [[1], [1]]"]


def test_unary_formula_names_its_input_and_its_output() -> None:
    # Tanh's rule uses its output y: the formula says which tensor that is.
    with gv.name_scope(_n("act")):
        z = gv.constant([0.0, 1.0], name="z")
        h = gv.tanh(z, name="h")
        tr = gv.trace_gradients(h, z)
    assert formulas(tr, "Tanh") == ["dL/dz = grad * (1 - h**2): (2,) -> (2,) = [1, 0.42]"]
    w = words(tr, "backward")
    assert "arriving at its output h" in w.sentence


def test_x_times_x_says_which_input_each_gradient_is_for() -> None:
    tr = square_trace()
    x = explain.display_name(tr.tensors[tr.xs[0]])
    assert formulas(tr, "Mul") == [
        f"dL/d{x} (as input 0) = grad * {x}: (2,) -> (2,) = [1, 2]; "
        f"dL/d{x} (as input 1) = grad * {x}: (2,) -> (2,) = [1, 2]"]
    m = gv.constant([[1.0, 2.0], [3.0, 4.0]], name=_n("m"))
    tr = gv.trace_gradients(gv.matmul(m, m), m)
    m = x_name(tr, 0)
    assert formulas(tr, "MatMul") == [
        f"dL/d{m} (as input 0) = grad @ {m}.T: (2,2) @ (2,2) -> (2,2) = [[3, 7], [3, 7]]; "
        f"dL/d{m} (as input 1) = {m}.T @ grad: (2,2) @ (2,2) -> (2,2) = [[4, 4], [6, 6]]"]


def test_names_that_would_read_the_same_or_as_maths() -> None:
    # Two Ws from two scopes keep their scopes; a tensor called grad is quoted.
    s1, s2 = _n("layer"), _n("layer")
    with gv.name_scope(s1):
        w1 = gv.constant([1.0, 2.0], name="W")
    with gv.name_scope(s2):
        w2 = gv.constant([3.0, 4.0], name="W")
    with gv.name_scope(_n("odd")):
        g = gv.constant([5.0, 6.0], name="grad")
        y = w1 * w2 * g
    tr = gv.trace_gradients(y, [w1, w2, g])
    assert formulas(tr, "Mul") == [
        "dL/dMul = grad * 'grad': (2,) -> (2,) = [5, 6]; "
        "dL/d'grad' = grad * Mul: (2,) -> (2,) = [3, 8]",
        f"dL/d'{s1}/W' = grad * '{s2}/W': (2,) -> (2,) = [15, 24]; "
        f"dL/d'{s2}/W' = grad * '{s1}/W': (2,) -> (2,) = [5, 12]"]


def test_long_names_are_never_cut_in_formulas() -> None:
    # Cut, "weights_of_the_first_hidden..." named neither of two tensors for sure.
    with gv.name_scope(_n("long")):
        w = gv.constant([1.0, 2.0], name="weights_of_the_first_hidden_layer")
        v = gv.constant([3.0, 4.0], name="weights_of_the_first_hidden_layer_too")
        tr = gv.trace_gradients(w * 2.0, w)
    assert formulas(tr, "Mul") == [
        "dL/dweights_of_the_first_hidden_layer = grad * 2: (2,) -> (2,) = [2, 2]"]
    tr = gv.trace_gradients(w - v, [w, v])
    assert formulas(tr, "Sub") == [
        "dL/dweights_of_the_first_hidden_layer = grad: (2,) -> (2,) = [1, 1]; "
        "dL/dweights_of_the_first_hidden_layer_too = -grad: (2,) -> (2,) = [-1, -1]"]


def test_reduce_sentence_says_broadcast_axes_and_shapes() -> None:
    tr = linreg_trace()
    w = words(tr, "reduce", 1)
    name = explain.display_name(tr.tensors[tr.xs[0]])
    assert w.title == "broadcast reduction"
    assert w.sentence.startswith(
        f"{name} was broadcast from scalar to (2,1) in the forward pass")
    assert "so its gradient is summed over axes (0, 1): (2,1) -> scalar" in w.sentence
    assert w.formula == f"dL/d{name} = sum(grad, axis=(0, 1)): (2,1) -> scalar = 12.38"


def test_reduce_with_keepdims() -> None:
    x = gv.constant(np.ones((1, 3), np.float32))
    y = gv.constant(np.ones((2, 3), np.float32))
    tr = gv.trace_gradients(x * y, x)
    w = words(tr, "reduce")
    assert "keepdims=True" in w.formula and "(2,3) -> (1,3)" in w.formula


# ---------------------------------------------------------------- broadcast gradients
# An op's gradient for a broadcast input has the broadcast shape until the
# reduction that follows sums it: Add's formula read "dL/db = grad: (3,2) -> (3,2)"
# right before the reduction's "dL/db = sum(grad, axis=0)", two different arrays
# by one name.  Only an array of b's own shape may be called dL/db.


def _add_bias() -> Trace:
    X = gv.constant(np.arange(6.0, dtype=np.float32).reshape(3, 2) / 6, name=_n("X"))
    b = gv.Variable([0.1, 0.2], name=_n("b"))
    return gv.trace_gradients(gv.reduce_sum(gv.tanh(X + b)), [b])


def _scalar_weight() -> Trace:
    W = gv.Variable(1.5, name=_n("W"))
    X = gv.constant([[2.0], [3.0]], name=_n("X"))
    return gv.trace_gradients(gv.reduce_sum(W * X), [W])


def _bias_add() -> Trace:
    X = gv.constant(np.ones((2, 3, 4), np.float32), name=_n("X"))
    bias = gv.Variable([1.0, 2.0, 3.0, 4.0], name=_n("bias"))
    return gv.trace_gradients(gv.reduce_sum(gv.nn.bias_add(X, bias)), [bias])


def _sub_bias() -> Trace:
    Y = gv.constant(np.ones((3, 2), np.float32), name=_n("Y"))
    b = gv.Variable([1.0, 2.0], name=_n("b"))
    return gv.trace_gradients(gv.reduce_sum(gv.square(Y - b)), [b])


def _batched_matmul() -> Trace:
    A = gv.Variable(np.ones((2, 3, 4), np.float32), name=_n("A"))
    B = gv.Variable(np.ones((4, 5), np.float32), name=_n("B"))
    return gv.trace_gradients(gv.reduce_sum(gv.matmul(A, B)), [A, B])


def _both_branches() -> Trace:
    c = gv.constant(np.array([[True, False], [False, True], [True, True]]), name=_n("c"))
    x = gv.Variable([1.0, 2.0], name=_n("x"))
    return gv.trace_gradients(gv.reduce_sum(gv.where(c, x, x)), [x])


_SHAPE = re.compile(r"scalar|\(\d+(?:,\d+)*,?\)")


def _own_name(name: str) -> re.Pattern:
    """dL/d<name> as a word: not dL/d<name>2, and not dL/d(<name> broadcast)."""
    return re.compile(re.escape(f"dL/d{name}") + r"(?![\w(])(?! broadcast)")


@pytest.mark.parametrize("build", [_add_bias, _scalar_weight, _bias_add, _sub_bias,
                                   _batched_matmul, _both_branches])
def test_only_an_array_of_the_inputs_own_shape_is_called_its_gradient(build) -> None:
    tr = build()
    broadcast_named = 0
    for x in tr.xs:
        name = explain.display_name(tr.tensors[x])
        own = tr.tensors[x].shape
        own_text = explain.format_shape(own)
        dldx = _own_name(name)
        for s in tr.steps:
            w = describe(tr, s)
            assert not dldx.search(w.title), w.title
            # In a sentence, dL/dx may only be followed (up to the clause's end) by x's shape.
            for m in dldx.finditer(w.sentence):
                clause = re.split(r"\. |;|$", w.sentence[m.end():])[0]
                assert set(_SHAPE.findall(clause)) <= {own_text}, (s.index, w.sentence)
            for f in w.formulas:
                if dldx.fullmatch(f.target) and f.result is not None:
                    assert f.result.shape == own, (s.index, str(f))
            for part in w.formula.split("; "):
                target, _, rest = part.partition(" = ")
                shapes = rest.rpartition(" -> ")[2] if " -> " in rest else ""
                if dldx.fullmatch(target) and shapes:
                    assert shapes.split(" = ")[0] == own_text, (s.index, part)
            for label, array in explain.labelled_arrays(tr, s):
                if dldx.search(label):
                    assert array.shape == own, (s.index, label, array.shape)
                if f"dL/d({name} broadcast" in label:
                    assert array.shape != own, (s.index, label)
                    broadcast_named += 1
        # The diagram: an edge's label shows its shape; a hover text's second line does.
        for tip in re.findall(r'tooltip="((?:[^"\\]|\\.)*)"', tr.to_dot().source):
            lines = tip.split("\n")
            if dldx.search(lines[0]) and len(lines) > 1 and _SHAPE.match(lines[1]):
                assert _SHAPE.match(lines[1]).group() == own_text, tip
        for label in re.findall(r"label=<(.*?)> ", tr.to_dot().source):
            if dldx.search(label):
                assert set(re.findall(r"\u2191 (" + _SHAPE.pattern + ")", label)) <= {own_text}
    assert broadcast_named, "no array named as a broadcast gradient"


def test_broadcast_gradient_has_its_own_name_in_every_step() -> None:
    tr = _add_bias()
    b = explain.display_name(tr.tensors[tr.xs[0]])
    add = next(s for s in tr.steps if s.kind == "backward" and s.op_type == "Add")
    X = explain.display_name(tr.tensors[tr.ops[add.op].inputs[0]])
    w = describe(tr, add)
    assert w.formula == f"dL/d({b} broadcast) = grad: (3,2) -> (3,2)"
    assert [f.target for f in w.formulas] == [f"dL/d({b} broadcast)"]
    assert w.sentence.endswith(
        f"The gradient for {b}, dL/d({b} broadcast), still has the broadcast shape (3,2): the "
        f"broadcast reduction that follows sums it into dL/d{b}, shaped like {b} (2,). "
        f"{X} needs no gradient (leads to none of the xs).")
    assert [label for label, _ in explain.labelled_arrays(tr, add)][1:] == [
        f"dL/d({b} broadcast)"]
    w = words(tr, "reduce")
    assert w.formula.startswith(f"dL/d{b} = sum(grad, axis=0): (3,2) -> (2,)")
    assert w.sentence.endswith(f"The sum takes dL/d({b} broadcast), the gradient Add sent it, "
                               f"to dL/d{b}.")
    reduce = next(s for s in tr.steps if s.kind == "reduce")
    assert [label for label, _ in explain.labelled_arrays(tr, reduce)] == [
        f"before: dL/d({b} broadcast), summed over axes (0,)", f"after: dL/d{b}"]
    dot = tr.to_dot().source
    assert f"sends back to its input 1, {b}: dL/d({b} broadcast), before the broadcast is " \
        "summed" in dot
    assert f"broadcast reduction: dL/d({b} broadcast) summed over axes (0,) into dL/d{b}" in dot


def test_gradient_target_names_a_use_of_a_repeated_input() -> None:
    assert explain.gradient_target("b", (2,), (2,)) == "dL/db"
    assert explain.gradient_target("W", (2, 1), ()) == "dL/d(W broadcast)"
    assert explain.gradient_target("x (as input 2)", (3, 2), (2,)) == \
        "dL/d(x broadcast, as input 2)"
    assert explain.gradient_target("x (as input 2)", (2,), (2,)) == "dL/dx (as input 2)"
    tr = _both_branches()
    x = explain.display_name(tr.tensors[tr.xs[0]])
    step = next(s for s in tr.steps if s.kind == "backward" and s.op_type == "SelectV2")
    assert [f.target for f in describe(tr, step).formulas] == [
        f"dL/d({x} broadcast, as input 1)", f"dL/d({x} broadcast, as input 2)"]


def test_accumulate_lists_the_contributions() -> None:
    tr = square_trace()
    w = words(tr, "accumulate")
    name = explain.display_name(tr.tensors[tr.xs[0]])
    assert w.sentence == (f"{name} is used twice: by Mul = {name} * {name} as input 0 (g1) "
                          "and input 1 (g2). Its gradient is the sum of the 2 contributions: "
                          "[1, 2] + [1, 2] = [2, 4].")
    assert w.formula == f"dL/d{name} = g1 + g2: 2\u00d7(2,) -> (2,) = [2, 4]"
    w = words(partial_trace(False), "accumulate")
    assert "used twice: by Add" in w.sentence and "as input 0 (g1), and by Mul" in w.sentence
    assert "as input 1 (g2)" in w.sentence
    assert "1 + 2 = 3" in w.sentence


@pytest.mark.parametrize("build,reason,phrase", [
    (matmul_stop_trace, "stop_gradient", "a stop_gradient op passes no gradient"),
    (lambda: partial_trace(True), "stop_gradients", "is in stop_gradients"),
])
def test_cut_sentences_give_the_reason(build, reason, phrase) -> None:
    tr = build()
    w = words(tr, "cut")
    assert w.title == f"cut: {reason}"
    assert phrase in w.sentence


def test_integer_cut_and_integer_result() -> None:
    v = gv.Variable(2.0, name=_n("v"))
    i = gv.cast(v, gv.int32)
    with pytest.warns(UserWarning, match="integers are constants"):
        tr = gv.trace_gradients(gv.cast(i, gv.float32) * v, [v, i])
    cut = words(tr, "cut")
    assert "dtype int32" in cut.sentence and "integer tensors are constant" in cut.sentence
    res = words(tr, "result", 1)
    assert "gets None" in res.sentence and "integer" in res.sentence


def test_results_connected_none_and_zeros() -> None:
    tr = linreg_trace()
    w = words(tr, "result", 0)
    name = x_name(tr, 0)
    assert f"final gradient for {name} (scalar), xs[0]," in w.sentence
    assert w.formula.endswith("= 12.38") and w.title == f"result for {name}"
    none = words(unconnected_trace("none"), "result")
    assert "gets None" in none.sentence and "unconnected_gradients='none'" in none.sentence
    assert none.formula.endswith("= None")
    zero = words(unconnected_trace("zero"), "result")
    assert "gets zeros shaped like it, (1,2)" in zero.sentence
    assert "unconnected_gradients='zero'" in zero.sentence
    assert zero.formula.endswith(") = [[0, 0]]") and "zeros_like(" in zero.formula


def test_jacobian_steps_name_their_pass() -> None:
    x = gv.constant([1.0, 2.0])
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tr = tape.trace_jacobian(y, x)
    seeds = [describe(tr, s) for s in tr.steps if s.kind == "seed"]
    assert "row 2 of the Jacobian" in seeds[1].sentence
    assert all("(pass 2 of 2)" in describe(tr, s).title for s in tr.steps if s.pass_index == 1)


def test_jacobian_results_speak_of_rows_and_the_whole_jacobian() -> None:
    # The last pass's result step said "The final gradient for xs[0] = x (2,)
    # is ready: [0, 4]" under a Jacobian of [[2, 0], [0, 4]].
    x = gv.constant([1.0, 2.0], name=_n("jx"))
    with gv.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tr = tape.trace_jacobian(y, x)
    first, last = [describe(tr, s) for s in tr.steps if s.kind == "result"]
    assert first.sentence.startswith("Row 1 of the Jacobian") and "[2, 0]" in first.sentence
    assert "final gradient" not in last.sentence
    assert last.sentence.startswith("Row 2 of the Jacobian")
    assert "is complete: 2 passes, one row each, make a (2,2) matrix: [[2, 0], [0, 4]]" \
        in last.sentence
    assert last.formula.endswith("= [[2, 0], [0, 4]]")
    whole = explain.describe_jacobian(tr, 0)
    assert whole.title == f"Jacobian for {x_name(tr, 0)}" and "[[2, 0], [0, 4]]" in whole.sentence
    with pytest.raises(ValueError, match="x_index 3 has no result"):
        explain.describe_jacobian(tr, 3)


def test_every_engine_op_type_has_words() -> None:
    leaves = {"Const", "VariableV2"}
    missing = [t for t in gv.OpType.all() if t not in leaves and t not in explain.OP_RULES]
    assert not missing
    for t, rule in explain.OP_RULES.items():
        assert rule.idea and rule.roles and len(rule.formulas) >= 1, t


def test_unknown_op_type_gets_an_honest_generic_sentence() -> None:
    data = json.loads(square_trace().to_json())
    data["ops"][0]["type"] = "MyOp"
    for s in data["steps"]:
        if s["kind"] == "backward":
            s["op_type"], s["rule"] = "MyOp", "my_op_grad"
    tr = Trace.from_dict(data)
    w = words(tr, "backward")
    assert w.title == "MyOp backward"
    assert "has the gradient function my_op_grad" in w.sentence
    x = explain.display_name(tr.tensors[tr.xs[0]])
    assert w.sentence.endswith(f"into a gradient for each of its inputs, {x} (2,) and {x} (2,).")
    assert f"dL/d{x} (as input 0) = my_op_grad(op, grad)[0]: (2,) -> (2,)" in w.formula
    assert f"dL/d{x} (as input 1) = my_op_grad(op, grad)[1]: (2,) -> (2,)" in w.formula


def test_bad_step_and_legend_mark() -> None:
    tr = square_trace()
    with pytest.raises(ValueError, match="step 9 out of range"):
        describe(tr, 9)
    with pytest.raises(TypeError):
        describe(tr, "1")
    with pytest.raises(ValueError, match="unknown legend mark 'blob'"):
        explain.legend(["blob"])
    assert [m for m, _ in explain.legend()] == list(explain.LEGEND)


def test_formatting() -> None:
    from gradviz.trace import ArrayData
    a = ArrayData.of(np.array([np.nan, np.inf, -np.inf, 1.5], np.float32))
    assert explain.format_array(a) == "[nan, inf, -inf, 1.5]"
    big = ArrayData.of(np.arange(200.0))
    assert explain.format_array(big) == "min 0 mean 99.5 max 199"
    assert explain.format_shape([]) == "scalar"


def test_a_step_drawn_inside_a_group_still_names_its_op_and_shapes() -> None:
    tr = chain_trace()
    s = tr.steps[len(tr.steps) // 2]
    assert s.kind == "backward"
    assert diagram.step_ids(tr, s.index)[0].startswith("group")  # drawn as a run of ops
    op = tr.ops[s.op]
    title, sentence, formula = describe(tr, s)
    # one of several Tanh ops: the title says which, by the name the diagram shows
    assert title == f"{op.type} backward ({explain.op_name(tr, s.op)})"
    assert explain.display_name(tr.tensors[op.inputs[0]]) in sentence
    assert "(4,4)" in sentence and "(4,4) -> (4,4)" in formula


def test_python_numbers_read_as_their_value_named_constants_by_name() -> None:
    x = gv.constant([1.0, 2.0], name=_n("x"))
    tr = gv.trace_gradients(x * -0.5, x)
    assert formulas(tr, "Mul")[0].startswith(f"dL/d{x_name(tr, 0)} = grad * (-0.5):")
    half = gv.constant(0.5, name=_n("half"))
    tr = gv.trace_gradients(x * half, x)
    assert f"grad * {explain.display_name(tr.tensors[tr.ops[0].inputs[1]])}:" in \
        formulas(tr, "Mul")[0]
    assert "0.5:" not in formulas(tr, "Mul")[0].split("=")[1]


def test_a_loaded_trace_whose_op_lacks_an_input_gets_the_generic_sentence() -> None:
    # JSON from elsewhere: a MatMul with one input (and a step that agrees) must not crash
    a = gv.constant([[1.0, 2.0]], name=_n("a"))
    b = gv.constant([[1.0], [2.0]], name=_n("b"))
    data = json.loads(gv.trace_gradients(gv.matmul(a, b), a).to_json())
    data["ops"][0]["inputs"] = data["ops"][0]["inputs"][:1]
    for step in data["steps"]:
        if step["kind"] == "backward":
            step["grads"], step["needed"] = step["grads"][:1], step["needed"][:1]
    tr = Trace.from_json(json.dumps(data))
    words = [describe(tr, i) for i in range(len(tr.steps))]
    assert words[1].title == "MatMul backward" and "_matmul_grad(op, grad)[0]" in words[1].formula


def test_every_op_has_a_name_no_other_op_in_its_trace_has() -> None:
    # "by Mul input 1, Mul input 0" named two different ops alike.
    s1, s2 = _n("layer"), _n("layer")
    x = gv.constant([[1.0, 2.0]], name=_n("x"))
    with gv.name_scope(s1):
        h = gv.tanh(gv.matmul(x, gv.Variable([[1.0], [2.0]], name="W")))
    with gv.name_scope(s2):
        y = gv.tanh(gv.matmul(h, gv.Variable([[3.0]], name="W")))
    z = gv.square(y, name="z")
    tr = gv.trace_gradients(z * z * z, x)
    names = explain.op_names(tr)
    assert len(set(names)) == len(names) == len(tr.ops)
    assert {f"{s1}/MatMul", f"{s2}/MatMul"} <= set(names)  # the scope back where needed
    assert {"Mul", "Mul_1"} <= set(names)  # as the diagram shows them
    titles = [describe(tr, s).title for s in tr.steps if s.kind == "backward"]
    assert len(set(titles)) == len(titles), titles
    acc = words(tr, "accumulate")
    assert acc.sentence.startswith("z is used 3 times: by Mul_1 = Mul * z as input 1 (g1), "
                                   "and by Mul = z * z as input 0 (g2) and input 1 (g3).")
    # a scoped name would read as a division in an expression: the name alone
    assert explain.op_phrase(tr, tr.tensors[tr.ys[0]].op) == "Mul_1 = Mul * z"
    sq = next(o.id for o in tr.ops if o.type == "Square")
    assert explain.op_phrase(tr, sq) == "z"
