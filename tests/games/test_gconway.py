"""gconway rules, wire format, built-in bots and conformance vectors (games/gconway/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.codec import decode_reply
from bots.faults import BotFault
from games import Context, IllegalAction, Policy, get_game, rng_for
from games.gconway import GAME, GconwayState, life_step
from games.testing import check_game, play_builtin
from tests.conftest import game_vectors

GCONWAY = game_vectors("gconway")


def vector_file(*parts: str) -> Path:
    """A file of the conformance vectors; a missing file fails the test (never skips)."""
    path = GCONWAY.joinpath(*parts)
    assert path.is_file(), f"conformance vectors missing: {path}"
    return path


def load(*parts: str):
    return json.loads(vector_file(*parts).read_text())


# Collected at import; an empty or missing folder gives one failing case, never zero cases.
TRACES = sorted(p.name for p in (GCONWAY / "traces").glob("*.json")) or ["<no traces found>"]

FIRST_MESSAGE = (
    '{"field":["........................","........................","........................",'
    '"........................","........................","........................",'
    '"........................","........................","........................",'
    '"........................","........................",".....##..........OO.....",'
    '".....##..........OO.....","........................","........................",'
    '"........................","........................","........................",'
    '"........................","........................","........................",'
    '"........................","........................","........................"],'
    '"cellsRemaining":3,"cellGainPerTurn":3,"maxCellCapacity":15,"maxColonisationDistance":2,'
    '"currIteration":0,"maxGameIterations":500,"timeGainPerTurn":300,"timeLeftForMove":1500}'
)


def replay_options(trace: dict) -> dict:
    """§11.2: the recorded configuration, P2 wins collisions, no timer."""
    options = dict(trace["config"])
    options["start"] = [trace["startingCells"]["p1"], trace["startingCells"]["p2"]]
    options["collisions"] = "second-player"
    options["timerMs"] = None
    return options


def snapshot(state: GconwayState) -> dict:
    """Our state in the traces' snapshot vocabulary ('1' = P1 = seat 0, '2' = P2 = seat 1)."""
    frame = GAME.frame(state)
    outcome = GAME.outcome(state)
    snap = {
        "iteration": state.iteration,
        "field": [row.translate(str.maketrans("01", "12")) for row in frame["field"]],
        "cellsRemaining": frame["budgets"],
        "liveCount": frame["live"],
        "isFinal": outcome is not None,
    }
    if outcome is not None:
        snap["winner"] = {(1.0, 0.0): 0, (0.0, 1.0): 1, (0.5, 0.5): -1}[outcome.scores]
    return snap


def act(state, seat, cells):
    return GAME.parse_action(state, seat, {"cells": cells})


def step(state, cells0, cells1):
    return GAME.apply(state, {0: act(state, 0, cells0), 1: act(state, 1, cells1)})


def code_of(state, seat, raw) -> str | None:
    try:
        GAME.parse_action(state, seat, raw)
    except IllegalAction as exc:
        return exc.code
    return None


# -- registration, options and policy --------------------------------------------------


def test_it_is_registered():
    # It should be found by slug, as a simultaneous two-player JSON game.
    assert get_game("gconway") is GAME
    assert GAME.slug == "gconway" and GAME.num_players == 2 and GAME.wire == "json"
    state = GAME.initial_state(seed=0)
    assert GAME.to_move(state) == (0, 1)
    assert set(GAME.builtin_bots) == {"dummy", "random", "grower"}


def test_it_has_the_canonical_default_options():
    assert GAME.resolve_options(None) == {
        "rows": 24,
        "cols": 24,
        "cellGainPerTurn": 3,
        "maxCellCapacity": 15,
        "startingCells": 3,
        "maxColonisationDistance": 2,
        "maxGameIterations": 500,
        "ruleset": "diff",
        "start": [[[11, 5], [11, 6], [12, 5], [12, 6]], [[11, 17], [11, 18], [12, 17], [12, 18]]],
        "timerMs": 300,
        "collisions": "cancel",
        "on_fault": "forfeit",
    }


def test_it_accepts_valid_options():
    options = GAME.resolve_options(
        {
            "rows": 1,
            "cols": 1,
            "cellGainPerTurn": 0,
            "maxCellCapacity": 0,
            "startingCells": 0,
            "maxColonisationDistance": 0,
            "maxGameIterations": 0,
            "ruleset": "classic",
            "start": [[], [[0, 0]]],
            "timerMs": None,
            "collisions": "second-player",
            "on_fault": "pass",
        }
    )
    assert options["timerMs"] is None and options["start"] == [[], [[0, 0]]]
    # It should not share the caller's lists.
    start = [[[0, 0]], [[1, 1]]]
    resolved = GAME.resolve_options({"rows": 2, "cols": 2, "start": start})
    start[0].append([1, 0])
    assert resolved["start"] == [[[0, 0]], [[1, 1]]]


@pytest.mark.parametrize(
    "bad",
    [
        {"nope": 1},
        {"rows": 0},
        {"cols": -1},
        {"rows": True},
        {"rows": 24.0},
        {"rows": "24"},
        {"cellGainPerTurn": -1},
        {"maxCellCapacity": -1},
        {"startingCells": -1},
        {"startingCells": False},
        {"maxColonisationDistance": -1},
        {"maxGameIterations": -1},
        {"ruleset": "conway"},
        {"ruleset": None},
        {"timerMs": 0},
        {"timerMs": True},
        {"timerMs": 1.5},
        {"collisions": "first-player"},
        {"on_fault": "strike"},
        {"start": []},
        {"start": [[[0, 0]]]},
        {"start": [[[0, 0]], [[1, 1]], []]},
        {"start": [[[0, 0]], "x"]},
        {"start": [[[0]], []]},
        {"start": [[[0, 0, 0]], []]},
        {"start": [[[0, True]], []]},
        {"start": [[[0, 1.0]], []]},
        {"start": [[[24, 0]], []]},
        {"start": [[], [[0, -1]]]},
        {"rows": 5, "cols": 5},  # the default start lies outside a 5x5 board
    ],
)
def test_it_rejects_bad_options(bad):
    # It should raise ValueError for an unknown key, a wrong type or a value out of range.
    with pytest.raises(ValueError):
        GAME.initial_state(seed=0, options=bad)


def test_it_declares_its_runner_policy():
    # It should clock bots with a 5L bank of L = timerMs and no per-move limit.
    assert GAME.policy(GAME.resolve_options(None)) == Policy(
        move_timeout_ms=None,
        bank_increment_ms=300,
        on_fault="forfeit",
        error_line_on_forfeit=True,
    )
    policy = GAME.policy(GAME.resolve_options({"timerMs": None, "on_fault": "pass"}))
    assert policy.bank_increment_ms is None and policy.on_fault == "pass"
    assert policy.move_timeout_ms is None and policy.error_line_on_forfeit


# -- the initial state and the messages ------------------------------------------------


def test_it_sends_the_byte_exact_first_message():
    state = GAME.initial_state(seed=0)
    text = GAME.encode_message(GAME.observation(state, 0, Context()))
    # It should be exactly §5.1's 834 bytes.
    assert text == FIRST_MESSAGE
    assert len(text.encode("utf-8")) == 834
    # It should swap # and O for seat 1 and use the context's bank.
    seat1 = json.loads(GAME.encode_message(GAME.observation(state, 1, Context(time_left_ms=77))))
    assert seat1["field"][11] == ".....OO..........##....."
    assert seat1["timeLeftForMove"] == 77 and seat1["timeGainPerTurn"] == 300
    assert list(seat1) == list(json.loads(FIRST_MESSAGE))


def test_it_sends_no_time_keys_without_a_timer():
    state = GAME.initial_state(seed=0, options={"timerMs": None})
    message = GAME.observation(state, 0, Context(time_left_ms=1234))
    assert list(message) == [
        "field",
        "cellsRemaining",
        "cellGainPerTurn",
        "maxCellCapacity",
        "maxColonisationDistance",
        "currIteration",
        "maxGameIterations",
    ]


def test_it_draws_the_initial_frame():
    state = GAME.initial_state(seed=0)
    frame = GAME.frame(state)
    assert list(frame) == [
        "field",
        "live",
        "budgets",
        "iteration",
        "maxIterations",
        "placed",
        "contested",
    ]
    assert frame["field"][11] == ".....00..........11....."
    assert frame["live"] == [4, 4] and frame["budgets"] == [3, 3]
    assert frame["iteration"] == 0 and frame["maxIterations"] == 500
    assert frame["placed"] == [[], []] and frame["contested"] == []


def test_it_lets_seat_1_overwrite_seat_0_at_the_start():
    state = GAME.initial_state(
        seed=0, options={"rows": 4, "cols": 4, "start": [[[0, 0], [1, 1]], [[1, 1]]]}
    )
    assert GAME.frame(state)["field"] == ["0...", ".1..", "....", "...."]


def test_it_ignores_the_seed():
    assert GAME.initial_state(seed=1) == GAME.initial_state(seed=2)


def test_it_gives_an_uncapped_initial_budget():
    state = GAME.initial_state(seed=0, options={"startingCells": 40, "maxCellCapacity": 15})
    assert state.budgets == (40, 40)
    state = step(state, [], [])
    assert state.budgets == (15, 15)


# -- §4.6 worked examples ---------------------------------------------------------------


def test_it_plays_the_beehive_example():
    state = GAME.initial_state(seed=0)
    after = step(state, [[11, 7], [12, 7]], [[10, 17], [10, 18], [9, 17]])
    field = GAME.frame(after)["field"]
    # It should give the field after the life step of §4.6 (columns 3 to 20, rows 9 to 13).
    assert [row[3:21] for row in field[9:14]] == [
        "..............11..",
        "...0.........1....",
        "..0.0........1..1.",
        "..0.0.........11..",
        "...0..............",
    ]
    # It should leave every other cell dead.
    assert sum(row.count("0") + row.count("1") for row in field) == 6 + 7
    assert "".join(field[:9] + field[14:]).strip(".") == ""
    # It should charge 2 and 3 cells and count the iteration.
    assert after.budgets == (4, 3) and after.iteration == 1
    assert GAME.frame(after)["placed"] == [[[11, 7], [12, 7]], [[10, 17], [10, 18], [9, 17]]]


def test_it_colonises_before_the_life_step():
    # It should make the intermediate field of §4.6 (a 2x3 rectangle for seat 0) and step it.
    state = GAME.initial_state(seed=0)
    after = step(state, [[11, 7], [12, 7]], [[10, 17], [10, 18], [9, 17]])
    rows, cols = 24, 24
    intermediate = bytearray(state.field)
    for r, c in [[11, 7], [12, 7]]:
        intermediate[r * cols + c] = 1
    for r, c in [[10, 17], [10, 18], [9, 17]]:
        intermediate[r * cols + c] = 2
    assert after.field == life_step(bytes(intermediate), rows, cols, "diff")


@pytest.mark.parametrize(
    ("cells", "code"),
    [
        ([[11, 8]], None),
        ([[11, 9]], "distance"),
        ([[11, 5]], "alive"),
        ([[11, 7], [12, 7], [10, 5], [10, 6]], "budget"),
        ([[11, 5], [11, 6], [12, 5], [12, 6]], "budget"),  # budget is checked first
        ([[35, 7]], "index"),  # wraps to (11, 7): passes alive and distance
        ([[11, 7], [11, 7]], None),
        ([[11, 7], [11, 17]], "alive"),  # an opponent's cell is alive too
        ([[11, 9], [11, 5]], "alive"),  # every cell is checked for alive before distance
        ([[-13, 7], [11, 9]], "distance"),  # distance before index
        ([[11, 31]], "index"),
        ([[11, -17]], "index"),
        ([[11 + 24 * 10**15, 7]], "index"),  # taken at face value, no 32-bit wrapping
        ([[13, 3], [9, 8], [14, 8]], None),  # the corners of the reach
        ([[11, 15]], "distance"),  # in reach of the opponent only
    ],
)
def test_it_validates_lists_as_the_worked_examples_say(cells, code):
    state = GAME.initial_state(seed=0)
    assert code_of(state, 0, {"cells": cells}) == code


def test_it_measures_the_distance_on_the_torus():
    options = {"rows": 10, "cols": 10, "start": [[[0, 0]], [[5, 5]]]}
    state = GAME.initial_state(seed=0, options=options)
    # It should reach across the edges (Chebyshev distance 2 through the wrap).
    assert code_of(state, 0, {"cells": [[8, 8], [0, 9]]}) is None
    assert code_of(state, 0, {"cells": [[7, 0]]}) == "distance"
    # It should let the wrapped cell pass alive and distance, then fail index.
    assert code_of(state, 0, {"cells": [[-1, -1]]}) == "index"


def test_it_charges_duplicates_and_places_them_once():
    state = GAME.initial_state(seed=0)
    after = step(state, [[11, 7], [11, 7]], [])
    assert after.budgets == (4, 6)
    assert GAME.frame(after)["placed"] == [[[11, 7]], []]


def test_it_refills_the_budget_up_to_the_cap():
    state = GAME.initial_state(seed=0)
    seen = []
    for _ in range(6):
        seen.append(state.budgets[1])
        state = step(state, [], [])
    # It should show a seat that never plays 3, 6, 9, 12, 15, 15.
    assert seen == [3, 6, 9, 12, 15, 15]


def test_it_keeps_the_budget_of_a_seat_that_spends_everything():
    state = GAME.initial_state(seed=0)
    seen = []
    for turn in range(6):
        seen.append(state.budgets[0])
        message = GAME.observation(state, 0, Context())
        reply = GAME.builtin_bots["random"]()(message, rng_for(0, turn))
        assert len(reply["cells"]) == state.budgets[0]
        state = GAME.apply(state, {0: act(state, 0, reply["cells"]), 1: []})
    assert seen == [3, 3, 3, 3, 3, 3]


COLLISION_OPTIONS = {
    "start": [[[4, 6], [4, 7], [5, 6], [5, 7]], [[4, 11], [4, 12], [5, 11], [5, 12]]],
}


@pytest.mark.parametrize("mode", ["cancel", "second-player"])
def test_it_resolves_collisions(mode):
    state = GAME.initial_state(seed=0, options={**COLLISION_OPTIONS, "collisions": mode})
    both = step(state, [[5, 9], [3, 8]], [[5, 9]])
    frame = GAME.frame(both)
    # It should charge both seats for the contested cell and report it.
    assert both.budgets == (4, 5)
    assert frame["contested"] == [[5, 9]]
    if mode == "cancel":
        # It should leave the cell dead for colonisation: as if nobody had named it.
        expected = step(state, [[3, 8]], [])
        assert frame["placed"] == [[[3, 8]], []]
    else:
        # It should give the cell to seat 1, as the original code does.
        expected = step(state, [[3, 8]], [[5, 9]])
        assert frame["placed"] == [[[3, 8]], [[5, 9]]]
    assert both.field == expected.field


def test_it_cancels_collisions_by_default():
    state = GAME.initial_state(seed=0, options=COLLISION_OPTIONS)
    after = step(state, [[5, 9]], [[5, 9]])
    assert GAME.frame(after)["placed"] == [[], []]
    assert after.budgets == (5, 5)


def test_it_lists_contested_cells_in_row_major_order():
    options = {"rows": 6, "cols": 6, "start": [[[2, 2]], [[3, 3]]], "startingCells": 4}
    state = GAME.initial_state(seed=0, options=options)
    after = step(state, [[4, 1], [2, 4], [1, 1]], [[2, 4], [4, 1], [4, 4]])
    assert GAME.frame(after)["contested"] == [[2, 4], [4, 1]]
    assert GAME.frame(after)["placed"] == [[[1, 1]], [[4, 4]]]


# -- life rules -------------------------------------------------------------------------


def grid_state(rows: list[str], **options) -> GconwayState:
    """A state from a picture ('.' dead, '0' seat 0, '1' seat 1)."""
    opts = {"rows": len(rows), "cols": len(rows[0]), "start": [[], []], **options}
    data = GAME.to_json(GAME.initial_state(seed=0, options=opts))
    return GAME.from_json({**data, "field": rows})


@pytest.mark.parametrize(
    ("picture", "centre"),
    [
        # dead centre: born for a seat with exactly 3 more neighbours than the other
        (["00.", "0.0", "..."], "."),  # 4 vs 0
        (["0..", "0..", "..."], "."),  # 2 vs 0
        (["000", "...", "..."], "0"),  # 3 vs 0
        (["000", "0.1", "..."], "0"),  # 4 vs 1
        (["000", "0.0", "11."], "0"),  # 5 vs 2
        (["111", "...", "..."], "1"),  # 0 vs 3
        (["111", "0.1", "..."], "1"),  # 1 vs 4
        (["110", "0.1", "..."], "."),  # 2 vs 3
        # live centre: survives with friendly - enemy in {2, 3}; never changes owner
        (["00.", ".0.", "..."], "0"),  # 2 - 0
        (["000", ".0.", "..."], "0"),  # 3 - 0
        (["000", "10.", "0.."], "0"),  # 4 - 1
        (["000", ".00", "..."], "."),  # 4 - 0
        (["0..", ".0.", "..."], "."),  # 1 - 0
        (["001", ".01", "1.."], "."),  # 2 - 3
        (["111", ".0.", "..."], "."),  # seat 0 surrounded by 3 enemies
        (["11.", ".1.", "..."], "1"),  # 2 - 0 for seat 1
        (["111", "01.", "..."], "1"),  # 4 - 1 for seat 1
        (["110", ".1.", "0.."], "."),  # 2 - 2 for seat 1
    ],
)
def test_it_applies_the_diff_rule(picture, centre):
    board = [row + "..." for row in picture] + ["......"] * 3
    after = GAME.apply(grid_state(board), {0: [], 1: []})
    # The centre of the picture is (1, 1) of a 6x6 board.
    assert GAME.frame(after)["field"][1][1] == centre


@pytest.mark.parametrize(
    ("picture", "centre"),
    [
        (["000", "...", "..."], "0"),
        (["000", "..1", "..."], "."),  # a classic birth needs 0 enemies
        (["111", "...", "..."], "1"),
        (["00.", ".0.", "111"], "0"),  # survival ignores enemies
        (["000", ".00", "..."], "."),
    ],
)
def test_it_applies_the_classic_rule(picture, centre):
    board = [row + "..." for row in picture] + ["......"] * 3
    after = GAME.apply(grid_state(board, ruleset="classic"), {0: [], 1: []})
    assert GAME.frame(after)["field"][1][1] == centre


def test_it_counts_each_offset_separately_on_degenerate_boards():
    # On a 1x1 board the only cell is its own neighbour 8 times: overcrowded.
    state = grid_state(["0"])
    assert GAME.frame(GAME.apply(state, {0: [], 1: []}))["field"] == ["."]
    # On a 1x3 board the cell sees itself twice (2: survives) and each other cell 3 times
    # (3: births).
    state = grid_state(["0.."])
    assert GAME.frame(GAME.apply(state, {0: [], 1: []}))["field"] == ["000"]


def naive_step(rows: list[str], ruleset: str) -> list[str]:
    """§4.5 read literally: count the 8 torus offsets one by one."""
    height, width = len(rows), len(rows[0])
    out = []
    for r in range(height):
        line = ""
        for c in range(width):
            p = {"0": 0, "1": 0, ".": 0}
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if (dr, dc) != (0, 0):
                        p[rows[(r + dr) % height][(c + dc) % width]] += 1
            p0, p1, cell = p["0"], p["1"], rows[r][c]
            if ruleset == "diff":
                if cell == ".":
                    line += "0" if p0 - p1 == 3 else "1" if p0 - p1 == -3 else "."
                elif cell == "0":
                    line += "0" if p0 - p1 in (2, 3) else "."
                else:
                    line += "1" if p1 - p0 in (2, 3) else "."
            else:
                if cell == ".":
                    line += "0" if (p0, p1) == (3, 0) else "1" if (p0, p1) == (0, 3) else "."
                elif cell == "0":
                    line += "0" if p0 in (2, 3) else "."
                else:
                    line += "1" if p1 in (2, 3) else "."
        out.append(line)
    return out


@st.composite
def pictures(draw):
    height = draw(st.integers(1, 7))
    width = draw(st.integers(1, 7))
    cells = st.sampled_from(".01")
    return ["".join(draw(st.lists(cells, min_size=width, max_size=width))) for _ in range(height)]


@settings(max_examples=300, deadline=None)
@given(picture=pictures(), ruleset=st.sampled_from(["diff", "classic"]))
def test_it_steps_like_the_literal_rule(picture, ruleset):
    # It should agree with a cell-by-cell reading of §4.5 on any board, degenerate ones too.
    state = grid_state(picture, ruleset=ruleset)
    after = GAME.apply(state, {0: [], 1: []})
    assert GAME.frame(after)["field"] == naive_step(picture, ruleset)


# -- reply parsing (§5.3) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        None,
        [],
        [[11, 7]],
        "cells",
        7,
        {},
        {"cell": [[11, 7]]},
        {"cells": None},
        {"cells": {}},
        {"cells": "[[11,7]]"},
        {"cells": [None]},
        {"cells": [[11]]},
        {"cells": [[11, 7, 0]]},
        {"cells": [[11.0, 7]]},
        {"cells": [[11, 7.5]]},
        {"cells": [["11", "7"]]},
        {"cells": [[True, 7]]},
        {"cells": [[11, False]]},
        {"cells": [[None, 7]]},
        {"cells": [{"row": 11, "col": 7}]},
        {"cells": [[11, 7], 5]},
        {"cells": [[[11], [7]]]},
    ],
)
def test_it_rejects_replies_of_the_wrong_shape(raw):
    state = GAME.initial_state(seed=0)
    # It should answer bad_reply, before any budget check.
    assert code_of(state, 0, raw) == "bad_reply"


def test_it_parses_strict_json_replies():
    state = GAME.initial_state(seed=0)
    # It should ignore extra keys, let the last duplicate key count and keep order/duplicates.
    raw = decode_reply('{"cells":[[12,7],[11,7],[12,7]],"extra":{"a":1}}')
    assert GAME.parse_action(state, 0, raw) == [[12, 7], [11, 7], [12, 7]]
    raw = decode_reply('{"cells":[[11,7]],"cells":[]}')
    assert GAME.parse_action(state, 0, raw) == []
    # It should reject floats written as integers, such as 1e1 and 11.0.
    for line in ('{"cells":[[1e1,7]]}', '{"cells":[[11.0,7]]}'):
        assert code_of(state, 0, decode_reply(line)) == "bad_reply"


def test_it_returns_a_fresh_canonical_action():
    state = GAME.initial_state(seed=0)
    raw = {"cells": [[11, 7], [11, 7]]}
    action = GAME.parse_action(state, 0, raw)
    raw["cells"][0][0] = 99
    assert action == [[11, 7], [11, 7]]
    assert json.loads(json.dumps(action)) == action


STRICTER_THAN_THE_ORIGINAL = {
    '{"cells": [[1, 2, 3]]}',
    '{"cells": [["3", "4"]]}',
    '{"cells": [[1.9, 2.2]]}',
    '{"cells": [[1e1, -0.5]]}',
    "{cells: [[1,2]]}",
    "{'cells': [[1,2]]}",
}


def parse_line(state, line: str):
    """(action, None) or (None, code): the whole reply path of a line transport."""
    try:
        raw = decode_reply(line)
    except BotFault as fault:
        return None, fault.code.value
    try:
        return GAME.parse_action(state, 0, raw), None
    except IllegalAction as exc:
        return None, exc.code


def test_it_rejects_what_the_original_parser_rejected():
    vectors = load("parse_vectors.json")
    assert len(vectors) >= 29
    assert STRICTER_THAN_THE_ORIGINAL <= {v["line"] for v in vectors}
    # A permissive position: every in-board dead cell is in reach, the budget is large.
    state = GAME.initial_state(
        seed=0,
        options={
            "start": [[[23, 23]], [[0, 23]]],
            "maxColonisationDistance": 24,
            "startingCells": 99,
        },
    )
    for vector in vectors:
        action, code = parse_line(state, vector["line"])
        if "error" in vector or vector["line"] in STRICTER_THAN_THE_ORIGINAL:
            # It should reject the line as a whole (not JSON, or the wrong shape).
            assert code in ("bad_json", "bad_reply"), vector
        elif any(not (0 <= x < 24) for pair in vector["cells"] for x in pair):
            # It should take integers at face value: off the board is "index".
            assert code == "index", vector
        else:
            assert code is None and action == vector["cells"], vector
    # It should take 3000000000 at face value, where the original wrapped it to a negative.
    assert parse_line(state, '{"cells": [[3000000000, 1]]}') == (None, "index")


# -- conformance vectors: traces and messages ------------------------------------------


def test_it_has_the_trace_vectors():
    index = load("index.json")
    files = {Path(row["file"]).name for row in index}
    # It should replay every trace the index lists, and only those.
    assert len(index) >= 21
    assert files == set(TRACES)


def replay(trace: dict):
    """Yield (step, state before, state after or None) along a trace, checking as it goes."""
    state = GAME.initial_state(seed=0, options=replay_options(trace))
    assert snapshot(state) == trace["initial"]
    for number, entry in enumerate(trace["steps"]):
        where = f"{trace['id']} step {number}"
        assert state.iteration == entry["iteration"], where
        assert list(state.budgets) == entry["cellsRemainingBefore"], where
        if "error" in entry:
            # It should judge each seat alone: exactly the original's solo error code.
            for seat in (0, 1):
                raw = {"cells": entry["actions"][seat]}
                assert code_of(state, seat, raw) == entry["soloErrors"][seat], (where, seat)
            yield entry, state, None
            continue  # the state is unchanged
        actions = {seat: act(state, seat, entry["actions"][seat]) for seat in (0, 1)}
        before = GAME.to_json(state)
        after = GAME.apply(state, actions)
        assert GAME.to_json(state) == before, where
        result = dict(entry["result"])
        applied = result.pop("applied")
        assert snapshot(after) == result, where
        # It should place the collision-resolved lists (duplicates once, in first-named order).
        assert GAME.frame(after)["placed"] == [
            [list(cell) for cell in dict.fromkeys(tuple(cell) for cell in cells)]
            for cells in applied
        ], where
        yield entry, state, after
        state = after
    if trace["steps"] and trace.get("winner") is not None:
        assert snapshot(state)["winner"] == trace["winner"]
    assert (GAME.outcome(state) is not None) == (not trace["truncated"])


@pytest.mark.parametrize("name", TRACES)
def test_it_replays_the_original_engine_traces(name):
    trace = load("traces", name)
    steps = list(replay(trace))
    assert len(steps) == len(trace["steps"])
    assert sum(after is not None for _, _, after in steps) == trace["numTransitions"]


def test_it_writes_the_original_per_player_messages():
    views = load("json_views.json")
    assert len(views) >= 45
    by_game: dict[str, list] = {}
    for view in views:
        by_game.setdefault(view["game"], []).append(view)
    for game_id, game_views in by_game.items():
        trace = load("traces", f"{game_id}.json")
        states = {0: GAME.initial_state(seed=0, options=replay_options(trace))}
        for _, _, after in replay(trace):
            if after is not None:
                states[after.iteration] = after
        for view in game_views:
            state = states[view["iteration"]]
            assert snapshot(state)["field"] == view["field"]
            assert list(state.budgets) == view["cellsRemaining"]
            for seat in (0, 1):
                text = GAME.encode_message(GAME.observation(state, seat, Context()))
                # It should match toJSONObjectAsPlayer byte for byte.
                assert text == view[f"asPlayer{seat}"], (game_id, view["iteration"], seat)


# -- outcome, serialisation, purity -----------------------------------------------------


def test_it_ends_after_max_iterations_by_live_cells():
    state = GAME.initial_state(seed=0, options={"maxGameIterations": 2})
    state = step(state, [[11, 7], [12, 7]], [])  # a beehive (6 cells) against a block (4)
    assert GAME.outcome(state) is None and GAME.to_move(state) == (0, 1)
    state = step(state, [], [])
    assert GAME.to_move(state) == ()
    live0, live1 = GAME.frame(state)["live"]
    outcome = GAME.outcome(state)
    assert outcome.reason == "cells"
    assert live0 > live1 and outcome.scores == (1.0, 0.0)
    # It should score a draw on equal counts and a win for seat 1 with more cells.
    assert GAME.outcome(grid_state(["0.1"], maxGameIterations=0)).scores == (0.5, 0.5)
    assert GAME.outcome(grid_state(["011"], maxGameIterations=0)).scores == (0.0, 1.0)
    with pytest.raises(ValueError):
        GAME.apply(state, {0: [], 1: []})


def test_it_is_a_draw_on_equal_counts_and_over_at_once_with_zero_iterations():
    state = GAME.initial_state(seed=0, options={"maxGameIterations": 0})
    assert GAME.to_move(state) == ()
    assert GAME.outcome(state).scores == (0.5, 0.5)
    state = GAME.initial_state(seed=0, options={"maxGameIterations": 0, "start": [[[0, 0]], []]})
    assert GAME.outcome(state).scores == (1.0, 0.0)


def test_it_round_trips_states_through_json():
    state = GAME.initial_state(seed=0, options={"collisions": "second-player"})
    state = step(state, [[11, 7], [12, 7]], [[10, 17], [10, 18], [9, 17]])
    data = json.loads(json.dumps(GAME.to_json(state)))
    assert GAME.from_json(data) == state
    assert GAME.options_of(state)["collisions"] == "second-player"


def test_it_plays_a_pass_as_an_empty_list():
    state = GAME.initial_state(seed=0)
    assert GAME.default_action(state, 0) == []
    after = GAME.apply(state, {0: GAME.default_action(state, 0), 1: []})
    assert after.budgets == (6, 6)
    # A missing seat is a pass too.
    assert GAME.apply(state, {1: []}) == after


# -- built-in bots (§9) -----------------------------------------------------------------


def naive_reach(field: list[str], distance: int) -> list[list[int]]:
    rows, cols = len(field), len(field[0])
    return [
        [r, c]
        for r in range(rows)
        for c in range(cols)
        if field[r][c] == "."
        and any(
            field[(r + dr) % rows][(c + dc) % cols] == "#"
            for dr in range(-distance, distance + 1)
            for dc in range(-distance, distance + 1)
        )
    ]


def naive_grower(message) -> dict:
    """§9's grower read literally: recompute every gain from scratch at each pick."""
    field = [list(row) for row in message["field"]]
    rows, cols = len(field), len(field[0])
    reach = naive_reach(message["field"], message["maxColonisationDistance"])

    def value_after_step(r, c):
        f = e = 0
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if (dr, dc) != (0, 0):
                    ch = field[(r + dr) % rows][(c + dc) % cols]
                    f += ch == "#"
                    e += ch == "O"
        cell = field[r][c]
        if cell == ".":
            return 1 if f - e == 3 else -1 if f - e == -3 else 0
        if cell == "#":
            return 1 if f - e in (2, 3) else 0
        return -1 if e - f in (2, 3) else 0

    def block_value(r, c):
        block = {((r + dr) % rows, (c + dc) % cols) for dr in (-1, 0, 1) for dc in (-1, 0, 1)}
        return sum(value_after_step(x, y) for x, y in block)

    chosen: list[list[int]] = []
    while len(chosen) < message["cellsRemaining"]:
        best, best_gain = None, None
        for r, c in reach:
            if [r, c] in chosen:
                continue
            before = block_value(r, c)
            field[r][c] = "#"
            gain = block_value(r, c) - before
            field[r][c] = "."
            if best_gain is None or gain > best_gain:
                best, best_gain = (r, c), gain
        if best is None or best_gain <= 0:
            break
        field[best[0]][best[1]] = "#"
        chosen.append(list(best))
    return {"cells": chosen}


def sample_messages():
    """Messages from real games: default board (early and late) and small or odd boards."""
    cases = [
        ({}, [0, 1, 7, 40, 150]),
        ({"maxGameIterations": 60, "startingCells": 20}, [0, 3, 30]),
        (
            {
                "rows": 3,
                "cols": 5,
                "start": [[[0, 0], [0, 1]], [[2, 3]]],
                "maxColonisationDistance": 1,
                "maxGameIterations": 8,
            },
            range(8),
        ),
        (
            {"rows": 2, "cols": 2, "start": [[[0, 0]], [[1, 1]]], "maxGameIterations": 5},
            range(5),
        ),
        (
            {"rows": 1, "cols": 6, "start": [[[0, 0]], [[0, 3]]], "maxGameIterations": 5},
            range(5),
        ),
    ]
    for options, iterations in cases:
        states, _, _ = play_builtin(GAME, 3, ["grower", "random"], options=options)
        for i in iterations:
            if i < len(states) - 1:
                for seat in (0, 1):
                    yield json.loads(
                        GAME.encode_message(GAME.observation(states[i], seat, Context()))
                    )


def test_it_grows_exactly_as_the_grower_rule_says():
    grower = GAME.builtin_bots["grower"]()
    checked = 0
    for message in sample_messages():
        assert grower(message, rng_for(0, 0)) == naive_grower(message), message["currIteration"]
        checked += 1
    assert checked >= 40


def test_it_plays_random_from_the_reach_with_the_given_rng():
    bot = GAME.builtin_bots["random"]()
    for n, message in enumerate(sample_messages()):
        reach = naive_reach(message["field"], message["maxColonisationDistance"])
        expected = rng_for(n, 1).sample(reach, min(message["cellsRemaining"], len(reach)))
        assert bot(message, rng_for(n, 1)) == {"cells": expected}


def test_it_has_a_dummy_that_never_plays():
    message = GAME.observation(GAME.initial_state(seed=0), 0, Context())
    assert GAME.builtin_bots["dummy"]()(message, rng_for(0, 0)) == {"cells": []}


def test_it_answers_with_every_built_in_even_with_a_full_budget():
    # It should answer a legal move with every built-in, even with a full budget (the time an
    # answer takes, this machine's speed, is measured by bench/moves.py).
    state = GAME.initial_state(seed=0, options={"startingCells": 15})
    message = GAME.observation(state, 0, Context())
    for name in GAME.builtin_bots:
        reply = GAME.builtin_bots[name]()(message, rng_for(0, 0))
        GAME.parse_action(state, 0, reply)  # (raises IllegalAction if it is not)


# -- the generic harness and strength ---------------------------------------------------


def test_it_passes_check_game_with_default_options():
    report = check_game(GAME, range(4))
    assert report.games == 4 and report.turns == 4 * 500
    assert set(report.reasons) == {"cells"}


@pytest.mark.parametrize(
    "options",
    [
        {"maxGameIterations": 40},
        {"maxGameIterations": 40, "collisions": "second-player", "timerMs": None},
        {"maxGameIterations": 40, "ruleset": "classic", "on_fault": "pass"},
        {
            "rows": 8,
            "cols": 6,
            "start": [[[1, 1], [1, 2], [2, 1]], [[5, 4], [6, 4], [6, 3]]],
            "maxCellCapacity": 4,
            "startingCells": 6,
            "maxGameIterations": 40,
        },
        {
            "rows": 2,
            "cols": 5,
            "start": [[[0, 0], [1, 0]], [[0, 3]]],
            "maxColonisationDistance": 1,
            "maxGameIterations": 20,
        },
        {"rows": 1, "cols": 1, "start": [[], []], "maxGameIterations": 5},
        {"maxColonisationDistance": 0, "maxGameIterations": 10},
    ],
)
def test_it_passes_check_game_with_other_options(options):
    report = check_game(GAME, range(10), options=options)
    assert report.games == 10


@pytest.mark.slow
def test_it_lets_grower_beat_random():
    # It should win at least 90% of 50 full default games, from either seat.
    wins = 0
    for seed in range(50):
        names = ["grower", "random"] if seed % 2 == 0 else ["random", "grower"]
        _, _, outcome = play_builtin(GAME, seed, names)
        wins += outcome.scores[names.index("grower")] == 1.0
    assert wins >= 45, wins


def test_it_steps_a_recorded_mid_game_again_to_the_same_states():
    # It should step each mid-game position of a played game to the state that followed it
    # (the transitions a second, this machine's speed: bench/engines.py gconway).
    states, history, _ = play_builtin(GAME, 0, ["grower", "random"])
    for i in range(100, 300):
        assert GAME.apply(states[i], history[i]) == states[i + 1], i


def test_it_refuses_boards_and_games_beyond_the_platform_limits():
    # It should refuse what would let one request exhaust the server (a 20000x20000 board).
    for bad in ({"rows": 20_000}, {"cols": 257}, {"maxGameIterations": 10**9}):
        with pytest.raises(ValueError):
            GAME.initial_state(seed=0, options=bad)
    assert (
        GAME.initial_state(seed=0, options={"rows": 256, "cols": 256, "start": [[], []]})
        is not None
    )
