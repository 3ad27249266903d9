"""axe-core's audit of the report, the practice report and the JupyterLab widget,
in the light and the dark theme.

axe-core (from the npm registry, the version tests/axe/package-lock.json pins,
installed by scripts/setup.sh) runs inside the page, as a reader's browser
extension would, at the states a reader reaches: the first step, a step with
arrays and images, the last step with its results, the print and picture forms
open, a practice question answered wrong, hinted and revealed, the hand-in form.
Nothing serious or critical may be found (colour contrast, names of controls,
scroll regions that take focus, ...).  Moderate findings are printed, not failed.

The theme comes from the browser's colour scheme (Playwright's ``color_scheme``),
from the report's switch, and in JupyterLab from its own theme.
"""

from __future__ import annotations

import json

import pytest

import gradviz as gv
from fixtures.traces import linear_regression, scoped_mlp, tiny_cnn
from gradviz.views.marks import SHEET
from gradviz.views.practice import questions
from harness import REPO_ROOT, block_network
from test_colour_access import luminance as hex_luminance
from test_practice_browser import answer, come_to, go, open_report

pytestmark = pytest.mark.browser

AXE = REPO_ROOT / "tests" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SEVERE = ("serious", "critical")
THEMES = ("light", "dark")

# The violations axe finds under `root` (a selector; the whole page when None),
# each with the elements it names and axe's summary of what to fix.
_AUDIT_JS = """async (root) => {
    const context = root ? document.querySelector(root) : document;
    const result = await axe.run(context, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => n.target.join(" ") + ": " + (n.failureSummary || "").replace(/\\s+/g, " ")),
    }));
}"""


def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(f"{AXE.relative_to(REPO_ROOT)} is missing: `make test` installs it "
                    "(scripts/setup.sh test runs npm ci in tests/axe)", pytrace=False)
    return AXE.read_text(encoding="utf-8")


def audit(page, where: str, root: str | None = None) -> list[str]:
    """The serious and critical findings at this state of the page, each said in a line."""
    found = page.evaluate(_AUDIT_JS, root)
    for v in found:
        if v["impact"] not in SEVERE:
            print(f"[{where}] {v['impact']} {v['id']}: {v['help']} ({len(v['nodes'])})")
    return [f"[{where}] {v['impact']} {v['id']} ({v['help']}): " + " | ".join(v["nodes"][:4])
            for v in found if v["impact"] in SEVERE]


@pytest.fixture
def themed_page(browser, request):
    """A page offline, its colour scheme the test's parameter, with axe-core in every document."""
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  color_scheme=request.param, service_workers="block")
    block_network(context)
    context.add_init_script(script=axe_source())
    page = context.new_page()
    page.page_errors = []
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    yield page
    context.close()


def scheme_of(page) -> str:
    """The colour scheme the browser gives the page: "light" or "dark"."""
    return page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'")


def theme_of(page) -> dict:
    """The colours the page is drawn in: its background, a viewer's, and its diagram sheet's."""
    return page.evaluate("""() => ({
        page: getComputedStyle(document.documentElement).backgroundColor,
        viewer: getComputedStyle(document.querySelector('.gv-viewer')).backgroundColor,
        text: getComputedStyle(document.querySelector('.gv-viewer')).color,
        sheet: getComputedStyle(document.querySelector('.gv-viewer div.gv-diagram')).backgroundColor,
    })""")


def as_hex(css: str) -> str:
    """A computed ``rgb(r, g, b)`` colour as ``#RRGGBB``."""
    r, g, b = (int(float(x)) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])
    return f"#{r:02X}{g:02X}{b:02X}"


def luminance(css: str) -> float:
    """The relative luminance (WCAG 2.1) of a computed ``rgb(r, g, b)`` colour."""
    return hex_luminance(as_hex(css))


def assert_theme(page, scheme: str) -> None:
    colours = theme_of(page)
    dark = scheme == "dark"
    for part in ("page", "viewer"):
        assert (luminance(colours[part]) < 0.05) == dark, (scheme, part, colours)
    assert (luminance(colours["text"]) > 0.5) == dark, (scheme, colours)
    # The diagram stays on the mark table's sheet, in both themes.
    assert as_hex(colours["sheet"]) == SHEET[scheme].upper(), colours


@pytest.mark.parametrize("themed_page", THEMES, indirect=True)
def test_the_report_has_nothing_serious(themed_page, tmp_path, screenshot_dir):
    page = themed_page
    path = gv.export_html([linear_regression(), tiny_cnn(), scoped_mlp()], tmp_path / "report.html",
                          title="an audited report")
    open_report(page, path)
    scheme = scheme_of(page)
    assert_theme(page, scheme)
    viewers = page.locator(".gv-viewer")
    found = audit(page, "step 0")
    # Each viewer at its first backward step, its middle one and its last (the CNN's
    # images, heatmaps and windows, the MLP's scopes, the results): axe looks at what
    # is rendered, so each state of the page is an audit of its own.
    for where in ("first backward step", "middle step", "last step"):
        for index in range(viewers.count()):
            viewer = viewers.nth(index)
            steps = viewer.evaluate("(r) => r.gvViewer.steps")
            go(viewer, {"first backward step": 1, "middle step": steps // 2}.get(where, steps - 1))
        found += audit(page, f"every viewer at its {where}")
    first = viewers.nth(0)
    first.locator(".gv-print").click()
    found += audit(page, "print form open")
    first.locator(".gv-save-picture").click()
    found += audit(page, "picture form open")
    page.screenshot(path=screenshot_dir / f"accessibility_report_{scheme}.png")
    assert not found, "\n".join(found)
    assert not page.page_errors


@pytest.mark.parametrize("themed_page", THEMES, indirect=True)
def test_the_practice_report_has_nothing_serious(themed_page, tmp_path, screenshot_dir):
    page = themed_page
    tr = linear_regression()
    viewer = open_report(page, tr.to_html(tmp_path / "practice.html", practice=True))
    scheme = scheme_of(page)
    assert_theme(page, scheme)
    found = audit(page, "practice, step 0")
    # A question with a named slip: the slip's answer, then a hint, then revealed.
    q = next(q for q in questions(tr) if q.wrong)
    go(viewer, q.step)
    come_to(viewer, q)
    answer(viewer, q.shape, q.wrong[0].value)
    assert viewer.locator(".gv-feedback-misconception").is_visible()
    found += audit(page, "practice, a slip named")
    viewer.locator(".gv-answer-hint").click()
    found += audit(page, "practice, a hint")
    viewer.locator(".gv-answer-reveal").click()
    found += audit(page, "practice, revealed")
    viewer.locator(".gv-hand-in").click()
    found += audit(page, "practice, the hand-in form")
    page.screenshot(path=screenshot_dir / f"accessibility_practice_{scheme}.png")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("scheme", THEMES)
def test_the_switch_sets_the_theme_and_is_kept(browser, tmp_path, scheme):
    """The report starts in the browser's scheme; the switch turns it over, for this
    report and the next one opened, and paper stays white."""
    path = linear_regression().to_html(tmp_path / "switch.html")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    block_network(context)
    # The theme on <html> when the body begins: what the first frame is drawn in.
    context.add_init_script(script="""new MutationObserver((changes, watch) => {
        if (!document.body) return;
        window.gvThemeAtBody = document.documentElement.dataset.gvTheme || null;
        watch.disconnect();
    }).observe(document, { childList: true, subtree: true });""")
    page = context.new_page()
    try:
        open_report(page, path)
        switch = page.get_by_role("button", name="Dark theme")
        assert switch.get_attribute("aria-pressed") == str(scheme == "dark").lower()
        assert_theme(page, scheme)
        switch.click()
        other = "light" if scheme == "dark" else "dark"
        assert switch.get_attribute("aria-pressed") == str(other == "dark").lower()
        assert_theme(page, other)
        page.reload()
        page.wait_for_selector(".gv-viewer .gv-diagram svg")
        assert_theme(page, other)
        # the choice kept is the page's from its first frame, not only once its script ran
        assert page.evaluate("() => window.gvThemeAtBody") == other
        page.emulate_media(media="print")
        assert luminance(theme_of(page)["page"]) > 0.9  # printed on white, whatever the theme
    finally:
        context.close()


# ---------------------------------------------------------------- JupyterLab

_CHANGE_THEME_JS = """async (theme) => {
    await window.jupyterapp.commands.execute('apputils:change-theme', { theme });
}"""


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_the_widget_has_nothing_serious(lab, page, theme, screenshot_dir):
    lab.write_notebook("audit.ipynb", [
        "import gradviz as gv\n"
        "x = gv.Variable([[1.0, -2.0], [3.0, 0.5]], name='x')\n"
        "W = gv.Variable([[0.5], [-1.0]], name='W')\n"
        "loss = gv.reduce_sum(gv.relu(gv.matmul(x, W)) ** 2, name='loss')\n"
        "gv.show(gv.trace_gradients(loss, [x, W], title='audited'))",
    ])
    page.add_init_script(script=axe_source())
    lab.open_notebook(page, "audit.ipynb")
    try:
        page.evaluate(_CHANGE_THEME_JS, theme)
        page.wait_for_function("(light) => document.body.dataset.jpThemeLight === light",
                               arg="false" if theme.endswith("Dark") else "true")
        lab.run_all(page)
        page.wait_for_selector(".gv-viewer .gv-diagram svg")
        viewer = page.locator(".gv-viewer")
        colours = theme_of(page)
        assert (luminance(colours["viewer"]) < 0.05) == theme.endswith("Dark"), colours
        found = audit(page, f"{theme}, step 0", ".gv-viewer")
        steps = viewer.evaluate("(r) => r.gvViewer.steps")
        for k in (steps // 2, steps - 1):
            go(viewer, k)
            found += audit(page, f"{theme}, step {k}", ".gv-viewer")
        viewer.screenshot(path=screenshot_dir / f"accessibility_lab_{theme.split()[-1].lower()}.png")
        assert not found, "\n".join(found)
    finally:
        page.evaluate(_CHANGE_THEME_JS, "JupyterLab Light")


def test_axe_finds_what_it_should(browser, tmp_path):
    """The audit is not blind: a page with a low-contrast text and an unnamed
    button gives both findings as serious or critical."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><html lang=en><title>bad</title><main>"
                   "<p style='color:#aaa;background:#fff'>faint</p><button></button></main>",
                   encoding="utf-8")
    context = browser.new_context()
    context.add_init_script(script=axe_source())
    page = context.new_page()
    try:
        page.goto(bad.as_uri())
        found = " ".join(audit(page, "bad"))
        assert "color-contrast" in found and "button-name" in found, json.dumps(found)
    finally:
        context.close()
