"""The match loop (docs/architecture.md): one async loop for every game, seats not names.

``play(game, transports, seed=..., options=...)`` greets the seats, then repeatedly asks
every seat in ``game.to_move(state)`` concurrently under its clock, judges each reply
(transport faults, then ``parse_action``), applies the game's fault policy, calls
``game.apply`` and reports the turn through ``on_turn``. It knows nothing of the ORM or
the channel layer: persistence and broadcasting are hooks passed in by the caller.

Clocks (from ``game.policy(options)``):
- a per-exchange limit ``move_timeout_ms``;
- an optional time bank of L = ``bank_increment_ms``: it starts full at 5L, gains L before
  each message (capped at 5L), loses the measured milliseconds after the reply; a reply
  that leaves it below zero is a ``timeout``, and the call is cut at the bank's deadline;
- a global safety limit (``safety_timeout_ms``) so that no bot can hang a match.

Platform limit: with ``max_turns`` the loop asks for no turn beyond it; the result then has
no outcome and ``limit = LIMIT_TURNS`` (the caller ends the match as ``limit``, unrated).

Fault policy: ``forfeit`` ends the match after this turn's replies are collected (offenders
score 0, the others 1; all seats at once: a draw); ``pass`` plays the game's
``default_action`` for the faulty seat and forfeits it after ``max_faults_in_a_row``
consecutive faults. A ``platform`` fault is ours: it is never charged, the match stops with
``PlatformError`` and the caller retries or voids it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bots.codec import preview
from bots.faults import BotFault, FaultCode
from bots.transports.base import Transport
from games.base import Context, Game, IllegalAction, Outcome

logger = logging.getLogger(__name__)

DEFAULT_SAFETY_TIMEOUT_MS = 60_000
LOG_CAP = 16_384
#: engine work (observations, judging the replies, applying, the frame) of one turn that took
#: longer than this runs, from then on for that match, on a worker thread instead of the event
#: loop: a large board must not stall every page, socket and match of the process. Tiny games
#: (microseconds a turn) stay inline, with no thread hop.
ENGINE_INLINE_S = 0.002
FORFEIT = "forfeit"
#: the reasons of a match stopped by a platform limit (``MatchResult.limit``, ``Match.reason``)
LIMIT_TURNS, LIMIT_TIME, LIMIT_BYTES = "turn_limit", "time_limit", "size_limit"


class PlatformError(Exception):
    """Our own failure during a match: nothing is charged to any bot."""


@dataclass
class SeatLog:
    """What one seat's exchange looked like, for the owner's per-turn log."""

    fault: str = FaultCode.OK.value
    detail: str = ""
    latency_ms: int | None = None
    sent: str = ""
    received: str = ""
    stderr: list[str] = field(default_factory=list)
    time_left_ms: int | None = None

    def to_json(self) -> dict:
        return {
            "fault": self.fault,
            "detail": self.detail,
            "latency_ms": self.latency_ms,
            "sent": self.sent,
            "received": self.received,
            "stderr": self.stderr,
            "time_left_ms": self.time_left_ms,
        }


@dataclass
class TurnRecord:
    """One turn: per-seat lists (``None`` for a seat that was not asked)."""

    number: int
    seats: tuple[int, ...]
    actions: list[Any]
    faults: list[str | None]
    details: list[str | None]
    latencies_ms: list[int | None]
    frame: Any
    logs: list[SeatLog | None]
    forfeited: tuple[int, ...] = ()

    def to_json(self) -> dict:
        return {
            "number": self.number,
            "seats": list(self.seats),
            "actions": self.actions,
            "faults": self.faults,
            "details": self.details,
            "latencies_ms": self.latencies_ms,
            "frame": self.frame,
            "forfeited": list(self.forfeited),
        }


@dataclass
class MatchResult:
    outcome: Outcome | None  # None when a platform limit stopped the match (``limit``)
    turns: list[TurnRecord]
    state: Any
    forfeited: tuple[int, ...] = ()
    greetings: list[SeatLog | None] = field(default_factory=list)
    limit: str | None = None

    def to_json(self, game: Game) -> dict:
        return {
            "game": game.slug,
            "outcome": self.outcome.to_json() if self.outcome is not None else None,
            "limit": self.limit,
            "forfeited": list(self.forfeited),
            "greetings": [g.to_json() if g else None for g in self.greetings],
            "turns": [t.to_json() for t in self.turns],
        }


OnTurn = Callable[[TurnRecord], Awaitable[None] | None]


class _Seat:
    def __init__(self, seat: int, transport: Transport, bank_ms: int | None):
        self.seat = seat
        self.transport = transport
        self.start_fault: BotFault | None = None
        self.bank_ms = bank_ms
        self.faults_in_a_row = 0


def forfeit_outcome(num_players: int, offenders: Sequence[int]) -> Outcome:
    """Offenders score 0 and the others 1; when every seat offends, a draw."""
    if len(set(offenders)) >= num_players:
        return Outcome(scores=(1.0 / num_players,) * num_players, reason=FORFEIT)
    return Outcome(
        scores=tuple(0.0 if s in offenders else 1.0 for s in range(num_players)), reason=FORFEIT
    )


async def play(
    game: Game,
    transports: Sequence[Transport],
    *,
    seed: int,
    options: dict | None = None,
    match_id: str = "0",
    names: Sequence[str] = (),
    on_turn: OnTurn | None = None,
    history: Sequence[dict[int, Any]] = (),
    fault_streaks: Sequence[int] | None = None,
    pace_ms: int = 0,
    safety_timeout_ms: int = DEFAULT_SAFETY_TIMEOUT_MS,
    max_turns: int | None = None,
) -> MatchResult:
    """Play one match to its end and return the result (see the module docstring).

    ``history`` holds the actions of turns already played (a resumed match): they are
    replayed through ``game.apply`` before the loop continues with turn ``len(history)+1``;
    ``fault_streaks`` restores each seat's consecutive faults. ``pace_ms`` makes every turn
    last at least that long (a spectator-friendly pace for demos; bots are not slowed).
    ``max_turns`` is the platform's turn limit (a counter: no query, no clock).
    """
    num_seats = len(transports)
    options = game.options_for_seats(game.resolve_options(options), num_seats)
    policy = game.policy(options)
    state = game.initial_state(seed=seed, options=options)
    for actions in history:
        state = game.apply(state, {int(k): v for k, v in actions.items()})
    bank_cap = None
    if policy.bank_increment_ms is not None:
        bank_cap = policy.bank_multiplier * policy.bank_increment_ms
    seats = [_Seat(i, t, bank_cap) for i, t in enumerate(transports)]
    for seat, streak in zip(seats, fault_streaks or (), strict=False):
        seat.faults_in_a_row = streak
    names = tuple(names)
    turns: list[TurnRecord] = []

    async def start(seat: _Seat) -> None:
        try:
            await seat.transport.start()
        except BotFault as fault:
            seat.start_fault = fault
        except Exception as exc:
            logger.exception("transport start failed (seat %s)", seat.seat)
            seat.start_fault = BotFault(FaultCode.PLATFORM, repr(exc))

    def ctx_for(seat: _Seat) -> Context:
        return Context(match_id=str(match_id), time_left_ms=seat.bank_ms, names=names)

    async def exchange(seat: _Seat, message: Any, *, clocked: bool) -> tuple[Any, SeatLog]:
        """One exchange under the seat's clocks: (reply or BotFault, log)."""
        limits = [safety_timeout_ms]
        if policy.move_timeout_ms is not None:
            limits.append(policy.move_timeout_ms)
        if clocked and seat.bank_ms is not None:
            limits.append(max(seat.bank_ms, 0))
        limit_ms = min(limits)
        log = SeatLog(time_left_ms=seat.bank_ms if clocked else None)
        started = time.perf_counter()
        result: Any
        try:
            if seat.start_fault is not None:
                raise seat.start_fault
            async with asyncio.timeout(
                limit_ms / 1000 + 2.0
            ):  # safety net over the transport's own
                done = await seat.transport.exchange(message, timeout=limit_ms / 1000)
            log.sent, log.received = done.sent[:LOG_CAP], done.received[:LOG_CAP]
            result = done.reply
        except BotFault as fault:
            result = fault
        except TimeoutError:
            result = BotFault(FaultCode.TIMEOUT, f"no reply within {limit_ms} ms")
        except Exception as exc:  # a transport must not raise anything else: our bug
            logger.exception("transport raised (seat %s)", seat.seat)
            result = BotFault(FaultCode.PLATFORM, repr(exc))
        elapsed_ms = int((time.perf_counter() - started) * 1000)
        log.latency_ms = elapsed_ms
        if clocked and seat.bank_ms is not None:
            seat.bank_ms -= elapsed_ms
            if seat.bank_ms < 0 and not isinstance(result, BotFault):
                result = BotFault(FaultCode.TIMEOUT, f"time bank exhausted ({seat.bank_ms} ms)")
        log.stderr = seat.transport.log_lines()
        if isinstance(result, BotFault):
            log.fault, log.detail = result.code.value, result.detail[:LOG_CAP]
            log.sent = (result.sent or _encoded(game, message))[:LOG_CAP]
            log.received = result.received[:LOG_CAP]
        return result, log

    def observe(state, to_move) -> dict[int, Any]:
        return {s: game.observation(state, s, ctx_for(seats[s])) for s in to_move}

    def judge(state, to_move, answers, record: TurnRecord):
        """Judge the replies of one turn and apply them: (state, outcome, forfeited)."""
        outcome: Outcome | None = None
        forfeited: tuple[int, ...] = ()
        actions: dict[int, Any] = {}
        charged: list[int] = []
        for s, (result, log) in zip(to_move, answers, strict=True):
            if not isinstance(result, BotFault):
                try:
                    actions[s] = game.parse_action(state, s, result)
                except IllegalAction as exc:
                    # the turn records the game's code as the detail; the log explains
                    result = BotFault(FaultCode.ILLEGAL, exc.code)
                    log.fault, log.detail = FaultCode.ILLEGAL.value, str(exc)
            record.logs[s] = log
            record.latencies_ms[s] = log.latency_ms
            record.faults[s] = log.fault
            record.details[s] = result.detail if isinstance(result, BotFault) else None
            if isinstance(result, BotFault):
                if result.code is FaultCode.PLATFORM:
                    raise PlatformError(f"seat {s}: {result.detail}")
                charged.append(s)
                seats[s].faults_in_a_row += 1
            else:
                seats[s].faults_in_a_row = 0
        offenders = _offenders(policy, seats, charged)
        if offenders:
            forfeited = tuple(offenders)
            outcome = forfeit_outcome(num_seats, offenders)
            record.forfeited = forfeited
            for s in to_move:
                record.actions[s] = actions.get(s)
            record.frame = game.frame(state)
        else:
            for s in charged:
                actions[s] = game.default_action(state, s)
            for s in to_move:
                record.actions[s] = actions[s]
            state = game.apply(state, actions)
            record.frame = game.frame(state)
        return state, outcome, forfeited

    heavy = False  # this match's engine work ran over ENGINE_INLINE_S once: use a thread

    async def engine(fn, *args):
        nonlocal heavy
        if heavy:
            return await asyncio.to_thread(fn, *args)
        started = time.perf_counter()
        try:
            return fn(*args)
        finally:
            heavy = time.perf_counter() - started > ENGINE_INLINE_S

    await asyncio.gather(*(start(s) for s in seats))
    forfeited: tuple[int, ...] = ()
    outcome: Outcome | None = None
    limit: str | None = None
    try:
        greetings = await _greet(game, state, seats, ctx_for, exchange, policy.sequential_greetings)
        while (to_move := game.to_move(state)) and outcome is None:
            number = len(history) + len(turns) + 1
            if max_turns is not None and number > max_turns:
                limit = LIMIT_TURNS  # no outcome, no farewell: the caller ends it as `limit`
                break
            turn_started = time.perf_counter()
            for s in to_move:
                if seats[s].bank_ms is not None:
                    seats[s].bank_ms = min(bank_cap, seats[s].bank_ms + policy.bank_increment_ms)
            messages = await engine(observe, state, to_move)
            if len(to_move) == 1:  # an alternating game: no task to gather
                answers = [await exchange(seats[to_move[0]], messages[to_move[0]], clocked=True)]
            else:
                answers = await asyncio.gather(
                    *(exchange(seats[s], messages[s], clocked=True) for s in to_move)
                )
            record = TurnRecord(
                number=number,
                seats=tuple(to_move),
                actions=[None] * num_seats,
                faults=[None] * num_seats,
                details=[None] * num_seats,
                latencies_ms=[None] * num_seats,
                frame=None,
                logs=[None] * num_seats,
            )
            state, outcome, forfeited = await engine(judge, state, to_move, answers, record)
            turns.append(record)
            if pace_ms:
                left = pace_ms / 1000 - (time.perf_counter() - turn_started)
                if left > 0:
                    await asyncio.sleep(left)
            if on_turn is not None:
                maybe = on_turn(record)
                if inspect.isawaitable(maybe):
                    await maybe
        if outcome is None and limit is None:
            outcome = game.outcome(state)
            if outcome is None:  # to_move() was empty but the game claims not to be over
                raise PlatformError(f"{game.slug}: no seat to move and no outcome")
            await asyncio.gather(*(_farewell(game, state, s, ctx_for(s), exchange) for s in seats))
    finally:
        await asyncio.gather(*(_close(s, forfeited, turns, policy) for s in seats))
    return MatchResult(
        outcome=outcome,
        turns=turns,
        state=state,
        forfeited=forfeited,
        greetings=greetings,
        limit=limit,
    )


def _offenders(policy, seats: list[_Seat], charged: list[int]) -> list[int]:
    if not charged:
        return []
    if policy.on_fault == FORFEIT:
        return charged
    limit = policy.max_faults_in_a_row
    return [s for s in charged if limit is not None and seats[s].faults_in_a_row >= limit]


async def _greet(game, state, seats, ctx_for, exchange, sequential: bool):
    greetings: list[SeatLog | None] = [None] * len(seats)

    async def greet(seat: _Seat) -> None:
        message = game.greeting(state, seat.seat, ctx_for(seat))
        if message is not None:
            _result, log = await exchange(seat, message, clocked=False)
            greetings[seat.seat] = log  # recorded for diagnostics, never charged

    if sequential:
        for seat in seats:
            await greet(seat)
    else:
        await asyncio.gather(*(greet(s) for s in seats))
    return greetings


async def _farewell(game, state, seat: _Seat, ctx: Context, exchange) -> None:
    message = game.farewell(state, seat.seat, ctx)
    if message is not None:
        await exchange(seat, message, clocked=False)  # reply and faults are ignored


async def _close(seat: _Seat, forfeited, turns: list[TurnRecord], policy) -> None:
    error = None
    if policy.error_line_on_forfeit and seat.seat in forfeited and turns:
        last = turns[-1]
        error = f"{last.faults[seat.seat]}: {last.details[seat.seat] or ''}".rstrip(": ")
    try:
        await seat.transport.close(error=error)
    except Exception:  # close must never raise; if it does, log and go on
        logger.exception("transport close failed (seat %s)", seat.seat)


def _encoded(game: Game, message: Any) -> str:
    try:
        return preview(game.encode_message(message), LOG_CAP)
    except Exception:
        return ""
