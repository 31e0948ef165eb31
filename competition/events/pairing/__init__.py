"""Pairing: pure decisions over entry ids and small records (no ORM, no Django), one module per
algorithm as ``events/formats`` has one per format; ``results`` and ``matching`` are shared.
Everything is re-exported here (``pairing.round_robin`` is the function)."""

from __future__ import annotations

from competition.events.pairing.continuous_ladder import LadderEntry, ladder_pairs, ladder_priority
from competition.events.pairing.free_for_all import ffa_round, ffa_step, rank_points, table_sizes
from competition.events.pairing.matching import max_matching, perfectly_pairable
from competition.events.pairing.results import (
    SERIES_TIE_BREAK,
    SeriesResult,
    buchholz,
    bye,
    head_to_head,
    ordinal,
    places,
    placing,
    points,
    rank,
    series_points,
)
from competition.events.pairing.round_robin import round_robin
from competition.events.pairing.single_elimination import (
    Decision,
    Slot,
    advance,
    bracket,
    bracket_size,
    champion,
    elimination_winner,
    round_name,
    seeding_order,
    series_decision,
)
from competition.events.pairing.standing_ladder import (
    Contender,
    standing_seats,
    standing_table,
    standing_target,
)
from competition.events.pairing.swiss import SEARCH_BUDGET, SwissRound, swiss_round, swiss_rounds

__all__ = [
    "SEARCH_BUDGET",
    "SERIES_TIE_BREAK",
    "Contender",
    "Decision",
    "LadderEntry",
    "SeriesResult",
    "Slot",
    "SwissRound",
    "advance",
    "bracket",
    "bracket_size",
    "buchholz",
    "bye",
    "champion",
    "elimination_winner",
    "ffa_round",
    "ffa_step",
    "head_to_head",
    "ladder_pairs",
    "ladder_priority",
    "max_matching",
    "ordinal",
    "perfectly_pairable",
    "places",
    "placing",
    "points",
    "rank",
    "rank_points",
    "round_name",
    "round_robin",
    "seeding_order",
    "series_decision",
    "series_points",
    "standing_seats",
    "standing_table",
    "standing_target",
    "swiss_round",
    "swiss_rounds",
    "table_sizes",
]
