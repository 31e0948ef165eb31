"""User challenges: a match a user starts (a challenge, a fork, the bench) under the per-user
limits; a challenged bot's owner is told (``notifications.match_notices``)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.utils import timezone

from competition.matches.lifecycle import create_match
from competition.models import Match, MatchStatus
from competition.models.bots import Bot, BotStatus
from competition.notifications import match_notices
from competition.plumbing.ratelimit import Limit, hit
from competition.ratings import services as ratings
from games import get_game


class TooManyMatches(ValidationError):
    """A user's match refused by a per-user limit (429); ``retry_after`` in seconds when known."""

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def create_user_match(
    user,
    game_slug: str,
    bots: list[Bot],
    *,
    options: dict | None = None,
    seed: int | None = None,
    pace_ms: int = 0,
    practice: bool = False,
) -> Match:
    """A match a user starts, under the per-user limits (``TooManyMatches``): practice, never
    rated (``unrated_reason`` says so), so no two accounts farm a rating between them."""
    try:
        game = get_game(game_slug)
        resolved = game.resolve_options(options)
    except KeyError:
        raise ValidationError({"game": f"Unknown game {game_slug!r}."}) from None
    except ValueError as exc:
        raise ValidationError({"options": str(exc)}) from None
    if reason := game.endless(resolved):
        raise ValidationError({"options": f"Not allowed: {reason}."})
    with transaction.atomic():
        # a write first: serialises this user's match creations (a row lock on PostgreSQL,
        # the write lock on SQLite), so that two requests cannot both pass the counts below
        get_user_model().objects.filter(pk=user.pk).update(last_login=models.F("last_login"))
        active = Match.objects.filter(
            created_by=user,
            event__isnull=True,
            status__in=(MatchStatus.QUEUED, MatchStatus.RUNNING),
        ).count()
        if active >= settings.ARENA_MAX_ACTIVE_MATCHES:
            raise TooManyMatches(
                f"You already have {active} matches queued or running "
                f"(at most {settings.ARENA_MAX_ACTIVE_MATCHES}): wait for one to end."
            )
        _check_target_rate(user, bots)
        reason = unrated_reason(bots, bench=practice)
        match = create_match(
            game.slug,
            bots,
            options=resolved,
            seed=seed,
            created_by=user,
            pace_ms=pace_ms,
            # the conditions the user chose: its forfeits are no sign of a bot's health
            friendly=practice or resolved != game.resolve_options(None),
        )
    match.unrated_reason = reason
    return match


def unrated_reason(bots: list[Bot], *, bench: bool = False) -> str:
    """Why a match a user starts is not rated, as a sentence: every such match is practice."""
    if bench:
        return "Unrated: bench matches are practice and never change a rating."
    if ratings.one_owner(bot.owner_id for bot in bots):
        return ratings.ONE_OWNER
    return ratings.PRACTICE


def challenge(
    user,
    game_slug: str,
    bot_ids: list[int],
    *,
    options: dict | None = None,
    seed: int | None = None,
    pace_ms: int = 0,
) -> Match:
    """A user's challenge by seat (web or API): charged, its bots checked, then created."""
    charge_challenge(user)
    bots = challenge_bots(user, bot_ids)
    with transaction.atomic():
        match = create_user_match(
            user, game_slug, bots, options=options, seed=seed, pace_ms=pace_ms
        )
        match_notices.challenged(user, bots, match)
    return match


def charge_challenge(user) -> None:
    """Count a challenge (or fork) against ``ARENA_CHALLENGES_PER_MINUTE``; ``TooManyMatches`` beyond."""
    per_minute = Limit("challenges", settings.ARENA_CHALLENGES_PER_MINUTE, 60)
    if (wait := hit(per_minute, str(user.pk))) is not None:
        raise TooManyMatches(
            f"Too many challenges: at most {per_minute.count} a minute. "
            f"Try again in {wait} s; nothing was created.",
            retry_after=wait,
        )


def challenge_bots(user, bot_ids: list[int]) -> list[Bot]:
    """A challenge's bots by seat, if ``user`` may pit them: all active, one of them theirs
    (staff: any); ``ValidationError`` or ``PermissionDenied`` otherwise."""
    found = {bot.pk: bot for bot in Bot.objects.select_related("owner").filter(pk__in=set(bot_ids))}
    errors = []
    for bot_id in bot_ids:
        bot = found.get(bot_id)
        if (
            bot is None
            or bot.endpoint_kind.is_person
            or not (user.is_staff or bot.status == BotStatus.ACTIVE or bot.owner_id == user.pk)
        ):
            errors.append(f"Bot {bot_id} does not exist or is not available.")
        elif not user.is_staff and bot.status != BotStatus.ACTIVE:
            errors.append(f"Your bot {bot.name!r} is {bot.status}: only active bots play.")
    if errors:
        raise ValidationError({"bots": errors})
    if not user.is_staff and not any(found[bot_id].owner_id == user.pk for bot_id in bot_ids):
        raise PermissionDenied(
            "You must own one of the bots (you may challenge any active bot with yours)."
        )
    return [found[bot_id] for bot_id in bot_ids]


def _check_target_rate(user, bots: list[Bot]) -> None:
    """``TooManyMatches`` if ``user`` challenged a bot of someone else's too often this hour."""
    limit = settings.ARENA_CHALLENGES_PER_TARGET_HOUR
    since = timezone.now() - timedelta(hours=1)
    others = {b.pk: b for b in bots if b.owner_id not in (user.pk, None)}  # platform seats: free
    for bot in others.values():
        recent = list(
            Match.objects.filter(created_by=user, created__gte=since, participants__bot=bot)
            .order_by("created")
            .values_list("created", flat=True)
            .distinct()[: max(limit, 1)]
        )
        if len(recent) >= limit:
            wait = (
                int((recent[0] + timedelta(hours=1) - timezone.now()).total_seconds()) + 1
                if recent
                else 3600
            )
            raise TooManyMatches(
                f"You have challenged {bot.name!r} {len(recent)} times in the last hour "
                f"(at most {limit}): try again later.",
                retry_after=max(wait, 1),
            )
