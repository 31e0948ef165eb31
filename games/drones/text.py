"""Game of Drones' spectator frame as text: each army, the round and the wins."""

from __future__ import annotations


def render(frame: dict) -> str:
    lines = [
        f"round {frame.get('round')}/{frame.get('rounds')}, turn {frame.get('turn')}/{frame.get('turns')}"
    ]
    attacking = frame.get("attacking") or []
    for seat, army in enumerate(frame.get("armies") or []):
        mark = " attacking" if seat < len(attacking) and attacking[seat] else ""
        lines.append(
            f"seat {seat}: {army.get('producers')} producers, {army.get('soldiers')} soldiers{mark}"
        )
    wins = frame.get("wins") or [0, 0]
    lines.append(f"wins {wins[0]} - {wins[1]}, draws {frame.get('draws', 0)}")
    return "\n".join(lines)
