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

import { button, download, formTool, h, slug } from "./dom.js";
import { arrayView, imageAxes } from "./arrays.js";
import { asked, checkAnswer, checkShape, flatIndex, parseNumber, parseShape } from "./answers.js";
import { sizeOf } from "./format.js";

// The most values a grid of inputs takes (a question asks about at most 64).
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
export function createPractice(root, steps, key, act) {
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
