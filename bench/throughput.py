"""Throughput: matches per minute, embedded default (1 and 2 runner processes) versus 1, 2
and 4 Celery workers.

Each configuration plays the same queue of tic-tac-toe matches to the end and reports
matches per minute, with built-in bots (``perfect`` v ``random``: the platform's own cost)
and with HTTP bots (two ``serve_bot tictactoe:random`` processes: every move over loopback
HTTP through the egress client):

- ``embedded, N runners``: ``manage.py serve --runners N`` (daphne and N runner processes
  beside it, ``competition.runners.fleet``; 0: the runner inside the daphne process) on
  SQLite (``--runners``, default ``1,2``). Besides matches per minute (wall clock from the
  queueing, ``enqueue``'s start-up included) it prints games per second over the span from
  the first match started to the last one finished (the database's timestamps);
- ``celery xN``: N ``celery -A competition worker -P threads -c 16`` processes on
  PostgreSQL and Redis, started here for the run (Debian's postgresql and redis-server).

    python bench/throughput.py                  # 200 matches per configuration
    python bench/throughput.py --matches 400 --workers 1,2,4
    python bench/throughput.py --runners 0,1,2 --workers ''   # the embedded default only
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


def span_sqlite(db: Path, ids: list[int]) -> float:
    """Seconds from the first match started to the last one finished."""
    from datetime import datetime

    with sqlite3.connect(db, timeout=30) as conn:
        marks = ",".join("?" * len(ids))
        first, last = conn.execute(
            f"select min(started), max(finished) from competition_match where id in ({marks})",
            ids,
        ).fetchone()
    return (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()


def pending_pg(url: str, ids: list[int]) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            "select count(*) from competition_match where id = any(%s) "
            "and status in ('queued','running')",
            (ids,),
        ).fetchone()[0]


def play_queue(env, seats: list[str], matches: int, pending, span=None) -> float:
    """Queue the matches, wait until all are done; matches per minute (and, with ``span``,
    games per second over the database's span: ``(per minute, per second)``)."""
    started = time.perf_counter()
    ids = json.loads(
        manage(env, "enqueue", "tictactoe", *seats, "--count", str(matches), "--seed", "1")
    )
    deadline = started + 600
    while pending(ids):
        if time.perf_counter() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.05)
    per_minute = matches / (time.perf_counter() - started) * 60
    return per_minute if span is None else (per_minute, matches / span(ids))


def bot_servers(env):
    ports = [free_port(), free_port()]
    argvs = [
        [sys.executable, str(ROOT / "manage.py"), "serve_bot", "tictactoe:random", "--port", str(p)]
        for p in ports
    ]
    return ports, processes(argvs, env)


def run_embedded(matches: int, kinds: list[str], runners: int) -> dict[str, float]:
    results = {}
    with tempfile.TemporaryDirectory(prefix="arena-tp-") as data:
        env = base_env(ARENA_DATA_DIR=data)
        manage(env, "migrate", "--noinput")
        port = free_port()
        server = [
            [sys.executable, str(ROOT / "manage.py"), "serve", "--no-demo", "--port", str(port)]
            + ["--runners", str(runners)]
        ]
        ports, bots = bot_servers(env)
        with processes(server, env), bots:
            wait_port(port)
            for p in ports:
                wait_port(p)
            db = Path(data) / "arena.sqlite3"
            # the runner processes are up once they have played one match
            play_queue(
                env, ["builtin:random", "builtin:random"], 1, lambda i: pending_sqlite(db, i)
            )
            for kind in kinds:
                seats = (
                    ["builtin:perfect", "builtin:random"]
                    if kind == "builtin"
                    else [f"http://127.0.0.1:{p}/" for p in ports]
                )
                results[kind], results[f"{kind}/s"] = play_queue(
                    env,
                    seats,
                    matches,
                    lambda ids: pending_sqlite(db, ids),
                    lambda ids: span_sqlite(db, ids),
                )
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
        "--runners", default="1,2", help="runner processes of the embedded rows (0: in process)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke mode: 10 matches, the last --runners only"
    )
    args = parser.parse_args()
    matches = 10 if args.quick else args.matches
    counts = [] if args.quick else [int(x) for x in args.workers.split(",") if x]
    kinds = ["builtin", "http"]
    runners = [int(x) for x in args.runners.split(",") if x]
    if args.quick:
        runners = runners[-1:]
    rows = [(f"embedded, {n} runners (SQLite)", run_embedded(matches, kinds, n)) for n in runners]
    for n in counts:
        rows.append((f"celery x{n} (PostgreSQL)", run_celery(n, matches, kinds)))
    print(
        f"# throughput: {matches} tic-tac-toe matches per configuration, 2 cores shared by everything"
    )
    print(
        f"{'configuration':<30} {'built-in bots':>14} {'HTTP bots':>10}   (matches/min)"
        f" {'built-in':>9} {'HTTP':>7}   (games/s, first start to last finish)"
    )
    for name, result in rows:
        per_second = (
            f" {result['builtin/s']:>9,.1f} {result['http/s']:>7,.1f}" if "http/s" in result else ""
        )
        print(
            f"{name:<30} {result['builtin']:>14,.0f} {result['http']:>10,.0f}{' ' * 16}{per_second}"
        )


if __name__ == "__main__":
    main()
