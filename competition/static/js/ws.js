// A websocket that reconnects by itself with exponential backoff and jitter.

export function wsUrl(path) {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  return scheme + location.host + path;
}

export class Reconnecting {
  /**
   * @param {string} path  e.g. "/ws/matches/3/"
   * @param {{onMessage: Function, onOpen?: Function, onDown?: Function, onGiveUp?: Function,
   *          minDelay?: number, maxDelay?: number, fatalCodes?: number[]}} handlers
   */
  constructor(path, handlers) {
    this.path = path;
    this.h = handlers;
    this.minDelay = handlers.minDelay ?? 500;
    this.maxDelay = handlers.maxDelay ?? 20000;
    this.fatal = new Set(handlers.fatalCodes ?? [4400, 4403, 4404]);
    this.attempts = 0;
    this.sock = null;
    this.timer = null;
    this.stopped = false;
    this.onOnline = () => { if (!this.isOpen()) this.reconnectNow(); };
    window.addEventListener("online", this.onOnline);
  }

  start() {
    this.stopped = false;
    this.connect();
    return this;
  }

  isOpen() {
    return this.sock && this.sock.readyState === WebSocket.OPEN;
  }

  connect() {
    clearTimeout(this.timer);
    if (this.stopped) return;
    let sock;
    try {
      sock = new WebSocket(wsUrl(this.path));
    } catch (err) {
      this.schedule();
      return;
    }
    this.sock = sock;
    sock.onopen = () => {
      this.openedAt = Date.now();
      this.h.onOpen?.();
    };
    sock.onmessage = (event) => {
      this.attempts = 0; // a working connection resets the backoff
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      this.h.onMessage(data);
    };
    sock.onclose = (event) => {
      if (this.sock !== sock) return;
      this.sock = null;
      if (this.stopped) return;
      if (this.fatal.has(event.code)) {
        this.stopped = true;
        this.h.onGiveUp?.(event.code);
        return;
      }
      this.h.onDown?.(event.code);
      this.schedule();
    };
    sock.onerror = () => { /* onclose follows */ };
  }

  schedule() {
    if (this.stopped) return;
    const base = Math.min(this.maxDelay, this.minDelay * 2 ** Math.min(this.attempts, 10));
    const delay = base * (0.75 + Math.random() * 0.5);
    this.attempts += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  reconnectNow() {
    if (this.stopped) return;
    if (this.sock) {
      const old = this.sock;
      this.sock = null;
      try { old.close(); } catch { /* already closed */ }
    }
    this.attempts = 0;
    this.connect();
  }

  send(text) {
    if (!this.isOpen()) return false;
    this.sock.send(text);
    return true;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    window.removeEventListener("online", this.onOnline);
    if (this.sock) {
      const old = this.sock;
      this.sock = null;
      try { old.close(); } catch { /* already closed */ }
    }
  }
}

/** Every turn after `since` from GET <turnsUrl>?since=N (follows the API's paging). */
export async function fetchTurns(turnsUrl, since) {
  const out = [];
  let cursor = since;
  for (let page = 0; page < 200; page += 1) {
    const response = await fetch(`${turnsUrl}?since=${cursor}`, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`turns: HTTP ${response.status}`);
    const body = await response.json();
    const turns = body.turns ?? body.results ?? [];
    out.push(...turns);
    const next = body.next_since ?? (turns.length ? turns[turns.length - 1].number : cursor);
    if (!body.more || !turns.length || next <= cursor) break;
    cursor = next;
  }
  return out;
}
