"""Game of Drones (Google I/O Extended Grand Rapids Code Challenge 2018; rules: ``README.md``).

Both seats act at once, blind, for ``rounds`` rounds; the first attack (or the last turn) causes
the clash that ends a round. A request carries the JavaScript bot interface's pending calls in
order, ending with ``playTurn``. Any JSON reply is legal (§4.2): counts are IEEE-754 doubles
computed in the original's order, and numbers are written as JavaScript writes them."""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from games.base import (
    JSON,
    Context,
    Game,
    Outcome,
    Policy,
    bool_option,
    choice_option,
    int_option,
    merge_options,
    rng_for,
)

Number = int | float
Army = tuple[Number, Number]  # (producers, soldiers)

#: counts saturate here instead of overflowing to infinity (which JSON cannot carry); it
#: takes more than 1,000 turns of doubling in one round to get there.
_MAX = sys.float_info.max

WIN, LOSE, DRAW = "WIN", "LOSE", "DRAW"
NOTHING: dict = {"newProducers": 0, "newSoldiers": 0, "launchAttack": False}


@dataclass(frozen=True, slots=True)
class State:
    """One position: ``round``, ``turn``, both ``armies`` (producers, soldiers), who attacked, the
    last ``clash`` ``(trigger, aggressor, winner)`` and each finished round's winner."""

    options: tuple[tuple[str, Any], ...]
    seed: int
    round: int = 1
    turn: int = 0
    armies: tuple[Army, Army] = ((1, 0), (1, 0))
    attacking: tuple[bool, bool] = (False, False)
    clash: tuple[str, int | None, int | None] | None = None
    results: tuple[int | None, ...] = ()
    #: the start of a match forked from this position (``rebuild``): its bots join here, so
    #: the next requests open with ``onMatchStart`` and ``onRoundStart`` (the turns left in
    #: the round); any turn played clears it. Not part of the position (equality ignores it).
    joined: bool = field(default=False, compare=False)


# -- numbers --------------------------------------------------------------------------


def _num(value: float) -> Number:
    """A double as stored and sent: integral values as ``int`` (JavaScript prints ``3``)."""
    return int(value) if value.is_integer() else value


def _double(value: Any) -> float:
    """``value`` as JavaScript would hold it (a double), saturated to the largest finite one."""
    try:
        result = float(value)
    except OverflowError:  # an integer beyond the double range
        result = math.inf if value > 0 else -math.inf
    return min(result, _MAX) if result > 0 else result


def _count(value: Any) -> Number:
    """§4.2: a JSON number greater than 0 (never a boolean) counts; anything else is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    result = _double(value)
    return _num(result) if result > 0 else 0  # NaN and -0.0 fail "> 0" too


def _attacks(value: Any) -> bool:
    """§4.2: JSON ``true``, a number equal to 1, or exactly the string ``"1"``."""
    if value is True or value == "1":
        return True
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 1


def coerce_action(raw: JSON) -> dict:
    """The canonical action of any JSON reply (§4.2); idempotent on canonical actions."""
    if not isinstance(raw, dict):
        return dict(NOTHING)
    return {
        "newProducers": _count(raw.get("newProducers")),
        "newSoldiers": _count(raw.get("newSoldiers")),
        "launchAttack": _attacks(raw.get("launchAttack")),
    }


def produce(army: Army, new_producers: Number, new_soldiers: Number) -> Army:
    """§4.3: producers first, then soldiers, clamped to the capacity, in doubles."""
    capacity = _double(army[0])
    np_, ns = _double(new_producers), _double(new_soldiers)
    if np_ < capacity:
        capacity = capacity - np_
    else:
        np_, capacity = capacity, 0.0
    if ns < capacity:
        capacity = capacity - ns
    else:
        ns, capacity = capacity, 0.0
    return (
        _num(min(_double(army[0]) + np_, _MAX)),
        _num(min(_double(army[1]) + ns, _MAX)),
    )


def decide_clash(
    armies: tuple[Army, Army], attacking: tuple[bool, bool], defender_bonus: int
) -> tuple[int | None, int | None]:
    """§4.4: ``(aggressor, winner)`` of a clash; ``None`` for no lone aggressor / a draw."""
    s0, s1 = _double(armies[0][1]), _double(armies[1][1])
    if attacking[0] != attacking[1]:
        aggressor = 0 if attacking[0] else 1
        mine, theirs = (s0, s1) if aggressor == 0 else (s1, s0)
        wins = mine > theirs + _double(defender_bonus)
        return aggressor, (aggressor if wins else 1 - aggressor)
    if s0 == s1:
        return None, None
    return None, (0 if s0 > s1 else 1)


# -- JavaScript number formatting --------------------------------------------------------


def js_number(value: Number) -> str:
    """``String(x)`` of JavaScript for the double nearest ``value`` (ECMA-262 Number::toString)."""
    x = _double(value) if not isinstance(value, float) else value
    if math.isnan(x) or math.isinf(x):
        return "null"  # what JSON.stringify writes
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")  # repr: the shortest round trip
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    s = stripped.rstrip("0")
    k, n = len(s), point
    if k <= n <= 21:
        text = s + "0" * (n - k)
    elif 0 < n <= 21:
        text = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + s
    else:
        e = n - 1
        text = (s[0] + ("." + s[1:] if k > 1 else "")) + ("e+" if e >= 0 else "e-") + str(abs(e))
    return sign + text


def js_json(value: JSON) -> str:
    """Compact JSON as ``JSON.stringify`` writes it (numbers by :func:`js_number`)."""
    if value is None or value is True or value is False:
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{js_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    raise TypeError(f"not JSON: {type(value).__name__}")


# -- the engine ------------------------------------------------------------------------


class Drones(Game):
    """Game of Drones: two blind armies build producers and soldiers; the first attack (or
    the last turn) clashes them; a lone attacker needs more soldiers than the defender's
    plus the defender bonus; more round wins takes the match."""

    slug = "drones"
    title = "Game of Drones"
    #: why a match ends, in words (``Game.reasons``)
    reasons = {
        "rounds": "the rounds were played",
        "coin_flip": "a tie decided by a coin flip",
    }
    num_players = 2
    wire = "json"
    default_options = {
        "rounds": 10,
        "turns": 10,
        "defenderBonus": 1,
        "drawAllowed": True,
        "on_fault": "pass",
        "max_faults_in_a_row": 3,
        "move_timeout_ms": 2000,
    }

    # -- options and policy ---------------------------------------------------------

    def resolve_options(self, options: dict | None = None) -> dict:
        return merge_options(
            self.default_options,
            options,
            {
                # platform limits beyond the spec's "int >= 0/1" (one match may not run for
                # ever; every option has an upper bound; a bonus beyond 2**53 is not exact
                # in the doubles the game counts in)
                "rounds": int_option(1, 100_000),
                "turns": int_option(1, 100_000),
                "defenderBonus": int_option(0, 2**53),
                "drawAllowed": bool_option,
                "on_fault": choice_option("pass", "forfeit"),
                "max_faults_in_a_row": int_option(1, 100_000, nullable=True),
                "move_timeout_ms": int_option(1, 600_000),
            },
        )

    def policy(self, options: dict) -> Policy:
        on_fault = options["on_fault"]
        return Policy(
            move_timeout_ms=options["move_timeout_ms"],
            on_fault=on_fault,
            max_faults_in_a_row=options["max_faults_in_a_row"] if on_fault == "pass" else None,
        )

    # -- the state machine ----------------------------------------------------------

    def initial_state(self, *, seed: int, options: dict | None = None) -> State:
        resolved = self.resolve_options(options)
        return State(options=tuple(resolved.items()), seed=int(seed))

    def to_move(self, state: State) -> tuple[int, ...]:
        return () if _over(state) else (0, 1)

    def observation(self, state: State, seat: int, ctx: Context) -> JSON:
        if _over(state):
            raise ValueError("the match is over: no more requests (see farewell)")
        options = dict(state.options)
        calls: list = []
        match_start = [
            "onMatchStart",
            {"rounds": options["rounds"], "drawAllowed": options["drawAllowed"]},
        ]
        if state.joined:  # a fork: these bots never saw the match start
            calls.append(match_start)
        if state.clash is not None:
            calls.append(["onRoundEnd", round_view(state, seat)])
        elif state.round == 1 and state.turn == 0 and not state.joined:
            calls.append(match_start)
        if state.turn == 0 or state.clash is not None or state.joined:
            # a fork joins mid-round: the turns its round has left
            turns = options["turns"] - (0 if state.clash is not None else state.turn)
            calls.append(
                ["onRoundStart", {"turns": turns, "defenderBonus": options["defenderBonus"]}]
            )
        producers, soldiers = (1, 0) if state.clash is not None else state.armies[seat]
        calls.append(["playTurn", {"producers": producers, "soldiers": soldiers}])
        return {"calls": calls}

    def farewell(self, state: State, seat: int, ctx: Context) -> JSON | None:
        if not _over(state):
            return None
        return {"calls": [["onRoundEnd", round_view(state, seat)]], "final": True}

    def parse_action(self, state: State, seat: int, raw: JSON) -> dict:
        return coerce_action(raw)

    def default_action(self, state: State, seat: int) -> dict:
        return dict(NOTHING)

    def rebuild(self, *, seed, options, seats, actions) -> State:
        """The position after ``actions``, marked ``joined`` so a fork's bots are told so."""
        return replace(
            super().rebuild(seed=seed, options=options, seats=seats, actions=actions), joined=True
        )

    def apply(self, state: State, actions: dict[int, JSON]) -> State:
        if _over(state):
            raise ValueError("the match is over")
        missing = [seat for seat in (0, 1) if seat not in actions]
        if missing:
            raise ValueError(f"no action for seat(s) {missing}")
        options = dict(state.options)
        if state.clash is not None:  # the previous turn ended a round: start the next one
            state = replace(
                state,
                round=state.round + 1,
                turn=0,
                armies=((1, 0), (1, 0)),
                attacking=(False, False),
                clash=None,
            )
        moves = (coerce_action(actions[0]), coerce_action(actions[1]))
        armies = (
            produce(state.armies[0], moves[0]["newProducers"], moves[0]["newSoldiers"]),
            produce(state.armies[1], moves[1]["newProducers"], moves[1]["newSoldiers"]),
        )
        attacking = (moves[0]["launchAttack"], moves[1]["launchAttack"])
        turn = state.turn + 1
        clash = None
        results = state.results
        if attacking[0] or attacking[1] or turn >= options["turns"]:
            aggressor, winner = decide_clash(armies, attacking, options["defenderBonus"])
            trigger = "attack" if attacking[0] or attacking[1] else "auto"
            clash = (trigger, aggressor, winner)
            results = (*results, winner)
        return replace(
            state,
            turn=turn,
            armies=armies,
            attacking=attacking,
            clash=clash,
            results=results,
            joined=False,
        )

    def outcome(self, state: State) -> Outcome | None:
        if not _over(state):
            return None
        wins = _wins(state)
        if wins[0] != wins[1]:
            return Outcome(scores=(1.0, 0.0) if wins[0] > wins[1] else (0.0, 1.0), reason="rounds")
        if dict(state.options)["drawAllowed"]:
            return Outcome(scores=(0.5, 0.5), reason="rounds")
        heads = rng_for(state.seed, 0, "tiebreak").random() < 0.5
        return Outcome(scores=(1.0, 0.0) if heads else (0.0, 1.0), reason="coin_flip")

    def frame(self, state: State) -> JSON:
        options = dict(state.options)
        wins = _wins(state)
        clash = None
        if state.clash is not None:
            trigger, aggressor, winner = state.clash
            clash = {"trigger": trigger, "aggressor": aggressor, "winner": winner}
        return {
            "round": state.round,
            "rounds": options["rounds"],
            "turn": state.turn,
            "turns": options["turns"],
            "armies": [{"producers": p, "soldiers": s} for p, s in state.armies],
            "attacking": list(state.attacking),
            "clash": clash,
            "results": list(state.results),
            "wins": list(wins),
            "draws": len(state.results) - wins[0] - wins[1],
        }

    def to_json(self, state: State) -> JSON:
        return {
            "options": dict(state.options),
            "seed": state.seed,
            "round": state.round,
            "turn": state.turn,
            "armies": [list(army) for army in state.armies],
            "attacking": list(state.attacking),
            "clash": list(state.clash) if state.clash is not None else None,
            "results": list(state.results),
        }

    def from_json(self, data: JSON) -> State:
        options = self.resolve_options(data["options"])
        clash = data["clash"]
        return State(
            options=tuple(options.items()),
            seed=int(data["seed"]),
            round=data["round"],
            turn=data["turn"],
            armies=tuple((army[0], army[1]) for army in data["armies"]),
            attacking=tuple(bool(a) for a in data["attacking"]),
            clash=(clash[0], clash[1], clash[2]) if clash is not None else None,
            results=tuple(data["results"]),
        )

    # -- wire -----------------------------------------------------------------------

    def upload_host(self, language: str) -> Path | None:
        """An uploaded JavaScript file is a 2018 bot (a ``playTurn`` class): the host runs it."""
        return (
            Path(__file__).resolve().with_name("drones_js.mjs")
            if language == "javascript"
            else None
        )

    def encode_message(self, message: JSON) -> str:
        return js_json(message)

    # -- the platform's questions (the parts in games/drones/) -------------------------

    order = 2
    human_options = {"move_timeout_ms": 30_000, "rounds": 5}

    def doc_examples(self):
        from games.drones.docs import examples

        return examples(self)

    def human_reply(self, message):
        # the final onRoundEnd's reply is ignored: a person's seat answers it at once
        if isinstance(message, dict) and message.get("final") is True:
            return True, None
        return False, None


def _over(state: State) -> bool:
    return state.clash is not None and len(state.results) >= dict(state.options)["rounds"]


def _wins(state: State) -> tuple[int, int]:
    return (
        sum(1 for r in state.results if r == 0),
        sum(1 for r in state.results if r == 1),
    )


def round_view(state: State, seat: int) -> dict:
    """§5.2: the ``onRoundEnd`` argument for ``seat`` after the clash that ended a round."""
    winner = state.results[-1]
    outcome = DRAW if winner is None else (WIN if winner == seat else LOSE)

    def side(s: int) -> dict:
        producers, soldiers = state.armies[s]
        return {"producers": producers, "soldiers": soldiers, "launchedAttack": state.attacking[s]}

    return {
        "outcome": outcome,
        "turnsPlayed": state.turn,
        "you": side(seat),
        "them": side(1 - seat),
    }


# -- built-in bots (§9): ports of the four example bots -----------------------------------


class _ExampleBot:
    """Processes a request's calls in order as the JavaScript bot object would."""

    def __init__(self) -> None:
        self.rng: random.Random | None = None

    def __call__(self, request: JSON, rng: random.Random) -> JSON:
        self.rng = rng
        reply = None
        calls = request.get("calls") if isinstance(request, dict) else None
        for call in calls if isinstance(calls, list) else ():
            if not (isinstance(call, list) and len(call) == 2 and isinstance(call[1], dict)):
                continue
            method, argument = call
            if method == "onMatchStart":
                self.on_match_start(argument)
            elif method == "onRoundStart":
                self.on_round_start(argument)
            elif method == "playTurn":
                reply = self.play_turn(argument)
            elif method == "onRoundEnd":
                self.on_round_end(argument)
        return reply

    def on_match_start(self, rules: dict) -> None:
        pass

    def on_round_start(self, rules: dict) -> None:
        pass

    def play_turn(self, state: dict) -> JSON:
        raise NotImplementedError

    def on_round_end(self, result: dict) -> None:
        pass


class AdaptiveDefender(_ExampleBot):
    """Adaptive Defender (Example Bot): grows producers, then turns all its capacity into
    soldiers on the turn the opponent attacked last round (or on the last turn)."""

    def __init__(self) -> None:
        super().__init__()
        self.turn = 0
        self.build = 10
        self.last: Number | None = None

    def on_round_start(self, rules: dict) -> None:
        self.turn = 0
        self.build = self.last if self.last is not None else rules.get("turns", 10)

    def play_turn(self, state: dict) -> JSON:
        producers = state.get("producers", 0)
        self.turn += 1
        if self.turn >= self.build:
            return {"newSoldiers": producers}
        return {"newProducers": producers}

    def on_round_end(self, result: dict) -> None:
        them = result.get("them")
        attacked = isinstance(them, dict) and them.get("launchedAttack") is True
        self.last = result.get("turnsPlayed") if attacked else None


class Pacifist(_ExampleBot):
    """Hard Hitting Pacifist (Example Bot): producers until the last turn, then soldiers."""

    def __init__(self) -> None:
        super().__init__()
        self.turns = 10
        self.turn = 0

    def on_round_start(self, rules: dict) -> None:
        self.turns = rules.get("turns", 10)
        self.turn = 0

    def play_turn(self, state: dict) -> JSON:
        producers = state.get("producers", 0)
        self.turn += 1
        if self.turns > self.turn:
            return {"newProducers": producers}
        return {"newSoldiers": producers}


class Randomonium(_ExampleBot):
    """Randomonium (Example Bot): picks an attack turn per round (possibly never) and splits
    its capacity at random every turn. Draws: one per ``onRoundStart``, one per ``playTurn``."""

    def __init__(self) -> None:
        super().__init__()
        self.turn = 0
        self.attack: int | None = None

    def on_round_start(self, rules: dict) -> None:
        self.turn = 0
        self.attack = math.floor(self.rng.random() * (rules.get("turns", 10) + 1)) + 1

    def play_turn(self, state: dict) -> JSON:
        if self.attack is None:  # playTurn before any onRoundStart: the default rules
            self.on_round_start({"turns": 10, "defenderBonus": 1})
        producers = state.get("producers", 0)
        soldiers = math.floor(self.rng.random() * (producers + 1))
        self.turn += 1
        return {
            "newProducers": producers - soldiers,
            "newSoldiers": soldiers,
            "launchAttack": self.turn >= self.attack,
        }


class Zerg(_ExampleBot):
    """Zergy McZergface (Example Bot): all soldiers, attack as soon as the soldiers could
    beat an empty defence (turn 2 with the defaults)."""

    def __init__(self) -> None:
        super().__init__()
        self.bonus = 1

    def on_round_start(self, rules: dict) -> None:
        self.bonus = rules.get("defenderBonus", 1)

    def play_turn(self, state: dict) -> JSON:
        producers = state.get("producers", 0)
        soldiers = state.get("soldiers", 0)
        return {
            "newProducers": 0,
            "newSoldiers": producers,
            "launchAttack": soldiers + producers >= self.bonus + 1,
        }


Drones.builtin_bots = {
    "adaptive-defender": AdaptiveDefender,
    "pacifist": Pacifist,
    "randomonium": Randomonium,
    "zerg": Zerg,
}

#: the vector files' bot ids (§9, §11.3) for each built-in bot
VECTOR_IDS = {
    "adaptive-defender": "adaptive-defender",
    "pacifist": "hard-hitting-pacifist",
    "randomonium": "randomonium",
    "zerg": "zerg-rush",
}

GAME = Drones()
