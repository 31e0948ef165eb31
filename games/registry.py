"""The registry of games: each package of ``games/`` exposing ``GAME`` is found, so adding a game
means adding its folder."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from games.base import Game

FOLDER = Path(__file__).resolve().parent


def game_packages() -> list[str]:
    """The names of the packages of ``games/`` (each one a game's folder)."""
    return sorted(info.name for info in pkgutil.iter_modules([str(FOLDER)]) if info.ispkg)


@cache
def _games() -> dict[str, Game]:
    found: list[Game] = []
    for name in game_packages():
        game = getattr(importlib.import_module(f"games.{name}"), "GAME", None)
        if not isinstance(game, Game):
            raise TypeError(f"games/{name}/ does not expose GAME, an instance of games.base.Game")
        if game.slug != name:
            raise ValueError(
                f"games/{name}/ holds the game {game.slug!r}: a folder is named by its slug"
            )
        found.append(game)
    return {game.slug: game for game in sorted(found, key=lambda g: (g.order, g.slug))}


def get_game(slug: str) -> Game:
    try:
        return _games()[slug]
    except KeyError:
        raise KeyError(f"unknown game {slug!r}") from None


def all_games() -> list[Game]:
    """Every registered engine, in listing order (``Game.order``, then the slug)."""
    return list(_games().values())
