"""Demo showcases: one endless, paced, unrated ladder per game between the built-in seats,
pruned at each finish to its latest ``KEEP`` ended series (docs/architecture.md)."""

from __future__ import annotations

from competition.events import standings as stored
from competition.models import Event, EventSeries, Match, SeriesState

#: ended series (one match each) a showcase keeps
KEEP = 10
#: bots a showcase plays among at least (the built-ins, then the demo user's understudies of
#: them): three make three pairings in turn, one match at a time (no more load than two)
MIN_ENTRIES = 3
#: the name of a game's showcase (``title`` its game's title)
NAME = "Demo {title} showcase"


def prune(event: Event, keep: int | None = None) -> int:
    """Delete showcase ``event``'s ended series beyond its latest ``keep``, with their matches."""
    keep = KEEP if keep is None else keep
    old = list(
        EventSeries.objects.filter(event_id=event.pk)
        .exclude(state=SeriesState.PENDING)
        .order_by("-round", "-id")[keep:]
    )
    for row in old:
        Match.objects.filter(event_id=event.pk, round=row.round, pairing=row.key).delete()
        stored.forget_series(event, row)
    return len(old)
