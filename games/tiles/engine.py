"""Ajax Tiles (slug ``tiles``): engine, native wire codec and built-in bots.

The rules in brief; the normative text is ``games/tiles/README.md`` (section numbers
below refer to it).

- Two seats on a 24x12 board indexed ``board[x][y]``: seat 0 is red (``"r"``) and moves
  first, seat 1 is blue (``"b"``). Tiles are ``""`` (empty), ``"r"``, ``"b"``, ``"d"``
  (contaminated) and ``"n"`` (nuked); dead tiles stay dead. Adjacency is orthogonal only.
- The start is a seeded, point-symmetric layout of craters: ``"n"`` centres ringed by
  ``"d"`` (spec §4.1), or the explicit ``board`` option.
- A move is a click ``[x, y]``. On an empty tile it paints your colour; if the new tile P
  touches enemy tiles, a battle follows: P's group size must be strictly greater than the
  group size of every adjacent enemy tile, in which case those adjacent enemy tiles (only
  they) become empty; otherwise P becomes empty again. On an own tile it nukes it: the tile
  becomes ``"n"`` and its neighbours become ``"d"`` (an ``"n"`` neighbour stays ``"n"``).
  Anything else (enemy, dead or off-board tile) is a pass.
- The game ends when no empty tile is left (``board_full``), after ``max_moves`` moves
  (``move_limit``) or after ``max_passes_in_a_row`` consecutive passes (``stalemate``). The
  seat owning more tiles wins; equal counts draw.
- Wire: ``form``. Each seat receives ``{"color": "r"|"b", "board": <compact JSON text>}``
  and answers ``{"x": int, "y": int}``; any fault loses the game.

Built-in bots: ``random``, ``expand``, ``fearful`` and ``contain`` are exact ports of the
original sample AI (``VictorNicollet/AjaxTiles-AI``, ``index.php``); ``greedy`` is ours.
``strategy_for_query`` picks the sample AI's strategy from a URL query string exactly as
the original did.

``greedy`` deliberately differs from the spec's §9 one-ply definition: that rule alone
cannot reach the acceptance target (at least 90% of the points against each sample
strategy, colours swapped); as blue it loses almost every game to ``expand``, because with
equal tile counts the side to move wins every battle at contact. The §9 evaluation is kept
as ``one_ply_greedy_choices`` and is greedy's base: greedy plays every capture it finds and
falls back to it. On top of it, greedy plays territory (``GreedyBot``, in this order): it
nukes the wall tile it painted on its previous move; it captures; against an enemy group
bigger than its own biggest group it walls that group into the smallest box it can close in
time, with "pluses" of dead tiles (paint a tile, nuke it next move); until it knows how the
enemy reacts to contact it offers a battle (paints two steps from the enemy), and stops
walling an enemy that answers by nuking its own tile; it hunts enemy groups small enough to
capture; it grows its biggest group in the largest empty region, or seeds one there as far
as possible from the enemy; otherwise it plays the one-ply choice, away from stronger
enemy groups. Its only randomness is the rng it is given; the instance made per seat per
match remembers the wall box, the tile to nuke and the enemy's stance.

Internally a board is one 288-character string, character ``x * 12 + y`` holding tile
(x, y) ("." for empty): the original's scan order (x outer, y inner) is ascending index
order, and so is its probe order ((x-1, y), (x, y-1), (x, y), (x, y+1), (x+1, y)). Group
sizes and neighbourhoods use integer bitboards.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

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
    "GreedyBot",
    "Tiles",
    "TilesState",
    "board_string",
    "board_string_of_text",
    "board_text",
    "one_ply_greedy_choices",
    "sample_ai_choice",
    "sample_ai_move",
    "strategy_for_query",
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
    """A 24x12 ``board[x][y]`` (arrays of tile values) as a flat board string; checks the
    shape and the values (``ValueError``)."""
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
    """The tiles orthogonally next to a tile of ``mask``; may include tiles of ``mask``
    and bits off the board, so always intersect it with a tile set."""
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
    """One click by ``seat`` at (x, y) (spec §4.3-4.5): the new flat board and the kind of
    move (``paint``, ``capture``, ``repelled``, ``nuke`` or ``pass``)."""
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
    "max_moves": int_option(1, 1_000_000, nullable=True),  # platform limit beyond the spec
    "max_passes_in_a_row": int_option(1, nullable=True),
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
    """Resolved options as an immutable value: (key, value) pairs in the order of
    ``DEFAULT_OPTIONS``, the board option as tuples."""
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
    """A position.

    ``cells`` is the flat board string (``cells[x * 12 + y]``, "." for empty); ``move`` the
    moves played; ``passes_in_a_row`` the consecutive passes; ``last`` the last move as
    ``(seat, x, y, kind)`` or None; ``options`` the resolved options as (key, value) pairs
    in the order of ``DEFAULT_OPTIONS``.
    """

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
    side owning more tiles when the board is full wins (specs/tiles.md)."""

    slug = "tiles"
    title = "Ajax Tiles"
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
            # specs/tiles.md §11.2: no guard, as in the original, "not for events"
            return "with max_moves and max_passes_in_a_row both null two passing bots never end a game"
        return None

    def options_of(self, state: TilesState) -> dict:
        options = dict(state.options)
        if options.get("board") is not None:
            options["board"] = [list(column) for column in options["board"]]
        return options

    # -- the state machine ------------------------------------------------------------

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


# -- the sample AI (index.php) ---------------------------------------------------------


def strategy_for_query(query: str) -> str:
    """The sample AI's strategy for a URL query string (with or without the leading ``?``).

    Like ``index.php``: PHP builds ``$_GET`` from the query (keys percent-decoded, the name
    before any ``[``, spaces and dots turned into ``_``) and the first key that is exactly
    ``random``, ``expand``, ``fearful`` or ``contain`` (case-sensitive) wins; values are
    ignored; no such key means ``random``. ``?fearful=0`` is fearful, ``?foo&contain`` is
    contain, ``?CONTAIN`` is random.
    """
    query = query.split("#", 1)[0]
    if query.startswith("?"):
        query = query[1:]
    for pair in query.split("&"):
        key = _php_variable_name(unquote_plus(pair.split("=", 1)[0]))
        if key in SAMPLE_STRATEGIES:
            return key
    return "random"


def _php_variable_name(name: str) -> str:
    """The ``$_GET`` key PHP derives from a decoded variable name (php_register_variable)."""
    name = name.lstrip(" ")
    out = []
    for pos, char in enumerate(name):
        if char in " .":
            out.append("_")
        elif char == "[":
            if "]" in name[pos + 1 :]:
                break  # an array variable: the key is the name before "["
            out.append("_")  # an unterminated "[" is kept as "_", the rest as is
            out.append(name[pos + 1 :])
            break
        else:
            out.append(char)
    return "".join(out)


def _cells_of_message(message: Mapping[str, Any]) -> tuple[str, str]:
    """(flat board string, colour) from an observation ``{"color", "board"}``."""
    return board_string_of_text(message["board"]), _check_color(message["color"])


def board_string_of_text(text: str) -> str:
    """The flat board string of a board's JSON text (``ValueError`` if it is not one).

    Fast path: the canonical compact text that ``observation`` sends is decoded by string
    operations; anything else goes through ``json.loads`` and ``board_string``.
    """
    if isinstance(text, str) and text.translate(_NO_LETTERS) == _EMPTY_BOARD_TEXT:
        # The canonical layout with letters only between quotes: one tile per token
        # unless a token holds several letters, which the length check rejects.
        cells = text.replace('""', '"."').translate(_UNQUOTE)
        if len(cells) == SIZE:
            return cells
    return board_string(json.loads(text))


def _check_color(color: Any) -> str:
    if color not in COLORS:
        raise ValueError(f"color must be 'r' or 'b', got {color!r}")
    return color


def _probe(s: str, i: int, value: str) -> int:
    """The sample AI's ``adjacent()``: the first index holding ``value`` among (x-1, y),
    (x, y-1), (x, y), (x, y+1), (x+1, y) (ascending index order), or -1."""
    for j in PROBE[i]:
        if s[j] == value:
            return j
    return -1


def _random_fallback(s: str, rng: random.Random) -> tuple[int, int]:
    if _DOT not in s:
        return PASS  # the original looped forever
    while True:
        x = rng.randint(0, WIDTH - 1)
        y = rng.randint(0, HEIGHT - 1)
        if s[x * HEIGHT + y] == _DOT:
            return x, y


def _first(mask: int) -> int:
    """The flat index of the first tile of ``mask`` in scan order (ascending bits)."""
    return _INDEX_OF_BIT[(mask & -mask).bit_length() - 1]


def _sample_choice(s: str, color: str, strategy: str) -> int:
    """The flat index ``strategy`` of ``index.php`` clicks on, or -1 where the original
    falls back to ``strategy_random`` (always for ``random``).

    Scan order (x outer, y inner) is ascending bit order, so "the first tile in scan order
    such that ..." is the lowest bit of a bitboard of the tiles that qualify.
    """
    if strategy not in SAMPLE_STRATEGIES:
        raise ValueError(f"unknown sample strategy {strategy!r}")
    if strategy == "random":
        return -1
    enemy = RED if color == BLUE else BLUE
    own, foe, empty = _bitmasks(s, color, enemy, _DOT)
    if strategy != "expand":
        # The nuke rule: the first empty tile for which probe finds an enemy tile and
        # probe finds an own tile; answer that own tile (the first in probe order).
        touching_both = empty & _around(foe) & _around(own)
        if touching_both:
            return _probe(s, _first(touching_both), color)
    if strategy == "contain" and foe:
        # Nearest empty tile next to an own tile, by Manhattan distance to the enemy
        # centroid; the first in scan order keeps a tie (strict "<", as in the original).
        count = foe.bit_count()
        cx = sum(x * s[x * HEIGHT : (x + 1) * HEIGHT].count(enemy) for x in range(WIDTH)) / count
        cy = sum(y * s[y::HEIGHT].count(enemy) for y in range(HEIGHT)) / count
        best, answer = 9999.0, -1
        for bit in _bits(empty & _around(own)):
            x, y = divmod(bit, STRIDE)
            distance = abs(x - cx) + abs(y - cy)
            if distance < best:
                best, answer = distance, x * HEIGHT + y
        return answer
    # expand (also fearful without a nuke, and contain when the enemy owns no tile): the
    # first own tile in scan order with an empty tile in its probe; answer that tile.
    growing = own & _around(empty)
    return _probe(s, _first(growing), _DOT) if growing else -1


def sample_ai_choice(board: Sequence[Sequence[str]], color: str, strategy: str):
    """The sample AI's answer ``(x, y)`` when ``strategy``'s own logic decides it, or
    None when the original would fall back to ``strategy_random`` (always for random)."""
    i = _sample_choice(board_string(board), _check_color(color), strategy)
    return _XY[i] if i >= 0 else None


def sample_ai_move(
    board: Sequence[Sequence[str]], color: str, strategy: str, rng: random.Random
) -> tuple[int, int]:
    """The sample AI's answer ``(x, y)`` for ``board[x][y]`` and ``color`` (spec §9)."""
    s = board_string(board)
    color = _check_color(color)
    i = _sample_choice(s, color, strategy)
    return _XY[i] if i >= 0 else _random_fallback(s, rng)


def _sample_bot(strategy: str):
    def factory():
        def bot(message: JSON, rng: random.Random) -> JSON:
            s, color = _cells_of_message(message)
            i = _sample_choice(s, color, strategy)
            x, y = _XY[i] if i >= 0 else _random_fallback(s, rng)
            return {"x": x, "y": y}

        return bot

    return factory


# -- greedy (ours) --------------------------------------------------------------------
#
# The spec's one-ply evaluation (§9) first, then ``GreedyBot``, which plays it for captures
# and as its last resort and adds territory play on top (see the module docstring for why).


def _groups(mask: int) -> list[tuple[int, int]]:
    """The groups of a tile set: (bitboard, size) each."""
    groups = []
    while mask:
        group = _flood(mask & -mask, mask)
        groups.append((group, group.bit_count()))
        mask ^= group
    return groups


def _one_ply(s: str, color: str) -> tuple[tuple[int, int], list[int]]:
    """The spec's one-ply greedy (§9): the best score and every best candidate as flat
    indices, in scan order; the score is ``(-SIZE, -1)`` when there is no candidate.

    Each click is scored without copying the board: a paint gains its tile plus the
    captured defenders (nothing if repelled); a nuke loses the tile and its own
    neighbours and destroys its enemy neighbours. The second key is the size of the
    clicked tile's own group after the move (0 unless it is own).

    Only clicks next to a coloured tile need work: an empty tile with no coloured
    neighbour scores (1, 1), and while any empty tile exists (score >= (0, 0)) a nuke
    without an enemy neighbour (gain <= -1) can never be among the best.
    """
    enemy = RED if color == BLUE else BLUE
    own, foe, empty = _bitmasks(s, color, enemy, _DOT)
    strength: dict[int, int] = {}  # empty bit -> 1 + sizes of the own groups it joins
    for group, size in _groups(own):
        for bit in _bits(_around(group) & empty):
            strength[bit] = strength.get(bit, 1) + size
    defence: dict[int, int] = {}  # empty bit -> size of the strongest enemy group next to it
    for group, size in _groups(foe):
        for bit in _bits(_around(group) & empty):
            if defence.get(bit, 0) < size:
                defence[bit] = size
    best: tuple[int, int] = (-SIZE, -1)
    ties: list[int] = []
    for bit in strength.keys() | defence.keys():
        attack = strength.get(bit, 1)
        defender = defence.get(bit)
        if defender is None:
            score = (1, attack)
        elif attack > defender:
            score = (1 + (_NEIGHBOUR_BITS[bit] & foe).bit_count(), attack)
        else:
            score = (0, 0)
        if score > best:
            best, ties = score, [bit]
        elif score == best:
            ties.append(bit)
    for bit in _bits(_around(foe) & own if empty else own):
        around = _NEIGHBOUR_BITS[bit]
        score = ((around & foe).bit_count() - (around & own).bit_count() - 1, 0)
        if score > best:
            best, ties = score, [bit]
        elif score == best:
            ties.append(bit)
    if best <= (1, 1):
        isolated = list(_bits(empty & ~_around(own | foe)))
        if isolated:
            if best < (1, 1):
                best, ties = (1, 1), isolated
            else:
                ties += isolated
    return best, sorted(_INDEX_OF_BIT[bit] for bit in ties)


def _captures(own: int, foe: int, empty: int) -> list[int]:
    """The one-ply evaluation (``_one_ply``) restricted to battles: the best capturing
    paints as flat indices in scan order, or [] if no paint captures.

    On a legal position (no red tile next to a blue one) a capture scores (1 + captured
    tiles, attacker strength) against at most (1, ...) for any other click, so whenever
    one exists these are exactly ``_one_ply``'s ties; only the groups next to a contested
    empty tile are measured.
    """
    contact = _around(own) & _around(foe) & empty
    if not contact:
        return []
    near = _around(contact)
    groups: dict[int, tuple[int, int]] = {}  # bit next to a contact tile -> (group, size)
    for side in (own, foe):
        rest = near & side
        while rest:
            group = _flood(rest & -rest, side)
            for bit in _bits(group & near):
                groups[bit] = (group, group.bit_count())
            rest &= ~group
    best: tuple[int, int] = (1, 0)
    ties: list[int] = []
    for bit in _bits(contact):
        around = _NEIGHBOUR_BITS[bit]
        joined = {groups[b] for b in _bits(around & own)}
        attack = 1 + sum(size for _, size in joined)
        if all(groups[b][1] < attack for b in _bits(around & foe)):
            score = (1 + (around & foe).bit_count(), attack)
            if score > best:
                best, ties = score, [bit]
            elif score == best:
                ties.append(bit)
    return sorted(_INDEX_OF_BIT[bit] for bit in ties)


def one_ply_greedy_choices(board: Sequence[Sequence[str]], color: str) -> list[tuple[int, int]]:
    """The tied best clicks of the spec's one-ply greedy (§9) for ``board[x][y]``, in scan
    order: ``greedy``'s base evaluation (the built-in itself plays more, see
    ``GreedyBot``)."""
    return [_XY[i] for i in _one_ply(board_string(board), _check_color(color))[1]]


# Bitboard helpers of the territory play (bit x * 13 + y, as above).
_PLUS = tuple(_BIT[i] | sum(_BIT[j] for j in NEIGHBOURS[i]) for i in range(SIZE))
_COLUMNS = [sum(_BIT[x * HEIGHT : (x + 1) * HEIGHT]) for x in range(WIDTH)]
_ROWS = [sum(_BIT[x * HEIGHT + y] for x in range(WIDTH)) for y in range(HEIGHT)]
_COLUMN_SPAN = [[sum(_COLUMNS[a : b + 1]) for b in range(WIDTH)] for a in range(WIDTH)]
_ROW_SPAN = [[sum(_ROWS[a : b + 1]) for b in range(HEIGHT)] for a in range(HEIGHT)]
_FAR = 999  # the distance of a tile the enemy cannot reach

# Tuning of the territory play (measured against the sample AI, seeds 0..299).
_WALL_GAPS = range(2, 8)  # a box side: a board edge, or a wall 2..7 tiles out from the group
_WALL_SPEED = 0.5  # assumed enemy advance (tiles) per move of ours while a wall is built
_WALL_GAIN = 4  # a box must save more than this many tiles (counted twice: theirs, ours)
_PROBE_URGENCY = 3  # probe the enemy's stance instead of a wall plus this far from it
_CLAIM_MIN = 8  # the smallest empty region worth claiming before the endgame


def _index_list(mask: int) -> list[int]:
    """The flat indices of a bitboard, in scan order."""
    return [_INDEX_OF_BIT[bit] for bit in _bits(mask)]


def _layers(seed: int, within: int) -> list[int]:
    """Breadth-first layers from ``seed`` through ``within``: layer k holds the tiles of
    ``within`` (not of ``seed``) at distance k + 1."""
    layers = []
    seen = seed
    front = _around(seed) & within & ~seen
    while front:
        layers.append(front)
        seen |= front
        front = _around(front) & within & ~seen
    return layers


def _distances(seed: int, within: int) -> list[int]:
    """Distance of every tile from ``seed`` through ``within`` (``_FAR`` if unreachable,
    0 on ``seed``)."""
    dist = [_FAR] * SIZE
    for i in _index_list(seed):
        dist[i] = 0
    for d, layer in enumerate(_layers(seed, within), 1):
        for i in _index_list(layer):
            dist[i] = d
    return dist


_WALL_LINES: dict[tuple[str, int, int, int], list[tuple[int, int]]] = {}


def _wall_line(key: tuple[str, int, int, int]) -> list[tuple[int, int]]:
    """A wall line ``(side, line, first, last)`` (side "top", "bottom", "left" or "right"
    of a box; the row or column of the line; its first and last column or row) as (tile,
    tile just outside the box or -1 off the board) pairs, in scan order. Cached."""
    line = _WALL_LINES.get(key)
    if line is None:
        side, fixed, first, last = key
        step = -1 if side in ("top", "left") else 1
        if side in ("top", "bottom"):
            out = 0 <= fixed + step < HEIGHT
            tiles = [
                (x * HEIGHT + fixed, x * HEIGHT + fixed + step) for x in range(first, last + 1)
            ]
        else:
            out = 0 <= fixed + step < WIDTH
            tiles = [
                (fixed * HEIGHT + y, (fixed + step) * HEIGHT + y) for y in range(first, last + 1)
            ]
        line = _WALL_LINES[key] = [(i, outside if out else -1) for i, outside in tiles]
    return line


def _box_sides(box: tuple[int, int, int, int]) -> list[tuple[str, int, int, int]]:
    """The wall lines of a box ``(x1, x2, y1, y2)``, one per side not on a board edge (see
    ``_wall_line``). The corners are left out: they touch no tile of the box."""
    x1, x2, y1, y2 = box
    sides = []
    if y1 > 0:
        sides.append(("top", y1 - 1, x1, x2))
    if y2 < HEIGHT - 1:
        sides.append(("bottom", y2 + 1, x1, x2))
    if x1 > 0:
        sides.append(("left", x1 - 1, y1, y2))
    if x2 < WIDTH - 1:
        sides.append(("right", x2 + 1, y1, y2))
    return sides


class _Walls:
    """Wall planning on one position for one enemy group ``group``.

    A wall line is made dead by nuking "centres": a centre is an own tile, or an empty
    tile at distance >= 3 from every enemy tile (painted now, it cannot be attacked before
    it is nuked on the next move). A centre on the line kills three line tiles; one just
    outside the line kills the line tile next to it.
    """

    def __init__(self, s: str, color: str, own: int, foe: int, empty: int, group: int):
        self.s, self.color = s, color
        self.dist = _distances(foe, empty)
        passable = empty | own
        start = _around(group) & passable
        self.risk = (_flood(start, passable) if start else 0) | group  # what it could take
        self.nondead = own | foe | empty
        self.group = group
        self.sides: dict[tuple, tuple[tuple, int] | None] = {}

    def _centre(self, i: int) -> bool:
        value = self.s[i]
        return (value == _DOT and self.dist[i] >= 3) or value == self.color

    def _cover(self, line: list[tuple[int, int]]) -> tuple[int, ...] | None:
        """The centres that make every live tile of a wall line dead, or None."""
        s, centres, covered, last = self.s, [], -1, len(line) - 1
        for k, (i, outside) in enumerate(line):
            value = s[i]
            if k <= covered or value in "dn":
                continue
            if value != _DOT and value != self.color:
                return None  # an enemy tile on the line
            for j in (k + 1, k, k - 1):
                if 0 <= j <= last and self._centre(line[j][0]):
                    centres.append(line[j][0])
                    covered = j + 1
                    break
            else:
                if outside < 0 or not self._centre(outside):
                    return None
                centres.append(outside)
                covered = k
        return tuple(centres)

    def _side(self, key: tuple[str, int, int, int]) -> tuple[tuple, int] | None:
        """A wall line's centres as sort keys (own tiles first, then by urgency: how soon
        the enemy can reach the plus, the least distance of the centre and its empty
        neighbours) and the tiles their nukes kill; None if it cannot be walled. Cached
        per line."""
        side = self.sides.get(key, False)
        if side is False:
            cover = self._cover(_wall_line(key))
            if cover is None:
                side = None
            else:
                s, dist, killed = self.s, self.dist, 0
                keys = []
                for i in cover:
                    urgency = min([dist[i]] + [dist[j] for j in NEIGHBOURS[i] if s[j] == _DOT])
                    keys.append((s[i] != self.color, urgency, i))
                    killed |= _PLUS[i]
                side = (tuple(keys), killed & self.nondead)
            self.sides[key] = side
        return side

    def _box(self, box: tuple[int, int, int, int]) -> list[tuple[tuple, int]] | None:
        sides = []
        for key in _box_sides(box):
            side = self._side(key)
            if side is None:
                return None
            sides.append(side)
        return sides

    def _order(self, sides: list[tuple[tuple, int]], timed: bool) -> list[int] | None:
        """The building order of the centres, or None if (``timed``) the walls would come
        too late for an enemy advancing ``_WALL_SPEED`` tiles per move of ours."""
        keys: set[tuple[bool, int, int]] = set()
        for side_keys, _ in sides:
            keys.update(side_keys)
        order = sorted(keys)
        if timed:
            moves = 0.0  # our moves before this centre is painted (or nuked)
            for painted, urgency, i in order:
                lag = _WALL_SPEED * moves
                if not painted:
                    if urgency < 1 + lag:
                        return None
                    moves += 1
                else:
                    if self.dist[i] < 3 + lag or urgency < 2 + lag:
                        return None
                    moves += 2
        return [i for _, _, i in order]

    def centres(self, box: tuple[int, int, int, int]) -> list[int] | None:
        """The centres still needed by a box (committed earlier), in building order, or
        None if a side can no longer be walled."""
        sides = self._box(box)
        return None if sides is None else self._order(sides, timed=False)

    def plan(self) -> tuple[tuple[int, int, int, int], list[int]] | None:
        """The best box around the group and its centres in building order, or None if
        no box saves more than ``_WALL_GAIN`` tiles over letting the group take all it can
        reach. A box's value: minus twice the tiles left to the group inside it, minus
        the tiles its walls kill outside it."""
        xs = [i // HEIGHT for i in _index_list(self.group)]
        ys = [i % HEIGHT for i in _index_list(self.group)]
        gx1, gx2, gy1, gy2 = min(xs), max(xs), min(ys), max(ys)
        lefts = sorted({0} | {gx1 - g + 1 for g in _WALL_GAPS if gx1 - g >= 0})
        rights = sorted({WIDTH - 1} | {gx2 + g - 1 for g in _WALL_GAPS if gx2 + g < WIDTH})
        tops = sorted({0} | {gy1 - g + 1 for g in _WALL_GAPS if gy1 - g >= 0})
        bottoms = sorted({HEIGHT - 1} | {gy2 + g - 1 for g in _WALL_GAPS if gy2 + g < HEIGHT})
        risk = self.risk
        best, best_value = None, -2 * risk.bit_count() + _WALL_GAIN
        for x1 in lefts:
            for x2 in rights:
                columns = _COLUMN_SPAN[x1][x2]
                core_columns = _COLUMN_SPAN[x1 + 1][x2 - 1] if x2 - x1 > 1 else 0
                for y1 in tops:
                    for y2 in bottoms:
                        # The walls kill at most the box's outer ring inside it: skip a
                        # box that cannot beat the best even so.
                        inside = columns & _ROW_SPAN[y1][y2]
                        core = core_columns & _ROW_SPAN[y1 + 1][y2 - 1] if y2 - y1 > 1 else 0
                        if -2 * (core & risk).bit_count() <= best_value:
                            continue
                        box = (x1, x2, y1, y2)
                        sides = self._box(box)
                        if not sides:
                            continue
                        killed = 0
                        for _, side_killed in sides:
                            killed |= side_killed
                        if not killed:
                            continue  # sealed already
                        value = -2 * (inside & risk & ~killed).bit_count()
                        value -= (killed & ~inside).bit_count()
                        if value > best_value:
                            order = self._order(sides, timed=True)
                            if order:
                                best, best_value = (box, order), value
        return best


class GreedyBot:
    """The built-in ``greedy``: one instance per seat per match (it keeps a memory).

    Each move, in this order (``M`` = the size of our biggest group; an enemy group is
    *live* if it touches an empty tile, *strong* if it is live and bigger than ``M``, so
    that it would win a battle against our biggest group, and *weak* if live and not
    bigger):

    1. **Finish a wall**: nuke the tile painted last move as a wall centre.
    2. **Capture**: if the one-ply evaluation's best click captures, play it (ties: rng).
    3. **Walls**: against the biggest strong group, keep (or choose) a box whose walls
       leave it the fewest tiles (``_Walls``) and build its most urgent plus.
    4. **Probe**: until the enemy's stance is known, paint a tile two steps from it
       (next to our biggest group if we have one) to offer a battle. An enemy that
       answers a possible battle by nuking its own tile *retreats* (no more walls against
       it: we then seek contact, which costs it tiles); any other answer *holds*.
    5. **Hunt**: grow the biggest group towards the nearest weak group, avoiding the
       tiles a strong group could attack next move.
    6. **Claim**: grow our biggest group in the largest empty region (>= 8 tiles), or
       start one there as far as possible from the enemy.
    7. Otherwise the one-ply choice, ties broken away from strong groups.
    """

    def __init__(self) -> None:
        self.box: tuple[int, int, int, int] | None = None  # the committed wall box
        self.pending = -1  # the wall centre painted last move
        self.stance: str | None = None  # "retreats" or "holds" once seen
        self.after: str | None = None  # the board after our last move, while offering battle

    def __call__(self, message: JSON, rng: random.Random) -> JSON:
        s, color = _cells_of_message(message)
        i = self.choose(s, color, rng)
        x, y = _XY[i] if i >= 0 else PASS
        return {"x": x, "y": y}

    def choose(self, s: str, color: str, rng: random.Random) -> int:
        """The flat index to click (-1: pass)."""
        self._observe(s)
        i = self._choose(s, color, rng)
        if self.stance is None and i >= 0:
            seat = COLORS.index(color)
            after = click(s, seat, *_XY[i])[0]
            own, foe, empty = _bitmasks(after, color, COLORS[1 - seat], _DOT)
            self.after = after if _around(own) & _around(foe) & empty else None
        return i

    def _observe(self, s: str) -> None:
        """Learn the enemy's stance from its answer to a battle we offered."""
        after, self.after = self.after, None
        if after is not None and sum(a != b for a, b in zip(after, s, strict=True)) <= 5:
            self.stance = "retreats" if s.count(NUKED) > after.count(NUKED) else "holds"

    def _choose(self, s: str, color: str, rng: random.Random) -> int:
        enemy = RED if color == BLUE else BLUE
        own, foe, empty = _bitmasks(s, color, enemy, _DOT)
        pending, self.pending = self.pending, -1
        if pending >= 0 and s[pending] == color:
            return pending  # 1. finish the wall
        captures = _captures(own, foe, empty)
        if captures:
            return rng.choice(captures)  # 2. capture (= the one-ply choice)
        mine = _groups(own)
        size = max((n for _, n in mine), default=0)
        biggest = 0
        for group, n in mine:
            if n == size:
                biggest |= group
        strong: list[tuple[int, int]] = []
        weak = 0  # the tiles of the weak groups
        if foe.bit_count() <= size:
            weak = foe if _around(foe) & empty else 0
        else:
            if size:  # lone enemy tiles are weak: no need to measure them
                weak = foe & ~_around(foe)
            for group, n in _groups(foe & ~weak):
                if _around(group) & empty:
                    if n <= size:
                        weak |= group
                    elif self.stance != "retreats":
                        strong.append((group, n))
        probing = self.stance is None
        if strong:
            i = self._wall(s, color, own, foe, empty, strong)
            if i >= 0:
                if probing and s[i] == _DOT:
                    dist = _distances(foe, empty)
                    urgency = min([dist[i]] + [dist[j] for j in NEIGHBOURS[i] if s[j] == _DOT])
                    if urgency >= _PROBE_URGENCY:
                        probe = self._probe(foe, empty, own, biggest, rng)
                        if probe >= 0:
                            return probe  # 4. probe (the wall can wait)
                if s[i] == _DOT:
                    self.pending = i
                return i  # 3. walls
        if probing:
            probe = self._probe(foe, empty, own, biggest, rng)
            if probe >= 0:
                return probe  # 4. probe
        strong_tiles = 0
        for group, _ in strong:
            strong_tiles |= group
        if weak and size:
            i = self._hunt(weak, biggest, empty, strong_tiles, rng)
            if i >= 0:
                return i  # 5. hunt
        if empty and (own or foe):
            i = self._claim(mine, foe, empty, rng)
            if i >= 0:
                return i  # 6. claim
        ties = _one_ply(s, color)[1]
        if strong_tiles and ties:
            # 7. the one-ply choice, away from strong groups
            dist = _distances(strong_tiles, empty)
            far = max(dist[i] for i in ties)
            ties = [i for i in ties if dist[i] == far]
        return rng.choice(ties) if ties else -1

    def _wall(self, s, color, own, foe, empty, strong) -> int:
        """The next wall centre against the biggest strong group, or -1."""
        group = max(strong, key=lambda item: item[1])[0]
        walls = _Walls(s, color, own, foe, empty, group)
        box = self.box
        if box is not None and not group & ~(
            _COLUMN_SPAN[box[0]][box[1]] & _ROW_SPAN[box[2]][box[3]]
        ):
            order = walls.centres(box)
            if order:
                return order[0]
        plan = walls.plan()
        if plan is None:
            self.box = None
            return -1
        self.box = plan[0]
        return plan[1][0]

    @staticmethod
    def _probe(foe, empty, own, biggest, rng) -> int:
        """An empty tile two steps from the enemy (next to our biggest group if we have
        tiles), or -1 if a battle is already on offer or there is no such tile."""
        if not foe or _around(own) & _around(foe) & empty:
            return -1
        near = _around(foe) & empty
        offers = _around(near) & empty & ~near
        if own:
            offers &= _around(biggest)
        return rng.choice(_index_list(offers)) if offers else -1

    @staticmethod
    def _hunt(weak, biggest, empty, strong_tiles, rng) -> int:
        """A tile next to our biggest group nearest to the weak groups, or -1."""
        danger = _around(_around(strong_tiles) & empty) if strong_tiles else 0
        options = _around(biggest) & empty & ~danger
        front = _around(weak) & empty
        seen = front
        while front:
            hits = front & options
            if hits:
                return rng.choice(_index_list(hits))
            front = _around(front) & empty & ~seen
            seen |= front
        return -1

    @staticmethod
    def _claim(mine, foe, empty, rng) -> int:
        """A tile that grows our biggest group into the largest empty region, or starts
        a group there as far as possible from the enemy; -1 if the largest region is
        smaller than ``_CLAIM_MIN``."""
        region, rest = 0, empty & _around(empty)  # lone empty tiles are no region
        while rest.bit_count() > max(region.bit_count(), _CLAIM_MIN - 1):
            part = _flood(rest & -rest, empty)
            if part.bit_count() > region.bit_count():
                region = part
            rest &= ~part
        if region.bit_count() < _CLAIM_MIN:
            return -1
        touching = [(group, n) for group, n in mine if _around(group) & region]
        free = region & ~_around(foe)
        if touching:
            size = max(n for _, n in touching)
            options = 0
            for group, n in touching:
                if n == size:
                    options |= group
            options = _around(options) & free
            return rng.choice(_index_list(options)) if options else -1
        if free and foe:
            layers = _layers(foe, empty)
            reached = 0
            for layer in layers:
                reached |= layer
            if free & ~reached:
                free &= ~reached
            else:
                free &= next(layer for layer in reversed(layers) if layer & free)
        return rng.choice(_index_list(free)) if free else -1


def _greedy_factory() -> GreedyBot:
    return GreedyBot()


Tiles.builtin_bots = {
    "random": _sample_bot("random"),
    "expand": _sample_bot("expand"),
    "fearful": _sample_bot("fearful"),
    "contain": _sample_bot("contain"),
    "greedy": _greedy_factory,
}

GAME = Tiles()
