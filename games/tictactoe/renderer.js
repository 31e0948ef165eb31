// Tic-tac-toe renderer (games/tictactoe/README.md §10): the 3x3 grid with X for seat 0 and O for
// seat 1, the two names with their symbols (the one to move highlighted), the last move
// marked, the winning line struck through and a result banner ("X wins (three in a row)",
// "Draw (board full)", "O wins, X forfeited (timeout)").
// Frame: {"board": ["0.1", ".0.", "..."], "to_move": 1, "last": [1, 1], "line": null, "moves": 3}

import {
  ACCENT, BG, GOLD, INK, MUTED, PANEL, SEAT_COLORS, clamp, drawBanner, ellipsize, fitFont, font,
  pointer, resultText, roundRect, setupCanvas,
} from "../js/common.js";

const SYMBOLS = ["X", "O"];
const EMPTY_FRAME = { board: ["...", "...", "..."], to_move: 0, last: null, line: null, moves: 0 };

export function createRenderer(canvas, options = {}) {
  return new TicTacToeRenderer(canvas, options);
}

class TicTacToeRenderer {
  constructor(canvas, { names = [] } = {}) {
    this.canvas = canvas;
    this.names = names;
    this.view = null;
    this.overlay = null;
  }

  preferredHeight(width) {
    return Math.round(width * 1.08);
  }

  layout(w, h) {
    const head = clamp(h * 0.13, 34, 120);
    const foot = clamp(h * 0.1, 28, 90);
    const room = h - head - foot - 12;
    const side = Math.max(30, Math.min(w * 0.94, room));
    return { head, foot, side, cell: side / 3, x0: (w - side) / 2, y0: head + 6 + (room - side) / 2 };
  }

  /** The board cell at column x, row y in CSS pixels (the debug overlay, static/js/debug.js). */
  debugCell(x, y) {
    const L = this.L;
    if (!L || x > 2 || y > 2) return null;
    return { x: L.x0 + x * L.cell, y: L.y0 + y * L.cell, w: L.cell, h: L.cell };
  }

  setOverlay(overlay) {
    this.overlay = overlay;
    if (this.view) this.draw(this.view);
  }

  draw(view) {
    this.view = view;
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
      const symSize = plateH * 0.62;
      ctx.font = font(symSize, 900);
      ctx.fillStyle = SEAT_COLORS[seat];
      ctx.textBaseline = "middle";
      ctx.textAlign = "left";
      ctx.fillText(SYMBOLS[seat], x + 10, gap / 2 + plateH / 2 + 1);
      const symW = ctx.measureText(SYMBOLS[seat]).width + 18;
      const nameSize = fitFont(ctx, names[seat] ?? `seat ${seat}`, plateW - symW - 10, plateH * 0.4, 700, 10);
      ctx.font = font(nameSize, 700);
      ctx.fillStyle = toMove ? INK : MUTED;
      ctx.fillText(ellipsize(ctx, names[seat] ?? `seat ${seat}`, plateW - symW - 10), x + symW, gap / 2 + plateH / 2 + 1);
    }

    // the board
    const { x0, y0, cell, side } = L;
    ctx.fillStyle = "#111729";
    roundRect(ctx, x0, y0, side, side, 12);
    ctx.fill();
    const hover = this.overlay?.hover;
    if (hover) {
      ctx.fillStyle = "rgba(255,179,71,0.16)";
      ctx.fillRect(x0 + hover[1] * cell, y0 + hover[0] * cell, cell, cell);
    }
    if (f.last) {
      const [r, c] = f.last;
      ctx.fillStyle = "rgba(255,210,122,0.07)";
      ctx.fillRect(x0 + c * cell + 4, y0 + r * cell + 4, cell - 8, cell - 8);
      ctx.strokeStyle = "rgba(255,210,122,0.55)";
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 + c * cell + 5, y0 + r * cell + 5, cell - 10, cell - 10);
    }
    ctx.strokeStyle = "#3a4468";
    ctx.lineWidth = Math.max(2, side * 0.014);
    ctx.lineCap = "round";
    for (let i = 1; i < 3; i += 1) {
      ctx.beginPath();
      ctx.moveTo(x0 + i * cell, y0 + cell * 0.08);
      ctx.lineTo(x0 + i * cell, y0 + side - cell * 0.08);
      ctx.moveTo(x0 + cell * 0.08, y0 + i * cell);
      ctx.lineTo(x0 + side - cell * 0.08, y0 + i * cell);
      ctx.stroke();
    }
    for (let r = 0; r < 3; r += 1) {
      for (let c = 0; c < 3; c += 1) {
        const ch = f.board?.[r]?.[c];
        if (ch === "0" || ch === "1") this.mark(ctx, Number(ch), x0 + c * cell, y0 + r * cell, cell);
      }
    }
    if (f.last) {
      const [r, c] = f.last;
      ctx.fillStyle = GOLD;
      ctx.beginPath();
      ctx.arc(x0 + c * cell + cell * 0.86, y0 + r * cell + cell * 0.14, Math.max(3, cell * 0.045), 0, Math.PI * 2);
      ctx.fill();
    }
    if (f.line) {
      const [a, , b] = f.line;
      const ax = x0 + (a[1] + 0.5) * cell;
      const ay = y0 + (a[0] + 0.5) * cell;
      const bx = x0 + (b[1] + 0.5) * cell;
      const by = y0 + (b[0] + 0.5) * cell;
      const dx = (bx - ax) * 0.16;
      const dy = (by - ay) * 0.16;
      ctx.strokeStyle = GOLD;
      ctx.globalAlpha = 0.92;
      ctx.lineWidth = Math.max(4, cell * 0.08);
      ctx.beginPath();
      ctx.moveTo(ax - dx, ay - dy);
      ctx.lineTo(bx + dx, by + dy);
      ctx.stroke();
      ctx.globalAlpha = 1;
    }

    // the banner: the result at the end, else whose turn it is
    const bannerY = h - L.foot + 2;
    const text = view.final ? resultText(view.match, view.lastTurn, SYMBOLS) : null;
    if (text) drawBanner(ctx, text, 8, bannerY, w - 16, L.foot - 8);
    else {
      const who = f.to_move === null || f.to_move === undefined ? "" : `${SYMBOLS[f.to_move]} to move · `;
      ctx.fillStyle = MUTED;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      fitFont(ctx, `${who}move ${f.moves ?? 0}`, w - 16, (L.foot - 8) * 0.5, 600);
      ctx.fillText(`${who}move ${f.moves ?? 0}`, w / 2, bannerY + (L.foot - 8) / 2);
    }
  }

  mark(ctx, seat, x, y, cell) {
    const pad = cell * 0.24;
    ctx.strokeStyle = SEAT_COLORS[seat];
    ctx.lineWidth = Math.max(3, cell * 0.1);
    ctx.lineCap = "round";
    ctx.beginPath();
    if (seat === 0) {
      ctx.moveTo(x + pad, y + pad);
      ctx.lineTo(x + cell - pad, y + cell - pad);
      ctx.moveTo(x + cell - pad, y + pad);
      ctx.lineTo(x + pad, y + cell - pad);
    } else {
      ctx.arc(x + cell / 2, y + cell / 2, cell / 2 - pad, 0, Math.PI * 2);
    }
    ctx.stroke();
  }

  /** [row, col] under a point in CSS pixels, or null. */
  cellAt(px, py) {
    const L = this.L;
    if (!L) return null;
    const c = Math.floor((px - L.x0) / L.cell);
    const r = Math.floor((py - L.y0) / L.cell);
    return r >= 0 && r < 3 && c >= 0 && c < 3 ? [r, c] : null;
  }
}

// -- playing in the browser: click an empty cell -------------------------------------------

export function createInput({ root, canvas, renderer, seat, hint, send }) {
  let message = null;
  const free = (r, c) => message?.board?.[`${r}-${c}`] === "";
  const grid = document.createElement("div");
  grid.className = "ttt-keys";
  grid.setAttribute("role", "group");
  grid.setAttribute("aria-label", "Cells");
  const buttons = [];
  for (let r = 0; r < 3; r += 1) {
    for (let c = 0; c < 3; c += 1) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "btn small";
      b.textContent = `${r}-${c}`;
      b.disabled = true;
      b.addEventListener("click", () => play(r, c));
      buttons.push(b);
      grid.append(b);
    }
  }
  root.append(grid);

  function play(r, c) {
    if (!message || !free(r, c)) return;
    const move = { play: `${r}-${c}` };
    if (send(move)) hint(`You played ${move.play}. Waiting for the other side…`);
  }

  canvas.addEventListener("click", (event) => {
    if (!message) return;
    const cell = renderer.cellAt(...pointer(canvas, event));
    if (cell) play(cell[0], cell[1]);
  });
  canvas.addEventListener("mousemove", (event) => {
    if (!message) return;
    const cell = renderer.cellAt(...pointer(canvas, event));
    const hover = cell && free(cell[0], cell[1]) ? cell : null;
    canvas.style.cursor = hover ? "pointer" : "default";
    renderer.setOverlay(hover ? { hover } : null);
  });

  return {
    request(msg) {
      if (msg?.action === "init") {
        send({ name: "human" });
        return;
      }
      message = msg;
      buttons.forEach((b, i) => { b.disabled = !free(Math.floor(i / 3), i % 3); });
      hint(`Your move: you are ${SYMBOLS[seat]}. Click an empty cell.`);
    },
    clear() {
      message = null;
      buttons.forEach((b) => { b.disabled = true; });
      canvas.style.cursor = "default";
      renderer.setOverlay(null);
    },
  };
}
