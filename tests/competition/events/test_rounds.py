"""Rounds on a schedule (issue 39 item 1): every format but the ladder plays round by round,
round k starting once round k-1 is over and the event's round gap (``Event.round_gap``) has
passed; the runners' periodic step (``services.start_due_rounds``) starts it, claimed so that
it starts once. Real matches through ``runners.play.run_match``, real time (a 1 s gap)."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from competition.events import services as events
from competition.models import Event, EventFormat, EventStatus, MatchStatus
from tests.factories import make_bots, make_event, make_owner, play_all

pytestmark = pytest.mark.django_db(transaction=True)


def rounds_of(event: Event) -> list[int]:
    return sorted(set(event.matches.values_list("round", flat=True)))


@pytest.mark.parametrize(
    ("fmt", "bots", "extra"),
    [
        (EventFormat.ROUND_ROBIN, 4, {}),
        (EventFormat.SWISS, 4, {}),
        (EventFormat.SINGLE_ELIMINATION, 4, {}),
        (EventFormat.FREE_FOR_ALL, 4, {"table_size": 2, "rounds": 2}),
    ],
)
def test_it_waits_the_round_gap_before_the_next_round(fmt, bots, extra):
    owner = make_owner()
    event = make_event(owner, make_bots(owner, bots), fmt, round_gap=1, **extra)
    events.start_event(event)
    # It should queue round 1 alone.
    assert rounds_of(event) == [1]
    play_all()
    event.refresh_from_db()
    ended = event.matches.filter(round=1).order_by("-finished").first().finished
    # It should not start round 2 when round 1 ends, but say when it is due: its last
    # match's end plus the gap.
    assert rounds_of(event) == [1] and event.status == EventStatus.RUNNING
    assert event.next_round_at == ended + timezone.timedelta(seconds=1)
    assert events.start_due_rounds() == 0
    time.sleep(max(0.0, (event.next_round_at - timezone.now()).total_seconds()) + 0.05)
    # It should start round 2 from the periodic step once the gap has passed, and only once.
    assert events.start_due_rounds() > 0
    assert events.start_due_rounds() == 0
    event.refresh_from_db()
    assert rounds_of(event) == [1, 2] and event.next_round_at is None
    first = event.matches.filter(round=2).order_by("created").first()
    assert (first.created - ended).total_seconds() >= 1.0


def test_it_never_starts_a_round_claimed_by_another_worker():
    owner = make_owner()
    event = make_event(owner, make_bots(owner, 4), EventFormat.ROUND_ROBIN, round_gap=1)
    events.start_event(event)
    play_all()
    event.refresh_from_db()
    due = event.next_round_at
    assert due is not None
    time.sleep(max(0.0, (due - timezone.now()).total_seconds()) + 0.05)
    # Another worker claims it first (the same conditional UPDATE) and has not committed its
    # round yet: this worker finds nothing to claim.
    assert Event.objects.filter(pk=event.pk, next_round_at=due).update(next_round_at=None) == 1
    # It should create nothing.
    assert events.start_due_rounds() == 0
    assert rounds_of(event) == [1]


def test_it_plays_a_round_robin_with_no_gap_to_its_end_round_by_round():
    owner = make_owner()
    event = make_event(owner, make_bots(owner, 5), EventFormat.ROUND_ROBIN)
    # It should queue round 1 (two pairs of five; one bot sits out) and nothing more.
    assert events.start_event(event) == 2
    assert play_all() == 10
    event.refresh_from_db()
    # It should play the five rounds in order, each begun after the one before ended.
    assert event.status == EventStatus.FINISHED and rounds_of(event) == [1, 2, 3, 4, 5]
    for rnd in range(2, 6):
        before = event.matches.filter(round=rnd - 1).order_by("-finished").first().finished
        after = event.matches.filter(round=rnd).order_by("created").first().created
        assert after >= before
    assert not event.matches.exclude(status=MatchStatus.FINISHED).exists()


def test_it_sets_the_round_gap_in_the_admin_with_a_default_for_a_hall():
    from django.contrib.auth import get_user_model
    from django.test import Client

    from competition.admin import HALL_ROUND_GAP
    from tests.factories import event_form

    staff = get_user_model().objects.create_superuser("staff")
    client = Client()
    client.force_login(staff)
    page = client.get("/admin/competition/event/add/").content.decode()
    # It should offer the round gap, set for a hall, and say what it does.
    assert f'name="round_gap" value="{HALL_ROUND_GAP}"' in page
    assert "Seconds between rounds" in page
    assert (
        client.post("/admin/competition/event/add/", event_form(round_gap="12")).status_code == 302
    )
    assert client.post("/admin/competition/event/add/", event_form(name="Bare")).status_code == 302
    # It should store the gap chosen, and 0 (at once) when the field is left out.
    assert Event.objects.get(name="Open").round_gap == 12
    assert Event.objects.get(name="Bare").round_gap == 0
    refused = client.post("/admin/competition/event/add/", event_form(round_gap="-3"))
    # It should refuse a negative gap with a sentence.
    assert refused.status_code == 200 and "greater than or equal to 0" in refused.content.decode()
