"""The compile stage of code bots' versions: a version in a compiled language is queued when it
is uploaded, claimed by one runner (a lease, so a runner that dies mid-build loses nothing),
built once in its sandbox (``bots.compiler``) and stored with what it built, so every runner
plays the same bytes. A version that does not compile never plays; its owner is told, and the
bot keeps playing its last good version."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from bots import codebundle
from bots.compiler import Compiled, CompileLimits, compile_bundle
from bots.languages import LANGUAGES
from competition.bots.signals import version_ready
from competition.models import BotVersion, BuildStatus
from competition.models.bots import Bot
from competition.notifications import bot_notices
from competition.plumbing import metrics

logger = logging.getLogger(__name__)

#: how long past its wall-clock limit a claimed build may take before another runner takes it
LEASE_MARGIN = timedelta(seconds=30)


def limits() -> CompileLimits:
    return CompileLimits(
        memory=settings.ARENA_COMPILE_MEMORY_MB << 20,
        wall_seconds=settings.ARENA_COMPILE_SECONDS,
        cpu_seconds=settings.ARENA_COMPILE_SECONDS,
    )


def initial_status(language: str) -> str:
    """A new version's build status: queued in a compiled language, else none needed."""
    return BuildStatus.QUEUED if LANGUAGES[language].compiled else BuildStatus.NONE


def claim() -> BotVersion | None:
    """One version to build (queued, or building past its lease), now this runner's; None if
    there is none. The claim is one conditional UPDATE: two runners never build one version."""
    now = timezone.now()
    due = Q(build=BuildStatus.QUEUED) | Q(build=BuildStatus.BUILDING, build_until__lt=now)
    lease = now + timedelta(seconds=settings.ARENA_COMPILE_SECONDS) + LEASE_MARGIN
    for pk in BotVersion.objects.filter(due).order_by("pk").values_list("pk", flat=True)[:5]:
        claimed = BotVersion.objects.filter(due, pk=pk).update(
            build=BuildStatus.BUILDING, build_until=lease
        )
        if claimed:
            return BotVersion.objects.select_related("bot").get(pk=pk)
    return None


def compile_version(version: BotVersion) -> Compiled:
    """Its compile, in its sandbox (no database: call it on a thread of its own)."""
    return compile_bundle(codebundle.bundle_of(version.filename, bytes(version.data)), limits())


def store(version: BotVersion, result: Compiled) -> bool:
    """Keep a claimed version's compile (only while the claim holds: False if it outlived its
    lease and another runner builds it); a failure is told to its owner."""
    status = BuildStatus.BUILT if result.ok else BuildStatus.FAILED
    with transaction.atomic():
        stored = BotVersion.objects.filter(
            pk=version.pk, build=BuildStatus.BUILDING, build_until=version.build_until
        ).update(
            build=status,
            build_log=result.log,
            build_seconds=round(result.seconds, 3),
            artefact=result.artefact if result.ok else None,
            build_until=None,
        )
        if stored and not result.ok and version.bot.owner_id is not None:
            bot_notices.build_failed(version.bot, version.number, result.log)
        elif stored and result.ok:  # it plays from the next match: placed again on the ladder
            version_ready.send(sender=Bot, bot=version.bot)
    if stored:
        metrics.COMPILES.labels(metrics.process_kind(), status.value).inc()
        metrics.COMPILE_SECONDS.labels(metrics.process_kind()).observe(result.seconds)
    if not stored:
        logger.warning("build of version %s outlived its lease; its result is dropped", version.pk)
    else:
        logger.info("version %s: %s in %.1f s", version.pk, status.label, result.seconds)
    return bool(stored)


def build(version: BotVersion) -> BotVersion:
    """Compile a claimed version and store the outcome."""
    store(version, compile_version(version))
    version.refresh_from_db()
    return version


def build_next() -> BotVersion | None:
    """Claim and build one version; None if none was waiting."""
    version = claim()
    return build(version) if version is not None else None


def build_all() -> int:
    """Build every waiting version, one after the other (tests, the ``build`` step); how many."""
    count = 0
    while build_next() is not None:
        count += 1
    return count
