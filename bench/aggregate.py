"""Aggregate HTTP tic-tac-toe games per second: Arena's concurrent matches against
kaggle-environments, both playing the same bot server.

One ``manage.py serve_bot tictactoe:random --kaggle`` process answers both sides (the
native BotsArena route for Arena, ``POST /kaggle`` for kaggle's URL agents):

- kaggle-environments: ``env.run([url, url])`` with two URL agents, game after game for
  ``--seconds`` (kaggle plays one game at a time, every move a fresh ``requests.post``), run
  by an interpreter that has kaggle-environments 1.14.15, the last release with tictactoe
  (``--anchor-python``; default ``$ARENA_ANCHOR_PYTHON``, ``/tmp/anchors/bin/python``, then
  this interpreter). Only games that ended normally count.
- arena platform: M matches between two HTTP bots on the native route, created by the
  service and played by C concurrent ``run_match`` calls in this process, as the embedded
  runner does: claimed under a lease, every move through the SSRF-safe egress client and
  the runner, every turn stored in SQLite (by the process's writer process, as a runner
  process stores; ``ARENA_WRITER_PROCESS=false``: its database thread), broadcast, the match
  finished and rated. M is
  sized from a warm-up round to last about ``--seconds``; afterwards every match must have
  finished without a forfeit, with all its turns stored.
- arena match loop: the same M games, C at a time, through ``competition.matches.loop.play`` with
  two ``HttpTransport``s and no database: what the storage and the service cost.
- arena platform, P runner processes: the embedded runner is one process (one GIL, so about
  one core); ``manage.py runmatches`` processes on the same SQLite database are how one
  machine uses more cores. One row for each P of ``--processes`` (default 1, 2 and one per
  core, each count once): P processes play M queued matches C at a time each (M sized to
  last about ``--seconds``); the rate is M over the span from the first match started to the
  last one finished (the database's timestamps: process start-up is not counted), with its
  scaling against 1 process. Checked like the in-process run.

    python bench/aggregate.py                       # 10 s per setup, 32 concurrent matches
    python bench/aggregate.py --concurrency 8,32,128
    python bench/aggregate.py --processes 1,2,4     # runner-process rows to compare
    python bench/aggregate.py --quick               # smoke mode (a few seconds; 1 and 2 processes)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, free_port, wait_port  # noqa: E402
from overhead import setup_django  # noqa: E402

ANCHOR_DEFAULT = "/tmp/anchors/bin/python"
PROBE = "from kaggle_environments import make; make('tictactoe')"

#: run by the anchor interpreter: argv = url, seconds; prints one JSON line last
KAGGLE = r"""
import json, sys, time
from kaggle_environments import make

url, seconds = sys.argv[1], float(sys.argv[2])
env = make("tictactoe")
env.run([url, url])  # warm-up: imports, first connections
games, failed, errors = 0, 0, []
started = time.perf_counter()
while time.perf_counter() - started < seconds:
    try:
        last = env.run([url, url])[-1]
    except Exception as exc:
        failed, env = failed + 1, make("tictactoe")
        errors.append(repr(exc)[:200])
        continue
    if all(s.status == "DONE" and s.reward is not None for s in last):
        games += 1
    else:
        failed += 1
        errors.append(str([(s.status, s.reward) for s in last]))
print(json.dumps({"games": games, "seconds": time.perf_counter() - started,
                  "failed": failed, "errors": errors[:3]}))
"""


def anchor_python(explicit: str | None) -> str | None:
    """The first interpreter that can make kaggle's tictactoe, or None."""
    candidates = (
        [explicit]
        if explicit
        else [os.environ.get("ARENA_ANCHOR_PYTHON"), ANCHOR_DEFAULT, sys.executable]
    )
    for python in candidates:
        if python and Path(python).exists():
            probe = subprocess.run([python, "-c", PROBE], capture_output=True, timeout=120)
            if probe.returncode == 0:
                return python
    return None


def kaggle(python: str, url: str, seconds: float) -> dict:
    done = subprocess.run(
        [python, "-c", KAGGLE, url, str(seconds)],
        capture_output=True,
        text=True,
        timeout=seconds + 300,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise SystemExit(f"the kaggle-environments run failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])  # kaggle prints "Loading environment ... failed" warnings first


def _sync_make(url: str, first: int, count: int) -> list[int]:
    """Queue ``count`` matches between two HTTP bots at ``url`` (seeds from ``first``)."""
    from django.contrib.auth import get_user_model

    from competition.matches.lifecycle import create_match
    from competition.models.bots import Bot

    user, _ = get_user_model().objects.get_or_create(username="bench")
    bots = [
        Bot.objects.get_or_create(
            owner=user, game="tictactoe", name=f"http{s}", defaults={"kind": "http", "target": url}
        )[0]
        for s in (0, 1)
    ]
    return [
        create_match("tictactoe", bots, seed=i, dispatch_now=False).pk
        for i in range(first, first + count)
    ]


def _sync_check(ids: list[int]) -> None:
    """Every match finished without a forfeit and with all its turns stored."""
    from django.db.models import Count

    from competition.models import Match, MatchStatus, TurnArchive

    # rows while a match runs, one archive once it ended (compaction): count either form
    stored = dict(
        Match.objects.filter(pk__in=ids).annotate(n=Count("turns")).values_list("pk", "n")
    )
    for pk, turns in TurnArchive.objects.filter(match_id__in=ids).values_list("match_id", "turns"):
        stored[pk] += turns
    for pk, status, reason, turn_count in Match.objects.filter(pk__in=ids).values_list(
        "pk", "status", "reason", "turn_count"
    ):
        if status not in (MatchStatus.FINISHED, MatchStatus.FORFEITED) or reason == "forfeit":
            raise SystemExit(f"match {pk}: {status} ({reason or 'no reason'})")
        if not turn_count or stored[pk] != turn_count:
            raise SystemExit(f"match {pk}: {stored[pk]} turns stored, turn_count {turn_count}")
    if len(stored) != len(ids):
        raise SystemExit(f"{len(ids) - len(stored)} matches missing")


async def platform(url: str, concurrency: int, seconds: float, warmup: int) -> tuple[int, float]:
    """(matches, wall seconds) of matches played C at a time by ``run_match``."""
    from asgiref.sync import sync_to_async

    from competition.runners.play import run_match

    def make(first: int, count: int):
        return sync_to_async(_sync_make)(url, first, count)

    check = sync_to_async(_sync_check)

    async def play_all(ids: list[int]) -> float:
        queue = iter(ids)

        async def worker() -> None:
            for match_id in queue:
                if await run_match(match_id) != match_id:
                    raise SystemExit(f"match {match_id} could not be claimed")

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started

    # the warm-up round opens connections, fills caches and sizes the timed round
    ids = await make(0, warmup)
    rate = len(ids) / await play_all(ids)
    await check(ids)
    ids = await make(warmup, max(concurrency, round(rate * seconds)))
    took = await play_all(ids)
    await check(ids)
    return len(ids), took


def runner_processes(
    url: str, data: str, processes: int, concurrency: int, matches: int
) -> tuple[int, float]:
    """(matches, seconds from the first start to the last finish) played by ``processes``
    ``manage.py runmatches --once`` processes sharing this benchmark's SQLite database."""
    from django.db.models import Max, Min

    from competition.models import Match

    ids = _sync_make(url, Match.objects.count() + 1, matches)
    env = {**os.environ, "ARENA_DATA_DIR": data}
    argv = [
        sys.executable,
        str(ROOT / "manage.py"),
        "runmatches",
        "--once",
        "--concurrency",
        str(concurrency),
    ]
    runners = [
        subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(processes)
    ]
    for proc in runners:
        _out, err = proc.communicate(timeout=600)
        if proc.returncode:
            raise SystemExit(f"runmatches failed:\n{err.decode(errors='replace')[-3000:]}")
    _sync_check(ids)
    span = Match.objects.filter(pk__in=ids).aggregate(first=Min("started"), last=Max("finished"))
    return len(ids), (span["last"] - span["first"]).total_seconds()


async def match_loop(url: str, concurrency: int, games: int) -> float:
    """Wall seconds of ``games`` games played C at a time by ``runner.play``, no database."""
    from bots.transports.http import HttpTransport
    from competition.matches.loop import play
    from games import get_game

    game = get_game("tictactoe")
    secret = secrets.token_urlsafe(32)  # signed like a registered bot's requests
    queue = iter(range(games))

    async def worker() -> None:
        for i in queue:
            transports = [
                HttpTransport(url, game=game, match_id=str(i), seat=s, secret=secret)
                for s in (0, 1)
            ]
            result = await play(game, transports, seed=i, match_id=str(i))
            faults = {f for t in result.turns for f in t.faults if f is not None}
            if result.forfeited or faults - {"ok"}:
                raise SystemExit(f"game {i}: {result.outcome.reason}, faults {sorted(faults)}")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


async def ours(
    url: str, concurrencies: list[int], seconds: float, warmup: int
) -> list[tuple[str, int, float]]:
    from django.conf import settings

    from bots import egress
    from competition.matches import batch, writer

    if settings.ARENA_WRITER_PROCESS:  # as a runner process stores (``manage.py runmatches``)
        batch.use_writer(writer.client)
    rows = []
    try:
        for c in concurrencies:
            games, took = await platform(url, c, seconds, max(warmup, 2 * c))
            rows.append((f"arena platform, c={c}", games, took))
            rows.append((f"arena match loop, c={c}", games, await match_loop(url, c, games)))
    finally:
        batch.use_writer(None)
        writer.close()
        await egress.close_session()
    return rows


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="about how long each setup plays"
    )
    parser.add_argument(
        "--concurrency", default="32", help="concurrent matches (a comma-separated list to compare)"
    )
    parser.add_argument("--anchor-python", help="an interpreter with kaggle-environments 1.14.15")
    parser.add_argument(
        "--processes",
        default="1,2,cores",
        help="runmatches processes sharing the database, one row each (a comma-separated list; "
        "cores: os.cpu_count(); 0: no such rows)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke mode: 1 s per setup, 8 concurrent matches"
    )
    args = parser.parse_args()
    args.seconds = 1.0 if args.quick else args.seconds
    args.concurrencies = [8] if args.quick else [int(x) for x in args.concurrency.split(",") if x]
    if args.seconds <= 0 or not args.concurrencies or min(args.concurrencies) < 1:
        parser.error("--seconds and --concurrency must be positive")
    try:
        args.processes = process_counts(args.processes)
    except ValueError:
        parser.error(
            "--processes takes whole numbers or 'cores', separated by commas, e.g. 1,2,cores"
        )
    if args.quick:
        args.processes = [p for p in args.processes if p <= 2]
    return args


def process_counts(spec: str) -> list[int]:
    """The runner-process counts of ``spec`` ("1,2,cores"), in order, each once, 0 dropped."""
    counts = [(os.cpu_count() or 1) if x.strip() == "cores" else int(x) for x in spec.split(",")]
    if any(c < 0 for c in counts):
        raise ValueError(spec)
    return sorted({c for c in counts if c > 0})


def main() -> None:
    args = arguments()
    seconds, concurrencies = args.seconds, args.concurrencies
    python = anchor_python(args.anchor_python)
    os.environ.update(PRODUCTION_ENV)
    port = free_port()
    bot = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "serve_bot",
            "tictactoe:random",
            "--kaggle",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, bot)
        url = f"http://127.0.0.1:{port}/"
        anchor = kaggle(python, url + "kaggle", seconds) if python else None
        with tempfile.TemporaryDirectory(prefix="arena-bench-") as data:
            setup_django(data)
            rows = asyncio.run(ours(url, concurrencies, seconds, warmup=8 if args.quick else 64))
            c = concurrencies[-1]
            _name, games, took = rows[-2]  # the in-process platform row at that concurrency
            scaling = []
            for processes in args.processes:
                total = max(processes * c, round(games / took * seconds * processes))
                played, span = runner_processes(url, data, processes, c, total)
                scaling.append((processes, played, span))
    finally:
        bot.terminate()
        bot.wait(10)
    report(anchor, rows, scaling, c)


def report(anchor: dict | None, rows: list, scaling: list, c: int) -> None:
    base = anchor["games"] / anchor["seconds"] if anchor and anchor["games"] else None

    def times_kaggle(rate: float) -> str:
        return f"{rate / base:.1f}" if base else "-"

    print(
        "# aggregate HTTP tic-tac-toe games/s, one serve_bot tictactoe:random process for everyone"
        f" ({os.cpu_count()} cores shared); x 1 process: the runner-process rows against 1 such"
        " process (games from the first start to the last finish, process start-up not counted)"
    )
    print("| setup | games | seconds | games/s | x kaggle | x 1 process |")
    print("|---|---:|---:|---:|---:|---:|")
    if anchor is None:
        print("| kaggle-environments | not installed | | | | |")
    else:
        print(
            f"| kaggle-environments | {anchor['games']} | {anchor['seconds']:.3f} | "
            f"{anchor['games'] / anchor['seconds']:.1f} | {'1.0' if base else '-'} | |"
        )
    for name, games, took in rows:
        rate = games / took
        print(f"| {name} | {games} | {took:.3f} | {rate:.1f} | {times_kaggle(rate)} | |")
    one = scaling[0][1] / scaling[0][2] if scaling and scaling[0][0] == 1 else None
    for processes, games, span in scaling:
        rate = games / span
        name = f"arena platform, {processes} runner process{'es' if processes > 1 else ''}"
        factor = f"{rate / one:.2f}" if one else "-"
        print(
            f"| {name}, c={c} each | {games} | {span:.3f} | {rate:.1f} | {times_kaggle(rate)}"
            f" | {factor} |"
        )
    if anchor and anchor["failed"]:
        print(
            f"kaggle-environments: {anchor['failed']} games did not end normally (not counted), e.g. "
            f"{'; '.join(anchor['errors'])}"
        )
    rates = {name: games / took for name, games, took in rows}
    for name, rate in rates.items():
        if name.startswith("arena platform, c="):
            loop = rates.get(name.replace("arena platform", "arena match loop"))
            if loop:
                print(f"{name}: platform / match loop {rate / loop:.2f}")
    best = max([rates[f"arena platform, c={c}"]] + [g / s for _p, g, s in scaling])
    ratio = rates[f"arena platform, c={c}"] / rates[f"arena match loop, c={c}"]
    print(
        "goals (issue 40): the platform >= 15x kaggle-environments"
        + (
            f" (best row {best / base:.1f}x: {'met' if best / base >= 15 else 'not met'})"
            if base
            else ""
        )
        + f"; platform / match loop >= 0.7 (c={c}: {ratio:.2f}, {'met' if ratio >= 0.7 else 'not met'})"
    )


if __name__ == "__main__":
    main()
