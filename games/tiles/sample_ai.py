"""Ajax Tiles: ports of the original sample AI, pinned by ``vectors/sample-ai-vectors.json``."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote_plus

from games.base import JSON
from games.tiles.engine import (
    _DOT,
    _EMPTY_BOARD_TEXT,
    _INDEX_OF_BIT,
    _NO_LETTERS,
    _UNQUOTE,
    _XY,
    BLUE,
    COLORS,
    HEIGHT,
    PASS,
    PROBE,
    RED,
    SAMPLE_STRATEGIES,
    SIZE,
    STRIDE,
    WIDTH,
    _around,
    _bitmasks,
    _bits,
    board_string,
)

# -- the sample AI (index.php) ---------------------------------------------------------


def strategy_for_query(query: str) -> str:
    """The sample AI's strategy for a URL query string, chosen as ``index.php`` did: the first
    ``$_GET`` key (as PHP derives it) that names a strategy, case-sensitive, else ``random``."""
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
    """The flat board string of a board's JSON text, with a fast path for the canonical text."""
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
    """The sample AI's ``adjacent()``: the first index holding ``value``, or -1."""
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
    """The index ``strategy`` clicks on, or -1 where the original falls back to random; scan
    order is ascending bit order."""
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
    """The sample AI's ``(x, y)``, or None where the original falls back to ``strategy_random``."""
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
