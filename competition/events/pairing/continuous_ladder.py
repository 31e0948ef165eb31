"""The continuous ladder's pairing: free bots of close rating, the longest-waiting first."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LadderEntry:
    """A ladder entry as the pairing sees it: ``last_played`` any increasing clock (None: never),
    ``busy`` pairings in flight, ``last_opponent``."""

    id: Hashable
    rating: float
    games: int = 0
    last_played: float | None = None
    busy: int = 0
    last_opponent: Hashable | None = None


def ladder_priority(entry: LadderEntry) -> tuple:
    """Smaller first: never played, then the longest wait, then the fewest games."""
    waited = -math.inf if entry.last_played is None else entry.last_played
    return (waited, entry.games, str(entry.id))


def ladder_pairs(
    entries: Iterable[LadderEntry],
    max_concurrent_per_bot: int = 1,
    *,
    max_pairs: int | None = None,
    running: bool | None = None,
) -> list[tuple[Hashable, Hashable]]:
    """New ladder pairings by ``ladder_priority`` (no entry starves), each with the closest-rated
    free partner; an immediate rematch only when nothing else would run."""
    if max_concurrent_per_bot < 1:
        raise ValueError("max_concurrent_per_bot must be at least 1")
    pool = sorted(entries, key=ladder_priority)
    if len({e.id for e in pool}) != len(pool):
        raise ValueError("ladder_pairs: entry ids must be distinct")
    free = {e.id: max_concurrent_per_bot - e.busy for e in pool}
    nothing_running = not running if running is not None else all(e.busy == 0 for e in pool)

    def pick(allow_rematch: bool) -> list[tuple]:
        left = dict(free)
        pairs: list[tuple] = []
        for e in pool:
            while left[e.id] > 0 and (max_pairs is None or len(pairs) < max_pairs):
                partners = [
                    o
                    for o in pool
                    if o.id != e.id
                    and left[o.id] > 0
                    and (o.id, e.id) not in pairs
                    and (e.id, o.id) not in pairs
                    and (allow_rematch or (e.last_opponent != o.id and o.last_opponent != e.id))
                ]
                if not partners:
                    break
                best = min(partners, key=lambda o: (abs(o.rating - e.rating), ladder_priority(o)))
                pairs.append((e.id, best.id))
                left[e.id] -= 1
                left[best.id] -= 1
        return pairs

    pairs = pick(allow_rematch=False)
    if not pairs and nothing_running:
        pairs = pick(allow_rematch=True)
    return pairs
