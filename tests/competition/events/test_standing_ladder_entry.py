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
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone
from rest_framework.test import APIClient

from competition.events import ladder
from competition.models import LadderSpot, Match, MatchStatus
from competition.models.bots import Bot, BotStatus, EndpointKind
from tests.factories import GAME, decide

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
        long_ago = applied_at("0012_standing_ladder") - timedelta(days=3)
        Bot.objects.filter(pk=bot.pk).update(test_called=long_ago)
    return bot


def applied_at(name: str):
    return MigrationRecorder.Migration.objects.get(app="competition", name=name).applied


def ladder_bots(match: Match) -> set[int]:
    return set(match.participants.values_list("bot_id", flat=True))


@pytest.mark.django_db(transaction=True)
def test_it_enters_the_bots_test_called_before_the_ladder(busy):
    executor = MigrationExecutor(connection)
    before = [("competition", "0016_merge_registration")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    OldBot = old.get_model("bots", "Bot")
    long_ago = applied_at("0012_standing_ladder") - timedelta(days=3)

    def bot(name: str, called=long_ago):
        owner = old.get_model("auth", "User").objects.create(username=f"owner-{name}")
        return OldBot.objects.create(
            owner=owner, game=GAME, name=name, kind="builtin", target="random", test_called=called
        ).pk

    a, b, never, taken_out = bot("a"), bot("b"), bot("never", None), bot("taken-out")
    late = bot("failed-since", applied_at("0012_standing_ladder") + timedelta(seconds=1))
    spots = old.get_model("competition", "LadderSpot").objects
    lad = old.get_model("competition", "Ladder").objects.create(game=GAME)
    spots.create(ladder=lad, bot_id=taken_out, owner_id=OldBot.objects.get(pk=taken_out).owner_id)
    spots.filter(bot_id=taken_out).update(enrolled=False)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    # It should give a spot to each user's bot test-called before the ladder existed, none
    # to a bot never test-called or called since (had that call passed, it would be in), and
    # leave the bot its owner took out where it was.
    in_ladder = dict(LadderSpot.objects.values_list("bot_id", "enrolled"))
    assert in_ladder == {a: True, b: True, taken_out: False}
    assert never not in in_ladder and late not in in_ladder
    # It should pair them at the ladder's next steps, the house bots seated too, without a
    # new test call; the bot taken out plays nothing.
    played = set()
    for i in range(4):
        assert ladder.tick(timezone.now() + timedelta(seconds=2 * i)) >= 1
        for match in Match.objects.filter(ladder__isnull=False, status=MatchStatus.QUEUED):
            played |= ladder_bots(match)
            decide(match, 1.0)
    assert {a, b} <= played and taken_out not in played
    assert LadderSpot.objects.filter(house=True).exists()
    finished = Match.objects.filter(ladder__isnull=False, participants__bot_id=a)
    assert finished.filter(status=MatchStatus.FINISHED, rated=True).exists()


def test_it_runs_the_migration_step_again_without_a_second_spot():
    bot = old_bot("again")
    step = MIGRATION.enter_test_called_bots
    # It should enter the bot once, and make nothing the second time.
    assert step(apps, SimpleNamespace(connection=connection)) == 1
    assert step(apps, SimpleNamespace(connection=connection)) == 0
    assert LadderSpot.objects.get(bot=bot).enrolled


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


def test_it_pairs_the_active_bots_behind_a_front_of_paused_ones(busy, settings):
    settings.ARENA_LADDER_HOUSE_BOTS = False
    long_ago = timezone.now() - timedelta(days=1)
    paused = [old_bot(f"paused-{i}", called=False) for i in range(ladder.WINDOW * 2)]
    for bot in paused:
        ladder.enrol(bot)
    Bot.objects.filter(pk__in=[b.pk for b in paused]).update(status=BotStatus.PAUSED)
    LadderSpot.objects.update(due=long_ago)  # they have waited longest
    active = [old_bot(f"active-{i}", called=False) for i in range(2)]
    for bot in active:
        ladder.enrol(bot)
    # It should pair the two active bots at the first step, read past the paused ones at the
    # front, and put those back for a while.
    assert ladder.tick() == 1
    (match,) = Match.objects.filter(ladder__isnull=False)
    assert ladder_bots(match) == {b.pk for b in active}
    assert not LadderSpot.objects.filter(bot__in=paused, due__lte=timezone.now()).exists()
