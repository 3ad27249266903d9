// The current step as a picture for a slide: the "picture" button saves the
// viewer's drawing cropped about the step and the nodes its edges join, 16:9,
// whole boxes only, with its look
// written into the SVG as attributes (no <style>, no filter), so that it reads
// the same in PowerPoint, Keynote, Inkscape and librsvg.  It is what
// trace.to_svg(step=k, crop=True) writes in Python (gradviz/views/diagram/
// slide.py), made here from the drawing on screen: the stylesheet's look is read
// back from the browser (getComputedStyle) instead of matched rule by rule, and
// the step's light is the same black outline over a wide yellow copy.  As PNG,
// the same SVG drawn 1920 px wide.
//
// Stable CSS classes (tests and users rely on them):
//   .gv-save-picture      the button, in the options row after print
//   .gv-picture-form      its form: .gv-picture-svg and .gv-picture-png (save
//                         the current step's picture), .gv-picture-cancel

import { button, download, formTool, h, slug, SVG_NS, svgElement } from "./dom.js";
import { croppedDrawing, firstSteps, measureDrawing } from "./handout.js";

// As slide.py: 1280 px wide (a 16:9 slide at 96 dpi), CONTEXT pt of room all
// round the step, at least MIN_WIDTH pt of the drawing across.
const SLIDE_WIDTH = 1280;
const ASPECT = 16 / 9;
const CONTEXT = 24;
const MIN_WIDTH = 640;
const PNG_WIDTH = 1920;
const GLOW = "#F0E442";
const GLOW_WIDTH = "8";
const ACTIVE_WIDTH = "2.5";
const BLACK = "#000000";
const XML_NS = "http://www.w3.org/XML/1998/namespace";
const SHAPES = new Set(["path", "polygon", "ellipse", "polyline"]);
// Computed style -> attribute, for shapes and text.
const PAINT = [["stroke", "stroke"], ["fill", "fill"], ["stroke-dasharray", "strokeDasharray"],
  ["stroke-width", "strokeWidth"], ["stroke-linejoin", "strokeLinejoin"]];

const union = (a, b) => (a ? [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])] : b.slice());
const holds = (a, b) => a[0] <= b[0] + 0.5 && b[2] <= a[2] + 0.5 && a[1] <= b[1] + 0.5 && b[3] <= a[3] + 0.5;

// `box` with CONTEXT all round, at least MIN_WIDTH wide, at ASPECT, moved inside
// `whole` along each axis where it fits (centred on it where it does not).
function framed(box, whole) {
  const w = Math.max(box[2] - box[0] + 2 * CONTEXT, MIN_WIDTH, (box[3] - box[1] + 2 * CONTEXT) * ASPECT);
  const hgt = w / ASPECT;
  const c = [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2];
  const out = [c[0] - w / 2, c[1] - hgt / 2, c[0] + w / 2, c[1] + hgt / 2];
  if (!whole) return out;
  for (const axis of [0, 1]) {
    const lo = out[axis], hi = out[axis + 2], a = whole[axis], b = whole[axis + 2];
    const shift = hi - lo >= b - a ? (a + b) / 2 - (lo + hi) / 2 : Math.max(a - lo, 0) + Math.min(b - hi, 0);
    out[axis] += shift;
    out[axis + 2] += shift;
  }
  return out;
}

// How near a node an edge's end lies, in pt (as slide.py's _TOUCH).
const TOUCH = 4;
const PAIR = /(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)/g;

// Where the edge `g` starts and ends, in the drawing's units: its line's ends
// and its arrowheads (`shift`: the top group's translation, where it has one).
function ends(g, shift) {
  const out = [];
  for (const e of g.children) {
    const pts = Array.from((e.getAttribute("d") || e.getAttribute("points") || "").matchAll(PAIR),
      (m) => [Number(m[1]) + shift[0], Number(m[2]) + shift[1]]);
    if (e.localName === "path" && pts.length) out.push(pts[0], pts[pts.length - 1]);
    else if (e.localName === "polygon") out.push(...pts);
  }
  return out;
}

// The frame about the elements `ids` and the nodes at either end of their
// edges (the step's inputs and outputs), as slide.py's crop makes it.
function slideFrame(m, ids) {
  let focus = null;
  for (const id of ids) {
    const b = m.boxes.get(id);
    if (b) focus = union(focus, b);
  }
  if (!focus || !m.top) return m.whole;
  const t = /translate\((-?[\d.]+)[ ,]+(-?[\d.]+)\)/.exec(m.top.getAttribute("transform") || "");
  const shift = t ? [Number(t[1]), Number(t[2])] : [0, 0];
  const wanted = new Set(ids);
  const parts = Array.from(m.top.children);
  const tips = parts.filter((e) => wanted.has(e.id) && e.classList.contains("edge")).flatMap((e) => ends(e, shift));
  parts.forEach((e, i) => {
    const b = m.parts[i];
    if (!b || !e.classList.contains("node") || e.id === "legend") return;
    if (tips.some(([x, y]) => b[0] - TOUCH <= x && x <= b[2] + TOUCH && b[1] - TOUCH <= y && y <= b[3] + TOUCH)) {
      focus = union(focus, b);
    }
  });
  return framed(focus, m.whole);
}

// A computed value as an attribute: no units, and "transparent" as none.
const asAttr = (v) => (v === "rgba(0, 0, 0, 0)" ? "none" : v.replace(/px/g, ""));

// The look the page's stylesheet gives each element of `svg` (staged in the
// viewer, so that the viewer's hidden values stay hidden), written in.
function writeLook(svg) {
  const hidden = [];
  for (const el of svg.querySelectorAll("*")) {
    const tag = el.localName;
    if (tag === "title" || tag === "style") continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === "hidden" || cs.display === "none") {
      hidden.push(el);
      continue;
    }
    if (cs.opacity !== "1") el.setAttribute("opacity", cs.opacity);
    if (!SHAPES.has(tag) && tag !== "text") continue;
    for (const [attr, prop] of PAINT) {
      const v = asAttr(cs[prop]);
      if (v && !(v === "none" && !el.hasAttribute(attr) && attr === "stroke-dasharray")) el.setAttribute(attr, v);
    }
    if (tag !== "text") continue;
    // the indent of a matrix's later rows, which librsvg drops otherwise
    if (/^[ \u00a0]/.test(el.textContent)) el.setAttributeNS(XML_NS, "xml:space", "preserve");
    el.setAttribute("font-family", cs.fontFamily);
    el.setAttribute("font-weight", cs.fontWeight);
    if (cs.paintOrder.startsWith("stroke") && cs.stroke !== "none") {
      // The white halo under an edge's label: a stroked copy beneath it.
      const under = el.cloneNode(true);
      under.setAttribute("class", "gv-halo");
      under.setAttribute("aria-hidden", "true");
      under.setAttribute("fill", cs.stroke);
      under.setAttribute("stroke-linejoin", "round");
      el.before(under);
      el.setAttribute("stroke", "none");
    }
  }
  return hidden;
}

// The step's elements lit without a filter: their outlines black and thick over
// a wide yellow copy of each.
function light(svg) {
  for (const g of svg.querySelectorAll("g.gv-active")) {
    const shapes = Array.from(g.children).filter((e) => SHAPES.has(e.localName) && e.getAttribute("stroke") !== "none");
    if (!shapes.length) continue;
    const first = shapes[0];
    for (const s of shapes) {
      const glow = s.cloneNode(false);
      glow.removeAttribute("class");
      for (const [k, v] of [["fill", "none"], ["stroke", GLOW], ["stroke-width", GLOW_WIDTH],
        ["stroke-linejoin", "round"], ["stroke-dasharray", "none"]]) glow.setAttribute(k, v);
      first.before(glow);
      s.setAttribute("stroke", BLACK);
      s.setAttribute("stroke-width", ACTIVE_WIDTH);
      if (g.classList.contains("edge") && s.localName === "polygon") s.setAttribute("fill", BLACK);
    }
  }
}

// The SVG text of the picture of step k: `drawn` is the drawing shown (svg(),
// stepIds(k), settle()), `root` the viewer (its classes say which values hide).
export function slidePicture(root, drawn, steps, k) {
  drawn.settle();
  const live = drawn.svg();
  if (!live) throw new Error("there is no drawing to save");
  const m = measureDrawing(live);
  const ids = drawn.stepIds(k);
  const frame = slideFrame(m, ids);
  const first = firstSteps(steps.map((_, j) => drawn.stepIds(j)));
  const svg = croppedDrawing(m, frame, first, new Set(ids), k);
  svg.removeAttribute("class");
  const stage = h("div", "gv-picture-stage");
  stage.setAttribute("aria-hidden", "true");
  stage.style.cssText = "position:fixed;left:-100000px;top:0;pointer-events:none;";
  svg.setAttribute("width", String(frame[2] - frame[0]));
  svg.setAttribute("height", String(frame[3] - frame[1]));
  stage.append(svg);
  root.append(stage);
  let hidden;
  try {
    hidden = writeLook(svg);
    // Whole boxes only: a node the frame cuts goes, and so does a label it cuts.
    const top = Array.from(svg.children).find((e) => e.localName === "g");
    for (const part of top ? Array.from(top.children) : []) {
      if (part.localName !== "g") continue;
      const box = (e) => { const b = e.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; };
      if (part.classList.contains("node")) {
        if (!holds(frame, box(part))) part.remove();
      } else {  // an edge's label goes whole, all its lines, or stays whole
        const texts = Array.from(part.querySelectorAll("text"));
        if (texts.some((t) => !holds(frame, box(t)))) for (const t of texts) t.remove();
      }
    }
  } finally {
    stage.remove();
  }
  for (const el of hidden) el.remove();
  for (const el of Array.from(svg.querySelectorAll("style"))) el.remove();
  light(svg);
  // The drawing's own white ground gives way to the frame's.
  const top = Array.from(svg.children).find((e) => e.localName === "g");
  if (top) for (const p of Array.from(top.children)) if (p.localName === "polygon") p.remove();
  const [x0, y0, x1, y1] = frame;
  svg.prepend(svgElement("rect", { x: x0.toFixed(2), y: y0.toFixed(2), width: (x1 - x0).toFixed(2),
    height: (y1 - y0).toFixed(2), fill: "#ffffff" }));
  for (const e of svg.querySelectorAll("[data-gv-id]")) {
    e.id = e.dataset.gvId;
    e.removeAttribute("data-gv-id");
  }
  svg.setAttribute("class", "gv-svg");
  svg.setAttribute("viewBox", [x0, y0, x1 - x0, y1 - y0].map((v) => v.toFixed(2)).join(" "));
  svg.setAttribute("width", String(SLIDE_WIDTH));
  svg.setAttribute("height", String(Math.round(SLIDE_WIDTH / ASPECT)));
  svg.setAttribute("xmlns", SVG_NS);
  return new XMLSerializer().serializeToString(svg);
}

// The picture's SVG text drawn `width` px wide, as a PNG blob.
export function pngOf(svgText, width = PNG_WIDTH) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    // A data: URL, which the report's content policy lets images load (blob: it does not).
    const url = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svgText);
    img.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = width;
      canvas.height = Math.round(width / ASPECT);
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the PNG could not be made"))), "image/png");
    };
    img.onerror = () => {
      reject(new Error("the picture could not be drawn as PNG"));
    };
    img.src = url;
  });
}

// A file name from the trace's title and the step: "two-layer-mlp-step4.svg".
function fileName(payload, k, ext) {
  return `${slug(payload.title) || "gradviz"}-step${k}.${ext}`;
}

// The button of the options row and its form.  at() is the current step.
export function createPictureTool(root, payload, steps, life, drawn, at) {
  const open = button("gv-save-picture", "picture", "save a picture of this step for a slide (SVG or PNG)");
  const svgButton = button("gv-picture-svg", "SVG", "save this step as an SVG picture, 16:9");
  const pngButton = button("gv-picture-png", "PNG", "save this step as a PNG picture, 1920 \u00d7 1080");
  const cancel = button("gv-picture-cancel", "cancel", "close without saving");
  const { el, form, close, say } = formTool("gv-picture", open, "div", [svgButton, pngButton, cancel],
    () => svgButton.focus(), life);
  const failed = (err) => say(`The picture could not be made: ${err.message || err}`);
  life.listen(cancel, "click", close);
  life.listen(form, "keydown", (e) => {
    if (e.key === "Escape") { e.stopPropagation(); close(); open.focus(); }
  });
  const picture = () => slidePicture(root, drawn, steps, at());
  life.listen(svgButton, "click", () => {
    try {
      download(new Blob([picture()], { type: "image/svg+xml" }), fileName(payload, at(), "svg"));
      close();
    } catch (err) { failed(err); }
  });
  life.listen(pngButton, "click", async () => {
    try {
      const k = at();
      download(await pngOf(picture()), fileName(payload, k, "png"));
      close();
    } catch (err) { failed(err); }
  });
  return { el, picture };
}
