"""The match loop: turns, clocks, fault policies, greetings and farewells.

Bots here are real ``Transport`` objects: built-in strategies, or small scripted bots that
answer from a list (sleeping, failing or answering garbage on purpose).
"""

import asyncio
import threading
from dataclasses import dataclass, replace

import pytest

from bots.faults import BotFault, FaultCode
from bots.transports.base import Exchange, Transport
from bots.transports.builtin import BuiltinTransport
from competition.matches.loop import LIMIT_TURNS, MatchLoop, PlatformError, play
from games import get_game
from games.base import Game, IllegalAction, Outcome, Policy, int_option, merge_options

TTT = get_game("tictactoe")


class ScriptedBot(Transport):
    """Answers each message with the next scripted item: a reply, a BotFault to raise,
    or ``("sleep", seconds, reply)``. Records every message it got."""

    kind = "test"

    def __init__(self, script):
        self.script = list(script)
        self.messages = []
        self.closed_with = "not closed"

    async def exchange(self, message, *, timeout):
        self.messages.append(message)
        item = self.script.pop(0) if self.script else {}
        if isinstance(item, BotFault):
            raise item
        if isinstance(item, tuple) and item[0] == "sleep":
            try:
                async with asyncio.timeout(timeout):
                    await asyncio.sleep(item[1])
            except TimeoutError:
                raise BotFault(FaultCode.TIMEOUT, "slept too long") from None
            item = item[2]
        return Exchange(reply=item, sent=str(message), received=str(item))

    async def close(self, *, error=None):
        self.closed_with = error


@dataclass(frozen=True, slots=True)
class CountState:
    totals: tuple[int, int]
    turn: int
    options: dict

    def __hash__(self):
        return hash((self.totals, self.turn))


class Count(Game):
    """A tiny simultaneous game for the runner: each seat adds 0..3 per turn; after
    ``turns`` turns the larger total wins. It has a greeting, a farewell and a time bank."""

    slug = "count"
    title = "Count"
    default_options = {
        "turns": 3,
        "bank": None,
        "on_fault": "forfeit",
        "max_faults": None,
        "limit": 2000,
    }

    def resolve_options(self, options=None):
        return merge_options(self.default_options, options, {"turns": int_option(1)})

    def policy(self, options):
        return Policy(
            move_timeout_ms=options["limit"],
            bank_increment_ms=options["bank"],
            on_fault=options["on_fault"],
            max_faults_in_a_row=options["max_faults"],
            error_line_on_forfeit=True,
        )

    def initial_state(self, *, seed, options=None):
        return CountState((0, 0), 0, self.resolve_options(options))

    def to_move(self, state):
        return (0, 1) if state.turn < state.options["turns"] else ()

    def greeting(self, state, seat, ctx):
        return {"hello": seat}

    def farewell(self, state, seat, ctx):
        return {"bye": seat}

    def observation(self, state, seat, ctx):
        return {"mine": state.totals[seat], "bank": ctx.time_left_ms}

    def parse_action(self, state, seat, raw):
        if not isinstance(raw, dict) or raw.get("add") not in (0, 1, 2, 3):
            raise IllegalAction("bad_add", repr(raw))
        return raw["add"]

    def default_action(self, state, seat):
        return 0

    def apply(self, state, actions):
        totals = tuple(state.totals[s] + actions.get(s, 0) for s in (0, 1))
        return replace(state, totals=totals, turn=state.turn + 1)

    def outcome(self, state):
        if state.turn < state.options["turns"]:
            return None
        a, b = state.totals
        return Outcome((1.0, 0.0) if a > b else (0.0, 1.0) if b > a else (0.5, 0.5), "total")

    def frame(self, state):
        return {"totals": list(state.totals), "turn": state.turn}


COUNT = Count()
ADD = {"add": 1}


async def test_it_plays_tictactoe_between_builtins_and_reports_every_turn():
    seen = []
    transports = [
        BuiltinTransport(TTT, "perfect", seed=1, seat=0),
        BuiltinTransport(TTT, "random", seed=1, seat=1),
    ]
    result = await play(TTT, transports, seed=1, match_id="9", on_turn=seen.append)
    assert result.outcome.reason in ("three_in_a_row", "board_full")
    assert result.outcome.scores[0] >= 0.5
    # It should number turns from 1 and report each through on_turn, in order.
    assert [t.number for t in seen] == list(range(1, len(seen) + 1))
    assert seen == result.turns
    assert all(t.faults[t.seats[0]] == "ok" for t in seen)
    assert seen[-1].frame == TTT.frame(result.state)
    # It should greet both seats (diagnostics only).
    assert all(g is not None and g.fault == "ok" for g in result.greetings)


async def test_it_awaits_an_async_on_turn_hook():
    stored = []

    async def on_turn(record):
        await asyncio.sleep(0)
        stored.append(record.number)

    transports = [BuiltinTransport(TTT, "random", seat=0), BuiltinTransport(TTT, "random", seat=1)]
    result = await play(TTT, transports, seed=3, on_turn=on_turn)
    assert stored == [t.number for t in result.turns]


async def test_it_greets_then_plays_then_says_farewell_in_order():
    a, b = ScriptedBot([{}] + [ADD] * 3 + [{}]), ScriptedBot([{}] + [{"add": 2}] * 3 + [{}])
    result = await play(COUNT, [a, b], seed=0)
    assert result.outcome == Outcome((0.0, 1.0), "total")
    assert a.messages[0] == {"hello": 0} and a.messages[-1] == {"bye": 0}
    assert [m["mine"] for m in b.messages[1:4]] == [0, 2, 4]
    assert a.closed_with is None


async def test_it_never_charges_a_faulty_greeting():
    a = ScriptedBot([BotFault(FaultCode.BAD_JSON, "x")] + [ADD] * 3)
    b = ScriptedBot([{}] + [ADD] * 3)
    result = await play(COUNT, [a, b], seed=0)
    assert result.outcome.reason == "total" and result.greetings[0].fault == "bad_json"


async def test_it_forfeits_the_offender_under_the_forfeit_policy():
    a = ScriptedBot([{}, ADD, {"add": 9}])
    b = ScriptedBot([{}, ADD, ADD, {}])
    result = await play(COUNT, [a, b], seed=0)
    assert result.outcome == Outcome((0.0, 1.0), "forfeit")
    assert result.forfeited == (0,)
    last = result.turns[-1]
    assert (
        last.number == 2
        and last.faults == ["illegal", "ok"]
        and last.details[0].startswith("bad_add")
    )
    # It should not apply the turn that forfeited, nor say farewell after a forfeit.
    assert last.frame == {"totals": [1, 1], "turn": 1}
    assert {"bye": 1} not in b.messages
    # It should tell a line bot why it lost, and close the other one quietly.
    assert a.closed_with.startswith("illegal") and b.closed_with is None


async def test_it_draws_when_both_seats_fault_at_once():
    a = ScriptedBot([{}, BotFault(FaultCode.CONNECT, "gone")])
    b = ScriptedBot([{}, "not an object"])
    result = await play(COUNT, [a, b], seed=0)
    assert result.outcome == Outcome((0.5, 0.5), "forfeit")
    assert result.turns[-1].faults == ["connect", "illegal"]


async def test_it_plays_default_actions_under_the_pass_policy_and_forfeits_after_k_in_a_row():
    options = {"turns": 6, "on_fault": "pass", "max_faults": 2}
    # seat 0 faults, recovers, then faults twice in a row
    a = ScriptedBot([{}, "junk", ADD, "junk", "junk", ADD, ADD])
    b = ScriptedBot([{}] + [ADD] * 6)
    result = await play(COUNT, [a, b], seed=0, options=options)
    assert result.outcome == Outcome((0.0, 1.0), "forfeit")
    assert [t.faults[0] for t in result.turns] == ["illegal", "ok", "illegal", "illegal"]
    # It should have applied the default action (0) for the first faulty turn.
    assert result.turns[0].actions == [0, 1] and result.turns[0].frame["totals"] == [0, 1]


async def test_it_keeps_playing_under_pass_without_a_limit():
    options = {"turns": 3, "on_fault": "pass"}
    a = ScriptedBot([{}, "junk", "junk", "junk", {}])
    b = ScriptedBot([{}, ADD, ADD, ADD, {}])
    result = await play(COUNT, [a, b], seed=0, options=options)
    assert result.outcome == Outcome((0.0, 1.0), "total") and len(result.turns) == 3


async def test_it_times_out_a_slow_move():
    a = ScriptedBot([{}, ("sleep", 5, ADD)])
    b = ScriptedBot([{}, ADD])
    started = asyncio.get_running_loop().time()
    result = await play(COUNT, [a, b], seed=0, options={"limit": 200})
    assert asyncio.get_running_loop().time() - started < 2
    assert result.turns[0].faults == ["timeout", "ok"] and result.outcome.reason == "forfeit"


async def test_it_cuts_a_transport_that_ignores_its_timeout():
    # A transport that does not keep its own deadline (not ``bounded``) is cut by the loop's
    # safety net, 2 s past the limit: a timeout charged to the seat, not a hung match.
    class Deaf(ScriptedBot):
        async def exchange(self, message, *, timeout):
            if "mine" not in message:  # the greeting and the farewell are answered
                return await super().exchange(message, timeout=timeout)
            await asyncio.sleep(60)

    assert not Deaf.bounded
    started = asyncio.get_running_loop().time()
    result = await play(COUNT, [Deaf([{}]), ScriptedBot([{}, ADD])], seed=0, options={"limit": 100})
    assert 2.0 <= asyncio.get_running_loop().time() - started < 5
    assert result.turns[0].faults == ["timeout", "ok"] and result.outcome.reason == "forfeit"


async def test_it_keeps_a_time_bank():
    # L = 100 ms: the bank starts at 500, a 300 ms reply leaves 200, +100 = 300 next;
    # a 350 ms reply then overdraws it: timeout.
    a = ScriptedBot([{}, ("sleep", 0.3, ADD), ("sleep", 0.35, ADD), ADD])
    b = ScriptedBot([{}, ADD, ADD, ADD])
    result = await play(COUNT, [a, b], seed=0, options={"bank": 100, "limit": 10_000})
    banks = [m["bank"] for m in a.messages[1:]]
    assert banks[0] == 500
    assert 180 <= banks[1] <= 300, banks
    assert result.turns[1].faults[0] == "timeout"
    assert result.outcome == Outcome((0.0, 1.0), "forfeit")
    # It should show the opponent's unspent bank capped at 5L.
    assert [m["bank"] for m in b.messages[1:3]] == [500, 500]


async def test_it_stops_on_a_platform_fault_without_charging_anyone():
    a = ScriptedBot([{}, BotFault(FaultCode.PLATFORM, "our bug")])
    b = ScriptedBot([{}, ADD])
    with pytest.raises(PlatformError):
        await play(COUNT, [a, b], seed=0)
    # It should still close both transports.
    assert a.closed_with is None and b.closed_with is None


async def test_it_turns_a_raw_transport_exception_into_a_platform_error():
    class Broken(ScriptedBot):
        async def exchange(self, message, *, timeout):
            raise RuntimeError("boom")

    with pytest.raises(PlatformError):
        await play(COUNT, [Broken([]), ScriptedBot([])], seed=0)


async def test_it_resumes_from_stored_actions():
    a, b = ScriptedBot([{}, ADD, {}]), ScriptedBot([{}, ADD, {}])
    result = await play(COUNT, [a, b], seed=0, history=[{0: 3, 1: 0}, {"0": 3, "1": 0}])
    assert [t.number for t in result.turns] == [3]
    assert result.state.totals == (7, 1) and result.outcome.scores == (1.0, 0.0)


async def test_it_rejects_bad_options_before_contacting_anyone():
    a, b = ScriptedBot([]), ScriptedBot([])
    with pytest.raises(ValueError):
        await play(TTT, [a, b], seed=0, options={"move_timeout_ms": -1})
    assert a.messages == [] and b.messages == []


async def test_it_plays_one_turn_per_step():
    a, b = ScriptedBot([{}, ADD, {"add": 2}, ADD, {}]), ScriptedBot([{}, ADD, ADD, ADD, {}])
    loop = MatchLoop(COUNT, [a, b], seed=0)
    await loop.open()
    # It should greet on open and ask nothing more until a step.
    assert a.messages == [{"hello": 0}] and loop.turns == []
    first = await loop.step()
    # It should play exactly one turn per step, the state moving with it.
    assert first.number == 1 and first.actions == [1, 1] and loop.state.totals == (1, 1)
    assert len(a.messages) == 2 and a.closed_with == "not closed"
    second = await loop.step()
    assert second.number == 2 and second.actions == [2, 1] and loop.state.totals == (3, 2)
    assert await loop.step() is not None
    # It should return None once no seat is to move, then finish with the farewells.
    assert await loop.step() is None and loop.outcome is None
    result = await loop.finish()
    assert result.outcome == Outcome((1.0, 0.0), "total") and result.turns == loop.turns
    assert a.messages[-1] == {"bye": 0} and a.closed_with is None


async def test_it_stops_stepping_at_the_turn_limit():
    a, b = ScriptedBot([{}] + [ADD] * 3), ScriptedBot([{}] + [ADD] * 3)
    loop = MatchLoop(COUNT, [a, b], seed=0, max_turns=1)
    await loop.open()
    assert (await loop.step()).number == 1
    # It should refuse the turn past the limit, without asking anyone.
    assert await loop.step() is None and loop.limit == LIMIT_TURNS and len(a.messages) == 2
    result = await loop.finish()
    # It should end with no outcome and no farewell.
    assert result.outcome is None and result.limit == LIMIT_TURNS and len(a.messages) == 2


class SlowCount(Count):
    """Count whose engine work takes 40 ms a turn (a large board's life step, say); it
    notes the thread each engine call ran on."""

    slug = "slowcount"

    def __init__(self):
        super().__init__()
        self.threads: list[int] = []

    def apply(self, state, actions):
        import threading
        import time

        self.threads.append(threading.get_ident())
        end = time.thread_time() + 0.04  # 40 ms of this thread's CPU
        while time.thread_time() < end:
            pass
        return super().apply(state, actions)


async def test_it_moves_heavy_engine_work_off_the_event_loop():
    game = SlowCount()
    ticks = 0
    done = asyncio.Event()

    async def ticker():
        nonlocal ticks
        while not done.is_set():
            await asyncio.sleep(0.005)
            ticks += 1

    ticking = asyncio.create_task(ticker())
    bots = [ScriptedBot([{}] + [ADD] * 8), ScriptedBot([{}] + [ADD] * 8)]
    result = await play(game, bots, seed=0, options={"turns": 8})
    done.set()
    await ticking
    loop_thread = threading.get_ident()
    # It should play the match to its end, the same as inline ...
    assert result.outcome.scores == (0.5, 0.5) and len(result.turns) == 8
    # ... running the engine on the loop's thread at most once (the turn that showed the
    # work is heavy): the other turns' 40 ms ran on a worker thread ...
    on_loop = [t for t in game.threads if t == loop_thread]
    assert len(game.threads) >= 8 and len(on_loop) <= 1, (len(game.threads), len(on_loop))
    # ... while the loop kept ticking between them (judged by count, not by the clock: a
    # loaded machine stretches every tick alike).
    assert ticks >= len(game.threads) - len(on_loop)


class WaitingCount(Count):
    """Count whose engine calls each wait 3 ms without using the CPU: as a light turn waits
    for the GIL while a database thread's batch holds it (up to the 5 ms switch interval)."""

    slug = "waitingcount"

    def apply(self, state, actions):
        import time

        time.sleep(0.003)
        return super().apply(state, actions)


async def test_it_keeps_engine_work_inline_when_its_time_is_spent_waiting():
    bots = [ScriptedBot([{}] + [ADD] * 6), ScriptedBot([{}] + [ADD] * 6)]
    loop = MatchLoop(WaitingCount(), bots, seed=0, options={"turns": 6})
    result = await loop.run()
    # It should judge an engine call by the CPU it used (this thread's time), not by the
    # clock: longer than ENGINE_INLINE_S on the clock, the turns stay on the event loop.
    assert len(result.turns) == 6 and not loop.heavy


class LateSlowCount(SlowCount):
    """SlowCount whose engine work turns heavy from its fourth turn on (a board that fills)."""

    slug = "lateslowcount"

    def apply(self, state, actions):
        if state.turn < 3:
            return Count.apply(self, state, actions)
        return super().apply(state, actions)


async def test_it_moves_engine_work_that_turns_heavy_mid_match_off_the_event_loop():
    game = LateSlowCount()
    bots = [ScriptedBot([{}] + [ADD] * 8), ScriptedBot([{}] + [ADD] * 8)]
    loop = MatchLoop(game, bots, seed=0, options={"turns": 8})
    result = await loop.run()
    loop_thread = threading.get_ident()
    # It should play the match to its end, and once the work turned heavy, run it on the
    # loop's thread at most twice: the turn whose wall clock ran over, and the next, whose
    # CPU clock showed the work is heavy; the other three heavy turns ran on a worker thread.
    assert result.outcome.scores == (0.5, 0.5) and len(result.turns) == 8 and loop.heavy
    on_loop = [t for t in game.threads if t == loop_thread]
    assert len(game.threads) == 5 and len(on_loop) <= 2, (len(game.threads), len(on_loop))


async def test_it_reads_the_cpu_clock_only_in_a_light_matchs_first_turn(monkeypatch):
    import time as real_time
    from types import SimpleNamespace

    from competition.matches import loop as loop_module

    reads = []

    def thread_time():
        reads.append(1)
        return real_time.thread_time()

    clock = SimpleNamespace(perf_counter=real_time.perf_counter, thread_time=thread_time)
    monkeypatch.setattr(loop_module, "time", clock)
    bots = [ScriptedBot([{}] + [ADD] * 6), ScriptedBot([{}] + [ADD] * 6)]
    result = await play(Count(), bots, seed=0, options={"turns": 6})
    # It should judge the first turn's two engine calls by the thread's CPU clock (a system
    # call, two reads each) and the next five turns' by the wall clock alone.
    assert len(result.turns) == 6 and len(reads) == 4, len(reads)
