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

import { button, formTool, h, sayWithValues } from "./dom.js";
import { arrayView } from "./arrays.js";
import { stepOf } from "./format.js";
import { FEW_ARRAYS, MANY_ARRAYS, showSource } from "./panel.js";

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
export function parseChoice(spec, n, here = null, count = 0, stepsOf = () => undefined) {
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
export function parseSteps(spec, n) {
  return parseChoice(spec, n)[0][1];
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
// edges, clusters), in the drawing's own units: [x0, y0, x1, y1].  `nodes` are
// the indexes of the parts that are nodes; `labels[i]` the boxes of part i's
// texts when it is an edge.
export function measureDrawing(svg) {
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
export function croppedDrawing(m, crop, first, touched, k, whole = false) {
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
export function createHandout(root, payload, steps, life, drawn) {
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
