"""The registry of games: ``get_game(slug)`` and ``all_games()``.

A game is one module of this package exposing ``GAME`` (an instance of ``games.base.Game``);
adding a game means adding its module name to ``GAME_MODULES``.
"""

from __future__ import annotations

import importlib
from functools import cache

from games.base import Game

GAME_MODULES: tuple[str, ...] = ("tictactoe", "drones", "gconway", "tiles")


@cache
def _games() -> dict[str, Game]:
    games: dict[str, Game] = {}
    for name in GAME_MODULES:
        game = importlib.import_module(f"games.{name}").GAME
        games[game.slug] = game
    return games


def get_game(slug: str) -> Game:
    """The engine registered under ``slug``; ``KeyError`` for an unknown slug."""
    try:
        return _games()[slug]
    except KeyError:
        raise KeyError(f"unknown game {slug!r}") from None


def all_games() -> list[Game]:
    """Every registered engine, in registration order."""
    return list(_games().values())
