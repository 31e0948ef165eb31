"""The round robin pairing (``competition.events.pairing.round_robin``): pure, property-tested."""

import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from competition.events.pairing.round_robin import round_robin

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(n=st.integers(0, 21), double=st.booleans())
def test_it_plays_every_pair_the_right_number_of_times_with_balanced_seats(n, double):
    entries = [f"bot{i}" for i in range(n)]
    rounds = round_robin(entries, double=double)
    if n < 2:
        assert rounds == []
        return
    # It should use n-1 rounds (n when odd: one entry rests), twice that when double.
    per_leg = n - 1 if n % 2 == 0 else n
    assert len(rounds) == per_leg * (2 if double else 1)
    # It should never put an entry twice in one round, and rest at most one entry.
    for pairs in rounds:
        seen = [e for pair in pairs for e in pair]
        assert len(seen) == len(set(seen)) and len(seen) >= n - 1
    # It should play every pair exactly once (twice, both seat orders, when double).
    ordered = Counter(pair for pairs in rounds for pair in pairs)
    unordered = Counter(frozenset(pair) for pair in ordered.elements())
    assert set(unordered) == {frozenset(p) for p in itertools.combinations(entries, 2)}
    assert set(unordered.values()) == {2 if double else 1}
    if double:
        assert all(
            ordered[(a, b)] == 1 and ordered[(b, a)] == 1
            for a, b in itertools.combinations(entries, 2)
        )
    # It should balance seats: first in half of one's pairings, give or take one.
    firsts = Counter(a for a, _ in ordered.elements())
    seconds = Counter(b for _, b in ordered.elements())
    for e in entries:
        assert abs(firsts[e] - seconds[e]) <= (0 if double else 1)


def test_it_accepts_double_positionally_and_rejects_duplicates():
    assert len(round_robin([1, 2, 3, 4], True)) == 6
    with pytest.raises(ValueError):
        round_robin([1, 1, 2])
