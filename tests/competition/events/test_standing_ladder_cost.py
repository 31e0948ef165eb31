"""What a pairing of the standing ladder costs (issue 38: the same with 10 or 10,000 bots,
<= 5 ms): the statements it runs, counted through the database connection; the times are
``bench/ladder.py``'s."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from competition.events import ladder
from competition.models import Ladder, LadderSpot
from competition.models.bots import Bot, EndpointKind
from tests.factories import GAME

pytestmark = pytest.mark.django_db

#: what a transaction adds around the statements that do the work
FRAMING = ("BEGIN", "SAVEPOINT", "RELEASE", "COMMIT", "ROLLBACK")


@pytest.fixture
def no_house(settings):
    settings.ARENA_LADDER_HOUSE_BOTS = False
    settings.ARENA_LADDER_MATCHES_PER_HOUR = 3600 * 1000


def grow(upto: int) -> None:
    have = LadderSpot.objects.count()
    for i in range(have, upto):
        owner = get_user_model().objects.create_user(f"cost-{i}")
        bot = Bot.objects.create(
            owner=owner, game=GAME, name=f"c{i}", kind=EndpointKind.BUILTIN, target="random"
        )
        ladder.enrol(bot)


def statements_of_a_pairing() -> list[str]:
    lad = Ladder.objects.get(game=GAME)
    with CaptureQueriesContext(connection) as seen, transaction.atomic():
        match = ladder.pair_one(lad, timezone.now())
    assert match is not None
    LadderSpot.objects.filter(playing=match).update(playing=None)
    return [q["sql"] for q in seen.captured_queries if not q["sql"].startswith(FRAMING)]


def test_it_pairs_with_a_few_statements_whatever_the_ladders_size(no_house):
    grow(10)
    small = statements_of_a_pairing()
    grow(120)
    large = statements_of_a_pairing()
    # It should read the front, the ladder's edges (a new bot explores) and the free bots
    # near the rating sought in one statement each, then make the match (two INSERTs) and
    # claim its bots in one UPDATE: six statements, as many with 120 bots as with 10 (on
    # PostgreSQL a seventh, the claims' lock for the per-owner cap, before the INSERTs).
    lock = ["SELECT"] if connection.vendor == "postgresql" else []
    assert len(small) == len(large) == 6 + len(lock), large
    assert [sql.split()[0] for sql in large] == [
        "SELECT",
        "SELECT",
        "SELECT",
        *lock,
        "INSERT",
        "INSERT",
        "UPDATE",
    ]
