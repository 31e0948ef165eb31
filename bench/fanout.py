"""Live fan-out: N websocket spectators of one match at R moves per second, on daphne.

For each spectator count it serves the platform (embedded default) with daphne, queues a
gconway match between built-in bots paced at R moves/s with a start a few seconds ahead,
connects N spectators (from a separate client process), and measures what they receive:
delivered messages per second, the share of expected messages delivered, and p50/p99 delay
from the moment the server published a turn (``sent_at``) to its arrival at a spectator.

Two modes in the same run: ``hub`` (``ws/matches/<id>/``: one channel-layer subscription
per match per process, the turn encoded once and written to every local socket) and
``naive`` (``ws/naive/matches/<id>/``: Channels' textbook one group membership per socket,
routed only for this benchmark).

    python bench/fanout.py                          # 10, 100, 500, 1000 spectators
    python bench/fanout.py --spectators 1000 --modes hub
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
from common import PRODUCTION_ENV, serving  # noqa: E402

SENT_AT = re.compile(rb'"sent_at":([0-9.]+)')


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


async def spectate(port: int, path: str, n: int, expected: int, timeout: float) -> dict:
    import aiohttp

    delays: list[float] = []
    counts = [0] * n
    first = last = None
    url = f"ws://127.0.0.1:{port}{path}"
    origin = {"Origin": f"http://127.0.0.1:{port}"}

    async def one(i: int, session, ready: asyncio.Event) -> None:
        nonlocal first, last
        async with session.ws_connect(url, headers=origin, max_msg_size=0, autoping=True) as ws:
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
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 120)
        connect_s = time.perf_counter() - connected
        _done, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
    delays.sort()
    delivered = sum(counts)
    span = (last - first) if first and last and last > first else float("nan")

    def pct(p: float) -> float:
        return delays[min(len(delays) - 1, int(p * len(delays)))] * 1000 if delays else float("nan")

    return {
        "delivered": delivered,
        "expected": expected * n,
        "rate": delivered / span if span == span else 0.0,
        "p50": pct(0.50),
        "p99": pct(0.99),
        "connect_s": connect_s,
        "unfinished": len(pending),
    }


def client_main(args) -> None:
    result = asyncio.run(spectate(args.port, args.path, args.n, args.expected, args.timeout))
    print(json.dumps(result))


def run_case(port: int, env: dict, mode: str, n: int, moves: int, rate: float) -> dict:
    start_in = 3 + n / 250  # time to connect everyone before the first move
    match_id = enqueue(env, moves, rate, start_in)
    path = f"/ws/matches/{match_id}/" if mode == "hub" else f"/ws/naive/matches/{match_id}/"
    timeout = start_in + moves / rate * 3 + 30
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--client",
            "--port",
            str(port),
            "--path",
            path,
            "--n",
            str(n),
            "--expected",
            str(moves),
            "--timeout",
            str(timeout),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout + 180,
    )
    if done.returncode != 0:
        raise SystemExit(f"client failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spectators", default="10,100,500,1000")
    parser.add_argument("--modes", default="hub,naive")
    parser.add_argument("--moves", type=int, default=200, help="turns of the match")
    parser.add_argument("--rate", type=float, default=20.0, help="moves per second")
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
                with serving(env) as port:
                    result = run_case(port, env, mode, n, moves, args.rate)
            rows.append((mode, n, result))
            print(f"  {mode} {n}: done", file=sys.stderr, flush=True)
    print(
        f"# fan-out on daphne (embedded default): one match at {args.rate:g} moves/s, {moves} moves, "
        "spectators in one separate client process"
    )
    print(
        f"{'mode':<6} {'spectators':>10} {'delivered':>14} {'share':>7} {'msgs/s':>9} {'p50 ms':>8} {'p99 ms':>9}"
    )
    for mode, n, r in rows:
        share = r["delivered"] / r["expected"] if r["expected"] else 0
        print(
            f"{mode:<6} {n:>10} {r['delivered']:>7}/{r['expected']:<6} {share:>7.1%} {r['rate']:>9,.0f}"
            f" {r['p50']:>8.0f} {r['p99']:>9.0f}"
        )
    print("goal: every message delivered at 1000 spectators with p99 <= 300 ms (hub)")


if __name__ == "__main__":
    main()
