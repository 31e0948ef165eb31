"""Single elimination: the seeded bracket, byes to the top seeds, winners advanced."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass


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


@dataclass(frozen=True, slots=True)
class Decision:
    """How a finished series of a knockout stands: ``winner`` None while a decider game is due
    (``decider`` is its game number). ``how``: "series" (won in the series' games), "decider"
    (won in a decider game), "seed" (level after every decider allowed: the higher seed)."""

    winner: Hashable | None
    how: str
    series: tuple[float, float]  # the series' own games: total scores of a and b
    drawn_deciders: int = 0
    decider: int | None = None


def series_decision(
    a: Hashable,
    b: Hashable,
    games: Sequence[tuple[int, float | None, float | None]],
    length: int,
    deciders: int,
    seed_of: Mapping[Hashable, int],
) -> Decision:
    """Who goes through a series of ``a`` and ``b`` whose ``games`` ((game number, score of a,
    score of b), None for a game with no result) are all over: the more total score over its
    ``length`` games; level, each decider game (numbered from ``length``) in order, the first
    one won deciding; level after ``deciders`` of them (0: none played), the higher seed."""
    series = (
        sum(x or 0.0 for g, x, _ in games if g < length),
        sum(y or 0.0 for g, _, y in games if g < length),
    )
    if series[0] != series[1]:
        return Decision(a if series[0] > series[1] else b, "series", series)
    extra = sorted(game for game in games if game[0] >= length)
    drawn = 0
    for _g, x, y in extra:
        if x is not None and y is not None and x != y:
            return Decision(a if x > y else b, "decider", series, drawn)
        drawn += x is not None and y is not None
    if len(extra) < deciders:
        return Decision(None, "", series, drawn, length + len(extra))
    return Decision(a if seed_of[a] <= seed_of[b] else b, "seed", series, drawn)


def round_name(round_number: int, total_rounds: int) -> str:
    left = total_rounds - round_number
    return {0: "Final", 1: "Semi-finals", 2: "Quarter-finals"}.get(left, f"Round {round_number}")
