// Ajax Tiles renderer (games/tiles/README.md §10): the 24x12 grid (red, blue, white for empty, dark
// grey hatching for contaminated "d", black for nuked "n"), the two names in their colours
// with their tile counts and a bar splitting the owned tiles between the colours, the move
// number, and the last click: a ring; a flash on the emptied tiles for "capture" and
// "repelled", a blast for "nuke", a small "pass" label.
// Frame: {"board": [12 rows of 24 chars], "counts": [r, b], "empty": n, "move": m,
//         "to_move": 0, "passes_in_a_row": 0, "last": {"seat", "x", "y", "kind"}}

import {
  ACCENT, BG, GOLD, INK, MUTED, PANEL, SEAT_COLORS, animate, clamp, drawBanner, ellipsize,
  fitFont, font, pointer, resultText, setupCanvas,
} from "../js/common.js";

const W = 24;
const H = 12;
const EMPTY = "#f4f6fb";
const DEAD = "#3a3f4b";
const HATCH = "#7a8191";
const NUKED = "#000000";
const LABELS = ["Red", "Blue"];

export function createRenderer(canvas, options = {}) {
  return new TilesRenderer(canvas, options);
}

class TilesRenderer {
  constructor(canvas, { names = [] } = {}) {
    this.canvas = canvas;
    this.names = names;
    this.view = null;
    this.overlay = null;
    this.t = 1;
    this.stop = null;
  }

  preferredHeight(width) {
    const cell = (width - 8) / W;
    return Math.round(cell * H + clamp(width * 0.12, 60, 130) + clamp(width * 0.06, 30, 70) + 16);
  }

  layout(w, h) {
    const head = clamp(h * 0.2, 52, 140);
    const foot = clamp(h * 0.1, 26, 80);
    const cell = Math.max(2, Math.min((w - 8) / W, (h - head - foot - 8) / H));
    return { head, foot, cell, x0: (w - cell * W) / 2, y0: head + 4 + (h - head - foot - 8 - cell * H) / 2 };
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
    const kind = view.frame?.last?.kind;
    if (changed && view.forward && kind && kind !== "paint" && kind !== "pass") {
      this.stop = animate(700, (t) => { this.t = t; this.paint(); });
    } else {
      this.t = 1;
      this.paint();
    }
  }

  paint() {
    const view = this.view;
    const { ctx, w, h } = setupCanvas(this.canvas);
    const f = view.frame;
    const names = view.names?.length ? view.names : this.names;
    const L = (this.L = this.layout(w, h));
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, w, h);
    if (!f) return;

    // header: names and counts, the move number, the bar of owned tiles
    const rowH = L.head * 0.58;
    const size = clamp(rowH * 0.5, 11, 40);
    ctx.textBaseline = "middle";
    const passed = f.last?.kind === "pass" ? f.last.seat : null;
    for (const seat of [0, 1]) {
      const left = seat === 0;
      const count = String(f.counts?.[seat] ?? 0);
      ctx.font = font(size * 1.25, 900);
      const countW = ctx.measureText(count).width;
      const x = left ? 10 : w - 10;
      const y = rowH / 2 + 4;
      ctx.fillStyle = SEAT_COLORS[seat];
      ctx.beginPath();
      ctx.arc(left ? x + size * 0.45 : x - size * 0.45, y, size * 0.42, 0, Math.PI * 2);
      ctx.fill();
      if (f.to_move === seat && !view.final) {
        ctx.strokeStyle = ACCENT;
        ctx.lineWidth = 3;
        ctx.stroke();
      }
      ctx.textAlign = left ? "left" : "right";
      const afterDot = left ? x + size * 1.1 : x - size * 1.1;
      ctx.fillText(count, afterDot, y);
      const narrow = w < 640; // no room for the move number between the names
      const room = w / 2 - size * 1.1 - countW - (narrow ? size * 1.5 : size * 3.2);
      ctx.font = font(size, 700);
      ctx.fillStyle = INK;
      const name = ellipsize(ctx, names[seat] ?? LABELS[seat], Math.max(20, room));
      ctx.fillText(name, left ? afterDot + countW + size * 0.5 : afterDot - countW - size * 0.5, y);
      if (passed === seat) {
        ctx.font = font(size * 0.75, 700);
        ctx.fillStyle = GOLD;
        ctx.fillText("pass", left ? afterDot : afterDot, y + size * 0.95);
      }
    }
    if (w >= 640) {
      ctx.textAlign = "center";
      ctx.font = font(size * 0.8, 600);
      ctx.fillStyle = MUTED;
      ctx.fillText(`move ${f.move ?? 0}`, w / 2, rowH / 2 + 4);
    }
    const barY = rowH + 4;
    const barH = clamp(L.head * 0.18, 6, 22);
    const red = f.counts?.[0] ?? 0;
    const blue = f.counts?.[1] ?? 0;
    const split = red + blue ? red / (red + blue) : 0.5;
    ctx.fillStyle = PANEL;
    ctx.fillRect(10, barY, w - 20, barH);
    ctx.fillStyle = SEAT_COLORS[0];
    ctx.fillRect(10, barY, (w - 20) * split, barH);
    ctx.fillStyle = SEAT_COLORS[1];
    ctx.fillRect(10 + (w - 20) * split, barY, (w - 20) * (1 - split), barH);

    // the board
    const { x0, y0, cell } = L;
    ctx.fillStyle = "#20263a";
    ctx.fillRect(x0 - 1, y0 - 1, cell * W + 2, cell * H + 2);
    const gap = cell >= 8 ? 1 : 0;
    for (let y = 0; y < H; y += 1) {
      const row = f.board?.[y] || "";
      for (let x = 0; x < W; x += 1) this.tile(ctx, row[x], x0 + x * cell, y0 + y * cell, cell, gap);
    }
    const overlay = this.overlay;
    if (overlay?.hover) {
      const [x, y] = overlay.hover;
      ctx.strokeStyle = ACCENT;
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 + x * cell + 1, y0 + y * cell + 1, cell - 2, cell - 2);
    }

    // the last click
    const last = f.last;
    if (last && last.x >= 0 && last.x < W && last.y >= 0 && last.y < H) {
      const cx = x0 + (last.x + 0.5) * cell;
      const cy = y0 + (last.y + 0.5) * cell;
      const t = this.t;
      if (last.kind === "capture" || last.kind === "repelled") {
        const emptied = this.emptied(view.prev, f, last);
        ctx.save();
        ctx.globalAlpha = 1 - 0.6 * t;
        ctx.fillStyle = "rgba(255,236,150,0.85)";
        for (const [x, y] of emptied) ctx.fillRect(x0 + x * cell + gap, y0 + y * cell + gap, cell - gap, cell - gap);
        ctx.restore();
        ctx.strokeStyle = GOLD;
        ctx.setLineDash([Math.max(2, cell / 6), Math.max(2, cell / 8)]);
        ctx.lineWidth = 2;
        for (const [x, y] of emptied) ctx.strokeRect(x0 + x * cell + 2, y0 + y * cell + 2, cell - 4, cell - 4);
        ctx.setLineDash([]);
      } else if (last.kind === "nuke") {
        const radius = cell * (0.6 + 1.6 * t);
        const g = ctx.createRadialGradient(cx, cy, 0, cx, cy, radius);
        g.addColorStop(0, `rgba(255,220,120,${0.85 * (1 - t) + 0.15})`);
        g.addColorStop(0.5, `rgba(255,120,40,${0.6 * (1 - t) + 0.1})`);
        g.addColorStop(1, "rgba(255,80,20,0)");
        ctx.fillStyle = g;
        ctx.beginPath();
        ctx.arc(cx, cy, radius, 0, Math.PI * 2);
        ctx.fill();
      }
      ctx.strokeStyle = last.kind === "repelled" ? GOLD : ACCENT;
      ctx.lineWidth = Math.max(2, cell * 0.12);
      ctx.beginPath();
      ctx.arc(cx, cy, cell * 0.62, 0, Math.PI * 2);
      ctx.stroke();
    }

    const bannerY = h - L.foot + 2;
    const text = view.final ? resultText(view.match, view.lastTurn, names.length ? names.map((n, i) => `${LABELS[i]} (${n})`) : LABELS) : null;
    if (text) drawBanner(ctx, text, 8, bannerY, w - 16, L.foot - 6);
    else {
      const kind = last ? `${LABELS[last.seat]} ${last.kind}${last.kind === "pass" ? "" : ` at ${last.x},${last.y}`}` : "the start";
      const line = `move ${f.move ?? 0}: ${kind} · ${f.empty ?? "?"} empty${f.passes_in_a_row ? ` · ${f.passes_in_a_row} pass(es) in a row` : ""}`;
      ctx.fillStyle = MUTED;
      ctx.textAlign = "center";
      fitFont(ctx, line, w - 16, (L.foot - 6) * 0.5, 600);
      ctx.fillText(line, w / 2, bannerY + (L.foot - 6) / 2);
    }
  }

  tile(ctx, ch, x, y, cell, gap) {
    const s = cell - gap;
    if (ch === "0" || ch === "1") ctx.fillStyle = SEAT_COLORS[Number(ch)];
    else if (ch === "d") ctx.fillStyle = DEAD;
    else if (ch === "n") ctx.fillStyle = NUKED;
    else ctx.fillStyle = EMPTY;
    ctx.fillRect(x + gap, y + gap, s, s);
    if (ch === "d") {
      ctx.save();
      ctx.beginPath();
      ctx.rect(x + gap, y + gap, s, s);
      ctx.clip();
      ctx.strokeStyle = HATCH;
      ctx.lineWidth = Math.max(1, cell / 12);
      ctx.beginPath();
      const step = Math.max(3, cell / 3);
      for (let k = -cell; k < cell * 2; k += step) {
        ctx.moveTo(x + k, y + cell);
        ctx.lineTo(x + k + cell, y);
      }
      ctx.stroke();
      ctx.restore();
    }
  }

  /** Tiles emptied by this move: owned before, empty now (the click itself if repelled). */
  emptied(prev, f, last) {
    const out = [];
    if (!prev?.board) return last.kind === "repelled" ? [[last.x, last.y]] : out;
    for (let y = 0; y < H; y += 1) {
      for (let x = 0; x < W; x += 1) {
        const before = prev.board[y]?.[x];
        if ((before === "0" || before === "1") && f.board[y]?.[x] === ".") out.push([x, y]);
      }
    }
    if (last.kind === "repelled") out.push([last.x, last.y]);
    return out;
  }

  /** Tile x, y (as in the replies) in CSS pixels: the debug overlay (static/js/debug.js). */
  debugCell(x, y) {
    const L = this.L;
    if (!L || x >= W || y >= H) return null;
    return { x: L.x0 + x * L.cell, y: L.y0 + y * L.cell, w: L.cell, h: L.cell };
  }

  /** [x, y] under a point in CSS pixels, or null. */
  cellAt(px, py) {
    const L = this.L;
    if (!L) return null;
    const x = Math.floor((px - L.x0) / L.cell);
    const y = Math.floor((py - L.y0) / L.cell);
    return x >= 0 && x < W && y >= 0 && y < H ? [x, y] : null;
  }
}

// -- playing in the browser: click a tile ------------------------------------------------------

export function createInput({ root, canvas, renderer, hint, send }) {
  let message = null;
  let board = null;
  let me = null;
  const bar = document.createElement("div");
  bar.className = "row";
  const pass = document.createElement("button");
  pass.type = "button";
  pass.className = "btn small";
  pass.textContent = "Pass";
  pass.disabled = true;
  pass.addEventListener("click", () => message && send({ x: -1, y: -1 }) && hint("You passed. Waiting…"));
  bar.append(pass);
  root.append(bar);

  const useful = (x, y) => board && (board[x][y] === "" || board[x][y] === me);

  canvas.addEventListener("click", (event) => {
    if (!message) return;
    const cell = renderer.cellAt(...pointer(canvas, event));
    if (!cell) return;
    const [x, y] = cell;
    if (!useful(x, y)) {
      hint("That tile is dead or taken: clicking it would be a pass (use the Pass button to pass).");
      return;
    }
    const kind = board[x][y] === "" ? "paint" : "nuke";
    if (send({ x, y })) hint(`You clicked ${x},${y} (${kind}). Waiting…`);
  });
  canvas.addEventListener("mousemove", (event) => {
    if (!message) return;
    const cell = renderer.cellAt(...pointer(canvas, event));
    const hover = cell && useful(cell[0], cell[1]) ? cell : null;
    canvas.style.cursor = hover ? "pointer" : "default";
    renderer.setOverlay(hover ? { hover } : null);
  });

  return {
    request(msg) {
      message = msg;
      me = msg.color;
      try {
        board = JSON.parse(msg.board);
      } catch {
        board = null;
      }
      pass.disabled = false;
      hint(`Your move: you are ${me === "r" ? "red" : "blue"}. Click an empty tile to paint it, one of yours to nuke it.`);
    },
    clear() {
      message = null;
      pass.disabled = true;
      canvas.style.cursor = "default";
      renderer.setOverlay(null);
    },
  };
}
