// The diagram: the laid-out SVG, inserted once, and restyled as the viewer steps.
//
// A step only sets the classes gv-pending / gv-done / gv-active on the SVG
// elements whose state changes (each element's first step is precomputed, so a
// jump from step a to step b touches only ids(a), ids(b) and the elements first
// touched between).  A jump that changes many elements restyles at once only
// those on screen or near it; the others follow as they scroll near, or in idle
// time (see EAGER).  At actual size the box scrolls to keep the step in view.

import { SVG_NS, h } from "./dom.js";

const STATE_CLASSES = ["gv-pending", "gv-done", "gv-active"];
// A step that changes more elements than EAGER restyles only those within
// MARGIN px of the diagram box at once, and the others IDLE_SLICE at a time.
const EAGER = 200;
const MARGIN = 4000;
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

// Insert the SVG into the box; returns [svg, its natural size in px] (either may be null).
function insertSvg(box, text) {
  const svg = parseSvg(text);
  let natural = null; // the SVG's own size in px, for "actual size"
  if (svg) {
    const w = parseFloat(svg.getAttribute("width") || "");
    const hgt = parseFloat(svg.getAttribute("height") || "");
    const unit = (svg.getAttribute("width") || "").endsWith("pt") ? 4 / 3 : 1;
    if (w > 0 && hgt > 0) natural = [w * unit, hgt * unit];
    if (natural) box.style.setProperty("--gv-natural-h", `${Math.ceil(natural[1])}px`);
    if (!svg.getAttribute("viewBox") && natural) svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.classList.add("gv-svg");
    nestRuns(svg);
    box.append(svg);
  } else {
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
// a few dozen of them: elements outside the box (plus MARGIN px all round, more
// than Chromium paints ahead of a scroll) are marked stale instead and restyled
// when they scroll near, or a slice at a time when the page is idle.
function stepStyles({ elems, first, stepIdx, firstAt }, vp) {
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
    const lazy = vp.limited && count > EAGER;
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

// What part of the SVG the box shows: element boxes, measured once in the
// SVG's natural pixels (the layout never changes), and the box's scroll.
// Layout is read only here, in the follow-the-step frame, on scroll and on
// resize; stepping itself reads none.
function viewport(box, svg, natural, elems) {
  let boxes = null; // Float64Array: left, top, right, bottom per element
  // The part of the SVG in view, in natural px, with MARGIN all round; null:
  // all of it (fit to the box, not measured yet, or nothing to measure with).
  let view = null;
  let actual = false; // actual size (the box scrolls), or the whole graph
  const scroll = { left: 0, top: 0, width: 0, height: 0, svgLeft: 0, svgTop: 0, box: null, svg: null };

  function measureBoxes() {
    if (boxes || !svg || !natural || !elems.length) return;
    const sr = svg.getBoundingClientRect();
    if (sr.width === 0 || sr.height === 0) return; // not on screen yet
    const sx = natural[0] / sr.width, sy = natural[1] / sr.height;
    const b = new Float64Array(4 * elems.length);
    for (let i = 0; i < elems.length; i++) {
      const e = elems[i].getBoundingClientRect();
      b[4 * i] = (e.left - sr.left) * sx;
      b[4 * i + 1] = (e.top - sr.top) * sy;
      b[4 * i + 2] = (e.right - sr.left) * sx;
      b[4 * i + 3] = (e.bottom - sr.top) * sy;
    }
    boxes = b;
  }

  // Where the box is scrolled to and where the SVG sits in it.
  function measureScroll() {
    if (!svg) return;
    const br = box.getBoundingClientRect(), sr = svg.getBoundingClientRect();
    scroll.left = box.scrollLeft;
    scroll.top = box.scrollTop;
    scroll.width = box.clientWidth;
    scroll.height = box.clientHeight;
    scroll.svgLeft = sr.left - br.left - box.clientLeft + box.scrollLeft;
    scroll.svgTop = sr.top - br.top - box.clientTop + box.scrollTop;
    scroll.box = br;
    scroll.svg = sr;
    setView();
  }

  // The view around the box scrolled to (left, top), and around a second
  // position (where a glide ends) when given.
  function setView(to) {
    if (!actual || !boxes || !scroll.width || !scroll.height) {
      view = null;
      return;
    }
    const x = scroll.left - scroll.svgLeft, y = scroll.top - scroll.svgTop;
    const x2 = to ? to[0] - scroll.svgLeft : x, y2 = to ? to[1] - scroll.svgTop : y;
    view = [Math.min(x, x2) - MARGIN, Math.min(y, y2) - MARGIN,
      Math.max(x, x2) + scroll.width + MARGIN, Math.max(y, y2) + scroll.height + MARGIN];
  }

  // Where to scroll so that the elements `act` are in view: { to: [left, top],
  // near }, or null when they are already fully visible (or have no size).
  function target(act) {
    let l = Infinity, t = Infinity, r = -Infinity, b = -Infinity;
    for (let j = 0; j < act.length; j++) {
      const q = 4 * act[j];
      if (boxes[q + 2] <= boxes[q] && boxes[q + 3] <= boxes[q + 1]) continue;
      l = Math.min(l, boxes[q]); t = Math.min(t, boxes[q + 1]);
      r = Math.max(r, boxes[q + 2]); b = Math.max(b, boxes[q + 3]);
    }
    if (!(r > l)) return null;
    // Box-relative coordinates of the elements at the current scroll.
    const br = scroll.box, sr = scroll.svg;
    const sx = natural[0] / sr.width, sy = natural[1] / sr.height;
    const ox = sr.left - br.left, oy = sr.top - br.top;
    const L = ox + l / sx, T = oy + t / sy, R = ox + r / sx, B = oy + b / sy;
    const m = 24;
    if (L >= m && R <= br.width - m && T >= m && B <= br.height - m) return null;
    const dx = (L + R) / 2 - br.width / 2, dy = (T + B) / 2 - br.height / 2;
    // Glide to a nearby step; jump straight to a far one (a long glide loses the reader).
    const near = Math.abs(dx) < 1.5 * br.width && Math.abs(dy) < 1.5 * br.height;
    return { to: [scroll.left + dx, scroll.top + dy], near };
  }

  return {
    get limited() { return view !== null; },
    get actual() { return actual; },
    inView(i) {
      if (!view) return true;
      const q = 4 * i;
      return boxes[q + 2] >= view[0] && boxes[q] <= view[2] &&
        boxes[q + 3] >= view[1] && boxes[q + 1] <= view[3];
    },
    // Measure what the follow-the-step frame needs; false if there is nothing to measure yet.
    measure() {
      measureBoxes();
      if (!boxes) return false;
      measureScroll();
      return true;
    },
    measureScroll,
    setView,
    target,
    // The box was scrolled (a scroll event): the new view, without reading layout.
    scrolled() {
      if (!view) return false;
      scroll.left = box.scrollLeft;
      scroll.top = box.scrollTop;
      setView();
      return true;
    },
    // Actual size (the SVG at its own size in a scrolling box) or the whole graph.
    setActual(on) {
      actual = on && !!natural;
      if (svg && natural) {
        svg.style.width = actual ? `${natural[0]}px` : "";
        svg.style.height = actual ? `${natural[1]}px` : "";
      }
      if (!actual) {
        box.scrollLeft = box.scrollTop = 0;
        view = null; // the whole diagram is in view
      }
      return actual;
    },
  };
}

// The diagram in `box` (the .gv-diagram element) for `steps`.  onPick(k) is
// called when a click on the diagram picks step k.
export function createDiagram(box, svgText, steps, life, onPick) {
  const [svg, natural] = insertSvg(box, svgText);
  const index = indexSteps(svg, steps);
  const vp = viewport(box, svg, natural, index.elems);
  const styles = stepStyles(index, vp);
  let cur = -1;

  // At actual size, keep the current step in view: scroll the diagram box (never
  // the page) only when the step's elements are not already fully visible.
  // Runs once per animation frame, after the restyle, so stepping never forces a
  // layout of its own.
  let followFrame = 0;
  let followSmooth = false;

  function scheduleFollow(smooth = true) {
    followSmooth = smooth;
    if (!followFrame && vp.actual) followFrame = requestAnimationFrame(follow);
  }

  function follow() {
    followFrame = 0;
    if (!vp.actual || !svg || cur < 0 || !natural) return;
    if (!vp.measure()) return;
    styles.restyleView();
    const act = index.stepIdx[cur];
    if (!act || !act.length) return;
    const go = vp.target(act);
    if (!go) return;
    const glide = followSmooth && go.near;
    box.scrollTo({ left: go.to[0], top: go.to[1], behavior: glide ? "smooth" : "auto" });
    // Restyle what the box will show before this frame is painted.
    if (glide) vp.setView(go.to);
    else vp.measureScroll();
    styles.restyleView();
  }

  // Two zooms: "actual" (the diagram at its own size, the box scrolls and follows
  // the step; readable at any graph size) and "whole graph" (scaled to fit the box).
  // Returns the zoom in effect (actual size needs the SVG's own size).
  function setZoom(actual) {
    const on = vp.setActual(actual);
    if (!on) styles.settle(); // the whole diagram is in view: bring every element up to date
    scheduleFollow(false);
    return on;
  }

  // Scrolling the box brings the elements coming into view up to date before
  // they are painted (scroll events come before the frame's paint).
  life.listen(box, "scroll", () => {
    if (vp.scrolled()) styles.restyleView();
  }, { passive: true });
  // Clicking a diagram element picks the first step that touches it.
  life.listen(box, "click", (e) => {
    let t = e.target;
    while (t && t !== box) {
      if (t.id && index.index.has(t.id)) {
        onPick(index.first[index.index.get(t.id)]);
        return;
      }
      t = t.parentNode;
    }
  });
  // The viewer may render before it is on screen: follow the step once it has a size.
  if (typeof ResizeObserver !== "undefined") {
    let seen = false;
    const ro = new ResizeObserver(() => {
      if (!seen && box.clientWidth > 0) { seen = true; scheduleFollow(false); }
      if (vp.limited) { vp.measureScroll(); styles.restyleView(); }
    });
    ro.observe(box);
    life.onDispose(() => ro.disconnect());
  }
  life.onDispose(() => {
    if (followFrame) cancelAnimationFrame(followFrame);
    styles.dispose();
  });

  return {
    // Show step k: restyle from the step shown before (follow() then scrolls to it).
    show(k) {
      const from = cur;
      cur = k;
      styles.restyle(from, k);
    },
    follow: scheduleFollow,
    setZoom,
    // Whether the SVG has a size of its own (only then can it be shown at actual size).
    hasSize: !!natural,
    // Run the pending follow-the-step scroll now (the benchmark counts it).
    flush() {
      if (followFrame) { cancelAnimationFrame(followFrame); follow(); }
    },
    // Restyle now the elements a long jump left for later (off screen), as in idle time.
    settle: () => styles.settle(),
    get stale() { return styles.stale; },
    elements: index.elems.length,
  };
}
