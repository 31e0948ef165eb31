#!/usr/bin/env python3
"""A minimal Arena bot for Battleship (BotsArena protocol). Standard library only.

Run it where the platform can reach it, then register its URL:

    python3 battleship_bot.py --port 8100
    ARENA_BOT_SECRET=<your bot's secret> python3 battleship_bot.py   # reject unsigned calls
    python3 battleship_bot.py --stdio   # JSON lines on stdin/stdout: the file you upload

Each request is one JSON object. ``init`` comes once per match and your reply PLACES YOUR
FLEET: ``{"name": ..., "boats": ["x1,y1-x2,y2", ...]}`` (``board`` gives ``width``,
``height`` and ``ship1``..``ship6``, the number of ships of each length, all as strings).
``play-turn`` asks for a shot: ``board.your_strikes`` lists your shots so far, each
``{"target": "x,y", "result": "" | "hit" | "hit and sunk"}``. Reply ``{"play": "x,y"}``.
Strategy: a random fleet; fire next to an unsunk hit if there is one, else on a
checkerboard of cells not yet tried.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import random
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAME = "battleship"  # the game: the server names it when it starts


def grid(board: dict) -> tuple[int, int, list[int]]:
    ships = [int(board.get(f"ship{n}", 0)) for n in range(1, 7)]
    return int(board.get("width", 10)), int(board.get("height", 10)), ships


def place_fleet(width: int, height: int, ships: list[int]) -> list[str]:
    """Random non-overlapping ships, longest first (retried until they all fit)."""
    while True:
        taken, boats = set(), []
        for length in sorted((n for n in range(1, 7) for _ in range(ships[n - 1])), reverse=True):
            spots = []
            for x in range(width):
                for y in range(height):
                    for dx, dy in ((1, 0), (0, 1)):
                        cells = [(x + i * dx, y + i * dy) for i in range(length)]
                        if all(a < width and b < height and (a, b) not in taken for a, b in cells):
                            spots.append(cells)
            if not spots:
                break
            cells = random.choice(spots)
            taken.update(cells)
            boats.append(f"{cells[0][0]},{cells[0][1]}-{cells[-1][0]},{cells[-1][1]}")
        else:
            return boats


def shoot(board: dict) -> str:
    width, height, _ = grid(board)
    results = {}
    for strike in board.get("your_strikes") or []:
        results[strike["target"]] = strike["result"]
    hits = [t for t, r in results.items() if r == "hit"]
    for target in hits:  # finish what we started
        x, y = (int(v) for v in target.split(","))
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < width and 0 <= ny < height and f"{nx},{ny}" not in results:
                return f"{nx},{ny}"
    free = [f"{x},{y}" for x in range(width) for y in range(height) if f"{x},{y}" not in results]
    even = [t for t in free if sum(int(v) for v in t.split(",")) % 2 == 0]
    return random.choice(even or free or ["0,0"])


def read_post(body: bytes) -> dict:
    """The message in a POST's body: the JSON object a --stdio line carries."""
    try:
        return json.loads(body)
    except ValueError:
        raise BadRequest("not JSON") from None


def reply_to(message: dict, state: dict) -> dict:
    """The reply to one message (``state``, this seat's memory for the match: unused)."""
    board = message.get("board") or {}
    if message.get("action") == "init":
        return {"name": "starter", "boats": place_fleet(*grid(board))}
    return {"play": shoot(board)}


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
