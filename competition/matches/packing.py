"""A game's own form of its turns in a match's archive (``Game.pack_turns``), kept only where it
reads back to the same JSON, byte for byte (docs/architecture.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from competition.matches import seatlogs
from competition.models import TURN_VALUES
from games import get_game
from games.base import Game

FIELDS = TURN_VALUES


class Mismatch(Exception):
    """A game's packed turns do not read back to the turns it was given."""


def codec_of(slug: str) -> str:
    """The name of the turns codec of the game ``slug`` ("" for none, or no such game)."""
    try:
        return get_game(slug).turns_codec
    except KeyError:
        return ""


def pack(slug: str, rows: Sequence[Sequence[Any]], raw: bytes) -> bytes:
    """One block of turns in its game's form, checked to read back to ``raw`` or ``Mismatch``."""
    game = get_game(slug)
    turns = [dict(zip(FIELDS, row, strict=True)) for row in rows]
    for turn in turns:
        turn["logs"] = seatlogs.expand(turn["logs"])
    whole = [[turn[name] for name in FIELDS] for turn in turns]  # before the game sees them
    packed = [[turn[name] for name in FIELDS] for turn in game.pack_turns(turns)]
    text = _json(packed)
    back = unpack(game, game.turns_codec, json.loads(text))
    # the logs packed again are the stored ones, but for the order of a reference's keys
    # (PostgreSQL's jsonb orders them; every reader expands the references)
    if _json(back) != raw and _json(_expanded(back)) != _json(whole):
        raise Mismatch(f"{game.title}: packed turns read back otherwise")
    return text


def _json(values: Any) -> bytes:
    return json.dumps(values, separators=(",", ":"), allow_nan=False).encode()


def _expanded(rows: list[list[Any]]) -> list[list[Any]]:
    at = FIELDS.index("logs")
    return [[*row[:at], seatlogs.expand(row[at]), *row[at + 1 :]] for row in rows]


def unpack(game: Game | str, codec: str, rows: list[list[Any]]) -> list[list[Any]]:
    """What ``pack`` was given, from what it wrote (``ValueError`` for an unknown game or codec)."""
    if isinstance(game, str):
        try:
            game = get_game(game)
        except KeyError:
            raise ValueError(f"turns packed by an unknown game {game!r}") from None
    turns = game.unpack_turns([dict(zip(FIELDS, row, strict=True)) for row in rows], codec)
    return [
        [seatlogs.pack_json(turn[name]) if name == "logs" else turn[name] for name in FIELDS]
        for turn in turns
    ]
