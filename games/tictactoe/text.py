"""Tic-tac-toe's spectator frame as text (``arena watch``): seat 0 is X, seat 1 is O."""

from __future__ import annotations

MARKS = {"0": "X", "1": "O", ".": "."}


def render(frame: dict) -> str:
    rows = [" ".join(MARKS.get(c, "?") for c in row) for row in frame["board"]]
    if frame.get("line"):
        status = "three in a row"
    elif frame.get("to_move") is not None:
        status = f"{MARKS[str(frame['to_move'])]} to move"
    else:
        status = "over"
    return "\n".join([*rows, f"move {frame.get('moves', 0)}: {status}"])
