// The event page and the home page, live: they listen on the event's existing websocket
// (ws/events/<id>/, one per-process hub fan-out, no polling of the database) and apply
// its messages in place: a match started (the "Live" list), a match finished (the
// "Finished" table, the progress), new standings (the table's numbers and order), an
// elimination's bracket (redrawn whole). The home page's "live now" counts come from
// ws/home/ the same way.
import { Reconnecting } from "./ws.js";

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const child of children) node.append(child);
  return node;
}

function seats(match, withScores) {
  const parts = [];
  match.participants.forEach((p, i) => {
    if (i) parts.push(" ", el("span", { class: "muted" }, "vs"), " ");
    parts.push(el("span", { class: `seat${p.seat}` }, p.name));
    if (withScores && p.score !== null && p.score !== undefined) parts.push(" ", el("b", {}, String(p.score)));
  });
  return parts;
}

function liveItem(match) {
  return el("li", { "data-match": match.id }, el("a", { href: `/matches/${match.id}/` }, `#${match.id}`), " ", ...seats(match, false));
}

const labelsNode = document.getElementById("match-status-labels");
const STATUS_LABELS = labelsNode ? JSON.parse(labelsNode.textContent) : {};

function finishedRow(match) {
  return el("tr", { "data-match": match.id, class: "fresh" },
    el("td", {}, el("a", { href: `/matches/${match.id}/` }, `#${match.id}`)),
    el("td", {}, ...seats(match, true)),
    el("td", {}, el("span", { class: `status ${match.status}` }, STATUS_LABELS[match.status] || match.status),
      match.reason_text ? " " : "", match.reason_text ? el("span", { class: "muted" }, match.reason_text) : ""));
}

/** Points as the page prints them (``floatformat:"-1"``): 3, 2.5, never 2.9000000000000004. */
const pointsText = (x) => (Number.isInteger(x) ? String(x) : Number(x).toFixed(1));
const points = pointsText;

/** A bot with no game counted yet has no place (before play, or before any reveal). */
const unranked = (row) => row.games === 0;

function applyStandings(table, rows) {
  const body = table.tBodies[0];
  const byBot = new Map([...body.rows].map((tr) => [tr.dataset.bot, tr]));
  for (const row of rows) {
    const tr = byBot.get(String(row.bot));
    if (!tr) continue;
    tr.cells[0].textContent = unranked(row) ? "–" : row.joint ? row.placing : row.place ?? row.rank;
    const points = tr.querySelector("[data-points]");
    if (points) points.textContent = pointsText(row.points);
    const rating = tr.querySelector("[data-rating]");
    if (rating && row.rating) rating.textContent = Number(row.rating.ordinal).toFixed(2);
    const buchholz = tr.querySelector("[data-buchholz]");
    if (buchholz && row.buchholz !== undefined) buchholz.textContent = pointsText(row.buchholz);
    const reached = tr.querySelector("[data-reached]");
    if (reached && reached.textContent !== "champion") reached.textContent = row.reached ? `round ${row.reached}` : "";
    const n = tr.cells.length;  // W D L Games Owner are the last five cells
    tr.cells[n - 5].textContent = row.wins;
    tr.cells[n - 4].textContent = row.draws;
    tr.cells[n - 3].textContent = row.losses;
    tr.cells[n - 2].textContent = row.games;
    body.append(tr);  // in the new order
  }
}


function bracketSide(slot, side, score) {
  const node = el("div", { class: side && slot.winner === side.bot ? "side winner" : "side" });
  if (!side) {
    node.append(el("span", { class: "muted" }, slot.bye ? "bye" : "to be decided"));
    return node;
  }
  node.append(el("span", { class: "seed" }, String(side.seed ?? "")), " ", el("a", { href: `/bots/${side.bot}/` }, side.name));
  if (slot.series) node.append(" ", el("b", { class: "score" }, points(score)));
  return node;
}

function bracketSlot(round, slot) {
  const node = el("div", { class: slot.winner ? "bracket-slot decided" : "bracket-slot", "data-round": round, "data-index": slot.index },
    bracketSide(slot, slot.a, slot.series?.score[0]), bracketSide(slot, slot.b, slot.series?.score[1]));
  if (slot.why) node.append(el("p", { class: "why small muted" }, slot.why));
  else if (slot.series) {
    const why = el("p", { class: "why small muted" }, slot.series.status);
    for (const m of slot.series.matches) why.append(" ", el("a", { href: `/matches/${m.id}/` }, `#${m.id}`));
    node.append(why);
  }
  return node;
}

/** Redraw the bracket (and the champion line) from ``bracket_view`` JSON. */
export function drawBracket(bracket) {
  const root = $("bracket");
  if (!root || !bracket) return;
  root.replaceChildren(...bracket.rounds.map((rnd) =>
    el("section", { class: "bracket-round" }, el("h3", {}, rnd.name),
      el("div", { class: "bracket-slots" }, ...rnd.slots.map((slot) => bracketSlot(rnd.round, slot))))));
  const champion = $("champion"), c = bracket.champion;
  const crowned = c && document.querySelector(`#standings tr[data-bot="${c.bot}"] [data-reached]`);
  if (crowned) crowned.textContent = "champion";
  if (champion) {
    champion.hidden = !c;
    champion.replaceChildren(...(c ? ["Champion: ", el("a", { href: `/bots/${c.bot}/` }, c.name), " ", el("span", { class: "muted" }, `(seed ${c.seed})`)] : []));
  }
  scrollCue();
}

/** The bracket wider than its box (a phone): show the cue line, and fade the side that
 * has more to see. */
export function scrollCue() {
  const root = $("bracket"), wrap = $("bracket-wrap"), cue = $("bracket-cue");
  if (!root || !wrap || !cue) return;
  const overflow = root.scrollWidth - root.clientWidth > 1;
  cue.hidden = !overflow;
  wrap.classList.toggle("more-left", overflow && root.scrollLeft > 1);
  wrap.classList.toggle("more-right", overflow && root.scrollLeft + root.clientWidth < root.scrollWidth - 1);
}

/** The header line (``events.header.header``): status, round, matches played. */
function applyHeader(header) {
  const status = $("event-status"), round = $("event-round"), progress = $("event-progress");
  if (status) {
    status.textContent = header.status_label;
    status.className = `status ${header.status}`;
  }
  if (round) round.textContent = header.round_text;
  if (progress) progress.textContent = `${header.matches_done}/${header.matches_total}`;
}

/** The event page: ``root`` holds data-ws. */
export function liveEventPage(wsUrl) {
  const live = $("event-live"), finished = $("event-finished"), standings = $("standings");
  new Reconnecting(wsUrl, {
    onMessage: (msg) => {
      if (msg.type === "match_started") {
        if (!live.querySelector(`[data-match="${msg.match.id}"]`)) live.append(liveItem(msg.match));
        $("live-heading").hidden = false;
      } else if (msg.type === "match_finished") {
        live.querySelector(`[data-match="${msg.match.id}"]`)?.remove();
        $("live-heading").hidden = !live.children.length;
        // the progress comes exact with the standings' header (which may arrive first)
        if (!finished.querySelector(`[data-match="${msg.match.id}"]`)) finished.tBodies[0].prepend(finishedRow(msg.match));
        if ($("no-results")) $("no-results").hidden = true;
      } else if (msg.type === "standings") {
        if (standings) applyStandings(standings, msg.standings || []);
        if (msg.header) applyHeader(msg.header);
      } else if (msg.type === "bracket" || (msg.type === "snapshot" && msg.bracket)) {
        drawBracket(msg.bracket);
      }
    },
    maxDelay: 15000,
  }).start();
}

/** The home page: each listed event's progress, from its own event stream. */
export function liveHome() {
  for (const cell of document.querySelectorAll("[data-event-ws]")) {
    new Reconnecting(cell.dataset.eventWs, {
      onMessage: (msg) => {
        if (msg.type === "standings" && msg.header) {
          const status = cell.querySelector(".event-status"), h = msg.header;
          if (status) {
            status.textContent = h.status_label;
            status.className = `status ${h.status} event-status`;
          }
          const node = cell.querySelector(".progress");
          if (node) node.textContent = `${h.matches_done}/${h.matches_total}`;
        }
        else if (msg.type === "snapshot") {
          const e = msg.event, node = cell.querySelector(".progress");
          if (node && e) node.textContent = `${e.matches_done}/${e.matches_total}`;
        }
      },
      maxDelay: 30000,
    }).start();
  }
}

/** The home page's latest matches: a match that started or ended, at the top (in place of
 * its older row), the table kept to its length. */
function recentMatch(match) {
  const section = $("home-recent"), table = $("home-recent-table");
  if (!section || !table || !match) return;
  const body = table.tBodies[0];
  const keep = Math.max(body.rows.length, 8);
  body.querySelector(`[data-match="${match.id}"]`)?.remove();
  body.prepend(finishedRow(match));
  while (body.rows.length > keep) body.lastElementChild.remove();
  section.hidden = false;
}

/** The home page: each game's "live now" count, from the home stream (ws/home/: a
 * snapshot, then a game's count each time a match of it starts or ends, with the newest
 * running match: the "live" link opens it, never one that has finished). */
export function liveCounts(root) {
  const show = (game, running, watch) => {
    const card = root.querySelector(`[data-game="${CSS.escape(game)}"]`);
    const now = card?.querySelector(".live-now");
    if (!now || !Number.isInteger(running) || running < 0) return;
    now.querySelector(".live-count").textContent = String(running);
    now.hidden = running === 0;
    const link = now.querySelector(".watch-live");
    if (link && watch !== undefined) {
      link.href = watch ? `/matches/${watch}/` : `/matches/?game=${encodeURIComponent(game)}&status=running`;
      link.dataset.liveMatch = watch ? String(watch) : "";
    }
  };
  new Reconnecting(root.dataset.homeWs, {
    onMessage: (msg) => {
      if (msg.type === "running") {
        show(msg.game, msg.running, msg.watch);
        recentMatch(msg.match);
      }
      else if (msg.type === "snapshot") for (const [game, n] of Object.entries(msg.running || {})) show(game, n, msg.watch?.[game]);
    },
    maxDelay: 30000,
  }).start();
}

const config = document.getElementById("event-live-config");
if (config) liveEventPage(JSON.parse(config.textContent).ws);
if ($("bracket")) {
  scrollCue();
  $("bracket").addEventListener("scroll", scrollCue, { passive: true });
  window.addEventListener("resize", scrollCue);
}
if (document.querySelector("[data-event-ws]")) liveHome();
const home = document.querySelector("[data-home-ws]");
if (home) liveCounts(home);
