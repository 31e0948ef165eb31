"""Pairing generators: pure functions over entry ids (no ORM)."""

from __future__ import annotations

from collections.abc import Sequence


def round_robin(entries: Sequence, *, double: bool = False) -> list[list[tuple]]:
    """Rounds of pairs by the circle method: every pair meets once (twice with seats
    swapped when ``double``); with an odd count one entry rests each round. Seats are
    balanced: each entry is first in about half of its pairings."""
    items = list(entries)
    if len(items) < 2:
        return []
    if len(items) % 2:
        items.append(None)
    n = len(items)
    rounds = []
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = items[i], items[n - 1 - i]
            if a is None or b is None:
                continue
            pairs.append((a, b) if (r + i) % 2 == 0 else (b, a))
        rounds.append(pairs)
        items = [items[0], items[-1], *items[1:-1]]
    if double:
        rounds += [[(b, a) for a, b in pairs] for pairs in rounds]
    return rounds
