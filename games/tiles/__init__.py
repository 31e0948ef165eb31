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
    GreedyBot,
    Tiles,
    TilesState,
    board_string,
    board_string_of_text,
    board_text,
    click,
    crater_board,
    one_ply_greedy_choices,
    sample_ai_choice,
    sample_ai_move,
    strategy_for_query,
)

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
