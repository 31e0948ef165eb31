"""The big screen's ``show``: ``screen.json`` is ``consumers.event_snapshot`` plus it.

The QR code is an inline SVG (``segno``): no script, so it works offline on a projector's
network. The screen is public: public matches only, no podium while any result is hidden.
"""

from __future__ import annotations

import segno
from django.db.models import Min
from django.urls import reverse

from competition.events import estimate, formats
from competition.events import services as event_services
from competition.matches.presenters import match_json, match_jsons
from competition.models import Event, MatchStatus

#: the results a round summary lists at most (the page shows them all: a round of a big
#: event is summed up by its first matches and the standings)
MAX_RESULTS = 16
PODIUM = 3


def rounds_progress(event: Event) -> tuple[int, int | None]:
    """``(current, completed)``: the latest round with a match, and the latest whose matches all
    ended with no earlier round playing; read on indexes, never the event's history."""
    rounds = event.matches.public().exclude(round=None)
    current = rounds.order_by("-round").values_list("round", flat=True).first() or 0
    # MIN, not ORDER BY round LIMIT 1: the planner reads the few unfinished matches by the
    # (event, status, round) index instead of walking every match of the event by round
    unfinished = rounds.filter(status__in=(MatchStatus.QUEUED, MatchStatus.RUNNING)).aggregate(
        first=Min("round")
    )["first"]
    completed = current if unfinished is None else unfinished - 1
    return current, (completed or None)


def round_started(event: Event, rnd: int) -> str | None:
    """When round ``rnd``'s first match started (ISO 8601), None before."""
    first = (
        event.matches.public()
        .filter(round=rnd, started__isnull=False)
        .aggregate(first=Min("started"))["first"]
    )
    return first.isoformat() if first else None


def round_results(event: Event, rnd: int | None) -> list[dict]:
    if rnd is None:
        return []
    matches = event.matches.public().filter(round=rnd, status__in=MatchStatus.done())
    matches = matches.order_by("id")
    return match_jsons(matches[:MAX_RESULTS])


def final_match(event: Event, bracket: dict | None):
    """The final's (last) game: the bracket's last slot's last game, else the last match to end."""
    if bracket and bracket["rounds"]:
        series = bracket["rounds"][-1]["slots"][-1]["series"]
        ids = [m["id"] for m in series["matches"]] if series else []
        if ids:
            return event.matches.public().filter(pk=max(ids)).first()
    return (
        event.matches.public()
        .filter(status__in=MatchStatus.done(), finished__isnull=False)
        .order_by("-finished", "-id")
        .first()
    )


def qr_svg(url: str) -> str:
    """``url`` as a QR code: an inline SVG that scales with its box (a viewBox, no size)."""
    code = segno.make(url, error="m")
    return code.svg_inline(scale=1, border=2, dark="#0b0f1a", light="#ffffff", omitsize=True)


def podium(request, event: Event, standings: list[dict], bracket: dict | None) -> dict | None:
    """The top of the event's placings (what its entrants are told); None until it finished
    with every result public (presenter mode)."""
    table = event_services.placings(event, standings)
    if table is None:
        return None
    keys = ("rank", "place", "joint", "placing", "bot", "name", "owner", "points", "reached")
    # the top three places, a shared one whole (a knockout's two semi-final losers: joint 3rd)
    top = [
        {key: row.get(key) for key in keys}
        for i, row in enumerate(table)
        if i < PODIUM or row.get("place", row["rank"]) <= PODIUM
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
    """The ``show`` part of ``screen.json``; ``bracket`` None but for an elimination, ``total``
    (the rounds the format plays) None for a ladder."""
    current, completed = rounds_progress(event)
    guess = estimate.for_event(event)
    fmt = formats.of(event)
    return {
        "rounds": {
            "current": current,
            "total": total,
            "completed": completed,
            # while the round gap runs: when the next round starts (ISO 8601), else None
            "next_at": event.next_round_at.isoformat() if event.next_round_at else None,
            # a round's expected duration (``competition/events/estimate.py``) and when the
            # current one started: the wall's countdown of the round
            "estimate": guess.to_json() if guess else None,
            "started_at": round_started(event, current),
        },
        **fmt.wall(),
        "results": round_results(event, completed),
        "bracket": bracket,
        # the pairings settled on seed, in words (a knockout's level series past its deciders)
        "ties": [note["text"] for note in fmt.tie_notes(bracket)] if bracket else [],
        "podium": podium(request, event, standings, bracket),
    }
