"""What the game tests share: the tiles board as the wire shows it, and the spec's click
written out plainly (tests/games/test_tiles.py, test_tiles_bots.py)."""

from __future__ import annotations

import json

from games import Context
from games.tiles import GAME, TilesState

CTX = Context()


def wire_board(state: TilesState) -> list[list[str]]:
    return json.loads(GAME.observation(state, 0, CTX)["board"])


def near(x, y):
    return [
        (u, v)
        for u, v in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1))
        if 0 <= u < 24 and 0 <= v < 12
    ]


def model_click(board, seat, x, y):
    """Spec §4.3-4.5 written out plainly on board[x][y] lists."""
    board = [column[:] for column in board]
    color, enemy = ("r", "b") if seat == 0 else ("b", "r")

    def group(x, y):
        seen, todo = {(x, y)}, [(x, y)]
        while todo:
            for u, v in near(*todo.pop()):
                if (u, v) not in seen and board[u][v] == board[x][y]:
                    seen.add((u, v))
                    todo.append((u, v))
        return seen

    if not (0 <= x < 24 and 0 <= y < 12):
        return board, "pass"
    if board[x][y] == "":
        board[x][y] = color
        defenders = [(u, v) for u, v in near(x, y) if board[u][v] == enemy]
        if not defenders:
            return board, "paint"
        a = len(group(x, y))
        if all(a > len(group(u, v)) for u, v in defenders):
            for u, v in defenders:
                board[u][v] = ""
            return board, "capture"
        board[x][y] = ""
        return board, "repelled"
    if board[x][y] == color:
        board[x][y] = "n"
        for u, v in near(x, y):
            if board[u][v] != "n":
                board[u][v] = "d"
        return board, "nuke"
    return board, "pass"
