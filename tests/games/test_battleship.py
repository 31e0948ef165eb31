"""Battleship rules, wire format, fleets and built-in bots (games/battleship/README.md)."""

import pytest

from games import Context, IllegalAction, get_game
from games.battleship import parse_fleet
from games.testing import check_game, play_builtin

GAME = get_game("battleship")
SMALL = {"width": 6, "height": 7, "ships": [0, 1, 2, 1, 1, 0]}
CTX = Context(match_id="4002", names=("Amiral/&eacute;", "fleet"))
# seat 0: a 2 (0,0-1,0), two 3s, a 4, a 5 on a 6x7 grid; seat 1 the same, ends swapped
FLEET0 = ["0,0-1,0", "3,0-3,2", "0,2-2,2", "0,4-3,4", "0,6-4,6"]
FLEET1 = ["1,0-0,0", "3,2-3,0", "2,2-0,2", "3,4-0,4", "4,6-0,6"]


def placed(options=SMALL, fleets=(FLEET0, FLEET1)):
    state = GAME.initial_state(seed=0, options=options)
    for seat, boats in enumerate(fleets):
        state = GAME.accept_greeting(state, seat, {"name": "x", "boats": boats})
    return state


def fire(state, *targets):
    for target in targets:
        (seat,) = GAME.to_move(state)
        state = GAME.apply(state, {seat: GAME.parse_action(state, seat, {"play": target})})
    return state


def test_it_validates_options():
    # It should default to a 10x10 grid and refuse impossible fleets and unknown keys.
    options = GAME.resolve_options(None)
    assert options["max_shots"] == 200 and options["ships"] == [0, 1, 2, 1, 1, 0]
    assert GAME.resolve_options(SMALL)["max_shots"] == 84
    for bad in (
        {"nope": 1},
        {"width": 0},
        {"height": 101},
        {"ships": [0, 0, 0, 0, 0, 0]},
        {"ships": [0, 0, 0, 0, 0, 11]},
        {"ships": [1, 2, 3]},
        {"width": 4, "height": 4, "ships": [0, 0, 0, 0, 1, 0]},  # longer than both sides
        {"width": 4, "height": 4, "ships": [0, 0, 3, 0, 0, 0]},  # 9 cells > 8
        {"max_shots": 0},
        {"ships": [True, 0, 0, 0, 0, 0]},
    ):
        with pytest.raises(ValueError):
            GAME.resolve_options(bad)


def test_it_sends_the_original_messages_byte_for_byte():
    # It should send init with a numeric game-id and string sizes, and play-turn with
    # "Battleship", no players key and both strike lists.
    state = placed()
    assert GAME.encode_message(GAME.greeting(state, 1, CTX)) == (
        '{"game-id":4002,"game":"battleship","action":"init","players":2,"player-index":1,'
        '"board":{"opponent":"Amiral\\/&eacute;","width":"6","height":"7","ship1":"0",'
        '"ship2":"1","ship3":"2","ship4":"1","ship5":"1","ship6":"0"}}'
    )
    state = fire(state, "0,0", "3,3")
    assert GAME.encode_message(GAME.observation(state, 0, CTX)) == (
        '{"game":"Battleship","game-id":4002,"action":"play-turn","player-index":0,'
        '"board":{"opponent":"fleet","width":"6","height":"7","ship1":"0","ship2":"1",'
        '"ship3":"2","ship4":"1","ship5":"1","ship6":"0",'
        '"your_strikes":[{"target":"0,0","result":"hit"}],'
        '"his_strikes":[{"target":"3,3","result":""}]}}'
    )


@pytest.mark.parametrize(
    ("boats", "why"),
    [
        (["0,0-1,0", "0,0-1,0", "0,2-2,2", "0,4-3,4", "0,6-4,6"], "overlap"),
        (["0,0-1,1", "3,0-3,2", "0,2-2,2", "0,4-3,4", "0,6-4,6"], "diagonal"),
        (["0,0-1,0", "3,0-3,2", "0,2-2,2", "0,4-3,4", "2,6-6,6"], "outside"),
        (["0,0-1,0", "3,0-3,2", "0,2-2,2", "0,4-3,4"], "a ship missing"),
        (["0,0-1,0", "3,0-3,2", "0,2-2,2", "0,4-3,4", "0,6-4,6", "1,1-1,1"], "an extra ship"),
        (["0,0-1,0", "3,0-3,2", "0,2-2,2", "0,4-3,4", "0,5-0,5"], "a wrong length"),
        (["00,0-1,0", "3,0-3,2", "0,2-2,2", "0,4-3,4", "0,6-4,6"], "not canonical"),
        (["0,0", "3,0-3,2", "0,2-2,2", "0,4-3,4", "0,6-4,6"], "one end"),
        ([" 0,0-1,0", "3,0-3,2", "0,2-2,2", "0,4-3,4", "0,6-4,6"], "a space"),
        ([[0, 0, 1, 0], "3,0-3,2", "0,2-2,2", "0,4-3,4", "0,6-4,6"], "not a string"),
        ("0,0-1,0,3,0-3,2", "a string"),
        ([], "no ships"),
    ],
)
def test_it_refuses_a_bad_fleet(boats, why):
    # It should refuse every fleet the original refused (bad_fleet).
    state = GAME.initial_state(seed=0, options=SMALL)
    with pytest.raises(IllegalAction) as info:
        GAME.accept_greeting(state, 0, {"name": why, "boats": boats})
    assert info.value.code == "bad_fleet"


def test_it_refuses_a_greeting_without_boats():
    # It should refuse a reply without boats, null boats, or not an object.
    state = GAME.initial_state(seed=0, options=SMALL)
    for reply in ({"name": "x"}, {"boats": None}, [], "x", 3):
        with pytest.raises(IllegalAction):
            GAME.accept_greeting(state, 0, reply)


def test_it_accepts_a_fleet_in_any_order_and_ends_lost_at_setup():
    # It should take ships and ends in any order, an object's values too, extra parts ignored.
    fleet = parse_fleet({"a": "1,0-0,0", "b": "3,2,9-3,0"}, 4, 7, [0, 1, 1, 0, 0, 0])
    assert fleet == (("0,0", "1,0"), ("3,0", "3,1", "3,2"))
    state = GAME.greeting_lost(GAME.initial_state(seed=0, options=SMALL), 1)
    assert GAME.to_move(state) == ()
    assert GAME.outcome(state).to_json() == {"scores": [1.0, 0.0], "reason": "bad_fleet"}


def test_it_hits_sinks_and_wins_by_comparing_strings():
    # It should report hit, hit and sunk, and the winning shot as "hit sunk and win";
    # "00,0" is inside the grid but never hits; a sunk ship's cells are misses afterwards.
    state = fire(placed(), "00,0", "3,3", "0,0", "3,3", "1,0", "3,3", "0,0")
    shots = GAME.frame(state)["strikes"][0]
    assert [s["result"] for s in shots] == ["", "hit", "hit and sunk", ""]
    assert GAME.frame(state)["sunk"] == [0, 1]
    targets = ["3,0", "3,1", "3,2", "0,2", "1,2", "2,2", "0,4", "1,4", "2,4", "3,4"]
    targets += ["0,6", "1,6", "2,6", "3,6"]
    for target in targets:  # seat 1 misses at 5,5 each time; seat 0 sinks the rest
        state = fire(state, "5,5", target)
    state = fire(state, "5,5", "4,6")
    assert GAME.frame(state)["strikes"][0][-1] == {"target": "4,6", "result": "hit sunk and win"}
    assert GAME.outcome(state).to_json() == {"scores": [1.0, 0.0], "reason": "fleet_sunk"}


@pytest.mark.parametrize(
    ("play", "code"),
    [
        (None, "no_play"),
        ("6,0", "bad_target"),
        ("0,7", "bad_target"),
        ("0,0\n", "bad_target"),
        (" 0,0", "bad_target"),
        ("0, 0", "bad_target"),
        ("-1,0", "bad_target"),
        ("1", "bad_target"),
        (5, "bad_target"),
        (["0,0"], "bad_target"),
    ],
)
def test_it_refuses_a_bad_target(play, code):
    # It should refuse what the original's regex or bounds refused.
    state = placed()
    with pytest.raises(IllegalAction) as info:
        GAME.parse_action(state, 0, {"play": play})
    assert info.value.code == code


def test_it_alternates_strictly_and_draws_at_the_shot_limit():
    # It should give seat 0 a shot whenever both fired equally, and draw after max_shots each.
    state = placed({**SMALL, "max_shots": 2})
    assert GAME.to_move(state) == (0,)
    state = fire(state, "0,0")
    assert GAME.to_move(state) == (1,)
    state = fire(state, "0,0", "0,1")
    assert GAME.to_move(state) == (1,)
    state = fire(state, "1,1")
    assert GAME.outcome(state).to_json() == {"scores": [0.5, 0.5], "reason": "shot_limit"}


def test_it_passes_the_engine_contract():
    # It should pass the conformance harness (greetings placing the fleets).
    assert check_game(GAME, range(3)).games == 3
    assert check_game(GAME, range(3), options=SMALL).games == 3


@pytest.mark.slow
def test_it_has_a_hunter_that_beats_random():
    # It should win >= 95% of 200 games against random on the default grid, from each seat.
    rows = []
    for seat in (0, 1):
        names = ["random", "random"]
        names[seat] = "hunter"
        wins = sum(play_builtin(GAME, seed, names)[2].scores[seat] == 1.0 for seed in range(200))
        rows.append((seat, wins))
    print("\nhunter vs random (200 games a seat, 10x10)\nseat  wins  rate")
    for seat, wins in rows:
        print(f"{seat:>4}  {wins:>4}  {wins / 200:.1%}")
    assert all(wins >= 190 for _seat, wins in rows)
