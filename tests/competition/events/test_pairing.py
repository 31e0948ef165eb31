"""Pairing generators (``competition.events.pairing``): pure, no database, property-tested."""

import ast
import itertools
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from competition.events.pairing import (
    SERIES_TIE_BREAK,
    LadderEntry,
    SeriesResult,
    advance,
    bracket,
    bracket_size,
    buchholz,
    bye,
    champion,
    elimination_winner,
    ffa_round,
    head_to_head,
    ladder_pairs,
    max_matching,
    points,
    rank,
    rank_points,
    round_robin,
    series_points,
    swiss_round,
    swiss_rounds,
    table_sizes,
)

PAIRING = Path(__file__).resolve().parents[3] / "competition" / "events" / "pairing.py"
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_it_imports_only_the_standard_library():
    roots = set()
    for node in ast.walk(ast.parse(PAIRING.read_text())):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    # It should stay pure: no Django, no ORM, nothing outside the standard library.
    assert roots and roots <= set(sys.stdlib_module_names) | {"__future__"}


# -- round robin --------------------------------------------------------------------------


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


# -- maximum matching -----------------------------------------------------------------------


def brute_max_matching(n, edges):
    best = 0

    def go(i, used, size):
        nonlocal best
        best = max(best, size)
        if i >= len(edges):
            return
        a, b = edges[i]
        if a not in used and b not in used:
            go(i + 1, used | {a, b}, size + 1)
        go(i + 1, used, size)

    go(0, frozenset(), 0)
    return best


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 9).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.sets(
                st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(
                    lambda e: e[0] < e[1]
                )
            ),
        )
    )
)
def test_it_finds_a_maximum_matching_in_any_small_graph(case):
    n, edges = case
    adj = [[] for _ in range(n)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    mate = max_matching(n, adj)
    # It should return a valid matching over existing edges…
    for v, m in enumerate(mate):
        if m != -1:
            assert mate[m] == v and (min(v, m), max(v, m)) in edges
    # …of the largest possible size (blossoms included).
    assert sum(m != -1 for m in mate) // 2 == brute_max_matching(n, sorted(edges))


# -- Swiss ----------------------------------------------------------------------------------


def pairable_without_rematch(players, played):
    players = list(players)
    if not players:
        return True
    top, rest = players[0], players[1:]
    return any(
        frozenset((top, p)) not in played
        and pairable_without_rematch([q for q in rest if q != p], played)
        for p in rest
    )


def fewest_rematches(players, played):
    players = list(players)
    if not players:
        return 0
    top, rest = players[0], players[1:]
    return min(
        (frozenset((top, p)) in played) + fewest_rematches([q for q in rest if q != p], played)
        for p in rest
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 11), data=st.data())
def test_it_never_repeats_a_pairing_while_avoidable_and_gives_at_most_one_bye_each(n, data):
    entries = list(range(100, 100 + n))
    results: list[SeriesResult] = []
    played: set[frozenset] = set()
    byes: Counter = Counter()
    for _round in range(data.draw(st.integers(1, n + 1), label="rounds")):
        sw = swiss_round(entries, results)
        seen = [e for pair in sw.pairs for e in pair] + ([sw.bye] if sw.bye is not None else [])
        # It should place every entry exactly once, with a bye exactly when the count is odd.
        assert sorted(seen) == entries
        assert (sw.bye is not None) == (n % 2 == 1)
        if sw.bye is not None:
            # It should give a second bye only when every entry has had one…
            if byes[sw.bye]:
                assert all(byes[e] for e in entries)
            # …and otherwise to the lowest-ranked entry without one, unless that forces a rematch
            # another choice avoids.
            pts = points(results)
            fresh = sorted(
                [e for e in entries if not byes[e]] or entries, key=lambda e: (pts.get(e, 0.0), -e)
            )
            feasible = [
                c for c in fresh if pairable_without_rematch([e for e in entries if e != c], played)
            ]
            assert sw.bye == (feasible or fresh)[0]
        # It should avoid rematches whenever any admissible bye leaves a rematch-free pairing.
        rest = [e for e in entries if e != sw.bye]
        if sw.rematches:
            choices = ([e for e in entries if not byes[e]] or entries) if n % 2 else [None]
            assert not any(
                pairable_without_rematch([e for e in entries if e != c], played) for c in choices
            )
        # It should never use more rematches than necessary for its bye.
        assert sw.rematches == fewest_rematches(rest, played)
        assert sw.rematches == sum(frozenset(p) in played for p in sw.pairs)
        for a, b in sw.pairs:
            pa = data.draw(st.sampled_from([1.0, 0.5, 0.0]), label="result")
            results.append(SeriesResult(a, b, pa, 1.0 - pa))
            played.add(frozenset((a, b)))
        if sw.bye is not None:
            results.append(bye(sw.bye))
            byes[sw.bye] += 1


def test_it_pairs_round_one_top_half_against_bottom_half_and_score_groups_after():
    entries = list("ABCDEFGH")
    sw = swiss_round(entries)
    # It should pair seed 1 with seed 5, 2 with 6… (Dutch), alternating nobody yet.
    assert {frozenset(p) for p in sw.pairs} == {
        frozenset("AE"),
        frozenset("BF"),
        frozenset("CG"),
        frozenset("DH"),
    }
    results = [SeriesResult(a, b, 1.0, 0.0) for a, b in sw.pairs]
    winners = {a for a, _ in sw.pairs}
    sw2 = swiss_round(entries, results)
    # It should pair winners with winners and losers with losers in round two.
    for a, b in sw2.pairs:
        assert (a in winners) == (b in winners)
    # It should seat first the entry that has been first less often (seats alternate).
    firsts = Counter(a for a, _ in sw.pairs)
    assert all(firsts[a] <= firsts[b] for a, b in sw2.pairs)


def test_it_gives_the_bye_to_the_lowest_ranked_entry_without_one():
    entries = ["A", "B", "C"]
    sw = swiss_round(entries)
    # It should give the first bye to the lowest seed.
    assert sw.bye == "C" and sw.pairs == [("A", "B")]
    results = [SeriesResult("A", "B", 1.0, 0.0), bye("C")]
    sw2 = swiss_round(entries, results)
    # It should give the next bye to the lowest-ranked entry that has not had one (B, 0 points).
    assert sw2.bye == "B" and {frozenset(p) for p in sw2.pairs} == {frozenset("AC")}


def test_it_ignores_withdrawn_entries_but_counts_their_results():
    results = [SeriesResult("A", "X", 0.0, 1.0), SeriesResult("B", "C", 1.0, 0.0)]
    sw = swiss_round(["A", "B", "C"], results)
    assert "X" not in {e for p in sw.pairs for e in p} and sw.bye == "C"


def test_it_pairs_a_large_field_quickly():
    entries = list(range(64))
    results: list[SeriesResult] = []
    for _ in range(swiss_rounds(64)):
        sw = swiss_round(entries, results)
        assert sw.rematches == 0 and len(sw.pairs) == 32
        results += [SeriesResult(a, b, *series_points(a % 3, b % 5)) for a, b in sw.pairs]
    # It should have played six rounds without a rematch.
    assert len({frozenset((r.a, r.b)) for r in results}) == 6 * 32


def test_it_counts_rounds_points_and_buchholz():
    # It should default to ⌈log2 n⌉ rounds.
    assert [swiss_rounds(n) for n in (1, 2, 3, 8, 9, 16)] == [0, 1, 2, 3, 4, 4]
    results = [
        SeriesResult("A", "B", 1.0, 0.0),
        SeriesResult("C", "D", 0.5, 0.5),
        SeriesResult("A", "C", 1.0, 0.0),
        SeriesResult("B", "D", 0.0, 1.0),
        bye("E"),
    ]
    assert points(results) == {"A": 2.0, "B": 0.0, "C": 0.5, "D": 1.5, "E": 1.0}
    # It should sum the opponents' points; a bye adds nothing.
    assert buchholz(results) == {"A": 0.5, "B": 3.5, "C": 3.5, "D": 0.5, "E": 0.0}
    assert head_to_head(results, ["B", "C", "D"]) == {"B": 0.0, "C": 0.5, "D": 1.5}


def test_it_breaks_ties_by_the_given_keys_then_head_to_head_then_name():
    results = [SeriesResult("B", "A", 1.0, 0.0), SeriesResult("C", "D", 0.5, 0.5)]
    keys = {"A": (1.0,), "B": (1.0,), "C": (1.0,), "D": (0.0,)}
    names = {"A": "alpha", "B": "bravo", "C": "charlie", "D": "delta"}
    # It should put B first (it took the only series inside the tied group), then A and C by name.
    assert rank(["A", "B", "C", "D"], keys, results, names) == ["B", "A", "C", "D"]
    # It should fall back to names when head-to-head does not separate.
    assert rank(["C", "A"], {"A": (1.0,), "C": (1.0,)}, [], names) == ["A", "C"]


# -- single elimination ---------------------------------------------------------------------


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


# -- ladder ---------------------------------------------------------------------------------


def test_it_pairs_close_ratings_and_serves_the_longest_waiting_first():
    entries = [
        LadderEntry("new", 10.0),  # never played: first in line
        LadderEntry("a", 30.0, games=5, last_played=1.0),
        LadderEntry("b", 11.0, games=5, last_played=2.0),
        LadderEntry("c", 29.0, games=5, last_played=3.0),
    ]
    # It should pair the new entry with the closest rating, then the next-longest waiting.
    assert ladder_pairs(entries) == [("new", "b"), ("a", "c")]


def test_it_caps_concurrency_and_avoids_an_immediate_rematch_while_others_run():
    entries = [
        LadderEntry("a", 20.0, last_played=5.0, last_opponent="b"),
        LadderEntry("b", 20.0, last_played=5.0, last_opponent="a"),
        LadderEntry("c", 0.0, busy=1),
        LadderEntry("d", 0.0, busy=1),
    ]
    # It should wait for someone else rather than replay the same pair at once…
    assert ladder_pairs(entries) == []
    # …unless nothing would run at all.
    idle = [e for e in entries if e.id in ("a", "b")]
    assert ladder_pairs(idle) == [("a", "b")]
    # It should fill the spare capacity (c and d run one pairing each, cap 2) and no more.
    assert ladder_pairs(entries, 2) == [("c", "d")]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 14), cap=st.integers(1, 3), data=st.data())
def test_it_gives_every_active_bot_a_match_within_a_bounded_number_of_rounds(n, cap, data):
    ratings = data.draw(st.lists(st.floats(-10, 60), min_size=n, max_size=n), label="ratings")
    # a runner with little spare capacity: few new pairings per round
    max_pairs = data.draw(st.integers(1, max(1, n // 2)), label="max_pairs")
    state = {i: {"games": 0, "last": None, "opp": None} for i in range(n)}
    in_flight: list[tuple[int, int]] = []
    waiting = Counter()
    clock = 0.0
    for _step in range(4 * n + 8):
        busy = Counter(e for pair in in_flight for e in pair)
        entries = [
            LadderEntry(i, ratings[i], s["games"], s["last"], busy[i], s["opp"])
            for i, s in state.items()
        ]
        new = ladder_pairs(entries, cap, max_pairs=max_pairs)
        in_flight += new
        busy = Counter(e for pair in in_flight for e in pair)
        # It should never exceed the cap, and always keep something running.
        assert max(busy.values()) <= cap and in_flight
        for i in state:
            waiting[i] = (
                waiting[i] + 1 if busy[i] < cap and i not in {e for p in new for e in p} else 0
            )
            # It should never leave a free bot waiting for more than n rounds.
            assert waiting[i] <= n + 1, f"bot {i} waited {waiting[i]} rounds"
        # Some series finish (at least one), in an order the test chooses.
        done = data.draw(
            st.lists(st.sampled_from(range(len(in_flight))), min_size=1, unique=True), label="done"
        )
        for k in sorted(done, reverse=True):
            a, b = in_flight.pop(k)
            clock += 1.0
            for me, other in ((a, b), (b, a)):
                state[me].update(games=state[me]["games"] + 1, last=clock, opp=other)
    # It should have given every bot games.
    assert all(s["games"] > 0 for s in state.values())


# -- free-for-all ---------------------------------------------------------------------------


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
