// A small SVG bar chart of turns per day. Drawn with SVG attributes (not inline styles, which
// the page's Content Security Policy forbids), coloured by CSS so it follows light and dark.

import { h } from "./dom.js";

const WIDTH = 600;
const HEIGHT = 140;
const PAD = { top: 10, right: 4, bottom: 22, left: 32 };

/** days: [{day: "YYYY-MM-DD", turns}], oldest first. */
export function dayChart(days, label) {
  const max = Math.max(1, ...days.map((d) => d.turns));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const step = plotW / Math.max(days.length, 1);
  const svg = h("svg:svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "chart", role: "img", "aria-label": label,
  });
  // Axis: 0 and the maximum, enough to read a small chart.
  for (const value of [0, max]) {
    const y = PAD.top + plotH - (value / max) * plotH;
    svg.append(h("svg:line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y, y2: y, class: "grid" }));
    svg.append(h("svg:text", { x: PAD.left - 4, y: y + 4, class: "tick", "text-anchor": "end" }, String(value)));
  }
  days.forEach((d, i) => {
    const barH = (d.turns / max) * plotH;
    const bar = h("svg:rect", {
      x: PAD.left + i * step + step * 0.15, y: PAD.top + plotH - barH,
      width: Math.max(1, step * 0.7), height: Math.max(d.turns ? 1 : 0, barH), class: "bar",
      dataset: { day: d.day, turns: d.turns },
    });
    bar.append(h("svg:title", {}, `${d.day}: ${d.turns} turns`));
    svg.append(bar);
  });
  // First and last day under the axis.
  if (days.length) {
    svg.append(h("svg:text", { x: PAD.left, y: HEIGHT - 6, class: "tick" }, days[0].day.slice(5)));
    svg.append(h("svg:text", { x: WIDTH - PAD.right, y: HEIGHT - 6, class: "tick", "text-anchor": "end" }, days[days.length - 1].day.slice(5)));
  }
  return svg;
}
