"""Practice mode in a real browser: the offline report opened from disk with the
network blocked, and the widget in a real JupyterLab.

What a learner must be able to count on: before they answer, the value the step
produces is nowhere in the page's text; a wrong answer that is a known slip is
named as that slip, with the same words ``gv.exercise(...).check(...)`` gives
in Python (the page checks with ``answers.js``; a property test holds it to the
Python checker over random programs); a right answer is accepted and shows the
step; reveal and skip work; the summary counts what happened; and all of it
works from the keyboard.
"""

from __future__ import annotations

import inspect
import json
import pathlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_practice import hand_worked_traces, learner_programs
from test_viewer_lab import _KERNEL_EXEC
from test_viewer_options import VISIBLE_TEXT

import gradviz as gv
from gradviz.views.explain.formatting import format_number
from gradviz.views.practice import MISCONCEPTIONS, HandIn, questions

pytestmark = pytest.mark.browser

STATIC = pathlib.Path(gv.__file__).parent / "views" / "static" / "viewer"


def linear_regression() -> gv.Trace:
    X = gv.constant([[2.0], [3.0]], name="X")
    Y = gv.constant([[3.0], [2.0]], name="Y")
    W = gv.Variable(1.6649098, name="W")
    b = gv.Variable(0.54648024, name="b")
    cost = gv.multiply(0.5, gv.reduce_sum((X * W + b - Y) ** 2), name="cost")
    return gv.trace_gradients(cost, [W, b], title="linear regression")


def kind_traces() -> list[gv.Trace]:
    """Small programs that, between them, ask a question with every kind of slip."""
    X = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="X")
    b = gv.constant([1.0, 2.0, 3.0], name="b")
    x = gv.constant([1.0, 2.0], name="x")
    w = gv.constant([3.0, -1.0], name="w")
    A = gv.constant([[1.0, 2.0], [3.0, 4.0]], name="A")
    B = gv.constant([[5.0, 6.0], [7.0, 8.0]], name="B")
    G = gv.constant([[1.0, 2.0], [0.0, 1.0]], name="G")
    v = gv.constant([0.5, -1.0], name="v")
    m = gv.constant([1.0, 2.0, 3.0, 4.0], name="m")
    z = gv.constant([-1.0, 2.0], name="z")
    X2 = gv.constant([[1.0], [2.0]], name="X2")
    W2 = gv.Variable(3.0, name="W2")
    img = gv.constant(np.array([1.0, 2.0, 3.0]).reshape(1, 1, 3, 1), name="img")
    kernel = gv.constant(np.array([1.0, 10.0]).reshape(1, 2, 1, 1), name="kernel")
    pool_in = gv.constant(np.array([[1.0, 4.0], [3.0, 2.0]]).reshape(1, 2, 2, 1), name="pool_in")
    # forward mode: the product rule, and the chain rule through sin
    with gv.autodiff.ForwardAccumulator([x, w], [gv.constant([1.0, 0.5]),
                                                 gv.constant([-1.0, 2.0])]) as forward:
        product = x * w + gv.sin(x)
    return [
        gv.trace_gradients(X * b, b, title="broadcast"),
        gv.trace_gradients(x * w + x, x, title="fan-out"),
        gv.trace_gradients(gv.sigmoid(v), v, title="sigmoid"),
        gv.trace_gradients(gv.matmul(A, B), A, grad_ys=G, title="matmul"),
        gv.trace_gradients(x * gv.stop_gradient(x), x, title="stop_gradient"),
        gv.trace_gradients(gv.tanh(v), v, grad_ys=gv.constant([2.0, 3.0]), title="grad_ys"),
        gv.trace_gradients(gv.reduce_mean(m), m, title="mean"),
        gv.trace_gradients(gv.relu(z), z, title="relu"),
        gv.trace_gradients(gv.reduce_sum(X2 * W2), W2, title="mul"),
        gv.trace_gradients(gv.nn.conv2d(img, kernel, 1, "VALID"), img, title="conv"),
        gv.trace_gradients(gv.nn.max_pool2d(pool_in, 2, 2, "VALID")
                           + gv.nn.avg_pool2d(pool_in, 2, 2, "VALID"), pool_in, title="pools"),
        gv.trace_gradients(gv.softmax(v), v, grad_ys=gv.constant([1.0, 0.0]), title="softmax"),
        gv.trace_gradients(gv.gather(A, [1, 0, 1]), A, grad_ys=gv.constant(
            [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), title="gather"),
        gv.trace_gradients(v * 0.5, v, grad_ys=gv.constant([2.0, 3.0]), title="scale"),
        forward.trace_jvp(product, title="forward"),
    ]


def shape_text(shape) -> str:
    shape = tuple(shape)
    return "scalar" if not shape else f"({shape[0]},)" if len(shape) == 1 else str(shape)


def flat(values) -> list[float]:
    return np.asarray(values, dtype=np.float64).reshape(-1).tolist()


def open_report(page, path: pathlib.Path) -> Any:
    page.goto(path.as_uri())
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
    return page.locator(".gv-viewer")


def go(viewer, k: int) -> None:
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", k)
    viewer.page.wait_for_function("([r, k]) => r.dataset.step === String(k)",
                                  arg=[viewer.element_handle(), k])


def answer(viewer, shape, values) -> str:
    """Type an answer (its shape, then its values) and check it; the feedback's text."""
    viewer.locator(".gv-answer-shape").fill(shape_text(shape))
    cells = viewer.locator(".gv-answer-cell")
    values = flat(values)
    assert cells.count() == len(values)
    for i, v in enumerate(values):
        cells.nth(i).fill(repr(v))
    viewer.locator(".gv-answer-check").click()
    return viewer.locator(".gv-feedback:visible").last.inner_text()


def come_to(viewer, q) -> None:
    """At q's step, reveal the questions before q until q is asked."""
    for _ in range(8):
        if viewer.locator(".gv-question-prompt").inner_text() == q.prompt:
            return
        viewer.locator(".gv-answer-reveal").click()
    pytest.fail(f"step {q.step} never asked {q.prompt!r}")


def page_text(page) -> str:
    return page.locator("body").evaluate(VISIBLE_TEXT)


def summary(viewer) -> dict[str, list[int]]:
    """The summary table: step kind -> [first try, after tries or hints, revealed, open]."""
    return viewer.evaluate("""r => Object.fromEntries(Array.from(
        r.querySelectorAll('.gv-summary-table tr[data-kind]')).map(tr => [tr.dataset.kind,
        Array.from(tr.querySelectorAll('td')).map(td => Number(td.textContent))]))""")


# ---------------------------------------------------------------- the report


def slip_cases(traces: list[gv.Trace]) -> dict[str, tuple]:
    """For each kind, the first question that names it: (trace, index, question, slip)."""
    cases: dict[str, tuple] = {}
    for t, tr in enumerate(traces):
        for i, q in enumerate(questions(tr)):
            for w in q.wrong:
                if w.kind not in cases and q.focus is None:
                    cases[w.kind] = (t, i, q, w)
    assert set(cases) == set(MISCONCEPTIONS)
    return cases


def each_slip_is_named(viewers, traces: list[gv.Trace]) -> None:
    """Type each kind's wrong answer into its viewer: the page says what Python says."""
    for kind, (t, _, q, w) in sorted(slip_cases(traces).items(), key=lambda c: c[1][:2]):
        viewer = viewers.nth(t)
        viewer.scroll_into_view_if_needed()
        viewer.locator(".gv-diagram svg").first.wait_for()
        go(viewer, q.step)
        come_to(viewer, q)
        said = answer(viewer, w.value.shape, w.value)
        python = q.check(np.round(w.value, 6))
        assert python.kind == kind
        assert said == python.message, kind
        assert viewer.locator(".gv-feedback:visible").last.get_attribute("data-kind") == kind


def test_each_slip_gets_its_own_sentence_in_the_report(offline_page, tmp_path):
    traces = kind_traces()
    path = gv.export_html(traces, tmp_path / "kinds.html", practice=True)
    each_slip_is_named(open_report(offline_page, path), traces)
    assert offline_page.page_errors == [] and offline_page.console_errors == []
    assert offline_page.blocked_requests == []


def test_a_step_asks_before_it_shows_and_the_summary_counts(offline_page, tmp_path):
    tr = linear_regression()
    qs = questions(tr)
    path = tr.to_html(tmp_path / "lr.html", practice=True)
    page = offline_page
    viewer = open_report(page, path)
    assert viewer.locator(".gv-practice-progress").inner_text() == f"0 of {len(qs)} questions answered"

    # Every question: its values nowhere in the page before the answer, there after.
    # (Those also written elsewhere cannot be told apart: the arrays it is asked
    # from, forward values, earlier answers, and 0 and 1.)
    seen = {"0", "1", "-1"} | {format_number(v) for t in tr.tensors if t.value.values is not None
                               for v in flat(t.value.values)}
    checked = 0
    for q in qs:
        go(viewer, q.step)
        come_to(viewer, q)
        given = {format_number(v) for _, a in q.given for v in flat(a.values)}
        secrets = {format_number(v) for v in flat(q.answer)} - given - seen
        seen |= {format_number(v) for v in flat(q.answer)}
        checked += len(secrets)
        hidden = page_text(page)
        assert not [s for s in secrets if s in hidden], (q.step, q.target)
        assert viewer.locator(".gv-sentence").is_hidden()
        assert viewer.locator(".gv-question-prompt").inner_text() == q.prompt
        viewer.locator(".gv-answer-reveal").click()
        shown = page_text(page)
        assert all(s in shown for s in secrets), (q.step, q.target, secrets)
    assert checked >= 4  # dL/dW (2,1) 1.753 and 10.62, dL/dW 12.38, dL/db 4.418: their own numbers
    # a later visit shows the step settled, with its sentence
    assert viewer.locator(".gv-question-revealed").count() >= 1
    assert viewer.locator(".gv-sentence").is_visible()

    # Start over: every question asked again, the values hidden again.
    viewer.locator(".gv-practice-reset").click()
    assert viewer.get_attribute("data-step") == "0"
    assert viewer.locator(".gv-practice-progress").inner_text() == f"0 of {len(qs)} questions answered"

    # The seed right at once; Mul's dL/dW after a named slip; the broadcast sum
    # after a hint; the rest of the backward steps skipped or revealed.
    seed = qs[0]
    go(viewer, seed.step)
    assert answer(viewer, (), 1.0) == "Right: dL/dcost = 1."
    assert viewer.locator(".gv-question-first").inner_text().endswith("Right on the first try.")
    mul = next(q for q in qs if q.prompt == "What gradient does Mul send towards W, dL/d(W broadcast)?")
    go(viewer, mul.step)
    said = answer(viewer, (2, 1), [[1.459], [5.896]])
    assert said.startswith("Multiplied by the wrong input.")
    assert answer(viewer, (2, 1), [[1.75], [10.6]]) == "Right: dL/d(W broadcast) = [[1.753], [10.62]]."
    assert viewer.locator(".gv-question-hinted").inner_text().endswith("Right after 1 wrong try.")
    reduce = next(q for q in qs if q.step_kind == "reduce" and q.target == "dL/dW")
    go(viewer, reduce.step)
    # the unsummed gradient's shape is the broadcast sum forgotten, said at the shape
    viewer.locator(".gv-answer-shape").fill("(2,1)")
    viewer.locator(".gv-answer-check").click()
    assert viewer.locator(".gv-feedback").get_attribute("data-kind") == "broadcast_not_summed"
    assert viewer.locator(".gv-answer-cell").count() == 2  # the grid follows the shape typed
    assert answer(viewer, (), 7.0) == "Not yet: that is none of the usual slips."
    viewer.locator(".gv-answer-hint").click()
    assert viewer.locator(".gv-hint-text").inner_text() == f"Hint: {reduce.hints[0]}"
    answer(viewer, (), float(reduce.answer))
    assert viewer.locator(".gv-question-hinted").count() == 1
    # skip: on to the next step, the question still asked when the learner comes back
    go(viewer, 1)
    viewer.locator(".gv-answer-skip").click()
    page.wait_for_function("r => r.dataset.step === '2'", arg=viewer.element_handle())
    go(viewer, 1)
    assert viewer.locator(".gv-question-prompt").is_visible()
    viewer.locator(".gv-answer-reveal").click()

    go(viewer, len(tr.steps) - 1)
    viewer.locator(".gv-answer-skip").click()  # the last question: skipped, the summary shown
    counts = summary(viewer)
    kinds = {q.step_kind for q in qs}
    n_backward = sum(q.step_kind == "backward" for q in qs)
    assert counts["seed"] == [1, 0, 0, 0]
    assert counts["backward"] == [0, 1, 1, n_backward - 2]
    assert counts["reduce"] == [0, 1, 0, 1]
    assert counts["result"] == [0, 0, 0, 2]
    assert counts["all"] == [1, 2, 1, len(qs) - 4]
    assert set(counts) == kinds | {"all"}
    page.screenshot(path=tmp_path / "summary.png")

    # Progress is kept (localStorage, keyed by the content): a reload finds it.
    page.reload()
    viewer = open_report(page, path)
    assert viewer.locator(".gv-practice-progress").inner_text() == f"4 of {len(qs)} questions answered"
    go(viewer, len(tr.steps) - 1)
    viewer.locator(".gv-answer-skip").click()
    assert summary(viewer)["all"] == [1, 2, 1, len(qs) - 4]
    viewer.locator(".gv-practice-restart").click()
    assert summary_gone(viewer)
    page.reload()
    viewer = open_report(page, path)
    assert viewer.locator(".gv-practice-progress").inner_text() == f"0 of {len(qs)} questions answered"
    assert page.page_errors == [] and page.console_errors == []
    assert page.blocked_requests == []


def summary_gone(viewer) -> bool:
    return viewer.get_attribute("data-step") == "0" and viewer.locator(".gv-practice-summary").count() == 0


def test_a_large_answer_is_asked_by_one_element_shown_in_its_shape(offline_page, tmp_path):
    X = gv.constant(np.arange(18.0).reshape(3, 6) / 4, name="X")
    tr = gv.trace_gradients(X * X, X)
    q = next(q for q in questions(tr) if q.step_kind == "accumulate")
    assert q.focus is not None and len(q.focus) == 1 and q.shape == (3, 6)  # one is asked
    (at,) = q.focus
    viewer = open_report(offline_page, tr.to_html(tmp_path / "big.html", practice=True))
    go(viewer, q.step)
    viewer.locator(".gv-answer-shape").fill("(3,6)")
    assert viewer.locator(".gv-answer-cell").count() == 1
    label = viewer.locator(".gv-answer-cells-label").inner_text()
    assert label == f"{q.target}[{at[0]},{at[1]}]: of its 18 values, the one asked"
    # the element asked is marked in a map of the shape typed
    cells = viewer.locator(".gv-focus-map td")
    assert cells.count() == 18
    marked = viewer.evaluate("r => Array.from(r.querySelectorAll('.gv-focus-map td'))"
                             ".findIndex(td => td.classList.contains('gv-focus-cell'))")
    assert marked == at[0] * 6 + at[1]
    slip = next(w for w in q.wrong if w.value.shape == q.shape)
    viewer.locator(".gv-answer-cell").fill(repr(float(slip.value[at])))
    viewer.locator(".gv-answer-check").click()
    assert viewer.locator(".gv-feedback").get_attribute("data-kind") == slip.kind
    # a wrong shape is said about the shape
    viewer.locator(".gv-answer-shape").fill("(6,3)")
    viewer.locator(".gv-answer-check").click()
    assert viewer.locator(".gv-feedback").inner_text() == q.check_shape((6, 3)).message
    viewer.locator(".gv-answer-shape").fill("(3, 6)")
    right = float(q.answer[at])  # 2 X at that element
    assert right == 2 * (at[0] * 6 + at[1]) / 4
    viewer.locator(".gv-answer-cell").fill(repr(right))
    viewer.locator(".gv-answer-check").click()
    assert viewer.locator(".gv-feedback").inner_text().startswith(f"Right: {q.target}[")
    assert offline_page.page_errors == []


def test_the_cnn_max_pool_is_asked_where_its_slips_differ(offline_page, tmp_path,
                                                          screenshot_dir):
    """Two elements asked, marked in the channel images the array panels draw; the
    gradient sent to every element of the window is named, never called right."""
    from test_practice import _cnn  # noqa: PLC0415
    tr = _cnn()
    q = next(q for q in questions(tr) if "MaxPool send to relu" in q.prompt)
    assert q.focus is not None and len(q.focus) == 2 and q.shape == (1, 4, 4, 2)
    viewer = open_report(offline_page, tr.to_html(tmp_path / "cnn.html", practice=True))
    go(viewer, q.step)
    assert viewer.locator(".gv-question-prompt").inner_text() == q.prompt
    viewer.locator(".gv-answer-shape").fill("(1, 4, 4, 2)")
    cells = viewer.locator(".gv-answer-cell")
    assert cells.count() == 2
    assert [cells.nth(k).get_attribute("aria-label") for k in range(2)] == \
        [f"{q.target}[{','.join(map(str, at))}]" for at in q.focus]
    # the map: one 4x4 image per channel, as the panels draw (1,4,4,2), each element
    # asked marked in its channel's image at its row and column
    tiles = viewer.locator(".gv-focus-map .gv-focus-tile")
    assert tiles.count() == 2
    assert [tiles.nth(c).locator("figcaption").inner_text() for c in range(2)] == \
        ["channel 0", "channel 1"]
    marked = viewer.evaluate("""r => Array.from(r.querySelectorAll('.gv-focus-map .gv-focus-tile'))
        .map(tile => Array.from(tile.querySelectorAll('td')).flatMap(
            (td, i) => td.classList.contains('gv-focus-cell') ? [i] : []))""")
    want = [[], []]
    for _, y, x, c in q.focus:
        want[c].append(y * 4 + x)
    assert marked == [sorted(m) for m in want]
    everywhere = next(w for w in q.wrong if w.kind == "pool_gradient_everywhere").value
    for k, at in enumerate(q.focus):
        cells.nth(k).fill(repr(float(everywhere[at])))
    viewer.locator(".gv-answer-check").click()
    feedback = viewer.locator(".gv-feedback")
    assert feedback.get_attribute("data-kind") == "pool_gradient_everywhere"
    assert feedback.inner_text() == q.check([float(everywhere[at]) for at in q.focus]).message
    viewer.locator(".gv-practice").scroll_into_view_if_needed()
    offline_page.screenshot(path=screenshot_dir / "practice_cnn_max_pool.png", full_page=True)
    for k, at in enumerate(q.focus):
        cells.nth(k).fill(repr(float(q.answer[at])))
    viewer.locator(".gv-answer-check").click()
    assert viewer.locator(".gv-question-first, .gv-question-hinted").count() == 1
    # the kernel's gradient, (3,3,1,2) HWIO: one 3x3 image per input-to-output pair
    k = next(q for q in questions(tr) if q.prompt.startswith("What gradient does Conv2D"))
    go(viewer, k.step)
    viewer.locator(".gv-answer-shape").fill("(3, 3, 1, 2)")
    tiles = viewer.locator(".gv-focus-map .gv-focus-tile")
    assert [tiles.nth(c).locator("figcaption").inner_text() for c in range(tiles.count())] == \
        ["in 0 \u2192 out 0", "in 0 \u2192 out 1"]
    want = [[], []]
    for y, x, _, o in k.focus:
        want[o].append(y * 3 + x)
    marked = [tiles.nth(o).locator("td").evaluate_all(
        "tds => tds.flatMap((td, n) => td.classList.contains('gv-focus-cell') ? [n] : [])")
        for o in range(2)]
    assert marked == [sorted(m) for m in want] and k.focus
    assert offline_page.page_errors == []


def test_the_broadcast_add_step_names_the_gradient_before_the_sum(offline_page, tmp_path,
                                                                 screenshot_dir):
    X = gv.constant(np.arange(6.0).reshape(3, 2), name="X")
    b = gv.Variable(np.array([1.0, 2.0]), name="b")
    tr = gv.trace_gradients(gv.reduce_sum(gv.tanh(X + b)), b)
    q = next(q for q in questions(tr) if q.prompt.startswith("What gradient does Add"))
    assert q.shape == (3, 2) and q.target != "dL/db"
    viewer = open_report(offline_page, tr.to_html(tmp_path / "bias.html", practice=True))
    go(viewer, q.step)
    said = answer(viewer, (2,), [0.43, 0.01])
    assert said == q.check_shape((2,)).message and "dL/db has shape" not in said
    viewer.locator(".gv-practice").scroll_into_view_if_needed()
    offline_page.screenshot(path=screenshot_dir / "practice_broadcast_add.png", full_page=True)
    assert offline_page.page_errors == []


def test_practice_works_where_storage_is_refused(offline_page, tmp_path):
    page = offline_page
    page.context.add_init_script("""Object.defineProperty(window, 'localStorage', {
        get() { throw new DOMException('The page may not use storage', 'SecurityError'); } });""")
    tr = linear_regression()
    path = tr.to_html(tmp_path / "lr.html", practice=True)
    viewer = open_report(page, path)
    assert answer(viewer, (), 1.0) == "Right: dL/dcost = 1."
    go(viewer, len(tr.steps) - 1)
    viewer.locator(".gv-answer-skip").click()
    assert summary(viewer)["all"][0] == 1
    assert "does not let the page keep your answers" in viewer.locator(".gv-practice-summary").inner_text()
    assert page.page_errors == [] and page.console_errors == []


def test_practice_by_keyboard_alone(offline_page, tmp_path):
    page = offline_page
    tr = linear_regression()
    viewer = open_report(page, tr.to_html(tmp_path / "lr.html", practice=True))
    viewer.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("r => r.dataset.step === '1'", arg=viewer.element_handle())
    # Tab from the viewer reaches the answer's shape
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('gv-answer-shape')"):
            break
    else:
        pytest.fail("Tab never reached the answer")
    page.keyboard.type("scalar")
    page.keyboard.press("Enter")  # the shape alone: right, and on to the value
    assert viewer.locator(".gv-feedback").inner_text().startswith("Right: dL/dSum is a scalar")
    assert page.evaluate("document.activeElement.classList.contains('gv-answer-cell')")
    page.keyboard.type("2")  # typing in an answer does not step the viewer
    page.keyboard.press("ArrowLeft")
    assert viewer.get_attribute("data-step") == "1"
    page.keyboard.press("End")
    page.keyboard.press("Backspace")
    page.keyboard.type("0.5")
    page.keyboard.press("Enter")
    assert viewer.locator(".gv-question-first").count() == 1
    # settled: the focus is back on the viewer, where the arrows step again
    assert page.evaluate("document.activeElement.classList.contains('gv-viewer')")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("r => r.dataset.step === '2'", arg=viewer.element_handle())
    # Enter on the viewer goes to the answer, Escape comes back
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.classList.contains('gv-answer-shape')")
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("r => r.dataset.step === '3'", arg=viewer.element_handle())
    assert page.page_errors == []


# ---------------------------------------------------------------- the page's checker


_CHECKER_PAGE = """<!doctype html><meta charset="utf-8"><script type="module">
import * as answers from "./answers.js";
window.answers = answers;
window.ready = true;
</script>"""

_CHECK_ALL = """(cases) => cases.map(({ q, shape, values, shapeOnly }) => {
    const f = shapeOnly ? window.answers.checkShape(q, shape)
                        : window.answers.checkAnswer(q, { shape, values });
    return [f.verdict, f.kind || null, f.message];
})"""


@pytest.fixture
def checker(page):
    """A page with answers.js loaded as an ES module, served from the source folder."""
    def serve(route):
        name = route.request.url.split("http://gradviz.test/", 1)[1]
        if name == "index.html":
            route.fulfill(status=200, body=_CHECKER_PAGE, content_type="text/html")
        else:
            target = (STATIC / name).resolve()
            assert target.parent == STATIC and target.is_file(), name
            route.fulfill(status=200, body=target.read_text(encoding="utf-8"),
                          content_type="text/javascript")
    page.route("http://gradviz.test/**", serve)
    page.goto("http://gradviz.test/index.html")
    page.wait_for_function("window.ready === true")
    return page


def _tried(q) -> tuple[list, list]:
    """Answers to check in both checkers, with Python's verdicts: the right answer, each
    named wrong one, every slip tried, none of them, a shape no slip has, the right
    numbers in another layout, zeros and the negation; for a question with a focus,
    each of them also at the elements asked; and each shape alone."""
    cases, expected = [], []
    qj = json.loads(json.dumps(q.to_dict()))
    right = np.asarray(qj["answer"], dtype=np.float64)
    tried = [qj["answer"], *[w["values"] for w in qj["wrong"]],
             *[np.round(v, 5).tolist() for _, v in q.slips],
             (right * 1.37 + 0.5).tolist(),  # none of the slips: not yet
             np.zeros(right.size + 1).tolist(),  # a shape no slip has
             np.zeros(right.shape).tolist(), (-right).tolist()]
    if right.ndim >= 2:  # the right numbers transposed, or in another layout
        tried += [right.T.tolist(), right.reshape(right.shape[-1], -1).tolist()]
    if q.focus is not None:
        tried += [[float(np.asarray(v, np.float64)[at]) for at in q.focus]
                  for v in tried if np.shape(v) == q.shape]
        tried += [t[0] for t in tried if np.shape(t) == (1,)]
    for values in tried:
        a = np.asarray(values, dtype=np.float64)
        f = q.check(a)
        cases.append({"q": qj, "shape": list(a.shape), "values": a.reshape(-1).tolist()})
        expected.append([f.verdict, f.kind, f.message if f.verdict != "right" else None])
    for shape in {tuple(np.shape(v)) for v in tried}:
        f = q.check_shape(shape)
        cases.append({"q": qj, "shape": list(shape), "values": [], "shapeOnly": True})
        expected.append([f.verdict, f.kind, f.message])
    return cases, expected


def _page_agrees(checker, qs) -> None:
    cases, expected = [], []
    for q in qs:
        c, e = _tried(q)
        cases += c
        expected += e
    if not cases:
        return
    got = checker.evaluate(_CHECK_ALL, cases)
    for case, want, have in zip(cases, expected, got):
        if want[2] is None:  # "right": the page words it from the question's answer hint
            assert have[0] == "right" and have[2].endswith("." + case["q"]["coincide_note"])
            have = [have[0], have[1], None]
        assert have == want, (case["q"]["prompt"], case["shape"], case["values"])


@settings(max_examples=75, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(learner_programs())
@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")
def test_the_page_checks_answers_as_python_does(checker, program):
    """Every slip tried, each named wrong answer, the right answer, and each shape,
    checked by the page from the payload's JSON, get Python's verdict and words."""
    _page_agrees(checker, questions(program()))


def test_the_page_checks_the_hand_worked_cases_as_python_does(checker):
    """The cases a fixed slack got wrong: the max pool and the ReLU of a CNN asked where
    their slips differ, gradients of 1e-20 and 1e+20, and the slips named lately."""
    traces = hand_worked_traces()
    qs = [q for tr in traces for q in questions(tr)]
    assert any(q.focus is not None and len(q.focus) > 1 for q in qs)
    _page_agrees(checker, qs)


def test_the_page_refuses_an_over_long_answer_at_once(checker):
    said = checker.evaluate("""() => {
        const out = [];
        for (const text of ["9".repeat(300000) + "x", " ".repeat(300000), "1".repeat(100)]) {
            try { out.push(String(window.answers.parseNumber(text))); }
            catch (err) { out.push(err.message); }
        }
        try { window.answers.parseShape("(" + "2,".repeat(100000) + ")"); }
        catch (err) { out.push(err.message); }
        out.push(String(window.answers.parseNumber("1".repeat(60) + "x")));
        return out;
    }""")
    assert said == ["That is 300001 characters; a number is at most 100.",
                    "That is 300000 characters; a number is at most 100.", str(float("1" * 100)),
                    "That is 200002 characters; a shape is at most 100.", "NaN"]


# ---------------------------------------------------------------- JupyterLab


LAB_CELLS = [
    "import gradviz as gv\n"
    "X = gv.constant([[2.0], [3.0]], name='X')\n"
    "Y = gv.constant([[3.0], [2.0]], name='Y')\n"
    "W = gv.Variable(1.6649098, name='W')\n"
    "b = gv.Variable(0.54648024, name='b')\n"
    "cost = gv.multiply(0.5, gv.reduce_sum((X * W + b - Y) ** 2), name='cost')\n"
    "trace = gv.trace_gradients(cost, [W, b], title='linear regression')",
    "w = gv.show(trace, practice=True)\nw",
]


def test_each_slip_gets_its_own_sentence_in_jupyterlab(lab, page):
    cells = ["import numpy as np\nimport gradviz as gv\nfrom IPython.display import display\n\n"
             + inspect.getsource(kind_traces),
             "for t in kind_traces():\n    display(gv.show(t, practice=True))"]
    nb = lab.write_notebook("practice_kinds.ipynb", cells)
    lab.open_notebook(page, nb)
    lab.collapse_left(page)
    lab.run_all(page)
    traces = kind_traces()
    viewers = page.locator(".jp-OutputArea-output .gv-viewer")
    page.wait_for_function("n => document.querySelectorAll('.jp-OutputArea-output .gv-viewer').length"
                           " === n", arg=len(traces), timeout=30_000)
    each_slip_is_named(viewers, traces)
    assert lab.error_outputs(page) == []


def test_practice_in_jupyterlab(lab, page, screenshot_dir):
    tr = linear_regression()
    qs = questions(tr)
    nb = lab.write_notebook("practice_lab.ipynb", LAB_CELLS)
    lab.open_notebook(page, nb)
    lab.collapse_left(page)
    lab.run_all(page)
    viewer = page.locator(".jp-OutputArea-output .gv-viewer").first
    viewer.wait_for(state="visible", timeout=20_000)
    viewer.locator(".gv-diagram svg").wait_for()
    cells = page.locator(".jp-Notebook .jp-Cell").count()

    # Mul's gradient for W, (2,1): hidden until answered; a slip named; the right answer taken
    mul = next(q for q in qs if q.prompt == "What gradient does Mul send towards W, dL/d(W broadcast)?")
    go(viewer, mul.step)
    assert not [s for s in ("1.753", "10.62") if s in page_text(page)]
    said = answer(viewer, (2, 1), [[1.459], [5.896]])
    assert said == mul.check([[1.459], [5.896]]).message
    page.wait_for_function("r => !r.gvViewer.moving", arg=viewer.element_handle())
    page.screenshot(path=screenshot_dir / "practice_lab_wrong.png")
    assert answer(viewer, (2, 1), [[1.753], [10.62]]) == "Right: dL/d(W broadcast) = [[1.753], [10.62]]."
    assert all(s in page_text(page) for s in ("1.753", "10.62"))

    # the broadcast sum of it: revealed
    go(viewer, mul.step + 1)
    assert "12.38" not in page_text(page)
    viewer.locator(".gv-answer-reveal").click()
    assert "12.38" in page_text(page)

    # by keyboard: Enter on the viewer to the answer; what is typed there stays
    # there (JupyterLab's own keys, such as a and b for new cells, are not run)
    go(viewer, 1)
    viewer.focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.classList.contains('gv-answer-shape')")
    page.keyboard.type("ab")
    page.keyboard.press("Control+a")
    page.keyboard.type("scalar")
    page.keyboard.press("Enter")
    page.keyboard.type("0.5")
    page.keyboard.press("Enter")
    assert viewer.locator(".gv-question-first").count() == 1
    page.keyboard.press("ArrowRight")
    page.wait_for_function("r => r.dataset.step === '2'", arg=viewer.element_handle())
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells

    # skip, then the summary at the last step
    viewer.locator(".gv-answer-skip").click()
    page.wait_for_function("r => r.dataset.step === '3'", arg=viewer.element_handle())
    go(viewer, len(tr.steps) - 1)
    viewer.locator(".gv-answer-skip").click()
    counts = summary(viewer)
    assert counts["all"] == [1, 1, 1, len(qs) - 3]
    assert counts["backward"][:3] == [1, 1, 0] and counts["reduce"][:3] == [0, 0, 1]
    viewer.locator(".gv-practice-summary").scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "practice_lab_summary.png")

    # Hand in: the file is saved from the notebook too, and Python has the same results.
    viewer.locator(".gv-hand-in").click()
    viewer.locator(".gv-hand-in-name").fill("Ada")
    with page.expect_download() as info:
        viewer.locator(".gv-hand-in-save").click()
    assert info.value.suggested_filename == "linear-regression-ada.json"
    saved = HandIn.load(info.value.path())
    kernel = json.loads(page.evaluate(_KERNEL_EXEC, (
        "import json; r = w.results(); print(json.dumps([r.student, r.trace_key, "
        "[[q.step, q.outcome, [a.verdict for a in q.attempts], q.skipped] for q in r.questions]]))")))
    assert kernel[:2] == ["Ada", saved.trace_key]
    assert kernel[2] == [[q.step, q.outcome, [a.verdict for a in q.attempts], q.skipped]
                         for q in saved.questions]
    assert [q.outcome for q in saved.questions].count("first") == 1
    assert ["misconception", "right"] in [k[2] for k in kernel[2]]  # Mul's slip, then right
    assert lab.error_outputs(page) == []
