"""Forking a replay (issue #17 item 4): ``Game.rebuild`` gives, from (seed, options, seats,
the stored actions of turns 1..N), exactly the state a match had after turn N, for every
game; a game that cannot be forked faithfully refuses with its reason.

The actions go through a JSON round trip as the ``Turn`` rows store them (per-seat lists,
read back as ``{seat: action}`` for the seats that moved).
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import Context, all_games, get_game, rng_for
from games.testing import bot_reply, play_builtin

#: smaller games where the defaults play long (the property is the same; the suite stays lean)
SHORT = {"tron": {"width": 24, "height": 24}, "gconway": {"maxGameIterations": 120}}
FORKABLE = [g for g in all_games() if g.fork_refusal is None]
REFUSED = [g for g in all_games() if g.fork_refusal is not None]


def stored(history: list[dict], seats: int) -> list[dict]:
    """The actions as a match stores and reads them back (JSON, per-seat lists)."""
    rows = []
    for actions in history:
        per_seat = [actions.get(s) for s in range(seats)]
        rows.append((sorted(actions), json.loads(json.dumps(per_seat))))
    return [{str(s): per_seat[s] for s in moved} for moved, per_seat in rows]


def assert_same(game, rebuilt, expected, where: str) -> None:
    assert game.to_json(rebuilt) == game.to_json(expected), where
    assert game.frame(rebuilt) == game.frame(expected), where
    assert game.to_move(rebuilt) == game.to_move(expected), where


def play_seats(game, seed: int, seats: int, max_turns: int = 2000):
    """A match of ``seats`` seats between the game's first built-in bot: (states, history)."""
    options = game.options_for_seats(game.resolve_options(None), seats)
    state = game.initial_state(seed=seed, options=options)
    name = sorted(game.builtin_bots)[0]
    bots = [game.builtin_bots[name]() for _ in range(seats)]
    rngs = [rng_for(seed, 0, f"fork:{s}") for s in range(seats)]
    ctx = Context(match_id=str(seed))
    states, history = [state], []
    for _ in range(max_turns):
        if not (to_move := game.to_move(state)):
            break
        actions = {
            s: game.parse_action(
                state, s, bot_reply(bots[s], game, game.observation(state, s, ctx), rngs[s])
            )
            for s in to_move
        }
        history.append(actions)
        state = game.apply(state, actions)
        states.append(state)
    return options, states, history


@pytest.mark.parametrize("game", FORKABLE, ids=lambda g: g.slug)
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), data=st.data())
def test_it_rebuilds_the_state_after_any_turn(game, seed, data):
    # It should rebuild, from the seed, the options and the stored actions of turns 1..N,
    # the state (its JSON, its frame, the seats to move) the match had after turn N, for
    # the start (N = 0), the end and turns drawn in between.
    names = sorted(game.builtin_bots)
    bots = [data.draw(st.sampled_from(names)) for _ in range(game.num_players)]
    # as the runner does: the options of a match of this many seats
    options = game.options_for_seats(game.resolve_options(SHORT.get(game.slug)), game.num_players)
    states, history, _outcome = play_builtin(game, seed, bots, options=options)
    actions = stored(history, game.num_players)
    picks = {0, len(history), data.draw(st.integers(0, len(history)))}
    for n in sorted(picks):
        rebuilt = game.rebuild(
            seed=seed, options=options, seats=game.num_players, actions=actions[:n]
        )
        assert_same(game, rebuilt, states[n], f"{game.slug} seed {seed} turn {n}")


def test_it_rebuilds_a_tron_match_of_five_seats_keeping_every_seat():
    # It should rebuild a five-snake tron match at every turn, the dead snakes still seated.
    game = get_game("tron")
    options, states, history = play_seats(game, seed=11, seats=5)
    actions = stored(history, 5)
    assert len(history) > 3
    for n in range(len(history) + 1):
        rebuilt = game.rebuild(seed=11, options=options, seats=5, actions=actions[:n])
        assert_same(game, rebuilt, states[n], f"tron turn {n}")
        assert game.options_of(rebuilt)["players"] == 5


def test_it_refuses_actions_after_the_end():
    # It should refuse a turn stored after the game was over (not a history of this game).
    game = get_game("tictactoe")
    _states, history, _ = play_builtin(game, 3, ["random", "random"])
    actions = stored(history, 2)
    with pytest.raises(ValueError, match=f"turn {len(actions) + 1} comes after the end"):
        game.rebuild(seed=3, options=None, seats=2, actions=[*actions, actions[-1]])


@pytest.mark.parametrize("game", REFUSED, ids=lambda g: g.slug)
def test_it_refuses_a_game_that_cannot_be_forked_and_says_why(game):
    # It should refuse to rebuild a game whose stored turns do not determine the state
    # (battleship: the fleets are the bots' hidden greeting replies), with the reason.
    assert "cannot be forked" in game.fork_refusal
    with pytest.raises(ValueError, match="cannot be forked"):
        game.rebuild(seed=1, options=None, seats=game.num_players, actions=[])


def test_it_knows_which_games_refuse():
    # It should fork every game but battleship (decided per game from its spec).
    assert [g.slug for g in REFUSED] == ["battleship"]
    assert len(FORKABLE) == len(all_games()) - 1


def test_it_tells_a_drones_fork_the_match_and_the_round_it_joins():
    # It should open a fork's first requests with onMatchStart and onRoundStart (the turns
    # its round has left): the forked bots never saw the match start. Once a turn is played,
    # the requests are the usual ones.
    game = get_game("drones")
    options, states, history = play_seats(game, 7, 2)
    turns = dict(options)["turns"]
    mid = next(i for i, s in enumerate(states) if s.clash is None and s.turn >= 2)
    fork = game.rebuild(seed=7, options=None, seats=2, actions=stored(history[:mid], 2))
    assert fork == states[mid]  # the same position: only what the bots are told differs
    ctx = Context(match_id="7")
    calls = game.observation(fork, 0, ctx)["calls"]
    assert [c[0] for c in calls] == ["onMatchStart", "onRoundStart", "playTurn"], calls
    assert calls[1][1]["turns"] == turns - states[mid].turn
    assert [c[0] for c in game.observation(states[mid], 0, ctx)["calls"]] == ["playTurn"]
    later = game.apply(fork, {0: history[mid][0], 1: history[mid][1]})
    assert [c[0] for c in game.observation(later, 0, ctx)["calls"]] in (
        ["playTurn"],
        ["onRoundEnd", "onRoundStart", "playTurn"],
    )
    # A fork from the turn that ended a round starts the next round whole.
    end = next(i for i, s in enumerate(states) if s.clash is not None and game.to_move(s))
    fork = game.rebuild(seed=7, options=None, seats=2, actions=stored(history[:end], 2))
    calls = game.observation(fork, 1, ctx)["calls"]
    assert [c[0] for c in calls] == ["onMatchStart", "onRoundEnd", "onRoundStart", "playTurn"]
    assert calls[2][1]["turns"] == turns
