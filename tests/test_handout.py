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
from fixtures.traces import linear_regression, scoped_mlp

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
    """Open the print form, type `text` key by key, press Print."""
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
