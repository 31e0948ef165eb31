"""Share links (``/m/<id>``, ``/m/<id>/t/<turn>``, ``/e/<id>``, ``/s/<id>``), a 302 to the page;
a match the reader may not see yet gets a missing one's 404, so a link never tells them apart."""

from __future__ import annotations

from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse

from competition.models import Event, Match


def _visible_match_or_404(request, pk: int) -> None:
    get_object_or_404(Match.objects.visible_to(request.user).only("pk"), pk=pk)


def match(request, pk: int):
    _visible_match_or_404(request, pk)
    return redirect("match-detail", pk=pk)


def match_turn(request, pk: int, turn: int):
    """The viewer opened at ``turn`` (``?turn=N``: a turn beyond the last shows the last)."""
    _visible_match_or_404(request, pk)
    return redirect(f"{reverse('match-detail', args=[pk])}?turn={turn}")


def event(request, pk: int):
    get_object_or_404(Event.objects.only("pk"), pk=pk)
    return redirect("event-detail", pk=pk)


def screen(request, pk: int):
    get_object_or_404(Event.objects.only("pk"), pk=pk)
    return redirect("event-screen", pk=pk)


def match_link(request, pk: int) -> str:
    """The absolute share link of match ``pk`` (the viewer adds ``/t/<turn>``)."""
    return request.build_absolute_uri(reverse("share-match", args=[pk]))


def event_links(request, pk: int) -> dict[str, str]:
    return {
        "event": request.build_absolute_uri(reverse("share-event", args=[pk])),
        "screen": request.build_absolute_uri(reverse("share-screen", args=[pk])),
    }
