// The controls: the header (title, step counter, pass, NaN/Inf badge), the
// buttons, speed and step slider with its timeline, the options row (show
// values, jump to the first NaN/Inf), the diagram's zoom bar, and the keys.

import { button, h, icon, iconButton } from "./dom.js";
import { STEP_NUMBERS, modeWords, stepOf } from "./format.js";

export const SPEEDS = [0.5, 1, 2, 4, 8];
const KIND_WORDS = {
  seed: "seed",
  backward: "backward",
  reduce: "reduce",
  accumulate: "accumulate",
  cut: "cut",
  result: "result",
  tangent: "tangent",
  forward: "forward",
  jvp: "jvp",
};

function header(payload, passes) {
  const el = h("div", "gv-header");
  const titleEl = h("div", "gv-title", payload.title || "gradviz trace");
  const method = h("span", "gv-method", payload.method ? String(payload.method) : "");
  const counter = h("div", "gv-counter");
  counter.title = STEP_NUMBERS;
  const counterText = h("span", "gv-counter-text", "");
  const kindChip = h("span", "gv-kind", "");
  counter.append(counterText, h("span", "gv-counter-sep", " \u00b7 "), kindChip);
  const passEl = h("div", "gv-pass", "");
  passEl.hidden = passes <= 1;
  const badge = h("div", "gv-nonfinite-badge", "\u26a0 NaN/Inf produced in this step");
  badge.hidden = true;
  badge.setAttribute("role", "status");
  const titleBox = h("div", "gv-title-box");
  titleBox.append(titleEl, method);
  // A drawing too large to draw every op says what it drew instead, and how to choose.
  if (payload.drawing_note) titleBox.append(h("div", "gv-drawing-note", String(payload.drawing_note)));
  const status = h("div", "gv-status");
  status.append(badge, passEl, counter);
  el.append(titleBox, status);
  return { el, counterText, kindChip, passEl, badge };
}

// Under the slider: one segment per pass (Jacobian traces) and a tick at each
// step that produced NaN or Inf.
function timeline(steps, passes) {
  const el = h("div", "gv-timeline");
  const N = steps.length;
  if (N <= 1) return el;
  const pct = (k) => `${(100 * k) / (N - 1)}%`;
  if (passes > 1) {
    let start = 0;
    for (let k = 1; k <= N; k++) {
      if (k === N || steps[k].pass !== steps[start].pass) {
        const seg = h("div", "gv-pass-seg");
        seg.style.left = pct(start);
        seg.style.width = `${(100 * Math.max(k - 1 - start, 0.3)) / (N - 1)}%`;
        seg.title = `pass ${Number(steps[start].pass) + 1}: steps ${start}\u2013${k - 1}`;
        seg.dataset.pass = String(steps[start].pass);
        el.append(seg);
        start = k;
      }
    }
  }
  steps.forEach((s, k) => {
    if (s.nonfinite) {
      const tick = h("div", "gv-flag-tick");
      tick.style.left = pct(k);
      tick.title = `step ${k} produced NaN or Inf`;
      el.append(tick);
    }
  });
  return el;
}

function toggle(cls, text) {
  const lab = h("label", "gv-toggle");
  const cb = h("input", cls);
  cb.type = "checkbox";
  lab.append(cb, h("span", null, text));
  return [lab, cb];
}

export function createControls(payload, steps, passes) {
  const N = steps.length;
  const head = header(payload, passes);

  const controls = h("div", "gv-controls");
  const first = iconButton("gv-first", "first", "first step (Home)", null, false, "Home");
  const prev = iconButton("gv-prev", "prev", "previous step (Left arrow)", "prev", false, "ArrowLeft");
  const play = iconButton("gv-play", "play", "play / pause (Space)", "Play", false, "Space");
  const next = iconButton("gv-next", "next", "next step (Right arrow)", "next", true, "ArrowRight");
  const last = iconButton("gv-last", "last", "last step (End)", null, false, "End");
  const speed = h("select", "gv-speed");
  speed.title = "play speed";
  speed.setAttribute("aria-label", "play speed");
  for (const s of SPEEDS) {
    const o = h("option", null, `${s}\u00d7`);
    o.value = String(s);
    speed.append(o);
  }
  const sliderBox = h("div", "gv-slider-box");
  const slider = h("input", "gv-slider");
  slider.type = "range";
  slider.min = "0";
  slider.max = String(Math.max(0, N - 1));
  slider.step = "1";
  slider.value = "0";
  slider.setAttribute("aria-label", "step");
  const tl = timeline(steps, passes);
  sliderBox.append(slider, tl);
  const buttons = h("div", "gv-buttons");
  buttons.append(first, prev, play, next, last);
  const speedLabel = h("label", "gv-speed-label");
  speedLabel.append(h("span", null, "speed "), speed);
  controls.append(buttons, speedLabel, sliderBox);

  const options = h("div", "gv-options");
  const [gradLab, gradCb] = toggle("gv-toggle-grad", `${modeWords(payload.mode).carried} values`);
  const [fwdLab, fwdCb] = toggle("gv-toggle-forward", "forward values");
  const firstBad = steps.findIndex((s) => s && s.nonfinite);
  const jump = button("gv-jump-nonfinite", `\u26a0 first NaN/Inf: step ${firstBad}`,
    "jump to the first step that produced NaN or Inf");
  jump.hidden = firstBad < 0;
  const zb = zoomBar();
  options.append(h("span", "gv-options-label", "show"), gradLab, fwdLab, jump, zb.el, zb.note);

  const help = h("div", "gv-help",
    "Keys when the viewer has focus: \u2190 \u2192 step, Home / End first / last, Space play / pause, + / \u2212 zoom in / out, 0 whole graph, f presentation mode (Esc leaves it; + / \u2212 there size the text). Click a node to light what it depends on and what depends on it (Esc clears); click it again to go to its first step. From the keyboard, Tab from the diagram goes through the step\u2019s nodes and edges, and Enter does what a click does. Click a scope\u2019s box, or press Enter on it, to open it; its dashed border closes it. The diagram box scrolls and follows the step; \u201cwhole graph\u201d fits all of it in." +
    (payload.view && payload.view.practice
      ? " Practice: Enter goes to the question's answer, Enter there checks it, Esc goes back to stepping." : ""));

  return {
    header: head.el, controls, options, help,
    first, prev, play, next, last, speed, slider, timeline: tl, gradCb, fwdCb, jump, firstBad,
    zoom: zb.zoom, zoomIn: zb.zoomIn, zoomOut: zb.zoomOut, showZoom: zb.show,
    // Show step k (its step dict s) in the counter, badge and buttons.
    show(k, s) {
      slider.value = String(k);
      head.counterText.textContent = stepOf(k, N);
      head.kindChip.textContent = KIND_WORDS[s.kind] ?? String(s.kind ?? "");
      head.kindChip.className = `gv-kind gv-kind-${KIND_WORDS[s.kind] ?? "other"}`;
      head.passEl.textContent = `pass ${Number(s.pass) + 1} / ${passes}`;
      head.badge.hidden = !s.nonfinite;
      first.disabled = prev.disabled = k === 0;
      next.disabled = last.disabled = k === N - 1;
    },
    setPlaying(playing) {
      play.replaceChildren(icon(playing ? "pause" : "play"), h("span", "gv-btn-text", playing ? "Pause" : "Play"));
      play.setAttribute("aria-pressed", playing ? "true" : "false");
    },
    // A trace with no steps: nothing to press.
    disable() {
      head.counterText.textContent = "no steps";
      for (const b of [first, prev, play, next, last]) b.disabled = true;
      slider.disabled = true;
    },
  };
}

// The diagram's zoom bar: zoom out, the zoom shown, zoom in, and "whole graph"
// (fit all of it in the box; pressed again, back to 100%).  Under it, a note
// when the whole graph would not fit with its text readable.
function zoomBar() {
  const el = h("div", "gv-zoombar");
  el.setAttribute("role", "toolbar");
  el.setAttribute("aria-label", "diagram zoom");
  const zoomOut = button("gv-zoom-out", "\u2212", "zoom out (\u2212)", "-");
  const level = h("span", "gv-zoom-level", "100%");
  level.setAttribute("aria-live", "polite");
  const zoomIn = button("gv-zoom-in", "+", "zoom in (+)", "+");
  const zoom = button("gv-zoom", "whole graph", "fit the whole diagram in the box (0)", "0");
  const note = h("div", "gv-zoom-note",
    "Zoomed out as far as the labels stay readable: scroll the diagram, or zoom in, to see the rest.");
  note.hidden = true;
  el.append(zoomOut, level, zoomIn, zoom);
  return {
    el, note, zoom, zoomIn, zoomOut,
    // Show the zoom: { scale, fit, clipped } (null: the diagram has no size to zoom).
    show(z) {
      for (const b of [zoomOut, zoomIn, zoom]) b.disabled = !z;
      if (!z) return;
      level.textContent = `${Math.round(100 * z.scale)}%`;
      zoom.textContent = z.fit ? "zoom to 100%" : "whole graph";
      zoom.title = z.fit ? "show the diagram at its actual size (0)" : "fit the whole diagram in the box (0)";
      zoom.setAttribute("aria-pressed", z.fit ? "true" : "false");
      note.hidden = !z.clipped;
    },
  };
}

// The keys, when the viewer has focus: Left / Right previous / next, Home / End
// first / last, Space play / pause, + / - zoom in / out, 0 whole graph (or
// back), f presentation mode and Escape out of it (Escape is not taken
// outside it; it first clears a node's lit dependencies).  A key meant for the focused control (an arrow on the slider
// or a select, Space on a button) is left to it.
export function bindKeys(root, slider, life, act) {
  life.listen(root, "keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    const tag = (t && t.tagName) || "";
    const onSlider = t === slider;
    const onSelect = tag === "SELECT";
    const onButton = tag === "BUTTON" || (tag === "INPUT" && t.type === "checkbox");
    // Typing an answer (practice.js): the keys are the text's, not the stepper's.
    if (tag === "TEXTAREA" || (tag === "INPUT" && t.type === "text")) return;
    let handled = true;
    switch (e.key) {
      case "ArrowRight":
        if (onSlider || onSelect) { e.stopPropagation(); return; }
        act.next(); break;
      case "ArrowLeft":
        if (onSlider || onSelect) { e.stopPropagation(); return; }
        act.prev(); break;
      case "Home":
        act.first(); break;
      case "End":
        act.last(); break;
      case " ":
      case "Spacebar":
        if (onButton || onSelect) { e.stopPropagation(); return; }
        act.togglePlay(); break;
      case "+":
      case "=":
        act.zoomIn(); break;
      case "-":
      case "_":
        act.zoomOut(); break;
      case "0":
        act.toggleFit(); break;
      case "f":
      case "F":
        act.togglePresent(); break;
      case "Escape":
        // (a node's lit dependencies first, then presentation mode)
        handled = act.clearSelection() || act.leavePresent(); break;
      case "Enter":
        // On the viewer itself (not a button): to the question's answer, in practice.
        handled = t === root && act.toAnswer(); break;
      default:
        handled = false;
    }
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  });
}
