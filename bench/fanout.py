"""Live fan-out: N websocket spectators of one match at R moves per second, on daphne.

For each spectator count it serves the platform (embedded default) with daphne, queues a
gconway match between built-in bots paced at R moves/s that starts once every spectator is
in, connects N spectators (spread over ``--clients`` client processes, one per core by default:
2,000 spectators read 40,000 messages a second, and one reader process would be measured as
much as the server), and measures what they receive:
delivered messages per second, the share of expected messages delivered, and p50/p99 delay
from the moment the server published a turn (``sent_at``) to its arrival at a spectator.

Two modes in the same run: ``hub`` (``ws/matches/<id>/``: one channel-layer subscription
per match per process, the turn encoded once and written to every local socket) and
``naive`` (``ws/naive/matches/<id>/``: Channels' textbook one group membership per socket,
routed only for this benchmark).

    python bench/fanout.py                          # 10, 100, 500, 1000, 2000 spectators
    python bench/fanout.py --spectators 2000 --modes hub
    python bench/fanout.py --quick                  # smoke mode
"""

from __future__ import annotations

import argparse
import asyncio
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


async def spectate(port: int, path: str, n: int, expected: int, timeout: float) -> dict:
    import aiohttp

    delays: list[float] = []
    counts = [0] * n
    first = last = None
    url = f"ws://127.0.0.1:{port}{path}"
    origin = {"Origin": f"http://127.0.0.1:{port}"}

    handshakes = asyncio.Semaphore(HANDSHAKES)
    failed = [0]

    async def connect(session):
        """A websocket, handshakes ``HANDSHAKES`` at a time; one retried a few times (a
        loaded server answers slowly, and daphne drops a handshake not accepted in 5 s)."""
        async with handshakes:
            for attempt in range(5):
                try:
                    return await session.ws_connect(
                        url, headers=origin, max_msg_size=0, autoping=True
                    )
                except aiohttp.ClientError:
                    failed[0] += 1
                    await asyncio.sleep(0.5 * (attempt + 1))
            raise SystemExit(f"a spectator could not connect to {url} in 5 attempts")

    async def one(i: int, session, ready: asyncio.Event) -> None:
        nonlocal first, last
        async with await connect(session) as ws:
            ready.set()
            async for msg in ws:
                now = time.time()
                data = msg.data.encode() if isinstance(msg.data, str) else msg.data
                if data.startswith(b'{"type":"turn"'):
                    match = SENT_AT.search(data)
                    if match:
                        delays.append(now - float(match.group(1)))
                    counts[i] += 1
                    first = first or now
                    last = now
                elif data.startswith(b'{"type":"end"'):
                    return

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        events = [asyncio.Event() for _ in range(n)]
        tasks = [asyncio.ensure_future(one(i, session, events[i])) for i in range(n)]
        connected = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 300)
        connect_s = time.perf_counter() - connected
        print(READY, flush=True)  # the bench starts the match once every client is in
        _done, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
    histogram: dict[int, int] = {}  # delay in whole ms -> messages
    for delay in delays:
        key = int(delay * 1000)
        histogram[key] = histogram.get(key, 0) + 1
    return {
        "delivered": sum(counts),
        "expected": expected * n,
        "histogram": histogram,
        "first": first,
        "last": last,
        "connect_s": connect_s,
        "retries": failed[0],
        "unfinished": len(pending),
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
    }


def client_main(args) -> None:
    result = asyncio.run(spectate(args.port, args.path, args.n, args.expected, args.timeout))
    print(json.dumps(result))


def run_case(
    port: int, env: dict, mode: str, n: int, moves: int, rate: float, clients: int, pid: int
) -> dict:
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
    parts = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout + 180)
        if proc.returncode != 0:
            raise SystemExit(f"client failed: {err[-2000:]}")
        parts.append(json.loads(out.strip().splitlines()[-1]))
    result = merge(parts)
    result["cpu_s"] = cpu_seconds(pid)  # the web process's, connecting and sending included
    return result


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
    moves = 20 if args.quick else args.moves
    modes = args.modes.split(",")
    rows = []
    for mode in modes:
        for n in counts:
            with tempfile.TemporaryDirectory(prefix="arena-fanout-") as data:
                env = server_env(data)
                with served(env) as (port, server):
                    result = run_case(
                        port, env, mode, n, moves, args.rate, args.clients, server.pid
                    )
            rows.append((mode, n, result))
            print(f"  {mode} {n}: done", file=sys.stderr, flush=True)
    print(
        f"# fan-out on daphne (embedded default): one match at {args.rate:g} moves/s, {moves} moves, "
        f"spectators spread over {args.clients} client processes"
    )
    print(
        f"{'mode':<6} {'spectators':>10} {'delivered':>14} {'share':>7} {'msgs/s':>9} {'p50 ms':>8}"
        f" {'p99 ms':>9} {'connect s':>10} {'retries':>8} {'web CPU s':>10}"
    )
    for mode, n, r in rows:
        share = r["delivered"] / r["expected"] if r["expected"] else 0
        print(
            f"{mode:<6} {n:>10} {r['delivered']:>7}/{r['expected']:<6} {share:>7.1%} {r['rate']:>9,.0f}"
            f" {r['p50']:>8.0f} {r['p99']:>9.0f} {r['connect_s']:>10.1f} {r['retries']:>8}"
            f" {r['cpu_s']:>10.1f}"
        )
    print(
        "connect s: until the last spectator of a client process was in (the match starts"
        " about a second after every spectator is in); web CPU s: the daphne process's"
        " CPU from its start to the last spectator's end (connects, snapshots and turns)"
    )
    print("goal: every message delivered at 2000 spectators with p99 <= 300 ms (hub; issue 40)")


if __name__ == "__main__":
    main()
