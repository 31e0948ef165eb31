// Debug overlays (the bot authors' docs, "Debug overlay"): what a bot sent under `debug` in
// its replies, for the readers allowed to see it (its owner, or anyone once the bot opted in;
// the server leaves the others out). One layer drawn over the game's board, toggled per seat:
// cell marks through the renderer's `debugCell(x, y, seat) -> {x, y, w, h}` and point marks
// through its `debugPoint(x, y, seat) -> {x, y}` (CSS pixels of the board); a renderer without them still
// gets every mark listed, with the text, in the side panel.
//
// Entries come from the turns (`turn.debug[seat]`) and from the match stream's `debug`
// messages; an entry is {overlay: {text, marks} | null, note}.

import { SEAT_COLORS, font, setupCanvas } from "./common.js";

const FALLBACK = "#f5c542";

export class DebugLayer {
  constructor({ stage, panel, names = [] }) {
    this.panel = panel;
    this.names = names;
    this.entries = new Map(); // turn number -> Map(seat -> entry)
    this.shown = new Map(); // seat -> bool (every seat shown until toggled off)
    this.view = null;
    this.renderer = null;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "debug-layer";
    this.canvas.setAttribute("aria-hidden", "true");
    stage?.appendChild(this.canvas);
  }

  /** Record the debug entries a turn carries (`turn.debug`, per seat). */
  addTurn(turn) {
    if (!Array.isArray(turn?.debug)) return;
    turn.debug.forEach((entry, seat) => {
      if (entry) this.add(turn.number, seat, entry);
    });
  }

  add(number, seat, entry) {
    if (!this.entries.has(number)) this.entries.set(number, new Map());
    this.entries.get(number).set(seat, entry);
    if (!this.shown.has(seat)) {
      this.shown.set(seat, true);
      this.renderToggles();
    }
    if (this.view?.turn?.number === number) this.draw(this.view, this.renderer);
  }

  renderToggles() {
    if (!this.panel) return;
    this.panel.hidden = false;
    const box = this.panel.querySelector("[data-debug-toggles]");
    box.replaceChildren();
    for (const seat of [...this.shown.keys()].sort((a, b) => a - b)) {
      const label = document.createElement("label");
      label.className = "debug-toggle";
      const input = document.createElement("input");
      input.type = "checkbox";
      input.checked = this.shown.get(seat);
      input.dataset.seat = String(seat);
      input.addEventListener("change", () => {
        this.shown.set(seat, input.checked);
        this.draw(this.view, this.renderer);
      });
      const swatch = document.createElement("span");
      swatch.className = "key";
      swatch.style.background = SEAT_COLORS[seat % SEAT_COLORS.length];
      label.append(input, swatch, ` ${this.names[seat] ?? `seat ${seat}`}`);
      box.append(label);
    }
  }

  /** Draw the overlays of the turn the viewer shows (called after the renderer drew). */
  draw(view, renderer) {
    this.view = view;
    this.renderer = renderer;
    const { ctx } = setupCanvas(this.canvas);
    const here = view?.turn ? this.entries.get(view.turn.number) : null;
    const lines = [];
    for (const [seat, entry] of [...(here || new Map())].sort((a, b) => a[0] - b[0])) {
      if (!this.shown.get(seat)) continue;
      const marks = entry.overlay?.marks || [];
      const unplaced = marks.filter((mark) => !this.mark(ctx, renderer, seat, mark));
      lines.push({ seat, text: entry.overlay?.text || "", note: entry.note || "", unplaced });
    }
    this.renderText(lines);
  }

  mark(ctx, renderer, seat, mark) {
    const color = mark.color || SEAT_COLORS[seat % SEAT_COLORS.length] || FALLBACK;
    let box = null;
    if (mark.cell && renderer?.debugCell) {
      box = renderer.debugCell(mark.cell[0], mark.cell[1], seat);
    } else if (mark.point && renderer?.debugPoint) {
      const p = renderer.debugPoint(mark.point[0], mark.point[1], seat);
      if (p) box = { x: p.x - 7, y: p.y - 7, w: 14, h: 14, point: true };
    }
    if (!box) return false;
    ctx.save();
    ctx.globalAlpha = 0.35;
    ctx.fillStyle = color;
    if (box.point) {
      ctx.beginPath();
      ctx.arc(box.x + box.w / 2, box.y + box.h / 2, box.w / 2, 0, Math.PI * 2);
      ctx.fill();
    } else {
      ctx.fillRect(box.x + 2, box.y + 2, box.w - 4, box.h - 4);
    }
    ctx.globalAlpha = 1;
    ctx.strokeStyle = color;
    ctx.lineWidth = 3;
    if (box.point) ctx.stroke();
    else ctx.strokeRect(box.x + 3, box.y + 3, box.w - 6, box.h - 6);
    if (mark.label) {
      const size = Math.max(10, Math.min(22, box.h * 0.28));
      ctx.font = font(size, 800);
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.lineWidth = 4;
      ctx.strokeStyle = "#0b0f1a";
      const y = box.point ? box.y - size * 0.8 : box.y + box.h - size * 0.9;
      ctx.strokeText(mark.label, box.x + box.w / 2, y);
      ctx.fillStyle = "#ffffff";
      ctx.fillText(mark.label, box.x + box.w / 2, y);
    }
    ctx.restore();
    return true;
  }

  renderText(lines) {
    const out = this.panel?.querySelector("[data-debug-text]");
    if (!out) return;
    out.replaceChildren();
    if (!lines.length) {
      const p = document.createElement("p");
      p.className = "muted small";
      p.textContent = "No overlay on this turn.";
      out.append(p);
      return;
    }
    for (const line of lines) {
      const div = document.createElement("div");
      div.className = `debug-seat seat${line.seat}`;
      const head = document.createElement("strong");
      head.textContent = this.names[line.seat] ?? `seat ${line.seat}`;
      div.append(head);
      if (line.text) {
        const pre = document.createElement("pre");
        pre.textContent = line.text; // text, never HTML
        div.append(pre);
      }
      if (line.note) {
        const note = document.createElement("p");
        note.className = "debug-note small";
        note.textContent = line.note;
        div.append(note);
      }
      if (line.unplaced.length) {
        const ul = document.createElement("ul");
        ul.className = "small";
        for (const mark of line.unplaced) {
          const li = document.createElement("li");
          const at = mark.cell ? `cell ${mark.cell.join(",")}` : `point ${mark.point.join(",")}`;
          li.textContent = `${at}${mark.label ? `: ${mark.label}` : ""}`;
          if (mark.color) li.style.borderLeft = `4px solid ${mark.color}`;
          ul.append(li);
        }
        div.append(ul);
      }
      out.append(div);
    }
  }
}
