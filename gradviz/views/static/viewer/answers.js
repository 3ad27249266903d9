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

import { formatNumber, shapeText, sizeOf } from "./format.js";

// The longest a typed number or shape may be: anything longer is refused before
// it is read, and every pattern below runs in time linear in what it reads.
export const MAX_TYPED = 100;

function typed(text, what) {
  const t = String(text ?? "");
  if (t.length > MAX_TYPED) throw new Error(`That is ${t.length} characters; ${what} is at most ${MAX_TYPED}.`);
  return t.trim();
}

// A shape as the learner types it: "(2, 1)", "2,1", "[3]", "2x3", "()" or "scalar".
// Throws an Error saying what is accepted.
export function parseShape(text) {
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
export function parseNumber(text) {
  const t = typed(text, "a number").replace(/\u2212/g, "-");
  if (!t) return NaN;
  const frac = FRACTION.exec(t);
  if (frac) return Number(frac[1]) / Number(frac[2]);
  return NUMBER.test(t) ? Number(t) : NaN;
}

export function flatten(v) {
  return Array.isArray(v) ? v.flatMap(flatten) : [Number(v)];
}

// Two lists (shapes, names) equal item by item.
export const sameList = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

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
export function close(got, want, rtol, scale = largest(want), res = null) {
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
export function checkShape(q, shape) {
  if (sameList(shape, q.shape)) return { verdict: "right", message: `Right: ${hasShape(q.target, shape)}.` };
  for (const w of q.wrong || []) {
    if (w.kind !== "wrong_shape" && sameList(w.shape, shape)) return named(w);
  }
  return wrongShape(q, shape);
}

// The elements of a question's focus, from a flat array of its whole shape.
const picked = (q, flat) => q.focus.map((at) => flat[flatIndex(at, q.shape)]);

// Whether an answer of `shape` gives the focus's elements (not the whole array).
export function focused(q, shape) {
  if (!q.focus || sameList(shape, q.shape)) return false;
  return sameList(shape, [q.focus.length]) || (shape.length === 0 && q.focus.length === 1);
}

// What an answer gives: "dL/dW", or the focus's elements, "dL/dW[0,1], dL/dW[2,3]".
export function asked(q) {
  return q.focus ? q.focus.map((at) => `${q.target}[${at.join(",")}]`).join(", ") : q.target;
}

// The answer { shape, values } checked: right, a named slip, a wrong shape, or
// "not yet" with hint `hints` (0: the formula, 1 or more: the answer).  For a
// question with a focus, an answer of shape [k] (or [] for one) is its elements.
export function checkAnswer(q, answer, hints = 0) {
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
