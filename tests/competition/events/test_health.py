"""Bot health: K consecutive forfeits for ``connect`` or ``timeout`` pause a bot (inside the
finish transaction), its owner resumes it, and paused bots are not paired any more.

Faults are real: an HTTP bot on a refused loopback port (``connect``) and a real HTTP bot
that answers too late (``timeout``), both allowed by the ``allow_loopback`` fixture.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web
from asgiref.sync import sync_to_async

from competition.bots.services import resume_bot
from competition.events import services as events
from competition.matches.lifecycle import create_match
from competition.models import EventFormat, EventStatus, Match, MatchStatus, Participant
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.runners.play import run_match
from tests.conftest import free_port
from tests.factories import GAME, decide, make_bots, make_event, make_owner, play_all
from tests.helpers import http_bot


def dead_bot(owner, name="dead") -> Bot:
    return Bot.objects.create(
        owner=owner,
        game=GAME,
        name=name,
        kind=EndpointKind.HTTP,
        target=f"http://127.0.0.1:{free_port()}/",
    )


def forfeit_once(alive: Bot, dead: Bot, seats_swapped: bool = False) -> Match:
    match = create_match(GAME, [dead, alive] if seats_swapped else [alive, dead])
    assert play_all() == 1
    match.refresh_from_db()
    return match


@pytest.mark.django_db(transaction=True)
def test_it_pauses_a_bot_after_k_consecutive_connect_forfeits_and_lets_the_owner_resume_it(
    allow_loopback, settings
):
    settings.ARENA_BOT_HEALTH_FORFEITS = 3
    owner = make_owner()
    (alive,) = make_bots(owner, 1, strategies=("random",))
    dead = dead_bot(owner)
    for i in range(2):
        match = forfeit_once(alive, dead, seats_swapped=bool(i % 2))
        assert match.status == MatchStatus.FORFEITED
        assert match.participants.get(bot=dead).cause == "connect"
    dead.refresh_from_db()
    assert dead.status == BotStatus.ACTIVE
    # It should count only consecutive forfeits: a normal loss starts the count again.
    decide(create_match(GAME, [alive, dead]), 1.0)
    forfeit_once(alive, dead)
    forfeit_once(alive, dead)
    dead.refresh_from_db()
    assert dead.status == BotStatus.ACTIVE
    forfeit_once(alive, dead)
    dead.refresh_from_db()
    # It should pause it after the third forfeit in a row, and say why.
    assert dead.status == BotStatus.PAUSED
    assert dead.status_reason == "it forfeited its last 3 matches in a row (could not be reached)"
    # It should never pause the healthy opponent.
    alive.refresh_from_db()
    assert alive.status == BotStatus.ACTIVE
    # It should let the owner resume it, and count again from there.
    assert resume_bot(dead) and dead.status == BotStatus.ACTIVE and dead.status_reason == ""
    assert not resume_bot(dead)  # only a paused bot resumes
    forfeit_once(alive, dead)
    dead.refresh_from_db()
    assert dead.status == BotStatus.ACTIVE


@pytest.mark.django_db(transaction=True)
def test_it_stops_pairing_a_bot_paused_by_bot_health_in_a_ladder(allow_loopback, settings):
    settings.ARENA_BOT_HEALTH_FORFEITS = 2
    owner = make_owner()
    bots = make_bots(owner, 3, strategies=("random",))
    dead = dead_bot(owner)
    event = make_event(owner, [dead, *bots], EventFormat.LADDER, rounds=4)
    assert events.start_event(event) == 2
    play_all()
    event.refresh_from_db()
    dead.refresh_from_db()
    # It should pause the dead bot after its second forfeit and never pair it again…
    assert dead.status == BotStatus.PAUSED
    assert Participant.objects.filter(bot=dead, match__event=event).count() == 2
    assert set(Participant.objects.filter(bot=dead).values_list("cause", flat=True)) == {"connect"}
    # …while the ladder goes on with the others until they played their series.
    assert event.status == EventStatus.FINISHED
    assert all(Participant.objects.filter(bot=b, match__event=event).count() >= 3 for b in bots)


@pytest.mark.django_db(transaction=True)
async def test_it_pauses_a_bot_that_keeps_timing_out(allow_loopback, settings):
    settings.ARENA_BOT_HEALTH_FORFEITS = 2

    async def sleepy(request):
        if json.loads(await request.read()).get("action") == "init":
            return web.json_response({"name": "sleepy"})
        await asyncio.sleep(1.0)
        return web.json_response({"play": "0-0"})

    async with http_bot(sleepy) as base:

        def setup():
            owner = make_owner()
            (alive,) = make_bots(owner, 1, strategies=("random",))
            slow = Bot.objects.create(
                owner=owner, game=GAME, name="slow", kind=EndpointKind.HTTP, target=base + "/"
            )
            for seats in ([alive, slow], [slow, alive]):
                create_match(GAME, seats, options={"move_timeout_ms": 100})
            return slow

        slow = await sync_to_async(setup)()
        while await run_match() is not None:
            pass
    await sync_to_async(slow.refresh_from_db)()
    # It should pause it after two timeouts in a row.
    assert slow.status == BotStatus.PAUSED
    assert slow.status_reason == "it forfeited its last 2 matches in a row (did not answer in time)"


def _stalled_two_bot_ladder():
    owner = make_owner()
    a, b = make_bots(owner, 2, strategies=("random",))
    event = make_event(owner, [a, b], EventFormat.LADDER, rounds=0)  # continuous: it waits
    assert events.start_event(event) >= 1
    # b is paused (as bot health would) while its first match is queued: that match still plays,
    # then the ladder has nobody to pair a with and waits.
    Bot.objects.filter(pk=b.pk).update(
        status=BotStatus.PAUSED, status_reason="paused after 5 consecutive forfeits"
    )
    play_all()
    event.refresh_from_db()
    assert event.status == EventStatus.RUNNING
    assert not Match.objects.filter(event=event, status=MatchStatus.QUEUED).exists()
    return b.owner, b, event  # the paused bot's own owner (make_bots: one entrant per bot)


@pytest.mark.django_db(transaction=True)
def test_it_reschedules_a_ladder_when_the_owner_reactivates_a_paused_bot_from_the_web():
    from django.test import Client

    owner, paused, event = _stalled_two_bot_ladder()
    client = Client()
    client.force_login(owner)
    response = client.post(f"/bots/{paused.pk}/status", {"action": "activate"})
    assert response.status_code == 302
    paused.refresh_from_db()
    # It should make the bot active again and let the waiting ladder pair it at once.
    assert paused.status == BotStatus.ACTIVE and paused.status_reason == ""
    assert Match.objects.filter(event=event, status=MatchStatus.QUEUED).exists()


@pytest.mark.django_db(transaction=True)
def test_it_reschedules_a_ladder_when_the_owner_reactivates_a_paused_bot_through_the_api():
    from rest_framework.test import APIClient

    owner, paused, event = _stalled_two_bot_ladder()
    client = APIClient()
    client.force_authenticate(owner)
    response = client.patch(f"/api/bots/{paused.pk}/", {"status": "active"}, format="json")
    assert response.status_code == 200, response.content
    paused.refresh_from_db()
    # It should do what the web does: active, and the ladder pairs it at once.
    assert paused.status == BotStatus.ACTIVE
    assert Match.objects.filter(event=event, status=MatchStatus.QUEUED).exists()


@pytest.mark.django_db(transaction=True)
def test_it_reschedules_a_ladder_when_staff_reactivate_a_paused_bot_in_the_admin():
    from django.contrib.auth import get_user_model
    from django.test import Client

    _owner, paused, event = _stalled_two_bot_ladder()
    staff = get_user_model().objects.create_superuser("admin", password="pw-admin-1")
    client = Client()
    client.force_login(staff)
    url = f"/admin/competition/bot/{paused.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {
        name: value
        for name, value in form.initial.items()
        if value is not None and name in form.fields
    }
    data.update(status="active", status_reason="")
    response = client.post(url, data)
    assert response.status_code == 302, response.content[:3000]
    paused.refresh_from_db()
    # It should do what the web and the API do: active, and the ladder pairs it at once.
    assert paused.status == BotStatus.ACTIVE
    assert Match.objects.filter(event=event, status=MatchStatus.QUEUED).exists()
