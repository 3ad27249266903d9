// The final gradients: one row per x (a compact table past COMPACT_RESULTS xs,
// each row opening to its array).  Until the walk reaches the step that gives a
// result, its row is dimmed and says when it will be ready.

import { h, sayWithValues, scrollStop } from "./dom.js";
import { arrayView } from "./arrays.js";
import { formatNumber, modeWords, shapeText } from "./format.js";

// Past this many xs the final gradients are a compact table, one line per x.
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

export function createResults(payload, passes) {
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
