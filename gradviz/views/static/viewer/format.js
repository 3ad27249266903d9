// Numbers, byte counts, shapes and heatmap colours, written as the diagram and
// the formulas write them (gradviz.views.explain).

// How a step is named to people, on screen, in links and on paper: by its
// number in trace.steps, from 0 (the seed, usually) to the last, as
// gv.show(trace, step=k) and trace.to_svg(step=k) take it.
export const stepOf = (k, n, word = "step") => `${word} ${k} / ${n - 1}`;
// What a pass carries, in its mode's words: a backward pass carries gradients back from
// the ys, a forward pass (payload.mode "forward") tangents on from the primals.
export function modeWords(mode) {
  return mode === "forward"
    ? { carried: "tangent", pass: "forward pass", results: "Final tangents", order: "column",
      flowed: "done: its tangent is computed" }
    : { carried: "gradient", pass: "backward pass", results: "Final gradients", order: "row",
      flowed: "done: gradient has flowed here" };
}

export const STEP_NUMBERS = "steps are numbered from 0, as trace.steps and gv.show(trace, step=k) number them";

// A number from the payload: finite numbers arrive as numbers, NaN/Inf as strings.
export function num(v) {
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

// A value that is float noise beside its array's largest magnitude prints as 0,
// as gradviz.views.explain prints it: a mean of -2.5e-09 among values near 0.3
// is 0.  (The cell's hover text keeps the value as stored.)
export const NOISE = 1e-6;

export function quiet(v, scale) {
  const x = num(v);
  return Number.isFinite(x) && Math.abs(x) <= NOISE * scale ? 0 : v;
}

export function formatBytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "?";
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)} MB`;
  return `${(n / 1e9).toFixed(1)} GB`;
}

// How many values an array of `shape` holds (1 for a scalar's []).
export const sizeOf = (shape) => shape.reduce((a, b) => a * b, 1);

// A shape as text, as the words and the diagram write it: "(2,3)", and a scalar's is "scalar", not "()".
export function shapeText(shape) {
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

export function heatColour(t) {
  const [r, g, b] = heatRgb(t);
  return `rgb(${r}, ${g}, ${b})`;
}

// Whether a cell of colour heatColour(t) takes white text rather than black:
// the one of the two with more contrast, which is always at least 4.58:1 (the
// two tie at a relative luminance of 0.179; WCAG 2.1's formula).
export function heatTextLight(t) {
  const linear = heatRgb(t).map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2] < 0.179;
}
