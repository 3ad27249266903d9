// The diagram's hover texts (each element's SVG <title>) while values are
// hidden, and a gradient's before its step: the tooltip would otherwise give
// the numbers away on hover.  It then keeps its first line, what the element
// is, and the line of code that made it, and says that its values are hidden;
// revealing the values (or reaching the step) gives it back whole.

// Which elements' tooltips hold which values.
const GRADIENT = ".gv-grad, .gv-mark, .gv-sum";
const FORWARD = ".gv-tensor";

const whole = new WeakMap(); // <title> -> its full text, once it was masked
const touched = new WeakSet(); // boxes in which a tooltip was ever masked

// A masked tooltip: its first line, what the element is, and the line of code that
// made it (no value is in those), then that its values are hidden.
const CODE_LINE = /^(from|at|made at): /;
function kept(text) {
  const lines = text.split("\n");
  const code = lines.slice(1).filter((line) => CODE_LINE.test(line));
  return [lines[0], ...code, "(values hidden)"].join("\n");
}

// Only writes what changes: a tooltip never masked is whole already.
function mask(title, hidden) {
  if (!whole.has(title)) {
    if (!hidden) return;
    whole.set(title, title.textContent);
  }
  const text = whole.get(title);
  const want = hidden ? kept(text) : text;
  if (title.textContent !== want) title.textContent = want;
}

// A tooltip's new full text (gv.explore's new values); masked, it stays masked.
export function retitle(title, text) {
  if (whole.has(title)) whole.set(title, text);
  else if (title.textContent !== text) title.textContent = text;
}

// Mask or restore the tooltips of every diagram in `box` (the main drawing and
// the overview, whichever are inserted).  With every value shown in a box
// where nothing was ever masked, there is nothing to visit.
export function maskTooltips(box, hideGrad, hideForward) {
  if (!hideGrad && !hideForward && !touched.has(box)) return;
  touched.add(box);
  for (const title of box.querySelectorAll("svg g > title")) {
    const g = title.parentElement;
    const grad = g.matches(GRADIENT);
    mask(title, grad ? hideGrad : hideForward && g.matches(FORWARD));
  }
}

// A gradient the walk has not reached (gv-pending) keeps its values to itself
// too.  Its state changes every step, so its tooltip is set as the pointer
// comes to it, before the browser shows it: no work per step.
export function watchTooltips(box, life, gradHidden) {
  life.listen(box, "pointerover", (e) => {
    const g = e.target instanceof Element ? e.target.closest(GRADIENT) : null;
    const title = g && g.querySelector(":scope > title");
    if (title) {
      if (g.classList.contains("gv-pending")) touched.add(box);
      mask(title, gradHidden() || g.classList.contains("gv-pending"));
    }
  });
}
