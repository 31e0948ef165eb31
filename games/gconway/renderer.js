// gconway renderer (games/gconway/README.md §10), as the original GUI showed it: the torus board in
// the two seat colours (cells placed this turn outlined, contested cells marked), the bot
// names top left and top right with their live counts below, a domination bar across the
// top split in proportion to the live counts (half and half when both are 0), a chart of
// live counts over time (one line per seat, x = iteration) built from the frames seen so
// far, the iteration ("137 / 500") and the budgets.
// Frame: {"field": [rows], "live": [a, b], "budgets": [a, b], "iteration": i,
//         "maxIterations": n, "placed": [[[r, c]...], [...]], "contested": [[r, c]...]}

import {
  ACCENT, BG, GOLD, INK, MUTED, PANEL, SEAT_COLORS, clamp, drawBanner, ellipsize, fitFont, font,
  pointer, resultText, setupCanvas,
} from "../js/common.js";

export function createRenderer(canvas, options = {}) {
  return new GconwayRenderer(canvas, options);
}

class GconwayRenderer {
  constructor(canvas, { names = [] } = {}) {
    this.canvas = canvas;
    this.names = names;
    this.view = null;
    this.overlay = null;
  }

  preferredHeight(width) {
    // portrait (phones): board, then the chart under it; landscape: the chart beside it
    if (width < 760) return Math.round(width + clamp(width * 0.2, 70, 150) + width * 0.34 + 40);
    return Math.round(width * 0.62);
  }

  setOverlay(overlay) {
    this.overlay = overlay;
    if (this.view) this.draw(this.view);
  }

  draw(view) {
    this.view = view;
    const { ctx, w, h } = setupCanvas(this.canvas);
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, w, h);
    const f = view.frame;
    if (!f?.field?.length) return;
    const names = view.names?.length ? view.names : this.names;
    const rows = f.field.length;
    const cols = f.field[0].length;

    // the domination bar across the top, then the names with their live counts
    const barH = clamp(h * 0.025, 8, 26);
    const live = f.live || [0, 0];
    const total = live[0] + live[1];
    const split = total ? live[0] / total : 0.5;
    ctx.fillStyle = SEAT_COLORS[0];
    ctx.fillRect(0, 0, w * split, barH);
    ctx.fillStyle = SEAT_COLORS[1];
    ctx.fillRect(w * split, 0, w - w * split, barH);
    ctx.fillStyle = BG;
    ctx.fillRect(w / 2 - 1, 0, 2, barH);
    const nameSize = clamp(Math.min(h * 0.039, w * 0.045), 11, 40);
    const head = nameSize * 2.6;
    const midW = clamp(w * 0.24, 90, 420);
    for (const seat of [0, 1]) {
      const left = seat === 0;
      ctx.textAlign = left ? "left" : "right";
      ctx.textBaseline = "alphabetic";
      ctx.font = font(nameSize, 800);
      ctx.fillStyle = SEAT_COLORS[seat];
      const x = left ? 8 : w - 8;
      ctx.fillText(ellipsize(ctx, names[seat] ?? `seat ${seat}`, (w - midW) / 2 - 12), x, barH + nameSize * 1.15);
      ctx.font = font(nameSize * 0.8, 700);
      ctx.fillStyle = INK;
      ctx.fillText(`${live[seat]} live`, x, barH + nameSize * 2.15);
    }
    ctx.textAlign = "center";
    ctx.fillStyle = INK;
    const iterText = `${f.iteration} / ${f.maxIterations}`;
    fitFont(ctx, iterText, midW, nameSize * 1.05, 800);
    ctx.fillText(iterText, w / 2, barH + nameSize * 1.15);
    const budgetText = `budgets ${f.budgets?.[0] ?? "?"} · ${f.budgets?.[1] ?? "?"}`;
    fitFont(ctx, budgetText, midW, nameSize * 0.7, 600);
    ctx.fillStyle = MUTED;
    ctx.fillText(budgetText, w / 2, barH + nameSize * 2.1);

    // board and chart
    const foot = view.final ? clamp(h * 0.08, 28, 80) : 0;
    const top = barH + head + 2;
    const availH = h - top - foot - 6;
    const landscape = w > availH * 1.25;
    let boardBox;
    let chartBox;
    if (landscape) {
      const side = Math.min(availH, w * 0.62);
      boardBox = { x: 6, y: top, w: side, h: side };
      chartBox = { x: side + 20, y: top + 4, w: w - side - 28, h: Math.min(availH - 8, side) };
    } else {
      const chartH = clamp(availH * 0.26, 60, 260);
      const side = Math.min(w - 12, availH - chartH - 10);
      boardBox = { x: (w - side) / 2, y: top, w: side, h: side };
      chartBox = { x: 8, y: top + side + 10, w: w - 16, h: chartH };
    }
    this.drawBoard(ctx, f, rows, cols, boardBox);
    this.drawChart(ctx, view, chartBox);
    if (view.final) {
      const text = resultText(view.match, view.lastTurn, names);
      if (text) drawBanner(ctx, text, 8, h - foot + 2, w - 16, foot - 6);
    }
  }

  drawBoard(ctx, f, rows, cols, box) {
    const cell = Math.min(box.w / cols, box.h / rows);
    const x0 = box.x + (box.w - cell * cols) / 2;
    const y0 = box.y + (box.h - cell * rows) / 2;
    this.B = { x0, y0, cell, rows, cols };
    ctx.fillStyle = "#111729";
    ctx.fillRect(x0, y0, cell * cols, cell * rows);
    if (cell >= 7) {
      ctx.strokeStyle = "#1d2438";
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let c = 0; c <= cols; c += 1) {
        ctx.moveTo(x0 + c * cell + 0.5, y0);
        ctx.lineTo(x0 + c * cell + 0.5, y0 + rows * cell);
      }
      for (let r = 0; r <= rows; r += 1) {
        ctx.moveTo(x0, y0 + r * cell + 0.5);
        ctx.lineTo(x0 + cols * cell, y0 + r * cell + 0.5);
      }
      ctx.stroke();
    }
    const overlay = this.overlay;
    if (overlay?.reach) {
      ctx.fillStyle = "rgba(255,179,71,0.10)";
      for (const key of overlay.reach) {
        const [r, c] = key.split(",").map(Number);
        ctx.fillRect(x0 + c * cell, y0 + r * cell, cell, cell);
      }
    }
    const inset = cell >= 6 ? 1 : 0;
    for (let r = 0; r < rows; r += 1) {
      const line = f.field[r];
      for (let c = 0; c < cols; c += 1) {
        const ch = line[c];
        if (ch === "0" || ch === "1") {
          ctx.fillStyle = SEAT_COLORS[Number(ch)];
          ctx.fillRect(x0 + c * cell + inset, y0 + r * cell + inset, cell - inset * 2, cell - inset * 2);
        }
      }
    }
    ctx.lineWidth = Math.max(1.5, cell * 0.12);
    (f.placed || []).forEach((cells, seat) => {
      ctx.strokeStyle = seat === 0 ? "#ffd0cc" : "#cfe0ff";
      for (const [r, c] of cells) ctx.strokeRect(x0 + c * cell + 1.5, y0 + r * cell + 1.5, cell - 3, cell - 3);
    });
    ctx.strokeStyle = GOLD;
    ctx.lineWidth = Math.max(1.5, cell * 0.12);
    for (const [r, c] of f.contested || []) {
      const x = x0 + c * cell;
      const y = y0 + r * cell;
      ctx.beginPath();
      ctx.moveTo(x + cell * 0.2, y + cell * 0.2);
      ctx.lineTo(x + cell * 0.8, y + cell * 0.8);
      ctx.moveTo(x + cell * 0.8, y + cell * 0.2);
      ctx.lineTo(x + cell * 0.2, y + cell * 0.8);
      ctx.stroke();
    }
    if (overlay?.selected) {
      ctx.strokeStyle = ACCENT;
      ctx.fillStyle = "rgba(255,179,71,0.55)";
      ctx.lineWidth = 2;
      for (const [r, c] of overlay.selected) {
        ctx.fillRect(x0 + c * cell + 1, y0 + r * cell + 1, cell - 2, cell - 2);
        ctx.strokeRect(x0 + c * cell + 1, y0 + r * cell + 1, cell - 2, cell - 2);
      }
    }
  }

  drawChart(ctx, view, box) {
    if (box.w < 40 || box.h < 30) return;
    const f = view.frame;
    const maxX = Math.max(1, f.maxIterations || view.last || 1);
    const points = [[], []];
    let maxY = 4;
    const step = Math.max(1, Math.floor((view.index + 1) / Math.max(50, box.w)));
    for (let i = 0; i <= view.index; i += step) {
      const fr = view.frameAt(i);
      if (!fr?.live) continue;
      points[0].push([fr.iteration, fr.live[0]]);
      points[1].push([fr.iteration, fr.live[1]]);
      maxY = Math.max(maxY, fr.live[0], fr.live[1]);
    }
    if (f?.live && (points[0].length === 0 || points[0][points[0].length - 1][0] !== f.iteration)) {
      points[0].push([f.iteration, f.live[0]]);
      points[1].push([f.iteration, f.live[1]]);
      maxY = Math.max(maxY, f.live[0], f.live[1]);
    }
    const labelSize = clamp(box.h * 0.09, 10, 22);
    ctx.fillStyle = PANEL;
    ctx.fillRect(box.x, box.y, box.w, box.h);
    const pad = { l: labelSize * 2.6, r: 8, t: labelSize * 1.6, b: labelSize * 1.5 };
    const px = (x) => box.x + pad.l + (x / maxX) * (box.w - pad.l - pad.r);
    const py = (y) => box.y + box.h - pad.b - (y / (maxY * 1.1)) * (box.h - pad.t - pad.b);
    ctx.strokeStyle = "#2b3352";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(px(0), py(0));
    ctx.lineTo(px(maxX), py(0));
    ctx.moveTo(px(0), py(0));
    ctx.lineTo(px(0), py(maxY * 1.1));
    ctx.stroke();
    ctx.font = font(labelSize, 600);
    ctx.fillStyle = MUTED;
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText("live cells", box.x + 6, box.y + 4);
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    ctx.fillText(String(maxY), px(0) - 4, py(maxY));
    ctx.fillText("0", px(0) - 4, py(0));
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.fillText(String(maxX), px(maxX) - labelSize, py(0) + 3);
    points.forEach((pts, seat) => {
      if (!pts.length) return;
      ctx.strokeStyle = SEAT_COLORS[seat];
      ctx.lineWidth = clamp(box.h * 0.012, 1.5, 4);
      ctx.beginPath();
      pts.forEach(([x, y], i) => (i ? ctx.lineTo(px(x), py(y)) : ctx.moveTo(px(x), py(y))));
      ctx.stroke();
    });
  }

  /** [row, col] under a point in CSS pixels, or null. */
  cellAt(px, py) {
    const B = this.B;
    if (!B) return null;
    const c = Math.floor((px - B.x0) / B.cell);
    const r = Math.floor((py - B.y0) / B.cell);
    return r >= 0 && r < B.rows && c >= 0 && c < B.cols ? [r, c] : null;
  }
}

// -- playing in the browser: pick cells near your colony, then send ---------------------------

/** Dead cells within Chebyshev distance d (on the torus) of a "#" cell: "r,c" keys. */
function reachOf(field, d) {
  const rows = field.length;
  const cols = field[0].length;
  const out = new Set();
  for (let r = 0; r < rows; r += 1) {
    for (let c = 0; c < cols; c += 1) {
      if (field[r][c] !== "#") continue;
      for (let dr = -d; dr <= d; dr += 1) {
        for (let dc = -d; dc <= d; dc += 1) {
          const rr = (((r + dr) % rows) + rows) % rows;
          const cc = (((c + dc) % cols) + cols) % cols;
          if (field[rr][cc] === ".") out.add(`${rr},${cc}`);
        }
      }
    }
  }
  return out;
}

export function createInput({ root, canvas, renderer, hint, send }) {
  let message = null;
  let reach = new Set();
  let selected = [];
  const bar = document.createElement("div");
  bar.className = "row";
  const submit = document.createElement("button");
  submit.type = "button";
  submit.className = "btn primary small";
  const clearBtn = document.createElement("button");
  clearBtn.type = "button";
  clearBtn.className = "btn small";
  clearBtn.textContent = "Clear";
  bar.append(submit, clearBtn);
  root.append(bar);
  const refresh = () => {
    submit.textContent = selected.length ? `Send ${selected.length} cell${selected.length === 1 ? "" : "s"}` : "Pass (send none)";
    submit.disabled = !message;
    clearBtn.disabled = !message || !selected.length;
    renderer.setOverlay(message ? { reach, selected } : null);
  };
  submit.addEventListener("click", () => {
    if (!message) return;
    if (send({ cells: selected.map(([r, c]) => [r, c]) })) hint(`Sent ${selected.length} cell(s). Waiting…`);
  });
  clearBtn.addEventListener("click", () => {
    selected = [];
    refresh();
  });
  canvas.addEventListener("click", (event) => {
    if (!message) return;
    const cell = renderer.cellAt(...pointer(canvas, event));
    if (!cell) return;
    const key = `${cell[0]},${cell[1]}`;
    const at = selected.findIndex(([r, c]) => r === cell[0] && c === cell[1]);
    if (at >= 0) selected.splice(at, 1);
    else if (!reach.has(key)) hint("Out of reach: pick a dead cell close to your colony (the lit area).");
    else if (selected.length >= message.cellsRemaining) hint(`Your budget is ${message.cellsRemaining} cell(s) this turn.`);
    else selected.push(cell);
    refresh();
  });
  refresh();
  return {
    request(msg) {
      message = msg;
      selected = [];
      reach = reachOf(msg.field, msg.maxColonisationDistance ?? 2);
      hint(`Your move: pick up to ${msg.cellsRemaining} dead cell(s) in the lit area, then send.`);
      refresh();
    },
    clear() {
      message = null;
      selected = [];
      reach = new Set();
      refresh();
    },
  };
}
