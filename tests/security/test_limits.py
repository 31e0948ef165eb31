"""Issue 20, findings 3 and 5: endless or huge matches from one API call, and griefing
another user's bot. Each attack goes through the real entry point: API challenges through
the Django test client, matches played by the real runner (built-in bots, or a real HTTP bot
on loopback), replays through the sync and the ASGI handler, the websocket through Channels'
communicator on the real routing.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
import warnings

import pytest
from aiohttp import web
from channels.routing import URLRouter
from django.test import AsyncClient, Client
from rest_framework.test import APIClient

from bots import egress
from competition.matches import history
from competition.matches import lifecycle as services
from competition.models import Match, MatchStatus, Participant, Rating, RatingChange, Turn
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.runners.play import run_match
from competition.web.routing import websocket_urlpatterns
from tests.factories import bot
from tests.helpers import http_bot
from tests.live_protocol import CheckedCommunicator

pytestmark = pytest.mark.django_db(transaction=True)

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {"roles": ("attacker", "victim"), "password": False}


@pytest.fixture(autouse=True)
def _fresh_cache():
    # It should start every test with empty throttle counters (they live in the cache).
    from django.core.cache import cache

    cache.clear()


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def challenge(client, bots: list[Bot], **extra):
    body = {"game": bots[0].game, "bots": [b.pk for b in bots], **extra}
    return client.post("/api/matches/challenge/", body, format="json")


def stored_json_bytes(match_id: int) -> int:
    """The JSON bytes of a match's stored turns, measured from the database rows."""
    total = 0
    for turn in history.turns(match_id):
        for value in (
            turn.seats,
            turn.actions,
            turn.faults,
            turn.details,
            turn.latencies_ms,
            turn.frame,
            turn.logs,
            turn.forfeited,
        ):
            total += len(json.dumps(value))
    return total


# -- finding 3: platform limits on every match ---------------------------------------------


def test_it_stops_a_huge_drones_challenge_at_the_turn_limit(users, settings):
    settings.ARENA_MATCH_MAX_TURNS = 30
    mine, theirs = (
        bot(users["attacker"], "zerg", game="drones", target="zerg"),
        bot(users["victim"], "pacifist", game="drones", target="pacifist"),
    )
    client = api_as(users["attacker"])
    created = challenge(client, [mine, theirs], options={"rounds": 50, "turns": 50})
    assert created.status_code == 201, created.content
    match_id = created.json()["id"]
    assert asyncio.run(run_match(match_id)) == match_id
    match = Match.objects.get(pk=match_id)
    # It should end the match at the platform's turn limit, whatever its options allowed.
    assert (match.status, match.reason) == (MatchStatus.LIMIT, "turn_limit")
    assert match.turn_count == 30 and len(history.turns(match)) == 30
    # It should leave it without a result and unrated.
    assert not Participant.objects.filter(match=match).exclude(result="").exists()
    assert not RatingChange.objects.filter(match=match).exists() and not Rating.objects.exists()
    # It should show the new status in the API and on the match page.
    detail = client.get(f"/api/matches/{match_id}/").json()
    assert (detail["status"], detail["reason"]) == ("limit", "turn_limit")
    page = Client().get(f"/matches/{match_id}/").content.decode()
    assert "Stopped at a limit" in page and "turn_limit" in page


def test_it_stops_a_match_at_the_wall_clock_limit(users, settings):
    settings.ARENA_MATCH_MAX_SECONDS = 1
    mine, theirs = (
        bot(users["attacker"], "perfect", target="perfect"),
        bot(users["victim"], "random"),
    )
    created = challenge(api_as(users["attacker"]), [mine, theirs], pace_ms=800)
    assert created.status_code == 201, created.content
    started = time.monotonic()
    asyncio.run(run_match(created.json()["id"]))
    elapsed = time.monotonic() - started
    match = Match.objects.get(pk=created.json()["id"])
    # It should stop a match that runs longer than ARENA_MATCH_MAX_SECONDS (5+ turns of 0.8 s).
    assert (match.status, match.reason) == (MatchStatus.LIMIT, "time_limit")
    assert elapsed < 3 and 1 <= match.turn_count < 5
    assert match.turn_count == len(history.turns(match))
    assert not RatingChange.objects.filter(match=match).exists()


def test_it_stops_a_match_at_the_stored_bytes_limit(users, settings):
    settings.ARENA_MATCH_MAX_BYTES = 20_000
    mine, theirs = (
        bot(users["attacker"], "grower", game="gconway", target="grower"),
        bot(users["victim"], "random", game="gconway", target="random"),
    )
    created = challenge(api_as(users["attacker"]), [mine, theirs])
    assert created.status_code == 201, created.content
    asyncio.run(run_match(created.json()["id"]))
    match = Match.objects.get(pk=created.json()["id"])
    # It should stop storing before the match's turns take more than ARENA_MATCH_MAX_BYTES.
    assert (match.status, match.reason) == (MatchStatus.LIMIT, "size_limit")
    stored = stored_json_bytes(match.pk)
    assert 0 < stored <= 20_000 and match.stored_bytes == stored
    assert match.turn_count == len(history.turns(match)) < 500
    assert not RatingChange.objects.filter(match=match).exists()


def test_it_refuses_a_challenge_with_options_that_never_end_a_game(users):
    mine, theirs = (
        bot(users["attacker"], "greedy", game="tiles", target="greedy"),
        bot(users["victim"], "fearful", game="tiles", target="fearful"),
    )
    response = challenge(
        api_as(users["attacker"]),
        [mine, theirs],
        options={"max_moves": None, "max_passes_in_a_row": None},
    )
    # It should refuse what events refuse (Game.endless), with the reason.
    assert response.status_code == 400
    assert "never end" in json.dumps(response.json()["options"])
    assert not Match.objects.exists()


def test_it_limits_the_active_matches_of_a_user_through_the_api_too(users, settings):
    mine, theirs = (
        bot(users["attacker"], "perfect", target="perfect"),
        bot(users["victim"], "random"),
    )
    client = api_as(users["attacker"])
    codes = [
        challenge(client, [mine, theirs]).status_code
        for _ in range(settings.ARENA_MAX_ACTIVE_MATCHES)
    ]
    assert codes == [201] * settings.ARENA_MAX_ACTIVE_MATCHES
    # It should refuse the sixth with a clear 429 while five are queued or running.
    sixth = challenge(client, [mine, theirs])
    assert sixth.status_code == 429
    assert "queued or running" in sixth.json()["detail"]
    assert Match.objects.count() == settings.ARENA_MAX_ACTIVE_MATCHES
    # It should count the same matches on the web (one limit, in the service layer).
    web = Client()
    web.force_login(users["attacker"])
    page = web.post("/games/tictactoe/play", {"p1": "builtin:random", "p2": "builtin:perfect"})
    assert "queued or running" in page.content.decode()
    # It should accept a challenge again once one of them is over.
    Match.objects.filter(pk=Match.objects.order_by("id").first().pk).update(
        status=MatchStatus.FINISHED
    )
    assert challenge(client, [mine, theirs]).status_code == 201


def make_long_match(users, turns: int, frame_bytes: int, status=MatchStatus.FINISHED) -> Match:
    mine, theirs = (
        bot(users["attacker"], "perfect", target="perfect"),
        bot(users["victim"], "random"),
    )
    match = services.create_match("tictactoe", [mine, theirs], seed=1, dispatch_now=False)
    pad = "x" * frame_bytes
    log = {
        "fault": "ok",
        "detail": "",
        "latency_ms": 1,
        "sent": "s" * 1000,
        "received": "r",
        "stderr": [],
        "time_left_ms": None,
    }
    Turn.objects.bulk_create(
        [
            Turn(
                match=match,
                number=n,
                seats=[0],
                actions=[n, None],
                faults=["ok", None],
                details=[None, None],
                latencies_ms=[1, None],
                frame={"n": n, "pad": pad},
                logs=[log, None],
                forfeited=[],
            )
            for n in range(1, turns + 1)
        ],
        batch_size=500,
    )
    Match.objects.filter(pk=match.pk).update(turn_count=turns, status=status)
    return match


def test_it_streams_a_replay_in_bounded_memory(users):
    match = make_long_match(users, turns=2000, frame_bytes=4000)  # about 8 MB of frames
    response = Client().get(f"/api/matches/{match.pk}/replay/")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    # It should stream the file, a page of turns at a time, holding only one page.
    assert response.streaming
    tracemalloc.start()
    try:
        chunks, size = 0, 0
        for chunk in response.streaming_content:
            chunks += 1
            size += len(chunk)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > 8_000_000 and chunks >= 10
    assert peak < 3_000_000, f"peak {peak} bytes while streaming {size}"
    # It should still be the same replay: every public turn in order, no logs.
    content = b"".join(Client().get(f"/api/matches/{match.pk}/replay/").streaming_content)
    replay = json.loads(content)
    assert replay["format"] == "arena-replay/1" and replay["match"]["id"] == match.pk
    assert [t["number"] for t in replay["turns"]] == list(range(1, 2001))
    assert replay["turns"][41] == history.turns(match, since=41, upto=42)[0].public_json()
    assert b'"logs"' not in content and b"sss" not in content


async def test_it_streams_a_replay_under_asgi_without_buffering_it(users):
    match = await asyncio.to_thread(make_long_match, users, 700, 100)
    response = await AsyncClient().get(f"/api/matches/{match.pk}/replay/")
    assert response.status_code == 200 and response.streaming
    with warnings.catch_warnings():
        # Django warns (and buffers the whole file) when ASGI gets a sync iterator
        warnings.simplefilter("error")
        chunks = [chunk async for chunk in response.streaming_content]
    assert len(chunks) >= 4
    replay = json.loads(b"".join(chunks))
    assert [t["number"] for t in replay["turns"]] == list(range(1, 701))


async def test_it_bounds_the_websocket_snapshot_of_a_long_match(users):
    match = await asyncio.to_thread(make_long_match, users, 3000, 200, MatchStatus.RUNNING)
    comm = CheckedCommunicator(URLRouter(websocket_urlpatterns), f"/ws/matches/{match.pk}/")
    connected, _code = await comm.connect()
    assert connected
    try:
        text = await comm.receive_from(timeout=10)
    finally:
        await comm.disconnect()
    snapshot = json.loads(text)
    # It should send the match and its last turns only (older ones: the turns API).
    assert snapshot["type"] == "snapshot" and snapshot["match"]["turn_count"] == 3000
    numbers = [t["number"] for t in snapshot["turns"]]
    assert numbers == list(range(snapshot["first"], 3001)) and len(numbers) <= 50
    assert len(text) < 50 * 1000
    # The current frame is there, and the viewer can fetch the rest by number.
    assert snapshot["turns"][-1]["frame"]["n"] == 3000
    older = await asyncio.to_thread(
        lambda: Client().get(f"/api/matches/{match.pk}/turns/?since=0&limit=10").json()
    )
    assert [t["number"] for t in older["results"]] == list(range(1, 11)) and older["more"]


# -- finding 5: griefing another user's bot -------------------------------------------------


def test_it_makes_a_challenge_with_non_default_options_friendly(users, settings, allow_loopback):
    settings.ARENA_BOT_HEALTH_FORFEITS = 2

    async def slow_bot(request):  # a working bot: it answers in 0.6 s (the default limit is 10 s)
        await asyncio.sleep(0.6)
        return web.json_response({"play": "1-1"})

    async def play_against_victim():
        async with http_bot(slow_bot) as base:
            victim = await asyncio.to_thread(
                bot, users["victim"], "working", kind=EndpointKind.HTTP, target=base + "/"
            )
            mine = await asyncio.to_thread(bot, users["attacker"], "perfect", target="perfect")
            client = await asyncio.to_thread(api_as, users["attacker"])
            created = []
            for _ in range(3):  # the attack: challenges timing the victim out at once
                response = await asyncio.to_thread(
                    challenge, client, [victim, mine], options={"move_timeout_ms": 200}
                )
                assert response.status_code == 201, response.content
                created.append(response.json())
            while await run_match() is not None:
                pass
            default = await asyncio.to_thread(
                challenge, client, [victim, mine], options={"move_timeout_ms": 10000}
            )
        await egress.close_session()
        return victim, created, default.json()

    victim, created, default = asyncio.run(play_against_victim())
    # It should mark them friendly, play them (the victim forfeits), and rate nothing.
    assert all(m["rated"] is False for m in created)
    for m in created:
        assert Match.objects.get(pk=m["id"]).status == MatchStatus.FORFEITED
        assert Participant.objects.get(match_id=m["id"], seat=0).cause == "timeout"
    assert not RatingChange.objects.exists() and not Rating.objects.exists()
    # It should not count them for bot health: the victim stays active.
    victim.refresh_from_db()
    assert victim.status == BotStatus.ACTIVE
    # It should not rate a challenge with the game's defaults either: every challenge is
    # practice (issue 46 R4); its forfeits would count for bot health (not friendly).
    assert default["rated"] is False


def test_it_limits_the_challenges_of_one_user_against_one_bot(users, settings):
    settings.ARENA_CHALLENGES_PER_TARGET_HOUR = 3
    settings.ARENA_MAX_ACTIVE_MATCHES = 50
    mine = bot(users["attacker"], "perfect", target="perfect")
    target, other = bot(users["victim"], "random"), bot(users["victim"], "random-2")
    client = api_as(users["attacker"])
    assert [challenge(client, [mine, target]).status_code for _ in range(3)] == [201] * 3
    Match.objects.update(status=MatchStatus.FINISHED)  # over: not active any more
    # It should refuse a fourth challenge against the same bot within the hour, with a 429.
    refused = challenge(client, [target, mine])
    assert refused.status_code == 429 and "random" in refused.json()["detail"]
    assert 0 < int(refused["Retry-After"]) <= 3600
    # It should still let the user challenge another bot, and the owner play their own.
    assert challenge(client, [mine, other]).status_code == 201
    assert challenge(api_as(users["victim"]), [target, other]).status_code == 201
