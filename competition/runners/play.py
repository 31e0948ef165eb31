"""Playing a claimed match: the code path every runner shares, with the lease renewed by a
heartbeat, turns stored by a ``TurnWriter`` and the platform's limits enforced."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

from bots.faults import FaultCode
from competition.bots import services as bot_services
from competition.live import broadcast
from competition.matches import batch, fork, history, sql
from competition.matches.lifecycle import (
    LeaseLost,
    LimitReached,
    announce_end,
    announce_running,
    claim,
    finish,
    finish_limit,
    keep_claimed,
    release,
    renew,
)
from competition.matches.loop import (
    LIMIT_TIME,
    MatchResult,
    PlatformError,
    forfeit_outcome,
    play,
)
from competition.matches.presenters import match_json
from competition.matches.turns import End, TurnWriter
from competition.matches.writer import WriterLost
from competition.models import TURN_VALUES, Match, MatchStatus
from competition.models.bots import BotVersion
from competition.plumbing import logs, metrics
from games import get_game

logger = logging.getLogger(__name__)

#: the most turns a lost worker may have stored without broadcasting them (one batch)
TAIL_TURNS = TurnWriter.MAX_BATCH
#: what a turn's broadcast carries (``TurnRecord.to_json``)
RELAYED_TURN_FIELDS = tuple(name for name in TURN_VALUES if name != "logs")


def claim_and_load(
    match_id: int | None = None, *, worker: str | None = None, humans: bool | None = None
):
    """``claim`` and, when it got one, ``_load``, in one trip to the database thread."""
    claimed = claim(match_id, worker=worker, humans=humans)
    if claimed is None:
        return None
    loaded = _load(claimed[0])
    keep_claimed(*claimed, loaded)  # for the finish: the runner does not send them back
    return (*claimed, {**loaded, "kept": True})


def _load(match_id: int) -> dict[str, Any]:
    # one statement: the seats with their match, bots and owners (``sql.load``)
    match, participants = sql.load(connections[DEFAULT_DB_ALIAS], match_id)
    turns = []
    if match.turn_count:  # a match being resumed (a fresh one has none to read)
        turns = history.turns_upto(match_id)
    try:  # a fork starts from its origin's state after a turn (rebuilt from its history)
        start, start_error = fork.start_state(match, len(participants)), ""
    except ValueError as exc:
        start, start_error = None, str(exc)
    return {
        "match": match,
        "participants": participants,
        "versions": _versions(participants),
        "turns": turns,
        "start": start,
        "start_error": start_error,
        "summary": match_json(match, participants),
        "public": not match.results_hidden(),  # read here: no hop of its own later
        "direct": history.direct_archive(),
    }


def _versions(participants) -> dict[int, BotVersion]:
    """Each code bot seat's version (the one recorded, else the latest), with its bytes."""
    code = [p for p in participants if p.bot.endpoint_kind.takes_uploads]
    if not code:
        return {}
    recorded = BotVersion.objects.in_bulk([p.version_id for p in code if p.version_id])
    found = {}
    for p in code:
        version = recorded.get(p.version_id) or p.bot.latest_version()
        if version is not None:
            found[p.seat] = version
    return found


def sandbox_report() -> tuple[bool, str]:
    """The start-up self-test of uploaded code, logged once: the sandbox, its confinement
    (the mode in force), each language and each game's host program. Code that cannot run
    here is refused, never run unsandboxed."""
    from bots.confinement import confinement
    from bots.sandbox import host_status, language_status, sandbox_status

    ok, why = sandbox_status()
    if not ok:
        logger.warning("code bots cannot play on this runner: %s", why)
        return ok, why
    logger.info("sandbox confinement: %s", confinement().words)
    for name, problem in {**language_status(), **host_status()}.items():
        if problem:
            logger.warning("sandbox self-test: %s", problem)
        else:
            logger.info("sandbox self-test: %s runs", name)
    return ok, why


async def run_match(match_id: int | None = None, *, worker: str | None = None) -> int | None:
    """Claim and play one match to its end; its id, or None if nothing was due."""
    claimed = await batch.call(claim_and_load, match_id, worker=worker)
    if claimed is None:
        return None
    mid, token, loaded = claimed
    await play_claimed(mid, token, loaded)
    return mid


async def play_claimed(match_id: int, token: uuid.UUID, loaded: dict | None = None) -> None:
    """Play a claimed match; a lost lease or platform failure is handled here, never raised."""
    mid = match_id
    with logs.bound(match_id=mid):
        await _play_logged(mid, token, loaded)


async def _play_logged(mid: int, token: uuid.UUID, loaded: dict | None) -> None:
    try:
        await _play_claimed(mid, token, loaded)
        logger.info("match %s played", mid)
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


def _count_start(match, participants) -> None:
    kind = metrics.process_kind()
    metrics.MATCHES_STARTED.labels(kind, match.game, match.kind).inc()
    sandboxed = sum(1 for p in participants if p.bot.endpoint_kind.takes_uploads)
    if sandboxed:
        metrics.SANDBOX_STARTS.labels(kind, match.game).inc(sandboxed)


async def _release_quietly(match_id: int, token: uuid.UUID, error: str) -> None:
    """Release after a platform failure; failing that, the lease expires and the reaper requeues."""
    try:
        await batch.call(release, match_id, token, error)
    except Exception:
        logger.exception("match %s: could not release; its lease will expire", match_id)


async def _play_claimed(match_id: int, token: uuid.UUID, loaded: dict | None = None) -> None:
    data = loaded if loaded is not None else await batch.call(_load, match_id)
    match, participants, turns = data["match"], data["participants"], data["turns"]
    game = get_game(match.game)
    if data.get("start_error"):
        raise PlatformError(data["start_error"])
    time_left = await _before_play(match_id, token, data, game)
    if time_left is None:
        return
    versions = data.get("versions", {})
    _count_start(match, participants)
    transports = [
        p.bot.transport(
            seat=p.seat,
            seed=match.seed,
            match_id=str(match.pk),
            options=match.options,
            version=versions.get(p.seat),
        )
        for p in participants
    ]
    writer = TurnWriter(
        match_id, token, stored_bytes=match.stored_bytes, max_bytes=settings.ARENA_MATCH_MAX_BYTES
    )
    beat = asyncio.ensure_future(_heartbeat(match_id, token))
    game_task = asyncio.ensure_future(
        play(
            game,
            transports,
            seed=match.seed,
            options=match.options,
            match_id=str(match.pk),
            names=tuple(p.bot.name for p in participants),
            on_turn=writer.put,
            history=[{seat: t["actions"][seat] for seat in t["seats"]} for t in turns],
            fault_streaks=_fault_streaks(turns, len(participants)),
            pace_ms=match.pace_ms,
            safety_timeout_ms=settings.ARENA_SAFETY_TIMEOUT_MS,
            max_turns=settings.ARENA_MATCH_MAX_TURNS,
            start=data.get("start"),
        )
    )
    try:
        result, limit = await _until_done(match_id, beat, writer, game_task, time_left)
        try:
            await writer.finish(_end(data, result, limit))
        except WriterLost:
            await _ended_unheard(match_id)
            raise
        await _announced(match_id, participants, transports)
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError, LeaseLost):
            await beat
        await writer.close()


async def _announced(match_id: int, participants, transports) -> None:
    """The versions URL bots' servers announced in this match (``X-Bot-Version``), declared for
    their next matches; a failure here is logged, never the match's (it is finished)."""
    announced = {
        p.bot_id: t.announced_version
        for p, t in zip(participants, transports, strict=True)
        if t.announced_version
    }
    if not announced:
        return
    try:
        await batch.call(bot_services.announce_versions, announced)
    except Exception:
        logger.exception("match %s: the versions its bots announced were not declared", match_id)


def _end(data: dict, result: MatchResult | None, limit: str | None) -> End:
    """How the match ended, with its fault codes and (played here from turn one) its archive."""
    if limit is not None:
        return End(limit=limit)
    here = not data["turns"]  # played here from turn one
    return End(
        result.outcome,
        result.forfeited,
        # what the finish reads of the match, its row and seats: as its claim loaded them
        # where the claim ran (and the end is stored), else the runner's (not the code played)
        **_loaded(data),
        turn_faults=[t["faults"] for t in data["turns"]] + [r.faults for r in result.turns],
        # played here from turn one: the archive from what it holds (if the end writes it),
        # and the seats' health (else the finish reads them), both made where it is stored
        records=result.turns if here and data.get("direct") else None,
        turns=None if not here or data.get("direct") else _health(result.turns),
    )


def _loaded(data: dict) -> dict:
    if data.get("kept"):
        return {"loaded_at_claim": True}
    return {"loaded": {"match": data["match"], "participants": data["participants"]}}


def _health(records) -> list[tuple]:
    return [(r.faults, r.details, r.latencies_ms) for r in records]


async def _before_play(match_id: int, token: uuid.UUID, data: dict, game) -> float | None:
    """The seconds left to play, or None when the match ended here."""
    match, turns = data["match"], data["turns"]
    if turns:
        await broadcast.asend(await batch.call(_unannounced, match_id))
    if turns and turns[-1]["forfeited"]:
        # the worker died after storing the forfeiting turn: finish it as it ended
        outcome = forfeit_outcome(len(data["participants"]), turns[-1]["forfeited"])
        await batch.call(finish, match_id, token, outcome, tuple(turns[-1]["forfeited"]))
        return None
    # the wall-clock limit counts from the first claim (a resumed match has less time left)
    started = match.started or timezone.now()
    time_left = settings.ARENA_MATCH_MAX_SECONDS - (timezone.now() - started).total_seconds()
    if time_left <= 0:
        if not await batch.call(finish_limit, match_id, token, LIMIT_TIME):
            raise LeaseLost(f"match {match_id}: finished elsewhere")
        return None
    if not turns:
        public = data["public"] if "public" in data else not await batch.call(match.results_hidden)
        await broadcast.asend(broadcast.started_messages(data["summary"], public=public))
        if broadcast.listened(broadcast.HOME_GROUP):
            await batch.call(
                announce_running, data["summary"]["game"], data["summary"] if public else None
            )
    return time_left


#: the statuses of a match whose end was stored and announced (``finish``, ``finish_limit``)
ANNOUNCED_ENDS = (MatchStatus.FINISHED, MatchStatus.FORFEITED, MatchStatus.LIMIT)


async def _ended_unheard(match_id: int) -> None:
    """The writer process died with this match's finish in flight: if that finish committed
    (the match ended, and nothing will resume it), its last turns and its end are announced
    again, as the writer's broadcasts died with it; spectators drop the turns they hold."""
    try:
        if await batch.call(_announce_if_ended, match_id):
            logger.info("match %s: ended as its writer died; its end announced again", match_id)
    except Exception:
        logger.exception("match %s: its end could not be announced again", match_id)


def _announce_if_ended(match_id: int) -> bool:
    match = Match.objects.filter(pk=match_id, status__in=ANNOUNCED_ENDS).first()
    if match is None:
        return False
    for group, message in _unannounced(match_id):
        broadcast.publish(group, message)
    participants = list(match.participants.select_related("bot", "bot__owner").order_by("seat"))
    announce_end(match_json(match, participants), public=not match.results_hidden())
    return True


def _unannounced(match_id: int) -> list[tuple[str, dict]]:
    """A resumed match's last stored turns, broadcast again in case their worker died first; turn
    numbers let spectators drop repeats."""
    tail = history.recent(match_id, TAIL_TURNS, logs=False)
    group = broadcast.match_group(match_id)
    return [
        (group, broadcast.turn_message({name: getattr(t, name) for name in RELAYED_TURN_FIELDS}))
        for t in tail
    ]


async def _heartbeat(match_id: int, token: uuid.UUID) -> None:
    """Renew the lease every third of its duration; ``LeaseLost`` once it is gone."""
    interval = max(settings.ARENA_LEASE_SECONDS / 3, 0.2)
    while True:
        await asyncio.sleep(interval)
        if not await batch.call(renew, match_id, token):
            raise LeaseLost(f"match {match_id}: lease lost (heartbeat)")


async def _until_done(match_id: int, beat, writer: TurnWriter, game_task, time_left: float):
    """Wait for the game, the heartbeat or the writer to stop first: ``(result, limit)``."""
    result: MatchResult | None = None
    limit: str | None = None
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
        result = game_task.result()
        limit = result.limit
    else:  # stopped from outside the game: the turn in flight is dropped
        game_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, LeaseLost, LimitReached):
            await game_task
    return result, limit


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
