"""Swiss rounds. Swiss avoids, strongest first: a second bye, a rematch (an exact matching
check), a bye above the lowest-ranked, then score groups."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from competition.events.pairing.matching import max_matching, perfectly_pairable
from competition.events.pairing.results import SeriesResult, points


@dataclass(frozen=True, slots=True)
class SwissRound:
    pairs: list[tuple[Hashable, Hashable]]
    bye: Hashable | None = None
    rematches: int = 0


def swiss_rounds(n: int) -> int:
    """The default number of Swiss rounds for ``n`` entries: ⌈log2 n⌉ (at least 1)."""
    return max(1, math.ceil(math.log2(n))) if n >= 2 else 0


#: nodes the preference-ordered search may visit before the matching-guided fallback
SEARCH_BUDGET = 5_000


def swiss_round(
    entries: Sequence[Hashable],
    results_so_far: Iterable[SeriesResult] = (),
    *,
    search_budget: int = SEARCH_BUDGET,
) -> SwissRound:
    """Pair one Swiss round of ``entries`` (best first); results of entries no longer paired
    still count for their opponents."""
    entries = list(entries)
    if len(set(entries)) != len(entries):
        raise ValueError("swiss_round: entries must be distinct")
    results = list(results_so_far)
    pts = points(results)
    seed_index = {e: i for i, e in enumerate(entries)}
    played: set[frozenset] = set()
    byes: set[Hashable] = set()
    firsts: dict[Hashable, int] = {}
    for r in results:
        if r.b is None:
            byes.add(r.a)
            continue
        played.add(frozenset((r.a, r.b)))
        firsts[r.a] = firsts.get(r.a, 0) + 1
        firsts[r.b] = firsts.get(r.b, 0) - 1
    ranked = sorted(entries, key=lambda e: (-pts.get(e, 0.0), seed_index[e]))

    def allowed(x, y) -> bool:
        return frozenset((x, y)) not in played

    bye_to = None
    pool = ranked
    if len(ranked) % 2:
        fresh = [e for e in reversed(ranked) if e not in byes]
        candidates = fresh or list(reversed(ranked))
        bye_to = next(
            (c for c in candidates if perfectly_pairable([e for e in ranked if e != c], allowed)),
            candidates[0],
        )
        pool = [e for e in ranked if e != bye_to]
    pairs = _pair_pool(pool, pts, allowed, search_budget)
    seated = []
    for x, y in pairs:
        # fewer seat-0 series first; on a tie the higher-ranked entry
        key_x, key_y = (firsts.get(x, 0), pool.index(x)), (firsts.get(y, 0), pool.index(y))
        seated.append((x, y) if key_x <= key_y else (y, x))
    rematches = sum(1 for x, y in seated if not allowed(x, y))
    return SwissRound(pairs=seated, bye=bye_to, rematches=rematches)


def _preference(remaining: list, pts: Mapping) -> list:
    """Partners for ``remaining[0]`` in order of preference (Dutch within a score group)."""
    top = remaining[0]
    score = pts.get(top, 0.0)
    group = [e for e in remaining if pts.get(e, 0.0) == score]
    half = len(group) // 2
    same = group[half:] + list(reversed(group[1:half])) if half else []
    others = [e for e in remaining[1:] if pts.get(e, 0.0) != score]
    others.sort(key=lambda e: abs(pts.get(e, 0.0) - score))  # stable: rank order kept
    return [e for e in same if e != top] + others


def _pair_pool(pool: list, pts: Mapping, allowed, budget: int) -> list[tuple]:
    if not pool:
        return []
    # 1. a preference-ordered search (failures memoised), within a node budget
    failed: set[frozenset] = set()
    visits = 0

    def search(remaining: list) -> list[tuple] | None:
        nonlocal visits
        if not remaining:
            return []
        key = frozenset(remaining)
        if key in failed:
            return None
        visits += 1
        if visits > budget:
            raise _Budget
        top = remaining[0]
        for partner in _preference(remaining, pts):
            if not allowed(top, partner):
                continue
            rest = search([e for e in remaining if e != top and e != partner])
            if rest is not None:
                return [(top, partner), *rest]
        failed.add(key)
        return None

    try:
        found = search(list(pool))
    except _Budget:
        found = None
        if perfectly_pairable(pool, allowed):
            return _guided(pool, pts, allowed)
    if found is not None:
        return found
    # 2. rematches are unavoidable: keep as many fresh pairs as possible
    return _fewest_rematches(pool, allowed)


class _Budget(Exception):
    pass


def _guided(pool: list, pts: Mapping, allowed) -> list[tuple]:
    """Preference order, checking at each step that the rest can still be paired."""
    remaining = list(pool)
    pairs = []
    while remaining:
        top = remaining[0]
        for partner in _preference(remaining, pts):
            rest = [e for e in remaining if e != top and e != partner]
            if allowed(top, partner) and perfectly_pairable(rest, allowed):
                pairs.append((top, partner))
                remaining = rest
                break
        else:  # cannot happen when the pool was pairable
            raise AssertionError("guided pairing lost its way")
    return pairs


def _fewest_rematches(pool: list, allowed) -> list[tuple]:
    n = len(pool)
    adj = [[j for j in range(n) if j != i and allowed(pool[i], pool[j])] for i in range(n)]
    mate = max_matching(n, adj)
    pairs, seen, leftover = [], set(), []
    for i in range(n):
        if i in seen:
            continue
        if mate[i] == -1:
            leftover.append(pool[i])
            continue
        seen.update((i, mate[i]))
        pairs.append((pool[i], pool[mate[i]]))
    pairs += [(leftover[k], leftover[k + 1]) for k in range(0, len(leftover) - 1, 2)]
    order = {e: i for i, e in enumerate(pool)}
    return sorted(pairs, key=lambda p: min(order[p[0]], order[p[1]]))
