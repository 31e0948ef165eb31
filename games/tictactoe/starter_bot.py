#!/usr/bin/env python3
"""A minimal Arena bot for Tic-tac-toe (BotsArena protocol). Standard library only.

Run it where the platform can reach it, then register its URL:

    python3 tictactoe_bot.py --port 8100
    ARENA_BOT_SECRET=<your bot's secret> python3 tictactoe_bot.py   # reject unsigned calls
    python3 tictactoe_bot.py --stdio   # JSON lines on stdin/stdout: the file you upload

Each request is one JSON object. ``init`` comes once per match (the reply is ignored);
``play-turn`` asks for a move: ``board`` maps "r-c" keys to "", "X" or "O" and ``you``
is your symbol. Reply ``{"play": "r-c"}`` naming an empty cell. Strategy: win if you
can, else block, else the centre, a corner, any cell.
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

NAME = "tictactoe"  # the game: the server names it when it starts
LINES = [
    ("0-0", "0-1", "0-2"),
    ("1-0", "1-1", "1-2"),
    ("2-0", "2-1", "2-2"),
    ("0-0", "1-0", "2-0"),
    ("0-1", "1-1", "2-1"),
    ("0-2", "1-2", "2-2"),
    ("0-0", "1-1", "2-2"),
    ("0-2", "1-1", "2-0"),
]
PREFERENCE = ["1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1"]


def completing(board: dict, symbol: str) -> str | None:
    """The empty cell that completes a line of ``symbol``, if any."""
    for line in LINES:
        values = [board.get(cell, "") for cell in line]
        if values.count(symbol) == 2 and values.count("") == 1:
            return line[values.index("")]
    return None


def choose(board: dict, me: str) -> str:
    other = "O" if me == "X" else "X"
    move = completing(board, me) or completing(board, other)
    if move:
        return move
    return next((cell for cell in PREFERENCE if board.get(cell, "") == ""), "0-0")


def read_post(body: bytes) -> dict:
    """The message in a POST's body: the JSON object a --stdio line carries."""
    try:
        return json.loads(body)
    except ValueError:
        raise BadRequest("not JSON") from None


def reply_to(message: dict, state: dict) -> dict:
    """The reply to one message (``state``, this seat's memory for the match: unused)."""
    if message.get("action") == "init":
        return {"name": "starter"}
    return {"play": choose(message.get("board") or {}, message.get("you", "X"))}


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
