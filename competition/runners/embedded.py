"""The embedded runner: claimed matches run as asyncio tasks inside the web process.

``start()`` (called once per process, on the serving event loop) launches a scheduler
that reaps expired leases and claims queued matches up to ``ARENA_EMBEDDED_CONCURRENCY``,
running each as a task. ``wake()`` (called after a match is created) makes it look at
once instead of at its next poll: ``EmbeddedBackend`` is the ``ARENA_MATCH_BACKEND`` that
does it. Everything goes through ``competition.runners.play``, the same code path the Celery
worker and ``manage.py runmatches`` use.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from django.conf import settings

from competition.dbthreads import run_db

logger = logging.getLogger(__name__)

POLL_SECONDS = 1.0
REAP_SECONDS = 5.0
#: how often SQLite's planner statistics are refreshed (``standings.refresh_statistics``)
STATISTICS_SECONDS = 600.0


class Scheduler:
    def __init__(self, concurrency: int):
        self.concurrency = concurrency
        self.loop: asyncio.AbstractEventLoop | None = None
        self.event: asyncio.Event | None = None
        self.tasks: set[asyncio.Task] = set()
        self.main: asyncio.Task | None = None

    def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.event = asyncio.Event()
        self.main = self.loop.create_task(self.run(), name="arena-embedded-runner")

    def wake(self) -> None:
        if self.loop is None or self.event is None or self.loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.event.set()
        else:
            self.loop.call_soon_threadsafe(self.event.set)

    async def step(self) -> bool:
        """Claim and launch as many matches as capacity allows; True if it launched any."""
        from competition.runners.play import claim_and_load

        launched = False
        while len(self.tasks) < self.concurrency:
            claimed = await run_db(claim_and_load)
            if claimed is None:
                break
            self._launch(*claimed)
            launched = True
        return launched

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
        from competition.events.standings import refresh_statistics
        from competition.matches.lifecycle import reap

        last_reap = 0.0
        last_statistics = -STATISTICS_SECONDS
        while True:
            try:
                now = asyncio.get_running_loop().time()
                if now - last_reap > REAP_SECONDS:
                    last_reap = now
                    await run_db(reap)
                if now - last_statistics > STATISTICS_SECONDS:
                    last_statistics = now
                    await run_db(refresh_statistics)
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
_lock = threading.Lock()


def start() -> Scheduler | None:
    """Start the scheduler on the running loop (once per process; embedded mode only)."""
    global _scheduler
    if settings.ARENA_RUNNER != "embedded":
        return None
    with _lock:
        if _scheduler is None:
            _scheduler = Scheduler(settings.ARENA_EMBEDDED_CONCURRENCY)
            _scheduler.start()
            logger.info("embedded runner started (concurrency %s)", _scheduler.concurrency)
    return _scheduler


def wake() -> None:
    if _scheduler is not None:
        _scheduler.wake()


class EmbeddedBackend:
    """``ARENA_MATCH_BACKEND`` of the embedded runner: a queued match wakes the scheduler of
    this process (if it runs one; else the match waits for a runner's poll)."""

    def dispatch(self, match_id: int) -> None:
        wake()
