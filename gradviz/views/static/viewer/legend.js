// The legend: the three step states, then each mark the diagram uses, drawn as
// a small swatch.  What each mark looks like comes from the mark table
// (static/marks.json, which the Python diagram reads too); the entries of the
// payload's legend say which marks this diagram uses, with their colours.

import { h, svgElement } from "./dom.js";
import { modeWords } from "./format.js";
import MARK_TABLE from "../marks.json" with { type: "json" };

// A map with no prototype: a mark named like an object's property ("constructor") has no swatch.
const SWATCHES = Object.assign(Object.create(null),
  Object.fromEntries(MARK_TABLE.marks.map((m) => [m.mark, m.swatch])));

// A small drawing of one mark, in the diagram's colours.  The step states are
// drawn by the diagram's own CSS, so the swatch sits inside a .gv-diagram group.
function swatch(mark, stateClass, colors = {}) {
  const svgEl = svgElement("svg", {
    class: "gv-legend-swatch", viewBox: "0 0 36 20", width: "36", height: "20", "aria-hidden": "true",
  });
  const spec = SWATCHES[mark];
  if (!spec) return svgEl;
  const outer = svgElement("g", { class: "gv-diagram" });
  const g = svgElement("g");
  if (stateClass) g.setAttribute("class", stateClass);
  const shape = spec.ellipse
    ? svgElement("ellipse", { cx: 18, cy: 10, rx: 15, ry: 7 })
    : svgElement("path", { d: spec.d });
  const stroke = colors.stroke ?? "#333333";
  shape.setAttribute("fill", colors.fill ?? "#ffffff");
  shape.setAttribute("stroke", stroke);
  shape.setAttribute("stroke-width", spec.arrow ? "2" : "1.3");
  if (spec.dash) shape.setAttribute("stroke-dasharray", "4 2");
  g.append(shape);
  if (spec.arrow) g.append(svgElement("path", { d: spec.arrow === "forward" ? "M32 10l-7-4v8z" : "M4 10l7-4v8z", fill: stroke }));
  outer.append(g);
  svgEl.append(outer);
  return svgEl;
}

export function createLegend(payload) {
  const el = h("div", "gv-legend");
  el.append(h("div", "gv-section-title", "Legend"));
  const ul = h("ul", "gv-legend-list");
  const states = [
    ["node gv-tensor", "not reached yet"],
    ["node gv-tensor gv-done", modeWords(payload.mode).flowed],
    ["node gv-tensor gv-active", "this step"],
  ];
  for (const [cls, text] of states) {
    const li = h("li", "gv-legend-item gv-legend-state");
    li.append(swatch("tensor", cls), h("span", "gv-legend-label", text));
    ul.append(li);
  }
  for (const item of Array.isArray(payload.legend) ? payload.legend : []) {
    if (item.mark === "active") continue; // shown above, with the other states
    const li = h("li", "gv-legend-item");
    li.dataset.mark = String(item.mark ?? "");
    li.append(swatch(String(item.mark ?? ""), "", item), h("span", "gv-legend-label", item.label ?? ""));
    ul.append(li);
  }
  el.append(ul);
  return { el };
}
