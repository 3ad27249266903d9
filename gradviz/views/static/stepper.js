// gradviz step-through viewer: the ES modules of gradviz/views/static/viewer/,
// put together by scripts/build_frontend.py (`make frontend`).  Do not edit this
// file: edit the modules and build again (a test fails while it is out of date).
// Each module but the entry runs in a scope of its own and hands on what it exports.

// ------------------------------------------------------------ viewer/dom.js

// Building DOM: elements, buttons, icons, and listeners that are undone on cleanup.

const __gv_dom = (() => {

const SVG_NS = "http://www.w3.org/2000/svg";

function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function svgElement(tag, attrs = {}) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

// A button named by the words it shows (a name that differs from the visible
// words fails speech control, WCAG 2.5.3); one with no words (an icon, "+") is
// named by its title without the key hint: "zoom in (+)" -> "zoom in".  The
// title says more on hover; `keys` (aria-keyshortcuts) the key that does the same.
function button(cls, label, title, keys) {
  const b = h("button", "gv-btn " + cls, label);
  b.type = "button";
  b.title = title;
  if (!/[\p{L}\p{N}]/u.test(label ?? "")) b.setAttribute("aria-label", title.replace(/\s*\([^()]*\)$/, ""));
  if (keys) b.setAttribute("aria-keyshortcuts", keys);
  return b;
}

// Text for screen readers only (visually hidden by stepper.css).
function srOnly(tag, cls) {
  return h(tag, "gv-sr-only" + (cls ? " " + cls : ""));
}

// A box that scrolls made a stop of the keyboard, so that its arrow keys scroll
// it, and named for screen readers.
function scrollStop(el, name, role = "group") {
  el.tabIndex = 0;
  el.setAttribute("role", role);
  el.setAttribute("aria-label", name);
  return el;
}

// Control icons drawn as inline SVG: no icon font, so nothing to fetch or miss.
const ICONS = {
  first: ["M2.5 2h2v12h-2z", "M14 2 6 8l8 6z"],
  prev: ["M12 2 4 8l8 6z"],
  next: ["M4 2l8 6-8 6z"],
  last: ["M11.5 2h2v12h-2z", "M2 2l8 6-8 6z"],
  play: ["M4 2l10 6-10 6z"],
  pause: ["M3.5 2h3v12h-3z", "M9.5 2h3v12h-3z"],
  // four corners pointing out: fill the screen
  present: ["M1 1h5v2H3v3H1z", "M10 1h5v5h-2V3h-3z", "M1 10h2v3h3v2H1z", "M13 10h2v5h-5v-2h3z"],
};

function icon(name) {
  const s = svgElement("svg", { viewBox: "0 0 16 16", class: "gv-icon", "aria-hidden": "true" });
  for (const d of ICONS[name]) s.append(svgElement("path", { d }));
  return s;
}

function iconButton(cls, name, title, text, iconAfter = false, keys = null) {
  const b = button(cls, text, title, keys);
  b.textContent = ""; // (the words go in a span of their own, beside the icon)
  const parts = text ? [icon(name), h("span", "gv-btn-text", text)] : [icon(name)];
  b.append(...(iconAfter ? parts.reverse() : parts));
  return b;
}

// A button of the options row that opens a form on a line of its own (print,
// picture): `parts` go in the form, then a message line.  The button toggles
// the form and focuses `first` when it opens; close() hides the form and its
// message; say(text) shows a message, or hides it for none.
function formTool(cls, open, formTag, parts, first, life) {
  const el = h("div", `${cls}-tool`);
  const form = h(formTag, `${cls}-form`);
  const message = h("div", `${cls}-message`);
  message.setAttribute("role", "alert");
  message.hidden = true;
  form.hidden = true;
  form.append(...parts, message);
  el.append(open, form);
  open.setAttribute("aria-expanded", "false");
  const close = () => {
    form.hidden = true;
    message.hidden = true;
    open.setAttribute("aria-expanded", "false");
  };
  life.listen(open, "click", () => {
    form.hidden = !form.hidden;
    open.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) first();
  });
  const say = (text) => {
    message.textContent = text || "";
    message.hidden = !text;
  };
  return { el, form, close, say };
}

// What a viewer must undo when it is removed: listeners, observers, timers.
// listen() adds a listener and remembers how to remove it; dispose() undoes all.
function lifetime() {
  const undo = [];
  return {
    listen(target, ev, fn, opts) {
      target.addEventListener(ev, fn, opts);
      undo.push(() => target.removeEventListener(ev, fn, opts));
    },
    onDispose(fn) {
      undo.push(fn);
    },
    dispose() {
      for (const fn of undo.splice(0)) fn();
    },
  };
}

// Text whose values stand in spans of their own, each followed by a
// "(hidden)" that shows in their place when the viewer hides gradient values:
// the numbers are then nowhere in the page's text.  `at` is the payload's flat
// [start, end, ...] (UTF-16 units) in a text of which this one starts at `from`
// (a step's formula follows its sentence and a newline).
function sayWithValues(el, text, at, from = 0) {
  const parts = [];
  let done = 0;
  const spans = Array.isArray(at) ? at : [];
  for (let i = 0; i + 1 < spans.length; i += 2) {
    const a = spans[i] - from, b = spans[i + 1] - from;
    if (!(a >= done && b > a && b <= text.length)) continue;
    parts.push(text.slice(done, a), h("span", "gv-said-value", text.slice(a, b)),
      h("span", "gv-said-hidden", "(hidden)"));
    done = b;
  }
  parts.push(text.slice(done));
  el.replaceChildren(...parts);
}

// Save `blob` as a download named `name` (the page's own data: no network).
function download(blob, name) {
  const a = h("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// Text as a piece of a file name: lower case, letters and digits joined by "-",
// at most 60 characters ("Two-layer MLP" -> "two-layer-mlp"); "" for none.
function slug(text) {
  return String(text || "").toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 60).replace(/-+$/, "");
}

return { SVG_NS, h, svgElement, button, srOnly, scrollStop, icon, iconButton, formTool, lifetime, sayWithValues, download, slug };
})();

// ------------------------------------------------------------ viewer/format.js

// Numbers, byte counts, shapes and heatmap colours, written as the diagram and
// the formulas write them (gradviz.views.explain).

// How a step is named to people, on screen, in links and on paper: by its
// number in trace.steps, from 0 (the seed, usually) to the last, as
// gv.show(trace, step=k) and trace.to_svg(step=k) take it.

const __gv_format = (() => {

const stepOf = (k, n, word = "step") => `${word} ${k} / ${n - 1}`;
// What a pass carries, in its mode's words: a backward pass carries gradients back from
// the ys, a forward pass (payload.mode "forward") tangents on from the primals.
function modeWords(mode) {
  return mode === "forward"
    ? { carried: "tangent", pass: "forward pass", results: "Final tangents", order: "column",
      flowed: "done: its tangent is computed" }
    : { carried: "gradient", pass: "backward pass", results: "Final gradients", order: "row",
      flowed: "done: gradient has flowed here" };
}

const STEP_NUMBERS = "steps are numbered from 0, as trace.steps and gv.show(trace, step=k) number them";

// A number from the payload: finite numbers arrive as numbers, NaN/Inf as strings.
function num(v) {
  if (typeof v === "number") return v;
  if (v === "nan") return NaN;
  if (v === "inf") return Infinity;
  if (v === "-inf") return -Infinity;
  return NaN;
}

function formatNumber(v) {
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

// A value that is float noise beside its array's largest magnitude prints as 0,
// as gradviz.views.explain prints it: a mean of -2.5e-09 among values near 0.3
// is 0.  (The cell's hover text keeps the value as stored.)
const NOISE = 1e-6;

function quiet(v, scale) {
  const x = num(v);
  return Number.isFinite(x) && Math.abs(x) <= NOISE * scale ? 0 : v;
}

function formatBytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "?";
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)} MB`;
  return `${(n / 1e9).toFixed(1)} GB`;
}

// How many values an array of `shape` holds (1 for a scalar's []).
const sizeOf = (shape) => shape.reduce((a, b) => a * b, 1);

// A shape as text, as the words and the diagram write it: "(2,3)", and a scalar's is "scalar", not "()".
function shapeText(shape) {
  if (!Array.isArray(shape)) return "?";
  if (shape.length === 0) return "scalar";
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(",")})`;
}

// Diverging colour scale centred at 0: blue below, orange above, white at 0.
// Blue/orange stays distinct for the common colour-vision deficiencies.
const NEG = [33, 102, 172];
const POS = [217, 95, 2];
const MID = [247, 247, 247];

function heatRgb(t) {
  const c = t < 0 ? NEG : POS;
  const a = Math.min(1, Math.abs(t));
  return [0, 1, 2].map((i) => Math.round(MID[i] + (c[i] - MID[i]) * a));
}

function heatColour(t) {
  const [r, g, b] = heatRgb(t);
  return `rgb(${r}, ${g}, ${b})`;
}

// Whether a cell of colour heatColour(t) takes white text rather than black:
// the one of the two with more contrast, which is always at least 4.58:1 (the
// two tie at a relative luminance of 0.179; WCAG 2.1's formula).
function heatTextLight(t) {
  const linear = heatRgb(t).map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2] < 0.179;
}

return { stepOf, modeWords, STEP_NUMBERS, num, formatNumber, NOISE, quiet, formatBytes, sizeOf, shapeText, heatColour, heatTextLight };
})();

// ------------------------------------------------------------ viewer/arrays.js

// The array panels: one array as a small heatmap table with its values printed,
// or, when large, its min / mean / max with the range drawn against zero.

// Flatten nested lists into rows of the last axis: [[row values], ...] with labels.

const __gv_arrays = (() => {
const { h } = __gv_dom;
const { formatNumber, heatColour, heatTextLight, num, quiet, shapeText, sizeOf } = __gv_format;

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

// One value as a heatmap cell: coloured by `t` (-1..1), printed, exact on hover
// (exactValues).
function heatCell(v, t, maxAbs) {
  const td = h("td", "gv-cell");
  if (!Number.isFinite(num(v))) {
    td.classList.add("gv-cell-nonfinite");
  } else {
    td.style.background = heatColour(t);
    if (heatTextLight(t)) td.classList.add("gv-cell-dark");
  }
  td.dataset.exact = formatNumber(v);
  td.append(h("span", "gv-cell-value", formatNumber(quiet(v, maxAbs))));
  return td;
}

// A cell's exact value as its hover text, only while the pointer is on it and its
// value is shown: a title stays in the page, where a screen reader reads it, and
// values hidden (the toggles, a practice step's answer) must stay hidden.
function exactValues(root, life) {
  const cellOf = (e) => (e.target instanceof Element ? e.target.closest("td.gv-cell[data-exact]") : null);
  life.listen(root, "pointerover", (e) => {
    const td = cellOf(e);
    const value = td && td.querySelector(".gv-cell-value");
    if (value && getComputedStyle(value).visibility === "visible") td.title = td.dataset.exact;
  });
  life.listen(root, "pointerout", (e) => {
    const td = cellOf(e);
    if (td && !td.contains(e.relatedTarget)) td.removeAttribute("title");
  });
}

// Past this many values an array is shown by its summary.
const MAX_CELLS = 144;
// A four-dimensional array with its values up to this many is drawn as images.
const MAX_IMAGE = 4096;
// An image up to this many pixels prints its values in its cells.
const PRINTED_PIXELS = 36;

// The image a viewer picked, by how many there are to pick from: stepping on to
// the next step keeps the same image of the batch in view.
const picked = new Map();

// How a four-dimensional array of `shape` reads as images: NHWC gives one pick
// per example of the batch and one image per channel; a kernel (`layout` HWIO)
// one pick per input channel and one image per output channel.  `index(p, ch,
// y, x)` is that pixel's index in the array.
function imageAxes(shape, layout) {
  const [a, b, c, d] = shape;
  const kernel = layout === "HWIO";
  return {
    kernel, picks: kernel ? c : a, chans: d, rows: kernel ? a : b, cols: kernel ? b : c,
    index: kernel ? (p, ch, y, x) => [y, x, p, ch] : (p, ch, y, x) => [p, y, x, ch],
  };
}

// The images of a four-dimensional array, as [pick][channel] -> rows of values.
function images(arr) {
  const { kernel, picks, chans: d, rows, cols, index } = imageAxes(arr.shape, arr.layout);
  const at = (p, ch, y, x) => index(p, ch, y, x).reduce((v, i) => v[i], arr.values);
  const out = [];
  for (let p = 0; p < picks; p++) {
    const chans = [];
    for (let ch = 0; ch < d; ch++) {
      const img = [];
      for (let y = 0; y < rows; y++) {
        const row = [];
        for (let x = 0; x < cols; x++) row.push(at(p, ch, y, x));
        img.push(row);
      }
      chans.push(img);
    }
    out.push(chans);
  }
  return { out, kernel, rows, cols };
}

// One image: a table with its values printed when small, else a canvas whose
// pixels are the values (hover: the value under the pointer).
function imageView(img, maxAbs, rows, cols, title) {
  const t = (v) => {
    const x = num(v);
    return maxAbs > 0 && Number.isFinite(x) ? x / maxAbs : 0;
  };
  if (rows * cols <= PRINTED_PIXELS) {
    const table = h("table", "gv-heatmap gv-image-table");
    table.setAttribute("aria-label", title);
    const body = h("tbody");
    for (const r of img) {
      const tr = h("tr");
      for (const v of r) {
        tr.append(heatCell(v, t(v), maxAbs));
      }
      body.append(tr);
    }
    table.append(body);
    return table;
  }
  const canvas = document.createElement("canvas");
  canvas.className = "gv-image-canvas";
  canvas.width = cols;
  canvas.height = rows;
  // about 112 px across, whole pixels per value; larger in presentation mode
  // (--gv-image-scale follows its + and -)
  const px = Math.max(2, Math.round(112 / Math.max(rows, cols)));
  canvas.style.width = `calc(${cols * px}px * var(--gv-image-scale, 1))`;
  canvas.style.height = `calc(${rows * px}px * var(--gv-image-scale, 1))`;
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", title);
  const ctx = canvas.getContext && canvas.getContext("2d");
  if (ctx) {
    const data = ctx.createImageData(cols, rows);
    img.forEach((r, y) => r.forEach((v, x) => {
      const rgb = Number.isFinite(num(v)) ? heatColour(t(v)).match(/\d+/g).map(Number)
        : [120, 0, 120];  // NaN/Inf: purple, as the tables mark them
      data.data.set([...rgb, 255], (y * cols + x) * 4);
    }));
    ctx.putImageData(data, 0, 0);
  }
  canvas.title = title;
  canvas.addEventListener("mousemove", (e) => {
    const box = canvas.getBoundingClientRect();
    const x = Math.min(cols - 1, Math.floor(((e.clientX - box.left) / box.width) * cols));
    const y = Math.min(rows - 1, Math.floor(((e.clientY - box.top) / box.height) * rows));
    if (x >= 0 && y >= 0) canvas.title = `${title}: [${y}, ${x}] = ${formatNumber(img[y][x])}`;
  });
  return canvas;
}

// A four-dimensional array as a row of small images, one per channel, all on one
// colour scale; which example of the batch (or input channel of a kernel) is
// picked from a menu.
function imageGrid(arr) {
  const { out, kernel, rows, cols } = images(arr);
  const box = h("div", "gv-image-grid");
  const tiles = h("div", "gv-image-tiles");
  const what = kernel ? "input channel" : "example";
  // The pick in words, for paper, where the menu does not print (stepper.css).
  const printed = h("span", "gv-image-picked");
  const draw = (p) => {
    printed.textContent = `${what} ${p} of ${out.length}`;
    let maxAbs = 0;
    for (const img of out[p]) for (const r of img) for (const v of r) {
      const x = num(v);
      if (Number.isFinite(x)) maxAbs = Math.max(maxAbs, Math.abs(x));
    }
    tiles.replaceChildren();
    out[p].forEach((img, ch) => {
      const name = kernel ? `in ${p} \u2192 out ${ch}` : `channel ${ch}`;
      const tile = h("figure", "gv-image");
      tile.append(imageView(img, maxAbs, rows, cols, `${arr.label ?? ""} ${what} ${p}, ${name}`),
                  h("figcaption", "gv-image-caption", name));
      tiles.append(tile);
    });
  };
  if (out.length > 1) {
    const label = h("label", "gv-image-pick");
    const menu = h("select");
    out.forEach((_, p) => {
      const o = h("option", "", `${what} ${p} of ${out.length}`);
      o.value = String(p);
      menu.append(o);
    });
    const start = Math.min(picked.get(out.length) ?? 0, out.length - 1);
    menu.value = String(start);
    // picking an example in one panel shows it in the others of the same viewer
    menu.dataset.gvImages = String(out.length);
    menu.gvShow = (p) => { menu.value = String(p); draw(p); };
    menu.addEventListener("change", () => {
      const p = Number(menu.value);
      picked.set(out.length, p);
      const scope = menu.closest(".gv-viewer") || document;
      for (const other of scope.querySelectorAll(`select[data-gv-images="${out.length}"]`)) {
        if (other !== menu && other.gvShow) other.gvShow(p);
      }
      draw(p);
    });
    label.append(h("span", "gv-image-pick-word", kernel ? "kernel for " : "showing "), menu, printed);
    box.append(label);
    draw(start);
  } else {
    draw(0);
  }
  box.append(tiles);
  box.append(h("div", "gv-image-note", kernel
    ? `each image: the ${rows}\u00d7${cols} kernel from one input channel to one output channel`
    : `each image: one channel, ${rows}\u00d7${cols}; one colour scale for all`));
  return box;
}

// One array as a small heatmap table with values printed (or a summary when large).
function arrayView(arr, extraClass) {
  const fig = h("figure", "gv-array" + (extraClass ? " " + extraClass : ""));
  const cap = h("figcaption", "gv-array-caption");
  cap.append(h("span", "gv-array-label", arr.label ?? ""));
  cap.append(h("span", "gv-array-shape", `${shapeText(arr.shape)} ${arr.dtype ?? ""}`));
  if (arr.nonfinite) cap.append(h("span", "gv-chip gv-chip-warn", "NaN/Inf"));
  fig.append(cap);
  const size = Array.isArray(arr.shape) ? sizeOf(arr.shape) : 0;
  const whole = arr.values !== null && arr.values !== undefined && size > 0;
  if (whole && arr.shape.length === 4 && size <= MAX_IMAGE) {
    fig.classList.add("gv-array-images");
    fig.append(imageGrid(arr));
    fig.tabIndex = 0;
  } else if (whole && size <= MAX_CELLS) {
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
        // A lone value has nothing to compare with: show only its sign, softly.
        const t = maxAbs > 0 ? (size === 1 ? 0.45 * Math.sign(x) : x / maxAbs) : 0;
        tr.append(heatCell(v, t, maxAbs));
      }
      body.append(tr);
    });
    table.append(body);
    fig.append(table);
    // (a wide table scrolls, on a phone: a stop of the keyboard, named by its caption)
    fig.tabIndex = 0;
  } else if (size === 0) {
    fig.append(h("div", "gv-array-summary", "empty array"));
  } else {
    // Large array: min / mean / max, with the range drawn against zero.
    const sum = h("div", "gv-array-summary");
    const scale = Math.max(...[arr.min, arr.max].map((v) => Math.abs(num(v))).filter(Number.isFinite), 0);
    for (const [k, v] of [["min", arr.min], ["mean", arr.mean], ["max", arr.max]]) {
      const item = h("span", "gv-stat");
      item.append(h("span", "gv-stat-key", k));
      item.append(h("span", "gv-stat-value gv-cell-value",
                    v === null || v === undefined ? "\u2013" : formatNumber(quiet(v, scale))));
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

return { exactValues, imageAxes, arrayView };
})();

// ------------------------------------------------------------ viewer/controls.js

// The controls: the header (title, step counter, pass, NaN/Inf badge), the
// buttons, speed and step slider with its timeline, the options row (show
// values, jump to the first NaN/Inf), the diagram's zoom bar, and the keys.

const __gv_controls = (() => {
const { button, h, icon, iconButton } = __gv_dom;
const { STEP_NUMBERS, modeWords, stepOf } = __gv_format;

const SPEEDS = [0.5, 1, 2, 4, 8];
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

function createControls(payload, steps, passes) {
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
function bindKeys(root, slider, life, act) {
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

return { SPEEDS, createControls, bindKeys };
})();

// ------------------------------------------------------------ viewer/camera.js

// The diagram box's camera: at what zoom the SVG is shown, which part of it
// the box shows, and where to pan so that a step is in view.
//
// The SVG is drawn at `scale` times its natural size (1, the size dot drew it
// at, is the default) in a box that scrolls.  Element boxes are measured once,
// in the SVG's natural px (the layout never changes); after that, keeping a
// step in view is arithmetic on them and on the box's scroll, read once a step.
//
// The reader's zoom (`base`: 1, or what the zoom buttons or "whole graph" set)
// is kept.  A step too big for the box at that zoom is shown zoomed out just
// enough to fit; the next step that fits at the reader's zoom is shown at it
// again.  The box pans only along an axis on which the step is not already in
// view, so a step beside the last one moves nothing.
//
// A new zoom lays out all of the SVG's text again (a CSS transform as well):
// about 0.015 ms an element in Chromium, 100 ms and more at 1,000 ops drawn
// whole.  So a diagram of more than AUTO_ZOOM_MAX steppable elements stays at
// the reader's zoom while stepping, showing the start of a step too big for
// the box; only the reader's own zooms change it.

const __gv_camera = (() => {

const ZOOM_STEP = 1.25;
const AUTO_ZOOM_MAX = 500;
const MIN_SCALE = 0.1;
const MAX_SCALE = 4;
// "Whole graph" never shrinks the smallest text below READABLE_PX.
const READABLE_PX = 8;
// Px kept between the step and the box's edges (less in a small box).
const EDGE = 24;
// Elements within MARGIN natural px of the box count as in view (see diagram.js).
const MARGIN = 4000;
// A pan is a glide of GLIDE_MS (none for a reader who asks for reduced motion);
// a step far away is jumped to: a long glide loses the reader.
const GLIDE_MS = 220;

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));
const easeOut = (t) => 1 - (1 - t) ** 3;

function reducedMotion() {
  return typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

// The smallest text of the SVG in natural px (font-size is in the viewBox's units).
function smallestText(svg, natural) {
  const vb = svg.viewBox && svg.viewBox.baseVal;
  const unit = vb && vb.width > 0 ? natural[0] / vb.width : 1;
  let least = Infinity;
  for (const t of svg.querySelectorAll("text")) {
    const size = parseFloat(t.getAttribute("font-size") || "");
    if (size > 0 && size < least) least = size;
  }
  return (Number.isFinite(least) ? least : 14) * unit;
}

// The camera of `box` (the scrolling .gv-diagram) on `svg` (natural: its size in
// px), for the elements `elems` the steps touch.  onChange() is told when the
// zoom changes.  `autoZoom` false: it never zooms out to fit a step; `margin`:
// the natural px around the box that count as in view.
function createCamera(box, svg, natural, elems, onChange, autoZoom = true, margin = MARGIN) {
  let boxes = null; // Float64Array: left, top, right, bottom per element, natural px
  let scale = 1; // the zoom shown
  let base = 1; // the reader's zoom
  let fit = false; // "whole graph": base follows the box's size
  let clipped = false; // "whole graph" stopped at readable text before all of it fit
  let view = null; // the part of the SVG in view, natural px, MARGIN all round
  let glide = 0; // the glide's animation frame
  let readable = 0; // the least zoom at which the smallest text is READABLE_PX (once known)
  let least = 0; // the least zoom a step too big for the box may go to (setTextSize)
  let smallest = 0; // the smallest text of the SVG, natural px (once known)
  // The box: scroll, client size, padding (read once).
  const geo = { left: 0, top: 0, width: 0, height: 0, pad: null };
  svg.style.width = `${natural[0]}px`;
  svg.style.height = `${natural[1]}px`;

  function measureBoxes() {
    if (boxes) return;
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

  // Read the box's scroll and size (one layout read).
  function readBox() {
    if (!geo.pad) {
      const cs = getComputedStyle(box);
      geo.pad = ["Left", "Top", "Right", "Bottom"].map((s) => parseFloat(cs["padding" + s]) || 0);
    }
    geo.left = box.scrollLeft;
    geo.top = box.scrollTop;
    geo.width = box.clientWidth;
    geo.height = box.clientHeight;
    setView();
  }

  // Where the SVG's top left sits in the box's scrolled content at zoom s (the
  // SVG is centred across when narrower than the box).
  function origin(s) {
    const [pl, pt, pr] = geo.pad;
    return [pl + Math.max(0, (geo.width - pl - pr - natural[0] * s) / 2), pt];
  }

  function maxScroll(s) {
    const [pl, pt, pr, pb] = geo.pad;
    return [Math.max(0, pl + natural[0] * s + pr - geo.width),
      Math.max(0, pt + natural[1] * s + pb - geo.height)];
  }

  // The view around the box scrolled to (left, top), and around a second
  // position (where a glide ends) when given.
  function setView(to) {
    if (!boxes || !geo.width || !geo.height) {
      view = null;
      return;
    }
    const [ox, oy] = origin(scale);
    const x = geo.left - ox, y = geo.top - oy;
    const x2 = to ? to[0] - ox : x, y2 = to ? to[1] - oy : y;
    const v = [(Math.min(x, x2)) / scale - margin, Math.min(y, y2) / scale - margin,
      (Math.max(x, x2) + geo.width) / scale + margin, (Math.max(y, y2) + geo.height) / scale + margin];
    const whole = v[0] <= 0 && v[1] <= 0 && v[2] >= natural[0] && v[3] >= natural[1];
    view = whole ? null : v;
  }

  // The union of the elements `act`, natural px, or null (none has a size).
  function unionOf(act) {
    let l = Infinity, t = Infinity, r = -Infinity, b = -Infinity;
    for (let j = 0; j < act.length; j++) {
      const q = 4 * act[j];
      if (boxes[q + 2] <= boxes[q] && boxes[q + 3] <= boxes[q + 1]) continue;
      l = Math.min(l, boxes[q]); t = Math.min(t, boxes[q + 1]);
      r = Math.max(r, boxes[q + 2]); b = Math.max(b, boxes[q + 3]);
    }
    return r > l ? [l, t, r, b] : null;
  }

  const edge = () => Math.min(EDGE, geo.width / 10, geo.height / 10);

  // The largest zoom at which u (natural px) fits in the box, with the edges.
  function fitting(u) {
    const m = edge();
    return Math.min((geo.width - 2 * m) / Math.max(1, u[2] - u[0]),
      (geo.height - 2 * m) / Math.max(1, u[3] - u[1]));
  }

  // Along one axis: the scroll that shows [lo, hi] (scrolled px), from `at` in a
  // window `size` wide: `at` itself when the span is in view already, else the
  // span centred (its start, when it is wider than the window).
  function pan(at, lo, hi, size, most) {
    const m = edge();
    if (lo >= at + m - 0.5 && hi <= at + size - m + 0.5) return at;
    const want = hi - lo <= size - 2 * m ? (lo + hi) / 2 - size / 2 : lo - m;
    return clamp(want, 0, most);
  }

  // Where the box goes to show u (natural px) at zoom s: [left, top].
  function scrollFor(u, s, from) {
    const [ox, oy] = origin(s);
    const [mx, my] = maxScroll(s);
    return [pan(from[0], ox + u[0] * s, ox + u[2] * s, geo.width, mx),
      pan(from[1], oy + u[1] * s, oy + u[3] * s, geo.height, my)];
  }

  function stopGlide() {
    if (glide) cancelAnimationFrame(glide);
    glide = 0;
  }

  function scrollTo(to, smooth) {
    stopGlide();
    const from = [geo.left, geo.top];
    const dx = to[0] - from[0], dy = to[1] - from[1];
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return;
    const near = Math.abs(dx) < 1.5 * geo.width && Math.abs(dy) < 1.5 * geo.height;
    setView(to); // restyle what the box will show, from the first frame on
    if (!smooth || !near || reducedMotion()) {
      box.scrollTo(to[0], to[1]);
      geo.left = box.scrollLeft;
      geo.top = box.scrollTop;
      setView();
      return;
    }
    const t0 = performance.now();
    const frame = (now) => {
      const t = Math.min(1, (now - t0) / GLIDE_MS), e = easeOut(t);
      box.scrollTo(from[0] + dx * e, from[1] + dy * e);
      glide = t < 1 ? requestAnimationFrame(frame) : 0;
      if (!glide) { geo.left = box.scrollLeft; geo.top = box.scrollTop; setView(); }
    };
    glide = requestAnimationFrame(frame);
  }

  // Show the SVG at zoom s, the point in the middle of the box staying there;
  // false when s is the zoom shown already.
  function setScale(s) {
    s = clamp(s, MIN_SCALE, MAX_SCALE);
    if (Math.abs(s - scale) < 1e-3) return false;
    const [ox, oy] = origin(scale);
    const cx = (geo.left + geo.width / 2 - ox) / scale, cy = (geo.top + geo.height / 2 - oy) / scale;
    scale = s;
    svg.style.width = `${natural[0] * s}px`;
    svg.style.height = `${natural[1] * s}px`;
    readBox(); // the scroll bars may come or go
    const [nx, ny] = origin(s);
    box.scrollTo(nx + cx * s - geo.width / 2, ny + cy * s - geo.height / 2);
    geo.left = box.scrollLeft;
    geo.top = box.scrollTop;
    setView();
    onChange();
    return true;
  }

  function textAt1() {
    if (!smallest) smallest = smallestText(svg, natural);
    return smallest;
  }

  // "Whole graph": the zoom at which all of the SVG fits, not below readable text.
  function fitBase() {
    const [pl, pt, pr, pb] = geo.pad;
    const whole = Math.min((geo.width - pl - pr - 1) / natural[0], (geo.height - pt - pb - 1) / natural[1]);
    if (!readable) readable = READABLE_PX / textAt1();
    clipped = whole < readable;
    return Math.min(1, Math.max(whole, readable)); // a small graph stays at its own size
  }

  return {
    // For the restyle: whether only part of the SVG is in view, and whether element i is.
    get limited() { return view !== null; },
    inView(i) {
      if (!view) return true;
      const q = 4 * i;
      return boxes[q + 2] >= view[0] && boxes[q] <= view[2] &&
        boxes[q + 3] >= view[1] && boxes[q + 1] <= view[3];
    },
    get scale() { return scale; },
    get base() { return base; },
    get fit() { return fit; },
    get clipped() { return fit && clipped; },
    get gliding() { return glide !== 0; },
    // Measure what following the step needs; false if the box is not on screen yet.
    measure() {
      measureBoxes();
      if (!boxes) return false;
      readBox();
      return geo.width > 0 && geo.height > 0;
    },
    // Bring the elements `act` (a step) into view: at the reader's zoom, or
    // zoomed out just enough to fit them; panning only where they are not in view.
    follow(act, smooth) {
      if (fit) base = fitBase();
      const u = act && act.length ? unionOf(act) : null;
      if (!u) {
        setScale(base);
        return;
      }
      const auto = autoZoom && elems.length <= AUTO_ZOOM_MAX ? Math.max(least, fitting(u)) : Infinity;
      const zoomed = setScale(Math.min(base, auto));
      scrollTo(scrollFor(u, scale, [geo.left, geo.top]), smooth && !zoomed);
    },
    // The reader zooms by `factor` (keeping the step `act` in view), or fits the
    // whole graph (factor null).
    zoom(factor, act) {
      least = 0;
      if (factor === null) {
        fit = true;
        base = fitBase();
      } else {
        fit = false;
        base = clamp(scale * factor, MIN_SCALE, MAX_SCALE);
      }
      setScale(base);
      const u = act && act.length ? unionOf(act) : null;
      if (u) scrollTo(scrollFor(u, scale, [geo.left, geo.top]), false);
      onChange();
    },
    // The smallest text's size on screen, px.
    get textSize() { return textAt1() * scale; },
    // The reader's zoom set so that the smallest text is `px` on screen, and
    // kept there: a step too big for the box is not zoomed out below it (its
    // start is shown), since text asked for by size is text that must be read.
    // Applied when the box is next measured if it is not on screen yet.
    setTextSize(px, act) {
      fit = false;
      base = least = clamp(px / textAt1(), MIN_SCALE, MAX_SCALE);
      if (!this.measure()) return;
      setScale(base);
      const u = act && act.length ? unionOf(act) : null;
      if (u) scrollTo(scrollFor(u, scale, [geo.left, geo.top]), false);
      onChange();
    },
    // The box was scrolled (a scroll event): the new view, without layout reads
    // beyond the scroll position.
    scrolled() {
      if (!boxes) return false;
      geo.left = box.scrollLeft;
      geo.top = box.scrollTop;
      if (!glide) setView();
      return true;
    },
    stopGlide,
    dispose: stopGlide,
  };
}

return { ZOOM_STEP, createCamera };
})();

// ------------------------------------------------------------ viewer/tooltips.js

// The diagram's hover texts (each element's SVG <title>) while values are
// hidden, and a gradient's before its step: the tooltip would otherwise give
// the numbers away on hover.  It then keeps its first line, what the element
// is, and the line of code that made it, and says that its values are hidden;
// revealing the values (or reaching the step) gives it back whole.

// Which elements' tooltips hold which values.

const __gv_tooltips = (() => {

const GRADIENT = ".gv-grad, .gv-mark, .gv-sum";
const FORWARD = ".gv-tensor";

const whole = new WeakMap(); // <title> -> its full text, once it was masked
const touched = new WeakSet(); // boxes in which a tooltip was ever masked

// A masked tooltip: its first line, what the element is, and the line of code that
// made it (no value is in those), then that its values are hidden.
const CODE_LINE = /^(from|at|made at): /;
function kept(text) {
  const lines = text.split("\n");
  const code = lines.slice(1).filter((line) => CODE_LINE.test(line));
  return [lines[0], ...code, "(values hidden)"].join("\n");
}

// Only writes what changes: a tooltip never masked is whole already.
function mask(title, hidden) {
  if (!whole.has(title)) {
    if (!hidden) return;
    whole.set(title, title.textContent);
  }
  const text = whole.get(title);
  const want = hidden ? kept(text) : text;
  if (title.textContent !== want) title.textContent = want;
}

// A tooltip's new full text (gv.explore's new values); masked, it stays masked.
function retitle(title, text) {
  if (whole.has(title)) whole.set(title, text);
  else if (title.textContent !== text) title.textContent = text;
}

// Mask or restore the tooltips of every diagram in `box` (the main drawing and
// the overview, whichever are inserted).  With every value shown in a box
// where nothing was ever masked, there is nothing to visit.
function maskTooltips(box, hideGrad, hideForward) {
  if (!hideGrad && !hideForward && !touched.has(box)) return;
  touched.add(box);
  for (const title of box.querySelectorAll("svg g > title")) {
    const g = title.parentElement;
    const grad = g.matches(GRADIENT);
    mask(title, grad ? hideGrad : hideForward && g.matches(FORWARD));
  }
}

// A gradient the walk has not reached (gv-pending) keeps its values to itself
// too.  Its state changes every step, so its tooltip is set as the pointer
// comes to it, before the browser shows it: no work per step.
function watchTooltips(box, life, gradHidden) {
  life.listen(box, "pointerover", (e) => {
    const g = e.target instanceof Element ? e.target.closest(GRADIENT) : null;
    const title = g && g.querySelector(":scope > title");
    if (title) {
      if (g.classList.contains("gv-pending")) touched.add(box);
      mask(title, gradHidden() || g.classList.contains("gv-pending"));
    }
  });
}

return { retitle, maskTooltips, watchTooltips };
})();

// ------------------------------------------------------------ viewer/diagram.js

// The diagram: the laid-out SVG, inserted once, and restyled as the viewer steps.
//
// A step only sets the classes gv-pending / gv-done / gv-active on the SVG
// elements whose state changes (each element's first step is precomputed, so a
// jump from step a to step b touches only ids(a), ids(b) and the elements first
// touched between).  A jump that changes many elements restyles at once only
// those on screen or near it; the others follow as they scroll near, or in idle
// time (see EAGER).  The box pans (and zooms) to keep the step in view: camera.js.
//
// "Whole graph" shows the overview when the payload has one: the same layout
// without values (so much smaller), under the same element ids, stepped the same
// way while it is shown; the drawing with values comes back at 100%, restyled to
// the step, when the reader zooms again.

const __gv_diagram = (() => {
const { createCamera, ZOOM_STEP } = __gv_camera;
const { SVG_NS, h } = __gv_dom;
const { retitle } = __gv_tooltips;

const STATE_CLASSES = ["gv-pending", "gv-done", "gv-active"];
// A step that changes more elements than EAGER restyles only those within
// a margin of the diagram box (camera.js) at once, and the others IDLE_SLICE at a time.
const EAGER = 200;
const IDLE_SLICE = 150;
const requestIdle = typeof requestIdleCallback === "function"
  ? (fn) => requestIdleCallback(fn, { timeout: 500 })
  : (fn) => setTimeout(fn, 20);
const cancelIdle = typeof cancelIdleCallback === "function" ? cancelIdleCallback : clearTimeout;

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

// New values for drawing `svg` from `text`, the same layout with other numbers
// (gv.explore): each <text> and hover text takes its counterpart's, nothing
// else changes.  False when `text` is not the same drawing.
function retextSvg(svg, text) {
  const doc = new DOMParser().parseFromString(String(text || ""), "image/svg+xml");
  if (doc.getElementsByTagName("parsererror").length) return false;
  const mine = svg.querySelectorAll("text, title");
  const theirs = doc.documentElement.querySelectorAll("text, title");
  if (mine.length !== theirs.length) return false;
  for (let i = 0; i < mine.length; i++) {
    const want = theirs[i].textContent;
    if (mine[i].localName === "title") retitle(mine[i], want);
    else if (mine[i].textContent !== want) mine[i].textContent = want;
  }
  return true;
}

// The box is as tall as the tallest drawing it has shown (up to its CSS limit): a
// scope opened grows it, one closed leaves it, so the page does not jump about.
function growHeight(box, px) {
  const now = parseFloat(box.style.getPropertyValue("--gv-natural-h")) || 0;
  if (px > now) box.style.setProperty("--gv-natural-h", `${Math.ceil(px)}px`);
}

// A screen reader would read a drawing's every label and hover text, values
// and all, as one wall of text.  So the elements are hidden from it, and only
// those of the current step are shown to it, each with a short description and
// a stop of the keyboard (see reachable()); the box has a name that says the
// step (viewer.js).  Done before the SVG is in the page: no tree to update.
function quiet(svg) {
  svg.setAttribute("role", "none");
  // (a step's element, shown, is an image: its texts are not read, only its description)
  for (const e of svg.querySelectorAll("g.node, g.edge, g.cluster, g.graph > text, g.gv-run > text")) {
    e.setAttribute("aria-hidden", "true");
  }
}

// What a screen reader is told of the drawing's elements: a node's name, what
// it is and its shape ("Mul: op, output (2,1) float32, this step"); an edge's,
// which gradient it carries and its shape ("gradient Add sends back to its
// input 0, Mul: (2,1)"), or which nodes it joins.  Never values: they are the
// panel's, and practice hides them.
const KINDS = [["gv-seed", "seed"], ["gv-result", "final gradient"], ["gv-sum", "reduction"],
  ["gv-direction", "direction"], ["gv-jvp", "final tangent"],
  ["gv-op", "op"], ["gv-constant", "constant"], ["gv-variable", "variable"]];
const STATE_WORDS = { "gv-active": "this step", "gv-done": "done", "gv-pending": "not reached yet" };
// Where a picked node's dependencies are lit (relight), what each lit element is to it.
const DEP_WORDS = { self: "picked", up: "the picked node depends on it", down: "depends on the picked node" };

const kindOf = (e) => (KINDS.find(([c]) => e.classList.contains(c)) || [null,
  e.classList.contains("edge") ? "edge" : "tensor"])[1];
const firstLine = (e) => {
  const t = e.querySelector(":scope > title");
  return t ? t.textContent.split("\n")[0].trim() : "";
};
// The words an element shows, without its values.
const wordsOf = (e) => Array.from(e.querySelectorAll("text:not(.gv-forward-value):not(.gv-grad-value)"),
  (t) => t.textContent.replace(/\s+/g, " ").trim()).filter(Boolean);

// A node's name: its label in bold ("Mul", "W"), else what it is ("seed").
function nodeName(e) {
  const bold = e.querySelector('text[font-weight="bold"]');
  return bold ? bold.textContent.trim() : kindOf(e);
}

// endsOf(id): an edge's [tail, head] node elements (null: not known).
function describe(e, endsOf) {
  const state = STATE_CLASSES.find((c) => e.classList.contains(c));
  const words = wordsOf(e);
  let text;
  if (e.classList.contains("edge")) {
    const shape = words.find((w) => w.startsWith("\u2191"));
    const joins = endsOf(e.id);
    // (a mark's edge, the seed's or a final gradient's, is drawn against the flow)
    const [a, b] = joins ? joins.map(nodeName) : [];
    text = firstLine(e) || (!joins ? "edge" : e.classList.contains("gv-mark") ? `edge joining ${a} and ${b}`
      : `edge from ${a} to ${b}`);
    if (shape) text += `: ${shape.slice(1).trim()}`;
  } else if (e.querySelector('text[font-weight="bold"]')) {
    // (an op drawn with its output: the last line is the output's shape)
    const rest = words.slice(1).map((w) => w.replace(/ \u00b7 /g, ", "));
    const output = e.classList.contains("gv-op") && e.classList.contains("gv-tensor") && rest.length
      ? [`output ${rest.pop()}`] : [];
    const kind = kindOf(e);
    const said = rest.some((w) => w.includes(kind)) || (kind === "tensor" && rest.length);
    text = `${nodeName(e)}: ${[said ? null : kind, ...rest, ...output].filter(Boolean).join(", ")}`;
  } else {
    text = firstLine(e) || words.join(", ") || kindOf(e);
  }
  const dep = DEP_WORDS[e.getAttribute("data-gv-dep")];
  return [text, state && STATE_WORDS[state], dep].filter(Boolean).join(", ");
}

// Insert the SVG into the box; returns [svg, its natural size in px] (either may be null).
// The main drawing sets the box's height (--gv-natural-h) and says when it cannot
// be read; the overview (see createDiagram) comes in hidden, and silently.
function insertSvg(box, text, main) {
  const svg = parseSvg(text);
  let natural = null; // the SVG's own size in px, for "actual size"
  if (svg) {
    const w = parseFloat(svg.getAttribute("width") || "");
    const hgt = parseFloat(svg.getAttribute("height") || "");
    const unit = (svg.getAttribute("width") || "").endsWith("pt") ? 4 / 3 : 1;
    if (w > 0 && hgt > 0) natural = [w * unit, hgt * unit];
    if (natural && main) growHeight(box, natural[1]);
    if (!svg.getAttribute("viewBox") && natural) svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.classList.add("gv-svg");
    if (!main) svg.style.display = "none";
    nestRuns(svg);
    quiet(svg);
    box.append(svg);
  } else if (main) {
    box.append(h("div", "gv-empty", "The diagram could not be read."));
  }
  return [svg, natural];
}

// Index the elements the steps touch: elems[i], first[i] = the first step
// touching it, stepIdx[k] = the elements step k touches, firstAt[k] = those
// first touched at step k.
function indexSteps(svg, steps) {
  const byId = new Map();
  if (svg) for (const e of svg.querySelectorAll("[id]")) if (!byId.has(e.id)) byId.set(e.id, e);
  const index = new Map(); // element id -> i
  const elems = [];
  const first = [];
  const stepIdx = [];
  const firstAt = [];
  for (let k = 0; k < steps.length; k++) {
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
  return { index, elems, first, stepIdx, firstAt };
}

// The step state of every element the steps touch, set as classes.  Only what
// is in view (vp.inView) is restyled at once when a step changes many elements.
//
// A jump across hundreds of steps changes the state of thousands of elements;
// restyling each costs the browser 5 to 10 us (style, paint), so a jump on a
// 1,000-op diagram drawn whole took 60 to 115 ms.  At actual size the box shows
// a few dozen of them: elements outside the box (plus a margin all round, more
// than Chromium paints ahead of a scroll) are marked stale instead and restyled
// when they scroll near, or a slice at a time when the page is idle.
function stepStyles({ elems, first, stepIdx, firstAt }, vp, eager = EAGER) {
  let cur = -1;
  const state = new Int8Array(elems.length).fill(-1); // the class each element has now
  const mark = new Int32Array(elems.length).fill(-1); // the last step that touched it
  // Each element's class without a step state, so that a change is one write.
  const plain = elems.map((e) => (e.getAttribute("class") || "").split(/\s+/)
    .filter((c) => c && !STATE_CLASSES.includes(c)).concat("gv-steppable").join(" "));
  const stateClass = STATE_CLASSES.map((c) => " " + c);
  const stale = new Uint8Array(elems.length);
  let staleList = [];
  let idleHandle = 0;

  function apply(i, s) {
    if (state[i] === s) return;
    elems[i].setAttribute("class", plain[i] + stateClass[s]);
    state[i] = s;
  }

  // The state element i should show at the current step.
  const want = (i) => (mark[i] === cur ? 2 : first[i] < cur ? 1 : 0);

  function restyleOne(i, lazy) {
    if (!lazy || vp.inView(i)) apply(i, want(i));
    else if (!stale[i]) {
      stale[i] = 1;
      staleList.push(i);
    }
  }

  // Move the diagram from step a (or -1: nothing styled yet) to step b.
  function restyle(a, b) {
    cur = b;
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
    const lazy = vp.limited && count > eager;
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
      if (vp.inView(i)) {
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

  return {
    restyle,
    restyleView,
    settle,
    get stale() { return staleList.length; },
    dispose() { if (idleHandle) cancelIdle(idleHandle); },
  };
}

// A scope view's drawing (an opened layer, its values on every node) holds many
// lines of text for its elements: zooming it relays them all out, about 0.06 ms a
// line in Chromium, 29 ms for a 32-op transformer layer's 461.  Past this many
// lines such a drawing stays at the reader's zoom as it steps (a step too big for
// the box shows its start), rather than zooming out to each step.
const AUTO_ZOOM_TEXTS = 200;
// Its elements change state by the hundred in a far jump (every element of the
// opened layer goes from pending to done), and each carries lines of values:
// restyling all of them took 15 to 18 ms (95th percentile).  So past SCOPE_EAGER
// changes only those within SCOPE_MARGIN natural px of the box are restyled at
// once, the others as they scroll near or in idle time: 10 ms.
const SCOPE_EAGER = 40;
const SCOPE_MARGIN = 600;

// One drawing in the box: its SVG, the elements the steps touch, its camera and
// its step styles; `at` is the step it was last restyled to (-1: none yet).
// `autoZoom` false: it zooms to fit a step only when it has few lines of text.
function createView(box, text, steps, main, onZoom, autoZoom = true) {
  const [svg, natural] = insertSvg(box, text, main);
  const index = indexSteps(svg, steps);
  const zooms = autoZoom || !svg || svg.getElementsByTagName("text").length <= AUTO_ZOOM_TEXTS;
  const cam = svg && natural ? createCamera(box, svg, natural, index.elems, onZoom, zooms,
    autoZoom ? undefined : SCOPE_MARGIN) : null;
  // Without a size of its own the SVG is scaled to the box: all of it in view.
  const styles = stepStyles(index, cam || { limited: false, inView: () => true },
    autoZoom ? EAGER : SCOPE_EAGER);
  return { svg, natural, index, cam, styles, at: -1 };
}

// The steps as a scope view draws them: its own ids where they differ from the steps'.
function viewSteps(steps, ids) {
  return steps.map((s, k) => ({ ids: (ids && ids[String(k)]) || s.ids }));
}

// The box's own events, on whichever drawing `shown()` gives: a scroll brings
// the elements coming into view up to date before they are painted (scroll
// events come before the frame's paint); a reader who scrolls takes over from a
// glide under way; a click on an element picks it (onPick(k, id), k the first
// step that touches it);
// a resize (the viewer may render before it is on screen, and the box changes
// size with the page) follows the step again, at once.
function listenBox(box, life, shown, onPick, onScope, onResize) {
  life.listen(box, "scroll", () => {
    const v = shown();
    if (v.cam && v.cam.scrolled()) v.styles.restyleView();
  }, { passive: true });
  for (const ev of ["wheel", "pointerdown", "touchstart"]) {
    life.listen(box, ev, () => shown().cam && shown().cam.stopGlide(), { passive: true });
  }
  life.listen(box, "click", (e) => {
    const { index } = shown();
    for (let t = e.target; t && t !== box; t = t.parentNode) {
      if (t.id && onScope(t.id)) return;
      if (t.id && index.index.has(t.id)) {
        onPick(index.first[index.index.get(t.id)], t.id);
        return;
      }
    }
  });
  // Enter or Space on a scope's box (focusable: see markScopes) opens or closes it;
  // on an element of the step (reachable()) it picks it, as a click does.
  life.listen(box, "keydown", (e) => {
    const t = e.target;
    if ((e.key !== "Enter" && e.key !== " ") || !t || !t.id || t === box) return;
    const { index } = shown();
    let done = false;
    if (t.dataset && t.dataset.gvScope) done = onScope(t.id);
    else if (index.index.has(t.id) || t.hasAttribute("data-gv-dep")) {
      // (a lit element no step works on, a constant say, is picked too: it lights its own)
      onPick(index.index.has(t.id) ? index.first[index.index.get(t.id)] : -1, t.id);
      done = true;
    }
    if (done) {
      e.preventDefault();
      e.stopPropagation();
    }
  });
  if (typeof ResizeObserver !== "undefined") {
    const ro = new ResizeObserver(() => {
      if (box.clientWidth > 0) onResize();
    });
    ro.observe(box);
    life.onDispose(() => ro.disconnect());
  }
}

// The drawings the box can show: the payload's own drawing (`main`), its overview
// (made when "whole graph" first asks for it), and a drawing per scope view the
// reader has opened (made when first opened).  `full` is the drawing at 100% the
// reader is on, `shown` the one in the box.
function drawings(box, svgText, overviewText, steps, onZoom) {
  const main = createView(box, svgText, steps, true, onZoom);
  const scoped = new Map(); // scope view key -> its drawing
  let overview; // undefined: not made yet; null: there is none
  let overviewSource = overviewText;
  const d = {
    main,
    full: main,
    shown: main,
    overview() {
      if (d.full !== main) return null; // (the overview is the payload's own drawing's)
      if (overview === undefined) {
        overview = overviewSource ? createView(box, overviewSource, steps, false, onZoom) : null;
        if (overview && !overview.cam) { // unreadable, or without a size: no overview
          if (overview.svg) overview.svg.remove();
          overview = null;
        }
      }
      return overview;
    },
    // The drawing of scope view `key` (its payload entry `view`), made once; null when
    // it cannot be read.
    scopeDrawing(key, view) {
      if (!view.svg) return main;
      let v = scoped.get(key);
      if (!v) {
        v = createView(box, view.svg, viewSteps(steps, view.ids), false, onZoom, false);
        if (!v.svg || !v.cam) {
          if (v.svg) v.svg.remove();
          return null;
        }
        scoped.set(key, v);
      }
      return v;
    },
    // Show drawing v in place of the one shown, restyled to step k (-1: none yet).
    show(v, k) {
      if (v === d.shown) return;
      if (d.shown.cam) d.shown.cam.stopGlide();
      d.shown.svg.style.display = "none";
      v.svg.style.display = "";
      if (v.natural && v !== overview) growHeight(box, v.natural[1]);
      d.shown = v;
      if (k >= 0) v.styles.restyle(v.at, k);
      v.at = k;
      onZoom();
    },
    // The same drawings with other values: false when they are not the same.
    retext(text, overviewText) {
      if (!main.svg || !retextSvg(main.svg, text)) return false;
      if (overview && !retextSvg(overview.svg, overviewText)) return false;
      overviewSource = overviewText;
      return true;
    },
    dispose() {
      for (const v of [main, overview, ...scoped.values()]) {
        if (v && v.cam) v.cam.dispose();
        if (v) v.styles.dispose();
      }
    },
  };
  return d;
}

// Scope boxes and borders made keys to press: focusable, a button each, named by what
// pressing does ("open layer_3", "close attention").  Once per drawing.
function markScopes(v, meta, label) {
  if (!v.svg || v.scopesMarked) return;
  v.scopesMarked = true;
  const mark = (id, action, name) => {
    const e = v.svg.querySelector(`[id="${CSS.escape(id)}"]`);
    if (!e) return;
    e.setAttribute("tabindex", "0");
    e.setAttribute("role", "button");
    // (the name holds the words it shows, for speech control: "open layer_3, 3 ops, 5 tensors")
    const words = wordsOf(e);
    e.setAttribute("aria-label", [`${action} ${name}`, ...words.slice(words[0] === name ? 1 : 0)].join(", "));
    e.removeAttribute("aria-hidden");
    e.dataset.gvScope = action;
  };
  for (const [id, key] of Object.entries(meta.boxes || {})) mark(id, "open", label(key));
  for (const id of Object.keys(meta.clusters || {})) {
    const e = v.svg.querySelector(`[id="${CSS.escape(id)}"] text`);
    mark(id, "close", e ? e.textContent : "scope");
  }
}

// A drawing's edges as maps both ways (node -> [[node, edge id], ...]), made once.
function graphOf(v, edges) {
  if (!v.graph) {
    const down = new Map(), up = new Map();
    const add = (m, a, b, e) => { if (!m.has(a)) m.set(a, []); m.get(a).push([b, e]); };
    for (const [t, hd, e] of edges || []) {
      add(down, t, hd, e);
      add(up, hd, t, e);
    }
    v.graph = { down, up };
  }
  return v.graph;
}

// The diagram in `box` (the .gv-diagram element) for `steps`: the drawing
// (`svgText`) and its overview (`overviewText`, or null): the same layout
// without values, under the same ids, which "whole graph" shows, fitted to the
// box; any other zoom goes back to the drawing at 100%.  Without an overview
// (a large drawing), "whole graph" zooms the drawing out as far as its text
// stays readable.  `edges` are the drawing's ([tail, head, edge id]).
// A click on a node lights it and what it depends on, and picks it:
// hooks.picked(k, id) tells of it (k, the first step touching element id; -1:
// none).  A click on what is picked already goes to that step: hooks.pick(k,
// id).  So the click that brings a lecturer's focus to the diagram never steps;
// and since any step unpicks (unpick()), nor does one after stepping on.
// hooks.scope(id) is called when a click lands on a scope's box or border (true
// when it is one), hooks.zoom() when the zoom (or the drawing shown) changes.
function createDiagram(box, svgText, overviewText, steps, edges, life, hooks) {
  const onZoom = () => hooks.zoom();
  const d = drawings(box, svgText, overviewText, steps, onZoom);
  let cur = -1;
  let meta = { boxes: {}, clusters: {}, edges }; // the scope view shown: what opens, closes
  let selected = null; // the node whose dependencies are lit
  let picked = null; // the element a click picked: a click on it again goes to its step

  // Keep the current step in view (camera.js): on a step, on first show and on
  // a resize.  Runs once per animation frame, after the restyle, so stepping
  // never forces a layout of its own.
  let followFrame = 0;
  let followSmooth = false;

  function scheduleFollow(smooth = true) {
    followSmooth = followFrame ? followSmooth && smooth : smooth;
    if (!followFrame && d.shown.cam) followFrame = requestAnimationFrame(follow);
  }

  function follow() {
    followFrame = 0;
    const { cam, index, styles } = d.shown;
    if (!cam || cur < 0 || !cam.measure()) return;
    cam.follow(index.stepIdx[cur], followSmooth);
    styles.restyleView();
  }

  // The reader's zoom: by a factor (zoom in / out, back to 1), or "whole graph"
  // (null: the overview if there is one); leaving the overview is going back to
  // the drawing at 100%.  The current step stays in view.
  function zoom(factor) {
    const { full } = d;
    if (!full.cam) return;
    if (followFrame) { cancelAnimationFrame(followFrame); followFrame = 0; }
    const leaving = factor !== null && d.shown !== full;
    d.show(factor === null ? d.overview() || full : full, cur);
    const { cam, index, styles } = d.shown;
    if (!cam.measure()) { // not on screen: nothing to zoom yet
      d.show(full, cur);
      return;
    }
    reachable();
    cam.zoom(leaving ? 1 / cam.scale : factor, cur >= 0 ? index.stepIdx[cur] : null);
    // Back from the overview at 100%, or zoomed out just enough for a step too big for it.
    if (leaving && cur >= 0) cam.follow(index.stepIdx[cur], false);
    if (!cam.limited) styles.settle(); // all of the diagram in view: bring every element up to date
    styles.restyleView();
    relight();
  }

  // Text of `px` on screen (its smallest text), on the drawing with values;
  // kept for the next follow when the box is not on screen yet.
  function setTextSize(px) {
    const { full } = d;
    if (!full.cam || !(px > 0)) return;
    if (followFrame) { cancelAnimationFrame(followFrame); followFrame = 0; }
    d.show(full, cur);
    reachable();
    full.cam.setTextSize(px, cur >= 0 ? full.index.stepIdx[cur] : null);
    if (!full.cam.limited) full.styles.settle();
    full.styles.restyleView();
  }

  const find = (svg, id) => (svg && id ? svg.querySelector(`[id="${CSS.escape(id)}"]`) : null);

  // Show scope view `key` (its payload entry `view`; `label(key)` names a node).
  // The element `from` (in the drawing shown) and `to` (in the new one) stand for the
  // same scope: the new drawing is scrolled so that it stays where it was on screen.
  // False when the view's drawing cannot be read.
  function setScope(key, view, label, from, to) {
    const v = d.scopeDrawing(key, view);
    if (!v) return false;
    const before = find(d.shown.svg, from);
    const at = before ? before.getBoundingClientRect() : null;
    if (followFrame) { cancelAnimationFrame(followFrame); followFrame = 0; }
    d.full = v;
    d.show(v, cur);
    meta = { boxes: view.boxes || {}, clusters: view.clusters || {},
      edges: view.edges || edges };
    markScopes(v, meta, label);
    reachable();
    const after = find(v.svg, to);
    if (at && after && v.cam && v.cam.measure()) {
      const r = after.getBoundingClientRect();
      box.scrollBy(r.left - at.left, r.top - at.top);
      v.cam.scrolled();
      v.styles.restyleView();
    } else {
      scheduleFollow(false);
    }
    if (selected && !find(v.svg, selected)) selected = null;
    if (picked && !find(v.svg, picked)) unpick();
    relight();
    return true;
  }

  // Light what node `id` depends on (up) and what depends on it (down), in the drawing
  // shown; null clears.  The marks are attributes (data-gv-dep), which stepping, a
  // rewrite of the class, leaves alone.
  function relight() {
    for (const v of [d.main, d.full, d.shown]) {
      if (v.svg && v.lit) {
        for (const e of v.lit) e.removeAttribute("data-gv-dep");
        v.svg.classList.remove("gv-selecting");
        v.lit = null;
      }
    }
    const v = d.shown;
    if (!selected || !v.svg) return;
    const g = graphOf(v === d.full ? v : d.full, meta.edges);
    const lit = [];
    const set = (id, what) => {
      const e = find(v.svg, id);
      if (e && !e.hasAttribute("data-gv-dep")) {
        e.setAttribute("data-gv-dep", what);
        lit.push(e);
      }
    };
    set(selected, "self");
    for (const [dir, what] of [[g.up, "up"], [g.down, "down"]]) {
      const seen = new Set([selected]);
      const todo = [selected];
      while (todo.length) {
        for (const [next, edge] of dir.get(todo.pop()) || []) {
          set(edge, what);
          if (!seen.has(next)) {
            seen.add(next);
            set(next, what);
            todo.push(next);
          }
        }
      }
    }
    v.svg.classList.add("gv-selecting");
    v.lit = lit;
  }

  function select(id) {
    const g = graphOf(d.full, meta.edges);
    selected = id && (g.up.has(id) || g.down.has(id)) ? id : null;
    relight();
    reachable();
    return selected !== null;
  }

  // Forget the pick (the lit dependencies stay until Escape): the viewer
  // stepped, so the next click picks again rather than jumps.
  function unpick() {
    if (picked === null) return;
    picked = null;
    hooks.picked(-1, null);
  }

  function onPick(k, id) {
    if (id === picked) {
      hooks.pick(k, id);
      return;
    }
    select(id);
    picked = id;
    hooks.picked(k, id);
  }

  // The elements of the current step, shown to screen readers and made stops of
  // the keyboard: Tab from the box goes through them, each says what it is, and
  // Enter or Space picks it (listenBox).  A step has a few, so a drawing of 500 ops is
  // never 500 stops; the others stay hidden (quiet()).  A node picked adds what it
  // depends on and what depends on it, lit (relight): picking one of those in turn,
  // a reader walks the whole graph from the keyboard.
  let reached = [];
  const endsOf = (id) => {
    const edge = (meta.edges || []).find((x) => x[2] === id);
    const ends = edge && [find(d.shown.svg, edge[0]), find(d.shown.svg, edge[1])];
    return ends && ends[0] && ends[1] ? ends : null;
  };
  function reachable() {
    const { svg, index } = d.shown;
    const now = new Set();
    for (const i of svg && cur >= 0 ? index.stepIdx[cur] : []) {
      const e = index.elems[i];
      if (!e.dataset.gvScope) now.add(e); // (a scope's box is a button of its own)
    }
    for (const e of (svg && d.shown.lit) || []) {
      if (!e.dataset.gvScope && (e.classList.contains("node") || e.classList.contains("edge"))) now.add(e);
    }
    // (an element that stays keeps its tabindex: Chromium drops the focus of one that loses it)
    const active = box.getRootNode().activeElement;
    for (const e of reached) {
      if (now.has(e)) continue;
      if (e === active) box.focus({ preventScroll: true }); // the keys still step
      e.removeAttribute("tabindex");
      e.removeAttribute("role");
      e.setAttribute("aria-hidden", "true");
    }
    for (const e of now) {
      e.setAttribute("tabindex", "0");
      // (an image, not a button: a button's name would have to hold every word it shows, values too)
      e.setAttribute("role", "img");
      e.setAttribute("aria-label", describe(e, endsOf));
      e.removeAttribute("aria-hidden");
    }
    reached = [...now];
  }

  listenBox(box, life, () => d.shown, onPick,
    (id) => hooks.scope(id, meta), () => scheduleFollow(false));
  life.onDispose(() => {
    if (followFrame) cancelAnimationFrame(followFrame);
    d.dispose();
  });

  return {
    // Show step k: restyle from the step shown before (follow() then pans to it).
    show(k) {
      cur = k;
      d.shown.styles.restyle(d.shown.at, k);
      d.shown.at = k;
      reachable();
    },
    // A short name for the drawing at step k: how many nodes, and which the step works on.
    summary(k) {
      const v = d.shown;
      if (!v.svg) return "not drawn";
      if (v.nodes === undefined) v.nodes = v.svg.querySelectorAll("g.node").length;
      const names = [];
      for (const i of v.index.stepIdx[k] || []) {
        const e = v.index.elems[i];
        const name = e.classList.contains("node") ? nodeName(e).slice(0, 40) : null;
        if (name && !names.includes(name)) names.push(name);
      }
      const some = names.length > 3 ? [...names.slice(0, 3), `${names.length - 3} more`] : names;
      const list = some.length > 1 ? `${some.slice(0, -1).join(", ")} and ${some[some.length - 1]}`
        : some[0] || "nothing drawn";
      return `${v.nodes} nodes; step ${k} works on ${list}`;
    },
    follow: scheduleFollow,
    zoomIn: () => zoom(ZOOM_STEP),
    zoomOut: () => zoom(1 / ZOOM_STEP),
    fitWhole: () => zoom(null),
    actualSize: () => d.shown.cam && zoom(1 / d.shown.cam.scale),
    // The reader's zoom set to `scale` (from the drawing with values).
    zoomTo: (scale) => d.full.cam && zoom(scale / d.full.cam.scale),
    setTextSize,
    setScope,
    // Light node id's dependencies (false: it is no node of the drawing); clear them.
    select,
    clearSelection() {
      const had = selected !== null || picked !== null;
      selected = null;
      unpick();
      relight();
      reachable();
      return had;
    },
    get selected() { return selected; },
    get picked() { return picked; },
    unpick,
    // The first step touching element `id` of the drawing at 100% (-1: none does), and
    // whether it is drawn there.
    firstStep(id) {
      const i = d.full.index.index.get(id);
      return i === undefined ? -1 : d.full.index.first[i];
    },
    has: (id) => !!find(d.full.svg, id),
    // The drawing at 100% (of the scope view shown): its <svg>, and the ids step k touches in it.
    get svg() { return d.full.svg; },
    stepIds: (k) => Array.from(d.full.index.stepIdx[k] || [], (i) => d.full.index.elems[i].id),
    // The smallest text's size on screen, px (null without a size of its own).
    get textSize() { return d.shown.cam ? d.shown.cam.textSize : null; },
    // The zoom shown: { scale, fit ("whole graph"), clipped (it stopped at
    // readable text before all of it fit), overview (the overview is shown) };
    // null without a size of its own.
    get zoom() {
      const cam = d.shown.cam;
      return cam ? { scale: cam.scale, base: cam.base, fit: cam.fit, clipped: cam.clipped,
        overview: d.shown !== d.full } : null;
    },
    // Whether a pan is pending or under way.
    get moving() { return followFrame !== 0 || (!!d.shown.cam && d.shown.cam.gliding); },
    // Run the pending follow-the-step pan now (the benchmark counts it).
    flush() {
      if (followFrame) { cancelAnimationFrame(followFrame); follow(); }
    },
    // Restyle now the elements a long jump left for later (off screen), as in idle time.
    settle: () => d.shown.styles.settle(),
    get stale() { return d.shown.styles.stale; },
    elements: d.main.index.elems.length,
    // The drawing at 100% (for tests): its <svg>.
    get svg() { return d.full.svg; },
    // New values for the same layout (gv.explore): the texts and hover texts change,
    // nothing moves.  False when the SVG is not the same drawing.
    retext: (text, overviewText) => d.retext(text, overviewText),
  };
}

return { createDiagram };
})();

// ------------------------------------------------------------ viewer/answers.js

// Checking a learner's answer against a question of the payload, in the page:
// the same rules as gradviz.views.practice.model.Question.check, so that the
// widget and the offline report say what `gv.exercise(...).check(...)` says.
// The shape first (a wrong shape that is a named slip's shape is that slip;
// the right numbers laid out another way are "wrong_shape"), then the values,
// each within rtol of its own size plus a tenth of rtol of the whole array's
// largest, and never less than the dtype's resolution there: no slack is absolute, so a
// gradient of 1e-20 is checked as closely as one of 1.
//
// An answer here is { shape: [2, 1], values: [flat numbers] }; a question is
// the payload's (see gradviz.views.viewdata.trace_data).

// The longest a typed number or shape may be: anything longer is refused before
// it is read, and every pattern below runs in time linear in what it reads.

const __gv_answers = (() => {
const { formatNumber, shapeText, sizeOf } = __gv_format;

const MAX_TYPED = 100;

function typed(text, what) {
  const t = String(text ?? "");
  if (t.length > MAX_TYPED) throw new Error(`That is ${t.length} characters; ${what} is at most ${MAX_TYPED}.`);
  return t.trim();
}

// A shape as the learner types it: "(2, 1)", "2,1", "[3]", "2x3", "()" or "scalar".
// Throws an Error saying what is accepted.
function parseShape(text) {
  const t = typed(text, "a shape").toLowerCase();
  if (t === "scalar" || t === "()" || t === "[]") return [];
  const inner = t.replace(/^[([]\s*/, "").replace(/\s*[)\]]$/, "");
  const parts = inner.split(/\s*[,x\u00d7]\s*|\s+/).filter((p) => p !== "");
  if (!t || !parts.length || !parts.every((p) => /^\d+$/.test(p))) {
    throw new Error("Write a shape as sizes, such as (2, 3) or (3,), or scalar.");
  }
  return parts.map(Number);
}

// A decimal number: each part of it can be read only one way, so the match is linear.
const DECIMAL = "(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:e[-+]?\\d+)?";
const NUMBER = new RegExp(`^[-+]?${DECIMAL}$`, "i");
const FRACTION = new RegExp(`^([-+]?${DECIMAL})\\s*/\\s*(${DECIMAL})$`, "i");

// A number as the learner types it: "1.75", "-2", "\u22122" (a minus sign), "1e-3", "3/4".
// NaN when it is not one; throws an Error for more than MAX_TYPED characters.
function parseNumber(text) {
  const t = typed(text, "a number").replace(/\u2212/g, "-");
  if (!t) return NaN;
  const frac = FRACTION.exec(t);
  if (frac) return Number(frac[1]) / Number(frac[2]);
  return NUMBER.test(t) ? Number(t) : NaN;
}

function flatten(v) {
  return Array.isArray(v) ? v.flatMap(flatten) : [Number(v)];
}

// Two lists (shapes, names) equal item by item.
const sameList = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

const largest = (values) => values.reduce((m, w) => Math.max(m, Math.abs(w)), 0);

// The least slack at `scale`: a few steps of the gradient's dtype there (its
// resolution, { eps, tiny }; float64's where the question gives none).
function floorAt(scale, res) {
  const { eps, tiny } = res || { eps: 2 ** -52, tiny: 5e-324 };
  return Math.max(4 * eps * scale, tiny);
}

// The share of rtol each element is allowed of the answer's largest element.
const SCALE_SHARE = 0.1;

// Every element within rtol of its own size plus SCALE_SHARE of rtol of `scale`
// (the largest element of the whole answer; by default of `want`), and at least
// the dtype's resolution at that scale.
function close(got, want, rtol, scale = largest(want), res = null) {
  if (got.length !== want.length) return false;
  const floor = floorAt(scale, res);
  return got.every((g, i) => Math.abs(g - want[i]) <= Math.max(rtol * (Math.abs(want[i]) + SCALE_SHARE * scale), floor));
}

// The flat values of an array of `shape` with its axes reversed (NumPy's .T).
function transposed(flat, shape) {
  const n = shape.length;
  if (n < 2) return flat.slice();
  const strides = shape.map((_, i) => sizeOf(shape.slice(i + 1)));
  const rev = shape.slice().reverse();
  const out = new Array(flat.length);
  for (let j = 0; j < flat.length; j++) {
    let r = j, src = 0;
    for (let a = n - 1; a >= 0; a--) {  // j's index in the reversed shape, read backwards
      const d = rev[a];
      src += (r % d) * strides[n - 1 - a];
      r = Math.floor(r / d);
    }
    out[j] = flat[src];
  }
  return out;
}

// The flat index of `at` in `shape` (row-major).
function flatIndex(at, shape) {
  return at.reduce((acc, i, a) => acc * shape[a] + i, 0);
}

const named = (w) => ({
  verdict: "misconception",
  kind: w.kind,
  message: `${w.title.charAt(0).toUpperCase()}${w.title.slice(1)}. ${w.why}`,
});

const hasShape = (target, shape) =>
  shape.length ? `${target} has shape ${shapeText(shape)}` : `${target} is a scalar`;

const shapeWords = (shape) => (shape.length ? shapeText(shape) : "a scalar");

function wrongShape(q, got) {
  const why = q.shape_note || "a gradient has the shape of what it is the gradient of.";
  return {
    verdict: "shape",
    message: `${hasShape(q.target, q.shape)}, not ${shapeWords(got)}: ${why}`,
    hint: (q.hints || [])[0] || null,
  };
}

// A list of numbers for a focus, of the wrong length.
function wrongCount(q, n) {
  const k = q.focus.length;
  return {
    verdict: "shape",
    message: `This question asks for ${k} value${k > 1 ? "s" : ""}, ${asked(q)}, in that order, or the whole array, shape ${shapeText(q.shape)}; that is ${n} value${n === 1 ? "" : "s"}.`,
    hint: (q.hints || [])[0] || null,
  };
}

// The shape alone, asked before the values.
function checkShape(q, shape) {
  if (sameList(shape, q.shape)) return { verdict: "right", message: `Right: ${hasShape(q.target, shape)}.` };
  for (const w of q.wrong || []) {
    if (w.kind !== "wrong_shape" && sameList(w.shape, shape)) return named(w);
  }
  return wrongShape(q, shape);
}

// The elements of a question's focus, from a flat array of its whole shape.
const picked = (q, flat) => q.focus.map((at) => flat[flatIndex(at, q.shape)]);

// Whether an answer of `shape` gives the focus's elements (not the whole array).
function focused(q, shape) {
  if (!q.focus || sameList(shape, q.shape)) return false;
  return sameList(shape, [q.focus.length]) || (shape.length === 0 && q.focus.length === 1);
}

// What an answer gives: "dL/dW", or the focus's elements, "dL/dW[0,1], dL/dW[2,3]".
function asked(q) {
  return q.focus ? q.focus.map((at) => `${q.target}[${at.join(",")}]`).join(", ") : q.target;
}

// The answer { shape, values } checked: right, a named slip, a wrong shape, or
// "not yet" with hint `hints` (0: the formula, 1 or more: the answer).  For a
// question with a focus, an answer of shape [k] (or [] for one) is its elements.
function checkAnswer(q, answer, hints = 0) {
  const got = answer.values.map(Number);
  const res = q.resolution || null;
  let right = flatten(q.answer);
  const scale = largest(right);
  let rightShape = q.shape;
  // each wrong answer with the scale of its whole array (its slack scales with all of it)
  let wrong = (q.wrong || []).map((w) => { const flat = flatten(w.values); return { ...w, flat, scale: largest(flat) }; });
  const isFocused = focused(q, answer.shape);
  if (isFocused) {
    right = picked(q, right);
    rightShape = answer.shape;
    wrong = wrong.filter((w) => sameList(w.shape, q.shape)).map((w) => ({ ...w, shape: answer.shape, flat: picked(q, w.flat) }));
  }
  if (!sameList(answer.shape, rightShape)) {
    for (const w of wrong) if (sameList(w.shape, answer.shape) && close(got, w.flat, q.rtol, w.scale, res)) return named(w);
    if (got.length === right.length &&
        (close(got, right, q.rtol, largest(right), res) || close(transposed(got, answer.shape), right, q.rtol, largest(right), res))) {
      return named({ kind: "wrong_shape", title: "the right numbers in the wrong shape",
        why: `A gradient has the shape of what it is the gradient of: ${hasShape(q.target, rightShape)}.` });
    }
    if (q.focus && answer.shape.length <= 1 && got.length < right.length) return wrongCount(q, got.length);
    return wrongShape(q, answer.shape);
  }
  if (close(got, right, q.rtol, scale, res)) {
    const said = isFocused
      ? `${asked(q)} = ${right.map(formatNumber).join(", ")}` : (q.hints || [])[1] || `${q.target}`;
    return { verdict: "right", message: `Right: ${said}.${q.coincide_note || ""}` };
  }
  for (const w of wrong) if (sameList(w.shape, answer.shape) && close(got, w.flat, q.rtol, w.scale, res)) return named(w);
  const hint = (q.hints || [])[Math.min(Math.max(Math.trunc(hints) || 0, 0), 1)] || null;
  return { verdict: "not_yet", message: "Not yet: that is none of the usual slips.", hint };
}

return { MAX_TYPED, parseShape, parseNumber, flatten, sameList, close, flatIndex, checkShape, focused, asked, checkAnswer };
})();

// ------------------------------------------------------------ viewer/exercises.js

// A lesson's exercises in the offline report: each asked as the notebook asks it,
// answered in the page, and checked as gradviz.views.practice checks it.
//
// An exercise is the JSON of gradviz.views.practice.Exercise.to_dict: a lesson's
// question ({ form: "value" | "shape" | "count" | "choice" | "nones", answer, slips,
// right, not_yet, hints, ... }, every word of its feedback worked out in Python) or a
// step's ({ form: "step", ask, question }, checked by answers.js as the practice
// panel checks it).  The page only compares answers and shows the words it was given.
//
// DOM: .gv-exercise (one per exercise, data-form) holding .gv-exercise-prompt, a
// .gv-exercise-given table, the answer (.gv-exercise-input, or .gv-exercise-option
// radio buttons / check boxes), .gv-exercise-check and a .gv-feedback.

// Nested lists of numbers as typed: "6.62", "[0.5, 0.25, 1/6]", "[[1], [2]]".
// Returns { shape, values }; throws an Error saying what is accepted.

const __gv_exercises = (() => {
const { h } = __gv_dom;
const { checkAnswer, close, flatten, MAX_TYPED, parseNumber, parseShape, sameList } = __gv_answers;
const { formatNumber, shapeText } = __gv_format;

function parseArray(text) {
  const t = String(text ?? "").trim();
  if (t.length > MAX_TYPED * 40) throw new Error("That is too long for an answer.");
  const tokens = (t.match(/\[|\]|,|[^[\],]+/g) || []).map((s) => s.trim()).filter(Boolean);
  let at = 0;
  const bad = () => new Error("Write a number, such as 0.25 or 1/4, or a list of them, such as [1, 2] or [[1], [2]].");
  function value() {
    if (tokens[at] === "[") {
      at += 1;
      const items = [];
      while (tokens[at] !== "]") {
        if (at >= tokens.length) throw bad();
        items.push(value());
        if (tokens[at] === ",") at += 1;
        else if (tokens[at] !== "]") throw bad();
      }
      at += 1;
      return items;
    }
    const n = parseNumber(tokens[at++] ?? "");
    if (!Number.isFinite(n)) throw bad();
    return n;
  }
  const v = value();
  if (at !== tokens.length) throw bad();
  const shape = [];
  for (let level = v; Array.isArray(level); level = level[0]) shape.push(level.length);
  const values = flatten(v);
  if (values.length !== shape.reduce((a, b) => a * b, 1)) throw new Error("Every row of the list must be as long as the others.");
  return { shape, values };
}

// A lesson's question checked: { verdict, message, kind?, hint? }, as
// gradviz.views.practice.asks.LessonQuestion.check says it.
function checkLesson(q, got, hints) {
  const same = (a, b) => {
    if (q.form === "value") return sameList(a.shape, b.shape) && close(a.values, b.values.map(Number), q.rtol);
    if (q.form === "shape") return sameList(a, b);
    if (q.form === "nones") return sameList([...a].sort(), [...b].sort());
    return a === b;
  };
  if (same(got, q.answer)) return { verdict: "right", message: q.right };
  for (const s of q.slips) if (same(got, s.answer)) return { verdict: "misconception", kind: s.kind, message: s.message };
  if (q.form === "value" && !sameList(got.shape, q.answer.shape)) {
    return { verdict: "shape", message: `${q.shape_message} not ${got.shape.length ? shapeText(got.shape) : "a scalar"}.`, hint: q.hints[0] };
  }
  return { verdict: "not_yet", message: q.not_yet, hint: q.hints[Math.min(hints, 1)] };
}

// Nested lists of numbers, as the notebook prints them: [[1], [2]].
const nested = (v) => (Array.isArray(v) ? `[${v.map(nested).join(", ")}]` : formatNumber(v));

function givenTable(given) {
  const table = h("table", "gv-exercise-given");
  for (const g of given) {
    const row = h("tr");
    const text = nested(g.values);
    row.append(h("td", null, g.label), h("td", "gv-exercise-values", text), h("td", "gv-exercise-shape", shapeText(g.shape)));
    table.append(row);
  }
  return table;
}

// The answer's controls: a text box, radio buttons (choice) or check boxes (nones);
// read() gives the answer in the form's terms or throws an Error saying why not.
function answerInput(ex, n) {
  const q = ex.form === "step" ? ex.question : ex;
  if (ex.form === "choice" || ex.form === "nones") {
    const list = h("fieldset", "gv-exercise-options");
    list.append(h("legend", "gv-exercise-legend", ex.form === "choice" ? "Choose one" : "Tick each that gets None"));
    const boxes = ex.options.map((o) => {
      const label = h("label", "gv-exercise-option");
      const box = h("input");
      box.type = ex.form === "choice" ? "radio" : "checkbox";
      box.name = `gv-exercise-${n}`;
      box.value = o.key;
      label.append(box, h("span", null, ex.form === "choice" ? `${o.key}) ${o.text}` : o.key));
      list.append(label);
      return box;
    });
    const read = () => {
      const picked = boxes.filter((b) => b.checked).map((b) => b.value);
      if (ex.form === "choice" && !picked.length) throw new Error("Choose one of the answers first.");
      return ex.form === "choice" ? picked[0] : picked;
    };
    return { el: list, read, focus: () => boxes[0].focus() };
  }
  const box = h("input", "gv-exercise-input");
  box.type = "text";
  box.autocomplete = "off";
  box.spellcheck = false;
  const shape = ex.form === "step" ? q.shape : ex.form === "value" ? ex.answer.shape : null;
  box.placeholder = ex.form === "shape" ? "(2, 3), or scalar" : ex.form === "count" ? "a whole number"
    : shape.length ? `an array of shape ${shapeText(shape)}, such as ${shape.length > 1 ? "[[1, 2], [3, 4]]" : "[1, 2]"}` : "a number";
  box.setAttribute("aria-label", `Your answer to exercise ${n}`);
  const read = () => {
    if (ex.form === "shape") return parseShape(box.value);
    if (ex.form === "count") {
      const v = parseNumber(box.value);
      if (!Number.isInteger(v) || v < 0) throw new Error("Write a whole number, such as 3.");
      return v;
    }
    return parseArray(box.value);
  };
  return { el: box, read, focus: () => box.focus() };
}

// One exercise, asked; `n` counts from 1.
function exerciseCard(ex, n) {
  const card = h("section", "gv-exercise");
  card.dataset.form = ex.form;
  card.append(h("h3", "gv-exercise-title", `Exercise ${n}`),
              h("p", "gv-exercise-prompt", ex.form === "step" ? ex.ask : ex.prompt));
  const given = ex.form === "step" ? ex.question.given : ex.given;
  if (given.length) card.append(givenTable(given));
  const input = answerInput(ex, n);
  const check = h("button", "gv-btn gv-exercise-check", "check");
  check.type = "button";
  const feedback = h("div", "gv-feedback");
  feedback.setAttribute("role", "status");
  feedback.setAttribute("aria-live", "polite");
  feedback.hidden = true;
  const form = h("form", "gv-exercise-answer");
  form.append(input.el, check);
  card.append(form, feedback);
  let hints = 0;
  const run = (e) => {
    if (e) e.preventDefault();
    let f;
    try {
      const got = input.read();
      f = ex.form === "step" ? checkAnswer(ex.question, got, hints) : checkLesson(ex, got, hints);
    } catch (err) {
      f = { verdict: "input", message: err.message };
    }
    if (f.verdict === "not_yet" || f.verdict === "shape") hints += 1;
    feedback.hidden = false;
    feedback.className = `gv-feedback gv-feedback-${f.verdict}`;
    if (f.kind) feedback.dataset.kind = f.kind;
    else delete feedback.dataset.kind;
    feedback.textContent = f.message;
    if (f.hint) feedback.append(h("div", "gv-exercise-hint", `Hint: ${f.hint}`));
  };
  form.addEventListener("submit", run);
  check.addEventListener("click", run);
  return card;
}

// Every exercise of a lesson, into `root`.
function createExercises(root, exercises) {
  root.classList.add("gv-exercises");
  exercises.forEach((ex, i) => root.append(exerciseCard(ex, i + 1)));
  return root;
}

return { parseArray, checkLesson, createExercises };
})();

// ------------------------------------------------------------ viewer/panel.js

// The step panel beside the diagram: what the step did (title, sentence,
// formula), its arrays, and the bookkeeping (pass, ops visited, gradient bytes
// held, with a sparkline of the bytes over the whole pass), which the reader
// can fold away: a <details> made once, so it stays as they left it from step
// to step, with the step's bytes still in its one-line summary.

// Bytes of gradient held over the whole pass, with a marker line to move.

const __gv_panel = (() => {
const { h, sayWithValues, svgElement } = __gv_dom;
const { arrayView } = __gv_arrays;
const { formatBytes, modeWords } = __gv_format;

function sparkline(steps) {
  const N = steps.length;
  const bytes = steps.map((s) => Number(s.bytes_held) || 0);
  const maxB = Math.max(1, ...bytes);
  const x = (k) => (N > 1 ? (200 * k) / (N - 1) : 100);
  const y = (b) => 34 - (30 * b) / maxB;
  let d = `M0,34`;
  bytes.forEach((b, k) => { d += ` L${x(k).toFixed(1)},${y(b).toFixed(1)}`; });
  d += ` L200,34 Z`;
  const svg = svgElement("svg", { class: "gv-spark", viewBox: "0 0 200 36", preserveAspectRatio: "none" });
  const marker = svgElement("line", { class: "gv-spark-marker", y1: "0", y2: "36" });
  svg.append(svgElement("path", { d, class: "gv-spark-area" }), marker);
  return {
    svg,
    mark(k) {
      marker.setAttribute("x1", String(x(k)));
      marker.setAttribute("x2", String(x(k)));
    },
  };
}

// A wide step (an add_n of 1,000 tensors sends 1,000 gradients) shows its first
// FEW_ARRAYS arrays and a button for the rest: drawing every one froze the page
// for seconds at each visit of the step.  A step of at most MANY_ARRAYS shows all.
const FEW_ARRAYS = 4;
const MANY_ARRAYS = 9;

function showArrays(box, list) {
  if (list.length <= MANY_ARRAYS) {
    box.replaceChildren(...list.map(arrayView));
    return;
  }
  box.replaceChildren(...list.slice(0, FEW_ARRAYS).map(arrayView));
  const more = h("button", "gv-more-arrays", `show all ${list.length} arrays (${list.length - FEW_ARRAYS} more)`);
  more.type = "button";
  more.addEventListener("click", () => more.replaceWith(...list.slice(FEW_ARRAYS).map(arrayView)));
  box.append(more);
}

// A payload's steps, each with its line of code: the payload keeps each line once,
// in payload.sources, and a step its index there (done once: a second view of the
// same payload finds them done).
function stepsOf(payload) {
  const steps = Array.isArray(payload.steps) ? payload.steps : [];
  const table = Array.isArray(payload.sources) ? payload.sources : [];
  for (const s of steps) {
    if (typeof s.source === "number") s.source = table[s.source] ?? null;
  }
  return steps;
}

// The step's line of code, or nothing (a trace recorded without, or shown with source=False).
function showSource(el, src) {
  el.hidden = !src || typeof src !== "object";
  if (el.hidden) return;
  const place = h("span", "gv-source-place", src.place ?? "");
  if (src.code) {
    el.replaceChildren("from ", h("code", "gv-source-code", src.code), " \u00b7 ", place);
  } else {
    el.replaceChildren("made at ", place);
  }
}

function createPanel(steps, passes, view = {}, mode = "reverse") {
  const words = modeWords(mode);
  const el = h("div", "gv-panel");
  const title = h("div", "gv-step-title", "");
  // The line of code that made the step's op: "from `h = relu(x @ W1 + b1)`, In [3], line 2".
  const source = h("div", "gv-step-source", "");
  const flag = h("div", "gv-step-flag",
    "\u26a0 This step produced NaN or Inf: every value computed from it will be NaN or Inf too.");
  flag.hidden = true;
  const sentence = h("p", "gv-sentence", "");
  const formula = h("div", "gv-formula", "");
  const arrays = h("div", "gv-arrays");
  const book = h("details", "gv-bookkeeping");
  book.open = true;
  book.hidden = view.bookkeeping === false;  // the view option bookkeeping=False
  const summary = h("summary", "gv-book-summary");
  const brief = h("span", "gv-book-brief", "");  // shown while folded
  summary.append(h("span", "gv-section-title", "Bookkeeping"), brief);
  summary.title = "Show or hide the bookkeeping";
  // Space on the summary folds it, as on any summary, rather than playing the steps.
  summary.addEventListener("keydown", (e) => {
    if (e.key === " " || e.key === "Spacebar") e.stopPropagation();
  });
  const bookBody = h("div", "gv-book-body");
  book.append(summary, bookBody);
  el.append(title, source, flag, sentence, formula, arrays, book);
  const spark = sparkline(steps);

  function bookkeeping(s, k) {
    bookBody.replaceChildren();
    brief.textContent = `${formatBytes(s.bytes_held)} held`;
    const grid = h("div", "gv-book-grid");
    const item = (key, value, cls) => {
      const d = h("div", "gv-book-item " + (cls || ""));
      d.append(h("span", "gv-book-key", key), h("span", "gv-book-value", value));
      grid.append(d);
    };
    item("pass", `${Number(s.pass) + 1} / ${passes}`, "gv-book-pass");
    item("ops visited", String(s.ops_visited ?? 0), "gv-book-ops");
    item(`${words.carried} held`, formatBytes(s.bytes_held), "gv-book-bytes");
    spark.mark(k);
    const sparkBox = h("div", "gv-spark-box");
    sparkBox.append(spark.svg, h("div", "gv-spark-caption", `${words.carried} bytes held over the ${words.pass}`));
    bookBody.append(grid, sparkBox);
  }

  return {
    el,
    show(k) {
      const s = steps[k];
      title.textContent = s.title ?? "";
      showSource(source, s.source);
      const said = s.sentence ?? "";
      sayWithValues(sentence, said, s.values_at);
      sayWithValues(formula, s.formula ?? "", s.values_at, said.length + 1);
      formula.hidden = !s.formula;
      flag.hidden = !s.nonfinite;
      showArrays(arrays, Array.isArray(s.arrays) ? s.arrays : []);
      bookkeeping(s, k);
    },
    // A box of its own (the practice box) under the step's title, before its sentence.
    place(box) {
      sentence.before(box);
    },
    // With no steps: say why there is nothing to step through.
    empty(text) {
      sentence.textContent = text;
    },
  };
}

return { FEW_ARRAYS, MANY_ARRAYS, stepsOf, showSource, createPanel };
})();

// ------------------------------------------------------------ viewer/handout.js

// The handout: chosen steps printed one to a page, each with the part of the
// diagram around the step (in the state the viewer shows at that step), its
// title, sentence, formula and arrays.  Here too: the print button and its form,
// and the list of steps they accept ("all", or "0, 3, 5-7", numbered as the
// counter; in a report of several traces also "t2:4", "t2:5-7", "t2:all").
//
// The handout is a .gv-handout element, a child of <body>, that only print
// shows: while one exists <body> has .gv-printing-handout, and the print rules
// (stepper.css) then hide everything else on the page, the JupyterLab around a
// widget as well as a report.  It goes once printed (afterprint).
//
// One handout may hold steps of several traces of a report: each viewer puts
// its handout builder in the page's list (`builders`, below), found by the trace
// number of its section (#gv-trace-{i}, numbered from 1 as the report's headings
// and #t2/step4 links number them).  Blocks print in trace order, then step
// order, whatever the order written: the order the report itself reads in.
// Plain numbers mean the viewer's own trace; a widget in JupyterLab has no trace
// number and takes plain numbers only.
//
// Stable CSS classes (tests and users rely on them):
//   .gv-print             the print button, last in the options row
//   .gv-handout-form      its form: .gv-handout-steps (the list typed),
//                         .gv-handout-go ("Print"), .gv-handout-cancel,
//                         .gv-handout-message (what was wrong with the list), and
//                         .gv-handout-hint (how to name another trace's steps;
//                         shown only on a page of several traces)
//   .gv-handout           the handout, a child of <body>; carries .gv-hide-grad /
//                         .gv-hide-forward when every block does
//   .gv-handout-step      one step's block, data-step="k" (0-based) and, in a
//                         report, data-trace="t" (from 1); it carries its
//                         viewer's .gv-hide-grad / .gv-hide-forward.  Inside:
//                         .gv-handout-counter, .gv-handout-trace (the trace's
//                         title), .gv-handout-title, .gv-handout-svg (its
//                         elements' ids in data-gv-id; only whole nodes),
//                         .gv-handout-sentence, .gv-handout-formula, and
//                         .gv-handout-arrays: the step's arrays as the panel
//                         shows them (.gv-array, arrays.js), a batch of images
//                         at the example the viewer shows, named by a
//                         .gv-handout-pick ("example 0 of 2") instead of its
//                         menu, and .gv-handout-more saying what was left out

const __gv_handout = (() => {
const { button, formTool, h, sayWithValues } = __gv_dom;
const { arrayView } = __gv_arrays;
const { stepOf } = __gv_format;
const { FEW_ARRAYS, MANY_ARRAYS, showSource } = __gv_panel;

const STATE_CLASSES = ["gv-pending", "gv-done", "gv-active"];
// Around a step's elements, this much of the diagram (in its own units, pt)
// is kept for context; a crop smaller than MIN_CROP is widened about its
// centre, so that a lone node is not printed a page wide.
const CONTEXT = 72;
const MIN_CROP = [640, 400];
// A crop widens to hold whole every node it cuts, and again for the nodes that
// widening cuts, at most this many times; a node still cut is left out.
const GROW_ROUNDS = 4;
const HOW = 'write "all", or step numbers and ranges such as 0, 3, 5-7 (numbered from 0, as on screen)';
// What a list takes on a page of several traces.
const HOW_TRACES = `${HOW}; steps of any trace of this report as t2:4, t2:5-7 or t2:all (traces numbered from 1, as the page numbers them)`;

const stepsIn = (n, whose = "this trace") =>
  `${whose} has ${n === 1 ? "one step, step 0" : `${n} steps, 0 to ${n - 1}`}`;
const tracesIn = (count) => (count === 1 ? "this report has one trace, t1"
  : `this report has ${count} traces, t1 ${count === 2 ? "and" : "to"} t${count}`);

function checkStep(k, n, trace) {
  if (k < 0 || k >= n) {
    throw new Error(trace === undefined ? `step ${k} does not exist: ${stepsIn(n)}`
      : `step ${k} of trace ${trace} does not exist: ${stepsIn(n, `trace ${trace}`)}`);
  }
  return k;
}

// The steps one item of a list names out of n: "all", "3" or "5-7" (`item` is
// the item as typed, for messages; `trace` its trace when it names one).
function itemSteps(body, item, n, how, trace) {
  if (body === "all") return Array.from({ length: n }, (_, k) => k);
  const m = /^(\d+)(?:-(\d+))?$/.exec(body);
  if (!m) throw new Error(`"${item}" is not a step or a range of steps: ${how}`);
  const a = Number(m[1]), b = m[2] === undefined ? a : Number(m[2]);
  if (b < a) throw new Error(`${item} runs backwards: write ${item.slice(0, -body.length)}${b}-${a}`);
  checkStep(a, n, trace);
  checkStep(b, n, trace);
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

// The steps `spec` chooses, as [[trace, [k, ...]], ...]: in trace order, then
// step order, once each.  `spec` is "all", a list such as "0, 3, 5-7, t2:4,
// t3:all", or an array of step numbers; plain numbers are steps of the viewer's
// own trace (`here`, of n steps: null in a widget), "t2:4" step 4 of the
// report's trace 2 (of `count`; stepsOf(t) its number of steps, undefined when
// its viewer is missing).  Steps count from 0 and traces from 1, as the page
// numbers them.  Anything else throws an Error whose message says what was
// wrong and what is accepted.
function parseChoice(spec, n, here = null, count = 0, stepsOf = () => undefined) {
  const how = count > 1 ? HOW_TRACES : HOW;
  if (!n && count <= 1) throw new Error("this trace has no steps to print");
  const chosen = new Map();
  const add = (t, ks) => {
    if (!chosen.has(t)) chosen.set(t, new Set());
    for (const k of ks) chosen.get(t).add(k);
  };
  const own = () => {
    if (!n) throw new Error("this trace has no steps to print");
    return n;
  };
  if (Array.isArray(spec)) {
    for (const v of spec) {
      if (!Number.isInteger(v)) throw new Error(`${JSON.stringify(v)} is not a step number: ${how}`);
      add(here, [checkStep(v, own())]);
    }
  } else {
    const text = String(spec ?? "").trim().toLowerCase()
      .replace(/\s*[-\u2013]\s*/g, "-").replace(/\s*:\s*/g, ":");
    for (const item of text.split(/[\s,;]+/).filter(Boolean)) {
      const q = /^t(\d+):(.*)$/.exec(item);
      if (!q) {
        add(here, itemSteps(item, item, own(), how));
        continue;
      }
      const t = Number(q[1]);
      if (!count) throw new Error(`"${item}" names a trace of a report, and this viewer is in none: ${HOW}`);
      if (t < 1 || t > count) throw new Error(`trace ${t} does not exist: ${tracesIn(count)}`);
      const m = t === here ? n : stepsOf(t);
      if (m === undefined) throw new Error(`trace ${t} has nothing to print: its viewer did not load`);
      if (!m) throw new Error(`trace ${t} has no steps to print`);
      add(t, itemSteps(q[2], item, m, how, t));
    }
  }
  if (!Array.from(chosen.values()).some((ks) => ks.size)) throw new Error(`no steps chosen: ${how}`);
  const at = (t) => (t === null ? 0 : t);
  return Array.from(chosen, ([t, ks]) => [t, Array.from(ks).sort((x, y) => x - y)])
    .sort((x, y) => at(x[0]) - at(y[0]));
}

// The 0-based steps of one trace `spec` chooses, in order and once each, out of
// n steps: "all", a list such as "0, 3, 5-7", or an array of step numbers.
function parseSteps(spec, n) {
  return parseChoice(spec, n)[0][1];
}

// The step each element id is first touched at: the viewer shows an element
// pending before that step, active at a step that touches it, done after.
function firstSteps(idsOf) {
  const first = new Map();
  idsOf.forEach((ids, k) => {
    for (const id of ids) if (!first.has(id)) first.set(id, k);
  });
  return first;
}

// A copy of the viewer's drawing, laid out at 1 px a unit out of sight, and the
// box of every element with an id and of every part of the top group (nodes,
// edges, clusters), in the drawing's own units: [x0, y0, x1, y1].  `nodes` are
// the indexes of the parts that are nodes; `labels[i]` the boxes of part i's
// texts when it is an edge.
function measureDrawing(svg) {
  const copy = svg.cloneNode(true);
  copy.removeAttribute("style");
  copy.removeAttribute("class");
  // (what the live drawing tells the keyboard and screen readers stays with it)
  copy.removeAttribute("role");
  for (const e of Array.from(copy.querySelectorAll("[tabindex], [role], [aria-hidden]"))) {
    for (const a of ["tabindex", "role", "aria-hidden", "aria-label"]) e.removeAttribute(a);
  }
  for (const run of Array.from(copy.querySelectorAll("g.gv-run"))) run.replaceWith(...run.childNodes);
  const vb = copy.viewBox.baseVal;
  const whole = vb && vb.width > 0 ? [vb.x, vb.y, vb.x + vb.width, vb.y + vb.height] : null;
  const stage = h("div");
  stage.style.cssText = "position:fixed;left:0;top:0;visibility:hidden;pointer-events:none;";
  if (whole) {
    copy.style.width = `${vb.width}px`;
    copy.style.height = `${vb.height}px`;
  }
  stage.append(copy);
  document.body.append(stage);
  const sr = copy.getBoundingClientRect();
  const unit = whole && sr.width > 0 ? vb.width / sr.width : 1;
  const boxOf = (e) => {
    const r = e.getBoundingClientRect();
    if (!r.width && !r.height) return null;
    const x = whole ? whole[0] : 0, y = whole ? whole[1] : 0;
    return [x + (r.left - sr.left) * unit, y + (r.top - sr.top) * unit,
      x + (r.right - sr.left) * unit, y + (r.bottom - sr.top) * unit];
  };
  const boxes = new Map();
  for (const e of copy.querySelectorAll("[id]")) boxes.set(e.id, boxOf(e));
  const top = Array.from(copy.children).find((e) => e.localName === "g");
  const children = top ? Array.from(top.children) : [];
  const parts = children.map(boxOf);
  const nodes = [];
  const labels = children.map((e, i) => {
    if (e.classList.contains("node")) nodes.push(i);
    return e.classList.contains("edge") ? Array.from(e.querySelectorAll("text"), boxOf) : null;
  });
  stage.remove();
  copy.removeAttribute("style");
  return { copy, top, whole, boxes, parts, nodes, labels };
}

const overlaps = (a, b) => !a || (a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]);
// Whether box `inner` lies inside `outer` (half a unit of rounding allowed).
const holds = (outer, inner) => !inner || (inner[0] >= outer[0] - 0.5 && inner[1] >= outer[1] - 0.5
  && inner[2] <= outer[2] + 0.5 && inner[3] <= outer[3] + 0.5);

// The part of the drawing to print for the elements `ids`: their box, CONTEXT
// more all round, at least MIN_CROP, widened to hold whole every node it cuts
// (GROW_ROUNDS times at most), within the drawing.
function cropBox(ids, m) {
  let box = null;
  for (const id of ids) {
    const b = m.boxes.get(id);
    if (!b) continue;
    box = box ? [Math.min(box[0], b[0]), Math.min(box[1], b[1]), Math.max(box[2], b[2]), Math.max(box[3], b[3])] : b.slice();
  }
  if (!box || !m.whole) return m.whole;
  const out = [box[0] - CONTEXT, box[1] - CONTEXT, box[2] + CONTEXT, box[3] + CONTEXT];
  for (const axis of [0, 1]) {
    const lo = axis, hi = axis + 2;
    const grow = Math.max(0, MIN_CROP[axis] - (out[hi] - out[lo])) / 2;
    out[lo] = Math.max(m.whole[lo], out[lo] - grow);
    out[hi] = Math.min(m.whole[hi], out[hi] + grow);
  }
  for (let round = 0; round < GROW_ROUNDS; round++) {
    const cut = m.nodes.map((i) => m.parts[i]).filter((b) => b && overlaps(b, out) && !holds(out, b));
    if (!cut.length) break;
    for (const b of cut) {
      out[0] = Math.min(out[0], b[0]);
      out[1] = Math.min(out[1], b[1]);
      out[2] = Math.max(out[2], b[2]);
      out[3] = Math.max(out[3], b[3]);
    }
    for (const i of [0, 1]) out[i] = Math.max(m.whole[i], out[i]);
    for (const i of [2, 3]) out[i] = Math.min(m.whole[i], out[i]);
  }
  return out;
}

// The drawing cropped to `crop`, holding only the parts that show in it, each
// element a step touches in its state at step k.  Ids move to data-gv-id: the
// viewer's own drawing keeps them.  With `whole`, a node the crop cuts is left
// out, and so is an edge's label (all its lines) that it cuts; the edge's line
// stays, running off the border towards where it goes.
function croppedDrawing(m, crop, first, touched, k, whole = false) {
  const svg = m.copy.cloneNode(false);
  for (const child of m.copy.children) {
    if (child !== m.top) svg.append(child.cloneNode(true));
    else {
      const g = child.cloneNode(false);
      Array.from(child.children).forEach((part, i) => {
        const box = m.parts[i];
        if (crop && !overlaps(box, crop)) return;
        const isNode = part.classList.contains("node");
        if (whole && crop && isNode && !holds(crop, box)) return;
        const copy = part.cloneNode(true);
        const texts = whole && crop && m.labels && m.labels[i];
        if (texts && texts.some((b) => !holds(crop, b))) for (const t of Array.from(copy.querySelectorAll("text"))) t.remove();
        g.append(copy);
      });
      svg.append(g);
    }
  }
  for (const e of svg.querySelectorAll("[id]")) {
    const f = first.get(e.id);
    if (f !== undefined) {
      e.classList.remove(...STATE_CLASSES);
      e.classList.add(touched.has(e.id) ? "gv-active" : f < k ? "gv-done" : "gv-pending");
    }
    e.setAttribute("data-gv-id", e.id);
    e.removeAttribute("id");
  }
  if (crop) {
    const [x0, y0, x1, y1] = crop;
    svg.setAttribute("viewBox", [x0, y0, x1 - x0, y1 - y0].map((v) => v.toFixed(1)).join(" "));
  }
  svg.setAttribute("class", "gv-handout-svg");
  return svg;
}

// A batch of images on paper: the example the viewer shows (or a kernel's input
// channel), named in words where the panel has its menu (arrays.js), which
// would print as a control.
function printPicks(fig) {
  for (const menu of Array.from(fig.querySelectorAll("select[data-gv-images]"))) {
    const picked = menu.selectedOptions[0];
    menu.closest("label").replaceWith(h("div", "gv-handout-pick", picked ? picked.textContent : ""));
  }
}

// The step's arrays as the panel shows them (arrayView, arrays.js): a step of
// many arrays (more than MANY_ARRAYS, panel.js) its first FEW_ARRAYS, saying
// how many more the viewer has.
function stepArrays(s) {
  const list = Array.isArray(s.arrays) ? s.arrays : [];
  if (!list.length) return null;
  const box = h("div", "gv-handout-arrays");
  const shown = list.length <= MANY_ARRAYS ? list : list.slice(0, FEW_ARRAYS);
  for (const arr of shown) {
    const fig = arrayView(arr);
    printPicks(fig);
    box.append(fig);
  }
  if (shown.length < list.length) {
    box.append(h("div", "gv-handout-more",
      `${list.length - shown.length} more arrays of this step (${list.length} in all) are in the viewer, not printed`));
  }
  return box;
}

// One step's block: where it is, what it did, the diagram around it, its arrays.
// `trace` is the trace's name in the head: its title, with its number on a page
// of several traces.
function stepBlock(steps, k, drawing, trace) {
  const s = steps[k];
  const block = h("section", "gv-handout-step");
  block.dataset.step = String(k);
  const head = h("div", "gv-handout-head");
  head.append(h("span", "gv-handout-counter", `${stepOf(k, steps.length, "Step")} \u00b7 ${s.kind ?? ""}`),
    h("span", "gv-handout-trace", trace));
  block.append(head, h("h2", "gv-handout-title", s.title ?? ""));
  if (s.source) {
    const line = h("div", "gv-step-source gv-handout-source");
    showSource(line, s.source);
    block.append(line);
  }
  if (drawing) {
    const box = h("div", "gv-handout-diagram");
    box.append(drawing);
    block.append(box);
  }
  // Their values hide as the viewer's do (a "(hidden)" instead) when the
  // reader hid gradient values: a quiz prints as a quiz.
  const said = s.sentence ?? "";
  const sentence = h("p", "gv-handout-sentence");
  sayWithValues(sentence, said, s.values_at);
  block.append(sentence);
  if (s.formula) {
    const formula = h("div", "gv-handout-formula");
    sayWithValues(formula, s.formula, s.values_at, said.length + 1);
    block.append(formula);
  }
  const arrays = stepArrays(s);
  if (arrays) {
    block.classList.add("gv-handout-with-arrays");
    block.append(arrays);
  }
  return block;
}

// The page's handout builders, one a viewer: { trace() (its number in the
// report, or null), steps (how many), blocks(ks, count) (its blocks of steps
// ks, on a page of `count` traces) }.  The bundle is one module a page (a
// report inlines it once), so this list is the page's.
const builders = new Set();

// The trace number of the report section a viewer stands in (#gv-trace-{i}),
// or null (a widget in JupyterLab).
function traceOf(root) {
  const host = root.closest('[id^="gv-trace-"]');
  const m = host && /^gv-trace-(\d+)$/.exec(host.id);
  return m ? Number(m[1]) : null;
}

// How many traces the report around `root` has (0 outside a report).
function tracesAround(root) {
  if (traceOf(root) === null) return 0;
  return Array.from(document.querySelectorAll('[id^="gv-trace-"]'))
    .filter((e) => /^gv-trace-\d+$/.test(e.id)).length;
}

function builderOf(t) {
  for (const b of builders) if (b.trace() === t) return b;
  return undefined;
}

// The print button of the options row and its form.  onPrint(text) builds the
// handout and prints it; it returns an error message, or null when it printed.
// On a page of several traces (traces() > 1) the form says how to name them.
function printTool(onPrint, life, n, traces) {
  const open = button("gv-print", "print", "print a handout of the steps");
  const input = h("input", "gv-handout-steps");
  input.type = "text";
  input.value = "all";
  const label = h("label", "gv-handout-label");
  // The numbers the list takes, as the counter shows them: from 0.  (Its name
  // begins with the words shown, for speech control.)
  const shown = n > 1 ? `steps 0\u2013${n - 1}` : "steps";
  input.setAttribute("aria-label", `${shown} to print`);
  label.append(h("span", null, `${shown} `), input);
  const hint = h("div", "gv-handout-hint");
  const go = h("button", "gv-btn gv-handout-go", "Print");
  go.type = "submit";
  const cancel = button("gv-handout-cancel", "cancel", "close without printing");
  // (asked each time the form opens: a report's viewers are made one by one)
  const sayHow = () => {
    const [here, count] = traces();
    const t = `t${here === 1 ? 2 : 1}`;  // another trace, for the examples
    input.placeholder = count > 1 ? `all, 0, 3, 5-7, or ${t}:4, ${t}:all` : "all, or 0, 3, 5-7";
    hint.hidden = count <= 1;
    hint.textContent = count > 1 ? `plain numbers: steps of this trace (t${here} of ${count}); `
      + `another trace's as ${t}:4, ${t}:5-7 or ${t}:all; printed in trace order, then step order` : "";
  };
  sayHow();
  const { el, form, close, say } = formTool("gv-handout", open, "form", [label, go, cancel, hint],
    () => { sayHow(); input.focus(); input.select(); }, life);
  life.listen(cancel, "click", close);
  // Typing a list ("5-7", "0") is not stepping or zooming the viewer.
  life.listen(input, "keydown", (e) => {
    e.stopPropagation();
    if (e.key === "Escape") close();
  });
  life.listen(form, "submit", (e) => {
    e.preventDefault();
    const error = onPrint(input.value);
    say(error);
    if (!error) close();
  });
  return el;
}

// The handout part of a viewer (root): `el` is the print button and its form,
// build(spec) makes the handout of the steps `spec` chooses (of this trace, and
// in a report of others) and returns how many blocks it has (it throws, saying
// what is accepted, for a bad spec).
// `drawn` is the drawing shown (a scope opened has its own): drawn.svg() its
// <svg> with values, drawn.stepIds(k) the elements step k touches in it, which
// the handout crops about and lights, and drawn.settle() brings all of it up to
// the step before any print (on screen a long jump restyles only what is in
// view, on paper all of it shows).
function createHandout(root, payload, steps, life, drawn) {
  let doc = null;

  // This viewer's blocks of steps ks, on a page of `count` traces.
  function blocks(ks, count) {
    const svg = drawn.svg();
    const m = svg ? measureDrawing(svg) : null;
    const idsOf = steps.map((_, k) => drawn.stepIds(k));
    const first = firstSteps(idsOf);
    const t = traceOf(root);
    const title = payload.title || "";
    const name = count > 1 ? `Trace ${t}${title ? ` \u00b7 ${title}` : ""}` : title;
    return ks.map((k) => {
      const ids = idsOf[k];
      const drawing = m && croppedDrawing(m, cropBox(ids, m), first, new Set(ids), k, true);
      const block = stepBlock(steps, k, drawing, name);
      if (t !== null) block.dataset.trace = String(t);
      // The value toggles as the reader left them: hidden values stay hidden on paper.
      for (const c of ["gv-hide-grad", "gv-hide-forward"]) block.classList.toggle(c, root.classList.contains(c));
      return block;
    });
  }
  const builder = { trace: () => traceOf(root), get steps() { return steps.length; }, blocks };
  builders.add(builder);
  life.onDispose(() => builders.delete(builder));

  function remove() {
    if (doc) doc.remove();
    doc = null;
    if (!document.querySelector("body > .gv-handout")) document.body.classList.remove("gv-printing-handout");
  }

  function build(spec) {
    const here = traceOf(root);
    const count = tracesAround(root);
    const chosen = parseChoice(spec, steps.length, here, count, (t) => builderOf(t)?.steps);
    const next = h("div", "gv-handout");
    for (const [t, ks] of chosen) next.append(...(t === here ? builder : builderOf(t)).blocks(ks, count));
    const all = Array.from(next.children);
    for (const c of ["gv-hide-grad", "gv-hide-forward"]) next.classList.toggle(c, all.every((b) => b.classList.contains(c)));
    // One handout a page: one another viewer made and did not print goes.
    for (const old of Array.from(document.querySelectorAll("body > .gv-handout"))) old.remove();
    remove();
    doc = next;
    document.body.append(doc);
    document.body.classList.add("gv-printing-handout");
    return all.length;
  }

  const el = printTool((text) => {
    try {
      build(text);
    } catch (err) {
      return err.message;
    }
    window.print();
    return null;
  }, life, steps.length, () => [traceOf(root), tracesAround(root)]);
  life.listen(window, "beforeprint", () => drawn.settle());
  life.listen(window, "afterprint", remove);
  life.onDispose(remove);
  return { el, build };
}

return { parseChoice, parseSteps, firstSteps, measureDrawing, croppedDrawing, createHandout };
})();

// ------------------------------------------------------------ viewer/picture.js

// The current step as a picture for a slide: the "picture" button saves the
// viewer's drawing cropped about the step and the nodes its edges join, 16:9,
// whole boxes only, with its look
// written into the SVG as attributes (no <style>, no filter), so that it reads
// the same in PowerPoint, Keynote, Inkscape and librsvg.  It is what
// trace.to_svg(step=k, crop=True) writes in Python (gradviz/views/diagram/
// slide.py), made here from the drawing on screen: the stylesheet's look is read
// back from the browser (getComputedStyle) instead of matched rule by rule, and
// the step's light is the same black outline over a wide yellow copy.  As PNG,
// the same SVG drawn 1920 px wide.
//
// Stable CSS classes (tests and users rely on them):
//   .gv-save-picture      the button, in the options row after print
//   .gv-picture-form      its form: .gv-picture-svg and .gv-picture-png (save
//                         the current step's picture), .gv-picture-cancel

// As slide.py: 1280 px wide (a 16:9 slide at 96 dpi), CONTEXT pt of room all
// round the step, at least MIN_WIDTH pt of the drawing across.

const __gv_picture = (() => {
const { button, download, formTool, h, slug, SVG_NS, svgElement } = __gv_dom;
const { croppedDrawing, firstSteps, measureDrawing } = __gv_handout;

const SLIDE_WIDTH = 1280;
const ASPECT = 16 / 9;
const CONTEXT = 24;
const MIN_WIDTH = 640;
const PNG_WIDTH = 1920;
const GLOW = "#F0E442";
const GLOW_WIDTH = "8";
const ACTIVE_WIDTH = "2.5";
const BLACK = "#000000";
const XML_NS = "http://www.w3.org/XML/1998/namespace";
const SHAPES = new Set(["path", "polygon", "ellipse", "polyline"]);
// Computed style -> attribute, for shapes and text.
const PAINT = [["stroke", "stroke"], ["fill", "fill"], ["stroke-dasharray", "strokeDasharray"],
  ["stroke-width", "strokeWidth"], ["stroke-linejoin", "strokeLinejoin"]];

const union = (a, b) => (a ? [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])] : b.slice());
const holds = (a, b) => a[0] <= b[0] + 0.5 && b[2] <= a[2] + 0.5 && a[1] <= b[1] + 0.5 && b[3] <= a[3] + 0.5;

// `box` with CONTEXT all round, at least MIN_WIDTH wide, at ASPECT, moved inside
// `whole` along each axis where it fits (centred on it where it does not).
function framed(box, whole) {
  const w = Math.max(box[2] - box[0] + 2 * CONTEXT, MIN_WIDTH, (box[3] - box[1] + 2 * CONTEXT) * ASPECT);
  const hgt = w / ASPECT;
  const c = [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2];
  const out = [c[0] - w / 2, c[1] - hgt / 2, c[0] + w / 2, c[1] + hgt / 2];
  if (!whole) return out;
  for (const axis of [0, 1]) {
    const lo = out[axis], hi = out[axis + 2], a = whole[axis], b = whole[axis + 2];
    const shift = hi - lo >= b - a ? (a + b) / 2 - (lo + hi) / 2 : Math.max(a - lo, 0) + Math.min(b - hi, 0);
    out[axis] += shift;
    out[axis + 2] += shift;
  }
  return out;
}

// How near a node an edge's end lies, in pt (as slide.py's _TOUCH).
const TOUCH = 4;
const PAIR = /(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)/g;

// Where the edge `g` starts and ends, in the drawing's units: its line's ends
// and its arrowheads (`shift`: the top group's translation, where it has one).
function ends(g, shift) {
  const out = [];
  for (const e of g.children) {
    const pts = Array.from((e.getAttribute("d") || e.getAttribute("points") || "").matchAll(PAIR),
      (m) => [Number(m[1]) + shift[0], Number(m[2]) + shift[1]]);
    if (e.localName === "path" && pts.length) out.push(pts[0], pts[pts.length - 1]);
    else if (e.localName === "polygon") out.push(...pts);
  }
  return out;
}

// The frame about the elements `ids` and the nodes at either end of their
// edges (the step's inputs and outputs), as slide.py's crop makes it.
function slideFrame(m, ids) {
  let focus = null;
  for (const id of ids) {
    const b = m.boxes.get(id);
    if (b) focus = union(focus, b);
  }
  if (!focus || !m.top) return m.whole;
  const t = /translate\((-?[\d.]+)[ ,]+(-?[\d.]+)\)/.exec(m.top.getAttribute("transform") || "");
  const shift = t ? [Number(t[1]), Number(t[2])] : [0, 0];
  const wanted = new Set(ids);
  const parts = Array.from(m.top.children);
  const tips = parts.filter((e) => wanted.has(e.id) && e.classList.contains("edge")).flatMap((e) => ends(e, shift));
  parts.forEach((e, i) => {
    const b = m.parts[i];
    if (!b || !e.classList.contains("node") || e.id === "legend") return;
    if (tips.some(([x, y]) => b[0] - TOUCH <= x && x <= b[2] + TOUCH && b[1] - TOUCH <= y && y <= b[3] + TOUCH)) {
      focus = union(focus, b);
    }
  });
  return framed(focus, m.whole);
}

// A computed value as an attribute: no units, and "transparent" as none.
const asAttr = (v) => (v === "rgba(0, 0, 0, 0)" ? "none" : v.replace(/px/g, ""));

// The look the page's stylesheet gives each element of `svg` (staged in the
// viewer, so that the viewer's hidden values stay hidden), written in.
function writeLook(svg) {
  const hidden = [];
  for (const el of svg.querySelectorAll("*")) {
    const tag = el.localName;
    if (tag === "title" || tag === "style") continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === "hidden" || cs.display === "none") {
      hidden.push(el);
      continue;
    }
    if (cs.opacity !== "1") el.setAttribute("opacity", cs.opacity);
    if (!SHAPES.has(tag) && tag !== "text") continue;
    for (const [attr, prop] of PAINT) {
      const v = asAttr(cs[prop]);
      if (v && !(v === "none" && !el.hasAttribute(attr) && attr === "stroke-dasharray")) el.setAttribute(attr, v);
    }
    if (tag !== "text") continue;
    // the indent of a matrix's later rows, which librsvg drops otherwise
    if (/^[ \u00a0]/.test(el.textContent)) el.setAttributeNS(XML_NS, "xml:space", "preserve");
    el.setAttribute("font-family", cs.fontFamily);
    el.setAttribute("font-weight", cs.fontWeight);
    if (cs.paintOrder.startsWith("stroke") && cs.stroke !== "none") {
      // The white halo under an edge's label: a stroked copy beneath it.
      const under = el.cloneNode(true);
      under.setAttribute("class", "gv-halo");
      under.setAttribute("aria-hidden", "true");
      under.setAttribute("fill", cs.stroke);
      under.setAttribute("stroke-linejoin", "round");
      el.before(under);
      el.setAttribute("stroke", "none");
    }
  }
  return hidden;
}

// The step's elements lit without a filter: their outlines black and thick over
// a wide yellow copy of each.
function light(svg) {
  for (const g of svg.querySelectorAll("g.gv-active")) {
    const shapes = Array.from(g.children).filter((e) => SHAPES.has(e.localName) && e.getAttribute("stroke") !== "none");
    if (!shapes.length) continue;
    const first = shapes[0];
    for (const s of shapes) {
      const glow = s.cloneNode(false);
      glow.removeAttribute("class");
      for (const [k, v] of [["fill", "none"], ["stroke", GLOW], ["stroke-width", GLOW_WIDTH],
        ["stroke-linejoin", "round"], ["stroke-dasharray", "none"]]) glow.setAttribute(k, v);
      first.before(glow);
      s.setAttribute("stroke", BLACK);
      s.setAttribute("stroke-width", ACTIVE_WIDTH);
      if (g.classList.contains("edge") && s.localName === "polygon") s.setAttribute("fill", BLACK);
    }
  }
}

// The SVG text of the picture of step k: `drawn` is the drawing shown (svg(),
// stepIds(k), settle()), `root` the viewer (its classes say which values hide).
function slidePicture(root, drawn, steps, k) {
  drawn.settle();
  const live = drawn.svg();
  if (!live) throw new Error("there is no drawing to save");
  const m = measureDrawing(live);
  const ids = drawn.stepIds(k);
  const frame = slideFrame(m, ids);
  const first = firstSteps(steps.map((_, j) => drawn.stepIds(j)));
  const svg = croppedDrawing(m, frame, first, new Set(ids), k);
  svg.removeAttribute("class");
  const stage = h("div", "gv-picture-stage");
  stage.setAttribute("aria-hidden", "true");
  stage.style.cssText = "position:fixed;left:-100000px;top:0;pointer-events:none;";
  svg.setAttribute("width", String(frame[2] - frame[0]));
  svg.setAttribute("height", String(frame[3] - frame[1]));
  stage.append(svg);
  root.append(stage);
  let hidden;
  try {
    hidden = writeLook(svg);
    // Whole boxes only: a node the frame cuts goes, and so does a label it cuts.
    const top = Array.from(svg.children).find((e) => e.localName === "g");
    for (const part of top ? Array.from(top.children) : []) {
      if (part.localName !== "g") continue;
      const box = (e) => { const b = e.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; };
      if (part.classList.contains("node")) {
        if (!holds(frame, box(part))) part.remove();
      } else {  // an edge's label goes whole, all its lines, or stays whole
        const texts = Array.from(part.querySelectorAll("text"));
        if (texts.some((t) => !holds(frame, box(t)))) for (const t of texts) t.remove();
      }
    }
  } finally {
    stage.remove();
  }
  for (const el of hidden) el.remove();
  for (const el of Array.from(svg.querySelectorAll("style"))) el.remove();
  light(svg);
  // The drawing's own white ground gives way to the frame's.
  const top = Array.from(svg.children).find((e) => e.localName === "g");
  if (top) for (const p of Array.from(top.children)) if (p.localName === "polygon") p.remove();
  const [x0, y0, x1, y1] = frame;
  svg.prepend(svgElement("rect", { x: x0.toFixed(2), y: y0.toFixed(2), width: (x1 - x0).toFixed(2),
    height: (y1 - y0).toFixed(2), fill: "#ffffff" }));
  for (const e of svg.querySelectorAll("[data-gv-id]")) {
    e.id = e.dataset.gvId;
    e.removeAttribute("data-gv-id");
  }
  svg.setAttribute("class", "gv-svg");
  svg.setAttribute("viewBox", [x0, y0, x1 - x0, y1 - y0].map((v) => v.toFixed(2)).join(" "));
  svg.setAttribute("width", String(SLIDE_WIDTH));
  svg.setAttribute("height", String(Math.round(SLIDE_WIDTH / ASPECT)));
  svg.setAttribute("xmlns", SVG_NS);
  return new XMLSerializer().serializeToString(svg);
}

// The picture's SVG text drawn `width` px wide, as a PNG blob.
function pngOf(svgText, width = PNG_WIDTH) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    // A data: URL, which the report's content policy lets images load (blob: it does not).
    const url = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svgText);
    img.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = width;
      canvas.height = Math.round(width / ASPECT);
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the PNG could not be made"))), "image/png");
    };
    img.onerror = () => {
      reject(new Error("the picture could not be drawn as PNG"));
    };
    img.src = url;
  });
}

// A file name from the trace's title and the step: "two-layer-mlp-step4.svg".
function fileName(payload, k, ext) {
  return `${slug(payload.title) || "gradviz"}-step${k}.${ext}`;
}

// The button of the options row and its form.  at() is the current step.
function createPictureTool(root, payload, steps, life, drawn, at) {
  const open = button("gv-save-picture", "picture", "save a picture of this step for a slide (SVG or PNG)");
  const svgButton = button("gv-picture-svg", "SVG", "save this step as an SVG picture, 16:9");
  const pngButton = button("gv-picture-png", "PNG", "save this step as a PNG picture, 1920 \u00d7 1080");
  const cancel = button("gv-picture-cancel", "cancel", "close without saving");
  const { el, form, close, say } = formTool("gv-picture", open, "div", [svgButton, pngButton, cancel],
    () => svgButton.focus(), life);
  const failed = (err) => say(`The picture could not be made: ${err.message || err}`);
  life.listen(cancel, "click", close);
  life.listen(form, "keydown", (e) => {
    if (e.key === "Escape") { e.stopPropagation(); close(); open.focus(); }
  });
  const picture = () => slidePicture(root, drawn, steps, at());
  life.listen(svgButton, "click", () => {
    try {
      download(new Blob([picture()], { type: "image/svg+xml" }), fileName(payload, at(), "svg"));
      close();
    } catch (err) { failed(err); }
  });
  life.listen(pngButton, "click", async () => {
    try {
      const k = at();
      download(await pngOf(picture()), fileName(payload, k, "png"));
      close();
    } catch (err) { failed(err); }
  });
  return { el, picture };
}

return { slidePicture, pngOf, createPictureTool };
})();

// ------------------------------------------------------------ viewer/legend.js

// The legend: the three step states, then each mark the diagram uses, drawn as
// a small swatch.  What each mark looks like comes from the mark table
// (static/marks.json, which the Python diagram reads too); the entries of the
// payload's legend say which marks this diagram uses, with their colours.

// A map with no prototype: a mark named like an object's property ("constructor") has no swatch.

const __gv_legend = (() => {
const MARK_TABLE = {"about": "Every visual mark the diagram draws, in legend order: one description read by the Python diagram (gradviz/views/marks.py) and by the viewer (static/viewer/legend.js). color: the mark's line and text colour (Okabe-Ito's hues, the orange, sky blue and reddish purple darkened to 3:1 on the sheet; every mark also differs by shape or line style, which tells them apart where a colour-vision deficiency does not). fill: its pale tint, or none. sample: the text of the diagram legend's swatch. border: how the diagram legend draws the swatch's border (rounded, solid, dashed, double, thick, or none: text in the mark's colour). swatch: the viewer legend's 36x20 drawing (an SVG path d, or an ellipse; dash: dashed line; arrow: an arrow head, at the left, or at the right for \"forward\"). sheet: what the diagram is drawn on in the page's light and dark themes; white in both, so every mark keeps its contrast in the dark theme.", "marks": [{"mark": "tensor", "meaning": "tensor (rounded box): name, shape, dtype, value", "color": "#000000", "fill": "#FFFFFF", "sample": "x", "border": "rounded", "swatch": {"d": "M6 3h24a3 3 0 0 1 3 3v8a3 3 0 0 1-3 3H6a3 3 0 0 1-3-3V6a3 3 0 0 1 3-3z"}}, {"mark": "op", "meaning": "op: its type, above the tensor it outputs (one box) or alone (ellipse); arrows run forward", "color": "#000000", "fill": "#DCEBF7", "sample": "Op", "border": "rounded", "swatch": {"d": "M6 3h24a3 3 0 0 1 3 3v8a3 3 0 0 1-3 3H6a3 3 0 0 1-3-3V6a3 3 0 0 1 3-3zM3 9h30"}}, {"mark": "gradient", "meaning": "gradient sent back along an edge: shape, values", "color": "#0072B2", "fill": "none", "sample": "\u2191 (2,1)", "border": "none", "swatch": {"d": "M4 10H28", "arrow": true}}, {"mark": "seed", "meaning": "seed (orange pentagon): a y's first gradient, ones or grad_ys", "color": "#BF6F00", "fill": "#FBE8C4", "sample": "seed", "border": "solid", "swatch": {"d": "M4 4h28v7l-14 6-14-6z"}}, {"mark": "reduce", "meaning": "broadcast reduction (blue funnel on the path): the gradient summed back to the input's shape", "color": "#2C93C0", "fill": "#E6F4FC", "sample": "\u03a3 axes", "border": "solid", "swatch": {"d": "M11 4h14l8 12H3z"}}, {"mark": "accumulate", "meaning": "fan-out sum (purple hexagon on the path): the contributions added", "color": "#BB6997", "fill": "#F6E1EE", "sample": "\u2295 sum", "border": "solid", "swatch": {"d": "M10 3h16l6 7-6 7H10l-6-7z"}}, {"mark": "cut", "meaning": "cut (red octagon, dashed edge): the flow stops, with why", "color": "#D55E00", "fill": "#FBE3D6", "sample": "cut", "border": "dashed", "swatch": {"d": "M13 2h10l6 5v6l-6 5H13l-6-5V7z"}}, {"mark": "result", "meaning": "result (green double box): the gradient for an x", "color": "#009E73", "fill": "#E2F5EE", "sample": "dL/dx", "border": "double", "swatch": {"d": "M3 3h30v14H3zM6 6h24v8H6z"}}, {"mark": "unconnected", "meaning": "unconnected x (grey dashed box): None or zeros", "color": "#777777", "fill": "#F4F4F4", "sample": "None", "border": "dashed", "swatch": {"d": "M3 3h30v14H3z", "dash": true}}, {"mark": "tangent", "meaning": "tangent carried forward along an edge (forward mode): shape, values", "color": "#0072B2", "fill": "none", "sample": "\u2193 (2,1)", "border": "none", "swatch": {"d": "M8 10H32", "arrow": "forward"}}, {"mark": "direction", "meaning": "direction (orange house): a primal's tangent, where forward mode starts", "color": "#BF6F00", "fill": "#FBE8C4", "sample": "dx", "border": "solid", "swatch": {"d": "M4 16h28V9L18 3 4 9z"}}, {"mark": "jvp", "meaning": "jvp (green double rounded box): a target's tangent, J\u00b7dx", "color": "#009E73", "fill": "#E2F5EE", "sample": "dy", "border": "double", "swatch": {"d": "M6 3h24a3 3 0 0 1 3 3v8a3 3 0 0 1-3 3H6a3 3 0 0 1-3-3V6a3 3 0 0 1 3-3zM8 6h20v8H8z"}}, {"mark": "scope", "meaning": "collapsed name scope (3-D box): many ops as one", "color": "#555555", "fill": "#F2F2F2", "sample": "scope", "border": "solid", "swatch": {"d": "M3 6h24v11H3zM3 6l4-3h24l-4 3M27 17l4-3V3"}}, {"mark": "group", "meaning": "run of ops (dashed 3-D box): consecutive ops as one", "color": "#555555", "fill": "#F2F2F2", "sample": "ops", "border": "dashed", "swatch": {"d": "M3 6h24v11H3zM3 6l4-3h24l-4 3M27 17l4-3V3", "dash": true}}, {"mark": "bundle", "meaning": "bundle (dashed box): many inputs of one op as one, its edge counting them (\u00d7n)", "color": "#555555", "fill": "#F2F2F2", "sample": "n more", "border": "dashed", "swatch": {"d": "M3 7h26v10H3zM6 3h27v10", "dash": true}}, {"mark": "active", "meaning": "the current step: thick black outline and a glow", "color": "#000000", "fill": "#FFFFFF", "sample": "step", "border": "thick", "swatch": null}], "sheet": {"light": "#FFFFFF", "dark": "#FFFFFF"}, "node_fills": {"variable": "#FDF6D2", "constant": "#EEEEEE", "computed": "#FFFFFF"}};
const { h, svgElement } = __gv_dom;
const { modeWords } = __gv_format;

const SWATCHES = Object.assign(Object.create(null),
  Object.fromEntries(MARK_TABLE.marks.map((m) => [m.mark, m.swatch])));

// A small drawing of one mark, in the diagram's colours.  The step states are
// drawn by the diagram's own CSS, so the swatch sits inside a .gv-diagram group.
function swatch(mark, stateClass, colors = {}) {
  const svgEl = svgElement("svg", {
    class: "gv-legend-swatch", viewBox: "0 0 36 20", width: "36", height: "20", "aria-hidden": "true",
  });
  const spec = SWATCHES[mark];
  if (!spec) return svgEl;
  const outer = svgElement("g", { class: "gv-diagram" });
  const g = svgElement("g");
  if (stateClass) g.setAttribute("class", stateClass);
  const shape = spec.ellipse
    ? svgElement("ellipse", { cx: 18, cy: 10, rx: 15, ry: 7 })
    : svgElement("path", { d: spec.d });
  const stroke = colors.stroke ?? "#333333";
  shape.setAttribute("fill", colors.fill ?? "#ffffff");
  shape.setAttribute("stroke", stroke);
  shape.setAttribute("stroke-width", spec.arrow ? "2" : "1.3");
  if (spec.dash) shape.setAttribute("stroke-dasharray", "4 2");
  g.append(shape);
  if (spec.arrow) g.append(svgElement("path", { d: spec.arrow === "forward" ? "M32 10l-7-4v8z" : "M4 10l7-4v8z", fill: stroke }));
  outer.append(g);
  svgEl.append(outer);
  return svgEl;
}

function createLegend(payload) {
  const el = h("div", "gv-legend");
  el.append(h("div", "gv-section-title", "Legend"));
  const ul = h("ul", "gv-legend-list");
  const states = [
    ["node gv-tensor", "not reached yet"],
    ["node gv-tensor gv-done", modeWords(payload.mode).flowed],
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
  el.append(ul);
  return { el };
}

return { createLegend };
})();

// ------------------------------------------------------------ viewer/navigate.js

// Finding one's way in a large model: the name scopes the reader opens and closes,
// search by name, the scope each stretch of steps works in, and what a step inside
// a closed scope is doing.
//
// The payload's `scopes` (gradviz.views.navigation) holds the scope tree and a
// drawing per view: one node open with the nodes it is drawn in, the rest closed.
// A report holds every view's drawing; a widget's payload holds its own, and asks
// the kernel for another when the reader opens it (model.send, answered with a
// "msg:custom" message carrying the view).
//
// Stable classes: .gv-nav (the bar), .gv-crumbs > .gv-crumb (the open scopes,
// outermost first; a click closes what is inside it), .gv-search (the search box),
// .gv-nav-status (what the last search or opening did), .gv-scope-jump (a <select>
// of the stretches of steps by scope), .gv-scope-tick (their starts on the
// timeline), .gv-scope-note (in the panel: the step works inside a closed scope).

// How long a widget waits for the kernel to lay out a view.

const __gv_navigate = (() => {
const { button, h } = __gv_dom;
const { modeWords } = __gv_format;

const ASK_MS = 30000;
// The search box offers at most this many names as the reader types.
const OFFERED = 400;
// A trace without name scopes gets the search box past this many tensors.
const SEARCHED = 60;

let lists = 0; // the viewers' name lists on the page, each its own id
const within = (scope, s) => scope === s || scope.startsWith(s + "/");

// The name scopes the steps work in, cut into stretches at the first depth at which
// they differ (layer_0 ... layer_11, not layer_0/attention ...): [{ scope, first, last }].
// The final gradients, handed over at the end in the xs' own scopes, are one stretch
// of their own (scope null).
function scopeStretches(steps) {
  const at = (s, d) => (s.kind === "result" ? null
    : String(s.scope || "").split("/").slice(0, d).join("/"));
  const worked = steps.filter((s) => s.kind !== "result");
  if (!worked.some((s) => s.scope)) return []; // no scopes: nothing to cut by
  let depth = 1;
  for (; depth <= 3; depth++) {
    if (new Set(worked.map((s) => at(s, depth))).size > 1) break;
  }
  if (depth > 3) return [];
  const out = [];
  steps.forEach((s, k) => {
    const scope = at(s, depth);
    const last = out[out.length - 1];
    if (last && last.scope === scope) last.last = k;
    else out.push({ scope, first: k, last: k });
  });
  return out.length > 1 ? out : [];
}

// Every name the search finds: tensors (by name, ":0" dropped), and scopes.
function searchEntries(payload, steps) {
  const out = [];
  const scopes = new Set();
  for (const [id, t] of Object.entries(payload.tensors || {})) {
    const name = String(t.name || id).replace(/:0$/, "");
    const scope = name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : "";
    out.push({ name, kind: "tensor", ids: t.op !== undefined ? [id, `o${t.op}`] : [id], scope });
  }
  for (const s of steps) {
    const parts = String(s.scope || "").split("/");
    for (let i = 1; i <= parts.length; i++) if (parts[0]) scopes.add(parts.slice(0, i).join("/"));
  }
  for (const scope of [...scopes].sort()) out.push({ name: scope, kind: "scope", ids: [], scope });
  return out;
}

// The navigator of one viewer.  act: { diagram, go(k), at(), model, life, timeline,
// onView() (told when another view is shown) }.
function createNavigator(payload, steps, act) {
  const { diagram, model, life } = act;
  const scopes = payload.scopes && payload.scopes.nodes ? payload.scopes : null;
  const nodes = scopes ? scopes.nodes : {};
  const views = scopes ? { ...scopes.views } : {};
  const byScope = new Map();
  for (const [key, n] of Object.entries(nodes)) if (n.kind === "scope") byScope.set(n.scopes[0], key);
  const base = scopes ? scopes.base : "";
  let current = base;
  let waiting = null; // { key, resolve, timer }: the view asked of the kernel

  const el = h("div", "gv-nav");
  el.setAttribute("role", "navigation");
  el.setAttribute("aria-label", "find your way in the model");
  const crumbs = h("div", "gv-crumbs");
  crumbs.setAttribute("aria-label", "open scopes");
  const search = h("input", "gv-search");
  search.type = "search";
  search.placeholder = "find a tensor, op or scope";
  search.setAttribute("aria-label", "find a tensor, op or scope by name, and jump to its first step");
  const list = h("datalist");
  list.id = `gv-names-${++lists}`;
  search.setAttribute("list", list.id);
  const status = h("span", "gv-nav-status", "");
  status.setAttribute("aria-live", "polite");
  const stretches = scopeStretches(steps);
  const jump = h("select", "gv-scope-jump");
  const words = modeWords(payload.mode);
  const way = words.pass.split(" ")[0]; // "backward", or "forward"
  jump.setAttribute("aria-label", `jump to where a scope's ${words.pass} starts`);
  jump.append(h("option", null, `jump to a scope\u2019s ${way}\u2026`));
  const named = (r) => (r.scope === null ? words.results.toLowerCase() : r.scope || "outside any scope");
  for (const r of stretches) {
    const o = h("option", null, `${named(r)} \u00b7 steps ${r.first}\u2013${r.last}`);
    o.value = String(r.first);
    jump.append(o);
  }
  jump.hidden = !stretches.length;
  el.append(crumbs, search, list, jump, status);
  // (a small trace without scopes is read at a glance: no row for it)
  el.hidden = !scopes && !stretches.length && Object.keys(payload.tensors || {}).length <= SEARCHED;

  const note = h("div", "gv-scope-note");
  note.hidden = true;

  const label = (key) => (key === "/" ? "all closed" : key === "" ? "as drawn"
    : (nodes[key] && nodes[key].label) || key);

  // The innermost node holding `scope` (null: the top level).
  function home(scope) {
    for (let s = scope; s; s = s.includes("/") ? s.slice(0, s.lastIndexOf("/")) : "") {
      if (byScope.has(s)) return byScope.get(s);
    }
    return null;
  }

  // `key` and the nodes it is drawn in, outermost first.
  function chain(key) {
    const out = [];
    for (let k = key; k && nodes[k]; k = nodes[k].parent) out.unshift(k);
    return out;
  }

  // The view that shows `scope`'s own elements: its innermost node that opens.
  function viewFor(scope) {
    const keys = chain(home(scope)).filter((k) => nodes[k].opens);
    return keys.length ? keys[keys.length - 1] : null;
  }

  // The closed node that holds `scope` in the view shown, or null.
  function closedAround(scope) {
    const open = new Set((views[current] && views[current].open) || []);
    if (current === "" && base === "") return null; // the payload's own drawing: as drawn
    for (const k of chain(home(scope))) if (!open.has(k)) return k;
    return null;
  }

  // The view's payload entry: from the payload, or asked of the kernel.
  function fetchView(key) {
    if (views[key]) return Promise.resolve(views[key]);
    if (!(key in views) || typeof model.send !== "function") return Promise.resolve(null);
    if (waiting) { clearTimeout(waiting.timer); waiting.resolve(null); }
    return new Promise((resolve) => {
      const timer = setTimeout(() => { waiting = null; resolve(null); }, ASK_MS);
      waiting = { key, resolve, timer };
      model.send({ kind: "scope_view", key });
    });
  }

  function onMessage(msg) {
    if (!msg || msg.kind !== "scope_view") return;
    // (kept, even when no longer waited for: the reader may come back to it)
    if (msg.view && msg.key in views) views[msg.key] = msg.view;
    if (!waiting || msg.key !== waiting.key) return;
    const w = waiting;
    waiting = null;
    clearTimeout(w.timer);
    if (msg.view) views[msg.key] = msg.view;
    w.resolve(msg.view || null);
  }
  if (typeof model.on === "function" && typeof model.send === "function") {
    model.on("msg:custom", onMessage);
    life.onDispose(() => model.off("msg:custom", onMessage));
  }

  // An element of view `view` standing for node `key`: its border (open) or box (closed).
  function elementOf(view, key) {
    for (const [id, k] of Object.entries(view.clusters || {})) if (k === key) return id;
    for (const [id, k] of Object.entries(view.boxes || {})) if (k === key) return id;
    return null;
  }

  // Show view `key`.  `node` is the node opened or closed, kept where it was on
  // screen.  Resolves to whether it is shown.
  let asked = 0; // the latest call of openView: an earlier one still waiting gives way
  async function openView(key, node = null) {
    if (key === current) return true;
    const mine = ++asked;
    status.textContent = views[key] ? "" : `laying out ${label(key)}\u2026`;
    const view = await fetchView(key);
    if (mine !== asked) return false;
    if (!view) {
      status.textContent = `${label(key)} cannot be opened here`;
      return false;
    }
    const from = node && views[current] ? elementOf(views[current], node) : null;
    let to = node ? elementOf(view, node) : null;
    if (node && !to && nodes[node] && nodes[node].kind === "repeat") {
      to = elementOf(view, nodes[node].children[0]); // opened: its first instance
    }
    if (!diagram.setScope(key, view, label, from, to)) {
      status.textContent = `${label(key)} could not be drawn`;
      return false;
    }
    current = key;
    status.textContent = ""; // (the crumbs say what is open)
    showCrumbs();
    showNote(act.at());
    if (act.onView) act.onView();
    return true;
  }

  function showCrumbs() {
    if (!scopes) return;
    const items = [];
    if (base === "" && current !== "") {
      items.push(button("gv-crumb gv-crumb-drawn", "as drawn", "the drawing as it was first drawn"));
      items[items.length - 1].addEventListener("click", () => openView(""));
    }
    const all = button("gv-crumb gv-crumb-all", "all closed", "close every scope");
    items.push(all);
    const open = (views[current] && views[current].open) || [];
    all.addEventListener("click", () => openView("/", open[0] || null));
    open.forEach((key, i) => {
      const b = button("gv-crumb", label(key), `${label(key)}: close what is open inside it`);
      // (the node closed stays where it was on screen)
      b.addEventListener("click", () => openView(key, open[i + 1] || key));
      items.push(h("span", "gv-crumb-sep", "\u203a"), b);
    });
    const last = items[items.length - 1];
    if (current !== "") last.setAttribute("aria-current", "true");
    crumbs.replaceChildren(h("span", "gv-crumbs-label", "scopes"), ...items);
  }

  // The panel's note when step k works inside a scope the view shows closed.
  function showNote(k) {
    const s = steps[k];
    const closed = s && s.scope && scopes ? closedAround(String(s.scope)) : null;
    note.hidden = !closed;
    if (!closed) return;
    const open = button("gv-open-scope", `open ${label(closed)}`, `open ${label(closed)} to see this step's op`);
    open.addEventListener("click", () => openView(viewFor(String(s.scope)) || closed, closed));
    note.replaceChildren(
      h("span", null, `Inside ${label(closed)}, drawn closed: `),
      h("code", null, String(s.scope)),
      h("span", null, ` \u00b7 ${s.title || s.kind}. `), open);
  }

  // A scope box or border clicked (or pressed): open or close it.
  function onScope(id, meta) {
    const opening = meta.boxes && meta.boxes[id];
    if (opening) {
      openView(opening, opening);
      return true;
    }
    const closing = meta.clusters && meta.clusters[id];
    if (closing) {
      openView(nodes[closing] && nodes[closing].parent ? nodes[closing].parent : "/", closing);
      return true;
    }
    return false;
  }

  // Open the view that draws scope `scope` (or one of the elements `ids`) open, unless
  // the drawing shown does already.
  async function reveal(scope, ids) {
    if (!scopes || ids.some((i) => diagram.has(i))) return;
    const node = home(scope);
    const view = views[current];
    if (!node || (view && Object.values(view.clusters || {}).includes(node))) return;
    const key = viewFor(scope);
    if (key && key !== current) await openView(key, key);
  }

  // ---------------------------------------------------------------- search

  let entries = null; // made on first use
  function offer() {
    if (!entries) entries = searchEntries(payload, steps);
    const q = search.value.trim().toLowerCase();
    const hits = [];
    for (const e of entries) {
      if (!q || e.name.toLowerCase().includes(q)) hits.push(e);
      if (hits.length >= OFFERED) break;
    }
    list.replaceChildren(...hits.map((e) => {
      const o = h("option");
      o.value = e.name;
      o.label = e.kind;
      return o;
    }));
  }

  async function find(text) {
    if (!entries) entries = searchEntries(payload, steps);
    const q = String(text || "").trim().toLowerCase();
    if (!q) return false;
    const hit = entries.find((e) => e.name.toLowerCase() === q)
      || entries.find((e) => e.name.toLowerCase().endsWith("/" + q))
      || entries.find((e) => e.name.toLowerCase().includes(q));
    if (!hit) {
      status.textContent = `nothing is called \u201c${text}\u201d`;
      return false;
    }
    await reveal(hit.scope, hit.kind === "scope" ? [] : hit.ids);
    let k = -1;
    let id = hit.ids.find((i) => diagram.has(i)) || null;
    if (hit.kind === "scope") {
      k = steps.findIndex((s) => within(String(s.scope || ""), hit.scope));
      id = null;
    } else if (id) {
      k = diagram.firstStep(id);
      diagram.select(id);
    }
    if (k >= 0) act.go(k);
    status.textContent = `${hit.name}: ` + (k >= 0 ? `step ${k}` : "no step works on it");
    return true;
  }

  life.listen(search, "input", offer);
  life.listen(search, "focus", offer);
  life.listen(search, "keydown", (e) => {
    e.stopPropagation(); // typing a name: the keys are the box's, not the stepper's
    if (e.key === "Enter") {
      e.preventDefault();
      find(search.value);
    }
  });
  life.listen(jump, "change", () => {
    const k = Number(jump.value);
    if (!Number.isFinite(k)) return;
    const r = stretches.find((x) => x.first === k);
    (r && r.scope ? reveal(r.scope, []) : Promise.resolve()).then(() => act.go(k));
    jump.selectedIndex = 0;
  });

  // The stretches' starts on the timeline under the slider.
  if (act.timeline && steps.length > 1) {
    for (const r of stretches.slice(1)) {
      const tick = h("div", "gv-scope-tick");
      tick.style.left = `${(100 * r.first) / (steps.length - 1)}%`;
      tick.title = `${named(r)}: steps ${r.first}\u2013${r.last}`;
      act.timeline.append(tick);
    }
  }
  showCrumbs();
  // The payload's own drawing: its boxes and borders made buttons.
  if (scopes && views[base]) diagram.setScope(base, views[base], label, null, null);

  return {
    el,
    note,
    show: showNote,
    onScope,
    find,
    open: (key) => openView(key, key),
    get view() { return current; },
  };
}

return { scopeStretches, createNavigator };
})();

// ------------------------------------------------------------ viewer/practice.js

// Practice mode (the view option practice=True): predict, then see.  At a step
// with questions (the payload's step.questions, gradviz.views.practice) the
// values the step produces stay hidden (diagram labels, the step's sentence,
// formula and arrays, the final gradients) until the learner answers each
// question right, reveals it, or moves on; the panel asks instead, with the
// arrays the rule reads.  A wrong answer that is one of the question's named
// slips gets its sentence (answers.js checks as the Python does); any other
// gets "not yet" and the hint button: the formula, then the answer.  At the
// last step, a summary per step kind, and "start over".
//
// Progress is per question: { tries, hints, done: "first" | "hinted" |
// "revealed" | undefined, skipped, attempts: [{ verdict, kind }], seconds }:
// each answer checked, in order, with what checking found ("right", a named
// slip's "misconception" and its kind, "shape", "not_yet"), and the seconds the
// question was on screen.  The offline report keeps it in localStorage under the
// report's content hash (the model's practice_key); where the browser refuses
// storage, it lives as long as the page.
//
// "hand in" saves it as a results file (gradviz.views.practice.handin, which
// reads and checks it: the same format) under the name the student types; a
// widget also hands every change to Python (act.report), for viewer.results().
//
// Stable classes: .gv-practice (the box in the panel), .gv-practice-progress,
// .gv-practice-reset, .gv-question, .gv-question-prompt, .gv-question-given,
// .gv-answer (the form), .gv-answer-shape (the shape's input), .gv-answer-cells
// (the values' inputs: .gv-answer-cell), .gv-answer-check, .gv-answer-hint,
// .gv-answer-reveal, .gv-answer-skip, .gv-feedback (with .gv-feedback-right,
// -misconception, -shape, -not_yet, -input; data-kind the misconception),
// .gv-hint-text, .gv-question-done, .gv-practice-summary (table
// .gv-summary-table, button .gv-practice-restart), .gv-hand-in (the button;
// its form .gv-hand-in-form: .gv-hand-in-name, .gv-hand-in-save,
// .gv-hand-in-cancel, .gv-hand-in-message).  Root classes:
// .gv-practicing, .gv-practice-asking (the current step's values hidden).

// The most values a grid of inputs takes (a question asks about at most 64).

const __gv_practice = (() => {
const { button, download, formTool, h, slug } = __gv_dom;
const { arrayView, imageAxes } = __gv_arrays;
const { asked, checkAnswer, checkShape, flatIndex, parseNumber, parseShape } = __gv_answers;
const { sizeOf } = __gv_format;

const MAX_CELLS = 64;

const OUTCOMES = [
  ["first", "right first try"],
  ["hinted", "right after tries or hints"],
  ["revealed", "revealed"],
  ["open", "not answered"],
];

const KIND_ORDER = ["seed", "backward", "reduce", "accumulate", "result", "forward"];

// How a question can be settled.
const DONE = ["first", "hinted", "revealed"];

// What checking one answer can find (answers.js), as a results file records it.
const VERDICTS = ["right", "misconception", "shape", "not_yet"];
const SLIP_KIND = /^[a-z][a-z0-9_]{0,63}$/;

// The results file's format (gradviz.views.practice.handin).
const RESULTS_FORMAT = "gradviz practice results";
const RESULTS_VERSION = 1;

// The most attempts kept per question (the results file takes 1,000), and the
// longest name.
const MAX_ATTEMPTS = 1000;
const MAX_NAME = 100;

// A name as a results file holds it: one space between words, no control characters.
const nameOf = (text) => String(text).replace(/[\u0000-\u001f\u007f]/g, " ").trim().split(/\s+/).join(" ")
  .slice(0, MAX_NAME);

// An attempt as a results file holds it, or null for what is not one.
function attemptOf(a) {
  if (!a || !VERDICTS.includes(a.verdict)) return null;
  if (a.verdict !== "misconception") return { verdict: a.verdict };
  return typeof a.kind === "string" && SLIP_KIND.test(a.kind) ? { verdict: a.verdict, kind: a.kind } : null;
}

// A question's record read back from storage: only what is well formed.
function recordOf(r) {
  const attempts = (Array.isArray(r.attempts) ? r.attempts : []).map(attemptOf).filter(Boolean)
    .slice(0, MAX_ATTEMPTS);
  const seconds = Number(r.seconds);
  const count = (v) => Math.max(0, Math.trunc(Number(v)) || 0);
  return { tries: count(r.tries), hints: count(r.hints),
    ...(DONE.includes(r.done) ? { done: r.done } : {}), ...(r.skipped === true ? { skipped: true } : {}),
    attempts, seconds: Number.isFinite(seconds) && seconds > 0 ? seconds : 0 };
}

// Progress kept where the page may keep it: localStorage under `key`, or nowhere.
function keeper(key) {
  let storage = null;
  if (key) {
    try {
      storage = window.localStorage;
      const probe = `${key}:probe`;
      storage.setItem(probe, "1");
      storage.removeItem(probe);
    } catch (err) {
      storage = null;  // refused (a file:// page in some browsers, private modes)
    }
  }
  return {
    kept: !!storage,
    load() {
      if (!storage) return {};
      let got;
      try { got = JSON.parse(storage.getItem(key) || "{}"); } catch (err) { return {}; }
      // Only well-formed records: what another page wrote under the key is dropped.
      const kept = {};
      for (const [id, r] of Object.entries(got && typeof got === "object" ? got : {})) {
        if (!r || typeof r !== "object" || !/^\d+\.\d+$/.test(id)) continue;
        kept[id] = recordOf(r);
      }
      return kept;
    },
    save(progress) {
      try { if (storage) storage.setItem(key, JSON.stringify(progress)); } catch (err) { /* full */ }
    },
    clear() {
      try { if (storage) storage.removeItem(key); } catch (err) { /* refused */ }
    },
    // The name last handed in under, kept beside the progress.
    name() {
      try { return storage ? storage.getItem(`${key}:name`) || "" : ""; } catch (err) { return ""; }
    },
    keepName(name) {
      try { if (storage) storage.setItem(`${key}:name`, name); } catch (err) { /* full */ }
    },
  };
}

// Each practising viewer's number, to scope the rules that hide its values.
let viewers = 0;

// The clock of the practising viewer last used (focused or pressed): of several
// on a page, only that one counts the time its question is on screen.
let activeClock = null;

// One box to type a number in, named for screen readers.
function numberInput(name) {
  const i = h("input", "gv-answer-cell");
  i.type = "text";
  i.inputMode = "decimal";
  i.autocomplete = "off";
  i.spellcheck = false;
  i.setAttribute("aria-label", name);
  return i;
}

// A table of number inputs in `shape` (rows of its last axis), or one input;
// an NHWC image batch as one small grid per example and channel.
function cellsFor(shape, label) {
  if (shape.length === 4) return imageCells(shape, label);
  const box = h("div", "gv-answer-grid");
  const inputs = [];
  const input = (name) => {
    const i = numberInput(name);
    inputs.push(i);
    return i;
  };
  if (!shape.length) {
    box.append(input(label));
    return { el: box, inputs };
  }
  const cols = shape[shape.length - 1];
  const rows = sizeOf(shape.slice(0, -1));
  const lead = shape.slice(0, -1);
  const table = h("table", "gv-answer-table");
  for (let r = 0; r < rows; r++) {
    const idx = [];
    for (let a = lead.length - 1, q = r; a >= 0; a--) { idx.unshift(q % lead[a]); q = Math.floor(q / lead[a]); }
    const tr = h("tr");
    if (lead.length > 1) tr.append(h("th", "gv-row-label", `[${idx.join(",")},:]`));
    for (let c = 0; c < cols; c++) {
      const td = h("td");
      td.append(input(`${label}[${idx.concat(c).join(",")}]`));
      tr.append(td);
    }
    table.append(tr);
  }
  box.append(table);
  return { el: box, inputs };
}

// Number inputs for an NHWC array: an H x W grid for each example and channel,
// as the array panels draw images; the inputs listed in the array's own order.
function imageCells(shape, label) {
  const [n, rows, cols, chans] = shape;
  const box = h("div", "gv-answer-grid gv-answer-images");
  const inputs = new Array(sizeOf(shape));
  for (let e = 0; e < n; e++) {
    for (let c = 0; c < chans; c++) {
      const tile = h("figure", "gv-answer-image");
      const table = h("table", "gv-answer-table");
      for (let y = 0; y < rows; y++) {
        const tr = h("tr");
        for (let x = 0; x < cols; x++) {
          const i = numberInput(`${label}[${e},${y},${x},${c}]`);
          inputs[((e * rows + y) * cols + x) * chans + c] = i;
          const td = h("td");
          td.append(i);
          tr.append(td);
        }
        table.append(tr);
      }
      tile.append(table, h("figcaption", "gv-image-caption", `[${e},:,:,${c}]`));
      box.append(tile);
    }
  }
  return { el: box, inputs };
}

// One number input per element a question's focus asks, each named by its index.
function focusCells(q) {
  const box = h("div", "gv-answer-grid gv-answer-focus");
  const inputs = q.focus.map((at) => numberInput(`${q.target}[${at.join(",")}]`));
  for (const [k, input] of inputs.entries()) {
    const row = h("label", "gv-answer-focus-cell");
    row.append(h("span", "gv-answer-focus-name", `[${q.focus[k].join(",")}]`), input);
    box.append(row);
  }
  return { el: box, inputs };
}

// Where the elements asked sit in an array of `shape`, drawn as the array
// panels draw it: a four-dimensional array as one small grid per image (an
// example's channel, or a kernel's input-to-output pair), any other as rows of
// its last axis.  Each element asked is marked.
function focusPicture(q, shape) {
  const marks = new Set(q.focus.map((at) => flatIndex(at, shape)));
  const grid = (rows, cols, at) => {
    const table = h("table");
    for (let y = 0; y < rows; y++) {
      const tr = h("tr");
      for (let x = 0; x < cols; x++) tr.append(h("td", marks.has(at(y, x)) ? "gv-focus-cell" : ""));
      table.append(tr);
    }
    return table;
  };
  const box = h("div", "gv-focus-tiles");
  if (shape.length === 4) {
    const { kernel, picks, chans, rows, cols, index } = imageAxes(shape, q.layout);
    for (let p = 0; p < picks; p++) {
      for (let ch = 0; ch < chans; ch++) {
        const tile = h("figure", "gv-focus-tile");
        tile.append(grid(rows, cols, (y, x) => flatIndex(index(p, ch, y, x), shape)),
          h("figcaption", "gv-image-caption",
            kernel ? `in ${p} \u2192 out ${ch}` : `${picks > 1 ? `example ${p}, ` : ""}channel ${ch}`));
        box.append(tile);
      }
    }
    return box;
  }
  const cols = shape.length ? shape[shape.length - 1] : 1;
  box.append(grid(sizeOf(shape) / cols, cols, (y, x) => y * cols + x));
  return box;
}

// The practice box of a viewer: `root` the viewer's element, `steps` the
// payload's, `key` where to keep progress (or null), `act` the viewer's
// { go(k), at(), last, focusRoot(), life, trace: { key, title }, report(results) }.
function createPractice(root, steps, key, act) {
  viewers += 1;
  root.dataset.gvPractice = String(viewers);
  const el = h("section", "gv-practice");
  el.setAttribute("aria-label", "Practice: predict this step");
  const store = keeper(key);
  let progress = store.load();
  const style = h("style");  // hides the values of the steps still asked
  root.append(style);
  root.classList.add("gv-practicing");

  // Every question, in step order: { id, step, q }.
  const all = [];
  steps.forEach((s, k) => {
    (Array.isArray(s.questions) ? s.questions : []).forEach((q, i) => all.push({ id: `${k}.${i}`, step: k, q }));
  });
  const byStep = new Map();
  for (const item of all) {
    if (!byStep.has(item.step)) byStep.set(item.step, []);
    byStep.get(item.step).push(item);
  }

  const bar = h("div", "gv-practice-bar");
  const counter = h("span", "gv-practice-progress", "");
  const reset = h("button", "gv-btn gv-practice-reset", "start over");
  reset.type = "button";
  reset.title = "forget every answer and begin again at the first step";
  const life = act.life || { listen: (t, ev, fn) => t.addEventListener(ev, fn), onDispose() {} };
  const handIn = handInTool();
  bar.append(h("span", "gv-practice-label", "Practice"), counter, handIn.el, reset);
  const body = h("div", "gv-practice-body");
  el.append(bar, body);

  const rec = (id) => progress[id] || (progress[id] = recordOf({}));
  const settled = (id) => !!(progress[id] && progress[id].done);

  function save() {
    store.save(progress);
    if (act.report) act.report(results(handIn.name()));
  }

  // What was checked: kept in order, each verdict once per answer.
  function attempted(r, f) {
    const a = attemptOf(f);
    if (a && (r.attempts.length < MAX_ATTEMPTS - 1 || a.verdict === "right")) r.attempts.push(a);
  }

  // The seconds each question is on screen: while the page is in view and this
  // is the viewer last used.  `shown` is the question on screen, `since` NaN
  // while the clock is paused.
  let shown = null;  // { id, since }
  const clock = {};
  const running = () => document.visibilityState !== "hidden" && activeClock === clock;
  function clockOut() {
    if (shown && progress[shown.id] && !Number.isNaN(shown.since)) {
      progress[shown.id].seconds += Math.max(0, (performance.now() - shown.since) / 1000);
    }
    shown = null;
  }
  function clockIn(id) {
    clockOut();
    if (id) shown = { id, since: running() ? performance.now() : NaN };
  }
  clock.pause = () => { if (shown) clockIn(shown.id); };  // (not running: counted, then paused)
  const resume = () => {
    if (shown && Number.isNaN(shown.since) && running()) shown.since = performance.now();
  };
  const use = () => {
    if (activeClock === clock) return;
    const before = activeClock;
    activeClock = clock;
    if (before) before.pause();
    resume();
  };
  life.listen(root, "focusin", use);
  life.listen(root, "pointerdown", use);
  life.listen(document, "visibilitychange", () => {
    if (document.visibilityState === "hidden") {
      clock.pause();
      store.save(progress);
    } else {
      resume();
    }
  });
  life.onDispose(() => { if (activeClock === clock) activeClock = null; });

  // The results file's object: every question of the trace, how it went so far.
  function results(student) {
    if (shown && !Number.isNaN(shown.since)) clockIn(shown.id);  // (count the time up to now)
    return {
      format: RESULTS_FORMAT,
      version: RESULTS_VERSION,
      trace: { key: (act.trace && act.trace.key) || "", title: (act.trace && act.trace.title) || "" },
      student,
      handed_in: new Date().toISOString(),
      questions: all.map((it) => {
        const r = recordOf(progress[it.id] || {});
        const attempts = r.attempts.slice();
        // (a record kept before attempts were: its right answer, at least)
        if (r.done && r.done !== "revealed" && (!attempts.length || attempts[attempts.length - 1].verdict !== "right")) {
          attempts.push({ verdict: "right" });
        }
        const outcome = r.done === "first" && attempts.length > 1 ? "hinted" : r.done || "open";
        return { step: it.step, index: Number(it.id.split(".")[1]), target: String(it.q.target),
          attempts, hints: r.hints, outcome, skipped: !!r.skipped, seconds: Math.round(r.seconds * 10) / 10 };
      }),
    };
  }

  // "hand in": the name, then the file.
  function handInTool() {
    const open = button("gv-hand-in", "hand in", "save your answers as a file to hand in");
    const name = h("input", "gv-hand-in-name");
    name.type = "text";
    name.autocomplete = "name";
    name.maxLength = MAX_NAME;
    name.placeholder = "your name";
    name.setAttribute("aria-label", "your name");
    name.value = store.name();
    const saveButton = h("button", "gv-btn gv-hand-in-save", "save file");
    saveButton.type = "submit";
    const cancel = button("gv-hand-in-cancel", "cancel", "close without saving");
    const tool = formTool("gv-hand-in", open, "form", [name, saveButton, cancel],
      () => { name.focus(); name.select(); }, life);
    const said = (text, ok) => {
      tool.say(text);
      tool.form.classList.toggle("gv-hand-in-saved", !!ok);
    };
    life.listen(cancel, "click", tool.close);
    life.listen(name, "keydown", (e) => {
      e.stopPropagation();  // typing a name is not stepping the viewer
      if (e.key === "Escape") { tool.close(); open.focus(); }
    });
    life.listen(tool.form, "submit", (e) => {
      e.preventDefault();
      const who = nameOf(name.value);
      if (!who) {
        said("Type your name first: the file is handed in under it.");
        name.focus();
        return;
      }
      store.keepName(who);
      const data = results(who);
      if (act.report) act.report(data);
      const file = `${slug(data.trace.title) || "practice"}-${slug(who) || "student"}.json`;
      try {
        download(new Blob([JSON.stringify(data, null, 1)], { type: "application/json" }), file);
      } catch (err) {
        said(`The file could not be saved: ${err.message || err}`);
        return;
      }
      const n = data.questions.filter((q) => q.outcome !== "open").length;
      said(`Saved ${file} (${n} of ${data.questions.length} answered): hand this file in.`, true);
    });
    return { el: tool.el, name: () => nameOf(name.value) };
  }

  // The diagram's elements and final gradients of every step still asked, up to k.
  function hideOpenSteps(k) {
    const rules = [];
    for (const [step, items] of byStep) {
      if (step > k || items.every((it) => settled(it.id))) continue;
      // (the payload's own drawing's ids, and those of the drawing shown: a scope opened)
      const ids = new Set(steps[step].ids || []);
      if (act.ids) for (const id of act.ids(step)) ids.add(id);
      for (const id of ids) {
        rules.push(`.gv-diagram [id="${CSS.escape(String(id))}"] .gv-grad-value`);
      }
      rules.push(`.gv-result[data-step="${step}"] .gv-result-array`,
        `.gv-result[data-step="${step}"] .gv-cell-value`,
        `.gv-result[data-step="${step}"] .gv-result-reason`);
    }
    const scope = `.gv-viewer[data-gv-practice="${root.dataset.gvPractice}"]`;
    const text = rules.length ? `${rules.map((r) => `${scope} ${r}`).join(",\n")} { visibility: hidden; }` : "";
    if (style.textContent !== text) style.textContent = text;
  }

  function showCounter() {
    const done = all.filter((it) => settled(it.id)).length;
    counter.textContent = all.length
      ? `${done} of ${all.length} question${all.length === 1 ? "" : "s"} answered`
      : "this trace asks nothing: no step's arrays are small and finite enough to work out by hand";
  }

  function outcome(id) {
    const r = progress[id];
    return r && r.done ? r.done : "open";
  }

  function summary() {
    const box = h("div", "gv-practice-summary");
    box.append(h("div", "gv-section-title", "Your practice"));
    const table = h("table", "gv-summary-table");
    const head = h("tr");
    head.append(h("th", "", "step kind"));
    for (const [, words] of OUTCOMES) head.append(h("th", "", words));
    table.append(head);
    const kinds = KIND_ORDER.filter((kind) => all.some((it) => it.q.kind === kind));
    for (const kind of kinds.concat(["all"])) {
      const items = all.filter((it) => kind === "all" || it.q.kind === kind);
      const tr = h("tr", kind === "all" ? "gv-summary-total" : "");
      tr.dataset.kind = kind;
      tr.append(h("th", "", kind === "all" ? "all steps" : kind));
      for (const [name] of OUTCOMES) {
        const td = h("td", `gv-summary-${name}`, String(items.filter((it) => outcome(it.id) === name).length));
        tr.append(td);
      }
      table.append(tr);
    }
    const restart = h("button", "gv-btn gv-practice-restart", "start over");
    restart.type = "button";
    box.append(table, restart);
    if (!store.kept && key) {
      box.append(h("p", "gv-muted gv-practice-unkept",
        "This browser does not let the page keep your answers: they last until it is closed."));
    }
    restart.addEventListener("click", startOver);
    return box;
  }

  function startOver() {
    shown = null;
    progress = {};
    store.clear();
    if (act.report) act.report(results(handIn.name()));
    act.go(0);
    render(act.at());
    act.focusRoot();
  }
  reset.addEventListener("click", startOver);

  // How a settled question went, with its answer; `said` the words just given
  // for a right answer (shown as the feedback they are).
  function doneLine(item, said) {
    const r = progress[item.id];
    const tries = `${r.tries} wrong ${r.tries === 1 ? "try" : "tries"}`;
    const hints = r.hints ? ` and ${r.hints} hint${r.hints === 1 ? "" : "s"}` : "";
    const how = {
      first: "\u2713 Right on the first try",
      hinted: r.tries ? `\u2713 Right after ${tries}${hints}` : `\u2713 Right after ${hints.slice(5)}`,
      revealed: "Revealed",
    }[r.done];
    const line = h("div", `gv-question-done gv-question-${r.done}`);
    const answerText = (item.q.hints || [])[1] || item.q.target;
    if (said) {
      line.append(h("div", "gv-feedback gv-feedback-right", said), h("div", "gv-question-how", `${how}.`));
    } else {
      line.append(h("span", "gv-question-how", `${how}: `), h("span", "gv-question-answer", answerText));
    }
    return line;
  }

  // The form that asks `item`, the step's question `index` of `count`.
  function ask(item, count, index) {
    const { q } = item;
    const r = rec(item.id);
    const box = h("div", "gv-question");
    if (count > 1) box.append(h("div", "gv-question-count", `question ${index + 1} of ${count} at this step`));
    box.append(h("p", "gv-question-prompt", q.prompt));
    const given = h("div", "gv-question-given");
    for (const g of q.given || []) {
      given.append(arrayView({ label: g.label, shape: g.shape, dtype: "", values: g.values, ...(g.layout ? { layout: g.layout } : {}) }));
    }
    box.append(given);

    const form = h("form", "gv-answer");
    form.noValidate = true;
    const shapeLab = h("label", "gv-answer-shape-label");
    shapeLab.append(h("span", "", `shape of ${q.target}`));
    const shapeIn = h("input", "gv-answer-shape");
    shapeIn.type = "text";
    shapeIn.autocomplete = "off";
    shapeIn.spellcheck = false;
    shapeIn.placeholder = "(3,) or (2, 3) or scalar";
    shapeLab.append(shapeIn);
    const cellsBox = h("div", "gv-answer-cells");
    let cells = { el: h("div"), inputs: [] };
    let cellsShape = null;
    const buttons = h("div", "gv-answer-buttons");
    const mk = (cls, text, type = "button") => {
      const b = h("button", `gv-btn ${cls}`, text);
      b.type = type;
      return b;
    };
    const checkBtn = mk("gv-answer-check", "check", "submit");
    const hintBtn = mk("gv-answer-hint", "hint");
    const revealBtn = mk("gv-answer-reveal", "reveal");
    const skipBtn = mk("gv-answer-skip", "skip");
    buttons.append(checkBtn, hintBtn, revealBtn, skipBtn);
    form.append(shapeLab, cellsBox, buttons);
    const feedback = h("div", "gv-feedback");
    feedback.setAttribute("role", "status");
    feedback.setAttribute("aria-live", "polite");
    feedback.hidden = true;
    const hintText = h("div", "gv-hint-text");
    hintText.hidden = true;
    box.append(form, feedback, hintText);

    // The values' inputs follow the shape typed: a grid, one number, or (for a
    // large answer) the elements the question asks about.
    function layCells() {
      let shape = null;
      try { shape = parseShape(shapeIn.value); } catch (err) { shape = null; }
      if (q.focus) placeFocus(shape);
      const want = q.focus ? (shape ? [q.focus.length] : null) : shape;
      const same = want && cellsShape && want.length === cellsShape.length && want.every((d, i) => d === cellsShape[i]);
      if (same || (want === null && cellsShape === null)) return;
      cellsShape = want;
      cellsBox.replaceChildren();
      cells = { el: h("div"), inputs: [] };
      if (want === null) return;
      if (sizeOf(want) > MAX_CELLS) {
        cellsShape = null;
        cellsBox.append(h("div", "gv-muted", `That is ${sizeOf(want)} values; this answer has at most ${MAX_CELLS}: check the shape.`));
        return;
      }
      cells = q.focus ? focusCells(q) : cellsFor(want, q.target);
      const n = q.focus ? q.focus.length : 0;
      cellsBox.append(h("span", "gv-answer-cells-label", q.focus
        ? `${asked(q)}: of its ${sizeOf(q.shape)} values, ${n === 1 ? "the one" : `the ${n}`} asked`
        : `${q.target} =`));
      const row = h("div", "gv-answer-focus-row");
      row.append(cells.el, focusMap);
      cellsBox.append(q.focus ? row : cells.el);
      if (q.focus) placeFocus(shape);
    }

    // For a large answer: where the elements asked sit, in the shape typed.
    const focusMap = h("div", "gv-focus-map");
    focusMap.setAttribute("aria-hidden", "true");
    function placeFocus(shape) {
      focusMap.replaceChildren();
      const at = q.focus || [];
      const fits = shape && at.every((idx) => idx.length === shape.length && idx.every((i, a) => i < shape[a]));
      if (!at.length || !fits || sizeOf(shape) > MAX_CELLS) return;
      focusMap.append(focusPicture(q, shape));
    }
    shapeIn.addEventListener("input", layCells);

    function say(f) {
      feedback.hidden = false;
      feedback.className = `gv-feedback gv-feedback-${f.verdict}`;
      if (f.kind) feedback.dataset.kind = f.kind;
      else delete feedback.dataset.kind;
      feedback.textContent = f.message;
      if (f.verdict === "not_yet") hintBtn.classList.add("gv-answer-hint-now");
    }

    function showHint() {
      const hints = Array.isArray(q.hints) ? q.hints : [];
      const n = Math.min(r.hints, hints.length);
      hintText.hidden = n === 0;
      hintText.replaceChildren();
      for (let i = 0; i < n; i++) {
        hintText.append(h("div", "gv-hint-line", `${i === 0 ? "Hint" : "The answer"}: ${hints[i]}`));
      }
      hintBtn.disabled = n >= hints.length;
    }
    showHint();

    function settle(how, said = null) {
      r.done = how;
      save();
      render(act.at(), { id: item.id, said });
    }

    function submit() {
      let shape;
      try {
        shape = parseShape(shapeIn.value);
      } catch (err) {
        say({ verdict: "input", message: `${err.message} First the shape of ${q.target}.` });
        shapeIn.focus();
        return;
      }
      layCells();
      const texts = cells.inputs.map((i) => i.value);
      const filled = texts.some((t) => t.trim() !== "");
      const shapeRight = checkShape(q, shape);
      let f;
      if (!filled || (shapeRight.verdict !== "right" && q.focus)) {
        // the shape alone: right (now the values), or what a wrong one means
        f = shapeRight;
        if (f.verdict === "right") {
          const next = q.focus ? `the element${q.focus.length === 1 ? "" : "s"} marked` : `its value${sizeOf(q.shape) === 1 ? "" : "s"}`;
          say({ verdict: "right-shape", message: `${f.message.replace(/\.$/, "")}: now ${next}.` });
          if (cells.inputs[0]) cells.inputs[0].focus();
          return;
        }
      } else {
        let values;
        try {
          values = texts.map(parseNumber);
        } catch (err) {  // more than anyone types: refused before it is read
          say({ verdict: "input", message: err.message });
          return;
        }
        const bad = values.findIndex((v) => !Number.isFinite(v));
        if (bad >= 0) {
          const which = cells.inputs[bad].getAttribute("aria-label");
          say({ verdict: "input", message: texts[bad].trim()
            ? `${which} is not a number: write one such as 1.75, -2 or 3/4.`
            : `${which} is empty: an answer gives every value.` });
          cells.inputs[bad].focus();
          return;
        }
        f = checkAnswer(q, { shape: q.focus ? [q.focus.length] : shape, values }, r.hints);
      }
      attempted(r, f);
      if (f.verdict === "right") {
        settle(r.tries === 0 && r.hints === 0 ? "first" : "hinted", f.message);
        return;
      }
      r.tries += 1;
      save();
      say(f);
    }

    form.addEventListener("submit", (e) => { e.preventDefault(); submit(); });
    // Enter in an answer checks it (not left to the form's implicit submission,
    // which a notebook page may prevent); Escape hands the keys back to the
    // viewer's stepping.  Nothing typed here reaches the page around it.
    form.addEventListener("keydown", (e) => {
      if (e.target.tagName !== "INPUT") return;
      if (e.key === "Enter") { e.preventDefault(); submit(); }
      if (e.key === "Escape") { e.preventDefault(); act.focusRoot(); }
      e.stopPropagation();
    });
    hintBtn.addEventListener("click", () => {
      r.hints += 1;
      save();
      showHint();
    });
    revealBtn.addEventListener("click", () => settle("revealed"));
    skipBtn.addEventListener("click", () => {
      r.skipped = true;
      save();
      if (item.step < act.last) act.go(item.step + 1);
      else render(item.step);
      act.focusRoot();
    });
    return { el: box, focus: () => shapeIn.focus() };
  }

  let asking = null;  // the form now shown, if any

  // Show step k: its questions (asked, or how they went), and the summary at the
  // end.  `just`: the question just settled ({ id, said }: its words if right).
  function render(k, just = null) {
    const items = byStep.get(k) || [];
    const open = items.find((it) => !settled(it.id));
    root.classList.toggle("gv-practice-asking", !!open);
    hideOpenSteps(k);
    showCounter();
    body.replaceChildren();
    asking = null;
    for (const it of items) if (settled(it.id)) body.append(doneLine(it, just && just.id === it.id ? just.said : null));
    if (open) {
      asking = ask(open, items.length, items.indexOf(open));
      body.append(asking.el);
    }
    clockIn(open ? open.id : null);
    // At the end, the summary: once the last step's own question is settled or skipped.
    if (k === act.last && (!open || progress[open.id].skipped)) body.append(summary());
    if (just) {
      if (asking) asking.focus();
      else act.focusRoot();
    }
  }

  return {
    el,
    show(k) { render(k); },
    // Another drawing is shown (a scope opened or closed): hide its values of the open steps.
    rehide() { hideOpenSteps(act.at()); },
    // Put the focus in the current question's first input (Enter on the viewer).
    focusAnswer() {
      if (!asking) return false;
      asking.focus();
      return true;
    },
  };
}

return { createPractice };
})();

// ------------------------------------------------------------ viewer/presentation.js

// Presentation mode, for a lecture hall: the viewer fills the screen (the
// Fullscreen API when the page may use it, a fixed full-window layout when it
// may not, as in an iframe that forbids it), the diagram takes most of it with
// its smallest text at PRESENT_PX or more, and the step's explanation is a
// side strip in large type.  In the mode, + and - make all of the text larger
// or smaller together: the diagram's zoom and the strip's font size.  Leaving
// (the button, f, Escape, or the browser leaving fullscreen by itself) gives
// back the reader's zoom as it was.  The layout is CSS, under .gv-presenting.

// Text px on entering: readable from the back of a hall on a 1080p projector.

const __gv_presentation = (() => {
const { iconButton, scrollStop } = __gv_dom;

const PRESENT_PX = 20;
const TEXT_STEP = 1.2;
const MIN_PX = 12;
const MAX_PX = 48;

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));

// The presentation mode of the viewer `root`, for its `diagram` (diagram.js).
function createPresentation(root, diagram, life) {
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

return { PRESENT_PX, createPresentation };
})();

// ------------------------------------------------------------ viewer/results.js

// The final gradients: one row per x (a compact table past COMPACT_RESULTS xs,
// each row opening to its array).  Until the walk reaches the step that gives a
// result, its row is dimmed and says when it will be ready.

// Past this many xs the final gradients are a compact table, one line per x.

const __gv_results = (() => {
const { h, sayWithValues, scrollStop } = __gv_dom;
const { arrayView } = __gv_arrays;
const { formatNumber, modeWords, shapeText } = __gv_format;

const COMPACT_RESULTS = 6;
// The compact table's rows are made this many at a time, as it is scrolled.
const ROW_CHUNK = 100;

const statusClass = (r) => `gv-status-${String(r.status).replace(/[^a-z]/g, "")}`;

// Why x got what it got; the values it writes hide with the gradient values.
function reason(r) {
  const el = h("div", "gv-result-reason");
  sayWithValues(el, String(r.reason), r.reason_values_at);
  return el;
}

function createResults(payload, passes) {
  const words = modeWords(payload.mode);
  const el = h("div", "gv-results");
  // Each result's row and the step that gives it (see show).
  const rows = [];
  // The compact table's rows near its scrolled view, and the rows out of it that a
  // step changed: those are restyled once scrolled to (or printed), so that a jump
  // across 1,000 results restyles the few in view, not all of them.
  const near = new Set();
  const stale = new Set();
  let watcher = null;
  let at = 0;
  const restyle = (row, step) => row.classList.toggle("gv-result-later", at < step);
  // Makes more rows of the compact table (see compact).
  let more = () => {};
  const settle = () => {
    more(Infinity);  // (on paper, every row)
    for (const row of stale) restyle(row, Number(row.dataset.step));
    stale.clear();
  };
  addEventListener("beforeprint", settle);

  function when(r, row, where = row) {
    const step = Number(r.step);
    if (!Number.isInteger(step)) return;
    where.append(h("div", "gv-result-when", `ready at step ${step}`));
    row.dataset.step = String(step);
    rows.push([row, step]);
  }

  function full(list) {
    for (const r of list) {
      const row = h("div", `gv-result ${statusClass(r)}`);
      const head = h("div", "gv-result-head");
      head.append(h("span", "gv-result-name", r.name ?? `x${r.x_index}`));
      head.append(h("span", "gv-chip gv-result-status", r.status ?? ""));
      row.append(head);
      if (r.array) row.append(arrayView(r.array, "gv-result-array"));
      else row.append(h("div", "gv-result-none", "None"));
      if (r.reason) row.append(reason(r));
      when(r, row);
      el.append(row);
    }
  }

  // One row of the compact table.
  function compactRow(r) {
    const item = h("details", `gv-result gv-result-compact ${statusClass(r)}`);
    const sum = h("summary", "gv-results-row");
    sum.append(h("span", "gv-result-name", r.name ?? `x${r.x_index}`));
    const shape = Array.isArray(r.shape) ? r.shape : r.array ? r.array.shape : [];
    sum.append(h("span", "gv-result-shape", shapeText(shape)));
    sum.append(h("span", "gv-result-norm gv-cell-value",
      r.norm === null || r.norm === undefined ? "\u2013" : formatNumber(r.norm)));
    sum.append(h("span", "gv-chip gv-result-status", r.status ?? ""));
    item.append(sum);
    when(r, item, sum);
    if (item.dataset.step) {
      restyle(item, Number(item.dataset.step));
      watcher.observe(item);
    }
    const detail = h("div", "gv-result-detail");
    item.append(detail);
    // The array is built when the row is first opened.  (The row's own listener
    // goes with the row, which new values replace.)
    item.addEventListener("toggle", () => {
      if (!item.open || detail.childElementCount) return;
      if (r.array) detail.append(arrayView(r.array, "gv-result-array"));
      else detail.append(h("div", "gv-result-none", "None"));
      if (r.reason) detail.append(reason(r));
    });
    return item;
  }

  function compact(list, rowsAre) {
    el.classList.add("gv-results-compact");
    el.append(h("div", "gv-muted gv-results-hint", `${list.length} ${rowsAre}s: open a row to see its ${words.carried}`));
    const table = scrollStop(h("div", "gv-results-table"), "final gradients");
    watcher = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) { near.delete(e.target); continue; }
        near.add(e.target);
        if (stale.delete(e.target)) restyle(e.target, Number(e.target.dataset.step));
      }
    }, { root: table, rootMargin: "200px 0px" });
    const head = h("div", "gv-results-row gv-results-header");
    for (const t of [rowsAre, "shape", "norm", "status"]) head.append(h("span", "", t));
    table.append(head);
    // The rows are made ROW_CHUNK at a time, the next ones as the table is scrolled
    // near its end (or printed): 5,000 rows in the page cost every frame 50 ms.
    let made = 0;
    more = (upTo = made + ROW_CHUNK) => {
      const end = Math.min(list.length, upTo);
      if (made >= end) return;
      const rowsBefore = rows.length;
      while (made < end) table.append(compactRow(list[made++]));
      if (rows.length !== rowsBefore) rows.sort((a, b) => a[1] - b[1]);
    };
    more();
    table.addEventListener("scroll", () => {
      if (table.scrollTop + table.clientHeight > table.scrollHeight - 400) more();
    });
    el.append(table);
  }

  function fill(data) {
    el.replaceChildren();
    rows.length = 0;
    if (watcher) watcher.disconnect();
    watcher = null;
    more = () => {};
    near.clear();
    stale.clear();
    // A Jacobian trace's answer is the whole Jacobian, one row per pass.
    const jacobian = String(data.method).startsWith("tape.jacobian") && passes > 1;
    el.classList.toggle("gv-results-jacobian", jacobian);
    el.append(h("div", "gv-section-title",
      jacobian ? `Final Jacobian (one ${words.order} per pass, ${passes} passes)` : words.results));
    const list = Array.isArray(data.results) ? data.results : [];
    // a forward pass answers for its targets; a Jacobian, either way, for its xs
    const rowsAre = data.mode === "forward" && !jacobian ? "target" : "x";
    if (!list.length) el.append(h("div", "gv-muted", `no ${rowsAre}s`));
    if (list.length > COMPACT_RESULTS) compact(list, rowsAre);
    else full(list);
    rows.sort((a, b) => a[1] - b[1]);
    shownAt = null;
  }
  // The step last shown: a step changes only the rows given between it and the
  // next (with 5,000 xs, one row a step rather than 5,000).
  let shownAt = null;
  fill(payload);

  return {
    el,
    // The same trace at other values (gv.explore): the rows made anew.
    update: fill,
    // At step k, dim the results the walk has not reached yet.
    show(k) {
      let i = 0;
      let hi = Infinity;
      if (shownAt !== null) {  // only the rows given after one of the two steps and by the other
        const lo = Math.min(k, shownAt);
        hi = Math.max(k, shownAt);
        let top = rows.length;
        while (i < top) {  // the first row given after step lo
          const mid = (i + top) >> 1;
          if (rows[mid][1] > lo) top = mid; else i = mid + 1;
        }
      }
      at = k;
      for (; i < rows.length && rows[i][1] <= hi; i++) {
        const [row, step] = rows[i];
        if (!watcher || near.has(row)) restyle(row, step);
        else stale.add(row);
      }
      shownAt = k;
    },
  };
}

return { createResults };
})();

// ------------------------------------------------------------ viewer/viewer.js

// gradviz step-through viewer: ONE front end for the JupyterLab widget and the HTML report.
//
// An anywidget front-end module: `export default { render }`, where
// render({ model, el }) draws a viewer into `el` and returns a cleanup function.
// The model needs only get / set / save_changes / on / off for these traits:
//   payload              view data (gradviz.views.viewdata.view_data); a new one with
//                        the same "layout" (gv.explore) changes the values in place
//   step                 current step, 0-based; synced both ways
//   show_grad_values     print gradient values (heatmap colours stay)
//   show_forward_values  show forward values on the diagram
//   speed                play speed, steps per second
//   practice_key         optional: where practice mode keeps progress (the report's
//                        content hash, for localStorage); without it, nowhere
//   practice_results     set by a practising viewer at each answer: the results
//                        file's object (practice.js), read by TraceWidget.results()
// In JupyterLab the model is the widget's; the HTML report passes a small shim.
//
// This module puts the viewer together and steps it; each part is a module of
// its own (controls.js, diagram.js, panel.js, results.js, legend.js).  A part
// that follows the step has show(k); a new panel (a practice panel, say) is one
// more such module, made in render() and added to the parts that go() shows.
// User-chosen strings (titles, names, sentences) are always inserted with
// textContent, never parsed as HTML.
//
// Stable CSS classes (tests and users rely on them):
//   .gv-viewer            root; focusable. Keys: Left/Right previous/next,
//                         Home/End first/last, Space play/pause, f presentation.
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
//   .gv-zoombar           the diagram's zoom: .gv-zoom-out, .gv-zoom-level (the
//                         zoom shown, "100%"), .gv-zoom-in, and .gv-zoom: "whole
//                         graph" / back to 100% (keys + - 0); .gv-zoom-note
//                         when the whole graph cannot fit with readable text.
//                         "Whole graph" shows the payload's overview (the
//                         drawing without values) when it has one.
//   .gv-present           button: presentation mode (key f; Escape leaves it)
//   .gv-nav               finding one's way (navigate.js): .gv-crumbs (the open
//                         scopes), .gv-search, .gv-scope-jump, .gv-nav-status
//   .gv-diagram           the diagram container, holding the <svg>; a scope's
//                         box (closed) or border (open) is a button to press
//                         (data-gv-scope="open" / "close"); a node clicked lights
//                         what it depends on (data-gv-dep="up") and what depends
//                         on it ("down"), itself "self", until Escape; a second
//                         click on it goes to its first step.  For the
//                         keyboard and screen readers it is a stop
//                         (role group) named for the step; the current step's
//                         elements are stops inside it (role img, each named by
//                         what it is), Enter or Space picks one as a click does
//   .gv-announce          visually hidden live region: "Step k of n: title.
//                         sentence" once the reader's keys rest; never while playing
//   .gv-pick-note         over the diagram's corner while an element is picked:
//                         which step a second click goes to
//   .gv-step-title .gv-sentence .gv-formula   the step's explanation; the values
//                         they write are .gv-said-value, each followed by a
//                         .gv-said-hidden "(hidden)" shown instead under .gv-hide-grad
//   .gv-arrays            the step's arrays: .gv-array > .gv-heatmap (table)
//   .gv-bookkeeping       pass, ops visited, bytes of gradient held
//   .gv-results           the final gradient for every x: .gv-result rows
//   .gv-legend            the legend
// Root modifier classes: .gv-hide-grad, .gv-hide-forward, .gv-playing,
// .gv-at-end, .gv-zoom-actual (not "whole graph"), .gv-zoom-overview (the
// overview shown), .gv-zoom-clipped (the zoom note shown), .gv-presenting
// (presentation mode: the viewer fills the screen; presentation.js),
// .gv-practicing and .gv-practice-asking (practice mode; practice.js).

// not used by the viewer itself: the report's page calls it for a lesson's exercises

// A step the reader takes is told to screen readers once the keys come to rest:
// this many ms after the last, so that a held arrow key says only where it stopped.

const { h, lifetime, scrollStop, srOnly } = __gv_dom;
const { exactValues } = __gv_arrays;
const { SPEEDS, bindKeys, createControls } = __gv_controls;
const { createDiagram } = __gv_diagram;
const { createExercises } = __gv_exercises;
const { createHandout } = __gv_handout;
const { createPictureTool } = __gv_picture;
const { createLegend } = __gv_legend;
const { createNavigator } = __gv_navigate;
const { createPanel, stepsOf } = __gv_panel;
const { createPractice } = __gv_practice;
const { createPresentation } = __gv_presentation;
const { createResults } = __gv_results;
const { maskTooltips, watchTooltips } = __gv_tooltips;

const ANNOUNCE_MS = 250;

// The viewer's root element: focusable, labelled, with the diagram's CSS.
function viewerRoot(payload) {
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
  return root;
}

// The controls' events: buttons and slider step, the options write the model's traits.
function bindControls(ui, model, life, act) {
  const { listen } = life;
  listen(ui.first, "click", () => act.userGo(0));
  listen(ui.prev, "click", () => act.userGo(act.at() - 1));
  listen(ui.next, "click", () => act.userGo(act.at() + 1));
  listen(ui.last, "click", () => act.userGo(act.last));
  listen(ui.play, "click", act.togglePlay);
  listen(ui.jump, "click", () => act.userGo(ui.firstBad));
  listen(ui.zoom, "click", act.toggleFit);
  listen(ui.zoomIn, "click", act.zoomIn);
  listen(ui.zoomOut, "click", act.zoomOut);
  listen(ui.slider, "input", () => act.userGo(Number(ui.slider.value)));
  listen(ui.speed, "change", () => {
    model.set("speed", Number(ui.speed.value));
    model.save_changes();
    act.setSpeed();
  });
  listen(ui.gradCb, "change", () => {
    model.set("show_grad_values", ui.gradCb.checked);
    model.save_changes();
    act.setToggles();
  });
  listen(ui.fwdCb, "change", () => {
    model.set("show_forward_values", ui.fwdCb.checked);
    model.save_changes();
    act.setToggles();
  });
}

// One function, about 150 lines, because it reads as the viewer's life in order
// (build the parts, step, play, bind, start) around the one current step.
// Returns { refresh(payload), dispose() }.
function mount(model, el) {
  const payload = model.get("payload") || {};
  const steps = stepsOf(payload);
  const N = steps.length;
  const passes = Math.max(1, Number(payload.passes) || 1);
  const life = lifetime();

  const root = viewerRoot(payload);
  const ui = createControls(payload, steps, passes);
  const panel = createPanel(steps, passes, payload.view || {}, payload.mode);
  const results = createResults(payload, passes);
  const legend = createLegend(payload);
  const handout = createHandout(root, payload, steps, life, {
    svg: () => diagram.svg, stepIds: (k) => diagram.stepIds(k), settle: () => diagram.settle() });
  const main = h("div", "gv-main");
  // The box scrolls: a stop of the keyboard, named for the step (nameDiagram).
  const box = scrollStop(h("div", "gv-diagram"), "diagram");
  // Where a screen reader hears the step the reader went to (announce).
  const announcer = srOnly("div", "gv-announce");
  announcer.setAttribute("aria-live", "polite");
  announcer.setAttribute("aria-atomic", "true");
  // What a second click on the picked element does, over the diagram's top
  // corner (placed there when shown: the box moves with the layout).
  const pickNote = h("div", "gv-pick-note");
  pickNote.hidden = true;
  pickNote.setAttribute("role", "status");
  main.append(box, panel.el, pickNote);
  function placePickNote() {
    if (pickNote.hidden) return;
    pickNote.style.top = `${box.offsetTop + 6}px`;
    pickNote.style.left = `${box.offsetLeft + 6}px`;
    pickNote.style.maxWidth = `${Math.max(160, box.clientWidth - 12)}px`;
  }
  // The box moves with the layout (presentation mode, a phone's sentence, a resize).
  if (typeof ResizeObserver !== "undefined") {
    const placer = new ResizeObserver(placePickNote);
    placer.observe(box);
    placer.observe(main);
    life.onDispose(() => placer.disconnect());
  }
  const footer = h("div", "gv-footer");
  footer.append(results.el, legend.el);
  root.append(ui.header, ui.controls, ui.options, main, footer, ui.help, announcer);
  el.append(root);
  // The step shown (-1: none yet) and the play timer (null: not playing), which
  // the parts' hooks read too (a scope view opened as the navigator is made).
  let cur = -1;
  let timer = null;
  const overview = typeof payload.overview === "string" ? payload.overview : null;
  const diagram = createDiagram(box, payload.svg, overview, steps,
    Array.isArray(payload.edges) ? payload.edges : [], life, {
      pick: (k) => {
        pickNote.hidden = true;
        if (k >= 0) userGo(k);
      },
      picked: (k, id) => {
        pickNote.hidden = !id;
        if (!id) return;
        const lit = diagram.selected === id ? "Lit: what it depends on and what depends on it. " : "";
        pickNote.textContent = lit + (k < 0 ? "No step works on it."
          : k === cur ? `Step ${k}, this step, is the first that works on it.`
            : `Click it again to go to step ${k}, the first that works on it (from the keyboard: Enter again).`);
        placePickNote();
      },
      scope: (id, meta) => nav.onScope(id, meta),
      zoom: () => {
        showZoom();
        if (cur >= 0 && timer === null) nameDiagram();
      },
    });
  // Scopes to open and close, search, and where each scope's steps start (navigate.js).
  const nav = createNavigator(payload, steps, {
    diagram, model, life, timeline: ui.timeline, go: (k) => userGo(k), at: () => cur,
    onView: () => { if (practice) practice.rehide(); } });
  ui.options.after(nav.el);
  root.classList.toggle("gv-has-nav", !nav.el.hidden);
  panel.place(nav.note);
  // Practice mode: the panel asks each step's questions before showing its values.
  const practice = payload.view && payload.view.practice
    ? createPractice(root, steps, model.get("practice_key") || null, {
      go: (k) => userGo(k), at: () => cur, last: N - 1, ids: (k) => diagram.stepIds(k),
      focusRoot: () => root.focus({ preventScroll: true }), life,
      trace: { key: String(payload.trace_key || ""), title: String(payload.title || "") },
      // (a widget's Python reads them: TraceWidget.results())
      report: (results) => {
        model.set("practice_results", results);
        model.save_changes();
      } })
    : null;
  if (practice) panel.place(practice.el);
  // (in practice, a gradient's hover text never gives its values away)
  watchTooltips(box, life, () => !ui.gradCb.checked || !!practice);
  exactValues(root, life);
  const present = createPresentation(root, diagram, life);
  ui.zoom.parentNode.after(present.button); // after the zoom bar, in the options row
  present.button.after(handout.el); // then print, before the zoom note's line
  const pictureTool = createPictureTool(root, payload, steps, life, {
    svg: () => diagram.svg, stepIds: (k) => diagram.stepIds(k), settle: () => diagram.settle() }, () => cur);
  handout.el.after(pictureTool.el); // then the current step's picture

  // ---------------------------------------------------------------- stepping

  function go(k, sync = true) {
    if (!N) return;
    k = Math.round(Number(k));
    if (!Number.isFinite(k)) return;
    k = Math.max(0, Math.min(N - 1, k));
    if (k === cur) return;
    cur = k;
    diagram.unpick();
    diagram.show(k);
    const s = steps[k];
    root.dataset.step = String(k);
    ui.show(k, s);
    root.classList.toggle("gv-at-end", k === N - 1);
    root.classList.toggle("gv-step-nonfinite", !!s.nonfinite);
    panel.show(k);
    nav.show(k);
    results.show(k);
    if (practice) practice.show(k);
    diagram.follow();
    if (timer === null) nameDiagram();
    if (sync && model.get("step") !== k) {
      model.set("step", k);
      model.save_changes();
    }
  }

  function stop() {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
      // (where play stopped: its name was left alone while it played)
      nameDiagram();
      announce();
    }
    root.classList.remove("gv-playing");
    ui.setPlaying(false);
  }

  function play() {
    if (N < 2) return;
    if (cur >= N - 1) go(0);
    const speed = Number(model.get("speed")) || 1;
    root.classList.add("gv-playing");
    ui.setPlaying(true);
    if (timer !== null) clearInterval(timer);
    timer = setInterval(() => {
      if (cur >= N - 1) stop();
      else go(cur + 1);
      if (cur >= N - 1) stop();
    }, 1000 / Math.max(0.05, speed));
  }

  const togglePlay = () => (timer === null ? play() : stop());
  // On a phone the controls stay at the top of the screen while the page
  // scrolls (stepper.css makes them sticky): a step the reader takes brings its
  // title and sentence back to just under them if the page had left them out of
  // view (scrolled past, or below the screen's bottom).
  function keepStepInReach() {
    if (getComputedStyle(ui.controls).position !== "sticky") return;
    const title = root.querySelector(".gv-step-title");
    const bar = ui.controls.getBoundingClientRect();
    const top = title.getBoundingClientRect().top;
    if (top >= bar.bottom && top <= window.innerHeight - 96) return;
    title.style.scrollMarginTop = `${Math.ceil(bar.height) + 6}px`;
    title.scrollIntoView({ block: "start" });
  }
  const userGo = (k) => { stop(); go(k); keepStepInReach(); announce(); };

  // The diagram box's name: short, for the step ("diagram of MLP: 9 nodes; step 4
  // works on MatMul and Sum"), not every label of the drawing.  Left alone while
  // playing, so that a screen reader on the box is not told of every frame.
  const diagramTitle = String(payload.title || "the trace").slice(0, 60);
  function nameDiagram() {
    if (cur >= 0) box.setAttribute("aria-label", `diagram of ${diagramTitle}: ${diagram.summary(cur)}`);
  }

  // "Step k of n: title. sentence", as the panel shows them (what it hides, it
  // hides here too: a value hidden, or in practice the sentence, whose place the
  // question takes), ANNOUNCE_MS after the reader's last step; nothing while
  // playing, and the step where play stopped.
  let announceTimer = 0;
  function announce() {
    clearTimeout(announceTimer);
    announceTimer = setTimeout(() => {
      announceTimer = 0;
      if (timer !== null || cur < 0) return;
      // (innerText of an element not rendered is all its text: hidden values too)
      const shown = [".gv-step-title", ".gv-sentence", ".gv-question-prompt"]
        .map((cls) => root.querySelector(cls))
        .filter((e) => e && (e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0))
        .map((e) => e.innerText.replace(/\s+/g, " ").trim().replace(/:$/, "").replace(/([^.?!])$/, "$1."));
      announcer.textContent = `Step ${cur} of ${N - 1}: ${shown.join(" ")}`;
    }, ANNOUNCE_MS);
  }
  life.onDispose(() => clearTimeout(announceTimer));

  function setToggles() {
    const g = model.get("show_grad_values") !== false;
    const f = model.get("show_forward_values") !== false;
    ui.gradCb.checked = g;
    ui.fwdCb.checked = f;
    root.classList.toggle("gv-hide-grad", !g);
    root.classList.toggle("gv-hide-forward", !f);
    maskTooltips(box, !g || !!practice, !f);
  }

  function setSpeed() {
    const v = Number(model.get("speed")) || 1;
    let best = SPEEDS[0];
    for (const s of SPEEDS) if (Math.abs(s - v) < Math.abs(best - v)) best = s;
    ui.speed.value = String(best);
    if (timer !== null) play();
  }

  function showZoom() {
    const z = diagram.zoom;
    // ("whole graph" may just have inserted the overview, with its own tooltips)
    if (z && z.overview) maskTooltips(box, !ui.gradCb.checked || !!practice, !ui.fwdCb.checked);
    root.classList.toggle("gv-zoom-actual", !!z && !z.fit);
    root.classList.toggle("gv-zoom-overview", !!z && z.overview);
    root.classList.toggle("gv-zoom-clipped", !!z && z.clipped);
    ui.showZoom(z);
  }

  const toggleFit = () => (diagram.zoom && diagram.zoom.fit ? diagram.actualSize() : diagram.fitWhole());

  // ---------------------------------------------------------------- events

  // In presentation mode + and - size all of the text, the diagram's and the panel's.
  const zoomIn = () => present.larger() || diagram.zoomIn();
  const zoomOut = () => present.smaller() || diagram.zoomOut();
  bindControls(ui, model, life, { userGo, togglePlay, toggleFit, zoomIn, zoomOut,
    setSpeed, setToggles, at: () => cur, last: N - 1 });
  // Clicking anywhere that is not a control gives the viewer keyboard focus.
  life.listen(root, "pointerdown", (e) => {
    if (!e.target.closest("button, input, select, label")) {
      setTimeout(() => root.focus({ preventScroll: true }), 0);
    }
  });
  bindKeys(root, ui.slider, life, {
    next: () => userGo(cur + 1),
    prev: () => userGo(cur - 1),
    first: () => userGo(0),
    last: () => userGo(N - 1),
    togglePlay,
    zoomIn,
    zoomOut,
    toggleFit,
    togglePresent: present.toggle,
    leavePresent: present.leave,
    clearSelection: () => diagram.clearSelection(),
    toAnswer: () => !!practice && practice.focusAnswer(),
  });

  const onStep = () => go(model.get("step"), false);
  model.on("change:step", onStep);
  model.on("change:show_grad_values", setToggles);
  model.on("change:show_forward_values", setToggles);
  model.on("change:speed", setSpeed);

  // ---------------------------------------------------------------- start

  setToggles();
  setSpeed();
  showZoom();
  if (N) {
    const k0 = Number(model.get("step")) || 0;
    go(Math.max(0, Math.min(N - 1, k0)), k0 !== Math.max(0, Math.min(N - 1, k0)));
    // The view option font_size: the diagram's smallest text at that many px.
    const fontSize = Number(payload.view && payload.view.font_size);
    if (fontSize > 0) diagram.setTextSize(fontSize);
  } else {
    root.classList.add("gv-no-steps");
    ui.disable();
    panel.empty("This trace has no steps: nothing depends on the xs.");
  }

  // For tests and the benchmark: drive and inspect this viewer from the page.
  root.gvViewer = {
    go: (k) => go(k),
    flush: () => diagram.flush(),
    // Whether the diagram box is still panning to the step (tests wait for it).
    get moving() { return diagram.moving; },
    get zoom() { return diagram.zoom; },
    setTextSize: (px) => diagram.setTextSize(px),
    get textSize() { return diagram.textSize; },
    settle: () => diagram.settle(),
    get stale() { return diagram.stale; },
    get step() { return cur; },
    steps: N,
    elements: diagram.elements,
    // Find a tensor, op or scope by name (as the search box does); open scope view `key`.
    find: (text) => nav.find(text),
    openScope: (key) => nav.open(key),
    get scopeView() { return nav.view; },
    get selected() { return diagram.selected; },
    select: (id) => diagram.select(id),
    // The first step that works on element id of the drawing (-1: none does).
    firstStep: (id) => diagram.firstStep(id),
    // Step k's elements in the drawing shown (a scope view has its own).
    stepIds: (k) => diagram.stepIds(k),
    // Build the handout of the steps chosen ("all", "1, 3, 5-7", [1, 3]) without printing.
    handout: (spec) => handout.build(spec),
    // The current step's picture for a slide, as SVG text (what "picture" saves).
    picture: () => pictureTool.picture(),
  };

  // A new payload of the same layout (gv.explore: the same program at other
  // values) takes the place of this one where the viewer stands: the diagram
  // keeps its place and zoom, the step stays, and the numbers and colours change.
  // False when it is not of the same layout.
  function refresh(next) {
    const nextSteps = stepsOf(next);
    if (!payload.layout || next.layout !== payload.layout || nextSteps.length !== N
        || nextSteps.some((s, k) => !!s.nonfinite !== !!steps[k].nonfinite)
        || !diagram.retext(next.svg, next.overview)) return false;
    steps.splice(0, N, ...nextSteps);
    results.update(next);
    if (cur >= 0) {
      ui.show(cur, steps[cur]);
      panel.show(cur);
      results.show(cur);
    }
    setToggles();
    return true;
  }

  function dispose() {
    stop();
    model.off("change:step", onStep);
    model.off("change:show_grad_values", setToggles);
    model.off("change:show_forward_values", setToggles);
    model.off("change:speed", setSpeed);
    life.dispose();
    root.remove();
  }

  return { refresh, dispose };
}

// anywidget's entry: the viewer in `el`, and what removes it.  A new payload is
// shown in place when it has the same layout as the one shown, else by a viewer
// made anew (at the same step: the model keeps it).
function render({ model, el }) {
  let viewer = mount(model, el);
  const onPayload = () => {
    if (viewer.refresh(model.get("payload") || {})) return;
    viewer.dispose();
    viewer = mount(model, el);
  };
  model.on("change:payload", onPayload);
  return () => {
    model.off("change:payload", onPayload);
    viewer.dispose();
  };
}

export default { render };
