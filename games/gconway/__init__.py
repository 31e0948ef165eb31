"""gconway (AI Battleground's Game of Life); ``archive.py`` keeps a finished match's boards
small, ``README.md`` holds the normative rules."""

from games.gconway import archive
from games.gconway.engine import (
    DEFAULT_START,
    GAME,
    MAX_ITERATIONS,
    MAX_SIDE,
    Gconway,
    GconwayState,
    life_step,
)


def _pack_turns(game: Gconway, turns: list[dict]) -> list[dict]:
    return archive.pack(turns)


def _unpack_turns(game: Gconway, turns: list[dict], codec: str) -> list[dict]:
    return archive.unpack(turns, codec)


# registered here, not in engine.py: ``archive.py`` imports the engine
Gconway.turns_codec = archive.CODEC
Gconway.pack_turns = _pack_turns
Gconway.unpack_turns = _unpack_turns

__all__ = [
    "DEFAULT_START",
    "GAME",
    "MAX_ITERATIONS",
    "MAX_SIDE",
    "Gconway",
    "GconwayState",
    "life_step",
]
