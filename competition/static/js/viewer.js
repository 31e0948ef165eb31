// The match viewer: one player for live matches and replays.
//
// Frames: index 0 is the start position (the page's initial frame), index k the frame after
// turn k. Controls: play/pause, step, first/last, a scrub bar, speed 0.5x-16x, keyboard
// (space, left/right, J/K, Home/End) and ?turn=N. A live viewer follows the newest turn
// while it sits at the end; scrubbing back stops following, End (or the last button)
// resumes it. Under the scrub bar a timeline shows each turn's latency per seat and marks
// faults; clicking it seeks.

import { SEAT_COLORS, GOLD, isDone, namesOf, resultText, setupCanvas, clamp } from "./common.js";

const BASE_MS = 600; // one turn every 0.6 s at 1x
const SPEEDS = [0.5, 1, 2, 4, 8, 16];
const icon = (d) => `<svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true"><path d="${d}" fill="currentColor"/></svg>`;
const PLAY_ICON = icon("M7 4.5v15l12.5-7.5z");
const PAUSE_ICON = icon("M6 5h4.5v14H6zM13.5 5H18v14h-4.5z");


/** A seat's fault in words: the platform's catalogue (``config.faults``), then for an illegal
 *  reply the game's reason (``config.illegal``, its code being the turn's detail); a time
 *  limit's detail as it is; never a code. */
export function faultWords(config, code, detail) {
  if (!code || code === "ok") return "ok";
  const words = config.faults?.[code] ?? String(code).replaceAll("_", " ");
  if (!detail) return words;
  if (code === "illegal") return `${words}: ${config.illegal?.[detail] ?? String(detail).replaceAll("_", " ")}`;
  return `${words}: ${detail}`;
}

export class Viewer {
  constructor(root, config, renderer, { onChange, onDraw } = {}) {
    this.root = root;
    this.config = config;
    this.renderer = renderer;
    this.colors = renderer.colors ?? SEAT_COLORS; // a game of more seats brings its own
    this.onChange = onChange;
    this.onDraw = onDraw; // layers over the board (the debug overlay), after the renderer
    this.match = config.match;
    this.initial = config.initial;
    this.turns = [];
    this.index = 0;
    this.playing = false;
    this.speed = 1;
    this.follow = !isDone(this.match);
    this.endedFollowing = false;
    this.timer = null;
    this.lastDrawn = -1;
    const q = new URLSearchParams(location.search).get("turn");
    this.requested = q !== null && /^\d+$/.test(q) ? parseInt(q, 10) : null;
    if (this.requested !== null) this.follow = false;
    this.el = {
      canvas: root.querySelector("#board"),
      stage: root.querySelector("#stage"),
      scrub: root.querySelector("#scrub"),
      label: root.querySelector("#turn-label"),
      live: root.querySelector("#live-badge"),
      play: root.querySelector('[data-action="play"]'),
      speed: root.querySelector('[data-action="speed"]'),
      timeline: root.querySelector("#timeline"),
      info: document.getElementById("turn-info"),
      infoNumber: document.getElementById("info-number"),
      status: document.getElementById("match-status"),
      reason: document.getElementById("match-reason"),
      result: document.getElementById("match-result"), // the result line, in words, once over
      share: document.getElementById("share-url"),
      fork: document.getElementById("fork-link"), // "play from here": the turn on screen
    };
    this.bind();
    this.resize();
    this.update();
  }

  // -- data -------------------------------------------------------------------------------

  get last() {
    return this.turns.length;
  }

  frameAt(i) {
    if (i <= 0) return this.initial ?? this.turns[0]?.frame ?? null;
    return this.turns[i - 1]?.frame ?? null;
  }

  lastNumber() {
    return this.turns.length;
  }

  /** Add turns (any order, duplicates ignored); returns true if a gap remains. */
  addTurns(list) {
    const sorted = [...list].sort((a, b) => a.number - b.number);
    let added = false;
    let gap = false;
    for (const turn of sorted) {
      if (turn.number === this.turns.length + 1) {
        this.turns.push(turn);
        added = true;
      } else if (turn.number > this.turns.length + 1) {
        gap = true;
      }
    }
    if (added) {
      if (this.requested !== null && this.requested <= this.last) {
        this.index = this.requested;
        this.requested = null;
        this.jumped = true;
      } else if (this.follow || this.endedFollowing) {
        this.index = this.last; // a match that ended while followed shows its final position
      }
      this.update();
    }
    return gap;
  }

  setMatch(match) {
    if (!match) return;
    const wasDone = isDone(this.match);
    this.match = match;
    if (isDone(match) && !wasDone) {
      // it ended while the viewer followed it (or before its turns had loaded): the turns
      // still arriving land on the final position, unless the user moves
      this.endedFollowing = this.follow || this.last === 0;
      this.follow = false;
    }
    this.update();
  }

  /** Loading finished (a replay): honour ?turn=N, else show the start for a replay. */
  ready() {
    if (this.requested !== null) {
      this.index = clamp(this.requested, 0, this.last);
      this.requested = null;
    } else if (!this.jumped) {
      this.index = this.last; // a replay opens on the result; play starts it from the beginning
    }
    this.update();
  }

  // -- playback -----------------------------------------------------------------------------

  seek(i, { user = true } = {}) {
    this.index = clamp(Math.round(i), 0, this.last);
    if (user) {
      this.follow = !isDone(this.match) && this.index === this.last;
      this.endedFollowing = false;
    }
    this.update();
  }

  step(delta) {
    this.pause();
    this.seek(this.index + delta);
  }

  first() {
    this.pause();
    this.seek(0);
  }

  end() {
    this.seek(this.last);
    if (!isDone(this.match)) this.follow = true;
    this.update();
  }

  goLive() {
    if (!isDone(this.match)) {
      this.follow = true;
      this.index = this.last;
      this.update();
    }
  }

  play() {
    if (this.playing) return;
    if (this.index >= this.last && isDone(this.match)) this.index = 0; // replay from the start
    this.playing = true;
    this.schedule();
    this.update();
  }

  pause() {
    this.playing = false;
    clearTimeout(this.timer);
    this.update();
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  setSpeed(speed) {
    this.speed = SPEEDS.includes(speed) ? speed : 1;
    if (this.el.speed) this.el.speed.value = String(this.speed);
    if (this.playing) this.schedule();
  }

  schedule() {
    clearTimeout(this.timer);
    if (!this.playing) return;
    this.timer = setTimeout(() => this.tick(), BASE_MS / this.speed);
  }

  tick() {
    if (!this.playing) return;
    if (this.index < this.last) {
      this.index += 1;
      if (this.index === this.last && !isDone(this.match)) this.follow = true;
      this.update();
      this.schedule();
    } else if (!isDone(this.match)) {
      this.follow = true; // at the live edge: new turns show as they come
      this.schedule();
    } else {
      this.pause();
    }
  }

  // -- drawing ------------------------------------------------------------------------------

  view() {
    const turn = this.index > 0 ? this.turns[this.index - 1] : null;
    const done = isDone(this.match);
    return {
      frame: this.frameAt(this.index),
      prev: this.index > 0 ? this.frameAt(this.index - 1) : null,
      index: this.index,
      last: this.last,
      frameAt: (i) => this.frameAt(i),
      turn,
      lastTurn: this.turns[this.turns.length - 1] || null,
      match: this.match,
      names: namesOf(this.match),
      final: done && this.index === this.last,
      live: !done,
      forward: this.lastDrawn === this.index - 1,
    };
  }

  draw() {
    const view = this.view();
    this.renderer.draw(view);
    this.onDraw?.(view, this.renderer);
    this.lastDrawn = this.index;
  }

  update() {
    this.draw();
    const done = isDone(this.match);
    const el = this.el;
    if (el.scrub) {
      el.scrub.max = String(this.last);
      el.scrub.value = String(this.index);
    }
    if (el.label) el.label.textContent = `turn ${this.index} / ${this.last}${done ? "" : "+"}`;
    if (el.fork) el.fork.href = `${el.fork.dataset.base}?turn=${this.index}`;
    if (el.live) {
      el.live.hidden = done || this.match?.status === "pending"; // a challenge waiting: not live
      el.live.style.opacity = this.follow ? "1" : "0.45";
      el.live.title = this.follow ? "following the live match" : "press End to follow live";
    }
    if (el.play) {
      el.play.innerHTML = this.playing ? PAUSE_ICON : PLAY_ICON;
      el.play.setAttribute("aria-label", this.playing ? "Pause" : "Play");
    }
    if (el.status && this.match) {
      el.status.textContent = this.match.status_text
        || (this.config.statuses?.[this.match.status] ?? this.match.status.replaceAll("_", " "));
      el.status.className = `status ${this.match.status}`;
    }
    if (el.reason && this.match) el.reason.textContent = this.match.reason_text || "";
    if (el.result && this.match) {
      const text = done ? resultText(this.match, this.turns[this.turns.length - 1] || null, namesOf(this.match), this.config.illegal) : "";
      el.result.textContent = text || "";
      el.result.hidden = !text;
    }
    if (el.share) {
      // the share link opens at this turn; following a live match, at the live match
      const base = el.share.dataset.base;
      el.share.value = this.follow && !done ? base : `${base}/t/${this.index}`;
    }
    for (const p of this.match?.participants || []) {
      const score = document.querySelector(`.player[data-seat="${p.seat}"] [data-score]`);
      if (score) score.textContent = p.score === null || p.score === undefined ? "" : String(p.score);
    }
    this.drawTimeline();
    this.describeTurn();
    this.onChange?.(this);
  }

  describeTurn() {
    const { info, infoNumber } = this.el;
    if (!info) return;
    if (infoNumber) infoNumber.textContent = String(this.index);
    info.replaceChildren();
    const turn = this.index > 0 ? this.turns[this.index - 1] : null;
    if (!turn) {
      const p = document.createElement("p");
      p.className = "muted";
      const started = this.last || this.yourMove || this.match?.status !== "queued";
      const m = this.match;
      const start = m?.forked_from
        ? `The start position: match #${m.forked_from} after its turn ${m.fork_turn}.`
        : "The start position.";
      p.textContent = this.yourMove
        ? `${start.slice(0, -1)}: your move.`
        : started ? start : "Waiting for the first turn…";
      info.append(p);
      return;
    }
    const table = document.createElement("table");
    const head = table.insertRow();
    for (const text of ["Seat", "Action", "ms", "Fault"]) {
      const th = document.createElement("th");
      th.textContent = text;
      head.append(th);
    }
    const names = namesOf(this.match);
    for (const seat of turn.seats) {
      const row = table.insertRow();
      const who = row.insertCell();
      who.textContent = names[seat] ?? `seat ${seat}`;
      who.style.color = this.colors[seat] ?? "";
      const action = row.insertCell();
      action.className = "action";
      const played = turn.actions?.[seat];
      // no action (an illegal or missing reply, a forfeit): said in words, never "null"
      let text = played === null || played === undefined ? "" : JSON.stringify(played);
      if (text && text.length > 140) text = text.slice(0, 140) + "…";
      action.textContent = text || "no move";
      if (!text) action.classList.add("muted");
      row.insertCell().textContent = turn.latencies_ms?.[seat] ?? "—";
      const fault = row.insertCell();
      fault.textContent = faultWords(this.config, turn.faults?.[seat], turn.details?.[seat]);
      if (turn.faults?.[seat] && turn.faults[seat] !== "ok") fault.className = "badge fault";
    }
    info.append(table);
    if (turn.forfeited?.length) {
      const p = document.createElement("p");
      p.textContent = `Forfeited: ${turn.forfeited.map((s) => names[s] ?? s).join(", ")}`;
      info.append(p);
    }
  }

  drawTimeline() {
    const canvas = this.el.timeline;
    if (!canvas || !canvas.clientWidth) return;
    const { ctx, w, h } = setupCanvas(canvas);
    ctx.fillStyle = "#0b0f1a";
    ctx.fillRect(0, 0, w, h);
    const n = this.last;
    if (!n) return;
    const buckets = Math.min(n, Math.floor(w));
    const per = n / buckets;
    const bw = w / buckets;
    let max = 1;
    for (const t of this.turns) for (const ms of t.latencies_ms || []) if (ms > max) max = ms;
    const scale = (ms) => (Math.log1p(ms) / Math.log1p(max)) * (h - 10);
    for (let b = 0; b < buckets; b += 1) {
      const from = Math.floor(b * per);
      const to = Math.max(from + 1, Math.floor((b + 1) * per));
      const lat = [];
      let fault = false;
      for (let i = from; i < to && i < n; i += 1) {
        const t = this.turns[i];
        (t.latencies_ms || []).forEach((ms, seat) => { if (ms > (lat[seat] ?? 0)) lat[seat] = ms; });
        if ((t.faults || []).some((f) => f && f !== "ok")) fault = true;
      }
      const x = b * bw;
      const seats = Math.max(2, lat.length); // one bar per seat, side by side in the bucket
      const half = Math.max(1, Math.min((bw - 1) / seats, 6));
      const left = x + bw / 2 - (half * seats) / 2;
      lat.forEach((ms, seat) => {
        if (ms === undefined || ms === null) return;
        ctx.fillStyle = this.colors[seat] ?? "#888";
        const bh = Math.max(2, scale(ms));
        ctx.fillRect(left + seat * half, h - bh, Math.max(1, half), bh);
      });
      if (fault) {
        ctx.fillStyle = GOLD;
        ctx.beginPath();
        ctx.moveTo(x + bw / 2, 8);
        ctx.lineTo(x + bw / 2 - 4, 0);
        ctx.lineTo(x + bw / 2 + 4, 0);
        ctx.closePath();
        ctx.fill();
      }
    }
    const cx = n ? (this.index / n) * w : 0;
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(Math.min(w - 2, Math.max(0, cx - 1)), 0, 2, h);
  }

  // -- layout and input --------------------------------------------------------------------

  resize() {
    const stage = this.el.stage;
    if (!stage) return;
    const width = stage.clientWidth || 320;
    const preferred = this.renderer.preferredHeight ? this.renderer.preferredHeight(width) : width * 0.75;
    // fit the board, the controls and the timeline in the window when it is big enough
    // (on a phone the page scrolls: the board may take the whole height of the screen)
    const top = Math.min(stage.getBoundingClientRect().top + window.scrollY, window.innerHeight * 0.4);
    const narrow = window.innerWidth < 700;
    const room = narrow ? window.innerHeight - 40 : Math.max(240, window.innerHeight - top - 150);
    stage.style.height = `${Math.round(Math.min(preferred, room))}px`;
    this.draw();
    this.drawTimeline();
  }

  bind() {
    const root = this.root;
    root.querySelector('[data-action="first"]')?.addEventListener("click", () => this.first());
    root.querySelector('[data-action="back"]')?.addEventListener("click", () => this.step(-1));
    root.querySelector('[data-action="forward"]')?.addEventListener("click", () => this.step(1));
    root.querySelector('[data-action="last"]')?.addEventListener("click", () => this.end());
    this.el.play?.addEventListener("click", () => this.toggle());
    this.el.speed?.addEventListener("change", () => this.setSpeed(parseFloat(this.el.speed.value)));
    this.el.scrub?.addEventListener("input", () => {
      // read the position first: pause() redraws, which writes the old index back
      const wanted = parseInt(this.el.scrub.value, 10);
      this.pause();
      this.seek(wanted);
    });
    const seekTimeline = (event) => {
      const rect = this.el.timeline.getBoundingClientRect();
      this.pause();
      this.seek(((event.clientX - rect.left) / rect.width) * this.last);
    };
    this.el.timeline?.addEventListener("click", seekTimeline);
    document.addEventListener("keydown", (event) => {
      const tag = event.target?.tagName;
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (tag === "INPUT" && event.target.type !== "range") return;
      if (tag === "TEXTAREA" || tag === "SELECT" || event.target?.isContentEditable) return;
      const key = event.key;
      if (key === " " || key === "Spacebar") this.toggle(); else if (key === "ArrowLeft" || key === "j" || key === "J") this.step(-1);
      else if (key === "ArrowRight" || key === "k" || key === "K") this.step(1);
      else if (key === "Home") this.first();
      else if (key === "End") this.end();
      else return;
      event.preventDefault();
    });
    let pending = 0;
    const onResize = () => {
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(() => this.resize());
    };
    window.addEventListener("resize", onResize);
    if (window.ResizeObserver && this.el.stage) new ResizeObserver(onResize).observe(this.el.stage.parentElement);
  }
}
