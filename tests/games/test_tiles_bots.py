"""Ajax Tiles built-in bots: the sample AI ports against the original's recorded answers
(games/tiles/vectors), the query-string rule, and greedy's scoring (games/tiles/README.md §9)."""

import json
import random

import pytest

from games.testing import play_builtin
from games.tiles import (
    GAME,
    SAMPLE_STRATEGIES,
    one_ply_greedy_choices,
    sample_ai_choice,
    sample_ai_move,
    strategy_for_query,
)
from tests.conftest import game_vectors
from tests.games.conftest import model_click, wire_board

VECTORS = game_vectors("tiles") / "sample-ai-vectors.json"


def load_vectors() -> list[dict]:
    # A missing file must fail the test, never skip it.
    data = json.loads(VECTORS.read_text())
    assert data["format"] == "ajaxtiles-sample-ai-vectors/1"
    assert data["vectors"]
    return data["vectors"]


def ask(name: str, board: list[list[str]], color: str, rng: random.Random) -> dict:
    """A built-in bot's reply to the observation of §5 for this board."""
    message = {"color": color, "board": json.dumps(board, separators=(",", ":"))}
    return GAME.builtin_bots[name]()(message, rng)


# -- the original sample AI, recorded ------------------------------------------------


def test_it_answers_every_sample_ai_vector_like_the_original():
    vectors = load_vectors()
    deterministic = 0
    for vector in vectors:
        board, color = vector["board"], vector["color"]
        strategy = strategy_for_query(vector["query"])
        reply = ask(strategy, board, color, random.Random(vector["seed"]))
        # It should answer exactly {"x": int, "y": int}, as the original's body.
        assert list(reply) == ["x", "y"] and all(type(v) is int for v in reply.values()), vector[
            "id"
        ]
        assert (vector["status"], vector["content_type"]) == (200, "application/json")
        if vector["deterministic"]:
            deterministic += 1
            # It should give the recorded answer, byte for byte.
            assert reply == vector["move"], vector["id"]
            assert json.dumps(reply, separators=(",", ":")) == vector["body"], vector["id"]
        else:
            # It should answer an empty tile, and only where the original fell back to
            # its random strategy (PHP's rand() cannot be reproduced).
            assert board[reply["x"]][reply["y"]] == "", vector["id"]
            assert sample_ai_choice(board, color, strategy) is None, vector["id"]
    assert deterministic >= len(vectors) // 3


@pytest.mark.parametrize(
    ("query", "strategy"),
    [
        ("", "random"),
        ("?", "random"),
        ("?random", "random"),
        ("?expand", "expand"),
        ("?fearful", "fearful"),
        ("?contain", "contain"),
        ("?foo", "random"),
        ("?foo&contain", "contain"),
        ("?expand&contain", "expand"),
        ("?contain&fearful", "contain"),
        ("?CONTAIN", "random"),
        ("?Contain", "random"),
        ("?fearful=0", "fearful"),
        ("?contain=", "contain"),
        ("?a=contain", "random"),
        ("?x=1&&expand=no", "expand"),
        ("?random&contain", "random"),
        ("contain", "contain"),
        ("?%63ontain", "contain"),
        ("?+contain", "contain"),
        ("?contain[]=1", "contain"),
        ("?contain[", "random"),
        ("?contain#expand", "contain"),
        ("?containx", "random"),
        ("?con tain", "random"),
    ],
)
def test_it_picks_the_strategy_from_the_query_like_index_php(query, strategy):
    # It should take the first $_GET key that names a strategy (values ignored).
    assert strategy_for_query(query) == strategy


def reference_sample_ai(board, color, strategy):
    """index.php, line by line, without its random fallback (None where it would call
    strategy_random). Off-board reads are PHP nulls, which never match."""

    def adjacent(x, y, value):
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if dx * dy == 0:
                    u, v = x + dx, y + dy
                    if 0 <= u < 24 and 0 <= v < 12 and board[u][v] == value:
                        return (u, v)
        return None

    def expand():
        for x in range(24):
            for y in range(12):
                if board[x][y] == color and (adj := adjacent(x, y, "")):
                    return adj
        return None

    enemy = "r" if color == "b" else "b"
    if strategy == "random":
        return None
    if strategy == "expand":
        return expand()
    for x in range(24):
        for y in range(12):
            if board[x][y] == "" and adjacent(x, y, enemy) and (adj := adjacent(x, y, color)):
                return adj
    if strategy == "fearful":
        return expand()
    enemies = [(x, y) for x in range(24) for y in range(12) if board[x][y] == enemy]
    if not enemies:
        return expand()
    avgx = sum(x for x, _ in enemies) / len(enemies)
    avgy = sum(y for _, y in enemies) / len(enemies)
    best, answer = 9999, None
    for x in range(24):
        for y in range(12):
            if board[x][y] == "" and adjacent(x, y, color):
                dist = abs(x - avgx) + abs(y - avgy)
                if dist < best:
                    best, answer = dist, (x, y)
    return answer


def random_board(rng: random.Random) -> list[list[str]]:
    weights = [rng.random() ** 2 for _ in range(5)]
    values = rng.choices(["", "r", "b", "d", "n"], weights=weights, k=288)
    return [values[x * 12 : x * 12 + 12] for x in range(24)]


def test_it_ports_index_php_exactly_on_any_board():
    rng = random.Random(2011)
    boards = [random_board(rng) for _ in range(300)]
    for seed in range(6):
        states, _, _ = play_builtin(
            GAME, seed, ["contain", "greedy"] if seed % 2 else ["expand", "fearful"]
        )
        boards += [wire_board(state) for state in states[::25]]
    for board in boards:
        for color in "rb":
            for strategy in SAMPLE_STRATEGIES:
                expected = reference_sample_ai(board, color, strategy)
                # It should decide exactly as the original, or fall back where it did.
                assert sample_ai_choice(board, color, strategy) == expected
                seed = rng.randrange(2**32)
                move = sample_ai_move(board, color, strategy, random.Random(seed))
                reply = ask(strategy, board, color, random.Random(seed))
                assert reply == {"x": move[0], "y": move[1]}
                if expected is None:
                    # The random fallback: randint(0, 23), randint(0, 11) until empty.
                    fallback = random.Random(seed)
                    if any("" in column for column in board):
                        while True:
                            x, y = fallback.randint(0, 23), fallback.randint(0, 11)
                            if board[x][y] == "":
                                break
                        assert move == (x, y)
                    else:
                        assert move == (-1, -1)
                else:
                    assert move == expected


def test_it_plays_random_from_the_rng_it_is_given():
    board = GAME.observation(GAME.initial_state(seed=4), 0, None)["board"]
    bot = GAME.builtin_bots["random"]()
    replies = [bot({"color": "r", "board": board}, random.Random(seed)) for seed in range(40)]
    # It should be reproducible per rng and vary across rngs.
    assert replies == [
        bot({"color": "r", "board": board}, random.Random(seed)) for seed in range(40)
    ]
    assert len({(r["x"], r["y"]) for r in replies}) > 20
    assert all(json.loads(board)[r["x"]][r["y"]] == "" for r in replies)


def test_it_passes_when_no_tile_can_be_clicked():
    full = [["d"] * 12 for _ in range(24)]
    # It should answer the pass rather than loop forever (random fallback on a full board).
    for name in SAMPLE_STRATEGIES:
        assert ask(name, full, "r", random.Random(0)) == {"x": -1, "y": -1}
    # Greedy has no candidate without empty or own tiles.
    full[3][3] = "b"
    assert ask("greedy", full, "r", random.Random(0)) == {"x": -1, "y": -1}
    # But greedy nukes its own tile when nothing else is left.
    assert ask("greedy", full, "b", random.Random(0)) == {"x": 3, "y": 3}


def test_it_reads_any_json_form_of_the_board_and_rejects_garbage():
    state = play_builtin(GAME, 9, ["greedy", "expand"])[0][60]
    compact = GAME.observation(state, 0, None)
    spaced = {"color": "r", "board": json.dumps(json.loads(compact["board"]), indent=1)}
    for name in GAME.builtin_bots:
        bot = GAME.builtin_bots[name]()
        # It should give the same answer for the same board, however it is written.
        assert bot(compact, random.Random(1)) == bot(spaced, random.Random(1))
        # It should refuse a message that is not an Ajax Tiles observation.
        for bad in (
            {"color": "g", "board": compact["board"]},
            {"color": "r", "board": "[]"},
            {"color": "r", "board": compact["board"].replace('"d"', '"x"', 1)},
            {"color": "r", "board": compact["board"].replace('"r"', '"rr"', 1)},
            {"color": "r", "board": compact["board"].replace('""', '"."', 1)},
            {"color": "r", "board": compact["board"][:-1]},
        ):
            with pytest.raises(ValueError):
                bot(bad, random.Random(1))


# -- greedy --------------------------------------------------------------------------


def reference_greedy(board, color):
    """§9 literally: every empty and own tile, in scan order, applied to a copy."""
    seat = "rb".index(color)
    enemy = "rb"[1 - seat]
    best, ties = None, []
    for x in range(24):
        for y in range(12):
            if board[x][y] not in ("", color):
                continue
            after, _ = model_click(board, seat, x, y)
            flat = [value for column in after for value in column]
            group = 0
            if after[x][y] == color:
                seen, todo = {(x, y)}, [(x, y)]
                while todo:
                    u, v = todo.pop()
                    for p, q in ((u - 1, v), (u + 1, v), (u, v - 1), (u, v + 1)):
                        if (
                            0 <= p < 24
                            and 0 <= q < 12
                            and (p, q) not in seen
                            and after[p][q] == color
                        ):
                            seen.add((p, q))
                            todo.append((p, q))
                group = len(seen)
            score = (flat.count(color) - flat.count(enemy), group)
            if best is None or score > best:
                best, ties = score, [(x, y)]
            elif score == best:
                ties.append((x, y))
    return ties


def test_it_scores_greedy_candidates_exactly_as_the_spec_says():
    rng = random.Random(7)
    boards = [random_board(rng) for _ in range(60)]
    boards += [vector["board"] for vector in load_vectors()[::6]]
    for seed in range(4):
        states, _, _ = play_builtin(
            GAME, seed, ["greedy", "contain"] if seed % 2 else ["random", "greedy"]
        )
        boards += [wire_board(state) for state in states[::20]]
    for board in boards:
        for color in "rb":
            # It should find exactly the tied best candidates, in scan order.
            assert one_ply_greedy_choices(board, color) == reference_greedy(board, color)


def test_it_lets_greedy_choose_among_ties_with_the_rng():
    state = GAME.initial_state(seed=2)
    message = GAME.observation(state, 0, None)
    ties = one_ply_greedy_choices(json.loads(message["board"]), "r")
    # On an empty board every empty tile ties; the rng picks one, reproducibly.
    assert len(ties) == message["board"].count('""')
    bot = GAME.builtin_bots["greedy"]()
    picks = {tuple(bot(message, random.Random(seed)).values()) for seed in range(30)}
    assert len(picks) > 20 and picks <= set(ties)
    assert bot(message, random.Random(5)) == dict(
        zip("xy", random.Random(5).choice(ties), strict=True)
    )


def test_it_lets_greedy_take_the_best_capture():
    # Red's (3, 1) captures three single blue tiles, (2, 0) only one: greedy takes (3, 1).
    rows = ("...B.", "RRR.B", "...B.")
    board = [[""] * 12 for _ in range(24)]
    for y, row in enumerate(rows):
        for x, char in enumerate(row):
            board[x][y] = {".": "", "R": "r", "B": "b"}[char]
    assert one_ply_greedy_choices(board, "r") == [(3, 1)]
    assert ask("greedy", board, "r", random.Random(0)) == {"x": 3, "y": 1}


# -- greedy's territory play (GreedyBot) ----------------------------------------------


def play_greedy(seed: int, names: list[str]):
    """One engine-only game; the greedy seat's (observation, rng seed, reply) triples, its
    bot instance and the final state."""
    state = GAME.initial_state(seed=seed)
    bots = [GAME.builtin_bots[name]() for name in names]
    seat = names.index("greedy")
    asked = []
    while GAME.to_move(state):
        mover = GAME.to_move(state)[0]
        message = GAME.observation(state, mover, None)
        rng_seed = seed * 10_000 + state.move
        reply = bots[mover](message, random.Random(rng_seed))
        if mover == seat:
            asked.append((message, rng_seed, reply))
        state = GAME.apply(state, {mover: GAME.parse_action(state, mover, reply)})
    return asked, bots[seat], state


def test_it_lets_greedy_capture_exactly_as_the_one_ply_evaluation():
    boards = []
    for seed in range(4):
        states, _, _ = play_builtin(
            GAME, seed, ["greedy", "random"] if seed % 2 else ["contain", "greedy"]
        )
        boards += [wire_board(state) for state in states[::4]]
    captures = 0
    for board in boards:
        for seat, color in enumerate("rb"):
            ties = one_ply_greedy_choices(board, color)
            if not ties or model_click(board, seat, *ties[0])[1] != "capture":
                continue
            captures += 1
            # It should play one of the one-ply evaluation's best captures.
            reply = ask("greedy", board, color, random.Random(captures))
            assert (reply["x"], reply["y"]) in ties
    assert captures > 20


@pytest.mark.parametrize("opponent", SAMPLE_STRATEGIES)
def test_it_keeps_greedy_legal_and_deterministic(opponent):
    for seed, names in ((5, ["greedy", opponent]), (6, [opponent, "greedy"])):
        asked, _, _ = play_greedy(seed, names)
        again = GAME.builtin_bots["greedy"]()
        for message, rng_seed, reply in asked:
            # It should answer the same from the same board, rng and memory.
            assert again(message, random.Random(rng_seed)) == reply
            # It should click an empty or an own tile, passing only when there is none.
            board = json.loads(message["board"])
            x, y = reply["x"], reply["y"]
            if (x, y) == (-1, -1):
                assert not any(v in ("", message["color"]) for column in board for v in column)
            else:
                assert board[x][y] in ("", message["color"])


def test_it_lets_greedy_wall_in_an_enemy_that_holds_its_ground():
    # As blue against expand (which never retreats from contact), greedy should learn its
    # stance, paint wall centres and nuke each on its next move, and win.
    asked, bot, state = play_greedy(1, ["expand", "greedy"])
    assert bot.stance == "holds"
    clicks = [(reply["x"], reply["y"]) for _, _, reply in asked]
    boards = [json.loads(message["board"]) for message, _, _ in asked]
    walls = [
        i
        for i in range(len(clicks) - 1)
        if boards[i][clicks[i][0]][clicks[i][1]] == "" and clicks[i + 1] == clicks[i]
    ]
    assert len(walls) >= 3
    assert GAME.outcome(state).scores == (0.0, 1.0)


@pytest.mark.parametrize("opponent", ["fearful", "contain"])
def test_it_lets_greedy_press_an_enemy_that_retreats(opponent):
    # Fearful and contain nuke their own tile when a battle is on offer: greedy should
    # notice, stop walling and win.
    _, bot, state = play_greedy(1, [opponent, "greedy"])
    assert bot.stance == "retreats"
    assert GAME.outcome(state).scores == (0.0, 1.0)
