// The rating history of a bot as an SVG: mu with its ±sigma band, and the ordinal
// (mu - 3 sigma) dashed. `history` is [{match, mu, sigma, began}, ...], oldest first: a point
// with `began` (a new version, a new season: its uncertainty widened) is marked by a line.

const NS = "http://www.w3.org/2000/svg";

function el(name, attrs = {}, text = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

export function drawRatingChart(container, history) {
  const W = 600;
  const H = 220;
  const pad = { l: 44, r: 12, t: 12, b: 26 };
  const n = history.length;
  const lows = history.map((p) => p.mu - 3 * p.sigma);
  const highs = history.map((p) => p.mu + p.sigma);
  let lo = Math.min(...lows);
  let hi = Math.max(...highs);
  if (hi - lo < 1) { hi += 0.5; lo -= 0.5; }
  const x = (i) => pad.l + (n > 1 ? (i / (n - 1)) * (W - pad.l - pad.r) : (W - pad.l - pad.r) / 2);
  const y = (v) => pad.t + (1 - (v - lo) / (hi - lo)) * (H - pad.t - pad.b);
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "Rating history" });
  const games = history.filter((p) => p.match).length;
  svg.append(el("title", {}, `Rating over ${games} rated game${games === 1 ? "" : "s"}`));
  // grid and axis labels
  const ticks = 4;
  for (let k = 0; k <= ticks; k += 1) {
    const v = lo + ((hi - lo) * k) / ticks;
    svg.append(el("line", { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), stroke: "#262d47", "stroke-width": 1 }));
    svg.append(el("text", { x: pad.l - 6, y: y(v) + 4, "text-anchor": "end", fill: "#9aa4c0", "font-size": 12 }, v.toFixed(1)));
  }
  svg.append(el("text", { x: pad.l, y: H - 6, fill: "#9aa4c0", "font-size": 12 }, "start"));
  svg.append(el("text", { x: W - pad.r, y: H - 6, fill: "#9aa4c0", "font-size": 12, "text-anchor": "end" }, `${games} game${games === 1 ? "" : "s"}`));
  // where each version (or season) began: a vertical line and its words
  history.forEach((p, i) => {
    if (!p.began) return;
    svg.append(el("line", { x1: x(i), x2: x(i), y1: pad.t, y2: H - pad.b, stroke: "#7ee2b8", "stroke-width": 1.5, "stroke-dasharray": "3 3", class: "began" }));
    svg.append(el("text", { x: x(i) + 4, y: H - pad.b - 6, fill: "#7ee2b8", "font-size": 12, class: "began" }, p.began));
  });
  // the ±sigma band
  const upper = history.map((p, i) => `${x(i)},${y(p.mu + p.sigma)}`);
  const lower = history.map((p, i) => `${x(i)},${y(p.mu - p.sigma)}`).reverse();
  svg.append(el("polygon", { points: [...upper, ...lower].join(" "), fill: "rgba(255,179,71,0.18)", stroke: "none" }));
  // ordinal, then mu
  svg.append(el("polyline", { points: history.map((p, i) => `${x(i)},${y(p.mu - 3 * p.sigma)}`).join(" "), fill: "none", stroke: "#9ec3ff", "stroke-width": 2, "stroke-dasharray": "6 4" }));
  svg.append(el("polyline", { points: history.map((p, i) => `${x(i)},${y(p.mu)}`).join(" "), fill: "none", stroke: "#ffb347", "stroke-width": 2.5 }));
  if (n <= 120) {
    history.forEach((p, i) => {
      const dot = el("circle", { cx: x(i), cy: y(p.mu), r: 3, fill: "#ffb347" });
      dot.append(el("title", {}, `${p.match ? "match " + p.match + ": " : (p.began ? p.began + ": " : "start: ")}μ ${p.mu.toFixed(2)} ± ${p.sigma.toFixed(2)}, ordinal ${(p.mu - 3 * p.sigma).toFixed(2)}`));
      svg.append(dot);
    });
  }
  const legend = el("g", { "font-size": 12, fill: "#e8ecf7" });
  legend.append(el("line", { x1: pad.l + 8, x2: pad.l + 28, y1: pad.t + 8, y2: pad.t + 8, stroke: "#ffb347", "stroke-width": 2.5 }));
  legend.append(el("text", { x: pad.l + 32, y: pad.t + 12 }, "μ ± σ"));
  legend.append(el("line", { x1: pad.l + 90, x2: pad.l + 110, y1: pad.t + 8, y2: pad.t + 8, stroke: "#9ec3ff", "stroke-width": 2, "stroke-dasharray": "6 4" }));
  legend.append(el("text", { x: pad.l + 114, y: pad.t + 12 }, "ordinal μ − 3σ"));
  svg.append(legend);
  container.replaceChildren(svg);
}
