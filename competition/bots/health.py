"""A bot's health, kept up to date at each finish of a match that counts (``judges_health``) in
one ``BotHealth`` row, and said in words the same way on its page, its owner's list, the
leaderboard, the API and the CLI: answering (its typical reply time), slow (its p95 above half
the game's time a move), failing since a time (with its last fault), paused (why, and how to
resume it), or not played yet. A bot whose last ``ARENA_BOT_HEALTH_FORFEITS`` counted matches
were all forfeited because it was absent or too late is paused (``set_bot_status``)."""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.utils import timezone

from bots.faults import FaultCode, seen
from competition.bots import messages
from competition.bots.services import set_bot_status
from competition.matches.replies import SeatReplies
from competition.models import Participant
from competition.models.bots import Bot, BotHealth, BotStatus
from games import get_game

logger = logging.getLogger(__name__)

#: the faults that count towards a pause (the bot was not there, or too late)
HEALTH_CAUSES = (FaultCode.CONNECT.value, FaultCode.TIMEOUT.value)
#: the matches whose reply times a bot's health is judged on (its last ones)
WINDOW = 20
#: a bot is slow when its p95 reply time is above this share of the game's time a move
SLOW_SHARE = 0.5


class Code:
    """The health codes (the API's ``health.code``); ``WORDS`` are how people read them."""

    ANSWERING = "answering"
    SLOW = "slow"
    FAILING = "failing"
    PAUSED = "paused"
    INACTIVE = "inactive"
    NOT_PLAYED = "not_played"


@dataclass(frozen=True)
class Health:
    """A bot's health: ``code``, ``words`` (short, for a table's cell) and ``sentence``."""

    code: str
    words: str
    sentence: str
    since: datetime | None = None
    typical_ms: int | None = None
    p95_ms: int | None = None

    @property
    def ranked(self) -> bool:
        """Whether the leaderboard may rank the bot (a failing or paused one is not)."""
        return self.code not in (Code.FAILING, Code.PAUSED, Code.INACTIVE)

    def as_json(self) -> dict:
        return {
            "code": self.code,
            "words": self.words,
            "sentence": self.sentence,
            "since": self.since.isoformat() if self.since else None,
            "typical_ms": self.typical_ms,
            "p95_ms": self.p95_ms,
        }


# -- kept at each finish --------------------------------------------------------------------


def record(participants: list[Participant], replies: dict[int, SeatReplies], now=None) -> list:
    """Count a finished match (one that judges health) in its bots' rows, inside the finish;
    pause each bot absent or late ``ARENA_BOT_HEALTH_FORFEITS`` times in a row: the ids paused."""
    now = now or timezone.now()
    k = settings.ARENA_BOT_HEALTH_FORFEITS
    paused = []
    for p in sorted(participants, key=lambda p: (p.bot_id, p.seat)):  # rows locked in one order
        row = _counted(p, replies.get(p.seat) or SeatReplies(), now)
        if not (k > 0 and row.streak >= k):
            continue
        bot = Bot.objects.select_for_update().get(pk=p.bot_id)
        if bot.status != BotStatus.ACTIVE:
            continue
        reason = f"it forfeited its last {k} matches in a row ({seen(row.fault)})"
        set_bot_status(bot, BotStatus.PAUSED, reason, detail=_resume_hint(bot, row))
        paused.append(bot.pk)
        logger.warning("bot %s paused: %s", bot.pk, reason)
    return paused


def _counted(p: Participant, seat: SeatReplies, now) -> BotHealth:
    """``p``'s bot's row with this match counted in it (locked, saved)."""
    row, _made = BotHealth.objects.select_for_update().get_or_create(bot_id=p.bot_id)
    row.played = now
    row.replies_ms = ([list(seat.replies_ms)] + list(row.replies_ms or []))[:WINDOW]
    if p.cause:  # forfeited by its own fault
        row.failing_since = row.failing_since or now
        row.fault = p.cause
        row.fault_detail = (seat.detail if seat.fault == p.cause else "")[:300]
        row.streak = row.streak + 1 if p.cause in HEALTH_CAUSES else 0
    else:
        row.failing_since, row.streak = None, 0
    row.save()
    return row


def _resume_hint(bot: Bot, row: BotHealth) -> str:
    """The owner's notice after the pause: the last fault in full, and how to resume."""
    return (
        f"Its last fault: {fault_words(row.fault, row.fault_detail, bot, owner=True)}. It plays no "
        f"new match until you resume it from its page (or with `arena resume {bot.pk}`); check "
        "that its server answers first."
    )


# -- said in words --------------------------------------------------------------------------


def when(moment: datetime) -> str:
    """A time as every page says it: "2 Dec 2026, 11:02 UTC"."""
    moment = moment.astimezone(UTC)
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"


def fault_words(code: str, detail: str, bot: Bot, *, owner: bool) -> str:
    """The last fault in words (``messages.fault_words``): in full to the owner, without the
    bot's address to others."""
    return messages.fault_words(code, detail, bot.game, bot.endpoint, owner=owner)


@functools.lru_cache(maxsize=64)
def move_limit_ms(game_slug: str) -> int | None:
    """The game's time a move under its own options (None: no limit)."""
    try:
        game = get_game(game_slug)
    except KeyError:
        return None
    return game.policy(game.resolve_options()).move_timeout_ms


def percentile(values: list[int], share: float) -> int:
    """The nearest-rank ``share`` percentile of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def describe(bot: Bot, row: BotHealth | None, *, owner: bool = False) -> Health:
    """``bot``'s health in words (``row``: its ``BotHealth``, None when it never played a
    counted match); ``owner``: said to its owner (the fault in full, how to resume)."""
    if bot.status == BotStatus.PAUSED:
        return _paused(bot, owner)
    if bot.status == BotStatus.INACTIVE:
        return Health(Code.INACTIVE, "deactivated", "Deactivated by its owner: it plays no match.")
    if row is None or row.played is None:
        return Health(Code.NOT_PLAYED, "not played yet", "Not played yet.")
    if row.failing_since is not None:
        fault = fault_words(row.fault, row.fault_detail, bot, owner=owner)
        since = when(row.failing_since)
        return Health(
            Code.FAILING,
            f"failing since {since}",
            f"Failing since {since}: it forfeited its last match ({fault}).",
            since=row.failing_since,
        )
    return _answering(bot, row)


def _paused(bot: Bot, owner: bool) -> Health:
    why = f": {bot.status_reason}" if bot.status_reason else ""
    how = (
        f" Resume it from its page (or with `arena resume {bot.pk}`) once its server answers."
        if owner
        else " It plays no new match until its owner resumes it."
    )
    return Health(Code.PAUSED, "paused", f"Paused{why}.{how}")


def _answering(bot: Bot, row: BotHealth) -> Health:
    times = [t for match in row.replies_ms or [] for t in match]
    if not times:
        return Health(Code.ANSWERING, "answering", "Answering.")
    typical, p95 = percentile(times, 0.5), percentile(times, 0.95)
    limit = move_limit_ms(bot.game)
    if limit and p95 > SLOW_SHARE * limit:
        return Health(
            Code.SLOW,
            f"slow: p95 {p95} ms",
            f"Slow: 95% of its replies came within {p95} ms, more than half of the {limit} ms "
            f"a move allows (typically {typical} ms).",
            typical_ms=typical,
            p95_ms=p95,
        )
    return Health(
        Code.ANSWERING,
        f"answering in {typical} ms",
        f"Answering, typically in {typical} ms (95% of its replies within {p95} ms).",
        typical_ms=typical,
        p95_ms=p95,
    )


def of(bot: Bot, *, owner: bool = False) -> Health:
    """``describe`` of ``bot`` with its row (one query, unless it was selected with it)."""
    try:
        row = bot.health_row
    except BotHealth.DoesNotExist:
        row = None
    return describe(bot, row, owner=owner)
