"""A human seat: ``HumanTransport`` and the ``ws/play/<match>/<seat>/`` consumer, through the
real in-memory channel layer (the browser side is exercised in tests/e2e/test_browser.py)."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from bots.faults import BotFault, FaultCode
from bots.transports import for_endpoint
from bots.transports.human import HumanTransport
from competition.bots.services import platform_seat
from competition.matches.lifecycle import create_match
from competition.models import Match, MatchStatus
from competition.models.bots import EndpointKind
from games import get_game
from games.base import Context
from tests.helpers import as_user
from tests.live_protocol import CheckedCommunicator

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world():
    User = get_user_model()
    owner = User.objects.create_user("owner", password="pw-owner-123")
    other = User.objects.create_user("other", password="pw-other-123")
    staff = User.objects.create_user("staff", password="pw-staff-123", is_staff=True)
    # the platform's seats: whoever started the match plays its human seat
    human = platform_seat("tictactoe", EndpointKind.HUMAN, "browser")
    perfect = platform_seat("tictactoe", EndpointKind.BUILTIN, "perfect")
    match = create_match(
        "tictactoe", [human, perfect], seed=0, created_by=owner, dispatch_now=False
    )
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.RUNNING)
    return {"owner": owner, "other": other, "staff": staff, "human": human, "match": match}


async def connect(world, role: str, seat: int = 0):
    comm = CheckedCommunicator(as_user(world[role]), f"/ws/play/{world['match'].pk}/{seat}/")
    connected, code = await comm.connect()
    return comm, connected, code


async def test_it_builds_a_human_transport_for_a_human_bot(world):
    transport = await sync_to_async(world["human"].transport)(
        seat=0, seed=0, match_id=str(world["match"].pk)
    )
    assert isinstance(transport, HumanTransport) and transport.kind == "human"
    assert isinstance(
        for_endpoint("human:browser", game=get_game("tictactoe"), seat=1, match_id="7"),
        HumanTransport,
    )


async def test_it_relays_the_request_and_the_move(world):
    game = get_game("tictactoe")
    match_id = world["match"].pk
    transport = HumanTransport(game=game, match_id=str(match_id), seat=0)
    await transport.start()
    state = game.initial_state(seed=0)
    message = game.observation(state, 0, Context(match_id=str(match_id)))
    exchange = asyncio.ensure_future(transport.exchange(message, timeout=10))
    comm, connected, _ = await connect(world, "owner")
    assert connected
    assert (await comm.receive_json_from(timeout=3))["type"] == "hello"
    # It should hand the page the seat's native message (re-sent while pending).
    request = await comm.receive_json_from(timeout=3)
    assert request["type"] == "request" and request["seq"] == 1 and request["message"] == message
    assert 9000 <= request["timeout_ms"] <= 10000 and "reply_to" not in request
    # It should check every incoming message and say why it refused it.
    for bad, why in (
        (("x" * 20000), "longer"),
        ("{nope", "JSON"),
        ("NaN", "JSON"),
        ('["move"]', "expected"),
        (json.dumps({"type": "move", "seq": 1}), "required"),
        (json.dumps({"type": "move", "seq": True, "move": 1}), "integer"),
        (json.dumps({"type": "move", "seq": 2, "move": {"play": "0-0"}}), "no pending"),
        (json.dumps({"type": "move", "seq": 1, "move": 1, "reply_to": "x"}), "expected"),
    ):
        await comm.send_to(text_data=bad)
        answer = await comm.receive_json_from(timeout=3)
        while answer["type"] == "request":  # a re-publication may come in between
            answer = await comm.receive_json_from(timeout=3)
        assert answer["type"] == "error" and why in answer["detail"], (bad[:40], answer)
    assert not exchange.done()
    # A valid move goes to the transport raw; the runner's parse_action judges it.
    await comm.send_json_to({"type": "move", "seq": 1, "move": {"play": "1-1", "extra": [1, 2]}})
    done = await asyncio.wait_for(exchange, 5)
    assert done.reply == {"play": "1-1", "extra": [1, 2]}
    assert done.sent == game.encode_message(message)
    assert game.parse_action(state, 0, done.reply) == "1-1"
    # It should refuse a second answer to the same request.
    await comm.send_json_to({"type": "move", "seq": 1, "move": {"play": "0-0"}})
    answer = await comm.receive_json_from(timeout=3)
    while answer["type"] == "sent":
        answer = await comm.receive_json_from(timeout=3)
    assert answer["type"] == "error"
    await transport.close()
    while (await comm.receive_json_from(timeout=3))["type"] != "closed":
        pass
    await comm.disconnect()


async def test_it_answers_the_ignored_greeting_itself_and_times_out_like_a_bot(world):
    game = get_game("tictactoe")
    transport = HumanTransport(game=game, match_id=str(world["match"].pk), seat=0)
    await transport.start()
    state = game.initial_state(seed=0)
    # It should answer the init greeting without waiting for anyone (its reply is ignored).
    greeting = await transport.exchange(game.greeting(state, 0, Context(match_id="1")), timeout=0.2)
    assert greeting.reply == {"name": "human"}
    # It should fault with "timeout" when nobody moves in time.
    with pytest.raises(BotFault) as fault:
        await transport.exchange(game.observation(state, 0, Context(match_id="1")), timeout=0.3)
    assert fault.value.code == FaultCode.TIMEOUT
    await transport.close()


@pytest.mark.parametrize("role,seat", [("other", 0), ("staff", 0), ("owner", 1)])
async def test_it_lets_only_the_owner_of_the_human_seat_connect(world, role, seat):
    _comm, connected, code = await connect(world, role, seat)
    # It should refuse anyone else, staff included, and the owner on a seat that is not human.
    assert not connected and code == 4403


async def test_it_refuses_anonymous_users_and_finished_matches(world):
    from django.contrib.auth.models import AnonymousUser

    comm = CheckedCommunicator(as_user(AnonymousUser()), f"/ws/play/{world['match'].pk}/0/")
    assert (await comm.connect())[0] is False
    await Match.objects.filter(pk=world["match"].pk).aupdate(status=MatchStatus.FINISHED)
    _comm, connected, code = await connect(world, "owner")
    assert not connected and code == 4403
