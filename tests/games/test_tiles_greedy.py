"""Acceptance: greedy against the four sample-AI strategies (games/tiles/README.md §9).

Greedy must score at least 90% of the points against each sample strategy over 100 seeded
two-game series, colours swapped within each series (engine-only games, built-in bots).
"""

import pytest

from games.testing import play_builtin
from games.tiles import GAME, SAMPLE_STRATEGIES

SERIES = 100
TARGET = 0.90


def greedy_share(opponent: str) -> tuple[float, list[float]]:
    """Greedy's share of all points, and its points as red and as blue."""
    points = [0.0, 0.0]
    for seed in range(SERIES):
        for seat in (0, 1):
            names = ["greedy", opponent] if seat == 0 else [opponent, "greedy"]
            _, _, outcome = play_builtin(GAME, seed, names)
            points[seat] += outcome.scores[seat]
    return sum(points) / (2 * SERIES), points


@pytest.mark.slow
@pytest.mark.parametrize("opponent", SAMPLE_STRATEGIES)
def test_it_makes_greedy_win_against_the_sample_ai(opponent):
    share, (as_red, as_blue) = greedy_share(opponent)
    row = (
        f"greedy vs {opponent:8} share {share:6.1%}  "
        f"points as red {as_red:5.1f}/{SERIES}  as blue {as_blue:5.1f}/{SERIES}"
    )
    print(row)
    # It should take at least 90% of the points over the 200 games.
    assert share >= TARGET, row
