"""gconway's spectator frame as text (``arena watch``): the field, then the counters."""

from __future__ import annotations


def render(frame: dict) -> str:
    live = frame.get("live") or [0, 0]
    budgets = frame.get("budgets") or [0, 0]
    tail = (
        f"iteration {frame.get('iteration', 0)}/{frame.get('maxIterations', '?')}: "
        f"live {live[0]} - {live[1]}, budgets {budgets[0]} - {budgets[1]}"
    )
    return "\n".join([*frame["field"], tail])
