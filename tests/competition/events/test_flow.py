"""Organiser actions on a running event: pausing holds its queued matches, resuming
releases them, a cancelled match moves the event on."""

import pytest
from django.contrib.auth import get_user_model

from competition.events import services as events
from competition.matches import lifecycle as matches
from competition.models import Entry, Event, EventFormat, EventStatus, Match, MatchStatus
from competition.models.bots import Bot, EndpointKind

pytestmark = pytest.mark.django_db


@pytest.fixture
def event():
    owner = get_user_model().objects.create_user("organiser", password="pw-organiser-1")
    event = Event.objects.create(name="e", game="tictactoe", format=EventFormat.ROUND_ROBIN)
    for i, name in enumerate(["perfect", "random", "random"]):
        bot = Bot.objects.create(
            owner=owner, game="tictactoe", name=f"{name}{i}", kind=EndpointKind.BUILTIN, target=name
        )
        Entry.objects.create(event=event, bot=bot, seed=i + 1)
    assert events.start_event(event) == 1  # round 1 of 3 (one bot sits each round out)
    event.refresh_from_db()
    return event


def test_it_holds_a_paused_events_queued_matches(event):
    assert events.pause_event(event)
    # It should let no worker claim a match of a paused event ...
    assert matches.claim() is None
    assert Match.objects.filter(event=event, status=MatchStatus.QUEUED).count() == 1
    # ... and release them when the event resumes.
    assert events.resume_event(event)
    claimed = matches.claim()
    assert claimed is not None and Match.objects.get(pk=claimed[0]).event_id == event.pk


def test_it_finishes_an_event_whose_last_match_is_cancelled(event):
    # (round by round: cancelling a round's match makes the next round due)
    for rnd in (1, 2):
        (match_id,) = Match.objects.filter(event=event, round=rnd).values_list("id", flat=True)
        assert matches.cancel(match_id)
        assert Event.objects.get(pk=event.pk).status == EventStatus.RUNNING
    (last,) = Match.objects.filter(event=event, round=3).values_list("id", flat=True)
    assert matches.cancel(last)
    # It should notice that nothing is left to play.
    assert Event.objects.get(pk=event.pk).status == EventStatus.FINISHED
