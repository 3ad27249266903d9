"""A lesson's questions that are not one step's gradient (gradviz/views/practice/asks.py).

Each form is checked with numbers worked out by hand: the right answer is right,
each slip is named with its own sentence, anything else is "not yet" with the
rule and then the answer as hints.  A slip that gives the right answer is
refused when the question is made, so no question can call a slip right.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import gradviz as gv
from gradviz.views.practice import SLIPS
from gradviz.views.practice.asks import FORMS


def said(kind: str) -> str:
    title, why = SLIPS[kind]
    return f"{title[0].upper()}{title[1:]}. {why}"


def test_a_value_question_names_each_slip_and_hints_the_rule_then_the_answer():
    x = gv.constant([1.0, 2.0, 3.0], name="x")
    grad_ys = 1 / (2 * x.numpy())
    ex = gv.exercise.value("Which grad_ys makes gradients(x * x, x, grad_ys) all ones?",
                           grad_ys, hint="grad_ys * 2 * x = 1", given={"x": x},
                           slips={"derivative_not_inverted": 2 * x.numpy(),
                                  "grad_ys_ignored": np.ones(3)})
    assert "x = [1, 2, 3] (3,)" in str(ex.ask())
    assert ex.check([0.5, 0.25, 0.167]).right  # three digits are enough
    f = ex.check([2, 4, 6])
    assert (f.verdict, f.kind, f.message) == ("misconception", "derivative_not_inverted",
                                              said("derivative_not_inverted"))
    assert ex.check([1, 1, 1]).kind == "grad_ys_ignored"
    first, second = ex.check([9, 9, 9]), ex.check([9, 9, 9])
    assert first.verdict == second.verdict == "not_yet"
    assert (first.hint, second.hint) == ("grad_ys * 2 * x = 1",
                                         "The answer: [0.5, 0.25, 0.1667]")
    assert ex.check([0.5, 0.25]).verdict == "shape"


def test_a_shape_question_takes_shapes_or_arrays_and_names_the_full_jacobian():
    ex = gv.exercise.shape("What shape does batch_jacobian return?", np.zeros((8, 2, 3)),
                           hint="(batch, out, in)",
                           slips={"jacobian_full": (8, 2, 8, 3), "shape_transposed": (8, 3, 2)})
    assert ex.check((8, 2, 3)).right and ex.check([8, 2, 3]).right
    assert ex.check(np.zeros((8, 2, 8, 3))).kind == "jacobian_full"
    assert ex.check((8, 3, 2)).message == said("shape_transposed")
    assert ex.check(()).verdict == "not_yet"
    with pytest.raises(ValueError, match="a shape is a tuple of sizes"):
        ex.check("8 by 2")


def test_a_count_reads_a_traces_passes():
    x = gv.Variable([1.0, 2.0, 3.0], name="x")
    with gv.GradientTape(persistent=True) as tape:
        y = x * x
    jac = tape.trace_jacobian(y, x)
    ex = gv.exercise.count("How many backward passes does the Jacobian of y take?", jac,
                           hint="one row a pass", slips={"passes_one": 1})
    assert jac.passes == 3 and ex.check(3).right and ex.check(3.0).right
    assert ex.check(1).kind == "passes_one"
    with pytest.raises(ValueError, match="whole number"):
        ex.check(2.5)
    traced = gv.trace_gradients(gv.reduce_sum(x * x), x)
    assert gv.exercise.count("passes?", traced, hint="h", slips={"passes_one": 2}).check(1).right


def test_a_choice_names_the_slip_of_each_wrong_option():
    ex = gv.exercise.choice(
        "Why does unconnected_gradients='zero' hide a layer left out of the model?",
        {"a": "Its weights get zeros, which look like a layer that has learned.",
         "b": "Its weights get zeros because they were initialised at zero.",
         "c": "The zeros are what stop_gradient would give."},
        "a", hint="What does None say that zeros do not?",
        slips={"b": "unconnected_zero", "c": "stop_op_passes"})
    text = str(ex.ask())
    assert "  a) Its weights get zeros" in text and "check('a')" in text
    assert ex.check("A").right and ex.check(" a) ").right
    assert ex.check("b").message == said("unconnected_zero")
    with pytest.raises(ValueError, match="choose one of a, b, c"):
        ex.check("d")
    with pytest.raises(ValueError, match="option 'c' is wrong but names no slip"):
        gv.exercise.choice("?", {"a": "x", "b": "y", "c": "z"}, "a", hint="h",
                           slips={"b": "unconnected_zero"})


def test_which_tensors_get_none_is_read_from_the_traces():
    a = gv.Variable(1.0, name="a")
    s = gv.stop_gradient(2.0 * a, name="s")
    k = gv.constant(3, name="k")
    u = gv.Variable(5.0, name="u")
    loss = s * a + gv.cast(k, gv.float32)
    with pytest.warns(UserWarning, match="integers are constants"):
        traced = gv.trace_gradients(loss, [a, s, k, u])
    ex = gv.exercise.nones(traced, hint="None: no path the walk may follow",
                           slips={"unconnected_zero": ["k"], "integer_gets_gradient": ["u"]})
    assert "Which of a, s, k, u get None" in str(ex.ask())
    assert ex.check(["k", "u"]).right and ex.check({"u:0", "k"}).right
    assert ex.check(["k"]).kind == "unconnected_zero"
    assert ex.check([]).verdict == "not_yet"
    with pytest.raises(ValueError, match="'b': not one of the tensors asked about: a, s, k, u"):
        ex.check(["b"])


def test_a_slip_that_gives_the_right_answer_is_refused():
    with pytest.raises(ValueError, match="'passes_one' gives the right answer here"):
        gv.exercise.count("?", 1, hint="h", slips={"passes_one": 1})
    with pytest.raises(ValueError, match="'jacobian_full' and 'shape_transposed' give the "
                                         "same answer"):
        gv.exercise.shape("?", (2, 3), hint="h",
                          slips={"shape_transposed": (3, 2), "jacobian_full": (3, 2)})
    with pytest.raises(ValueError, match="gives the right answer"):  # within the tolerance
        gv.exercise.value("?", [1.0, 2.0], hint="h", slips={"grad_ys_ignored": [1.001, 2.0]})


@pytest.mark.parametrize("make, message", [
    (lambda: gv.exercise.count("?", 3, hint="h", slips={}), "at least one"),
    (lambda: gv.exercise.count("?", 3, hint="h", slips={"made_up": 2}), "unknown slip 'made_up'"),
    (lambda: gv.exercise.count("", 3, hint="h", slips={"passes_one": 1}), "prompt"),
    (lambda: gv.exercise.count("?", 3, hint="", slips={"passes_one": 1}), "hint"),
    (lambda: gv.exercise.count("?", -1, hint="h", slips={"passes_one": 1}), "whole number"),
    (lambda: gv.exercise.nones([1], hint="h", slips={"passes_one": 1}), "expected a Trace"),
])
def test_a_badly_made_question_says_what_is_wrong(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


@pytest.mark.parametrize("form", FORMS)
def test_an_unanswered_check_asks_for_an_answer_and_renders(form):
    p, q = gv.Variable(1.0, name="p"), gv.Variable(1.0, name="q")
    makers = {
        "value": lambda: gv.exercise.value("?", 2.0, hint="h", slips={"grad_ys_ignored": 1.0}),
        "shape": lambda: gv.exercise.shape("?", (2,), hint="h", slips={"shape_transposed": (1, 2)}),
        "count": lambda: gv.exercise.count("?", 2, hint="h", slips={"passes_one": 1}),
        "choice": lambda: gv.exercise.choice("?", {"a": "x", "b": "y"}, "b", hint="h",
                                             slips={"a": "passes_one"}),
        "nones": lambda: gv.exercise.nones(gv.trace_gradients(p * 2.0, [p, q]), hint="h",
                                           slips={"unconnected_zero": []}),
    }
    ex = makers[form]()
    f = ex.check(...)
    assert f.verdict == "unanswered" and "in place of ..." in f.message
    assert "gv-unanswered" in f._repr_html_()
    assert f"gv-question gv-{form}" in ex.ask()._repr_html_()
    assert repr(ex).startswith(f"<Exercise: a {form}, ")
    with pytest.raises(TypeError, match="check_shape asks a step's gradient's shape"):
        ex.check_shape((2,))


def test_the_feedback_names_its_slip_in_the_html():
    ex = gv.exercise.count("?", 3, hint="h", slips={"passes_one": 1})
    assert "data-kind='passes_one'" in ex.check(1)._repr_html_()
    assert "gv-right" in ex.check(3)._repr_html_()


def test_an_exercise_as_json_carries_the_words_its_check_says():
    ex = gv.exercise.value("Which grad_ys?", [0.5, 0.25], hint="grad_ys * 2 * x = 1",
                           given={"x": [1.0, 2.0]},
                           slips={"derivative_not_inverted": [2.0, 4.0]})
    d = json.loads(json.dumps(ex.to_dict(), allow_nan=False))
    assert d["form"] == "value" and d["answer"] == {"shape": [2], "values": [0.5, 0.25]}
    assert d["right"] == ex.check([0.5, 0.25]).message
    (slip,) = d["slips"]
    assert slip["message"] == ex.check([2, 4]).message and slip["kind"] == "derivative_not_inverted"
    assert d["not_yet"] == ex.check([7, 7]).message
    assert d["hints"] == list(ex.question.hints)
    assert d["given"] == [{"label": "x", "shape": [2], "values": [1.0, 2.0]}]
    nones = gv.exercise.nones(gv.trace_gradients(gv.Variable(1.0, name="p") * 2.0,
                                                 [gv.Variable(1.0, name="r")]),
                              hint="h", slips={"unconnected_zero": []}).to_dict()
    assert nones["answer"] == ["r"] and nones["options"] == [{"key": "r", "text": ""}]
    X = gv.constant([[1.0], [2.0]], name="X")
    W = gv.Variable(3.0, name="W")
    step = gv.exercise(gv.trace_gradients(gv.reduce_sum(X * W), W), step=2).to_dict()
    assert step["form"] == "step" and step["ask"].startswith("Step 2: ")
    assert step["question"]["answer"] == [[1.0], [2.0]]


def test_a_report_asks_exercises_and_refuses_anything_else(tmp_path):
    x = gv.constant(2.0, name="x")
    traced = gv.trace_gradients(x * x, x)
    ex = gv.exercise.count("passes?", 2, hint="h", slips={"passes_one": 1})
    page = gv.export_html(traced, tmp_path / "r.html", exercises=[ex]).read_text("utf-8")
    assert 'id="gv-exercises-data"' in page and "Exercises (1)" in page
    for bad, message in [(ex, "exercises: expected a list"),
                         ([ex, "x"], r"exercises\[1\]: expected an exercise")]:
        with pytest.raises(TypeError, match=message):
            gv.export_html(traced, tmp_path / "bad.html", exercises=bad)
    assert not (tmp_path / "bad.html").exists()
