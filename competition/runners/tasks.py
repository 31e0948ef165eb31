"""Celery tasks: one match per task, on the same code path as every other runner."""

from __future__ import annotations

import asyncio
import threading

from celery.signals import worker_ready, worker_shutdown

from competition.celery import app


async def _run(match_id: int) -> None:
    from bots import egress
    from competition.plumbing.dbthreads import share_the_gil
    from competition.runners.play import run_match

    share_the_gil()  # this worker process plays matches

    # ORM work runs on the process's database threads (competition.plumbing.dbthreads), which drop
    # dead connections (a database restart) before each call.
    try:
        await run_match(match_id)
    finally:
        await egress.close_session()


@app.task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_match_task(match_id: int) -> None:
    asyncio.run(_run(match_id))


@app.task(acks_late=True, ignore_result=True)
def build_versions_task() -> None:
    """Compile the versions waiting for it (``competition.bots.builds``), one after another."""
    from competition.bots import builds

    builds.build_all()


@app.task(ignore_result=True, name="competition.runners.tasks.send_notification_mails")
def send_notification_mails(ids: list[int]) -> None:
    """Instant notification mails (``competition.notifications.notify``), off the request path."""
    from competition.notifications import notify

    notify.send_mails(ids)


@worker_ready.connect
def check_sandbox(**kwargs) -> None:
    """Say in this worker's log, at its start, if uploaded code cannot be run here."""
    from competition.runners.play import sandbox_report

    sandbox_report()


_stop_beating = threading.Event()


@worker_ready.connect
def start_heartbeat(**kwargs) -> None:
    """Record that this worker is alive, every ``ARENA_HEARTBEAT_SECONDS`` (``/readyz``)."""
    from competition.runners.heartbeat import beat_in_thread

    beat_in_thread("worker", _stop_beating)


@worker_shutdown.connect
def stop_heartbeat(**kwargs) -> None:
    _stop_beating.set()


class CeleryBackend:
    """``ARENA_MATCH_BACKEND`` of the scale-out runner: one Celery task per queued match."""

    def dispatch(self, match_id: int) -> None:
        run_match_task.delay(match_id)

    def dispatch_build(self) -> None:
        build_versions_task.delay()
