"""A writer process, prototyped (issue 53, item 1): the platform's CPU per HTTP tic-tac-toe
match with its database calls in a thread of its own process (today: ``batch.execute`` on the
database thread) against the same calls shipped to a writer process, next to the bare match
loop, in one run, the three alternating round by round (``bench/dbthread.py``'s rounds).

The writer is the prototype the issue asks for before any adoption: one process of its own
(``multiprocessing``, spawned, Django set up on the same SQLite file), fed each batch of the
runner's ``Batcher`` as one pickled message over a pipe, answering with the batch's results and
its broadcasts' outbox, pickled. The pipe is read on the event loop (``add_reader``), so the
runner's process keeps no database thread at all: what it still spends is the match loop, the
egress, the pickling of the calls and of their answers. The writer's own CPU is read from
``/proc`` and given beside it; the lease and crash guarantees of the runner are not part of the
prototype (one writer, one batch in flight, as the ``Batcher`` sends them).

    python bench/writer.py                  # 3 rounds of 300 matches, 32 at a time
    python bench/writer.py --quick          # smoke mode (a few seconds)
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import pickle
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, cpu_seconds  # noqa: E402
from dbthread import arguments, instant_bot, loop_round, platform_cpu  # noqa: E402
from overhead import setup_django  # noqa: E402


def writer_main(conn, data: str) -> None:
    """The writer: each message a pickled batch of calls, run in one transaction
    (``batch.execute``), answered with its results and outbox, pickled."""
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    os.environ.update(PRODUCTION_ENV)
    setup_django(data)
    from competition.matches.batch import execute

    while True:
        try:
            message = conn.recv_bytes()
        except EOFError:
            return
        try:
            answer = execute(pickle.loads(message))
            conn.send_bytes(pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
        except Exception as exc:  # (an unpicklable call or answer: the prototype says which)
            conn.send_bytes(pickle.dumps(RuntimeError(f"writer: {exc!r}")))


class Writer:
    """The runner's side of the pipe: ``run_db(execute, calls)`` as the ``Batcher`` calls it."""

    def __init__(self, data: str) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=writer_main, args=(theirs, data), daemon=True)
        self.process.start()
        theirs.close()
        self.batches = 0

    async def run_db(self, fn, calls):
        loop = asyncio.get_running_loop()
        # (each call's ``prepare`` ran on the loop before the batch left)
        message = pickle.dumps([replace(c, prepare=None) for c in calls], pickle.HIGHEST_PROTOCOL)
        self.conn.send_bytes(message)
        ready = loop.create_future()
        fd = self.conn.fileno()
        loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        answer = pickle.loads(self.conn.recv_bytes())
        if isinstance(answer, BaseException):
            raise answer
        self.batches += 1
        return answer

    def cpu(self) -> float:
        return cpu_seconds(self.process.pid)

    def close(self) -> None:
        self.conn.close()
        self.process.join(10)


async def rounds(url: str, args: argparse.Namespace, writer: Writer) -> list[tuple]:
    """Per round: (thread ms, process ms, the writer's ms, loop ms), CPU per match."""
    from bots import egress
    from competition.matches import batch

    in_thread = batch.run_db

    async def in_writer(*a):
        return await writer.run_db(*a)

    def mode(which) -> None:
        batch.run_db = which

    try:
        for first, which in ((0, in_thread), (500_000, in_writer)):  # warm-up: connections,
            mode(which)  # caches, compiled statements
            await platform_cpu(url, first, 2 * args.concurrency, args.concurrency)
        await loop_round(url, 2 * args.concurrency, args.concurrency)
        out = []
        for r in range(args.rounds):
            first = (r + 1) * 1_000_000
            mode(in_thread)
            thread = await platform_cpu(url, first, args.matches, args.concurrency)
            mode(in_writer)
            before = writer.cpu()
            process = await platform_cpu(url, first + 500_000, args.matches, args.concurrency)
            theirs = (writer.cpu() - before) / args.matches * 1000
            loop = await loop_round(url, args.matches, args.concurrency)
            out.append((thread, process, theirs, loop))
        return out
    finally:
        mode(in_thread)
        await egress.close_session()


def main() -> None:
    args = arguments(__doc__)
    with instant_bot() as url, tempfile.TemporaryDirectory(prefix="arena-bench-") as data:
        setup_django(data)
        writer = Writer(data)
        try:
            out = asyncio.run(rounds(url, args, writer))
        finally:
            writer.close()
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
