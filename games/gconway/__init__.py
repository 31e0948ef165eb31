"""gconway (AI Battleground's Game of Life): one folder holds the game.

``engine.py`` (rules, wire, built-in bots), ``docs.py`` (the bot authors' page examples),
``renderer.js`` (the viewer), ``rules.html`` (the rules on ``/docs/gconway/``),
``starter_bot.py``, ``README.md`` (the normative rules and protocol), ``vectors/``
(recordings of the original) and ``fixtures/`` (line-protocol bots the tests start).
"""

from games.gconway.engine import (
    DEFAULT_START,
    GAME,
    MAX_ITERATIONS,
    MAX_SIDE,
    Gconway,
    GconwayState,
    life_step,
)

__all__ = [
    "DEFAULT_START",
    "GAME",
    "MAX_ITERATIONS",
    "MAX_SIDE",
    "Gconway",
    "GconwayState",
    "life_step",
]
