"""Tron (BotsArena's protocol), 2 to 13 snakes: one folder holds the game.

``engine.py`` (rules, wire, built-in bots), ``docs.py`` (the bot authors' page examples),
``renderer.js`` (the viewer), ``rules.html`` (the rules on ``/docs/tron/``),
``starter_bot.py``, ``README.md`` (the normative rules and protocol) and ``vectors/``
(recordings of the original).
"""

from games.tron.engine import DIRECTIONS, GAME, Tron

__all__ = ["DIRECTIONS", "GAME", "Tron"]
