"""A spectator that stops reading on a served platform (``manage.py serve``: daphne): the
others get every turn in order and on time, and the slow one is dropped once it is
``ARENA_SPECTATOR_BACKLOG_BYTES`` behind instead of being buffered without end
(``competition/plumbing/frames.py``)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import socket
import sys
import time

import aiohttp

from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, running

MOVES = 120
SENT_AT = re.compile(r'"sent_at":([0-9.]+)')


def stalled_spectator(port: int, match_id: int) -> socket.socket:
    """A websocket to the match that is opened and then never read (a tiny receive buffer)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws/matches/{match_id}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Origin: http://127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def drained(sock: socket.socket, seconds: float) -> tuple[int, bool]:
    """(bytes read, whether the server closed the connection) reading for ``seconds``."""
    sock.settimeout(0.5)
    total, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return total, True
        if not chunk:
            return total, True
        total += len(chunk)
    return total, False


async def reader(port: int, match_id: int) -> list[tuple[int, float]]:
    """(turn number, delay in seconds from its publication) of every turn, until the end."""
    turns = []
    url = f"ws://127.0.0.1:{port}/ws/matches/{match_id}/"
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, headers={"Origin": f"http://127.0.0.1:{port}"}) as ws:
            async for msg in ws:
                data = json.loads(msg.data)
                if data["type"] == "turn":
                    sent_at = float(SENT_AT.search(msg.data).group(1))
                    turns.append((data["turn"]["number"], time.time() - sent_at))
                elif data["type"] == "end":
                    return turns
    return turns


@contextlib.contextmanager
def grower_match(tmp_path, backlog_bytes: int, pace_ms: int, start_in: int):
    """A served embedded default playing one paced 256x256 gconway match of ``MOVES`` turns
    between two growers: ``(port, match id)``."""
    env = project_env(
        ARENA_DATA_DIR=str(tmp_path),
        ARENA_SPECTATOR_BACKLOG_BYTES=str(backlog_bytes),
        DJANGO_SETTINGS_MODULE="competition.settings",
    )
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    options = {"rows": 256, "cols": 256, "maxGameIterations": MOVES, "timerMs": None}
    with running(server, port, env=env, log=tmp_path / "serve.log"):
        done = manage(
            "enqueue", "gconway", "builtin:grower", "builtin:grower", "--options",
            json.dumps(options), "--pace-ms", str(pace_ms), "--start-in", str(start_in), env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (match_id,) = json.loads(done.stdout)
        yield port, match_id


def test_it_drops_a_stalled_spectator_and_delays_no_other(tmp_path):
    with grower_match(tmp_path, 1 << 20, pace_ms=50, start_in=3) as (port, match_id):
        stalled = stalled_spectator(port, match_id)
        try:
            turns = asyncio.run(reader(port, match_id))
            received, closed = drained(stalled, 20)
        finally:
            stalled.close()
    # It should give the reading spectator every turn, in order, while the other stalls.
    assert [n for n, _ in turns] == list(range(1, MOVES + 1))
    assert max(delay for _, delay in turns) < 5.0
    # It should drop the stalled spectator instead of keeping its backlog.
    assert closed, f"the stalled spectator is still open after reading {received} bytes"


def frames_of(data: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """The whole server frames at the start of ``data`` (unmasked) as (opcode, payload), and
    the rest."""
    frames, at = [], 0
    while len(data) - at >= 2:
        length, start = data[at + 1] & 0x7F, at + 2
        if length >= 126:
            width = 2 if length == 126 else 8
            if len(data) - start < width:
                break
            length, start = int.from_bytes(data[start : start + width], "big"), start + width
        if len(data) - start < length:
            break
        frames.append((data[at] & 0x0F, data[start : start + length]))
        at = start + length
    return frames, data[at:]


def pong(payload: bytes) -> bytes:
    """A client's pong frame for a ping's ``payload`` (masked, as a client's frames are)."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x8A, 0x80 | len(payload)]) + mask + masked


def late_reader(sock: socket.socket, pause: float, seconds: float) -> list[dict]:
    """Every message on ``sock``, read after ``pause`` seconds, until the end or ``seconds``
    (the server's pings answered, as a browser does: daphne pings every 20 s)."""
    time.sleep(pause)
    sock.settimeout(1)
    messages, rest, deadline = [], b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        if not chunk:
            break
        frames, rest = frames_of(rest + chunk)
        for opcode, payload in frames:
            if opcode == 0x9:
                sock.sendall(pong(payload))
            elif opcode == 0x1:
                messages.append(json.loads(payload))
        if messages and messages[-1]["type"] == "end":
            break
    return messages


def test_it_gives_a_spectator_that_falls_behind_every_turn_whole_and_in_order(tmp_path):
    # (a backlog never dropped here)
    with grower_match(tmp_path, 256 << 20, pace_ms=20, start_in=2) as (port, match_id):
        behind = stalled_spectator(port, match_id)  # the kernel takes part of a turn, then none
        try:
            messages = late_reader(behind, pause=5, seconds=60)
        finally:
            behind.close()
    turns = [m["turn"]["number"] for m in messages if m["type"] == "turn"]
    # It should give it every turn once, whole and in order, after its snapshot, then the end
    # (each write sent at once while nothing waits, the rest queued behind what waits).
    assert messages[0]["type"] == "snapshot"
    assert turns == list(range(messages[0]["last"] + 1, MOVES + 1))
    assert messages[-1]["type"] == "end"
