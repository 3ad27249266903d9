// A lesson's exercises in the offline report: each asked as the notebook asks it,
// answered in the page, and checked as gradviz.views.practice checks it.
//
// An exercise is the JSON of gradviz.views.practice.Exercise.to_dict: a lesson's
// question ({ form: "value" | "shape" | "count" | "choice" | "nones", answer, slips,
// right, not_yet, hints, ... }, every word of its feedback worked out in Python) or a
// step's ({ form: "step", ask, question }, checked by answers.js as the practice
// panel checks it).  The page only compares answers and shows the words it was given.
//
// DOM: .gv-exercise (one per exercise, data-form) holding .gv-exercise-prompt, a
// .gv-exercise-given table, the answer (.gv-exercise-input, or .gv-exercise-option
// radio buttons / check boxes), .gv-exercise-check and a .gv-feedback.

import { h } from "./dom.js";
import { checkAnswer, close, flatten, MAX_TYPED, parseNumber, parseShape, sameList } from "./answers.js";
import { formatNumber, shapeText } from "./format.js";

// Nested lists of numbers as typed: "6.62", "[0.5, 0.25, 1/6]", "[[1], [2]]".
// Returns { shape, values }; throws an Error saying what is accepted.
export function parseArray(text) {
  const t = String(text ?? "").trim();
  if (t.length > MAX_TYPED * 40) throw new Error("That is too long for an answer.");
  const tokens = (t.match(/\[|\]|,|[^[\],]+/g) || []).map((s) => s.trim()).filter(Boolean);
  let at = 0;
  const bad = () => new Error("Write a number, such as 0.25 or 1/4, or a list of them, such as [1, 2] or [[1], [2]].");
  function value() {
    if (tokens[at] === "[") {
      at += 1;
      const items = [];
      while (tokens[at] !== "]") {
        if (at >= tokens.length) throw bad();
        items.push(value());
        if (tokens[at] === ",") at += 1;
        else if (tokens[at] !== "]") throw bad();
      }
      at += 1;
      return items;
    }
    const n = parseNumber(tokens[at++] ?? "");
    if (!Number.isFinite(n)) throw bad();
    return n;
  }
  const v = value();
  if (at !== tokens.length) throw bad();
  const shape = [];
  for (let level = v; Array.isArray(level); level = level[0]) shape.push(level.length);
  const values = flatten(v);
  if (values.length !== shape.reduce((a, b) => a * b, 1)) throw new Error("Every row of the list must be as long as the others.");
  return { shape, values };
}

// A lesson's question checked: { verdict, message, kind?, hint? }, as
// gradviz.views.practice.asks.LessonQuestion.check says it.
export function checkLesson(q, got, hints) {
  const same = (a, b) => {
    if (q.form === "value") return sameList(a.shape, b.shape) && close(a.values, b.values.map(Number), q.rtol);
    if (q.form === "shape") return sameList(a, b);
    if (q.form === "nones") return sameList([...a].sort(), [...b].sort());
    return a === b;
  };
  if (same(got, q.answer)) return { verdict: "right", message: q.right };
  for (const s of q.slips) if (same(got, s.answer)) return { verdict: "misconception", kind: s.kind, message: s.message };
  if (q.form === "value" && !sameList(got.shape, q.answer.shape)) {
    return { verdict: "shape", message: `${q.shape_message} not ${got.shape.length ? shapeText(got.shape) : "a scalar"}.`, hint: q.hints[0] };
  }
  return { verdict: "not_yet", message: q.not_yet, hint: q.hints[Math.min(hints, 1)] };
}

// Nested lists of numbers, as the notebook prints them: [[1], [2]].
const nested = (v) => (Array.isArray(v) ? `[${v.map(nested).join(", ")}]` : formatNumber(v));

function givenTable(given) {
  const table = h("table", "gv-exercise-given");
  for (const g of given) {
    const row = h("tr");
    const text = nested(g.values);
    row.append(h("td", null, g.label), h("td", "gv-exercise-values", text), h("td", "gv-exercise-shape", shapeText(g.shape)));
    table.append(row);
  }
  return table;
}

// The answer's controls: a text box, radio buttons (choice) or check boxes (nones);
// read() gives the answer in the form's terms or throws an Error saying why not.
function answerInput(ex, n) {
  const q = ex.form === "step" ? ex.question : ex;
  if (ex.form === "choice" || ex.form === "nones") {
    const list = h("fieldset", "gv-exercise-options");
    list.append(h("legend", "gv-exercise-legend", ex.form === "choice" ? "Choose one" : "Tick each that gets None"));
    const boxes = ex.options.map((o) => {
      const label = h("label", "gv-exercise-option");
      const box = h("input");
      box.type = ex.form === "choice" ? "radio" : "checkbox";
      box.name = `gv-exercise-${n}`;
      box.value = o.key;
      label.append(box, h("span", null, ex.form === "choice" ? `${o.key}) ${o.text}` : o.key));
      list.append(label);
      return box;
    });
    const read = () => {
      const picked = boxes.filter((b) => b.checked).map((b) => b.value);
      if (ex.form === "choice" && !picked.length) throw new Error("Choose one of the answers first.");
      return ex.form === "choice" ? picked[0] : picked;
    };
    return { el: list, read, focus: () => boxes[0].focus() };
  }
  const box = h("input", "gv-exercise-input");
  box.type = "text";
  box.autocomplete = "off";
  box.spellcheck = false;
  const shape = ex.form === "step" ? q.shape : ex.form === "value" ? ex.answer.shape : null;
  box.placeholder = ex.form === "shape" ? "(2, 3), or scalar" : ex.form === "count" ? "a whole number"
    : shape.length ? `an array of shape ${shapeText(shape)}, such as ${shape.length > 1 ? "[[1, 2], [3, 4]]" : "[1, 2]"}` : "a number";
  box.setAttribute("aria-label", `Your answer to exercise ${n}`);
  const read = () => {
    if (ex.form === "shape") return parseShape(box.value);
    if (ex.form === "count") {
      const v = parseNumber(box.value);
      if (!Number.isInteger(v) || v < 0) throw new Error("Write a whole number, such as 3.");
      return v;
    }
    return parseArray(box.value);
  };
  return { el: box, read, focus: () => box.focus() };
}

// One exercise, asked; `n` counts from 1.
function exerciseCard(ex, n) {
  const card = h("section", "gv-exercise");
  card.dataset.form = ex.form;
  card.append(h("h3", "gv-exercise-title", `Exercise ${n}`),
              h("p", "gv-exercise-prompt", ex.form === "step" ? ex.ask : ex.prompt));
  const given = ex.form === "step" ? ex.question.given : ex.given;
  if (given.length) card.append(givenTable(given));
  const input = answerInput(ex, n);
  const check = h("button", "gv-btn gv-exercise-check", "check");
  check.type = "button";
  const feedback = h("div", "gv-feedback");
  feedback.setAttribute("role", "status");
  feedback.setAttribute("aria-live", "polite");
  feedback.hidden = true;
  const form = h("form", "gv-exercise-answer");
  form.append(input.el, check);
  card.append(form, feedback);
  let hints = 0;
  const run = (e) => {
    if (e) e.preventDefault();
    let f;
    try {
      const got = input.read();
      f = ex.form === "step" ? checkAnswer(ex.question, got, hints) : checkLesson(ex, got, hints);
    } catch (err) {
      f = { verdict: "input", message: err.message };
    }
    if (f.verdict === "not_yet" || f.verdict === "shape") hints += 1;
    feedback.hidden = false;
    feedback.className = `gv-feedback gv-feedback-${f.verdict}`;
    if (f.kind) feedback.dataset.kind = f.kind;
    else delete feedback.dataset.kind;
    feedback.textContent = f.message;
    if (f.hint) feedback.append(h("div", "gv-exercise-hint", `Hint: ${f.hint}`));
  };
  form.addEventListener("submit", run);
  check.addEventListener("click", run);
  return card;
}

// Every exercise of a lesson, into `root`.
export function createExercises(root, exercises) {
  root.classList.add("gv-exercises");
  exercises.forEach((ex, i) => root.append(exerciseCard(ex, i + 1)));
  return root;
}
