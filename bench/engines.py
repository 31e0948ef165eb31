"""Engine speed: full games per second through the engine contract, per game.

Each game is played by its built-in bots exactly as the runner drives an engine
(observation → bot → parse_action → apply, until to_move is empty), without JSON
encoding or transports, for a fixed wall-clock budget.

    python bench/engines.py                 # every game, 3 s each
    python bench/engines.py tiles gconway   # some games
    python bench/engines.py --seconds 0.2   # smoke mode (CI)
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games import Context, all_games, get_game
from games.base import rng_for

# Which built-in bots play each game here (the cheapest "random" player where there is one).
PLAYERS = {"tictactoe": ("random", "random"), "gconway": ("random", "random"),
           "tiles": ("random", "random"), "drones": ("randomonium", "randomonium")}


def play_one(game, seed: int, names) -> tuple[int, int]:
    """(turns, transitions) of one full game."""
    state = game.initial_state(seed=seed)
    bots = [game.builtin_bots[n]() for n in names]
    rngs = [rng_for(seed, 0, f"bench{s}") for s in range(game.num_players)]
    ctx = Context(match_id=str(seed))
    for seat, bot in enumerate(bots):
        greeting = game.greeting(state, seat, ctx)
        if greeting is not None:
            bot(greeting, rngs[seat])
    turns = 0
    while seats := game.to_move(state):
        actions = {s: game.parse_action(state, s, bots[s](game.observation(state, s, ctx), rngs[s])) for s in seats}
        state = game.apply(state, actions)
        turns += 1
    assert game.outcome(state) is not None
    return turns, turns


def bench(game, seconds: float) -> dict:
    names = PLAYERS.get(game.slug) or (sorted(game.builtin_bots)[0],) * game.num_players
    games = turns = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline or games == 0:
        t, _ = play_one(game, games, names)
        games += 1
        turns += t
    elapsed = time.perf_counter() - started
    return {"game": game.slug, "bots": " v ".join(names), "games": games, "turns": turns,
            "games_s": games / elapsed, "turns_s": turns / elapsed}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("games", nargs="*", help="game slugs (default: all)")
    parser.add_argument("--seconds", type=float, default=3.0, help="budget per game")
    args = parser.parse_args(argv)
    games = [get_game(s) for s in args.games] if args.games else all_games()
    print(f"# engines: {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, {args.seconds:g} s per game")
    print(f"{'game':<10} {'bots':<26} {'games':>8} {'games/s':>10} {'turns/s':>12}")
    for game in games:
        row = bench(game, args.seconds)
        print(f"{row['game']:<10} {row['bots']:<26} {row['games']:>8} {row['games_s']:>10.1f} {row['turns_s']:>12.0f}")


if __name__ == "__main__":
    main()
