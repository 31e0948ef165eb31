"""A built-in bot's time a move, measured here and printed, never judged by the tests.

The games' tests check what the built-in bots play (legal moves, who wins); how long a move
takes on this machine is measured here instead (a test bounding it failed on a fresh, busy
machine: 98 ms of CPU against a 50 ms bound). Rows:

- tron ``survivor``: this thread's CPU time a move over the games its strength test plays
  (two-snake games against ``random``, then four-snake games against three), mean and worst;
- gconway: each built-in bot's first answer on the default board with a full budget
  (``startingCells`` 15), wall time (the first-move bank is the platform's bound);
- connectfour ``solver``: its moves of a middle game (the widest search), wall time, beside
  its own time budget (``SOLVER_BUDGET_S``, which its test holds it to).

    python bench/moves.py             # the tests' games: 200 + 100 tron games
    python bench/moves.py --quick     # smoke mode (CI): a few games
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games import Context, get_game, rng_for
from games.connectfour import solve
from games.connectfour.engine import SOLVER_BUDGET_S


def tron_survivor(duels: int, fours: int) -> list[float]:
    """CPU seconds of each ``survivor`` move in ``duels`` two-snake and ``fours`` four-snake
    games against ``random`` (the seeds of tests/games/test_tron.py)."""
    game, ctx = get_game("tron"), Context(match_id="7")
    timed: list[float] = []
    games = [(["survivor", "random"], seed) for seed in range(duels)]
    games += [(["survivor", "random", "random", "random"], 1000 + s) for s in range(fours)]
    for names, seed in games:
        opts = game.options_for_seats(game.resolve_options({}), len(names))
        state = game.initial_state(seed=seed, options=opts)
        bots = [game.builtin_bots[n]() for n in names]
        rngs = [rng_for(seed, 0, f"seat{s}") for s in range(len(names))]
        while game.to_move(state):
            acts = {}
            for s in game.to_move(state):
                message = game.observation(state, s, ctx)
                started = time.thread_time()
                reply = bots[s](message, rngs[s])
                if names[s] == "survivor":
                    timed.append(time.thread_time() - started)
                acts[s] = game.parse_action(state, s, reply)
            state = game.apply(state, acts)
    return timed


def gconway_first_answers() -> dict[str, float]:
    """Wall seconds of each gconway built-in's first answer with ``startingCells`` 15."""
    game = get_game("gconway")
    state = game.initial_state(seed=0, options={"startingCells": 15})
    message = game.observation(state, 0, Context())
    found = {}
    for name in game.builtin_bots:
        started = time.perf_counter()
        game.builtin_bots[name]()(message, rng_for(0, 0))
        found[name] = time.perf_counter() - started
    return found


def connectfour_solver_moves() -> list[float]:
    """Wall seconds of the solver's moves along a middle game (tests/games/test_connectfour.py)."""
    grid = [[-1] * 7 for _ in range(6)]
    times = []
    for col in (3, 3, 2, 4, 4, 2, 1, 5):
        row = next(r for r in range(6) if grid[r][col] == -1)
        grid[row][col] = len([1 for r in grid for v in r if v != -1]) % 2
        started = time.perf_counter()
        solve(grid)
        times.append(time.perf_counter() - started)
    return times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a few games (smoke mode)")
    args = parser.parse_args(argv)
    duels, fours = (4, 2) if args.quick else (200, 100)
    print(f"# {platform.python_implementation()} {platform.python_version()}, {sys.platform}")
    print(f"{'game':<12} {'what':<48} {'moves':>6} {'mean ms':>8} {'worst ms':>9}")
    tron = tron_survivor(duels, fours)
    label = f"survivor, {duels} duels + {fours} four-snake (CPU)"
    print(
        f"{'tron':<12} {label:<48} {len(tron):>6} "
        f"{sum(tron) / len(tron) * 1000:>8.2f} {max(tron) * 1000:>9.2f}"
    )
    for name, took in gconway_first_answers().items():
        label = f"{name}, first answer, startingCells 15 (wall)"
        print(f"{'gconway':<12} {label:<48} {1:>6} {took * 1000:>8.2f} {took * 1000:>9.2f}")
    solver = connectfour_solver_moves()
    label = f"solver, middle game (wall; budget {SOLVER_BUDGET_S * 1000:.0f} ms)"
    print(
        f"{'connectfour':<12} {label:<48} {len(solver):>6} "
        f"{sum(solver) / len(solver) * 1000:>8.2f} {max(solver) * 1000:>9.2f}"
    )


if __name__ == "__main__":
    main()
