"""Ajax Tiles: options, rules, wire format and engine contract (games/tiles/README.md).

Bots and the sample-AI vectors are in ``test_tiles_bots.py``; greedy's acceptance series in
``test_tiles_greedy.py``.
"""

import ast
import json
import random
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import Context, IllegalAction, Outcome, Policy, get_game, rng_for
from games.testing import check_game, play_builtin
from games.tiles import GAME, TilesState, board_string, board_text, click
from tests.games.conftest import model_click, near, wire_board

CTX = Context()
VALUE = {".": "", "R": "r", "B": "b", "d": "d", "n": "n"}
LETTER = {"": ".", "r": "R", "b": "B", "d": "d", "n": "n"}

# Spec §5: the board value of the byte-exact example (925 bytes) and the request body.
BOARD_TEXT_925 = '[["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","d","","","","","","","",""],["","","d","n","d","","","","","","",""],["","","","d","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","r","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","b","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","d","","",""],["","","","","","","","d","n","d","",""],["","","","","","","","","d","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""],["","","","","","","","","","","",""]]'
BODY_2765 = "color=b&board=%5B%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22d%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22d%22%2C%22n%22%2C%22d%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22d%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22r%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22b%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22d%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22d%22%2C%22n%22%2C%22d%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22d%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%2C%5B%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%2C%22%22%5D%5D"


def board_of(*rows: str) -> list[list[str]]:
    """A 24x12 board[x][y] from diagram rows (top = y 0; `.` empty, R, B, d, n)."""
    board = [[""] * 12 for _ in range(24)]
    for y, row in enumerate(rows):
        for x, char in enumerate(row):
            board[x][y] = VALUE[char]
    return board


def rows_of(state, width: int, height: int) -> list[str]:
    """The top-left corner of a state's board as diagram rows."""
    board = GAME.to_json(state)["board"]  # 12 rows of 24 characters
    return [
        "".join(LETTER[board[y][x].replace(".", "")] for x in range(width)) for y in range(height)
    ]


def start(*rows: str, **options) -> TilesState:
    return GAME.initial_state(seed=0, options={"board": board_of(*rows), **options})


def play(state: TilesState, *clicks) -> TilesState:
    """Apply clicks (x, y) for whoever is to move, checking each through parse_action."""
    for x, y in clicks:
        (seat,) = GAME.to_move(state)
        action = GAME.parse_action(state, seat, {"x": x, "y": y})
        state = GAME.apply(state, {seat: action})
    return state


def red_touches_blue(board: list[list[str]]) -> bool:
    for x in range(24):
        for y in range(12):
            if board[x][y] == "r":
                for u, v in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                    if 0 <= u < 24 and 0 <= v < 12 and board[u][v] == "b":
                        return True
    return False


# -- registration, options and policy ------------------------------------------------


def test_it_is_registered_as_a_form_game():
    # It should be found by slug and describe itself.
    assert get_game("tiles") is GAME
    assert (GAME.slug, GAME.title, GAME.num_players, GAME.wire) == (
        "tiles",
        "Ajax Tiles",
        2,
        "form",
    )
    assert sorted(GAME.builtin_bots) == ["contain", "expand", "fearful", "greedy", "random"]
    assert GAME.describe()["default_options"] == GAME.default_options


def test_it_imports_only_the_standard_library_and_games():
    # It should keep the engine pure (STYLE.md: games/ imports no third-party package).
    source = Path(__file__).resolve().parents[2] / "games" / "tiles" / "engine.py"
    tree = ast.parse(source.read_text())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add(node.module.split(".")[0])
    assert modules <= {
        "__future__",
        "collections",
        "dataclasses",
        "games",
        "json",
        "random",
        "typing",
        "urllib",
    }
    assert "time" not in modules


def test_it_resolves_the_default_options():
    # It should use the spec's canonical configuration.
    assert GAME.resolve_options(None) == {
        "craters_min": 3,
        "craters_max": 8,
        "mirror": True,
        "board": None,
        "move_timeout_ms": 30000,
        "max_moves": 1152,
        "max_passes_in_a_row": 8,
    }
    # It should accept every documented value, including the null guards.
    options = {
        "craters_min": 0,
        "craters_max": 144,
        "mirror": False,
        "move_timeout_ms": 600_000,
        "max_moves": None,
        "max_passes_in_a_row": None,
    }
    assert GAME.resolve_options(options) == {**GAME.default_options, **options}
    assert GAME.resolve_options({"craters_min": 5, "craters_max": 5})["craters_max"] == 5
    assert GAME.resolve_options({"move_timeout_ms": 1, "max_moves": 1, "max_passes_in_a_row": 1})


@pytest.mark.parametrize(
    "bad",
    [
        {"nope": 1},
        {"on_fault": "pass"},
        {"craters_min": -1},
        {"craters_min": 145},
        {"craters_min": True},
        {"craters_min": 3.0},
        {"craters_min": "3"},
        {"craters_max": 145},
        {"craters_min": 6, "craters_max": 5},
        {"craters_max": 2},
        {"craters_max": None},
        {"mirror": 1},
        {"mirror": "true"},
        {"mirror": None},
        {"move_timeout_ms": 0},
        {"move_timeout_ms": 600_001},
        {"move_timeout_ms": True},
        {"move_timeout_ms": None},
        {"max_moves": 0},
        {"max_moves": False},
        {"max_moves": 10.5},
        {"max_passes_in_a_row": 0},
        {"max_passes_in_a_row": True},
        {"max_passes_in_a_row": "8"},
    ],
)
def test_it_rejects_bad_options(bad):
    # It should raise ValueError for unknown keys, wrong types and values out of range.
    with pytest.raises(ValueError):
        GAME.resolve_options(bad)
    with pytest.raises(ValueError):
        GAME.initial_state(seed=0, options=bad)


def test_it_validates_the_board_option():
    good = board_of("R.B", ".dn")
    # It should take a valid board as the starting position and return it as lists.
    assert GAME.resolve_options({"board": good})["board"] == good
    assert wire_board(GAME.initial_state(seed=1, options={"board": good})) == good
    tuples = tuple(tuple(column) for column in good)
    assert GAME.resolve_options({"board": tuples})["board"] == good
    bad_boards = [
        "not a board",
        good[:23],
        [*good, good[0]],
        [column[:11] for column in good],
        [[*column, ""] for column in good],
        [["x"] * 12] + good[1:],
        [["R"] + column[1:] for column in good],
        [[None] * 12] + good[1:],
        [[0] * 12] + good[1:],
        [[[""]] * 12] + good[1:],
        ["." * 12] + good[1:],
        board_of("RB"),  # red next to blue, horizontally
        board_of("R", "B"),  # and vertically
        board_of("...", "..R", "..B"),
    ]
    # It should reject a wrong shape, a wrong value, or red touching blue.
    for bad in bad_boards:
        with pytest.raises(ValueError):
            GAME.resolve_options({"board": bad})
    # It should still validate the crater options when a board is given.
    with pytest.raises(ValueError):
        GAME.resolve_options({"board": good, "craters_min": 9, "craters_max": 8})
    # Diagonal contact is allowed.
    assert GAME.resolve_options({"board": board_of("R.", ".B")})


def test_it_forfeits_on_any_fault_with_the_configured_timeout():
    # It should hand the runner a forfeit policy with the move timeout of the options.
    assert GAME.policy(GAME.resolve_options(None)) == Policy(
        move_timeout_ms=30000, on_fault="forfeit"
    )
    policy = GAME.policy(GAME.resolve_options({"move_timeout_ms": 1234}))
    assert (policy.move_timeout_ms, policy.on_fault) == (1234, "forfeit")


# -- the initial board ---------------------------------------------------------------


def expected_craters(seed: int, lo: int, hi: int, mirror: bool) -> list[list[str]]:
    """Spec §4.1, step by step."""
    rng = rng_for(seed, 0, "craters")
    k = rng.randint(lo, hi)
    centres = []
    for _ in range(k):
        x = rng.randrange(24)
        y = rng.randrange(12)
        centres.append((x, y))
        if mirror:
            centres.append((23 - x, 11 - y))
    board = [[""] * 12 for _ in range(24)]
    for x, y in centres:
        for u, v in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
            if 0 <= u < 24 and 0 <= v < 12 and (u, v) not in centres:
                board[u][v] = "d"
    for x, y in centres:
        board[x][y] = "n"
    return board


def test_it_generates_the_seeded_crater_layout_of_the_spec():
    # It should follow §4.1 exactly: rng_for(seed, 0, "craters"), k draws, mirrored centres.
    for seed in range(150):
        state = GAME.initial_state(seed=seed)
        assert wire_board(state) == expected_craters(seed, 3, 8, True), seed
    for seed, lo, hi, mirror in [
        (7, 0, 0, True),
        (8, 1, 1, False),
        (9, 144, 144, False),
        (10, 20, 40, True),
    ]:
        options = {"craters_min": lo, "craters_max": hi, "mirror": mirror}
        state = GAME.initial_state(seed=seed, options=options)
        assert wire_board(state) == expected_craters(seed, lo, hi, mirror)


def test_it_starts_point_symmetric_with_nobody_owning_a_tile():
    counts = set()
    for seed in range(200):
        state = GAME.initial_state(seed=seed)
        board = wire_board(state)
        flat = [board[x][y] for x in range(24) for y in range(12)]
        # It should be point-symmetric: (x, y) mirrors (23 - x, 11 - y).
        assert all(board[x][y] == board[23 - x][11 - y] for x in range(24) for y in range(12))
        # It should hold only empty, "d" and "n" tiles, "d" exactly around the centres.
        assert set(flat) <= {"", "d", "n"}
        for x in range(24):
            for y in range(12):
                near = [
                    board[u][v]
                    for u, v in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1))
                    if 0 <= u < 24 and 0 <= v < 12
                ]
                if board[x][y] == "d":
                    assert "n" in near
                elif board[x][y] == "":
                    assert "n" not in near
        counts.add(flat.count("n"))
        # It should be red's move, with nothing played yet.
        assert GAME.to_move(state) == (0,)
        assert GAME.outcome(state) is None
    # It should draw between 3 and 8 centres, each mirrored (repeats allowed).
    assert min(counts) >= 1 and max(counts) <= 16 and len(counts) > 5


def test_it_is_deterministic_per_seed():
    # It should give the same layout for the same seed, and different ones across seeds.
    assert GAME.initial_state(seed=42) == GAME.initial_state(seed=42)
    layouts = {GAME.initial_state(seed=seed).cells for seed in range(50)}
    assert len(layouts) > 45
    # It should not use the crater options when a board is given.
    board = board_of("R")
    assert GAME.initial_state(seed=1, options={"board": board}) == GAME.initial_state(
        seed=2, options={"board": board}
    )


def test_it_is_over_at_once_when_the_given_board_is_full():
    board = [["d"] * 12 for _ in range(24)]
    board[0][0] = "b"
    state = GAME.initial_state(seed=0, options={"board": board})
    # It should end before the first move, blue owning more tiles.
    assert GAME.to_move(state) == ()
    assert GAME.outcome(state) == Outcome(scores=(0.0, 1.0), reason="board_full")
    with pytest.raises(ValueError):
        GAME.apply(state, {0: [0, 0]})


# -- the rules: worked examples of §4.6 and the README --------------------------------


def test_it_wins_against_two_weaker_defenders():
    # Example A: blue's 5 beats two red groups of 4; both defenders are emptied.
    state = start(
        ".........",
        "..R......",
        "RRR.RRRR.",
        "...B.....",
        "...B.....",
        "...B.....",
        "...B.....",
    )
    state = play(state, (-1, -1), (3, 2))
    assert rows_of(state, 9, 7) == [
        ".........",
        "..R......",
        "RR.B.RRR.",
        "...B.....",
        "...B.....",
        "...B.....",
        "...B.....",
    ]
    assert state.last == (1, 3, 2, "capture")
    assert GAME.frame(state)["last"] == {"seat": 1, "x": 3, "y": 2, "kind": "capture"}


def test_it_loses_against_any_defender_at_least_as_strong():
    # Example B: 5 beats 4 but not 6, so the painted tile is emptied and nothing else moves.
    rows = (
        ".........",
        "..R.....R",
        "RRR.RRRRR",
        "...B.....",
        "...B.....",
        "...B.....",
        "...B.....",
    )
    before = play(start(*rows), (-1, -1))
    assert before.passes_in_a_row == 1
    after = play(before, (3, 2))
    assert rows_of(after, 9, 7) == list(rows)
    assert after.last == (1, 3, 2, "repelled")
    # It should count the repelled paint as a move, not a pass.
    assert after.move == 2 and after.passes_in_a_row == 0
    assert GAME.to_move(after) == (0,)


def test_it_favours_the_defender_on_a_tie():
    # Example C: 2 against 2, so (2, 0) is emptied again.
    state = play(start("RR.B"), (-1, -1), (2, 0))
    assert rows_of(state, 4, 1) == ["RR.B"]
    assert state.last[3] == "repelled"


def test_it_reproduces_the_readme_battles():
    # It should let a tile with 35 friends beat one with 18, and not the other way round.
    red35 = ["R" * 24, "R" * 11 + "." * 13]
    blue17 = "." * 24, "B" * 17 + "." * 7
    # Blue paints (5, 2): a = 17 + 1 = 18 against the red group of 35: blue loses.
    state = play(start(*red35, *blue17), (-1, -1), (5, 2))
    assert state.last[3] == "repelled"
    assert rows_of(state, 24, 4) == [*red35, *blue17]
    # Red paints (5, 2) in the mirrored position: a = 35 + 1 > 17: the blue tile is emptied.
    state = play(start("B" * 17, "." * 24, "R" * 24, "R" * 11), (5, 1))
    assert state.last[3] == "capture"
    assert rows_of(state, 24, 2) == ["BBBBB.BBBBBBBBBBB.......", ".....R.................."]
    # It should let 5 beat two 4s (example A) but lose to a 4 and a 6 (example B): above.


def test_it_joins_own_groups_before_measuring_the_attacker():
    # P joins two red groups of 2 into 5, beating a blue group of 4 it touches.
    rows = ("RR.RR", "..B..", "..B..", "..B..", "..B..")
    state = play(start(*rows), (2, 0))
    assert state.last[3] == "capture"
    assert rows_of(state, 5, 5) == ["RRRRR", ".....", "..B..", "..B..", "..B.."]
    # Without the second group it is 3 against 4 and loses.
    state = play(start("RR...", "..B..", "..B..", "..B..", "..B.."), (2, 0))
    assert state.last[3] == "repelled"


def test_it_judges_defenders_of_one_group_alike_and_empties_only_adjacent_tiles():
    # P at (1, 1) touches the same blue group of 5 three times; red's 1 + 5 = 6 wins and
    # only the three adjacent blue tiles are emptied, not the rest of their group.
    blue = ("BBB.", "B.B.")
    state = play(start(*blue, *[".R.."] * 5), (1, 1))
    assert state.last[3] == "capture"
    assert rows_of(state, 4, 7) == ["B.B.", *[".R.."] * 6]
    # With one red tile fewer it is 5 against 5 for every defender: repelled.
    state = play(start(*blue, *[".R.."] * 4), (1, 1))
    assert state.last[3] == "repelled"
    assert rows_of(state, 4, 6) == [*blue, *[".R.."] * 4]


def test_it_never_cascades_or_changes_a_tile_colour():
    # A capture empties tiles; it never paints them nor triggers further battles.
    state = play(start("RRRR.B", "......"), (4, 0))
    assert rows_of(state, 6, 2) == ["RRRRR.", "......"]
    assert GAME.frame(state)["counts"] == [5, 0]


# -- nukes ----------------------------------------------------------------------------


def test_it_nukes_an_own_tile_and_contaminates_its_neighbours():
    # Example D: (3, 0) becomes n; (2, 0) red, (4, 0) and (3, 1) empty become d.
    state = play(start("RRRR..", "R....."), (3, 0))
    assert rows_of(state, 6, 2) == ["RRdnd.", "R..d.."]
    assert state.last == (0, 3, 0, "nuke")
    assert state.passes_in_a_row == 0
    # Example E: blue clicks (2, 0), now d: a pass; the counter goes up by one.
    after = play(state, (2, 0))
    assert rows_of(after, 6, 2) == rows_of(state, 6, 2)
    assert after.last == (1, 2, 0, "pass") and after.passes_in_a_row == 1


def test_it_treats_every_kind_of_neighbour_of_a_nuke_as_the_spec_says():
    # It should turn "", own and "d" neighbours into "d" and leave "n" as "n".
    state = play(start("..n..", ".dRR.", "..."), (2, 1))
    assert rows_of(state, 5, 3) == ["..n..", ".dnd.", "..d.."]
    # It should turn an enemy neighbour into "d" too (not reachable from a legal position,
    # so checked on the rules function directly): blue at (3, 1) next to red's nuke.
    cells = board_string(board_of("..n..", ".dRB.", "..R.."))
    after, kind = click(cells, 0, 2, 1)
    assert kind == "nuke"
    assert after == board_string(board_of("..n..", ".dnd.", "..d.."))
    # It should stay on the board at corners and edges.
    state = play(start("R.", "R."), (0, 0))
    assert rows_of(state, 2, 2) == ["nd", "d."]
    corner = play(start(*["." * 24] * 11, "." * 23 + "R"), (23, 11))
    assert rows_of(corner, 24, 12)[10][23] == "d" and rows_of(corner, 24, 12)[11][22:] == "dn"
    assert GAME.frame(corner)["empty"] == 288 - 3


def test_it_never_revives_dead_tiles():
    # Clicking "d" or "n" is a pass for both colours, and they stay dead.
    state = start("dn")
    for x in (0, 1, 0, 1):
        state = play(state, (x, 0))
        assert state.last[3] == "pass"
    assert rows_of(state, 2, 1) == ["dn"]


# -- passes and the end of the game ---------------------------------------------------


def test_it_passes_on_enemy_dead_and_off_board_clicks():
    state = start("R.B", "dn.")
    clicks = [
        (2, 0),
        (0, 0),
        (0, 1),
        (1, 1),
        (-1, -1),
        (24, 0),
        (0, 12),
        (-1, 5),
        (10**30, -(10**30)),
    ]
    for i, (x, y) in enumerate(clicks[:7], start=1):
        state = play(state, (x, y))
        # It should leave the board alone and count consecutive passes by either player.
        assert rows_of(state, 3, 2) == ["R.B", "dn."]
        assert state.last[1:] == (x, y, "pass")
        assert state.passes_in_a_row == i
    assert GAME.outcome(state) is None
    # It should end in a stalemate after the eighth pass in a row.
    state = play(state, clicks[7])
    assert state.passes_in_a_row == 8
    assert GAME.to_move(state) == ()
    assert GAME.outcome(state) == Outcome(scores=(0.5, 0.5), reason="stalemate")
    # It should accept any integers (off the board is a pass, not a fault).
    state = play(start("R.B"), clicks[8])
    assert state.last == (0, 10**30, -(10**30), "pass")


def test_it_resets_the_pass_count_on_paints_repels_and_nukes():
    options = {"max_passes_in_a_row": 2}
    state = play(start("RR.B", **options), (-1, -1))
    assert state.passes_in_a_row == 1
    state = play(state, (2, 0))  # blue repelled
    assert (state.last[3], state.passes_in_a_row) == ("repelled", 0)
    state = play(state, (-1, -1))
    state = play(state, (3, 0))  # blue nukes its own tile
    assert (state.last[3], state.passes_in_a_row) == ("nuke", 0)
    state = play(state, (-1, -1))
    state = play(state, (5, 5))  # blue paints
    assert (state.last[3], state.passes_in_a_row) == ("paint", 0)
    state = play(state, (-1, -1), (-1, -1))
    # Red owns two tiles, blue one (its nuked tile is gone).
    assert GAME.outcome(state) == Outcome(scores=(1.0, 0.0), reason="stalemate")


def test_it_ends_when_the_board_is_full():
    board = [["d"] * 12 for _ in range(24)]
    board[0][0], board[5][5], board[9][9] = "r", "b", ""
    state = play(GAME.initial_state(seed=0, options={"board": board}), (9, 9))
    # It should end with the last empty tile painted; more tiles wins.
    assert GAME.to_move(state) == ()
    assert GAME.outcome(state) == Outcome(scores=(1.0, 0.0), reason="board_full")
    # It should call equal counts a draw.
    board[1][1] = "b"
    state = play(GAME.initial_state(seed=0, options={"board": board}), (9, 9))
    assert GAME.outcome(state) == Outcome(scores=(0.5, 0.5), reason="board_full")
    # It should check a full board before the move limit.
    state = play(GAME.initial_state(seed=0, options={"board": board, "max_moves": 1}), (9, 9))
    assert GAME.outcome(state).reason == "board_full"
    # It should give a float score to each seat.
    assert all(isinstance(score, float) for score in GAME.outcome(state).scores)


def test_it_ends_at_the_move_limit():
    state = GAME.initial_state(seed=3, options={"max_moves": 3, "craters_min": 0, "craters_max": 0})
    state = play(state, (0, 0), (5, 5))
    assert GAME.to_move(state) == (0,)
    state = play(state, (0, 1))
    # It should stop after max_moves moves, whoever owns more tiles winning.
    assert state.move == 3 and GAME.to_move(state) == ()
    assert GAME.outcome(state) == Outcome(scores=(1.0, 0.0), reason="move_limit")
    with pytest.raises(ValueError):
        GAME.apply(state, {1: [1, 1]})
    # It should count passes as moves, and never limit when max_moves is null.
    state = GAME.initial_state(seed=3, options={"max_moves": 2})
    assert GAME.outcome(play(state, (-1, -1), (-1, -1))).reason == "move_limit"
    state = GAME.initial_state(seed=3, options={"max_moves": None, "max_passes_in_a_row": None})
    for _ in range(1200):
        state = play(state, (-1, -1))
    assert GAME.to_move(state) == (0,) and state.passes_in_a_row == 1200


def test_it_alternates_seats_and_rejects_wrong_actions():
    state = GAME.initial_state(seed=5)
    # It should ask seat 0 after an even number of moves and seat 1 after an odd one.
    for move in range(6):
        assert GAME.to_move(state) == (move % 2,)
        state = play(state, (-1, -1))
    # It should refuse an action for the wrong seat, two actions, or a malformed action.
    for actions in (
        {1: [0, 0]},
        {0: [0, 0], 1: [1, 1]},
        {},
        {0: [0]},
        {0: [True, 0]},
        {0: "0,0"},
        {0: [0.0, 0]},
    ):
        with pytest.raises(ValueError):
            GAME.apply(state, actions)
    # It should accept a tuple as well as the canonical list.
    assert GAME.apply(state, {0: (0, 0)}) == GAME.apply(state, {0: [0, 0]})


# -- the invariant, checked against a plain model of the rules ------------------------


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), picks=st.lists(st.integers(0, 2**16), min_size=50, max_size=500))
def test_it_never_lets_red_touch_blue(seed, picks):
    # Random games must keep the invariant of §4.5 after every move and agree with the
    # plain model. Clicks favour battles: mostly empty tiles next to the enemy, some own
    # tiles (nukes), some anywhere (off the board too).
    state = GAME.initial_state(seed=seed)
    board = wire_board(state)
    for pick in picks:
        if not GAME.to_move(state):
            break
        (seat,) = GAME.to_move(state)
        own, enemy = "rb"[seat], "rb"[1 - seat]
        tiles = [(x, y) for x in range(24) for y in range(12)]
        empty = [(x, y) for x, y in tiles if board[x][y] == ""]
        owned = [(x, y) for x, y in tiles if board[x][y] == own]
        contested = [(x, y) for x, y in empty if any(board[u][v] == enemy for u, v in near(x, y))]
        choice = pick % 16
        if choice == 0:
            x, y = pick // 16 % 26 - 1, pick // 416 % 14 - 1
        else:
            targets = (
                (owned if choice == 1 else contested if choice < 10 else empty) or empty or tiles
            )
            x, y = targets[pick // 16 % len(targets)]
        board, kind = model_click(board, seat, x, y)
        state = GAME.apply(state, {seat: [x, y]})
        assert wire_board(state) == board
        assert state.last == (seat, x, y, kind)
        assert not red_touches_blue(board)


def test_it_matches_the_plain_model_in_whole_games_between_builtin_bots():
    # Every move of real games (all bots, both seats) agrees with the plain model.
    kinds = set()
    for seed in range(12):
        names = [
            ["greedy", "contain"],
            ["fearful", "greedy"],
            ["expand", "random"],
            ["greedy", "greedy"],
        ][seed % 4]
        states, history, _ = play_builtin(GAME, seed, names)
        board = wire_board(states[0])
        for state, actions in zip(states[1:], history, strict=True):
            ((seat, (x, y)),) = actions.items()
            board, kind = model_click(board, seat, x, y)
            assert wire_board(state) == board
            assert state.last[3] == kind
            assert not red_touches_blue(board)
            kinds.add(kind)
    # Those games hold every kind of move but the pass (no built-in bot passes while an
    # empty tile is left).
    assert kinds == {"paint", "capture", "repelled", "nuke"}


# -- wire format ----------------------------------------------------------------------


def spec_example_state():
    board = board_of()
    for x, y, value in [(5, 3, "n"), (18, 8, "n"), (10, 5, "r"), (13, 6, "b")]:
        board[x][y] = value
        if value == "n":
            for u, v in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                board[u][v] = "d"
    return play(GAME.initial_state(seed=0, options={"board": board}), (-1, -1))  # red passed


def test_it_sends_the_byte_exact_observation_of_the_spec():
    state = spec_example_state()
    message = GAME.observation(state, 1, CTX)
    # It should send {"color", "board"} in that order, the board as 925 bytes of compact JSON.
    assert list(message) == ["color", "board"]
    assert message == {"color": "b", "board": BOARD_TEXT_925}
    assert len(message["board"].encode()) == 925
    assert message["board"] == json.dumps(wire_board(state), separators=(",", ":"))
    # It should url-encode to the 2765-byte form body of the spec.
    body = urllib.parse.urlencode(message)
    assert body == BODY_2765 and len(body.encode()) == 2765
    # It should tell red its own colour, with the same board.
    assert GAME.observation(state, 0, CTX) == {"color": "r", "board": BOARD_TEXT_925}
    # The sample AI's contain strategy answers (12, 6), as a 14-byte body.
    reply = GAME.builtin_bots["contain"]()(message, random.Random(0))
    assert json.dumps(reply, separators=(",", ":")) == '{"x":12,"y":6}'


def test_it_encodes_any_board_as_compact_json():
    for seed in range(8):
        states, _, _ = play_builtin(GAME, seed, ["random", "greedy"])
        for state in states[:: max(1, len(states) // 10)]:
            text = GAME.observation(state, 0, CTX)["board"]
            assert text == json.dumps(json.loads(text), separators=(",", ":"))
            assert board_text(state.cells) == text


ACCEPTED = [
    ('{"x":3,"y":0}', [3, 0]),
    ('{"y":0,"x":3}', [3, 0]),
    ('{"x":3,"y":0,"note":"hi","z":[1]}', [3, 0]),
    ('{"x":1,"y":2,"x":5}', [5, 2]),
    ('{"x":-1,"y":-1}', [-1, -1]),
    ('{"x":24,"y":-7}', [24, -7]),
    ('{"x":123456789012345678901234567890,"y":0}', [123456789012345678901234567890, 0]),
    (' {"x": 0, "y": 11} ', [0, 11]),
]
REJECTED = [
    '{"x":"3","y":0}',
    '{"x":3,"y":"0"}',
    '{"x":3.0,"y":0}',
    '{"x":3,"y":0.5}',
    '{"x":1e1,"y":0}',
    '{"x":true,"y":0}',
    '{"x":3,"y":false}',
    '{"x":null,"y":0}',
    '{"x":[3],"y":0}',
    '{"x":{"v":3},"y":0}',
    '{"x":3}',
    '{"y":0}',
    '{"X":3,"Y":0}',
    "{}",
    "[3,0]",
    "3",
    '"{\\"x\\":3,\\"y\\":0}"',
    "null",
    "true",
]


@pytest.mark.parametrize(("text", "action"), ACCEPTED)
def test_it_accepts_objects_with_integer_x_and_y(text, action):
    state = GAME.initial_state(seed=0)
    # It should return the canonical [x, y], as sent, extra keys ignored.
    assert GAME.parse_action(state, 0, json.loads(text)) == action
    # It should apply it (off the board is a pass).
    after = GAME.apply(state, {0: action})
    assert after.last[:3] == (0, *action)


@pytest.mark.parametrize("text", REJECTED)
def test_it_rejects_anything_else_as_bad_reply(text):
    state = GAME.initial_state(seed=0)
    with pytest.raises(IllegalAction) as caught:
        GAME.parse_action(state, 0, json.loads(text))
    assert caught.value.code == "bad_reply"


def test_it_defaults_to_a_pass():
    state = GAME.initial_state(seed=0)
    # It should offer the pass [-1, -1] as the default action, which apply accepts.
    assert GAME.default_action(state, 0) == [-1, -1]
    assert GAME.apply(state, {0: GAME.default_action(state, 0)}).last == (0, -1, -1, "pass")


# -- frame and JSON ------------------------------------------------------------------


def test_it_draws_the_frame_of_the_spec():
    board = GAME.options_of(spec_example_state())["board"]  # the craters and two tiles
    board[10][5] = board[13][6] = ""
    state = GAME.initial_state(seed=0, options={"board": board})
    # It should show no last move before the first one.
    assert GAME.frame(state)["last"] is None
    state = play(state, (10, 5), (13, 6))
    assert GAME.frame(state) == {
        "board": [
            "........................",
            "........................",
            ".....d..................",
            "....dnd.................",
            ".....d..................",
            "..........0.............",
            ".............1..........",
            "..................d.....",
            ".................dnd....",
            "..................d.....",
            "........................",
            "........................",
        ],
        "counts": [1, 1],
        "empty": 276,
        "move": 2,
        "to_move": 0,
        "passes_in_a_row": 0,
        "last": {"seat": 1, "x": 13, "y": 6, "kind": "paint"},
    }
    assert list(GAME.frame(state)) == [
        "board",
        "counts",
        "empty",
        "move",
        "to_move",
        "passes_in_a_row",
        "last",
    ]
    # It should show to_move null once over.
    over = GAME.initial_state(seed=0, options={"board": board, "max_moves": 1})
    assert GAME.frame(play(over, (0, 0)))["to_move"] is None


def test_it_round_trips_states_through_json():
    states, _, _ = play_builtin(GAME, 11, ["greedy", "fearful"])
    custom = spec_example_state()
    for state in [*states, custom]:
        data = json.loads(json.dumps(GAME.to_json(state)))
        # It should rebuild an equal state, options (and the board option) included.
        assert GAME.from_json(data) == state
        assert GAME.options_of(GAME.from_json(data)) == GAME.options_of(state)
    assert GAME.options_of(custom)["board"][10][5] == "r"
    # It should reject a malformed board.
    data = GAME.to_json(custom)
    for rows in (
        data["board"][:11],
        [*data["board"][:11], "x" * 24],
        [*data["board"][:11], "." * 23],
    ):
        with pytest.raises(ValueError):
            GAME.from_json({**data, "board": rows})


def test_it_never_changes_its_input_state():
    state = spec_example_state()
    before = json.dumps(GAME.to_json(state))
    for x, y in [(12, 6), (10, 5), (13, 6), (-1, 0), (5, 3)]:
        GAME.apply(state, {1: [x, y]})
    assert json.dumps(GAME.to_json(state)) == before


# -- the generic contract ------------------------------------------------------------


def test_it_passes_the_generic_conformance_check():
    # It should pass check_game over 300 seeds with randomly paired built-in bots.
    report = check_game(GAME, range(300))
    assert report.games == 300
    assert set(report.reasons) <= {"board_full", "move_limit", "stalemate"}
