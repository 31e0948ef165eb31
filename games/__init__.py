"""Pure game engines (standard library only), one folder per game; see docs/architecture.md."""

from games.base import Context, Game, IllegalAction, Outcome, Policy, rng_for
from games.registry import all_games, get_game

__all__ = [
    "Context",
    "Game",
    "IllegalAction",
    "Outcome",
    "Policy",
    "all_games",
    "get_game",
    "rng_for",
]
