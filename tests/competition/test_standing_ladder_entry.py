"""Who is in the standing ladder (issue 38): the users' bots test-called before the ladder
existed enter it without a new call (the data migration ``0017``), a bot that passes its test
call while paused is in it and plays once resumed, and a bot its owner took out stays out."""

from __future__ import annotations

import importlib
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone
from rest_framework.test import APIClient

from bots.models import Bot, BotStatus, EndpointKind
from competition.events import ladder
from competition.models import Ladder, LadderSpot, Match, MatchStatus
from tests.competition.test_events import GAME, decide

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("competition.migrations.0017_ladder_enter_test_called_bots")


@pytest.fixture
def busy(settings):
    settings.ARENA_LADDER_HOUSE_BOTS = True
    settings.ARENA_LADDER_MATCHES_PER_MINUTE = 1000
    settings.ARENA_LADDER_MAX_QUEUED = 1000
    settings.ARENA_LADDER_MATCHES_PER_HOUR = 3600


def old_bot(name: str, *, called=True) -> Bot:
    """A user's bot as the rows stood before the ladder: test-called (or not), no spot."""
    owner = get_user_model().objects.create_user(f"owner-{name}")
    bot = Bot.objects.create(
        owner=owner, game=GAME, name=name, kind=EndpointKind.BUILTIN, target="random"
    )
    if called:
        applied = MigrationRecorder.Migration.objects.get(
            app="competition", name="0012_standing_ladder"
        ).applied
        Bot.objects.filter(pk=bot.pk).update(test_called=applied - timedelta(days=3))
    return bot


def ladder_bots(match: Match) -> set[int]:
    return set(match.participants.values_list("bot_id", flat=True))


def test_it_enters_the_bots_test_called_before_the_ladder(busy):
    a, b, never = old_bot("a"), old_bot("b"), old_bot("never", called=False)
    taken_out = old_bot("taken-out")
    assert not Ladder.objects.exists() and not LadderSpot.objects.exists()
    # It should give a spot to each user's bot test-called before the ladder existed, and
    # none to a bot never test-called.
    made = MIGRATION.enter_test_called_bots(apps, SimpleNamespace(connection=connection))
    assert made == 3
    assert set(LadderSpot.objects.values_list("bot_id", flat=True)) == {a.pk, b.pk, taken_out.pk}
    assert not LadderSpot.objects.filter(bot=never).exists()
    # It should leave alone a bot its owner takes out, and make nothing twice.
    ladder.set_enrolled(taken_out, False)
    assert MIGRATION.enter_test_called_bots(apps, SimpleNamespace(connection=connection)) == 0
    # It should pair them at the ladder's next steps, the house bots seated too, without a
    # new test call; the bot taken out plays nothing.
    played = set()
    for i in range(4):
        assert ladder.tick(timezone.now() + timedelta(seconds=2 * i)) >= 1
        for match in Match.objects.filter(ladder__isnull=False, status=MatchStatus.QUEUED):
            played |= ladder_bots(match)
            decide(match, 1.0)
    assert {a.pk, b.pk} <= played and taken_out.pk not in played
    assert LadderSpot.objects.filter(house=True).exists()
    assert not LadderSpot.objects.get(bot=taken_out).enrolled
    finished = Match.objects.filter(ladder__isnull=False, participants__bot=a)
    assert finished.filter(status=MatchStatus.FINISHED, rated=True).exists()


def test_it_keeps_a_bot_that_passed_its_test_call_while_paused(busy):
    bot = old_bot("paused", called=False)
    Bot.objects.filter(pk=bot.pk).update(status=BotStatus.PAUSED, status_reason="its owner")
    client = APIClient()
    client.force_authenticate(bot.owner)
    # It should put a paused bot that passes its test call in the ladder, unpaired.
    assert client.post(f"/api/bots/{bot.pk}/test/").json()["fault"] == "ok"
    spot = LadderSpot.objects.get(bot=bot)
    assert spot.enrolled
    assert "paused" in client.get(f"/api/bots/{bot.pk}/ladder/").json()["state"]
    ladder.tick()
    assert not Match.objects.filter(ladder__isnull=False, participants__bot=bot).exists()
    # It should pair it once its owner resumes it, without another test call.
    client.force_login(bot.owner)
    client.post(f"/bots/{bot.pk}/status", {"action": "activate"})
    assert Bot.objects.get(pk=bot.pk).status == BotStatus.ACTIVE
    ladder.tick(timezone.now() + timedelta(minutes=3))
    assert Match.objects.filter(ladder__isnull=False, participants__bot=bot).exists()
