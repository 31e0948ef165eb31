"""Runner heartbeats: every process that plays matches renews its row every
``ARENA_HEARTBEAT_SECONDS`` (one UPDATE, or an INSERT at its first beat); ``/readyz`` reads the
newest row by its index. Rows of processes gone for a day are deleted as others beat."""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from competition.models import RunnerHeartbeat

logger = logging.getLogger(__name__)

#: a process silent for this long is forgotten (its row deleted by another's beat)
FORGET_AFTER = timedelta(days=1)


def process_name(role: str) -> str:
    """This process as its heartbeat row names it: ``runner on HOST (process PID)``."""
    return f"{role} on {socket.gethostname()} (process {os.getpid()})"[:200]


def beat(name: str) -> None:
    """Renew ``name``'s heartbeat (bounded: its row by its unique name, old rows by the index)."""
    now = timezone.now()
    if not RunnerHeartbeat.objects.filter(name=name).update(seen=now):
        RunnerHeartbeat.objects.update_or_create(name=name, defaults={"seen": now})
        RunnerHeartbeat.objects.filter(seen__lt=now - FORGET_AFTER).delete()


def stale_after() -> timedelta:
    """How old the newest heartbeat may be before no runner counts as alive."""
    return timedelta(seconds=3 * settings.ARENA_HEARTBEAT_SECONDS)


def newest() -> RunnerHeartbeat | None:
    return RunnerHeartbeat.objects.order_by("-seen").only("name", "seen").first()


def beat_in_thread(role: str, stop: threading.Event) -> threading.Thread:
    """Beat from a thread until ``stop`` is set (a Celery worker: its pool may be all busy)."""
    name = process_name(role)

    def loop() -> None:
        while True:
            try:
                close_old_connections()
                beat(name)
            except Exception:
                logger.exception("runner heartbeat failed")
            if stop.wait(settings.ARENA_HEARTBEAT_SECONDS):
                return

    thread = threading.Thread(target=loop, name="arena-heartbeat", daemon=True)
    thread.start()
    return thread
