"""Demo showcases: one continuous, paced ladder per game between the platform's built-in
seats, so that the home page, every game page and a big screen always have a live match
(``manage.py demo`` makes them, once per game: ``ensure_showcase`` there; ``make run`` runs
them).

A showcase is an ``Event`` with ``showcase`` set: a ladder (``EventFormat.LADDER``, no round
limit, so it never finishes) of one game per series, paced (``pace_ms``) for spectators.
Its matches are unrated practice (``Match.rated`` false, as the bench's): the built-ins'
ratings and the leaderboards are what real matches made them.

It does not fill the database: each time one of its matches finishes (inside the finish
transaction, whatever the runner: embedded, Celery or ``runmatches``), ``prune`` deletes the
series that ended beyond the latest ``KEEP`` (their matches, participants and turns) and
subtracts them from the stored standings (``standings.forget_series``). A showcase therefore
holds at most ``KEEP`` ended series plus those in flight (at most half its entries), however
long it runs; SQLite reuses the freed pages, so the file stops growing too.
"""

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
    """Delete the ended series of showcase ``event`` beyond its latest ``keep`` (default
    ``KEEP``), with their matches (turns and participants cascade); returns how many went."""
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
