"""Free-for-all for N-seat games: ``event.rounds`` rounds of tables of up to ``table_size`` seats
(``pairing.ffa_round`` rotates the seats fairly), each table a series; points by rank."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from competition.events import pairing, scheduling
from competition.events.formats.base import Format
from competition.models import Entry, Event, EventFormat, MatchStatus, Participant
from games import get_game


def table_size(event: Event) -> int:
    """The seats per free-for-all table (``event.table_size``, default the game's most)."""
    return event.table_size or get_game(event.game).seats[1]


def total_rounds(event: Event) -> int:
    return event.rounds or table_size(event)


class FreeForAll(Format):
    key = EventFormat.FREE_FOR_ALL

    @classmethod
    def check_seats(cls, low: int, high: int, size: int | None) -> None:
        """A table seats from the game's fewest (at least 2) to its most."""
        if size is not None and not (max(2, low) <= size <= high):
            raise ValidationError(
                {"table_size": f"A table of this game seats {max(2, low)} to {high}."}
            )

    def start(self, entries: list[Entry]) -> int:
        scheduling.seed_in_order(entries)
        return self.advance()

    def advance(self) -> int:
        event = self.event
        current = scheduling.current_round(event)
        if current is None:
            return 0
        if current >= total_rounds(event):
            scheduling.finish(event)
            return 0
        if not self.round_due(current):
            return 0
        bots = {e.bot_id: e.bot for e in scheduling.entrants(scheduling.entries(event))}
        created = 0
        for table in pairing.ffa_round(list(bots), current, table_size(event)):
            created += scheduling.create_table(event, current + 1, [bots[b] for b in table])
        return created

    def wall(self) -> dict:
        """The big screen: ``many`` (tables of more than two), ``places``, bot id -> {place:
        times}, from the public ended matches, and ``placings``, match id -> bot id ->
        [place, points], the latest two rounds' tables in the event's points (by rank at the
        table, ``pairing.rank_points``: what a finished pane says instead of raw scores)."""
        rows = Participant.objects.filter(
            match__in=self.event.matches.public().filter(status__in=MatchStatus.with_result())
        ).values_list("match_id", "match__round", "bot_id", "score")
        scores: dict[int, list[tuple[int, float]]] = {}
        rounds: dict[int, int] = {}
        for match_id, rnd, bot_id, score in rows:
            scores.setdefault(match_id, []).append((bot_id, score or 0.0))
            rounds[match_id] = rnd or 0
        places: dict[int, dict[int, int]] = {}
        placings: dict[int, dict[int, list]] = {}
        latest = max(rounds.values(), default=0)
        for match_id, seats in scores.items():
            points = pairing.rank_points(dict(seats))
            for bot_id, score in seats:
                place = 1 + sum(1 for _b, other in seats if other > score)
                counts = places.setdefault(bot_id, {})
                counts[place] = counts.get(place, 0) + 1
                if rounds[match_id] >= latest - 1:
                    placings.setdefault(match_id, {})[bot_id] = [place, round(points[bot_id], 3)]
        return {
            "elimination": False,
            "many": table_size(self.event) > 2,
            "places": places,
            "placings": placings,
        }

    def total_rounds(self, entrants: int, bracket: dict | None) -> int | None:
        return total_rounds(self.event)
