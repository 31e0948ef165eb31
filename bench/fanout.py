"""Live fan-out: N websocket spectators of one match at R moves per second, on daphne.

For each spectator count it serves the platform (embedded default) with daphne, queues a
gconway match between built-in bots paced at R moves/s that starts once every spectator is
in (has its snapshot), connects N spectators (spread over ``--clients`` client processes, one per
core by default: 2,000 spectators read 40,000 messages a second, and one reader process would be
measured as much as the server), and measures what they receive:
delivered messages per second, the share of expected messages delivered and how many came in
order (each spectator's turns numbered 1, 2, 3...), p50/p99 delay from the moment the server
published a turn (``sent_at``) to its arrival at a spectator, the web process's CPU (all of it,
and from the match's start) and the readers' CPU per message.

The readers share the machine's cores with the server, so their cost is part of the delay: the
default ``--reader lean`` is an asyncio protocol that parses only the frame headers, the turn's
number and its timestamp (no per-message objects); ``--reader aiohttp`` uses aiohttp's client.

Two modes in the same run: ``hub`` (``ws/matches/<id>/``: one channel-layer subscription
per match per process, the turn encoded once and written to every local socket) and
``naive`` (``ws/naive/matches/<id>/``: Channels' textbook one group membership per socket,
routed only for this benchmark).

    python bench/fanout.py                          # 10, 100, 500, 1000, 2000 spectators
    python bench/fanout.py --spectators 2000 --modes hub
    python bench/fanout.py --spectators 2000 --modes hub --reader aiohttp
    python bench/fanout.py --quick                  # smoke mode
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, cpu_seconds, served  # noqa: E402

SENT_AT = re.compile(rb'"sent_at":([0-9.]+)')
NUMBER = re.compile(rb'"number":([0-9]+)')
WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#: a client process's line once all its spectators are in
READY = "ready"
#: the match's start, seconds after every spectator is in
START_AFTER = 1.0
#: websocket handshakes a client process has in flight at once
HANDSHAKES = 50


def server_env(data_dir: str) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "ARENA_DATA_DIR": data_dir,
            "ARENA_BENCH_NAIVE_FANOUT": "true",
            "LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "competition.settings",
            **PRODUCTION_ENV,
        }
    )
    return env


def enqueue(env: dict, moves: int, rate: float, start_in: float) -> int:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "enqueue",
            "gconway",
            "builtin:random",
            "builtin:dummy",
            "--options",
            json.dumps({"maxGameIterations": moves, "timerMs": None}),
            "--pace-ms",
            str(int(1000 / rate)),
            "--start-in",
            str(start_in),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)[0]


def start(env: dict, match_id: int) -> None:
    """Let match ``match_id`` start ``START_AFTER`` seconds from now (the runners poll every
    second)."""
    code = (
        "from datetime import timedelta; from django.utils import timezone; "
        "from competition.models import Match; "
        f"Match.objects.filter(pk={match_id}).update("
        f"not_before=timezone.now() + timedelta(seconds={START_AFTER}))"
    )
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", code],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
    )


class Tally:
    """What the spectators of one client process received: turns in order, delays, span."""

    def __init__(self, n: int, snapshots: bool):
        #: whether a spectator is in once it has its snapshot (the hub), else once open
        self.snapshots = snapshots
        self.counts = [0] * n
        self.numbers = [0] * n  # each spectator's last turn number
        self.out_of_order = 0
        self.histogram: dict[int, int] = {}  # delay in whole ms -> messages
        self.first = self.last = None
        self.ended = 0

    def message(self, i: int, data: bytes, ready: asyncio.Event) -> bool:
        """Count spectator ``i``'s message ``data`` (True: the match's end)."""
        if data.startswith(b'{"type":"turn"'):
            now = time.time()
            match = SENT_AT.search(data)
            if match:
                key = int((now - float(match.group(1))) * 1000)
                self.histogram[key] = self.histogram.get(key, 0) + 1
            number = NUMBER.search(data)
            if number is None or int(number.group(1)) != self.numbers[i] + 1:
                self.out_of_order += 1  # a turn missing, doubled or out of order
            else:
                self.numbers[i] += 1
            self.counts[i] += 1
            self.first = self.first or now
            self.last = now
        elif data.startswith(b'{"type":"snapshot"'):
            ready.set()  # in: the socket has its snapshot, the turns come next
        elif data.startswith(b'{"type":"end"'):
            self.ended += 1
            return True
        return False


class LeanSocket(asyncio.Protocol):
    """A websocket reader that parses only what it counts: the handshake's status, each frame's
    header (server frames are unmasked), pings answered; no per-message objects."""

    def __init__(self, key: bytes, tally: Tally, i: int, ready: asyncio.Event):
        self.key, self.tally, self.i, self.ready = key, tally, i, ready
        self.buffer = b""
        self.open = False
        self.fragments: list[bytes] = []
        self.done = asyncio.get_running_loop().create_future()
        self.transport = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc) -> None:
        if not self.done.done():
            self.done.set_result(False)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data if self.buffer else data
        if not self.open:
            head, sep, rest = buffer.partition(b"\r\n\r\n")
            if not sep:
                self.buffer = buffer
                return
            accept = base64.b64encode(hashlib.sha1(self.key + WS_GUID).digest())
            if not head.startswith(b"HTTP/1.1 101") or accept not in head:
                self.transport.close()
                self.done.set_exception(ConnectionError(head.split(b"\r\n", 1)[0].decode()))
                return
            self.open, buffer = True, rest
            if not self.tally.snapshots:  # no snapshot comes: in once open
                self.ready.set()
        at, size = 0, len(buffer)
        while size - at >= 2:
            b0, b1 = buffer[at], buffer[at + 1]
            length, start = b1 & 0x7F, at + 2
            if length == 126:
                if size - start < 2:
                    break
                length, start = int.from_bytes(buffer[start : start + 2], "big"), start + 2
            elif length == 127:
                if size - start < 8:
                    break
                length, start = int.from_bytes(buffer[start : start + 8], "big"), start + 8
            if size - start < length:
                break
            at = start + length
            self.frame(b0, buffer[start:at])
        self.buffer = buffer[at:]

    def frame(self, b0: int, payload: bytes) -> None:
        opcode = b0 & 0x0F
        if opcode == 0x9:  # ping: a pong, masked as a client's frames must be
            self.transport.write(masked(0xA, payload))
        elif opcode == 0x8:
            self.transport.close()
        elif opcode in (0x0, 0x1, 0x2):
            if not b0 & 0x80:  # a fragment
                self.fragments.append(payload)
                return
            if self.fragments:
                payload = b"".join([*self.fragments, payload])
                self.fragments = []
            if self.tally.message(self.i, payload, self.ready) and not self.done.done():
                self.done.set_result(True)
                self.transport.close()


def masked(opcode: int, payload: bytes) -> bytes:
    """A client's frame (short payloads only: pongs)."""
    mask = os.urandom(4)
    body = bytes(b ^ mask[k % 4] for k, b in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + body


class Spectators:
    """One client process's spectators of ``path``: how each opens and reads its websocket."""

    def __init__(self, port: int, path: str, n: int):
        self.port, self.path = port, path
        self.tally = Tally(n, snapshots="/naive/" not in path)
        self.handshakes = asyncio.Semaphore(HANDSHAKES)
        self.retries = 0

    async def retried(self, open_one):
        """A websocket, handshakes ``HANDSHAKES`` at a time; one retried a few times (a
        loaded server answers slowly, and daphne drops a handshake not accepted in 5 s)."""
        async with self.handshakes:
            for attempt in range(5):
                try:
                    return await open_one()
                except (TimeoutError, OSError):
                    self.retries += 1
                    await asyncio.sleep(0.5 * (attempt + 1))
            raise SystemExit(f"a spectator could not connect to {self.path} in 5 attempts")

    async def lean(self, i: int, ready: asyncio.Event) -> None:
        protocol = await self.retried(lambda: self.lean_open(i, ready))
        await protocol.done

    async def lean_open(self, i: int, ready: asyncio.Event) -> LeanSocket:
        """A ``LeanSocket``, once it is in (its snapshot, or its handshake without one)."""
        key = base64.b64encode(os.urandom(16))
        _transport, protocol = await asyncio.get_running_loop().create_connection(
            lambda: LeanSocket(key, self.tally, i, ready), "127.0.0.1", self.port
        )
        protocol.transport.write(
            f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key.decode()}\r\n"
            f"Sec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1:{self.port}\r\n\r\n".encode()
        )
        waiter = asyncio.ensure_future(ready.wait())
        try:
            await asyncio.wait(
                {waiter, protocol.done}, timeout=30, return_when=asyncio.FIRST_COMPLETED
            )
            if not ready.is_set():
                if protocol.done.done():
                    protocol.done.result()  # its error
                raise ConnectionError("no snapshot in 30 s")
        except BaseException:
            waiter.cancel()
            protocol.transport.close()
            raise
        return protocol

    async def aio(self, i: int, ready: asyncio.Event, session) -> None:
        import aiohttp

        async def open_one():
            try:
                return await session.ws_connect(
                    f"ws://127.0.0.1:{self.port}{self.path}",
                    headers={"Origin": f"http://127.0.0.1:{self.port}"},
                    max_msg_size=0,
                )
            except aiohttp.ClientError as exc:
                raise ConnectionError(str(exc)) from exc

        async with await self.retried(open_one) as ws:
            if not self.tally.snapshots:
                ready.set()
            async for msg in ws:
                data = msg.data.encode() if isinstance(msg.data, str) else msg.data
                if self.tally.message(i, data, ready):
                    return


async def spectate(
    port: int, path: str, n: int, expected: int, timeout: float, reader: str = "lean"
) -> dict:
    crowd = Spectators(port, path, n)
    async with contextlib.AsyncExitStack() as stack:
        session = None
        if reader == "aiohttp":
            import aiohttp

            session = await stack.enter_async_context(
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
            )
        events = [asyncio.Event() for _ in range(n)]
        tasks = [
            asyncio.ensure_future(
                crowd.aio(i, events[i], session) if session else crowd.lean(i, events[i])
            )
            for i in range(n)
        ]
        connected = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 300)
        connect_s = time.perf_counter() - connected
        print(READY, flush=True)  # the bench starts the match once every client is in
        cpu_in = cpu_seconds(os.getpid())
        _done, pending = await asyncio.wait(tasks, timeout=timeout)
        cpu_s = cpu_seconds(os.getpid()) - cpu_in
        for task in pending:
            task.cancel()
    tally = crowd.tally
    return {
        "delivered": sum(tally.counts),
        "expected": expected * n,
        "out_of_order": tally.out_of_order,
        "histogram": tally.histogram,
        "first": tally.first,
        "last": tally.last,
        "connect_s": connect_s,
        "retries": crowd.retries,
        "unfinished": len(pending),
        "client_cpu_s": cpu_s,
    }


def merge(parts: list[dict]) -> dict:
    """One result from the client processes' results: totals, the span from the first
    message to the last, p50/p99 of every delay."""
    histogram: dict[int, int] = {}
    for part in parts:
        for key, count in part["histogram"].items():
            histogram[int(key)] = histogram.get(int(key), 0) + count
    firsts = [p["first"] for p in parts if p["first"]]
    lasts = [p["last"] for p in parts if p["last"]]
    span = max(lasts) - min(firsts) if firsts and lasts else 0.0
    total = sum(histogram.values())

    def pct(p: float) -> float:
        rank, seen = p * total, 0
        for key in sorted(histogram):
            seen += histogram[key]
            if seen > rank:
                return float(key)
        return float("nan")

    delivered = sum(p["delivered"] for p in parts)
    return {
        "delivered": delivered,
        "expected": sum(p["expected"] for p in parts),
        "rate": delivered / span if span > 0 else 0.0,
        "p50": pct(0.50),
        "p99": pct(0.99),
        "connect_s": max(p["connect_s"] for p in parts),
        "retries": sum(p["retries"] for p in parts),
        "unfinished": sum(p["unfinished"] for p in parts),
        "out_of_order": sum(p["out_of_order"] for p in parts),
        "client_cpu_s": sum(p["client_cpu_s"] for p in parts),
    }


def client_main(args) -> None:
    result = asyncio.run(
        spectate(args.port, args.path, args.n, args.expected, args.timeout, args.reader)
    )
    print(json.dumps(result))


def run_case(port: int, env: dict, mode: str, n: int, args, pid: int) -> dict:
    moves, rate, clients = args.moves, args.rate, args.clients
    match_id = enqueue(env, moves, rate, 3600)  # started once every spectator is in
    path = f"/ws/matches/{match_id}/" if mode == "hub" else f"/ws/naive/matches/{match_id}/"
    timeout = START_AFTER + 2 + moves / rate * 3 + 30
    clients = max(1, min(clients, n))
    shares = [n // clients + (1 if i < n % clients else 0) for i in range(clients)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--client",
                "--port",
                str(port),
                "--path",
                path,
                "--n",
                str(share),
                "--expected",
                str(moves),
                "--timeout",
                str(timeout),
                "--reader",
                args.reader,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for share in shares
    ]
    for proc in procs:  # each says when its spectators are in (or fails)
        line = proc.stdout.readline().strip()
        if line != READY:
            _out, err = proc.communicate(timeout=30)
            raise SystemExit(f"client failed to connect: {line} {err[-2000:]}")
    start(env, match_id)
    cpu_in = cpu_seconds(pid)
    parts = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout + 180)
        if proc.returncode != 0:
            raise SystemExit(f"client failed: {err[-2000:]}")
        parts.append(json.loads(out.strip().splitlines()[-1]))
    result = merge(parts)
    result["cpu_s"] = cpu_seconds(pid)  # the web process's, connecting and sending included
    result["match_cpu_s"] = result["cpu_s"] - cpu_in  # from the match's start: the turns
    return result


def reader_us(result: dict) -> float:
    """The spectators' CPU per message delivered, in microseconds (the readers' own cost)."""
    return result["client_cpu_s"] / result["delivered"] * 1e6 if result["delivered"] else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spectators", default="10,100,500,1000,2000")
    parser.add_argument("--modes", default="hub,naive")
    parser.add_argument("--moves", type=int, default=200, help="turns of the match")
    parser.add_argument("--rate", type=float, default=20.0, help="moves per second")
    parser.add_argument(
        "--clients",
        type=int,
        default=os.cpu_count() or 1,
        help="client processes the spectators are spread over (default: one per core)",
    )
    parser.add_argument(
        "--reader",
        choices=("lean", "aiohttp"),
        default="lean",
        help="the spectators' websocket reader: a lean asyncio protocol (frame headers, the"
        " turn's number and timestamp) or aiohttp's client",
    )
    parser.add_argument("--quick", action="store_true", help="smoke mode: 10 spectators, 20 moves")
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--expected", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client_main(args)
        return
    counts = [10] if args.quick else [int(x) for x in args.spectators.split(",")]
    args.moves = 20 if args.quick else args.moves
    load = os.getloadavg()[0]
    modes = args.modes.split(",")
    rows = []
    for mode in modes:
        for n in counts:
            with tempfile.TemporaryDirectory(prefix="arena-fanout-") as data:
                env = server_env(data)
                with served(env) as (port, server):
                    result = run_case(port, env, mode, n, args, server.pid)
            rows.append((mode, n, result))
            print(f"  {mode} {n}: done", file=sys.stderr, flush=True)
    print(
        f"# fan-out on daphne (embedded default): one match at {args.rate:g} moves/s, {args.moves}"
        f" moves, spectators spread over {args.clients} client processes ({args.reader} reader);"
        f" load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    print(
        f"{'mode':<6} {'spectators':>10} {'delivered':>14} {'share':>7} {'in order':>9} {'msgs/s':>9} {'p50 ms':>8}"
        f" {'p99 ms':>9} {'connect s':>10} {'retries':>8} {'web CPU s':>10} {'match CPU s':>12} {'read us/msg':>12}"
    )
    for mode, n, r in rows:
        share = r["delivered"] / r["expected"] if r["expected"] else 0
        print(
            f"{mode:<6} {n:>10} {r['delivered']:>7}/{r['expected']:<6} {share:>7.1%}"
            f" {r['delivered'] - r['out_of_order']:>9} {r['rate']:>9,.0f}"
            f" {r['p50']:>8.0f} {r['p99']:>9.0f} {r['connect_s']:>10.1f} {r['retries']:>8}"
            f" {r['cpu_s']:>10.1f} {r['match_cpu_s']:>12.1f} {reader_us(r):>12.1f}"
        )
    print(
        "connect s: until the last spectator of a client process was in (the match starts"
        " about a second after every spectator is in); web CPU s: the daphne process's"
        " CPU from its start to the last spectator's end (connects, snapshots and turns), match"
        " CPU s the part from the match's start (the turns);"
        " read us/msg: the client processes' CPU from the match's start to their end, per"
        " message delivered"
    )
    print("goal: every message delivered at 2000 spectators with p99 <= 300 ms (hub; issue 40)")
    for mode, n, r in rows:
        if mode == "hub" and n >= 2000:
            met = r["delivered"] == r["expected"] and not r["out_of_order"] and r["p99"] <= 300
            print(f"  hub {n}: {'met' if met else 'NOT met'} (p99 {r['p99']:.0f} ms)")


if __name__ == "__main__":
    main()
