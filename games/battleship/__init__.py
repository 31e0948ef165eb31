"""Battleship (BotsArena's protocol); the folder's ``README.md`` holds the normative rules."""

from games.battleship.engine import GAME, Battleship, hunt, parse_fleet, random_fleet

__all__ = ["GAME", "Battleship", "hunt", "parse_fleet", "random_fleet"]
