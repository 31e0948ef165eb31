"""Event services: start an event, progress it as matches finish, standings.

Pairing decisions are pure (``competition.pairing``); this module persists them.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from competition import broadcast
from competition.models import (
    Entry,
    Event,
    EventFormat,
    EventStatus,
    Match,
    MatchStatus,
    Participant,
)
from competition.pairing import round_robin

logger = logging.getLogger(__name__)


def start_event(event: Event) -> int:
    """Schedule an event's matches (round robin formats here); returns matches created."""
    from competition.services.matches import create_match

    with transaction.atomic():
        event = Event.objects.select_for_update().get(pk=event.pk)
        if event.status != EventStatus.DRAFT:
            return 0
        entries = list(event.entries.filter(active=True).select_related("bot").order_by("seed", "id"))
        double = event.format == EventFormat.DOUBLE_ROUND_ROBIN
        created = 0
        for rnd, pairs in enumerate(round_robin([e.bot_id for e in entries], double=double), start=1):
            for a, b in pairs:
                bots = {e.bot_id: e.bot for e in entries}
                for g in range(event.series_length):
                    seats = [bots[a], bots[b]] if g % 2 == 0 else [bots[b], bots[a]]
                    create_match(event.game, seats, options=event.options, event=event, round=rnd,
                                 pairing=f"{a}-{b}", game_in_series=g, pace_ms=event.pace_ms)
                    created += 1
        event.status = EventStatus.RUNNING
        event.started = timezone.now()
        event.save(update_fields=["status", "started"])
    return created


def on_match_finished(match: Match) -> None:
    """Called inside the finish transaction of an event's match."""
    event = Event.objects.select_for_update().get(pk=match.event_id)
    pending = event.matches.exclude(status__in=MatchStatus.done()).exclude(pk=match.pk).exists()
    if not pending and event.status == EventStatus.RUNNING:
        event.status = EventStatus.FINISHED
        event.finished = timezone.now()
        event.save(update_fields=["status", "finished"])
    table = standings(event)
    transaction.on_commit(lambda: broadcast.standings_changed(event.pk, table))


def standings(event: Event) -> list[dict]:
    """Points (score sum), wins, draws, losses and games per entry, best first."""
    rows: dict[int, dict] = {}
    for entry in Entry.objects.filter(event=event).select_related("bot", "bot__owner"):
        rows[entry.bot_id] = {"bot": entry.bot_id, "name": entry.bot.name, "owner": entry.bot.owner.username,
                              "points": 0.0, "wins": 0, "draws": 0, "losses": 0, "games": 0}
    done = Participant.objects.filter(match__event=event, match__status__in=MatchStatus.with_result())
    for p in done.values("bot_id", "score", "result"):
        row = rows.get(p["bot_id"])
        if row is None:
            continue
        row["points"] += p["score"] or 0.0
        row["games"] += 1
        row[{"win": "wins", "draw": "draws", "loss": "losses"}[p["result"]]] += 1
    table = sorted(rows.values(), key=lambda r: (-r["points"], -r["wins"], r["name"]))
    for rank, row in enumerate(table, start=1):
        row["rank"] = rank
    return table
