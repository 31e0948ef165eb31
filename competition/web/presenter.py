"""Presenter mode (``/events/<id>/present``, staff): reveal a hidden event's matches one by one."""

from __future__ import annotations

from django.http import Http404, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from competition.events import formats
from competition.events import services as event_services
from competition.models import Event, MatchStatus
from competition.web.views import renderer_url

#: a turn's duration when neither the match nor the event sets a pace
DEFAULT_PACE_MS = 500


def _staff_event_or_404(request, pk: int) -> Event:
    if not request.user.is_staff:
        raise Http404("No such page")
    return get_object_or_404(Event, pk=pk)


def game_text(game: int | None, length: int) -> str:
    """A game's place in its series: "game 2 of 3", "decider 1" ("" for a series of one)."""
    if game is None:
        return ""
    if game >= length:
        return f"decider {game - length + 1}"
    return f"game {game + 1} of {length}" if length > 1 else ""


def series_words(event: Event) -> dict[int, str]:
    """Match id -> how its series was settled, in words, for the game that settled it (a
    knockout's: "B won on seed after 1-1 and 3 drawn deciders"); said once that game's result
    shows, so it tells nothing ahead."""
    bracket = event_services.bracket_view(event, everything=True)
    said: dict[int, str] = {}
    for rnd in (bracket or {}).get("rounds", []):
        for slot in rnd["slots"]:
            series = slot["series"]
            if slot["winner"] is not None and series and series["matches"] and slot["why"]:
                said[max(m["id"] for m in series["matches"])] = slot["why"]
    return said


def reveal_order(event: Event) -> list[dict]:
    """The event's ended matches in reveal order, with no results: the page is projected.
    ``stage``: the round's name (a knockout's "Quarter-finals", else "Round 2"), ``game``: the
    game's place in its series, ``after``: how its series was settled, for the game that did."""
    matches = (
        event.matches.filter(status__in=MatchStatus.done())
        .prefetch_related("participants__bot")
        .order_by("round", "id")
    )
    fmt = formats.of(event)
    entrants = event.entries.filter(seed__gte=1).count() or event.entries.count()
    length = max(1, event.series_length)
    after = series_words(event)
    return [
        {
            "id": m.pk,
            "round": m.round,
            "stage": fmt.stage(m.round, entrants),
            "game": game_text(m.game_in_series, length),
            "after": after.get(m.pk, ""),
            "names": [p.bot.name for p in sorted(m.participants.all(), key=lambda p: p.seat)],
            "revealed": m.revealed_at is not None or not event.hide_results,
            "pace_ms": m.pace_ms,
        }
        for m in matches
    ]


def event_present(request, pk: int):
    event = _staff_event_or_404(request, pk)
    config = {
        "event": {"id": event.pk, "name": event.name, "game": event.game},
        "hideResults": event.hide_results,
        "renderer": renderer_url(event.game),
        "paceMs": event.pace_ms or DEFAULT_PACE_MS,
        "matches": reveal_order(event),
        "viewer": reverse("match-viewer-json", args=[0]).replace("/0/", "/{id}/"),
        "turns": reverse("api:match-turns", args=[0]).replace("/0/", "/{id}/"),
        "reveal": reverse("event-reveal", args=[event.pk, 0]).replace("/0", "/{id}"),
        "csrf": get_token(request),
    }
    return render(request, "present.html", {"event": event, "config": config})


@require_POST
def event_reveal(request, pk: int, match_id: int):
    """Reveal one match; ``revealed`` false when it already was or cannot be."""
    event = _staff_event_or_404(request, pk)
    if not event.matches.filter(pk=match_id).exists():
        raise Http404("No such match in this event")
    return JsonResponse({"match": match_id, "revealed": event_services.reveal(match_id)})
