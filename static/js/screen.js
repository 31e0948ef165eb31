// The big screen of an event (/events/<id>/screen): the featured live match, the standings
// updating live and the matches up next. It runs unattended for hours:
// - ws/events/<id>/ (snapshot, then match_started / match_finished / standings) and the
//   featured match's ws/matches/<id>/ reconnect by themselves with backoff;
// - a missed turn is fetched from the turns API; everything is re-synchronised from
//   screen.json every minute (and at once after a reconnect);
// - when the featured match ends, its result stays up a few seconds, then the screen
//   follows the most interesting running match (its players ranked highest in the
//   standings; the newest on a tie), or waits for the next one to start;
// - a watchdog reconnects a featured match that went silent.

import { Reconnecting, fetchTurns } from "./ws.js";
import { BG, MUTED, font, isDone, namesOf, resultText, setupCanvas } from "./common.js";

const config = JSON.parse(document.getElementById("screen-config").textContent);
const RESULT_HOLD_MS = 6000;
const RESYNC_MS = 60000;
const STALL_MS = 90000;
const RELOAD_AFTER_MS = 12 * 3600 * 1000;
const started = Date.now();

const $ = (id) => document.getElementById(id);
const canvas = $("featured-canvas");
const state = { event: null, standings: [], live: new Map(), upcoming: [], seen: new Set(), points: new Map() };
let renderer = null;
let colours = null; // the renderer module's COLORS / LABELS / DOTTED, when it has them
let featured = null;
let holding = null;

// -- the featured match -----------------------------------------------------------------------

class Featured {
  constructor(id) {
    this.id = id;
    this.match = null;
    this.initial = null;
    this.turns = [];
    this.stream = null;
    this.lastMessage = Date.now();
    this.stopped = false;
    this.ended = false;
  }

  async start() {
    try {
      const response = await fetch(config.viewer.replace("{id}", this.id), { headers: { Accept: "application/json" } });
      if (response.ok) {
        const body = await response.json();
        this.match = body.match;
        this.initial = body.initial;
      }
    } catch { /* the snapshot brings the match */ }
    if (this.stopped) return;
    this.stream = new Reconnecting(config.matchWs.replace("{id}", this.id), {
      onMessage: (msg) => this.onMessage(msg),
      onDown: () => this.catchUp(),
    }).start();
    this.draw();
  }

  onMessage(msg) {
    this.lastMessage = Date.now();
    if (msg.type === "snapshot") {
      this.match = msg.match;
      this.turns = [];
      this.add(msg.turns || []);
      if (isDone(msg.match)) this.finish();
    } else if (msg.type === "turn") {
      this.add([msg.turn]);
    } else if (msg.type === "started") {
      this.match = msg.match;
    } else if (msg.type === "end") {
      this.match = msg.match;
      this.catchUp().then(() => this.finish());
    }
    this.draw();
  }

  add(turns) {
    let gap = false;
    for (const t of [...turns].sort((a, b) => a.number - b.number)) {
      if (t.number === this.turns.length + 1) this.turns.push(t);
      else if (t.number > this.turns.length + 1) gap = true;
    }
    if (gap) this.catchUp();
  }

  async catchUp() {
    try {
      this.add(await fetchTurns(config.turns.replace("{id}", this.id), this.turns.length));
      this.draw();
    } catch { /* next time */ }
  }

  frameAt(i) {
    return i <= 0 ? this.initial ?? this.turns[0]?.frame : this.turns[i - 1]?.frame;
  }

  draw() {
    if (this.stopped || !renderer) return;
    const n = this.turns.length;
    const done = isDone(this.match);
    const names = namesOf(this.match);
    renderer.draw({
      frame: this.frameAt(n),
      prev: n ? this.frameAt(n - 1) : null,
      index: n,
      last: n,
      frameAt: (i) => this.frameAt(i),
      turn: this.turns[n - 1] || null,
      lastTurn: this.turns[n - 1] || null,
      match: this.match,
      names,
      final: done,
      live: !done,
      forward: true,
    });
    const parts = this.match?.participants || [];
    const many = names.length > 2; // N seats: the board's own column lists them
    $("f-name0").textContent = many ? `${names.length} seats` : names[0] ?? "—";
    $("f-name1").textContent = many ? "free-for-all" : names[1] ?? "—";
    $("f-score0").textContent = many ? "" : parts[0]?.score ?? "";
    $("f-score1").textContent = many ? "" : parts[1]?.score ?? "";
    seatBars(many ? parts : [], names, done);
    $("featured").classList.toggle("many", many);
    $("f-status").textContent = done ? "final" : `match #${this.id} · turn ${n}`;
    $("f-foot").textContent = done ? resultText(this.match, this.turns[n - 1], names) || "" : "● live";
    document.body.dataset.featured = String(this.id);
    document.body.dataset.featuredStatus = this.match?.status ?? "";
    document.body.dataset.featuredTurns = String(n);
  }

  finish() {
    if (this.ended) return;
    this.ended = true;
    state.seen.add(this.id);
    state.live.delete(this.id);
    this.stream?.stop();
    this.draw();
    clearTimeout(holding);
    holding = setTimeout(() => { holding = null; pickNext(); }, RESULT_HOLD_MS);
  }

  stop() {
    this.stopped = true;
    this.stream?.stop();
  }
}

/** A match of more seats: one bar per seat (its letter, name, and score once over) in the
 * renderer's seat colours and dotted patterns, as on the match page; hidden for two seats. */
function seatBars(parts, names, done) {
  const list = $("f-seats");
  list.hidden = !parts.length;
  list.replaceChildren(...parts.map((p, i) => {
    const seat = p.seat ?? i;
    const li = document.createElement("li");
    li.className = colours?.DOTTED?.[seat] ? "fseat dotted" : "fseat";
    li.dataset.seat = String(seat);
    li.style.color = colours?.COLORS?.[seat] ?? "";
    const tag = document.createElement("span");
    tag.className = "tag";
    tag.textContent = colours?.LABELS?.[seat] ?? String(seat + 1);
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = names[i] ?? p.name;
    const score = document.createElement("span");
    score.className = "fscore";
    score.textContent = done && p.score !== null && p.score !== undefined ? String(p.score) : "";
    li.append(tag, name, score);
    return li;
  }));
}

function rankOf(botId) {
  const row = state.standings.find((r) => r.bot === botId);
  return row ? row.rank : state.standings.length + 1;
}

function pickNext() {
  if (holding) return; // still showing the last result
  if (featured && !featured.ended) return;
  const candidates = [...state.live.values()].filter((m) => m.status === "running" && !state.seen.has(m.id));
  candidates.sort((a, b) => {
    const ra = a.participants.reduce((s, p) => s + rankOf(p.bot), 0);
    const rb = b.participants.reduce((s, p) => s + rankOf(p.bot), 0);
    return ra - rb || b.id - a.id;
  });
  const next = candidates[0];
  if (next) {
    if (featured) featured.stop();
    featured = new Featured(next.id);
    featured.start();
  } else if (!featured) {
    idle();
  } // else: the last result stays up until the next match starts
  renderLists();
}

function idle() {
  document.body.dataset.featured = "";
  document.body.dataset.featuredStatus = "";
  $("f-name0").textContent = "—";
  $("f-name1").textContent = "—";
  $("f-score0").textContent = "";
  $("f-score1").textContent = "";
  seatBars([], [], false);
  const next = state.upcoming[0];
  const done = state.event?.status === "finished";
  $("f-status").textContent = done ? "the event is over" : "waiting for the next match";
  $("f-foot").textContent = next ? `next: ${seatsLabel(namesOf(next))}` : "";
  const { ctx, w, h } = setupCanvas(canvas);
  ctx.fillStyle = BG;
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = MUTED;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.font = font(Math.max(16, h * 0.06), 700);
  ctx.fillText(done ? "Final standings →" : "Waiting for the next match…", w / 2, h / 2);
}

// -- standings and lists -------------------------------------------------------------------------

function renderStandings() {
  const tbody = $("standings").tBodies[0];
  tbody.replaceChildren();
  $("standings").classList.toggle("compact", state.standings.length > 8);
  for (const row of state.standings) {
    const tr = tbody.insertRow();
    const before = state.points.get(row.bot);
    if (before !== undefined && before !== row.points) tr.className = "changed";
    state.points.set(row.bot, row.points);
    const points = Number.isInteger(row.points) ? row.points : row.points.toFixed(2);
    const cells = [row.rank, row.name, points, row.wins, row.draws, row.losses];
    cells.forEach((value, i) => {
      const td = tr.insertCell();
      td.textContent = String(value);
      if (i !== 1) td.className = "num";
    });
  }
  document.body.dataset.standingsGames = String(state.standings.reduce((s, r) => s + r.games, 0));
}

/** "A vs B" for two seats; "N-way: A, B, C…" for more. */
function seatsLabel(names) {
  return names.length > 2 ? `${names.length}-way: ${names.join(", ")}` : names.join(" vs ");
}

function renderLists() {
  const list = $("upcoming");
  list.replaceChildren();
  const live = [...state.live.values()].filter((m) => m.status === "running");
  for (const m of live) {
    const li = document.createElement("li");
    const tag = document.createElement("span");
    tag.className = "tag";
    tag.textContent = featured?.id === m.id ? "ON SCREEN" : "LIVE";
    li.append(tag, document.createTextNode(seatsLabel(namesOf(m))));
    list.append(li);
  }
  for (const m of state.upcoming.slice(0, 8)) {
    const li = document.createElement("li");
    li.textContent = seatsLabel(namesOf(m));
    list.append(li);
  }
  if (!list.children.length) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = state.event?.status === "finished" ? "All matches played." : "Nothing scheduled.";
    list.append(li);
  }
  const e = state.event;
  if (e) {
    $("event-name").textContent = e.name;
    $("event-progress").textContent = `${e.matches_done} / ${e.matches_total} matches · ${e.status}`;
  }
}

function applySnapshot(snap) {
  state.event = snap.event;
  state.standings = snap.standings || [];
  state.live = new Map((snap.live || []).map((m) => [m.id, m]));
  state.upcoming = snap.upcoming || [];
  renderStandings();
  renderLists();
  if (!featured || featured.ended) pickNext();
}

async function resync() {
  try {
    const response = await fetch(config.snapshot, { headers: { Accept: "application/json" } });
    if (response.ok) applySnapshot(await response.json());
  } catch { /* next minute */ }
}

function onEvent(msg) {
  if (msg.type === "snapshot") applySnapshot(msg);
  else if (msg.type === "match_started") {
    state.live.set(msg.match.id, msg.match);
    state.upcoming = state.upcoming.filter((m) => m.id !== msg.match.id);
    renderLists();
    if (!featured || featured.ended) pickNext();
  } else if (msg.type === "match_finished") {
    state.live.delete(msg.match.id);
    const e = state.event;
    if (e) {
      e.matches_done = Math.min(e.matches_total, e.matches_done + 1);
      if (e.matches_done === e.matches_total && e.status === "running") e.status = "finished";
    }
    renderLists();
    if (state.upcoming.length < 3) resync();
  } else if (msg.type === "standings") {
    state.standings = msg.standings || [];
    renderStandings();
  }
}

async function main() {
  const module = await import(config.renderer);
  renderer = module.createRenderer(canvas, { names: [] });
  colours = module;
  idle();
  const conn = $("conn-state");
  new Reconnecting(config.ws, {
    onOpen: () => { conn.textContent = ""; },
    onDown: () => { conn.textContent = "reconnecting…"; },
    onMessage: onEvent,
    maxDelay: 15000,
  }).start();
  setInterval(resync, RESYNC_MS);
  setInterval(() => {
    if (featured && !featured.ended && Date.now() - featured.lastMessage > STALL_MS) {
      featured.lastMessage = Date.now();
      featured.stream?.reconnectNow();
      featured.catchUp();
    }
    if (Date.now() - started > RELOAD_AFTER_MS && (!featured || featured.ended) && !holding) location.reload();
  }, 15000);
  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => (featured ? featured.draw() : idle()));
  });
}

main().catch((err) => {
  $("conn-state").textContent = "the screen failed to start";
  console.error(err);
});
