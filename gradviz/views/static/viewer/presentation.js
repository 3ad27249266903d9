// Presentation mode, for a lecture hall: the viewer fills the screen (the
// Fullscreen API when the page may use it, a fixed full-window layout when it
// may not, as in an iframe that forbids it), the diagram takes most of it with
// its smallest text at PRESENT_PX or more, and the step's explanation is a
// side strip in large type.  In the mode, + and - make all of the text larger
// or smaller together: the diagram's zoom and the strip's font size.  Leaving
// (the button, f, Escape, or the browser leaving fullscreen by itself) gives
// back the reader's zoom as it was.  The layout is CSS, under .gv-presenting.

import { iconButton, scrollStop } from "./dom.js";

// Text px on entering: readable from the back of a hall on a 1080p projector.
export const PRESENT_PX = 20;
const TEXT_STEP = 1.2;
const MIN_PX = 12;
const MAX_PX = 48;

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));

// The presentation mode of the viewer `root`, for its `diagram` (diagram.js).
export function createPresentation(root, diagram, life) {
  const button = iconButton("gv-present", "present", "presentation mode (f)", "present", false, "f");
  button.setAttribute("aria-pressed", "false");
  let on = false;
  let before = null; // the reader's zoom when the mode began
  let px = PRESENT_PX; // the text size asked for in the mode
  // Whether the page's fullscreen is the mode's own: asked for on entering and
  // granted.  Only its end, as the browser tells it, ends the mode.  The browser
  // tells of a change a frame or more late (its fullscreenchange), when the page
  // may already be in another state: f pressed right after Escape enters the mode
  // again before the exit is told, and under load the entry and the exit are
  // told together, both as "not fullscreen".  So an event is read against what
  // the mode holds, never counted.
  let held = false;
  let ask = 0; // the number of the mode's latest request; leaving voids it
  let asking = false; // that request is not yet answered

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
    // The strip scrolls in the mode: a stop of the keyboard there.
    const strip = root.querySelector(".gv-panel");
    if (strip && on) scrollStop(strip, "the step explained");
    else if (strip) for (const a of ["tabindex", "role", "aria-label"]) strip.removeAttribute(a);
  }

  function exitFullscreen() {
    held = false;
    document.exitFullscreen().catch(() => {});
  }

  function requestFullscreen() {
    const mine = ++ask;
    asking = true;
    const answered = (granted) => {
      if (mine !== ask) return; // the mode was left meanwhile
      // Granted but not yet in force: its fullscreenchange will tell.
      if (granted && document.fullscreenElement !== root) return;
      asking = false;
      held = granted;
    };
    try {
      const asked = root.requestFullscreen();
      if (asked && asked.then) asked.then(() => answered(true), () => answered(false));
    } catch (err) { answered(false); /* the fixed layout stays */ }
  }

  function enter() {
    if (on) return;
    before = diagram.zoom;
    show(true);
    // Rejected (or missing) where fullscreen is not allowed: the fixed layout stays.
    if (root.requestFullscreen && !document.fullscreenElement) requestFullscreen();
    setText(Math.max(PRESENT_PX, diagram.textSize || 0));
    diagram.follow(false);
  }

  function leave() {
    if (!on) return false;
    show(false);
    ask += 1;
    asking = false;
    held = false;
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

  // The browser left the mode's fullscreen by itself (its own Escape, say): so
  // does the mode.  A fullscreen granted after the mode was left is given back.
  life.listen(document, "fullscreenchange", () => {
    const full = document.fullscreenElement === root;
    if (full && !on) exitFullscreen();
    else if (full && asking) { asking = false; held = true; } // the request, granted
    else if (!full && held) leave();
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
