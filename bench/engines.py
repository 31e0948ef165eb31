"""Engine speed through the engine contract, side by side with anchors, in one run.

Rows per game:

- ``random playouts``: where the engine can list legal actions (``legal_actions``), full
  games of uniformly random legal moves: ``to_move`` → ``legal_actions`` → ``apply`` until
  over (what OpenSpiel's and kaggle-environments' random games measure);
- ``built-in bots``: full games played by the built-in bots exactly as the runner drives an
  engine (``observation`` → bot → ``parse_action`` → ``apply``), without JSON or transports;
- for gconway, ``transitions``: ``apply`` alone on a recorded 500-turn game, steps per second;
- for tron, ``laps``: on recorded games of 2 and 13 ``survivor`` snakes, ``apply`` alone, and
  the whole engine work of a lap as the runner does it (every live snake's message built and
  encoded, ``apply``, the frame), laps per second; and the mean bytes of a lap's frame.

With ``--spectator`` (tron only), the bytes a spectator receives per lap over a real
websocket: the platform served (``manage.py serve``, embedded runner), a match of 2 and one
of 13 ``survivor`` snakes queued a few seconds ahead, one client on ``ws/matches/<id>/`` from
before the start to the ``end`` message; the total bytes of the text messages it received
(and of the ``turn`` messages alone) divided by the laps played.

Anchors (measured in the same run when installed: ``pip install -e '.[bench]'``):
kaggle-environments' ``tictactoe`` (random agents), OpenSpiel's C++ ``tic_tac_toe``,
``connect_four`` and ``battleship`` (its default: 10x10, ships of 2-5) through pyspiel (random
playouts), and a two-colour 24x24 torus life step in NumPy and in SciPy
(``convolve2d``), against which gconway's pure-Python transition is compared.

    python bench/engines.py                 # every game, 3 s per row
    python bench/engines.py tiles gconway   # some games
    python bench/engines.py --seconds 0.05  # smoke mode (CI)
    python bench/engines.py tron --spectator  # and a spectator's bytes per lap
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games import Context, all_games, get_game
from games.base import rng_for
from games.testing import play_builtin

# Which built-in bots play each game here (the cheapest "random" player where there is one).
PLAYERS = {
    "tictactoe": ("random", "random"),
    "gconway": ("random", "random"),
    "tiles": ("random", "random"),
    "drones": ("randomonium", "randomonium"),
    "connectfour": ("random", "random"),
    "battleship": ("random", "random"),
    "tron": ("random", "random"),
}
# OpenSpiel's game of the same rules, timed as random playouts beside ours (C++ via pyspiel)
SPIEL = {
    "tictactoe": "tic_tac_toe",
    "connectfour": "connect_four",
    "battleship": "battleship",
}
GOALS = {"tictactoe": "goal >= 30,000 games/s", "gconway": "goal >= 5,000 transitions/s"}


def timed(fn, seconds: float) -> tuple[int, float]:
    """Call ``fn(i)`` until ``seconds`` pass (at least once): (calls, elapsed)."""
    calls = 0
    started = time.perf_counter()
    deadline = started + seconds
    while True:
        fn(calls)
        calls += 1
        if time.perf_counter() >= deadline:
            return calls, time.perf_counter() - started


def bots_game(game, seed: int) -> int:
    names = PLAYERS.get(game.slug) or (sorted(game.builtin_bots)[0],) * game.num_players
    state = game.initial_state(seed=seed)
    bots = [game.builtin_bots[n]() for n in names]
    rng = rng_for(seed, 0, "bench")
    ctx = Context(match_id=str(seed))
    for seat, bot in enumerate(bots):
        greeting = game.greeting(state, seat, ctx)
        if greeting is not None:
            reply = bot(greeting, rng)
            if game.judges_greeting:  # the reply places something (a fleet)
                state = game.accept_greeting(state, seat, reply)
    turns = 0
    while seats := game.to_move(state):
        state = game.apply(
            state,
            {
                s: game.parse_action(state, s, bots[s](game.observation(state, s, ctx), rng))
                for s in seats
            },
        )
        turns += 1
    return turns


def random_playout(game, seed: int) -> int:
    rng = random.Random(seed)
    state = game.initial_state(seed=seed)
    turns = 0
    while seats := game.to_move(state):
        state = game.apply(state, {s: rng.choice(game.legal_actions(state, s)) for s in seats})
        turns += 1
    return turns


def ours(game, seconds: float) -> list[tuple[str, str, float, str]]:
    rows = []
    state = game.initial_state(seed=0)
    if game.legal_actions(state, game.to_move(state)[0]) is not None:
        calls, elapsed = timed(lambda i: random_playout(game, i), seconds)
        rows.append((game.slug, "random playouts (ours)", calls / elapsed, "games/s"))
    calls, elapsed = timed(lambda i: bots_game(game, i), seconds)
    rows.append(
        (
            game.slug,
            f"built-in bots {' v '.join(PLAYERS.get(game.slug, ('?',)))}",
            calls / elapsed,
            "games/s",
        )
    )
    if game.slug == "drones":  # a match is `rounds` rounds
        rounds = game.default_options["rounds"]
        rows.append(
            (
                game.slug,
                f"rounds ({rounds} per match, same games)",
                calls * rounds / elapsed,
                "rounds/s",
            )
        )
    if game.slug == "tron":
        rows += tron_laps(game, seconds)
    if game.slug == "gconway":
        _states, history, _outcome = play_builtin(game, 1, ["grower", "random"])
        start = game.initial_state(seed=1)

        def replay(_i):
            state = start
            for actions in history:
                state = game.apply(state, actions)

        calls, elapsed = timed(replay, seconds)
        rows.append(
            (
                game.slug,
                "transitions, grower v random (ours)",
                calls * len(history) / elapsed,
                "steps/s",
            )
        )
    return rows


def tron_laps(game, seconds: float) -> list[tuple[str, str, float, str]]:
    rows = []
    for n in (2, 13):
        options = game.options_for_seats(game.resolve_options({}), n)
        start = game.initial_state(seed=1, options=options)
        bots = [game.builtin_bots["survivor"]() for _ in range(n)]
        rng = rng_for(1, 0, "bench")
        ctx = Context(match_id="1")
        state, history = start, []
        while seats := game.to_move(state):
            actions = {
                s: game.parse_action(state, s, bots[s](game.observation(state, s, ctx), rng))
                for s in seats
            }
            history.append(actions)
            state = game.apply(state, actions)

        def replay(_i, start=start, history=history):
            state = start
            for actions in history:
                state = game.apply(state, actions)

        def lap_work(_i, start=start, history=history, ctx=ctx):
            state = start
            for actions in history:
                for s in game.to_move(state):
                    game.encode_message(game.observation(state, s, ctx))
                state = game.apply(state, actions)
                game.frame(state)

        laps = len(history)
        calls, elapsed = timed(replay, seconds)
        rows.append(
            (
                game.slug,
                f"laps, {n} snakes, apply ({laps}-lap game)",
                calls * laps / elapsed,
                "laps/s",
            )
        )
        calls, elapsed = timed(lap_work, seconds)
        rows.append(
            (game.slug, f"laps, {n} snakes, messages+apply+frame", calls * laps / elapsed, "laps/s")
        )
        frames, state = [], start
        for actions in history:
            state = game.apply(state, actions)
            frames.append(len(game.encode_message(game.frame(state))))
        rows.append((game.slug, f"frame bytes per lap, {n} snakes", sum(frames) / laps, "bytes"))
    return rows


def spectator_bytes() -> list[tuple[str, str, float, str]]:
    """A spectator's websocket bytes per lap for a live match of 2 and of 13 snakes."""
    import asyncio
    import json
    import os
    import subprocess
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import PRODUCTION_ENV, serving

    rows = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as data:
        env = {**os.environ, "ARENA_DATA_DIR": data, "LOG_LEVEL": "WARNING", **PRODUCTION_ENV}
        env["DJANGO_SETTINGS_MODULE"] = "competition.settings"
        with serving(env) as port:
            for n in (2, 13):
                queued = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve().parents[1] / "manage.py")]
                    + ["enqueue", "tron", *["builtin:survivor"] * n, "--seed", "1"]
                    + ["--start-in", "3"],
                    env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                match_id = json.loads(queued.stdout)[0]
                total, turns, laps = asyncio.run(_spectate(port, match_id))
                rows.append(
                    ("tron", f"spectator ws bytes per lap, {n} snakes", total / laps, "bytes")
                )
                rows.append(
                    ("tron", f"  of which turn messages ({laps} laps)", turns / laps, "bytes")
                )
    return rows


async def _spectate(port: int, match_id: int) -> tuple[int, int, int]:
    """(bytes of every text message, bytes of the turn messages, laps) one spectator got."""
    import json

    import aiohttp

    total = turns = 0
    url = f"ws://127.0.0.1:{port}/ws/matches/{match_id}/"
    origin = {"Origin": f"http://127.0.0.1:{port}"}
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, headers=origin, max_msg_size=0) as ws:
            async for msg in ws:
                size = len(msg.data.encode())
                total += size
                data = json.loads(msg.data)
                if data["type"] == "turn":
                    turns += size
                if data["type"] == "end":
                    return total, turns, data["match"]["turn_count"]
    raise SystemExit(f"match {match_id}: the stream closed before its end")


def anchors(slug: str, seconds: float) -> list[tuple[str, str, float, str]]:
    rows: list[tuple[str, str, float, str]] = []
    if slug in SPIEL:
        _spiel_anchor(slug, SPIEL[slug], seconds, rows)
    if slug == "tictactoe":
        _kaggle_anchor(slug, seconds, rows)
    if slug == "gconway":
        _gconway_anchors(slug, seconds, rows)
    return rows


def _spiel_anchor(slug: str, name: str, seconds: float, rows: list) -> None:
    try:
        import pyspiel
    except ImportError:
        rows.append((slug, f"OpenSpiel {name} (pyspiel)", float("nan"), "not installed"))
        return
    sp = pyspiel.load_game(name)
    rng = random.Random(0)

    def spiel(_i):
        state = sp.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))

    calls, elapsed = timed(spiel, seconds)
    rows.append((slug, f"OpenSpiel {name} (pyspiel, C++)", calls / elapsed, "games/s"))


def _kaggle_anchor(slug: str, seconds: float, rows: list) -> None:
    try:
        from kaggle_environments import make
    except ImportError:
        rows.append((slug, "kaggle-environments tictactoe", float("nan"), "not installed"))
        return

    def kaggle(_i):
        env = make("tictactoe", debug=False)
        env.run(["random", "random"])

    calls, elapsed = timed(kaggle, seconds)
    rows.append((slug, "kaggle-environments tictactoe", calls / elapsed, "games/s"))


def _gconway_anchors(slug: str, seconds: float, rows: list) -> None:
    try:
        import numpy as np
    except ImportError:
        rows.append((slug, "NumPy two-colour step", float("nan"), "not installed"))
    else:
        rng = np.random.default_rng(0)
        board = rng.integers(0, 3, size=(24, 24), dtype=np.int8)

        def counts(mask):
            total = np.zeros(mask.shape, dtype=np.int8)
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if dr or dc:
                        total += np.roll(np.roll(mask, dr, 0), dc, 1)
            return total

        def np_step(_i, board=board):
            a, b = (board == 1).astype(np.int8), (board == 2).astype(np.int8)
            na, nb = counts(a), counts(b)
            diff = na - nb
            dead = board == 0
            out = np.zeros_like(board)
            out[dead & (diff == 3)] = 1
            out[dead & (diff == -3)] = 2
            out[(board == 1) & ((diff == 2) | (diff == 3))] = 1
            out[(board == 2) & ((-diff == 2) | (-diff == 3))] = 2
            return out

        calls, elapsed = timed(np_step, seconds)
        rows.append((slug, "NumPy two-colour step (np.roll)", calls / elapsed, "steps/s"))
        try:
            from scipy.signal import convolve2d
        except ImportError:
            rows.append((slug, "SciPy two-colour step", float("nan"), "not installed"))
        else:
            kernel = np.ones((3, 3), dtype=np.int8)
            kernel[1, 1] = 0

            def sp_step(_i, board=board):
                a, b = (board == 1).astype(np.int8), (board == 2).astype(np.int8)
                diff = convolve2d(a, kernel, mode="same", boundary="wrap") - convolve2d(
                    b, kernel, mode="same", boundary="wrap"
                )
                dead = board == 0
                out = np.zeros_like(board)
                out[dead & (diff == 3)] = 1
                out[dead & (diff == -3)] = 2
                out[(board == 1) & ((diff == 2) | (diff == 3))] = 1
                out[(board == 2) & ((-diff == 2) | (-diff == 3))] = 2
                return out

            calls, elapsed = timed(sp_step, seconds)
            rows.append((slug, "SciPy two-colour step (convolve2d)", calls / elapsed, "steps/s"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("games", nargs="*", help="game slugs (default: all)")
    parser.add_argument("--seconds", type=float, default=3.0, help="budget per row")
    parser.add_argument(
        "--spectator", action="store_true", help="tron: a spectator's websocket bytes per lap"
    )
    args = parser.parse_args(argv)
    games = [get_game(s) for s in args.games] if args.games else all_games()
    print(
        f"# engines: {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {args.seconds:g} s per row"
    )
    print(f"{'game':<10} {'what':<40} {'rate':>12}  unit")
    for game in games:
        rows = ours(game, args.seconds) + anchors(game.slug, args.seconds)
        if args.spectator and game.slug == "tron":
            rows += spectator_bytes()
        for slug, what, rate, unit in rows:
            shown = f"{rate:>12,.0f}" if rate == rate else f"{'-':>12}"
            print(f"{slug:<10} {what:<40} {shown}  {unit}")
        if game.slug in GOALS:
            print(f"{'':<10} {GOALS[game.slug]}")


if __name__ == "__main__":
    main()
