"""Load: spectators on many live matches plus API clients, on the embedded default.

Serves the platform with daphne (SQLite, in-process runner), queues ``--matches`` gconway
matches between built-in bots paced at ``--rate`` moves/s (starting together a few seconds
ahead), connects ``--spectators`` websocket clients spread over them and runs ``--api``
REST clients in a loop (lists, details, turns since N, leaderboards, the schema) for the
duration. It reports errors, dropped turns (a spectator that stayed connected must get
every turn exactly once, in order) and p50/p99 turn delivery latency, and exits non-zero
on any error or drop.

    python bench/load.py                 # 200 spectators, 20 matches, 50 API clients, 60 s
    python bench/load.py --quick         # CI smoke mode (seconds)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import serving
from fanout import ROOT, SENT_AT, server_env

NUMBER = re.compile(rb'"turn":\{"number":(\d+)')


def enqueue(env: dict, count: int, moves: int, rate: float, start_in: float) -> list[int]:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "enqueue",
            "gconway",
            "builtin:random",
            "builtin:grower",
            "--count",
            str(count),
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
    return json.loads(done.stdout)


def token(env: dict) -> str:
    script = (
        "from django.contrib.auth import get_user_model\n"
        "from competition.models.accounts import ApiToken\n"
        "u, _ = get_user_model().objects.get_or_create(username='load')\n"
        "print(ApiToken.objects.issue(u, 'bench')[1])"
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", script],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


#: what each API client of the load asks for, in turn
API_PATHS = [
    "/api/matches/?game=gconway",
    "/api/games/",
    "/api/leaderboard/gconway/",
    "/api/bots/",
    "/api/events/",
]


async def run(
    port: int,
    match_ids: list[int],
    spectators: int,
    api_clients: int,
    moves: int,
    duration: float,
    key: str,
) -> dict:
    import aiohttp

    origin = {"Origin": f"http://127.0.0.1:{port}"}
    delays: list[float] = []
    problems: list[str] = []
    api = {"requests": 0, "errors": 0}
    stop = asyncio.Event()

    async def spectator(match_id: int, session) -> None:
        seen: list[int] = []
        url = f"ws://127.0.0.1:{port}/ws/matches/{match_id}/"
        try:
            async with session.ws_connect(url, headers=origin, max_msg_size=0) as ws:
                async for msg in ws:
                    data = msg.data.encode()
                    if data.startswith(b'{"type":"snapshot"'):
                        seen += [t["number"] for t in json.loads(data)["turns"]]
                    elif data.startswith(b'{"type":"turn"'):
                        seen.append(int(NUMBER.search(data).group(1)))
                        delays.append(time.time() - float(SENT_AT.search(data).group(1)))
                    elif data.startswith(b'{"type":"end"'):
                        break
        except Exception as exc:
            problems.append(f"spectator of {match_id}: {exc!r}")
            return
        if seen != list(range(1, moves + 1)):
            problems.append(
                f"spectator of {match_id}: got {len(seen)} turns, not 1..{moves} in order"
            )

    async def api_client(i: int, session) -> None:
        headers = {"Authorization": f"Token {key}"}
        paths = API_PATHS
        n = 0
        while not stop.is_set():
            match_id = match_ids[(i + n) % len(match_ids)]
            for path in (
                paths[n % len(paths)],
                f"/api/matches/{match_id}/",
                f"/api/matches/{match_id}/turns/?since={n % 50}",
            ):
                try:
                    async with session.get(f"http://127.0.0.1:{port}{path}", headers=headers) as r:
                        await r.read()
                        api["requests"] += 1
                        if r.status >= 400:
                            api["errors"] += 1
                            problems.append(f"API {path}: HTTP {r.status}")
                except Exception as exc:
                    api["errors"] += 1
                    problems.append(f"API {path}: {exc!r}")
            n += 1

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        watchers = [
            asyncio.ensure_future(spectator(match_ids[i % len(match_ids)], session))
            for i in range(spectators)
        ]
        clients = [asyncio.ensure_future(api_client(i, session)) for i in range(api_clients)]
        started = time.perf_counter()
        _done, pending = await asyncio.wait(watchers, timeout=duration * 3 + 60)
        stop.set()
        await asyncio.gather(*clients)
        elapsed = time.perf_counter() - started
        for task in pending:
            task.cancel()
            problems.append("a spectator never saw its match end")
    return summary(delays, problems, api, elapsed)


def summary(delays: list[float], problems: list[str], api: dict, elapsed: float) -> dict:
    delays.sort()

    def pct(p):
        return delays[min(len(delays) - 1, int(p * len(delays)))] * 1000 if delays else float("nan")

    return {
        "problems": problems,
        "turns": len(delays),
        "p50": pct(0.5),
        "p99": pct(0.99),
        "api": api,
        "elapsed": elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spectators", type=int, default=200)
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--api", type=int, default=50, help="concurrent REST clients")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of play")
    parser.add_argument("--rate", type=float, default=5.0, help="moves per second per match")
    parser.add_argument("--quick", action="store_true", help="CI smoke mode")
    args = parser.parse_args()
    if args.quick:
        args.spectators, args.matches, args.api, args.duration = 20, 4, 5, 4.0
    moves = max(1, int(args.duration * args.rate))
    with tempfile.TemporaryDirectory(prefix="arena-load-") as data:
        env = server_env(data)
        env["ARENA_API_THROTTLE_SCALE"] = "1000"  # the API clients here are not abusers
        with serving(env) as port:
            key = token(env)
            ids = enqueue(env, args.matches, moves, args.rate, start_in=3 + args.spectators / 200)
            result = asyncio.run(
                run(port, ids, args.spectators, args.api, moves, args.duration, key)
            )
    api = result["api"]
    print(
        f"# load on daphne (embedded default): {args.spectators} spectators over {args.matches} matches "
        f"({moves} moves at {args.rate:g}/s), {args.api} API clients, {result['elapsed']:.0f} s"
    )
    print(f"{'turns delivered':<22} {result['turns']:>10,}")
    print(f"{'turn latency p50 ms':<22} {result['p50']:>10.0f}")
    print(f"{'turn latency p99 ms':<22} {result['p99']:>10.0f}")
    print(
        f"{'API requests':<22} {api['requests']:>10,}  ({api['requests'] / result['elapsed']:,.0f}/s)"
    )
    print(f"{'API errors':<22} {api['errors']:>10,}")
    print(f"{'problems':<22} {len(result['problems']):>10,}")
    for problem in result["problems"][:10]:
        print("  " + problem)
    if result["problems"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
