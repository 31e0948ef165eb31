"""``manage.py runmatches``: a standalone worker loop (no Celery, no web server); ``--once`` plays
what is queued and exits. With ``--relay SOCKET`` it is a runner process of ``manage.py serve``."""

from __future__ import annotations

import asyncio

from django.conf import settings
from django.core.management.base import BaseCommand

from bots import egress
from competition.events.services import start_due_rounds
from competition.matches import batch, writer
from competition.matches.lifecycle import reap
from competition.plumbing import metrics
from competition.plumbing.dbthreads import share_the_gil
from competition.runners import heartbeat
from competition.runners.embedded import REAP_SECONDS, ROUNDS_SECONDS
from competition.runners.play import claim_and_load, play_claimed


class Command(BaseCommand):
    help = "Play queued matches (a worker loop). --once: drain the queue and exit."
    # no system checks at start (seconds on a loaded machine): serve's runner processes start
    # with the web process, which ran them, and the demo's matches should be live at once
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true")
        parser.add_argument("--concurrency", type=int, default=16)
        parser.add_argument("--poll", type=float, default=1.0)
        parser.add_argument("--relay", help="the web process's relay socket (serve's runners)")

    def handle(self, *args, **opts):
        share_the_gil()
        metrics.set_process_kind(metrics.RUNNER)
        if settings.ARENA_WRITER_PROCESS:
            writer.prefork()  # (first: before any thread of this process starts)
            batch.use_writer(writer.client)
        if not opts["relay"]:  # serve's runners are read by the web process itself
            metrics.sweep()
            metrics.serve_exporter()
        if opts["relay"]:
            from competition.runners.embedded import run_relayed

            asyncio.run(run_relayed(opts["relay"], max(1, opts["concurrency"])))
            return
        played = asyncio.run(self._loop(opts["once"], max(1, opts["concurrency"]), opts["poll"]))
        self.stdout.write(f"played {played} matches")

    async def _loop(self, once: bool, concurrency: int, poll: float) -> int:
        tasks: set[asyncio.Task] = set()
        played = 0
        loop = asyncio.get_running_loop()
        last_reap = last_rounds = last_beat = -REAP_SECONDS
        name = heartbeat.process_name("runner")
        final = False  # --once with nothing left: a last look before it exits
        try:
            while True:
                # the reaping and the due rounds at the embedded runner's pace (and once more
                # before --once exits: a round its last match made due), not after every
                # finished match; with a claim per free slot, in one batch (one hop)
                now = loop.time()
                periodic = []
                if final or now - last_reap >= REAP_SECONDS:
                    last_reap = now
                    periodic.append(batch.call(reap))
                if final or now - last_rounds >= ROUNDS_SECONDS:
                    last_rounds = now
                    periodic.append(batch.call(start_due_rounds))
                if now - last_beat >= settings.ARENA_HEARTBEAT_SECONDS:
                    last_beat = now
                    periodic.append(batch.call(heartbeat.beat, name))
                answers = await asyncio.gather(
                    *periodic,
                    *(batch.call(claim_and_load) for _ in range(concurrency - len(tasks))),
                )
                for claimed in filter(None, answers[len(periodic) :]):
                    tasks.add(asyncio.ensure_future(play_claimed(*claimed)))
                    played += 1
                if once and not tasks:
                    if final:
                        return played
                    final = True
                    continue
                final = False
                if tasks:
                    _done, tasks = await asyncio.wait(
                        tasks, timeout=poll, return_when=asyncio.FIRST_COMPLETED
                    )
                    tasks = set(tasks)
                else:
                    await asyncio.sleep(poll)
        finally:
            for task in tasks:
                task.cancel()
            await egress.close_session()
            writer.close()
