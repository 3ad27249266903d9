// The step panel beside the diagram: what the step did (title, sentence,
// formula), its arrays, and the bookkeeping (pass, ops visited, gradient bytes
// held, with a sparkline of the bytes over the whole pass), which the reader
// can fold away: a <details> made once, so it stays as they left it from step
// to step, with the step's bytes still in its one-line summary.

import { h, sayWithValues, svgElement } from "./dom.js";
import { arrayView } from "./arrays.js";
import { formatBytes, modeWords } from "./format.js";

// Bytes of gradient held over the whole pass, with a marker line to move.
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
export const FEW_ARRAYS = 4;
export const MANY_ARRAYS = 9;

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
export function stepsOf(payload) {
  const steps = Array.isArray(payload.steps) ? payload.steps : [];
  const table = Array.isArray(payload.sources) ? payload.sources : [];
  for (const s of steps) {
    if (typeof s.source === "number") s.source = table[s.source] ?? null;
  }
  return steps;
}

// The step's line of code, or nothing (a trace recorded without, or shown with source=False).
export function showSource(el, src) {
  el.hidden = !src || typeof src !== "object";
  if (el.hidden) return;
  const place = h("span", "gv-source-place", src.place ?? "");
  if (src.code) {
    el.replaceChildren("from ", h("code", "gv-source-code", src.code), " \u00b7 ", place);
  } else {
    el.replaceChildren("made at ", place);
  }
}

export function createPanel(steps, passes, view = {}, mode = "reverse") {
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
