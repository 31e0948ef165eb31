"""Battleship (BotsArena's protocol): one folder holds the game.

``engine.py`` (rules, wire, the fleet a greeting's reply places, built-in bots), ``docs.py``
(the bot authors' page examples), ``renderer.js`` (the viewer: both grids), ``rules.html``
(the rules on ``/docs/battleship/``), ``starter_bot.py``, ``README.md`` (the normative rules
and protocol) and ``vectors/`` (recordings of the original).
"""

from games.battleship.engine import GAME, Battleship, hunt, parse_fleet, random_fleet

__all__ = ["GAME", "Battleship", "hunt", "parse_fleet", "random_fleet"]
