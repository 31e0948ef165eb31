"""The writer process (issue 53, item 1): the platform's CPU per HTTP tic-tac-toe match with
its database calls on the database thread of its own process (``ARENA_WRITER_PROCESS=false``)
against the same calls sent to the runner's writer process (``competition/matches/writer.py``,
what a runner process does by default), next to the bare match loop, in one run, the three
alternating round by round (``bench/dbthread.py``'s rounds).

With the writer, the runner's process keeps no database work: what it still spends is the
match loop, the egress, the pickling of the batches and of their answers. The writer's own
CPU is read from ``/proc`` and given beside it. (Its first version, the prototype the issue
asked for before adopting it, was this file with a pipe of its own: 1.15x against 1.65x.)

    python bench/writer.py                  # 3 rounds of 300 matches, 32 at a time
    python bench/writer.py --quick          # smoke mode (a few seconds)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import cpu_seconds  # noqa: E402
from dbthread import arguments, instant_bot, loop_round, platform_cpu  # noqa: E402
from overhead import setup_django  # noqa: E402


async def rounds(args: argparse.Namespace, url: str) -> list[tuple]:
    """Per round: (thread ms, process ms, the writer's ms, loop ms), CPU per match."""
    from bots import egress
    from competition.matches import batch, writer

    client = writer.client()
    try:
        for first, which in ((0, None), (500_000, writer.client)):  # warm-up: connections,
            batch.use_writer(which)  # caches, compiled statements, the writer's start
            await platform_cpu(url, first, 2 * args.concurrency, args.concurrency)
        await loop_round(url, 2 * args.concurrency, args.concurrency)
        out = []
        for r in range(args.rounds):
            first = (r + 1) * 1_000_000
            batch.use_writer(None)
            thread = await platform_cpu(url, first, args.matches, args.concurrency)
            batch.use_writer(writer.client)
            before = cpu_seconds(client.process.pid)
            process = await platform_cpu(url, first + 500_000, args.matches, args.concurrency)
            theirs = (cpu_seconds(client.process.pid) - before) / args.matches * 1000
            loop = await loop_round(url, args.matches, args.concurrency)
            out.append((thread, process, theirs, loop))
        assert client.started == 1, "the writer process was lost during the run"
        return out
    finally:
        batch.use_writer(None)
        writer.close()
        await egress.close_session()


def main() -> None:
    args = arguments(__doc__)
    with instant_bot() as url, tempfile.TemporaryDirectory(prefix="arena-bench-") as data:
        setup_django(data)
        out = asyncio.run(rounds(args, url))
    print(
        f"# CPU per HTTP tic-tac-toe match, {args.matches} matches a round, "
        f"{args.concurrency} at a time (load average {os.getloadavg()[0]:.1f}, "
        f"{os.cpu_count()} cores), in ms"
    )
    print("| round | database thread | writer process: runner | writer | bare loop |")
    print("|---:|---:|---:|---:|---:|")
    for i, (thread, process, theirs, loop) in enumerate(out, 1):
        print(f"| {i} | {thread:.2f} | {process:.2f} | {theirs:.2f} | {loop:.2f} |")
    thread, process, theirs, loop = (statistics.median(c) for c in zip(*out, strict=True))
    print(
        f"median: the runner's process {thread / loop:.2f}x the bare loop with its database "
        f"thread, {process / loop:.2f}x with a writer process (goal <= 1.4x), which spends "
        f"{theirs:.2f} ms a match itself; the two processes together {(process + theirs) / loop:.2f}x"
    )


if __name__ == "__main__":
    main()
