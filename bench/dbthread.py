"""CPU per HTTP tic-tac-toe match: the platform, its database thread, the bare match loop.

The platform's rate against the bare match loop (``bench/aggregate.py``) is a ratio of wall
clocks, which a shared machine moves by tens of percent. This benchmark counts CPU instead,
in the same process and the same rounds, alternating: the platform (``run_match``, C at a
time, every match claimed, played, stored, finished, rated, archived), of which the
database thread's share (the runner's batches, ``competition.matches.batch.execute``,
counted with the thread's own CPU clock), and the bare match loop on the same games. The
loop's CPU over the platform's is what the platform / match loop ratio tends to on an idle
machine once both are bound by one core (the goal: >= 0.7). The database thread's CPU is also
broken down by call (claim and load, turn batches, the end, the batches' own transactions and
commits), so a change to one of them shows in its own figure. One ``serve_bot`` process
answers both (its CPU is not counted).

    python bench/dbthread.py                  # 3 rounds of 300 matches, 32 at a time
    python bench/dbthread.py --matches 600 --rounds 5 --concurrency 64
    python bench/dbthread.py --quick          # smoke mode (a few seconds)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from aggregate import _sync_check, _sync_make, match_loop  # noqa: E402
from common import PRODUCTION_ENV, free_port, wait_port  # noqa: E402
from overhead import setup_django  # noqa: E402


def count_database_thread() -> dict:
    """Wrap the batches' runner so it adds each batch's CPU (its thread's clock) to the
    returned dict's ``seconds``, and its calls and batches; ``by_call`` the CPU of each kind of
    call (``claim_and_load``, ``record_turns``, ``store_end``...), the rest of a batch (its
    transaction and commit) under ``transaction``."""
    from competition.matches import batch

    spent = {"seconds": 0.0, "batches": 0, "calls": 0, "by_call": Counter(), "rounds": []}
    execute = batch.execute

    def timed(fn):
        def call(*args, **kwargs):
            started = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent["by_call"][getattr(fn, "__name__", "other")] += time.thread_time() - started

        return call

    def counted(calls):
        for call in calls:
            call.fn = timed(call.fn)
        started = time.thread_time()
        try:
            return execute(calls)
        finally:
            took = time.thread_time() - started
            spent["seconds"] += took
            spent["by_call"]["transaction"] += took
            spent["batches"] += 1
            spent["calls"] += len(calls)

    batch.execute = counted
    return spent


async def platform_cpu(url: str, first: int, matches: int, concurrency: int) -> float:
    """CPU ms per match of this process (every thread): ``matches`` played C at a time by
    ``run_match``, each checked finished with every turn stored."""
    from asgiref.sync import sync_to_async

    from competition.runners.play import run_match

    ids = await sync_to_async(_sync_make)(url, first, matches)
    queue = iter(ids)

    async def worker() -> None:
        for match_id in queue:
            if await run_match(match_id) != match_id:
                raise SystemExit(f"match {match_id} could not be claimed")

    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    cpu = time.process_time() - started
    await sync_to_async(_sync_check)(ids)
    return cpu / matches * 1000


async def platform_round(url: str, first: int, matches: int, concurrency: int, spent: dict):
    """(CPU ms per match of the process, of the database thread; calls per batch)."""
    spent.update(seconds=0.0, batches=0, calls=0, by_call=Counter())
    cpu = await platform_cpu(url, first, matches, concurrency)
    per_batch = spent["calls"] / max(1, spent["batches"])
    by_call = spent["by_call"]
    by_call["transaction"] -= sum(v for k, v in by_call.items() if k != "transaction")
    spent["rounds"].append({k: v / matches * 1000 for k, v in by_call.items()})
    return cpu, spent["seconds"] / matches * 1000, per_batch


async def loop_round(url: str, matches: int, concurrency: int) -> float:
    """CPU ms per game of the bare match loop."""
    started = time.process_time()
    await match_loop(url, concurrency, matches)
    return (time.process_time() - started) / matches * 1000


async def rounds(url: str, args: argparse.Namespace, spent: dict) -> list[tuple]:
    from bots import egress

    try:
        # warm-up: connections, caches, compiled statements
        await platform_round(url, 0, 2 * args.concurrency, args.concurrency, spent)
        await loop_round(url, 2 * args.concurrency, args.concurrency)
        out = []
        for r in range(args.rounds):
            first = (r + 1) * 1_000_000
            plat = await platform_round(url, first, args.matches, args.concurrency, spent)
            out.append((*plat, await loop_round(url, args.matches, args.concurrency)))
        return out
    finally:
        await egress.close_session()


def arguments(doc: str = __doc__) -> argparse.Namespace:
    """The paired rounds' options (``doc``: the bench's own text)."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=300, help="matches per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, the figures paired in each")
    parser.add_argument("--concurrency", type=int, default=32, help="concurrent matches")
    parser.add_argument(
        "--quick", action="store_true", help="smoke mode: 1 round of 40 matches, 8 at a time"
    )
    args = parser.parse_args()
    if args.quick:
        args.matches, args.rounds, args.concurrency = 40, 1, 8
    if min(args.matches, args.rounds, args.concurrency) < 1:
        parser.error("--matches, --rounds and --concurrency must be positive")
    return args


@contextlib.contextmanager
def instant_bot():
    """One ``serve_bot`` process answering tic-tac-toe at once, in production mode: its URL."""
    os.environ.update(PRODUCTION_ENV)
    port = free_port()
    bot = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve_bot", "tictactoe:random", "--kaggle"]
        + ["--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, bot)
        yield f"http://127.0.0.1:{port}/"
    finally:
        bot.terminate()
        bot.wait(10)


def main() -> None:
    args = arguments()
    with instant_bot() as url, tempfile.TemporaryDirectory(prefix="arena-bench-") as data:
        setup_django(data)
        spent = count_database_thread()
        out = asyncio.run(rounds(url, args, spent))
        by_call = spent["rounds"][1:]  # the timed rounds (not the warm-up)
    print(
        f"# CPU per HTTP tic-tac-toe match, {args.matches} matches a round, "
        f"{args.concurrency} at a time (load average {os.getloadavg()[0]:.1f}, "
        f"{os.cpu_count()} cores)"
    )
    print(
        "| round | platform ms | database thread ms | calls per batch | loop ms | loop / platform |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for i, (plat, db, per_batch, loop) in enumerate(out, 1):
        print(f"| {i} | {plat:.2f} | {db:.2f} | {per_batch:.1f} | {loop:.2f} | {loop / plat:.2f} |")
    plat, db, _per_batch, loop = (statistics.median(column) for column in zip(*out, strict=True))
    print(
        f"median: platform {plat:.2f} ms CPU a match, of which the database thread {db:.2f} "
        f"({db / plat:.0%}); the bare loop {loop:.2f}; loop / platform {loop / plat:.2f} "
        "(goal, issue 40: >= 0.7)"
    )
    names = sorted({name for r in by_call for name in r}, key=lambda n: -by_call[0].get(n, 0))
    print(
        "database thread, ms CPU a match by call (medians; transaction: the batches' own "
        "transactions and commits): "
        + ", ".join(f"{n} {statistics.median(r.get(n, 0.0) for r in by_call):.3f}" for n in names)
    )


if __name__ == "__main__":
    main()
