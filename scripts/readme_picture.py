"""Take the README's picture of the step-through widget (docs/widget.png) from lesson 1.

Usage::

    .venv/bin/python scripts/readme_picture.py [--out docs/widget.png]
    .venv/bin/python scripts/readme_picture.py --theme dark   # docs/widget-dark.png

It needs what ``make test`` installs (Playwright, and Chromium at
``/usr/bin/chromium`` or ``$CHROMIUM``), and takes about 20 s. It starts a
JupyterLab of its own with the browser tests' harness (``tests/harness.py``:
isolated settings, no news pop-ups, the kernel is this Python), on a copy of
``notebooks/01_*.ipynb`` (the lesson itself is never touched), runs all
cells, and in the lesson's first viewer clicks "next" up to the step where
``W``'s gradient is summed over the axes it was broadcast along. It then
checks what the picture will show (that step, its sentence, formula and
arrays, the whole width of the diagram with ``X`` in the diagram box, no
notification on the page) and saves a screenshot of the viewer alone, with a
small margin, at a width that reads well in a README.  With ``--theme dark``
JupyterLab is switched to its dark theme first (and back after).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests"))

from harness import LabServer, launch_chromium  # noqa: E402  (tests/ is not a package)

#: The lesson the picture comes from.
LESSON_GLOB = "notebooks/01_*.ipynb"
#: The x whose broadcast reduction is shown, and the step's kind.
X_NAME, STEP_KIND = "W", "reduce"
#: Wide enough that the diagram box holds the whole diagram's width at actual
#: size (X is its rightmost node), tall enough for the whole viewer.
VIEWPORT = {"width": 1800, "height": 1250}
#: Pixels of the page's colour around the viewer in the picture.
MARGIN = 16

#: What the viewer shows: step, kind, sentence, formula, arrays, diagram box.
_SHOWN_JS = """(root) => {
    const box = root.querySelector('div.gv-diagram');
    const r = box.getBoundingClientRect();
    const inBox = (e) => { const q = e.getBoundingClientRect();
        return q.left >= r.left && q.right <= r.right && q.top >= r.top && q.bottom <= r.bottom; };
    const nodes = Array.from(box.querySelectorAll('svg g.node'));
    const named = (name) => nodes.find((g) => g.querySelector('text')?.textContent.trim() === name);
    const active = Array.from(box.querySelectorAll('svg .gv-active'));
    return {
        step: Number(root.dataset.step),
        counter: root.querySelector('.gv-counter').textContent,
        kind: root.querySelector('.gv-kind').textContent,
        title: root.querySelector('.gv-step-title').textContent,
        sentence: root.querySelector('.gv-sentence').textContent,
        formula: root.querySelector('.gv-formula').hidden ? '' : root.querySelector('.gv-formula').textContent,
        arrays: Array.from(root.querySelectorAll('.gv-arrays .gv-array-label'), (e) => e.textContent),
        nextDisabled: root.querySelector('.gv-next').disabled,
        overflowX: box.scrollWidth - box.clientWidth,
        xInBox: !!named('X') && inBox(named('X')),
        activeInBox: active.length > 0 && active.every(inBox),
    };
}"""

#: JupyterLab notifications (toasts) and dialogs on the page, by their text.
_POPUPS_JS = """() => Array.from(document.querySelectorAll('.Toastify__toast, .jp-Dialog'),
    (e) => e.textContent.trim() || e.className)"""


def _lesson() -> Path:
    found = sorted(REPO_ROOT.glob(LESSON_GLOB))
    if len(found) != 1:
        raise SystemExit(f"expected one lesson matching {LESSON_GLOB}, found {[p.name for p in found]}")
    return found[0]


def _wait_still(page, viewer, settle_ms: int = 400, timeout_s: float = 10.0) -> None:
    """Wait until the diagram box has stopped gliding to the step (scroll unchanged for settle_ms)."""
    box = viewer.locator("div.gv-diagram")
    last, since = None, time.monotonic()
    deadline = since + timeout_s
    while time.monotonic() < deadline:
        now = box.evaluate("(b) => [b.scrollLeft, b.scrollTop]")
        if now != last:
            last, since = now, time.monotonic()
        elif (time.monotonic() - since) * 1000 >= settle_ms:
            return
        page.wait_for_timeout(50)
    raise RuntimeError("the diagram box kept scrolling for 10 s")


def _on_target(shown: dict) -> bool:
    """Whether the viewer shows the broadcast reduction of X_NAME."""
    return shown["kind"] == STEP_KIND and shown["sentence"].startswith(f"{X_NAME} was broadcast")


def _step_to_target(page, viewer) -> dict:
    """Click "next" until the viewer shows the broadcast reduction of X_NAME."""
    for _ in range(500):
        shown = viewer.evaluate(_SHOWN_JS)
        if _on_target(shown):
            return shown
        if shown["nextDisabled"]:
            break
        viewer.locator(".gv-next").click()
        page.wait_for_function("([r, k]) => Number(r.dataset.step) === k",
                               arg=[viewer.element_handle(), shown["step"] + 1])
    raise RuntimeError(f"no {STEP_KIND!r} step for {X_NAME} in the lesson's first viewer "
                       f"(last step shown: {shown['counter']}: {shown['sentence']!r})")


#: JupyterLab's theme for each --theme.
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def take_picture(out: Path, theme: str = "light") -> dict:
    """Run lesson 1 in a JupyterLab of its own and save the viewer's picture to ``out``."""
    from playwright.sync_api import sync_playwright

    lesson = _lesson()
    with tempfile.TemporaryDirectory(prefix="gradviz-picture-") as tmp:
        lab = LabServer(root=Path(tmp) / "root", workdir=tmp)
        try:
            lab.start()
            notebook = lab.copy_in(lesson)
            with sync_playwright() as playwright:
                browser = launch_chromium(playwright)
                try:
                    page = browser.new_page(viewport=VIEWPORT)
                    page.set_default_timeout(30_000)
                    lab.open_notebook(page, notebook)
                    page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
                                  THEMES[theme])
                    page.wait_for_function("(light) => document.body.dataset.jpThemeLight === light",
                                           arg=str(theme == "light").lower())
                    # The file browser takes width the notebook can use.
                    lab.collapse_left(page)
                    lab.run_all(page)

                    viewer = page.locator(".jp-OutputArea-output .gv-viewer").first
                    viewer.locator(".gv-diagram svg").wait_for()
                    _step_to_target(page, viewer)
                    # No focus ring and no hovered button in the picture.
                    page.evaluate("() => document.activeElement && document.activeElement.blur()")
                    page.mouse.move(0, 0)
                    viewer.evaluate("(root) => root.scrollIntoView({block: 'center'})")
                    _wait_still(page, viewer)
                    shown = viewer.evaluate(_SHOWN_JS)
                    _check(shown, page)
                    box = viewer.bounding_box()
                    area = page.locator(".jp-NotebookPanel-notebook").bounding_box()
                    if (box is None or area is None or box["y"] < area["y"]
                            or box["y"] + box["height"] > area["y"] + area["height"]):
                        raise RuntimeError(f"the viewer ({box}) is not wholly inside the notebook's "
                                           f"visible area ({area}): raise VIEWPORT's height")

                    # The viewer alone (no prompt, no cell toolbar), then a margin of page colour.
                    out.parent.mkdir(parents=True, exist_ok=True)
                    viewer.screenshot(path=out, animations="disabled")
                    shown["size"] = _add_margin(out, MARGIN)
                    return shown
                finally:
                    browser.close()
        finally:
            lab.stop()


def _add_margin(path: Path, margin: int) -> tuple[int, int]:
    """Pad the PNG at ``path`` with ``margin`` pixels of its corner's colour; returns its new size."""
    from PIL import Image

    with Image.open(path) as shot:
        shot = shot.convert("RGB")
        framed = Image.new("RGB", (shot.width + 2 * margin, shot.height + 2 * margin), shot.getpixel((0, 0)))
        framed.paste(shot, (margin, margin))
    framed.save(path, optimize=True)
    return framed.size


def _check(shown: dict, page) -> None:
    """Refuse to save a picture that would mislead: wrong step, cut diagram, a pop-up."""
    problems = []
    if not _on_target(shown):
        problems.append(f"the viewer moved off the step: {shown['counter']}: {shown['sentence']!r}")
    if not shown["formula"] or len(shown["arrays"]) < 2:
        problems.append(f"the step's formula or arrays are missing: {shown['formula']!r}, {shown['arrays']}")
    if shown["overflowX"] > 0:
        problems.append(f"the diagram is {shown['overflowX']} px wider than its box: widen VIEWPORT")
    if not shown["xInBox"]:
        problems.append("the X node is not wholly inside the diagram box")
    if not shown["activeInBox"]:
        problems.append("the step's highlighted elements are not wholly inside the diagram box")
    popups = page.evaluate(_POPUPS_JS)
    if popups:
        problems.append(f"JupyterLab shows a notification or dialog: {popups}")
    if problems:
        raise RuntimeError("not taking the picture:\n  " + "\n  ".join(problems))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write the PNG (default: docs/widget.png, "
                             "docs/widget-dark.png with --theme dark)")
    parser.add_argument("--theme", choices=sorted(THEMES), default="light",
                        help="JupyterLab's theme in the picture (default: light)")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = REPO_ROOT / "docs" / ("widget.png" if args.theme == "light" else f"widget-{args.theme}.png")
    shown = take_picture(args.out, args.theme)
    width, height = shown["size"]
    print(f"wrote {args.out} ({width} x {height} px): {shown['counter']}, {shown['title']}")
    print(f"  {shown['sentence']}\n  {shown['formula']}\n  arrays: {', '.join(shown['arrays'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
