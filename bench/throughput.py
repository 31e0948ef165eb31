"""Throughput: matches per minute, embedded default versus 1, 2 and 4 Celery workers.

Each configuration plays the same queue of tic-tac-toe matches to the end and reports
matches per minute, with built-in bots (``perfect`` v ``random``: the platform's own cost)
and with HTTP bots (two ``serve_bot tictactoe:random`` processes: every move over loopback
HTTP through the egress client):

- ``embedded``: ``manage.py serve`` (daphne + the in-process runner) on SQLite;
- ``celery xN``: N ``celery -A competition worker -P threads -c 16`` processes on
  PostgreSQL and Redis, started here for the run (Debian's postgresql and redis-server).

    python bench/throughput.py                  # 200 matches per configuration
    python bench/throughput.py --matches 400 --workers 1,2,4
    python bench/throughput.py --quick          # smoke mode (SQLite only)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, free_port, wait_port  # noqa: E402

from tests.servers import postgres_server, redis_server  # noqa: E402  (real servers, as in CI)


def base_env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(
        {
            "LOG_LEVEL": "WARNING",
            "ARENA_BOT_ALLOW_NETWORKS": "127.0.0.0/8",
            **PRODUCTION_ENV,
            **extra,
        }
    )
    return env


def manage(env, *args) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"manage.py {args[0]} failed:\n{done.stderr[-3000:]}")
    return done.stdout


@contextlib.contextmanager
def processes(argvs: list[list[str]], env: dict):
    procs = [
        subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for argv in argvs
    ]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def pending_sqlite(db: Path, ids: list[int]) -> int:
    with sqlite3.connect(db, timeout=30) as conn:
        marks = ",".join("?" * len(ids))
        return conn.execute(
            f"select count(*) from competition_match where id in ({marks}) "
            "and status in ('queued','running')",
            ids,
        ).fetchone()[0]


def pending_pg(url: str, ids: list[int]) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            "select count(*) from competition_match where id = any(%s) "
            "and status in ('queued','running')",
            (ids,),
        ).fetchone()[0]


def play_queue(env, seats: list[str], matches: int, pending) -> float:
    """Queue the matches, wait until all are done; matches per minute."""
    started = time.perf_counter()
    ids = json.loads(
        manage(env, "enqueue", "tictactoe", *seats, "--count", str(matches), "--seed", "1")
    )
    deadline = started + 600
    while pending(ids):
        if time.perf_counter() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.05)
    return matches / (time.perf_counter() - started) * 60


def bot_servers(env):
    ports = [free_port(), free_port()]
    argvs = [
        [sys.executable, str(ROOT / "manage.py"), "serve_bot", "tictactoe:random", "--port", str(p)]
        for p in ports
    ]
    return ports, processes(argvs, env)


def run_embedded(matches: int, kinds: list[str]) -> dict[str, float]:
    results = {}
    with tempfile.TemporaryDirectory(prefix="arena-tp-") as data:
        env = base_env(ARENA_DATA_DIR=data)
        manage(env, "migrate", "--noinput")
        port = free_port()
        server = [
            [sys.executable, str(ROOT / "manage.py"), "serve", "--no-demo", "--port", str(port)]
        ]
        ports, bots = bot_servers(env)
        with processes(server, env), bots:
            wait_port(port)
            for p in ports:
                wait_port(p)
            db = Path(data) / "arena.sqlite3"
            for kind in kinds:
                seats = (
                    ["builtin:perfect", "builtin:random"]
                    if kind == "builtin"
                    else [f"http://127.0.0.1:{p}/" for p in ports]
                )
                results[kind] = play_queue(env, seats, matches, lambda ids: pending_sqlite(db, ids))
    return results


def run_celery(workers: int, matches: int, kinds: list[str]) -> dict[str, float]:
    results = {}
    with postgres_server() as pg, redis_server() as redis_url:
        env = base_env(DATABASE_URL=pg.url, REDIS_URL=redis_url, ARENA_RUNNER="celery")
        manage(env, "migrate", "--noinput")
        argvs = [
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "competition",
                "worker",
                "-P",
                "threads",
                "-c",
                "16",
                "-n",
                f"w{i}@%h",
                "--without-gossip",
                "--without-mingle",
                "--loglevel=WARNING",
            ]
            for i in range(workers)
        ]
        ports, bots = bot_servers(env)
        with processes(argvs, env), bots:
            for p in ports:
                wait_port(p)
            time.sleep(3)  # workers connect to the broker
            for kind in kinds:
                seats = (
                    ["builtin:perfect", "builtin:random"]
                    if kind == "builtin"
                    else [f"http://127.0.0.1:{p}/" for p in ports]
                )
                results[kind] = play_queue(env, seats, matches, lambda ids: pending_pg(pg.url, ids))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--workers", default="1,2,4", help="Celery worker counts ('' for none)")
    parser.add_argument(
        "--quick", action="store_true", help="smoke mode: 10 matches, embedded only"
    )
    args = parser.parse_args()
    matches = 10 if args.quick else args.matches
    counts = [] if args.quick else [int(x) for x in args.workers.split(",") if x]
    kinds = ["builtin", "http"]
    rows = [("embedded (SQLite)", run_embedded(matches, kinds))]
    for n in counts:
        rows.append((f"celery x{n} (PostgreSQL)", run_celery(n, matches, kinds)))
    print(
        f"# throughput: {matches} tic-tac-toe matches per configuration, 2 cores shared by everything"
    )
    print(f"{'configuration':<26} {'built-in bots':>16} {'HTTP bots':>12}   (matches/min)")
    for name, result in rows:
        print(f"{name:<26} {result['builtin']:>16,.0f} {result['http']:>12,.0f}")


if __name__ == "__main__":
    main()
