"""Pairing generators: pure functions over entry ids and small records (no ORM, no Django).

Swiss avoids, strongest first: a second bye, a rematch (an exact matching check), a bye above
the lowest-ranked, then score groups.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SERIES_TIE_BREAK = (
    "A series is won by the entry with more total score over its games; "
    "in single elimination a drawn series (equal totals) is won by the higher seed "
    "(the smaller seed number; seeds follow ratings at the start)."
)

# -- round robin -------------------------------------------------------------------------


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


# -- series results (shared by Swiss, standings and elimination) ---------------------------


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


# -- maximum matching (Edmonds' blossom algorithm) ------------------------------------------


def max_matching(n: int, adj: Sequence[Iterable[int]]) -> list[int]:
    """A maximum-cardinality matching on ``0..n-1`` by Edmonds' blossom algorithm: it answers
    "can everybody be paired without a rematch?" exactly, which a greedy search cannot."""
    nbrs = [sorted(set(a)) for a in adj]
    mate = [-1] * n
    # a greedy start saves most augmentations
    for v in range(n):
        if mate[v] == -1:
            for w in nbrs[v]:
                if mate[w] == -1 and w != v:
                    mate[v], mate[w] = w, v
                    break

    def augment_from(root: int) -> bool:
        parent = [-1] * n
        base = list(range(n))
        used = [False] * n
        used[root] = True
        queue = deque([root])

        def lca(a: int, b: int) -> int:
            seen = [False] * n
            while True:
                a = base[a]
                seen[a] = True
                if mate[a] == -1:
                    break
                a = parent[mate[a]]
            while True:
                b = base[b]
                if seen[b]:
                    return b
                b = parent[mate[b]]

        def mark(v: int, b: int, child: int, blossom: list[bool]) -> None:
            while base[v] != b:
                blossom[base[v]] = blossom[base[mate[v]]] = True
                parent[v] = child
                child = mate[v]
                v = parent[mate[v]]

        while queue:
            v = queue.popleft()
            for to in nbrs[v]:
                if base[v] == base[to] or mate[v] == to:
                    continue
                if to == root or (mate[to] != -1 and parent[mate[to]] != -1):
                    cur = lca(v, to)
                    blossom = [False] * n
                    mark(v, cur, to, blossom)
                    mark(to, cur, v, blossom)
                    for i in range(n):
                        if blossom[base[i]]:
                            base[i] = cur
                            if not used[i]:
                                used[i] = True
                                queue.append(i)
                elif parent[to] == -1:
                    parent[to] = v
                    if mate[to] == -1:
                        u = to  # augment along the path
                        while u != -1:
                            pv = parent[u]
                            nxt = mate[pv]
                            mate[u], mate[pv] = pv, u
                            u = nxt
                        return True
                    used[mate[to]] = True
                    queue.append(mate[to])
        return False

    for v in range(n):
        if mate[v] == -1:
            augment_from(v)
    return mate


def _perfectly_pairable(players: Sequence[Hashable], allowed) -> bool:
    n = len(players)
    if n % 2:
        return False
    if n == 0:
        return True
    adj = [[j for j in range(n) if j != i and allowed(players[i], players[j])] for i in range(n)]
    return all(m != -1 for m in max_matching(n, adj))


# -- Swiss ----------------------------------------------------------------------------------


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
            (c for c in candidates if _perfectly_pairable([e for e in ranked if e != c], allowed)),
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
        if _perfectly_pairable(pool, allowed):
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
            if allowed(top, partner) and _perfectly_pairable(rest, allowed):
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


# -- free-for-all ---------------------------------------------------------------------------


def table_sizes(n: int, table_size: int) -> list[int]:
    """Sizes of as few tables as possible, differing by at most one, none below 2; with tables of
    2 and an odd count one entry rests."""
    if table_size < 2:
        raise ValueError("a table has at least two seats")
    if n < 2:
        return []
    if table_size == 2:
        return [2] * (n // 2)
    k = -(-n // table_size)
    q, extra = divmod(n, k)
    return [q + 1] * extra + [q] * (k - extra)


def ffa_step(n: int, tables: int) -> int:
    """The cell step between rounds: ``tables`` if it divides or is coprime with ``n``."""
    if tables <= 0 or n % tables == 0 or math.gcd(n, tables) == 1:
        return max(1, tables)
    step = tables + 1
    while math.gcd(n, step) != 1:
        step += 1
    return step


def ffa_round(entries: Sequence[Hashable], round_no: int, table_size: int) -> list[list]:
    """The tables of free-for-all round ``round_no``, seat 0 first; entries rotate through
    seat-major cells by a step coprime with ``n``, so every entry holds every seat equally often."""
    items = list(entries)
    n = len(items)
    if len(set(items)) != n:
        raise ValueError("ffa_round: entries must be distinct")
    sizes = table_sizes(n, table_size)
    if not sizes:
        return []
    k = len(sizes)
    rows: list[int] = []  # cells per seat number
    for seat in range(max(sizes)):
        rows.append(sum(1 for s in sizes if s > seat))
    step = ffa_step(n, k)
    tables: list[list] = [[None] * s for s in sizes]
    for i, entry in enumerate(items):
        cell = (i + round_no * step) % n
        seat = 0
        while seat < len(rows) and cell >= rows[seat]:
            cell -= rows[seat]
            seat += 1
        if seat == len(rows):
            continue  # the resting cell
        width = rows[seat]  # the tables that have this seat are the first ``width`` ones
        table = (cell + round_no * seat) % width
        tables[table][seat] = entry
    return tables


def rank_points(scores: Mapping[Hashable, float]) -> dict[Hashable, float]:
    """Points by rank at one table: the share of the others beaten, ties half."""
    n = len(scores)
    if n < 2:
        return dict.fromkeys(scores, 0.0)
    out = {}
    for e, mine in scores.items():
        beaten = sum(1 for o, v in scores.items() if o != e and v < mine)
        tied = sum(1 for o, v in scores.items() if o != e and v == mine)
        out[e] = (beaten + tied / 2) / (n - 1)
    return out


# -- single elimination --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Slot:
    """One series of a bracket: round 1.., index 0.. within the round (top to bottom)."""

    round: int
    index: int
    a: Hashable | None = None
    b: Hashable | None = None
    winner: Hashable | None = None
    bye: bool = False

    @property
    def ready(self) -> bool:
        """Both sides known and no winner yet: the series can be played."""
        return self.a is not None and self.b is not None and self.winner is None


def bracket_size(n: int) -> int:
    return 1 << max(1, (n - 1).bit_length())


def seeding_order(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket order: 1 and 2 can only meet in the final."""
    order = [1]
    while len(order) < size:
        m = 2 * len(order)
        order = [x for s in order for x in (s, m + 1 - s)]
    return order


def bracket(seeds: Sequence[Hashable]) -> list[list[Slot]]:
    """The bracket before any series: round 1 filled, byes (to the top seeds) decided."""
    return advance(seeds, {})


def advance(
    seeds: Sequence[Hashable], winners: Mapping[tuple[int, int], Hashable]
) -> list[list[Slot]]:
    """The bracket of ``seeds`` (best first) with ``winners[(round, index)]`` applied;
    ``ValueError`` for a winner not in its slot."""
    seeds = list(seeds)
    n = len(seeds)
    if n < 2:
        raise ValueError("a bracket needs at least two entries")
    if len(set(seeds)) != n:
        raise ValueError("bracket: seeds must be distinct")
    size = bracket_size(n)
    order = seeding_order(size)
    rounds: list[list[Slot]] = []
    first = []
    for i in range(size // 2):
        sa, sb = order[2 * i], order[2 * i + 1]
        a = seeds[sa - 1]  # the better seed always exists (n > size / 2)
        b = seeds[sb - 1] if sb <= n else None
        if b is None:
            first.append(Slot(1, i, a, None, a, bye=True))
        else:
            first.append(Slot(1, i, a, b, _checked(winners.get((1, i)), a, b, 1, i)))
    rounds.append(first)
    while len(rounds[-1]) > 1:
        prev, r = rounds[-1], len(rounds) + 1
        cur = []
        for i in range(len(prev) // 2):
            a, b = prev[2 * i].winner, prev[2 * i + 1].winner
            w = (
                _checked(winners.get((r, i)), a, b, r, i)
                if a is not None and b is not None
                else None
            )
            cur.append(Slot(r, i, a, b, w))
        rounds.append(cur)
    return rounds


def _checked(winner, a, b, r, i):
    if winner is not None and winner != a and winner != b:
        raise ValueError(f"round {r} slot {i}: {winner!r} is not {a!r} or {b!r}")
    return winner


def champion(rounds: Sequence[Sequence[Slot]]) -> Hashable | None:
    return rounds[-1][0].winner if rounds else None


def elimination_winner(
    a: Hashable, b: Hashable, score_a: float, score_b: float, seed_of: Mapping[Hashable, int]
) -> Hashable:
    """Who advances from a finished series (``SERIES_TIE_BREAK``)."""
    if score_a != score_b:
        return a if score_a > score_b else b
    return a if seed_of[a] <= seed_of[b] else b


def round_name(round_number: int, total_rounds: int) -> str:
    left = total_rounds - round_number
    return {0: "Final", 1: "Semi-finals", 2: "Quarter-finals"}.get(left, f"Round {round_number}")


# -- continuous ladder ---------------------------------------------------------------------


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


# -- the standing ladder ---------------------------------------------------------------------


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
