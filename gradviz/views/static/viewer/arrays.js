// The array panels: one array as a small heatmap table with its values printed,
// or, when large, its min / mean / max with the range drawn against zero.

import { h } from "./dom.js";
import { formatNumber, heatColour, num, quiet, shapeText, sizeOf } from "./format.js";

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

// Past this many values an array is shown by its summary.
const MAX_CELLS = 144;

// One array as a small heatmap table with values printed (or a summary when large).
export function arrayView(arr, extraClass) {
  const fig = h("figure", "gv-array" + (extraClass ? " " + extraClass : ""));
  const cap = h("figcaption", "gv-array-caption");
  cap.append(h("span", "gv-array-label", arr.label ?? ""));
  cap.append(h("span", "gv-array-shape", `${shapeText(arr.shape)} ${arr.dtype ?? ""}`));
  if (arr.nonfinite) cap.append(h("span", "gv-chip gv-chip-warn", "NaN/Inf"));
  fig.append(cap);
  const size = Array.isArray(arr.shape) ? sizeOf(arr.shape) : 0;
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
        td.append(h("span", "gv-cell-value", formatNumber(quiet(v, maxAbs))));
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
