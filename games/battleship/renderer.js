// Battleship renderer (games/battleship/README.md §5): both grids, side by side on a wide
// screen and one above the other on a tall one. Each grid is one seat's fleet (revealed to
// spectators) under the other seat's shots: misses as dots, hits as crosses, sunk ships
// filled, the last shot ringed; the header counts shots and ships sunk. A person playing
// a seat sees only the hit cells of the opponent's fleet while the match runs.
// Frame: {"width", "height", "fleets": [[["x,y", ...], ...], [...]], "strikes": [[{"target",
// "result"}, ...], [...]] (by shooter), "sunk": [n0, n1], "last": {"seat", "target"} | null,
// "to_move", "setup_loser", "moves"}

import {
  ACCENT, BG, GOLD, INK, MUTED, PANEL, SEAT_COLORS, clamp, drawBanner, ellipsize, fitFont,
  font, pointer, resultText, roundRect, setupCanvas,
} from "../js/common.js";

const HIT = new Set(["hit", "hit and sunk", "hit sunk and win"]);

export function createRenderer(canvas, options = {}) {
  return new BattleshipRenderer(canvas, options);
}

class BattleshipRenderer {
  constructor(canvas, { names = [] } = {}) {
    this.canvas = canvas;
    this.names = names;
    this.view = null;
    this.overlay = null;
    this.humanSeat = null; // set by createInput: hide the opponent's fleet from its player
  }

  preferredHeight(width) {
    return width >= 700 ? Math.round(width * 0.56) : Math.round(width * 1.8);
  }

  layout(w, h, cols, rows) {
    const foot = clamp(h * 0.08, 28, 80);
    const wide = w >= h * 1.05;
    const title = clamp(Math.min(w, h) * 0.06, 22, 54);
    const pad = 10;
    const areaW = wide ? (w - pad * 3) / 2 : w - pad * 2;
    const areaH = wide ? h - foot - pad * 2 - title : (h - foot - pad * 3) / 2 - title;
    const cell = Math.max(3, Math.min(areaW / cols, areaH / rows));
    const grids = [0, 1].map((s) => {
      const gx = wide ? pad + s * (areaW + pad) : pad;
      const gy = wide ? pad : pad + s * (areaH + title + pad);
      return {
        tx: gx, ty: gy, tw: areaW, th: title,
        x0: gx + (areaW - cell * cols) / 2, y0: gy + title + (areaH - cell * rows) / 2,
      };
    });
    return { foot, cell, grids, cols, rows };
  }

  setOverlay(overlay) {
    this.overlay = overlay;
    if (this.view) this.draw(this.view);
  }

  draw(view) {
    this.view = view;
    const { ctx, w, h } = setupCanvas(this.canvas);
    const f = view.frame || {};
    const cols = f.width || this.overlay?.width || 10;
    const rows = f.height || this.overlay?.height || 10;
    const names = view.names?.length ? view.names : this.names;
    const L = (this.L = this.layout(w, h, cols, rows));
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, w, h);
    const strikes = f.strikes || [[], []];
    const fleets = f.fleets || [[], []];
    for (const seat of [0, 1]) {
      const g = L.grids[seat];
      const shots = strikes[1 - seat] || []; // the other seat fires at this fleet
      const targeted = new Set(shots.map((s) => s.target));
      const hidden = this.humanSeat !== null && this.humanSeat !== seat && !view.final;
      const fleet = fleets[seat] || [];
      const sunk = fleet.filter((ship) => ship.every((c) => targeted.has(c)));
      // title plate
      const toMove = f.to_move === 1 - seat && !view.final;
      ctx.fillStyle = PANEL;
      roundRect(ctx, g.tx, g.ty, g.tw, g.th - 6, 8);
      ctx.fill();
      if (f.setup_loser === seat) {
        ctx.strokeStyle = SEAT_COLORS[0];
        ctx.lineWidth = 2;
        ctx.stroke();
      }
      const label = `${names[seat] ?? `seat ${seat}`}'s fleet · sunk ${sunk.length}/${fleet.length || "?"} · ${shots.length} shots at it`;
      const size = fitFont(ctx, label, g.tw - 30, (g.th - 6) * 0.5, 700, 9);
      ctx.font = font(size, 700);
      ctx.textAlign = "left";
      ctx.textBaseline = "middle";
      ctx.fillStyle = SEAT_COLORS[seat];
      ctx.fillRect(g.tx + 8, g.ty + (g.th - 6) / 2 - 5, 10, 10);
      ctx.fillStyle = toMove ? INK : MUTED;
      ctx.fillText(ellipsize(ctx, label, g.tw - 30), g.tx + 24, g.ty + (g.th - 6) / 2 + 1);
      // water
      const c = L.cell;
      ctx.fillStyle = "#0f2a4a";
      ctx.fillRect(g.x0, g.y0, c * cols, c * rows);
      if (toMove) {
        ctx.strokeStyle = ACCENT;
        ctx.lineWidth = 2;
        ctx.strokeRect(g.x0 - 2, g.y0 - 2, c * cols + 4, c * rows + 4);
      }
      const at = (cell) => {
        const [x, y] = String(cell).split(",").map(Number);
        return [g.x0 + x * c, g.y0 + y * c, x, y];
      };
      // ships
      const sunkCells = new Set(sunk.flat());
      for (const ship of fleet) {
        for (const cell of ship) {
          if (hidden && !targeted.has(cell)) continue;
          const [px, py] = at(cell);
          ctx.fillStyle = sunkCells.has(cell) ? "#6b1f24" : "#8c96ad";
          ctx.fillRect(px + 1, py + 1, c - 2, c - 2);
        }
      }
      const placing = this.overlay?.placing;
      if (placing && placing.seat === seat) {
        for (const ship of placing.boats) {
          for (const cell of ship) {
            const [px, py] = at(cell);
            ctx.fillStyle = "#8c96ad";
            ctx.fillRect(px + 1, py + 1, c - 2, c - 2);
          }
        }
      }
      // grid lines
      if (c >= 6) {
        ctx.strokeStyle = "rgba(255,255,255,0.08)";
        ctx.lineWidth = 1;
        ctx.beginPath();
        for (let x = 0; x <= cols; x += 1) {
          ctx.moveTo(g.x0 + x * c, g.y0);
          ctx.lineTo(g.x0 + x * c, g.y0 + rows * c);
        }
        for (let y = 0; y <= rows; y += 1) {
          ctx.moveTo(g.x0, g.y0 + y * c);
          ctx.lineTo(g.x0 + cols * c, g.y0 + y * c);
        }
        ctx.stroke();
      }
      // shots
      for (const shot of shots) {
        const [px, py, x, y] = at(shot.target);
        if (!(x < cols && y < rows)) continue;
        if (HIT.has(shot.result)) {
          ctx.strokeStyle = "#ff5a4f";
          ctx.lineWidth = Math.max(2, c * 0.12);
          ctx.lineCap = "round";
          ctx.beginPath();
          ctx.moveTo(px + c * 0.25, py + c * 0.25);
          ctx.lineTo(px + c * 0.75, py + c * 0.75);
          ctx.moveTo(px + c * 0.75, py + c * 0.25);
          ctx.lineTo(px + c * 0.25, py + c * 0.75);
          ctx.stroke();
        } else {
          ctx.fillStyle = "rgba(232,236,247,0.7)";
          ctx.beginPath();
          ctx.arc(px + c / 2, py + c / 2, Math.max(1.5, c * 0.12), 0, Math.PI * 2);
          ctx.fill();
        }
      }
      if (f.last && f.last.seat === 1 - seat) {
        const [px, py] = at(f.last.target);
        ctx.strokeStyle = GOLD;
        ctx.lineWidth = 2;
        ctx.strokeRect(px + 1, py + 1, c - 2, c - 2);
      }
      const hover = this.overlay?.hover;
      if (hover && hover.seat === seat) {
        ctx.fillStyle = "rgba(255,179,71,0.3)";
        for (const [x, y] of hover.cells) ctx.fillRect(g.x0 + x * c, g.y0 + y * c, c, c);
      }
    }
    // the banner: the result at the end, else whose shot it is
    const bannerY = h - L.foot + 2;
    const text = view.final ? resultText(view.match, view.lastTurn, names) : null;
    if (text) drawBanner(ctx, text, 8, bannerY, w - 16, L.foot - 8);
    else {
      const who = f.to_move === null || f.to_move === undefined ? "placing fleets · " : `${names[f.to_move] ?? `seat ${f.to_move}`} to fire · `;
      const line = `${who}shot ${f.moves ?? 0}`;
      ctx.fillStyle = MUTED;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      fitFont(ctx, line, w - 16, (L.foot - 8) * 0.5, 600);
      ctx.fillText(line, w / 2, bannerY + (L.foot - 8) / 2);
    }
  }

  /** Cell x, y of the grid `seat` fires at (the other seat's), in CSS pixels: the debug
   * overlay (static/js/debug.js). */
  debugCell(x, y, seat = 0) {
    const L = this.L;
    if (!L || x >= L.cols || y >= L.rows) return null;
    const g = L.grids[1 - seat] || L.grids[0];
    return { x: g.x0 + x * L.cell, y: g.y0 + y * L.cell, w: L.cell, h: L.cell };
  }

  /** [seat, x, y] of the grid cell under a point in CSS pixels, or null. */
  cellAt(px, py) {
    const L = this.L;
    if (!L) return null;
    for (const seat of [0, 1]) {
      const g = L.grids[seat];
      const x = Math.floor((px - g.x0) / L.cell);
      const y = Math.floor((py - g.y0) / L.cell);
      if (x >= 0 && x < L.cols && y >= 0 && y < L.rows) return [seat, x, y];
    }
    return null;
  }
}

// -- playing in the browser: place (or randomise) the fleet, then click a cell to fire ----

function shipCells(x, y, length, vertical) {
  return Array.from({ length }, (_, i) => (vertical ? [x, y + i] : [x + i, y]));
}

function randomFleet(width, height, lengths) {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const taken = new Set();
    const boats = [];
    let ok = true;
    for (const length of lengths) {
      const spots = [];
      for (const vertical of [false, true]) {
        for (let x = 0; x < width; x += 1) {
          for (let y = 0; y < height; y += 1) {
            const cells = shipCells(x, y, length, vertical);
            if (cells.every(([a, b]) => a < width && b < height && !taken.has(`${a},${b}`))) spots.push(cells);
          }
        }
      }
      if (!spots.length) { ok = false; break; }
      const cells = spots[Math.floor(Math.random() * spots.length)];
      cells.forEach(([a, b]) => taken.add(`${a},${b}`));
      boats.push(cells);
    }
    if (ok) return boats;
  }
  return [];
}

export function createInput({ root, canvas, renderer, seat, hint, send }) {
  renderer.humanSeat = seat;
  let mode = null; // "place" | "fire"
  let grid = { width: 10, height: 10, lengths: [] };
  let boats = []; // each a list of [x, y]
  let vertical = false;
  let tried = new Set();
  const box = document.createElement("div");
  box.style.cssText = "display:flex;flex-wrap:wrap;gap:.35rem;margin:.5rem 0;align-items:center";
  const button = (text, fn) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "btn small";
    b.textContent = text;
    b.disabled = true;
    b.addEventListener("click", fn);
    box.append(b);
    return b;
  };
  const randomB = button("Random fleet", () => { boats = randomFleet(grid.width, grid.height, grid.lengths); refresh(); });
  const rotateB = button("Rotate: horizontal", () => { vertical = !vertical; refresh(); });
  const clearB = button("Clear", () => { boats = []; refresh(); });
  const sendB = button("Send fleet", () => {
    if (mode !== "place" || boats.length !== grid.lengths.length) return;
    const wire = boats.map((cells) => `${cells[0][0]},${cells[0][1]}-${cells[cells.length - 1][0]},${cells[cells.length - 1][1]}`);
    if (send({ name: "human", boats: wire })) hint("Fleet sent. Waiting for the other side…");
  });
  const target = document.createElement("input");
  target.type = "text";
  target.placeholder = "x,y";
  target.size = 6;
  target.setAttribute("aria-label", "Target x,y");
  target.disabled = true;
  box.append(target);
  const fireB = button("Fire", () => fire(target.value.trim()));
  root.append(box);

  const taken = () => new Set(boats.flat().map(([a, b]) => `${a},${b}`));
  const nextLength = () => grid.lengths[boats.length];
  function fits(cells) {
    const used = taken();
    return cells.every(([a, b]) => a >= 0 && b >= 0 && a < grid.width && b < grid.height && !used.has(`${a},${b}`));
  }
  function refresh() {
    const placing = mode === "place";
    [randomB, rotateB, clearB].forEach((b) => { b.disabled = !placing; });
    rotateB.textContent = `Rotate: ${vertical ? "vertical" : "horizontal"}`;
    sendB.disabled = !placing || boats.length !== grid.lengths.length;
    fireB.disabled = target.disabled = mode !== "fire";
    renderer.setOverlay(placing ? { width: grid.width, height: grid.height, placing: { seat, boats: boats.map((s) => s.map(([a, b]) => `${a},${b}`)) } } : null);
    if (placing) {
      const left = grid.lengths.length - boats.length;
      hint(left ? `Place your fleet on your grid: click where the ship of ${nextLength()} starts (${left} to place), or take a random fleet.` : "Fleet complete: send it (or clear and start again).");
    }
  }
  function fire(value) {
    if (mode !== "fire" || !/^[0-9]+,[0-9]+$/.test(value)) return;
    if (send({ play: value })) hint(`You fired at ${value}. Waiting for the other side…`);
  }

  canvas.addEventListener("click", (event) => {
    const hit = renderer.cellAt(...pointer(canvas, event));
    if (!hit) return;
    const [gridSeat, x, y] = hit;
    if (mode === "place" && gridSeat === seat && nextLength()) {
      const cells = shipCells(x, y, nextLength(), vertical);
      if (fits(cells)) { boats.push(cells); refresh(); }
    } else if (mode === "fire" && gridSeat === 1 - seat) {
      fire(`${x},${y}`);
    }
  });
  canvas.addEventListener("mousemove", (event) => {
    const hit = renderer.cellAt(...pointer(canvas, event));
    let hover = null;
    if (hit && mode === "place" && hit[0] === seat && nextLength()) {
      const cells = shipCells(hit[1], hit[2], nextLength(), vertical);
      if (fits(cells)) hover = { seat, cells };
    } else if (hit && mode === "fire" && hit[0] === 1 - seat && !tried.has(`${hit[1]},${hit[2]}`)) {
      hover = { seat: 1 - seat, cells: [[hit[1], hit[2]]] };
    }
    canvas.style.cursor = hover ? "pointer" : "default";
    const base = mode === "place" ? { width: grid.width, height: grid.height, placing: { seat, boats: boats.map((s) => s.map(([a, b]) => `${a},${b}`)) } } : {};
    renderer.setOverlay(hover ? { ...base, hover } : (mode === "place" ? base : null));
  });

  return {
    request(msg) {
      const board = msg?.board || {};
      grid.width = Number(board.width) || 10;
      grid.height = Number(board.height) || 10;
      if (msg?.action === "init") {
        grid.lengths = [];
        for (let n = 6; n >= 1; n -= 1) for (let i = 0; i < Number(board[`ship${n}`] || 0); i += 1) grid.lengths.push(n);
        boats = [];
        mode = "place";
        refresh();
        return;
      }
      mode = "fire";
      tried = new Set((board.your_strikes || []).map((s) => s.target));
      refresh();
      hint("Your shot: click a cell of the opponent's grid (or type x,y and press Fire).");
    },
    clear() {
      mode = null;
      refresh();
      canvas.style.cursor = "default";
      renderer.setOverlay(null);
    },
  };
}
