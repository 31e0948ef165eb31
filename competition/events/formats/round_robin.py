"""Round robin and double round robin: every pair of the eligible entries meets once (twice,
seats swapped), ``pairing.round_robin``'s circle method; every series is queued at the start
and the event finishes when no match is queued or running."""

from __future__ import annotations

from competition.events import pairing, scheduling
from competition.events.formats.base import Format
from competition.models import Entry, EventFormat


class RoundRobin(Format):
    key = EventFormat.ROUND_ROBIN
    double = False

    def start(self, entries: list[Entry]) -> int:
        bots = {e.bot_id: e.bot for e in entries if scheduling.eligible(e)}
        created = 0
        for rnd, pairs in enumerate(pairing.round_robin(list(bots), double=self.double), start=1):
            for a, b in pairs:
                created += scheduling.create_series(self.event, rnd, bots[a], bots[b])
        return created

    def total_rounds(self, entrants: int, bracket: dict | None) -> int | None:
        return len(pairing.round_robin(list(range(entrants)), double=self.double))


class DoubleRoundRobin(RoundRobin):
    key = EventFormat.DOUBLE_ROUND_ROBIN
    double = True
