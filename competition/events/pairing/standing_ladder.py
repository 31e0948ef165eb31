"""The standing ladder's tables: a seeker's target rating, its table (one bot per owner),
the seat order."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Contender:
    """A standing-ladder bot; ``owner`` None is the platform."""

    id: Hashable
    owner: Hashable | None
    rating: float
    games: int = 0
    first_seats: int = 0


def standing_target(
    seeker: Contender,
    edges: Callable[[], tuple[float, float] | None],
    rng: Any,
    *,
    explore_games: int,
    explore_percent: int,
) -> float:
    """The rating near which ``seeker``'s opponents are sought: its own, except in its exploring
    games (``explore_games``, then ``explore_percent`` %), drawn across the ladder."""
    if seeker.games >= explore_games and rng.random() * 100 >= explore_percent:
        return seeker.rating
    found = edges()
    if found is None or found[1] <= found[0]:
        return seeker.rating
    low, high = found
    return low + rng.random() * (high - low)


def standing_table(
    seeker: Contender, candidates: Iterable[Contender], seats: int, target: float
) -> list[Contender] | None:
    """``seeker`` and the ``seats - 1`` candidates nearest ``target``, at most one bot per owner
    (the platform counts as one); None if they cannot fill it."""
    table = [seeker]
    owners = {seeker.owner}
    ranked = sorted(
        (c for c in candidates if c.id != seeker.id),
        key=lambda c: (abs(c.rating - target), c.games, str(c.id)),
    )
    for c in ranked:
        if len(table) == seats:
            break
        if c.owner not in owners and all(c.id != t.id for t in table):
            table.append(c)
            owners.add(c.owner)
    return table if len(table) == seats else None


def standing_seats(table: Sequence[Contender]) -> list[Contender]:
    """The table in seat order, the smallest share of first seats first (they even out)."""
    return sorted(table, key=lambda c: (c.first_seats / c.games if c.games else 0.0, str(c.id)))
