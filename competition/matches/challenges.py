"""User challenges: a match a user starts (a challenge, a fork, the bench) under the per-user
limits; a challenged bot's owner is told (``notifications.match_notices``). An owner's consent
(``Bot.challenges``): "always" plays at once, "never" refuses, "ask" holds the match
``pending`` (no runner takes it) with a ``ChallengeRequest`` per asked bot until its owner
accepts (then it is queued), declines or lets ``ARENA_CHALLENGE_EXPIRY`` pass (then it is
cancelled and never plays); the challenger is told either way."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.utils import timezone

from competition.matches.dispatch import dispatch
from competition.matches.lifecycle import cancel, create_match
from competition.models import (
    ChallengeAnswer,
    ChallengeConsent,
    ChallengeRequest,
    Match,
    MatchStatus,
)
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
    pending: bool = False,
) -> Match:
    """A match a user starts, under the per-user limits (``TooManyMatches``): practice, never
    rated (``unrated_reason`` says so), so no two accounts farm a rating between them;
    ``pending``: held for an owner's answer, not dispatched."""
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
        if pending:
            _check_pending(user)
        _check_target_rate(user, bots)
        reason = unrated_reason(bots, bench=practice)
        match = create_match(
            game.slug,
            bots,
            options=resolved,
            seed=seed,
            created_by=user,
            pace_ms=pace_ms,
            pending=pending,
            # the conditions the user chose: its forfeits are no sign of a bot's health
            friendly=practice or resolved != game.resolve_options(None),
        )
    match.unrated_reason = reason
    return match


def _check_pending(user) -> None:
    """``TooManyMatches`` when ``user`` already has ``ARENA_MAX_PENDING_CHALLENGES`` challenges
    waiting for an owner's answer (read on the creator and status index)."""
    waiting = Match.objects.filter(created_by=user, status=MatchStatus.PENDING).count()
    if waiting >= settings.ARENA_MAX_PENDING_CHALLENGES:
        raise TooManyMatches(
            f"You already have {waiting} challenges waiting for their owners' answers (at most "
            f"{settings.ARENA_MAX_PENDING_CHALLENGES}): wait until one is answered or expires."
        )


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
    asked = asked_bots(user, bots)
    with transaction.atomic():
        match = create_user_match(
            user, game_slug, bots, options=options, seed=seed, pace_ms=pace_ms, pending=bool(asked)
        )
        if asked:
            expires = timezone.now() + timedelta(seconds=settings.ARENA_CHALLENGE_EXPIRY)
            ChallengeRequest.objects.bulk_create(
                [
                    ChallengeRequest(match=match, bot=bot, owner_id=bot.owner_id, expires=expires)
                    for bot in asked
                ]
            )
            match_notices.asked(user, asked, match)
        match_notices.challenged(user, [b for b in bots if b not in asked], match)
    return match


def asked_bots(user, bots: list[Bot]) -> list[Bot]:
    """The bots of other owners whose answer the challenge waits for (one per bot); a
    ``ValidationError`` naming each bot that accepts no challenges."""
    others = [b for b in dict.fromkeys(bots) if b.owner_id not in (None, user.pk)]
    refusing = [b for b in others if b.challenges == ChallengeConsent.NEVER]
    if refusing:
        raise ValidationError(
            {
                "bots": [
                    f"{bot.name} does not accept challenges: its owner chose never to be "
                    "challenged."
                    for bot in refusing
                ]
            }
        )
    return [b for b in others if b.challenges == ChallengeConsent.ASK]


class NotYours(ValidationError):
    """An answer to a challenge that does not wait for this user (404 in the API)."""


def waiting_for(user, limit: int = 100):
    """The challenges waiting for ``user``'s answer (not expired), newest first."""
    return (
        ChallengeRequest.objects.filter(
            owner=user, answer=ChallengeAnswer.WAITING, expires__gt=timezone.now()
        )
        .select_related("match", "match__created_by", "bot")
        .order_by("-id")[:limit]
    )


def _requests_of(user, match_id: int) -> list[ChallengeRequest]:
    """``user``'s waiting requests of the match, locked; ``NotYours`` when there is none."""
    rows = list(
        ChallengeRequest.objects.select_for_update()
        .filter(match_id=match_id, owner=user, answer=ChallengeAnswer.WAITING)
        .select_related("bot", "owner")
    )
    if not rows:
        raise NotYours(f"No challenge waits for your answer in match {match_id}.")
    return rows


def accept(user, match_id: int) -> Match:
    """The owner accepts: once no asked owner's answer is missing the match is queued and
    plays; ``ValidationError`` if it expired meanwhile (then it is cancelled, never played)."""
    with transaction.atomic():
        rows = _requests_of(user, match_id)
        now = timezone.now()
        late = any(row.expires <= now for row in rows)
        if not late:
            match = _accepted(match_id, rows, now)
    if late:
        expire(now, match_ids=[match_id])
        raise ValidationError(
            f"This challenge expired unanswered (after {expiry_words()}): it will not play."
        )
    return match


def _accepted(match_id: int, rows: list[ChallengeRequest], now) -> Match:
    """``rows`` accepted; the match queued (and dispatched) once none waits."""
    ChallengeRequest.objects.filter(pk__in=[r.pk for r in rows]).update(
        answer=ChallengeAnswer.ACCEPTED, answered=now
    )
    match = Match.objects.select_related("created_by").get(pk=match_id)
    waiting = ChallengeRequest.objects.filter(match_id=match_id, answer=ChallengeAnswer.WAITING)
    if not waiting.exists() and Match.objects.filter(
        pk=match_id, status=MatchStatus.PENDING
    ).update(status=MatchStatus.QUEUED, queued_at=now):
        match.status = MatchStatus.QUEUED
        transaction.on_commit(lambda: dispatch(match_id))
    match_notices.answered(match, rows, ChallengeAnswer.ACCEPTED)
    return match


def decline(user, match_id: int) -> Match:
    """The owner declines: the match is cancelled and never plays; the challenger is told."""
    with transaction.atomic():
        rows = _requests_of(user, match_id)
        now = timezone.now()
        ChallengeRequest.objects.filter(match_id=match_id, answer=ChallengeAnswer.WAITING).update(
            answer=ChallengeAnswer.DECLINED, answered=now
        )
        cancel(match_id, "Declined by the challenged bot's owner.")
        match = Match.objects.select_related("created_by").get(pk=match_id)
        match_notices.answered(match, rows, ChallengeAnswer.DECLINED)
    return match


def expiry_words() -> str:
    """``ARENA_CHALLENGE_EXPIRY`` for people ("24 hours", "90 seconds")."""
    seconds = settings.ARENA_CHALLENGE_EXPIRY
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return f"{hours} hour{'s' if hours != 1 else ''}"
    if seconds % 60 == 0:
        minutes = seconds // 60
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def expire(now=None, *, match_ids: list[int] | None = None, batch: int = 100) -> int:
    """Cancel the challenges whose answer did not come in time (the periodic step); each
    challenger told. The matches ended."""
    now = now or timezone.now()
    due = ChallengeRequest.objects.filter(answer=ChallengeAnswer.WAITING, expires__lte=now)
    if match_ids is not None:
        due = due.filter(match_id__in=match_ids)
    ended = 0
    for match_id in list(due.values_list("match_id", flat=True).distinct()[:batch]):
        with transaction.atomic():
            rows = list(
                ChallengeRequest.objects.select_for_update()
                .filter(match_id=match_id, answer=ChallengeAnswer.WAITING)
                .select_related("bot", "owner")
            )
            if not rows:
                continue
            ChallengeRequest.objects.filter(pk__in=[r.pk for r in rows]).update(
                answer=ChallengeAnswer.EXPIRED, answered=now
            )
            cancel(match_id, f"Expired: its owner did not answer within {expiry_words()}.")
            match = Match.objects.select_related("created_by").get(pk=match_id)
            match_notices.answered(match, rows, ChallengeAnswer.EXPIRED)
            ended += 1
    return ended


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
