"""A class hands in its practice, in a real Chromium, and the teacher reads it.

Three students, each in a browser profile of their own, answer the same
practice report from disk, each differently, and press "hand in": the files
are the downloads.  ``gv.class_summary`` then counts exactly what each did,
and the teacher's report opens offline with the trace's viewer beside the
table, where a click on a row opens its step.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from harness import block_network
from test_practice_browser import answer, go, open_report

import gradviz as gv
from gradviz.views.practice import HandIn, questions

pytestmark = pytest.mark.browser


def broadcast() -> gv.Trace:
    X = gv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="X")
    b = gv.constant([1.0, 2.0, 3.0], name="b")
    return gv.trace_gradients(X * b, b, title="a broadcast bias")


def slip(q, kind: str) -> np.ndarray:
    return next(w.value for w in q.wrong if w.kind == kind)


def hand_in(page, viewer, name: str, to) -> dict:
    """Type the name, save the file: the download, saved at ``to``, read as JSON; the
    page says what it saved."""
    if viewer.locator(".gv-hand-in-form").is_hidden():
        viewer.locator(".gv-hand-in").click()
    viewer.locator(".gv-hand-in-name").fill(name)
    with page.expect_download() as info:
        viewer.locator(".gv-hand-in-save").click()
    assert info.value.failure() is None
    info.value.save_as(to)
    assert viewer.locator(".gv-hand-in-message").inner_text().startswith(
        f"Saved {info.value.suggested_filename} (")
    return json.loads(to.read_text(encoding="utf-8"))


def test_three_students_hand_in_and_the_summary_counts_what_each_did(browser, offline_page,
                                                                     tmp_path, screenshot_dir):
    tr = broadcast()
    seed, mul, reduce, result = questions(tr)
    assert [q.step_kind for q in (seed, mul, reduce, result)] == ["seed", "backward", "reduce",
                                                                  "result"]
    report = tr.to_html(tmp_path / "homework.html", practice=True)
    folder = tmp_path / "handed-in"
    folder.mkdir()

    def student(name, work):
        context = browser.new_context(viewport={"width": 1280, "height": 900},
                                      accept_downloads=True, service_workers="block")
        blocked = block_network(context)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            viewer = open_report(page, report)
            work(page, viewer)
        finally:
            page.wait_for_timeout(50)
            context.close()
        assert errors == [] and blocked == []

    def ada(page, viewer):  # right at once, but for the broadcast sum, forgotten once
        answer(viewer, seed.shape, seed.answer)
        go(viewer, mul.step)
        answer(viewer, mul.shape, mul.answer)
        go(viewer, reduce.step)
        said = answer(viewer, (2, 3), slip(reduce, "broadcast_not_summed"))
        assert said.startswith("The broadcast sum forgotten.")
        answer(viewer, reduce.shape, reduce.answer)
        go(viewer, result.step)
        answer(viewer, result.shape, result.answer)
        assert hand_in(page, viewer, "Ada", folder / "ada.json")["student"] == "Ada"

    def bob(page, viewer):  # reveals, after an unnamed answer and a hint, and after a slip
        answer(viewer, seed.shape, seed.answer)
        go(viewer, mul.step)
        assert answer(viewer, mul.shape, np.full(mul.shape, 7.0)).startswith("Not yet")
        viewer.locator(".gv-answer-hint").click()
        viewer.locator(".gv-answer-reveal").click()
        go(viewer, reduce.step)
        assert answer(viewer, reduce.shape, slip(reduce, "broadcast_mean")).startswith(
            "Averaged instead of summed.")
        viewer.locator(".gv-answer-reveal").click()
        go(viewer, result.step)
        viewer.locator(".gv-answer-skip").click()
        page.reload()  # what was done is kept in the browser, the attempts too
        viewer = open_report(page, report)
        hand_in(page, viewer, "Bob", folder / "bob.json")
        page.reload()  # and the name handed in under
        viewer = open_report(page, report)
        viewer.locator(".gv-hand-in").click()
        assert viewer.locator(".gv-hand-in-name").input_value() == "Bob"

    def cy(page, viewer):  # hands in twice: the second time with one more step done
        assert answer(viewer, (), 1.0).startswith("dL/dMul has shape (2,3), not a scalar")
        answer(viewer, seed.shape, seed.answer)
        go(viewer, mul.step)
        viewer.locator(".gv-answer-hint").click()
        answer(viewer, mul.shape, mul.answer)
        early = hand_in(page, viewer, "Cy", folder / "cy-early.json")
        assert [q["outcome"] for q in early["questions"]] == ["hinted", "hinted", "open", "open"]
        page.wait_for_timeout(20)  # (a later time stamp)
        go(viewer, reduce.step)
        answer(viewer, reduce.shape, reduce.answer)
        hand_in(page, viewer, "Cy", folder / "cy.json")

    student("Ada", ada)
    student("Bob", bob)
    student("Cy", cy)

    # Each file is what its student did, in order.
    files = {p.stem: HandIn.load(p) for p in folder.glob("*.json")}
    ada_results = {q.step: q for q in files["ada"].questions}
    assert [a.to_dict() for a in ada_results[reduce.step].attempts] == [
        {"verdict": "misconception", "kind": "broadcast_not_summed"}, {"verdict": "right"}]
    assert all(q.seconds > 0 for q in ada_results.values())
    bob_results = {q.step: q for q in files["bob"].questions}
    assert [a.verdict for a in bob_results[mul.step].attempts] == ["not_yet"]
    assert bob_results[mul.step].hints == 1 and bob_results[mul.step].outcome == "revealed"
    assert bob_results[result.step].skipped and bob_results[result.step].outcome == "open"
    cy_results = {q.step: q for q in files["cy"].questions}
    assert [a.verdict for a in cy_results[seed.step].attempts] == ["shape", "right"]
    assert files["cy"].trace_key == files["ada"].trace_key == gv.views.practice.trace_key(tr)

    summary = gv.class_summary(folder, tr)
    assert [h.student for h in summary.students] == ["Ada", "Bob", "Cy"]
    assert summary.replaced == (
        f"Cy handed in twice: cy.json ({files['cy'].handed_in:%Y-%m-%d %H:%M:%S} UTC) counts, "
        f"not cy-early.json ({files['cy-early'].handed_in:%Y-%m-%d %H:%M:%S} UTC)",)
    rows = {(r.step, r.misconception): (r.students, r.first, r.hinted, r.revealed, r.open)
            for r in summary.rows}
    assert rows == {
        (seed.step, None): (3, 2, 1, 0, 0), (seed.step, "shape"): (1, 0, 1, 0, 0),
        (mul.step, None): (3, 1, 1, 1, 0), (mul.step, "not_yet"): (1, 0, 0, 1, 0),
        (reduce.step, None): (3, 1, 1, 1, 0),
        (reduce.step, "broadcast_not_summed"): (1, 0, 1, 0, 0),
        (reduce.step, "broadcast_mean"): (1, 0, 0, 1, 0),
        (result.step, None): (2, 1, 0, 0, 1),
    }
    assert [(s.step, s.not_first, s.students) for s in summary.hardest] == [
        (mul.step, 2, 3), (reduce.step, 2, 3), (result.step, 1, 2), (seed.step, 1, 3)]
    assert [(c.kind, c.students, c.steps) for c in summary.misconceptions] == [
        ("broadcast_mean", 1, (reduce.step,)), ("broadcast_not_summed", 1, (reduce.step,))]

    # The teacher's report: offline, the table beside the viewer; a row opens its step.
    page = offline_page
    teacher = summary.to_html(tmp_path / "class.html")
    page.goto(teacher.as_uri())
    viewer = page.locator(".gv-viewer")
    viewer.locator(".gv-diagram svg").first.wait_for()
    table = page.locator(".gv-class-table")
    assert table.locator("tbody tr").count() == len(rows)
    row = table.locator("tr[data-kind='broadcast_not_summed']")
    assert row.locator("td").nth(2).inner_text() == "1"
    cell = row.locator("td").nth(1).bounding_box()  # anywhere in the row, not only its link
    page.mouse.click(cell["x"] + cell["width"] / 2, cell["y"] + cell["height"] / 2)
    page.wait_for_function("s => document.querySelector('.gv-viewer').dataset.step === s",
                           arg=str(reduce.step))
    assert viewer.locator(".gv-counter").inner_text().startswith(f"step {reduce.step} /")
    table.locator(f"tr[data-step='{seed.step}']").first.click()
    page.wait_for_function("s => document.querySelector('.gv-viewer').dataset.step === s",
                           arg=str(seed.step))
    box, aside = viewer.bounding_box(), page.locator(".gv-report-aside").bounding_box()
    assert aside["x"] + aside["width"] <= box["x"]  # beside it, at 1280 pixels wide
    assert page.locator(".gv-class-figure").evaluate("img => img.naturalWidth") > 0
    assert page.page_errors == [] and page.console_errors == [] and page.blocked_requests == []
    page.set_viewport_size({"width": 1440, "height": 900})
    table.locator("tr[data-kind='broadcast_mean']").click()
    page.wait_for_timeout(300)
    page.screenshot(path=screenshot_dir / "class_summary_report.png", full_page=True)
