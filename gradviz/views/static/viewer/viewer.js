// gradviz step-through viewer: ONE front end for the JupyterLab widget and the HTML report.
//
// An anywidget front-end module: `export default { render }`, where
// render({ model, el }) draws a viewer into `el` and returns a cleanup function.
// The model needs only get / set / save_changes / on / off for these traits:
//   payload              view data (gradviz.views.viewdata.view_data); a new one with
//                        the same "layout" (gv.explore) changes the values in place
//   step                 current step, 0-based; synced both ways
//   show_grad_values     print gradient values (heatmap colours stay)
//   show_forward_values  show forward values on the diagram
//   speed                play speed, steps per second
//   practice_key         optional: where practice mode keeps progress (the report's
//                        content hash, for localStorage); without it, nowhere
//   practice_results     set by a practising viewer at each answer: the results
//                        file's object (practice.js), read by TraceWidget.results()
// In JupyterLab the model is the widget's; the HTML report passes a small shim.
//
// This module puts the viewer together and steps it; each part is a module of
// its own (controls.js, diagram.js, panel.js, results.js, legend.js).  A part
// that follows the step has show(k); a new panel (a practice panel, say) is one
// more such module, made in render() and added to the parts that go() shows.
// User-chosen strings (titles, names, sentences) are always inserted with
// textContent, never parsed as HTML.
//
// Stable CSS classes (tests and users rely on them):
//   .gv-viewer            root; focusable. Keys: Left/Right previous/next,
//                         Home/End first/last, Space play/pause, f presentation.
//                         data-step="k" holds the current 0-based step.
//   .gv-title             the trace title
//   .gv-counter           "step k / N", with .gv-kind (the step's kind)
//   .gv-pass              "pass p / P" (Jacobian traces, passes > 1)
//   .gv-nonfinite-badge   visible when the current step produced NaN or Inf
//   .gv-first .gv-prev .gv-play .gv-next .gv-last   buttons
//   .gv-speed             play speed <select>
//   .gv-slider            the step slider, input[type=range]
//   .gv-timeline          under the slider: pass segments and NaN/Inf ticks
//   .gv-jump-nonfinite    button: jump to the first step flagged NaN/Inf
//   .gv-toggle-grad .gv-toggle-forward   show/hide checkboxes
//   .gv-zoombar           the diagram's zoom: .gv-zoom-out, .gv-zoom-level (the
//                         zoom shown, "100%"), .gv-zoom-in, and .gv-zoom: "whole
//                         graph" / back to 100% (keys + - 0); .gv-zoom-note
//                         when the whole graph cannot fit with readable text.
//                         "Whole graph" shows the payload's overview (the
//                         drawing without values) when it has one.
//   .gv-present           button: presentation mode (key f; Escape leaves it)
//   .gv-nav               finding one's way (navigate.js): .gv-crumbs (the open
//                         scopes), .gv-search, .gv-scope-jump, .gv-nav-status
//   .gv-diagram           the diagram container, holding the <svg>; a scope's
//                         box (closed) or border (open) is a button to press
//                         (data-gv-scope="open" / "close"); a node clicked lights
//                         what it depends on (data-gv-dep="up") and what depends
//                         on it ("down"), itself "self", until Escape; a second
//                         click on it goes to its first step.  For the
//                         keyboard and screen readers it is a stop
//                         (role group) named for the step; the current step's
//                         elements are stops inside it (role img, each named by
//                         what it is), Enter or Space picks one as a click does
//   .gv-announce          visually hidden live region: "Step k of n: title.
//                         sentence" once the reader's keys rest; never while playing
//   .gv-pick-note         over the diagram's corner while an element is picked:
//                         which step a second click goes to
//   .gv-step-title .gv-sentence .gv-formula   the step's explanation; the values
//                         they write are .gv-said-value, each followed by a
//                         .gv-said-hidden "(hidden)" shown instead under .gv-hide-grad
//   .gv-arrays            the step's arrays: .gv-array > .gv-heatmap (table)
//   .gv-bookkeeping       pass, ops visited, bytes of gradient held
//   .gv-results           the final gradient for every x: .gv-result rows
//   .gv-legend            the legend
// Root modifier classes: .gv-hide-grad, .gv-hide-forward, .gv-playing,
// .gv-at-end, .gv-zoom-actual (not "whole graph"), .gv-zoom-overview (the
// overview shown), .gv-zoom-clipped (the zoom note shown), .gv-presenting
// (presentation mode: the viewer fills the screen; presentation.js),
// .gv-practicing and .gv-practice-asking (practice mode; practice.js).

import { h, lifetime, scrollStop, srOnly } from "./dom.js";
import { exactValues } from "./arrays.js";
import { SPEEDS, bindKeys, createControls } from "./controls.js";
import { createDiagram } from "./diagram.js";
// not used by the viewer itself: the report's page calls it for a lesson's exercises
import { createExercises } from "./exercises.js";
import { createHandout } from "./handout.js";
import { createPictureTool } from "./picture.js";
import { createLegend } from "./legend.js";
import { createNavigator } from "./navigate.js";
import { createPanel, stepsOf } from "./panel.js";
import { createPractice } from "./practice.js";
import { createPresentation } from "./presentation.js";
import { createResults } from "./results.js";
import { maskTooltips, watchTooltips } from "./tooltips.js";

// A step the reader takes is told to screen readers once the keys come to rest:
// this many ms after the last, so that a held arrow key says only where it stopped.
const ANNOUNCE_MS = 250;

// The viewer's root element: focusable, labelled, with the diagram's CSS.
function viewerRoot(payload) {
  const root = h("div", "gv-viewer");
  root.tabIndex = 0;
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", `gradviz step-through viewer: ${payload.title || "trace"}`);
  // Lumino (JupyterLab) skips its keyboard shortcuts for events from here.
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  if (payload.css) {
    const style = h("style");
    style.textContent = String(payload.css);
    root.append(style);
  }
  return root;
}

// The controls' events: buttons and slider step, the options write the model's traits.
function bindControls(ui, model, life, act) {
  const { listen } = life;
  listen(ui.first, "click", () => act.userGo(0));
  listen(ui.prev, "click", () => act.userGo(act.at() - 1));
  listen(ui.next, "click", () => act.userGo(act.at() + 1));
  listen(ui.last, "click", () => act.userGo(act.last));
  listen(ui.play, "click", act.togglePlay);
  listen(ui.jump, "click", () => act.userGo(ui.firstBad));
  listen(ui.zoom, "click", act.toggleFit);
  listen(ui.zoomIn, "click", act.zoomIn);
  listen(ui.zoomOut, "click", act.zoomOut);
  listen(ui.slider, "input", () => act.userGo(Number(ui.slider.value)));
  listen(ui.speed, "change", () => {
    model.set("speed", Number(ui.speed.value));
    model.save_changes();
    act.setSpeed();
  });
  listen(ui.gradCb, "change", () => {
    model.set("show_grad_values", ui.gradCb.checked);
    model.save_changes();
    act.setToggles();
  });
  listen(ui.fwdCb, "change", () => {
    model.set("show_forward_values", ui.fwdCb.checked);
    model.save_changes();
    act.setToggles();
  });
}

// One function, about 150 lines, because it reads as the viewer's life in order
// (build the parts, step, play, bind, start) around the one current step.
// Returns { refresh(payload), dispose() }.
function mount(model, el) {
  const payload = model.get("payload") || {};
  const steps = stepsOf(payload);
  const N = steps.length;
  const passes = Math.max(1, Number(payload.passes) || 1);
  const life = lifetime();

  const root = viewerRoot(payload);
  const ui = createControls(payload, steps, passes);
  const panel = createPanel(steps, passes, payload.view || {}, payload.mode);
  const results = createResults(payload, passes);
  const legend = createLegend(payload);
  const handout = createHandout(root, payload, steps, life, {
    svg: () => diagram.svg, stepIds: (k) => diagram.stepIds(k), settle: () => diagram.settle() });
  const main = h("div", "gv-main");
  // The box scrolls: a stop of the keyboard, named for the step (nameDiagram).
  const box = scrollStop(h("div", "gv-diagram"), "diagram");
  // Where a screen reader hears the step the reader went to (announce).
  const announcer = srOnly("div", "gv-announce");
  announcer.setAttribute("aria-live", "polite");
  announcer.setAttribute("aria-atomic", "true");
  // What a second click on the picked element does, over the diagram's top
  // corner (placed there when shown: the box moves with the layout).
  const pickNote = h("div", "gv-pick-note");
  pickNote.hidden = true;
  pickNote.setAttribute("role", "status");
  main.append(box, panel.el, pickNote);
  function placePickNote() {
    if (pickNote.hidden) return;
    pickNote.style.top = `${box.offsetTop + 6}px`;
    pickNote.style.left = `${box.offsetLeft + 6}px`;
    pickNote.style.maxWidth = `${Math.max(160, box.clientWidth - 12)}px`;
  }
  // The box moves with the layout (presentation mode, a phone's sentence, a resize).
  if (typeof ResizeObserver !== "undefined") {
    const placer = new ResizeObserver(placePickNote);
    placer.observe(box);
    placer.observe(main);
    life.onDispose(() => placer.disconnect());
  }
  const footer = h("div", "gv-footer");
  footer.append(results.el, legend.el);
  root.append(ui.header, ui.controls, ui.options, main, footer, ui.help, announcer);
  el.append(root);
  // The step shown (-1: none yet) and the play timer (null: not playing), which
  // the parts' hooks read too (a scope view opened as the navigator is made).
  let cur = -1;
  let timer = null;
  const overview = typeof payload.overview === "string" ? payload.overview : null;
  const diagram = createDiagram(box, payload.svg, overview, steps,
    Array.isArray(payload.edges) ? payload.edges : [], life, {
      pick: (k) => {
        pickNote.hidden = true;
        if (k >= 0) userGo(k);
      },
      picked: (k, id) => {
        pickNote.hidden = !id;
        if (!id) return;
        const lit = diagram.selected === id ? "Lit: what it depends on and what depends on it. " : "";
        pickNote.textContent = lit + (k < 0 ? "No step works on it."
          : k === cur ? `Step ${k}, this step, is the first that works on it.`
            : `Click it again to go to step ${k}, the first that works on it (from the keyboard: Enter again).`);
        placePickNote();
      },
      scope: (id, meta) => nav.onScope(id, meta),
      zoom: () => {
        showZoom();
        if (cur >= 0 && timer === null) nameDiagram();
      },
    });
  // Scopes to open and close, search, and where each scope's steps start (navigate.js).
  const nav = createNavigator(payload, steps, {
    diagram, model, life, timeline: ui.timeline, go: (k) => userGo(k), at: () => cur,
    onView: () => { if (practice) practice.rehide(); } });
  ui.options.after(nav.el);
  root.classList.toggle("gv-has-nav", !nav.el.hidden);
  panel.place(nav.note);
  // Practice mode: the panel asks each step's questions before showing its values.
  const practice = payload.view && payload.view.practice
    ? createPractice(root, steps, model.get("practice_key") || null, {
      go: (k) => userGo(k), at: () => cur, last: N - 1, ids: (k) => diagram.stepIds(k),
      focusRoot: () => root.focus({ preventScroll: true }), life,
      trace: { key: String(payload.trace_key || ""), title: String(payload.title || "") },
      // (a widget's Python reads them: TraceWidget.results())
      report: (results) => {
        model.set("practice_results", results);
        model.save_changes();
      } })
    : null;
  if (practice) panel.place(practice.el);
  // (in practice, a gradient's hover text never gives its values away)
  watchTooltips(box, life, () => !ui.gradCb.checked || !!practice);
  exactValues(root, life);
  const present = createPresentation(root, diagram, life);
  ui.zoom.parentNode.after(present.button); // after the zoom bar, in the options row
  present.button.after(handout.el); // then print, before the zoom note's line
  const pictureTool = createPictureTool(root, payload, steps, life, {
    svg: () => diagram.svg, stepIds: (k) => diagram.stepIds(k), settle: () => diagram.settle() }, () => cur);
  handout.el.after(pictureTool.el); // then the current step's picture

  // ---------------------------------------------------------------- stepping

  function go(k, sync = true) {
    if (!N) return;
    k = Math.round(Number(k));
    if (!Number.isFinite(k)) return;
    k = Math.max(0, Math.min(N - 1, k));
    if (k === cur) return;
    cur = k;
    diagram.unpick();
    diagram.show(k);
    const s = steps[k];
    root.dataset.step = String(k);
    ui.show(k, s);
    root.classList.toggle("gv-at-end", k === N - 1);
    root.classList.toggle("gv-step-nonfinite", !!s.nonfinite);
    panel.show(k);
    nav.show(k);
    results.show(k);
    if (practice) practice.show(k);
    diagram.follow();
    if (timer === null) nameDiagram();
    if (sync && model.get("step") !== k) {
      model.set("step", k);
      model.save_changes();
    }
  }

  function stop() {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
      // (where play stopped: its name was left alone while it played)
      nameDiagram();
      announce();
    }
    root.classList.remove("gv-playing");
    ui.setPlaying(false);
  }

  function play() {
    if (N < 2) return;
    if (cur >= N - 1) go(0);
    const speed = Number(model.get("speed")) || 1;
    root.classList.add("gv-playing");
    ui.setPlaying(true);
    if (timer !== null) clearInterval(timer);
    timer = setInterval(() => {
      if (cur >= N - 1) stop();
      else go(cur + 1);
      if (cur >= N - 1) stop();
    }, 1000 / Math.max(0.05, speed));
  }

  const togglePlay = () => (timer === null ? play() : stop());
  // On a phone the controls stay at the top of the screen while the page
  // scrolls (stepper.css makes them sticky): a step the reader takes brings its
  // title and sentence back to just under them if the page had left them out of
  // view (scrolled past, or below the screen's bottom).
  function keepStepInReach() {
    if (getComputedStyle(ui.controls).position !== "sticky") return;
    const title = root.querySelector(".gv-step-title");
    const bar = ui.controls.getBoundingClientRect();
    const top = title.getBoundingClientRect().top;
    if (top >= bar.bottom && top <= window.innerHeight - 96) return;
    title.style.scrollMarginTop = `${Math.ceil(bar.height) + 6}px`;
    title.scrollIntoView({ block: "start" });
  }
  const userGo = (k) => { stop(); go(k); keepStepInReach(); announce(); };

  // The diagram box's name: short, for the step ("diagram of MLP: 9 nodes; step 4
  // works on MatMul and Sum"), not every label of the drawing.  Left alone while
  // playing, so that a screen reader on the box is not told of every frame.
  const diagramTitle = String(payload.title || "the trace").slice(0, 60);
  function nameDiagram() {
    if (cur >= 0) box.setAttribute("aria-label", `diagram of ${diagramTitle}: ${diagram.summary(cur)}`);
  }

  // "Step k of n: title. sentence", as the panel shows them (what it hides, it
  // hides here too: a value hidden, or in practice the sentence, whose place the
  // question takes), ANNOUNCE_MS after the reader's last step; nothing while
  // playing, and the step where play stopped.
  let announceTimer = 0;
  function announce() {
    clearTimeout(announceTimer);
    announceTimer = setTimeout(() => {
      announceTimer = 0;
      if (timer !== null || cur < 0) return;
      // (innerText of an element not rendered is all its text: hidden values too)
      const shown = [".gv-step-title", ".gv-sentence", ".gv-question-prompt"]
        .map((cls) => root.querySelector(cls))
        .filter((e) => e && (e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0))
        .map((e) => e.innerText.replace(/\s+/g, " ").trim().replace(/:$/, "").replace(/([^.?!])$/, "$1."));
      announcer.textContent = `Step ${cur} of ${N - 1}: ${shown.join(" ")}`;
    }, ANNOUNCE_MS);
  }
  life.onDispose(() => clearTimeout(announceTimer));

  function setToggles() {
    const g = model.get("show_grad_values") !== false;
    const f = model.get("show_forward_values") !== false;
    ui.gradCb.checked = g;
    ui.fwdCb.checked = f;
    root.classList.toggle("gv-hide-grad", !g);
    root.classList.toggle("gv-hide-forward", !f);
    maskTooltips(box, !g || !!practice, !f);
  }

  function setSpeed() {
    const v = Number(model.get("speed")) || 1;
    let best = SPEEDS[0];
    for (const s of SPEEDS) if (Math.abs(s - v) < Math.abs(best - v)) best = s;
    ui.speed.value = String(best);
    if (timer !== null) play();
  }

  function showZoom() {
    const z = diagram.zoom;
    // ("whole graph" may just have inserted the overview, with its own tooltips)
    if (z && z.overview) maskTooltips(box, !ui.gradCb.checked || !!practice, !ui.fwdCb.checked);
    root.classList.toggle("gv-zoom-actual", !!z && !z.fit);
    root.classList.toggle("gv-zoom-overview", !!z && z.overview);
    root.classList.toggle("gv-zoom-clipped", !!z && z.clipped);
    ui.showZoom(z);
  }

  const toggleFit = () => (diagram.zoom && diagram.zoom.fit ? diagram.actualSize() : diagram.fitWhole());

  // ---------------------------------------------------------------- events

  // In presentation mode + and - size all of the text, the diagram's and the panel's.
  const zoomIn = () => present.larger() || diagram.zoomIn();
  const zoomOut = () => present.smaller() || diagram.zoomOut();
  bindControls(ui, model, life, { userGo, togglePlay, toggleFit, zoomIn, zoomOut,
    setSpeed, setToggles, at: () => cur, last: N - 1 });
  // Clicking anywhere that is not a control gives the viewer keyboard focus.
  life.listen(root, "pointerdown", (e) => {
    if (!e.target.closest("button, input, select, label")) {
      setTimeout(() => root.focus({ preventScroll: true }), 0);
    }
  });
  bindKeys(root, ui.slider, life, {
    next: () => userGo(cur + 1),
    prev: () => userGo(cur - 1),
    first: () => userGo(0),
    last: () => userGo(N - 1),
    togglePlay,
    zoomIn,
    zoomOut,
    toggleFit,
    togglePresent: present.toggle,
    leavePresent: present.leave,
    clearSelection: () => diagram.clearSelection(),
    toAnswer: () => !!practice && practice.focusAnswer(),
  });

  const onStep = () => go(model.get("step"), false);
  model.on("change:step", onStep);
  model.on("change:show_grad_values", setToggles);
  model.on("change:show_forward_values", setToggles);
  model.on("change:speed", setSpeed);

  // ---------------------------------------------------------------- start

  setToggles();
  setSpeed();
  showZoom();
  if (N) {
    const k0 = Number(model.get("step")) || 0;
    go(Math.max(0, Math.min(N - 1, k0)), k0 !== Math.max(0, Math.min(N - 1, k0)));
    // The view option font_size: the diagram's smallest text at that many px.
    const fontSize = Number(payload.view && payload.view.font_size);
    if (fontSize > 0) diagram.setTextSize(fontSize);
  } else {
    root.classList.add("gv-no-steps");
    ui.disable();
    panel.empty("This trace has no steps: nothing depends on the xs.");
  }

  // For tests and the benchmark: drive and inspect this viewer from the page.
  root.gvViewer = {
    go: (k) => go(k),
    flush: () => diagram.flush(),
    // Whether the diagram box is still panning to the step (tests wait for it).
    get moving() { return diagram.moving; },
    get zoom() { return diagram.zoom; },
    setTextSize: (px) => diagram.setTextSize(px),
    get textSize() { return diagram.textSize; },
    settle: () => diagram.settle(),
    get stale() { return diagram.stale; },
    get step() { return cur; },
    steps: N,
    elements: diagram.elements,
    // Find a tensor, op or scope by name (as the search box does); open scope view `key`.
    find: (text) => nav.find(text),
    openScope: (key) => nav.open(key),
    get scopeView() { return nav.view; },
    get selected() { return diagram.selected; },
    select: (id) => diagram.select(id),
    // The first step that works on element id of the drawing (-1: none does).
    firstStep: (id) => diagram.firstStep(id),
    // Step k's elements in the drawing shown (a scope view has its own).
    stepIds: (k) => diagram.stepIds(k),
    // Build the handout of the steps chosen ("all", "1, 3, 5-7", [1, 3]) without printing.
    handout: (spec) => handout.build(spec),
    // The current step's picture for a slide, as SVG text (what "picture" saves).
    picture: () => pictureTool.picture(),
  };

  // A new payload of the same layout (gv.explore: the same program at other
  // values) takes the place of this one where the viewer stands: the diagram
  // keeps its place and zoom, the step stays, and the numbers and colours change.
  // False when it is not of the same layout.
  function refresh(next) {
    const nextSteps = stepsOf(next);
    if (!payload.layout || next.layout !== payload.layout || nextSteps.length !== N
        || nextSteps.some((s, k) => !!s.nonfinite !== !!steps[k].nonfinite)
        || !diagram.retext(next.svg, next.overview)) return false;
    steps.splice(0, N, ...nextSteps);
    results.update(next);
    if (cur >= 0) {
      ui.show(cur, steps[cur]);
      panel.show(cur);
      results.show(cur);
    }
    setToggles();
    return true;
  }

  function dispose() {
    stop();
    model.off("change:step", onStep);
    model.off("change:show_grad_values", setToggles);
    model.off("change:show_forward_values", setToggles);
    model.off("change:speed", setSpeed);
    life.dispose();
    root.remove();
  }

  return { refresh, dispose };
}

// anywidget's entry: the viewer in `el`, and what removes it.  A new payload is
// shown in place when it has the same layout as the one shown, else by a viewer
// made anew (at the same step: the model keeps it).
function render({ model, el }) {
  let viewer = mount(model, el);
  const onPayload = () => {
    if (viewer.refresh(model.get("payload") || {})) return;
    viewer.dispose();
    viewer = mount(model, el);
  };
  model.on("change:payload", onPayload);
  return () => {
    model.off("change:payload", onPayload);
    viewer.dispose();
  };
}

export default { render };
