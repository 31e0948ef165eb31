// Connect four renderer (games/connectfour/README.md §5): the 6x7 board with red discs for
// seat 0 (X) and blue for seat 1 (O), the two names (the one to move highlighted), the new
// disc falling into its column when stepping forward, the last move ringed, the winning
// line drawn through its discs (the original's cellsWin) and a result banner.
// Frame: {"board": [6 strings, top row first, "." "0" "1"], "to_move": 1, "last": [row, col]
// (row 0 at the bottom), "line": [[row, col], ...] | null, "moves": 3}

import {
  ACCENT, BG, GOLD, INK, MUTED, PANEL, SEAT_COLORS, animate, clamp, drawBanner, ellipsize,
  fitFont, font, pointer, resultText, roundRect, setupCanvas,
} from "../js/common.js";

const ROWS = 6;
const COLS = 7;
const SYMBOLS = ["X", "O"];
const EMPTY_FRAME = { board: Array(ROWS).fill(".".repeat(COLS)), to_move: 0, last: null, line: null, moves: 0 };

export function createRenderer(canvas, options = {}) {
  return new ConnectFourRenderer(canvas, options);
}

class ConnectFourRenderer {
  constructor(canvas, { names = [] } = {}) {
    this.canvas = canvas;
    this.names = names;
    this.view = null;
    this.overlay = null;
    this.t = 1;
    this.stop = null;
  }

  preferredHeight(width) {
    return Math.round(width * 1.0);
  }

  layout(w, h) {
    const head = clamp(h * 0.12, 34, 110);
    const foot = clamp(h * 0.1, 28, 90);
    const room = h - head - foot - 12;
    const cell = Math.max(8, Math.min((w * 0.96) / COLS, room / ROWS));
    const bw = cell * COLS;
    const bh = cell * ROWS;
    return { head, foot, cell, bw, bh, x0: (w - bw) / 2, y0: head + 6 + (room - bh) / 2 };
  }

  setOverlay(overlay) {
    this.overlay = overlay;
    if (this.view) this.paint();
  }

  draw(view) {
    const changed = !this.view || this.view.index !== view.index;
    this.view = view;
    if (this.stop) this.stop();
    this.stop = null;
    if (changed && view.forward && view.frame?.last) {
      this.stop = animate(420, (t) => { this.t = t; this.paint(); });
    } else {
      this.t = 1;
      this.paint();
    }
  }

  paint() {
    const view = this.view;
    const { ctx, w, h } = setupCanvas(this.canvas);
    const f = view.frame || EMPTY_FRAME;
    const names = view.names?.length ? view.names : this.names;
    const L = (this.L = this.layout(w, h));
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, w, h);

    // the two players
    const gap = 8;
    const plateW = (w - gap * 3) / 2;
    const plateH = L.head - gap;
    for (const seat of [0, 1]) {
      const x = gap + seat * (plateW + gap);
      const toMove = f.to_move === seat && !view.final;
      ctx.fillStyle = PANEL;
      roundRect(ctx, x, gap / 2, plateW, plateH, 10);
      ctx.fill();
      if (toMove) {
        ctx.strokeStyle = ACCENT;
        ctx.lineWidth = 3;
        ctx.stroke();
      }
      const r = plateH * 0.28;
      ctx.fillStyle = SEAT_COLORS[seat];
      ctx.beginPath();
      ctx.arc(x + 10 + r, gap / 2 + plateH / 2, r, 0, Math.PI * 2);
      ctx.fill();
      const label = `${SYMBOLS[seat]} · ${names[seat] ?? `seat ${seat}`}`;
      const room = plateW - 2 * r - 30;
      const size = fitFont(ctx, label, room, plateH * 0.4, 700, 10);
      ctx.font = font(size, 700);
      ctx.fillStyle = toMove ? INK : MUTED;
      ctx.textAlign = "left";
      ctx.textBaseline = "middle";
      ctx.fillText(ellipsize(ctx, label, room), x + 2 * r + 20, gap / 2 + plateH / 2 + 1);
    }

    // the board: a blue frame with holes; discs fall into them
    const { x0, y0, cell, bw, bh } = L;
    const centre = (row, col) => [x0 + (col + 0.5) * cell, y0 + (ROWS - 1 - row + 0.5) * cell];
    const radius = cell * 0.38;
    const hover = this.overlay?.hover;
    if (hover !== undefined && hover !== null) {
      ctx.fillStyle = "rgba(255,179,71,0.14)";
      ctx.fillRect(x0 + hover * cell, y0, cell, bh);
    }
    const last = f.last;
    const falling = last && this.t < 1;
    for (let row = 0; row < ROWS; row += 1) {
      for (let col = 0; col < COLS; col += 1) {
        const ch = f.board?.[ROWS - 1 - row]?.[col];
        if (ch !== "0" && ch !== "1") continue;
        if (falling && last[0] === row && last[1] === col) continue;
        this.disc(ctx, ...centre(row, col), radius, Number(ch));
      }
    }
    if (falling) {
      const ch = f.board?.[ROWS - 1 - last[0]]?.[last[1]];
      const [cx, cy] = centre(last[0], last[1]);
      const startY = y0 - cell * 0.5;
      const e = this.t * this.t; // falls, accelerating
      if (ch === "0" || ch === "1") this.disc(ctx, cx, startY + (cy - startY) * e, radius, Number(ch));
    }
    // the frame over the discs (holes punched with evenodd)
    ctx.fillStyle = "#1d3b8f";
    ctx.beginPath();
    ctx.rect(x0, y0, bw, bh);
    for (let row = 0; row < ROWS; row += 1) {
      for (let col = 0; col < COLS; col += 1) {
        const [cx, cy] = centre(row, col);
        ctx.moveTo(cx + radius + 1, cy);
        ctx.arc(cx, cy, radius + 1, 0, Math.PI * 2);
      }
    }
    ctx.fill("evenodd");
    ctx.strokeStyle = "#2c4fb3";
    ctx.lineWidth = 2;
    roundRect(ctx, x0, y0, bw, bh, 6);
    ctx.stroke();
    if (last && !falling) {
      const [cx, cy] = centre(last[0], last[1]);
      ctx.strokeStyle = GOLD;
      ctx.lineWidth = Math.max(2, cell * 0.05);
      ctx.beginPath();
      ctx.arc(cx, cy, radius + 2, 0, Math.PI * 2);
      ctx.stroke();
    }
    if (f.line && !falling) {
      const pts = f.line.map(([r, c]) => centre(r, c));
      const key = ([x, y]) => x * 10000 + y;
      pts.sort((a, b) => key(a) - key(b));
      const a = pts[0];
      const b = pts[pts.length - 1];
      ctx.strokeStyle = GOLD;
      ctx.globalAlpha = 0.92;
      ctx.lineCap = "round";
      ctx.lineWidth = Math.max(4, cell * 0.12);
      ctx.beginPath();
      ctx.moveTo(a[0], a[1]);
      ctx.lineTo(b[0], b[1]);
      ctx.stroke();
      ctx.globalAlpha = 1;
      for (const [cx, cy] of pts) {
        ctx.beginPath();
        ctx.arc(cx, cy, radius * 0.3, 0, Math.PI * 2);
        ctx.fillStyle = GOLD;
        ctx.fill();
      }
    }

    // the banner: the result at the end, else whose turn it is
    const bannerY = h - L.foot + 2;
    const text = view.final ? resultText(view.match, view.lastTurn, SYMBOLS) : null;
    if (text) drawBanner(ctx, text, 8, bannerY, w - 16, L.foot - 8);
    else {
      const who = f.to_move === null || f.to_move === undefined ? "" : `${SYMBOLS[f.to_move]} to move · `;
      const line = `${who}move ${f.moves ?? 0}`;
      ctx.fillStyle = MUTED;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      fitFont(ctx, line, w - 16, (L.foot - 8) * 0.5, 600);
      ctx.fillText(line, w / 2, bannerY + (L.foot - 8) / 2);
    }
  }

  disc(ctx, cx, cy, r, seat) {
    ctx.fillStyle = SEAT_COLORS[seat];
    ctx.beginPath();
    ctx.arc(cx, cy, r, 0, Math.PI * 2);
    ctx.fill();
    ctx.strokeStyle = "rgba(0,0,0,0.25)";
    ctx.lineWidth = Math.max(1, r * 0.12);
    ctx.beginPath();
    ctx.arc(cx, cy, r * 0.7, 0, Math.PI * 2);
    ctx.stroke();
  }

  /** Column x, row y (0 the bottom row, as the game counts) in CSS pixels: the debug overlay. */
  debugCell(x, y) {
    const L = this.L;
    if (!L || x >= COLS || y >= ROWS) return null;
    return { x: L.x0 + x * L.cell, y: L.y0 + (ROWS - 1 - y) * L.cell, w: L.cell, h: L.cell };
  }

  /** The column under a point in CSS pixels, or null. */
  columnAt(px, py) {
    const L = this.L;
    if (!L) return null;
    const c = Math.floor((px - L.x0) / L.cell);
    return c >= 0 && c < COLS && py >= L.y0 - L.cell && py <= L.y0 + L.bh ? c : null;
  }
}

// -- playing in the browser: click a column ------------------------------------------------

export function createInput({ root, canvas, renderer, seat, hint, send }) {
  let message = null;
  const free = (c) => message?.board?.[ROWS - 1]?.[c] === "";
  const keys = document.createElement("div");
  keys.style.cssText = "display:grid;grid-template-columns:repeat(7,minmax(0,3rem));gap:.35rem;margin:.5rem 0";
  keys.setAttribute("role", "group");
  keys.setAttribute("aria-label", "Columns");
  const buttons = [];
  for (let c = 0; c < COLS; c += 1) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "btn small";
    b.textContent = `${c}`;
    b.setAttribute("aria-label", `Column ${c}`);
    b.disabled = true;
    b.addEventListener("click", () => play(c));
    buttons.push(b);
    keys.append(b);
  }
  root.append(keys);

  function play(c) {
    if (!message || !free(c)) return;
    if (send({ play: c })) hint(`You played column ${c}. Waiting for the other side…`);
  }

  canvas.addEventListener("click", (event) => {
    if (!message) return;
    const c = renderer.columnAt(...pointer(canvas, event));
    if (c !== null) play(c);
  });
  canvas.addEventListener("mousemove", (event) => {
    if (!message) return;
    const c = renderer.columnAt(...pointer(canvas, event));
    const hover = c !== null && free(c) ? c : null;
    canvas.style.cursor = hover !== null ? "pointer" : "default";
    renderer.setOverlay(hover !== null ? { hover } : null);
  });

  return {
    request(msg) {
      if (msg?.action === "init") {
        send({ name: "human" });
        return;
      }
      message = msg;
      buttons.forEach((b, c) => { b.disabled = !free(c); });
      hint(`Your move: you are ${SYMBOLS[seat]} (${seat === 0 ? "red" : "blue"}). Click a column.`);
    },
    clear() {
      message = null;
      buttons.forEach((b) => { b.disabled = true; });
      canvas.style.cursor = "default";
      renderer.setOverlay(null);
    },
  };
}
