"""Tic-tac-toe rules, wire format and built-in bots (games/tictactoe/README.md)."""

import json
import random

import pytest

from games import Context, IllegalAction, get_game, rng_for
from games.testing import check_game, play_builtin
from games.tictactoe import KEYS, best_moves

GAME = get_game("tictactoe")


def play_moves(moves):
    state = GAME.initial_state(seed=0)
    for key in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.apply(state, {seat: GAME.parse_action(state, seat, {"play": key})})
    return state


def test_it_starts_empty_with_x_to_move():
    state = GAME.initial_state(seed=123)
    assert GAME.to_move(state) == (0,)
    assert GAME.frame(state) == {
        "board": ["...", "...", "..."],
        "to_move": 0,
        "last": None,
        "line": None,
        "moves": 0,
    }
    assert GAME.outcome(state) is None


def test_it_validates_options():
    assert GAME.resolve_options(None) == {"move_timeout_ms": 10000, "ignore_http_status": False}
    assert GAME.resolve_options({"move_timeout_ms": 5})["move_timeout_ms"] == 5
    for bad in (
        {"nope": 1},
        {"move_timeout_ms": 0},
        {"move_timeout_ms": 600_001},
        {"move_timeout_ms": True},
        {"move_timeout_ms": "10"},
        {"ignore_http_status": 1},
    ):
        with pytest.raises(ValueError):
            GAME.initial_state(seed=0, options=bad)


def test_it_plays_worked_example_1_a_win():
    state = play_moves(["1-1", "0-1", "0-0", "2-2", "2-0", "1-0"])
    # It should not end before the seventh move.
    assert GAME.outcome(state) is None
    state = play_moves(["1-1", "0-1", "0-0", "2-2", "2-0", "1-0", "0-2"])
    outcome = GAME.outcome(state)
    assert outcome.scores == (1.0, 0.0) and outcome.reason == "three_in_a_row"
    assert GAME.to_move(state) == ()
    frame = GAME.frame(state)
    assert frame["board"] == ["010", "10.", "0.1"]
    assert frame["line"] == [[0, 2], [1, 1], [2, 0]]
    assert frame["last"] == [0, 2] and frame["to_move"] is None and frame["moves"] == 7


def test_it_plays_worked_example_2_a_draw():
    # X O X / X O O / O X X, last move by X
    state = play_moves(["0-0", "0-1", "0-2", "1-1", "1-0", "1-2", "2-1", "2-0", "2-2"])
    assert GAME.frame(state)["board"] == ["010", "011", "100"]
    outcome = GAME.outcome(state)
    assert outcome.scores == (0.5, 0.5) and outcome.reason == "board_full"


def test_it_writes_the_byte_exact_messages_of_the_spec():
    state = play_moves(["1-1"])
    ctx = Context(match_id="42")
    body = GAME.encode_message(GAME.observation(state, 1, ctx))
    assert body == (
        '{"game-id":"42","action":"play-turn","game":"tictactoe","players":2,"board":'
        '{"0-0":"","0-1":"","0-2":"","1-0":"","1-1":"X","1-2":"","2-0":"","2-1":"","2-2":""},'
        '"you":"O","player-index":1}'
    )
    assert len(body.encode()) == 187
    init = GAME.encode_message(GAME.greeting(state, 1, ctx))
    assert (
        init
        == '{"game-id":"42","action":"init","game":"tictactoe","players":2,"board":"","player-index":1}'
    )
    assert len(init.encode()) == 91


def test_it_escapes_like_php():
    # It should write "/" as "\/" and non-ASCII as lowercase \uXXXX escapes.
    text = GAME.encode_message({"game-id": "a/é"})
    assert text == '{"game-id":"a\\/\\u00e9"}'


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ({}, "no_play"),
        ({"play": None}, "no_play"),
        ({"move": "0-1"}, "no_play"),
        ([], "no_play"),
        ("1-1", "no_play"),
        (None, "no_play"),
        ({"play": " 1-1"}, "bad_cell"),
        ({"play": "1+1"}, "bad_cell"),
        ({"play": "3-3"}, "bad_cell"),
        ({"play": 4}, "bad_cell"),
        ({"play": ["1-1"]}, "bad_cell"),
        ({"play": "1-1 "}, "bad_cell"),
        ({"play": "0-0"}, "occupied"),
    ],
)
def test_it_rejects_bad_replies_with_the_spec_codes(raw, code):
    state = play_moves(["0-0"])
    with pytest.raises(IllegalAction) as exc:
        GAME.parse_action(state, 1, raw)
    assert exc.value.code == code


def test_it_accepts_extra_keys():
    state = GAME.initial_state(seed=0)
    assert GAME.parse_action(state, 0, {"play": "2-2", "name": "x", "comment": "hi"}) == "2-2"


def test_it_never_mutates_its_input():
    state = play_moves(["0-0", "1-1"])
    before = GAME.to_json(state)
    GAME.apply(state, {0: "2-2"})
    assert GAME.to_json(state) == before
    assert GAME.from_json(json.loads(json.dumps(before))) == state


def test_it_has_a_default_action_for_generic_tools():
    state = play_moves(["0-0", "0-1"])
    assert GAME.default_action(state, 0) == "0-2"


def test_it_passes_check_game_with_500_seeds():
    report = check_game(GAME, range(500))
    assert report.games == 500
    assert set(report.reasons) == {"three_in_a_row", "board_full"}


def test_it_builds_a_random_bot_that_picks_empty_cells():
    bot = GAME.builtin_bots["random"]()
    rng = random.Random(1)
    assert bot({"action": "init"}, rng) == {"name": "random"}
    board = {k: "X" for k in KEYS}
    board["2-1"] = ""
    msg = {"action": "play-turn", "board": board, "you": "O"}
    for _ in range(10):
        assert bot(msg, rng) == {"play": "2-1"}
    # It should answer 0-0 when no cell is empty.
    board["2-1"] = "O"
    assert bot(msg, rng) == {"play": "0-0"}


def test_it_makes_perfect_take_a_win_and_block_a_loss():
    # me = X at 0-0, 0-1: the win at 0-2 (score 9) beats everything.
    cells = (0, 0, -1, 1, 1, -1, -1, -1, -1)
    assert best_moves(cells) == ["0-2"]
    # the opponent threatens 1-2; I have no win: block it.
    cells = (0, -1, -1, 1, 1, -1, 0, -1, -1)
    assert best_moves(cells) == ["1-2"]


def test_it_makes_perfect_break_ties_with_the_rng_in_canonical_order():
    bot = GAME.builtin_bots["perfect"]()
    empty = {"action": "play-turn", "board": {k: "" for k in KEYS}, "you": "X"}
    # On an empty board every cell draws (score 0): the rng picks among all nine.
    seen = {bot(empty, rng_for(s, 0, "t"))["play"] for s in range(200)}
    assert seen == set(KEYS)


@pytest.mark.parametrize("perfect_seat", [0, 1])
def test_it_makes_perfect_never_lose_to_random_in_200_games(perfect_seat):
    names = ["random", "random"]
    names[perfect_seat] = "perfect"
    results = {"win": 0, "draw": 0, "loss": 0}
    for seed in range(200):
        _states, _history, outcome = play_builtin(GAME, seed, names)
        score = outcome.scores[perfect_seat]
        results["win" if score == 1.0 else "draw" if score == 0.5 else "loss"] += 1
    assert results["loss"] == 0, results
    # It should also actually win most games against a random player.
    assert results["win"] > 150, results


def test_it_makes_perfect_draw_against_itself():
    for seed in range(20):
        _s, _h, outcome = play_builtin(GAME, seed, ["perfect", "perfect"])
        assert outcome.reason == "board_full"


def test_it_lists_the_legal_moves_of_the_seat_to_move():
    state = play_moves(["1-1", "0-0"])
    assert GAME.legal_actions(state, 0) == ["0-1", "0-2", "1-0", "1-2", "2-0", "2-1", "2-2"]
    # It should list nothing for the seat that is not to move, or once the game is over.
    assert GAME.legal_actions(state, 1) == []
    over = play_moves(["1-1", "0-1", "0-0", "2-2", "2-0", "1-0", "0-2"])
    assert GAME.legal_actions(over, 0) == [] and GAME.legal_actions(over, 1) == []
