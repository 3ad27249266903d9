// The diagram box's camera: at what zoom the SVG is shown, which part of it
// the box shows, and where to pan so that a step is in view.
//
// The SVG is drawn at `scale` times its natural size (1, the size dot drew it
// at, is the default) in a box that scrolls.  Element boxes are measured once,
// in the SVG's natural px (the layout never changes); after that, keeping a
// step in view is arithmetic on them and on the box's scroll, read once a step.
//
// The reader's zoom (`base`: 1, or what the zoom buttons or "whole graph" set)
// is kept.  A step too big for the box at that zoom is shown zoomed out just
// enough to fit; the next step that fits at the reader's zoom is shown at it
// again.  The box pans only along an axis on which the step is not already in
// view, so a step beside the last one moves nothing.
//
// A new zoom lays out all of the SVG's text again (a CSS transform as well):
// about 0.015 ms an element in Chromium, 100 ms and more at 1,000 ops drawn
// whole.  So a diagram of more than AUTO_ZOOM_MAX steppable elements stays at
// the reader's zoom while stepping, showing the start of a step too big for
// the box; only the reader's own zooms change it.

export const ZOOM_STEP = 1.25;
const AUTO_ZOOM_MAX = 500;
const MIN_SCALE = 0.1;
const MAX_SCALE = 4;
// "Whole graph" never shrinks the smallest text below READABLE_PX.
const READABLE_PX = 8;
// Px kept between the step and the box's edges (less in a small box).
const EDGE = 24;
// Elements within MARGIN natural px of the box count as in view (see diagram.js).
const MARGIN = 4000;
// A pan is a glide of GLIDE_MS (none for a reader who asks for reduced motion);
// a step far away is jumped to: a long glide loses the reader.
const GLIDE_MS = 220;

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));
const easeOut = (t) => 1 - (1 - t) ** 3;

function reducedMotion() {
  return typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

// The smallest text of the SVG in natural px (font-size is in the viewBox's units).
function smallestText(svg, natural) {
  const vb = svg.viewBox && svg.viewBox.baseVal;
  const unit = vb && vb.width > 0 ? natural[0] / vb.width : 1;
  let least = Infinity;
  for (const t of svg.querySelectorAll("text")) {
    const size = parseFloat(t.getAttribute("font-size") || "");
    if (size > 0 && size < least) least = size;
  }
  return (Number.isFinite(least) ? least : 14) * unit;
}

// The camera of `box` (the scrolling .gv-diagram) on `svg` (natural: its size in
// px), for the elements `elems` the steps touch.  onChange() is told when the
// zoom changes.  `autoZoom` false: it never zooms out to fit a step; `margin`:
// the natural px around the box that count as in view.
export function createCamera(box, svg, natural, elems, onChange, autoZoom = true, margin = MARGIN) {
  let boxes = null; // Float64Array: left, top, right, bottom per element, natural px
  let scale = 1; // the zoom shown
  let base = 1; // the reader's zoom
  let fit = false; // "whole graph": base follows the box's size
  let clipped = false; // "whole graph" stopped at readable text before all of it fit
  let view = null; // the part of the SVG in view, natural px, MARGIN all round
  let glide = 0; // the glide's animation frame
  let readable = 0; // the least zoom at which the smallest text is READABLE_PX (once known)
  let least = 0; // the least zoom a step too big for the box may go to (setTextSize)
  let smallest = 0; // the smallest text of the SVG, natural px (once known)
  // The box: scroll, client size, padding (read once).
  const geo = { left: 0, top: 0, width: 0, height: 0, pad: null };
  svg.style.width = `${natural[0]}px`;
  svg.style.height = `${natural[1]}px`;

  function measureBoxes() {
    if (boxes) return;
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

  // Read the box's scroll and size (one layout read).
  function readBox() {
    if (!geo.pad) {
      const cs = getComputedStyle(box);
      geo.pad = ["Left", "Top", "Right", "Bottom"].map((s) => parseFloat(cs["padding" + s]) || 0);
    }
    geo.left = box.scrollLeft;
    geo.top = box.scrollTop;
    geo.width = box.clientWidth;
    geo.height = box.clientHeight;
    setView();
  }

  // Where the SVG's top left sits in the box's scrolled content at zoom s (the
  // SVG is centred across when narrower than the box).
  function origin(s) {
    const [pl, pt, pr] = geo.pad;
    return [pl + Math.max(0, (geo.width - pl - pr - natural[0] * s) / 2), pt];
  }

  function maxScroll(s) {
    const [pl, pt, pr, pb] = geo.pad;
    return [Math.max(0, pl + natural[0] * s + pr - geo.width),
      Math.max(0, pt + natural[1] * s + pb - geo.height)];
  }

  // The view around the box scrolled to (left, top), and around a second
  // position (where a glide ends) when given.
  function setView(to) {
    if (!boxes || !geo.width || !geo.height) {
      view = null;
      return;
    }
    const [ox, oy] = origin(scale);
    const x = geo.left - ox, y = geo.top - oy;
    const x2 = to ? to[0] - ox : x, y2 = to ? to[1] - oy : y;
    const v = [(Math.min(x, x2)) / scale - margin, Math.min(y, y2) / scale - margin,
      (Math.max(x, x2) + geo.width) / scale + margin, (Math.max(y, y2) + geo.height) / scale + margin];
    const whole = v[0] <= 0 && v[1] <= 0 && v[2] >= natural[0] && v[3] >= natural[1];
    view = whole ? null : v;
  }

  // The union of the elements `act`, natural px, or null (none has a size).
  function unionOf(act) {
    let l = Infinity, t = Infinity, r = -Infinity, b = -Infinity;
    for (let j = 0; j < act.length; j++) {
      const q = 4 * act[j];
      if (boxes[q + 2] <= boxes[q] && boxes[q + 3] <= boxes[q + 1]) continue;
      l = Math.min(l, boxes[q]); t = Math.min(t, boxes[q + 1]);
      r = Math.max(r, boxes[q + 2]); b = Math.max(b, boxes[q + 3]);
    }
    return r > l ? [l, t, r, b] : null;
  }

  const edge = () => Math.min(EDGE, geo.width / 10, geo.height / 10);

  // The largest zoom at which u (natural px) fits in the box, with the edges.
  function fitting(u) {
    const m = edge();
    return Math.min((geo.width - 2 * m) / Math.max(1, u[2] - u[0]),
      (geo.height - 2 * m) / Math.max(1, u[3] - u[1]));
  }

  // Along one axis: the scroll that shows [lo, hi] (scrolled px), from `at` in a
  // window `size` wide: `at` itself when the span is in view already, else the
  // span centred (its start, when it is wider than the window).
  function pan(at, lo, hi, size, most) {
    const m = edge();
    if (lo >= at + m - 0.5 && hi <= at + size - m + 0.5) return at;
    const want = hi - lo <= size - 2 * m ? (lo + hi) / 2 - size / 2 : lo - m;
    return clamp(want, 0, most);
  }

  // Where the box goes to show u (natural px) at zoom s: [left, top].
  function scrollFor(u, s, from) {
    const [ox, oy] = origin(s);
    const [mx, my] = maxScroll(s);
    return [pan(from[0], ox + u[0] * s, ox + u[2] * s, geo.width, mx),
      pan(from[1], oy + u[1] * s, oy + u[3] * s, geo.height, my)];
  }

  function stopGlide() {
    if (glide) cancelAnimationFrame(glide);
    glide = 0;
  }

  function scrollTo(to, smooth) {
    stopGlide();
    const from = [geo.left, geo.top];
    const dx = to[0] - from[0], dy = to[1] - from[1];
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return;
    const near = Math.abs(dx) < 1.5 * geo.width && Math.abs(dy) < 1.5 * geo.height;
    setView(to); // restyle what the box will show, from the first frame on
    if (!smooth || !near || reducedMotion()) {
      box.scrollTo(to[0], to[1]);
      geo.left = box.scrollLeft;
      geo.top = box.scrollTop;
      setView();
      return;
    }
    const t0 = performance.now();
    const frame = (now) => {
      const t = Math.min(1, (now - t0) / GLIDE_MS), e = easeOut(t);
      box.scrollTo(from[0] + dx * e, from[1] + dy * e);
      glide = t < 1 ? requestAnimationFrame(frame) : 0;
      if (!glide) { geo.left = box.scrollLeft; geo.top = box.scrollTop; setView(); }
    };
    glide = requestAnimationFrame(frame);
  }

  // Show the SVG at zoom s, the point in the middle of the box staying there;
  // false when s is the zoom shown already.
  function setScale(s) {
    s = clamp(s, MIN_SCALE, MAX_SCALE);
    if (Math.abs(s - scale) < 1e-3) return false;
    const [ox, oy] = origin(scale);
    const cx = (geo.left + geo.width / 2 - ox) / scale, cy = (geo.top + geo.height / 2 - oy) / scale;
    scale = s;
    svg.style.width = `${natural[0] * s}px`;
    svg.style.height = `${natural[1] * s}px`;
    readBox(); // the scroll bars may come or go
    const [nx, ny] = origin(s);
    box.scrollTo(nx + cx * s - geo.width / 2, ny + cy * s - geo.height / 2);
    geo.left = box.scrollLeft;
    geo.top = box.scrollTop;
    setView();
    onChange();
    return true;
  }

  function textAt1() {
    if (!smallest) smallest = smallestText(svg, natural);
    return smallest;
  }

  // "Whole graph": the zoom at which all of the SVG fits, not below readable text.
  function fitBase() {
    const [pl, pt, pr, pb] = geo.pad;
    const whole = Math.min((geo.width - pl - pr - 1) / natural[0], (geo.height - pt - pb - 1) / natural[1]);
    if (!readable) readable = READABLE_PX / textAt1();
    clipped = whole < readable;
    return Math.min(1, Math.max(whole, readable)); // a small graph stays at its own size
  }

  return {
    // For the restyle: whether only part of the SVG is in view, and whether element i is.
    get limited() { return view !== null; },
    inView(i) {
      if (!view) return true;
      const q = 4 * i;
      return boxes[q + 2] >= view[0] && boxes[q] <= view[2] &&
        boxes[q + 3] >= view[1] && boxes[q + 1] <= view[3];
    },
    get scale() { return scale; },
    get base() { return base; },
    get fit() { return fit; },
    get clipped() { return fit && clipped; },
    get gliding() { return glide !== 0; },
    // Measure what following the step needs; false if the box is not on screen yet.
    measure() {
      measureBoxes();
      if (!boxes) return false;
      readBox();
      return geo.width > 0 && geo.height > 0;
    },
    // Bring the elements `act` (a step) into view: at the reader's zoom, or
    // zoomed out just enough to fit them; panning only where they are not in view.
    follow(act, smooth) {
      if (fit) base = fitBase();
      const u = act && act.length ? unionOf(act) : null;
      if (!u) {
        setScale(base);
        return;
      }
      const auto = autoZoom && elems.length <= AUTO_ZOOM_MAX ? Math.max(least, fitting(u)) : Infinity;
      const zoomed = setScale(Math.min(base, auto));
      scrollTo(scrollFor(u, scale, [geo.left, geo.top]), smooth && !zoomed);
    },
    // The reader zooms by `factor` (keeping the step `act` in view), or fits the
    // whole graph (factor null).
    zoom(factor, act) {
      least = 0;
      if (factor === null) {
        fit = true;
        base = fitBase();
      } else {
        fit = false;
        base = clamp(scale * factor, MIN_SCALE, MAX_SCALE);
      }
      setScale(base);
      const u = act && act.length ? unionOf(act) : null;
      if (u) scrollTo(scrollFor(u, scale, [geo.left, geo.top]), false);
      onChange();
    },
    // The smallest text's size on screen, px.
    get textSize() { return textAt1() * scale; },
    // The reader's zoom set so that the smallest text is `px` on screen, and
    // kept there: a step too big for the box is not zoomed out below it (its
    // start is shown), since text asked for by size is text that must be read.
    // Applied when the box is next measured if it is not on screen yet.
    setTextSize(px, act) {
      fit = false;
      base = least = clamp(px / textAt1(), MIN_SCALE, MAX_SCALE);
      if (!this.measure()) return;
      setScale(base);
      const u = act && act.length ? unionOf(act) : null;
      if (u) scrollTo(scrollFor(u, scale, [geo.left, geo.top]), false);
      onChange();
    },
    // The box was scrolled (a scroll event): the new view, without layout reads
    // beyond the scroll position.
    scrolled() {
      if (!boxes) return false;
      geo.left = box.scrollLeft;
      geo.top = box.scrollTop;
      if (!glide) setView();
      return true;
    },
    stopGlide,
    dispose: stopGlide,
  };
}
