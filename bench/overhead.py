"""Per-move platform overhead on the embedded default, against a raw round trip.

Both sides talk to the same HTTP bots, each in its own process and answering at once
(``manage.py serve_bot``: tic-tac-toe's ``random``, a few microseconds a move; gconway's
``dummy``, which places no cell, since its ``random`` spends ~0.1 ms a move computing its
reach in two bot processes that share the machine's two cores with the platform), with the
same client library (aiohttp, one keep-alive session):

- raw: the game's first message POSTed to the bots and the reply read, N times in a row,
  in the match's pattern: for an alternating game, one seat's bot then the other's; for a
  simultaneous game, both seats at once, as the runner asks them;
- platform: whole matches between the two HTTP bots through the real stack: the match is
  created by the service and claimed under a lease, every move goes through the SSRF-safe
  egress client and the runner, every turn is stored in SQLite (lease-fenced transaction)
  and broadcast to a hub subscriber (the embedded default's in-memory channel layer hands
  messages to the hub directly).

Two per-move figures: "in play", the mean interval between consecutive turns of a match
(each turn asked over HTTP, judged, applied, then stored and broadcast), and "whole
match", the matches' wall time (claim, greetings, finish and rating included) divided by
their turns. Tic-tac-toe matches are short (5-9 turns plus two greetings), so per-match
costs weigh on each of their moves; gconway matches are 500 simultaneous turns.

A shared machine's speed drifts by tens of percent from one second to the next, so the
raw and platform measurements alternate in short rounds, each platform round between two
raw ones: a round's ratios are its platform figures over the mean of the raw figures just
before and just after it (a drift over the round cancels out), and the table shows the
medians of the rounds' ratios (and of each figure); each round's in-play ratio is printed
under it. The platform runs in production mode (``DEBUG=false``), as an operator runs it.

A CPU table follows: this process's CPU time (every thread) per move over the same
intervals, the raw client's and the platform's in play, and the median of the rounds' ratios.
Other work on a shared machine moves it far less than the wall clock, so it is what compares
two versions measured on a busy machine (the wall-clock ratios are the goal's, on an idle one).

    python bench/overhead.py            # both games
    python bench/overhead.py --quick    # smoke mode
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, cpu_seconds, free_port  # noqa: E402


def setup_django(data_dir: str) -> None:
    os.environ.update(PRODUCTION_ENV)
    os.environ["ARENA_DATA_DIR"] = data_dir
    os.environ["ARENA_BOT_ALLOW_NETWORKS"] = "127.0.0.0/8"
    os.environ["DJANGO_SETTINGS_MODULE"] = "competition.settings"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from competition.plumbing.dbthreads import share_the_gil

    share_the_gil()  # this process plays matches, as a runner process does


#: the built-in bot each game's HTTP bots run: one that answers at once
INSTANT = {"tictactoe": "random", "gconway": "dummy"}


def start_bot(port: int, game: str = "tictactoe") -> subprocess.Popen:
    name = INSTANT.get(game, "random")
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "serve_bot",
            f"{game}:{name}",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the bot server did not start")


def first_message(game_slug: str, seat: int) -> bytes:
    from games import Context, get_game

    game = get_game(game_slug)
    state = game.initial_state(seed=0)
    return game.encode_message(game.observation(state, seat, Context(match_id="1"))).encode()


async def raw(urls: list[str], game_slug: str, n: int) -> float:
    """Mean ms per move: one POST per seat to move (seats of a simultaneous game at once,
    those of an alternating game in turn)."""
    import aiohttp

    from games import get_game

    game = get_game(game_slug)
    seats = game.to_move(game.initial_state(seed=0))
    moves = [tuple(seats)] if len(seats) > 1 else [(s,) for s in range(game.num_players)]
    bodies = {s: first_message(game_slug, s) for s in range(game.num_players)}
    headers = {"Content-Type": "application/json"}

    async def call(session, seat):
        async with session.post(urls[seat], data=bodies[seat], headers=headers) as r:
            await r.read()

    async def move(session, i):
        asked = moves[i % len(moves)]
        if len(asked) == 1:
            await call(session, asked[0])
        else:
            await asyncio.gather(*(call(session, s) for s in asked))

    async with aiohttp.ClientSession() as session:
        for i in range(20):  # warm-up
            await move(session, i)
        started, cpu = time.perf_counter(), time.process_time()
        for i in range(n):
            await move(session, i)
        return (time.perf_counter() - started) / n * 1000, (time.process_time() - cpu) / n * 1e6


def make_match(urls: list[str], game_slug: str, options, seed: int) -> int:
    """A queued match between the HTTP bots at ``urls`` (not dispatched: the caller plays it)."""
    from django.contrib.auth import get_user_model

    from competition.matches.lifecycle import create_match
    from competition.models.bots import Bot

    user, _ = get_user_model().objects.get_or_create(username="bench")
    bots = [
        Bot.objects.get_or_create(
            owner=user, game=game_slug, name=f"http{s}", defaults={"kind": "http", "target": url}
        )[0]
        for s, url in enumerate(urls)
    ]
    return create_match(game_slug, bots, seed=seed, options=options, dispatch_now=False).pk


async def platform(
    urls: list[str], game_slug: str, matches: int, options=None
) -> tuple[float, int]:
    from asgiref.sync import sync_to_async

    from bots import egress
    from competition.live import broadcast
    from competition.live.hub import hub
    from competition.matches import history
    from competition.runners.play import run_match

    class Member:
        received = 0

        async def deliver(self, message):
            Member.received += 1

    def make(i: int):
        return sync_to_async(make_match)(urls, game_slug, options, i)

    from competition.matches import turns

    # Per move in play: the interval between consecutive turns handed to the store (each
    # one asked over HTTP, judged, applied, then stored and broadcast by the writer).
    # Its CPU: this process's (every thread: the loop, the database thread), over the same
    # interval, less moved than a wall clock by other work on a shared machine.
    stamps: list[tuple[float, float]] = []  # (wall clock, CPU) as each turn is handed over
    original_put = turns.TurnWriter.put

    async def put(self, record):
        stamps.append((time.perf_counter(), time.process_time()))
        await original_put(self, record)

    turns.TurnWriter.put = put
    client = stored_as_a_runner()
    if client is not None:
        await client.ready()  # (its start is not a match's cost)
    writer_cpu = 0.0
    member = Member()
    moves = 0
    elapsed = 0.0
    intervals: list[float] = []
    cpu_intervals: list[float] = []
    warmup = 2 if matches > 2 else 0
    for i in range(matches + warmup):
        match_id = await make(i)
        group = broadcast.match_group(match_id)
        await hub.join(group, member)
        stamps.clear()
        started = time.perf_counter()
        if i == warmup and client is not None:
            writer_cpu = -cpu_seconds(client.process.pid)  # (from the first measured match)
        await run_match(match_id)
        took = time.perf_counter() - started
        if i >= warmup and len(stamps) > 1:
            intervals.append((stamps[-1][0] - stamps[0][0]) / (len(stamps) - 1))
            cpu_intervals.append((stamps[-1][1] - stamps[0][1]) / (len(stamps) - 1))
        await asyncio.sleep(0)  # let the hub drain
        await hub.leave(group, member)
        if i >= warmup:  # the first ones warm up connections and caches
            elapsed += took
            stored = len(await sync_to_async(history.turns_upto)(match_id))  # rows or archive
            moves += len(stamps)
            if stored not in (0, len(stamps)):
                raise SystemExit(f"match {match_id}: {stored} turns stored, {len(stamps)} played")
    turns.TurnWriter.put = original_put
    if client is not None:
        writer_cpu += cpu_seconds(client.process.pid)
    stored_as_a_runner(False)
    await egress.close_session()
    in_play = sum(intervals) / len(intervals) * 1000 if intervals else float("nan")
    in_play_cpu = sum(cpu_intervals) / len(cpu_intervals) * 1e6 if intervals else float("nan")
    return elapsed / moves * 1000, in_play, moves, in_play_cpu, writer_cpu / moves * 1e6


def stored_as_a_runner(on: bool = True):
    """Store as a runner process does (its writer process, unless ``ARENA_WRITER_PROCESS`` is
    off): the writer's client, or None; ``on=False``: back to the database thread."""
    from django.conf import settings

    from competition.matches import batch, writer

    if not on:
        batch.use_writer(None)
        writer.close()
        return None
    if not settings.ARENA_WRITER_PROCESS:
        return None
    batch.use_writer(writer.client)
    return writer.client()


GAMES = {
    # game: (matches per round, options, raw calls per round)
    "tictactoe": (20, None, 200),
    "gconway": (1, {"maxGameIterations": 500}, 250),
}


def measure(game: str, matches: int, options, calls: int, rounds: int) -> dict:
    """Alternate raw and platform measurements against the same bots: raw, then ``rounds``
    times platform and raw again (each platform round has a raw one on either side)."""
    ports = [free_port(), free_port()]
    bots = [start_bot(p, game) for p in ports]
    raws, in_plays, wholes, moves = [], [], [], 0
    raw_cpus, in_play_cpus, writer_cpus = [], [], []

    def raw_round():
        ms, cpu = asyncio.run(raw(urls, game, calls))
        raws.append(ms)
        raw_cpus.append(cpu)

    try:
        urls = [f"http://127.0.0.1:{p}/" for p in ports]
        raw_round()
        for _ in range(rounds):
            move_ms, in_play_ms, played, in_play_cpu, writer_cpu = asyncio.run(
                platform(urls, game, matches, options)
            )
            writer_cpus.append(writer_cpu)
            raw_round()
            in_plays.append(in_play_ms)
            in_play_cpus.append(in_play_cpu)
            wholes.append(move_ms)
            moves += played
    finally:
        for proc in bots:
            proc.terminate()
            proc.wait(10)
    around = [(before + after) / 2 for before, after in itertools.pairwise(raws)]
    in_play_ratios = [p / r for p, r in zip(in_plays, around, strict=True)]
    cpu_around = [(before + after) / 2 for before, after in itertools.pairwise(raw_cpus)]
    return {
        "game": game,
        "rounds": rounds,
        "moves": moves,
        "raw": statistics.median(raws),
        "in_play": statistics.median(in_plays),
        "whole": statistics.median(wholes),
        "in_play_ratio": statistics.median(in_play_ratios),
        "whole_ratio": statistics.median(w / r for w, r in zip(wholes, around, strict=True)),
        "round_ratios": in_play_ratios,
        "raw_cpu": statistics.median(raw_cpus),
        "in_play_cpu": statistics.median(in_play_cpus),
        "writer_cpu": statistics.median(writer_cpus),
        "cpu_ratio": statistics.median(
            p / r for p, r in zip(in_play_cpus, cpu_around, strict=True)
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("games", nargs="*", metavar="GAME", help=f"default: {' '.join(GAMES)}")
    parser.add_argument("--quick", action="store_true", help="smoke mode (a few short matches)")
    parser.add_argument(
        "--rounds", type=int, default=15, help="platform rounds, each between raw ones (default 15)"
    )
    args = parser.parse_args()
    args.games = args.games or list(GAMES)
    for game in args.games:
        if game not in GAMES:
            parser.error(f"unknown game {game!r} (choose from {', '.join(GAMES)})")
    rows = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as data:
        setup_django(data)
        for game in args.games:
            matches, options, calls = GAMES[game]
            rounds = args.rounds
            if args.quick:
                matches, calls, rounds = 1, 20, 1
                options = {"maxGameIterations": 20} if game == "gconway" else options
            rows.append(measure(game, matches, options, calls, rounds))
    print(
        "# per-move overhead, embedded default (SQLite WAL, in-memory channel layer), HTTP bots on loopback"
    )
    print(
        f"{'game':<10} {'rounds':>6} {'moves':>6} {'raw ms':>8} {'in play ms':>11} {'ratio':>6}"
        f" {'whole match ms':>15} {'ratio':>6}"
    )
    for r in rows:
        print(
            f"{r['game']:<10} {r['rounds']:>6} {r['moves']:>6} {r['raw']:>8.3f} {r['in_play']:>11.3f}"
            f" {r['in_play_ratio']:>6.2f} {r['whole']:>15.3f} {r['whole_ratio']:>6.2f}"
        )
    for r in rows:
        print(
            f"in-play ratio per round, {r['game']}: {' '.join(f'{x:.2f}' for x in r['round_ratios'])}"
        )
    print(
        f"{'CPU':<4} {'game':<10} {'raw µs/move':>12} {'in play µs/move':>16} {'ratio':>6}"
        f" {'writer µs/move':>15}"
    )
    for r in rows:
        print(
            f"{'cpu':<4} {r['game']:<10} {r['raw_cpu']:>12.0f} {r['in_play_cpu']:>16.0f}"
            f" {r['cpu_ratio']:>6.2f} {r['writer_cpu']:>15.0f}"
        )
    print(
        "in play: interval between consecutive turns (asked, judged, applied, stored, broadcast);"
    )
    print("whole match: match wall time (claim, greetings, finish, rating included) / turns;")
    print(
        "ms: medians over the rounds; ratios: medians of each round's figure over its raw neighbours'."
    )
    print(
        "CPU: this process's CPU time (every thread) over the same intervals: the raw client's"
        " alone, the platform's whole work; a shared machine moves it less than the wall clock."
    )
    print(
        "writer: the runner's writer process (its storage, off this process's GIL), its CPU over"
        " whole matches (finish included) per move; 0 with ARENA_WRITER_PROCESS=false."
    )
    print("goals (issue 19): in play <= 1.2x (both games); whole match <= 2.0x (tic-tac-toe)")


if __name__ == "__main__":
    main()
