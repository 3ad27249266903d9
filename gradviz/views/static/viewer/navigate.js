// Finding one's way in a large model: the name scopes the reader opens and closes,
// search by name, the scope each stretch of steps works in, and what a step inside
// a closed scope is doing.
//
// The payload's `scopes` (gradviz.views.navigation) holds the scope tree and a
// drawing per view: one node open with the nodes it is drawn in, the rest closed.
// A report holds every view's drawing; a widget's payload holds its own, and asks
// the kernel for another when the reader opens it (model.send, answered with a
// "msg:custom" message carrying the view).
//
// Stable classes: .gv-nav (the bar), .gv-crumbs > .gv-crumb (the open scopes,
// outermost first; a click closes what is inside it), .gv-search (the search box),
// .gv-nav-status (what the last search or opening did), .gv-scope-jump (a <select>
// of the stretches of steps by scope), .gv-scope-tick (their starts on the
// timeline), .gv-scope-note (in the panel: the step works inside a closed scope).

import { button, h } from "./dom.js";
import { modeWords } from "./format.js";

// How long a widget waits for the kernel to lay out a view.
const ASK_MS = 30000;
// The search box offers at most this many names as the reader types.
const OFFERED = 400;
// A trace without name scopes gets the search box past this many tensors.
const SEARCHED = 60;

let lists = 0; // the viewers' name lists on the page, each its own id
const within = (scope, s) => scope === s || scope.startsWith(s + "/");

// The name scopes the steps work in, cut into stretches at the first depth at which
// they differ (layer_0 ... layer_11, not layer_0/attention ...): [{ scope, first, last }].
// The final gradients, handed over at the end in the xs' own scopes, are one stretch
// of their own (scope null).
export function scopeStretches(steps) {
  const at = (s, d) => (s.kind === "result" ? null
    : String(s.scope || "").split("/").slice(0, d).join("/"));
  const worked = steps.filter((s) => s.kind !== "result");
  if (!worked.some((s) => s.scope)) return []; // no scopes: nothing to cut by
  let depth = 1;
  for (; depth <= 3; depth++) {
    if (new Set(worked.map((s) => at(s, depth))).size > 1) break;
  }
  if (depth > 3) return [];
  const out = [];
  steps.forEach((s, k) => {
    const scope = at(s, depth);
    const last = out[out.length - 1];
    if (last && last.scope === scope) last.last = k;
    else out.push({ scope, first: k, last: k });
  });
  return out.length > 1 ? out : [];
}

// Every name the search finds: tensors (by name, ":0" dropped), and scopes.
function searchEntries(payload, steps) {
  const out = [];
  const scopes = new Set();
  for (const [id, t] of Object.entries(payload.tensors || {})) {
    const name = String(t.name || id).replace(/:0$/, "");
    const scope = name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : "";
    out.push({ name, kind: "tensor", ids: t.op !== undefined ? [id, `o${t.op}`] : [id], scope });
  }
  for (const s of steps) {
    const parts = String(s.scope || "").split("/");
    for (let i = 1; i <= parts.length; i++) if (parts[0]) scopes.add(parts.slice(0, i).join("/"));
  }
  for (const scope of [...scopes].sort()) out.push({ name: scope, kind: "scope", ids: [], scope });
  return out;
}

// The navigator of one viewer.  act: { diagram, go(k), at(), model, life, timeline,
// onView() (told when another view is shown) }.
export function createNavigator(payload, steps, act) {
  const { diagram, model, life } = act;
  const scopes = payload.scopes && payload.scopes.nodes ? payload.scopes : null;
  const nodes = scopes ? scopes.nodes : {};
  const views = scopes ? { ...scopes.views } : {};
  const byScope = new Map();
  for (const [key, n] of Object.entries(nodes)) if (n.kind === "scope") byScope.set(n.scopes[0], key);
  const base = scopes ? scopes.base : "";
  let current = base;
  let waiting = null; // { key, resolve, timer }: the view asked of the kernel

  const el = h("div", "gv-nav");
  el.setAttribute("role", "navigation");
  el.setAttribute("aria-label", "find your way in the model");
  const crumbs = h("div", "gv-crumbs");
  crumbs.setAttribute("aria-label", "open scopes");
  const search = h("input", "gv-search");
  search.type = "search";
  search.placeholder = "find a tensor, op or scope";
  search.setAttribute("aria-label", "find a tensor, op or scope by name, and jump to its first step");
  const list = h("datalist");
  list.id = `gv-names-${++lists}`;
  search.setAttribute("list", list.id);
  const status = h("span", "gv-nav-status", "");
  status.setAttribute("aria-live", "polite");
  const stretches = scopeStretches(steps);
  const jump = h("select", "gv-scope-jump");
  const words = modeWords(payload.mode);
  const way = words.pass.split(" ")[0]; // "backward", or "forward"
  jump.setAttribute("aria-label", `jump to where a scope's ${words.pass} starts`);
  jump.append(h("option", null, `jump to a scope\u2019s ${way}\u2026`));
  const named = (r) => (r.scope === null ? words.results.toLowerCase() : r.scope || "outside any scope");
  for (const r of stretches) {
    const o = h("option", null, `${named(r)} \u00b7 steps ${r.first}\u2013${r.last}`);
    o.value = String(r.first);
    jump.append(o);
  }
  jump.hidden = !stretches.length;
  el.append(crumbs, search, list, jump, status);
  // (a small trace without scopes is read at a glance: no row for it)
  el.hidden = !scopes && !stretches.length && Object.keys(payload.tensors || {}).length <= SEARCHED;

  const note = h("div", "gv-scope-note");
  note.hidden = true;

  const label = (key) => (key === "/" ? "all closed" : key === "" ? "as drawn"
    : (nodes[key] && nodes[key].label) || key);

  // The innermost node holding `scope` (null: the top level).
  function home(scope) {
    for (let s = scope; s; s = s.includes("/") ? s.slice(0, s.lastIndexOf("/")) : "") {
      if (byScope.has(s)) return byScope.get(s);
    }
    return null;
  }

  // `key` and the nodes it is drawn in, outermost first.
  function chain(key) {
    const out = [];
    for (let k = key; k && nodes[k]; k = nodes[k].parent) out.unshift(k);
    return out;
  }

  // The view that shows `scope`'s own elements: its innermost node that opens.
  function viewFor(scope) {
    const keys = chain(home(scope)).filter((k) => nodes[k].opens);
    return keys.length ? keys[keys.length - 1] : null;
  }

  // The closed node that holds `scope` in the view shown, or null.
  function closedAround(scope) {
    const open = new Set((views[current] && views[current].open) || []);
    if (current === "" && base === "") return null; // the payload's own drawing: as drawn
    for (const k of chain(home(scope))) if (!open.has(k)) return k;
    return null;
  }

  // The view's payload entry: from the payload, or asked of the kernel.
  function fetchView(key) {
    if (views[key]) return Promise.resolve(views[key]);
    if (!(key in views) || typeof model.send !== "function") return Promise.resolve(null);
    if (waiting) { clearTimeout(waiting.timer); waiting.resolve(null); }
    return new Promise((resolve) => {
      const timer = setTimeout(() => { waiting = null; resolve(null); }, ASK_MS);
      waiting = { key, resolve, timer };
      model.send({ kind: "scope_view", key });
    });
  }

  function onMessage(msg) {
    if (!msg || msg.kind !== "scope_view") return;
    // (kept, even when no longer waited for: the reader may come back to it)
    if (msg.view && msg.key in views) views[msg.key] = msg.view;
    if (!waiting || msg.key !== waiting.key) return;
    const w = waiting;
    waiting = null;
    clearTimeout(w.timer);
    if (msg.view) views[msg.key] = msg.view;
    w.resolve(msg.view || null);
  }
  if (typeof model.on === "function" && typeof model.send === "function") {
    model.on("msg:custom", onMessage);
    life.onDispose(() => model.off("msg:custom", onMessage));
  }

  // An element of view `view` standing for node `key`: its border (open) or box (closed).
  function elementOf(view, key) {
    for (const [id, k] of Object.entries(view.clusters || {})) if (k === key) return id;
    for (const [id, k] of Object.entries(view.boxes || {})) if (k === key) return id;
    return null;
  }

  // Show view `key`.  `node` is the node opened or closed, kept where it was on
  // screen.  Resolves to whether it is shown.
  let asked = 0; // the latest call of openView: an earlier one still waiting gives way
  async function openView(key, node = null) {
    if (key === current) return true;
    const mine = ++asked;
    status.textContent = views[key] ? "" : `laying out ${label(key)}\u2026`;
    const view = await fetchView(key);
    if (mine !== asked) return false;
    if (!view) {
      status.textContent = `${label(key)} cannot be opened here`;
      return false;
    }
    const from = node && views[current] ? elementOf(views[current], node) : null;
    let to = node ? elementOf(view, node) : null;
    if (node && !to && nodes[node] && nodes[node].kind === "repeat") {
      to = elementOf(view, nodes[node].children[0]); // opened: its first instance
    }
    if (!diagram.setScope(key, view, label, from, to)) {
      status.textContent = `${label(key)} could not be drawn`;
      return false;
    }
    current = key;
    status.textContent = ""; // (the crumbs say what is open)
    showCrumbs();
    showNote(act.at());
    if (act.onView) act.onView();
    return true;
  }

  function showCrumbs() {
    if (!scopes) return;
    const items = [];
    if (base === "" && current !== "") {
      items.push(button("gv-crumb gv-crumb-drawn", "as drawn", "the drawing as it was first drawn"));
      items[items.length - 1].addEventListener("click", () => openView(""));
    }
    const all = button("gv-crumb gv-crumb-all", "all closed", "close every scope");
    items.push(all);
    const open = (views[current] && views[current].open) || [];
    all.addEventListener("click", () => openView("/", open[0] || null));
    open.forEach((key, i) => {
      const b = button("gv-crumb", label(key), `${label(key)}: close what is open inside it`);
      // (the node closed stays where it was on screen)
      b.addEventListener("click", () => openView(key, open[i + 1] || key));
      items.push(h("span", "gv-crumb-sep", "\u203a"), b);
    });
    const last = items[items.length - 1];
    if (current !== "") last.setAttribute("aria-current", "true");
    crumbs.replaceChildren(h("span", "gv-crumbs-label", "scopes"), ...items);
  }

  // The panel's note when step k works inside a scope the view shows closed.
  function showNote(k) {
    const s = steps[k];
    const closed = s && s.scope && scopes ? closedAround(String(s.scope)) : null;
    note.hidden = !closed;
    if (!closed) return;
    const open = button("gv-open-scope", `open ${label(closed)}`, `open ${label(closed)} to see this step's op`);
    open.addEventListener("click", () => openView(viewFor(String(s.scope)) || closed, closed));
    note.replaceChildren(
      h("span", null, `Inside ${label(closed)}, drawn closed: `),
      h("code", null, String(s.scope)),
      h("span", null, ` \u00b7 ${s.title || s.kind}. `), open);
  }

  // A scope box or border clicked (or pressed): open or close it.
  function onScope(id, meta) {
    const opening = meta.boxes && meta.boxes[id];
    if (opening) {
      openView(opening, opening);
      return true;
    }
    const closing = meta.clusters && meta.clusters[id];
    if (closing) {
      openView(nodes[closing] && nodes[closing].parent ? nodes[closing].parent : "/", closing);
      return true;
    }
    return false;
  }

  // Open the view that draws scope `scope` (or one of the elements `ids`) open, unless
  // the drawing shown does already.
  async function reveal(scope, ids) {
    if (!scopes || ids.some((i) => diagram.has(i))) return;
    const node = home(scope);
    const view = views[current];
    if (!node || (view && Object.values(view.clusters || {}).includes(node))) return;
    const key = viewFor(scope);
    if (key && key !== current) await openView(key, key);
  }

  // ---------------------------------------------------------------- search

  let entries = null; // made on first use
  function offer() {
    if (!entries) entries = searchEntries(payload, steps);
    const q = search.value.trim().toLowerCase();
    const hits = [];
    for (const e of entries) {
      if (!q || e.name.toLowerCase().includes(q)) hits.push(e);
      if (hits.length >= OFFERED) break;
    }
    list.replaceChildren(...hits.map((e) => {
      const o = h("option");
      o.value = e.name;
      o.label = e.kind;
      return o;
    }));
  }

  async function find(text) {
    if (!entries) entries = searchEntries(payload, steps);
    const q = String(text || "").trim().toLowerCase();
    if (!q) return false;
    const hit = entries.find((e) => e.name.toLowerCase() === q)
      || entries.find((e) => e.name.toLowerCase().endsWith("/" + q))
      || entries.find((e) => e.name.toLowerCase().includes(q));
    if (!hit) {
      status.textContent = `nothing is called \u201c${text}\u201d`;
      return false;
    }
    await reveal(hit.scope, hit.kind === "scope" ? [] : hit.ids);
    let k = -1;
    let id = hit.ids.find((i) => diagram.has(i)) || null;
    if (hit.kind === "scope") {
      k = steps.findIndex((s) => within(String(s.scope || ""), hit.scope));
      id = null;
    } else if (id) {
      k = diagram.firstStep(id);
      diagram.select(id);
    }
    if (k >= 0) act.go(k);
    status.textContent = `${hit.name}: ` + (k >= 0 ? `step ${k}` : "no step works on it");
    return true;
  }

  life.listen(search, "input", offer);
  life.listen(search, "focus", offer);
  life.listen(search, "keydown", (e) => {
    e.stopPropagation(); // typing a name: the keys are the box's, not the stepper's
    if (e.key === "Enter") {
      e.preventDefault();
      find(search.value);
    }
  });
  life.listen(jump, "change", () => {
    const k = Number(jump.value);
    if (!Number.isFinite(k)) return;
    const r = stretches.find((x) => x.first === k);
    (r && r.scope ? reveal(r.scope, []) : Promise.resolve()).then(() => act.go(k));
    jump.selectedIndex = 0;
  });

  // The stretches' starts on the timeline under the slider.
  if (act.timeline && steps.length > 1) {
    for (const r of stretches.slice(1)) {
      const tick = h("div", "gv-scope-tick");
      tick.style.left = `${(100 * r.first) / (steps.length - 1)}%`;
      tick.title = `${named(r)}: steps ${r.first}\u2013${r.last}`;
      act.timeline.append(tick);
    }
  }
  showCrumbs();
  // The payload's own drawing: its boxes and borders made buttons.
  if (scopes && views[base]) diagram.setScope(base, views[base], label, null, null);

  return {
    el,
    note,
    show: showNote,
    onScope,
    find,
    open: (key) => openView(key, key),
    get view() { return current; },
  };
}
