"""Match lifecycle services: create, claim, record, finish, release, reap, resume.

The database is the source of truth. A worker owns a match only while it holds the lease:
claiming is a conditional ``UPDATE … WHERE status = 'queued'`` that sets a fresh lease
token; every turn write and the finish are fenced by that token, so a worker whose lease
expired (and whose match another worker resumed) can write nothing more. A resumed match
rebuilds its state by replaying the stored turns through the deterministic engine.

Platform limits bound every match whatever its options: ``ARENA_MATCH_MAX_TURNS`` (the
runner's turn counter), ``ARENA_MATCH_MAX_SECONDS`` (wall-clock time since it started) and
``ARENA_MATCH_MAX_BYTES`` (the JSON bytes of its stored turns, counted as they are encoded
and kept on the match row); reaching one ends the match as ``limit``: no result, unrated.
Matches users start (``create_user_match``: the web bench and API challenges) are also
bounded per user (``ARENA_MAX_ACTIVE_MATCHES`` queued or running) and per target bot
(``ARENA_CHALLENGES_PER_TARGET_HOUR``), and are friendly (unrated) unless they use the
game's default options.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import secrets
import socket
import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, models, transaction
from django.utils import timezone

from bots.faults import FaultCode
from bots.models import Bot
from competition import broadcast
from competition.dbthreads import run_db
from competition.models import Match, MatchStatus, Participant, SeatResult, Turn
from competition.runner import (
    LIMIT_BYTES,
    LIMIT_TIME,
    MatchResult,
    PlatformError,
    TurnRecord,
    forfeit_outcome,
    play,
)
from games import get_game
from games.base import Outcome

logger = logging.getLogger(__name__)


class LeaseLost(Exception):
    """This worker no longer owns the match (its lease expired or was taken over)."""


class LimitReached(Exception):
    """A platform limit stopped the match (``limit``: ``LIMIT_TURNS``, ``LIMIT_TIME``,
    ``LIMIT_BYTES``)."""

    def __init__(self, limit: str):
        super().__init__(limit)
        self.limit = limit


class TooManyMatches(ValidationError):
    """A user's match refused by a per-user limit (the API answers 429, the web shows it);
    ``retry_after``: seconds until it may succeed, when known."""

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.ARENA_LEASE_SECONDS)


# -- create ---------------------------------------------------------------------------


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
) -> Match:
    """A queued match (with one ``Participant`` per seat), dispatched after commit.

    Raises ``ValidationError`` for an unknown game, bad options or wrong bots.
    """
    try:
        game = get_game(game_slug)
    except KeyError:
        raise ValidationError({"game": f"Unknown game {game_slug!r}."}) from None
    try:
        resolved = game.resolve_options(options)
    except ValueError as exc:
        raise ValidationError({"options": str(exc)}) from None
    if len(bots) != game.num_players:
        raise ValidationError({"bots": f"{game.title} needs exactly {game.num_players} bots."})
    for bot in bots:
        if bot.game != game.slug:
            raise ValidationError({"bots": f"{bot} does not play {game.title}."})
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
            rated=rated,
        )
        Participant.objects.bulk_create(
            [Participant(match=match, seat=seat, bot=bot) for seat, bot in enumerate(bots)]
        )
        if dispatch_now:
            transaction.on_commit(lambda: dispatch(match.pk))
    return match


def create_user_match(
    user,
    game_slug: str,
    bots: list[Bot],
    *,
    options: dict | None = None,
    seed: int | None = None,
    pace_ms: int = 0,
) -> Match:
    """A match a user starts (the web bench, an API challenge), under the per-user limits.

    Refused (``ValidationError``) for options that could never end a game (``Game.endless``,
    as for events); refused with ``TooManyMatches`` when the user already has
    ``ARENA_MAX_ACTIVE_MATCHES`` matches queued or running, or has challenged one of the
    bots of someone else ``ARENA_CHALLENGES_PER_TARGET_HOUR`` times in the last hour. Rated
    only with the game's default options; any other options make a friendly match (not
    rated, not counted for bot health), so nobody can choose the conditions under which
    someone else's bot is rated.
    """
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
        return create_match(
            game.slug,
            bots,
            options=resolved,
            seed=seed,
            created_by=user,
            pace_ms=pace_ms,
            rated=resolved == game.resolve_options(None),
        )


def _check_target_rate(user, bots: list[Bot]) -> None:
    """``TooManyMatches`` if ``user`` challenged a bot of someone else's too often this hour."""
    limit = settings.ARENA_CHALLENGES_PER_TARGET_HOUR
    since = timezone.now() - timedelta(hours=1)
    for bot in {b.pk: b for b in bots if b.owner_id != user.pk}.values():
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


def dispatch(match_id: int) -> None:
    """Tell a runner that ``match_id`` is queued (the database decides who plays it).

    Best effort: if the broker is down the match stays queued in the database and
    ``sweep_queued`` dispatches it again later."""
    try:
        if settings.ARENA_RUNNER == "celery":
            from competition.tasks import run_match_task

            run_match_task.delay(match_id)
        else:
            from competition import embedded

            embedded.wake()
    except Exception:
        logger.exception("dispatch of match %s failed; it stays queued", match_id)


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


def _token_param(token: uuid.UUID, db) -> Any:
    """A lease token as the connection stores it (hex text on SQLite, a uuid on PostgreSQL)."""
    return Match._meta.get_field("lease_token").get_db_prep_save(token, db)


@functools.cache
def _claim_sql(db) -> tuple[str, str]:
    """(pick up to 20 due match ids, take one of them) for a connection: what
    ``Match.objects.due`` means, in SQL (this runs once per match: no ORM compiling)."""
    from competition.models import Event

    m, e = Match._meta.db_table, Event._meta.db_table
    due = (
        f"{m}.status = %s AND ({m}.not_before IS NULL OR {m}.not_before <= %s) AND "
        f"({m}.event_id IS NULL OR {m}.event_id NOT IN (SELECT id FROM {e} WHERE status = %s))"
    )
    return (
        f"SELECT id FROM {m} WHERE {due} ORDER BY id LIMIT 20",
        f"UPDATE {m} SET status = %s, lease_token = %s, lease_expires = %s, worker = %s, "
        f"attempts = attempts + 1, started = COALESCE(started, %s) WHERE id = %s AND {due}",
    )


def claim(
    match_id: int | None = None, *, worker: str | None = None
) -> tuple[int, uuid.UUID] | None:
    """Claim one queued match (``match_id`` or the oldest due): ``(id, lease token)`` or None.

    The claim is one conditional UPDATE (``Match.objects.due`` in SQL): of two workers
    racing for a match, one updates a row and the other none."""
    from competition.models import EventStatus

    worker = (worker or worker_name())[:120]
    db = connections[DEFAULT_DB_ALIAS]
    now = timezone.now()
    at = db.ops.adapt_datetimefield_value(now)
    due = [MatchStatus.QUEUED.value, at, EventStatus.PAUSED.value]
    pick, take = _claim_sql(db)
    with db.cursor() as cursor:
        if match_id is not None:
            candidates = [match_id]
        else:
            cursor.execute(pick, due)
            candidates = [row[0] for row in cursor.fetchall()]
        expires = db.ops.adapt_datetimefield_value(now + lease_duration())
        for candidate in candidates:
            token = uuid.uuid4()
            cursor.execute(
                take,
                [
                    MatchStatus.RUNNING.value,
                    _token_param(token, db),
                    expires,
                    worker,
                    at,
                    candidate,
                    *due,
                ],
            )
            if cursor.rowcount == 1:
                return candidate, token
    return None


def claim_and_load(match_id: int | None = None, *, worker: str | None = None):
    """``claim`` and, when it got one, what playing the match needs (``_load``): one trip
    to the database thread instead of two. ``(id, token, loaded)`` or None."""
    claimed = claim(match_id, worker=worker)
    if claimed is None:
        return None
    return (*claimed, _load(claimed[0]))


def renew(match_id: int, token: uuid.UUID) -> bool:
    """Extend the lease; False when this worker no longer holds it."""
    return bool(
        Match.objects.filter(pk=match_id, status=MatchStatus.RUNNING, lease_token=token).update(
            lease_expires=timezone.now() + lease_duration()
        )
    )


# -- record and finish ----------------------------------------------------------------


_TURN_COLUMNS = (
    "match_id",
    "number",
    "seats",
    "actions",
    "faults",
    "details",
    "latencies_ms",
    "frame",
    "logs",
    "forfeited",
    "created",
)


@functools.cache
def _turn_sql(db) -> tuple[str, str]:
    """(the lease-fenced UPDATE, the turn INSERT) for a database connection's vendor."""
    columns = ", ".join(
        db.ops.quote_name(Turn._meta.get_field(name).column) for name in _TURN_COLUMNS
    )
    marks = ", ".join(["%s"] * len(_TURN_COLUMNS))
    return (
        f"UPDATE {Match._meta.db_table} SET lease_expires = %s, turn_count = %s, stored_bytes = stored_bytes + %s "
        "WHERE id = %s AND status = %s AND lease_token = %s",
        f"INSERT INTO {Turn._meta.db_table} ({columns}) VALUES ({marks})",
    )


def _identity(text: str) -> str:
    return text


@functools.cache
def _json_param(db):
    """Already-encoded JSON text as a parameter of a JSON column: the text itself, or on
    PostgreSQL a ``Jsonb`` that sends it as it is (encoded once, and measured)."""
    if db.vendor == "postgresql":
        from psycopg.types.json import Jsonb

        return lambda text: Jsonb(text, dumps=_identity)
    return _identity


def record_turns(
    match_id: int,
    token: uuid.UUID,
    records: list[TurnRecord],
    *,
    stored_bytes: int = 0,
    max_bytes: int | None = None,
) -> tuple[int, int]:
    """Store turns in one transaction, fenced by the lease (``LeaseLost`` otherwise).

    Returns ``(turns stored, stored bytes)``: with ``max_bytes``, the turns whose JSON would
    take the match's stored bytes (``stored_bytes`` so far) over it are not stored (the
    caller ends the match as ``limit``). The caller broadcasts the stored turns once this
    returns, i.e. after the commit. This is the hot path of every match (one call per batch
    of turns), so it speaks SQL, encoding each JSON value once (measured as it is encoded:
    the byte limit costs a ``len`` per value, no query): two statements per batch.
    """
    db = connections[DEFAULT_DB_ALIAS]  # resolved once: the proxy's lookups are not free
    ops = db.ops
    now = timezone.now()
    created = ops.adapt_datetimefield_value(now)
    wrap = _json_param(db)
    dumps = json.dumps
    params = []
    total = stored_bytes
    for r in records:
        texts = (
            dumps(list(r.seats)),
            dumps(r.actions),
            dumps(r.faults),
            dumps(r.details),
            dumps(r.latencies_ms),
            dumps(r.frame),
            dumps([log.to_json() if log else None for log in r.logs]),
            dumps(list(r.forfeited)),
        )
        size = sum(map(len, texts))
        if max_bytes is not None and total + size > max_bytes:
            break
        total += size
        params.append((match_id, r.number, *map(wrap, texts), created))
    if not params:
        return 0, total
    fence, insert = _turn_sql(db)
    with transaction.atomic(), db.cursor() as cursor:
        cursor.execute(
            fence,
            [
                ops.adapt_datetimefield_value(now + lease_duration()),
                records[len(params) - 1].number,
                total - stored_bytes,
                match_id,
                MatchStatus.RUNNING.value,
                _token_param(token, db),
            ],
        )
        if cursor.rowcount != 1:
            raise LeaseLost(f"match {match_id}: lease lost before turn {records[0].number}")
        try:
            cursor.executemany(insert, params)
        except IntegrityError:  # raising rolls the whole transaction back
            raise LeaseLost(f"match {match_id}: turn {records[0].number} already stored") from None
    return len(params), total


def record_turn(match_id: int, token: uuid.UUID, record: TurnRecord) -> None:
    """Store one turn (see ``record_turns``)."""
    record_turns(match_id, token, [record])


class TurnWriter:
    """Stores and broadcasts a match's turns while the runner goes on (group commit).

    ``put`` hands a turn over and returns at once unless ``max_pending`` turns wait; a
    background task writes whatever has accumulated in one fenced transaction, then
    broadcasts each turn of it, in order. When turns arrive less than ``linger`` seconds
    apart (the first one: after the writer started) it waits up to ``linger`` for more, so
    a fast match costs one commit per batch instead of one per move, and a short one (a
    tic-tac-toe match lasts a few milliseconds) one commit in all, with no database work
    while its bots are being asked; a paced one still stores and shows every turn at once.
    ``flush`` waits until everything handed over is stored; a lost lease surfaces as
    ``LeaseLost`` from ``put``, ``flush`` or the ``task``. With ``max_bytes`` it counts the
    match's stored bytes (from ``stored_bytes``, what a resumed match already holds): the
    first turn that would go over is not stored and the writer stops with
    ``LimitReached(LIMIT_BYTES)`` (after broadcasting the turns stored before it).
    """

    def __init__(
        self,
        match_id: int,
        token: uuid.UUID,
        *,
        max_pending: int = 256,
        max_batch: int = 200,
        linger: float = 0.010,
        stored_bytes: int = 0,
        max_bytes: int | None = None,
    ):
        self.match_id = match_id
        self.token = token
        self.stored_bytes = stored_bytes
        self.max_bytes = max_bytes
        self.max_batch = max_batch
        self.linger = linger
        self._flushing = False
        self._wake = asyncio.Event()
        self.group = broadcast.match_group(match_id)
        self.queue: asyncio.Queue[TurnRecord] = asyncio.Queue(max_pending)
        self.task = asyncio.ensure_future(self._run())

    async def put(self, record: TurnRecord) -> None:
        if self.task.done():
            self.task.result()  # raises what stopped the writer
            raise LeaseLost(f"match {self.match_id}: the turn writer stopped")
        await self.queue.put(record)
        if self.queue.qsize() >= self.max_batch:
            self._wake.set()  # a full batch: no reason to linger

    async def flush(self) -> None:
        self._flushing = True
        self._wake.set()  # a writer lingering for more turns: no more are coming
        joined = asyncio.ensure_future(self.queue.join())
        try:
            await asyncio.wait({joined, self.task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            joined.cancel()
        if self.task.done():
            self.task.result()

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, LeaseLost, LimitReached):
            await self.task

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last_arrival = loop.time()  # a match's first turn lingers too, unless it comes late
        while True:
            batch = [await self.queue.get()]
            arrival = loop.time()
            if arrival - last_arrival < self.linger and not self._flushing:
                # turns are coming fast: let a few more gather for this transaction (one
                # commit for many moves), delaying their broadcast by at most `linger`; a
                # flush or a full batch cuts the wait short
                self._wake.clear()
                if self.queue.qsize() + 1 < self.max_batch and not self._flushing:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(self.linger):
                            await self._wake.wait()
            last_arrival = arrival
            while len(batch) < self.max_batch and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            stored, self.stored_bytes = await run_db(
                record_turns,
                self.match_id,
                self.token,
                batch,
                stored_bytes=self.stored_bytes,
                max_bytes=self.max_bytes,
            )
            if broadcast.listened(self.group):  # nobody watching: not even encoded
                for record in batch[:stored]:
                    await broadcast.apublish(self.group, broadcast.turn_message(record.to_json()))
            for _ in batch:
                self.queue.task_done()
            if stored < len(batch):
                raise LimitReached(LIMIT_BYTES)


def _collected(fn, *args, **kwargs):
    """Run a sync service, collecting its broadcasts (see ``broadcast.collecting``)."""
    with broadcast.collecting() as outbox:
        result = fn(*args, **kwargs)
    return result, outbox


async def acall(fn, *args, **kwargs):
    """A sync service from async code: run it in the ORM thread, then send its broadcasts
    on this loop (they were queued by its ``on_commit`` hooks, i.e. after the commit)."""
    result, outbox = await run_db(_collected, fn, *args, **kwargs)
    await broadcast.asend(outbox)
    return result


def seat_results(scores: tuple[float, ...]) -> list[str]:
    best = max(scores)
    winners = sum(1 for s in scores if s == best)
    return [
        (SeatResult.DRAW if winners > 1 else SeatResult.WIN) if s == best else SeatResult.LOSS
        for s in scores
    ]


@functools.cache
def _finish_sql(db) -> tuple[str, str, str]:
    """(end a running match under its lease, the same without a lease check, set a seat's
    result) for a connection."""
    m, p = Match._meta.db_table, Participant._meta.db_table
    end = (
        f"UPDATE {m} SET status = %s, reason = %s, finished = %s, lease_token = NULL, lease_expires = NULL "
        f"WHERE id = %s AND status = %s"
    )
    return (
        end + " AND lease_token = %s",
        end,
        f"UPDATE {p} SET score = %s, result = %s, faults = %s, cause = %s WHERE id = %s",
    )


def _end_running(cursor, db, status: MatchStatus, reason: str, now, match_id: int, token) -> bool:
    """End a running match's row with ``status`` and ``reason``, fenced by the lease ``token``
    when one is given: True if this call ended it."""
    end_leased, end_any, _seat_sql = _finish_sql(db)
    params = [
        status.value,
        reason,
        db.ops.adapt_datetimefield_value(now),
        match_id,
        MatchStatus.RUNNING.value,
    ]
    if token is None:
        cursor.execute(end_any, params)
    else:
        cursor.execute(end_leased, [*params, _token_param(token, db)])
    return cursor.rowcount == 1


def finish(
    match_id: int,
    token: uuid.UUID | None,
    outcome: Outcome,
    forfeited: tuple[int, ...] = (),
    *,
    loaded: dict | None = None,
    turn_faults: list[list] | None = None,
) -> bool:
    """Store the result, rate it, progress the event; idempotent (False if already done).

    ``token=None`` finishes without a lease check (used by organisers' tools and tests).
    A runner passes what it already holds: ``loaded`` (its ``_load`` of the match) and
    ``turn_faults`` (every turn's fault codes, in order), saving their queries; the row
    itself is ended by one conditional UPDATE (the lease is the fence, as for turns).
    """
    from competition.services import ratings

    db = connections[DEFAULT_DB_ALIAS]
    seat_sql = _finish_sql(db)[2]
    now = timezone.now()
    status = MatchStatus.FORFEITED if forfeited else MatchStatus.FINISHED
    with transaction.atomic(), db.cursor() as cursor:
        if not _end_running(cursor, db, status, outcome.reason, now, match_id, token):
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
        if turn_faults is None:
            turn_faults = list(
                Turn.objects.filter(match_id=match_id)
                .order_by("number")
                .values_list("faults", flat=True)
            )
        else:
            match.turn_count = len(turn_faults)
        charged: dict[int, int] = dict.fromkeys(range(len(participants)), 0)
        last_fault: dict[int, str] = {}
        for faults in turn_faults:
            for seat, code in enumerate(faults):
                if code not in (None, FaultCode.OK.value, FaultCode.PLATFORM.value):
                    charged[seat] = charged.get(seat, 0) + 1
                    last_fault[seat] = code
        results = seat_results(outcome.scores)
        for p in participants:
            p.score = outcome.scores[p.seat]
            p.result = results[p.seat]
            p.faults = charged.get(p.seat, 0)
            p.cause = last_fault.get(p.seat, "") if p.seat in forfeited else ""
        cursor.executemany(
            seat_sql, [[p.score, p.result, p.faults, p.cause, p.pk] for p in participants]
        )
        ratings.apply_match(match, participants)
        if (
            forfeited and match.rated
        ):  # bot health (a friendly match is not counted): pause a bot after K forfeits in a row (before any new pairing)
            from competition.services.events import check_bot_health

            check_bot_health(participants)
        if match.event_id:
            from competition.services import events

            events.on_match_finished(match)
        summary = match_json(match, participants)
        transaction.on_commit(lambda: broadcast.match_finished(summary))
    return True


def finish_limit(match_id: int, token: uuid.UUID | None, limit: str) -> bool:
    """End a running match stopped by a platform limit as ``limit`` (the reason names it:
    ``LIMIT_TURNS``, ``LIMIT_TIME``, ``LIMIT_BYTES``): no result, no rating, no bot health
    count; its event moves on as after a cancelled match. Idempotent (False if already done)."""
    db = connections[DEFAULT_DB_ALIAS]
    with transaction.atomic(), db.cursor() as cursor:
        if not _end_running(cursor, db, MatchStatus.LIMIT, limit, timezone.now(), match_id, token):
            return False
        match = Match.objects.get(pk=match_id)
        if match.event_id:
            from competition.services import events

            events.on_match_finished(match)
        summary = match_json(match)
        transaction.on_commit(lambda: broadcast.match_finished(summary))
    logger.info("match %s stopped at a platform limit (%s)", match_id, limit)
    return True


def release(match_id: int, token: uuid.UUID, error: str) -> str | None:
    """A platform failure: requeue the match, or give up after too many (``errored``)."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != MatchStatus.RUNNING or match.lease_token != token:
            return None
        return _requeue_or_error(match, error)


def _requeue_or_error(match: Match, error: str) -> str:
    match.platform_failures += 1
    match.lease_token = None
    match.lease_expires = None
    match.error = error[:2000]
    if match.platform_failures >= settings.ARENA_MAX_PLATFORM_FAILURES:
        match.status = MatchStatus.ERRORED
        match.finished = timezone.now()
        summary = match_json(match)
        transaction.on_commit(lambda: broadcast.match_finished(summary))
        # an errored match holds its event's round (an organiser may requeue it), but a
        # round robin whose last pending match errored is over
        if match.event_id:
            from competition.services import events

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
            events.advance_event(match.event)
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
    """Cancel a queued or running match (no result); its event moves on unless
    ``advance`` is false (the event is being cancelled as a whole)."""
    with transaction.atomic():
        updated = Match.objects.filter(
            pk=match_id, status__in=(MatchStatus.QUEUED, MatchStatus.RUNNING)
        ).update(
            status=MatchStatus.CANCELLED,
            lease_token=None,
            lease_expires=None,
            error=reason[:2000],
            finished=timezone.now(),
        )
        if updated:
            match = Match.objects.get(pk=match_id)
            summary = match_json(match)
            transaction.on_commit(lambda: broadcast.match_finished(summary))
            if advance and match.event_id:
                from competition.services import events

                events.advance_event(match.event)
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
            from competition.services import standings

            standings.sync_match(Match.objects.get(pk=match_id))  # its series is pending again
            transaction.on_commit(lambda: dispatch(match_id))
    return bool(updated)


def match_json(match: Match, participants: list[Participant] | None = None) -> dict:
    """The public summary of a match (API and broadcasts)."""
    if participants is None:
        participants = list(match.participants.select_related("bot", "bot__owner").order_by("seat"))
    return {
        "id": match.pk,
        "game": match.game,
        "status": match.status,
        "reason": match.reason,
        "rated": match.rated,
        "event": match.event_id,
        "round": match.round,
        "seed": match.seed,
        "turn_count": match.turn_count,
        "created": match.created.isoformat() if match.created else None,
        "started": match.started.isoformat() if match.started else None,
        "finished": match.finished.isoformat() if match.finished else None,
        "error": match.error if match.status == MatchStatus.ERRORED else "",
        "participants": [
            {
                "seat": p.seat,
                "bot": p.bot_id,
                "name": p.bot.name,
                "owner": p.bot.owner.username,
                "score": p.score,
                "result": p.result,
                "cause": p.cause,
                "faults": p.faults,
            }
            for p in participants
        ],
    }


# -- run (used by every runner: embedded, Celery, runmatches) ----------------------------


def _load(match_id: int) -> dict[str, Any]:
    match = Match.objects.get(pk=match_id)
    participants = list(match.participants.select_related("bot", "bot__owner").order_by("seat"))
    turns = []
    if match.turn_count:  # a match being resumed (a fresh one has none to read)
        turns = list(
            Turn.objects.filter(match_id=match_id)
            .order_by("number")
            .values("actions", "seats", "faults", "forfeited", "number")
        )
    return {
        "match": match,
        "participants": participants,
        "turns": turns,
        "summary": match_json(match, participants),
    }


async def run_match(match_id: int | None = None, *, worker: str | None = None) -> int | None:
    """Claim and play one match to its end (or resume it). Returns its id, or None if
    there was nothing to claim. Never raises for a bot's behaviour or a lost lease."""
    claimed = await run_db(claim_and_load, match_id, worker=worker)
    if claimed is None:
        return None
    mid, token, loaded = claimed
    await play_claimed(mid, token, loaded)
    return mid


async def play_claimed(match_id: int, token: uuid.UUID, loaded: dict | None = None) -> None:
    """Play a match this worker has claimed (``loaded``: its ``_load``, if already read);
    a lost lease or a platform failure is handled here (released or left to the reaper),
    never raised."""
    mid = match_id
    try:
        await _play_claimed(mid, token, loaded)
    except LeaseLost as exc:
        logger.warning("%s", exc)
    except PlatformError as exc:
        # the reason stored on the match is public: the details go to the server log
        logger.warning("match %s: platform failure: %s", mid, exc)
        await _release_quietly(mid, token, "platform failure (details in the server log)")
    except asyncio.CancelledError:
        # this worker is shutting down: leave the lease to expire (the reaper requeues)
        raise
    except Exception as exc:
        logger.exception("match %s: unexpected failure", mid)
        await _release_quietly(mid, token, f"unexpected platform failure ({type(exc).__name__})")


async def _release_quietly(match_id: int, token: uuid.UUID, error: str) -> None:
    """Release after a platform failure; if even that fails (the database is down), the
    lease simply expires and the reaper requeues the match later."""
    try:
        await acall(release, match_id, token, error)
    except Exception:
        logger.exception("match %s: could not release; its lease will expire", match_id)


async def _play_claimed(match_id: int, token: uuid.UUID, loaded: dict | None = None) -> None:
    data = loaded if loaded is not None else await run_db(_load, match_id)
    match, participants, turns = data["match"], data["participants"], data["turns"]
    game = get_game(match.game)
    if turns and turns[-1]["forfeited"]:
        # the worker died after storing the forfeiting turn: finish it as it ended
        outcome = forfeit_outcome(game.num_players, turns[-1]["forfeited"])
        await acall(finish, match_id, token, outcome, tuple(turns[-1]["forfeited"]))
        return
    # the wall-clock limit counts from the first claim (a resumed match has less time left)
    started = match.started or timezone.now()
    time_left = settings.ARENA_MATCH_MAX_SECONDS - (timezone.now() - started).total_seconds()
    if time_left <= 0:
        if not await acall(finish_limit, match_id, token, LIMIT_TIME):
            raise LeaseLost(f"match {match_id}: finished elsewhere")
        return
    if not turns:
        await broadcast.asend(broadcast.started_messages(data["summary"]))
    history = [{seat: t["actions"][seat] for seat in t["seats"]} for t in turns]
    streaks = _fault_streaks(turns, game.num_players)
    transports = [
        p.bot.transport(seat=p.seat, seed=match.seed, match_id=str(match.pk), options=match.options)
        for p in participants
    ]
    writer = TurnWriter(
        match_id, token, stored_bytes=match.stored_bytes, max_bytes=settings.ARENA_MATCH_MAX_BYTES
    )

    async def heartbeat() -> None:
        interval = max(settings.ARENA_LEASE_SECONDS / 3, 0.2)
        while True:
            await asyncio.sleep(interval)
            if not await run_db(renew, match_id, token):
                raise LeaseLost(f"match {match_id}: lease lost (heartbeat)")

    beat = asyncio.ensure_future(heartbeat())
    game_task = asyncio.ensure_future(
        play(
            game,
            transports,
            seed=match.seed,
            options=match.options,
            match_id=str(match.pk),
            names=tuple(p.bot.name for p in participants),
            on_turn=writer.put,
            history=history,
            fault_streaks=streaks,
            pace_ms=match.pace_ms,
            safety_timeout_ms=settings.ARENA_SAFETY_TIMEOUT_MS,
            max_turns=settings.ARENA_MATCH_MAX_TURNS,
        )
    )
    limit: str | None = None
    try:
        done, _pending = await asyncio.wait(
            {beat, writer.task, game_task}, timeout=time_left, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            limit = LIMIT_TIME
        elif (
            writer.task.done()
            and not writer.task.cancelled()
            and isinstance(writer.task.exception(), LimitReached)
        ):
            limit = writer.task.exception().limit
        elif game_task not in done:
            game_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, LeaseLost, LimitReached):
                await game_task
            for task in (beat, writer.task):
                if task.done():
                    task.result()  # raises LeaseLost (or the writer's failure)
            raise LeaseLost(f"match {match_id}: stopped")
        if limit is None:
            result: MatchResult = game_task.result()
            limit = result.limit
        else:  # stopped from outside the game: the turn in flight is dropped
            game_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, LeaseLost, LimitReached):
                await game_task
        if not writer.task.done():
            try:
                await writer.flush()  # every turn stored before the result
            except LimitReached as exc:  # the last turns took it over the byte limit
                limit = limit or exc.limit
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError, LeaseLost):
            await beat
        await writer.close()
    if limit is not None:
        if not await acall(finish_limit, match_id, token, limit):
            raise LeaseLost(f"match {match_id}: finished elsewhere")
        return
    turn_faults = [t["faults"] for t in turns] + [r.faults for r in result.turns]
    if not await acall(
        finish,
        match_id,
        token,
        result.outcome,
        result.forfeited,
        loaded=data,
        turn_faults=turn_faults,
    ):
        raise LeaseLost(f"match {match_id}: finished elsewhere")


def _fault_streaks(turns: list[dict], num_players: int) -> list[int]:
    """Each seat's consecutive charged faults at the end of the stored turns."""
    streaks = [0] * num_players
    for t in turns:
        for seat in t["seats"]:
            code = t["faults"][seat]
            if code in (None, FaultCode.OK.value):
                streaks[seat] = 0
            elif code != FaultCode.PLATFORM.value:
                streaks[seat] += 1
    return streaks
