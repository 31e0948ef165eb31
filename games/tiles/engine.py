"""Ajax Tiles (rules: ``README.md``; section numbers below refer to it).

On a 24x12 board, a click on an empty tile paints it and battles the enemy tiles it touches (the
bigger group wins), a click on an own tile nukes it and contaminates its neighbours; whoever owns
more tiles when the game ends wins. A board is one 288-character string, ``cells[x * 12 + y]``
("." for empty), so the original's scan and probe orders are ascending index order."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from games.base import (
    JSON,
    Context,
    Game,
    IllegalAction,
    Outcome,
    Policy,
    bool_option,
    int_option,
    merge_options,
    rng_for,
)

__all__ = [
    "GAME",
    "SAMPLE_STRATEGIES",
    "Tiles",
    "TilesState",
    "board_string",
    "board_text",
]

WIDTH = 24
HEIGHT = 12
SIZE = WIDTH * HEIGHT

EMPTY, RED, BLUE, CONTAMINATED, NUKED = "", "r", "b", "d", "n"
TILE_VALUES = frozenset((EMPTY, RED, BLUE, CONTAMINATED, NUKED))
COLORS = (RED, BLUE)
PASS = (-1, -1)
MOVE_KINDS = frozenset(("paint", "capture", "repelled", "nuke", "pass"))

SAMPLE_STRATEGIES = ("random", "expand", "fearful", "contain")


def _neighbour_table() -> tuple[tuple[int, ...], ...]:
    """In-board orthogonal neighbours of each index, in ascending index order."""
    table = []
    for i in range(SIZE):
        x, y = divmod(i, HEIGHT)
        around = []
        if x > 0:
            around.append(i - HEIGHT)
        if y > 0:
            around.append(i - 1)
        if y < HEIGHT - 1:
            around.append(i + 1)
        if x < WIDTH - 1:
            around.append(i + HEIGHT)
        table.append(tuple(around))
    return tuple(table)


NEIGHBOURS = _neighbour_table()
# The sample AI's probe order: (x-1, y), (x, y-1), (x, y) itself, (x, y+1), (x+1, y).
PROBE = tuple(tuple(sorted((*around, i))) for i, around in enumerate(NEIGHBOURS))
_XY = tuple(divmod(i, HEIGHT) for i in range(SIZE))
_DOT = "."  # an empty tile in the flat board string
_BOARD_CHARS = frozenset(".rbdn")
_FRAME_TABLE = str.maketrans({RED: "0", BLUE: "1"})
_UNQUOTE = str.maketrans("", "", '[]",')
_NO_LETTERS = str.maketrans("", "", "rbdn")


# -- boards ---------------------------------------------------------------------------
#
# A board is held as one 288-character string, character ``x * 12 + y`` being tile
# (x, y): "." for "" (empty), else the tile value itself. It is immutable, compact, cheap to
# copy, count and compare, and converts to and from every external form quickly.


def board_string(board: Any) -> str:
    """A 24x12 ``board[x][y]`` as a flat board string; ``ValueError`` for a bad shape or value."""
    if not isinstance(board, list | tuple) or len(board) != WIDTH:
        raise ValueError(f"board must be an array of {WIDTH} columns")
    for x, column in enumerate(board):
        if not isinstance(column, list | tuple) or len(column) != HEIGHT:
            raise ValueError(f"board[{x}] must be an array of {HEIGHT} tile values")
    values = [value for column in board for value in column]
    try:
        valid = TILE_VALUES.issuperset(values)
    except TypeError:  # an unhashable value
        valid = False
    if not valid:
        i = next(i for i, value in enumerate(values) if not _is_tile_value(value))
        x, y = _XY[i]
        raise ValueError(f"board[{x}][{y}] is not a tile value: {values[i]!r}")
    return "".join([value or _DOT for value in values])


def _is_tile_value(value: Any) -> bool:
    return isinstance(value, str) and value in TILE_VALUES


def board_lists(cells: str) -> list[list[str]]:
    """The flat board string as ``board[x][y]`` arrays (the wire form)."""
    values = ["" if char == _DOT else char for char in cells]
    return [values[i : i + HEIGHT] for i in range(0, SIZE, HEIGHT)]


def board_text(cells: str) -> str:
    """The wire form as compact JSON text, e.g. ``[["","r",...],...]`` (925+ bytes)."""
    tokens = '"' + '","'.join(cells) + '"'  # one 3-character token every 4 characters
    step = 4 * HEIGHT
    columns = [tokens[i : i + step - 1] for i in range(0, 4 * SIZE, step)]
    return ("[[" + "],[".join(columns) + "]]").replace('"."', '""')


_EMPTY_BOARD_TEXT = board_text(_DOT * SIZE)


def _red_touches_blue(cells: str) -> tuple[int, int] | None:
    """The first adjacent (red, blue) pair of indices, or None (the §4.5 invariant)."""
    i = cells.find(RED)
    while i >= 0:
        for j in NEIGHBOURS[i]:
            if cells[j] == BLUE:
                return i, j
        i = cells.find(RED, i + 1)
    return None


# Bitboards: a set of tiles as an int, tile (x, y) at bit x * 13 + y. Bit 12 of every
# column stays 0, so shifting by 1 (y -/+ 1) or by 13 (x -/+ 1) never wraps a tile onto
# another column: flood fills and neighbourhoods are a few big-integer operations.
STRIDE = HEIGHT + 1
_BIT = tuple(1 << (x * STRIDE + y) for x in range(WIDTH) for y in range(HEIGHT))
_INDEX_OF_BIT = {bit.bit_length() - 1: i for i, bit in enumerate(_BIT)}
_NEIGHBOUR_BITS = {
    _BIT[i].bit_length() - 1: sum(_BIT[j] for j in around) for i, around in enumerate(NEIGHBOURS)
}
_ONLY = {char: str.maketrans({c: "1" if c == char else "0" for c in ".rbdn|"}) for char in ".rb"}


def _bitmasks(cells: str, *chars: str) -> list[int]:
    """The bitboard of each of ``chars`` ("." for empty) on a flat board string."""
    text = "|".join([cells[i : i + HEIGHT] for i in range(0, SIZE, HEIGHT)])[::-1]
    return [int(text.translate(_ONLY[char]), 2) for char in chars]


def _around(mask: int) -> int:
    """The tiles next to ``mask``, including stray bits: intersect it with a tile set."""
    return mask << 1 | mask >> 1 | mask << STRIDE | mask >> STRIDE


def _flood(seed: int, within: int) -> int:
    """The group of ``seed`` (one bit of ``within``) inside the tile set ``within``."""
    group = seed
    while True:
        grown = (
            group | group << 1 | group >> 1 | group << STRIDE | group >> STRIDE
        ) & within  # _around, inlined: this is the hot loop
        if grown == group:
            return group
        group = grown


def _bits(mask: int):
    """The bit positions of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def crater_board(seed: int, craters_min: int, craters_max: int, mirror: bool) -> str:
    """The generated starting board of spec §4.1 (a flat board string)."""
    rng = rng_for(seed, 0, "craters")
    draws = rng.randint(craters_min, craters_max)
    centres: set[int] = set()
    for _ in range(draws):
        x = rng.randrange(WIDTH)
        y = rng.randrange(HEIGHT)
        centres.add(x * HEIGHT + y)
        if mirror:
            centres.add((WIDTH - 1 - x) * HEIGHT + (HEIGHT - 1 - y))
    cells = [_DOT] * SIZE
    for i in centres:
        cells[i] = NUKED
        for j in NEIGHBOURS[i]:
            if j not in centres:
                cells[j] = CONTAMINATED
    return "".join(cells)


def click(cells: str, seat: int, x: int, y: int) -> tuple[str, str]:
    """One click by ``seat`` at (x, y) (§4.3-4.5): the new board and the kind of move."""
    if not (0 <= x < WIDTH and 0 <= y < HEIGHT):
        return cells, "pass"
    i = x * HEIGHT + y
    value = cells[i]
    color = COLORS[seat]
    if value == _DOT:
        enemy = COLORS[1 - seat]
        defenders = [j for j in NEIGHBOURS[i] if cells[j] == enemy]
        painted = cells[:i] + color + cells[i + 1 :]
        if not defenders:
            return painted, "paint"
        # Every strength is measured on the board with P painted, before any removal.
        own, foe = _bitmasks(painted, color, enemy)
        strength = _flood(_BIT[i], own).bit_count()
        judged = 0  # defender groups already found weaker than P
        for j in defenders:
            if not _BIT[j] & judged:
                group = _flood(_BIT[j], foe)
                if group.bit_count() >= strength:
                    return cells, "repelled"
                judged |= group
        board = list(painted)
        for j in defenders:
            board[j] = _DOT
        return "".join(board), "capture"
    if value == color:
        board = list(cells)
        board[i] = NUKED
        for j in NEIGHBOURS[i]:
            if board[j] != NUKED:
                board[j] = CONTAMINATED
        return "".join(board), "nuke"
    return cells, "pass"


# -- options --------------------------------------------------------------------------


def _board_option(value: Any) -> list[list[str]] | None:
    if value is None:
        return None
    cells = board_string(value)
    pair = _red_touches_blue(cells)
    if pair is not None:
        (x, y), (u, v) = _XY[pair[0]], _XY[pair[1]]
        raise ValueError(f"red tile ({x}, {y}) is adjacent to blue tile ({u}, {v})")
    return board_lists(cells)


_VALIDATORS: dict[str, Callable[[Any], Any]] = {
    "craters_min": int_option(0, 144),
    "craters_max": int_option(0, 144),
    "mirror": bool_option,
    "board": _board_option,
    "move_timeout_ms": int_option(1, 600_000),
    # platform limits beyond the spec (every option has an upper bound)
    "max_moves": int_option(1, 1_000_000, nullable=True),
    "max_passes_in_a_row": int_option(1, 1_000_000, nullable=True),
}


DEFAULT_OPTIONS = {
    "craters_min": 3,
    "craters_max": 8,
    "mirror": True,
    "board": None,
    "move_timeout_ms": 30_000,
    "max_moves": 1152,
    "max_passes_in_a_row": 8,
}
_OPTION_KEYS = tuple(DEFAULT_OPTIONS)
_MAX_MOVES = _OPTION_KEYS.index("max_moves")
_MAX_PASSES = _OPTION_KEYS.index("max_passes_in_a_row")


def _freeze_options(options: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Resolved options as (key, value) pairs in ``DEFAULT_OPTIONS`` order, the board as tuples."""
    if tuple(options) != _OPTION_KEYS:
        raise ValueError("options must be resolved first")
    frozen = []
    for key, value in options.items():
        if key == "board" and value is not None:
            value = tuple(tuple(column) for column in value)
        frozen.append((key, value))
    return tuple(frozen)


# -- the state ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TilesState:
    """A position: the flat board, the moves and passes so far, the last move ``(seat, x, y,
    kind)`` and the frozen options."""

    cells: str
    move: int
    passes_in_a_row: int
    last: tuple[int, int, int, str] | None
    options: tuple[tuple[str, Any], ...]


def _end_reason(state: TilesState) -> str | None:
    """Why the game is over (spec §4.7, checked in this order), or None."""
    if _DOT not in state.cells:
        return "board_full"
    max_moves = state.options[_MAX_MOVES][1]
    if max_moves is not None and state.move >= max_moves:
        return "move_limit"
    max_passes = state.options[_MAX_PASSES][1]
    if max_passes is not None and state.passes_in_a_row >= max_passes:
        return "stalemate"
    return None


def _coordinates(action: Any) -> tuple[int, int]:
    if (
        isinstance(action, list | tuple)
        and len(action) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in action)
    ):
        return action[0], action[1]
    raise ValueError(f"not a tiles action: {action!r}")


def _last_json(last: tuple[int, int, int, str] | None) -> JSON:
    if last is None:
        return None
    seat, x, y, kind = last
    return {"seat": seat, "x": x, "y": y, "kind": kind}


# -- the engine -----------------------------------------------------------------------


class Tiles(Game):
    """Ajax Tiles: paint empty tiles, nuke your own, win battles with bigger groups; the
    side owning more tiles when the board is full wins (games/tiles/README.md)."""

    slug = "tiles"
    title = "Ajax Tiles"
    #: why a match ends, in words (``Game.reasons``)
    reasons = {
        "board_full": "no empty tile left",
        "move_limit": "the move limit was reached",
        "stalemate": "eight passes in a row",
    }
    #: why a reply was refused as illegal, in words (``Game.illegal``)
    illegal = {
        "bad_reply": "the reply is not a tile's coordinates",
    }
    num_players = 2
    wire = "form"
    default_options = DEFAULT_OPTIONS

    # -- options and policy -----------------------------------------------------------

    def resolve_options(self, options: dict | None = None) -> dict:
        resolved = merge_options(self.default_options, options, _VALIDATORS)
        if resolved["craters_max"] < resolved["craters_min"]:
            raise ValueError("option 'craters_max': must be >= craters_min")
        return resolved

    def policy(self, options: dict) -> Policy:
        return Policy(move_timeout_ms=options["move_timeout_ms"], on_fault="forfeit")

    def endless(self, options: dict) -> str | None:
        if options["max_moves"] is None and options["max_passes_in_a_row"] is None:
            # games/tiles/README.md §11.2: no guard, as in the original, "not for events"
            return (
                "with max_moves and max_passes_in_a_row both null two passing bots never end a game"
            )
        return None

    def options_of(self, state: TilesState) -> dict:
        options = dict(state.options)
        if options.get("board") is not None:
            options["board"] = [list(column) for column in options["board"]]
        return options

    # -- the state machine ------------------------------------------------------------

    def turn_limit(self, options: dict) -> int | None:
        """Its ``max_moves`` (a move a turn), or None when the game has no cap of moves."""
        return self.resolve_options(options)["max_moves"]

    def initial_state(self, *, seed: int, options: dict | None = None) -> TilesState:
        resolved = self.resolve_options(options)
        if resolved["board"] is not None:
            cells = board_string(resolved["board"])
        else:
            cells = crater_board(
                seed, resolved["craters_min"], resolved["craters_max"], resolved["mirror"]
            )
        return TilesState(cells, 0, 0, None, _freeze_options(resolved))

    def to_move(self, state: TilesState) -> tuple[int, ...]:
        if _end_reason(state) is not None:
            return ()
        return (state.move % 2,)

    def observation(self, state: TilesState, seat: int, ctx: Context) -> JSON:
        return {"color": COLORS[seat], "board": board_text(state.cells)}

    def parse_action(self, state: TilesState, seat: int, raw: JSON) -> list[int]:
        if not isinstance(raw, dict) or "x" not in raw or "y" not in raw:
            raise IllegalAction("bad_reply", 'expected an object with keys "x" and "y"')
        x, y = raw["x"], raw["y"]
        for key, value in (("x", x), ("y", y)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise IllegalAction("bad_reply", f"{key} must be a JSON integer, got {value!r}")
        return [x, y]

    def default_action(self, state: TilesState, seat: int) -> list[int]:
        return list(PASS)

    def apply(self, state: TilesState, actions: dict[int, Any]) -> TilesState:
        seats = self.to_move(state)
        if not seats:
            raise ValueError("the game is over")
        seat = seats[0]
        if len(actions) != 1 or seat not in actions:
            raise ValueError(f"expected an action for seat {seat} only, got {sorted(actions)}")
        x, y = _coordinates(actions[seat])
        cells, kind = click(state.cells, seat, x, y)
        passes = state.passes_in_a_row + 1 if kind == "pass" else 0
        return TilesState(cells, state.move + 1, passes, (seat, x, y, kind), state.options)

    def outcome(self, state: TilesState) -> Outcome | None:
        reason = _end_reason(state)
        if reason is None:
            return None
        red, blue = state.cells.count(RED), state.cells.count(BLUE)
        if red > blue:
            scores = (1.0, 0.0)
        elif blue > red:
            scores = (0.0, 1.0)
        else:
            scores = (0.5, 0.5)
        return Outcome(scores=scores, reason=reason)

    def frame(self, state: TilesState) -> JSON:
        cells = state.cells
        chars = cells.translate(_FRAME_TABLE)
        seats = self.to_move(state)
        return {
            "board": [chars[y::HEIGHT] for y in range(HEIGHT)],
            "counts": [cells.count(RED), cells.count(BLUE)],
            "empty": cells.count(_DOT),
            "move": state.move,
            "to_move": seats[0] if seats else None,
            "passes_in_a_row": state.passes_in_a_row,
            "last": _last_json(state.last),
        }

    def to_json(self, state: TilesState) -> JSON:
        """``board`` is 12 rows (y = 0..11) of 24 characters: "." empty, else the tile."""
        return {
            "board": [state.cells[y::HEIGHT] for y in range(HEIGHT)],
            "move": state.move,
            "passes_in_a_row": state.passes_in_a_row,
            "last": _last_json(state.last),
            "options": self.options_of(state),
        }

    def from_json(self, data: JSON) -> TilesState:
        rows = data["board"]
        if (
            not isinstance(rows, list)
            or len(rows) != HEIGHT
            or not all(isinstance(row, str) and len(row) == WIDTH for row in rows)
        ):
            raise ValueError(f"board must be {HEIGHT} rows of {WIDTH} characters")
        cells = "".join(map("".join, zip(*rows, strict=True)))
        if not _BOARD_CHARS.issuperset(cells):
            raise ValueError("board holds an unknown tile character")
        last = data["last"]
        if last is not None:
            last = (
                int_option(0, 1)(last["seat"]),
                int_option()(last["x"]),
                int_option()(last["y"]),
                last["kind"],
            )
            if last[3] not in MOVE_KINDS:
                raise ValueError(f"unknown move kind {last[3]!r}")
        return TilesState(
            cells,
            int_option(0)(data["move"]),
            int_option(0)(data["passes_in_a_row"]),
            last,
            _freeze_options(self.resolve_options(data["options"])),
        )

    # -- the platform's questions (the parts in games/tiles/) --------------------------

    order = 4
    human_options = {"move_timeout_ms": 60_000}

    def doc_examples(self):
        from games.tiles.docs import examples

        return examples(self)


GAME = Tiles()
