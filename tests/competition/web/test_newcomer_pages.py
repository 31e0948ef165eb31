"""A newcomer's first hour (issue 25, parts 4 and 5) through the real entry points: words a
person understands (registering, test calls, logs, docs, the lock-out page), the site's own
404/500 pages in every configuration, and the organisers' event page in the admin."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory

from competition.bots.services import platform_seat
from competition.models import Entry, Event, EventFormat, EventStatus
from competition.models.bots import Bot, EndpointKind
from tests.conftest import REPO, free_port
from tests.factories import logged_in

pytestmark = pytest.mark.django_db

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {"staff": {"is_superuser": True}}


def register(client, target: str) -> str:
    response = client.post(
        "/bots/new/", {"game": "tictactoe", "name": "b", "kind": "http", "target": target}
    )
    assert response.status_code == 200  # refused: the form again
    return " ".join(response.context["form"].errors.get("target", []))


# -- registering --------------------------------------------------------------------------------


def test_it_refuses_a_url_with_one_clear_error(users):
    client = logged_in(users["owner"])
    refused = register(client, "http://10.1.2.3/bot")
    # It should say why once, without the false "scheme ''" error of an empty re-check.
    assert "not a public address" in refused and "scheme" not in refused
    assert len(client.post("/bots/new/", {"game": "tictactoe", "name": "b", "target": "http://10.1.2.3/"}).context["form"].errors["target"]) == 1  # fmt: skip
    # It should hint at the scheme for a URL written without one.
    hint = register(client, "bots.example.org/ttt")
    assert "http:// or https://" in hint and "https://bots.example.org/ttt" in hint
    # It should call ::1 what it is (this server), not an "embedded IPv4 address".
    loopback = register(client, "http://[::1]:8100/")
    assert "embeds an IPv4" not in loopback and "not a public address" in loopback
    assert not Bot.objects.exists()


def test_it_names_how_to_allow_loopback_in_development(users, settings):
    settings.DEBUG = True
    refused = register(logged_in(users["owner"]), "http://127.0.0.1:8100/")
    assert "ARENA_BOT_ALLOW_NETWORKS=127.0.0.0/8" in refused


# -- test calls and logs ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_it_explains_a_fault_in_plain_words_with_the_detail_folded(
    users, allow_loopback, async_client
):
    bot = await Bot.objects.acreate(
        owner=users["owner"], game="tictactoe", name="t", target=f"http://127.0.0.1:{free_port()}/"
    )
    await async_client.aforce_login(users["owner"])
    await async_client.post(f"/bots/{bot.pk}/test")
    page = (await async_client.get(f"/bots/{bot.pk}/")).content.decode()
    # It should lead with the catalogue's words and fold the technical detail away.
    assert "Could not be reached" in page and "Nothing answered at your bot&#x27;s address" in page
    # the code itself is for programs (the API's fault): not in what the result says unfolded
    result = re.search(r'id="test-result">(.*?)<p class="small muted">Reply', page, re.S).group(1)
    unfolded = re.sub(r"<details.*?</details>", "", result, flags=re.S)
    assert not re.search(r"\bconnect\b|Fault:", unfolded), unfolded
    folded = re.search(r'<details class="technical">(.*?)</details>', page, re.S)
    assert folded and "127.0.0.1" in folded.group(1)
    # No "HTTP status —" without a status, and no next step after a fault.
    assert "HTTP status" not in page and "HTTP —" not in page and 'id="next-step"' not in page


@pytest.mark.django_db(transaction=True)
async def test_it_shows_json_as_json_and_form_bodies_decoded_with_a_next_step(
    users, allow_loopback, async_client
):
    from aiohttp import web

    from tests.helpers import http_bot

    async def ttt(request):
        await request.read()
        return web.json_response({"play": "1-1"})

    async def tiles(request):
        await request.read()
        return web.json_response({"x": 0, "y": 0})

    await async_client.aforce_login(users["owner"])
    async with http_bot(ttt) as url:
        bot = await Bot.objects.acreate(
            owner=users["owner"], game="tictactoe", name="t", target=url + "/"
        )
        await async_client.post(f"/bots/{bot.pk}/test")
        page = (await async_client.get(f"/bots/{bot.pk}/")).content.decode()
    # It should pretty-print JSON (the request and the reply) and the verdict as JSON.
    assert "{\n  &quot;play&quot;: &quot;1-1&quot;\n}" in page
    assert "accepted as the move" in page and "HTTP 200" in page
    # It should offer a next step after a successful call: the bench, the leaderboard.
    step = re.search(r'<p class="next-step" id="next-step">(.*?)</p>', page, re.S)
    assert step and "/bench/#bench-tictactoe" in step.group(1) and "leaderboard" in step.group(1)
    async with http_bot(tiles) as url:
        tile = await Bot.objects.acreate(owner=users["owner"], game="tiles", name="t", target=url)
        await async_client.post(f"/bots/{tile.pk}/test")
        page = (await async_client.get(f"/bots/{tile.pk}/")).content.decode()
    # It should decode a form body: fields, the board readable, the raw bytes on demand.
    body = re.search(r"<dl class=\"formbody\">(.*?)</dl>", page, re.S)
    assert body and "<code>color</code>" in body.group(1) and "<code>board</code>" in body.group(1)
    assert "%5B" not in body.group(1) and "[[&quot;&quot;" in body.group(1)
    assert re.search(r'<details class="raw"><summary>raw body</summary>.*%5B', page, re.S)


# -- docs -----------------------------------------------------------------------------------------


def test_it_shows_options_as_json_and_a_port_apart_from_the_site():
    page = Client().get("/docs/tictactoe/").content.decode()
    options = page.split('id="options"')[1]
    # It should show the options as the bot sees them (JSON), never as Python.
    assert "<code>false</code>" in options and "False" not in options
    # It should use a port other than make run's 8000, and say how to allow loopback.
    assert "--port 8100" in page and ":8000/" not in page
    assert "ARENA_BOT_ALLOW_NETWORKS=127.0.0.0/8" in page
    assert "ARENA_BOT_ALLOW_NETWORKS" in Client().get("/docs/").content.decode()
    for starter in (REPO / "games").glob("*/starter_bot.py"):
        text = starter.read_text()
        assert "8000" not in text and "default=8100" in text, starter


# -- the site's own pages --------------------------------------------------------------------


@pytest.mark.parametrize("debug", [True, False])
def test_it_answers_a_missing_page_in_the_sites_layout(settings, debug):
    settings.DEBUG = debug
    response = Client().get("/no/such/page/")
    page = response.content.decode()
    # It should show its own page, never Django's debug page listing the routes.
    assert response.status_code == 404
    assert "Page not found" in page and 'class="topbar"' in page
    assert "URLconf" not in page and "api/" not in page.split("<main")[1].split("</main>")[0]
    # A page that raises Http404 (an unknown bot) as well; the API keeps its JSON.
    assert 'class="topbar"' in Client().get("/bots/999999/").content.decode()
    assert Client().get("/api/bots/999999/").json()
    # It should still add the slash to a page that has one.
    assert Client().get("/bench").status_code in (301, 302)


def test_it_answers_a_server_error_in_the_sites_layout():
    from django.views.defaults import server_error

    response = server_error(RequestFactory().get("/"))
    page = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong" in page and 'class="topbar"' in page


def test_it_shows_the_lock_out_in_the_sites_layout_with_its_duration(settings):
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    get_user_model().objects.create_user("victim", password="the-right-password-9")
    client = Client(REMOTE_ADDR="203.0.113.9")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = client.post("/accounts/login/", {"username": "victim", "password": "guess"})
    page = response.content.decode()
    assert response.status_code == 429
    assert 'class="topbar"' in page and "15 minutes" in page


# -- organisers ---------------------------------------------------------------------------------


def test_it_runs_an_event_from_its_admin_page(users):
    staff = logged_in(users["staff"])
    # users' bots that play in process (no network): staff-made strategies of their own
    mine, theirs = (
        Bot.objects.create(
            owner=users[who], game="tictactoe", name=who, kind=EndpointKind.BUILTIN, target="random"
        )
        for who in ("owner", "other")
    )
    event = Event.objects.create(name="Cup", game="tictactoe", format=EventFormat.ROUND_ROBIN)
    page = staff.get(f"/admin/competition/event/{event.pk}/change/").content.decode()
    # It should name the inline properly and pick entries by bot name (autocomplete).
    assert "ENTRYS" not in page.upper().replace("ENTRIES", "")
    assert "Entries" in page and "admin-autocomplete" in page
    # It should offer the buttons: add bots (with built-ins to choose), start, page, screen.
    assert f"/admin/competition/event/{event.pk}/add-bots/" in page
    assert f"/admin/competition/event/{event.pk}/start/" in page
    assert f'href="/events/{event.pk}/"' in page and f'href="/events/{event.pk}/screen"' in page
    assert 'name="builtin" value="perfect"' in page
    # The autocomplete finds bots by name, never a human seat.
    platform_seat("tictactoe", EndpointKind.HUMAN, "browser")
    found = staff.get(
        "/admin/autocomplete/",
        {"app_label": "competition", "model_name": "entry", "field_name": "bot", "term": "human"},
    ).json()["results"]
    assert [r["text"] for r in found] == []
    found = staff.get(
        "/admin/autocomplete/",
        {"app_label": "competition", "model_name": "entry", "field_name": "bot", "term": "own"},
    ).json()["results"]
    assert [r["text"] for r in found] == ["owner (Tic-tac-toe)"]
    response = staff.post(f"/admin/competition/event/{event.pk}/add-bots/", {"builtin": "perfect"})
    assert response.status_code == 302
    entered = list(Entry.objects.filter(event=event).select_related("bot"))
    # It should enter the users' bots and the named built-in (the platform's seat) only.
    assert {e.bot_id for e in entered if e.bot.owner_id} == {mine.pk, theirs.pk}
    assert [e.bot.target for e in entered if e.bot.owner_id is None] == ["perfect"]
    assert staff.get(f"/admin/competition/event/{event.pk}/start/").status_code == 403
    assert staff.post(f"/admin/competition/event/{event.pk}/start/").status_code == 302
    event.refresh_from_db()
    assert event.status == EventStatus.RUNNING and event.matches.count() == 1  # round 1 of 3
    # Nobody else may use the buttons.
    assert logged_in(users["owner"]).post(
        f"/admin/competition/event/{event.pk}/add-bots/"
    ).status_code in (302, 403)
    assert Entry.objects.filter(event=event).count() == 3
