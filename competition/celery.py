"""Celery app for the scale-out runner (``ARENA_RUNNER=celery``); every worker also runs the
periodic steps in background threads, so no beat process is needed."""

from __future__ import annotations

import logging
import os
import threading
import time

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "competition.settings")

app = Celery("competition")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["competition.runners"])

logger = logging.getLogger(__name__)
_stop = threading.Event()
#: how often a worker looks for an event's round whose gap has passed
ROUNDS_SECONDS = 1.0


def _reaper(interval: float) -> None:
    """Every second: start due rounds (a round gap ends on the second); every ``interval``: reap
    leases and redispatch stale queued matches."""
    from django.db import close_old_connections

    from competition.events.services import start_due_rounds
    from competition.matches.lifecycle import reap, sweep_queued

    last_reap = time.monotonic()
    while not _stop.wait(ROUNDS_SECONDS):
        try:
            close_old_connections()
            started = start_due_rounds()
            if started:
                logger.info("started due rounds: %s matches", started)
            if time.monotonic() - last_reap < interval:
                continue
            last_reap = time.monotonic()
            reaped = reap()
            if reaped:
                logger.info("requeued expired matches %s", reaped)
            swept = sweep_queued()
            if swept:
                logger.info("dispatched stale queued matches %s", swept)
        except Exception:
            logger.exception("reaper failed")


def _matchmaker(interval: float) -> None:
    """The standing ladders' matchmaking; bots are claimed by a conditional UPDATE."""
    from django.db import close_old_connections

    from competition.events import ladder

    while not _stop.wait(interval):
        try:
            close_old_connections()
            made = ladder.tick()
            if made:
                logger.info("standing ladders: %s matches made", made)
        except Exception:
            logger.exception("standing ladder matchmaking failed")


def _registrations(interval: float) -> None:
    """``events.registration.tick``; every worker runs it, each event and digest is claimed."""
    from django.db import close_old_connections

    from competition.events import registration

    while not _stop.wait(interval):
        try:
            close_old_connections()
            registration.tick()
        except Exception:
            logger.exception("registrations and notifications step failed")


@worker_ready.connect
def start_reaper(**kwargs) -> None:
    from django.conf import settings

    from competition.plumbing import metrics

    metrics.set_process_kind(metrics.WORKER)
    metrics.sweep()
    metrics.serve_exporter()

    interval = max(settings.ARENA_LEASE_SECONDS / 3, 1.0)
    threading.Thread(target=_reaper, args=(interval,), name="arena-reaper", daemon=True).start()
    if settings.ARENA_LADDER:
        threading.Thread(
            target=_matchmaker,
            args=(settings.ARENA_LADDER_INTERVAL,),
            name="arena-ladder",
            daemon=True,
        ).start()
    threading.Thread(
        target=_registrations,
        args=(settings.ARENA_NOTIFY_INTERVAL,),
        name="arena-notify",
        daemon=True,
    ).start()


@worker_shutdown.connect
def stop_reaper(**kwargs) -> None:
    _stop.set()
