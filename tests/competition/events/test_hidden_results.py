"""Issue 46 R1: an event hiding its results (``Event.hide_results``) tells nobody a result or
a placing before the presenter reveals it. A round robin of four bots of four owners (one an
HTTP bot whose server is gone: it forfeits every game, and its name sorts third, where the
zero-point order used to place it) is played by the runner to its end; the notices and the
mails (a real SMTP server on loopback) hold no placing, the page, the API and the big screen
say "Play over · results being revealed", never "Finished"; the presenter's reveals (the
presenter page's POST, or the admin's "Reveal every hidden match") finish it, and each owner
is told once the placing the big screen's podium shows."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from competition.events import services as events
from competition.models import (
    Event,
    EventFormat,
    EventStatus,
    MatchStatus,
    Notification,
    NotificationKind,
)
from competition.models.bots import EndpointKind
from competition.notifications import notify
from tests import factories
from tests.conftest import free_port
from tests.factories import play_everything

PLAY_OVER = "Play over · results being revealed"
NAMES = ("Ada", "Bea", "Cy-gone", "Zed")  # alphabetical; Cy-gone forfeits every game


def hidden_cup() -> dict:
    """The four owners' bots entered by the organiser, started, played to the end."""
    staff = factories.user("organiser", password=False, is_staff=True, is_superuser=True)
    owners = [
        factories.user(name.lower(), password=False, email=f"{name.lower()}@example.test")
        for name in ("Ann", "Bob", "Cat", "Dan")
    ]
    gone = f"http://127.0.0.1:{free_port()}/"  # nothing listens there
    kinds = [
        (EndpointKind.BUILTIN, "random"),
        (EndpointKind.BUILTIN, "random"),
        (EndpointKind.HTTP, gone),
        (EndpointKind.BUILTIN, "perfect"),
    ]
    bots = [
        factories.bot(owner, name, kind=kind, target=target)
        for owner, name, (kind, target) in zip(owners, NAMES, kinds, strict=True)
    ]
    event = factories.event(
        "Hidden cup",
        bots=bots,
        format=EventFormat.ROUND_ROBIN,
        hide_results=True,
        created_by=staff,
    )
    events.start_event(event)
    asyncio.run(play_everything())
    event.refresh_from_db()
    return {"staff": staff, "owners": owners, "bots": bots, "event": event}


def placing_notices() -> list[str]:
    """Every notice that ends an event or names a placing, whoever it is for."""
    return [
        text
        for kind, text in Notification.objects.values_list("kind", "text")
        if kind == NotificationKind.EVENT_ENDED or " placed " in text
    ]


def assert_nothing_told(world: dict, smtp) -> None:
    notify.flush()
    # It should have told no one a placing or an end, on the site or by mail.
    assert placing_notices() == []
    mails = smtp.texts()
    assert not [m for m in mails if " placed " in m or "Event ended" in m], mails
    event = Event.objects.get(pk=world["event"].pk)
    # It should say the play is over, not that the event finished, on the page, in its
    # header, in the API and on the big screen (no podium either).
    assert event.status == EventStatus.REVEALING
    client = factories.logged_in(world["owners"][0])
    page = client.get(f"/events/{event.pk}/").content.decode()
    said = re.search(r'id="event-status">([^<]*)<', page).group(1)
    assert said == PLAY_OVER
    assert client.get(f"/api/events/{event.pk}/").json()["status"] == "revealing"
    screen = client.get(f"/events/{event.pk}/screen.json").json()
    assert screen["event"]["status"] == "revealing" and screen["show"]["podium"] is None
    assert events.placings(event) is None and events.champion(event) is None


def assert_no_place_shown(world: dict) -> None:
    """Before the first reveal: no bot ranked in the standings (no result counts yet), so no
    zero-point order (the names' order) is shown as places."""
    client = factories.logged_in(world["owners"][0])
    page = client.get(f"/events/{world['event'].pk}/").content.decode()
    places = re.findall(r'<tr data-bot="\d+">\s*<td class="num">([^<]*)</td>', page)
    assert places == ["\N{EN DASH}"] * 4, places


def assert_told_the_podium(world: dict, smtp) -> None:
    notify.flush()
    event = Event.objects.get(pk=world["event"].pk)
    assert event.status == EventStatus.FINISHED
    client = factories.logged_in(world["owners"][0])
    screen = client.get(f"/events/{event.pk}/screen.json").json()
    podium = {row["name"]: row["placing"] for row in screen["show"]["podium"]["top"]}
    table = events.placings(event)
    places = {row["name"]: row["placing"] for row in table}
    # It should place the bot that forfeited every game last, never by its name, and put
    # the top three places on the podium (a shared third place whole), as the table says.
    assert places["Cy-gone"] == "4th"
    assert list(podium) == [r["name"] for i, r in enumerate(table) if i < 3 or r["place"] <= 3]
    assert all(places[name] == placing for name, placing in podium.items())
    for owner, bot in zip(world["owners"], world["bots"], strict=True):
        told = list(
            Notification.objects.filter(user=owner, kind=NotificationKind.EVENT_ENDED).values_list(
                "text", flat=True
            )
        )
        # It should tell each owner once, with the placing the podium shows.
        assert told == [f"Hidden cup ended: {bot.name} placed {places[bot.name]} of 4."]
        mails = [m for to, m in smtp.mails if to == [owner.email] and smtp.kind(m) == "Event ended"]
        assert len(mails) == 1
        assert told[0] in mails[0].get_payload(decode=True).decode()
    page = client.get(f"/events/{event.pk}/").content.decode()
    assert re.search(r'id="event-status">([^<]*)<', page).group(1) == "Finished"


@pytest.mark.django_db(transaction=True)
def test_it_tells_the_placings_at_the_last_reveal_in_the_podiums_order(smtp, allow_loopback):
    world = hidden_cup()
    event = world["event"]
    hidden = list(
        event.matches.filter(status__in=MatchStatus.done())
        .order_by("round", "id")
        .values_list("pk", flat=True)
    )
    assert len(hidden) == 6
    notify.flush()
    # It should have told each owner the start at once (the mail catcher works).
    assert sum(smtp.kind(m) == "Event started" for _, m in smtp.mails) == 4
    assert_nothing_told(world, smtp)
    assert_no_place_shown(world)
    presenter = factories.logged_in(world["staff"])
    for match_id in hidden[:-1]:
        reveal = presenter.post(f"/events/{event.pk}/present/reveal/{match_id}")
        assert reveal.json() == {"match": match_id, "revealed": True}
    # It should tell nothing while one result is still hidden.
    assert_nothing_told(world, smtp)
    presenter.post(f"/events/{event.pk}/present/reveal/{hidden[-1]}")
    assert_told_the_podium(world, smtp)
    # It should not tell anyone again (nothing left to reveal).
    assert events.reveal_all(event) == 0
    assert len(placing_notices()) == 4


@pytest.mark.django_db(transaction=True)
def test_it_tells_the_placings_once_when_the_organiser_reveals_everything(smtp, allow_loopback):
    world = hidden_cup()
    assert_nothing_told(world, smtp)
    admin = factories.logged_in(world["staff"])
    response = admin.post(
        "/admin/competition/event/",
        {"action": "reveal_all", "_selected_action": [world["event"].pk]},
    )
    assert response.status_code == 302
    assert_told_the_podium(world, smtp)
    assert len(placing_notices()) == 4


def change_form(event: Event, **overrides) -> dict:
    """The admin's change form of ``event`` as posted with nothing changed but ``overrides``
    (a checkbox left out is off)."""
    data = {
        "name": event.name,
        "game": event.game,
        "options": json.dumps(event.options),
        "format": event.format,
        "series_length": str(event.series_length),
        "pace_ms": str(event.pace_ms or 0),
        "round_gap": str(event.round_gap),
        "freeze_versions": "on",
        "min_entries": str(event.min_entries),
        "admission": event.admission,
        "min_rated_games": str(event.min_rated_games),
        "entries-TOTAL_FORMS": str(event.entries.count()),
        "entries-INITIAL_FORMS": str(event.entries.count()),
        "entries-MIN_NUM_FORMS": "0",
        "entries-MAX_NUM_FORMS": "1000",
    }
    for i, entry in enumerate(event.entries.order_by("id")):
        data.update(
            {
                f"entries-{i}-id": str(entry.pk),
                f"entries-{i}-event": str(event.pk),
                f"entries-{i}-bot": str(entry.bot_id),
                f"entries-{i}-seed": str(entry.seed),
                f"entries-{i}-active": "on",
            }
        )
    data.update(overrides)
    return data


@pytest.mark.django_db(transaction=True)
def test_it_reveals_everything_and_tells_the_placings_when_the_organiser_stops_hiding(
    smtp, allow_loopback
):
    world = hidden_cup()
    event = world["event"]
    assert_nothing_told(world, smtp)
    admin = factories.logged_in(world["staff"])
    # It should reveal (and rate) every match before the results go public, then tell each
    # entrant once: publishing is the reveal of what is left.
    response = admin.post(f"/admin/competition/event/{event.pk}/change/", change_form(event))
    assert response.status_code == 302, response.content.decode()[:2000]
    event.refresh_from_db()
    assert not event.hide_results
    assert not event.matches.filter(revealed_at__isnull=True).exists()
    assert_told_the_podium(world, smtp)
    assert len(placing_notices()) == 4
