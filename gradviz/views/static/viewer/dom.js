// Building DOM: elements, buttons, icons, and listeners that are undone on cleanup.

export const SVG_NS = "http://www.w3.org/2000/svg";

export function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

export function svgElement(tag, attrs = {}) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

// A button named by the words it shows (a name that differs from the visible
// words fails speech control, WCAG 2.5.3); one with no words (an icon, "+") is
// named by its title without the key hint: "zoom in (+)" -> "zoom in".  The
// title says more on hover; `keys` (aria-keyshortcuts) the key that does the same.
export function button(cls, label, title, keys) {
  const b = h("button", "gv-btn " + cls, label);
  b.type = "button";
  b.title = title;
  if (!/[\p{L}\p{N}]/u.test(label ?? "")) b.setAttribute("aria-label", title.replace(/\s*\([^()]*\)$/, ""));
  if (keys) b.setAttribute("aria-keyshortcuts", keys);
  return b;
}

// Text for screen readers only (visually hidden by stepper.css).
export function srOnly(tag, cls) {
  return h(tag, "gv-sr-only" + (cls ? " " + cls : ""));
}

// A box that scrolls made a stop of the keyboard, so that its arrow keys scroll
// it, and named for screen readers.
export function scrollStop(el, name, role = "group") {
  el.tabIndex = 0;
  el.setAttribute("role", role);
  el.setAttribute("aria-label", name);
  return el;
}

// Control icons drawn as inline SVG: no icon font, so nothing to fetch or miss.
const ICONS = {
  first: ["M2.5 2h2v12h-2z", "M14 2 6 8l8 6z"],
  prev: ["M12 2 4 8l8 6z"],
  next: ["M4 2l8 6-8 6z"],
  last: ["M11.5 2h2v12h-2z", "M2 2l8 6-8 6z"],
  play: ["M4 2l10 6-10 6z"],
  pause: ["M3.5 2h3v12h-3z", "M9.5 2h3v12h-3z"],
  // four corners pointing out: fill the screen
  present: ["M1 1h5v2H3v3H1z", "M10 1h5v5h-2V3h-3z", "M1 10h2v3h3v2H1z", "M13 10h2v5h-5v-2h3z"],
};

export function icon(name) {
  const s = svgElement("svg", { viewBox: "0 0 16 16", class: "gv-icon", "aria-hidden": "true" });
  for (const d of ICONS[name]) s.append(svgElement("path", { d }));
  return s;
}

export function iconButton(cls, name, title, text, iconAfter = false, keys = null) {
  const b = button(cls, text, title, keys);
  b.textContent = ""; // (the words go in a span of their own, beside the icon)
  const parts = text ? [icon(name), h("span", "gv-btn-text", text)] : [icon(name)];
  b.append(...(iconAfter ? parts.reverse() : parts));
  return b;
}

// A button of the options row that opens a form on a line of its own (print,
// picture): `parts` go in the form, then a message line.  The button toggles
// the form and focuses `first` when it opens; close() hides the form and its
// message; say(text) shows a message, or hides it for none.
export function formTool(cls, open, formTag, parts, first, life) {
  const el = h("div", `${cls}-tool`);
  const form = h(formTag, `${cls}-form`);
  const message = h("div", `${cls}-message`);
  message.setAttribute("role", "alert");
  message.hidden = true;
  form.hidden = true;
  form.append(...parts, message);
  el.append(open, form);
  open.setAttribute("aria-expanded", "false");
  const close = () => {
    form.hidden = true;
    message.hidden = true;
    open.setAttribute("aria-expanded", "false");
  };
  life.listen(open, "click", () => {
    form.hidden = !form.hidden;
    open.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) first();
  });
  const say = (text) => {
    message.textContent = text || "";
    message.hidden = !text;
  };
  return { el, form, close, say };
}

// What a viewer must undo when it is removed: listeners, observers, timers.
// listen() adds a listener and remembers how to remove it; dispose() undoes all.
export function lifetime() {
  const undo = [];
  return {
    listen(target, ev, fn, opts) {
      target.addEventListener(ev, fn, opts);
      undo.push(() => target.removeEventListener(ev, fn, opts));
    },
    onDispose(fn) {
      undo.push(fn);
    },
    dispose() {
      for (const fn of undo.splice(0)) fn();
    },
  };
}

// Text whose values stand in spans of their own, each followed by a
// "(hidden)" that shows in their place when the viewer hides gradient values:
// the numbers are then nowhere in the page's text.  `at` is the payload's flat
// [start, end, ...] (UTF-16 units) in a text of which this one starts at `from`
// (a step's formula follows its sentence and a newline).
export function sayWithValues(el, text, at, from = 0) {
  const parts = [];
  let done = 0;
  const spans = Array.isArray(at) ? at : [];
  for (let i = 0; i + 1 < spans.length; i += 2) {
    const a = spans[i] - from, b = spans[i + 1] - from;
    if (!(a >= done && b > a && b <= text.length)) continue;
    parts.push(text.slice(done, a), h("span", "gv-said-value", text.slice(a, b)),
      h("span", "gv-said-hidden", "(hidden)"));
    done = b;
  }
  parts.push(text.slice(done));
  el.replaceChildren(...parts);
}

// Save `blob` as a download named `name` (the page's own data: no network).
export function download(blob, name) {
  const a = h("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// Text as a piece of a file name: lower case, letters and digits joined by "-",
// at most 60 characters ("Two-layer MLP" -> "two-layer-mlp"); "" for none.
export function slug(text) {
  return String(text || "").toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 60).replace(/-+$/, "");
}
