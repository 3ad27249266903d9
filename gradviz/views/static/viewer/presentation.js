// Presentation mode, for a lecture hall: the viewer fills the screen (the
// Fullscreen API when the page may use it, a fixed full-window layout when it
// may not, as in an iframe that forbids it), the diagram takes most of it with
// its smallest text at PRESENT_PX or more, and the step's explanation is a
// side strip in large type.  In the mode, + and - make all of the text larger
// or smaller together: the diagram's zoom and the strip's font size.  Leaving
// (the button, f, Escape, or the browser leaving fullscreen by itself) gives
// back the reader's zoom as it was.  The layout is CSS, under .gv-presenting.

import { iconButton } from "./dom.js";

// Text px on entering: readable from the back of a hall on a 1080p projector.
export const PRESENT_PX = 20;
const TEXT_STEP = 1.2;
const MIN_PX = 12;
const MAX_PX = 48;

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));

// The presentation mode of the viewer `root`, for its `diagram` (diagram.js).
export function createPresentation(root, diagram, life) {
  const button = iconButton("gv-present", "present", "presentation mode (f)", "present");
  button.setAttribute("aria-pressed", "false");
  let on = false;
  let before = null; // the reader's zoom when the mode began
  let px = PRESENT_PX; // the text size asked for in the mode
  // The mode asked the browser to leave fullscreen, which has not yet said it
  // did: its fullscreenchange comes a frame later, maybe after f has entered
  // the mode again, and is the mode's own exit, not the browser leaving.
  let exiting = false;

  // The diagram's text at `size` px, and the strip's type in proportion.
  function setText(size) {
    px = clamp(size, MIN_PX, MAX_PX);
    diagram.setTextSize(px);
    root.style.setProperty("--gv-present-scale", String(px / PRESENT_PX));
  }

  function show(presenting) {
    on = presenting;
    root.classList.toggle("gv-presenting", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }

  function exitFullscreen() {
    exiting = true;
    document.exitFullscreen().catch(() => { exiting = false; });
  }

  function enter() {
    if (on) return;
    before = diagram.zoom;
    show(true);
    // Rejected (or missing) where fullscreen is not allowed: the fixed layout stays.
    if (root.requestFullscreen && !document.fullscreenElement) {
      try {
        const asked = root.requestFullscreen();
        if (asked && asked.catch) asked.catch(() => {});
      } catch (err) { /* the fixed layout stays */ }
    }
    setText(Math.max(PRESENT_PX, diagram.textSize || 0));
    diagram.follow(false);
  }

  function leave() {
    if (!on) return false;
    show(false);
    root.style.removeProperty("--gv-present-scale");
    if (document.fullscreenElement === root && document.exitFullscreen) exitFullscreen();
    if (before && before.fit) diagram.fitWhole();
    else if (before) diagram.zoomTo(before.base);
    diagram.follow(false);
    return true;
  }

  function resize(factor) {
    if (on) setText(px * factor);
    return on;
  }

  // The browser left fullscreen by itself (its own Escape, say): so does the
  // mode.  A fullscreen granted after the mode was left again is given back.
  life.listen(document, "fullscreenchange", () => {
    const full = document.fullscreenElement === root;
    if (!full && exiting) exiting = false; // the mode's own exit, told
    else if (on && !full) leave();
    else if (!on && full) exitFullscreen();
  });
  life.listen(button, "click", () => (on ? leave() : enter()));

  return {
    button,
    get on() { return on; },
    toggle: () => (on ? leave() : enter()),
    leave,
    // + and - in the mode; false outside it (the diagram's own zoom then).
    larger: () => resize(TEXT_STEP),
    smaller: () => resize(1 / TEXT_STEP),
  };
}
