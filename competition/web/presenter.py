"""Presenter mode (``/events/<id>/present``, staff): reveal a hidden event's matches one by one."""

from __future__ import annotations

from django.http import Http404, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from competition.events import services as event_services
from competition.models import Event, MatchStatus
from competition.web.views import renderer_url

#: a turn's duration when neither the match nor the event sets a pace
DEFAULT_PACE_MS = 500


def _staff_event_or_404(request, pk: int) -> Event:
    if not request.user.is_staff:
        raise Http404("No such page")
    return get_object_or_404(Event, pk=pk)


def reveal_order(event: Event) -> list[dict]:
    """The event's ended matches in reveal order, with no results: the page is projected."""
    matches = (
        event.matches.filter(status__in=MatchStatus.done())
        .prefetch_related("participants__bot")
        .order_by("round", "id")
    )
    return [
        {
            "id": m.pk,
            "round": m.round,
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
