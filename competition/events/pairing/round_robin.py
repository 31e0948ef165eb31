"""Round robin by the circle method: every pair meets once (twice when double, seats swapped)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def round_robin(entries: Sequence, double: bool = False) -> list[list[tuple]]:
    """Rounds of pairs by the circle method: every pair meets once (twice when ``double``, seats
    swapped), one rests per round when the count is odd, each first in half its pairings."""
    items: list[Any] = list(entries)
    if len(items) < 2:
        return []
    if len(set(items)) != len(items):
        raise ValueError("round_robin: entries must be distinct")
    rest = object()
    if len(items) % 2:
        items.insert(0, rest)
    n = len(items)
    rounds: list[list[tuple]] = []
    for r in range(n - 1):
        pairs = []
        fixed, other = items[0], items[n - 1]
        if fixed is not rest:
            pairs.append((fixed, other) if r % 2 == 0 else (other, fixed))
        for i in range(1, n // 2):
            pairs.append((items[i], items[n - 1 - i]))
        rounds.append(pairs)
        items = [items[0], items[-1], *items[1:-1]]
    if double:
        rounds += [[(b, a) for a, b in pairs] for pairs in rounds]
    return rounds
