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

NAME = "drones"  # the game: the server names it when it starts


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


def read_post(body: bytes) -> dict:
    """The message in a POST's body: the JSON object with "calls" a --stdio line carries."""
    try:
        message = json.loads(body)
    except ValueError:
        message = None
    if not isinstance(message, dict) or "calls" not in message:
        raise BadRequest('expected {"calls": [...]}')
    return message


def reply_to(message: dict, state: dict) -> dict | None:
    """The reply to one message; ``state`` counts the turns of this seat in this match, and
    is emptied (forgotten) after the match's last message (``"final": true``)."""
    reply = play(state, message["calls"])
    if message.get("final"):
        state.clear()  # the match is over
    return reply


# --- arena scaffold: from this line to the end, the same in every game's starter ---
# The HTTP server (with the X-Arena-Signature check) and --stdio, around the game's part
# above: NAME, read_post(body) and reply_to(message, state). To change it, change it in
# every starter alike (tests/games/test_starters_alike.py checks, and can copy it over).

SECRET = os.environ.get("ARENA_BOT_SECRET", "")
STATES: dict[tuple[str, str], dict] = {}  # reply_to's memory, per (match, seat)
LOCK = threading.Lock()


class BadRequest(Exception):
    """A request that is not the game's message: answered 400, with this text."""


def signed(headers, body: bytes) -> bool:
    """True when the request carries a valid X-Arena-Signature (or no secret is set)."""
    if not SECRET:
        return True
    timestamp = headers.get("X-Arena-Timestamp", "")
    expected = (
        "sha256="
        + hmac.new(SECRET.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    )
    return hmac.compare_digest(expected, headers.get("X-Arena-Signature", ""))


def reply_for(key: tuple[str, str], message: dict) -> dict:
    """``reply_to`` with the state of one seat of one match (forgotten once it is empty)."""
    with LOCK:
        state = STATES.setdefault(key, {})
        try:
            return reply_to(message, state)
        finally:
            if not state:
                del STATES[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the platform reuses its connection
    disable_nagle_algorithm = True  # answer at once, not after a delayed ACK

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not signed(self.headers, body):
            return self.answer(403, {"error": "bad signature"})
        key = (self.headers.get("X-Arena-Match", ""), self.headers.get("X-Arena-Seat", ""))
        try:
            reply = reply_for(key, read_post(body))
        except BadRequest as error:
            return self.answer(400, {"error": str(error)})
        self.answer(200, reply)

    def answer(self, status: int, value) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # quiet
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
        print(json.dumps(reply_to(message, state)), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--stdio", action="store_true", help="JSON lines on stdin/stdout")
    args = parser.parse_args()
    if args.stdio:
        raise SystemExit(serve_lines())
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"{NAME} bot on http://{args.host}:{args.port}/", flush=True)
    server.serve_forever()
