"""GameOfDrones engine: options, rules, wire messages, built-in bots and the vectors.

Normative text: ``games/drones/README.md``; vectors: ``games/drones/vectors/``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.base import Context, Outcome, rng_for
from games.drones import GAME, VECTOR_IDS, State, coerce_action, js_number
from games.registry import get_game
from games.testing import check_game, play_builtin
from tests.conftest import game_vectors

DRONES = game_vectors("drones")
CTX = Context(match_id="m1")
NOTHING = {"newProducers": 0, "newSoldiers": 0, "launchAttack": False}


def load(path: Path):
    # A missing vector file must fail the suite, never skip it.
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def game_files() -> list[str]:
    return [row["file"] for row in load(DRONES / "games" / "index.json")]


def wire(message) -> str:
    return GAME.encode_message(message)


def state_with(armies, *, options=None, turn: int = 1) -> State:
    """A running position with the given armies (as after ``turn`` turns without a clash)."""
    state = GAME.initial_state(seed=0, options=options)
    return State(
        options=state.options,
        seed=0,
        round=1,
        turn=turn,
        armies=tuple((p, s) for p, s in armies),
    )


def play_turn(state: State, a0, a1) -> State:
    return GAME.apply(
        state, {0: GAME.parse_action(state, 0, a0), 1: GAME.parse_action(state, 1, a1)}
    )


# -- contract and options ----------------------------------------------------------------


def test_it_is_registered_and_simultaneous():
    # It should be the registry's "drones" game with the json wire.
    assert get_game("drones") is GAME
    assert (GAME.slug, GAME.title, GAME.num_players, GAME.wire) == (
        "drones",
        "Game of Drones",
        2,
        "json",
    )
    assert sorted(GAME.builtin_bots) == ["adaptive-defender", "pacifist", "randomonium", "zerg"]
    # It should ask both seats at once while running, and nobody once over.
    state = GAME.initial_state(seed=1)
    assert GAME.to_move(state) == (0, 1)
    for _ in range(10):
        state = play_turn(state, None, None)
    assert GAME.to_move(state) == (0, 1)  # round 1 over, nine to go
    state = GAME.initial_state(seed=1, options={"rounds": 1, "turns": 1})
    state = play_turn(state, None, None)
    assert GAME.to_move(state) == ()
    assert GAME.outcome(state) == Outcome(scores=(0.5, 0.5), reason="rounds")


def test_it_resolves_the_default_options():
    assert GAME.resolve_options() == {
        "rounds": 10,
        "turns": 10,
        "defenderBonus": 1,
        "drawAllowed": True,
        "on_fault": "pass",
        "max_faults_in_a_row": 3,
        "move_timeout_ms": 2000,
    }
    state = GAME.initial_state(seed=5, options={"rounds": 3, "max_faults_in_a_row": None})
    assert GAME.options_of(state)["rounds"] == 3
    assert GAME.options_of(state)["max_faults_in_a_row"] is None


@pytest.mark.parametrize(
    "options",
    [
        {"round": 3},
        {"rounds": 0},
        {"rounds": True},
        {"rounds": 2.0},
        {"rounds": "3"},
        {"turns": 0},
        {"turns": None},
        {"defenderBonus": -1},
        {"defenderBonus": False},
        {"drawAllowed": 1},
        {"drawAllowed": None},
        {"on_fault": "retry"},
        {"on_fault": True},
        {"max_faults_in_a_row": 0},
        {"max_faults_in_a_row": True},
        {"move_timeout_ms": 0},
        {"move_timeout_ms": 600_001},
        {"move_timeout_ms": 1.5},
    ],
)
def test_it_rejects_bad_options(options):
    with pytest.raises(ValueError):
        GAME.initial_state(seed=0, options=options)


def test_it_derives_the_policy_from_the_options():
    # It should pass faults by default, and forfeit after 3 in a row.
    policy = GAME.policy(GAME.resolve_options())
    assert (policy.move_timeout_ms, policy.on_fault, policy.max_faults_in_a_row) == (
        2000,
        "pass",
        3,
    )
    assert policy.bank_increment_ms is None
    # It should drop the count under "forfeit" (the first fault loses).
    policy = GAME.policy(GAME.resolve_options({"on_fault": "forfeit", "move_timeout_ms": 50}))
    assert (policy.move_timeout_ms, policy.on_fault, policy.max_faults_in_a_row) == (
        50,
        "forfeit",
        None,
    )
    policy = GAME.policy(GAME.resolve_options({"max_faults_in_a_row": None}))
    assert policy.max_faults_in_a_row is None


# -- §4.2 coercion -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, NOTHING),
        ([1, 2], NOTHING),
        ("launchAttack", NOTHING),
        (3, NOTHING),
        ({}, NOTHING),
        (
            {"newProducers": 2, "newSoldiers": 0.25, "launchAttack": True},
            {"newProducers": 2, "newSoldiers": 0.25, "launchAttack": True},
        ),
        ({"newProducers": 2.0}, {"newProducers": 2, "newSoldiers": 0, "launchAttack": False}),
        ({"newProducers": -1, "newSoldiers": 1}, {**NOTHING, "newSoldiers": 1}),
        ({"newProducers": "2", "newSoldiers": True}, NOTHING),
        ({"newProducers": [2], "newSoldiers": {"a": 1}}, NOTHING),
        ({"newProducers": None, "newSoldiers": -0.0}, NOTHING),
        ({"launchAttack": 1}, {**NOTHING, "launchAttack": True}),
        ({"launchAttack": 1.0}, {**NOTHING, "launchAttack": True}),
        ({"launchAttack": "1"}, {**NOTHING, "launchAttack": True}),
        ({"launchAttack": "true"}, NOTHING),
        ({"launchAttack": 2}, NOTHING),
        ({"launchAttack": [1]}, NOTHING),
        ({"launchAttack": " 1"}, NOTHING),
        ({"launchAttack": False, "extra": 1}, NOTHING),
        ({"newProducers": 10**400}, {**NOTHING, "newProducers": int(1.7976931348623157e308)}),
        ({"newProducers": 2**60 + 1}, {**NOTHING, "newProducers": 2**60}),
    ],
)
def test_it_coerces_any_reply_to_an_action(raw, expected):
    # It should never raise, and always give the canonical form (before clamping).
    state = GAME.initial_state(seed=0)
    assert GAME.parse_action(state, 0, raw) == expected
    assert coerce_action(expected) == expected  # idempotent


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["newProducers", "newSoldiers", "launchAttack", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(raw0=json_values, raw1=json_values)
def test_it_accepts_every_json_reply_as_a_legal_action(raw0, raw1):
    state = GAME.initial_state(seed=0)
    actions = {seat: GAME.parse_action(state, seat, raw) for seat, raw in ((0, raw0), (1, raw1))}
    for action in actions.values():
        # It should be the canonical, JSON-serialisable form.
        assert list(action) == ["newProducers", "newSoldiers", "launchAttack"]
        assert json.loads(json.dumps(action, allow_nan=False)) == action
        assert isinstance(action["launchAttack"], bool)
        for key in ("newProducers", "newSoldiers"):
            assert not isinstance(action[key], bool) and action[key] >= 0
    after = GAME.apply(state, actions)
    for producers, soldiers in after.armies:
        assert 1 <= producers <= 2 and 0 <= soldiers <= 1
        assert producers + soldiers <= 2


# -- §4.3 production and §4.4 clashes: worked examples ----------------------------------------


@pytest.mark.parametrize(
    ("reply", "after"),
    [
        ({"newProducers": 2, "newSoldiers": 5}, (5, 3)),
        ({"newProducers": 2, "newSoldiers": 0.25}, (5, 2.25)),
        ({"newProducers": -1, "newSoldiers": 1}, (3, 3)),
        ({"newProducers": "2"}, (3, 2)),
        (None, (3, 2)),
        ([1, 2], (3, 2)),
    ],
)
def test_it_produces_as_in_the_worked_examples(reply, after):
    state = play_turn(state_with([(3, 2), (3, 2)]), reply, None)
    assert state.armies[0] == after
    assert state.armies[1] == (3, 2)
    # It should store integral values as integers (JavaScript prints 5, never 5.0).
    assert all(type(n) is int or not float(n).is_integer() for n in state.armies[0])


@pytest.mark.parametrize(
    ("armies", "attack", "winner", "aggressor"),
    [
        ([(1, 3), (1, 2)], (True, False), 1, 0),  # 3 > 2 + 1 fails: the defender wins
        ([(1, 4), (1, 2)], (True, False), 0, 0),  # 4 > 3
        ([(1, 2), (1, 4)], (True, False), 1, 0),
        ([(1, 5), (1, 5)], (True, True), None, None),  # both attack, equal: draw
        ([(1, 7), (1, 3)], (False, False), 0, None),  # automatic clash on turn 10
        ([(9, 3), (1, 3)], (False, False), None, None),  # producers never fight
    ],
)
def test_it_decides_clashes_as_in_the_worked_examples(armies, attack, winner, aggressor):
    state = state_with(armies, turn=9)
    state = play_turn(state, {"launchAttack": attack[0]}, {"launchAttack": attack[1]})
    trigger = "attack" if any(attack) else "auto"
    assert state.clash == (trigger, aggressor, winner)
    assert state.results == (winner,)
    assert state.armies == tuple(armies)


def test_it_applies_the_defender_bonus_option():
    # It should apply the option (the original only reported it): 5 > 2 + 3 fails.
    state = state_with([(1, 5), (1, 2)], options={"defenderBonus": 3})
    assert play_turn(state, {"launchAttack": True}, None).clash == ("attack", 0, 1)
    state = state_with([(1, 6), (1, 2)], options={"defenderBonus": 3})
    assert play_turn(state, {"launchAttack": True}, None).clash == ("attack", 0, 0)
    state = state_with([(1, 1), (1, 0)], options={"defenderBonus": 0})
    assert play_turn(state, {"launchAttack": True}, None).clash == ("attack", 0, 0)


def test_it_plays_the_worked_round_pacifist_against_zerg():
    state = GAME.initial_state(seed=3)
    # It should grow the pacifist and arm the zerg on turn 1, without a clash.
    state = play_turn(
        state, {"newProducers": 1}, {"newProducers": 0, "newSoldiers": 1, "launchAttack": False}
    )
    assert state.armies == ((2, 0), (1, 1))
    assert state.clash is None and state.turn == 1
    # It should end the round on turn 2: a lone attack with 2 > 0 + 1.
    state = play_turn(
        state, {"newProducers": 2}, {"newProducers": 0, "newSoldiers": 1, "launchAttack": True}
    )
    assert state.armies == ((4, 0), (1, 2))
    assert state.clash == ("attack", 1, 1)
    assert state.results == (1,)
    assert GAME.frame(state) == {
        "round": 1,
        "rounds": 10,
        "turn": 2,
        "turns": 10,
        "armies": [{"producers": 4, "soldiers": 0}, {"producers": 1, "soldiers": 2}],
        "attacking": [False, True],
        "clash": {"trigger": "attack", "aggressor": 1, "winner": 1},
        "results": [1],
        "wins": [0, 1],
        "draws": 0,
    }
    # It should restart from 1 producer and 0 soldiers in the next round.
    state = play_turn(state, {"newSoldiers": 1}, None)
    assert (state.round, state.turn, state.armies) == (2, 1, ((1, 1), (1, 0)))
    assert GAME.frame(state)["clash"] is None
    assert GAME.frame(state)["results"] == [1]


def test_it_starts_from_the_initial_frame():
    assert GAME.frame(GAME.initial_state(seed=0)) == {
        "round": 1,
        "rounds": 10,
        "turn": 0,
        "turns": 10,
        "armies": [{"producers": 1, "soldiers": 0}, {"producers": 1, "soldiers": 0}],
        "attacking": [False, False],
        "clash": None,
        "results": [],
        "wins": [0, 0],
        "draws": 0,
    }


def test_it_clashes_automatically_after_the_last_turn():
    state = GAME.initial_state(seed=0, options={"turns": 3})
    state = play_turn(state, {"newProducers": 1}, {"newSoldiers": 1})
    state = play_turn(state, {"newProducers": 2}, {"newSoldiers": 1})
    assert state.clash is None
    state = play_turn(state, {"newSoldiers": 4}, {"newSoldiers": 1})
    assert state.armies == ((4, 4), (1, 3))
    assert state.clash == ("auto", None, 0)
    assert state.turn == 3


def test_it_refuses_to_apply_incomplete_or_finished_turns():
    state = GAME.initial_state(seed=0, options={"rounds": 1, "turns": 1})
    with pytest.raises(ValueError):
        GAME.apply(state, {0: NOTHING})
    state = GAME.apply(state, {0: NOTHING, 1: NOTHING})
    with pytest.raises(ValueError):
        GAME.apply(state, {0: NOTHING, 1: NOTHING})


# -- §4.5 match result ----------------------------------------------------------------------


def finished(seed: int, results: list[int | None], **options) -> State:
    """A match whose rounds ended with ``results`` (a lone attack, or a field battle draw)."""
    state = GAME.initial_state(seed=seed, options={"rounds": len(results), **options})
    for winner in results:
        if winner is None:
            state = play_turn(state, {"launchAttack": True}, {"launchAttack": True})  # 0 vs 0
        else:
            replies = [{"newProducers": 1}, {"newProducers": 1}]
            replies[winner] = {"newSoldiers": 1}
            state = play_turn(state, *replies)
            replies = [NOTHING, NOTHING]
            replies[winner] = {"newSoldiers": 1, "launchAttack": True}  # 2 > 0 + 1
            state = play_turn(state, *replies)
        assert state.clash is not None and state.results[-1] == winner
    return state


def test_it_gives_the_match_to_more_round_wins():
    # It should ignore draws and count round wins.
    state = finished(1, [0, None, 1, 0])
    assert GAME.outcome(state) == Outcome(scores=(1.0, 0.0), reason="rounds")
    state = finished(1, [None, 1, None])
    assert GAME.outcome(state) == Outcome(scores=(0.0, 1.0), reason="rounds")
    state = finished(1, [0, 1], drawAllowed=False)
    assert GAME.outcome(state).reason == "coin_flip"
    state = finished(1, [0, 0, 1], drawAllowed=False)
    assert GAME.outcome(state) == Outcome(scores=(1.0, 0.0), reason="rounds")


def test_it_draws_equal_wins_when_draws_are_allowed():
    state = finished(7, [0, 1, None])
    assert GAME.outcome(state) == Outcome(scores=(0.5, 0.5), reason="rounds")


def test_it_flips_a_seeded_coin_when_draws_are_not_allowed():
    winners = set()
    for seed in range(40):
        state = finished(seed, [None, 1, 0], drawAllowed=False)
        outcome = GAME.outcome(state)
        # It should take the coin from rng_for(seed, 0, "tiebreak") only.
        heads = rng_for(seed, 0, "tiebreak").random() < 0.5
        assert outcome == Outcome(scores=(1.0, 0.0) if heads else (0.0, 1.0), reason="coin_flip")
        assert GAME.outcome(state) == outcome  # no hidden state
        winners.add(outcome.scores)
    assert winners == {(1.0, 0.0), (0.0, 1.0)}


# -- §5 requests ------------------------------------------------------------------------


FIRST = (
    '{"calls":[["onMatchStart",{"rounds":10,"drawAllowed":true}],'
    '["onRoundStart",{"turns":10,"defenderBonus":1}],'
    '["playTurn",{"producers":1,"soldiers":0}]]}'
)
ROUND2_SEAT0 = (
    '{"calls":[["onRoundEnd",{"outcome":"LOSE","turnsPlayed":2,'
    '"you":{"producers":4,"soldiers":0,"launchedAttack":false},'
    '"them":{"producers":1,"soldiers":2,"launchedAttack":true}}],'
    '["onRoundStart",{"turns":10,"defenderBonus":1}],'
    '["playTurn",{"producers":1,"soldiers":0}]]}'
)


def worked_round(options=None) -> State:
    state = GAME.initial_state(seed=0, options=options)
    state = play_turn(
        state, {"newProducers": 1}, {"newProducers": 0, "newSoldiers": 1, "launchAttack": False}
    )
    return play_turn(
        state, {"newProducers": 2}, {"newProducers": 0, "newSoldiers": 1, "launchAttack": True}
    )


def test_it_sends_the_byte_exact_first_request():
    state = GAME.initial_state(seed=0)
    for seat in (0, 1):
        text = wire(GAME.observation(state, seat, CTX))
        assert text == FIRST
        assert len(text.encode()) == 151
    assert len(b'{"newProducers":1,"newSoldiers":0,"launchAttack":false}') == 55


def test_it_sends_playturn_alone_within_a_round():
    state = play_turn(GAME.initial_state(seed=0), {"newProducers": 1}, {"newSoldiers": 1})
    assert wire(GAME.observation(state, 0, CTX)) == (
        '{"calls":[["playTurn",{"producers":2,"soldiers":0}]]}'
    )
    assert wire(GAME.observation(state, 1, CTX)) == (
        '{"calls":[["playTurn",{"producers":1,"soldiers":1}]]}'
    )


def test_it_sends_the_byte_exact_round_two_request():
    state = worked_round()
    text = wire(GAME.observation(state, 0, CTX))
    assert text == ROUND2_SEAT0
    assert len(text.encode()) == 267
    # It should mirror the view for the other seat.
    other = json.loads(wire(GAME.observation(state, 1, CTX)))
    view = other["calls"][0][1]
    assert view == {
        "outcome": "WIN",
        "turnsPlayed": 2,
        "you": {"producers": 1, "soldiers": 2, "launchedAttack": True},
        "them": {"producers": 4, "soldiers": 0, "launchedAttack": False},
    }


def test_it_sends_the_final_request_only_after_a_normal_end():
    state = GAME.initial_state(seed=0, options={"rounds": 1})
    assert GAME.farewell(state, 0, CTX) is None
    state = worked_round({"rounds": 1})
    assert GAME.to_move(state) == ()
    view = json.loads(ROUND2_SEAT0)["calls"][0][1]
    final = (
        '{"calls":[["onRoundEnd",' + json.dumps(view, separators=(",", ":")) + ']],"final":true}'
    )
    assert wire(GAME.farewell(state, 0, CTX)) == final
    assert json.loads(wire(GAME.farewell(state, 1, CTX)))["calls"][0][1]["outcome"] == "WIN"
    with pytest.raises(ValueError):
        GAME.observation(state, 0, CTX)


def test_it_writes_numbers_as_javascript_does():
    # It should write integral values as integers and others in shortest round-trip form.
    assert (
        wire({"a": [3, 3.0, 2.25, -0.5, 0.1 + 0.2]}) == '{"a":[3,3,2.25,-0.5,0.30000000000000004]}'
    )
    assert wire([1e21, 2**60, 1e-7, 1.5e-7, 0.000001, 5e-324]) == (
        "[1e+21,1152921504606847000,1e-7,1.5e-7,0.000001,5e-324]"
    )
    assert wire({"s": 'x"y', "t": True, "n": None}) == '{"s":"x\\"y","t":true,"n":null}'
    assert js_number(123456789012345680000) == "123456789012345680000"


def test_it_sends_fractional_counts_exactly():
    state = play_turn(GAME.initial_state(seed=0), {"newProducers": 0.5, "newSoldiers": 0.25}, None)
    assert state.armies[0] == (1.5, 0.25)
    assert wire(GAME.observation(state, 0, CTX)) == (
        '{"calls":[["playTurn",{"producers":1.5,"soldiers":0.25}]]}'
    )


def test_it_round_trips_states_through_json():
    state = worked_round({"drawAllowed": False, "rounds": 3})
    state = play_turn(state, {"newProducers": 0.5}, None)
    again = GAME.from_json(json.loads(json.dumps(GAME.to_json(state))))
    assert again == state
    assert GAME.options_of(again)["drawAllowed"] is False


# -- §9 built-in bots ---------------------------------------------------------------------


def ask(bot, request, rng=None):
    return bot(json.loads(wire(request)), rng or random.Random(0))


def test_it_keeps_builtin_memory_between_requests():
    bot = GAME.builtin_bots["adaptive-defender"]()
    state = GAME.initial_state(seed=0)
    # It should build producers until the last turn in the first round.
    assert ask(bot, GAME.observation(state, 0, CTX)) == {"newProducers": 1}
    # It should remember the opponent's attack turn (2) and build soldiers from then on.
    state = worked_round()
    assert ask(bot, GAME.observation(state, 0, CTX)) == {"newProducers": 1}
    assert ask(bot, {"calls": [["playTurn", {"producers": 2, "soldiers": 0}]]}) == {
        "newSoldiers": 2
    }
    # It should answer null to a request without playTurn (the final one).
    assert ask(bot, GAME.farewell(worked_round({"rounds": 1}), 0, CTX)) is None


def test_it_uses_default_rules_before_any_round_start():
    request = {"calls": [["playTurn", {"producers": 1, "soldiers": 1}]]}
    assert ask(GAME.builtin_bots["zerg"](), request) == {
        "newProducers": 0,
        "newSoldiers": 1,
        "launchAttack": True,
    }
    assert ask(GAME.builtin_bots["pacifist"](), request) == {"newProducers": 1}
    assert ask(GAME.builtin_bots["adaptive-defender"](), request) == {"newProducers": 1}
    reply = ask(GAME.builtin_bots["randomonium"](), request)
    assert set(reply) == {"newProducers", "newSoldiers", "launchAttack"}


def test_it_follows_the_reported_defender_bonus():
    bot = GAME.builtin_bots["zerg"]()
    state = GAME.initial_state(seed=0, options={"defenderBonus": 2})
    reply = ask(bot, GAME.observation(state, 0, CTX))
    assert reply == {"newProducers": 0, "newSoldiers": 1, "launchAttack": False}
    assert (
        ask(bot, {"calls": [["playTurn", {"producers": 1, "soldiers": 1}]]})["launchAttack"]
        is False
    )
    assert (
        ask(bot, {"calls": [["playTurn", {"producers": 1, "soldiers": 2}]]})["launchAttack"] is True
    )


def test_it_draws_randomonium_from_the_rng_it_is_given():
    def replies(seed):
        bot, rng = GAME.builtin_bots["randomonium"](), random.Random(seed)
        state, out = GAME.initial_state(seed=0), []
        for _ in range(30):
            out.append(ask(bot, GAME.observation(state, 0, CTX), rng))
            state = GAME.apply(state, {0: GAME.parse_action(state, 0, out[-1]), 1: NOTHING})
        return out

    assert replies(1) == replies(1)
    assert replies(1) != replies(2)
    for reply in replies(3):
        assert list(reply) == ["newProducers", "newSoldiers", "launchAttack"]


def test_it_plays_the_head_to_head_results_of_the_spec():
    def wins(a, b):
        states, _, outcome = play_builtin(GAME, 11, [a, b])
        return GAME.frame(states[-1]), outcome

    # It should let adaptive-defender beat zerg 9-1 (it learns the attack turn).
    frame, outcome = wins("adaptive-defender", "zerg")
    assert (frame["wins"], frame["draws"]) == ([9, 1], 0)
    assert outcome == Outcome(scores=(1.0, 0.0), reason="rounds")
    # It should let zerg beat pacifist 10-0.
    frame, outcome = wins("zerg", "pacifist")
    assert (frame["wins"], frame["draws"]) == ([10, 0], 0)
    assert outcome == Outcome(scores=(1.0, 0.0), reason="rounds")
    # It should draw every round between adaptive-defender and pacifist.
    frame, outcome = wins("adaptive-defender", "pacifist")
    assert (frame["wins"], frame["draws"], frame["results"]) == ([0, 0], 10, [None] * 10)
    assert outcome == Outcome(scores=(0.5, 0.5), reason="rounds")
    # It should let every bot but randomonium draw against itself.
    for name in ("adaptive-defender", "pacifist", "zerg"):
        frame, outcome = wins(name, name)
        assert frame["draws"] == 10 and outcome.scores == (0.5, 0.5)


def test_it_passes_the_generic_conformance_harness():
    report = check_game(GAME, range(200))
    assert report.games == 200
    assert set(report.reasons) <= {"rounds", "coin_flip"}
    report = check_game(GAME, range(20), options={"drawAllowed": False, "rounds": 2, "turns": 3})
    assert report.games == 20


# -- the vectors (§11.3) ---------------------------------------------------------------------


def test_it_finds_every_vector_file():
    # It should replay every game of the folder: the index lists them all.
    files = game_files()
    assert len(files) >= 16
    assert sorted(p.name for p in (DRONES / "games").glob("g*.json")) == sorted(files)
    assert (DRONES / "unit-vectors.json").is_file()


SEAT_OF = {"PLAYER 1": 0, "PLAYER 2": 1, "DRAW": None}
BUILTIN_OF = {vector_id: name for name, vector_id in VECTOR_IDS.items()}


def view_of(side: dict) -> dict:
    return {k: side[k] for k in ("producers", "soldiers", "launchedAttack")}


@pytest.mark.parametrize("name", game_files())
def test_it_replays_the_recorded_match(name):
    data = load(DRONES / "games" / name)
    turns_per_round = {r["rules"]["turns"] for r in data["rounds"]}
    if len(turns_per_round) != 1 or isinstance(data["config"].get("turns"), str):
        pytest.skip("turns as a function of the round is not reproduced (spec §11.2)")
    options = {
        "rounds": data["matchRules"]["rounds"],
        "turns": turns_per_round.pop(),
        "drawAllowed": data["matchRules"]["drawAllowed"],
    }
    reported_bonus = data["config"].get("defenderBonus")
    state = GAME.initial_state(seed=data["seed"], options=options)
    ctx = [Context(match_id=data["id"]), Context(match_id=data["id"])]
    bots = [
        GAME.builtin_bots[BUILTIN_OF[p["bot"]]]() if p["bot"] in BUILTIN_OF else None
        for p in data["players"]
    ]
    rngs = [random.Random(seat) for seat in (0, 1)]
    previous_views = None
    for number, rnd in enumerate(data["rounds"], start=1):
        for t, turn in enumerate(rnd["turns"]):
            for seat in (0, 1):
                request = json.loads(wire(GAME.observation(state, seat, ctx[seat])))
                calls = request["calls"]
                methods = [c[0] for c in calls]
                # It should carry the pending lifecycle calls, in order, then playTurn.
                if t == 0 and number == 1:
                    assert methods == ["onMatchStart", "onRoundStart", "playTurn"]
                    assert calls[0][1] == data["matchRules"]
                elif t == 0:
                    assert methods == ["onRoundEnd", "onRoundStart", "playTurn"]
                    assert calls[0][1] == previous_views[seat]
                else:
                    assert methods == ["playTurn"]
                if t == 0 and reported_bonus is None:
                    assert calls[-2][1] == rnd["rules"]
                b = turn["b"][seat]
                assert calls[-1][1] == {"producers": b[0], "soldiers": b[1]}
                # It should make the example-bot ports answer as the originals did.
                if bots[seat] is not None:
                    reply = bots[seat](request, rngs[seat])
                    if BUILTIN_OF[data["players"][seat]["bot"]] == "randomonium":
                        assert list(reply) == ["newProducers", "newSoldiers", "launchAttack"]
                        assert reply["newProducers"] + reply["newSoldiers"] == b[0]
                        assert min(reply["newProducers"], reply["newSoldiers"]) >= 0
                        assert isinstance(reply["launchAttack"], bool)
                    else:
                        assert reply == turn["a"][seat], (name, number, t, seat)
            actions = {
                seat: GAME.parse_action(state, seat, json.loads(json.dumps(turn["a"][seat])))
                for seat in (0, 1)
            }
            state = GAME.apply(state, actions)
            assert [list(army) for army in state.armies] == turn["s"], (name, number, t)
            assert [type(n) for army in state.armies for n in army] == [
                type(n) for army in turn["s"] for n in army
            ]
        # It should clash like the original engine.
        clash = rnd["clash"]
        aggressor = clash["aggressor"] - 1 if clash["aggressor"] else None
        winner = clash["winner"] - 1 if clash["winner"] else None
        assert state.clash == (clash["trigger"], aggressor, winner), (name, number)
        assert list(state.attacking) == clash["attacking"]
        assert state.turn == clash["turn"] == rnd["result"]["turnsPlayed"]
        assert state.results[-1] == SEAT_OF[rnd["result"]["outcome"]]
        assert [view_of(rnd["result"]["player1"]), view_of(rnd["result"]["player2"])] == [
            {"producers": p, "soldiers": s, "launchedAttack": a}
            for (p, s), a in zip(state.armies, state.attacking, strict=True)
        ]
        frame = GAME.frame(state)
        assert frame["clash"] == {
            "trigger": clash["trigger"],
            "aggressor": aggressor,
            "winner": winner,
        }
        assert frame["round"] == number
        previous_views = rnd["views"]
    # It should send each seat the last round's view in the final request.
    assert GAME.to_move(state) == ()
    for seat in (0, 1):
        final = json.loads(wire(GAME.farewell(state, seat, ctx[seat])))
        assert final == {"calls": [["onRoundEnd", previous_views[seat]]], "final": True}
        if bots[seat] is not None:
            assert bots[seat](final, rngs[seat]) is None
    # It should give the recorded match result.
    result = data["result"]
    totals = result["roundTotals"]
    frame = GAME.frame(state)
    assert frame["wins"] == [totals["player1Wins"], totals["player2Wins"]]
    assert frame["draws"] == totals["draws"]
    outcome = GAME.outcome(state)
    if result["outcomeDecidedByRandomChance"]:
        assert outcome.reason == "coin_flip"
    else:
        assert outcome.reason == "rounds"
        expected = {"PLAYER 1": (1.0, 0.0), "PLAYER 2": (0.0, 1.0), "DRAW": (0.5, 0.5)}
        assert outcome.scores == expected[result["outcome"]]


@pytest.fixture(scope="module")
def units():
    return load(DRONES / "unit-vectors.json")


def test_it_matches_the_clash_table(units):
    assert len(units["clash"]) == 300
    flags = {"auto": (False, False), "p1": (True, False), "p2": (False, True), "both": (True, True)}
    for case in units["clash"]:
        attack = flags[case["attack"]]
        state = state_with(case["before"], turn=9)
        state = play_turn(
            state,
            {"newProducers": 0, "newSoldiers": 0, "launchAttack": attack[0]},
            {"newProducers": 0, "newSoldiers": 0, "launchAttack": attack[1]},
        )
        assert state.results == (SEAT_OF[case["outcome"]],), case
        assert GAME.farewell(state, 0, CTX) is None  # round 1 of 10
        views = [GAME.observation(state, seat, CTX)["calls"][0][1]["outcome"] for seat in (0, 1)]
        assert views == case["views"], case


def test_it_matches_the_production_table(units):
    assert len(units["production"]) == 97
    for case in units["production"]:
        state = play_turn(state_with([case["before"], (1, 0)]), case["action"], None)
        assert list(state.armies[0]) == case["after"], case
        assert [type(n) for n in state.armies[0]] == [type(n) for n in case["after"]], case


def test_it_matches_the_launch_attack_values(units):
    for case in units["launchAttackValues"]:
        state = state_with([(1, 2), (1, 0)], turn=1)
        state = play_turn(state, {"launchAttack": case["launchAttack"]}, None)
        attacked = state.clash is not None
        if case["launchAttack"] == [1]:
            # It should not count [1] as an attack (the original's == true did): §11.1.
            assert case["treatedAsAttack"] is True and attacked is False
            continue
        assert attacked is case["treatedAsAttack"], case
        if attacked:
            assert state.results == (SEAT_OF[case["outcome"]],)


def test_it_validates_the_javascript_type_quirks(units):
    # It should count every non-number as 0 (the original coerced and even concatenated).
    assert units["typeQuirks"]
    for case in units["typeQuirks"]:
        state = play_turn(state_with([case["before"], (1, 0)]), case["action"], None)
        assert list(state.armies[0]) == case["before"], case
        assert all(isinstance(n, int) for n in state.armies[0])


def test_it_reports_and_applies_the_defender_bonus_config(units):
    case = units["defenderBonusConfig"]
    bonus = case["config"]["defenderBonus"]
    state = GAME.initial_state(seed=0, options={"defenderBonus": bonus})
    # It should report the option as the original did...
    assert GAME.observation(state, 0, CTX)["calls"][1][1] == case["roundRulesSentToBots"]
    # ...and apply it, which the original did not (2 > 0 + 3 fails): §11.3.
    state = state_with(case["before"], options={"defenderBonus": bonus})
    state = play_turn(state, {"launchAttack": True}, None)
    assert case["outcome"] == "PLAYER 1"
    assert state.results == (1,)
    # It should reproduce the original with the default bonus of 1.
    state = play_turn(state_with(case["before"]), {"launchAttack": True}, None)
    assert state.results == (SEAT_OF[case["outcome"]],)
