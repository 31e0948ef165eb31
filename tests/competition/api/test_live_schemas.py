"""The live protocol's JSON Schemas served beside the OpenAPI schema, their docs page, the
checker the websocket tests use, and the API's bot test call (``POST /api/bots/<id>/test/``,
what ``arena test`` calls)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from jsonschema import Draft202012Validator
from rest_framework.test import APIClient

from competition.api.websocket_schemas import SCHEMAS
from competition.matches.lifecycle import create_match
from competition.models.bots import Bot, EndpointKind
from competition.web.consumers import match_snapshot
from tests.live_protocol import check

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_throttles():
    cache.clear()
    yield
    cache.clear()


def test_it_serves_every_live_schema_next_to_the_openapi_one():
    client = APIClient()
    index = client.get("/api/schema/live/").json()
    # It should list one schema per stream and direction, with absolute URLs.
    assert [s["name"] for s in index["schemas"]] == [
        "match",
        "event",
        "home",
        "notifications",
        "play",
        "play-move",
    ]
    assert index["openapi"] == "http://testserver/api/schema/"
    for entry in index["schemas"]:
        assert entry["url"] == f"http://testserver/api/schema/live/{entry['name']}.json"
        served = client.get(entry["url"])
        assert served.status_code == 200 and served["Content-Type"] == "application/json"
        body = served.json()
        # It should serve a valid draft 2020-12 schema naming itself.
        Draft202012Validator.check_schema(body)
        assert body["$id"] == entry["url"]
        assert {k: v for k, v in body.items() if k != "$id"} == SCHEMAS[entry["name"]]
    assert client.get("/api/schema/live/nope.json").status_code == 404


def test_the_docs_page_links_every_schema_and_the_client():
    page = APIClient().get("/api/docs/live/").content.decode()
    for name in SCHEMAS:
        assert f'href="/api/schema/live/{name}.json"' in page
    assert "arena watch" in page and "arena play" in page
    assert 'href="/api/docs/live/"' in APIClient().get("/docs/").content.decode()


def test_it_rejects_messages_that_break_the_schemas():
    turn = {
        "number": 1,
        "seats": [0],
        "actions": ["1-1", None],
        "faults": ["ok", None],
        "details": [None, None],
        "latencies_ms": [3, None],
        "frame": {"board": ["...", ".0.", "..."]},
        "forfeited": [],
    }
    check("match", {"type": "turn", "turn": turn, "sent_at": 1.5})
    # It should refuse an unknown type, a missing field, an extra key and a wrong type.
    for bad in (
        {"type": "turns", "turn": turn, "sent_at": 1.5},
        {"type": "turn", "turn": {k: v for k, v in turn.items() if k != "number"}, "sent_at": 1},
        {"type": "turn", "turn": turn, "sent_at": 1.5, "logs": []},
        {"type": "turn", "turn": {**turn, "number": "1"}, "sent_at": 1.5},
    ):
        with pytest.raises(AssertionError, match="breaks its schema"):
            check("match", bad)
    with pytest.raises(AssertionError):
        check("play-move", {"type": "move", "seq": "1", "move": {}})
    check("play-move", {"type": "move", "seq": 1, "move": {"play": "0-0"}})


def test_a_stored_match_snapshot_keeps_to_its_schema():
    user = get_user_model().objects.create_user("dora")
    bots = [
        Bot.objects.create(
            owner=user, name=f"b{i}", game="tictactoe", kind=EndpointKind.BUILTIN, target="random"
        )
        for i in range(2)
    ]
    match = create_match("tictactoe", bots, seed=1)
    # It should describe a queued match's snapshot (no turns yet) as sent.
    check("match", match_snapshot(match.pk))


def test_the_api_test_calls_a_bot_for_its_owner_only():
    User = get_user_model()
    owner, other = User.objects.create_user("owner"), User.objects.create_user("other")
    bot = Bot.objects.create(
        owner=owner, name="p", game="tictactoe", kind=EndpointKind.BUILTIN, target="perfect"
    )
    local = Bot.objects.create(
        owner=owner, name="l", game="tictactoe", kind=EndpointKind.PROCESS, target="./bot"
    )
    url = f"/api/bots/{bot.pk}/test/"
    # It should refuse anonymous callers and other users, staff's way included.
    assert APIClient().post(url).status_code == 401
    them = APIClient()
    them.force_authenticate(other)
    assert them.post(url).status_code in (403, 404)
    me = APIClient()
    me.force_authenticate(owner)
    # It should send the game's first message and judge the reply like the runner.
    result = me.post(url).json()
    assert result["fault"] == "ok" and result["verdict"].startswith("accepted as the move")
    assert result["sent"] and result["reply"]
    # It should hold each bot to one test call every 2 s (the shared slot of the web page).
    again = me.post(url)
    assert again.status_code == 429 and int(again["Retry-After"]) >= 1
    # It should say which bots cannot be test-called.
    refused = me.post(f"/api/bots/{local.pk}/test/")
    assert refused.status_code == 400 and "kind" in refused.json()


def test_the_test_call_slot_is_held_while_a_call_runs_and_counts_from_its_end():
    bot = Bot.objects.create(
        owner=get_user_model().objects.create_user("owner"),
        name="p",
        game="tictactoe",
        kind=EndpointKind.BUILTIN,
        target="perfect",
    )
    no_wait, hold = timedelta(0), timedelta(seconds=15)
    assert bot.claim_test_call(timedelta(seconds=2), hold=hold)
    # It should refuse a second call while the first runs, even past the interval.
    assert not bot.claim_test_call(no_wait, hold=hold)
    # It should count the interval from the end of the call.
    bot.release_test_call()
    assert not bot.claim_test_call(timedelta(seconds=2), hold=hold)
    assert bot.claim_test_call(no_wait, hold=hold)
