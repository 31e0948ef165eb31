// A human seat: the browser side of bots/transports/human.py over ws/play/<match>/<seat>/.
// The server sends the seat's native request; the game module's createInput() turns a
// click or a form into the native reply, sent back as {"type": "move", "seq", "move"}.

import { Reconnecting } from "./ws.js";

export class HumanSeat {
  constructor({ seat, ws, viewer, renderer, module, canvas }) {
    this.seat = seat;
    this.ws = ws;
    this.viewer = viewer;
    this.current = null;
    this.answered = 0;
    this.deadline = null;
    this.panel = document.getElementById("human-panel");
    this.title = document.getElementById("human-title");
    this.status = document.getElementById("human-status");
    const root = document.getElementById("human-input");
    // on a phone the input goes right under the board, not below the whole viewer
    const stage = document.getElementById("stage");
    if (this.panel && stage && window.matchMedia("(max-width: 1099px)").matches) {
      stage.insertAdjacentElement("afterend", this.panel);
    }
    if (this.panel && !document.getElementById("human-countdown")) {
      const countdown = document.createElement("p");
      countdown.id = "human-countdown";
      countdown.className = "countdown";
      this.panel.insertBefore(countdown, root);
    }
    this.input = module.createInput({
      root,
      canvas,
      renderer,
      seat,
      viewer,
      names: viewer.view().names,
      hint: (text) => this.say(text),
      send: (move) => this.send(move),
    });
  }

  start() {
    this.sock = new Reconnecting(this.ws, {
      onOpen: () => this.say("Connected. Waiting for your turn…"),
      onDown: () => this.say("Connection lost: reconnecting…"),
      onGiveUp: (code) => this.stop(code === 4403 ? "This seat is not yours to play, or the match is over." : "Disconnected."),
      onMessage: (msg) => this.onMessage(msg),
    }).start();
    this.clock = setInterval(() => this.tick(), 250);
    return this;
  }

  say(text) {
    if (this.status) this.status.textContent = text;
  }

  heading(text, yourMove = false) {
    if (this.title) this.title.textContent = text;
    this.viewer.yourMove = yourMove; // the turn panel says "your move" at the start position
    this.viewer.describeTurn();
  }

  onMessage(msg) {
    if (msg.type === "request") {
      if (msg.seq <= this.answered || msg.seq === this.current) return; // a repeat
      this.current = msg.seq;
      this.message = msg.message;
      // the time left as the server counted it when it (re)sent the request: no clock skew
      const left = typeof msg.remaining_ms === "number" ? msg.remaining_ms : msg.timeout_ms || 0;
      this.deadline = Date.now() + left;
      this.panel?.classList.remove("waiting");
      this.heading("Your move", true);
      this.viewer.goLive();
      this.input.request(msg.message);
      this.tick();
    } else if (msg.type === "sent") {
      this.say("Move sent. Waiting for the other side…");
    } else if (msg.type === "closed") {
      this.stop("The match is over.");
    } else if (msg.type === "error") {
      this.say(`Refused: ${msg.detail}`);
    }
  }

  send(move) {
    if (this.current === null) return false;
    const ok = this.sock.send(JSON.stringify({ type: "move", seq: this.current, move }));
    if (!ok) {
      this.say("Not connected: the move was not sent. Reconnecting…");
      return false;
    }
    this.answered = this.current;
    this.current = null;
    this.deadline = null;
    this.input.clear();
    this.panel?.classList.add("waiting");
    this.heading("Their move");
    return true;
  }

  tick() {
    const el = document.getElementById("human-countdown");
    if (!el) return;
    if (this.current === null || !this.deadline) {
      el.textContent = "";
      return;
    }
    const left = Math.max(0, Math.round((this.deadline - Date.now()) / 1000));
    el.textContent = `${left} s left`;
  }

  stop(text) {
    clearInterval(this.clock);
    this.sock?.stop();
    this.current = null;
    this.deadline = null;
    this.tick(); // no time left to show
    this.heading("Game over");
    this.input.clear();
    this.panel?.classList.add("waiting");
    if (text) this.say(text);
  }
}
