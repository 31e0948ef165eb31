#!/usr/bin/env python3
"""A minimal Arena bot for Ajax Tiles. Standard library only.

    python3 tiles_bot.py --port 8100
    ARENA_BOT_SECRET=<your bot's secret> python3 tiles_bot.py   # reject unsigned calls
    python3 tiles_bot.py --stdio   # JSON lines on stdin/stdout: the file you upload

Each request is a form (application/x-www-form-urlencoded) with two fields: ``color``
("r" or "b") and ``board``, the board as JSON text: 24 columns of 12 tiles, board[x][y],
each "" (empty), "r", "b", "d" (contaminated) or "n" (nuked). Reply ``{"x": X, "y": Y}``:
an empty tile paints it (a battle follows if it touches the enemy), your own tile nukes
it, anything else is a pass. Strategy: grow your biggest safe front, attack where your
group is bigger, else paint anywhere empty.
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
from urllib.parse import parse_qs

NAME = "tiles"  # the game: the server names it when it starts
W, H = 24, 12


def neighbours(x: int, y: int):
    for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        if 0 <= x + dx < W and 0 <= y + dy < H:
            yield x + dx, y + dy


def group_size(board, x: int, y: int, colour: str) -> int:
    """Tiles of ``colour`` connected to (x, y) if (x, y) were ``colour``."""
    seen, todo = {(x, y)}, [(x, y)]
    while todo:
        cx, cy = todo.pop()
        for nx, ny in neighbours(cx, cy):
            if (nx, ny) not in seen and board[nx][ny] == colour:
                seen.add((nx, ny))
                todo.append((nx, ny))
    return len(seen)


def choose(board, me: str) -> tuple[int, int]:
    enemy = "b" if me == "r" else "r"
    best, best_score = None, None
    for x in range(W):
        for y in range(H):
            if board[x][y] != "":
                continue
            around = [board[nx][ny] for nx, ny in neighbours(x, y)]
            mine = group_size(board, x, y, me)
            defenders = [
                group_size(board, nx, ny, enemy)
                for nx, ny in neighbours(x, y)
                if board[nx][ny] == enemy
            ]
            if defenders and mine <= max(defenders):
                continue  # this battle would be lost
            # captures first, then growing next to our own tiles, then anywhere
            score = (len(defenders), me in around, mine)
            if best_score is None or score > best_score:
                best, best_score = (x, y), score
    return best or (-1, -1)  # nothing sensible: pass


def read_post(body: bytes) -> dict:
    """The message in a POST's body, a form: its fields, as a --stdio line carries them."""
    fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    try:
        return {"color": fields["color"][0], "board": fields["board"][0]}
    except (KeyError, IndexError):
        raise BadRequest("expected the fields color and board") from None


def reply_to(message: dict, state: dict) -> dict:
    """The reply to one message (``state``, this seat's memory for the match: unused)."""
    try:
        board = json.loads(message["board"])
    except ValueError:
        raise BadRequest("expected the fields color and board") from None
    x, y = choose(board, message["color"])
    return {"x": x, "y": y}


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
