"""Connect four (BotsArena's protocol); the folder's ``README.md`` holds the normative rules."""

from games.connectfour.engine import GAME, ConnectFour, php_column, solve

__all__ = ["GAME", "ConnectFour", "php_column", "solve"]
