"""Tic-tac-toe (BotsArena's protocol): one folder holds the game.

``engine.py`` (rules, wire, built-in bots), ``docs.py`` (the bot authors' page examples),
``kaggle.py`` (kaggle-environments' URL-agent protocol), ``renderer.js`` (the viewer),
``rules.html`` (the rules on ``/docs/tictactoe/``), ``starter_bot.py``, ``README.md`` (the
normative rules and protocol), ``vectors/`` (recordings of the original) and ``fixtures/``.
"""

from games.tictactoe import kaggle
from games.tictactoe.engine import (
    EMPTY,
    GAME,
    INDEX,
    KEYS,
    SYMBOLS,
    TicTacToe,
    best_moves,
    board_dict,
)


def _kaggle_agent(game: TicTacToe):
    """kaggle-environments' URL-agent protocol (``kaggle.py``), registered here rather than
    in engine.py: ``kaggle.py`` imports the engine, so the engine imports none of it."""
    return kaggle


TicTacToe.kaggle_agent = _kaggle_agent

__all__ = ["EMPTY", "GAME", "INDEX", "KEYS", "SYMBOLS", "TicTacToe", "best_moves", "board_dict"]
