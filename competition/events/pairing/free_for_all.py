"""Free-for-all tables: sizes, seats rotating round by round, points by rank at a table."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence


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
