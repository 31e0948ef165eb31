"""Connect four (BotsArena's protocol): one folder holds the game.

``engine.py`` (rules, wire, built-in bots), ``docs.py`` (the bot authors' page examples),
``renderer.js`` (the viewer), ``rules.html`` (the rules on ``/docs/connectfour/``),
``starter_bot.py``, ``README.md`` (the normative rules and protocol) and ``vectors/``
(recordings of the original).
"""

from games.connectfour.engine import GAME, ConnectFour, php_column, solve

__all__ = ["GAME", "ConnectFour", "php_column", "solve"]
