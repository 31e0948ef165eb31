"""The REST API's matches: list and filters, detail, turns since N, replays, seat logs
(owners and staff only) and challenges; one real match played by built-in bots."""

from __future__ import annotations

import asyncio
import json

import pytest

from competition.matches import lifecycle as services
from competition.matches.presenters import match_json
from competition.models import Entry, Event, Match, MatchStatus, Participant, Rating, Turn
from competition.models.bots import BotStatus, EndpointKind
from competition.runners.play import run_match
from tests.factories import CLIENT_ROLES as ROLES
from tests.factories import bot as make_bot
from tests.helpers import results

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_throttles")]

#: the ``users`` fixture's (tests/conftest.py): no passwords, as the API tests' users
USERS_OPTIONS = {"password": False}


@pytest.fixture
def bots(users):
    return {
        "owner": make_bot(users["owner"], "owner-perfect", target="perfect"),
        "other": make_bot(users["other"], "other-random"),
        "other_paused": make_bot(users["other"], "other-paused", status=BotStatus.PAUSED),
        "owner_paused": make_bot(users["owner"], "owner-paused", status=BotStatus.PAUSED),
        "drone": make_bot(users["other"], "drone", game="drones", target="zerg"),
    }


def sent(number: int, seat: int) -> dict:
    """A seat's log as the runner stores it (``SeatLog.to_json``: the texts on the wire)."""
    return {
        "fault": "ok",
        "detail": "",
        "latency_ms": 3,
        "sent": json.dumps({"turn": number, "seat": seat}),
        "received": '{"play":"1-1"}',
        "stderr": [],
        "time_left_ms": None,
    }


@pytest.fixture
def match(bots):
    """A queued match (owner's bot in seat 0, the other user's in seat 1) with five turns."""
    match = services.create_match(
        "tictactoe", [bots["owner"], bots["other"]], seed=11, dispatch_now=False
    )
    for number in range(1, 6):
        seat = (number - 1) % 2
        logs = [None, None]
        logs[seat] = sent(number, seat)
        Turn.objects.create(
            match=match,
            number=number,
            seats=[seat],
            actions=[None, None],
            faults=["ok" if s == seat else None for s in (0, 1)],
            details=[None, None],
            latencies_ms=[3 if s == seat else None for s in (0, 1)],
            frame={"moves": number},
            logs=logs,
            forfeited=[],
        )
    Match.objects.filter(pk=match.pk).update(turn_count=5)
    match.refresh_from_db()
    return match


# -- list and detail --------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_it_lists_and_shows_matches_to_everyone(clients, role, match, bots):
    client = clients[role]
    rows = results(client.get("/api/matches/"))
    assert [row["id"] for row in rows] == [match.pk]
    detail = client.get(f"/api/matches/{match.pk}/").json()
    # It should show the services' match summary plus the resolved options.
    assert detail == {**match_json(match), "options": match.options}
    assert detail["options"] == {"move_timeout_ms": 10_000, "ignore_http_status": False}
    assert [p["bot"] for p in detail["participants"]] == [bots["owner"].pk, bots["other"].pk]
    assert [p["owner"] for p in detail["participants"]] == ["owner", "other"]
    # It should list a match exactly as its detail shows it (the list reads plain values).
    assert rows == [detail]
    # It should not expose logs, leases or bot targets.
    text = json.dumps(detail)
    assert "lease" not in text and "logs" not in text and "target" not in text
    # It should refuse writes (anonymous callers are asked to authenticate first).
    refused = 401 if role == "anon" else 405
    assert client.post("/api/matches/", {}, format="json").status_code == refused
    assert client.delete(f"/api/matches/{match.pk}/").status_code == refused
    assert client.get("/api/matches/99999/").status_code == 404


def test_it_filters_matches(clients, bots, match):
    event = Event.objects.create(name="E", game="tictactoe")
    in_event = services.create_match(
        "tictactoe", [bots["other"], bots["owner_paused"]], event=event, dispatch_now=False
    )
    drones = services.create_match("drones", [bots["drone"], bots["drone"]], dispatch_now=False)
    Match.objects.filter(pk=drones.pk).update(status=MatchStatus.FINISHED)

    def ids(query: str) -> list[int]:
        response = clients["anon"].get(f"/api/matches/?{query}")
        assert response.status_code == 200, response.content
        return [row["id"] for row in results(response)]

    # It should filter by game, bot, event and status, newest first.
    assert ids("") == [drones.pk, in_event.pk, match.pk]
    assert ids("game=drones") == [drones.pk]
    assert ids(f"bot={bots['owner'].pk}") == [match.pk]
    assert ids(f"bot={bots['other'].pk}") == [in_event.pk, match.pk]
    assert ids(f"event={event.pk}") == [in_event.pk]
    assert ids("status=finished") == [drones.pk]
    assert ids("status=queued&game=tictactoe") == [in_event.pk, match.pk]
    # It should list each match as its detail shows it (the platform's seats, an event).
    Participant.objects.filter(match=in_event, seat=0).update(score=1.0, result="win")
    for row in results(clients["anon"].get("/api/matches/")):
        assert row == clients["anon"].get(f"/api/matches/{row['id']}/").json()
    # It should treat an empty filter as an absent one.
    assert ids("game=&bot=&event=&status=") == [drones.pk, in_event.pk, match.pk]
    # It should refuse malformed filters with 400 (ids are 1 to 2**63 - 1).
    for query in (
        "bot=abc",
        "bot=-1",
        "bot=0",
        f"bot={2**63}",
        "event=1.5",
        f"event={2**70}",
        "status=sleeping",
        "game=chess",
    ):
        response = clients["anon"].get(f"/api/matches/?{query}")
        assert response.status_code == 400, query
        assert query.split("=")[0] in response.json()


# -- turns and replays ------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_it_serves_turns_since_n_to_everyone(clients, role, match):
    client = clients[role]
    url = f"/api/matches/{match.pk}/turns/"
    everything = client.get(url).json()
    assert [t["number"] for t in everything["results"]] == [1, 2, 3, 4, 5]
    assert (
        everything["more"] is False
        and everything["next_since"] == 5
        and everything["status"] == "queued"
    )
    # It should give the public turn data only (no logs).
    assert everything["results"][0] == Turn.objects.get(match=match, number=1).public_json()
    assert "logs" not in json.dumps(everything) and "sent" not in json.dumps(everything)
    # It should return only the turns after N.
    assert [t["number"] for t in client.get(f"{url}?since=2").json()["results"]] == [3, 4, 5]
    last = client.get(f"{url}?since=5").json()
    assert last["results"] == [] and last["next_since"] == 5 and last["more"] is False
    # It should cap a page and say where to go on.
    page = client.get(f"{url}?since=1&limit=2").json()
    assert (
        [t["number"] for t in page["results"]] == [2, 3]
        and page["more"] is True
        and page["next_since"] == 3
    )


@pytest.mark.parametrize("since", ["-1", "abc", "1.5", "1e3", "٣", "99999999999999999999", " 1"])
def test_it_refuses_a_since_that_is_not_a_non_negative_integer(clients, match, since):
    response = clients["anon"].get(f"/api/matches/{match.pk}/turns/", {"since": since})
    assert response.status_code == 400
    assert "since" in response.json()


def test_it_refuses_a_limit_out_of_range(clients, match):
    assert clients["anon"].get(f"/api/matches/{match.pk}/turns/?limit=100000").status_code == 400
    assert clients["anon"].get(f"/api/matches/{match.pk}/turns/?limit=x").status_code == 400
    assert clients["anon"].get(f"/api/matches/{match.pk}/turns/?since={2**63}").status_code == 400
    assert (
        clients["anon"].get(f"/api/matches/{match.pk}/turns/?since={2**63 - 1}").json()["results"]
        == []
    )
    assert clients["anon"].get("/api/matches/99999/turns/").status_code == 404


@pytest.mark.parametrize("role", ROLES)
def test_it_downloads_a_replay(clients, role, match):
    response = clients[role].get(f"/api/matches/{match.pk}/replay/")
    assert response.status_code == 200
    # It should be a JSON attachment with the summary and every public turn.
    assert response["Content-Type"].startswith("application/json")
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="arena-tictactoe-match-{match.pk}.json"'
    )
    # It should stream it (see tests/security/test_limits.py for a large one).
    assert response.streaming
    content = b"".join(response.streaming_content)
    replay = json.loads(content)
    assert replay["format"] == "arena-replay/1"
    assert replay["match"]["id"] == match.pk and replay["match"]["options"] == match.options
    assert [t["number"] for t in replay["turns"]] == [1, 2, 3, 4, 5]
    assert "logs" not in content.decode() and "sent" not in content.decode()
    # It should be a JSON download even for a browser asking for HTML.
    browser = clients[role].get(f"/api/matches/{match.pk}/replay/", HTTP_ACCEPT="text/html")
    assert browser.status_code == 200 and browser["Content-Type"].startswith("application/json")


# -- seat logs --------------------------------------------------------------------------


def test_it_shows_a_seats_logs_only_to_its_owner(clients, match):
    url = f"/api/matches/{match.pk}/logs/"
    # It should refuse anonymous callers and other users.
    assert clients["anon"].get(url, {"seat": 0}).status_code == 401
    assert clients["other"].get(url, {"seat": 0}).status_code == 403
    assert clients["owner"].get(url, {"seat": 1}).status_code == 403
    # It should show the owner its seat's logs: the turns where that seat was asked.
    own = clients["owner"].get(url, {"seat": 0})
    assert own.status_code == 200
    data = own.json()
    assert data["seat"] == 0 and data["bot"] == match.participants.get(seat=0).bot_id
    assert [t["number"] for t in data["results"]] == [1, 3, 5]
    assert data["results"][0]["log"] == sent(1, 0)
    assert [t["number"] for t in clients["other"].get(url, {"seat": 1}).json()["results"]] == [2, 4]
    # It should refuse staff too, as the web pages do (staff see turns in the admin).
    for seat in (0, 1):
        assert clients["staff"].get(url, {"seat": seat}).status_code == 403
    # It should read from a turn number on.
    assert [
        t["number"] for t in clients["owner"].get(url, {"seat": 0, "since": 1}).json()["results"]
    ] == [3, 5]


@pytest.mark.parametrize("query", [{}, {"seat": "x"}, {"seat": "-1"}, {"seat": "0", "since": "-3"}])
def test_it_refuses_bad_log_queries(clients, match, query):
    response = clients["staff"].get(f"/api/matches/{match.pk}/logs/", query)
    assert response.status_code == 400


def test_it_answers_not_found_for_a_seat_the_match_does_not_have(clients, match):
    # It should say 404 (no such seat here) for a seat number valid in some game (tron seats
    # up to 13) but not in this two-seat match, to its owner as to anyone.
    for who in ("owner", "staff"):
        response = clients[who].get(f"/api/matches/{match.pk}/logs/", {"seat": "2"})
        assert response.status_code == 404 and "no seat 2" in response.json()["detail"]


# -- challenges -------------------------------------------------------------------------


def challenge(client, bots, **extra):
    body = {"game": "tictactoe", "bots": [bot.pk for bot in bots], **extra}
    return client.post("/api/matches/challenge/", body, format="json")


def test_it_lets_a_user_challenge_any_active_bot_with_their_own(clients, bots, users):
    response = challenge(
        clients["owner"],
        [bots["owner"], bots["other"]],
        seed=42,
        options={"move_timeout_ms": 500},
        pace_ms=300,
    )
    assert response.status_code == 201, response.content
    data = response.json()
    match = Match.objects.get(pk=data["id"])
    # It should queue the match with the bots by seat, the options resolved and the seed kept.
    assert response["Location"].endswith(f"/api/matches/{match.pk}/")
    assert (
        match.status == MatchStatus.QUEUED
        and match.created_by == users["owner"]
        and match.seed == 42
    )
    assert match.pace_ms == 300
    assert match.options == {"move_timeout_ms": 500, "ignore_http_status": False}
    assert list(match.participants.order_by("seat").values_list("bot_id", flat=True)) == [
        bots["owner"].pk,
        bots["other"].pk,
    ]
    assert data["participants"][1]["name"] == "other-random"
    # It should let the other user challenge back with seats swapped, and anyone play self-play.
    assert challenge(clients["other"], [bots["owner"], bots["other"]]).status_code == 201
    assert challenge(clients["owner"], [bots["owner"], bots["owner"]]).status_code == 201


def test_it_refuses_challenges_the_caller_may_not_make(clients, bots):
    # It should refuse anonymous callers.
    assert challenge(clients["anon"], [bots["owner"], bots["other"]]).status_code == 401
    # It should refuse a user who owns none of the bots.
    response = challenge(clients["other"], [bots["owner"], bots["owner"]])
    assert response.status_code == 403 and "own" in response.json()["detail"]
    # It should refuse inactive bots, the caller's own included, without revealing others'.
    paused_other = challenge(clients["owner"], [bots["owner"], bots["other_paused"]])
    assert paused_other.status_code == 400
    assert paused_other.json()["bots"] == [
        f"Bot {bots['other_paused'].pk} does not exist or is not available."
    ]
    paused_own = challenge(clients["owner"], [bots["owner_paused"], bots["other"]])
    assert paused_own.status_code == 400 and "paused" in paused_own.json()["bots"][0]
    assert not Match.objects.exists()


def test_it_lets_staff_pit_any_bots(clients, bots):
    response = challenge(clients["staff"], [bots["other_paused"], bots["owner_paused"]])
    assert response.status_code == 201, response.content
    assert challenge(clients["staff"], [bots["owner"], bots["other"]]).status_code == 201


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"game": "chess"}, "game"),
        ({"game": "drones"}, "bots"),
        ({"bots": []}, "bots"),
        ({"bots": ["one", "two"]}, "bots"),
        ({"bots": [999998, 999999]}, "bots"),
        ({"bots": [2**63, 1]}, "bots"),
        ({"bots": [2**70, 2**80]}, "bots"),
        ({"options": {"move_timeout_ms": -5}}, "options"),
        ({"options": {"nope": 1}}, "options"),
        ({"options": "fast"}, "options"),
        ({"seed": "x"}, "seed"),
        ({"seed": "42"}, "seed"),
        ({"bots": ["1", "2"]}, "bots"),
        ({"pace_ms": "300"}, "pace_ms"),
        ({"pace_ms": 60_000}, "pace_ms"),
        ({"pace_ms": -1}, "pace_ms"),
    ],
)
def test_it_answers_400_for_a_bad_challenge(clients, bots, body, field):
    payload = {"game": "tictactoe", "bots": [bots["owner"].pk, bots["other"].pk], **body}
    response = clients["owner"].post("/api/matches/challenge/", payload, format="json")
    assert response.status_code == 400, response.content
    # It should name the offending field (service errors included).
    assert field in response.json()
    assert not Match.objects.exists()


def test_it_needs_as_many_bots_as_seats(clients, bots):
    for seats in ([bots["owner"]], [bots["owner"], bots["other"], bots["other"]]):
        response = challenge(clients["owner"], seats)
        assert response.status_code == 400 and "bots" in response.json()


@pytest.mark.parametrize("raw", [b"{", b"[]", b"null", b'{"game": 1, "bots": "x"}'])
def test_it_answers_400_for_a_malformed_challenge(clients, raw):
    response = clients["owner"].post(
        "/api/matches/challenge/", raw, content_type="application/json"
    )
    assert response.status_code == 400


def test_it_throttles_challenges(clients, bots, settings):
    # It should refuse a user's challenges past ARENA_CHALLENGES_PER_MINUTE (429).
    settings.ARENA_CHALLENGES_PER_MINUTE = 2
    codes = [
        challenge(clients["owner"], [bots["owner"], bots["other"]]).status_code for _ in range(3)
    ]
    assert codes == [201, 201, 429]


# -- a real match -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_it_serves_a_real_match_played_by_builtin_bots(users):
    from tests.factories import client_as

    perfect = make_bot(users["owner"], "perfect", target="perfect")
    rand = make_bot(users["other"], "random", kind=EndpointKind.BUILTIN, target="random")
    owner = client_as(users, "owner")
    created = challenge(owner, [perfect, rand], seed=5)
    assert created.status_code == 201
    match_id = created.json()["id"]

    # It should leave the match queued for a runner (the embedded one is not started here).
    assert asyncio.run(run_match(match_id)) == match_id

    match = Match.objects.get(pk=match_id)
    assert match.status == MatchStatus.FINISHED and match.turn_count >= 5
    anon = client_as(users, "anon")
    detail = anon.get(f"/api/matches/{match_id}/").json()
    # It should show the result: the perfect player never loses.
    assert detail["status"] == "finished" and detail["participants"][0]["result"] in ("win", "draw")
    # It should serve every stored turn, and the rest after N.
    turns = anon.get(f"/api/matches/{match_id}/turns/").json()["results"]
    assert [t["number"] for t in turns] == list(range(1, match.turn_count + 1))
    tail = anon.get(f"/api/matches/{match_id}/turns/?since=3").json()["results"]
    assert tail == turns[3:]
    # It should replay the same frames.
    replay = json.loads(b"".join(anon.get(f"/api/matches/{match_id}/replay/").streaming_content))
    assert [t["frame"] for t in replay["turns"]] == [t["frame"] for t in turns]
    assert replay["turns"][-1]["frame"]["moves"] == match.turn_count
    # It should show the owner what its bot was sent and answered.
    logs = owner.get(f"/api/matches/{match_id}/logs/?seat=0").json()["results"]
    assert logs and logs[0]["log"]["fault"] == "ok"
    assert json.loads(logs[0]["log"]["sent"])["action"] == "play-turn"
    assert "play" in json.loads(logs[0]["log"]["received"])
    # It should score both seats, and rate neither: a challenge is practice (issue 46 R4).
    assert Participant.objects.filter(match_id=match_id, score__isnull=False).count() == 2
    assert not Rating.objects.filter(bot__in=[perfect, rand]).exists()
    assert results(anon.get("/api/leaderboard/tictactoe/")) == []


def test_it_lists_without_a_query_per_row(clients, users, django_assert_max_num_queries):
    players = [make_bot(users["owner" if i % 2 else "other"], f"p{i}") for i in range(6)]
    event = Event.objects.create(name="Many", game="tictactoe")
    for i in range(12):
        services.create_match(
            "tictactoe", [players[i % 6], players[(i + 1) % 6]], event=event, dispatch_now=False
        )
        Rating.objects.get_or_create(
            bot=players[i % 6], defaults={"game": "tictactoe", "mu": 20.0 + i, "sigma": 3.0}
        )
    for seed, bot in enumerate(players, start=1):
        Entry.objects.create(event=event, bot=bot, seed=seed)
    # It should read each list in a fixed number of queries, whatever its length.
    for url in (
        "/api/matches/",
        "/api/bots/",
        "/api/events/",
        "/api/leaderboard/tictactoe/",
        f"/api/events/{event.pk}/standings/",
    ):
        with django_assert_max_num_queries(6):
            assert clients["anon"].get(url).status_code == 200
