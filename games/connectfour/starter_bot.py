#!/usr/bin/env python3
"""A minimal Arena bot for Connect four (BotsArena protocol). Standard library only.

Run it where the platform can reach it, then register its URL:

    python3 connectfour_bot.py --port 8100
    ARENA_BOT_SECRET=<your bot's secret> python3 connectfour_bot.py   # reject unsigned calls
    python3 connectfour_bot.py --stdio   # JSON lines on stdin/stdout: the file you upload

Each request is one JSON object. ``init`` comes once per match (the reply is ignored);
``play-turn`` asks for a move: ``board`` is 6 rows (row 0 at the bottom) of 7 cells, each
"", "X" or "O", and ``you`` is your symbol. Reply ``{"play": c}`` naming a column 0-6 that
is not full. Strategy: win if you can, else block, else the column nearest the centre that
does not hand the opponent a win.
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

NAME = "connectfour"  # the game: the server names it when it starts
ROWS, COLS = 6, 7
PREFERENCE = [3, 2, 4, 1, 5, 0, 6]


def drop(board: list, col: int, symbol: str) -> list | None:
    """The board after ``symbol`` drops a disc in ``col`` (None if the column is full)."""
    for row in range(ROWS):
        if board[row][col] == "":
            after = [list(r) for r in board]
            after[row][col] = symbol
            return after
    return None


def wins(board: list, symbol: str) -> bool:
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(4)]
                if all(0 <= y < ROWS and 0 <= x < COLS and board[y][x] == symbol for y, x in cells):
                    return True
    return False


def choose(board: list, me: str) -> int:
    other = "O" if me == "X" else "X"
    free = [c for c in PREFERENCE if board[ROWS - 1][c] == ""]
    for symbol in (me, other):  # win, else block
        for col in free:
            if wins(drop(board, col, symbol), symbol):
                return col
    for col in free:  # do not play under the opponent's winning cell
        after = drop(board, col, me)
        if not any(wins(drop(after, c, other) or after, other) for c in range(COLS)):
            return col
    return free[0] if free else 0


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
    return {"play": choose(message.get("board"), message.get("you", "X"))}


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
