"""The bots' services: what the web pages, the API and the admin do to a bot, each written once
(as Zulip's views call ``zerver/actions``)."""

from __future__ import annotations

import hashlib
import logging
import time
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from bots import codebundle
from bots.codebundle import Upload
from bots.faults import BotFault, FaultCode, explain, seen
from bots.names import fits_label
from competition.bots import builds
from competition.bots.messages import (
    as_json,
    fault_words,
    illegal_reason,
    readable,
    truncate,
)
from competition.bots.signals import bot_activated, test_call_passed, version_ready
from competition.matches.dispatch import dispatch_build
from competition.models import BuildStatus, Entry, Participant
from competition.models.bots import (
    MAX_LABEL,
    Bot,
    BotHealth,
    BotStatus,
    BotVersion,
    EndpointKind,
    check_storage,
    code_bytes_used,
    read_uploaded_code,
    readable_bytes,
)
from competition.notifications import bot_notices
from competition.plumbing.ratelimit import Limit, hit
from games import get_game
from games.base import Context, IllegalAction

logger = logging.getLogger(__name__)

#: a test call waits at most this long (seconds), whatever the game's own limit
TEST_CALL_TIMEOUT = 10.0
#: characters of the request and reply shown after a test call
TEST_CALL_PREVIEW = 2000
#: seconds between two test calls of one bot (each is a real outbound request)
TEST_CALL_INTERVAL = settings.ARENA_TEST_CALL_INTERVAL


# -- creation -------------------------------------------------------------------------------

#: the kinds of the platform's seats (registered by nobody: built-in strategies, human seats)
PLATFORM_KINDS = frozenset(k for k in EndpointKind if k.row.register == "nobody")


def create_bot(bot: Bot | None = None, /, *, upload: Upload | None = None, **fields) -> Bot:
    """The one way a bot is made: ``bot`` (unsaved, as a form built it) or one of ``fields``,
    saved with its first version ``upload`` (a code bot's, which names its target) in one
    transaction. Nothing is stored when the version is refused (``add_version``)."""
    if bot is None:
        bot = Bot(**fields)
    if upload is not None:
        bot.target = upload.name
    with transaction.atomic():
        bot.save()
        if upload is not None:
            add_version(bot, upload)
    return bot


def get_or_create_bot(defaults: dict | None = None, **lookup) -> tuple[Bot, bool]:
    """``get_or_create`` of a bot, made by ``create_bot``: (the bot, whether it was made)."""
    found = Bot.objects.filter(**lookup).first()
    if found is not None:
        return found, False
    try:
        with transaction.atomic():
            return create_bot(**lookup, **(defaults or {})), True
    except IntegrityError:  # made by a concurrent request
        return Bot.objects.get(**lookup), False


def platform_seat(game_slug: str, kind: str, target: str) -> Bot:
    """The platform's seat of ``game_slug`` for a built-in strategy or a person in the browser:
    owned by no user, made once (active), never in a user's bot list."""
    if kind not in PLATFORM_KINDS:
        raise ValueError(f"no platform seat of kind {kind!r}")
    person = EndpointKind(kind).is_person
    target = "browser" if person else target
    name = "human" if person else f"built-in {target}"
    bot = Bot.objects.platform().filter(game=game_slug, kind=kind, target=target).first()
    if bot is None:
        try:
            with transaction.atomic():
                bot = create_bot(owner=None, game=game_slug, kind=kind, target=target, name=name)
        except IntegrityError:  # made by a concurrent request
            bot = Bot.objects.platform().get(game=game_slug, kind=kind, target=target)
    if bot.status != BotStatus.ACTIVE:
        set_bot_status(bot, BotStatus.ACTIVE)
    return bot


# -- status and health ----------------------------------------------------------------------


def set_bot_status(bot: Bot, status: BotStatus, reason: str = "", *, detail: str = "") -> bool:
    """The one way a bot's status changes; True if it changed. Its owner is told (``detail``:
    more for them than the public ``reason``). A bot made active starts its forfeit count again
    (``BotHealth.streak``) and sends ``bot_activated`` in this transaction."""
    with transaction.atomic():
        before = Bot.objects.filter(pk=bot.pk).values_list("status", flat=True).first()
        changed = (
            Bot.objects.filter(pk=bot.pk)
            .exclude(status=status, status_reason=reason)
            .update(status=status, status_reason=reason, updated=timezone.now())
        )
        if changed and before != status:
            bot_notices.status_changed(bot, before, status, reason, detail)
        if changed and status == BotStatus.ACTIVE:
            BotHealth.objects.filter(bot_id=bot.pk).update(streak=0)  # it may still fail
            bot_activated.send(sender=Bot, bot=bot)
    bot.refresh_from_db(fields=["status", "status_reason", "updated"])
    return bool(changed)


def resume_bot(bot: Bot) -> bool:
    """The owner's resume of a paused bot (False if it was not paused)."""
    with transaction.atomic():
        if not Bot.objects.select_for_update().filter(pk=bot.pk, status=BotStatus.PAUSED).exists():
            return False
        return set_bot_status(bot, BotStatus.ACTIVE)


# -- versions -------------------------------------------------------------------------------


class UploadThrottled(ValidationError):
    """An upload refused by the per-user rate (429); ``retry_after`` in seconds."""

    def __init__(self, message: str, retry_after: int):
        super().__init__({"file": message})
        self.retry_after = retry_after


class VersionKept(ValidationError):
    """A version that cannot be deleted (a match played it, or the bot plays it): the sentence."""


def versions(bot: Bot, limit: int) -> list[BotVersion]:
    """A code bot's latest ``limit`` versions, newest first, without their bytes; each with
    ``played`` (a match or a frozen event entry holds it: kept for good)."""
    found = list(
        bot.versions.defer("data", "artefact")
        .annotate(played=_played(models.OuterRef("pk")))
        .order_by("-number")[:limit]
    )
    for version in found:
        version.bot = bot
    return found


def _played(version) -> models.Expression:
    """True when a match's seat or an event's frozen entry holds ``version`` (an id or a ref)."""
    return models.Exists(Participant.objects.filter(version=version)) | models.Exists(
        Entry.objects.filter(version=version)
    )


def charge_upload(user) -> None:
    """Count an upload attempt against ``ARENA_UPLOADS_PER_MINUTE``, one budget for the web,
    the API (and so the CLI) and the admin, before the upload is read; ``UploadThrottled``
    beyond."""
    per_minute = Limit("uploads", settings.ARENA_UPLOADS_PER_MINUTE, 60)
    if (wait := hit(per_minute, str(user.pk))) is not None:
        raise UploadThrottled(
            f"Too many uploads: at most {per_minute.count} a minute. Try again in {wait} s; "
            "nothing was stored.",
            retry_after=wait,
        )


def read_upload(user, upload, bot: Bot | None = None, *, owner=None) -> Upload:
    """An upload charged to ``user``, then ``check_upload``'s."""
    charge_upload(user)
    return check_upload(upload, bot, owner=user if owner is None else owner)


def check_upload(upload, bot: Bot | None = None, *, owner=None) -> Upload:
    """An uploaded file read once and checked, and against the storage of ``bot`` (None, or
    not saved yet: a new bot of ``owner``'s) and its owner: ``ValidationError`` on ``file`` if
    refused. ``add_version`` checks the storage again, locked."""
    read = read_uploaded_code(upload)
    check_storage(bot if bot is not None else Bot(owner=owner), len(read.data))
    return read


def add_version(bot: Bot, upload: Upload) -> BotVersion:
    """The one way an upload becomes ``bot``'s next version: nothing is stored when it would
    pass its owner's storage (``check_storage``, under the owner's row lock). Its bundle is
    kept, so a match here starts without parsing it again."""
    with transaction.atomic():
        if bot.owner_id is not None:  # one owner's uploads, one at a time (any bot)
            get_user_model().objects.select_for_update().filter(pk=bot.owner_id).exists()
        Bot.objects.select_for_update().filter(pk=bot.pk).exists()
        check_storage(bot, len(upload.data))
        last = bot.versions.aggregate(n=models.Max("number"))["n"] or 0
        version = BotVersion.objects.create(
            bot=bot,
            number=last + 1,
            filename=upload.name,
            language=upload.bundle.language,
            size=len(upload.data),
            sha256=hashlib.sha256(upload.data).hexdigest(),
            data=bytes(upload.data),
            build=builds.initial_status(upload.bundle.language),
        )
        bot.target = upload.name
        Bot.objects.filter(pk=bot.pk).update(target=upload.name, updated=timezone.now())
        if version.build == BuildStatus.QUEUED:  # compiled as soon as it is stored
            transaction.on_commit(dispatch_build)
        elif version.number > 1:  # it plays from the next match: placed again on the ladder
            version_ready.send(sender=Bot, bot=bot)
    codebundle.keep(upload)
    return version


def declare_version(bot: Bot, label: str) -> BotVersion | None:
    """A URL bot's owner declares the version its server now plays (a label: "2.1", "minimax
    depth 4"): its next matches record it, and it has its own record and a new start as an
    uploaded version has. None when it is the version already declared."""
    label = (label or "").strip()
    if not label:
        return None
    if not fits_label(label):
        raise ValidationError(
            {"version_label": f"A version label is at most {MAX_LABEL} printable characters."}
        )
    if bot.endpoint_kind.takes_uploads or bot.endpoint_kind.is_person:
        raise ValidationError(
            {"version_label": "Only a URL bot declares its version: a code bot's is its upload."}
        )
    with transaction.atomic():
        Bot.objects.select_for_update().filter(pk=bot.pk).exists()
        latest = bot.versions.order_by("-number").first()
        if latest is not None and latest.label == label:
            return None
        version = BotVersion.objects.create(
            bot=bot,
            number=(latest.number if latest else 0) + 1,
            label=label,
            filename="",
            language="",
            size=0,
            sha256="",
            data=b"",
            build=BuildStatus.NONE,
        )
        version_ready.send(sender=Bot, bot=bot)  # a new start, placed again on the ladder
    return version


def announce_versions(announced: dict[int, str]) -> None:
    """The version labels URL bots' servers sent in a match (their ``X-Bot-Version`` header), by
    bot id: each a new declared version (``declare_version``) when it changed, so the bot's next
    matches record it; a label refused is logged and dropped (the header cannot fault a bot)."""
    for bot in Bot.objects.filter(pk__in=announced, kind=EndpointKind.HTTP):
        try:
            if declare_version(bot, announced[bot.pk]) is not None:
                logger.info("bot %s announced version %r", bot.pk, announced[bot.pk])
        except ValidationError:
            logger.info("bot %s announced a version label that was refused", bot.pk)


def upload_version(bot: Bot, upload, user) -> BotVersion:
    """Store ``user``'s upload as ``bot``'s next version; ``ValidationError`` on ``file`` if
    refused (``UploadThrottled`` past the rate)."""
    if not bot.endpoint_kind.takes_uploads:
        raise ValidationError(
            {"file": "Only a code bot takes uploads; this one is reached by its endpoint."}
        )
    return add_version(bot, read_upload(user, upload, bot))


def code_usage(user) -> dict:
    """What ``user``'s uploaded code uses of the caps, as shown on their bot's page."""
    return {
        "used": readable_bytes(code_bytes_used(user.pk)),
        "cap": readable_bytes(settings.ARENA_CODE_BYTES_PER_USER),
        "per_bot": settings.ARENA_VERSIONS_PER_BOT,
    }


def delete_version(bot: Bot, number: int) -> None:
    """Delete ``bot``'s version ``number`` to free its owner's storage; ``VersionKept`` when a
    match played it (its replay needs it), an event froze it, or it is the latest (the bot plays
    it), ``BotVersion.DoesNotExist`` when there is none."""
    with transaction.atomic():
        Bot.objects.select_for_update().filter(pk=bot.pk).exists()
        version = (
            bot.versions.defer("data", "artefact").annotate(played=_played(models.OuterRef("pk")))
        ).get(number=number)
        latest = bot.versions.aggregate(n=models.Max("number"))["n"]
        if version.number == latest:
            raise VersionKept(
                f"Version {number} is the latest: {bot.name} plays it. Upload a newer version "
                "first to delete this one."
            )
        if version.played:
            raise VersionKept(
                f"Version {number} played in a match (or an event froze it) and is kept for "
                "its replays."
            )
        try:
            version.delete()
        except (models.ProtectedError, models.RestrictedError):  # held since the check
            raise VersionKept(
                f"Version {number} played in a match and is kept for its replays."
            ) from None


# -- the test call --------------------------------------------------------------------------


class TestCallRefused(Exception):
    """A test call not made: the sentence says why (``str``)."""

    __test__ = False  # not a pytest class


class NotTestable(TestCallRefused):
    """The bot's kind cannot be test-called (a human seat, a local bot)."""


class NotBuilt(TestCallRefused):
    """No version of the code bot is built yet (or none compiled)."""


class TestCallTooSoon(TestCallRefused):
    """The bot's slot is taken: a call runs, or the last ended less than an interval ago."""


def claim_test_call(bot: Bot) -> bool:
    """The bot's test-call slot, one per bot across web and API: held while a call runs, due
    again ``TEST_CALL_INTERVAL`` after it ended."""
    return bot.claim_test_call(
        timedelta(seconds=TEST_CALL_INTERVAL), hold=timedelta(seconds=TEST_CALL_TIMEOUT + 5)
    )


async def try_test_call(bot: Bot) -> dict:
    """The owner's test call (slot taken, one real request, slot freed), or ``TestCallRefused``."""
    if not bot.endpoint_kind.testable:
        raise NotTestable("Only URL, built-in and code bots can be test-called.")
    if not await sync_to_async(claim_test_call)(bot):
        raise TestCallTooSoon(f"One test call every {TEST_CALL_INTERVAL} seconds per bot, please.")
    try:
        return await run_test_call(bot)
    finally:
        await sync_to_async(bot.release_test_call)()


async def run_test_call(bot: Bot) -> dict:
    """Send the game's first real request and judge the reply as the runner would."""
    game = get_game(bot.game)
    options = game.resolve_options()
    policy = game.policy(options)
    state = game.initial_state(seed=0, options=options)
    ctx = Context(match_id="test", time_left_ms=None, names=(bot.name,))
    message = game.observation(state, 0, ctx)
    limit = min(TEST_CALL_TIMEOUT, (policy.move_timeout_ms or TEST_CALL_TIMEOUT * 1000) / 1000)
    version = None
    if bot.endpoint_kind.takes_uploads:  # its latest playable upload, run in the sandbox
        version = (
            await bot.versions.filter(build__in=BuildStatus.playable()).order_by("-number").afirst()
        )
        if version is None:
            raise NotBuilt(
                "No version of this bot can play yet: its upload is still being compiled, or "
                "did not compile (its page shows the compiler's output)."
            )
    transport = bot.transport(seat=0, seed=0, match_id="test", options=options, version=version)
    result = {
        "fault": FaultCode.OK.value,
        "detail": "",
        "status": None,
        "latency_ms": None,
        "sent": "",
        "reply": "",
        "verdict": "",
        "when": time.time(),
    }
    started = time.perf_counter()
    try:
        await transport.start()
        done = await transport.exchange(message, timeout=limit)
        result.update(status=done.status, sent=done.sent, reply=done.received)
        if transport.announced_version:  # its server says which version it plays
            result["version"] = transport.announced_version
            await sync_to_async(announce_versions)({bot.pk: transport.announced_version})
        try:
            action = game.parse_action(state, 0, done.reply)
            result["verdict"] = f"accepted as the move {as_json(action)}"
        except IllegalAction as exc:
            result.update(fault=FaultCode.ILLEGAL.value, detail=str(exc))
    except BotFault as fault:
        result.update(
            fault=fault.code.value, detail=fault.detail, sent=fault.sent, reply=fault.received
        )
    except Exception as exc:  # our failure: say so, never blame the bot
        logger.exception("test call of bot %s failed", bot.pk)
        result.update(fault=FaultCode.PLATFORM.value, detail=repr(exc))
    finally:
        result["latency_ms"] = int((time.perf_counter() - started) * 1000)
        try:
            await transport.close()
        except Exception:
            logger.debug("closing the test transport failed", exc_info=True)
    if result["fault"] == FaultCode.OK.value:  # passed: its game's standing ladder takes it in
        await sync_to_async(test_call_passed.send)(sender=Bot, bot=bot)
    return _shown(result, bot)


def _shown(result: dict, bot: Bot) -> dict:
    """A test call's result as shown: request and reply decoded for reading and cut, and the
    outcome in words: ``headline`` ("OK", "Could not be reached"), ``message`` (the owner's
    sentence: what to do) and ``summary`` (one line: "Could not connect to http://…:
    connection refused."), never a fault code."""
    for key in ("sent", "reply"):
        # decoded from the whole message (a form body cut short would not decode)
        result[f"{key}_view"] = readable(result[key], TEST_CALL_PREVIEW)
        text, cut = truncate(result[key], TEST_CALL_PREVIEW)
        result[key], result[f"{key}_truncated"] = text, cut
    result["detail"] = truncate(result["detail"], 500)[0]
    result.update(test_call_words(result, bot))
    return result


def test_call_words(result: dict, bot: Bot) -> dict:
    """``headline``, ``message`` and ``summary`` of a test call's result (see ``_shown``)."""
    code, detail = result.get("fault") or FaultCode.OK.value, result.get("detail") or ""
    message = explain(code, detail)
    if code == FaultCode.OK:
        verdict = result.get("verdict") or "accepted"
        return {
            "headline": "OK",
            "message": message,
            "summary": f"It answered in {result.get('latency_ms')} ms: {verdict}.",
        }
    words, _rest = illegal_reason(bot.game, detail) if code == FaultCode.ILLEGAL else ("", "")
    if words:
        message = f"{message.rstrip('.')}: {words}."
    summary = fault_words(code, detail, bot.game, bot.endpoint, owner=True)
    return {
        "headline": seen(code)[:1].upper() + seen(code)[1:],
        "message": message,
        "summary": f"{summary[:1].upper()}{summary[1:]}.",
    }
