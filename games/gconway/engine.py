"""gconway: AI Battleground's two-player Game of Life (BEST Zagreb, 2015; rules: ``README.md``).

Two colonies share a torus. Every turn both seats, blind, bring dead cells within
``maxColonisationDistance`` of their colony to life, as many as their budget (checked in the
order budget, alive, distance, index); a cell both name stays dead or goes to seat 1
(``collisions``); then one two-colour life step (``diff`` or Conway's ``classic``). After
``maxGameIterations`` steps the bigger colony wins.
"""

from __future__ import annotations

import copy
import functools
import itertools
from dataclasses import dataclass
from typing import Any

from games.base import (
    JSON,
    Context,
    Game,
    IllegalAction,
    Outcome,
    Policy,
    choice_option,
    int_option,
    merge_options,
)

__all__ = ["GAME", "Gconway", "GconwayState"]

DEAD, SEAT0, SEAT1 = 0, 1, 2

DEFAULT_START = [
    [[11, 5], [11, 6], [12, 5], [12, 6]],
    [[11, 17], [11, 18], [12, 17], [12, 18]],
]


# -- state ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GconwayState:
    """A gconway position; ``placed`` and ``contested`` are the transition that made it."""

    options: dict
    field: bytes
    budgets: tuple[int, int]
    iteration: int
    placed: tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] = ((), ())
    contested: tuple[tuple[int, int], ...] = ()

    @property
    def rows(self) -> int:
        return self.options["rows"]

    @property
    def cols(self) -> int:
        return self.options["cols"]

    def live(self) -> tuple[int, int]:
        return self.field.count(SEAT0), self.field.count(SEAT1)

    def __hash__(self) -> int:  # options is a dict: hash the position only
        return hash((self.field, self.budgets, self.iteration, self.placed, self.contested))


# -- options ----------------------------------------------------------------------------


def _check_start(value: Any) -> list:
    """Shape of ``start`` (bounds are checked once rows and cols are known)."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError("expected a list of 2 lists of [row, col]")
    out = []
    for cells in value:
        if not isinstance(cells, list | tuple):
            raise ValueError("expected a list of 2 lists of [row, col]")
        if len(cells) > MAX_START_CELLS:  # before looking at them
            raise ValueError(f"more than {MAX_START_CELLS} cells for one seat")
        seat_cells = []
        for pair in cells:
            if (
                not isinstance(pair, list | tuple)
                or len(pair) != 2
                or any(isinstance(x, bool) or not isinstance(x, int) for x in pair)
            ):
                raise ValueError(f"expected [row, col] integers, got {pair!r}")
            seat_cells.append([pair[0], pair[1]])
        out.append(seat_cells)
    return out


MAX_SIDE = 256  # platform limit (the original event used 24)
MAX_ITERATIONS = 100_000
MAX_BUDGET = 4096  # platform limit on budgets (the original event used 15): cells per reply
MAX_TIMER_MS = 600_000  # platform limit on the time-bank increment (a bank of 50 minutes)
MAX_START_CELLS = 16_384  # platform limit on a seat's start list (a quarter of 256x256)

_VALIDATORS = {
    # Platform limits beyond the spec's "int >= 0/1": a board, a game, a budget (the length of
    # a reply) or a reach this big would let one request (the API's stateless simulate, a
    # challenge) or one bot's reply exhaust the server's memory or time. A reach beyond the
    # side covers the whole torus already.
    "rows": int_option(1, MAX_SIDE),
    "cols": int_option(1, MAX_SIDE),
    "cellGainPerTurn": int_option(0, MAX_BUDGET),
    "maxCellCapacity": int_option(0, MAX_BUDGET),
    "startingCells": int_option(0, MAX_BUDGET),
    "maxColonisationDistance": int_option(0, MAX_SIDE),
    "maxGameIterations": int_option(0, MAX_ITERATIONS),
    "ruleset": choice_option("diff", "classic"),
    "start": _check_start,
    "timerMs": int_option(1, MAX_TIMER_MS, nullable=True),
    "collisions": choice_option("cancel", "second-player"),
    "on_fault": choice_option("forfeit", "pass"),
}


# -- the fast life step -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Board:
    """Masks for one board size: one byte lane per cell, lane i = cell i (little-endian)."""

    rows: int
    cols: int
    n: int
    full: int
    first_col: int
    not_first_col: int
    last_col: int
    not_last_col: int


@functools.lru_cache(maxsize=64)
def _board(rows: int, cols: int) -> _Board:
    n = rows * cols
    first = bytes(1 if i % cols == 0 else 0 for i in range(n))
    last = bytes(1 if i % cols == cols - 1 else 0 for i in range(n))

    def mask(flags: bytes) -> int:
        return int.from_bytes(flags.translate(_FLAG_TO_FF), "little")

    full = (1 << (8 * n)) - 1
    return _Board(
        rows, cols, n, full, mask(first), full ^ mask(first), mask(last), full ^ mask(last)
    )


_FLAG_TO_FF = bytes([0, 0xFF] + [0] * 254)


def _west(x: int, b: _Board) -> int:
    """Each lane takes the value of (r, c - 1) on the torus (the shifts below likewise)."""
    return ((x << 8) & b.not_first_col) | ((x >> (8 * (b.cols - 1))) & b.first_col)


def _east(x: int, b: _Board) -> int:
    """Each lane takes the value of (r, c + 1)."""
    return ((x >> 8) & b.not_last_col) | ((x << (8 * (b.cols - 1))) & b.last_col)


def _north(x: int, b: _Board) -> int:
    """Each lane takes the value of (r - 1, c)."""
    return ((x << (8 * b.cols)) | (x >> (8 * b.cols * (b.rows - 1)))) & b.full


def _south(x: int, b: _Board) -> int:
    """Each lane takes the value of (r + 1, c)."""
    return ((x >> (8 * b.cols)) | (x << (8 * b.cols * (b.rows - 1)))) & b.full


def _neighbour_sums(x: int, b: _Board) -> int:
    """Per lane, the sum of the 8 torus neighbours; lanes at most 28, so no sum carries over."""
    h = x + _west(x, b) + _east(x, b)
    return h + _north(h, b) + _south(h, b) - x


@functools.lru_cache(maxsize=64)
def _low_cols(rows: int, cols: int, k: int) -> int:
    """0xFF lanes in the first ``k`` columns of every row."""
    return int.from_bytes((b"\xff" * k + bytes(cols - k)) * rows, "little")


def _shift_cols(x: int, b: _Board, k: int) -> int:
    """Each lane takes the value of (r, c - k) on the torus (0 < k < cols)."""
    low = _low_cols(b.rows, b.cols, k)
    return ((x << (8 * k)) & (b.full ^ low)) | ((x >> (8 * (b.cols - k))) & low)


def _shift_rows(x: int, b: _Board, k: int) -> int:
    """Each lane takes the value of (r - k, c) on the torus (0 < k < rows)."""
    return ((x << (8 * b.cols * k)) | (x >> (8 * b.cols * (b.rows - k)))) & b.full


def _window(x: int, b: _Board, length: int, shift) -> int:
    """OR of ``shift(x, b, d)`` for d in [0, length), by doubling (a few operations)."""
    span = 1
    while 2 * span <= length:
        x |= shift(x, b, span)
        span *= 2
    if span < length:  # the last window overlaps the first: harmless for an OR
        x |= shift(x, b, length - span)
    return x


def _dilate(x: int, b: _Board, distance: int) -> int:
    """0/1 lanes: 1 where a 1 lies within Chebyshev ``distance`` on the torus."""
    for size, shift in ((b.cols, _shift_cols), (b.rows, _shift_rows)):
        length = min(2 * distance + 1, size)
        if length == size:  # the whole ring: every offset in [0, size)
            x = _window(x, b, size, shift)
        elif distance:  # a window of offsets [0, 2D], then back by D: offsets [-D, D]
            x = shift(_window(x, b, length, shift), b, size - distance)
    return x


def _table(entries: dict[int, int]) -> bytes:
    table = bytearray(256)
    for key, value in entries.items():
        table[key] = value
    return bytes(table)


# diff: the lane value is 1 + own0 - own1 per cell (dead 1, seat 0 2, seat 1 0), so the
# neighbour sum is 8 + p0 - p1; the key is that plus 17 * cell.
_DIFF_INPUT = _table({DEAD: 1, SEAT0: 2, SEAT1: 0})
_DIFF_RULE = _table(
    {
        17 * cell + 8 + d: (
            (SEAT0 if d == 3 else SEAT1 if d == -3 else DEAD)
            if cell == DEAD
            else (SEAT0 if d in (2, 3) else DEAD)
            if cell == SEAT0
            else (SEAT1 if -d in (2, 3) else DEAD)
        )
        for cell in (DEAD, SEAT0, SEAT1)
        for d in range(-8, 9)
    }
)
# classic: lane value 1 for seat 0 and 9 for seat 1, so the sum is p0 + 9 * p1; key + 81 * cell.
_CLASSIC_INPUT = _table({DEAD: 0, SEAT0: 1, SEAT1: 9})
_CLASSIC_RULE = _table(
    {
        81 * cell + p0 + 9 * p1: (
            (SEAT0 if (p0, p1) == (3, 0) else SEAT1 if (p0, p1) == (0, 3) else DEAD)
            if cell == DEAD
            else (SEAT0 if p0 in (2, 3) else DEAD)
            if cell == SEAT0
            else (SEAT1 if p1 in (2, 3) else DEAD)
        )
        for cell in (DEAD, SEAT0, SEAT1)
        for p0 in range(9)
        for p1 in range(9)
    }
)
_RULESETS = {"diff": (_DIFF_INPUT, _DIFF_RULE, 17), "classic": (_CLASSIC_INPUT, _CLASSIC_RULE, 81)}


def life_step(field: bytes, rows: int, cols: int, ruleset: str = "diff") -> bytes:
    """One two-colour life step (§4.5): the field as one big integer, eight shifts, a translate."""
    b = _board(rows, cols)
    weights, rule, stride = _RULESETS[ruleset]
    counts = _neighbour_sums(int.from_bytes(field.translate(weights), "little"), b)
    key = counts + stride * int.from_bytes(field, "little")
    return key.to_bytes(b.n, "little").translate(rule)


# -- views ------------------------------------------------------------------------------

_VIEW = (
    _table({DEAD: ord("."), SEAT0: ord("#"), SEAT1: ord("O")}),
    _table({DEAD: ord("."), SEAT0: ord("O"), SEAT1: ord("#")}),
)
_NEUTRAL = _table({DEAD: ord("."), SEAT0: ord("0"), SEAT1: ord("1")})
_FROM_NEUTRAL = _table({ord("."): DEAD, ord("0"): SEAT0, ord("1"): SEAT1})


def _rows_of(field: bytes, table: bytes, cols: int) -> list[str]:
    text = field.translate(table).decode("ascii")
    return [text[i : i + cols] for i in range(0, len(text), cols)]


@functools.lru_cache(maxsize=256)
def _wrapped_offsets(reach: int, size: int) -> tuple[int, ...]:
    """Distinct offsets in [-reach, reach] modulo ``size`` (made once per board)."""
    if 2 * reach + 1 >= size:
        return tuple(range(size))
    return tuple(d % size for d in range(-reach, reach + 1))


#: window lookups above which parse_action judges the distance with a reach mask instead
_SCAN_LIMIT = 4096
#: per seat, the field as 0/1 lanes of that seat's live cells
_OWNER = (_table({SEAT0: 1}), _table({SEAT1: 1}))


# -- the engine -------------------------------------------------------------------------


class Gconway(Game):
    """AI Battleground: Game of Life. Two colonies on a torus; each turn both seats secretly
    bring dead cells near their colony to life (within a budget that refills every turn),
    then one two-colour life step runs; after a fixed number of steps the bigger colony
    wins."""

    slug = "gconway"
    title = "AI Battleground: Game of Life"
    #: why a match ends, in words (``Game.reasons``)
    reasons = {
        "cells": "more live cells after the last generation",
    }
    #: why a reply was refused as illegal, in words (``Game.illegal``)
    illegal = {
        "alive": "that cell is already alive",
        "bad_reply": "the reply is not a list of cells",
        "budget": "more cells than the turn's budget",
        "distance": "a cell out of reach",
        "index": "a cell outside the board",
    }
    num_players = 2
    wire = "json"
    default_options = {
        "rows": 24,
        "cols": 24,
        "cellGainPerTurn": 3,
        "maxCellCapacity": 15,
        "startingCells": 3,
        "maxColonisationDistance": 2,
        "maxGameIterations": 500,
        "ruleset": "diff",
        "start": DEFAULT_START,
        "timerMs": 300,
        "collisions": "cancel",
        "on_fault": "forfeit",
    }

    # -- options and policy ---------------------------------------------------------

    def resolve_options(self, options: dict | None = None) -> dict:
        merged = merge_options(self.default_options, options, _VALIDATORS)
        rows, cols = merged["rows"], merged["cols"]
        for cells in merged["start"]:
            if len(cells) > rows * cols:
                raise ValueError(f"option 'start': more than {rows * cols} cells for one seat")
            for r, c in cells:
                if not (0 <= r < rows and 0 <= c < cols):
                    raise ValueError(f"option 'start': cell {[r, c]} is outside the board")
        return merged

    def policy(self, options: dict) -> Policy:
        options = self.resolve_options(options)
        return Policy(
            move_timeout_ms=None,
            bank_increment_ms=options["timerMs"],
            on_fault=options["on_fault"],
            error_line_on_forfeit=True,
        )

    # -- the state machine ----------------------------------------------------------

    def initial_state(self, *, seed: int = 0, options: dict | None = None) -> GconwayState:
        opts = self.resolve_options(options)
        rows, cols = opts["rows"], opts["cols"]
        field = bytearray(rows * cols)
        for value, cells in zip((SEAT0, SEAT1), opts["start"], strict=True):
            for r, c in cells:
                field[r * cols + c] = value
        budget = opts["startingCells"]
        return GconwayState(options=opts, field=bytes(field), budgets=(budget, budget), iteration=0)

    def to_move(self, state: GconwayState) -> tuple[int, ...]:
        if state.iteration >= state.options["maxGameIterations"]:
            return ()
        return (0, 1)

    def observation(self, state: GconwayState, seat: int, ctx: Context) -> JSON:
        opts = state.options
        message = {
            "field": _rows_of(state.field, _VIEW[seat], opts["cols"]),
            "cellsRemaining": state.budgets[seat],
            "cellGainPerTurn": opts["cellGainPerTurn"],
            "maxCellCapacity": opts["maxCellCapacity"],
            "maxColonisationDistance": opts["maxColonisationDistance"],
            "currIteration": state.iteration,
            "maxGameIterations": opts["maxGameIterations"],
        }
        timer = opts["timerMs"]
        if timer is not None:
            message["timeGainPerTurn"] = timer
            left = ctx.time_left_ms
            message["timeLeftForMove"] = 5 * timer if left is None else left
        return message

    def parse_action(self, state: GconwayState, seat: int, raw: JSON) -> list[list[int]]:
        # The work is bounded before it is done: a list longer than the budget (at most
        # MAX_BUDGET) is refused before its entries are read, and each distinct wrapped target is
        # judged once (duplicates cost a set lookup), by a window scan when that is cheap or
        # else by one lookup in the seat's reach mask (a few big-integer operations).
        budget = state.budgets[seat]
        cells = _parse_cells(raw, budget)  # shape, then 1. budget (duplicates count)
        if not cells:  # nothing placed: no cell to judge
            return cells
        opts = state.options
        rows, cols = opts["rows"], opts["cols"]
        field = state.field
        # 2. alive: the wrapped target must be dead
        targets = [(r % rows) * cols + c % cols for r, c in cells]
        for (r, c), i in zip(cells, targets, strict=True):
            if field[i] != DEAD:
                raise IllegalAction("alive", f"cell {[r, c]} is alive")
        # 3. distance: an own live cell within Chebyshev D of the wrapped target
        reach = opts["maxColonisationDistance"]
        own = SEAT0 if seat == 0 else SEAT1
        distinct = set(targets)
        row_offsets = _wrapped_offsets(reach, rows)
        col_offsets = _wrapped_offsets(reach, cols)
        if len(distinct) * len(row_offsets) * len(col_offsets) <= _SCAN_LIMIT:
            in_reach = {
                i
                for i in distinct
                if any(
                    field[((i // cols + dr) % rows) * cols + (i % cols + dc) % cols] == own
                    for dr in row_offsets
                    for dc in col_offsets
                )
            }
        else:
            b = _board(rows, cols)
            mask = _dilate(int.from_bytes(field.translate(_OWNER[seat]), "little"), b, reach)
            lanes = mask.to_bytes(b.n, "little")
            in_reach = {i for i in distinct if lanes[i]}
        if len(in_reach) < len(distinct):
            for (r, c), i in zip(cells, targets, strict=True):
                if i not in in_reach:
                    raise IllegalAction("distance", f"cell {[r, c]} is out of reach")
        # 4. index: no wrapping for the placement itself
        for r, c in cells:
            if not (0 <= r < rows and 0 <= c < cols):
                raise IllegalAction("index", f"cell {[r, c]} is outside the board")
        return cells

    def default_action(self, state: GconwayState, seat: int) -> list:
        return []

    def apply(self, state: GconwayState, actions: dict[int, Any]) -> GconwayState:
        if not self.to_move(state):
            raise ValueError("the game is over")
        opts = state.options
        rows, cols = opts["rows"], opts["cols"]
        lists = [[(r, c) for r, c in actions.get(seat) or ()] for seat in (0, 1)]
        contested = set(lists[0]) & set(lists[1])
        if contested:
            keep0 = [cell for cell in lists[0] if cell not in contested]
            keep1 = lists[1]
            if opts["collisions"] == "cancel":
                keep1 = [cell for cell in lists[1] if cell not in contested]
        else:
            keep0, keep1 = lists
        placed = (tuple(dict.fromkeys(keep0)), tuple(dict.fromkeys(keep1)))
        field = bytearray(state.field)
        for value, cells in zip((SEAT0, SEAT1), placed, strict=True):
            for r, c in cells:
                if not (0 <= r < rows and 0 <= c < cols):
                    raise ValueError(f"cell {[r, c]} is outside the board (not parsed?)")
                field[r * cols + c] = value
        new_field = life_step(bytes(field), rows, cols, opts["ruleset"])
        cap, gain = opts["maxCellCapacity"], opts["cellGainPerTurn"]
        budgets = tuple(
            min(cap, b - len(cells) + gain) for b, cells in zip(state.budgets, lists, strict=True)
        )
        return GconwayState(  # not dataclasses.replace: it inspects the fields at every call
            options=opts,
            field=new_field,
            budgets=budgets,
            iteration=state.iteration + 1,
            placed=placed,
            contested=tuple(sorted(contested)),
        )

    def outcome(self, state: GconwayState) -> Outcome | None:
        if self.to_move(state):
            return None
        live0, live1 = state.live()
        if live0 > live1:
            return Outcome((1.0, 0.0), "cells")
        if live1 > live0:
            return Outcome((0.0, 1.0), "cells")
        return Outcome((0.5, 0.5), "cells")

    def frame(self, state: GconwayState) -> JSON:
        return {
            "field": _rows_of(state.field, _NEUTRAL, state.cols),
            "live": list(state.live()),
            "budgets": list(state.budgets),
            "iteration": state.iteration,
            "maxIterations": state.options["maxGameIterations"],
            "placed": [[[r, c] for r, c in cells] for cells in state.placed],
            "contested": [[r, c] for r, c in state.contested],
        }

    def to_json(self, state: GconwayState) -> JSON:
        return {
            "options": copy.deepcopy(state.options),
            "field": _rows_of(state.field, _NEUTRAL, state.cols),
            "budgets": list(state.budgets),
            "iteration": state.iteration,
            "placed": [[[r, c] for r, c in cells] for cells in state.placed],
            "contested": [[r, c] for r, c in state.contested],
        }

    def from_json(self, data: JSON) -> GconwayState:
        opts = self.resolve_options(data["options"])
        rows, cols = opts["rows"], opts["cols"]
        lines = data["field"]
        if len(lines) != rows or any(len(line) != cols for line in lines):
            raise ValueError("field does not match rows x cols")
        text = "".join(lines)
        if set(text) - set(".01"):
            raise ValueError("field may only contain '.', '0' and '1'")
        field = text.encode("ascii").translate(_FROM_NEUTRAL)
        return GconwayState(
            options=opts,
            field=field,
            budgets=(int(data["budgets"][0]), int(data["budgets"][1])),
            iteration=int(data["iteration"]),
            placed=tuple(tuple((r, c) for r, c in cells) for cells in data.get("placed", ((), ()))),
            contested=tuple((r, c) for r, c in data.get("contested", ())),
        )

    # -- the platform's questions (the parts in games/gconway/) ------------------------

    order = 3
    human_options = {"timerMs": 10_000, "maxGameIterations": 60}

    def doc_examples(self):
        from games.gconway.docs import examples

        return examples(self)


def _parse_cells(raw: JSON, budget: int) -> list[list[int]]:
    """§5.3's ``cells``, their length checked first (§4.3's check 1) so no work goes past it."""
    if not isinstance(raw, dict):
        raise IllegalAction("bad_reply", "the reply must be a JSON object")
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise IllegalAction("bad_reply", 'the reply needs "cells": an array of [row, col]')
    if len(cells) > budget:  # cheap checks first: a platform choice, see the docstring
        raise IllegalAction("budget", f"{len(cells)} cells for a budget of {budget}")
    if not (
        set(map(type, cells)) <= {list}
        and set(map(len, cells)) <= {2}
        and set(map(type, itertools.chain.from_iterable(cells))) <= {int}
    ):
        for pair in cells:
            if (
                type(pair) is not list
                or len(pair) != 2
                or type(pair[0]) is not int
                or type(pair[1]) is not int
            ):
                raise IllegalAction("bad_reply", f"not a [row, col] pair of integers: {pair!r}")
    return [[r, c] for r, c in cells]


# -- built-in bots (§9) -----------------------------------------------------------------


_OWN = _table({ord("#"): 1})
_EMPTY = _table({ord("."): 1})


def _reach(field: list[str], distance: int) -> tuple[int, int, list[int]]:
    """(rows, cols, flat indices of the dead cells within ``distance`` of a ``#`` cell)."""
    rows, cols = len(field), len(field[0])
    b = _board(rows, cols)
    flat = "".join(field).encode("ascii")
    near = _dilate(int.from_bytes(flat.translate(_OWN), "little"), b, distance)
    lanes = (near & int.from_bytes(flat.translate(_EMPTY), "little")).to_bytes(b.n, "little")
    return rows, cols, [i for i, lane in enumerate(lanes) if lane]


def _dummy_bot():
    def play(message: JSON, rng) -> JSON:
        return {"cells": []}

    return play


def _random_bot():
    def play(message: JSON, rng) -> JSON:
        _, cols, reach = _reach(message["field"], message["maxColonisationDistance"])
        cells = [[i // cols, i % cols] for i in reach]
        k = max(0, min(message["cellsRemaining"], len(cells)))
        return {"cells": rng.sample(cells, k)}

    return play


@functools.lru_cache(maxsize=64)
def _grower_blocks(rows: int, cols: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per cell i, (x, what making i own adds to x's key) over i's 3x3 block on the torus: one
    per offset landing on x (on small boards several do), plus 17 for i itself."""
    blocks = []
    for r in range(rows):
        for c in range(cols):
            i = r * cols + c
            steps = {i: 17}
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if (dr, dc) != (0, 0):
                        x = ((r + dr) % rows) * cols + (c + dc) % cols
                        steps[x] = steps.get(x, 0) + 1
            blocks.append(tuple(steps.items()))
    return tuple(blocks)


# The grower's view of a cell is its key 17 * cell + 8 + d, where cell is 0 dead, 1 own,
# 2 enemy and d = own - enemy neighbours: the engine's diff encoding with "own" as seat 0.
# _GROWER_VALUE[key] is the cell's value after one diff step: +1 own, -1 enemy, 0 dead.
_GROWER_VALUE = tuple({SEAT0: 1, SEAT1: -1, DEAD: 0}[rule] for rule in _DIFF_RULE[: 17 * 3])
_BOT_CELL = _table({ord("."): DEAD, ord("#"): SEAT0, ord("O"): SEAT1})


def _grower_bot():
    def play(message: JSON, rng) -> JSON:
        field = message["field"]
        rows, cols, reach = _reach(field, message["maxColonisationDistance"])
        budget = message["cellsRemaining"]
        if not reach or budget <= 0:
            return {"cells": []}
        blocks = _grower_blocks(rows, cols)
        cells = "".join(field).encode("ascii").translate(_BOT_CELL)
        counts = _neighbour_sums(
            int.from_bytes(cells.translate(_DIFF_INPUT), "little"), _board(rows, cols)
        )
        key = [
            17 * cell + count
            for cell, count in zip(cells, counts.to_bytes(rows * cols, "little"), strict=True)
        ]
        value = _GROWER_VALUE

        def gain(i: int) -> int:
            total = 0
            for x, step in blocks[i]:
                k = key[x]
                total += value[k + step] - value[k]
            return total

        gains = {i: gain(i) for i in reach}  # reach is row-major, so the dict order is too
        near_rows, near_cols = _wrapped_offsets(2, rows), _wrapped_offsets(2, cols)
        chosen: list[list[int]] = []
        while len(chosen) < budget and gains:
            best, best_gain = -1, 0
            for i, g in gains.items():
                if g > best_gain:  # strict: ties go to the first in row-major order
                    best, best_gain = i, g
            if best_gain <= 0:
                break
            del gains[best]
            for x, step in blocks[best]:
                key[x] += step
            r, c = divmod(best, cols)
            chosen.append([r, c])
            # only cells within distance 2 of the new cell share a block cell with it
            for dr in near_rows:
                base = ((r + dr) % rows) * cols
                for dc in near_cols:
                    j = base + (c + dc) % cols
                    if j in gains:
                        gains[j] = gain(j)
        return {"cells": chosen}

    return play


Gconway.builtin_bots = {"dummy": _dummy_bot, "random": _random_bot, "grower": _grower_bot}

GAME = Gconway()
