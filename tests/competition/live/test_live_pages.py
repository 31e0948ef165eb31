"""The home page's "live now" counts and an elimination's bracket, live (issue 25): the
websocket streams ``ws/home/`` and ``ws/events/<id>/`` as a page sees them (channels'
communicator on the real routing, every message checked against the published live
schemas), while real matches are played by the runner: a count is sent on each start and
end, a bracket after each result, never polled per spectator."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter

from competition.events import services as events
from competition.matches.lifecycle import create_match
from competition.models import EventFormat
from competition.runners.play import run_match
from competition.web.routing import websocket_urlpatterns
from games import all_games
from tests.factories import GAME, make_bots, make_event, make_owner
from tests.live_protocol import CheckedCommunicator

pytestmark = pytest.mark.django_db(transaction=True)


async def connect(path: str) -> tuple[CheckedCommunicator, dict]:
    comm = CheckedCommunicator(URLRouter(websocket_urlpatterns), path)
    connected, _ = await comm.connect()
    assert connected
    snapshot = json.loads(await comm.receive_from(timeout=5))
    assert snapshot["type"] == "snapshot"
    return comm, snapshot


async def received(comm: CheckedCommunicator) -> list[dict]:
    out = []
    while not await comm.receive_nothing(timeout=0.3):
        out.append(json.loads(await comm.receive_from(timeout=5)))
    return out


async def test_it_sends_the_home_page_each_games_running_count_as_matches_start_and_end():
    owner = await sync_to_async(make_owner)()
    bots = await sync_to_async(make_bots)(owner, n=2)
    comm, snapshot = await connect("/ws/home/")
    # It should start with every game's count of running matches (none yet).
    assert snapshot["running"] == {game.slug: 0 for game in all_games()}
    match = await sync_to_async(create_match)(GAME, bots, seed=3, dispatch_now=False)
    assert await received(comm) == []  # queued is not live
    assert await run_match(match.pk) == match.pk
    # It should send the game's count when the match started, and again when it ended.
    counts = [(m["type"], m["game"], m["running"]) for m in await received(comm)]
    assert counts == [("running", GAME, 1), ("running", GAME, 0)]
    await comm.disconnect()


async def test_it_sends_an_elimination_its_bracket_after_each_result():
    owner = await sync_to_async(make_owner)()
    bots = await sync_to_async(make_bots)(owner, n=4)
    # (a drawn series goes to the seed: three results, one bracket after each)
    event = await sync_to_async(make_event)(
        owner, bots, EventFormat.SINGLE_ELIMINATION, tie_decider="seed"
    )
    comm, snapshot = await connect(f"/ws/events/{event.pk}/")
    # It should put the bracket in the snapshot (a reconnecting page redraws it).
    assert snapshot["bracket"]["champion"] is None
    assert not any(s["winner"] for r in snapshot["bracket"]["rounds"] for s in r["slots"])
    await sync_to_async(events.start_event)(event)
    # It should send the bracket when the event starts (the semi-finals scheduled) ...
    started = [m["bracket"] for m in await received(comm) if m["type"] == "bracket"]
    assert len(started) == 1
    assert all(s["series"]["status"] == "queued" for s in started[0]["rounds"][0]["slots"])
    brackets = []
    while await run_match() is not None:
        brackets += [m["bracket"] for m in await received(comm) if m["type"] == "bracket"]
    # ... and after each of the three results: a semi-final decided with why, then the
    # final scheduled, then the champion.
    assert len(brackets) == 3
    first_semi = brackets[0]["rounds"][0]["slots"]
    assert sum(1 for slot in first_semi if slot["winner"] and slot["why"]) == 1
    assert brackets[1]["rounds"][1]["slots"][0]["a"] is not None
    final = brackets[2]
    assert final["champion"]["bot"] == final["rounds"][-1]["slots"][0]["winner"]
    await event.arefresh_from_db()
    assert await sync_to_async(events.bracket_view)(event) == json.loads(json.dumps(final))
    await comm.disconnect()


async def test_it_sends_no_bracket_to_other_formats():
    owner = await sync_to_async(make_owner)()
    bots = await sync_to_async(make_bots)(owner, n=3)
    event = await sync_to_async(make_event)(owner, bots, EventFormat.ROUND_ROBIN)
    comm, snapshot = await connect(f"/ws/events/{event.pk}/")
    # It should keep a round robin's stream as it was: standings, no bracket.
    assert "bracket" not in snapshot
    await sync_to_async(events.start_event)(event)
    kinds = []
    while await run_match() is not None:
        kinds += [m["type"] for m in await received(comm)]
    assert "standings" in kinds and "bracket" not in kinds
    await comm.disconnect()
