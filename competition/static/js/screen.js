// The big screen of an event (/events/<id>/screen). It runs unattended for hours and shows,
// by itself:
// - the wall: the event's live matches as panes (1, 2, 4, 6 or 9 by how many), each a live
//   viewer drawn by the game's renderer over its own ws/matches/<id>/; the most interesting
//   one large when one stands out (the final of a bracket, the last match of its round, the
//   closest score); a finished pane keeps its result in place until the round is summed up
//   or its slot is needed;
// - when a round completes: its results and the bracket (elimination) for holdMs, then the
//   wall again; once the event is over: the podium with a link and a QR code to the final;
// - beside it, always, the standings (every row: more columns and smaller type as needed)
//   and the matches live and up next.
// Every bot has one colour and one letter for the whole event (its place among the entries by
// bot id; a colour a table shares is moved to a free one there), on two-seat tables too, when
// the game's renderer brings marks (``markOf``). More live matches than the wall holds: a page
// at a time, and the panes off the page keep their streams (``standby``), so a page turn shows
// the live turn at once. No text is drawn under the root size (24 px at 1080p), canvas
// included: each pane's canvas counts the sizes its renderer draws text at (``data-fonts``)
// and leaves out what is smaller (``data-dropped``).
// ws/events/<id>/ brings match_started / match_finished / standings and reconnects by itself
// with backoff; screen.json (the snapshot plus `show`: rounds, results, bracket, podium) is
// re-read after each result, after a reconnect and every minute, so a restarted server is
// caught up with.

import { Reconnecting, fetchTurns } from "./ws.js";
import { isDone, namesOf, resultText } from "./common.js";

const config = JSON.parse(document.getElementById("screen-config").textContent);
const HOLD_MS = config.holdMs;
// an event's status in words where its code is not one ("revealing": every match played,
// results still hidden until the presenter reveals them; "finished" only once all are public)
const STATUS_WORDS = { revealing: "play over · results being revealed" };
const OVER = new Set(["revealing", "finished"]);
const RESULT_KEEP_MS = 5000; // a finished pane's result stays at least this long
const RESYNC_MS = 60000;
const STALL_MS = 90000;
const RELOAD_AFTER_MS = 12 * 3600 * 1000;
const MAX_PANES = 9;
const ROTATE_MS = config.rotateMs || 12000; // each page of live matches, when they are more than the wall holds

/** Panes the wall holds: nine two-seat boards, four boards of more seats (each with its
 *  legend: a board of many seats needs its room to be read from the back of a hall). */
function maxPanes() {
  const seats = Math.max(2, ...[...state.live.values()].map((m) => (m.participants || []).length));
  if (seats > 2 || state.show?.many) return portrait() ? 2 : 4; // a phone: two boards, stacked
  return MAX_PANES;
}

/** A phone or a portrait screen: the stage above the side, its panes in one column. */
const portrait = () => matchMedia("(max-aspect-ratio: 1/1)").matches;
const started = Date.now();

const $ = (id) => document.getElementById(id);
const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
};
const state = {
  event: null, standings: [], live: new Map(), upcoming: [], show: null,
  points: new Map(), summed: null, summaryUntil: 0, summaryRound: null,
};
/** More live matches than the wall holds: it shows them a page at a time, ``ROTATE_MS`` each
 *  (``page``, ``until``: when the next page comes; ``text``: what the header says of it). */
const rotation = { page: 0, until: 0, pages: 1, text: "" };
const panes = new Map(); // match id -> Pane, in wall order
/** Live matches off the wall's page: their panes, detached, still following their match. */
const standby = new Map();
const MAX_STANDBY = 32;
/** Each page turn: when, and the turn each pane showed at its first draw (for whoever checks
 *  that a page turn shows the live turn at once). */
const pageTurns = [];
/** The root size in px: no text on the wall under it (24 px at 1920x1080). */
const rem = () => parseFloat(getComputedStyle(document.documentElement).fontSize) || 24;
let createRenderer = null;
let colours = null; // the renderer module's COLORS / LABELS / DOTTED, when it has them

// -- a pane: one live match ------------------------------------------------------------------

class Pane {
  constructor(match) {
    this.id = match.id;
    this.match = match;
    this.initial = null;
    this.turns = [];
    this.endedAt = 0;
    this.lastMessage = Date.now();
    this.root = el("div", "pane");
    this.root.dataset.match = String(match.id);
    const head = el("div", "pane-head");
    this.n0 = el("span", "n n0");
    this.sc = el("span", "sc");
    this.n1 = el("span", "n n1");
    head.append(this.n0, this.sc, this.n1);
    this.seats = el("ol", "fseats pane-seats");
    this.seats.hidden = true;
    this.seats.setAttribute("aria-label", `Seats of match ${match.id}`);
    const stage = el("div", "pane-stage");
    this.stage = stage;
    this.canvas = el("canvas");
    this.canvas.setAttribute("aria-label", `Match ${match.id}`);
    stage.append(this.canvas);
    const foot = el("div", "pane-foot");
    this.why = el("span", "why");
    this.info = el("span", "info");
    foot.append(this.why, this.info);
    this.root.append(head, this.seats, stage, foot);
    const many = boardPane(match); // the pane's legend lists the seats
    this.fonts = [];
    this.dropped = 0;
    guardText(this.canvas, this);
    this.renderer = createRenderer(this.canvas, { names: [], marks: marksOf(match), legend: !many, minText: rem() });
  }

  async start() {
    try {
      const response = await fetch(config.viewer.replace("{id}", this.id), { headers: { Accept: "application/json" } });
      if (response.ok) this.initial = (await response.json()).initial;
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
      if ((msg.first ?? 1) === 1) this.turns = [];
      this.add(msg.turns || []);
    } else if (msg.type === "snapshot_part") this.add(msg.turns || []); // a big snapshot's next turns
    else if (msg.type === "turn") this.add([msg.turn]);
    else if (msg.type === "turn_ref") this.catchUp(); // a turn too big for a message
    else if (msg.type === "started" || msg.type === "end") this.match = msg.match;
    if (isDone(this.match)) this.catchUp().then(() => this.end());
    this.draw();
    if (!this.standby) render();
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

  get ended() {
    return this.endedAt > 0;
  }

  end() {
    if (this.ended) return;
    this.endedAt = Date.now();
    this.stream?.stop();
    state.live.delete(this.id);
    since?.push({ type: "match_finished", match: this.match }); // over a re-read in flight
    if (this.standby) { // off the page: nothing to show of it any more
      standby.delete(this.id);
      this.stop();
    }
    this.draw();
    render();
  }

  draw() {
    if (this.stopped) return;
    const n = this.turns.length;
    const done = isDone(this.match);
    const names = namesOf(this.match);
    if (this.frameAt(n) !== undefined && this.canvas.clientWidth > 0) {
      this.renderer.marks = marksOf(this.match);
      this.fonts = [];
      this.dropped = 0;
      this.renderer.draw({
        frame: this.frameAt(n), prev: n ? this.frameAt(n - 1) : null, index: n, last: n,
        frameAt: (i) => this.frameAt(i), turn: this.turns[n - 1] || null,
        lastTurn: this.turns[n - 1] || null, match: this.match, names,
        final: done, live: !done, forward: true,
      });
      this.canvas.dataset.fonts = [...new Set(this.fonts.map((px) => px.toFixed(1)))].join(" ");
      this.canvas.dataset.dropped = String(this.dropped);
      this.canvas.dataset.turn = String(n);
    }
    const parts = this.match.participants || [];
    const many = boardPane(this.match);
    this.n0.textContent = many ? `Table of ${names.length}` : names[0] ?? "—";
    this.n1.textContent = many ? "" : names[1] ?? "—";
    if (!many) headMarks(this, parts);
    const scores = parts.map((p) => p.score);
    this.sc.textContent = !many && scores.every((s) => s !== null && s !== undefined) && scores.length ? scores.join(" – ") : many ? "" : "vs";
    seatBars(this.seats, many ? parts : [], names, done, this.id);
    this.root.classList.toggle("many", many);
    const stage = stageOf(this.match);
    this.root.dataset.stage = stage;
    this.why.textContent = done ? (stage ? `${stage} · RESULT` : "RESULT") : stage ? `● LIVE · ${stage}` : "● LIVE";
    // the board draws the result (every renderer's banner): the foot says it no second time
    const round = this.match.round ? ` · ${roundLabel(this.match.round)}` : "";
    this.info.textContent = done ? `${n} turn${n === 1 ? "" : "s"}${round}` : `turn ${n}${round}`;
    this.root.classList.toggle("ended", done);
    this.root.dataset.status = this.match.status;
    this.root.dataset.turns = String(n);
  }

  stop() {
    this.stopped = true;
    this.stream?.stop();
    this.root.remove();
  }
}

/** Counts the sizes ``pane``'s renderer draws text at on ``canvas`` (in CSS px, through the
 *  context's transform) and draws none under the root size: the wall is read from afar. */
function guardText(canvas, pane) {
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  for (const name of ["fillText", "strokeText"]) {
    const original = ctx[name];
    ctx[name] = function (text, x, y, maxWidth) {
      if (!String(text ?? "").trim()) return undefined;
      const px = parseFloat(/(\d+(?:\.\d+)?)px/.exec(this.font)?.[1] || "0");
      const m = this.getTransform();
      const dpr = Math.min(window.devicePixelRatio || 1, 3);
      let size = (px * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c))) / dpr;
      if (maxWidth !== undefined) { // squeezed to maxWidth: as small as it is drawn
        const wide = this.measureText(String(text)).width;
        if (wide > maxWidth) size *= Math.max(0, maxWidth) / wide;
      }
      if (size + 0.01 < rem()) {
        pane.dropped += 1;
        return undefined;
      }
      pane.fonts.push(size);
      return maxWidth === undefined ? original.call(this, text, x, y) : original.call(this, text, x, y, maxWidth);
    };
  }
}

/** A pane drawn as a board with the seats' legend beside it: a match of more than two seats,
 *  or any table of a free-for-all (its two-seat tables look like the others). */
function boardPane(match) {
  return (match.participants || []).length > 2 || Boolean(state.show?.many);
}

/** A bot's place among the event's entries by bot id (its colour, letter and pattern on every
 *  pane and in the standings, the same whatever seat it holds), or null. */
function markOfBot(bot) {
  const ids = state.standings.map((r) => r.bot).sort((a, b) => a - b);
  const at = ids.indexOf(bot);
  return at < 0 ? null : at;
}

/** A bot's mark in the standings: ``{color, dotted, shape, label}``, or null. */
function botMark(bot) {
  const at = markOfBot(bot);
  return at === null || !colours?.markOf ? null : colours.markOf([at], 0);
}

/** A match's seat -> ``{hue, label}`` for the renderer's ``marks``: each bot's own, a colour
 *  already taken at the table moved to the next free one (more bots than colours), the
 *  letter kept; null when the renderer has no marks. */
function marksOf(match) {
  const parts = match.participants || [];
  if (!colours?.markOf || !colours.COLORS) return null;
  const size = colours.COLORS.length;
  const taken = new Set();
  return parts.map((p, i) => {
    const at = markOfBot(p.bot) ?? p.seat ?? i;
    let hue = at % size;
    for (let k = 0; k < size && taken.has(hue); k += 1) hue = (hue + 1) % size;
    taken.add(hue);
    return { hue, label: colours.LABELS?.[at] ?? String(at + 1) };
  });
}

/** A seat's mark at ``pane``'s table (``marksOf``), or null. */
function seatMark(match, seat) {
  const marks = marksOf(match);
  return marks && colours?.markOf ? colours.markOf(marks, seat) : null;
}

/** A two-seat pane's names: each bot's letter and colour of the event (its underline). */
function headMarks(pane, parts) {
  [pane.n0, pane.n1].forEach((node, i) => {
    const mark = parts[i] ? seatMark(pane.match, i) : null;
    if (!mark) return;
    node.prepend(el("span", "tag", mark.label), " ");
    node.style.borderBottomColor = mark.color;
    node.style.borderBottomStyle = mark.dotted ? "dotted" : "solid";
    node.querySelector(".tag").style.color = mark.color;
  });
}

/** "round k of N" (N when the format knows it). */
function roundLabel(round) {
  const total = state.show?.rounds?.total;
  return `round ${round}${total ? ` of ${total}` : ""}`;
}

/** An elimination match's stage by its bracket round's name ("Final", "Semi-final"…), else "". */
function stageOf(match) {
  if (!state.show?.elimination || !match.round) return "";
  const rnd = state.show.bracket?.rounds?.find((r) => r.round === match.round);
  return rnd?.name || "";
}

/** A match of more seats: one bar per seat (its letter, name, and score once over) in its
 * bot's colour and dotted pattern (``markOfBot``: the same on every pane and in the
 * standings); hidden for two seats. */
function seatBars(list, parts, names, done, matchId) {
  list.hidden = !parts.length;
  const match = { participants: parts };
  const placed = state.show?.placings?.[matchId];
  const key = JSON.stringify([parts.map((p) => [p.bot, p.score]), names, done, placed ?? null, state.standings.length]);
  if (list.dataset.key === key) return; // unchanged: the names keep their fitted size
  list.dataset.key = key;
  list.replaceChildren(...parts.map((p, i) => {
    const seat = p.seat ?? i;
    const mark = seatMark(match, i);
    const li = el("li", mark?.dotted ? "fseat dotted" : "fseat");
    li.dataset.seat = String(seat);
    li.dataset.bot = String(p.bot);
    li.style.color = mark?.color ?? "";
    li.append(el("span", "tag", mark?.label ?? String(seat + 1)), el("span", "name", names[i] ?? p.name), el("span", "fscore", done ? placing(placed?.[p.bot]) : ""));
    return li;
  }));
  if (!list.isConnected || list.clientWidth <= 0) list.dataset.key = ""; // fitted once shown
  else for (const name of list.querySelectorAll(".name")) fitText(name, 1.2 * parseFloat(list.closest(".pane")?.dataset.legend || "1"), 1);
}

/** A finished table's seat in the event's points: "1st · 1 pt", from ``show.placings``
 *  (the format's), else its score's rank. */
function placing(row) {
  if (!row) return ""; // until screen.json brings the table's placings
  const [place, points] = row;
  const pts = Number.isInteger(points) ? String(points) : points.toFixed(2).replace(/0$/, "");
  return `${ordinal(place)} · ${pts} pt${points === 1 ? "" : "s"}`;
}

function ordinal(k) {
  return `${k}${k % 10 === 1 && k % 100 !== 11 ? "st" : k % 10 === 2 && k % 100 !== 12 ? "nd" : k % 10 === 3 && k % 100 !== 13 ? "rd" : "th"}`;
}

/** The pane that stands out, or null: the final of a bracket, the last live match of a round
 *  whose other matches are over, or the one closest score among live matches with scores. */
function heroOf(list) {
  const live = list.filter((t) => !t.ended);
  if (list.length < 2 || list.length > 6 || !live.length) return null;
  const total = state.show?.rounds?.total;
  if (state.show?.elimination && total) {
    const final = live.find((t) => t.match.round === total);
    if (final) return final;
  }
  if (live.length === 1 && list.some((t) => t.ended && t.match.round === live[0].match.round)) return live[0];
  const gaps = live
    .map((t) => ({ t, s: (t.match.participants || []).map((p) => p.score) }))
    .filter(({ s }) => s.length === 2 && s.every((x) => typeof x === "number"))
    .map(({ t, s }) => ({ t, gap: Math.abs(s[0] - s[1]) }))
    .sort((a, b) => a.gap - b.gap);
  if (gaps.length >= 2 && gaps[0].gap < gaps[1].gap) return gaps[0].t;
  return null;
}

/** Puts the event's running matches on the wall: a free slot, else a finished pane's slot;
 *  more than it holds, a page of them at a time (``fillPages``). */
function fillWall() {
  pruneStandby();
  const live = [...state.live.values()].filter((m) => m.status === "running").sort((a, b) => a.id - b.id);
  if (live.length > maxPanes()) return fillPages(live, maxPanes());
  rotation.pages = 1;
  rotation.text = "";
  const running = live.filter((m) => !panes.has(m.id));
  const newest = Math.max(0, ...running.map((m) => m.round ?? 0));
  for (const [id, t] of [...panes]) { // a new round on the stage: the last one's panes go
    if (t.ended && (t.match.round ?? 0) < newest) {
      t.stop();
      panes.delete(id);
    }
  }
  const most = maxPanes();
  for (const m of running) {
    if (panes.size >= most || (panes.size && [...panes.values()].some((t) => t.ended && Date.now() - t.endedAt > RESULT_KEEP_MS))) {
      const old = [...panes.values()].filter((t) => t.ended).sort((a, b) => a.endedAt - b.endedAt)[0];
      if (!old && panes.size >= most) break;
      if (old) replacePane(old, m);
      else addPane(m);
    } else addPane(m);
  }
}

/** More live matches than the wall holds: the page of them ``rotation`` says, the next page
 *  every ``ROTATE_MS``, and the header says so ("tables 1–4 of 6 · 5–6 in 9 s"). */
function fillPages(live, most) {
  const now = Date.now();
  rotation.pages = Math.ceil(live.length / most);
  if (!rotation.until) rotation.until = now + ROTATE_MS;
  else if (now >= rotation.until) {
    rotation.page += 1;
    rotation.until = now + ROTATE_MS;
  }
  if (rotation.page >= rotation.pages) rotation.page = 0;
  const shown = live.slice(rotation.page * most, (rotation.page + 1) * most);
  const ids = new Set(shown.map((m) => m.id));
  const turned = [...panes.keys()].some((id) => !ids.has(id));
  for (const [id, t] of [...panes]) {
    if (!ids.has(id)) { // off the page: it keeps following its match, detached
      panes.delete(id);
      if (t.ended || standby.size >= MAX_STANDBY) t.stop();
      else toStandby(t);
    }
  }
  for (const m of shown) if (!panes.has(m.id)) addPane(m);
  // the next pages' matches followed already, so that their first page shows them live
  for (const m of live) {
    if (standby.size >= MAX_STANDBY) break;
    if (!panes.has(m.id) && !standby.has(m.id)) {
      const t = new Pane(m);
      toStandby(t);
      t.start();
    }
  }
  if (turned) {
    const record = { at: now, page: rotation.page, panes: null };
    pageTurns.push(record);
    requestAnimationFrame(() => { // the turn each pane shows at the new page's first draw
      record.drawnAt = Date.now();
      record.panes = shown.map((m) => ({ id: m.id, turns: panes.get(m.id)?.turns.length ?? 0 }));
    });
  }
  const tables = (live[0].participants || []).length > 2;
  const first = rotation.page * most + 1;
  const next = (rotation.page + 1) % rotation.pages;
  const nextLast = Math.min(live.length, (next + 1) * most);
  const left = Math.max(0, Math.ceil((rotation.until - now) / 1000));
  rotation.text = `${span(tables, first, first + shown.length - 1)} of ${live.length} · ${span(null, next * most + 1, nextLast)} in ${left} s`;
}

/** A page of panes in words: "tables 1–4", "table 5" (one is never a range "5–5"); without
 *  ``tables`` (null) the numbers alone. */
function span(tables, first, last) {
  const numbers = first === last ? `${first}` : `${first}–${last}`;
  if (tables === null) return numbers;
  const word = tables ? "table" : "match";
  return first === last ? `${word} ${numbers}` : `${tables ? "tables" : "matches"} ${numbers}`;
}

function toStandby(pane) {
  pane.standby = true;
  pane.root.remove();
  standby.set(pane.id, pane);
}

/** ``match``'s pane: the one following it off the page if there is one, else a new one. */
function paneFor(match) {
  const kept = standby.get(match.id);
  if (kept) {
    standby.delete(match.id);
    kept.standby = false;
    return kept;
  }
  const pane = new Pane(match);
  pane.start();
  return pane;
}

/** Panes following matches no longer live, nor wanted: stopped. */
function pruneStandby() {
  for (const [id, t] of [...standby]) {
    if (t.ended || !state.live.has(id) || panes.has(id)) {
      standby.delete(id);
      if (!panes.has(id) || panes.get(id) !== t) t.stop();
    }
  }
}

function addPane(match) {
  const pane = paneFor(match);
  panes.set(match.id, pane);
  $("wall").append(pane.root);
}

function replacePane(old, match) {
  const pane = paneFor(match);
  old.root.replaceWith(pane.root);
  old.stop();
  const order = [...panes.entries()].map(([id, t]) => (id === old.id ? [match.id, pane] : [id, t]));
  panes.clear();
  for (const [id, t] of order) panes.set(id, t);
}

/** Removes the finished panes of rounds up to ``round`` (summed up). */
function clearRound(round) {
  for (const [id, t] of [...panes]) {
    if (t.ended && (round === null || (t.match.round ?? 0) <= round)) {
      t.stop();
      panes.delete(id);
    }
  }
}

// -- the summary, the bracket and the podium ---------------------------------------------------

function sideName(side) {
  return side ? side.name : "—";
}

function renderResults(results) {
  const list = $("results");
  list.replaceChildren();
  for (const m of results) {
    const names = namesOf(m);
    const parts = m.participants || [];
    const li = el("li");
    if (parts.length === 2) {
      const [a, b] = parts;
      const cls = (p) => (p.result === "win" ? "won" : p.result === "loss" ? "lost" : "");
      li.append(el("span", `a ${cls(a)}`, names[0]), el("span", "sc", `${a.score ?? "–"} – ${b.score ?? "–"}`), el("span", `b ${cls(b)}`, names[1]));
    } else {
      li.append(el("span", "a", `${names.length}-way`), el("span", "sc", ""), el("span", "b", resultText(m, null, names) || m.status));
    }
    list.append(li);
  }
}

function renderBracket(bracket) {
  const box = $("bracket");
  box.replaceChildren();
  box.hidden = !bracket;
  $("summary").querySelector(".bs-summary-body").classList.toggle("nobracket", !bracket);
  if (!bracket) return;
  for (const rnd of bracket.rounds) {
    const col = el("div", "rnd");
    const slots = el("div", "slots"); // spaced alike in every round: a slot sits between its two feeders
    col.append(el("h3", "", rnd.name || `Round ${rnd.round}`), slots);
    for (const slot of rnd.slots) {
      const div = el("div", `slot${slot.series?.status === "running" ? " live" : ""}`);
      [slot.a, slot.b].forEach((side, i) => {
        const row = el("div", `side${side && slot.winner === side.bot ? " winner" : ""}`);
        const score = slot.series ? slot.series.score[i] : "";
        row.append(el("span", "nm", sideName(side)), el("span", "sc", slot.bye ? "" : score));
        div.append(row);
      });
      // how a level series went, in words on the wall: a decider, or the seed after them
      const note = slot.decided_by === "seed" ? "on seed" : slot.decided_by === "decider" ? "won a decider"
        : !slot.winner && slot.why ? "decider playing" : "";
      if (note) div.append(el("div", `note${slot.decided_by === "seed" ? " seed" : ""}`, note));
      slots.append(div);
    }
    box.append(col);
  }
  // a note makes its slot a line taller: every other slot keeps that line free, so that a
  // later round's slot stays level with the middle of its two feeders
  if (box.querySelector(".slot .note")) {
    for (const slot of box.querySelectorAll(".slot:not(:has(.note))")) slot.append(el("div", "note-room", "\u00a0"));
  }
}

/** The pairings settled on seed, said in full (``show.ties``): under the results and the
 *  podium, so that nobody reads a seed's win as one earned in play. */
function renderTies(id, ties) {
  const box = $(id);
  box.replaceChildren();
  box.hidden = !ties?.length;
  if (!ties?.length) return;
  box.append(el("span", "lead", `Settled on seed (every game drawn): `));
  box.append(el("span", "", ties.join(" · ")));
}

function renderPodium(podium) {
  const steps = $("steps");
  steps.replaceChildren();
  // the steps by place: a shared place ("joint 3rd": a knockout's two semi-final losers) is
  // one step with every name on it
  const byPlace = new Map();
  podium.top.forEach((row, i) => {
    const place = row.place ?? i + 1;
    if (place <= 3) byPlace.set(place, [...(byPlace.get(place) || []), row]);
  });
  const places = [...byPlace.keys()].sort((a, b) => a - b).slice(0, 3);
  const order = [places[1], places[0], places[2]].filter((p) => p !== undefined); // second, first, third
  for (const place of order) {
    const rows = byPlace.get(place);
    const row = rows[0];
    const height = places.indexOf(place) + 1;
    const step = el("div", `bs-step p${height}${rows.length > 1 ? " joint" : ""}`);
    const what = rows.length > 1 ? row.placing
      : state.show?.elimination ? (place === 1 ? "champion" : row.reached ? `reached round ${row.reached}` : "")
      : `${Number.isInteger(row.points) ? row.points : row.points.toFixed(1)} pts`;
    const who = el("div", "who");
    rows.forEach((r) => who.append(el("span", "", r.name)));
    step.append(who, el("div", "what", what), el("div", "block", place));
    steps.append(step);
  }
  const tall = portrait();
  for (const who of steps.querySelectorAll(".who")) { // the names whole: smaller, then wrapped
    const first = who.parentElement.classList.contains("p1");
    fitText(who, tall ? (first ? 1.3 : 1.1) : first ? 2.2 : 1.6, 1);
  }
  renderTies("podium-ties", state.show?.ties);
  const final = podium.final;
  $("final").hidden = !final;
  if (final) {
    const slot = state.show?.bracket?.rounds?.at(-1)?.slots?.at(-1);
    const how = slot?.why || resultText(final.match, null, namesOf(final.match)) || final.match.status;
    const what = state.show?.elimination ? "The final" : "The last match";
    $("final-result").textContent = `${what}, ${namesOf(final.match).join(" vs ")}: ${how}`;
    $("final-link").previousSibling.textContent = state.show?.elimination ? "Watch the final again: " : "Watch it again: ";
    const link = $("final-link");
    link.href = final.url;
    link.textContent = final.url;
    $("final-qr").innerHTML = final.qr; // server-made SVG (segno), no script
  }
}

// -- the side: standings and lists ----------------------------------------------------------

function renderStandings() {
  const table = $("standings");
  table.replaceChildren();
  for (const row of state.standings) {
    const div = el("div", "bs-row");
    div.setAttribute("role", "row");
    const before = state.points.get(row.bot);
    if (before !== undefined && before !== row.points) div.classList.add("changed");
    state.points.set(row.bot, row.points);
    const points = Number.isInteger(row.points) ? row.points : row.points.toFixed(1);
    const name = el("span", "nm", row.name);
    const mark = botMark(row.bot);
    if (mark) { // the bot's letter and colour on every pane
      const tag = el("span", "tag", mark.label);
      tag.style.color = mark.color;
      div.dataset.bot = String(row.bot);
      name.prepend(tag, " ");
    }
    const record = state.show?.many ? placings(row) : `${row.wins}–${row.draws}–${row.losses}`;
    // a shared place: "=5" in the narrow column, "joint 5th" said to a screen reader
    const rank = el("span", "rk", row.games === 0 ? "–" : row.joint ? `=${row.place}` : row.place ?? row.rank);
    if (row.joint && row.games) rank.setAttribute("aria-label", row.placing);
    div.append(rank, name, el("span", "pt", points), el("span", "wdl", record));
    table.append(div);
  }

  fitStandings();
  document.body.dataset.standingsGames = String(state.standings.reduce((s, r) => s + r.games, 0));
}

/** A free-for-all's record: its placings ("1st×2 2nd×1"), from ``show.places``
 *  (W-D-L says little in a six-way game). */
function placings(row) {
  const places = state.show?.places?.[row.bot] || {};
  const ord = (k) => `${k}${k % 10 === 1 && k !== 11 ? "st" : k % 10 === 2 && k !== 12 ? "nd" : k % 10 === 3 && k !== 13 ? "rd" : "th"}`;
  const shown = Object.keys(places).map(Number).sort((a, b) => a - b).map((k) => `${ord(k)}×${places[k]}`);
  return shown.length ? shown.join(" ") : `${row.games} played`;
}

/** Every row visible, never under the root size (24 px at 1080p): the rows share the box's
 *  height, down to a tight row height; past that the table takes another column (the side
 *  widens), and past what the width allows it shows a page of rows at a time, the next
 *  every ``ROTATE_MS`` (the legend says which: "1–34 of 60"). */
const standingsPage = { at: 0, until: 0 };
function fitStandings() {
  const table = $("standings");
  const rows = [...table.children];
  const n = Math.max(1, rows.length);
  document.body.dataset.wideSide = n > 16 ? "1" : "";
  const em = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
  const height = table.clientHeight;
  const most = Math.max(1, Math.floor(table.clientWidth / (em * 11)));
  let chosen = null;
  for (const rowEm of [1.7, 1.55, 1.4, 1.3, 1.2]) {
    const perCol = Math.max(1, Math.floor(height / (em * rowEm)));
    const cols = Math.ceil(n / perCol);
    if (cols <= most) {
      chosen = { rowEm, cols, rows: Math.ceil(n / cols), page: n };
      break;
    }
  }
  if (!chosen) {
    const perCol = Math.max(1, Math.floor(height / (em * 1.2)));
    chosen = { rowEm: 1.2, cols: most, rows: perCol, page: most * perCol };
  }
  const now = Date.now();
  if (chosen.page >= n) standingsPage.at = 0;
  else if (now >= standingsPage.until) {
    standingsPage.at = standingsPage.until ? (standingsPage.at + chosen.page < n ? standingsPage.at + chosen.page : 0) : 0;
    standingsPage.until = now + ROTATE_MS;
  }
  rows.forEach((row, i) => { row.hidden = i < standingsPage.at || i >= standingsPage.at + chosen.page; });
  const shown = Math.min(n, standingsPage.at + chosen.page);
  table.dataset.page = chosen.page < n ? `${standingsPage.at + 1}–${shown} of ${n}` : "";
  table.style.gridTemplateColumns = `repeat(${chosen.cols}, minmax(0, 1fr))`;
  table.style.gridTemplateRows = `repeat(${chosen.rows}, minmax(0, ${chosen.rowEm}em))`;
  table.dataset.cols = String(chosen.cols);
  const joint = state.standings.some((row) => row.joint && row.games) ? " · = joint place" : "";
  const legend = `${state.show?.many ? "pts · placings" : "pts · W–D–L"}${joint}`;
  $("standings-legend").textContent = table.dataset.page ? `${table.dataset.page} · ${legend}` : legend;
}

function seatsLabel(names) {
  return names.length > 2 ? `${names.length}-way: ${names.join(", ")}` : names.join(" vs ");
}

/** "Round k starts in N s" while the event's round gap runs (``show.rounds.next_at``). */
function nextRoundText() {
  const r = state.show?.rounds;
  if (!r?.next_at || state.event?.status !== "running") return "";
  const left = Math.max(0, Math.ceil((Date.parse(r.next_at) - Date.now()) / 1000));
  return `${roundLabel(r.current + 1).replace(/^r/, "R")} starts ${left ? `in ${left} s` : "now"}`;
}

function renderLists() {
  const list = $("upcoming");
  list.replaceChildren();
  const live = [...state.live.values()].filter((m) => m.status === "running");
  const items = [];
  for (const m of live) items.push(["LIVE", seatsLabel(namesOf(m))]);
  for (const m of state.upcoming) items.push(["", seatsLabel(namesOf(m))]);
  const next = nextRoundText();
  const fit = next ? 3 : 4; // four lines fit (the next round's countdown takes one)
  const room = items.length > fit ? fit - 1 : fit; // and "+ N more" one
  for (const [tag, text] of items.slice(0, room)) {
    const li = el("li");
    if (tag) li.append(el("span", "tag", tag));
    li.append(document.createTextNode(text));
    list.append(li);
  }
  if (items.length > room) list.append(el("li", "muted", `+ ${items.length - room} more`));
  if (next) list.prepend(el("li", "next-round", next));
  if (!items.length && !next) list.append(el("li", "muted", OVER.has(state.event?.status) ? "All matches played." : "Nothing scheduled."));
  const e = state.event;
  if (e) {
    $("event-name").textContent = e.name;
    $("event-progress").textContent = `${e.matches_done} / ${e.matches_total} matches · ${STATUS_WORDS[e.status] ?? (e.status_label || e.status).toLowerCase()}`;
  }
  const r = state.show?.rounds;
  const left = r?.current ? roundLeftText() : "";
  $("event-round").textContent = r?.current ? roundLabel(r.current) : "";
  $("round-left").textContent = left ? `· ${left}` : "";
  $("round-left").hidden = !left;
  fitStandings();
}

/** The live round's countdown from its estimate (``show.rounds.estimate``, the game's turn
 *  limit, the pace and past rounds: competition/events/estimate.py): "about 40 s left". */
function roundLeftText() {
  const r = state.show?.rounds;
  if (!r?.estimate || !r.started_at || r.next_at || state.event?.status !== "running") return "";
  if (r.completed !== null && r.completed >= r.current) return "";
  const left = r.estimate.seconds - (Date.now() - Date.parse(r.started_at)) / 1000;
  if (left <= 5) return "ending soon";
  return left < 90 ? `about ${Math.ceil(left / 5) * 5} s left` : `about ${Math.round(left / 60)} min left`;
}

// -- what the stage shows ------------------------------------------------------------------

function modeNow() {
  if (state.event?.status === "finished" && state.show?.podium) return "podium";
  if ([...panes.values()].some((t) => !t.ended)) return "wall"; // the action first
  if (Date.now() < state.summaryUntil) return "summary";
  if (panes.size) return "wall";
  return state.show?.results?.length ? "summary" : "wall";
}

let holdTimer = null;
/** What the stage showed, in order (for whoever checks the screen: tests, an organiser). */
const journal = [];
window.arenaScreen = { journal, pageTurns, panes, standby };

function render() {
  fillWall();
  const mode = modeNow();
  if (document.body.dataset.mode !== mode || !journal.length) {
    journal.push({ mode, round: mode === "summary" ? state.summaryRound ?? state.show?.rounds?.completed : null, at: Date.now() });
  }
  document.body.dataset.mode = mode;
  $("wall").hidden = mode !== "wall";
  $("summary").hidden = mode !== "summary";
  $("podium").hidden = mode !== "podium";
  const list = [...panes.values()];
  const wall = $("wall");
  const count = list.length;
  const hero = portrait() ? null : heroOf(list);
  wall.dataset.count = String(count);
  wall.dataset.hero = hero ? "1" : "0";
  layoutWall(wall, list, hero);
  for (const t of list) { // a board laid out anew is drawn at once, at its new size
    if (t.root.classList.contains("many") && layoutBoard(t)) t.draw();
  }
  $("wall-pages").textContent = rotation.text;
  $("wall-pages").hidden = !rotation.text;
  const lead = hero || list.find((t) => !t.ended) || list[0];
  for (const t of list) {
    t.root.classList.toggle("hero", t === hero);
    t.root.classList.toggle("lead", t === lead);
  }
  $("wall-waiting").hidden = count > 0;
  $("wall-waiting").textContent = state.event?.status === "finished" ? "The event is over."
    : state.event?.status === "revealing" ? "Play is over: the results are being revealed." : "Waiting for the next match…";
  document.body.dataset.panes = String(count);
  document.body.dataset.hero = hero ? String(hero.id) : "";
  if (lead) { // the match the wall leads with; once the wall is empty, the last one
    document.body.dataset.featured = String(lead.id);
    document.body.dataset.featuredStatus = lead.match.status;
    document.body.dataset.featuredTurns = String(lead.turns.length);
  }
  if (mode === "summary" && state.show) {
    const r = state.summaryRound ?? state.show.rounds.completed;
    const total = state.show.rounds.total;
    $("summary-title").textContent = r ? `Round ${r}${total ? ` of ${total}` : ""}: results` : "Results";
  }
  if (mode === "podium") renderPodium(state.show.podium);
  requestAnimationFrame(() => { for (const t of list) t.draw(); });
}

/** The wall's grid: every pane it draws fills a slot of one size, none left empty. Without a
 *  pane that stands out: 1, 2 or 3 columns (by how many), the last row's panes centred (a grid
 *  of half columns, each pane two of them wide). With one: it spans the rows of a column of
 *  two thirds (2 to 4 panes), or two rows and two columns (5 and 6). */
function layoutWall(wall, list, hero) {
  const n = list.length;
  for (const t of list) t.root.style.gridColumn = t.root.style.gridRow = "";
  if (hero && n <= 4) {
    wall.style.gridTemplateColumns = "minmax(0, 2fr) minmax(0, 1fr)";
    wall.style.gridTemplateRows = `repeat(${n - 1}, minmax(0, 1fr))`;
    hero.root.style.gridColumn = "1";
    hero.root.style.gridRow = `1 / span ${n - 1}`;
    return;
  }
  if (hero) {
    const cols = n === 5 ? 4 : 3;
    wall.style.gridTemplateColumns = `repeat(${cols}, minmax(0, 1fr))`;
    wall.style.gridTemplateRows = `repeat(${n === 5 ? 2 : 3}, minmax(0, 1fr))`;
    hero.root.style.gridColumn = "1 / span 2";
    hero.root.style.gridRow = "1 / span 2";
    return;
  }
  const cols = n <= 1 || (portrait() && list.some((t) => t.root.classList.contains("many"))) ? 1 : n <= 4 ? 2 : 3;
  const rows = Math.max(1, Math.ceil(n / cols));
  wall.style.gridTemplateColumns = n ? `repeat(${2 * cols}, minmax(0, 1fr))` : "minmax(0, 1fr)"; // none: the waiting line
  wall.style.gridTemplateRows = `repeat(${rows}, minmax(0, 1fr))`;
  const short = n - (rows - 1) * cols; // panes on the last row
  list.forEach((t, i) => {
    const first = i === (rows - 1) * cols && short < cols;
    t.root.style.gridColumn = first ? `${cols - short + 1} / span 2` : "span 2";
  });
}

/** A pane of many seats: its board as large as the pane holds (the board's aspect kept),
 *  the seats' legend beside it (a wide pane) or below it (a tall one), in the room left;
 *  true when it changed. */
function layoutBoard(t) {
  const em = rem();
  const style = getComputedStyle(t.root);
  const w = t.root.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const h = t.root.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  if (w <= 0 || h <= 0) return false;
  const first = t.frameAt(0);
  const aspect = first?.width && first?.height ? first.width / first.height : 1;
  const foot = t.root.querySelector(".pane-foot");
  const key = [w, h, aspect, t.seats.dataset.key, t.why.textContent, foot.offsetHeight, t.root.classList.contains("hero")].join("|");
  if (t.layoutKey === key) return false; // laid out already
  t.layoutKey = key;
  const gap = 0.6 * em;
  // the board's height either way: beside a column of at least 8.5 em, or above the legend
  // (its height as laid out below the board: measured)
  const side = Math.min(w * 0.5, Math.max(8.5 * em, w - h * aspect - gap));
  const besideH = Math.max(0, Math.min((w - side - gap) / aspect, h));
  t.root.classList.add("below");
  t.root.classList.remove("beside");
  t.root.style.setProperty("--legend", "1");
  const parts = [t.root.querySelector(".pane-head"), t.seats, foot].filter((e) => e && !e.hidden);
  const measure = () => parts.reduce((sum, e) => sum + e.offsetHeight + 0.15 * em, 0);
  let legend = measure();
  // a tall pane whose board its width bounds: the legend takes the height left, in larger type
  const spare = h - legend - gap - w / aspect;
  let scale = 1;
  if (spare > 0 && besideH < w / aspect) {
    scale = Math.min(2, (legend + spare) / legend);
    t.root.style.setProperty("--legend", scale.toFixed(3));
    for (const name of t.seats.querySelectorAll(".name")) fitText(name, 1.2 * scale, 1);
    legend = measure();
  }
  const belowH = Math.max(0, Math.min(w / aspect, h - legend - gap));
  const wide = besideH >= belowH;
  if (wide) {
    scale = 1;
    t.root.style.setProperty("--legend", "1");
  }
  t.root.dataset.legend = scale.toFixed(3);
  t.root.classList.toggle("beside", wide);
  t.root.classList.toggle("below", !wide);
  // the stage is the board's own box (its aspect): what room is left goes to the legend
  const size = (bh) => {
    t.root.style.setProperty("--side", `${Math.floor(wide ? w - bh * aspect - gap : side)}px`);
    t.root.style.setProperty("--stage", `${bh}px`);
    t.stage.style.height = `${bh}px`;
    t.stage.style.width = `${Math.floor(bh * aspect)}px`;
  };
  const bh = Math.floor(wide ? besideH : belowH);
  size(bh);
  for (const name of t.seats.querySelectorAll(".name")) fitText(name, 1.2 * scale, 1); // at the new width
  // a legend taller than measured: below, the board gives up the height it lacks; beside,
  // the column widens (less wrapped) as the board narrows, a tenth at a time
  let over = t.root.scrollHeight - t.root.clientHeight;
  if (over > 0 && !wide) size(Math.max(0, bh - over));
  for (let k = 1; wide && over > 0 && k <= 5; k += 1) {
    size(Math.floor(bh * (1 - k / 10)));
    for (const name of t.seats.querySelectorAll(".name")) fitText(name, 1.2, 1);
    over = t.root.scrollHeight - t.root.clientHeight;
  }
  return true;
}

/** ``node``'s text at the largest size from ``max`` down to ``min`` (in rem) that fits its
 *  box on one line; at ``min``, it wraps instead of being cut. */
function fitText(node, max, min = 1) {
  node.style.whiteSpace = "nowrap";
  let size = max;
  node.style.fontSize = `${size}rem`;
  while (size > min && node.scrollWidth > node.clientWidth + 1) {
    size = Math.max(min, size - 0.05);
    node.style.fontSize = `${size}rem`;
  }
  if (node.scrollWidth > node.clientWidth + 1) {
    node.style.whiteSpace = "normal";
    node.style.overflowWrap = "anywhere";
  }
  node.dataset.fit = size.toFixed(2);
}

function applyShow(show) {
  const completed = show.rounds.completed;
  const first = state.show === null;
  state.show = show;
  renderResults(show.results);
  renderBracket(show.bracket);
  renderTies("summary-ties", show.ties);
  // a format of rounds sums each up; a ladder (no total: continuous) keeps its wall
  if (!first && completed !== null && completed !== state.summed && show.rounds.total !== null) {
    state.summaryRound = completed;
    state.summaryUntil = Date.now() + HOLD_MS;
    clearTimeout(holdTimer);
    holdTimer = setTimeout(() => { clearRound(completed); render(); }, HOLD_MS + 50);
  }
  if (first && completed !== null) clearRound(completed);
  state.summed = completed;
  document.body.dataset.roundCompleted = completed === null ? "" : String(completed);
}

/** ``snap`` on the page, and over it the starts and ends the websocket brought while it was
 *  read (``changes``): the server may have made it before them, and no table leaves the wall
 *  for a re-read that began before the table started. */
function applySnapshot(snap, changes = []) {
  state.event = snap.event;
  state.standings = snap.standings || [];
  state.live = new Map((snap.live || []).map((m) => [m.id, m]));
  for (const msg of changes) {
    if (msg.type === "match_started") state.live.set(msg.match.id, msg.match);
    else state.live.delete(msg.match.id);
  }
  state.upcoming = snap.upcoming || [];
  if (snap.show) applyShow(snap.show);
  renderStandings();
  renderLists();
  render();
}

let syncing = null;
let again = false;
/** The matches started and finished over the websocket while a re-read is in flight. */
let since = null;

/** Re-reads screen.json (one request at a time; a call during one makes one more after);
 *  ``trigger``, the start or end that asked for it, is laid over its answer too. */
async function resync(trigger = null) {
  if (syncing) {
    if (trigger) since.push(trigger);
    again = true;
    return;
  }
  const changes = trigger ? [trigger] : [];
  since = changes;
  syncing = (async () => {
    try {
      const response = await fetch(config.snapshot, { headers: { Accept: "application/json" } });
      if (response.ok) applySnapshot(await response.json(), changes);
    } catch { /* next time */ }
  })();
  await syncing;
  syncing = null;
  since = null;
  if (again) { again = false; resync(); }
}

function onEvent(msg) {
  if (msg.type === "snapshot") {
    resync(); // the websocket's snapshot has no `show`: read screen.json
  } else if (msg.type === "match_started") {
    state.live.set(msg.match.id, msg.match);
    state.upcoming = state.upcoming.filter((m) => m.id !== msg.match.id);
    renderLists();
    render();
    // (a re-read in flight may have read the list before this start: one more after it)
    if (syncing || state.event?.status !== "running" || state.show?.rounds?.current !== msg.match.round) resync(msg);
  } else if (msg.type === "match_finished") {
    state.live.delete(msg.match.id);
    panes.get(msg.match.id)?.onMessage({ type: "end", match: msg.match });
    resync(msg);
  } else if (msg.type === "bracket" && state.show) {
    state.show.bracket = msg.bracket; // the live bracket after each result
    renderBracket(msg.bracket);
  } else if (msg.type === "standings") {
    state.standings = msg.standings || [];
    renderStandings();
  }
}

async function main() {
  colours = await import(config.renderer);
  ({ createRenderer } = colours);
  await resync();
  const conn = $("conn-state");
  new Reconnecting(config.ws, {
    onOpen: () => { conn.textContent = ""; },
    onDown: () => { conn.textContent = "reconnecting…"; },
    onMessage: onEvent,
    maxDelay: 8000,
  }).start();
  setInterval(resync, RESYNC_MS);
  setInterval(() => {
    for (const t of panes.values()) {
      if (!t.ended && Date.now() - t.lastMessage > STALL_MS) {
        t.lastMessage = Date.now();
        t.stream?.reconnectNow();
        t.catchUp();
      }
    }
    if (Date.now() - started > RELOAD_AFTER_MS && !state.live.size) location.reload();
  }, 15000);
  setInterval(() => { if (state.show?.rounds?.next_at || state.show?.rounds?.estimate) renderLists(); }, 1000); // the countdowns
  setInterval(() => { if (rotation.pages > 1) render(); }, 1000); // the pages of live matches
  setInterval(() => { if ($("standings").dataset.page) fitStandings(); }, 1000); // of standings
  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => { fitStandings(); render(); });
  });
}

main().catch((err) => {
  $("conn-state").textContent = "the screen failed to start";
  console.error(err);
});
