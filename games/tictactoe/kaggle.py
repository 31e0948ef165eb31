"""kaggle-environments' URL-agent protocol for tic-tac-toe, so one bot server plays on both
platforms (``manage.py serve_bot --kaggle``)."""

from __future__ import annotations

from typing import Any

from games.tictactoe.engine import KEYS


def message(body: Any) -> dict:
    """The native tic-tac-toe ``play-turn`` message of a kaggle URL-agent request."""
    try:
        observation = body["state"]["observation"]
        board, mark = observation["board"], observation["mark"]
    except (KeyError, TypeError):
        raise ValueError(
            'expected {"state": {"observation": {"board": [...], "mark": 1|2}}}'
        ) from None
    if (
        type(mark) is not int
        or mark not in (1, 2)
        or not isinstance(board, list)
        or len(board) != 9
        or any(type(c) is not int or c not in (0, 1, 2) for c in board)
    ):
        raise ValueError("board must be 9 cells 0, 1 or 2 and mark 1 or 2")
    return {
        "game-id": "kaggle",
        "action": "play-turn",
        "game": "tictactoe",
        "players": 2,
        "board": {key: ("", "X", "O")[c] for key, c in zip(KEYS, board, strict=True)},
        "you": "X" if mark == 1 else "O",
        "player-index": mark - 1,
    }


def action(reply: Any) -> int:
    """kaggle's action (the cell's index) for the native reply ``{"play": "r-c"}``."""
    return KEYS.index(reply["play"])
