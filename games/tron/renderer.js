// Tron renderer (games/tron/README.md §6): the grid with every snake's trail, told apart by
// colour (16 colours chosen for distinctness on the dark board: Okabe-Ito's seven, then nine
// more far from them and from each other), by a second cue for colour-blind viewers (the
// head's shape, one of four, and the trail's pattern, solid or dotted: no two of the colours
// that such viewers confuse most share both) and by a letter label at each head and in the
// standings column beside the board (alive first by length, then the dead by lap of death,
// with the reason).
// Frame: {"width", "height", "lap", "heads": [[x, y] | [null, null] | null per seat],
//         "alive": [bool], "lengths": [n], "deaths": [{"seat", "lap", "reason"}]}
// Frames carry only each lap's new heads: the renderer rebuilds the trails from the frames of
// laps 0..k (view.frameAt), one step at a time when the viewer moves forward by one lap, so a
// late joiner and a replay scrubbed to lap k both draw exactly the board of lap k.
// A big screen's pane (``legend: false``) is the board alone, as large as its canvas holds
// (aspect kept), its heads' letters at least ``minText`` px; it says what it drew in
// ``metrics`` (the board's box, the heads' size, each seat's colour) and in the canvas'
// ``data-board``, ``data-head`` and ``data-colours``, for whoever checks the wall.

import {
  BG, GOLD, INK, MUTED, PANEL, clamp, drawBanner, ellipsize, fitFont, font, resultText,
  roundRect, setupCanvas,
} from "../js/common.js";

// why a snake died, in words (the engine's death reasons, games/tron/engine.py)
const DEATHS = {
  fault: "a faulty reply",
  cell_taken: "hit a trail",
  same_target: "collided head-on",
  out_of_grid: "left the grid",
};
const deathText = (reason) => DEATHS[reason] || String(reason || "").replaceAll("_", " ");

// Okabe & Ito (2008) without black (the background), then colours of Kelly's (1965) list of
// maximum contrast and a few more, each kept far from the others on #0f1424
export const COLORS = [
  "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#CC79A7", "#D55E00", "#3D8FE0", "#F2F3F4",
  "#8DB600", "#B07CDB", "#C2B280", "#FF4040", "#848482", "#00D0C8", "#A0522D", "#F99379",
];
// the second cue: the head's shape (by colour, in fours) and the trail's pattern
export const SHAPES = COLORS.map((_c, i) => ["circle", "square", "diamond", "hexagon"][i % 4]);
export const DOTTED = COLORS.map((_c, i) => Math.floor(i / 4) % 2 === 1);
// a letter a bot: A to Z, then A2 to Z2...
export const LABELS = Array.from({ length: 78 }, (_c, i) => String.fromCharCode(65 + (i % 26)) + (i < 26 ? "" : String(1 + Math.floor(i / 26))));

/** What seat ``seat`` is drawn with: ``marks[seat]`` (an index into the palette, or
 *  ``{hue, label}``: a big screen's colour and letter for the bot) or the seat's own. */
export function markOf(marks, seat) {
  const m = marks?.[seat];
  const hue = typeof m === "number" ? m : m?.hue ?? seat;
  const at = ((hue % COLORS.length) + COLORS.length) % COLORS.length;
  const label = typeof m === "object" && m?.label ? m.label : LABELS[typeof m === "number" ? m : seat] ?? String(seat + 1);
  return { color: COLORS[at], dotted: DOTTED[at], shape: SHAPES[at], label };
}

export function createRenderer(canvas, options = {}) {
  return new TronRenderer(canvas, options);
}

/** The board of lap ``index``: {index, trails: [[[x, y] or null, ...] head first]}. */
export function rebuild(frameAt, index) {
  const first = frameAt(0);
  const board = { index: 0, trails: (first?.heads || []).map((h) => (h ? [h] : [])) };
  for (let i = 1; i <= index; i += 1) step(board, frameAt(i));
  board.index = index;
  return board;
}

function step(board, frame) {
  if (!frame) return;
  const n = frame.heads?.length ?? 0;
  for (let seat = 0; seat < n; seat += 1) {
    if (!board.trails[seat]) board.trails[seat] = [];
    if (!frame.alive[seat]) board.trails[seat] = [];
    else if (frame.heads[seat]) board.trails[seat].unshift(frame.heads[seat]);
  }
  board.index += 1;
}

class TronRenderer {
  // ``marks`` (optional): seat -> the colour and letter drawn for it (``markOf``; by default
  // the seat's own), so that a big screen keeps one colour and letter per bot on every pane;
  // ``legend: false``: the board alone, filling the canvas (a big screen's pane lists the
  // seats itself, in type large enough to be read from the back of a hall), its heads'
  // letters at ``minText`` px at least
  constructor(canvas, { names = [], marks = null, legend = true, minText = 0 } = {}) {
    this.canvas = canvas;
    this.names = names;
    this.marks = marks;
    this.legend = legend;
    this.minText = minText;
    this.colors = COLORS; // the viewer's name bars, turn table and timeline use them too
    this.view = null;
    this.board = null;
    this.metrics = null;
  }

  mark(seat) {
    return markOf(this.marks, seat);
  }

  preferredHeight(width) {
    if (width < 760) return Math.round(width + 40 + 13 * 22);
    return Math.round(width * 0.62);
  }

  setOverlay() {}

  /** The trails at the view's lap: one step from the last board drawn when possible. */
  trailsFor(view) {
    const b = this.board;
    if (b && b.index === view.index && b.frame === view.frame) return b;
    if (b && b.index === view.index - 1 && view.index > 0) step(b, view.frame);
    else this.board = rebuild(view.frameAt || ((i) => (i === view.index ? view.frame : null)), view.index);
    this.board.frame = view.frame;
    return this.board;
  }

  /** The board's box: beside or above the legend in the viewer; alone, as large as the
   *  canvas holds and centred, on a big screen. */
  boardBox(f, w, h, n) {
    const cols = f.width || 100;
    const rows = f.height || 100;
    if (!this.legend) {
      const cell = Math.min((w - 4) / cols, (h - 4) / rows);
      return { x0: (w - cell * cols) / 2, y0: (h - cell * rows) / 2, cell, cols, rows, portrait: false, foot: 0 };
    }
    const portrait = w < 760;
    const foot = clamp(h * 0.08, 28, 70);
    const side = portrait ? Math.min(w - 16, h - foot - 16 - n * 22) : Math.min(h - foot - 16, w * 0.66);
    return { x0: 8, y0: 8, cell: side / Math.max(cols, rows), cols, rows, portrait, foot };
  }

  draw(view) {
    this.view = view;
    const { ctx, w, h } = setupCanvas(this.canvas);
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, w, h);
    const f = view.frame;
    if (!f?.heads) return;
    const names = view.names?.length ? view.names : this.names;
    const board = this.trailsFor(view);
    const n = f.heads.length;
    const { x0, y0, cell, cols, rows, portrait, foot } = this.boardBox(f, w, h, n);
    const bw = cell * cols;
    const bh = cell * rows;

    // the grid: y grows downwards (row 0 at the top), a faint line every 10 cells
    ctx.fillStyle = "#0f1424";
    ctx.fillRect(x0, y0, bw, bh);
    ctx.strokeStyle = "rgba(154,164,192,0.10)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let i = 10; i < cols; i += 10) {
      ctx.moveTo(x0 + i * cell, y0);
      ctx.lineTo(x0 + i * cell, y0 + bh);
    }
    for (let i = 10; i < rows; i += 10) {
      ctx.moveTo(x0, y0 + i * cell);
      ctx.lineTo(x0 + bw, y0 + i * cell);
    }
    ctx.stroke();
    ctx.strokeStyle = "#3a4468";
    ctx.strokeRect(x0 - 0.5, y0 - 0.5, bw + 1, bh + 1);

    // the trails (an off-grid point [null, null] is not drawn), then heads with their labels
    const pad = cell > 4 ? cell * 0.08 : 0;
    for (let seat = 0; seat < n; seat += 1) {
      const trail = board.trails[seat] || [];
      const mark = this.mark(seat);
      ctx.fillStyle = mark.color;
      for (const p of trail) {
        if (p && p[0] !== null) ctx.fillRect(x0 + p[0] * cell + pad, y0 + p[1] * cell + pad, cell - 2 * pad, cell - 2 * pad);
      }
      if (mark.dotted && cell >= 3) {
        ctx.fillStyle = BG;
        const r = Math.max(0.8, cell * 0.18);
        for (const p of trail) {
          if (p && p[0] !== null) ctx.fillRect(x0 + (p[0] + 0.5) * cell - r, y0 + (p[1] + 0.5) * cell - r, 2 * r, 2 * r);
        }
      }
    }
    // a head: its letter at minText px at least on a big screen (the shape around it larger)
    const tag = this.legend ? clamp(cell * 2.4, 11, 22) : Math.max(cell * 2.2, this.minText / 0.62, 24);
    const colours = [];
    for (let seat = 0; seat < n; seat += 1) {
      const head = f.heads[seat];
      const mark = this.mark(seat);
      colours.push(mark.color);
      if (!f.alive[seat] || !head || head[0] === null) continue;
      const k = mark.label.length > 1 ? 0.5 : 0.62; // a letter's size in its head
      const d = this.legend ? tag : Math.max(tag, this.minText / k);
      const cx = clamp(x0 + (head[0] + 0.5) * cell, x0 + d / 2, x0 + bw - d / 2);
      const cy = clamp(y0 + (head[1] + 0.5) * cell, y0 + d / 2, y0 + bh - d / 2);
      drawHead(ctx, this.legend ? "circle" : mark.shape, cx, cy, d / 2, mark.color);
      ctx.fillStyle = BG;
      ctx.font = font(d * k, 900);
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillText(mark.label, cx, cy + 1);
    }
    this.metrics = { board: { x: x0, y: y0, w: bw, h: bh }, canvas: { w, h }, head: tag, colours };
    if (!this.legend) {
      this.canvas.dataset.board = [x0, y0, bw, bh].map((v) => v.toFixed(1)).join(" ");
      this.canvas.dataset.head = tag.toFixed(1);
      this.canvas.dataset.colours = colours.join(" ");
      return; // the pane says the names and the result in its own type
    }

    this.drawLegend(ctx, f, names, { x0, y0, bw, bh, w, n, portrait });

    // the result at the end
    const text = view.final ? resultText(view.match, view.lastTurn, null) : null;
    if (text) drawBanner(ctx, text, 8, h - foot - 4, w - 16, foot);
  }

  drawLegend(ctx, f, names, { x0, y0, bw, bh, w, n, portrait }) {
    // the standings column: alive first (longest first), then the dead (latest death first)
    const died = new Map((f.deaths || []).map((d) => [d.seat, d]));
    const order = [...Array(n).keys()].sort((a, b) => {
      const da = died.get(a);
      const db = died.get(b);
      if (!da !== !db) return da ? 1 : -1;
      if (da && db && da.lap !== db.lap) return db.lap - da.lap;
      return (f.lengths?.[b] ?? 0) - (f.lengths?.[a] ?? 0) || a - b;
    });
    const sx = portrait ? 8 : x0 + bw + 16;
    const sy = portrait ? y0 + bh + 10 : y0;
    const sw = portrait ? w - 16 : w - sx - 8;
    const rowH = portrait ? 22 : clamp((bh - 40) / Math.max(n, 8), 20, 60);
    ctx.textAlign = "left";
    ctx.fillStyle = INK;
    ctx.font = font(clamp(rowH * 0.6, 12, 28), 800);
    const alive = f.alive.filter(Boolean).length;
    ctx.fillText(`lap ${f.lap ?? 0} · ${alive} of ${n} alive`, sx, sy + rowH * 0.5);
    order.forEach((seat, i) => {
      const y = sy + rowH * (i + 1.1);
      const d = died.get(seat);
      ctx.globalAlpha = d ? 0.55 : 1;
      ctx.fillStyle = PANEL;
      roundRect(ctx, sx, y, sw, rowH - 3, 6);
      ctx.fill();
      const sq = rowH - 9;
      const mark = this.mark(seat);
      ctx.fillStyle = mark.color;
      ctx.fillRect(sx + 4, y + 3, sq, sq);
      if (mark.dotted) {
        // the dotted pattern of the trail, as four dots in the corners of the swatch
        ctx.fillStyle = BG;
        const r = sq * 0.09;
        for (const [dx, dy] of [[0.18, 0.18], [0.82, 0.18], [0.18, 0.82], [0.82, 0.82]]) {
          ctx.fillRect(sx + 4 + sq * dx - r, y + 3 + sq * dy - r, 2 * r, 2 * r);
        }
      }
      ctx.fillStyle = BG;
      ctx.font = font(sq * 0.62, 900);
      ctx.textAlign = "center";
      ctx.fillText(mark.label, sx + 4 + sq / 2, y + 3 + sq / 2 + 1, sq);
      ctx.textAlign = "left";
      const status = d ? `lap ${d.lap}: ${deathText(d.reason)}` : `${f.lengths?.[seat] ?? ""} long`;
      ctx.font = font(sq * 0.58, 600);
      const statusW = Math.min(ctx.measureText(status).width, sw * 0.45);
      ctx.fillStyle = d ? MUTED : GOLD;
      ctx.textAlign = "right";
      ctx.fillText(status, sx + sw - 8, y + rowH / 2, sw * 0.45);
      ctx.textAlign = "left";
      fitFont(ctx, names[seat] ?? `seat ${seat}`, sw - sq - statusW - 28, sq * 0.66, 700, 9);
      ctx.fillStyle = INK;
      ctx.fillText(ellipsize(ctx, names[seat] ?? `seat ${seat}`, sw - sq - statusW - 28), sx + sq + 12, y + rowH / 2);
      ctx.globalAlpha = 1;
    });
  }
}

/** A head: a ``shape`` of radius ``r`` in ``color``, outlined. */
function drawHead(ctx, shape, cx, cy, r, color) {
  ctx.fillStyle = color;
  ctx.strokeStyle = INK;
  ctx.lineWidth = Math.max(1.5, r * 0.08);
  ctx.beginPath();
  if (shape === "square") roundRect(ctx, cx - r * 0.9, cy - r * 0.9, r * 1.8, r * 1.8, r * 0.25);
  else if (shape === "diamond") {
    ctx.moveTo(cx, cy - r * 1.1);
    ctx.lineTo(cx + r * 1.1, cy);
    ctx.lineTo(cx, cy + r * 1.1);
    ctx.lineTo(cx - r * 1.1, cy);
    ctx.closePath();
  } else if (shape === "hexagon") {
    for (let k = 0; k < 6; k += 1) {
      const a = Math.PI / 6 + (k * Math.PI) / 3;
      ctx[k ? "lineTo" : "moveTo"](cx + r * Math.cos(a), cy + r * Math.sin(a));
    }
    ctx.closePath();
  } else ctx.arc(cx, cy, r, 0, Math.PI * 2);
  ctx.fill();
  ctx.stroke();
}
