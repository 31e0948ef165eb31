// GameOfDrones renderer (games/drones/README.md §10): the two armies side by side, growing each
// turn (producers as factories, soldiers as drones, with the numbers; fractional counts
// rounded for display and exact on hover), a mark on a seat that attacks, and on a clash
// frame the two forces meeting and the winner (or the draw) announced with the reason.
// Above them: the round strip (one cell per round coloured by the results), the wins score
// and "round r of N, turn t of T".
// Frame: {"round", "rounds", "turn", "turns", "armies": [{"producers", "soldiers"}, ...],
//         "attacking": [a, b], "clash": null | {"trigger", "aggressor", "winner"},
//         "results": [...], "wins": [a, b], "draws": d}

import {
  ACCENT, BG, GOLD, INK, MUTED, PANEL, SEAT_COLORS, animate, clamp, displayNumber, drawBanner,
  ellipsize, fitFont, font, resultText, roundRect, setupCanvas,
} from "../js/common.js";

const MAX_ICONS = 30;

export function createRenderer(canvas, options = {}) {
  return new DronesRenderer(canvas, options);
}

export function clashReason(clash, names) {
  if (!clash) return "";
  const name = (s) => names[s] ?? `seat ${s}`;
  const who = clash.winner === null || clash.winner === undefined ? "Draw" : `${name(clash.winner)} wins the round`;
  let why;
  if (clash.trigger === "auto") why = "field battle on the last turn";
  else if (clash.aggressor === null || clash.aggressor === undefined) why = "both attacked: field battle";
  else if (clash.winner === clash.aggressor) why = "the attack broke through";
  else if (clash.winner === null || clash.winner === undefined) why = "field battle";
  else why = "attack repelled by the defender's bonus";
  return `${who}: ${why}`;
}

class DronesRenderer {
  constructor(canvas, { names = [] } = {}) {
    this.canvas = canvas;
    this.names = names;
    this.view = null;
    this.t = 1;
    this.stop = null;
    this.panels = [];
    canvas.addEventListener("mousemove", (event) => this.hover(event));
  }

  preferredHeight(width) {
    return Math.round(width < 600 ? width * 1.05 : width * 0.58);
  }

  hover(event) {
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    const f = this.view?.frame;
    const panel = this.panels.find((p) => x >= p.x && x <= p.x + p.w && y >= p.y && y <= p.y + p.h);
    this.canvas.title = panel && f ? `producers ${f.armies[panel.seat].producers}, soldiers ${f.armies[panel.seat].soldiers}` : "";
  }

  draw(view) {
    const changed = !this.view || this.view.index !== view.index;
    this.view = view;
    if (this.stop) this.stop();
    this.stop = null;
    if (changed && view.forward && view.frame?.clash) {
      this.stop = animate(1100, (t) => { this.t = t; this.paint(); });
    } else {
      this.t = 1;
      this.paint();
    }
  }

  paint() {
    const view = this.view;
    const { ctx, w, h } = setupCanvas(this.canvas);
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, w, h);
    const f = view.frame;
    if (!f) return;
    const names = view.names?.length ? view.names : this.names;

    // the round strip, the score and the progress
    const stripH = clamp(h * 0.06, 14, 44);
    const n = f.rounds || 1;
    const gap = n > 40 ? 0 : 3;
    const cw = (w - 16 - gap * (n - 1)) / n;
    for (let i = 0; i < n; i += 1) {
      const x = 8 + i * (cw + gap);
      if (i < f.results.length) {
        const r = f.results[i];
        ctx.fillStyle = r === null || r === undefined ? "#6b7180" : SEAT_COLORS[r];
      } else ctx.fillStyle = PANEL;
      ctx.fillRect(x, 6, Math.max(1, cw), stripH);
      if (i === f.round - 1 && !view.final) {
        ctx.strokeStyle = ACCENT;
        ctx.lineWidth = 2;
        ctx.strokeRect(x + 1, 7, Math.max(1, cw - 2), stripH - 2);
      }
    }
    const infoY = 6 + stripH + clamp(h * 0.055, 16, 48);
    const size = clamp(h * 0.05, 12, 40);
    ctx.textBaseline = "alphabetic";
    ctx.textAlign = "center";
    const score = `${f.wins[0]} – ${f.wins[1]}${f.draws ? `  (${f.draws} drawn)` : ""}`;
    ctx.font = font(size * 1.2, 900);
    ctx.fillStyle = INK;
    ctx.fillText(score, w / 2, infoY);
    ctx.font = font(size * 0.7, 600);
    ctx.fillStyle = MUTED;
    ctx.fillText(`round ${f.round} of ${f.rounds}, turn ${f.turn} of ${f.turns}`, w / 2, infoY + size * 0.95);

    // the armies
    const top = infoY + size * 1.4;
    const foot = clamp(h * 0.1, 28, 90);
    const panelH = h - top - foot - 8;
    const panelW = (w - 24) / 2;
    this.panels = [];
    const t = this.t;
    for (const seat of [0, 1]) {
      const x = 8 + seat * (panelW + 8);
      this.panels.push({ seat, x, y: top, w: panelW, h: panelH });
      this.army(ctx, f, seat, names[seat] ?? `seat ${seat}`, x, top, panelW, panelH, f.clash ? t : 0);
    }

    // the clash, the result
    const bannerY = h - foot + 2;
    if (view.final) {
      const text = resultText(view.match, view.lastTurn, names);
      if (text) drawBanner(ctx, text, 8, bannerY, w - 16, foot - 6);
    } else if (f.clash) {
      const text = clashReason(f.clash, names);
      const color = f.clash.winner === null || f.clash.winner === undefined ? GOLD : SEAT_COLORS[f.clash.winner];
      if (t > 0.55) drawBanner(ctx, text, 8, bannerY, w - 16, foot - 6, color);
    } else {
      ctx.fillStyle = MUTED;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      const text = f.turn === 0 ? "a new round: 1 producer each" : "building…";
      fitFont(ctx, text, w - 16, (foot - 6) * 0.45, 600);
      ctx.fillText(text, w / 2, bannerY + (foot - 6) / 2);
    }
  }

  army(ctx, f, seat, name, x, y, w, h, clashT) {
    const army = f.armies[seat];
    ctx.fillStyle = PANEL;
    roundRect(ctx, x, y, w, h, 12);
    ctx.fill();
    ctx.strokeStyle = SEAT_COLORS[seat];
    ctx.lineWidth = 3;
    ctx.stroke();
    const pad = clamp(w * 0.04, 6, 24);
    const nameSize = clamp(Math.min(h * 0.075, w * 0.085), 12, 44);
    ctx.textAlign = seat === 0 ? "left" : "right";
    ctx.textBaseline = "top";
    ctx.font = font(nameSize, 800);
    ctx.fillStyle = SEAT_COLORS[seat];
    const nx = seat === 0 ? x + pad : x + w - pad;
    const attackW = f.attacking[seat] ? nameSize * 3.6 : 0;
    ctx.fillText(ellipsize(ctx, name, w - pad * 2 - attackW), nx, y + pad);
    if (f.attacking[seat]) {
      const bw = nameSize * 3.3;
      const bx = seat === 0 ? x + w - pad - bw : x + pad;
      ctx.fillStyle = "#b3261e";
      roundRect(ctx, bx, y + pad, bw, nameSize * 1.15, 6);
      ctx.fill();
      ctx.fillStyle = "#fff";
      ctx.textAlign = "center";
      fitFont(ctx, "ATTACK", bw - 8, nameSize * 0.75, 900);
      ctx.fillText("ATTACK", bx + bw / 2, y + pad + nameSize * 0.22);
    }
    const rowsTop = y + pad + nameSize * 1.5;
    const rowH = (h - (rowsTop - y) - pad) / 2;
    this.row(ctx, "producers", army.producers, seat, x + pad, rowsTop, w - pad * 2, rowH - 4, "factory", 0);
    this.row(ctx, "soldiers", army.soldiers, seat, x + pad, rowsTop + rowH, w - pad * 2, rowH - 4, "drone", clashT);
  }

  row(ctx, label, value, seat, x, y, w, h, icon, clashT) {
    const size = clamp(h * 0.24, 11, 40);
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.font = font(size * 1.35, 900);
    ctx.fillStyle = INK;
    const shown = displayNumber(value);
    ctx.fillText(shown, x, y);
    const numW = ctx.measureText(shown).width;
    ctx.font = font(size * 0.72, 600);
    ctx.fillStyle = MUTED;
    ctx.fillText(label, x + numW + size * 0.4, y + size * 0.5);
    const count = Math.max(0, Math.floor(typeof value === "number" ? value : 0));
    const shownIcons = Math.min(count, MAX_ICONS);
    const areaY = y + size * 1.6;
    const areaH = h - size * 1.6;
    if (areaH < 8 || !shownIcons) return;
    // the biggest icon size that fits shownIcons in the area
    let s = Math.min(areaH, w);
    for (; s > 6; s -= 1) {
      const per = Math.floor(w / s);
      if (per > 0 && Math.ceil(shownIcons / per) * s <= areaH) break;
    }
    s = Math.min(s, h * 0.5);
    const per = Math.max(1, Math.floor(w / s));
    // on a clash the drones fly toward the middle of the canvas
    const used = Math.min(shownIcons, per) * s;
    const shift = clashT ? (seat === 0 ? 1 : -1) * clashT * Math.max(0, w - used) : 0;
    for (let i = 0; i < shownIcons; i += 1) {
      const col = i % per;
      const r = Math.floor(i / per);
      const ix = seat === 0 ? x + col * s : x + w - (col + 1) * s;
      const iy = areaY + r * s;
      if (icon === "factory") this.factory(ctx, ix, iy, s * 0.86, seat);
      else this.drone(ctx, ix + shift, iy, s * 0.86, seat);
    }
    if (count > MAX_ICONS) {
      ctx.font = font(size * 0.7, 700);
      ctx.fillStyle = MUTED;
      ctx.textAlign = seat === 0 ? "right" : "left";
      ctx.fillText(`+${displayNumber(count - MAX_ICONS)}`, seat === 0 ? x + w : x, y + size * 0.5);
    }
  }

  factory(ctx, x, y, s, seat) {
    ctx.fillStyle = SEAT_COLORS[seat];
    ctx.globalAlpha = 0.85;
    ctx.fillRect(x + s * 0.1, y + s * 0.45, s * 0.8, s * 0.45);
    ctx.fillRect(x + s * 0.62, y + s * 0.12, s * 0.14, s * 0.35);
    ctx.beginPath();
    ctx.moveTo(x + s * 0.1, y + s * 0.45);
    ctx.lineTo(x + s * 0.3, y + s * 0.3);
    ctx.lineTo(x + s * 0.3, y + s * 0.45);
    ctx.lineTo(x + s * 0.5, y + s * 0.3);
    ctx.lineTo(x + s * 0.5, y + s * 0.45);
    ctx.fill();
    ctx.globalAlpha = 1;
  }

  drone(ctx, x, y, s, seat) {
    ctx.fillStyle = SEAT_COLORS[seat];
    ctx.beginPath();
    const cx = x + s / 2;
    const cy = y + s / 2;
    const dir = seat === 0 ? 1 : -1;
    ctx.moveTo(cx + dir * s * 0.42, cy);
    ctx.lineTo(cx - dir * s * 0.32, cy - s * 0.32);
    ctx.lineTo(cx - dir * s * 0.14, cy);
    ctx.lineTo(cx - dir * s * 0.32, cy + s * 0.32);
    ctx.closePath();
    ctx.fill();
  }
}

// -- playing in the browser: an order form -----------------------------------------------------

export function createInput({ root, hint, send }) {
  let message = null;
  let own = { producers: 1, soldiers: 0 };
  root.innerHTML = `
    <p class="small" data-news></p>
    <div class="row"><label for="dr-np">New producers</label><input id="dr-np" type="number" min="0" step="any" value="1"></div>
    <div class="row"><label for="dr-ns">New soldiers</label><input id="dr-ns" type="number" min="0" step="any" value="0"></div>
    <div class="row"><label><input id="dr-at" type="checkbox"> Launch an attack</label></div>
    <div class="row"><button type="button" class="btn primary small" data-send>Send orders</button></div>
    <div class="quick">
      <button type="button" class="btn small" data-q="grow">All producers</button>
      <button type="button" class="btn small" data-q="arm">All soldiers</button>
      <button type="button" class="btn small" data-q="attack">All soldiers + attack</button>
    </div>`;
  const np = root.querySelector("#dr-np");
  const ns = root.querySelector("#dr-ns");
  const at = root.querySelector("#dr-at");
  const news = root.querySelector("[data-news]");
  const buttons = [...root.querySelectorAll("button")];
  const enable = (on) => {
    buttons.forEach((b) => { b.disabled = !on; });
    [np, ns, at].forEach((i) => { i.disabled = !on; });
  };
  const order = (move) => {
    if (message && send(move)) hint("Orders sent. Waiting for the other side…");
  };
  root.querySelector("[data-send]").addEventListener("click", () => {
    order({ newProducers: Number(np.value) || 0, newSoldiers: Number(ns.value) || 0, launchAttack: at.checked });
  });
  root.querySelector('[data-q="grow"]').addEventListener("click", () => order({ newProducers: own.producers, newSoldiers: 0, launchAttack: false }));
  root.querySelector('[data-q="arm"]').addEventListener("click", () => order({ newProducers: 0, newSoldiers: own.producers, launchAttack: false }));
  root.querySelector('[data-q="attack"]').addEventListener("click", () => order({ newProducers: 0, newSoldiers: own.producers, launchAttack: true }));
  enable(false);
  return {
    request(msg) {
      if (msg?.final) {
        send(null);
        return;
      }
      message = msg;
      const calls = Array.isArray(msg?.calls) ? msg.calls : [];
      const turn = calls.find((c) => c[0] === "playTurn");
      own = turn?.[1] ?? own;
      const end = calls.find((c) => c[0] === "onRoundEnd");
      news.textContent = end ? `Last round: ${end[1].outcome} (you ${end[1].you.soldiers} soldiers, them ${end[1].them.soldiers}${end[1].them.launchedAttack ? ", they attacked" : ""}).` : "";
      np.value = String(own.producers);
      ns.value = "0";
      at.checked = false;
      enable(true);
      hint(`Your orders: ${own.producers} producer(s) give ${own.producers} unit(s) to spend; you have ${own.soldiers} soldier(s).`);
    },
    clear() {
      message = null;
      enable(false);
    },
  };
}
