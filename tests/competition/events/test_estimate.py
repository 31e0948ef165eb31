"""A round's estimate (``competition.events.estimate``): the arithmetic from the turn limit,
the pace and the history, and what it reads of an event (its game's limit, its bots' recent
move times, the past matches of the game, this event's first)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from competition.events import estimate
from competition.models import MatchStatus
from competition.models.bots import BotHealth
from tests import factories


def test_it_takes_the_turn_limit_and_the_pace_with_no_history():
    got = estimate.expected(turn_limit=200, pace_ms=100, move_ms=0, past=[])
    # It should last the limit's turns at the pace, and say so.
    assert (got.turns, got.turn_ms, got.seconds) == (200, 100, 20.0)
    assert got.text() == "about 20 seconds"
    assert "no past matches" in got.basis() and "turn limit is 200" in got.basis()


def test_it_knows_nothing_without_a_limit_or_a_history():
    # It should give no estimate rather than a guess.
    assert estimate.expected(turn_limit=None, pace_ms=100, move_ms=0, past=[]) is None


def test_it_takes_the_history_s_turns_and_its_longest_table_for_a_round():
    past = [(10, 1.0), (20, 2.0), (30, 3.0), (40, 4.0), (50, 5.0)]
    one = estimate.expected(turn_limit=1000, pace_ms=0, move_ms=0, past=past)
    many = estimate.expected(turn_limit=1000, pace_ms=0, move_ms=0, past=past, tables=5)
    # It should expect the median's turns for one table, more for a round of several ...
    assert one.turns == 30 and many.turns == 40
    # ... at the history's own time a turn when no pace nor move time says more ...
    assert one.turn_ms == pytest.approx(100) and one.seconds == pytest.approx(3.0)
    # ... and never more turns than the limit.
    assert estimate.expected(turn_limit=25, pace_ms=0, move_ms=0, past=past).turns == 25


def test_it_waits_for_the_slower_of_the_pace_and_the_bots():
    slow_bots = estimate.expected(turn_limit=100, pace_ms=50, move_ms=300, past=[])
    paced = estimate.expected(turn_limit=100, pace_ms=500, move_ms=300, past=[])
    # It should take the slowest bot's moves (with the platform's overhead), else the pace.
    assert slow_bots.turn_ms == 300 + estimate.OVERHEAD_MS
    assert paced.turn_ms == 500 and paced.seconds == 50


def test_it_says_durations_in_words():
    # It should say a duration as a person would.
    assert [estimate.duration_text(s) for s in (0.25, 1, 45, 200, 3600, 4500)] == [
        "250 ms",
        "1 second",
        "45 seconds",
        "3 minutes",
        "1 hour",
        "1 hour 15 minutes",
    ]


@pytest.mark.django_db
def test_it_reads_an_event_s_limit_bots_and_history():
    owner = factories.make_owner()
    bots = factories.entrants(owner, 6, ["survivor"], game="tron")
    event = factories.event(
        "Estimate", game="tron", bots=bots, format="free_for_all", table_size=3,
        options={"width": 12, "height": 12}, pace_ms=40,
    )  # fmt: skip
    got = estimate.for_event(event)
    # It should bound the turns by the game's own limit (half the 144 cells, a lap a seat) ...
    assert got.limit == 72 + 13 and got.turns == got.limit and got.history == 0
    # ... a round being its two tables ...
    assert got.tables == 2
    BotHealth.objects.create(bot=bots[0], replies_ms=[[80, 90, 100], [95]])
    # ... the slowest bot's recent median move time over the pace ...
    assert estimate.for_event(event).turn_ms == 92.5 + estimate.OVERHEAD_MS
    now = timezone.now()
    for turns in (20, 30, 40):
        m = factories.match(bots[:3], status=MatchStatus.FINISHED, event=event)
        m.turn_count, m.started, m.finished = turns, now - timedelta(seconds=4), now
        m.save()
    # ... and the event's past matches for the turns.
    got = estimate.for_event(event)
    assert got.history == 3 and got.turns == 40  # the 80th percentile: two tables a round


@pytest.mark.django_db
def test_it_is_said_on_the_event_page_and_in_the_admin(client):
    owner = factories.user("estimate-organiser", password=False, is_staff=True, is_superuser=True)
    bots = factories.entrants(owner, 4, ["survivor"], game="tron")
    event = factories.event(
        "Estimated", game="tron", bots=bots, format="free_for_all", table_size=2,
        options={"width": 10, "height": 10}, pace_ms=100,
    )  # fmt: skip
    page = client.get(f"/events/{event.pk}/").content.decode()
    # It should tell the event page's readers how long a round should take ...
    assert "Each round should take about 6 seconds (63 turns of about 100 ms" in page
    client.force_login(owner)
    admin = client.get(f"/admin/competition/event/{event.pk}/change/").content.decode()
    # ... and the organiser in the admin.
    assert "Each round should take" in admin and "about 6 seconds (63 turns" in admin
