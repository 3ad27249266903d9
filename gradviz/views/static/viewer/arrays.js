// The array panels: one array as a small heatmap table with its values printed,
// or, when large, its min / mean / max with the range drawn against zero.

import { h } from "./dom.js";
import { formatNumber, heatColour, heatTextLight, num, quiet, shapeText, sizeOf } from "./format.js";

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
export function exactValues(root, life) {
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
export function imageAxes(shape, layout) {
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
export function arrayView(arr, extraClass) {
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
