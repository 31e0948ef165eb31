"""Issue 50, item 3: placement matches. A new bot, and each new version, plays its first
``ARENA_LADDER_PLACEMENT_MATCHES`` (5) ladder matches one after the other, before the hourly
cap applies; on the default settings (12 an hour, a step every 5 s) a bot test-called has at
least 3 finished rated ladder matches within 150 s, and is ranked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from competition.events import ladder
from competition.models import LadderSpot, Match, MatchStatus, Participant, Rating
from competition.models.bots import Bot
from games import get_game
from tests import factories
from tests.factories import code_api, code_bot, play_all, upload_version

pytestmark = pytest.mark.django_db(transaction=True)

STARTER = get_game("tictactoe").part("starter_bot.py").read_bytes()


def rated_ladder_matches(bot: Bot) -> int:
    return Match.objects.filter(
        participants__bot=bot, ladder__isnull=False, rated=True, status=MatchStatus.FINISHED
    ).count()


def steps(clock: list, seconds: float, every: float) -> None:
    """The ladder's steps over ``seconds`` of the clock, each match played as it is made."""
    end = clock[0] + timedelta(seconds=seconds)
    while clock[0] < end:
        clock[0] += timedelta(seconds=every)
        ladder.tick(clock[0])
        play_all()


def test_a_new_bot_and_a_new_version_play_their_placement_matches_at_once(settings):
    owner = factories.user("author")
    client = code_api(owner)
    bot = code_bot(client, "placed", "bot.py", STARTER)
    # On the default settings: 12 an hour per bot, a step every 5 seconds.
    assert settings.ARENA_LADDER_MATCHES_PER_HOUR == 12 and settings.ARENA_LADDER_INTERVAL == 5
    assert client.post(f"/api/bots/{bot.pk}/test/").json()["fault"] == "ok"
    clock = [timezone.now()]
    steps(clock, 150, settings.ARENA_LADDER_INTERVAL)
    # It should play its 5 placement matches within 150 s (not 1), rated, and be ranked ...
    assert rated_ladder_matches(bot) == settings.ARENA_LADDER_PLACEMENT_MATCHES == 5
    assert Rating.objects.get(bot=bot).games == 5
    assert client.get(f"/api/bots/{bot.pk}/").json()["rating"]["ranked"]
    # ... against more than one opponent ...
    ladder_matches = Match.objects.filter(participants__bot=bot, ladder__isnull=False)
    faced = set(
        Participant.objects.filter(match__in=ladder_matches)
        .exclude(bot=bot)
        .values_list("bot_id", flat=True)
    )
    assert len(faced) >= 2, faced
    # ... then only as the hourly cap allows: none more in the next 4 minutes.
    steps(clock, 240, settings.ARENA_LADDER_INTERVAL)
    assert rated_ladder_matches(bot) <= 6
    assert LadderSpot.objects.get(bot=bot).placement == 0
    # A new version places again: 5 more at once.
    before = rated_ladder_matches(bot)
    assert upload_version(client, bot.pk, "bot.py", STARTER + b"\n# v2\n").status_code == 201
    steps(clock, 60, settings.ARENA_LADDER_INTERVAL)
    assert rated_ladder_matches(bot) - before >= 5
    v2 = Match.objects.filter(participants__bot=bot, participants__version__number=2)
    assert v2.filter(ladder__isnull=False, status=MatchStatus.FINISHED).count() >= 5
