"""Single-elimination brackets (``competition.events.pairing.single_elimination``): property-tested."""

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from competition.events.pairing.results import SERIES_TIE_BREAK
from competition.events.pairing.single_elimination import (
    advance,
    bracket,
    bracket_size,
    champion,
    elimination_winner,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 64), data=st.data())
def test_it_produces_exactly_one_champion_for_any_count_and_results(n, data):
    seeds = [f"s{i}" for i in range(1, n + 1)]
    size = bracket_size(n)
    rounds = bracket(seeds)
    # It should give the byes to the top seeds.
    byes = [s.a for s in rounds[0] if s.bye]
    assert sorted(byes, key=seeds.index) == seeds[: size - n]
    winners: dict = {}
    losses: Counter = Counter()
    played = 0
    while True:
        ready = [s for r in advance(seeds, winners) for s in r if s.ready]
        if not ready:
            break
        slot = data.draw(st.sampled_from(ready), label="next series")
        winner = data.draw(st.sampled_from([slot.a, slot.b]), label="winner")
        winners[(slot.round, slot.index)] = winner
        losses[slot.b if winner == slot.a else slot.a] += 1
        played += 1
    final = advance(seeds, winners)
    # It should end with exactly one champion, everybody else out exactly once.
    assert champion(final) in seeds
    assert played == n - 1
    assert set(losses) == set(seeds) - {champion(final)} and set(losses.values()) == {1}
    assert len(final) == size.bit_length() - 1


def test_it_seeds_one_and_two_into_opposite_halves():
    rounds = bracket(list(range(1, 9)))
    assert [(s.a, s.b) for s in rounds[0]] == [(1, 8), (4, 5), (2, 7), (3, 6)]
    rounds = bracket([1, 2, 3, 4, 5])
    # It should give seeds 1-3 a bye and seed 4 meets seed 5.
    assert [(s.a, s.b, s.winner) for s in rounds[0]] == [
        (1, None, 1),
        (4, 5, None),
        (2, None, 2),
        (3, None, 3),
    ]
    # It should already fill round two where byes met: 2 against 3.
    assert (rounds[1][1].a, rounds[1][1].b) == (2, 3) and rounds[1][1].ready
    with pytest.raises(ValueError):
        advance([1, 2], {(1, 0): 3})


def test_it_breaks_a_drawn_series_by_score_then_seed():
    seed_of = {"a": 1, "b": 2}
    assert elimination_winner("b", "a", 1.5, 0.5, seed_of) == "b"
    # It should let the higher seed through a drawn series.
    assert elimination_winner("b", "a", 1.0, 1.0, seed_of) == "a"
    assert "higher seed" in SERIES_TIE_BREAK
