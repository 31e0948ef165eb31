"""gconway (AI Battleground's Game of Life): one folder holds the game.

``engine.py`` (rules, wire, built-in bots), ``docs.py`` (the bot authors' page examples),
``renderer.js`` (the viewer), ``rules.html`` (the rules on ``/docs/gconway/``),
``starter_bot.py``, ``README.md`` (the normative rules and protocol), ``vectors/``
(recordings of the original), ``fixtures/`` (line-protocol bots the tests start) and
``archive.py`` (a finished match's boards in its archive).
"""

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


# registered here rather than in engine.py: ``archive.py`` imports the engine, so the engine
# imports none of it
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
