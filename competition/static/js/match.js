// The match page: the viewer, fed by the websocket (live) or the turns API (replay), and
// the input of any human seat the signed-in user plays.

import { Viewer } from "./viewer.js";
import { DebugLayer } from "./debug.js";
import { Reconnecting, fetchTurns } from "./ws.js";
import { isDone, namesOf } from "./common.js";

const config = JSON.parse(document.getElementById("viewer-config").textContent);
const root = document.getElementById("viewer");
const conn = document.getElementById("conn-state");

function setConn(text) {
  if (conn) conn.textContent = text;
}

async function main() {
  const module = await import(config.renderer);
  const canvas = document.getElementById("board");
  const renderer = module.createRenderer(canvas, { names: namesOf(config.match) });
  const debug = new DebugLayer({
    stage: document.getElementById("stage"),
    panel: document.getElementById("debug-panel"),
    names: namesOf(config.match),
  });
  const viewer = new Viewer(root, config, renderer, {
    onDraw: (view, r) => debug.draw(view, r),
  });
  const addTurns = viewer.addTurns.bind(viewer);
  viewer.addTurns = (list) => {
    for (const turn of list) debug.addTurn(turn); // before they are drawn
    return addTurns(list);
  };
  window.arenaDebug = debug;
  colourPlayers(module);
  const stats = { liveTurns: 0, snapshots: 0 };
  window.arenaViewer = viewer; // for tests and the curious
  window.arenaStats = stats;

  let catchingUp = null;
  const catchUp = () => {
    if (catchingUp) return catchingUp;
    catchingUp = fetchTurns(config.turns, viewer.lastNumber())
      .then((turns) => viewer.addTurns(turns))
      .catch(() => { /* the next reconnect's snapshot covers it */ })
      .finally(() => { catchingUp = null; });
    return catchingUp;
  };

  const seats = [];
  window.arenaHumans = seats;
  let stream = null;
  let snapshot = null; // the snapshot being received (a big one comes in parts)
  if (isDone(config.match)) {
    setConn("loading…");
    try {
      viewer.addTurns(await fetchTurns(config.turns, 0));
      setConn("");
    } catch (err) {
      setConn("could not load the turns");
    }
    viewer.ready();
  } else {
    stream = new Reconnecting(config.ws, {
      onOpen: () => setConn(""),
      onDown: () => {
        setConn("reconnecting…");
        catchUp();
      },
      onMessage: (msg) => {
        if (msg.type === "snapshot" || msg.type === "snapshot_part") {
          // the snapshot holds the last turns only (older ones come from the turns API); a
          // big one comes in parts, the next turns in each `snapshot_part`
          if (msg.type === "snapshot") {
            stats.snapshots += 1;
            viewer.setMatch(msg.match);
            snapshot = { match: msg.match, last: msg.last ?? 0, left: msg.parts ?? 1, gap: false };
          }
          if (!snapshot) return;
          snapshot.left -= 1;
          snapshot.gap = viewer.addTurns(msg.turns || []) || snapshot.gap;
          if (snapshot.left > 0) return;
          const { match, last, gap } = snapshot;
          snapshot = null;
          let loaded = Promise.resolve();
          // a gap before its turns, or turns left out as too big for a message
          if (gap || viewer.lastNumber() < last) {
            const loading = "loading earlier turns…";
            setConn(loading);
            loaded = catchUp().then(() => { if (conn?.textContent === loading) setConn(""); });
          }
          // a match over by the time the socket opened: done once its earlier turns are in
          if (isDone(match)) loaded.then(() => finish());
        } else if (msg.type === "turn") {
          stats.liveTurns += 1;
          if (viewer.addTurns([msg.turn])) catchUp();
        } else if (msg.type === "turn_ref") {
          catchUp(); // a turn too big for a message: the turns API has it
        } else if (msg.type === "debug") {
          debug.add(msg.number, msg.seat, { overlay: msg.overlay, note: msg.note });
        } else if (msg.type === "started") {
          viewer.setMatch(msg.match);
        } else if (msg.type === "end") {
          viewer.setMatch(msg.match);
          catchUp().then(() => finish());
        }
      },
    }).start();
    window.arenaStream = stream;
  }

  function finish() {
    if (stream) {
      stream.stop();
      stream = null;
    }
    setConn("");
    for (const seat of seats) seat.stop("The match is over.");
    document.body.dataset.matchDone = "1";
  }
  if (isDone(config.match)) document.body.dataset.matchDone = "1";

  if (config.human?.length && module.createInput) {
    const { HumanSeat } = await import("./human.js");
    for (const h of config.human) {
      seats.push(new HumanSeat({ ...h, viewer, renderer, module, canvas }).start());
    }
  }
}

/** The name bars in the renderer's seat colours (a game of more seats brings its colours, with its
 * letters and dotted patterns), so a bar, a trail and a standings row match. */
function colourPlayers(module) {
  if (!module.COLORS) return;
  for (const el of document.querySelectorAll(".player[data-seat]")) {
    const seat = Number(el.dataset.seat);
    el.style.color = module.COLORS[seat] ?? "";
    el.classList.toggle("dotted", Boolean(module.DOTTED?.[seat]));
    const tag = el.querySelector("[data-seat-tag]");
    if (tag && module.LABELS?.[seat]) tag.textContent = module.LABELS[seat];
  }
}

main().catch((err) => {
  setConn("the viewer failed to start");
  console.error(err);
});
