"""Round robin and double round robin (``pairing.round_robin``), played round by round with the
players fixed at the start."""

from __future__ import annotations

from competition.events import pairing, scheduling
from competition.events.formats.base import Format
from competition.models import Entry, EventFormat


class RoundRobin(Format):
    key = EventFormat.ROUND_ROBIN
    double = False

    def start(self, entries: list[Entry]) -> int:
        scheduling.seed_in_order(entries)
        return self.advance()

    def advance(self) -> int:
        current = scheduling.current_round(self.event)
        if current is None:
            return 0
        bots = {e.bot_id: e.bot for e in scheduling.entrants(scheduling.entries(self.event))}
        plan = pairing.round_robin(list(bots), double=self.double)
        if current >= len(plan):
            scheduling.finish(self.event)
            return 0
        if not self.round_due(current):
            return 0
        created = 0
        for a, b in plan[current]:
            created += scheduling.create_series(self.event, current + 1, bots[a], bots[b])
        return created

    def total_rounds(self, entrants: int, bracket: dict | None) -> int | None:
        return len(pairing.round_robin(list(range(entrants)), double=self.double))


class DoubleRoundRobin(RoundRobin):
    key = EventFormat.DOUBLE_ROUND_ROBIN
    double = True
