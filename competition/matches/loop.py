"""The match loop: one async loop for every game, seats not names, with no ORM or channel layer
(persistence and broadcasting are hooks; docs/architecture.md, "The runner")."""

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
from competition.matches import debug as debug_overlay
from games.base import Context, Game, IllegalAction, Outcome

logger = logging.getLogger(__name__)

DEFAULT_SAFETY_TIMEOUT_MS = 60_000
LOG_CAP = 16_384
#: engine work (observations, judging the replies, applying, the frame) of one turn that took
#: longer than this runs, from then on for that match, on a worker thread instead of the event
#: loop: a large board must not stall every page, socket and match of the process. Tiny games
#: (microseconds a turn) stay inline, with no thread hop.
ENGINE_INLINE_S = 0.002
#: engine calls of a turn (its observations, then judging its replies): how many the thread's
#: CPU clock judges at a match's start and after a call over ENGINE_INLINE_S on the wall clock
CPU_CHECKED_CALLS = 2
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
    #: the reply's debug overlay (``competition.matches.debug``), or why it was dropped
    debug: dict | None = None
    debug_note: str = ""

    def to_json(self) -> dict:
        data = {
            "fault": self.fault,
            "detail": self.detail,
            "latency_ms": self.latency_ms,
            "sent": self.sent,
            "received": self.received,
            "stderr": self.stderr,
            "time_left_ms": self.time_left_ms,
        }
        if self.debug is not None:
            data["debug"] = self.debug
        if self.debug_note:
            data["debug_note"] = self.debug_note
        return data

    def take_debug(self, reply: Any) -> Any:
        """The reply without its ``debug`` key (kept here, or why it was dropped)."""
        reply, self.debug, note = debug_overlay.split(reply)
        self.debug_note = note or ""
        return reply


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
        #: the greeting's stderr, carried into the seat's first turn (the turns are stored)
        self.carried: list[str] = []


def forfeit_outcome(num_players: int, offenders: Sequence[int]) -> Outcome:
    """Offenders score 0 and the others 1; when every seat offends, a draw."""
    if len(set(offenders)) >= num_players:
        return Outcome(scores=(1.0 / num_players,) * num_players, reason=FORFEIT)
    return Outcome(
        scores=tuple(0.0 if s in offenders else 1.0 for s in range(num_players)), reason=FORFEIT
    )


class MatchLoop:
    """One match: ``open()``, ``step()`` until it returns ``None``, ``finish()``; or ``run()``."""

    def __init__(
        self,
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
        start: Any = None,
    ):
        self.game = game
        self.num_seats = len(transports)
        # ValueError for a seat count the game does not take; records it where the game needs
        self.options = options = game.options_for_seats(
            game.resolve_options(options), self.num_seats
        )
        self.policy = policy = game.policy(options)
        if start is not None and game.judges_greeting:  # the greetings place the start
            raise ValueError(f"{game.slug}: a match that judges its greetings starts afresh")
        # a forked match starts from its origin's state (``competition.matches.fork``)
        state = game.initial_state(seed=seed, options=options) if start is None else start
        self.history = history
        if not game.judges_greeting:  # else after the greetings, which place what they replay on
            for actions in history:
                state = game.apply(state, {int(k): v for k, v in actions.items()})
        self.state = state
        self.bank_cap = None
        if policy.bank_increment_ms is not None:
            self.bank_cap = policy.bank_multiplier * policy.bank_increment_ms
        self.seats = [_Seat(i, t, self.bank_cap) for i, t in enumerate(transports)]
        for seat, streak in zip(self.seats, fault_streaks or (), strict=False):
            seat.faults_in_a_row = streak
        self.match_id = str(match_id)
        self.names = tuple(names)
        self.on_turn = on_turn
        self.played_before = len(history)
        self.pace_ms = pace_ms
        self.safety_timeout_ms = safety_timeout_ms
        self.max_turns = max_turns
        self.turns: list[TurnRecord] = []
        self.greetings: list[SeatLog | None] = []
        self.outcome: Outcome | None = None
        self.forfeited: tuple[int, ...] = ()
        self.limit: str | None = None
        self.heavy = False  # this match's engine work ran over ENGINE_INLINE_S once: a thread
        self.cpu_checks = CPU_CHECKED_CALLS  # engine calls judged by the CPU clock from now
        self._closed = False

    # -- the phases -------------------------------------------------------------------------

    async def open(self) -> None:
        """Start every seat's transport, then greet them; a failure closes the seats."""
        await asyncio.gather(*(self._start(s) for s in self.seats))
        try:
            if self.game.judges_greeting:
                await self.greet_judged()
            else:
                self.greetings = await self.greet()
        except BaseException:
            await self.close()
            raise

    async def greet(self) -> list[SeatLog | None]:
        """The greeting exchange: recorded for diagnostics, never charged."""
        greetings: list[SeatLog | None] = [None] * len(self.seats)

        async def greet(seat: _Seat) -> None:
            message = self.game.greeting(self.state, seat.seat, self.ctx_for(seat))
            if message is not None:
                _result, log = await self.exchange(seat, message, clocked=False)
                greetings[seat.seat] = log
                seat.carried = list(log.stderr)

        if self.policy.sequential_greetings:
            for seat in self.seats:
                await greet(seat)
        else:
            await asyncio.gather(*(greet(s) for s in self.seats))
        return greetings

    async def greet_judged(self) -> None:
        """Greet the seats one by one (``Game.judges_greeting``); the first to fail loses."""
        game = self.game
        self.greetings = [None] * len(self.seats)
        for seat in self.seats:
            message = game.greeting(self.state, seat.seat, self.ctx_for(seat))
            if message is None:
                continue
            result, log = await self.exchange(seat, message, clocked=False)
            self.greetings[seat.seat] = log
            if not isinstance(result, BotFault):
                result = log.take_debug(result)
                seat.carried = list(log.stderr)
                try:
                    self.state = game.accept_greeting(self.state, seat.seat, result)
                    continue
                except IllegalAction as exc:
                    result = BotFault(FaultCode.ILLEGAL, exc.code)
                    log.fault, log.detail = FaultCode.ILLEGAL.value, str(exc)
            if result.code is FaultCode.PLATFORM:
                raise PlatformError(f"seat {seat.seat}: {result.detail}")
            await self._greeting_lost(seat, result, log)
            return
        for actions in self.history:
            self.state = game.apply(self.state, {int(k): v for k, v in actions.items()})

    async def _greeting_lost(self, seat: _Seat, fault: BotFault, log: SeatLog) -> None:
        n = len(self.seats)
        self.state = self.game.greeting_lost(self.state, seat.seat)
        record = TurnRecord(
            number=1,
            seats=(seat.seat,),
            actions=[None] * n,
            faults=[log.fault if s == seat.seat else None for s in range(n)],
            details=[fault.detail if s == seat.seat else None for s in range(n)],
            latencies_ms=[log.latency_ms if s == seat.seat else None for s in range(n)],
            frame=self.game.frame(self.state),
            logs=[log if s == seat.seat else None for s in range(n)],
            forfeited=(seat.seat,),
        )
        self.forfeited = record.forfeited
        self.turns.append(record)
        if self.on_turn is not None:
            maybe = self.on_turn(record)
            if inspect.isawaitable(maybe):
                await maybe

    async def step(self) -> TurnRecord | None:
        """Play one turn and return its record; ``None`` once over."""
        game, policy = self.game, self.policy
        if not (to_move := game.to_move(self.state)) or self.outcome is not None:
            return None
        number = self.played_before + len(self.turns) + 1
        if self.max_turns is not None and number > self.max_turns:
            self.limit = LIMIT_TURNS  # no outcome, no farewell: the caller ends it as `limit`
            return None
        turn_started = time.perf_counter()
        for s in to_move:
            seat = self.seats[s]
            if seat.bank_ms is not None:
                seat.bank_ms = min(self.bank_cap, seat.bank_ms + policy.bank_increment_ms)
        messages = await self.engine(self.observe, self.state, to_move)
        answers = await self.ask(to_move, messages)
        n = self.num_seats
        record = TurnRecord(
            number=number,
            seats=tuple(to_move),
            actions=[None] * n,
            faults=[None] * n,
            details=[None] * n,
            latencies_ms=[None] * n,
            frame=None,
            logs=[None] * n,
        )
        self.state, self.outcome, self.forfeited = await self.engine(
            self.judge, self.state, to_move, answers, record
        )
        self.turns.append(record)
        if self.pace_ms:
            left = self.pace_ms / 1000 - (time.perf_counter() - turn_started)
            if left > 0:
                await asyncio.sleep(left)
        if self.on_turn is not None:
            maybe = self.on_turn(record)
            if inspect.isawaitable(maybe):
                await maybe
        return record

    async def ask(self, to_move: Sequence[int], messages: dict[int, Any]) -> list:
        """Ask every seat in ``to_move`` at once: ``(reply or BotFault, SeatLog)`` each."""
        if len(to_move) == 1:  # an alternating game: no task to gather
            s = to_move[0]
            return [await self.exchange(self.seats[s], messages[s], clocked=True)]
        return list(
            await asyncio.gather(
                *(self.exchange(self.seats[s], messages[s], clocked=True) for s in to_move)
            )
        )

    async def finish(self) -> MatchResult:
        """Judge the end, say farewell, close every seat and return the result."""
        try:
            if self.outcome is None and self.limit is None:
                self.outcome = self.game.outcome(self.state)
                if self.outcome is None:  # to_move() was empty but the game is not over
                    raise PlatformError(f"{self.game.slug}: no seat to move and no outcome")
                await asyncio.gather(*(self.farewell(s) for s in self.seats))
        finally:
            await self.close()
        return MatchResult(
            outcome=self.outcome,
            turns=self.turns,
            state=self.state,
            forfeited=self.forfeited,
            greetings=self.greetings,
            limit=self.limit,
        )

    async def run(self) -> MatchResult:
        await self.open()
        try:
            while await self.step() is not None:
                pass
        except BaseException:
            await self.close()
            raise
        return await self.finish()

    async def farewell(self, seat: _Seat) -> None:
        message = self.game.farewell(self.state, seat.seat, self.ctx_for(seat))
        if message is not None:
            await self.exchange(seat, message, clocked=False)  # reply and faults are ignored

    async def close(self) -> None:
        """Close every seat's transport once (the last turn's fault on a forfeit)."""
        if self._closed:
            return
        self._closed = True
        await asyncio.gather(
            *(_close(s, self.forfeited, self.turns, self.policy) for s in self.seats)
        )

    # -- one exchange, one turn's engine work -----------------------------------------------

    def ctx_for(self, seat: _Seat) -> Context:
        return Context(match_id=self.match_id, time_left_ms=seat.bank_ms, names=self.names)

    async def _start(self, seat: _Seat) -> None:
        try:
            await seat.transport.start()
        except BotFault as fault:
            seat.start_fault = fault
        except Exception as exc:
            logger.exception("transport start failed (seat %s)", seat.seat)
            seat.start_fault = BotFault(FaultCode.PLATFORM, repr(exc))

    async def exchange(self, seat: _Seat, message: Any, *, clocked: bool) -> tuple[Any, SeatLog]:
        """One exchange under the seat's clocks: (reply or BotFault, log)."""
        limits = [self.safety_timeout_ms]
        if self.policy.move_timeout_ms is not None:
            limits.append(self.policy.move_timeout_ms)
        if clocked and seat.bank_ms is not None:
            limits.append(max(seat.bank_ms, 0))
        limit_ms = min(limits)
        log = SeatLog(time_left_ms=seat.bank_ms if clocked else None)
        started = time.perf_counter()
        result: Any
        try:
            if seat.start_fault is not None:
                raise seat.start_fault
            transport = seat.transport
            if transport.bounded:  # its own deadline is the limit (no second timer a move)
                done = await transport.exchange(message, timeout=limit_ms / 1000)
            else:
                async with asyncio.timeout(limit_ms / 1000 + 2.0):  # a net over its own
                    done = await transport.exchange(message, timeout=limit_ms / 1000)
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
        log.stderr, seat.carried = [*seat.carried, *seat.transport.log_lines()], []
        if isinstance(result, BotFault):
            log.fault, log.detail = result.code.value, result.detail[:LOG_CAP]
            log.sent = (result.sent or _encoded(self.game, message))[:LOG_CAP]
            log.received = result.received[:LOG_CAP]
        return result, log

    async def engine(self, fn, *args):
        """Run engine work inline, or on a thread once it proved heavy (``ENGINE_INLINE_S`` of this
        thread's CPU time: waiting for the GIL or a core must not send a light game away).

        The thread's CPU clock is a system call (0.6 us idle, 4.6 us between a busy loop's
        socket events here), the wall clock is not, and a call's CPU time is never more than
        its wall time: so the CPU clock judges the first turn's calls (``CPU_CHECKED_CALLS``)
        and the turn after any call that ran over the limit on the wall clock; the others are
        light by the wall clock alone."""
        if self.heavy:
            return await asyncio.to_thread(fn, *args)
        if self.cpu_checks:
            self.cpu_checks -= 1
            started = time.thread_time()
            try:
                return fn(*args)
            finally:
                self.heavy = time.thread_time() - started > ENGINE_INLINE_S
        started = time.perf_counter()
        try:
            return fn(*args)
        finally:
            if time.perf_counter() - started > ENGINE_INLINE_S:
                self.cpu_checks = CPU_CHECKED_CALLS  # waiting, or heavy: the CPU clock says

    def observe(self, state, to_move) -> dict[int, Any]:
        return {s: self.game.observation(state, s, self.ctx_for(self.seats[s])) for s in to_move}

    def judge(self, state, to_move, answers, record: TurnRecord):
        """Judge the replies of one turn and apply them: (state, outcome, forfeited)."""
        game, seats = self.game, self.seats
        actions: dict[int, Any] = {}
        charged: list[int] = []
        for s, (result, log) in zip(to_move, answers, strict=True):
            if not isinstance(result, BotFault):
                result = log.take_debug(result)  # the game never sees the overlay
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
        offenders = _offenders(self.policy, seats, charged)
        if offenders:
            record.forfeited = tuple(offenders)
            for s in to_move:
                record.actions[s] = actions.get(s)
            record.frame = game.frame(state)
            return state, forfeit_outcome(self.num_seats, offenders), record.forfeited
        for s in charged:
            actions[s] = game.default_action(state, s)
        for s in to_move:
            record.actions[s] = actions[s]
        state = game.apply(state, actions)
        record.frame = game.frame(state)
        return state, None, ()


async def play(game: Game, transports: Sequence[Transport], **kwargs: Any) -> MatchResult:
    return await MatchLoop(game, transports, **kwargs).run()


def _offenders(policy, seats: list[_Seat], charged: list[int]) -> list[int]:
    if not charged:
        return []
    if policy.on_fault == FORFEIT:
        return charged
    limit = policy.max_faults_in_a_row
    return [s for s in charged if limit is not None and seats[s].faults_in_a_row >= limit]


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
