"""Swiss pairing (``competition.events.pairing.swiss``): pure, property-tested."""

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from competition.events.pairing.results import (
    SeriesResult,
    buchholz,
    bye,
    head_to_head,
    points,
    series_points,
)
from competition.events.pairing.swiss import swiss_round, swiss_rounds


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
