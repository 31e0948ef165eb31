"""The embedded runner: claimed matches as asyncio tasks, in runner processes or the web process."""

from __future__ import annotations

import asyncio
import logging
import os
import threading

from django.conf import settings

from competition.plumbing.dbthreads import share_the_gil
from competition.plumbing.loops import call_on

logger = logging.getLogger(__name__)

POLL_SECONDS = 1.0
REAP_SECONDS = 5.0
#: how often an event's next round is looked for once its round gap passed
#: (``events.services.start_due_rounds``: claimed, so every runner may look)
ROUNDS_SECONDS = 1.0
#: how often SQLite's planner statistics are refreshed (``standings.refresh_statistics``)
STATISTICS_SECONDS = 600.0


class Scheduler:
    """``humans``: claim only matches with (True) or without (False) a human seat; ``statistics``:
    the site's one scheduler that also runs the periodic jobs."""

    def __init__(self, concurrency: int, *, humans: bool | None = None, statistics: bool = True):
        self.concurrency = concurrency
        self.humans = humans
        self.statistics = statistics
        self.loop: asyncio.AbstractEventLoop | None = None
        self.event: asyncio.Event | None = None
        self.tasks: set[asyncio.Task] = set()
        self.main: asyncio.Task | None = None
        #: the version this process is compiling, if any (one at a time)
        self.building: asyncio.Task | None = None

    def start(self) -> None:
        share_the_gil()  # this process plays matches
        self.loop = asyncio.get_running_loop()
        self.event = asyncio.Event()
        self.main = self.loop.create_task(self.run(), name="arena-embedded-runner")

    def wake(self) -> None:
        if self.event is not None:
            call_on(self.loop, self.event.set)

    async def step(self) -> bool:
        """Claim and launch as many matches as capacity allows; True if it launched any."""
        from competition.matches import batch
        from competition.runners.play import claim_and_load

        launched = False
        while len(self.tasks) < self.concurrency:
            claimed = await batch.call(claim_and_load, humans=self.humans)
            if claimed is None:
                break
            self._launch(*claimed)
            launched = True
        return launched

    async def build(self) -> bool:
        """Claim and compile waiting versions, one after another; True if it built any."""
        from competition.bots import builds
        from competition.matches import batch

        built = False
        while (version := await batch.call(builds.claim)) is not None:
            result = await asyncio.to_thread(builds.compile_version, version)
            await batch.call(builds.store, version, result)
            built = True
        return built

    def _start_building(self) -> None:
        if self.building is None or self.building.done():
            self.building = asyncio.ensure_future(self.build())
            self.building.add_done_callback(self._built)

    def _built(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            logger.error("building versions failed", exc_info=task.exception())

    def _launch(self, match_id: int, token, loaded: dict | None = None) -> None:
        from competition.runners.play import play_claimed

        task = asyncio.ensure_future(play_claimed(match_id, token, loaded))
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("embedded match task failed", exc_info=task.exception())
        if self.event is not None:
            self.event.set()

    async def run(self) -> None:
        from competition.events import ladder, registration
        from competition.events.services import start_due_rounds
        from competition.events.standings import refresh_statistics
        from competition.matches import batch
        from competition.matches.lifecycle import reap
        from competition.runners import heartbeat

        last_reap = last_ladder = last_notify = 0.0
        last_beat = -float(settings.ARENA_HEARTBEAT_SECONDS)
        # a scheduler that plays the matches without a human seat is a runner: it beats
        # (the web process's, beside runner processes, plays only those with one)
        name = heartbeat.process_name("runner") if self.humans is not True else None
        last_rounds = -ROUNDS_SECONDS
        last_statistics = -STATISTICS_SECONDS
        while True:
            try:
                now = asyncio.get_running_loop().time()
                if name and now - last_beat >= settings.ARENA_HEARTBEAT_SECONDS:
                    last_beat = now
                    await batch.call(heartbeat.beat, name)
                if now - last_reap > REAP_SECONDS:
                    last_reap = now
                    await batch.call(reap)
                if now - last_rounds >= ROUNDS_SECONDS:
                    last_rounds = now
                    await batch.call(start_due_rounds)
                if self.statistics and now - last_statistics > STATISTICS_SECONDS:
                    last_statistics = now
                    await batch.call(refresh_statistics)
                if self.statistics and now - last_ladder >= settings.ARENA_LADDER_INTERVAL:
                    last_ladder = now  # the standing ladders' matchmaking, once per site
                    await batch.call(ladder.tick)
                if self.statistics and now - last_notify >= settings.ARENA_NOTIFY_INTERVAL:
                    last_notify = now  # events at their start time, digests: once per site
                    await batch.call(registration.tick)
                self._start_building()
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("embedded scheduler step failed")
            self.event.clear()
            try:
                await asyncio.wait_for(self.event.wait(), POLL_SECONDS)
            except TimeoutError:
                pass


_scheduler: Scheduler | None = None
_fleet = None
_lock = threading.Lock()


def start(processes: int | None = None) -> Scheduler | None:
    """Start the scheduler on the running loop, once per process (beside runner processes: for
    matches with a human seat)."""
    global _scheduler, _fleet
    if settings.ARENA_RUNNER != "embedded":
        return None
    if processes is None:
        processes = settings.ARENA_RUNNER_PROCESSES
    with _lock:
        if _scheduler is None:
            concurrency = settings.ARENA_EMBEDDED_CONCURRENCY
            from competition.runners.play import sandbox_report

            if processes > 0:
                from competition.runners.fleet import Fleet

                _fleet = Fleet(processes, concurrency)
                _fleet.starting = asyncio.ensure_future(_fleet.start())
            _scheduler = Scheduler(concurrency, humans=True if processes > 0 else None)
            _scheduler.start()
            # the check starts a sandbox once: on a thread, never on this loop
            asyncio.get_event_loop().run_in_executor(None, sandbox_report)
            logger.info(
                "embedded runner started (concurrency %s, %s runner processes)",
                concurrency,
                processes,
            )
    return _scheduler


def adopt(scheduler: Scheduler) -> None:
    """Make ``scheduler`` this process's (a runner process's): ``wake`` reaches it."""
    global _scheduler
    with _lock:
        _scheduler = scheduler


def stop() -> None:
    """Stop the runner processes, if any (at the web process's exit)."""
    if _fleet is not None:
        _fleet.stop()


def wake() -> None:
    if _scheduler is not None:
        _scheduler.wake()
    if _fleet is not None:
        _fleet.wake()


async def run_relayed(path: str, concurrency: int) -> None:
    """A runner process: play matches without a human seat, niced below the web process."""
    from bots import egress
    from competition.live import publisher, relay
    from competition.matches import writer

    if settings.ARENA_RUNNER_NICE:
        os.nice(settings.ARENA_RUNNER_NICE)

    from competition.runners.play import sandbox_report

    if settings.ARENA_WRITER_PROCESS:
        writer.client().start_soon()  # (Django's start in the writer, beside the self-test)
    await asyncio.to_thread(sandbox_report)
    scheduler = Scheduler(concurrency, humans=False, statistics=False)
    adopt(scheduler)  # a match queued here (an event's next round) wakes it
    out, listening = await relay.connect(path, scheduler.wake)
    publisher.install(out)
    scheduler.start()
    try:
        await listening  # the web process went away: stop
    finally:
        scheduler.main.cancel()
        for task in list(scheduler.tasks):
            task.cancel()
        await asyncio.gather(scheduler.main, *scheduler.tasks, return_exceptions=True)
        await egress.close_session()
        writer.close()


class EmbeddedBackend:
    """The embedded runner's backend: a queued match wakes this process's scheduler, if any."""

    def dispatch(self, match_id: int) -> None:
        wake()

    def dispatch_build(self) -> None:
        wake()
