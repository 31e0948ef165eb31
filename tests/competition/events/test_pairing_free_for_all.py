"""Free-for-all tables (``competition.events.pairing.free_for_all``): seat rotation, sizes, points."""

from collections import Counter

import pytest

from competition.events.pairing.free_for_all import ffa_round, rank_points, table_sizes


@pytest.mark.parametrize(
    ("n", "size", "sizes"),
    [
        (13, 13, [13]),
        (13, 5, [5, 4, 4]),
        (13, 4, [4, 3, 3, 3]),
        (14, 4, [4, 4, 3, 3]),
        (5, 4, [3, 2]),
        (7, 2, [2, 2, 2]),
        (2, 13, [2]),
    ],
)
def test_it_spreads_the_remainder_so_no_table_is_smaller_than_two(n, size, sizes):
    # It should use as few tables as possible, of sizes within one of each other, none below 2.
    assert table_sizes(n, size) == sizes


@pytest.mark.parametrize(
    ("n", "size"),
    [(13, 13), (13, 5), (13, 4), (12, 4), (12, 3), (14, 4), (10, 4), (9, 3), (7, 2), (8, 2)],
)
def test_it_rotates_seats_so_every_entry_holds_every_seat_equally_often(n, size):
    entries = [f"bot{i}" for i in range(n)]
    sizes = table_sizes(n, size)
    equal = len(set(sizes)) == 1 and sum(sizes) == n
    cycle = sizes[0] if equal else n
    held = {e: Counter() for e in entries}
    for rnd in range(cycle):
        tables = ffa_round(entries, rnd, size)
        # It should seat everybody (but one resting entry of an odd count at tables of 2)
        # once a round, at tables of the planned sizes.
        assert [len(t) for t in tables] == sizes
        seated = [e for t in tables for e in t]
        assert len(set(seated)) == len(seated) == sum(sizes)
        for t in tables:
            for seat, e in enumerate(t):
                held[e][seat] += 1
    # It should give every entry every seat, each as often as every other entry gets it.
    assert len({tuple(sorted(c.items())) for c in held.values()}) == 1
    assert set(held[entries[0]]) == set(range(max(sizes)))
    if equal:  # with equal tables: every seat exactly once per cycle of table-size rounds
        assert all(c == Counter(range(size)) for c in held.values())
    # It should vary who meets whom (not the same tables every round).
    if n > size and cycle > 1:
        rounds = [frozenset(map(frozenset, ffa_round(entries, r, size))) for r in range(2)]
        assert rounds[0] != rounds[1]


def test_it_refuses_duplicate_entries_and_tables_of_one():
    with pytest.raises(ValueError):
        ffa_round(["a", "a", "b"], 0, 3)
    with pytest.raises(ValueError):
        table_sizes(5, 1)


def test_it_gives_points_by_rank_with_ties_sharing():
    # It should give the share of the other seats outranked, a tie counting half.
    assert rank_points({"a": 3.0, "b": 1.0, "c": 1.0, "d": 0.0}) == {
        "a": 1.0,
        "b": 0.5,
        "c": 0.5,
        "d": 0.0,
    }
    # It should agree with a two-seat series' 1, ½, 0.
    assert rank_points({"a": 2.0, "b": 1.0}) == {"a": 1.0, "b": 0.0}
    assert rank_points({"a": 1.0, "b": 1.0}) == {"a": 0.5, "b": 0.5}
