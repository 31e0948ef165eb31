"""Connect four rules, wire format and built-in bots (games/connectfour/README.md)."""

import pytest

from games import Context, IllegalAction, get_game
from games.connectfour import php_column, solve
from games.testing import check_game, play_builtin

GAME = get_game("connectfour")
CTX = Context(match_id="3007", names=("red/é", "blue"))


def play_columns(cols):
    state = GAME.initial_state(seed=0)
    for col in cols:
        (seat,) = GAME.to_move(state)
        state = GAME.apply(state, {seat: GAME.parse_action(state, seat, {"play": col})})
    return state


def test_it_sends_the_original_messages_byte_for_byte():
    # It should send init with a numeric game-id and play-turn with a string one, the
    # opponent's name, the board with row 0 at the bottom, PHP's escaping.
    state = play_columns([3])
    assert GAME.encode_message(GAME.greeting(state, 0, CTX)) == (
        '{"game-id":3007,"action":"init","game":"connectfour","players":2,"board":"",'
        '"player-index":0}'
    )
    row0 = '["","","","X","","",""]'
    empty = '["","","","","","",""]'
    assert GAME.encode_message(GAME.observation(state, 1, CTX)) == (
        '{"game-id":"3007","action":"play-turn","game":"connectfour","players":2,'
        '"opponent":"red\\/\\u00e9","you":"O","board":[' + ",".join([row0] + [empty] * 5) + "],"
        '"player-index":1}'
    )


@pytest.mark.parametrize(
    ("play", "column"),
    [
        (0, 0),
        (6, 6),
        ("3", 3),
        ("0", 0),
        (4.0, 4),
        (2.5, 2),
        (-0.5, 0),
        (6.9, 6),
        (True, 1),
        (False, 0),
    ],
)
def test_it_casts_a_column_as_php_does(play, column):
    # It should accept what PHP's array-key casting turns into a column 0-6.
    state = GAME.initial_state(seed=0)
    assert GAME.parse_action(state, 0, {"play": play, "extra": 1}) == column


@pytest.mark.parametrize(
    "play", [" 3", "3.0", "03", "3 ", "-0", "", None, 7, -1, "a", [3], {"c": 3}, 1e30, -7.5]
)
def test_it_refuses_what_php_would_not_find(play):
    # It should refuse every value that names no column of the board.
    state = GAME.initial_state(seed=0)
    with pytest.raises(IllegalAction) as info:
        GAME.parse_action(state, 0, {"play": play})
    assert info.value.code == "bad_column"
    assert php_column("3") == 3 and php_column("03") is None


def test_it_refuses_no_play_and_a_full_column():
    # It should answer no_play without the key and full for a full column.
    state = GAME.initial_state(seed=0)
    for raw in ({}, [], "3", 3):
        with pytest.raises(IllegalAction) as info:
            GAME.parse_action(state, 0, raw)
        assert info.value.code == "no_play"
    state = play_columns([0, 0, 0, 0, 0, 0])
    with pytest.raises(IllegalAction) as info:
        GAME.parse_action(state, 0, {"play": "0"})
    assert info.value.code == "full"


def test_it_drops_discs_and_finds_four_in_a_row_every_way():
    # It should win horizontally, vertically and on both diagonals, with the line drawn.
    state = play_columns([0, 0, 1, 1, 2, 2, 3])
    assert GAME.outcome(state).to_json() == {"scores": [1.0, 0.0], "reason": "four_in_a_row"}
    assert sorted(map(tuple, GAME.frame(state)["line"])) == [(0, 0), (0, 1), (0, 2), (0, 3)]
    state = play_columns([0, 1, 0, 1, 0, 1, 6, 1])
    assert GAME.outcome(state).scores == (0.0, 1.0)
    assert sorted(map(tuple, GAME.frame(state)["line"])) == [(0, 1), (1, 1), (2, 1), (3, 1)]
    state = play_columns([0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3])  # diagonal /
    assert sorted(map(tuple, GAME.frame(state)["line"])) == [(0, 0), (1, 1), (2, 2), (3, 3)]
    state = play_columns([6, 5, 5, 4, 4, 3, 4, 3, 3, 0, 3])  # diagonal \
    assert GAME.outcome(state).reason == "four_in_a_row"
    assert sorted(map(tuple, GAME.frame(state)["line"])) == [(0, 6), (1, 5), (2, 4), (3, 3)]
    frame = GAME.frame(state)
    assert frame["board"][-1] == "1..1110" and frame["last"] == [3, 3]


def test_it_draws_when_the_top_row_fills_without_a_line():
    # It should end as board_full when the last move does not win (a recorded random game).
    cols = [3, 3, 0, 2, 5, 4, 5, 6, 4, 2, 2, 3, 3, 5, 5, 2, 2, 4, 3, 3, 1]
    cols += [1, 2, 1, 5, 5, 0, 4, 0, 4, 4, 6, 6, 6, 6, 0, 1, 0, 6, 0, 1, 1]
    state = play_columns(cols[:41])
    assert GAME.outcome(state) is None and GAME.legal_actions(state, 1) == [1]
    state = play_columns(cols)
    assert GAME.outcome(state).to_json() == {"scores": [0.5, 0.5], "reason": "board_full"}
    assert GAME.to_move(state) == ()


def test_it_passes_the_engine_contract():
    # It should pass the conformance harness.
    assert check_game(GAME, range(4)).games == 4


@pytest.mark.slow
def test_it_has_a_solver_that_beats_random_from_either_seat():
    # It should win >= 99% of 200 games against random from each seat, and answer a legal
    # column in a middle game (its time a move, this machine's speed: bench/moves.py).
    rows = []
    for seat in (0, 1):
        names = ["random", "random"]
        names[seat] = "solver"
        wins = 0
        for seed in range(200):
            _states, _history, outcome = play_builtin(GAME, seed, names)
            wins += outcome.scores[seat] == 1.0
        rows.append((seat, wins))
    print("\nsolver vs random (200 games a seat)\nseat  wins  rate")
    for seat, wins in rows:
        print(f"{seat:>4}  {wins:>4}  {wins / 200:.1%}")
    assert all(wins >= 198 for _seat, wins in rows)
    grid = [[-1] * 7 for _ in range(6)]
    for col in (3, 3, 2, 4, 4, 2, 1, 5):  # a middle game: the search is widest
        row = next(r for r in range(6) if grid[r][col] == -1)
        grid[row][col] = len([1 for r in grid for v in r if v != -1]) % 2
        move = solve(grid)
        assert 0 <= move < 7 and grid[5][move] == -1, (move, grid)
