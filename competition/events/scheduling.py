"""What every format builds on: entries; series and tables queued as matches; an event's end."""

from __future__ import annotations

import logging
import math

from django.db.models import Max
from django.utils import timezone

from competition.events import standings as stored
from competition.events.series import PENDING, series_key, table_key
from competition.models import Entry, Event, EventStatus, MatchStatus
from competition.models.bots import Bot, BotStatus
from competition.models.matches import hidden
from competition.ratings import services as ratings

logger = logging.getLogger(__name__)


def eligible(entry: Entry) -> bool:
    """May be paired in a new round or ladder series: an active entry of an active bot."""
    return entry.active and entry.bot.status == BotStatus.ACTIVE


def entries(event: Event) -> list[Entry]:
    """The event's entries with their bots, by seed."""
    return list(event.entries.select_related("bot", "bot__owner").order_by("seed", "id"))


def entrants(entries: list[Entry]) -> list[Entry]:
    """Swiss and elimination: the entries seeded at the start, best first."""
    return sorted((e for e in entries if e.seed >= 1), key=lambda e: (e.seed, e.pk))


def seed_by_rating(entries: list[Entry]) -> list[Entry]:
    """Seed the eligible entries 1..n by rating ordinal (others 0); return them, best first."""
    chosen = [e for e in entries if eligible(e)]
    rated = ratings.for_bots(e.bot_id for e in chosen)
    chosen.sort(
        key=lambda e: (-rated[e.bot_id]["ordinal"], e.seed if e.seed >= 1 else math.inf, e.pk)
    )
    for e in entries:
        e.seed = 0
    for number, e in enumerate(chosen, start=1):
        e.seed = number
    Entry.objects.bulk_update(entries, ["seed"])
    return chosen


def seed_in_order(entries: list[Entry]) -> list[Entry]:
    """Seed the eligible entries 1..n in order, the list every later round is drawn from."""
    chosen = [e for e in entries if eligible(e)]
    for e in entries:
        e.seed = 0
    for number, e in enumerate(chosen, start=1):
        e.seed = number
    Entry.objects.bulk_update(entries, ["seed"])
    return chosen


def current_round(event: Event) -> int | None:
    """The latest round with a match, or None while a match is queued or running."""
    if event.matches.filter(status__in=PENDING).exists():
        return None
    return event.matches.aggregate(top=Max("round"))["top"] or 0


def create_series(event: Event, rnd: int, a: Bot, b: Bot, bye: int | None = None) -> int:
    """Queue the series of ``a`` and ``b`` in round ``rnd`` (a ``bye`` rides on the first)."""
    from competition.matches.lifecycle import create_match

    key = series_key(a.pk, b.pk, bye)
    games = max(1, event.series_length)
    for g in range(games):
        seats = [a, b] if g % 2 == 0 else [b, a]
        create_match(
            event.game,
            seats,
            options=event.options,
            event=event,
            round=rnd,
            pairing=key,
            game_in_series=g,
            pace_ms=event.pace_ms,
            rated=not event.showcase,
        )
    stored.series_created(event, rnd, key, a.pk, b.pk, bye, games)
    return games


def create_decider(event: Event, rnd: int, key: str, a: Bot, b: Bot, game: int) -> int:
    """Queue decider game ``game`` (numbered after the series' own) of the level series ``key``
    of ``a`` (first) and ``b``: seats swapped game after game, as in the series."""
    from competition.matches.lifecycle import create_match

    create_match(
        event.game,
        [a, b] if game % 2 == 0 else [b, a],
        options=event.options,
        event=event,
        round=rnd,
        pairing=key,
        game_in_series=game,
        pace_ms=event.pace_ms,
        rated=not event.showcase,
    )
    stored.sync_series(event, rnd, key)
    return 1


def create_table(event: Event, rnd: int, table: list[Bot]) -> int:
    from competition.matches.lifecycle import create_match

    ids = [b.pk for b in table]
    key = table_key(ids)
    games = max(1, event.series_length)
    for g in range(games):
        shift = g % len(table)
        create_match(
            event.game,
            table[shift:] + table[:shift],
            options=event.options,
            event=event,
            round=rnd,
            pairing=key,
            game_in_series=g,
            pace_ms=event.pace_ms,
            rated=not event.showcase,
        )
    stored.series_created(event, rnd, key, ids[0], ids[1], None, games)
    return games


def to_reveal(event: Event):
    """The event's ended matches still waiting for the presenter's reveal (``hidden``)."""
    return event.matches.filter(hidden(), status__in=MatchStatus.done())


def finish(event: Event) -> None:
    """Mark the locked event's play over: finished, or "revealing" while a result waits for
    its reveal (the last reveal finishes it: ``services.reveal``)."""
    hiding = event.hide_results and to_reveal(event).exists()
    event.status = EventStatus.REVEALING if hiding else EventStatus.FINISHED
    event.finished = timezone.now()
    event.save(update_fields=["status", "finished"])
    logger.info("event %s %s", event.pk, "play over" if hiding else "finished")
