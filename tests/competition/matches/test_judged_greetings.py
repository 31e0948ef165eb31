"""A game whose greeting reply matters (battleship's fleet), played as stored matches.

The runner greets seat 0, judges its reply and only then greets seat 1; a bad fleet (or
any fault at the greeting) loses at setup: stored as a forfeited match (reason
``bad_fleet``) with one turn naming the seat, the fault and the game's code.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web
from django.contrib.auth import get_user_model

from competition.matches import history, lifecycle
from competition.models import MatchStatus, Participant
from competition.models.bots import Bot, EndpointKind
from competition.runners.play import run_match
from tests.helpers import http_bot

pytestmark = pytest.mark.django_db(transaction=True)
OPTIONS = {"width": 6, "height": 6, "ships": [1, 1, 0, 0, 0, 0]}


def make_bot(name: str, kind: str, target: str) -> Bot:
    owner, _ = get_user_model().objects.get_or_create(username="owner")
    return Bot.objects.create(owner=owner, game="battleship", name=name, kind=kind, target=target)


async def test_it_stores_a_bad_fleet_as_a_loss_at_setup_before_greeting_seat_one(allow_loopback):
    # It should judge seat 0's fleet before greeting seat 1, and store the loss at setup.
    seen: list[dict] = []

    async def handler(request: web.Request):
        message = json.loads(await request.read())
        seen.append(message)
        # two ships overlapping: refused
        return web.json_response({"name": "overlap", "boats": ["0,0-1,0", "1,0-1,0"]})

    async with http_bot(handler) as base:
        bad = await asyncio.to_thread(make_bot, "overlap", EndpointKind.HTTP, base + "/bad")
        other = await asyncio.to_thread(make_bot, "other", EndpointKind.HTTP, base + "/other")
        match = await asyncio.to_thread(
            lifecycle.create_match,
            "battleship",
            [bad, other],
            seed=3,
            dispatch_now=False,
            options=OPTIONS,
        )
        assert await run_match(match.pk) == match.pk
    assert [(m["action"], m["player-index"]) for m in seen] == [("init", 0)]
    assert seen[0]["board"]["opponent"] == "other" and seen[0]["board"]["ship2"] == "1"

    def stored():
        match.refresh_from_db()
        turns = [
            {"seats": t.seats, "faults": t.faults, "details": t.details}
            for t in history.turns(match)
        ]
        seats = list(
            Participant.objects.filter(match=match).order_by("seat").values_list("result", "cause")
        )
        return match.status, match.reason, turns, seats

    status, reason, turns, seats = await asyncio.to_thread(stored)
    assert (status, reason) == (MatchStatus.FORFEITED, "bad_fleet")
    assert turns == [{"seats": [0], "faults": ["illegal", None], "details": ["bad_fleet", None]}]
    assert seats == [("loss", "illegal"), ("win", "")]


def test_it_plays_built_ins_whose_greetings_place_their_fleets():
    # It should play a stored match to the end on the fleets the built-ins placed.
    hunter = make_bot("hunter", EndpointKind.BUILTIN, "hunter")
    rand = make_bot("random", EndpointKind.BUILTIN, "random")
    match = lifecycle.create_match("battleship", [hunter, rand], seed=8, dispatch_now=False)
    assert asyncio.run(run_match()) == match.pk
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.reason == "fleet_sunk"
    frames = [turn.frame for turn in history.turns(match)]
    fleets = frames[0]["fleets"]
    assert [sorted(map(len, fleet)) for fleet in fleets] == [[2, 3, 3, 4, 5]] * 2
    assert all(frame["fleets"] == fleets for frame in frames)
    last = frames[-1]["strikes"]
    winner = 0 if match.participants.get(seat=0).result == "win" else 1
    assert last[winner][-1]["result"] == "hit sunk and win"
