"""Ajax Tiles: one folder holds the game.

``engine.py`` (rules and wire), ``sample_ai.py`` (ports of the original sample AI's four
strategies), ``greedy.py`` (our own bot), ``docs.py`` (the bot authors' page examples),
``renderer.js`` (the viewer), ``rules.html`` (the rules on ``/docs/tiles/``),
``starter_bot.py``, ``README.md`` (the normative rules and protocol) and ``vectors/``
(recordings of the original).
"""

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
