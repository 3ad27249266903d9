// The handout: chosen steps printed one to a page, each with the part of the
// diagram around the step (in the state the viewer shows at that step), its
// title, sentence and formula.  Here too: the print button and its form, and
// the list of steps they accept ("all", or "0, 3, 5-7", numbered as the counter).
//
// The handout is a .gv-handout element, a child of <body>, that only print
// shows: while one exists <body> has .gv-printing-handout, and the print rules
// (stepper.css) then hide everything else on the page, the JupyterLab around a
// widget as well as a report.  It goes once printed (afterprint).
//
// Stable CSS classes (tests and users rely on them):
//   .gv-print             the print button, last in the options row
//   .gv-handout-form      its form: .gv-handout-steps (the list typed),
//                         .gv-handout-go ("Print"), .gv-handout-cancel, and
//                         .gv-handout-message (what was wrong with the list)
//   .gv-handout           the handout, a child of <body>; carries the viewer's
//                         .gv-hide-grad / .gv-hide-forward
//   .gv-handout-step      one step's block, data-step="k" (0-based): .gv-handout-counter,
//                         .gv-handout-title, .gv-handout-svg (its elements' ids
//                         in data-gv-id), .gv-handout-sentence, .gv-handout-formula

import { button, formTool, h, sayWithValues } from "./dom.js";
import { stepOf } from "./format.js";

const STATE_CLASSES = ["gv-pending", "gv-done", "gv-active"];
// Around a step's elements, this much of the diagram (in its own units, pt)
// is kept for context; a crop smaller than MIN_CROP is widened about its
// centre, so that a lone node is not printed a page wide.
const CONTEXT = 72;
const MIN_CROP = [640, 400];
const HOW = 'write "all", or step numbers and ranges such as 0, 3, 5-7 (numbered from 0, as on screen)';

const stepsIn = (n) => `this trace has ${n === 1 ? "one step, step 0" : `${n} steps, 0 to ${n - 1}`}`;

function checkStep(k, n) {
  if (k < 0 || k >= n) throw new Error(`step ${k} does not exist: ${stepsIn(n)}`);
  return k;
}

// The 0-based steps `spec` chooses, in order and once each, out of n steps:
// "all", a list such as "0, 3, 5-7", or an array of step numbers, numbered from 0
// as the screen numbers them.
// Anything else throws an Error whose message says what is accepted.
export function parseSteps(spec, n) {
  if (!n) throw new Error("this trace has no steps to print");
  const chosen = new Set();
  if (Array.isArray(spec)) {
    for (const v of spec) {
      if (!Number.isInteger(v)) throw new Error(`${JSON.stringify(v)} is not a step number: ${HOW}`);
      chosen.add(checkStep(v, n));
    }
  } else {
    const text = String(spec ?? "").trim().toLowerCase();
    if (text === "all") return Array.from({ length: n }, (_, k) => k);
    const items = text.replace(/\s*[-\u2013]\s*/g, "-").split(/[\s,;]+/).filter(Boolean);
    for (const item of items) {
      const m = /^(\d+)(?:-(\d+))?$/.exec(item);
      if (!m) throw new Error(`"${item}" is not a step or a range of steps: ${HOW}`);
      const a = Number(m[1]), b = m[2] === undefined ? a : Number(m[2]);
      if (b < a) throw new Error(`${item} runs backwards: write ${b}-${a}`);
      checkStep(a, n);
      checkStep(b, n);
      for (let k = a; k <= b; k++) chosen.add(k);
    }
  }
  if (!chosen.size) throw new Error(`no steps chosen: ${HOW}`);
  return Array.from(chosen).sort((x, y) => x - y);
}

// The step each element id is first touched at: the viewer shows an element
// pending before that step, active at a step that touches it, done after.
export function firstSteps(idsOf) {
  const first = new Map();
  idsOf.forEach((ids, k) => {
    for (const id of ids) if (!first.has(id)) first.set(id, k);
  });
  return first;
}

// A copy of the viewer's drawing, laid out at 1 px a unit out of sight, and the
// box of every element with an id and of every part of the top group (nodes,
// edges, clusters), in the drawing's own units: [x0, y0, x1, y1].
export function measureDrawing(svg) {
  const copy = svg.cloneNode(true);
  copy.removeAttribute("style");
  copy.removeAttribute("class");
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
  const parts = top ? Array.from(top.children, boxOf) : [];
  stage.remove();
  copy.removeAttribute("style");
  return { copy, top, whole, boxes, parts };
}

// The part of the drawing to print for the elements `ids`: their box, CONTEXT
// more all round, at least MIN_CROP, within the drawing.
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
  return out;
}

const overlaps = (a, b) => !a || (a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]);

// The drawing cropped to `crop`, holding only the parts that show in it, each
// element a step touches in its state at step k.  Ids move to data-gv-id: the
// viewer's own drawing keeps them.
export function croppedDrawing(m, crop, first, touched, k) {
  const svg = m.copy.cloneNode(false);
  for (const child of m.copy.children) {
    if (child !== m.top) svg.append(child.cloneNode(true));
    else {
      const g = child.cloneNode(false);
      Array.from(child.children).forEach((part, i) => {
        if (!crop || overlaps(m.parts[i], crop)) g.append(part.cloneNode(true));
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

// One step's block: where it is, what it did, the diagram around it.
function stepBlock(payload, steps, k, drawing) {
  const s = steps[k];
  const block = h("section", "gv-handout-step");
  block.dataset.step = String(k);
  const head = h("div", "gv-handout-head");
  head.append(h("span", "gv-handout-counter", `${stepOf(k, steps.length, "Step")} \u00b7 ${s.kind ?? ""}`),
    h("span", "gv-handout-trace", payload.title || ""));
  block.append(head, h("h2", "gv-handout-title", s.title ?? ""));
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
  return block;
}

// The print button of the options row and its form.  onPrint(text) builds the
// handout and prints it; it returns an error message, or null when it printed.
function printTool(onPrint, life, n) {
  const open = button("gv-print", "print", "print a handout of the steps");
  const input = h("input", "gv-handout-steps");
  input.type = "text";
  input.value = "all";
  input.placeholder = "all, or 0, 3, 5-7";
  input.setAttribute("aria-label", "steps to print");
  const label = h("label", "gv-handout-label");
  // The numbers the list takes, as the counter shows them: from 0.
  label.append(h("span", null, n > 1 ? `steps 0\u2013${n - 1} ` : "steps "), input);
  const go = h("button", "gv-btn gv-handout-go", "Print");
  go.type = "submit";
  const cancel = button("gv-handout-cancel", "cancel", "close without printing");
  const { el, form, close, say } = formTool("gv-handout", open, "form", [label, go, cancel],
    () => { input.focus(); input.select(); }, life);
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
// build(spec) makes the handout of the steps `spec` chooses and returns how many
// blocks it has (it throws, saying what is accepted, for a bad spec).
// `drawn` is the drawing shown (a scope opened has its own): drawn.svg() its
// <svg> with values, drawn.stepIds(k) the elements step k touches in it, which
// the handout crops about and lights, and drawn.settle() brings all of it up to
// the step before any print (on screen a long jump restyles only what is in
// view, on paper all of it shows).
export function createHandout(root, payload, steps, life, drawn) {
  let doc = null;

  function remove() {
    if (doc) doc.remove();
    doc = null;
    if (!document.querySelector("body > .gv-handout")) document.body.classList.remove("gv-printing-handout");
  }

  function build(spec) {
    const chosen = parseSteps(spec, steps.length);
    const svg = drawn.svg();
    const m = svg ? measureDrawing(svg) : null;
    const idsOf = steps.map((_, k) => drawn.stepIds(k));
    const first = firstSteps(idsOf);
    const next = h("div", "gv-handout");
    // The value toggles as the reader left them: hidden values stay hidden on paper.
    for (const c of ["gv-hide-grad", "gv-hide-forward"]) next.classList.toggle(c, root.classList.contains(c));
    for (const k of chosen) {
      const ids = idsOf[k];
      const drawing = m && croppedDrawing(m, cropBox(ids, m), first, new Set(ids), k);
      next.append(stepBlock(payload, steps, k, drawing));
    }
    remove();
    doc = next;
    document.body.append(doc);
    document.body.classList.add("gv-printing-handout");
    return chosen.length;
  }

  const el = printTool((text) => {
    try {
      build(text);
    } catch (err) {
      return err.message;
    }
    window.print();
    return null;
  }, life, steps.length);
  life.listen(window, "beforeprint", () => drawn.settle());
  life.listen(window, "afterprint", remove);
  life.onDispose(remove);
  return { el, build };
}
