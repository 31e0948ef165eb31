"""Ajax Tiles; ``sample_ai.py`` ports the original sample AI, ``greedy.py`` is our own bot,
``README.md`` holds the normative rules."""

from games.tiles.engine import (
    GAME,
    SAMPLE_STRATEGIES,
    Tiles,
    TilesState,
    board_string,
    board_text,
    click,
    crater_board,
)
from games.tiles.greedy import GreedyBot, _greedy_factory, one_ply_greedy_choices
from games.tiles.sample_ai import (
    _sample_bot,
    board_string_of_text,
    sample_ai_choice,
    sample_ai_move,
    strategy_for_query,
)

# The built-in bots are registered here, not in engine.py: the bots import the engine, so
# the engine imports none of them (an import-linter contract, pyproject.toml).
Tiles.builtin_bots = {
    "random": _sample_bot("random"),
    "expand": _sample_bot("expand"),
    "fearful": _sample_bot("fearful"),
    "contain": _sample_bot("contain"),
    "greedy": _greedy_factory,
}

__all__ = [
    "GAME",
    "SAMPLE_STRATEGIES",
    "GreedyBot",
    "Tiles",
    "TilesState",
    "board_string",
    "board_string_of_text",
    "board_text",
    "click",
    "crater_board",
    "one_ply_greedy_choices",
    "sample_ai_choice",
    "sample_ai_move",
    "strategy_for_query",
]
