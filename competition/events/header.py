"""An event's header line (status, round, progress), on its page and with each standings message."""

from __future__ import annotations

from competition.events import formats
from competition.models import Event, EventSeries, EventTally
from competition.plumbing.prepared import Prepared

#: an event's latest round (the unique (event, round, key) index read backwards)
_LATEST_ROUND = Prepared(
    lambda event: (
        EventSeries.objects.filter(event_id=event).order_by("-round").values_list("round")[:1]
    )
)


def rounds(event: Event, entrants: int, bracket: dict | None, series=None) -> dict:
    """``{"current", "total", "text"}`` of the rounds, from the public ``series`` if given."""
    if series is None:
        current = next(iter(_LATEST_ROUND(event.pk)), (0,))[0]
    else:
        current = max((rnd for rnd, _key in series), default=0)
    fmt = formats.of(event)
    total = fmt.total_rounds(entrants, bracket)
    text = fmt.round_text(current, total)
    return {"current": current, "total": total, "text": text}


def header(event: Event, entrants: int, bracket: dict | None, series=None) -> dict:
    """The live header: status (code and words), the rounds' words, matches done / total."""
    tally = EventTally.objects.filter(event=event).values_list("done", "matches").first()
    done, total = tally or (0, 0)
    return {
        "status": event.status,
        "status_label": event.status_text,
        "round_text": rounds(event, entrants, bracket, series)["text"],
        "matches_done": done,
        "matches_total": total,
    }
