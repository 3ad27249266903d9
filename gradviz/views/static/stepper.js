// gradviz step-through viewer: ONE front end for the JupyterLab widget and the HTML report.
//
// An anywidget front-end module: `export default { render }`, where
// render({ model, el }) draws a viewer into `el` and returns a cleanup function.
// The model needs only get / set / save_changes / on / off for these traits:
//   payload              view data (gradviz.views.viewdata.view_data), read once
//   step                 current step, 0-based; synced both ways
//   show_grad_values     print gradient values (heatmap colours stay)
//   show_forward_values  show forward values on the diagram
//   speed                play speed, steps per second
// In JupyterLab the model is the widget's; the HTML report passes a small shim.
//
// All stepping happens here: the SVG is inserted once, and a step only sets
// the classes gv-pending / gv-done / gv-active on the SVG elements whose state
// changes (each element's first step is precomputed, so a jump from step a to
// step b touches only ids(a), ids(b) and the elements first touched between).
// A jump that changes many elements restyles at once only those on screen or
// near it; the others follow as they scroll near, or in idle time (see EAGER).
// User-chosen strings (titles, names, sentences) are always inserted with
// textContent, never parsed as HTML.
//
// Stable CSS classes (tests and users rely on them):
//   .gv-viewer            root; focusable. Keys: Left/Right previous/next,
//                         Home/End first/last, Space play/pause.
//                         data-step="k" holds the current 0-based step.
//   .gv-title             the trace title
//   .gv-counter           "step k / N", with .gv-kind (the step's kind)
//   .gv-pass              "pass p / P" (Jacobian traces, passes > 1)
//   .gv-nonfinite-badge   visible when the current step produced NaN or Inf
//   .gv-first .gv-prev .gv-play .gv-next .gv-last   buttons
//   .gv-speed             play speed <select>
//   .gv-slider            the step slider, input[type=range]
//   .gv-timeline          under the slider: pass segments and NaN/Inf ticks
//   .gv-jump-nonfinite    button: jump to the first step flagged NaN/Inf
//   .gv-toggle-grad .gv-toggle-forward   show/hide checkboxes
//   .gv-zoom              fit-to-width / actual-size toggle for the diagram
//   .gv-diagram           the diagram container, holding the <svg>
//   .gv-step-title .gv-sentence .gv-formula   the step's explanation
//   .gv-arrays            the step's arrays: .gv-array > .gv-heatmap (table)
//   .gv-bookkeeping       pass, ops visited, bytes of gradient held
//   .gv-results           the final gradient for every x: .gv-result rows
//   .gv-legend            the legend
// Root modifier classes: .gv-hide-grad, .gv-hide-forward, .gv-playing,
// .gv-at-end, .gv-zoom-actual.

const STATE_CLASSES = ["gv-pending", "gv-done", "gv-active"];
const SPEEDS = [0.5, 1, 2, 4, 8];
const KIND_WORDS = {
  seed: "seed",
  backward: "backward",
  reduce: "reduce",
  accumulate: "accumulate",
  cut: "cut",
  result: "result",
};
const SVG_NS = "http://www.w3.org/2000/svg";
// A step that changes more elements than EAGER restyles only those within
// MARGIN px of the diagram box at once, and the others IDLE_SLICE at a time.
const EAGER = 200;
const MARGIN = 4000;
const IDLE_SLICE = 150;
const requestIdle = typeof requestIdleCallback === "function"
  ? (fn) => requestIdleCallback(fn, { timeout: 500 })
  : (fn) => setTimeout(fn, 20);
const cancelIdle = typeof cancelIdleCallback === "function" ? cancelIdleCallback : clearTimeout;

// ------------------------------------------------------------------ helpers

function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function button(cls, label, title) {
  const b = h("button", "gv-btn " + cls, label);
  b.type = "button";
  b.title = title;
  b.setAttribute("aria-label", title);
  return b;
}

// Control icons drawn as inline SVG: no icon font, so nothing to fetch or miss.
const ICONS = {
  first: ["M2.5 2h2v12h-2z", "M14 2 6 8l8 6z"],
  prev: ["M12 2 4 8l8 6z"],
  next: ["M4 2l8 6-8 6z"],
  last: ["M11.5 2h2v12h-2z", "M2 2l8 6-8 6z"],
  play: ["M4 2l10 6-10 6z"],
  pause: ["M3.5 2h3v12h-3z", "M9.5 2h3v12h-3z"],
};

function icon(name) {
  const s = document.createElementNS(SVG_NS, "svg");
  s.setAttribute("viewBox", "0 0 16 16");
  s.setAttribute("class", "gv-icon");
  s.setAttribute("aria-hidden", "true");
  for (const d of ICONS[name]) {
    const p = document.createElementNS(SVG_NS, "path");
    p.setAttribute("d", d);
    s.append(p);
  }
  return s;
}

function iconButton(cls, name, title, text, iconAfter = false) {
  const b = button(cls, null, title);
  const parts = text ? [icon(name), h("span", "gv-btn-text", text)] : [icon(name)];
  b.append(...(iconAfter ? parts.reverse() : parts));
  return b;
}

// A number from the payload: finite numbers arrive as numbers, NaN/Inf as strings.
function num(v) {
  if (typeof v === "number") return v;
  if (v === "nan") return NaN;
  if (v === "inf") return Infinity;
  if (v === "-inf") return -Infinity;
  return NaN;
}

export function formatNumber(v) {
  const x = num(v);
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "\u221e";
  if (x === -Infinity) return "\u2212\u221e";
  if (x === 0) return "0";
  const a = Math.abs(x);
  let s;
  if (Number.isInteger(x) && a < 1e7) s = String(x);
  else if (a >= 1e5 || a < 1e-3) s = x.toExponential(2).replace("e+", "e");
  else s = String(Number(x.toPrecision(4)));  // as the formulas and the diagram (explain.format_number)
  return s.replace("-", "\u2212");
}

export function formatBytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "?";
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)} MB`;
  return `${(n / 1e9).toFixed(1)} GB`;
}

function shapeText(shape) {
  if (!Array.isArray(shape)) return "?";
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
}

// Diverging colour scale centred at 0: blue below, orange above, white at 0.
// Blue/orange stays distinct for the common colour-vision deficiencies.
const NEG = [33, 102, 172];
const POS = [217, 95, 2];
const MID = [247, 247, 247];

export function heatColour(t) {
  const c = t < 0 ? NEG : POS;
  const a = Math.min(1, Math.abs(t));
  const mix = (i) => Math.round(MID[i] + (c[i] - MID[i]) * a);
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}

// Flatten nested lists into rows of the last axis: [[row values], ...] with labels.
function toRows(values, shape) {
  if (!Array.isArray(shape) || shape.length === 0) return { rows: [[values]], labels: null };
  if (shape.length === 1) return { rows: [values], labels: null };
  if (shape.length === 2) return { rows: values, labels: null };
  const rows = [];
  const labels = [];
  const walk = (v, idx) => {
    if (idx.length === shape.length - 1) {
      rows.push(v);
      labels.push(`[${idx.join(",")},:]`);
    } else {
      v.forEach((w, i) => walk(w, idx.concat(i)));
    }
  };
  walk(values, []);
  return { rows, labels };
}

const MAX_CELLS = 144;
// Past this many xs the final gradients are a compact table, one line per x.
const COMPACT_RESULTS = 6;

// One array as a small heatmap table with values printed (or a summary when large).
function arrayView(arr, extraClass) {
  const fig = h("figure", "gv-array" + (extraClass ? " " + extraClass : ""));
  const cap = h("figcaption", "gv-array-caption");
  cap.append(h("span", "gv-array-label", arr.label ?? ""));
  cap.append(h("span", "gv-array-shape", `${shapeText(arr.shape)} ${arr.dtype ?? ""}`));
  if (arr.nonfinite) cap.append(h("span", "gv-chip gv-chip-warn", "NaN/Inf"));
  fig.append(cap);
  const size = Array.isArray(arr.shape) ? arr.shape.reduce((a, b) => a * b, 1) : 0;
  if (arr.values !== null && arr.values !== undefined && size <= MAX_CELLS && size > 0) {
    const { rows, labels } = toRows(arr.values, arr.shape);
    let maxAbs = 0;
    for (const r of rows) for (const v of r) {
      const x = num(v);
      if (Number.isFinite(x)) maxAbs = Math.max(maxAbs, Math.abs(x));
    }
    const table = h("table", "gv-heatmap");
    const body = h("tbody");
    rows.forEach((r, i) => {
      const tr = h("tr");
      if (labels) tr.append(h("th", "gv-row-label", labels[i]));
      for (const v of r) {
        const x = num(v);
        const td = h("td", "gv-cell");
        if (!Number.isFinite(x)) {
          td.classList.add("gv-cell-nonfinite");
        } else {
          // A lone value has nothing to compare with: show only its sign, softly.
          const t = maxAbs > 0 ? (size === 1 ? 0.45 * Math.sign(x) : x / maxAbs) : 0;
          td.style.background = heatColour(t);
          if (Math.abs(t) > 0.62) td.classList.add("gv-cell-dark");
        }
        td.title = formatNumber(v);
        td.append(h("span", "gv-cell-value", formatNumber(v)));
        tr.append(td);
      }
      body.append(tr);
    });
    table.append(body);
    fig.append(table);
  } else if (size === 0) {
    fig.append(h("div", "gv-array-summary", "empty array"));
  } else {
    // Large array: min / mean / max, with the range drawn against zero.
    const sum = h("div", "gv-array-summary");
    for (const [k, v] of [["min", arr.min], ["mean", arr.mean], ["max", arr.max]]) {
      const item = h("span", "gv-stat");
      item.append(h("span", "gv-stat-key", k));
      item.append(h("span", "gv-stat-value gv-cell-value", v === null || v === undefined ? "\u2013" : formatNumber(v)));
      sum.append(item);
    }
    const lo = num(arr.min), hi = num(arr.max);
    if (Number.isFinite(lo) && Number.isFinite(hi)) {
      const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
      const bar = h("div", "gv-range-bar");
      bar.style.background = `linear-gradient(to right, ${heatColour(lo / m)}, ${heatColour(0)} ${
        lo < 0 && hi > 0 ? (100 * -lo) / (hi - lo) : lo >= 0 ? 0 : 100}%, ${heatColour(hi / m)})`;
      bar.title = `values from ${formatNumber(lo)} to ${formatNumber(hi)}`;
      sum.append(bar);
    }
    fig.append(sum);
  }
  return fig;
}

// Parse graphviz's SVG as XML (never as HTML) and drop anything active or remote.
function parseSvg(text) {
  const doc = new DOMParser().parseFromString(String(text || ""), "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.localName !== "svg" || doc.getElementsByTagName("parsererror").length) {
    return null;
  }
  for (const bad of Array.from(svg.querySelectorAll("script, foreignObject, iframe, object, embed"))) {
    bad.remove();
  }
  for (const e of Array.from(svg.querySelectorAll("*")).concat([svg])) {
    for (const a of Array.from(e.attributes)) {
      const name = a.name.toLowerCase();
      const local = name.includes(":") ? name.split(":").pop() : name;
      if (name.startsWith("on")) e.removeAttribute(a.name);
      else if ((local === "href" || local === "src") && !a.value.trim().startsWith("#")) {
        e.removeAttributeNode(a);
      }
    }
  }
  return document.importNode(svg, true);
}

// Graphviz puts every node and edge side by side in one group: 7,000 children
// at 1,000 ops drawn whole.  When one of them changes state, Chromium walks
// all its siblings (style invalidation, effects), about 1.7 ms per changed
// element at that size; the same elements nested in runs of about sqrt(n)
// consecutive siblings take 0.2 ms.  The runs keep the drawing order, so the
// picture is the same.
function nestRuns(svg) {
  const top = Array.from(svg.children).find((e) => e.localName === "g");
  const n = top ? top.childElementCount : 0;
  if (n <= 128) return;
  const size = Math.ceil(Math.sqrt(n));
  const kids = Array.from(top.children);
  for (let i = 0; i < n; i += size) {
    const run = document.createElementNS(SVG_NS, "g");
    run.setAttribute("class", "gv-run");
    top.insertBefore(run, kids[i]);
    run.append(...kids.slice(i, i + size));
  }
}

// A small drawing of each diagram mark for the legend (colours as in the diagram).
// The shape of each mark's legend swatch; its colours come with the legend
// entries (Python's diagram.mark_colors), the tensor's states from the diagram's CSS.
const MARK_SHAPES = {
  tensor: { d: "M6 3h24a3 3 0 0 1 3 3v8a3 3 0 0 1-3 3H6a3 3 0 0 1-3-3V6a3 3 0 0 1 3-3z" },
  op: { ellipse: true },
  gradient: { d: "M4 10H28", arrow: true },
  seed: { d: "M4 4h28v7l-14 6-14-6z" },
  reduce: { d: "M3 4h30l-8 12H11z" },
  accumulate: { d: "M10 3h16l6 7-6 7H10l-6-7z" },
  cut: { d: "M13 2h10l6 5v6l-6 5H13l-6-5V7z" },
  result: { d: "M3 3h30v14H3zM6 6h24v8H6z" },
  unconnected: { d: "M3 3h30v14H3z", dash: true },
  scope: { d: "M3 6h24v11H3zM3 6l4-3h24l-4 3M27 17l4-3V3" },
  group: { d: "M3 6h24v11H3zM3 6l4-3h24l-4 3M27 17l4-3V3", dash: true },
};

function swatch(mark, stateClass, colors = {}) {
  const svgEl = document.createElementNS(SVG_NS, "svg");
  svgEl.setAttribute("class", "gv-legend-swatch");
  svgEl.setAttribute("viewBox", "0 0 36 20");
  svgEl.setAttribute("width", "36");
  svgEl.setAttribute("height", "20");
  svgEl.setAttribute("aria-hidden", "true");
  const spec = MARK_SHAPES[mark];
  if (!spec) return svgEl;
  const outer = document.createElementNS(SVG_NS, "g");
  outer.setAttribute("class", "gv-diagram");
  const g = document.createElementNS(SVG_NS, "g");
  if (stateClass) g.setAttribute("class", stateClass);
  let shape;
  if (spec.ellipse) {
    shape = document.createElementNS(SVG_NS, "ellipse");
    for (const [k, v] of [["cx", 18], ["cy", 10], ["rx", 15], ["ry", 7]]) shape.setAttribute(k, String(v));
  } else {
    shape = document.createElementNS(SVG_NS, "path");
    shape.setAttribute("d", spec.d);
  }
  const stroke = colors.stroke ?? "#333333";
  shape.setAttribute("fill", colors.fill ?? "#ffffff");
  shape.setAttribute("stroke", stroke);
  shape.setAttribute("stroke-width", spec.arrow ? "2" : "1.3");
  if (spec.dash) shape.setAttribute("stroke-dasharray", "4 2");
  g.append(shape);
  if (spec.arrow) {
    const head = document.createElementNS(SVG_NS, "path");
    head.setAttribute("d", "M4 10l7-4v8z");
    head.setAttribute("fill", stroke);
    g.append(head);
  }
  outer.append(g);
  svgEl.append(outer);
  return svgEl;
}

// ------------------------------------------------------------------ render

function render({ model, el }) {
  const payload = model.get("payload") || {};
  const steps = Array.isArray(payload.steps) ? payload.steps : [];
  const N = steps.length;
  const passes = Math.max(1, Number(payload.passes) || 1);
  const cleanups = [];
  const listen = (target, ev, fn, opts) => {
    target.addEventListener(ev, fn, opts);
    cleanups.push(() => target.removeEventListener(ev, fn, opts));
  };

  const root = h("div", "gv-viewer");
  root.tabIndex = 0;
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", `gradviz step-through viewer: ${payload.title || "trace"}`);
  // Lumino (JupyterLab) skips its keyboard shortcuts for events from here.
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  if (payload.css) {
    const style = h("style");
    style.textContent = String(payload.css);
    root.append(style);
  }

  // -- header: title, counter, pass, badges
  const header = h("div", "gv-header");
  const titleEl = h("div", "gv-title", payload.title || "gradviz trace");
  const method = h("span", "gv-method", payload.method ? String(payload.method) : "");
  const counter = h("div", "gv-counter");
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
  const status = h("div", "gv-status");
  status.append(badge, passEl, counter);
  header.append(titleBox, status);

  // -- controls
  const controls = h("div", "gv-controls");
  const bFirst = iconButton("gv-first", "first", "first step (Home)");
  const bPrev = iconButton("gv-prev", "prev", "previous step (Left arrow)", "prev");
  const bPlay = iconButton("gv-play", "play", "play / pause (Space)", "Play");
  const bNext = iconButton("gv-next", "next", "next step (Right arrow)", "next", true);
  const bLast = iconButton("gv-last", "last", "last step (End)");
  const speedSel = h("select", "gv-speed");
  speedSel.title = "play speed";
  speedSel.setAttribute("aria-label", "play speed");
  for (const s of SPEEDS) {
    const o = h("option", null, `${s}\u00d7`);
    o.value = String(s);
    speedSel.append(o);
  }
  const sliderBox = h("div", "gv-slider-box");
  const slider = h("input", "gv-slider");
  slider.type = "range";
  slider.min = "0";
  slider.max = String(Math.max(0, N - 1));
  slider.step = "1";
  slider.value = "0";
  slider.setAttribute("aria-label", "step");
  const timeline = h("div", "gv-timeline");
  sliderBox.append(slider, timeline);
  const buttons = h("div", "gv-buttons");
  buttons.append(bFirst, bPrev, bPlay, bNext, bLast);
  const speedLabel = h("label", "gv-speed-label");
  speedLabel.append(h("span", null, "speed "), speedSel);
  controls.append(buttons, speedLabel, sliderBox);

  // -- options row: toggles, zoom, jump to NaN
  const options = h("div", "gv-options");
  const toggle = (cls, text) => {
    const lab = h("label", "gv-toggle");
    const cb = h("input", cls);
    cb.type = "checkbox";
    lab.append(cb, h("span", null, text));
    return [lab, cb];
  };
  const [gradLab, gradCb] = toggle("gv-toggle-grad", "gradient values");
  const [fwdLab, fwdCb] = toggle("gv-toggle-forward", "forward values");
  const bZoom = button("gv-zoom", "whole graph", "fit the whole diagram in the box");
  const firstBad = steps.findIndex((s) => s && s.nonfinite);
  const bJump = button("gv-jump-nonfinite", `\u26a0 first NaN/Inf: step ${firstBad + 1}`,
    "jump to the first step that produced NaN or Inf");
  bJump.hidden = firstBad < 0;
  options.append(h("span", "gv-options-label", "show"), gradLab, fwdLab, bZoom, bJump);

  // -- main: diagram + step panel
  const main = h("div", "gv-main");
  const diagram = h("div", "gv-diagram");
  const panel = h("div", "gv-panel");
  const stepTitle = h("div", "gv-step-title", "");
  const stepFlag = h("div", "gv-step-flag", "\u26a0 This step produced NaN or Inf: every value computed from it will be NaN or Inf too.");
  stepFlag.hidden = true;
  const sentence = h("p", "gv-sentence", "");
  const formula = h("div", "gv-formula", "");
  const arrays = h("div", "gv-arrays");
  const book = h("div", "gv-bookkeeping");
  panel.append(stepTitle, stepFlag, sentence, formula, arrays, book);
  main.append(diagram, panel);

  // -- footer: results and legend
  const footer = h("div", "gv-footer");
  const results = h("div", "gv-results");
  const legend = h("div", "gv-legend");
  footer.append(results, legend);

  const help = h("div", "gv-help",
    "Keys when the viewer has focus: \u2190 \u2192 step, Home / End first / last, Space play / pause. Click a node to jump to its first step. The diagram box scrolls; \u201cwhole graph\u201d fits all of it in.");
  root.append(header, controls, options, main, footer, help);
  el.append(root);

  // ---------------------------------------------------------------- diagram

  const svg = parseSvg(payload.svg);
  let natural = null; // the SVG's own size in px, for "actual size"
  if (svg) {
    const w = parseFloat(svg.getAttribute("width") || "");
    const hgt = parseFloat(svg.getAttribute("height") || "");
    const unit = (svg.getAttribute("width") || "").endsWith("pt") ? 4 / 3 : 1;
    if (w > 0 && hgt > 0) natural = [w * unit, hgt * unit];
    if (natural) diagram.style.setProperty("--gv-natural-h", `${Math.ceil(natural[1])}px`);
    if (!svg.getAttribute("viewBox") && natural) svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.classList.add("gv-svg");
    nestRuns(svg);
    diagram.append(svg);
  } else {
    diagram.append(h("div", "gv-empty", "The diagram could not be read."));
  }

  // Index the elements the steps touch: elems[i], first[i] = first step touching it.
  const byId = new Map();
  if (svg) for (const e of svg.querySelectorAll("[id]")) if (!byId.has(e.id)) byId.set(e.id, e);
  const index = new Map(); // element id -> i
  const elems = [];
  const first = [];
  const stepIdx = []; // per step: element indices it touches
  const firstAt = []; // per step: element indices first touched there
  for (let k = 0; k < N; k++) {
    const ids = Array.isArray(steps[k].ids) ? steps[k].ids : [];
    const list = [];
    firstAt.push([]);
    for (const id of ids) {
      let i = index.get(id);
      if (i === undefined) {
        const e = byId.get(String(id));
        if (!e) continue;
        i = elems.length;
        index.set(id, i);
        elems.push(e);
        first.push(k);
        firstAt[k].push(i);
      }
      list.push(i);
    }
    stepIdx.push(Int32Array.from(list));
  }
  const state = new Int8Array(elems.length).fill(-1); // the class each element has now
  const mark = new Int32Array(elems.length).fill(-1); // the last step that touched it
  // Each element's class without a step state, so that a change is one write.
  const plain = elems.map((e) => (e.getAttribute("class") || "").split(/\s+/)
    .filter((c) => c && !STATE_CLASSES.includes(c)).concat("gv-steppable").join(" "));
  const stateClass = STATE_CLASSES.map((c) => " " + c);

  function apply(i, s) {
    if (state[i] === s) return;
    elems[i].setAttribute("class", plain[i] + stateClass[s]);
    state[i] = s;
  }

  // The state element i should show at the current step.
  const want = (i) => (mark[i] === cur ? 2 : first[i] < cur ? 1 : 0);

  // Only what is on screen is restyled at once.  A jump across hundreds of
  // steps changes the state of thousands of elements; restyling each costs
  // the browser 5 to 10 us (style, paint), so a jump on a 1,000-op diagram
  // drawn whole took 60 to 115 ms.  At actual size the box shows a few dozen
  // of them: elements outside the box (plus MARGIN px all round, more than
  // Chromium paints ahead of a scroll) are marked stale instead and restyled
  // when they scroll near, or a slice at a time when the page is idle.
  // Their boxes are measured once, in the SVG's natural pixels.
  let boxes = null; // Float64Array: left, top, right, bottom per element
  const stale = new Uint8Array(elems.length);
  let staleList = [];
  let idleHandle = 0;
  // The part of the SVG in view, in natural px; null: all of it (fit to the box,
  // not measured yet, or nothing to measure with).
  let view = null;
  const scroll = { left: 0, top: 0, width: 0, height: 0, svgLeft: 0, svgTop: 0, box: null, svg: null };

  function measureBoxes() {
    if (boxes || !svg || !natural || !elems.length) return;
    const sr = svg.getBoundingClientRect();
    if (sr.width === 0 || sr.height === 0) return; // not on screen yet
    const sx = natural[0] / sr.width, sy = natural[1] / sr.height;
    const b = new Float64Array(4 * elems.length);
    for (let i = 0; i < elems.length; i++) {
      const e = elems[i].getBoundingClientRect();
      b[4 * i] = (e.left - sr.left) * sx;
      b[4 * i + 1] = (e.top - sr.top) * sy;
      b[4 * i + 2] = (e.right - sr.left) * sx;
      b[4 * i + 3] = (e.bottom - sr.top) * sy;
    }
    boxes = b;
  }

  // Where the box is scrolled to and where the SVG sits in it: read in the
  // follow-the-step frame and on resize; go() itself reads no layout.
  function measureScroll() {
    if (!svg) return;
    const br = diagram.getBoundingClientRect(), sr = svg.getBoundingClientRect();
    scroll.left = diagram.scrollLeft;
    scroll.top = diagram.scrollTop;
    scroll.width = diagram.clientWidth;
    scroll.height = diagram.clientHeight;
    scroll.svgLeft = sr.left - br.left - diagram.clientLeft + diagram.scrollLeft;
    scroll.svgTop = sr.top - br.top - diagram.clientTop + diagram.scrollTop;
    scroll.box = br;
    scroll.svg = sr;
    setView();
  }

  // The view around the box scrolled to (left, top), and around a second
  // position (where a glide ends) when given.
  function setView(to) {
    if (!zoomActual || !boxes || !scroll.width || !scroll.height) {
      view = null;
      return;
    }
    const x = scroll.left - scroll.svgLeft, y = scroll.top - scroll.svgTop;
    const x2 = to ? to[0] - scroll.svgLeft : x, y2 = to ? to[1] - scroll.svgTop : y;
    view = [Math.min(x, x2) - MARGIN, Math.min(y, y2) - MARGIN,
      Math.max(x, x2) + scroll.width + MARGIN, Math.max(y, y2) + scroll.height + MARGIN];
  }

  function inView(i) {
    if (!view) return true;
    const q = 4 * i;
    return boxes[q + 2] >= view[0] && boxes[q] <= view[2] &&
      boxes[q + 3] >= view[1] && boxes[q + 1] <= view[3];
  }

  function restyleOne(i, lazy) {
    if (!lazy || inView(i)) apply(i, want(i));
    else if (!stale[i]) {
      stale[i] = 1;
      staleList.push(i);
    }
  }

  // Move the diagram from step a (or -1: nothing styled yet) to step b; cur is b.
  function restyle(a, b) {
    const act = stepIdx[b];
    for (let j = 0; j < act.length; j++) mark[act[j]] = b;
    if (a < 0) {
      for (let i = 0; i < elems.length; i++) apply(i, want(i));
      return;
    }
    // What changes: a's and b's elements, and those first touched in between.
    const lo = Math.min(a, b), hi = Math.max(a, b);
    let count = stepIdx[a].length + act.length;
    for (let k = lo; k <= hi; k++) count += firstAt[k].length;
    const lazy = view !== null && count > EAGER;
    // Only b's elements are ever gv-active, on screen or not: a's change at once.
    const old = stepIdx[a];
    for (let j = 0; j < old.length; j++) apply(old[j], want(old[j]));
    for (let j = 0; j < act.length; j++) apply(act[j], 2);
    for (let k = lo; k <= hi; k++) {
      const f = firstAt[k];
      for (let j = 0; j < f.length; j++) restyleOne(f[j], lazy);
    }
    if (staleList.length) scheduleIdle();
  }

  // Restyle the stale elements now in view (after a scroll or a zoom).
  function restyleView() {
    if (!staleList.length) return;
    let w = 0;
    for (const i of staleList) {
      if (inView(i)) {
        stale[i] = 0;
        apply(i, want(i));
      } else {
        staleList[w++] = i;
      }
    }
    staleList.length = w;
    if (!w && idleHandle) {
      cancelIdle(idleHandle);
      idleHandle = 0;
    }
  }

  // Restyle up to `limit` stale elements (all of them by default).
  function settle(limit = Infinity) {
    while (staleList.length && limit-- > 0) {
      const i = staleList.pop();
      stale[i] = 0;
      apply(i, want(i));
    }
  }

  function scheduleIdle() {
    if (!idleHandle) idleHandle = requestIdle(onIdle);
  }

  function onIdle() {
    idleHandle = 0;
    settle(IDLE_SLICE);
    if (staleList.length) scheduleIdle();
  }

  // ---------------------------------------------------------------- timeline

  const bytes = steps.map((s) => Number(s.bytes_held) || 0);
  if (N > 1) {
    const pct = (k) => `${(100 * k) / (N - 1)}%`;
    if (passes > 1) {
      let start = 0;
      for (let k = 1; k <= N; k++) {
        if (k === N || steps[k].pass !== steps[start].pass) {
          const seg = h("div", "gv-pass-seg");
          seg.style.left = pct(start);
          seg.style.width = `${(100 * Math.max(k - 1 - start, 0.3)) / (N - 1)}%`;
          seg.title = `pass ${Number(steps[start].pass) + 1}: steps ${start + 1}\u2013${k}`;
          seg.dataset.pass = String(steps[start].pass);
          timeline.append(seg);
          start = k;
        }
      }
    }
    steps.forEach((s, k) => {
      if (s.nonfinite) {
        const tick = h("div", "gv-flag-tick");
        tick.style.left = pct(k);
        tick.title = `step ${k + 1} produced NaN or Inf`;
        timeline.append(tick);
      }
    });
  }

  // ---------------------------------------------------------------- static parts

  // Each result's row and the step that gives it: until the walk gets there,
  // the row is dimmed and says when it is ready (see markResults).
  const resultRows = [];

  function resultWhen(r, row, where = row) {
    const step = Number(r.step);
    if (!Number.isInteger(step)) return;
    where.append(h("div", "gv-result-when", `ready at step ${step + 1}`));
    resultRows.push([row, step]);
  }

  function markResults(k) {
    for (const [row, step] of resultRows) row.classList.toggle("gv-result-later", k < step);
  }

  function renderResults() {
    results.replaceChildren();
    resultRows.length = 0;
    // A Jacobian trace's answer is the whole Jacobian, one row per pass.
    const jacobian = payload.method === "tape.jacobian" && passes > 1;
    results.classList.toggle("gv-results-jacobian", jacobian);
    results.append(h("div", "gv-section-title",
      jacobian ? `Final Jacobian (one row per pass, ${passes} passes)` : "Final gradients"));
    const list = Array.isArray(payload.results) ? payload.results : [];
    if (!list.length) results.append(h("div", "gv-muted", "no xs"));
    if (list.length > COMPACT_RESULTS) {
      renderCompactResults(list);
      return;
    }
    for (const r of list) {
      const row = h("div", `gv-result gv-status-${String(r.status).replace(/[^a-z]/g, "")}`);
      const head = h("div", "gv-result-head");
      head.append(h("span", "gv-result-name", r.name ?? `x${r.x_index}`));
      head.append(h("span", "gv-chip gv-result-status", r.status ?? ""));
      row.append(head);
      if (r.array) row.append(arrayView(r.array, "gv-result-array"));
      else row.append(h("div", "gv-result-none", "None"));
      if (r.reason) row.append(h("div", "gv-result-reason", r.reason));
      resultWhen(r, row);
      results.append(row);
    }
  }

  // Many xs (a model's parameters): one line each, name / shape / norm /
  // status, in a scrolling table; a row opens (a details toggle) to show that
  // x's full result.  Its heatmap is built on first opening only.
  function renderCompactResults(list) {
    results.classList.add("gv-results-compact");
    results.append(h("div", "gv-muted gv-results-hint",
      `${list.length} xs: open a row to see its gradient`));
    const table = h("div", "gv-results-table");
    const head = h("div", "gv-results-row gv-results-header");
    for (const t of ["x", "shape", "norm", "status"]) head.append(h("span", "", t));
    table.append(head);
    for (const r of list) {
      const item = h("details", `gv-result gv-result-compact gv-status-${String(r.status).replace(/[^a-z]/g, "")}`);
      const sum = h("summary", "gv-results-row");
      sum.append(h("span", "gv-result-name", r.name ?? `x${r.x_index}`));
      const shape = Array.isArray(r.shape) ? r.shape : r.array ? r.array.shape : [];
      sum.append(h("span", "gv-result-shape", shapeText(shape)));
      sum.append(h("span", "gv-result-norm gv-cell-value",
        r.norm === null || r.norm === undefined ? "\u2013" : formatNumber(r.norm)));
      sum.append(h("span", "gv-chip gv-result-status", r.status ?? ""));
      item.append(sum);
      resultWhen(r, item, sum);
      const detail = h("div", "gv-result-detail");
      item.append(detail);
      listen(item, "toggle", () => {
        if (!item.open || detail.childElementCount) return;
        if (r.array) detail.append(arrayView(r.array, "gv-result-array"));
        else detail.append(h("div", "gv-result-none", "None"));
        if (r.reason) detail.append(h("div", "gv-result-reason", r.reason));
      });
      table.append(item);
    }
    results.append(table);
  }

  function renderLegend() {
    legend.replaceChildren();
    legend.append(h("div", "gv-section-title", "Legend"));
    const ul = h("ul", "gv-legend-list");
    // The three step states, drawn by the diagram's own CSS (inside a .gv-diagram group).
    const states = [
      ["node gv-tensor", "not reached yet"],
      ["node gv-tensor gv-done", "done: gradient has flowed here"],
      ["node gv-tensor gv-active", "this step"],
    ];
    for (const [cls, text] of states) {
      const li = h("li", "gv-legend-item gv-legend-state");
      li.append(swatch("tensor", cls), h("span", "gv-legend-label", text));
      ul.append(li);
    }
    for (const item of Array.isArray(payload.legend) ? payload.legend : []) {
      if (item.mark === "active") continue; // shown above, with the other states
      const li = h("li", "gv-legend-item");
      li.dataset.mark = String(item.mark ?? "");
      li.append(swatch(String(item.mark ?? ""), "", item), h("span", "gv-legend-label", item.label ?? ""));
      ul.append(li);
    }
    legend.append(ul);
  }

  // Bytes of gradient held over the whole pass, with the current step marked.
  const spark = document.createElementNS(SVG_NS, "svg");
  spark.setAttribute("class", "gv-spark");
  spark.setAttribute("viewBox", "0 0 200 36");
  spark.setAttribute("preserveAspectRatio", "none");
  const sparkMarker = document.createElementNS(SVG_NS, "line");
  {
    const maxB = Math.max(1, ...bytes);
    const x = (k) => (N > 1 ? (200 * k) / (N - 1) : 100);
    const y = (b) => 34 - (30 * b) / maxB;
    const area = document.createElementNS(SVG_NS, "path");
    let d = `M0,34`;
    bytes.forEach((b, k) => { d += ` L${x(k).toFixed(1)},${y(b).toFixed(1)}`; });
    d += ` L200,34 Z`;
    area.setAttribute("d", d);
    area.setAttribute("class", "gv-spark-area");
    sparkMarker.setAttribute("class", "gv-spark-marker");
    sparkMarker.setAttribute("y1", "0");
    sparkMarker.setAttribute("y2", "36");
    spark.append(area, sparkMarker);
    sparkMarker._x = x;
  }

  function renderBook(s, k) {
    book.replaceChildren();
    const grid = h("div", "gv-book-grid");
    const item = (key, value, cls) => {
      const d = h("div", "gv-book-item " + (cls || ""));
      d.append(h("span", "gv-book-key", key), h("span", "gv-book-value", value));
      grid.append(d);
    };
    item("pass", `${Number(s.pass) + 1} / ${passes}`, "gv-book-pass");
    item("ops visited", String(s.ops_visited ?? 0), "gv-book-ops");
    item("gradient held", formatBytes(s.bytes_held), "gv-book-bytes");
    book.append(h("div", "gv-section-title", "Bookkeeping"), grid);
    const x = sparkMarker._x(k);
    sparkMarker.setAttribute("x1", String(x));
    sparkMarker.setAttribute("x2", String(x));
    const sparkBox = h("div", "gv-spark-box");
    sparkBox.append(spark, h("div", "gv-spark-caption", "gradient bytes held over the backward pass"));
    book.append(sparkBox);
  }

  // ---------------------------------------------------------------- stepping

  let cur = -1;
  let timer = null;
  let zoomActual = false;

  function renderPanel(k) {
    const s = steps[k];
    stepTitle.textContent = s.title ?? "";
    sentence.textContent = s.sentence ?? "";
    formula.textContent = s.formula ?? "";
    formula.hidden = !s.formula;
    stepFlag.hidden = !s.nonfinite;
    arrays.replaceChildren();
    for (const a of Array.isArray(s.arrays) ? s.arrays : []) arrays.append(arrayView(a));
    renderBook(s, k);
  }

  // At actual size, keep the current step in view: scroll the diagram box (never
  // the page) only when the step's elements are not already fully visible.
  // Runs once per animation frame, after the restyle, so stepping never forces a
  // layout of its own; element boxes are measured once (the layout never changes)
  // and kept in the SVG's natural pixels.
  let followFrame = 0;
  let followSmooth = false;

  function scheduleFollow(smooth = true) {
    followSmooth = smooth;
    if (!followFrame && zoomActual) followFrame = requestAnimationFrame(follow);
  }

  function follow() {
    followFrame = 0;
    if (!zoomActual || !svg || cur < 0 || !natural) return;
    measureBoxes();
    if (!boxes) return;
    measureScroll();
    restyleView();
    const act = stepIdx[cur];
    if (!act || !act.length) return;
    let l = Infinity, t = Infinity, r = -Infinity, b = -Infinity;
    for (let j = 0; j < act.length; j++) {
      const q = 4 * act[j];
      if (boxes[q + 2] <= boxes[q] && boxes[q + 3] <= boxes[q + 1]) continue;
      l = Math.min(l, boxes[q]); t = Math.min(t, boxes[q + 1]);
      r = Math.max(r, boxes[q + 2]); b = Math.max(b, boxes[q + 3]);
    }
    if (!(r > l)) return;
    // Box-relative coordinates of the step's elements at the current scroll.
    const box = scroll.box, sr = scroll.svg;
    const sx = natural[0] / sr.width, sy = natural[1] / sr.height;
    const ox = sr.left - box.left, oy = sr.top - box.top;
    const L = ox + l / sx, T = oy + t / sy, R = ox + r / sx, B = oy + b / sy;
    const m = 24;
    if (L >= m && R <= box.width - m && T >= m && B <= box.height - m) return;
    const dx = (L + R) / 2 - box.width / 2, dy = (T + B) / 2 - box.height / 2;
    // Glide to a nearby step; jump straight to a far one (a long glide loses the reader).
    const near = Math.abs(dx) < 1.5 * box.width && Math.abs(dy) < 1.5 * box.height;
    const to = [scroll.left + dx, scroll.top + dy];
    diagram.scrollTo({ left: to[0], top: to[1], behavior: followSmooth && near ? "smooth" : "auto" });
    // Restyle what the box will show before this frame is painted.
    if (followSmooth && near) setView(to);
    else measureScroll();
    restyleView();
  }

  function go(k, sync = true) {
    if (!N) return;
    k = Math.round(Number(k));
    if (!Number.isFinite(k)) return;
    k = Math.max(0, Math.min(N - 1, k));
    if (k === cur) return;
    const from = cur;
    cur = k;
    restyle(from, k);
    const s = steps[k];
    root.dataset.step = String(k);
    slider.value = String(k);
    counterText.textContent = `step ${k + 1} / ${N}`;
    kindChip.textContent = KIND_WORDS[s.kind] ?? String(s.kind ?? "");
    kindChip.className = `gv-kind gv-kind-${KIND_WORDS[s.kind] ?? "other"}`;
    passEl.textContent = `pass ${Number(s.pass) + 1} / ${passes}`;
    badge.hidden = !s.nonfinite;
    root.classList.toggle("gv-at-end", k === N - 1);
    root.classList.toggle("gv-step-nonfinite", !!s.nonfinite);
    bFirst.disabled = bPrev.disabled = k === 0;
    bNext.disabled = bLast.disabled = k === N - 1;
    renderPanel(k);
    markResults(k);
    scheduleFollow();
    if (sync && model.get("step") !== k) {
      model.set("step", k);
      model.save_changes();
    }
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    root.classList.remove("gv-playing");
    bPlay.replaceChildren(icon("play"), h("span", "gv-btn-text", "Play"));
    bPlay.setAttribute("aria-pressed", "false");
  }

  function play() {
    if (N < 2) return;
    if (cur >= N - 1) go(0);
    const speed = Number(model.get("speed")) || 1;
    root.classList.add("gv-playing");
    bPlay.replaceChildren(icon("pause"), h("span", "gv-btn-text", "Pause"));
    bPlay.setAttribute("aria-pressed", "true");
    if (timer !== null) clearInterval(timer);
    timer = setInterval(() => {
      if (cur >= N - 1) stop();
      else go(cur + 1);
      if (cur >= N - 1) stop();
    }, 1000 / Math.max(0.05, speed));
  }

  const togglePlay = () => (timer === null ? play() : stop());
  const userGo = (k) => { stop(); go(k); };

  function setToggles() {
    const g = model.get("show_grad_values") !== false;
    const f = model.get("show_forward_values") !== false;
    gradCb.checked = g;
    fwdCb.checked = f;
    root.classList.toggle("gv-hide-grad", !g);
    root.classList.toggle("gv-hide-forward", !f);
  }

  function setSpeed() {
    const v = Number(model.get("speed")) || 1;
    let best = SPEEDS[0];
    for (const s of SPEEDS) if (Math.abs(s - v) < Math.abs(best - v)) best = s;
    speedSel.value = String(best);
    if (timer !== null) play();
  }

  // Two zooms: "actual" (the diagram at its own size, the box scrolls and follows
  // the step; readable at any graph size) and "whole graph" (scaled to fit the box).
  function setZoom(actual) {
    zoomActual = actual && !!natural;
    root.classList.toggle("gv-zoom-actual", zoomActual);
    bZoom.replaceChildren(h("span", null, zoomActual ? "whole graph" : "zoom to 100%"));
    bZoom.title = zoomActual ? "fit the whole diagram in the box" : "show the diagram at its actual size";
    if (svg && natural) {
      svg.style.width = zoomActual ? `${natural[0]}px` : "";
      svg.style.height = zoomActual ? `${natural[1]}px` : "";
    }
    if (!zoomActual) {
      diagram.scrollLeft = diagram.scrollTop = 0;
      view = null; // the whole diagram is in view: bring every element up to date
      settle();
    }
    scheduleFollow(false);
  }

  // ---------------------------------------------------------------- events

  listen(bFirst, "click", () => userGo(0));
  listen(bPrev, "click", () => userGo(cur - 1));
  listen(bNext, "click", () => userGo(cur + 1));
  listen(bLast, "click", () => userGo(N - 1));
  listen(bPlay, "click", togglePlay);
  listen(bJump, "click", () => userGo(firstBad));
  listen(bZoom, "click", () => setZoom(!zoomActual));
  listen(slider, "input", () => userGo(Number(slider.value)));
  listen(speedSel, "change", () => {
    model.set("speed", Number(speedSel.value));
    model.save_changes();
    setSpeed();
  });
  listen(gradCb, "change", () => {
    model.set("show_grad_values", gradCb.checked);
    model.save_changes();
    setToggles();
  });
  listen(fwdCb, "change", () => {
    model.set("show_forward_values", fwdCb.checked);
    model.save_changes();
    setToggles();
  });
  // Scrolling the box brings the elements coming into view up to date before
  // they are painted (scroll events come before the frame's paint).
  listen(diagram, "scroll", () => {
    if (!view) return;
    scroll.left = diagram.scrollLeft;
    scroll.top = diagram.scrollTop;
    setView();
    restyleView();
  }, { passive: true });
  // Clicking a diagram element jumps to the first step that touches it.
  listen(diagram, "click", (e) => {
    let t = e.target;
    while (t && t !== diagram) {
      if (t.id && index.has(t.id)) {
        userGo(first[index.get(t.id)]);
        return;
      }
      t = t.parentNode;
    }
  });
  // Clicking anywhere that is not a control gives the viewer keyboard focus.
  listen(root, "pointerdown", (e) => {
    if (!e.target.closest("button, input, select, label")) {
      setTimeout(() => root.focus({ preventScroll: true }), 0);
    }
  });
  listen(root, "keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    const tag = (t && t.tagName) || "";
    const onSlider = t === slider;
    const onSelect = tag === "SELECT";
    const onButton = tag === "BUTTON" || (tag === "INPUT" && t.type === "checkbox");
    let handled = true;
    switch (e.key) {
      case "ArrowRight":
        if (onSlider || onSelect) { e.stopPropagation(); return; }
        userGo(cur + 1); break;
      case "ArrowLeft":
        if (onSlider || onSelect) { e.stopPropagation(); return; }
        userGo(cur - 1); break;
      case "Home":
        userGo(0); break;
      case "End":
        userGo(N - 1); break;
      case " ":
      case "Spacebar":
        if (onButton || onSelect) { e.stopPropagation(); return; }
        togglePlay(); break;
      default:
        handled = false;
    }
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  });

  const onStep = () => go(model.get("step"), false);
  model.on("change:step", onStep);
  model.on("change:show_grad_values", setToggles);
  model.on("change:show_forward_values", setToggles);
  model.on("change:speed", setSpeed);

  // ---------------------------------------------------------------- start

  renderResults();
  renderLegend();
  setToggles();
  setSpeed();
  setZoom(true);
  // The widget may render before it is on screen: follow the step once it has a size.
  if (typeof ResizeObserver !== "undefined") {
    let seen = false;
    const ro = new ResizeObserver(() => {
      if (!seen && diagram.clientWidth > 0) { seen = true; scheduleFollow(false); }
      if (view) { measureScroll(); restyleView(); }
    });
    ro.observe(diagram);
    cleanups.push(() => ro.disconnect());
  }
  if (N) {
    const k0 = Number(model.get("step")) || 0;
    go(Math.max(0, Math.min(N - 1, k0)), k0 !== Math.max(0, Math.min(N - 1, k0)));
  } else {
    root.classList.add("gv-no-steps");
    counterText.textContent = "no steps";
    sentence.textContent = "This trace has no steps: nothing depends on the xs.";
    for (const b of [bFirst, bPrev, bPlay, bNext, bLast]) b.disabled = true;
    slider.disabled = true;
  }

  // For tests and the benchmark: drive and inspect this viewer from the page.
  root.gvViewer = {
    go: (k) => go(k),
    // Run the pending follow-the-step scroll now (the benchmark counts it).
    flush: () => { if (followFrame) { cancelAnimationFrame(followFrame); follow(); } },
    // Restyle now the elements a long jump left for later (off screen), as in idle time.
    settle: () => settle(),
    get stale() { return staleList.length; },
    get step() { return cur; },
    steps: N,
    elements: elems.length,
  };

  return () => {
    stop();
    if (followFrame) cancelAnimationFrame(followFrame);
    if (idleHandle) cancelIdle(idleHandle);
    model.off("change:step", onStep);
    model.off("change:show_grad_values", setToggles);
    model.off("change:show_forward_values", setToggles);
    model.off("change:speed", setSpeed);
    for (const c of cleanups) c();
    root.remove();
  };
}

export default { render };
