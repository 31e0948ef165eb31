"""Tron: options, lap rules, edges, result, frames and the built-in bots (games/tron/README.md).

The recordings of the original replay over real HTTP in
``tests/competition/matches/test_tron_vectors.py``.
"""

import json

import pytest

from games import Context, IllegalAction, Policy, get_game, rng_for
from games.testing import check_game
from games.tron.engine import CELL_TAKEN, FAULT, OUT_OF_GRID, SAME_TARGET

GAME = get_game("tron")
CTX = Context(match_id="7")


def new(start, **options):
    opts = GAME.options_for_seats(GAME.resolve_options({"start": start, **options}), len(start))
    return GAME.initial_state(seed=0, options=opts)


def lap(state, **moves):
    """Apply one lap; ``s0="x+"`` moves seat 0 (``None``: a fault)."""
    return GAME.apply(state, {int(k[1:]): v for k, v in moves.items()})


# -- options ------------------------------------------------------------------------------


def test_it_declares_two_to_thirteen_seats():
    # It should take 2..13 seats and refuse 1 or 14; other games keep exactly two.
    assert GAME.seats == (2, 13)
    assert get_game("tictactoe").seats == (2, 2)
    opts = GAME.resolve_options({})
    assert GAME.options_for_seats(opts, 13)["players"] == 13
    for n in (1, 14):
        with pytest.raises(ValueError, match="2 to 13 seats"):
            GAME.options_for_seats(opts, n)
    with pytest.raises(ValueError, match="takes 2 seats"):
        get_game("tictactoe").options_for_seats({}, 3)


@pytest.mark.parametrize(
    "options",
    [
        {"width": 9},
        {"height": 201},
        {"width": True},
        {"edges": "torus"},
        {"start": [[1, 1]]},
        {"start": [[1, 1], [1, 1]]},
        {"start": [[1, 1], [100, 5]]},
        {"start": [[1, 1], [-1, 5]]},
        {"start": [[1, 1], [2]]},
        {"start": [[1, 1], {"x": 2, "y": 2}]},
        {"start": [[1, 1], [2.0, 2]]},
        {"start": [[1, 1], [2, 2]], "players": 3},
        {"players": 14},
        {"move_timeout_ms": 0},
        {"ignore_http_status": "yes"},
        {"speed": 2},
    ],
)
def test_it_refuses_bad_options(options):
    # It should refuse every option out of its type or bounds, and unknown ones.
    with pytest.raises(ValueError):
        GAME.resolve_options(options)


def test_it_refuses_a_start_list_of_another_length_than_the_seats():
    # It should refuse three start cells for a match of two snakes.
    opts = GAME.resolve_options({"start": [[1, 1], [2, 2], [3, 3]]})
    with pytest.raises(ValueError, match="3 cells for 2 players"):
        GAME.options_for_seats(opts, 2)


def test_it_draws_distinct_seeded_starts_inside_the_margins():
    # It should draw 13 distinct cells with 1 <= x, y <= 99, the same for the same seed.
    opts = GAME.options_for_seats(GAME.resolve_options({}), 13)
    a = GAME.initial_state(seed=5, options=opts)
    b = GAME.initial_state(seed=5, options=opts)
    c = GAME.initial_state(seed=6, options=opts)
    heads = [t[0] for t in a.trails]
    assert len(set(heads)) == 13
    assert all(1 <= x <= 99 and 1 <= y <= 99 for x, y in heads)
    assert a == b and [t[0] for t in c.trails] != heads
    small = GAME.initial_state(
        seed=1, options=GAME.options_for_seats(GAME.resolve_options({"width": 10}), 13)
    )
    assert all(1 <= t[0][0] <= 9 for t in small.trails)


def test_it_sets_the_policy_from_the_options():
    # It should never forfeit on a fault (the snake dies instead) and ignore statuses on request.
    policy = GAME.policy(GAME.resolve_options({"ignore_http_status": True, "move_timeout_ms": 500}))
    assert policy == Policy(
        move_timeout_ms=500, on_fault="pass", max_faults_in_a_row=None, ignore_http_status=True
    )


# -- wire -----------------------------------------------------------------------------------


def test_it_builds_the_messages_byte_for_byte():
    # It should send init with players before player-index and play-turn the other way
    # round, the board holding each trail head first and a dead snake as [].
    state = new([[5, 5], [9, 9], [1, 1]])
    init = GAME.encode_message(GAME.greeting(state, 2, CTX))
    assert init == (
        '{"game-id":"7","action":"init","game":"tron","board":"","players":3,"player-index":2}'
    )
    state = lap(state, s0="x+", s1="y-", s2="q")
    assert GAME.encode_message(GAME.observation(state, 1, CTX)) == (
        '{"game-id":"7","action":"play-turn","game":"tron","board":[[[6,5],[5,5]],'
        '[[9,8],[9,9]],[]],"player-index":1,"players":3}'
    )


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (None, "falsy"),
        (False, "falsy"),
        (0, "falsy"),
        (0.0, "falsy"),
        ("", "falsy"),
        ("0", "falsy"),
        ([], "falsy"),
        ({}, "falsy"),
        (1, "no_play"),
        ("x+", "no_play"),
        (["x+"], "no_play"),
        ({"move": "x+"}, "no_play"),
        ({"play": "X+"}, "bad_direction"),
        ({"play": "up"}, "bad_direction"),
        ({"play": 1}, "bad_direction"),
        ({"play": None}, "bad_direction"),
        ({"play": ["x+"]}, "bad_direction"),
        ({"play": " x+"}, "bad_direction"),
    ],
)
def test_it_judges_replies_as_the_original_did(reply, code):
    # It should refuse falsy values, replies without "play" and anything but the four strings.
    state = new([[5, 5], [9, 9]])
    with pytest.raises(IllegalAction) as caught:
        GAME.parse_action(state, 0, reply)
    assert caught.value.code == code


def test_it_accepts_the_four_directions_with_extra_keys():
    # It should accept exactly x+, x-, y+, y- (other keys ignored).
    state = new([[5, 5], [9, 9]])
    for d in ("x+", "x-", "y+", "y-"):
        assert GAME.parse_action(state, 0, {"name": "me", "play": d}) == d


# -- the lap --------------------------------------------------------------------------------


def test_it_moves_every_snake_at_once_and_grows_them():
    # It should move x+ to x+1 and y+ to y+1, growing each trail by its new head.
    state = lap(new([[5, 5], [9, 9]]), s0="x+", s1="y+")
    assert GAME.board(state) == [[[6, 5], [5, 5]], [[9, 10], [9, 9]]]
    assert state.lap == 1 and GAME.to_move(state) == (0, 1)


def test_it_kills_a_faulty_snake_and_frees_its_cells():
    # It should kill the faulty snake, erase its trail, and let another enter a freed cell
    # only from the next lap on.
    state = new([[5, 5], [7, 5], [20, 20]])
    state = lap(state, s0="x+", s1="y+", s2="x+")  # 0: (6,5), 1: (7,6)
    state = lap(state, s0=None, s1="x+", s2="x+")
    assert state.reasons[0] == FAULT and GAME.board(state)[0] == []
    state = lap(state, s1="y-", s2="x+")  # 1 from (8,6) to (8,5): free
    state = lap(state, s1="x-", s2="x+")  # to (7,5): was 1's own start, still its trail
    assert state.reasons[1] == CELL_TAKEN and GAME.outcome(state).reason == "last_alive"


def test_it_kills_a_snake_aiming_at_a_cell_held_at_the_start_of_the_lap():
    # It should kill a snake entering the cell another snake's tail holds, even its own.
    state = new([[5, 5], [6, 6], [30, 30]])
    state = lap(state, s0="y+", s1="x+", s2="x+")  # 0 at (5,6)
    state = lap(state, s0="x+", s1="y+", s2="x-")  # (6,6) is 1's trail; 2 back onto itself
    assert state.reasons[0] == CELL_TAKEN and state.reasons[2] == CELL_TAKEN
    assert state.died == (2, None, 2)


def test_it_kills_both_snakes_of_a_head_on_collision():
    # It should kill every survivor aiming at a cell another survivor aims at.
    state = new([[5, 5], [7, 5], [20, 20]])
    state = lap(state, s0="x+", s1="x-", s2="y+")
    assert state.reasons[:2] == (SAME_TARGET, SAME_TARGET) and state.died[2] is None
    assert GAME.outcome(state).scores == (0.0, 0.0, 2.0)


def test_it_does_not_count_a_dying_snakes_target_in_a_head_on():
    # It should let a snake live when the other snake aiming at its cell died in step 1.
    state = new([[5, 5], [7, 5], [20, 20]])
    state = lap(state, s0="x+", s1=None, s2="y+")
    assert state.died[0] is None and GAME.board(state)[0][0] == [6, 5]


def test_it_kills_a_snake_leaving_a_walled_grid():
    # It should kill a snake stepping off the grid under the default edges.
    state = lap(new([[0, 5], [9, 9]]), s0="x-", s1="x+")
    assert state.reasons[0] == OUT_OF_GRID
    assert GAME.outcome(state).reason == "last_alive"


def test_it_reproduces_the_original_off_grid_quirk():
    # It should keep an off-grid snake alive with the head [null, null], bring it back at
    # (1, 0) with x+, and count [null, null] as the cell (0, 0).
    state = new([[0, 5], [50, 50], [0, 1]], edges="original")
    state = lap(state, s0="x-", s1="x+", s2="y-")  # 0 off the grid; 2 to (0, 0)
    # 0's head [null, null] and 2's (0, 0) are one cell for the head-on check: both die
    assert state.reasons[0] == SAME_TARGET and state.reasons[2] == SAME_TARGET
    state = new([[0, 5], [50, 50], [9, 9]], edges="original")
    state = lap(state, s0="x-", s1="x+", s2="x+")
    assert GAME.board(state)[0] == [[None, None], [0, 5]]
    assert GAME.frame(state)["heads"][0] == [None, None]
    assert '"board":[[[null,null],[0,5]]' in GAME.encode_message(GAME.observation(state, 1, CTX))
    state = lap(state, s0="x+", s1="x+", s2="x+")
    assert GAME.board(state)[0] == [[1, 0], [None, None], [0, 5]]
    state = lap(state, s0="x-", s1="x+", s2="x+")  # to (0, 0): held by [null, null]
    assert state.reasons[0] == CELL_TAKEN


def test_it_kills_a_snake_stepping_off_twice_in_original_edges():
    # It should kill a snake whose second step off the grid lands on its own [null, null].
    state = new([[0, 5], [50, 50], [9, 9]], edges="original")
    state = lap(state, s0="x-", s1="x+", s2="x+")
    state = lap(state, s0="y-", s1="x+", s2="x+")
    assert state.reasons[0] == CELL_TAKEN


def test_it_ranks_by_the_lap_of_death_with_ties():
    # It should score each seat the number of seats it outlived, ties sharing a rank.
    state = new([[5, 5], [7, 5], [20, 20], [40, 40]])
    state = lap(state, s0="x+", s1="x-", s2="y+", s3="y+")  # 0 and 1 head-on in lap 1
    state = lap(state, s2=None, s3="y+")
    outcome = GAME.outcome(state)
    assert outcome.scores == (0.0, 0.0, 2.0, 3.0) and outcome.reason == "last_alive"
    assert GAME.ranks(state) == [3, 3, 2, 1]
    assert GAME.to_move(state) == ()


def test_it_ends_all_dead_when_the_last_snakes_die_together():
    # It should end with all_dead and equal scores when the last two die in the same lap.
    state = lap(new([[5, 5], [7, 5]]), s0="x+", s1="x-")
    assert GAME.outcome(state).reason == "all_dead"
    assert GAME.outcome(state).scores == (0.0, 0.0)


# -- frames and the contract ----------------------------------------------------------------


def rebuild(frames):
    """The board a viewer rebuilds from frames 0..k (heads only, deaths erase)."""
    trails = [[h] for h in frames[0]["heads"]]
    for frame in frames[1:]:
        for seat, head in enumerate(frame["heads"]):
            if not frame["alive"][seat]:
                trails[seat] = []
            elif head is not None:
                trails[seat].insert(0, head)
    return trails


def test_it_sends_only_the_new_heads_and_rebuilds_any_lap_exactly():
    # It should keep a frame small (no trails) and let the frames of laps 0..k rebuild
    # exactly the board of lap k, for every k of a 13-snake game.
    opts = GAME.options_for_seats(GAME.resolve_options({"edges": "original"}), 13)
    state = GAME.initial_state(seed=3, options=opts)
    bots = [GAME.builtin_bots["random"]() for _ in range(13)]
    rng = rng_for(3, 0, "t")
    frames = [GAME.frame(state)]
    while GAME.to_move(state):
        acts = {
            s: GAME.parse_action(state, s, bots[s](GAME.observation(state, s, CTX), rng))
            for s in GAME.to_move(state)
        }
        state = GAME.apply(state, acts)
        frames.append(GAME.frame(state))
        assert "trails" not in frames[-1] and len(json.dumps(frames[-1])) < 1200
        assert rebuild(frames) == GAME.board(state)
    assert frames[-1]["lap"] == state.lap and len(frames[-1]["deaths"]) >= 12


def test_it_passes_the_engine_contract():
    # It should pass check_game, and replay a stored state from its JSON.
    report = check_game(GAME, range(4))
    assert report.games == 4


# -- built-in bots --------------------------------------------------------------------------


def play(names, seed):
    opts = GAME.options_for_seats(GAME.resolve_options({}), len(names))
    state = GAME.initial_state(seed=seed, options=opts)
    bots = [GAME.builtin_bots[n]() for n in names]
    rngs = [rng_for(seed, 0, f"seat{s}") for s in range(len(names))]
    while GAME.to_move(state):
        acts = {}
        for s in GAME.to_move(state):
            message = GAME.observation(state, s, CTX)
            reply = bots[s](message, rngs[s])
            acts[s] = GAME.parse_action(state, s, reply)  # (a legal move, or it raises)
        state = GAME.apply(state, acts)
    return GAME.outcome(state)


def test_it_has_random_avoid_walls_and_trails():
    # It should have random pick only free cells inside the grid while there is one.
    state = new([[0, 0], [1, 0], [50, 50]])
    bot = GAME.builtin_bots["random"]()
    rng = rng_for(0, 0, "r")
    for _ in range(50):
        assert bot(GAME.observation(state, 0, CTX), rng) == {"play": "y+"}


@pytest.mark.slow
def test_it_has_survivor_outlive_random_and_win_four_snake_games():
    # It should have survivor outlive random in >= 95% of 200 two-snake games and win >= 60%
    # of 100 four-snake games against three randoms, every move legal (its time a move, this
    # machine's speed, is measured by bench/moves.py).
    duels = sum(play(["survivor", "random"], seed).scores[0] == 1.0 for seed in range(200))
    fours = sum(
        play(["survivor", "random", "random", "random"], 1000 + seed).scores[0] == 3.0
        for seed in range(100)
    )
    print(f"survivor: outlived random in {duels}/200 duels, won {fours}/100 four-snake games")
    assert duels >= 190 and fours >= 60
