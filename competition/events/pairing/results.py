"""Series results, shared by Swiss, the standings and elimination: points, Buchholz,
head-to-head and the tie-broken ranking."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

SERIES_TIE_BREAK = (
    "A series is won by the entry with more total score over its games; in single elimination "
    "a level series (equal totals) is settled by the event's tie policy: decider games, or the "
    "higher seed (the smaller seed number; seeds follow ratings at the start)."
)


@dataclass(frozen=True, slots=True)
class SeriesResult:
    """A finished series: ``a`` was first (seat 0 of game 0); ``b is None`` is a bye."""

    a: Hashable
    b: Hashable | None
    points_a: float
    points_b: float = 0.0


def series_points(score_a: float, score_b: float) -> tuple[float, float]:
    """Points of a series from its total scores: a win 1, a draw ½ each, a loss 0."""
    if score_a > score_b:
        return 1.0, 0.0
    if score_b > score_a:
        return 0.0, 1.0
    return 0.5, 0.5


def bye(entry: Hashable) -> SeriesResult:
    """A bye: counts as a series won (1 point), with no opponent."""
    return SeriesResult(entry, None, 1.0, 0.0)


def points(results: Iterable[SeriesResult]) -> dict[Hashable, float]:
    """Total points per entry (entries without a result are absent)."""
    total: dict[Hashable, float] = {}
    for r in results:
        total[r.a] = total.get(r.a, 0.0) + r.points_a
        if r.b is not None:
            total[r.b] = total.get(r.b, 0.0) + r.points_b
    return total


def buchholz(results: Iterable[SeriesResult]) -> dict[Hashable, float]:
    """Buchholz per entry: the sum of its opponents' points (a bye adds nothing)."""
    results = list(results)
    pts = points(results)
    total: dict[Hashable, float] = {}
    for r in results:
        total.setdefault(r.a, 0.0)
        if r.b is None:
            continue
        total.setdefault(r.b, 0.0)
        total[r.a] += pts.get(r.b, 0.0)
        total[r.b] += pts.get(r.a, 0.0)
    return total


def head_to_head(
    results: Iterable[SeriesResult], group: Iterable[Hashable]
) -> dict[Hashable, float]:
    """Points each member of ``group`` took from series against other members."""
    members = set(group)
    total = dict.fromkeys(members, 0.0)
    for r in results:
        if r.a in members and r.b in members:
            total[r.a] += r.points_a
            total[r.b] += r.points_b
    return total


def rank(
    entries: Sequence[Hashable],
    keys: Mapping[Hashable, tuple],
    results: Sequence[SeriesResult],
    names: Mapping[Hashable, str],
) -> list[Hashable]:
    """Entries best first by ``keys[e]`` (larger better), then head-to-head, then name."""
    ordered = sorted(entries, key=lambda e: tuple(-k for k in keys[e]))
    out: list[Hashable] = []
    i = 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and keys[ordered[j]] == keys[ordered[i]]:
            j += 1
        group = ordered[i:j]
        if len(group) > 1:
            h2h = head_to_head(results, group)
            group.sort(key=lambda e: (-h2h[e], names.get(e, ""), str(e)))
        out.extend(group)
        i = j
    return out


def places(
    order: Sequence[Hashable],
    keys: Mapping[Hashable, tuple],
    results: Sequence[SeriesResult],
) -> dict[Hashable, tuple[int, bool]]:
    """Each entry of ``order`` (``rank``'s, best first): (its place, shared). Entries next to
    each other with equal ``keys`` that head-to-head does not tell apart share the better place
    ("joint 5th"); the name, ``rank``'s last resort, separates nobody."""
    out: dict[Hashable, tuple[int, bool]] = {}
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and keys[order[j]] == keys[order[i]]:
            j += 1
        group = list(order[i:j])
        h2h = head_to_head(results, group) if len(group) > 1 else {group[0]: 0.0}
        k = 0
        while k < len(group):
            m = k
            while m < len(group) and h2h[group[m]] == h2h[group[k]]:
                m += 1
            for e in group[k:m]:
                out[e] = (i + k + 1, m - k > 1)
            k = m
        i = j
    return out


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st..."""
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{({1: 'st', 2: 'nd', 3: 'rd'}).get(n % 10, 'th')}"


def placing(place: int, joint: bool) -> str:
    """A place in words: "5th", or "joint 5th" when shared."""
    return f"joint {ordinal(place)}" if joint else ordinal(place)
