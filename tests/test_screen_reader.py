"""Browser tests of the viewer read with a screen reader and driven from the keyboard.

Each test exports a report, opens it in headless Chromium and reads what
assistive technology gets: the accessible names Chromium computes (through the
DevTools protocol, as a screen reader would ask the browser), the words a live
region says as the reader steps, and where Tab takes the focus and whether the
focus can be seen.
"""

from __future__ import annotations

import re

import pytest

import gradviz as gv
from fixtures.traces import linear_regression, scoped_mlp, two_layer_mlp
from fixtures.viewer_page import wait_step
from test_viewer_lab import CELLS

pytestmark = pytest.mark.browser

# How long the viewer waits after the reader's last step before telling it (ms),
# and a margin for a loaded machine.
ANNOUNCE_MS = 250
QUIET_MS = ANNOUNCE_MS + 450


def open_report(page, path):
    page.goto(path.as_uri())
    page.wait_for_selector(".gv-viewer div.gv-diagram svg")
    return page.locator(".gv-viewer").first


def said(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# Every change of the viewer's live region, in order, kept on the root.
_WATCH_JS = """(root) => {
    root.gvSaid = [];
    const live = root.querySelector('.gv-announce');
    new MutationObserver(() => root.gvSaid.push(live.textContent))
        .observe(live, {childList: true, characterData: true, subtree: true});
}"""


def announcements(viewer) -> list[str]:
    return [s for s in viewer.evaluate("r => r.gvSaid") if s]


def expected_announcement(viewer) -> str:
    """What the live region should say of the step shown: the panel's own words."""
    k = viewer.evaluate("r => Number(r.dataset.step)")
    n = viewer.evaluate("r => r.gvViewer.steps")
    title = said(viewer.locator(".gv-step-title").inner_text())
    sentence = said(viewer.locator(".gv-sentence").inner_text())
    return f"Step {k} of {n - 1}: {title}. {sentence}"


def accessible_names(page, selector: str) -> list[dict]:
    """Chromium's accessibility node (role, name, ignored) of each element matching
    ``selector``, in document order, as a screen reader is given it."""
    count = page.evaluate("""(sel) => {
        const all = [...document.querySelectorAll(sel)];
        all.forEach((e, i) => e.setAttribute('data-ax-probe', String(i)));
        return all.length;
    }""", selector)
    cdp = page.context.new_cdp_session(page)
    try:
        doc = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        out = []
        for i in range(count):
            node = cdp.send("DOM.querySelector", {"nodeId": doc, "selector": f'[data-ax-probe="{i}"]'})
            ax = cdp.send("Accessibility.getPartialAXTree",
                          {"nodeId": node["nodeId"], "fetchRelatives": False})["nodes"][0]
            out.append({"role": ax.get("role", {}).get("value"),
                        "name": said(str(ax.get("name", {}).get("value", ""))),
                        "ignored": ax.get("ignored", False)})
        return out
    finally:
        cdp.detach()
        page.evaluate("() => document.querySelectorAll('[data-ax-probe]')"
                      ".forEach(e => e.removeAttribute('data-ax-probe'))")


def test_live_region_tells_the_step_once_the_keys_rest(offline_page, tmp_path):
    viewer = open_report(offline_page, gv.export_html([linear_regression()], tmp_path / "lr.html"))
    live = viewer.locator(".gv-announce")
    assert live.get_attribute("aria-live") == "polite"
    # Hidden from sight, not from screen readers.
    box = live.bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1
    offline_page.wait_for_timeout(QUIET_MS)
    assert live.text_content() == ""  # nothing said at load
    viewer.evaluate(_WATCH_JS)

    viewer.locator(".gv-next").click()
    wait_step(viewer, 1)
    offline_page.wait_for_timeout(QUIET_MS)
    assert announcements(viewer) == [expected_announcement(viewer)]
    assert "Step 1 of 10: Mul backward" in live.text_content()

    # A burst of arrow keys: one announcement, of where they stopped.
    # (in one task, as a held key's repeats come: the test is not at the mercy of a
    # loaded machine's gaps between separate presses)
    viewer.evaluate("""r => { r.gvSaid.length = 0; r.focus();
        for (let i = 0; i < 4; i++) r.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight", bubbles: true}));
    }""")
    wait_step(viewer, 5)
    offline_page.wait_for_timeout(QUIET_MS)
    assert announcements(viewer) == [expected_announcement(viewer)]
    assert live.text_content().startswith("Step 5 of 10: ")

    # The slider is a step the reader takes too.
    viewer.evaluate("r => { r.gvSaid.length = 0; }")
    viewer.locator(".gv-slider").focus()
    offline_page.keyboard.press("ArrowLeft")
    wait_step(viewer, 4)
    offline_page.wait_for_timeout(QUIET_MS)
    assert announcements(viewer) == [expected_announcement(viewer)]


def test_live_region_is_silent_while_playing(offline_page, tmp_path):
    viewer = open_report(offline_page, gv.export_html([linear_regression()], tmp_path / "lr.html"))
    viewer.locator(".gv-speed").select_option("8")
    viewer.evaluate(_WATCH_JS)
    viewer.locator(".gv-play").click()
    offline_page.wait_for_function("r => Number(r.dataset.step) >= 4", arg=viewer.element_handle())
    assert announcements(viewer) == []
    viewer.locator(".gv-play").click()  # pause
    assert "gv-playing" not in viewer.get_attribute("class")
    offline_page.wait_for_timeout(QUIET_MS)
    assert announcements(viewer) == [expected_announcement(viewer)]

    # Play that runs to the end stops there, and says so once.
    viewer.evaluate("r => { r.gvSaid.length = 0; }")
    viewer.locator(".gv-play").click()
    offline_page.wait_for_function("r => !r.classList.contains('gv-playing')", arg=viewer.element_handle())
    wait_step(viewer, 10)
    offline_page.wait_for_timeout(QUIET_MS)
    assert announcements(viewer) == [expected_announcement(viewer)]
    assert viewer.locator(".gv-announce").text_content().startswith("Step 10 of 10: result for b.")


def test_diagram_has_a_short_name_for_the_step(offline_page, tmp_path):
    viewer = open_report(offline_page, gv.export_html([two_layer_mlp()], tmp_path / "mlp.html"))
    n = viewer.evaluate("r => r.gvViewer.steps")
    for k in range(n):
        viewer.evaluate("(r, k) => r.gvViewer.go(k)", k)
        [box] = accessible_names(offline_page, ".gv-viewer div.gv-diagram")
        assert box["role"] == "group" and not box["ignored"]
        assert box["name"].startswith("diagram of MLP: ") and f"step {k} works on " in box["name"]
        assert len(box["name"]) < 200, box["name"]
        # The drawing's own texts (names, shapes, values) are not read out as a
        # wall: only the step's elements are there for a screen reader, each an
        # image named by its description, without values.
        shown = [a for a in accessible_names(offline_page, ".gv-viewer div.gv-diagram svg *")
                 if not a["ignored"] and a["role"] not in ("none", "generic", "InlineTextBox")]
        step_ids = viewer.evaluate("(r, k) => r.gvViewer.stepIds(k)", k)
        assert [a["role"] for a in shown] == ["image"] * len(set(step_ids))
        for a in shown:
            if a["role"] == "image":
                assert a["name"].endswith(", this step") and "[[" not in a["name"], a


# The focused element: its id, description, and whether it is the diagram box or in it.
_FOCUSED_JS = """() => {
    const a = document.activeElement;
    return {id: a.id, label: a.getAttribute('aria-label'),
            inBox: !!a.closest('div.gv-diagram'), box: a.matches('div.gv-diagram')};
}"""


def test_tab_goes_through_the_steps_elements_and_enter_picks(offline_page, tmp_path):
    viewer = open_report(offline_page, gv.export_html([two_layer_mlp()], tmp_path / "mlp.html"))
    viewer.evaluate("r => r.gvViewer.go(3)")
    # From a control before the box, Tab comes to the box, then to the step's
    # elements in the drawing's order, each described; then on to the panel.
    viewer.locator(".gv-speed").focus()
    for _ in range(40):
        offline_page.keyboard.press("Tab")
        if offline_page.evaluate(_FOCUSED_JS)["box"]:
            break
    assert offline_page.evaluate(_FOCUSED_JS)["box"]
    ids = viewer.evaluate("r => [...r.querySelectorAll('div.gv-diagram svg [tabindex]')].map(e => e.id)")
    assert sorted(ids) == sorted(set(viewer.evaluate("r => r.gvViewer.stepIds(3)")))
    seen = []
    for _ in ids:
        offline_page.keyboard.press("Tab")
        seen.append(offline_page.evaluate(_FOCUSED_JS))
    assert [s["id"] for s in seen] == ids
    labels = {s["id"]: s["label"] for s in seen}
    said_of = list(labels.values())
    assert any(re.fullmatch(r"MatMul: op, \S+, output \(4,2\) float32, this step", v) for v in said_of), said_of
    assert any(v.startswith("gradient Add sends back to its input 0, MatMul_1: (4,2)") for v in said_of), said_of
    offline_page.keyboard.press("Tab")
    assert not offline_page.evaluate(_FOCUSED_JS)["inBox"]

    # Back to the Add node (first worked on at step 2): Enter picks it, Enter again goes there.
    add = next(i for i, v in labels.items() if v.startswith("Add: op"))
    for _ in range(len(ids) + 1):
        offline_page.keyboard.press("Shift+Tab")
        if offline_page.evaluate(_FOCUSED_JS)["id"] == add:
            break
    assert offline_page.evaluate(_FOCUSED_JS)["id"] == add
    offline_page.keyboard.press("Enter")
    note = viewer.locator(".gv-pick-note")
    assert note.is_visible()
    assert "go to step 2" in note.inner_text() and "Enter" in note.inner_text()
    assert viewer.evaluate("r => r.gvViewer.selected") == add
    assert viewer.evaluate("r => Number(r.dataset.step)") == 3  # picking never steps
    offline_page.keyboard.press("Enter")
    wait_step(viewer, 2)
    # The keys still step from where the focus is.
    offline_page.keyboard.press("ArrowRight")
    wait_step(viewer, 3)
    assert offline_page.evaluate(_FOCUSED_JS)["inBox"]


# Whether the focused element shows that it has the focus: an outline, a ring
# (box-shadow), or, on the drawing's elements, a glow (filter) or a thick stroke.
_FOCUS_SEEN_JS = """() => {
    const a = document.activeElement;
    const s = getComputedStyle(a);
    const shape = a instanceof SVGElement && a.querySelector(':scope > :is(path, polygon, ellipse)');
    const stroke = shape && getComputedStyle(shape);
    const ring = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0 ? s.outlineColor
        : s.boxShadow !== 'none' ? s.boxShadow : s.filter !== 'none' ? s.filter
        : stroke && parseFloat(stroke.strokeWidth) >= 3 ? stroke.stroke : null;
    return {what: a.tagName + '.' + (a.getAttribute('class') || '') + '#' + a.id, ring,
            visible: a.matches(':focus-visible'), inViewer: !!a.closest('.gv-viewer'),
            back: getComputedStyle(a.closest('.gv-viewer') || a).backgroundColor};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_stop_of_the_keyboard_shows_its_focus(scheme, offline_page, tmp_path):
    offline_page.emulate_media(color_scheme=scheme)
    viewer = open_report(offline_page, gv.export_html([scoped_mlp()], tmp_path / "mlp.html"))
    viewer.evaluate("r => r.gvViewer.go(2)")
    offline_page.locator("body").click(position={"x": 1, "y": 1})
    offline_page.evaluate("() => document.activeElement && document.activeElement.blur()")
    stops = []
    for _ in range(120):
        offline_page.keyboard.press("Tab")
        seen = offline_page.evaluate(_FOCUS_SEEN_JS)
        if stops and seen["what"] == stops[0]["what"]:
            break
        if seen["inViewer"]:
            stops.append(seen)
        elif stops:
            break  # out of the viewer
    kinds = {s["what"].split(".")[0] for s in stops}
    assert {"DIV", "BUTTON", "SELECT", "INPUT", "g"} <= kinds, kinds
    assert [s["what"] for s in stops if not s["ring"] or not s["visible"]] == []
    assert [s["what"] for s in stops if s["ring"] == s["back"]] == []


def _controls_named_by_their_words(page) -> list[str]:
    """The viewer's buttons, selects, inputs and summaries whose accessible name
    does not contain the words they show (a button's text, a control's label)."""
    shown = page.evaluate("""() => {
        const sel = ':is(.gv-viewer, .gv-exercises) :is(button, select, input, textarea, summary)';
        return [...document.querySelectorAll(sel)].map((e) => {
            let words = '';
            if (e.matches('button, summary')) words = e.innerText;
            else {
                const label = e.closest('label');
                if (label) {
                    const c = label.cloneNode(true);
                    c.querySelectorAll('select, input, textarea').forEach((x) => x.remove());
                    words = c.textContent;
                }
            }
            return {what: e.tagName + '.' + (e.getAttribute('class') || ''), words,
                    seen: e.checkVisibility()};
        });
    }""")
    sel = ":is(.gv-viewer, .gv-exercises) :is(button, select, input, textarea, summary)"
    names = accessible_names(page, sel)
    bad = []
    for s, ax in zip(shown, names):
        if not s["seen"]:
            continue
        words = said(s["words"]).lower()
        if not ax["name"]:
            bad.append(f"{s['what']}: no name")
        elif re.search(r"\w", words) and words not in ax["name"].lower():
            bad.append(f"{s['what']}: shows {words!r}, named {ax['name']!r}")
    return bad


def test_controls_are_named_by_the_words_they_show(offline_page, tmp_path):
    viewer = open_report(offline_page, gv.export_html([scoped_mlp()], tmp_path / "mlp.html"))
    assert viewer.locator(".gv-prev").get_attribute("aria-keyshortcuts") == "ArrowLeft"
    assert viewer.locator(".gv-present").get_attribute("title") == "presentation mode (f)"
    viewer.evaluate("r => r.gvViewer.go(3)")
    assert _controls_named_by_their_words(offline_page) == []
    # The forms under the options row's buttons.
    viewer.locator(".gv-print").click()
    viewer.locator(".gv-save-picture").click()
    assert _controls_named_by_their_words(offline_page) == []
    [first, prev] = accessible_names(offline_page, ".gv-viewer :is(.gv-first, .gv-prev)")
    assert (first["name"], prev["name"]) == ("first step", "prev")


def test_practice_controls_are_named_by_the_words_they_show(offline_page, tmp_path):
    viewer = open_report(offline_page, linear_regression().to_html(tmp_path / "lr.html", practice=True))
    viewer.evaluate("r => r.gvViewer.go(1)")
    viewer.locator(".gv-hand-in").click()
    assert _controls_named_by_their_words(offline_page) == []


def test_practice_announces_the_question_not_the_hidden_sentence(offline_page, tmp_path):
    """While a step asks, its sentence (which gives the answer) is hidden from sight,
    and so from the live region: the question is said in its place."""
    viewer = open_report(offline_page, linear_regression().to_html(tmp_path / "p.html", practice=True))
    viewer.evaluate(_WATCH_JS)
    viewer.locator(".gv-next").click()
    wait_step(viewer, 1)
    offline_page.wait_for_selector(".gv-question-prompt")
    offline_page.wait_for_timeout(QUIET_MS)
    sentence = said(viewer.locator(".gv-sentence").text_content())
    prompt = said(viewer.locator(".gv-question-prompt").inner_text())
    title = said(viewer.locator(".gv-step-title").inner_text())
    assert viewer.locator(".gv-sentence").is_hidden() and sentence
    assert prompt.endswith("?")
    assert announcements(viewer) == [f"Step 1 of 10: {title}. {prompt}"]
    assert sentence not in announcements(viewer)[0]


# Where the focused element and the step's lit elements are, against the box.
_IN_VIEW_JS = """(root) => {
    const box = root.querySelector('div.gv-diagram').getBoundingClientRect();
    const inside = (r) => r.left >= box.left - 1 && r.right <= box.right + 1
        && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
    const focused = document.activeElement;
    return {
        focused: focused.id || null,
        focusedIn: inside(focused.getBoundingClientRect()),
        activeIn: [...root.querySelectorAll('div.gv-diagram svg .gv-active')]
            .every((e) => inside(e.getBoundingClientRect())),
    };
}"""


def test_tab_onto_an_element_keeps_the_step_in_view(browser, tmp_path):
    """Tab into the diagram box and through the step's elements: the step stays in
    view, and so does each element as it takes the focus."""
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    page = context.new_page()
    try:
        viewer = open_report(page, linear_regression().to_html(tmp_path / "lr.html"))
        for k in range(1, 4):
            viewer.locator(".gv-next").click()
            wait_step(viewer, k)
        page.wait_for_timeout(800)  # the camera's glide
        assert viewer.evaluate(_IN_VIEW_JS)["activeIn"]
        viewer.locator("div.gv-diagram").focus()
        stops = viewer.evaluate("r => r.querySelectorAll('div.gv-diagram svg [tabindex]').length")
        assert stops >= 2
        for _ in range(stops):
            page.keyboard.press("Tab")
            page.wait_for_timeout(150)
            where = viewer.evaluate(_IN_VIEW_JS)
            assert where["focused"] and where["focusedIn"] and where["activeIn"], where
    finally:
        context.close()


def test_keyboard_focus_keeps_the_step_in_view_in_jupyterlab(lab, page):
    """In JupyterLab too, Tab from the controls into the box and onto the step's
    elements leaves the step in view (the notebook scrolls, the box keeps its view)."""
    nb = lab.write_notebook("keyboard.ipynb", CELLS)
    lab.open_notebook(page, nb)
    lab.run_all(page)
    viewer = page.locator(".jp-OutputArea-output .gv-viewer").first
    viewer.locator(".gv-diagram svg").wait_for()
    viewer.scroll_into_view_if_needed()
    for k in range(1, 4):
        viewer.locator(".gv-next").click()
        wait_step(viewer, k)
    page.wait_for_timeout(800)  # the camera's glide
    assert viewer.evaluate(_IN_VIEW_JS)["activeIn"]
    # From the speed menu, Tab to the slider, then on to the box, then onto the step's elements.
    viewer.locator(".gv-speed").focus()
    for _ in range(12):
        page.keyboard.press("Tab")
        page.wait_for_timeout(150)
        where = viewer.evaluate(_IN_VIEW_JS)
        assert where["activeIn"], where
        if where["focused"] and where["focused"].startswith("e"):
            break
    assert where["focused"] and where["focusedIn"], where


def test_a_cells_exact_value_shows_on_hover_only_where_its_value_does(offline_page, tmp_path):
    """A heatmap cell's exact value is its hover text while the pointer is on it and
    its value is shown; with the gradient values hidden no cell carries it, so no
    screen reader reads it either."""
    page = offline_page
    viewer = open_report(page, gv.export_html([two_layer_mlp()], tmp_path / "mlp.html"))
    viewer.evaluate("r => r.gvViewer.go(3)")
    cell = viewer.locator(".gv-panel .gv-arrays td.gv-cell").first
    exact = cell.get_attribute("data-exact")
    assert exact and viewer.locator(".gv-panel td.gv-cell[title]").count() == 0
    cell.hover()
    assert cell.get_attribute("title") == exact
    page.mouse.move(0, 0)
    assert cell.get_attribute("title") is None

    viewer.locator(".gv-toggle", has_text="gradient values").locator("input").uncheck()
    cell.hover()
    assert cell.get_attribute("title") is None
    names = accessible_names(page, ".gv-panel .gv-arrays td.gv-cell")
    assert names and not [n for n in names if any(ch.isdigit() for ch in n["name"])], names


def test_a_pick_opens_its_dependencies_to_the_keyboard(offline_page, tmp_path):
    """Enter on a node lights what it depends on and what depends on it; those become
    stops too, each saying what it is to the picked node, so that picking one of them
    in turn walks the graph, as far as a node no step works on; Escape closes them."""
    page = offline_page
    viewer = open_report(page, gv.export_html([two_layer_mlp()], tmp_path / "mlp.html"))
    viewer.evaluate("r => r.gvViewer.go(1)")
    stops = "r => [...r.querySelectorAll('div.gv-diagram svg [tabindex]')].map(e => e.id)"
    before = viewer.evaluate(stops)
    node = viewer.evaluate("r => r.querySelector('div.gv-diagram svg g.node[tabindex]').id")
    viewer.locator(f"div.gv-diagram svg [id='{node}']").focus()
    page.keyboard.press("Enter")
    after = viewer.evaluate(stops)
    lit = viewer.evaluate("r => [...r.querySelectorAll('div.gv-diagram svg [data-gv-dep]')].map(e => e.id)")
    assert set(before) < set(after) and set(lit) <= set(after), (before, after, lit)
    names = {n["name"] for n in accessible_names(page, "div.gv-diagram svg [data-gv-dep][tabindex]")}
    assert any(n.endswith("the picked node depends on it") for n in names), names
    assert any(n.endswith("picked") for n in names), names
    # A lit input no step works on (a constant): Enter picks it too, and says so.
    unreached = viewer.evaluate("""r => [...r.querySelectorAll('div.gv-diagram svg g.node[data-gv-dep="up"]')]
        .map(e => e.id).find(id => r.gvViewer.firstStep(id) < 0)""")
    assert unreached, "the MLP has an input no step works on"
    viewer.locator(f"div.gv-diagram svg [id='{unreached}']").focus()
    page.keyboard.press("Enter")
    assert viewer.evaluate("r => r.gvViewer.selected") == unreached
    assert "No step works on it" in viewer.locator(".gv-pick-note").inner_text()
    page.keyboard.press("Escape")
    assert sorted(viewer.evaluate(stops)) == sorted(before)
