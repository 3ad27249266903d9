// The diagram: the laid-out SVG, inserted once, and restyled as the viewer steps.
//
// A step only sets the classes gv-pending / gv-done / gv-active on the SVG
// elements whose state changes (each element's first step is precomputed, so a
// jump from step a to step b touches only ids(a), ids(b) and the elements first
// touched between).  A jump that changes many elements restyles at once only
// those on screen or near it; the others follow as they scroll near, or in idle
// time (see EAGER).  The box pans (and zooms) to keep the step in view: camera.js.
//
// "Whole graph" shows the overview when the payload has one: the same layout
// without values (so much smaller), under the same element ids, stepped the same
// way while it is shown; the drawing with values comes back at 100%, restyled to
// the step, when the reader zooms again.

import { createCamera, ZOOM_STEP } from "./camera.js";
import { SVG_NS, h } from "./dom.js";
import { retitle } from "./tooltips.js";

const STATE_CLASSES = ["gv-pending", "gv-done", "gv-active"];
// A step that changes more elements than EAGER restyles only those within
// a margin of the diagram box (camera.js) at once, and the others IDLE_SLICE at a time.
const EAGER = 200;
const IDLE_SLICE = 150;
const requestIdle = typeof requestIdleCallback === "function"
  ? (fn) => requestIdleCallback(fn, { timeout: 500 })
  : (fn) => setTimeout(fn, 20);
const cancelIdle = typeof cancelIdleCallback === "function" ? cancelIdleCallback : clearTimeout;

// Parse graphviz's SVG as XML (never as HTML) and drop anything active or remote.
function parseSvg(text) {
  const doc = new DOMParser().parseFromString(String(text || ""), "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.localName !== "svg" || doc.getElementsByTagName("parsererror").length) {
    return null;
  }
  for (const bad of Array.from(svg.querySelectorAll("script, foreignObject, iframe, object, embed"))) {
    bad.remove();
  }
  for (const e of Array.from(svg.querySelectorAll("*")).concat([svg])) {
    for (const a of Array.from(e.attributes)) {
      const name = a.name.toLowerCase();
      const local = name.includes(":") ? name.split(":").pop() : name;
      if (name.startsWith("on")) e.removeAttribute(a.name);
      else if ((local === "href" || local === "src") && !a.value.trim().startsWith("#")) {
        e.removeAttributeNode(a);
      }
    }
  }
  return document.importNode(svg, true);
}

// Graphviz puts every node and edge side by side in one group: 7,000 children
// at 1,000 ops drawn whole.  When one of them changes state, Chromium walks
// all its siblings (style invalidation, effects), about 1.7 ms per changed
// element at that size; the same elements nested in runs of about sqrt(n)
// consecutive siblings take 0.2 ms.  The runs keep the drawing order, so the
// picture is the same.
function nestRuns(svg) {
  const top = Array.from(svg.children).find((e) => e.localName === "g");
  const n = top ? top.childElementCount : 0;
  if (n <= 128) return;
  const size = Math.ceil(Math.sqrt(n));
  const kids = Array.from(top.children);
  for (let i = 0; i < n; i += size) {
    const run = document.createElementNS(SVG_NS, "g");
    run.setAttribute("class", "gv-run");
    top.insertBefore(run, kids[i]);
    run.append(...kids.slice(i, i + size));
  }
}

// New values for drawing `svg` from `text`, the same layout with other numbers
// (gv.explore): each <text> and hover text takes its counterpart's, nothing
// else changes.  False when `text` is not the same drawing.
function retextSvg(svg, text) {
  const doc = new DOMParser().parseFromString(String(text || ""), "image/svg+xml");
  if (doc.getElementsByTagName("parsererror").length) return false;
  const mine = svg.querySelectorAll("text, title");
  const theirs = doc.documentElement.querySelectorAll("text, title");
  if (mine.length !== theirs.length) return false;
  for (let i = 0; i < mine.length; i++) {
    const want = theirs[i].textContent;
    if (mine[i].localName === "title") retitle(mine[i], want);
    else if (mine[i].textContent !== want) mine[i].textContent = want;
  }
  return true;
}

// The box is as tall as the tallest drawing it has shown (up to its CSS limit): a
// scope opened grows it, one closed leaves it, so the page does not jump about.
function growHeight(box, px) {
  const now = parseFloat(box.style.getPropertyValue("--gv-natural-h")) || 0;
  if (px > now) box.style.setProperty("--gv-natural-h", `${Math.ceil(px)}px`);
}

// A screen reader would read a drawing's every label and hover text, values
// and all, as one wall of text.  So the elements are hidden from it, and only
// those of the current step are shown to it, each with a short description and
// a stop of the keyboard (see reachable()); the box has a name that says the
// step (viewer.js).  Done before the SVG is in the page: no tree to update.
function quiet(svg) {
  svg.setAttribute("role", "none");
  // (a step's element, shown, is an image: its texts are not read, only its description)
  for (const e of svg.querySelectorAll("g.node, g.edge, g.cluster, g.graph > text, g.gv-run > text")) {
    e.setAttribute("aria-hidden", "true");
  }
}

// What a screen reader is told of the drawing's elements: a node's name, what
// it is and its shape ("Mul: op, output (2,1) float32, this step"); an edge's,
// which gradient it carries and its shape ("gradient Add sends back to its
// input 0, Mul: (2,1)"), or which nodes it joins.  Never values: they are the
// panel's, and practice hides them.
const KINDS = [["gv-seed", "seed"], ["gv-result", "final gradient"], ["gv-sum", "reduction"],
  ["gv-direction", "direction"], ["gv-jvp", "final tangent"],
  ["gv-op", "op"], ["gv-constant", "constant"], ["gv-variable", "variable"]];
const STATE_WORDS = { "gv-active": "this step", "gv-done": "done", "gv-pending": "not reached yet" };
// Where a picked node's dependencies are lit (relight), what each lit element is to it.
const DEP_WORDS = { self: "picked", up: "the picked node depends on it", down: "depends on the picked node" };

const kindOf = (e) => (KINDS.find(([c]) => e.classList.contains(c)) || [null,
  e.classList.contains("edge") ? "edge" : "tensor"])[1];
const firstLine = (e) => {
  const t = e.querySelector(":scope > title");
  return t ? t.textContent.split("\n")[0].trim() : "";
};
// The words an element shows, without its values.
const wordsOf = (e) => Array.from(e.querySelectorAll("text:not(.gv-forward-value):not(.gv-grad-value)"),
  (t) => t.textContent.replace(/\s+/g, " ").trim()).filter(Boolean);

// A node's name: its label in bold ("Mul", "W"), else what it is ("seed").
function nodeName(e) {
  const bold = e.querySelector('text[font-weight="bold"]');
  return bold ? bold.textContent.trim() : kindOf(e);
}

// endsOf(id): an edge's [tail, head] node elements (null: not known).
function describe(e, endsOf) {
  const state = STATE_CLASSES.find((c) => e.classList.contains(c));
  const words = wordsOf(e);
  let text;
  if (e.classList.contains("edge")) {
    const shape = words.find((w) => w.startsWith("\u2191"));
    const joins = endsOf(e.id);
    // (a mark's edge, the seed's or a final gradient's, is drawn against the flow)
    const [a, b] = joins ? joins.map(nodeName) : [];
    text = firstLine(e) || (!joins ? "edge" : e.classList.contains("gv-mark") ? `edge joining ${a} and ${b}`
      : `edge from ${a} to ${b}`);
    if (shape) text += `: ${shape.slice(1).trim()}`;
  } else if (e.querySelector('text[font-weight="bold"]')) {
    // (an op drawn with its output: the last line is the output's shape)
    const rest = words.slice(1).map((w) => w.replace(/ \u00b7 /g, ", "));
    const output = e.classList.contains("gv-op") && e.classList.contains("gv-tensor") && rest.length
      ? [`output ${rest.pop()}`] : [];
    const kind = kindOf(e);
    const said = rest.some((w) => w.includes(kind)) || (kind === "tensor" && rest.length);
    text = `${nodeName(e)}: ${[said ? null : kind, ...rest, ...output].filter(Boolean).join(", ")}`;
  } else {
    text = firstLine(e) || words.join(", ") || kindOf(e);
  }
  const dep = DEP_WORDS[e.getAttribute("data-gv-dep")];
  return [text, state && STATE_WORDS[state], dep].filter(Boolean).join(", ");
}

// Insert the SVG into the box; returns [svg, its natural size in px] (either may be null).
// The main drawing sets the box's height (--gv-natural-h) and says when it cannot
// be read; the overview (see createDiagram) comes in hidden, and silently.
function insertSvg(box, text, main) {
  const svg = parseSvg(text);
  let natural = null; // the SVG's own size in px, for "actual size"
  if (svg) {
    const w = parseFloat(svg.getAttribute("width") || "");
    const hgt = parseFloat(svg.getAttribute("height") || "");
    const unit = (svg.getAttribute("width") || "").endsWith("pt") ? 4 / 3 : 1;
    if (w > 0 && hgt > 0) natural = [w * unit, hgt * unit];
    if (natural && main) growHeight(box, natural[1]);
    if (!svg.getAttribute("viewBox") && natural) svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.classList.add("gv-svg");
    if (!main) svg.style.display = "none";
    nestRuns(svg);
    quiet(svg);
    box.append(svg);
  } else if (main) {
    box.append(h("div", "gv-empty", "The diagram could not be read."));
  }
  return [svg, natural];
}

// Index the elements the steps touch: elems[i], first[i] = the first step
// touching it, stepIdx[k] = the elements step k touches, firstAt[k] = those
// first touched at step k.
function indexSteps(svg, steps) {
  const byId = new Map();
  if (svg) for (const e of svg.querySelectorAll("[id]")) if (!byId.has(e.id)) byId.set(e.id, e);
  const index = new Map(); // element id -> i
  const elems = [];
  const first = [];
  const stepIdx = [];
  const firstAt = [];
  for (let k = 0; k < steps.length; k++) {
    const ids = Array.isArray(steps[k].ids) ? steps[k].ids : [];
    const list = [];
    firstAt.push([]);
    for (const id of ids) {
      let i = index.get(id);
      if (i === undefined) {
        const e = byId.get(String(id));
        if (!e) continue;
        i = elems.length;
        index.set(id, i);
        elems.push(e);
        first.push(k);
        firstAt[k].push(i);
      }
      list.push(i);
    }
    stepIdx.push(Int32Array.from(list));
  }
  return { index, elems, first, stepIdx, firstAt };
}

// The step state of every element the steps touch, set as classes.  Only what
// is in view (vp.inView) is restyled at once when a step changes many elements.
//
// A jump across hundreds of steps changes the state of thousands of elements;
// restyling each costs the browser 5 to 10 us (style, paint), so a jump on a
// 1,000-op diagram drawn whole took 60 to 115 ms.  At actual size the box shows
// a few dozen of them: elements outside the box (plus a margin all round, more
// than Chromium paints ahead of a scroll) are marked stale instead and restyled
// when they scroll near, or a slice at a time when the page is idle.
function stepStyles({ elems, first, stepIdx, firstAt }, vp, eager = EAGER) {
  let cur = -1;
  const state = new Int8Array(elems.length).fill(-1); // the class each element has now
  const mark = new Int32Array(elems.length).fill(-1); // the last step that touched it
  // Each element's class without a step state, so that a change is one write.
  const plain = elems.map((e) => (e.getAttribute("class") || "").split(/\s+/)
    .filter((c) => c && !STATE_CLASSES.includes(c)).concat("gv-steppable").join(" "));
  const stateClass = STATE_CLASSES.map((c) => " " + c);
  const stale = new Uint8Array(elems.length);
  let staleList = [];
  let idleHandle = 0;

  function apply(i, s) {
    if (state[i] === s) return;
    elems[i].setAttribute("class", plain[i] + stateClass[s]);
    state[i] = s;
  }

  // The state element i should show at the current step.
  const want = (i) => (mark[i] === cur ? 2 : first[i] < cur ? 1 : 0);

  function restyleOne(i, lazy) {
    if (!lazy || vp.inView(i)) apply(i, want(i));
    else if (!stale[i]) {
      stale[i] = 1;
      staleList.push(i);
    }
  }

  // Move the diagram from step a (or -1: nothing styled yet) to step b.
  function restyle(a, b) {
    cur = b;
    const act = stepIdx[b];
    for (let j = 0; j < act.length; j++) mark[act[j]] = b;
    if (a < 0) {
      for (let i = 0; i < elems.length; i++) apply(i, want(i));
      return;
    }
    // What changes: a's and b's elements, and those first touched in between.
    const lo = Math.min(a, b), hi = Math.max(a, b);
    let count = stepIdx[a].length + act.length;
    for (let k = lo; k <= hi; k++) count += firstAt[k].length;
    const lazy = vp.limited && count > eager;
    // Only b's elements are ever gv-active, on screen or not: a's change at once.
    const old = stepIdx[a];
    for (let j = 0; j < old.length; j++) apply(old[j], want(old[j]));
    for (let j = 0; j < act.length; j++) apply(act[j], 2);
    for (let k = lo; k <= hi; k++) {
      const f = firstAt[k];
      for (let j = 0; j < f.length; j++) restyleOne(f[j], lazy);
    }
    if (staleList.length) scheduleIdle();
  }

  // Restyle the stale elements now in view (after a scroll or a zoom).
  function restyleView() {
    if (!staleList.length) return;
    let w = 0;
    for (const i of staleList) {
      if (vp.inView(i)) {
        stale[i] = 0;
        apply(i, want(i));
      } else {
        staleList[w++] = i;
      }
    }
    staleList.length = w;
    if (!w && idleHandle) {
      cancelIdle(idleHandle);
      idleHandle = 0;
    }
  }

  // Restyle up to `limit` stale elements (all of them by default).
  function settle(limit = Infinity) {
    while (staleList.length && limit-- > 0) {
      const i = staleList.pop();
      stale[i] = 0;
      apply(i, want(i));
    }
  }

  function scheduleIdle() {
    if (!idleHandle) idleHandle = requestIdle(onIdle);
  }

  function onIdle() {
    idleHandle = 0;
    settle(IDLE_SLICE);
    if (staleList.length) scheduleIdle();
  }

  return {
    restyle,
    restyleView,
    settle,
    get stale() { return staleList.length; },
    dispose() { if (idleHandle) cancelIdle(idleHandle); },
  };
}

// A scope view's drawing (an opened layer, its values on every node) holds many
// lines of text for its elements: zooming it relays them all out, about 0.06 ms a
// line in Chromium, 29 ms for a 32-op transformer layer's 461.  Past this many
// lines such a drawing stays at the reader's zoom as it steps (a step too big for
// the box shows its start), rather than zooming out to each step.
const AUTO_ZOOM_TEXTS = 200;
// Its elements change state by the hundred in a far jump (every element of the
// opened layer goes from pending to done), and each carries lines of values:
// restyling all of them took 15 to 18 ms (95th percentile).  So past SCOPE_EAGER
// changes only those within SCOPE_MARGIN natural px of the box are restyled at
// once, the others as they scroll near or in idle time: 10 ms.
const SCOPE_EAGER = 40;
const SCOPE_MARGIN = 600;

// One drawing in the box: its SVG, the elements the steps touch, its camera and
// its step styles; `at` is the step it was last restyled to (-1: none yet).
// `autoZoom` false: it zooms to fit a step only when it has few lines of text.
function createView(box, text, steps, main, onZoom, autoZoom = true) {
  const [svg, natural] = insertSvg(box, text, main);
  const index = indexSteps(svg, steps);
  const zooms = autoZoom || !svg || svg.getElementsByTagName("text").length <= AUTO_ZOOM_TEXTS;
  const cam = svg && natural ? createCamera(box, svg, natural, index.elems, onZoom, zooms,
    autoZoom ? undefined : SCOPE_MARGIN) : null;
  // Without a size of its own the SVG is scaled to the box: all of it in view.
  const styles = stepStyles(index, cam || { limited: false, inView: () => true },
    autoZoom ? EAGER : SCOPE_EAGER);
  return { svg, natural, index, cam, styles, at: -1 };
}

// The steps as a scope view draws them: its own ids where they differ from the steps'.
function viewSteps(steps, ids) {
  return steps.map((s, k) => ({ ids: (ids && ids[String(k)]) || s.ids }));
}

// The box's own events, on whichever drawing `shown()` gives: a scroll brings
// the elements coming into view up to date before they are painted (scroll
// events come before the frame's paint); a reader who scrolls takes over from a
// glide under way; a click on an element picks it (onPick(k, id), k the first
// step that touches it);
// a resize (the viewer may render before it is on screen, and the box changes
// size with the page) follows the step again, at once.
function listenBox(box, life, shown, onPick, onScope, onResize) {
  life.listen(box, "scroll", () => {
    const v = shown();
    if (v.cam && v.cam.scrolled()) v.styles.restyleView();
  }, { passive: true });
  for (const ev of ["wheel", "pointerdown", "touchstart"]) {
    life.listen(box, ev, () => shown().cam && shown().cam.stopGlide(), { passive: true });
  }
  life.listen(box, "click", (e) => {
    const { index } = shown();
    for (let t = e.target; t && t !== box; t = t.parentNode) {
      if (t.id && onScope(t.id)) return;
      if (t.id && index.index.has(t.id)) {
        onPick(index.first[index.index.get(t.id)], t.id);
        return;
      }
    }
  });
  // Enter or Space on a scope's box (focusable: see markScopes) opens or closes it;
  // on an element of the step (reachable()) it picks it, as a click does.
  life.listen(box, "keydown", (e) => {
    const t = e.target;
    if ((e.key !== "Enter" && e.key !== " ") || !t || !t.id || t === box) return;
    const { index } = shown();
    let done = false;
    if (t.dataset && t.dataset.gvScope) done = onScope(t.id);
    else if (index.index.has(t.id) || t.hasAttribute("data-gv-dep")) {
      // (a lit element no step works on, a constant say, is picked too: it lights its own)
      onPick(index.index.has(t.id) ? index.first[index.index.get(t.id)] : -1, t.id);
      done = true;
    }
    if (done) {
      e.preventDefault();
      e.stopPropagation();
    }
  });
  if (typeof ResizeObserver !== "undefined") {
    const ro = new ResizeObserver(() => {
      if (box.clientWidth > 0) onResize();
    });
    ro.observe(box);
    life.onDispose(() => ro.disconnect());
  }
}

// The drawings the box can show: the payload's own drawing (`main`), its overview
// (made when "whole graph" first asks for it), and a drawing per scope view the
// reader has opened (made when first opened).  `full` is the drawing at 100% the
// reader is on, `shown` the one in the box.
function drawings(box, svgText, overviewText, steps, onZoom) {
  const main = createView(box, svgText, steps, true, onZoom);
  const scoped = new Map(); // scope view key -> its drawing
  let overview; // undefined: not made yet; null: there is none
  let overviewSource = overviewText;
  const d = {
    main,
    full: main,
    shown: main,
    overview() {
      if (d.full !== main) return null; // (the overview is the payload's own drawing's)
      if (overview === undefined) {
        overview = overviewSource ? createView(box, overviewSource, steps, false, onZoom) : null;
        if (overview && !overview.cam) { // unreadable, or without a size: no overview
          if (overview.svg) overview.svg.remove();
          overview = null;
        }
      }
      return overview;
    },
    // The drawing of scope view `key` (its payload entry `view`), made once; null when
    // it cannot be read.
    scopeDrawing(key, view) {
      if (!view.svg) return main;
      let v = scoped.get(key);
      if (!v) {
        v = createView(box, view.svg, viewSteps(steps, view.ids), false, onZoom, false);
        if (!v.svg || !v.cam) {
          if (v.svg) v.svg.remove();
          return null;
        }
        scoped.set(key, v);
      }
      return v;
    },
    // Show drawing v in place of the one shown, restyled to step k (-1: none yet).
    show(v, k) {
      if (v === d.shown) return;
      if (d.shown.cam) d.shown.cam.stopGlide();
      d.shown.svg.style.display = "none";
      v.svg.style.display = "";
      if (v.natural && v !== overview) growHeight(box, v.natural[1]);
      d.shown = v;
      if (k >= 0) v.styles.restyle(v.at, k);
      v.at = k;
      onZoom();
    },
    // The same drawings with other values: false when they are not the same.
    retext(text, overviewText) {
      if (!main.svg || !retextSvg(main.svg, text)) return false;
      if (overview && !retextSvg(overview.svg, overviewText)) return false;
      overviewSource = overviewText;
      return true;
    },
    dispose() {
      for (const v of [main, overview, ...scoped.values()]) {
        if (v && v.cam) v.cam.dispose();
        if (v) v.styles.dispose();
      }
    },
  };
  return d;
}

// Scope boxes and borders made keys to press: focusable, a button each, named by what
// pressing does ("open layer_3", "close attention").  Once per drawing.
function markScopes(v, meta, label) {
  if (!v.svg || v.scopesMarked) return;
  v.scopesMarked = true;
  const mark = (id, action, name) => {
    const e = v.svg.querySelector(`[id="${CSS.escape(id)}"]`);
    if (!e) return;
    e.setAttribute("tabindex", "0");
    e.setAttribute("role", "button");
    // (the name holds the words it shows, for speech control: "open layer_3, 3 ops, 5 tensors")
    const words = wordsOf(e);
    e.setAttribute("aria-label", [`${action} ${name}`, ...words.slice(words[0] === name ? 1 : 0)].join(", "));
    e.removeAttribute("aria-hidden");
    e.dataset.gvScope = action;
  };
  for (const [id, key] of Object.entries(meta.boxes || {})) mark(id, "open", label(key));
  for (const id of Object.keys(meta.clusters || {})) {
    const e = v.svg.querySelector(`[id="${CSS.escape(id)}"] text`);
    mark(id, "close", e ? e.textContent : "scope");
  }
}

// A drawing's edges as maps both ways (node -> [[node, edge id], ...]), made once.
function graphOf(v, edges) {
  if (!v.graph) {
    const down = new Map(), up = new Map();
    const add = (m, a, b, e) => { if (!m.has(a)) m.set(a, []); m.get(a).push([b, e]); };
    for (const [t, hd, e] of edges || []) {
      add(down, t, hd, e);
      add(up, hd, t, e);
    }
    v.graph = { down, up };
  }
  return v.graph;
}

// The diagram in `box` (the .gv-diagram element) for `steps`: the drawing
// (`svgText`) and its overview (`overviewText`, or null): the same layout
// without values, under the same ids, which "whole graph" shows, fitted to the
// box; any other zoom goes back to the drawing at 100%.  Without an overview
// (a large drawing), "whole graph" zooms the drawing out as far as its text
// stays readable.  `edges` are the drawing's ([tail, head, edge id]).
// A click on a node lights it and what it depends on, and picks it:
// hooks.picked(k, id) tells of it (k, the first step touching element id; -1:
// none).  A click on what is picked already goes to that step: hooks.pick(k,
// id).  So the click that brings a lecturer's focus to the diagram never steps;
// and since any step unpicks (unpick()), nor does one after stepping on.
// hooks.scope(id) is called when a click lands on a scope's box or border (true
// when it is one), hooks.zoom() when the zoom (or the drawing shown) changes.
export function createDiagram(box, svgText, overviewText, steps, edges, life, hooks) {
  const onZoom = () => hooks.zoom();
  const d = drawings(box, svgText, overviewText, steps, onZoom);
  let cur = -1;
  let meta = { boxes: {}, clusters: {}, edges }; // the scope view shown: what opens, closes
  let selected = null; // the node whose dependencies are lit
  let picked = null; // the element a click picked: a click on it again goes to its step

  // Keep the current step in view (camera.js): on a step, on first show and on
  // a resize.  Runs once per animation frame, after the restyle, so stepping
  // never forces a layout of its own.
  let followFrame = 0;
  let followSmooth = false;

  function scheduleFollow(smooth = true) {
    followSmooth = followFrame ? followSmooth && smooth : smooth;
    if (!followFrame && d.shown.cam) followFrame = requestAnimationFrame(follow);
  }

  function follow() {
    followFrame = 0;
    const { cam, index, styles } = d.shown;
    if (!cam || cur < 0 || !cam.measure()) return;
    cam.follow(index.stepIdx[cur], followSmooth);
    styles.restyleView();
  }

  // The reader's zoom: by a factor (zoom in / out, back to 1), or "whole graph"
  // (null: the overview if there is one); leaving the overview is going back to
  // the drawing at 100%.  The current step stays in view.
  function zoom(factor) {
    const { full } = d;
    if (!full.cam) return;
    if (followFrame) { cancelAnimationFrame(followFrame); followFrame = 0; }
    const leaving = factor !== null && d.shown !== full;
    d.show(factor === null ? d.overview() || full : full, cur);
    const { cam, index, styles } = d.shown;
    if (!cam.measure()) { // not on screen: nothing to zoom yet
      d.show(full, cur);
      return;
    }
    reachable();
    cam.zoom(leaving ? 1 / cam.scale : factor, cur >= 0 ? index.stepIdx[cur] : null);
    // Back from the overview at 100%, or zoomed out just enough for a step too big for it.
    if (leaving && cur >= 0) cam.follow(index.stepIdx[cur], false);
    if (!cam.limited) styles.settle(); // all of the diagram in view: bring every element up to date
    styles.restyleView();
    relight();
  }

  // Text of `px` on screen (its smallest text), on the drawing with values;
  // kept for the next follow when the box is not on screen yet.
  function setTextSize(px) {
    const { full } = d;
    if (!full.cam || !(px > 0)) return;
    if (followFrame) { cancelAnimationFrame(followFrame); followFrame = 0; }
    d.show(full, cur);
    reachable();
    full.cam.setTextSize(px, cur >= 0 ? full.index.stepIdx[cur] : null);
    if (!full.cam.limited) full.styles.settle();
    full.styles.restyleView();
  }

  const find = (svg, id) => (svg && id ? svg.querySelector(`[id="${CSS.escape(id)}"]`) : null);

  // Show scope view `key` (its payload entry `view`; `label(key)` names a node).
  // The element `from` (in the drawing shown) and `to` (in the new one) stand for the
  // same scope: the new drawing is scrolled so that it stays where it was on screen.
  // False when the view's drawing cannot be read.
  function setScope(key, view, label, from, to) {
    const v = d.scopeDrawing(key, view);
    if (!v) return false;
    const before = find(d.shown.svg, from);
    const at = before ? before.getBoundingClientRect() : null;
    if (followFrame) { cancelAnimationFrame(followFrame); followFrame = 0; }
    d.full = v;
    d.show(v, cur);
    meta = { boxes: view.boxes || {}, clusters: view.clusters || {},
      edges: view.edges || edges };
    markScopes(v, meta, label);
    reachable();
    const after = find(v.svg, to);
    if (at && after && v.cam && v.cam.measure()) {
      const r = after.getBoundingClientRect();
      box.scrollBy(r.left - at.left, r.top - at.top);
      v.cam.scrolled();
      v.styles.restyleView();
    } else {
      scheduleFollow(false);
    }
    if (selected && !find(v.svg, selected)) selected = null;
    if (picked && !find(v.svg, picked)) unpick();
    relight();
    return true;
  }

  // Light what node `id` depends on (up) and what depends on it (down), in the drawing
  // shown; null clears.  The marks are attributes (data-gv-dep), which stepping, a
  // rewrite of the class, leaves alone.
  function relight() {
    for (const v of [d.main, d.full, d.shown]) {
      if (v.svg && v.lit) {
        for (const e of v.lit) e.removeAttribute("data-gv-dep");
        v.svg.classList.remove("gv-selecting");
        v.lit = null;
      }
    }
    const v = d.shown;
    if (!selected || !v.svg) return;
    const g = graphOf(v === d.full ? v : d.full, meta.edges);
    const lit = [];
    const set = (id, what) => {
      const e = find(v.svg, id);
      if (e && !e.hasAttribute("data-gv-dep")) {
        e.setAttribute("data-gv-dep", what);
        lit.push(e);
      }
    };
    set(selected, "self");
    for (const [dir, what] of [[g.up, "up"], [g.down, "down"]]) {
      const seen = new Set([selected]);
      const todo = [selected];
      while (todo.length) {
        for (const [next, edge] of dir.get(todo.pop()) || []) {
          set(edge, what);
          if (!seen.has(next)) {
            seen.add(next);
            set(next, what);
            todo.push(next);
          }
        }
      }
    }
    v.svg.classList.add("gv-selecting");
    v.lit = lit;
  }

  function select(id) {
    const g = graphOf(d.full, meta.edges);
    selected = id && (g.up.has(id) || g.down.has(id)) ? id : null;
    relight();
    reachable();
    return selected !== null;
  }

  // Forget the pick (the lit dependencies stay until Escape): the viewer
  // stepped, so the next click picks again rather than jumps.
  function unpick() {
    if (picked === null) return;
    picked = null;
    hooks.picked(-1, null);
  }

  function onPick(k, id) {
    if (id === picked) {
      hooks.pick(k, id);
      return;
    }
    select(id);
    picked = id;
    hooks.picked(k, id);
  }

  // The elements of the current step, shown to screen readers and made stops of
  // the keyboard: Tab from the box goes through them, each says what it is, and
  // Enter or Space picks it (listenBox).  A step has a few, so a drawing of 500 ops is
  // never 500 stops; the others stay hidden (quiet()).  A node picked adds what it
  // depends on and what depends on it, lit (relight): picking one of those in turn,
  // a reader walks the whole graph from the keyboard.
  let reached = [];
  const endsOf = (id) => {
    const edge = (meta.edges || []).find((x) => x[2] === id);
    const ends = edge && [find(d.shown.svg, edge[0]), find(d.shown.svg, edge[1])];
    return ends && ends[0] && ends[1] ? ends : null;
  };
  function reachable() {
    const { svg, index } = d.shown;
    const now = new Set();
    for (const i of svg && cur >= 0 ? index.stepIdx[cur] : []) {
      const e = index.elems[i];
      if (!e.dataset.gvScope) now.add(e); // (a scope's box is a button of its own)
    }
    for (const e of (svg && d.shown.lit) || []) {
      if (!e.dataset.gvScope && (e.classList.contains("node") || e.classList.contains("edge"))) now.add(e);
    }
    // (an element that stays keeps its tabindex: Chromium drops the focus of one that loses it)
    const active = box.getRootNode().activeElement;
    for (const e of reached) {
      if (now.has(e)) continue;
      if (e === active) box.focus({ preventScroll: true }); // the keys still step
      e.removeAttribute("tabindex");
      e.removeAttribute("role");
      e.setAttribute("aria-hidden", "true");
    }
    for (const e of now) {
      e.setAttribute("tabindex", "0");
      // (an image, not a button: a button's name would have to hold every word it shows, values too)
      e.setAttribute("role", "img");
      e.setAttribute("aria-label", describe(e, endsOf));
      e.removeAttribute("aria-hidden");
    }
    reached = [...now];
  }

  listenBox(box, life, () => d.shown, onPick,
    (id) => hooks.scope(id, meta), () => scheduleFollow(false));
  life.onDispose(() => {
    if (followFrame) cancelAnimationFrame(followFrame);
    d.dispose();
  });

  return {
    // Show step k: restyle from the step shown before (follow() then pans to it).
    show(k) {
      cur = k;
      d.shown.styles.restyle(d.shown.at, k);
      d.shown.at = k;
      reachable();
    },
    // A short name for the drawing at step k: how many nodes, and which the step works on.
    summary(k) {
      const v = d.shown;
      if (!v.svg) return "not drawn";
      if (v.nodes === undefined) v.nodes = v.svg.querySelectorAll("g.node").length;
      const names = [];
      for (const i of v.index.stepIdx[k] || []) {
        const e = v.index.elems[i];
        const name = e.classList.contains("node") ? nodeName(e).slice(0, 40) : null;
        if (name && !names.includes(name)) names.push(name);
      }
      const some = names.length > 3 ? [...names.slice(0, 3), `${names.length - 3} more`] : names;
      const list = some.length > 1 ? `${some.slice(0, -1).join(", ")} and ${some[some.length - 1]}`
        : some[0] || "nothing drawn";
      return `${v.nodes} nodes; step ${k} works on ${list}`;
    },
    follow: scheduleFollow,
    zoomIn: () => zoom(ZOOM_STEP),
    zoomOut: () => zoom(1 / ZOOM_STEP),
    fitWhole: () => zoom(null),
    actualSize: () => d.shown.cam && zoom(1 / d.shown.cam.scale),
    // The reader's zoom set to `scale` (from the drawing with values).
    zoomTo: (scale) => d.full.cam && zoom(scale / d.full.cam.scale),
    setTextSize,
    setScope,
    // Light node id's dependencies (false: it is no node of the drawing); clear them.
    select,
    clearSelection() {
      const had = selected !== null || picked !== null;
      selected = null;
      unpick();
      relight();
      reachable();
      return had;
    },
    get selected() { return selected; },
    get picked() { return picked; },
    unpick,
    // The first step touching element `id` of the drawing at 100% (-1: none does), and
    // whether it is drawn there.
    firstStep(id) {
      const i = d.full.index.index.get(id);
      return i === undefined ? -1 : d.full.index.first[i];
    },
    has: (id) => !!find(d.full.svg, id),
    // The drawing at 100% (of the scope view shown): its <svg>, and the ids step k touches in it.
    get svg() { return d.full.svg; },
    stepIds: (k) => Array.from(d.full.index.stepIdx[k] || [], (i) => d.full.index.elems[i].id),
    // The smallest text's size on screen, px (null without a size of its own).
    get textSize() { return d.shown.cam ? d.shown.cam.textSize : null; },
    // The zoom shown: { scale, fit ("whole graph"), clipped (it stopped at
    // readable text before all of it fit), overview (the overview is shown) };
    // null without a size of its own.
    get zoom() {
      const cam = d.shown.cam;
      return cam ? { scale: cam.scale, base: cam.base, fit: cam.fit, clipped: cam.clipped,
        overview: d.shown !== d.full } : null;
    },
    // Whether a pan is pending or under way.
    get moving() { return followFrame !== 0 || (!!d.shown.cam && d.shown.cam.gliding); },
    // Run the pending follow-the-step pan now (the benchmark counts it).
    flush() {
      if (followFrame) { cancelAnimationFrame(followFrame); follow(); }
    },
    // Restyle now the elements a long jump left for later (off screen), as in idle time.
    settle: () => d.shown.styles.settle(),
    get stale() { return d.shown.styles.stale; },
    elements: d.main.index.elems.length,
    // The drawing at 100% (for tests): its <svg>.
    get svg() { return d.full.svg; },
    // New values for the same layout (gv.explore): the texts and hover texts change,
    // nothing moves.  False when the SVG is not the same drawing.
    retext: (text, overviewText) => d.retext(text, overviewText),
  };
}
