"""Browser tests of printing: the print stylesheet, and the handout of chosen steps.

Each test exports a report, opens it from disk in headless Chromium with the
network blocked (``offline_page``), and prints it with ``page.pdf()``, which
renders the page for print exactly as the print dialog would; the PDF is read
back with pypdf and checked page by page: what a reader gets on paper.
"""

from __future__ import annotations

import io
import pathlib
import re
import unicodedata

import numpy as np
import pypdf
import pytest

import gradviz as gv
from fixtures.traces import deep_mlp, linear_regression, scoped_mlp

pytestmark = pytest.mark.browser

# Words of the viewer's controls: none of them belongs on paper.
CONTROL_TEXT = ("whole graph", "speed", "gradient values", "forward values", "Play", "Keys when",
                "steps to print", "cancel", "showing example", "kernel for", "show all")
# An A4 page's width and height in CSS px, as the print dialog lays it out (before
# margins), and the height a page's content has inside the print margins (12 mm).
A4_WIDTH_PX = 794
A4_HEIGHT_PX = 1123
A4_CONTENT_HEIGHT_PX = A4_HEIGHT_PX - 2 * 12 * 96 / 25.4
# What a list of steps takes, as the form's messages say it.
HOW = 'write "all", or step numbers and ranges such as 0, 3, 5-7 (numbered from 0, as on screen)'
HOW_TRACES = (HOW + "; steps of any trace of this report as t2:4, t2:5-7 or t2:all "
              "(traces numbered from 1, as the page numbers them)")


def open_report(page, path: pathlib.Path, traces: int = 1):
    page.goto(path.as_uri())
    page.wait_for_function("(n) => document.querySelectorAll('.gv-viewer .gv-diagram svg').length === n",
                           arg=traces)
    return page.locator(".gv-viewer").first


def pdf_pages(page) -> list[str]:
    """The text of each page of the page printed to an A4 PDF, whitespace collapsed."""
    reader = pypdf.PdfReader(io.BytesIO(page.pdf(format="A4")))
    return [plain(p.extract_text()) for p in reader.pages]


def plain(text: str) -> str:
    # NFKC: the PDF's ligatures (U+FB02 for "fl") read as their letters.
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def payload_steps(viewer) -> list[dict]:
    return viewer.evaluate("""(root) => JSON.parse(document.getElementById(
        root.closest('.gv-report-trace').dataset.payload).textContent).steps""")


def stub_print(page) -> None:
    """Replace window.print by a counter (window.printed): a headless page has no dialog."""
    page.evaluate("() => { window.printed = 0; window.print = () => { window.printed += 1; }; }")


def choose_steps(page, viewer, text: str) -> None:
    """Open the print form (the button toggles it), type `text` key by key, press Print."""
    if viewer.locator(".gv-handout-form").is_hidden():
        viewer.locator(".gv-print").click()
    box = viewer.locator(".gv-handout-steps")
    box.fill("")
    box.press_sequentially(text)
    viewer.locator(".gv-handout-go").click()


def assert_offline_and_clean(page) -> None:
    assert page.blocked_requests == [], f"the report tried to reach the network: {page.blocked_requests}"
    assert page.page_errors == [], f"script errors: {page.page_errors}"


def assert_refused(page, viewer, typed: str, message: str) -> None:
    """Typed into the print form, `typed` is refused with `message`, printing nothing;
    the script API says the same, as an exception."""
    stub_print(page)
    choose_steps(page, viewer, typed)
    shown = viewer.locator(".gv-handout-message")
    assert shown.is_visible() and shown.text_content() == message
    assert page.evaluate("window.printed") == 0
    assert page.locator(".gv-handout").count() == 0
    assert viewer.evaluate(
        "(r, t) => { try { r.gvViewer.handout(t); return null; } catch (e) { return e.message; } }",
        typed) == message


def assert_no_controls(pages: list[str]) -> None:
    for i, text in enumerate(pages, 1):
        found = [word for word in CONTROL_TEXT if word in text]
        assert not found, f"page {i} prints controls {found}: {text[:300]!r}"


# The state classes of the viewer's drawing at its current step, by element id.
_VIEWER_STATES = """(root) => Object.fromEntries(Array.from(
    root.querySelectorAll('.gv-diagram > svg.gv-svg .gv-steppable'),
    (e) => [e.id, ['gv-active', 'gv-done', 'gv-pending'].find((c) => e.classList.contains(c))]))"""

# The state classes of handout block b, by the element id they copy.
_BLOCK_STATES = """(b) => Object.fromEntries(Array.from(
    b.querySelectorAll('.gv-handout-svg .gv-steppable'),
    (e) => [e.dataset.gvId, ['gv-active', 'gv-done', 'gv-pending'].find((c) => e.classList.contains(c))]))"""

# For a block: its crop (viewBox), the whole drawing's, and whether every active
# element lies inside the printed SVG's box.
_CROP = """(b) => {
    const svg = b.querySelector('.gv-handout-svg');
    const vb = svg.viewBox.baseVal;
    const whole = document.querySelector('.gv-diagram > svg.gv-svg').viewBox.baseVal;
    const box = svg.getBoundingClientRect();
    const active = Array.from(svg.querySelectorAll('.gv-active'), (e) => e.getBoundingClientRect());
    return {
        crop: [vb.width, vb.height], whole: [whole.width, whole.height], active: active.length,
        inside: active.every((r) => r.left >= box.left - 1 && r.right <= box.right + 1
                                    && r.top >= box.top - 1 && r.bottom <= box.bottom + 1),
        px_per_unit: box.width / vb.width,
    };
}"""


# ------------------------------------------------------------------ the handout


def test_print_button_prints_the_chosen_steps_one_a_page(offline_page, tmp_path, screenshot_dir):
    tr = scoped_mlp()
    path = gv.export_html([tr], tmp_path / "mlp.html", title="Two-layer MLP")
    viewer = open_report(offline_page, path)
    steps = payload_steps(viewer)
    n = len(steps)
    stub_print(offline_page)
    zoom_before = viewer.evaluate("r => r.gvViewer.zoom.scale")
    viewer.locator(".gv-print").click()
    # A report of one trace: the form says nothing of naming traces.
    assert viewer.locator(".gv-handout-hint").is_hidden()
    assert viewer.locator(".gv-handout-steps").get_attribute("placeholder") == "all, or 0, 3, 5-7"

    choose_steps(offline_page, viewer, "0, 2, 4-5")
    assert offline_page.evaluate("window.printed") == 1
    # Typing "5-6" zoomed nothing and stepped nothing: the keys went to the form.
    assert viewer.evaluate("r => [r.gvViewer.step, r.gvViewer.zoom.scale]") == [0, zoom_before]
    assert viewer.locator(".gv-handout-form").is_hidden()
    blocks = offline_page.locator("body > .gv-handout > .gv-handout-step")
    chosen = [0, 2, 4, 5]
    assert [int(b.get_attribute("data-step")) for b in blocks.all()] == chosen

    # Each block's diagram is the viewer's at that step, cropped around the step.
    offline_page.set_viewport_size({"width": A4_WIDTH_PX, "height": 1123})
    offline_page.emulate_media(media="print")
    for block, k in zip(blocks.all(), chosen):
        viewer.evaluate("(r, k) => { r.gvViewer.go(k); r.gvViewer.settle(); }", k)
        want = viewer.evaluate(_VIEWER_STATES)
        got = block.evaluate(_BLOCK_STATES)
        assert got and all(want[i] == s for i, s in got.items()), f"step {k}: {got} vs {want}"
        crop = block.evaluate(_CROP)
        assert crop["active"] > 0 and crop["inside"], f"step {k}: {crop}"
        assert crop["crop"][0] * crop["crop"][1] < 0.6 * crop["whole"][0] * crop["whole"][1], crop
        # Legible: the drawing at about its natural size or larger (1 pt = 1.33 px).
        assert crop["px_per_unit"] > 0.9, crop
    offline_page.screenshot(path=screenshot_dir / "handout_print.png", full_page=True)

    pages = pdf_pages(offline_page)
    assert len(pages) == len(chosen), [p[:80] for p in pages]
    for text, k in zip(pages, chosen):
        assert f"Step {k} / {n - 1}" in text, text[:200]
        assert plain(steps[k]["title"]) in text, (steps[k]["title"], text[:300])
        assert plain(steps[k]["sentence"])[:40] in text, (steps[k]["sentence"], text[:600])
    assert_no_controls(pages)
    # Printed, the handout goes: the page prints as itself again.
    assert offline_page.locator(".gv-handout").count() == 0
    assert not offline_page.evaluate("document.body.classList.contains('gv-printing-handout')")
    assert_offline_and_clean(offline_page)


def test_all_steps_print_one_page_each(offline_page, tmp_path):
    tr = linear_regression()
    path = gv.export_html([tr], tmp_path / "lr.html", title="Linear regression")
    viewer = open_report(offline_page, path)
    n = len(tr.steps)
    assert viewer.evaluate("r => r.gvViewer.handout('all')") == n
    pages = pdf_pages(offline_page)
    assert len(pages) == n
    assert [re.search(r"Step (\d+) / ", p).group(1) for p in pages] == [str(k) for k in range(n)]
    assert_no_controls(pages)
    # An array of step numbers, in any order, prints in step order.
    assert viewer.evaluate("r => r.gvViewer.handout([4, 2, 2])") == 2
    assert offline_page.locator(".gv-handout-step").evaluate_all(
        "bs => bs.map((b) => b.dataset.step)") == ["2", "4"]
    assert_offline_and_clean(offline_page)


@pytest.mark.parametrize("typed, message", [
    ("1, 40", "step 40 does not exist: this trace has 14 steps, 0 to 13"),
    ("14", "step 14 does not exist: this trace has 14 steps, 0 to 13"),
    ("two", '"two" is not a step or a range of steps: write "all", or step numbers and ranges such as 0, 3, 5-7 (numbered from 0, as on screen)'),
    ("7-5", "7-5 runs backwards: write 5-7"),
    ("", 'no steps chosen: write "all", or step numbers and ranges such as 0, 3, 5-7 (numbered from 0, as on screen)'),
    # one trace: a trace named is the only one, or says so
    ("t2:1", "trace 2 does not exist: this report has one trace, t1"),
])
def test_a_bad_list_says_what_is_accepted_and_prints_nothing(offline_page, tmp_path, typed, message):
    path = gv.export_html([scoped_mlp()], tmp_path / "mlp.html")
    viewer = open_report(offline_page, path)
    assert_refused(offline_page, viewer, typed, message)
    # Put right, the list prints.
    choose_steps(offline_page, viewer, "2")
    assert viewer.locator(".gv-handout-message").is_hidden()
    assert offline_page.evaluate("window.printed") == 1
    assert_offline_and_clean(offline_page)


def test_hidden_gradient_values_stay_hidden_on_paper(offline_page, tmp_path):
    path = gv.export_html([scoped_mlp()], tmp_path / "mlp.html")
    viewer = open_report(offline_page, path)
    step = 4  # the broadcast reduction: gradient values on its edges and its funnel

    def printed(hide: bool) -> tuple[list[str], str]:
        """The diagram's gradient values in the handout of `step`, and its printed page."""
        if viewer.locator(".gv-toggle-grad").is_checked() == hide:
            viewer.locator(".gv-toggle-grad").click()
        viewer.evaluate("(r, k) => r.gvViewer.handout([k])", step)
        block = offline_page.locator(".gv-handout-step")
        values = [plain(v) for v in block.locator(".gv-handout-svg .gv-grad-value").all_text_contents()]
        assert block.evaluate("b => b.parentNode.classList.contains('gv-hide-grad')") == hide
        return [v for v in values if re.search(r"\d", v)], pdf_pages(offline_page)[0]

    values, shown = printed(hide=False)
    assert values and any(v in shown for v in values), (values, shown)
    assert "(hidden)" not in shown
    values, hidden = printed(hide=True)
    # nowhere on the page: not in the diagram, nor where the sentence or formula writes them
    assert not [v for v in values if v in hidden], hidden
    assert "(hidden)" in hidden
    assert_offline_and_clean(offline_page)


# ------------------------------------------------------ whole boxes, arrays


# For each handout block: the nodes of its drawing that are not wholly inside
# the part of the page its viewBox shows (the viewBox's corners mapped to the
# page; a drawing narrower than its box is centred in it), and how many it has.
_NODES_OUTSIDE = """(b) => {
    const svg = b.querySelector('.gv-handout-svg');
    const vb = svg.viewBox.baseVal;
    const ctm = svg.getScreenCTM();
    const corner = (x, y) => { const p = svg.createSVGPoint(); p.x = x; p.y = y; return p.matrixTransform(ctm); };
    const a = corner(vb.x, vb.y), z = corner(vb.x + vb.width, vb.y + vb.height);
    const nodes = Array.from(svg.querySelectorAll('g.node'));
    const out = nodes.filter((n) => {
        const r = n.getBoundingClientRect();
        return r.left < a.x - 1 || r.right > z.x + 1 || r.top < a.y - 1 || r.bottom > z.y + 1;
    }).map((n) => n.dataset.gvId + ': ' + n.textContent.trim().slice(0, 30));
    return {nodes: nodes.length, outside: out};
}"""


def print_layout(page) -> None:
    """Lay the page out as the print dialog does on A4: its width, print media."""
    page.set_viewport_size({"width": A4_WIDTH_PX, "height": A4_HEIGHT_PX})
    page.emulate_media(media="print")


# Per handout block, how many nodes of the viewer's drawing reach into its crop
# (their boxes in the drawing's units, by way of the screen, against the block's
# viewBox, which is in the same units).
_NODES_REACHING = """() => {
    const svg = document.querySelector('.gv-diagram > svg.gv-svg');
    const back = svg.getScreenCTM().inverse();
    const boxes = Array.from(svg.querySelectorAll('g.node'), (n) => {
        const b = n.getBBox(), m = back.multiply(n.getScreenCTM());
        const xs = [], ys = [];
        for (const [x, y] of [[b.x, b.y], [b.x + b.width, b.y + b.height]]) {
            const p = new DOMPoint(x, y).matrixTransform(m);
            xs.push(p.x); ys.push(p.y);
        }
        return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
    });
    return Array.from(document.querySelectorAll('.gv-handout-step .gv-handout-svg'), (s) => {
        const [x, y, w, h] = s.getAttribute('viewBox').split(' ').map(Number);
        return boxes.filter((b) => b[0] < x + w - 1 && b[2] > x + 1 && b[1] < y + h - 1 && b[3] > y + 1).length;
    });
}"""


@pytest.mark.parametrize("make", [scoped_mlp, lambda: deep_mlp(6)], ids=["scoped_mlp", "deep_mlp"])
def test_the_crop_keeps_whole_boxes(offline_page, tmp_path, make):
    path = gv.export_html([make()], tmp_path / "t.html")
    viewer = open_report(offline_page, path)
    n = viewer.evaluate("r => r.gvViewer.handout('all')")
    # Whole because widened, not because the cut ones were left out: every node
    # of the drawing that reaches into a block's crop is printed in it.
    reaching = offline_page.evaluate(_NODES_REACHING)
    printed = offline_page.evaluate(
        "() => Array.from(document.querySelectorAll('.gv-handout-step'), "
        "(b) => b.querySelectorAll('.gv-handout-svg g.node').length)")
    assert reaching == printed
    print_layout(offline_page)
    blocks = offline_page.locator(".gv-handout-step").all()
    assert len(blocks) == n
    cut_before = 0
    for block in blocks:
        seen = block.evaluate(_NODES_OUTSIDE)
        assert seen["nodes"] > 0 and seen["outside"] == [], (block.get_attribute("data-step"), seen)
        # Cropped, not the whole drawing: the crop still leaves nodes out.
        k = int(block.get_attribute("data-step"))
        cut_before += viewer.evaluate("""(r, k) => {
            const all = r.querySelectorAll('.gv-diagram > svg.gv-svg g.node').length;
            return all - document.querySelectorAll(`.gv-handout-step[data-step="${k}"] .gv-handout-svg g.node`).length;
        }""", k)
    assert cut_before > 0, "every block printed the whole drawing: nothing was cropped"
    assert_offline_and_clean(offline_page)


def test_a_step_prints_its_arrays_below_its_diagram_filling_the_page(offline_page, tmp_path, screenshot_dir):
    path = gv.export_html([scoped_mlp()], tmp_path / "mlp.html", title="Two-layer MLP")
    viewer = open_report(offline_page, path)
    steps = payload_steps(viewer)
    # the step with the most arrays shown whole: a matmul's gradients
    k = max(range(len(steps)), key=lambda j: sum(a.get("values") is not None for a in steps[j]["arrays"]))
    arrays = steps[k]["arrays"]
    assert len(arrays) >= 2
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", k)
    panel = viewer.evaluate("""(r) => ({
        labels: Array.from(r.querySelectorAll('.gv-panel .gv-array-label'), (e) => e.textContent),
        cells: Array.from(r.querySelectorAll('.gv-panel .gv-arrays .gv-cell-value'), (e) => e.textContent)})""")
    assert panel["labels"] == [a["label"] for a in arrays] and panel["cells"]

    assert viewer.evaluate("(r, k) => r.gvViewer.handout([k])", k) == 1
    block = offline_page.locator(".gv-handout-step")
    # The panel's arrays, as it shows them: the same captions and values.
    printed = block.evaluate("""(b) => ({
        labels: Array.from(b.querySelectorAll('.gv-handout-arrays .gv-array-label'), (e) => e.textContent),
        cells: Array.from(b.querySelectorAll('.gv-handout-arrays .gv-cell-value'), (e) => e.textContent)})""")
    assert printed == panel

    print_layout(offline_page)
    layout = block.evaluate("""(b) => {
        const top = b.getBoundingClientRect().top;
        const bottom = (sel) => b.querySelector(sel).getBoundingClientRect().bottom - top;
        return {diagram: bottom('.gv-handout-diagram'), arrays_top: b.querySelector('.gv-handout-arrays')
                    .getBoundingClientRect().top - top, arrays: bottom('.gv-handout-arrays'),
                height: b.getBoundingClientRect().height};
    }""")
    # the arrays below the diagram, the block reaching well down its page and still on it
    assert layout["arrays_top"] >= layout["diagram"], layout
    assert 0.7 * A4_CONTENT_HEIGHT_PX < layout["arrays"] <= A4_CONTENT_HEIGHT_PX, layout
    offline_page.screenshot(path=screenshot_dir / "handout_arrays.png", full_page=True)

    pages = pdf_pages(offline_page)
    assert len(pages) == 1, [p[:80] for p in pages]
    for label in panel["labels"]:
        assert plain(label) in pages[0], (label, pages[0])
    assert " ".join(panel["cells"][:6]) in pages[0], (panel["cells"][:6], pages[0])
    assert_no_controls(pages)
    assert_offline_and_clean(offline_page)


def test_hidden_values_stay_hidden_in_the_printed_arrays(offline_page, tmp_path):
    path = gv.export_html([scoped_mlp()], tmp_path / "mlp.html")
    viewer = open_report(offline_page, path)
    k = 2
    viewer.locator(".gv-toggle-grad").click()
    assert viewer.evaluate("(r, k) => r.gvViewer.handout([k])", k) == 1
    block = offline_page.locator(".gv-handout-step")
    assert block.evaluate("b => b.classList.contains('gv-hide-grad')")
    print_layout(offline_page)
    cells = block.evaluate("""(b) => Array.from(b.querySelectorAll('.gv-handout-arrays .gv-cell-value'),
        (e) => [e.textContent, getComputedStyle(e).visibility])""")
    assert cells and all(v == "hidden" for _, v in cells), cells
    page = pdf_pages(offline_page)[0]
    assert [t for t, _ in cells if "." in t and t in page] == [], page


# ------------------------------------------------------ steps of several traces


def two_trace_report(tmp_path) -> pathlib.Path:
    return gv.export_html([linear_regression("Linear regression"), scoped_mlp("Two-layer MLP")],
                          tmp_path / "two.html", title="Lesson")


def test_one_handout_holds_steps_of_two_traces(offline_page, tmp_path, screenshot_dir):
    path = two_trace_report(tmp_path)
    open_report(offline_page, path, traces=2)
    first, second = offline_page.locator(".gv-viewer").all()
    titles = {1: "Linear regression", 2: "Two-layer MLP"}
    steps = {1: payload_steps(first), 2: payload_steps(second)}
    stub_print(offline_page)

    # The form says how to name the other trace, on a page of several.
    first.locator(".gv-print").click()
    hint = first.locator(".gv-handout-hint")
    assert hint.is_visible() and "t2:4" in hint.text_content() and "t1 of 2" in hint.text_content()
    assert "t2:" in first.locator(".gv-handout-steps").get_attribute("placeholder")

    # Written out of order: printed in trace order, then step order.
    choose_steps(offline_page, first, "t2:5-6, 3, t1:1")
    assert offline_page.evaluate("window.printed") == 1
    chosen = [(1, 1), (1, 3), (2, 5), (2, 6)]
    blocks = offline_page.locator("body > .gv-handout > .gv-handout-step")
    assert [(int(b.get_attribute("data-trace")), int(b.get_attribute("data-step"))) for b in blocks.all()] \
        == chosen

    # The second trace's blocks are its own: its drawing, its step's elements lit.
    for block, (t, k) in zip(blocks.all(), chosen):
        viewer = first if t == 1 else second
        lit = sorted(block.evaluate("b => Array.from(b.querySelectorAll('.gv-handout-svg .gv-active'), "
                                    "(e) => e.dataset.gvId)"))
        assert lit and lit == sorted(viewer.evaluate("(r, k) => r.gvViewer.stepIds(k)", k)), (t, k)

    print_layout(offline_page)
    offline_page.screenshot(path=screenshot_dir / "handout_two_traces.png", full_page=True)
    pages = pdf_pages(offline_page)
    assert len(pages) == len(chosen), [p[:80] for p in pages]
    for text, (t, k) in zip(pages, chosen):
        n = len(steps[t])
        assert f"Step {k} / {n - 1}" in text, text[:200]
        assert f"Trace {t} · {titles[t]}" in text, text[:200]
        assert plain(steps[t][k]["title"]) in text, (steps[t][k]["title"], text[:300])
    assert_no_controls(pages)
    offline_page.emulate_media(media="screen")

    # Plain numbers are the viewer's own trace: from the second viewer, its steps.
    assert second.evaluate("r => r.gvViewer.handout('0, 2')") == 2
    assert offline_page.locator(".gv-handout-step").evaluate_all(
        "bs => bs.map((b) => [b.dataset.trace, b.dataset.step])") == [["2", "0"], ["2", "2"]]
    # t1:all from the second viewer: all of the first trace's steps, before the second's.
    n1 = len(steps[1])
    assert second.evaluate("r => r.gvViewer.handout('4, t1:all')") == n1 + 1
    assert offline_page.locator(".gv-handout-step").evaluate_all(
        "bs => bs.map((b) => b.dataset.trace + ':' + b.dataset.step)") \
        == [f"1:{k}" for k in range(n1)] + ["2:4"]
    # one handout a page: the first viewer's went
    assert offline_page.locator("body > .gv-handout").count() == 1
    assert_offline_and_clean(offline_page)


@pytest.mark.parametrize("typed, message", [
    ("t3:1", "trace 3 does not exist: this report has 2 traces, t1 and t2"),
    ("t0:1", "trace 0 does not exist: this report has 2 traces, t1 and t2"),
    ("t1:99", "step 99 of trace 1 does not exist: trace 1 has 11 steps, 0 to 10"),
    ("0, t2:14", "step 14 of trace 2 does not exist: trace 2 has 14 steps, 0 to 13"),
    ("t2:6-4", "t2:6-4 runs backwards: write t2:4-6"),
    ("t2", f'"t2" is not a step or a range of steps: {HOW_TRACES}'),
    ("t2:x", f'"t2:x" is not a step or a range of steps: {HOW_TRACES}'),
    ("40", "step 40 does not exist: this trace has 11 steps, 0 to 10"),
])
def test_a_bad_trace_says_what_the_report_has(offline_page, tmp_path, typed, message):
    path = two_trace_report(tmp_path)
    viewer = open_report(offline_page, path, traces=2)
    assert viewer.evaluate("r => r.gvViewer.steps") == 11
    assert_refused(offline_page, viewer, typed, message)
    assert_offline_and_clean(offline_page)


# ------------------------------------------------------------ a batch of images


def cnn_trace() -> gv.Trace:
    """A small CNN on a batch of 2: conv2d (3 channels), relu, max pool, sum of squares."""
    rng = np.random.default_rng(2)
    x = gv.constant(rng.normal(size=(2, 8, 8, 1)), name="digits")
    w = gv.Variable(rng.normal(size=(3, 3, 1, 3)), name="kernel")
    h = gv.nn.max_pool2d(gv.nn.relu(gv.nn.conv2d(x, w, 1, "SAME")), 2, 2, "VALID")
    return gv.trace_gradients(gv.reduce_sum(h * h), w, title="CNN")


_VISIBLE_CONTROLS = """() => Array.from(document.querySelectorAll('select, input, button'))
    .filter((e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden')
    .map((e) => e.outerHTML.slice(0, 80))"""


def test_a_batch_of_images_prints_without_its_menu(offline_page, tmp_path, screenshot_dir):
    tr = cnn_trace()
    viewer = open_report(offline_page, tr.to_html(tmp_path / "cnn.html"))
    pool = next(s.index for s in tr.steps if getattr(s, "op_type", "") == "MaxPool")
    viewer.evaluate("(r, k) => r.gvViewer.go(k)", pool)
    menus = viewer.locator(".gv-panel select")
    assert menus.count() == 2 and "showing example" in viewer.locator(".gv-panel").text_content()

    # Ctrl+P: the step's images, no menu.
    print_layout(offline_page)
    assert offline_page.evaluate(_VISIBLE_CONTROLS) == []
    assert viewer.locator(".gv-panel .gv-image").first.is_visible()
    pages = pdf_pages(offline_page)
    assert "channel 0" in " ".join(pages)
    # The menu's choice in words instead: which example of the batch the images are.
    assert " ".join(pages).count("example 0 of 2") == 2
    assert_no_controls(pages)
    offline_page.emulate_media(media="screen")

    # The handout: the example the panel shows, named in words, no menu.
    viewer.locator(".gv-panel select").first.select_option("1")
    assert viewer.evaluate("(r, k) => r.gvViewer.handout([k])", pool) == 1
    block = offline_page.locator(".gv-handout-step")
    assert block.locator("select").count() == 0
    assert block.locator(".gv-handout-pick").all_text_contents() == ["example 1 of 2"] * 2
    panel_cells = viewer.locator(".gv-panel .gv-image-table .gv-cell-value").all_text_contents()
    assert block.locator(".gv-image-table .gv-cell-value").all_text_contents() == panel_cells
    # its canvases drawn: not blank
    pixels = block.evaluate("""(b) => Array.from(b.querySelectorAll('canvas'), (c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let sum = 0; for (let i = 0; i < d.length; i += 4) sum += d[i] + d[i + 1] + d[i + 2];
        return sum; })""")
    assert len(pixels) == 3 and all(pixels), pixels  # dL/dRelu (2,8,8,3): 3 channels
    print_layout(offline_page)
    assert offline_page.evaluate(_VISIBLE_CONTROLS) == []
    offline_page.screenshot(path=screenshot_dir / "handout_cnn.png", full_page=True)
    pages = pdf_pages(offline_page)
    assert len(pages) == 1 and "example 1 of 2" in pages[0], [p[:200] for p in pages]
    assert all(c in pages[0] for c in panel_cells[:8]), (panel_cells[:8], pages[0])
    assert_no_controls(pages)
    assert_offline_and_clean(offline_page)


# ------------------------------------------------------------ plain Ctrl+P


_CLIPPED = """(root) => {
    // Every node of the drawing lies inside every box around it that clips.
    const svg = root.querySelector('.gv-diagram > svg.gv-svg');
    const clips = [];
    for (let e = svg.parentElement; e; e = e.parentElement) {
        const s = getComputedStyle(e);
        if (s.overflowX !== 'visible' || s.overflowY !== 'visible' || /paint|strict|content/.test(s.contain)) {
            clips.push(e);
        }
    }
    const out = [];
    for (const n of svg.querySelectorAll('g.node')) {
        const r = n.getBoundingClientRect();
        for (const c of clips) {
            const b = c.getBoundingClientRect();
            if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
                out.push(`${n.id} outside ${c.className}`);
            }
        }
    }
    return {clipped: out, width: svg.getBoundingClientRect().width};
}"""


def test_plain_print_shows_the_step_and_the_whole_diagram_without_controls(offline_page, tmp_path):
    tr = scoped_mlp()
    path = gv.export_html([tr], tmp_path / "mlp.html", title="Two-layer MLP")
    viewer = open_report(offline_page, path)
    steps = payload_steps(viewer)
    viewer.evaluate("r => r.gvViewer.go(5)")

    offline_page.set_viewport_size({"width": A4_WIDTH_PX, "height": 1123})
    offline_page.emulate_media(media="print")
    seen = viewer.evaluate(_CLIPPED)
    assert seen["clipped"] == [], seen["clipped"][:5]
    assert 0 < seen["width"] <= A4_WIDTH_PX
    for cls in (".gv-controls", ".gv-options", ".gv-help", ".gv-print"):
        assert viewer.locator(cls).is_hidden(), cls

    pages = pdf_pages(offline_page)
    text = " ".join(pages)
    assert plain(steps[5]["sentence"])[:40] in text
    assert "layer1/W1" in text and "SoftmaxCrossEntropyWithLogits" in text  # the diagram's far ends
    assert_no_controls(pages)
    assert_offline_and_clean(offline_page)


def test_print_brings_the_whole_diagram_up_to_the_step(offline_page, tmp_path):
    # On screen a long jump restyles only the elements in view; on paper all show.
    path = gv.export_html([deep_mlp(40)], tmp_path / "deep.html")
    viewer = open_report(offline_page, path)
    stale = viewer.evaluate("""(r) => {
        r.gvViewer.go(r.gvViewer.steps - 1);
        const before = r.gvViewer.stale;
        window.dispatchEvent(new Event('beforeprint'));
        return [before, r.gvViewer.stale];
    }""")
    assert stale[0] > 0 and stale[1] == 0, stale


# ------------------------------------------------------------------ JupyterLab


def test_print_button_in_jupyterlab_prints_only_the_handout(lab, page, screenshot_dir):
    nb = lab.write_notebook("handout_lab.ipynb", [
        "import gradviz as gv",
        "X = gv.constant([[2.], [3.]], name='X')\n"
        "W = gv.Variable(1.5, name='W')\n"
        "trace = gv.trace_gradients(gv.reduce_sum((X * W) ** 2), [W], title='lab handout')\n"
        "trace",
    ])
    lab.open_notebook(page, nb)
    lab.run_all(page)
    viewer = page.locator(".jp-OutputArea-output .gv-viewer").first
    viewer.locator(".gv-diagram svg").wait_for()
    stub_print(page)
    # A widget is in no report: it takes plain numbers only, and says so.
    viewer.locator(".gv-print").click()
    assert viewer.locator(".gv-handout-hint").is_hidden()
    assert viewer.evaluate("r => { try { r.gvViewer.handout('t1:0'); } catch (e) { return e.message; } }") \
        == f'"t1:0" names a trace of a report, and this viewer is in none: {HOW}'
    choose_steps(page, viewer, "0-1")
    assert page.evaluate("window.printed") == 1
    assert page.locator("body > .gv-handout > .gv-handout-step").count() == 2

    pages = pdf_pages(page)
    assert len(pages) == 2, [p[:120] for p in pages]
    assert "Step 0 / " in pages[0] and "Step 1 / " in pages[1]
    # Nothing of JupyterLab around it: no menu, no notebook, no status bar.
    for text in pages:
        assert not [w for w in ("Kernel", "Settings", "import gradviz") if w in text], text[:300]
    assert_no_controls(pages)
