"""``/healthz`` (liveness: this process answers) and ``/readyz`` (readiness: each part this node
needs, checked and named in words; 503 when one fails).

Bounded, to be probed every few seconds: a ``SELECT 1``, a channel-layer round trip with a
timeout, the newest runner heartbeat (by its index), the sandbox's cached self-test and the data
directory's free space. django-health-check was weighed and not used: it answers 500, not 503;
its database check writes and deletes a row of its own table; its Celery check round-trips a
task through a worker whose pool may be busy playing matches; and it names parts by class.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import uuid
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache

from competition.runners import heartbeat

logger = logging.getLogger(__name__)

#: the channel layer's round trip (a message to a fresh channel and back) may take this long
LAYER_TIMEOUT = 2.0


@dataclass(frozen=True)
class Part:
    name: str
    ok: bool
    state: str


def _database_name() -> str:
    return "PostgreSQL" if connection.vendor == "postgresql" else "SQLite"


def check_database() -> Part:
    name = _database_name()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        logger.warning("readiness: the database does not answer: %r", exc)
        connection.close()  # the next request connects afresh
        return Part("database", False, f"{name} does not answer")
    return Part("database", True, f"{name} answers")


def check_runners() -> Part:
    if settings.ARENA_RUNNER == "embedded" and settings.ARENA_RUNNER_PROCESSES == 0:
        what = "the runner in the web process"
    elif settings.ARENA_RUNNER == "embedded":
        what = "a runner process"
    else:
        what = "a Celery worker"
    try:
        newest = heartbeat.newest()
    except Exception as exc:
        logger.warning("readiness: the runners' heartbeats cannot be read: %r", exc)
        return Part("runners", False, "their heartbeats cannot be read (see the database)")
    if newest is None:
        return Part("runners", False, f"no runner has a heartbeat: start {what}")
    age = (timezone.now() - newest.seen).total_seconds()
    if newest.seen < timezone.now() - heartbeat.stale_after():
        return Part("runners", False, f"no runner's heartbeat for {age:.0f} seconds: start {what}")
    return Part("runners", True, f"a runner's heartbeat {age:.0f} seconds ago")


def check_sandbox() -> Part:
    from bots.sandbox import sandbox_status

    ok, why = sandbox_status()  # checked once per process, then cached
    return Part("sandbox", True, "uploaded code runs") if ok else Part("sandbox", False, why)


def check_disk() -> Part:
    try:
        free = shutil.disk_usage(settings.DATA_DIR).free // (1 << 20)
    except OSError as exc:
        logger.warning("readiness: the data directory cannot be read: %r", exc)
        return Part("disk", False, "the data directory cannot be read")
    state = f"{free} MB free in the data directory"
    if free < settings.ARENA_MIN_FREE_MB:
        return Part("disk", False, f"{state}, below {settings.ARENA_MIN_FREE_MB} MB")
    return Part("disk", True, state)


def _checks() -> list[Part]:
    return [check_database(), check_runners(), check_sandbox(), check_disk()]


async def check_channel_layer() -> Part:
    """A message sent to a fresh channel of this process's layer, and received back."""
    layer = get_channel_layer()
    name = "Redis" if settings.REDIS_URL else "the in-memory layer"

    async def round_trip() -> bool:
        channel = await layer.new_channel("readyz.")
        token = uuid.uuid4().hex
        await layer.send(channel, {"type": "readyz.ping", "token": token})
        return (await layer.receive(channel)).get("token") == token

    try:
        ok = await asyncio.wait_for(round_trip(), LAYER_TIMEOUT)
    except Exception as exc:
        logger.warning("readiness: the channel layer does not answer: %r", exc)
        ok = False
    if ok:
        return Part("channel layer", True, f"{name} answers")
    return Part(
        "channel layer", False, f"{name} does not answer within {LAYER_TIMEOUT:.0f} seconds"
    )


@never_cache
async def readyz(request):
    layer, parts = await asyncio.gather(check_channel_layer(), sync_to_async(_checks)())
    parts.insert(1, layer)
    failing = [f"{part.name}: {part.state}" for part in parts if not part.ok]
    body = {
        "ready": not failing,
        "parts": {part.name: {"ok": part.ok, "state": part.state} for part in parts},
        "not_ready": failing,
    }
    return JsonResponse(body, status=503 if failing else 200)


@never_cache
def healthz(request):
    """Liveness: this process answers (what it depends on is ``/readyz``'s)."""
    return JsonResponse({"ok": True})
