"""gconway's turns in a finished match's archive: boards as the life step that made them.

Nearly all of a stored turn is boards, and both follow from the turn before: the frame's
``field`` is the previous board, this turn's placed cells and one life step, so it is kept
as the step's name (``"diff"`` or ``"classic"``) when that step makes exactly it; a seat's
``sent`` text holds the previous board, so it is kept as the ``[head, tail]`` around it.
``unpack`` gives back every value as it was; a later ``CODEC`` must still read this one's.
"""

from __future__ import annotations

from typing import Any

from games.base import compact_json
from games.gconway.engine import _FROM_NEUTRAL, _NEUTRAL, SEAT0, SEAT1, _rows_of, life_step

#: the name this codec is kept under in an archive (``Gconway.turns_codec``)
CODEC = "life-1"
#: the life steps a board may come from (an option of the match the turns do not hold)
RULESETS = ("diff", "classic")
#: the neutral board's text in each seat's view (its own cells ``#``, the other's ``O``)
_VIEWS = (str.maketrans("01", "#O"), str.maketrans("01", "O#"))

Turn = dict[str, Any]


def pack(turns: list[Turn]) -> list[Turn]:
    """``turns`` with their boards left out where the turn before gives them back."""
    out, previous, ruleset = [], None, RULESETS[0]
    for turn in turns:
        packed = dict(turn)
        frame = turn.get("frame")
        board = _board(frame)
        if previous is not None:
            found = _ruleset(previous, board, frame, ruleset)
            if found is not None:
                ruleset = found  # a match keeps one ruleset: tried first next time
                packed["frame"] = {**frame, "field": found}
            packed["logs"] = _pack_logs(turn.get("logs"), previous)
        previous = board
        out.append(packed)
    return out


def unpack(turns: list[Turn], codec: str) -> list[Turn]:
    """What ``pack`` was given, from what it made (``ValueError`` for an unknown codec)."""
    if codec != CODEC:
        raise ValueError(f"unknown gconway turn codec {codec!r}")
    out, previous = [], None
    for packed in turns:
        turn = dict(packed)
        frame = packed.get("frame")
        board = None
        if previous is not None:
            if isinstance(frame, dict) and isinstance(frame.get("field"), str):
                board = _step(previous, frame["placed"], frame["field"])
                turn["frame"] = {**frame, "field": board}
            turn["logs"] = _unpack_logs(packed.get("logs"), previous)
        previous = board or _board(turn.get("frame"))  # a board the step made is one
        out.append(turn)
    return out


def _board(frame: Any) -> list[str] | None:
    """A frame's board (its ``field``: equal rows of ``.01``), or None."""
    field = frame.get("field") if isinstance(frame, dict) else None
    if not isinstance(field, list) or not field or set(map(type, field)) != {str}:
        return None
    if set(map(len, field)) != {len(field[0])} or not field[0] or "".join(field).strip(".01"):
        return None
    return field


def _step(board: list[str], placed: Any, ruleset: str) -> list[str]:
    """``board`` with each seat's ``placed`` cells, after one life step (or ``ValueError``)."""
    rows, cols = len(board), len(board[0])
    field = bytearray("".join(board).encode("ascii").translate(_FROM_NEUTRAL))
    if not isinstance(placed, list | tuple) or len(placed) != 2:
        raise ValueError("placed: not one list of cells per seat")
    for value, cells in zip((SEAT0, SEAT1), placed, strict=True):
        for cell in cells:
            r, c = cell
            if type(r) is not int or type(c) is not int or not (0 <= r < rows and 0 <= c < cols):
                raise ValueError(f"placed: no cell {cell!r} on the board")
            field[r * cols + c] = value
    return _rows_of(life_step(bytes(field), rows, cols, ruleset), _NEUTRAL, cols)


def _ruleset(previous: list[str], board: list[str] | None, frame: Any, first: str) -> str | None:
    """The ruleset whose step makes ``board`` from ``previous`` (``first`` tried first), or None."""
    if board is None or len(board) != len(previous) or len(board[0]) != len(previous[0]):
        return None
    for ruleset in (first, *(name for name in RULESETS if name != first)):
        try:
            if _step(previous, frame.get("placed"), ruleset) == board:
                return ruleset
        except (TypeError, ValueError):
            return None
    return None


def _seat_boards(board: list[str]) -> tuple[str, ...]:
    """``board`` as each seat was sent it: the JSON text of its rows in the seat's view."""
    text = compact_json(board)
    return tuple(text.translate(view) for view in _VIEWS)


def _pack_logs(logs: Any, previous: list[str]) -> Any:
    if not isinstance(logs, list) or len(logs) > len(_VIEWS):
        return logs
    out, boards = list(logs), _seat_boards(previous)
    for seat, log in enumerate(logs):
        sent = log.get("sent") if isinstance(log, dict) else None
        at = sent.find(boards[seat]) if isinstance(sent, str) else -1
        if at >= 0:
            out[seat] = {**log, "sent": [sent[:at], sent[at + len(boards[seat]) :]]}
    return out


def _unpack_logs(logs: Any, previous: list[str]) -> Any:
    if not isinstance(logs, list) or len(logs) > len(_VIEWS):
        return logs
    out, boards = list(logs), None
    for seat, log in enumerate(logs):
        sent = log.get("sent") if isinstance(log, dict) else None
        if isinstance(sent, list):
            boards = boards or _seat_boards(previous)
            head, tail = sent
            out[seat] = {**log, "sent": head + boards[seat] + tail}
    return out
