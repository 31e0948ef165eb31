"""What owners are told when a season of a standing ladder ends: each bot's final place."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.humanize.templatetags.humanize import ordinal

from competition.models import NotificationKind, Season
from competition.notifications import notify
from competition.notifications.event_notices import NAMED_BOTS, by_owner


def season_link(season: Season) -> str:
    return f"/games/{season.game}/seasons/{season.number}/"


def place_words(place: int) -> str:
    """ "1st", "2nd", "3rd", "11th"..."""
    return str(ordinal(place))


def final_places(season: Season, places: Iterable[tuple[int | None, str, int]]) -> int:
    """Tell each owner of ``places`` (``(owner id, bot name, place)``) where their bots
    finished, one notice per owner; returns the owners told."""
    owners = by_owner((owner_id, (name, place)) for owner_id, name, place in places)
    of = f"of {season.ranked} in {season.label}"
    for owner_id, bots in owners.items():
        if len(bots) == 1:
            ((name, place),) = bots
            text = f"Your bot {name} finished {place_words(place)} {of}."
        else:
            shown = [f"{name} {place_words(place)}" for name, place in bots[:NAMED_BOTS]]
            more = len(bots) - len(shown)
            listed = ", ".join(shown) + (f" and {more} more" if more else "")
            text = f"Your bots finished {season.label} ({season.ranked} ranked): {listed}."
        notify.notify(owner_id, NotificationKind.SEASON_ENDED, text, season_link(season))
    return len(owners)
