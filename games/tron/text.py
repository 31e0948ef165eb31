"""Tron's spectator frame as text: one line per lap, each bike's head and length or how it
crashed (a frame carries only the heads)."""

from __future__ import annotations

#: why a bike crashed (``engine.FAULT`` ... ``engine.OUT_OF_GRID``), in words
DEATHS = {
    "fault": "its bot faulted",
    "cell_taken": "hit a trail",
    "same_target": "collided head-on",
    "out_of_grid": "left the grid",
}


def render(frame: dict) -> str:
    crashed = {d["seat"]: d for d in frame.get("deaths", [])}
    parts = []
    for seat, head in enumerate(frame.get("heads", [])):
        if seat in crashed:
            death = crashed[seat]
            why = DEATHS.get(death.get("reason"), "crashed")
            parts.append(f"seat {seat} out at lap {death.get('lap')} ({why})")
        elif head is None or head[0] is None:
            parts.append(f"seat {seat} off the grid")
        else:
            length = (frame.get("lengths") or [None] * (seat + 1))[seat]
            parts.append(f"seat {seat} at {head[0]},{head[1]} (length {length})")
    alive = sum(1 for a in frame.get("alive", []) if a)
    return f"lap {frame.get('lap', 0)}, {alive} riding: " + "; ".join(parts)
