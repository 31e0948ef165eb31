"""Debug overlays (#18 item 1): a real HTTP bot on loopback adds ``debug`` to its replies;
the runner strips and keeps it per seat and turn (oversized or malformed ones dropped with a
note, the move still counted), and only the bot's owner sees it through the REST API and the
match websocket, unless the bot opted in (``public_debug``). Every websocket message is
checked against the published live schemas (``CheckedCommunicator``)."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from aiohttp import web
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from bots import egress
from bots.transports import for_endpoint
from competition.matches import history
from competition.matches.debug import MAX_BYTES, split
from competition.matches.lifecycle import create_match
from competition.matches.loop import play as play_loop
from competition.models import Match, MatchStatus
from competition.models.bots import Bot, EndpointKind
from competition.runners.play import run_match
from competition.web.routing import websocket_urlpatterns
from games import get_game
from tests.helpers import http_bot
from tests.live_protocol import CheckedCommunicator

VALID = {
    "text": "centre is best\nthen a corner",
    "marks": [
        {"cell": [1, 1], "color": "#2ecc71", "label": "best"},
        {"point": [0.5, 2.25], "color": "#e33"},
    ],
}
OVERSIZED = {"text": "é" * 1000, "marks": [{"cell": [0, 0], "label": "y" * 16}] * 64}
MALFORMED = {"text": "fine", "marks": [{"cell": [0, 0], "color": "red"}]}
#: what the bot adds to its 1st, 2nd and 3rd play-turn replies (then nothing)
SENT = [VALID, OVERSIZED, MALFORMED]


def as_user(user):
    """The routing with ``scope["user"]`` set (what AuthMiddlewareStack does from the session)."""
    router = URLRouter(websocket_urlpatterns)

    async def app(scope, receive, send):
        return await router({**scope, "user": user}, receive, send)

    return app


def hidden(turns: list[dict]) -> bool:
    """No overlay in these turns (the rival's owner may see its own seat's: it sent none)."""
    return all("debug" not in t for t in turns)


def debug_bot():
    """A tic-tac-toe bot playing the first empty cell, with ``SENT[k]`` on its k-th move."""
    calls = []

    async def handler(request: web.Request):
        message = json.loads(await request.read())
        if message.get("action") != "play-turn":
            return web.json_response({})
        cell = next(key for key, value in message["board"].items() if value == "")
        reply = {"play": cell}
        if len(calls) < len(SENT):
            reply["debug"] = SENT[len(calls)]
        calls.append(cell)
        return web.json_response(reply)

    return handler, calls


@pytest.fixture
def world(db):
    User = get_user_model()
    owner = User.objects.create_user("owner", password="pw-owner-123")
    other = User.objects.create_user("other", password="pw-other-123")
    rival = Bot.objects.create(
        owner=other, game="tictactoe", name="rival", kind=EndpointKind.BUILTIN, target="random"
    )
    return {"owner": owner, "other": other, "rival": rival}


async def make_match(world, url: str) -> Match:
    bot = await Bot.objects.acreate(
        owner=world["owner"], game="tictactoe", name="debugger", kind=EndpointKind.HTTP, target=url
    )
    return await sync_to_async(create_match)(
        "tictactoe", [bot, world["rival"]], seed=1, dispatch_now=False
    )


async def watch(user, match_id: int) -> CheckedCommunicator:
    comm = CheckedCommunicator(as_user(user), f"/ws/matches/{match_id}/")
    connected, _ = await comm.connect()
    assert connected
    snapshot = json.loads(await comm.receive_from(timeout=5))
    assert snapshot["type"] == "snapshot"
    return comm


async def until_end(comm: CheckedCommunicator) -> list[dict]:
    messages = []
    while True:
        message = json.loads(await comm.receive_from(timeout=10))
        messages.append(message)
        if message["type"] == "end":
            return messages


async def play(world) -> tuple[Match, list[str]]:
    handler, calls = debug_bot()
    async with http_bot(handler) as base:
        match = await make_match(world, base + "/")
        assert await run_match(match.pk) == match.pk
    await match.arefresh_from_db()
    return match, calls


def played(world) -> Match:
    async def main():
        try:
            return (await play(world))[0]
        finally:
            await egress.close_session()  # this loop's session, before asyncio.run ends it

    return asyncio.run(main())


@pytest.mark.django_db(transaction=True)
async def test_it_streams_the_overlay_to_the_owner_only_and_keeps_every_move(world, allow_loopback):
    # It should strip the debug value before the game parses the reply (every move of the bot
    # counts, with or without a valid overlay), store it in the seat's log, drop the oversized
    # and the malformed one with a note, and send `debug` messages on the owner's socket only.
    handler, calls = debug_bot()
    async with http_bot(handler) as base:
        match = await make_match(world, base + "/")
        owner_ws = await watch(world["owner"], match.pk)
        other_ws = await watch(world["other"], match.pk)
        anon_ws = await watch(AnonymousUser(), match.pk)
        assert await run_match(match.pk) == match.pk
        seen = {
            "owner": await until_end(owner_ws),
            "other": await until_end(other_ws),
            "anon": await until_end(anon_ws),
        }
    for comm in (owner_ws, other_ws, anon_ws):
        await comm.disconnect()
    await match.arefresh_from_db()
    assert match.status == MatchStatus.FINISHED
    turns = await sync_to_async(history.turns)(match)
    ours = [t for t in turns if t.seats == [0]]
    assert len(ours) == len(calls) >= 3
    # every move counted, exactly the cell the bot named
    assert [t.faults[0] for t in ours] == ["ok"] * len(ours)
    assert [t.actions[0] for t in ours] == calls
    logs = [t.logs[0] for t in ours]
    assert logs[0]["debug"] == VALID and "debug_note" not in logs[0]
    assert "debug" not in logs[1] and logs[1]["debug_note"].startswith("debug dropped: ")
    assert f"more than {MAX_BYTES}" in logs[1]["debug_note"]
    assert "debug" not in logs[2] and '"color"' in logs[2]["debug_note"]
    assert all("debug" not in log and "debug_note" not in log for log in logs[3:])
    # the owner's socket: one debug message per turn that carried one, after its turn
    debug = [m for m in seen["owner"] if m["type"] == "debug"]
    assert [(m["number"], m["seat"]) for m in debug] == [(t.number, 0) for t in ours[:3]]
    assert debug[0]["overlay"] == VALID and debug[0]["note"] == ""
    assert debug[1]["overlay"] is None and "more than" in debug[1]["note"]
    assert debug[2]["overlay"] is None and '"color"' in debug[2]["note"]
    kinds = [m["type"] for m in seen["owner"]]
    assert kinds.index("debug") > kinds.index("turn")
    # the others: the same turns, no overlay anywhere
    for role in ("other", "anon"):
        assert not [m for m in seen[role] if m["type"] == "debug"]
        assert all("debug" not in m.get("turn", {}) for m in seen[role])
        assert [m["turn"]["number"] for m in seen[role] if m["type"] == "turn"] == [
            m["turn"]["number"] for m in seen["owner"] if m["type"] == "turn"
        ]


@pytest.mark.django_db(transaction=True)
def test_it_shows_the_overlay_in_the_api_to_the_owner_unless_opted_in(world, allow_loopback):
    # It should add `debug` to the turns API and the replay for the bot's owner only; once the
    # owner sets public_debug (through the API), everyone sees it, and only that seat's.
    match = played(world)
    owner, other, anon = Client(), Client(), Client()
    owner.force_login(world["owner"])
    other.force_login(world["other"])

    def turns(client):
        response = client.get(f"/api/matches/{match.pk}/turns/")
        assert response.status_code == 200
        return response.json()["results"]

    def replay(client):
        response = client.get(f"/api/matches/{match.pk}/replay/")
        assert response.status_code == 200
        return json.loads(b"".join(response.streaming_content))["turns"]

    for read in (turns, replay):
        mine = read(owner)
        assert mine[0]["debug"] == [{"overlay": VALID, "note": ""}, None]
        assert mine[2]["debug"][0]["overlay"] is None
        assert mine[2]["debug"][0]["note"].startswith("debug dropped")
        # only the turns where the bot sent one, and never the rival's seat
        assert [t["number"] for t in mine if "debug" in t] == [1, 3, 5]
        assert all(t["debug"][1] is None for t in mine if "debug" in t)
        assert hidden(read(other))
        assert all("debug" not in t for t in read(anon))
    bot = Bot.objects.get(name="debugger")
    # another user cannot publish it
    assert other.patch(
        f"/api/bots/{bot.pk}/", {"public_debug": True}, content_type="application/json"
    ).status_code in (403, 404)
    assert hidden(turns(other))
    response = owner.patch(
        f"/api/bots/{bot.pk}/", {"public_debug": True}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["public_debug"] is True
    for read in (turns, replay):
        for client in (other, anon):
            assert read(client)[0]["debug"] == [{"overlay": VALID, "note": ""}, None]


@pytest.mark.django_db(transaction=True)
async def test_it_puts_the_overlay_in_the_snapshot_of_who_may_see_it(world, allow_loopback):
    # It should include `debug` in a finished match's websocket snapshot for the owner only,
    # then for anyone once the bot opted in.
    match, _calls = await play(world)

    async def snapshot(user):
        comm = CheckedCommunicator(as_user(user), f"/ws/matches/{match.pk}/")
        connected, _ = await comm.connect()
        assert connected
        data = json.loads(await comm.receive_from(timeout=5))
        await comm.disconnect()
        return data["turns"]

    assert (await snapshot(world["owner"]))[0]["debug"] == [{"overlay": VALID, "note": ""}, None]
    assert hidden(await snapshot(world["other"]))
    assert all("debug" not in t for t in await snapshot(AnonymousUser()))
    await Bot.objects.filter(name="debugger").aupdate(public_debug=True)
    for user in (world["other"], AnonymousUser()):
        assert (await snapshot(user))[0]["debug"] == [{"overlay": VALID, "note": ""}, None]


@pytest.mark.parametrize(
    "value, why",
    [
        ("text", "expected an object"),
        ({}, "expected an object"),
        ({"text": "a", "extra": 1}, "unknown key 'extra'"),
        ({"text": 3}, '"text" must be a string'),
        ({"text": "x" * 1001}, '"text" must be a string of at most 1000'),
        ({"marks": {}}, '"marks" must be an array'),
        ({"marks": [{"cell": [0, 0]}] * 65}, "65 marks, more than 64"),
        ({"marks": [{"cell": [0, 0], "point": [1, 1]}]}, 'exactly one of "cell" and "point"'),
        ({"marks": [{"label": "a"}]}, 'exactly one of "cell" and "point"'),
        ({"marks": [{"cell": [0, -1]}]}, '"cell" must be [x, y]'),
        ({"marks": [{"cell": [0, 1.0]}]}, '"cell" must be [x, y]'),
        ({"marks": [{"cell": [True, 1]}]}, '"cell" must be [x, y]'),
        ({"marks": [{"cell": [0, 1, 2]}]}, '"cell" must be [x, y]'),
        ({"marks": [{"point": [0, "1"]}]}, '"point" must be [x, y]'),
        ({"marks": [{"point": [0, 1e10]}]}, '"point" must be [x, y]'),
        ({"marks": [{"cell": [0, 0], "color": "#12345"}]}, '"color"'),
        ({"marks": [{"cell": [0, 0], "label": "x" * 17}]}, '"label"'),
        ({"marks": [{"cell": [0, 0], "shape": "x"}]}, "unknown key 'shape'"),
        ({"text": "é" * 1000, "marks": [{"point": [0.5, 0.5], "label": "z" * 16}] * 64}, "bytes"),
    ],
)
def test_it_drops_a_malformed_overlay_with_a_note_and_keeps_the_reply(value, why):
    # It should give the game the reply without "debug" whatever the value, and a note naming
    # the broken rule instead of the value.
    reply = {"play": "0-0", "debug": value}
    stripped, kept, note = split(reply)
    assert stripped == {"play": "0-0"} and kept is None
    assert note.startswith("debug dropped: ") and why in note, note


def test_it_keeps_a_valid_overlay_and_leaves_other_replies_alone():
    # It should keep a valid overlay (the largest allowed shape too) and hand back a reply
    # without "debug" (or not an object) untouched.
    assert split({"play": "0-0", "debug": VALID}) == ({"play": "0-0"}, VALID, None)
    big = {"text": "t" * 100, "marks": [{"cell": [9, 9], "color": "#abc", "label": "L"}] * 64}
    assert split({"x": 1, "y": 2, "debug": big}) == ({"x": 1, "y": 2}, big, None)
    for reply in ({"play": "0-0"}, [1, 2], "debug", None):
        assert split(reply) == (reply, None, None)


LINE_BOT = """
import json, sys
for i, line in enumerate(sys.stdin):
    json.loads(line)
    debug = {"text": "line %d" % i, "marks": [{"cell": [5, 11], "label": "me"}]}
    print(json.dumps({"cells": [], "debug": debug if i == 0 else {"text": ["no"]}}), flush=True)
"""


async def test_it_takes_the_overlay_off_a_line_transport_reply(tmp_path):
    # It should read `debug` on a process bot's reply line like on an HTTP reply: kept on the
    # first turn, dropped with a note on the second, both moves played (a pass each).
    script = tmp_path / "line_bot.py"
    script.write_text(LINE_BOT)
    game = get_game("gconway")
    transports = [
        for_endpoint(f"process:{sys.executable} {script}", game=game, seat=0),
        for_endpoint("builtin:dummy", game=game, seat=1),
    ]
    result = await play_loop(game, transports, seed=0, max_turns=2)
    first, second = (turn.logs[0] for turn in result.turns)
    assert first.debug == {"text": "line 0", "marks": [{"cell": [5, 11], "label": "me"}]}
    assert second.debug is None and '"text" must be a string' in second.debug_note
    assert [turn.faults[0] for turn in result.turns] == ["ok", "ok"]
    assert [turn.actions[0] for turn in result.turns] == [[], []]
