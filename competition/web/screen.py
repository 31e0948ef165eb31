"""What the big screen (``/events/<id>/screen``) shows besides the live snapshot: the rounds,
the results of the last completed round, the bracket (single elimination) and, once the
event is over, the podium with a link and a QR code to the final's replay.

``screen.json`` is ``consumers.event_snapshot`` plus ``show`` (this module); the websocket
snapshot stays as its schema publishes it, and the page re-reads ``screen.json`` after each
result. The QR code is drawn here, as an inline SVG, by ``segno`` (pure Python, no
dependencies): the page loads no script for it and works offline on a projector's network.
"""

from __future__ import annotations

import segno
from django.db.models import Count, Q
from django.urls import reverse

from competition.matches.presenters import match_json
from competition.models import Event, EventFormat, EventStatus, MatchStatus

#: the results a round summary lists at most (the page shows them all: a round of a big
#: event is summed up by its first matches and the standings)
MAX_RESULTS = 16
PODIUM = 3


def rounds_progress(event: Event) -> tuple[int, int | None]:
    """``(current, completed)``: the latest round with a match, and the latest round whose
    matches all ended while no earlier round is still playing (None before that)."""
    done = MatchStatus.done()
    per_round = (
        event.matches.exclude(round=None)
        .values("round")
        .annotate(total=Count("id"), ended=Count("id", filter=Q(status__in=done)))
        .order_by("round")
    )
    rows = list(per_round)
    completed = None
    for row in rows:
        if row["ended"] != row["total"]:
            break
        completed = row["round"]
    return (rows[-1]["round"] if rows else 0), completed


def round_results(event: Event, rnd: int | None) -> list[dict]:
    if rnd is None:
        return []
    matches = (
        event.matches.filter(round=rnd, status__in=MatchStatus.done())
        .prefetch_related("participants__bot__owner")
        .order_by("id")[:MAX_RESULTS]
    )
    return [match_json(m, sorted(m.participants.all(), key=lambda p: p.seat)) for m in matches]


def final_match(event: Event, bracket: dict | None):
    """The final's (last) game: the bracket's last slot's last game, else the event's last
    match to end."""
    if bracket and bracket["rounds"]:
        series = bracket["rounds"][-1]["slots"][-1]["series"]
        ids = [m["id"] for m in series["matches"]] if series else []
        if ids:
            return event.matches.filter(pk=max(ids)).first()
    return (
        event.matches.filter(status__in=MatchStatus.done(), finished__isnull=False)
        .order_by("-finished", "-id")
        .first()
    )


def qr_svg(url: str) -> str:
    """``url`` as a QR code: an inline SVG that scales with its box (a viewBox, no size)."""
    code = segno.make(url, error="m")
    return code.svg_inline(scale=1, border=2, dark="#0b0f1a", light="#ffffff", omitsize=True)


def podium(request, event: Event, standings: list[dict], bracket: dict | None) -> dict | None:
    if event.status != EventStatus.FINISHED:
        return None
    top = [
        {key: row.get(key) for key in ("rank", "bot", "name", "owner", "points", "reached")}
        for row in standings[:PODIUM]
    ]
    final = final_match(event, bracket)
    replay = None
    if final is not None:
        url = request.build_absolute_uri(reverse("match-detail", args=[final.pk]))
        replay = {"match": match_json(final), "url": url, "qr": qr_svg(url)}
    return {"top": top, "final": replay}


def show(
    request, event: Event, standings: list[dict], bracket: dict | None, total: int | None
) -> dict:
    """The ``show`` part of ``screen.json`` (see the module docstring); ``bracket`` is
    ``bracket_view``'s (None but for an elimination) and ``total`` the rounds the format
    plays (None for a ladder)."""
    current, completed = rounds_progress(event)
    return {
        "rounds": {"current": current, "total": total, "completed": completed},
        "elimination": event.format == EventFormat.SINGLE_ELIMINATION,
        "results": round_results(event, completed),
        "bracket": bracket,
        "podium": podium(request, event, standings, bracket),
    }
