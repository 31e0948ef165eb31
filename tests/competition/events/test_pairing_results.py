"""Series results and the tie-broken ranking (``competition.events.pairing.results``)."""

from competition.events.pairing.results import SeriesResult, rank


def test_it_breaks_ties_by_the_given_keys_then_head_to_head_then_name():
    results = [SeriesResult("B", "A", 1.0, 0.0), SeriesResult("C", "D", 0.5, 0.5)]
    keys = {"A": (1.0,), "B": (1.0,), "C": (1.0,), "D": (0.0,)}
    names = {"A": "alpha", "B": "bravo", "C": "charlie", "D": "delta"}
    # It should put B first (it took the only series inside the tied group), then A and C by name.
    assert rank(["A", "B", "C", "D"], keys, results, names) == ["B", "A", "C", "D"]
    # It should fall back to names when head-to-head does not separate.
    assert rank(["C", "A"], {"A": (1.0,), "C": (1.0,)}, [], names) == ["A", "C"]
