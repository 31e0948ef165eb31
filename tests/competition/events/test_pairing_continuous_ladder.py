"""The continuous ladder's pairing (``competition.events.pairing.continuous_ladder``): property-tested."""

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from competition.events.pairing.continuous_ladder import LadderEntry, ladder_pairs


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
