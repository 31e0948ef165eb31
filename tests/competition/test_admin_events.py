"""Events run from the Django admin: an organiser creates an event of 8 built-in tic-tac-toe
bots in each format, adds every active bot with the admin action, starts it, and the
platform plays it to the end (the same services the runners use), with the expected number
of matches and a champion."""

from __future__ import annotations

import math

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from competition.events import services as events
from competition.models import Event, EventFormat, EventStatus, MatchStatus
from competition.models.bots import Bot, EndpointKind
from tests.factories import play_all

pytestmark = pytest.mark.django_db(transaction=True)
ENTRIES = 8


@pytest.fixture
def organiser() -> Client:
    user = get_user_model().objects.create_user(
        "organiser", password="pw-organiser-1", is_staff=True, is_superuser=True
    )
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    for i in range(ENTRIES):  # four perfect and four random players
        Bot.objects.create(
            owner=owner,
            game="tictactoe",
            name=f"bot{i}",
            kind=EndpointKind.BUILTIN,
            target="perfect" if i % 2 else "random",
        )
    client = Client()
    client.force_login(user)
    return client


def admin_action(client: Client, action: str, event: Event) -> None:
    response = client.post(
        "/admin/competition/event/", {"action": action, "_selected_action": [event.pk]}
    )
    assert response.status_code == 302, response.content[:1000]


@pytest.mark.parametrize(
    ("fmt", "series", "rounds", "expected_matches"),
    [
        (EventFormat.ROUND_ROBIN, 1, None, 28),
        (EventFormat.DOUBLE_ROUND_ROBIN, 1, None, 56),
        (EventFormat.SWISS, 2, None, 3 * 4 * 2),  # ceil(log2 8) rounds of 4 pairings, 2 games each
        (EventFormat.SINGLE_ELIMINATION, 2, None, (4 + 2 + 1) * 2),
        (EventFormat.LADDER, 1, 3, None),  # three series per bot, then it finishes
    ],
)
def test_it_runs_an_event_of_eight_bots_from_the_admin(
    organiser, fmt, series, rounds, expected_matches
):
    response = organiser.post(
        "/admin/competition/event/add/",
        {
            "name": f"{fmt} cup",
            "game": "tictactoe",
            "options": '{"move_timeout_ms": 2000}',
            "format": fmt,
            "series_length": series,
            "rounds": rounds or "",
            "pace_ms": 0,
            "entries_per_owner": ENTRIES,  # one owner's eight bots
            "entries-TOTAL_FORMS": 0,
            "entries-INITIAL_FORMS": 0,
            "entries-MIN_NUM_FORMS": 0,
            "entries-MAX_NUM_FORMS": 1000,
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    event = Event.objects.get(name=f"{fmt} cup")
    admin_action(organiser, "add_active_bots", event)
    assert event.entries.count() == ENTRIES
    admin_action(organiser, "start", event)
    event.refresh_from_db()
    assert event.status == EventStatus.RUNNING
    play_all(limit=500)
    event.refresh_from_db()
    # It should run to completion, every match played to a result.
    assert event.status == EventStatus.FINISHED
    matches = event.matches.all()
    assert all(m.status in MatchStatus.with_result() for m in matches)
    if expected_matches is not None:  # the series' own games (a knockout adds its deciders)
        assert matches.filter(game_in_series__lt=series).count() == expected_matches
        deciders = matches.filter(game_in_series__gte=series)
        assert fmt == EventFormat.SINGLE_ELIMINATION or not deciders.exists()
    else:  # the ladder: every bot played its series
        assert matches.count() >= math.ceil(ENTRIES * rounds / 2)
    # It should name a champion, and the admin should show the progress.
    champion = events.champion(event)
    assert champion is not None and champion["name"].startswith("bot")
    page = organiser.get("/admin/competition/event/")
    assert f"{matches.count()}/{matches.count()}" in page.content.decode()
    if fmt == EventFormat.SINGLE_ELIMINATION:
        bracket = events.bracket_view(event)
        assert bracket["champion"]["bot"] == champion["bot"]
