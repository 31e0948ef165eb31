"""The play page and the test bench for N-seat games (tron: 2 to 13 snakes): as many seats
as the game's range allows, the same endpoint in several seats, and the page's add/remove
seat buttons (exercised in the browser by ``tests/e2e``-style Playwright screenshots)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from competition.models import Match
from competition.models.bots import Bot, EndpointKind

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> Client:
    user = get_user_model().objects.create_user("owner", password="pw-owner-123")
    c = Client()
    c.force_login(user)
    c.user = user
    return c


def seats_of(match: Match) -> list[tuple[str, str]]:
    return list(match.participants.order_by("seat").values_list("bot__kind", "bot__target"))


def test_it_shows_the_seats_a_game_takes_with_add_and_remove_buttons(client):
    # It should show tron's two usual seats, the add/remove buttons and the range.
    page = client.get("/games/tron/play").content.decode()
    assert 'name="p1"' in page and 'name="p2"' in page and 'name="p3"' not in page
    assert 'id="add-seat"' in page and 'data-min="2" data-max="13"' in page
    assert "js/seats.js" in page
    # It should keep every seat given in the link (a confirmation lists all of them).
    link = (
        "/games/tron/play?p1=builtin:random&p2=builtin:random&p3=builtin:survivor&p4=builtin:random"
    )
    page = client.get(link).content.decode()
    assert 'name="p4"' in page and 'name="p5"' not in page
    assert page.count("<p>Seat ") == 4 and "Seat 3: <b>" in page
    # A two-seat game has no buttons.
    page = client.get("/games/tictactoe/play").content.decode()
    assert 'id="add-seat"' not in page and 'name="p3"' not in page


def test_it_starts_a_thirteen_seat_match_with_one_endpoint_in_several_seats(client):
    data = {f"p{i}": "builtin:random" for i in range(1, 13)}
    data["p13"] = "builtin:survivor"
    response = client.post("/games/tron/play", {**data, "pace_ms": "0"})
    match = Match.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/matches/{match.pk}/"
    # It should seat 13 snakes, the same platform seat in the first twelve.
    assert seats_of(match) == [("builtin", "random")] * 12 + [("builtin", "survivor")]
    assert match.options["players"] == 13 and not match.rated
    # It should read no fourteenth seat (the game's most is 13).
    client.post("/games/tron/play", {**data, "p14": "builtin:random", "pace_ms": "0"})
    assert Match.objects.order_by("-id").first().participants.count() == 13


def test_it_refuses_an_empty_seat_among_filled_ones_and_too_few_seats(client):
    response = client.post(
        "/games/tron/play", {"p1": "builtin:random", "p2": "", "p3": "builtin:random"}
    )
    assert response.status_code == 200 and "p2: This seat is empty" in response.content.decode()
    response = client.post("/games/tron/play", {"p1": "builtin:random", "pace_ms": "0"})
    assert response.status_code == 200 and "Tron needs 2 to 13 seats." in response.content.decode()
    # It should keep two-seat games at two (a third seat is not read).
    client.post(
        "/games/tictactoe/play",
        {"p1": "builtin:random", "p2": "builtin:perfect", "p3": "builtin:random", "pace_ms": "0"},
    )
    assert Match.objects.get().participants.count() == 2
    assert Match.objects.count() == 1


def test_it_benches_a_bot_against_a_builtin_in_every_other_seat(client):
    bot = Bot.objects.create(
        owner=client.user, game="tron", name="mine", kind=EndpointKind.HTTP,
        target="https://bots.example.org/tron",
    )  # fmt: skip
    page = client.get("/bench/").content.decode()
    assert 'name="tron-players"' in page and 'name="tictactoe-players"' not in page
    response = client.post(
        "/bench/",
        {
            "game": "tron",
            "tron-mine": f"bot:{bot.pk}",
            "tron-opponent": "builtin:survivor",
            "tron-players": "5",
            "tron-seat": "2",
            "tron-pace_ms": "0",
        },
    )
    match = Match.objects.get()
    assert response.status_code == 302, response.content.decode()[:2000]
    # It should seat the bot at seat 2 of five and the built-in everywhere else.
    survivor = ("builtin", "survivor")
    assert seats_of(match) == [survivor, survivor, ("http", bot.target), survivor, survivor]
    # It should refuse a seat beyond the match's seats.
    response = client.post(
        "/bench/",
        {
            "game": "tron",
            "tron-mine": f"bot:{bot.pk}",
            "tron-opponent": "itself",
            "tron-players": "3",
            "tron-seat": "7",
            "tron-pace_ms": "0",
        },
    )
    assert response.status_code == 200 and "seats 0 to 2" in response.content.decode()
    assert Match.objects.count() == 1
