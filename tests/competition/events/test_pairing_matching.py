"""Maximum matching (``competition.events.pairing.matching``, Edmonds' blossom): property-tested."""

from hypothesis import given, settings
from hypothesis import strategies as st

from competition.events.pairing.matching import max_matching


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
