"""The fault catalogue end to end: every fault code of docs/architecture.md produced by a real
misbehaving bot in a stored match, recorded per seat per turn, shown to the owner only,
and handled by the game's policy. Platform faults never count and never change ratings."""

from __future__ import annotations

import asyncio
import gzip
import json

import pytest
from aiohttp import web
from rest_framework.test import APIClient

from bots.egress import parse_networks
from competition.matches import history
from competition.matches import lifecycle as svc
from competition.models import Match, MatchStatus, Participant, Rating, RatingChange, Turn
from competition.models.bots import Bot, EndpointKind
from competition.runners.play import run_match
from games import get_game
from tests.conftest import LOOPBACK, free_port

pytestmark = pytest.mark.django_db(transaction=True)


def run(coro):
    """Run a coroutine on a fresh loop, closing that loop's egress session at the end."""
    from bots import egress

    async def main():
        try:
            return await coro
        finally:
            await egress.close_session()

    return asyncio.run(main())


async def move_handler(request: web.Request) -> web.StreamResponse:
    """A tic-tac-toe bot whose path says how to misbehave on its first move."""
    body = json.loads(await request.read())
    if body["action"] == "init":
        return web.json_response({"name": "bad"})
    kind = request.path.strip("/")
    if kind == "timeout":
        await asyncio.sleep(3)
    if kind == "redirect":
        raise web.HTTPFound("http://127.0.0.1:9/")
    if kind == "http_status":
        return web.Response(status=503, text="busy")
    if kind == "too_large":
        return web.Response(body=b" " * 2_000_000)
    if kind == "bad_encoding":
        return web.Response(
            body=gzip.compress(b'{"play":"0-0"}'), headers={"Content-Encoding": "gzip"}
        )
    if kind == "bad_json":
        return web.Response(text="{play: 0-0}")
    if kind == "illegal":
        return web.json_response({"play": "9-9"})
    empty = [k for k, v in body["board"].items() if v == ""]
    return web.json_response({"play": empty[0]})


async def garbage_http(reader, writer):
    await reader.read(65536)
    writer.write(b"THIS IS NOT HTTP\r\n\r\n")
    await writer.drain()
    writer.close()


async def play_against(url_or_target, users, *, kind=EndpointKind.HTTP, settings=None):
    """Store and play a match: the bad bot (seat 0) against builtin:random (seat 1)."""
    from asgiref.sync import sync_to_async

    @sync_to_async
    def make():
        bad = Bot.objects.create(
            owner=users["owner"],
            game="tictactoe",
            name=f"bad-{Bot.objects.count()}",
            kind=kind,
            target=url_or_target,
        )
        good = Bot.objects.create(
            owner=users["other"],
            game="tictactoe",
            name=f"good-{Bot.objects.count()}",
            kind=EndpointKind.BUILTIN,
            target="random",
        )
        return svc.create_match(
            "tictactoe", [bad, good], options={"move_timeout_ms": 800}, dispatch_now=False
        ).pk

    match_id = await make()
    await run_match(match_id)
    return match_id


FAULTS = [
    "timeout",
    "connect",
    "dns",
    "tls",
    "denied",
    "redirect",
    "http_status",
    "too_large",
    "bad_encoding",
    "protocol",
    "bad_json",
    "illegal",
]


def test_it_stores_every_fault_code_per_seat_and_shows_it_to_the_owner_only(users, settings):
    settings.ARENA_BOT_ALLOW_NETWORKS = parse_networks(LOOPBACK)
    settings.ARENA_BOT_MAX_REPLY_BYTES = 1_000_000
    results = {}

    async def scenario():
        from tests.helpers import http_bot

        garbage = await asyncio.start_server(garbage_http, "127.0.0.1", 0)
        garbage_port = garbage.sockets[0].getsockname()[1]
        try:
            async with http_bot(move_handler) as base:
                targets = {code: f"{base}/{code}" for code in FAULTS}
                targets["connect"] = f"http://127.0.0.1:{free_port()}/"
                targets["dns"] = "http://no-such-bot.invalid/"
                targets["tls"] = base.replace("http://", "https://") + "/ok"
                targets["protocol"] = f"http://127.0.0.1:{garbage_port}/"
                targets["denied"] = f"{base}/ok"
                for code in FAULTS:
                    if code == "denied":  # the allow-list no longer admits loopback
                        settings.ARENA_BOT_ALLOW_NETWORKS = ()
                    results[code] = await play_against(targets[code], users)
                    settings.ARENA_BOT_ALLOW_NETWORKS = parse_networks(LOOPBACK)
        finally:
            garbage.close()
            await garbage.wait_closed()

    run(scenario())
    owner, other, staff = APIClient(), APIClient(), APIClient()
    owner.force_authenticate(users["owner"])
    other.force_authenticate(users["other"])
    staff.force_authenticate(users["staff"])
    for code, match_id in results.items():
        match = Match.objects.get(pk=match_id)
        first = history.turns(match, upto=1)[0]
        # It should forfeit the bad seat at once (tic-tac-toe's fixed policy), recording the code.
        assert match.status == MatchStatus.FORFEITED, (code, match.status, match.error)
        assert first.faults[0] == code and first.forfeited == [0], (
            code,
            first.faults,
            first.details,
        )
        bad, good = Participant.objects.filter(match=match).order_by("seat")
        assert (bad.result, bad.cause, bad.faults) == ("loss", code, 1)
        assert good.result == "win"
        # It should show the seat's exchange log to its owner, to nobody else (staff neither).
        mine = owner.get(f"/api/matches/{match_id}/logs/?seat=0")
        assert mine.status_code == 200, mine.content
        entries = mine.json()["results"]
        assert entries[0]["number"] == 1 and entries[0]["log"]["fault"] == code
        assert entries[0]["log"]["sent"].startswith('{"game-id"')
        assert staff.get(f"/api/matches/{match_id}/logs/?seat=0").status_code == 403
        assert other.get(f"/api/matches/{match_id}/logs/?seat=0").status_code in (403, 404)
        # The public turn data says what happened, never the bot's URL path.
        public = owner.get(f"/api/matches/{match_id}/turns/?since=0").json()["results"][0]
        assert public["faults"][0] == code
        assert "/" + code not in (public["details"][0] or "") or code == "redirect"


def test_it_never_charges_or_rates_a_platform_fault(users, settings):
    settings.ARENA_MAX_PLATFORM_FAILURES = 2
    game = get_game("tictactoe")

    def broken():
        def bot(message, rng):
            raise RuntimeError("our own bug")

        return bot

    game.builtin_bots["broken-for-test"] = broken
    try:
        bad = Bot.objects.create(
            owner=users["owner"],
            game="tictactoe",
            name="broken",
            kind=EndpointKind.BUILTIN,
            target="broken-for-test",
        )
        good = Bot.objects.create(
            owner=users["other"],
            game="tictactoe",
            name="good",
            kind=EndpointKind.BUILTIN,
            target="random",
        )
        match = svc.create_match("tictactoe", [bad, good], dispatch_now=False)
        for _ in range(2):
            run(run_match(match.pk))
    finally:
        del game.builtin_bots["broken-for-test"]
    match.refresh_from_db()
    # It should give up as `errored` with a visible reason, charge nobody, rate nothing.
    assert match.status == MatchStatus.ERRORED and match.platform_failures == 2
    assert "platform failure" in match.error
    assert not Turn.objects.filter(match=match).exists()
    assert list(
        Participant.objects.filter(match=match).values_list("faults", "cause", "result")
    ) == [(0, "", ""), (0, "", "")]
    assert not RatingChange.objects.filter(match=match).exists() and not Rating.objects.exists()


def test_it_plays_on_under_a_pass_policy_until_too_many_faults(users, settings):
    settings.ARENA_BOT_ALLOW_NETWORKS = parse_networks(LOOPBACK)

    async def garbage(request):
        return web.Response(text="not json")

    async def scenario():
        from tests.helpers import http_bot

        async with http_bot(garbage) as base:
            from asgiref.sync import sync_to_async

            @sync_to_async
            def make():
                bad = Bot.objects.create(
                    owner=users["owner"],
                    game="drones",
                    name="garbage",
                    kind=EndpointKind.HTTP,
                    target=base + "/",
                )
                good = Bot.objects.create(
                    owner=users["other"],
                    game="drones",
                    name="zerg",
                    kind=EndpointKind.BUILTIN,
                    target="zerg",
                )
                return svc.create_match(
                    "drones", [bad, good], options={"max_faults_in_a_row": 3}, dispatch_now=False
                ).pk

            match_id = await make()
            await run_match(match_id)
            return match_id

    match_id = run(scenario())
    turns = history.turns(match_id)
    # It should play the first two faulty turns as no-ops and forfeit at the third.
    assert [t.faults[0] for t in turns] == ["bad_json"] * 3
    assert turns[0].forfeited == [] and turns[1].forfeited == [] and turns[2].forfeited == [0]
    assert Match.objects.get(pk=match_id).status == MatchStatus.FORFEITED
    assert Participant.objects.get(match_id=match_id, seat=0).faults == 3
