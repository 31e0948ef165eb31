"""Presenter mode (#17 item 3): an event that hides its results (``Event.hide_results``)
is played for real (the runner, built-in bots), and before the reveal no public page, API
response or websocket message tells anything of its matches: the REST API (list, detail,
turns, replay, logs, fork, standings, bracket, leaderboard, bots), the pages (home, game,
leaderboard, match list, event page, big screen JSON, match page, bot page, user page, the
owner's bot log, the fork form) and the websockets (the match stream refused, the event
stream's snapshot and live messages). Staff see everything; the reveal (the presenter
page's POST) publishes one match: its end on the event stream, the standings with it, its
rating applied then."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from competition.events import services as events
from competition.models import (
    Entry,
    Event,
    EventFormat,
    Match,
    MatchStatus,
    Rating,
    RatingChange,
)
from competition.models.bots import Bot, EndpointKind
from competition.ratings import services as ratings
from competition.web.routing import websocket_urlpatterns
from tests.factories import play_everything
from tests.live_protocol import CheckedCommunicator

GAME = "tictactoe"
PASSWORD = "pw-presenter-123"


def as_user(user):
    """The routing with ``scope["user"]`` set (what AuthMiddlewareStack does from the session)."""
    router = URLRouter(websocket_urlpatterns)

    async def app(scope, receive, send):
        return await router({**scope, "user": user}, receive, send)

    return app


def setup_final(fmt=EventFormat.SINGLE_ELIMINATION, entries: int = 4, series_length: int = 1):
    """An event (by default single elimination) of built-in bots owned by ordinary users
    (``entrant`` the first one's, each of the others its own owner's: a match between bots
    of one owner is never rated), whose results wait for their reveal, started."""
    User = get_user_model()
    entrant = User.objects.create_user("entrant", password=PASSWORD)
    staff = User.objects.create_user("organiser", password=PASSWORD, is_staff=True)
    owners = [entrant] + [User.objects.create_user(f"entrant-{i}") for i in range(2, 5)]
    bots = [
        Bot.objects.create(
            owner=owners[i - 1],
            game=GAME,
            name=f"{kind}-{i}",
            kind=EndpointKind.BUILTIN,
            target=kind,
        )
        for i, kind in enumerate(("perfect", "random", "perfect", "random")[:entries], start=1)
    ]
    event = Event.objects.create(
        name="Grand final",
        game=GAME,
        format=fmt,
        series_length=series_length,
        tie_decider="seed",  # a drawn final goes to the seed: three matches
        hide_results=True,
        created_by=staff,
    )
    Entry.objects.bulk_create(
        [Entry(event=event, bot=bot, seed=i) for i, bot in enumerate(bots, start=1)]
    )
    events.start_event(event)
    return {"entrant": entrant, "staff": staff, "bots": bots, "event": event}


def client_of(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def links(html: str, match_ids) -> list[int]:
    """The hidden matches a page links to or names as a match."""
    return [m for m in match_ids if f"/matches/{m}/" in html or f"match-{m}" in html]


def assert_pre_event_standings(rows: list[dict]) -> None:
    # It should show the entries as before the first game: no game, point, win or round won.
    assert rows
    for r in rows:
        assert (r["games"], r["wins"], r["draws"], r["losses"], r["points"]) == (0, 0, 0, 0, 0), r
        assert r.get("reached", 1) <= 1 and r["rating"]["games"] == 0, r


def assert_api_hides(world: dict, hidden: list[int]) -> None:
    event, bots = world["event"], world["bots"]
    for user in (None, world["entrant"]):
        client = client_of(user)
        for query in ("", f"?event={event.pk}", f"?bot={bots[0].pk}", "?status=finished"):
            listed = [m["id"] for m in client.get(f"/api/matches/{query}").json()["results"]]
            # It should list none of the hidden matches, whatever the filter.
            assert not set(listed) & set(hidden), query
        for m in hidden:
            for tail in ("", "turns/", "replay/", "logs/?seat=0"):
                # It should answer 404 for a hidden match, its turns, replay and logs (even
                # to its bots' owner; logs ask anyone else to sign in first).
                expected = 401 if user is None and tail.startswith("logs") else 404
                assert client.get(f"/api/matches/{m}/{tail}").status_code == expected, (m, tail)
        assert_pre_event_standings(client.get(f"/api/events/{event.pk}/standings/").json())
        bracket = client.get(f"/api/events/{event.pk}/bracket/").json()
        # It should show the seeded pairs only: no winner, no series, no champion.
        assert bracket["champion"] is None
        slots = [s for r in bracket["rounds"] for s in r["slots"]]
        assert all(s["winner"] is None and s["series"] is None for s in slots), slots
        board = client.get(f"/api/leaderboard/{GAME}/").json()
        # It should rank no bot on a hidden match (its rating waits for the reveal).
        assert board["results"] == []
        for bot in bots:
            assert client.get(f"/api/bots/{bot.pk}/").json()["rating"]["games"] == 0


def assert_pages_hide(world: dict, hidden: list[int]) -> None:
    event, bots, entrant = world["event"], world["bots"], world["entrant"]
    pages = [
        "/",
        f"/games/{GAME}/",
        f"/games/{GAME}/leaderboard",
        "/matches/",
        f"/matches/?event={event.pk}",
        f"/matches/?bot={bots[0].pk}",
        f"/events/{event.pk}/",
        f"/events/{event.pk}/screen.json",
        f"/users/{entrant.username}/",
        *(f"/bots/{bot.pk}/" for bot in bots),
    ]
    for client in (client_of(), client_of(entrant)):
        for path in pages:
            response = client.get(path)
            assert response.status_code == 200, path
            # It should neither link nor name a hidden match on any public page.
            assert links(response.content.decode(), hidden) == [], path
        for m in hidden:
            for path in (f"/matches/{m}/", f"/matches/{m}/viewer.json"):
                assert client.get(path).status_code == 404, path
        page = client.get(f"/events/{event.pk}/")
        # It should name no champion and show the standings as before the first game.
        assert "Champion" not in page.content.decode()
        assert_pre_event_standings(page.context["snap"]["standings"])
        screen = client.get(f"/events/{event.pk}/screen.json").json()
        assert_pre_event_standings(screen["standings"])
        assert screen["live"] == [] and screen["upcoming"] == []
        bot_page = client.get(f"/bots/{bots[0].pk}/")
        assert bot_page.context["by_opponent"] == [] and bot_page.context["recent"] == []
    owner = client_of(entrant)
    for m in hidden:
        seats = list(Match.objects.get(pk=m).participants.values_list("bot_id", flat=True))
        # It should not let a hidden match be forked: a fork from its last turn would show
        # its final position (the form, the page's POST and the API).
        assert owner.get(f"/matches/{m}/fork/").status_code == 404
        assert owner.post(f"/matches/{m}/fork/", {"turn": 1}).status_code == 404
        fork = {"turn": 1, "seats": seats}
        assert owner.post(f"/api/matches/{m}/fork/", fork, "application/json").status_code == 404
        seat_bot = next(
            (b.pk for b in bots if b.pk in seats and b.owner_id == entrant.pk), seats[0]
        )
        # It should not show the owner the log of a hidden match either (its farewell
        # message tells the result).
        assert owner.get(f"/bots/{seat_bot}/matches/{m}/log").status_code == 404
    # It should keep the rating steps for the reveal.
    assert not RatingChange.objects.filter(match_id__in=hidden).exists()
    assert not Rating.objects.filter(bot__in=bots, games__gt=0).exists()


def assert_staff_sees(world: dict, hidden: list[int]) -> None:
    staff = client_of(world["staff"])
    for m in hidden:
        assert staff.get(f"/api/matches/{m}/").status_code == 200
        assert staff.get(f"/matches/{m}/").status_code == 200
        seats = list(Match.objects.get(pk=m).participants.values_list("bot_id", flat=True))
        fork = {"turn": 1, "seats": seats}
        refused = staff.post(f"/api/matches/{m}/fork/", fork, "application/json")
        # It should not let the organiser fork it either before the reveal: a fork is a
        # public match, and would show the hidden position to everyone.
        assert refused.status_code == 400 and "not revealed" in refused.content.decode()
    rows = staff.get(f"/api/events/{world['event'].pk}/standings/").json()
    # It should show the organiser the real standings.
    assert sum(r["games"] for r in rows) == 2 * len(hidden)
    present = staff.get(f"/events/{world['event'].pk}/present")
    assert present.status_code == 200
    assert [m["id"] for m in present.context["config"]["matches"]] == sorted(
        hidden, key=lambda m: (Match.objects.get(pk=m).round, m)
    )
    # It should keep the presenter page and its reveal from anyone else.
    for client in (client_of(), client_of(world["entrant"])):
        assert client.get(f"/events/{world['event'].pk}/present").status_code == 404
        reveal = f"/events/{world['event'].pk}/present/reveal/{hidden[0]}"
        assert client.post(reveal).status_code == 404


async def drain(comm) -> list[dict]:
    messages = []
    while not await comm.receive_nothing(timeout=0.3):
        messages.append(json.loads(await comm.receive_from(timeout=2)))
    return messages


@pytest.mark.django_db(transaction=True)
async def test_it_leaks_no_hidden_result_before_the_reveal():
    world = await sync_to_async(setup_final)()
    event = world["event"]
    watcher = CheckedCommunicator(as_user(AnonymousUser()), f"/ws/events/{event.pk}/")
    assert (await watcher.connect())[0]
    snapshot = json.loads(await watcher.receive_from(timeout=5))
    # It should show no hidden match in the event stream's snapshot, queued or not.
    assert snapshot["live"] == [] and snapshot["upcoming"] == []
    await play_everything()  # both semi-finals, then the final they make
    hidden = await sync_to_async(
        lambda: sorted(
            event.matches.filter(status__in=MatchStatus.done()).values_list("pk", flat=True)
        )
    )()
    assert len(hidden) == 3
    live = await drain(watcher)
    # It should announce no hidden match start or end, and only pre-event standings.
    assert not [m for m in live if m["type"] in ("match_started", "match_finished")], live
    for message in (m for m in live if m["type"] == "standings"):
        assert_pre_event_standings(message["standings"])
    for user in (AnonymousUser(), world["entrant"]):
        stream = CheckedCommunicator(as_user(user), f"/ws/matches/{hidden[0]}/")
        connected, code = await stream.connect()
        # It should refuse a hidden match's stream to anyone but staff.
        assert (connected, code) == (False, 4404)
    staff_stream = CheckedCommunicator(as_user(world["staff"]), f"/ws/matches/{hidden[0]}/")
    assert (await staff_stream.connect())[0]
    await staff_stream.disconnect()
    await sync_to_async(assert_api_hides)(world, hidden)
    await sync_to_async(assert_pages_hide)(world, hidden)
    await sync_to_async(assert_staff_sees)(world, hidden)

    first = hidden[0]
    staff = await sync_to_async(client_of)(world["staff"])
    reveal = f"/events/{event.pk}/present/reveal/{first}"
    answer = await sync_to_async(lambda: staff.post(reveal).json())()
    assert answer == {"match": first, "revealed": True}
    messages = await drain(watcher)
    await watcher.disconnect()
    ended = [m for m in messages if m["type"] == "match_finished"]
    # It should publish the revealed match's end with its result, then the standings with it.
    assert [m["match"]["id"] for m in ended] == [first]
    assert all(p["result"] for p in ended[0]["match"]["participants"])
    table = [m for m in messages if m["type"] == "standings"][-1]["standings"]
    assert sum(r["games"] for r in table) == 2

    def after_reveal():
        anyone = client_of()
        listed = [m["id"] for m in anyone.get(f"/api/matches/?event={event.pk}").json()["results"]]
        # It should show the revealed match only; the others stay hidden.
        assert listed == [first]
        assert anyone.get(f"/api/matches/{first}/turns/").status_code == 200
        assert anyone.get(f"/api/matches/{hidden[1]}/").status_code == 404
        assert f"/matches/{first}/" in anyone.get(f"/events/{event.pk}/").content.decode()
        # It should rate the match at its reveal, in the order ratings replay.
        assert RatingChange.objects.filter(match_id=first).count() == 2
        assert ratings.verify(GAME).ok
        # It should not reveal twice.
        assert staff.post(reveal).json()["revealed"] is False
        assert RatingChange.objects.filter(match_id=first).count() == 2

    await sync_to_async(after_reveal)()


@pytest.mark.django_db(transaction=True)
def test_it_reveals_every_hidden_match_from_the_admin_and_rates_them_in_order():
    # It should reveal what is left (the organiser's admin action, before turning hiding
    # off), rate every match then, and show the public the standings staff see.
    world = setup_final()
    event = world["event"]
    asyncio.run(play_everything())
    assert client_of().get(f"/api/matches/?event={event.pk}").json()["results"] == []
    world["staff"].is_superuser = True  # the admin's permission to change events
    world["staff"].save(update_fields=["is_superuser"])
    staff = client_of(world["staff"])
    response = staff.post(
        "/admin/competition/event/", {"action": "reveal_all", "_selected_action": [event.pk]}
    )
    assert response.status_code == 302
    done = event.matches.filter(status__in=MatchStatus.done())
    assert done.count() == 3 and not done.filter(revealed_at__isnull=True).exists()
    assert RatingChange.objects.filter(match__event=event).count() == 6
    assert ratings.verify(GAME).ok
    public = client_of().get(f"/api/events/{event.pk}/standings/").json()
    assert public == staff.get(f"/api/events/{event.pk}/standings/").json()
    assert sum(r["games"] for r in public) == 6
    assert client_of().get(f"/api/events/{event.pk}/bracket/").json()["champion"] is not None


@pytest.mark.django_db(transaction=True)
def test_it_counts_a_series_half_revealed_as_still_playing():
    # It should show a series whose second game is still hidden as not complete: its game
    # counted, no series point yet (a point would tell the hidden game's result).
    event = setup_final(EventFormat.ROUND_ROBIN, entries=2, series_length=2)["event"]
    asyncio.run(play_everything())
    first, second = event.matches.order_by("round", "id").values_list("pk", flat=True)
    assert events.reveal(first)
    rows = client_of().get(f"/api/events/{event.pk}/standings/").json()
    assert [(r["games"], r["series"], r["points"]) for r in rows] == [(1, 0, 0.0), (1, 0, 0.0)]
    assert events.reveal(second)
    rows = client_of().get(f"/api/events/{event.pk}/standings/").json()
    assert [(r["games"], r["series"]) for r in rows] == [(2, 1), (2, 1)]
    assert sum(r["points"] for r in rows) == 1.0
