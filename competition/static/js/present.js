// Presenter mode (competition/web/presenter.py): an organiser reveals an event's matches one
// by one from the keyboard. → plays the next match live-paced with its result hidden (the
// renderer is handed the match as if still running, without scores) until its last turn,
// then shows the result and posts the reveal (the public pages get it then); pressed while
// a match plays, → jumps to its end. ← goes back a match, R restarts it, Space pauses, + and
// − change the pace, ? shows the keys. The page reads staff-only data (the viewer JSON and
// the turns API, which show hidden matches to staff only).

import { isDone, namesOf } from "./common.js";

const config = JSON.parse(document.getElementById("present-config").textContent);
const $ = (id) => document.getElementById(id);
const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];

const state = {
  cursor: config.matches.filter((m) => m.revealed).length - 1, // the last one shown
  index: 0, // turns drawn of the current match
  playing: false,
  speed: 2, // SPEEDS index
  phase: "card", // card | loading | playing | done
  timer: null,
  token: 0, // bumps on each show(): a stale timer or fetch does nothing
};
const cache = new Map(); // match id -> {viewer, turns}
let renderer = null;
window.arenaPresenter = state; // for tests and the curious

async function load(id) {
  if (cache.has(id)) return cache.get(id);
  const viewer = await (await fetch(config.viewer.replace("{id}", id), { credentials: "same-origin" })).json();
  const turns = [];
  let since = 0;
  for (;;) {
    const url = `${config.turns.replace("{id}", id)}?since=${since}`;
    const page = await (await fetch(url, { credentials: "same-origin" })).json();
    turns.push(...page.results);
    if (!page.more) break;
    since = page.next_since;
  }
  const entry = { viewer, turns };
  cache.set(id, entry);
  return entry;
}

/** The match as the audience may see it before its end: running, no scores or results. */
function masked(match) {
  return {
    ...match,
    status: "running",
    reason: "",
    finished: null,
    participants: match.participants.map((p) => ({ ...p, score: null, result: "", cause: "" })),
  };
}

function frameAt(entry, i) {
  return i <= 0 ? entry.viewer.initial ?? entry.turns[0]?.frame : entry.turns[i - 1]?.frame;
}

function draw(entry) {
  const n = state.index;
  const final = n >= entry.turns.length && state.phase === "done";
  const match = final ? entry.viewer.match : masked(entry.viewer.match);
  const names = namesOf(entry.viewer.match);
  renderer.draw({
    frame: frameAt(entry, n),
    prev: n ? frameAt(entry, n - 1) : null,
    index: n,
    last: final ? n : n + 1,
    frameAt: (i) => frameAt(entry, i),
    turn: entry.turns[n - 1] || null,
    lastTurn: final ? entry.turns[n - 1] || null : null,
    match,
    names,
    final,
    live: !final,
    forward: true,
  });
  const current = config.matches[state.cursor];
  // between the names: where the match stands in the event (a knockout's round by its name,
  // else "Round 2"), never "final" for a result; the board says the result, once
  const where = [current.stage, current.game].filter(Boolean).join(" · ");
  $("p-status").textContent = final
    ? `${where ? `${where} · ` : ""}result`
    : `${where ? `${where} · ` : ""}turn ${n}${state.playing ? "" : " · paused"}`;
  // under the board (every renderer draws the result on it): what the result did to its
  // series once it settled it ("B won on seed after 1–1 and 3 drawn deciders")
  $("p-foot").textContent = final ? current.after || "" : "";
}

function card(title, sub = "") {
  clearTimeout(state.timer);
  state.token += 1;
  state.phase = "card";
  state.playing = false;
  $("present-card").hidden = false;
  $("card-title").textContent = title;
  $("card-sub").textContent = sub;
  $("p-name0").textContent = $("p-name1").textContent = $("p-status").textContent = "";
  $("p-foot").textContent = "";
  list();
}

function list() {
  const ol = $("present-list");
  ol.replaceChildren();
  config.matches.forEach((m, i) => {
    if (i > state.cursor) return; // nothing of what is still to come (pairings would tell)
    const li = document.createElement("li");
    li.dataset.match = String(m.id);
    if (i === state.cursor) li.classList.add("current");
    const who = document.createElement("span");
    who.textContent = m.names.join(" vs ");
    const res = document.createElement("span");
    res.className = "res";
    const entry = cache.get(m.id);
    res.textContent = m.revealed && entry ? shortResult(entry.viewer.match) : m.revealed ? "revealed" : "…";
    li.append(who, res);
    ol.append(li);
  });
  const left = config.matches.filter((m) => !m.revealed).length;
  $("present-left").textContent = left ? `${left} match${left === 1 ? "" : "es"} still hidden` : "every match revealed";
  $("present-progress").textContent = `match ${Math.max(0, state.cursor + 1)} of ${config.matches.length}`;
}

function shortResult(match) {
  const scores = match.participants.map((p) => p.score);
  return scores.every((s) => s !== null) ? scores.join(" – ") : match.status;
}

async function show(i) {
  clearTimeout(state.timer);
  const token = (state.token += 1);
  state.cursor = i;
  state.index = 0;
  state.phase = "loading";
  state.playing = false;
  const m = config.matches[i];
  list();
  const entry = await load(m.id);
  if (token !== state.token) return;
  $("present-card").hidden = true;
  $("p-name0").textContent = m.names[0] ?? "";
  $("p-name1").textContent = m.names.length > 2 ? `+ ${m.names.length - 1} more` : m.names[1] ?? "";
  state.phase = "playing";
  state.playing = true;
  draw(entry);
  schedule(entry, token);
}

function pace() {
  const m = config.matches[state.cursor];
  return (m.pace_ms || config.paceMs) / SPEEDS[state.speed];
}

function schedule(entry, token) {
  clearTimeout(state.timer);
  if (!state.playing) return;
  state.timer = setTimeout(() => {
    if (token !== state.token) return;
    if (state.index < entry.turns.length) {
      state.index += 1;
      draw(entry);
      schedule(entry, token);
    } else {
      finish(entry);
    }
  }, pace());
}

async function finish(entry) {
  const m = config.matches[state.cursor];
  state.index = entry.turns.length;
  state.phase = "done";
  state.playing = false;
  draw(entry);
  if (!m.revealed && isDone(entry.viewer.match)) {
    const response = await fetch(config.reveal.replace("{id}", m.id), {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": config.csrf },
    });
    if (response.ok) m.revealed = true;
  }
  list();
  document.body.dataset.revealed = String(m.id); // for tests: this match's reveal was posted
}

function next() {
  const entry = cache.get(config.matches[state.cursor]?.id);
  if (state.phase === "playing" && entry) return finish(entry); // → again: straight to the result
  if (state.cursor + 1 < config.matches.length) return show(state.cursor + 1);
  card("Every match revealed", "← replays the previous ones");
  state.cursor = config.matches.length;
  list();
}

function back() {
  if (state.cursor - 1 >= 0) return show(state.cursor - 1);
  state.cursor = -1;
  card("Press → to reveal the first match");
}

function togglePause() {
  const entry = cache.get(config.matches[state.cursor]?.id);
  if (!entry || state.phase !== "playing") return;
  state.playing = !state.playing;
  draw(entry);
  if (state.playing) schedule(entry, state.token);
  else clearTimeout(state.timer);
}

function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const help = $("present-help");
  const key = event.key;
  if (key === "?" || key === "h" || key === "H") help.hidden = !help.hidden;
  else if (key === "Escape") help.hidden = true;
  else if (key === "ArrowRight" || key === "PageDown") next();
  else if (key === "ArrowLeft" || key === "PageUp") back();
  else if ((key === "r" || key === "R") && state.cursor >= 0 && state.cursor < config.matches.length) show(state.cursor);
  else if (key === " ") togglePause();
  else if (key === "+" || key === "=") state.speed = Math.min(SPEEDS.length - 1, state.speed + 1);
  else if (key === "-" || key === "_") state.speed = Math.max(0, state.speed - 1);
  else return;
  event.preventDefault();
  if (key !== "?" && key !== "h" && key !== "H") help.hidden = true; // it got in the way
}

async function main() {
  const module = await import(config.renderer);
  renderer = module.createRenderer($("present-canvas"), { names: [] });
  const revealed = state.cursor + 1;
  card(
    revealed ? `${revealed} of ${config.matches.length} revealed: press → for the next` : "Press → to reveal the first match",
    config.matches.length ? `${config.matches.length} match${config.matches.length === 1 ? "" : "es"} to present` : "No match has been played yet",
  );
  window.addEventListener("keydown", onKey);
  window.addEventListener("resize", () => {
    const entry = cache.get(config.matches[state.cursor]?.id);
    if (entry && state.phase !== "card") draw(entry);
  });
  document.body.dataset.ready = "1";
}

main();
