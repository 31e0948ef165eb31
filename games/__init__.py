"""Pure game engines (standard library only). See DESIGN.md §2."""

from games.base import Context, Game, IllegalAction, Outcome, Policy, rng_for
from games.registry import all_games, get_game

__all__ = ["Context", "Game", "IllegalAction", "Outcome", "Policy", "all_games", "get_game", "rng_for"]
