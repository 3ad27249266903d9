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

import pypdf
import pytest

import gradviz as gv
from fixtures.traces import deep_mlp, linear_regression, scoped_mlp

pytestmark = pytest.mark.browser

# Words of the viewer's controls: none of them belongs on paper.
CONTROL_TEXT = ("whole graph", "speed", "gradient values", "forward values", "Play", "Keys when",
                "steps to print", "cancel")
# An A4 page's width in CSS px, as the print dialog lays it out (before margins).
A4_WIDTH_PX = 794


def open_report(page, path: pathlib.Path):
    page.goto(path.as_uri())
    page.wait_for_selector(".gv-viewer .gv-diagram svg")
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
])
def test_a_bad_list_says_what_is_accepted_and_prints_nothing(offline_page, tmp_path, typed, message):
    path = gv.export_html([scoped_mlp()], tmp_path / "mlp.html")
    viewer = open_report(offline_page, path)
    stub_print(offline_page)
    choose_steps(offline_page, viewer, typed)
    shown = viewer.locator(".gv-handout-message")
    assert shown.is_visible() and shown.text_content() == message
    assert offline_page.evaluate("window.printed") == 0
    assert offline_page.locator(".gv-handout").count() == 0
    # The script API says the same, as an exception.
    assert viewer.evaluate(
        "(r, t) => { try { r.gvViewer.handout(t); return null; } catch (e) { return e.message; } }",
        typed) == message
    # Put right, the list prints.
    choose_steps(offline_page, viewer, "2")
    assert shown.is_hidden() and offline_page.evaluate("window.printed") == 1
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
