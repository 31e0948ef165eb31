#!/usr/bin/env python3
"""A minimal Arena bot for Game of Drones. Standard library only.

    python3 drones_bot.py --port 8100
    ARENA_BOT_SECRET=<your bot's secret> python3 drones_bot.py   # reject unsigned calls
    python3 drones_bot.py --stdio   # JSON lines on stdin/stdout: the file you upload

Each request carries the pending calls of the original JavaScript bot interface:
``{"calls": [[method, argument], ...]}`` with ``onRoundEnd`` (the last round, the only news
of the opponent), ``onMatchStart``, ``onRoundStart`` (``turns``, ``defenderBonus``) and
always ``playTurn`` last (``producers``, ``soldiers``). Reply what playTurn returns:
``{"newProducers": n, "newSoldiers": n, "launchAttack": bool}``. No turn number is sent:
count turns yourself, per match and seat (the X-Arena-Match and X-Arena-Seat headers).

Strategy (an adaptive defender): build producers, and switch to soldiers one turn before
the turn the opponent attacked in the last round (or on the last turn).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ.get("ARENA_BOT_SECRET", "")
STATES: dict[tuple[str, str], dict] = {}
LOCK = threading.Lock()


def play(state: dict, calls: list) -> dict | None:
    reply = None
    for method, argument in calls:
        if method == "onRoundStart":
            state["turns"] = argument.get("turns", 10)
            state["turn"] = 0
        elif method == "onRoundEnd":
            them = argument.get("them", {})
            state["threat"] = argument.get("turnsPlayed") if them.get("launchedAttack") else None
        elif method == "playTurn":
            state["turn"] = state.get("turn", 0) + 1
            producers = argument.get("producers", 1)
            switch = (state.get("threat") or state.get("turns", 10)) - 1
            if state["turn"] >= max(1, switch):
                reply = {"newProducers": 0, "newSoldiers": producers, "launchAttack": False}
            else:
                reply = {"newProducers": producers, "newSoldiers": 0, "launchAttack": False}
    return reply


def signed(headers, body: bytes) -> bool:
    if not SECRET:
        return True
    timestamp = headers.get("X-Arena-Timestamp", "")
    expected = (
        "sha256="
        + hmac.new(SECRET.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    )
    return hmac.compare_digest(expected, headers.get("X-Arena-Signature", ""))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the platform reuses its connection
    disable_nagle_algorithm = True  # answer at once, not after a delayed ACK

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not signed(self.headers, body):
            return self.answer(403, {"error": "bad signature"})
        try:
            message = json.loads(body)
            calls = message["calls"]
        except (ValueError, KeyError, TypeError):
            return self.answer(400, {"error": 'expected {"calls": [...]}'})
        key = (self.headers.get("X-Arena-Match", ""), self.headers.get("X-Arena-Seat", ""))
        with LOCK:
            state = STATES.setdefault(key, {})
            reply = play(state, calls)
            if message.get("final"):
                STATES.pop(key, None)  # the match is over
        self.answer(200, reply)

    def answer(self, status: int, value) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve_lines() -> None:
    """``--stdio``: one JSON message per line on stdin, one JSON reply per line on stdout
    (an uploaded bot, or a ``process:`` bot). ``{"error": ...}`` is the platform's last word."""
    state: dict = {}  # one process plays one seat of one match
    for line in sys.stdin:
        message = json.loads(line)
        if list(message) == ["error"]:
            print(message["error"], file=sys.stderr)
            break
        print(json.dumps(play(state, message["calls"])), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--stdio", action="store_true", help="JSON lines on stdin/stdout")
    args = parser.parse_args()
    if args.stdio:
        raise SystemExit(serve_lines())
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"drones bot on http://{args.host}:{args.port}/", flush=True)
    server.serve_forever()
