"""Tic-tac-toe (BotsArena's protocol); the folder's ``README.md`` holds the normative rules."""

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
    """kaggle-environments' protocol, registered here so the engine never imports it."""
    return kaggle


TicTacToe.kaggle_agent = _kaggle_agent

__all__ = ["EMPTY", "GAME", "INDEX", "KEYS", "SYMBOLS", "TicTacToe", "best_moves", "board_dict"]
