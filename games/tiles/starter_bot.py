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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

SECRET = os.environ.get("ARENA_BOT_SECRET", "")
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
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
        try:
            me = fields["color"][0]
            board = json.loads(fields["board"][0])
        except (KeyError, IndexError, ValueError):
            return self.answer(400, {"error": "expected the fields color and board"})
        x, y = choose(board, me)
        self.answer(200, {"x": x, "y": y})

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
    for line in sys.stdin:
        message = json.loads(line)
        if list(message) == ["error"]:
            print(message["error"], file=sys.stderr)
            break
        x, y = choose(json.loads(message["board"]), message["color"])
        print(json.dumps({"x": x, "y": y}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--stdio", action="store_true", help="JSON lines on stdin/stdout")
    args = parser.parse_args()
    if args.stdio:
        raise SystemExit(serve_lines())
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"tiles bot on http://{args.host}:{args.port}/", flush=True)
    server.serve_forever()
