"""Ajax Tiles' frame as text: the board ("0"/"1" the seats, "." empty), then the counts."""

from __future__ import annotations


def render(frame: dict) -> str:
    counts = frame.get("counts") or [0, 0]
    last = frame.get("last")
    tail = f"move {frame.get('move', 0)}: red {counts[0]}, blue {counts[1]}, empty {frame.get('empty', 0)}"
    if last:
        tail += f"; seat {last['seat']} {last['kind']} at {last['x']},{last['y']}"
    return "\n".join([*frame["board"], tail])
