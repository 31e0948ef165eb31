"""Maximum matching (Edmonds' blossom algorithm): can everybody be paired without a rematch?"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Sequence


def max_matching(n: int, adj: Sequence[Iterable[int]]) -> list[int]:
    """A maximum-cardinality matching on ``0..n-1`` by Edmonds' blossom algorithm: it answers
    "can everybody be paired without a rematch?" exactly, which a greedy search cannot."""
    nbrs = [sorted(set(a)) for a in adj]
    mate = [-1] * n
    # a greedy start saves most augmentations
    for v in range(n):
        if mate[v] == -1:
            for w in nbrs[v]:
                if mate[w] == -1 and w != v:
                    mate[v], mate[w] = w, v
                    break

    def augment_from(root: int) -> bool:
        parent = [-1] * n
        base = list(range(n))
        used = [False] * n
        used[root] = True
        queue = deque([root])

        def lca(a: int, b: int) -> int:
            seen = [False] * n
            while True:
                a = base[a]
                seen[a] = True
                if mate[a] == -1:
                    break
                a = parent[mate[a]]
            while True:
                b = base[b]
                if seen[b]:
                    return b
                b = parent[mate[b]]

        def mark(v: int, b: int, child: int, blossom: list[bool]) -> None:
            while base[v] != b:
                blossom[base[v]] = blossom[base[mate[v]]] = True
                parent[v] = child
                child = mate[v]
                v = parent[mate[v]]

        while queue:
            v = queue.popleft()
            for to in nbrs[v]:
                if base[v] == base[to] or mate[v] == to:
                    continue
                if to == root or (mate[to] != -1 and parent[mate[to]] != -1):
                    cur = lca(v, to)
                    blossom = [False] * n
                    mark(v, cur, to, blossom)
                    mark(to, cur, v, blossom)
                    for i in range(n):
                        if blossom[base[i]]:
                            base[i] = cur
                            if not used[i]:
                                used[i] = True
                                queue.append(i)
                elif parent[to] == -1:
                    parent[to] = v
                    if mate[to] == -1:
                        u = to  # augment along the path
                        while u != -1:
                            pv = parent[u]
                            nxt = mate[pv]
                            mate[u], mate[pv] = pv, u
                            u = nxt
                        return True
                    used[mate[to]] = True
                    queue.append(mate[to])
        return False

    for v in range(n):
        if mate[v] == -1:
            augment_from(v)
    return mate


def perfectly_pairable(players: Sequence[Hashable], allowed) -> bool:
    n = len(players)
    if n % 2:
        return False
    if n == 0:
        return True
    adj = [[j for j in range(n) if j != i and allowed(players[i], players[j])] for i in range(n)]
    return all(m != -1 for m in max_matching(n, adj))
