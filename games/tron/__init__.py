"""Tron (BotsArena's protocol), 2 to 13 snakes; ``README.md`` holds the normative rules."""

from games.tron.engine import DIRECTIONS, GAME, Tron

__all__ = ["DIRECTIONS", "GAME", "Tron"]
