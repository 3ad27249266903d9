// Checking a learner's answer against a question of the payload, in the page:
// the same rules as gradviz.views.practice.model.Question.check, so that the
// widget and the offline report say what `gv.exercise(...).check(...)` says.
// The shape first (a wrong shape that is a named slip's shape is that slip;
// the right numbers laid out another way are "wrong_shape"), then the values,
// each within rtol of its own size plus rtol of the largest.
//
// An answer here is { shape: [2, 1], values: [flat numbers] }; a question is
// the payload's (see gradviz.views.viewdata.trace_data).

import { formatNumber, shapeText, sizeOf } from "./format.js";

// A shape as the learner types it: "(2, 1)", "2,1", "[3]", "2x3", "()" or "scalar".
// Throws an Error saying what is accepted.
export function parseShape(text) {
  const t = String(text ?? "").trim().toLowerCase();
  if (t === "scalar" || t === "()" || t === "[]") return [];
  const inner = t.replace(/^[([]\s*/, "").replace(/\s*[)\]]$/, "");
  const parts = inner.split(/\s*[,x\u00d7]\s*|\s+/).filter((p) => p !== "");
  if (!t || !parts.length || !parts.every((p) => /^\d+$/.test(p))) {
    throw new Error("Write a shape as sizes, such as (2, 3) or (3,), or scalar.");
  }
  return parts.map(Number);
}

// A number as the learner types it: "1.75", "-2", "\u22122" (a minus sign), "1e-3", "3/4".
// NaN when it is not one.
export function parseNumber(text) {
  const t = String(text ?? "").trim().replace(/\u2212/g, "-");
  if (!t) return NaN;
  const frac = /^([-+]?[\d.]+(?:e[-+]?\d+)?)\s*\/\s*([\d.]+(?:e[-+]?\d+)?)$/i.exec(t);
  if (frac) return Number(frac[1]) / Number(frac[2]);
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Number(t) : NaN;
}

export function flatten(v) {
  return Array.isArray(v) ? v.flatMap(flatten) : [Number(v)];
}

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

// Every element within rtol of its own size plus rtol of the largest wanted one.
export function close(got, want, rtol) {
  if (got.length !== want.length) return false;
  const scale = want.reduce((m, w) => Math.max(m, Math.abs(w)), 0);
  return got.every((g, i) => Math.abs(g - want[i]) <= rtol * (Math.abs(want[i]) + scale) + 1e-12);
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
export function flatIndex(at, shape) {
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

// The shape alone, asked before the values.
export function checkShape(q, shape) {
  if (sameShape(shape, q.shape)) return { verdict: "right", message: `Right: ${hasShape(q.target, shape)}.` };
  for (const w of q.wrong || []) {
    if (w.kind !== "wrong_shape" && sameShape(w.shape, shape)) return named(w);
  }
  return wrongShape(q, shape);
}

// The answer { shape, values } checked: right, a named slip, a wrong shape, or
// "not yet" with hint `hints` (0: the formula, 1 or more: the answer).  For a
// question with a focus, an answer of shape [] is that one element.
export function checkAnswer(q, answer, hints = 0) {
  const got = answer.values.map(Number);
  let right = flatten(q.answer);
  let rightShape = q.shape;
  let wrong = (q.wrong || []).map((w) => ({ ...w, flat: flatten(w.values) }));
  let target = q.target;
  if (q.focus && answer.shape.length === 0 && q.shape.length) {
    const i = flatIndex(q.focus, q.shape);
    right = [right[i]];
    rightShape = [];
    wrong = wrong.filter((w) => sameShape(w.shape, q.shape)).map((w) => ({ ...w, shape: [], flat: [w.flat[i]] }));
    target = `${q.target}[${q.focus.join(",")}]`;
  }
  if (!sameShape(answer.shape, rightShape)) {
    for (const w of wrong) if (sameShape(w.shape, answer.shape) && close(got, w.flat, q.rtol)) return named(w);
    if (got.length === right.length &&
        (close(got, right, q.rtol) || close(transposed(got, answer.shape), right, q.rtol))) {
      return named({ kind: "wrong_shape", title: "the right numbers in the wrong shape",
        why: `A gradient has the shape of what it is the gradient of: ${hasShape(q.target, rightShape)}.` });
    }
    return wrongShape(q, answer.shape);
  }
  if (close(got, right, q.rtol)) {
    const said = rightShape.length === 0 && q.shape.length
      ? `${target} = ${formatNumber(right[0])}` : (q.hints || [])[1] || `${target}`;
    return { verdict: "right", message: `Right: ${said}.` };
  }
  for (const w of wrong) if (sameShape(w.shape, answer.shape) && close(got, w.flat, q.rtol)) return named(w);
  const hint = (q.hints || [])[Math.min(Math.max(Math.trunc(hints) || 0, 0), 1)] || null;
  return { verdict: "not_yet", message: "Not yet: that is none of the usual slips.", hint };
}
