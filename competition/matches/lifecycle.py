"""Match lifecycle: create, claim, renew, finish, release, cancel, requeue, reap (lease-fenced)."""

from __future__ import annotations

import functools
import logging
import os
import secrets
import socket
import uuid
from collections import OrderedDict
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.utils import timezone

from bots.faults import FaultCode
from competition.live import broadcast
from competition.matches import headtohead, history
from competition.matches.dispatch import dispatch
from competition.matches.presenters import match_json
from competition.matches.replies import seat_replies
from competition.matches.signals import match_ended, match_requeued
from competition.matches.sql import bind, claim_sql, finish_sql, renew_sql, token_param
from competition.models import (
    BuildStatus,
    Entry,
    Match,
    MatchStatus,
    Participant,
    SeatResult,
)
from competition.models.bots import Bot, BotVersion, EndpointKind
from competition.models.matches import practice_match
from competition.plumbing import metrics
from competition.ratings import services as ratings
from games import get_game
from games.base import Outcome

logger = logging.getLogger(__name__)


class LeaseLost(Exception):
    """This worker no longer owns the match (its lease expired or was taken over)."""


class LimitReached(Exception):
    """A platform limit stopped the match (``LIMIT_TURNS``, ``LIMIT_TIME``, ``LIMIT_BYTES``)."""

    def __init__(self, limit: str):
        super().__init__(limit)
        self.limit = limit


#: the runner a writer process claims for (``act_for``), else this process
_acting_for: dict[str, int] = {}


def act_for(pid: int) -> None:
    """This process (a runner's writer) claims matches in the name of the runner ``pid``."""
    _acting_for["pid"] = pid


def worker_name() -> str:
    return _worker_name(_acting_for.get("pid") or os.getpid())


@functools.cache
def _worker_name(pid: int) -> str:  # asked at every claim: the host's name once per process
    return f"{socket.gethostname()}:{pid}"


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.ARENA_LEASE_SECONDS)


# -- create ---------------------------------------------------------------------------


def seat_versions(bots: list[Bot], event=None) -> dict[int, int]:
    """The version each bot plays: a code bot's frozen on its entry once ``event`` started, else
    the latest (a URL bot's: the one its owner declared, if any)."""
    code = {bot.pk for bot in bots if bot.endpoint_kind.takes_uploads}
    declared = {bot.pk for bot in bots if bot.kind == EndpointKind.HTTP}
    if not code and not declared:
        return {}
    chosen: dict[int, int] = {}
    if event is not None:
        frozen = Entry.objects.filter(event=event, bot_id__in=code, version__isnull=False)
        chosen.update(frozen.values_list("bot_id", "version_id"))
    newest = (
        BotVersion.objects.filter(bot_id=models.OuterRef("pk"), build__in=BuildStatus.playable())
        .order_by("-number")
        .values("id")[:1]
    )
    rest = Bot.objects.filter(pk__in=(code | declared) - chosen.keys())
    rest = rest.annotate(v=models.Subquery(newest))
    chosen.update((pk, v) for pk, v in rest.values_list("pk", "v") if v is not None)
    return chosen


def _checked(game_slug: str, bots: list[Bot], options: dict | None):
    """The game and its resolved options for ``bots``, or ``ValidationError`` in words."""
    try:
        game = get_game(game_slug)
    except KeyError:
        raise ValidationError({"game": f"Unknown game {game_slug!r}."}) from None
    low, high = game.seats
    if not low <= len(bots) <= high:
        wanted = f"exactly {low}" if low == high else f"{low} to {high}"
        raise ValidationError({"bots": f"{game.title} needs {wanted} bots."})
    try:
        resolved = game.options_for_seats(game.resolve_options(options), len(bots))
    except ValueError as exc:
        raise ValidationError({"options": str(exc)}) from None
    for bot in bots:
        if bot.game != game.slug:
            raise ValidationError({"bots": f"{bot} does not play {game.title}."})
    return game, resolved


def create_match(
    game_slug: str,
    bots: list[Bot],
    *,
    options: dict | None = None,
    seed: int | None = None,
    event=None,
    round: int | None = None,
    pairing: str = "",
    game_in_series: int = 0,
    created_by=None,
    pace_ms: int = 0,
    not_before=None,
    dispatch_now: bool = True,
    rated: bool = True,
    ladder=None,
    friendly: bool = False,
    versions: dict[int, int] | None = None,
    replay_of: Match | None = None,
    report_version: BotVersion | None = None,
    pending: bool = False,
) -> Match:
    """A queued match, dispatched after commit; ``ValidationError`` for a bad game, options or bots.
    ``rated`` is decided last here, so no caller can rate one owner's bots against each other, nor
    a match a user made (``practice``: only an event's or the ladder's matches are rated).
    ``versions`` pins a code bot's version per seat (a replay plays the versions that played);
    the other code seats play ``seat_versions``'s."""
    game, resolved = _checked(game_slug, bots, options)
    if seed is None:
        seed = secrets.randbits(31)
    with transaction.atomic():
        match = Match.objects.create(
            game=game.slug,
            options=resolved,
            seed=seed,
            event=event,
            round=round,
            pairing=pairing,
            game_in_series=game_in_series,
            created_by=created_by,
            pace_ms=pace_ms,
            not_before=not_before,
            ladder=ladder,
            friendly=friendly,
            replay_of=replay_of,
            report_version=report_version,
            status=MatchStatus.PENDING if pending else MatchStatus.QUEUED,
            rated=rated
            and not practice_match(getattr(created_by, "pk", None), event, ladder)
            and not ratings.one_owner(bot.owner_id for bot in bots),
        )
        chosen = seat_versions(bots, event)
        pinned = versions or {}
        Participant.objects.bulk_create(
            [
                Participant(
                    match=match,
                    seat=seat,
                    bot=bot,
                    version_id=pinned.get(seat, chosen.get(bot.pk)),
                    ladder=ladder,
                )
                for seat, bot in enumerate(bots)
            ]
        )
        if dispatch_now and not pending:
            transaction.on_commit(lambda: dispatch(match.pk))
    return match


def sweep_queued(now=None) -> list[int]:
    """Dispatch again matches queued for more than two lease periods (a lost message)."""
    now = now or timezone.now()
    stale = list(
        Match.objects.queued()
        .filter(queued_at__lt=now - 2 * lease_duration())
        .values_list("id", flat=True)[:500]
    )
    if stale:
        Match.objects.filter(pk__in=stale, status=MatchStatus.QUEUED).update(queued_at=now)
        for match_id in stale:
            dispatch(match_id)
    return stale


# -- claim and lease ------------------------------------------------------------------


def claim(
    match_id: int | None = None, *, worker: str | None = None, humans: bool | None = None
) -> tuple[int, uuid.UUID] | None:
    """Claim one queued match: ``(id, lease token)`` or None (a conditional UPDATE: races safe)."""
    worker = (worker or worker_name())[:120]
    db = connections[DEFAULT_DB_ALIAS]
    now = timezone.now()
    at = db.ops.adapt_datetimefield_value(now)
    pick, pick_slots, take, take_slots = claim_sql(db, humans)
    with db.cursor() as cursor:
        if match_id is not None:
            candidates = [match_id]
        else:
            cursor.execute(pick, bind(pick_slots, now=at))
            candidates = [row[0] for row in cursor.fetchall()]
        expires = db.ops.adapt_datetimefield_value(now + lease_duration())
        for candidate in candidates:
            token = uuid.uuid4()
            params = bind(
                take_slots,
                now=at,
                expires=expires,
                worker=worker,
                token=token_param(token, db),
                id=candidate,
            )
            cursor.execute(take, params)
            if cursor.rowcount == 1:
                return candidate, token
    return None


#: what claims loaded of their matches (the row and its seats), kept in the process that ran
#: the claim (a runner's writer process, or its database thread) for the finish that ends the
#: match there (``End.loaded_at_claim``): the runner does not send them back to be stored
_CLAIMED: OrderedDict[tuple[int, uuid.UUID], dict] = OrderedDict()
#: the most claims kept (a claim whose match ended elsewhere is dropped, the oldest first)
CLAIMED_KEPT = 1024


def keep_claimed(match_id: int, token: uuid.UUID, loaded: dict) -> None:
    """Keep what the claim ``token`` of ``match_id`` loaded (``"match"``, ``"participants"``)."""
    _CLAIMED[(match_id, token)] = {"match": loaded["match"], "participants": loaded["participants"]}
    while len(_CLAIMED) > CLAIMED_KEPT:
        _CLAIMED.popitem(last=False)


def claimed_loaded(match_id: int, token: uuid.UUID) -> dict | None:
    """What the claim ``token`` of ``match_id`` loaded in this process, taken; None if it ran
    elsewhere (another writer, before a restart) or was dropped: the finish reads them."""
    return _CLAIMED.pop((match_id, token), None)


def renew(match_id: int, token: uuid.UUID) -> bool:
    """Extend the lease; False when this worker no longer holds it."""
    db = connections[DEFAULT_DB_ALIAS]
    expires = db.ops.adapt_datetimefield_value(timezone.now() + lease_duration())
    with db.cursor() as cursor:
        cursor.execute(
            renew_sql(db),
            [expires, match_id, MatchStatus.RUNNING.value, token_param(token, db)],
        )
        return cursor.rowcount == 1


# -- finish ---------------------------------------------------------------------------


def seat_results(scores: tuple[float, ...]) -> list[str]:
    best = max(scores)
    winners = sum(1 for s in scores if s == best)
    return [
        (SeatResult.DRAW if winners > 1 else SeatResult.WIN) if s == best else SeatResult.LOSS
        for s in scores
    ]


def _end_running(
    cursor, db, status: MatchStatus, reason: str, now, match_id: int, token, counted=None
) -> bool:
    """End a running match (fenced by ``token`` if given); True if this call ended it."""
    end_leased, end_any, _seat_sql, end_counted = finish_sql(db)
    params = [status.value, reason, db.ops.adapt_datetimefield_value(now)]
    if counted is not None:
        if token is None:  # turns are counted only by the lease holder that stored them
            raise ValueError("counting turns with the end needs the lease token")
        params += [*counted, match_id, MatchStatus.RUNNING.value, token_param(token, db)]
        cursor.execute(end_counted, params)
        return cursor.rowcount == 1
    params += [match_id, MatchStatus.RUNNING.value]
    if token is None:
        cursor.execute(end_any, params)
    else:
        cursor.execute(end_leased, [*params, token_param(token, db)])
    return cursor.rowcount == 1


def finish(
    match_id: int,
    token: uuid.UUID | None,
    outcome: Outcome,
    forfeited: tuple[int, ...] = (),
    *,
    loaded: dict | None = None,
    turn_faults: list[list] | None = None,
    archive: list | None = None,
    archive_rows: int | None = None,
    counted: tuple[int, int] | None = None,
    turns: list[tuple] | None = None,
) -> bool:
    """Store the result, rate it, progress the event; False if already done (``token=None``: no
    lease check). ``counted``, (turns, bytes) of the last turns, moves in the ending statement;
    ``turns``, each turn's ``(faults, details, latencies_ms)`` (the seats' health), if held."""
    db = connections[DEFAULT_DB_ALIAS]
    seat_sql = finish_sql(db)[2]
    now = timezone.now()
    status = MatchStatus.FORFEITED if forfeited else MatchStatus.FINISHED
    # no savepoint: in a runner's batch (``competition.matches.batch``) a finish that lost
    # its lease wrote nothing and returns False; a failure rolls the batch back
    with transaction.atomic(savepoint=False), db.cursor() as cursor:
        if not _end_running(cursor, db, status, outcome.reason, now, match_id, token, counted):
            return False
        if loaded is None:
            match = Match.objects.get(pk=match_id)
            participants = list(
                match.participants.select_related("bot", "bot__owner").order_by("seat")
            )
        else:
            match, participants = loaded["match"], loaded["participants"]
            match.status, match.reason, match.finished = status, outcome.reason, now
            match.lease_token = match.lease_expires = None
        if turns is None and archive is not None:  # TURN_VALUES: faults, details, latencies
            turns = [(t[3], t[4], t[5]) for t in archive]
        if turns is None:
            turns = history.replies(match_id)
        if turn_faults is None:
            turn_faults = [faults for faults, _details, _latencies in turns]
        else:
            match.turn_count = len(turn_faults)
        charged: dict[int, int] = dict.fromkeys(range(len(participants)), 0)
        last_fault: dict[int, str] = {}
        by_code: dict[str, int] = {}
        for faults in turn_faults:
            for seat, code in enumerate(faults):
                if code not in (None, FaultCode.OK.value, FaultCode.PLATFORM.value):
                    charged[seat] = charged.get(seat, 0) + 1
                    last_fault[seat] = code
                    by_code[code] = by_code.get(code, 0) + 1
        results = seat_results(outcome.scores)
        for p in participants:
            p.score = outcome.scores[p.seat]
            p.result = results[p.seat]
            p.faults = charged.get(p.seat, 0)
            p.cause = last_fault.get(p.seat, "") if p.seat in forfeited else ""
        cursor.executemany(
            seat_sql, [[p.score, p.result, p.faults, p.cause, p.pk] for p in participants]
        )
        if not match.results_hidden():  # a hidden match is rated (and counted) at its reveal
            ratings.apply_match(match, participants)
            headtohead.record(match, participants)
        _ended(match, participants, forfeited, seat_replies(turns, len(participants)))
        summary = match_json(match, participants)
        _announce_end(match, summary, by_code)
        if archive is not None:
            history.archive_in_place(match_id, archive, archive_rows, game=match.game)
        else:
            _compact_on_commit(match_id)
    return True


def finish_limit(match_id: int, token: uuid.UUID | None, limit: str) -> bool:
    """End a match stopped by a platform limit (no result, rating or health count); False if done."""
    db = connections[DEFAULT_DB_ALIAS]
    with transaction.atomic(), db.cursor() as cursor:
        if not _end_running(cursor, db, MatchStatus.LIMIT, limit, timezone.now(), match_id, token):
            return False
        match = Match.objects.get(pk=match_id)
        _ended(match)
        summary = match_json(match)
        _announce_end(match, summary)
        _compact_on_commit(match_id)
    logger.info("match %s stopped at a platform limit (%s)", match_id, limit)
    return True


def release(match_id: int, token: uuid.UUID, error: str) -> str | None:
    """A platform failure: requeue the match, or give up after too many (``errored``)."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != MatchStatus.RUNNING or match.lease_token != token:
            return None
        return _requeue_or_error(match, error)


def _announce_end(match: Match, summary: dict, faults: dict | None = None) -> None:
    """Publish the end after commit (not to a hidden match's event group), and count it."""
    public = not match.results_hidden()
    labels = (metrics.process_kind(), match.game, match.kind, str(match.status))

    def committed() -> None:
        metrics.MATCHES_ENDED.labels(*labels).inc()
        for code, n in (faults or {}).items():
            metrics.FAULTS.labels(labels[0], match.game, code).inc(n)
        announce_end(summary, public=public)

    transaction.on_commit(committed)


def announce_end(summary: dict, *, public: bool = True) -> None:
    """After commit: the end to the match's (and its event's) watchers, the count to the home page."""
    broadcast.match_finished(summary, public=public)
    announce_running(summary["game"], summary if public else None)


def announce_running(game_slug: str, summary: dict | None = None) -> None:
    """The home page's "live now" count of ``game_slug``, sent only while someone watches it."""
    if broadcast.listened(broadcast.HOME_GROUP):
        running = Match.objects.public().filter(game=game_slug, status=MatchStatus.RUNNING)
        count = running.count()
        watch = running.order_by("-id").values_list("id", flat=True).first() if count else None
        broadcast.running_changed(game_slug, count, watch=watch, match=summary)


def _ended(
    match: Match, participants: list[Participant] | None = None, forfeited=(), replies=None
) -> None:
    """Send ``signals.match_ended`` inside the transaction that ended ``match`` (``replies``: each
    seat's ``SeatReplies``, when it has a result)."""
    match_ended.send(
        Match,
        match=match,
        participants=participants,
        forfeited=tuple(forfeited),
        replies=replies or {},
    )


def _compact_on_commit(match_id: int) -> None:
    """After commit, compact the match's turns (with the runner's batch) if ``ARENA_COMPACT_ON_END``."""
    if settings.ARENA_COMPACT_ON_END:
        transaction.on_commit(lambda: history.compact_on_end(match_id))


def _requeue_or_error(match: Match, error: str) -> str:
    match.platform_failures += 1
    match.lease_token = None
    match.lease_expires = None
    match.error = error[:2000]
    if match.platform_failures >= settings.ARENA_MAX_PLATFORM_FAILURES:
        match.status = MatchStatus.ERRORED
        match.finished = timezone.now()
        summary = match_json(match)
        _announce_end(match, summary)
    else:
        match.status = MatchStatus.QUEUED
        match.queued_at = timezone.now()
        transaction.on_commit(lambda: dispatch(match.pk))
    match.save(
        update_fields=[
            "status",
            "platform_failures",
            "lease_token",
            "lease_expires",
            "error",
            "finished",
            "queued_at",
        ]
    )
    if match.status == MatchStatus.ERRORED and match.event_id:
        # an errored match holds its event's round (an organiser may requeue it), but a
        # round robin whose last pending match errored is over
        _ended(match)
    return match.status


def reap(now=None) -> list[int]:
    """Requeue running matches whose lease expired (a dead worker); returns their ids."""
    now = now or timezone.now()
    reaped = []
    for match_id in list(Match.objects.expired(now).values_list("id", flat=True)):
        with transaction.atomic():
            match = Match.objects.select_for_update().get(pk=match_id)
            if (
                match.status != MatchStatus.RUNNING
                or match.lease_expires is None
                or match.lease_expires >= now
            ):
                continue
            _requeue_or_error(match, f"lease expired (worker {match.worker or '?'})")
            reaped.append(match_id)
    return reaped


def cancel(match_id: int, reason: str = "cancelled", *, advance: bool = True) -> bool:
    """Cancel a pending, queued or running match; its event moves on unless ``advance`` is
    false."""
    with transaction.atomic():
        live = (MatchStatus.PENDING, MatchStatus.QUEUED, MatchStatus.RUNNING)
        updated = Match.objects.filter(pk=match_id, status__in=live).update(
            status=MatchStatus.CANCELLED,
            lease_token=None,
            lease_expires=None,
            error=reason[:2000],
            finished=timezone.now(),
        )
        if updated:
            match = Match.objects.get(pk=match_id)
            summary = match_json(match)
            _announce_end(match, summary)
            if advance:
                _ended(match)
            _compact_on_commit(match_id)
    return bool(updated)


def requeue(match_id: int) -> bool:
    """An organiser's retry of an errored match (history kept: it resumes)."""
    with transaction.atomic():
        updated = Match.objects.filter(pk=match_id, status=MatchStatus.ERRORED).update(
            status=MatchStatus.QUEUED,
            platform_failures=0,
            finished=None,
            error="",
            queued_at=timezone.now(),
        )
        if updated:
            # its series is pending again: an event's standings follow (match_requeued)
            match_requeued.send(sender=Match, match=Match.objects.get(pk=match_id))
            transaction.on_commit(lambda: dispatch(match_id))
    return bool(updated)
