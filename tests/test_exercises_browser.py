"""A lesson's exercises in the offline report: asked in the page, answered there, and
checked as ``gv.exercise(...).check(...)`` checks them in the notebook.

Each answer below is typed into the page as a learner types it and given to
Python's ``check`` as the notebook takes it; the page must show the same verdict,
name the same slip and say the same words, for every form of question.
"""

from __future__ import annotations

import pathlib

import pytest

import gradviz as gv
from gradviz.views.report import export_html

pytestmark = pytest.mark.browser


def lesson_exercises() -> list[gv.views.practice.Exercise]:
    """One exercise of each form, small enough to work out by hand."""
    X = gv.constant([[1.0], [2.0]], name="X")
    W = gv.Variable(3.0, name="W")
    tiny = gv.trace_gradients(gv.reduce_sum(X * W), W, title="sum(X * W)")
    p = gv.Variable(1.0, name="p")
    q = gv.stop_gradient(2.0 * p, name="q")
    u = gv.Variable(4.0, name="u")
    return [
        gv.exercise(tiny, step=2),  # Mul's gradient to W's broadcast copy: X
        gv.exercise.value("x = [1, 2]: which grad_ys makes gradients(x * x, x, grad_ys) ones?",
                          [0.5, 0.25], hint="grad_ys * 2 * x = 1", given={"x": [1.0, 2.0]},
                          slips={"derivative_not_inverted": [2.0, 4.0],
                                 "grad_ys_ignored": [1.0, 1.0]}),
        gv.exercise.shape("x (8, 3), out = x @ w (8, 2): what shape is batch_jacobian(out, x)?",
                          (8, 2, 3), hint="(batch, out, in)",
                          slips={"jacobian_full": (8, 2, 8, 3), "shape_transposed": (8, 3, 2)}),
        gv.exercise.count("A Jacobian of 4 outputs and 16 inputs: how many backward passes?", 4,
                          hint="one row a pass",
                          slips={"passes_one": 1, "passes_per_input": 16}),
        gv.exercise.choice("Why does unconnected_gradients='zero' hide a layer left out?",
                           {"a": "Its weights get zeros, which change nothing, silently.",
                            "b": "Zero is its true gradient, so nothing is hidden."},
                           "a", hint="what does None say?", slips={"b": "unconnected_zero"}),
        gv.exercise.nones(gv.trace_gradients(p * q, [p, q, u]), hint="no path: None",
                          slips={"unconnected_zero": [], "stopped_gets_nothing": ["q", "u"]}),
    ]


# (exercise, what the learner types in the page, the same answer as Python takes it);
# a choice is the option's letter and a nones answer the names ticked.
TYPED = [
    (0, "[[1], [2]]", [[1.0], [2.0]]),
    (0, "[[3], [3]]", [[3.0], [3.0]]),  # multiplied by the wrong input
    (0, "[1, 2]", [1.0, 2.0]),  # the right numbers in the wrong shape
    (0, "[[7], [7]]", [[7.0], [7.0]]),
    (1, "[0.5, 1/4]", [0.5, 0.25]),
    (1, "[2, 4]", [2.0, 4.0]),
    (1, "[1, 1]", [1.0, 1.0]),
    (1, "[0.5, 0.25, 0]", [0.5, 0.25, 0.0]),  # a wrong shape
    (1, "[9, 9]", [9.0, 9.0]),
    (2, "(8, 2, 3)", (8, 2, 3)),
    (2, "8x2x8x3", (8, 2, 8, 3)),
    (2, "[8, 3, 2]", (8, 3, 2)),
    (2, "scalar", ()),
    (3, "4", 4),
    (3, "1", 1),
    (3, "16", 16),
    (3, "5", 5),
    (4, "a", "a"),
    (4, "b", "b"),
    (5, ["u"], ["u"]),
    (5, [], []),
    (5, ["q", "u"], ["q", "u"]),
    (5, ["p", "u"], ["p", "u"]),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    exercises = lesson_exercises()
    out = tmp_path_factory.mktemp("exercises") / "exercises.html"
    X = gv.constant([[1.0], [2.0]], name="X")
    W = gv.Variable(3.0, name="W")
    return export_html(gv.trace_gradients(gv.reduce_sum(X * W), W), out, title="exercises",
                       exercises=exercises)


def type_answer(card, typed) -> None:
    """Give the card the answer: text in its box, a letter's radio button, names ticked."""
    form = card.get_attribute("data-form")
    if form == "choice":
        card.locator(f"input[value='{typed}']").check()
    elif form == "nones":
        for box in card.locator("input[type=checkbox]").all():
            box.set_checked(box.get_attribute("value") in typed)
    else:
        card.locator(".gv-exercise-input").fill(typed)
    card.locator(".gv-exercise-check").click()


def test_the_page_says_what_python_says_for_every_form(report, offline_page, screenshot_dir):
    from playwright.sync_api import expect

    page = offline_page
    page.goto(report.as_uri())
    cards = page.locator(".gv-exercise")
    expect(cards).to_have_count(6)
    assert [c.get_attribute("data-form") for c in cards.all()] == [
        "step", "value", "shape", "count", "choice", "nones"]
    expect(page.locator(".gv-report-toc")).to_contain_text("Exercises (6)")
    # the notebook's exercises, made afresh: each hint count starts where the page's does
    python = lesson_exercises()
    for i, typed, given in TYPED:
        card = cards.nth(i)
        type_answer(card, typed)
        said = python[i].check(given)
        feedback = card.locator(".gv-feedback")
        expect(feedback).to_have_class(f"gv-feedback gv-feedback-{said.verdict}")
        expect(feedback).to_have_text(str(said).replace("\n", ""))
        assert feedback.get_attribute("data-kind") == said.kind, (i, typed)
    page.locator(".gv-report-exercises").screenshot(path=screenshot_dir / "exercises_report.png")
    assert page.blocked_requests == [] and page.page_errors == [] and page.console_errors == []


def test_a_typing_slip_is_told_what_is_accepted(report, offline_page):
    from playwright.sync_api import expect

    page = offline_page
    page.goto(report.as_uri())
    cards = page.locator(".gv-exercise")
    for i, typed, says in [(1, "[0.5, , 2]", "Write a number"), (2, "two by three", "Write a shape"),
                           (3, "2.5", "Write a whole number"), (4, None, "Choose one")]:
        card = cards.nth(i)
        if typed is not None:
            card.locator(".gv-exercise-input").fill(typed)
        card.locator(".gv-exercise-check").click()
        expect(card.locator(".gv-feedback")).to_have_class("gv-feedback gv-feedback-input")
        expect(card.locator(".gv-feedback")).to_contain_text(says)


def test_on_a_phone_the_exercises_fit_and_take_a_finger(report, browser):
    # A lesson's exercises on a 390 px touch screen: every box, button, radio
    # button and check box a 44 px target (its label with it), nothing wider.
    from test_phone import PHONE, assert_fits_the_phone, assert_targets

    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(report.as_uri())
        page.wait_for_selector(".gv-exercise")
        assert page.locator(".gv-exercises input, .gv-exercises button").count() >= 12
        assert_fits_the_phone(page, "exercises")
        assert_targets(page, "exercises")
    finally:
        context.close()
