#!/usr/bin/env python3
"""A minimal Arena bot for gconway (AI Battleground's two-player Game of Life). Standard
library only.

    python3 gconway_bot.py --port 8100
    ARENA_BOT_SECRET=<your bot's secret> python3 gconway_bot.py   # reject unsigned calls
    python3 gconway_bot.py --stdio   # JSON lines on stdin/stdout: the file you upload

Each request is the state, one JSON object: ``field`` (one string per row: "#" yours,
"O" theirs, "." dead; the board is a torus), ``cellsRemaining`` (your budget),
``maxColonisationDistance`` and the clock (``timeLeftForMove`` ms: answer fast). Reply
``{"cells": [[row, col], ...]}``: at most ``cellsRemaining`` dead cells, each within that
distance of one of your live cells. Strategy: prefer dead cells with exactly two or three
of your neighbours (they become births next step), spend a few cells a turn.
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

NAME = "gconway"  # the game: the server names it when it starts
PER_TURN = 3


def choose(message: dict) -> list[list[int]]:
    field = message["field"]
    rows, cols = len(field), len(field[0])
    reach = message.get("maxColonisationDistance", 2)
    budget = min(message.get("cellsRemaining", 0), PER_TURN)
    mine = [(r, c) for r in range(rows) for c in range(cols) if field[r][c] == "#"]

    def own_neighbours(r: int, c: int) -> int:
        return sum(
            field[(r + dr) % rows][(c + dc) % cols] == "#"
            for dr in (-1, 0, 1)
            for dc in (-1, 0, 1)
            if dr or dc
        )

    candidates = set()
    for r, c in mine:
        for dr in range(-reach, reach + 1):
            for dc in range(-reach, reach + 1):
                rr, cc = (r + dr) % rows, (c + dc) % cols
                if field[rr][cc] == ".":
                    candidates.add((rr, cc))
    ranked = sorted(
        candidates, key=lambda rc: (own_neighbours(*rc) not in (2, 3), -own_neighbours(*rc), rc)
    )
    return [[r, c] for r, c in ranked[:budget]]


def read_post(body: bytes) -> dict:
    """The message in a POST's body: the state, the JSON object a --stdio line carries."""
    try:
        return json.loads(body)
    except ValueError:
        raise BadRequest("not a gconway state") from None


def reply_to(message: dict, state: dict) -> dict:
    """The reply to one state (``state``, this seat's memory for the match: unused)."""
    try:
        return {"cells": choose(message)}
    except (ValueError, KeyError, TypeError, IndexError):
        raise BadRequest("not a gconway state") from None


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
