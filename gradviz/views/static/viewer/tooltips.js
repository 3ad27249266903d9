// The diagram's hover texts (each element's SVG <title>) while values are
// hidden, and a gradient's before its step: the tooltip would otherwise give
// the numbers away on hover.  It then keeps its first line, what the element
// is, and says that its values are hidden; revealing the values (or reaching
// the step) gives it back whole.

// Which elements' tooltips hold which values.
const GRADIENT = ".gv-grad, .gv-mark, .gv-sum";
const FORWARD = ".gv-tensor";

const whole = new WeakMap(); // <title> -> its full text

function mask(title, hidden) {
  if (!whole.has(title)) whole.set(title, title.textContent);
  const text = whole.get(title);
  title.textContent = hidden ? `${text.split("\n")[0]}\n(values hidden)` : text;
}

// Mask or restore the tooltips of every diagram in `box` (the main drawing and
// the overview, whichever are inserted).
export function maskTooltips(box, hideGrad, hideForward) {
  for (const title of box.querySelectorAll("svg g > title")) {
    const g = title.parentElement;
    const grad = g.matches(GRADIENT);
    const fwd = !grad && g.matches(FORWARD);
    if (!grad && !fwd && !whole.has(title)) continue;
    mask(title, (grad && hideGrad) || (fwd && hideForward));
  }
}

// A gradient the walk has not reached (gv-pending) keeps its values to itself
// too.  Its state changes every step, so its tooltip is set as the pointer
// comes to it, before the browser shows it: no work per step.
export function watchTooltips(box, life, gradHidden) {
  life.listen(box, "pointerover", (e) => {
    const g = e.target instanceof Element ? e.target.closest(GRADIENT) : null;
    const title = g && g.querySelector(":scope > title");
    if (title) mask(title, gradHidden() || g.classList.contains("gv-pending"));
  });
}
