"""Stored standings (``services.standings``) equal the ones recomputed from the matches.

Seeded random sequences drive real events of every format through the real services:
finishes (wins, draws, losses), forfeits, platform limits, cancellations, errors and
requeues, event pauses and resumes, bots paused and resumed. After every step the stored
series, sums and head-to-head rows must equal ``standings.recompute`` exactly, and the
standings table read from them must equal the one built from the recomputed rows.
"""

from __future__ import annotations

import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from competition.bots.services import set_bot_status
from competition.events import services as events
from competition.events import standings
from competition.matches.lifecycle import cancel, claim, finish, finish_limit, release, requeue
from competition.models import EventFormat, EventStanding, EventStatus, Match, MatchStatus
from competition.models.bots import Bot, BotStatus, EndpointKind
from games.base import Outcome
from tests.factories import make_bots, make_event, make_owner

FORMATS = [
    EventFormat.ROUND_ROBIN,
    EventFormat.DOUBLE_ROUND_ROBIN,
    EventFormat.SWISS,
    EventFormat.SINGLE_ELIMINATION,
    EventFormat.LADDER,
    EventFormat.FREE_FOR_ALL,
]


def _tron_bots(owner, n: int) -> list[Bot]:
    return [
        Bot.objects.create(
            owner=owner, game="tron", name=f"snake-{i}", kind=EndpointKind.BUILTIN, target="random"
        )
        for i in range(n)
    ]


def _step(rng: random.Random, event, bots) -> str:
    """One random thing happening to ``event``; returns what it was."""
    queued = list(event.matches.filter(status=MatchStatus.QUEUED).order_by("id"))
    errored = list(event.matches.filter(status=MatchStatus.ERRORED).order_by("id"))
    roll = rng.random()
    if errored and roll < 0.3:
        match = rng.choice(errored)
        if rng.random() < 0.5:
            assert requeue(match.pk)
            return "requeue"
        assert cancel(match.pk)
        return "cancel errored"
    if roll < 0.06:
        if event.status == EventStatus.RUNNING:
            events.pause_event(event)
            return "pause event"
        if event.status == EventStatus.PAUSED:
            events.resume_event(event)
            return "resume event"
    if roll < 0.1:
        bot = rng.choice(bots)
        bot.refresh_from_db()
        target = BotStatus.ACTIVE if bot.status != BotStatus.ACTIVE else BotStatus.PAUSED
        set_bot_status(bot, target, "" if target == BotStatus.ACTIVE else "test")
        return f"bot {target}"
    if not queued or event.status == EventStatus.PAUSED:
        if event.status == EventStatus.PAUSED:
            events.resume_event(event)
            return "resume event"
        paused = [b for b in bots if b.status != BotStatus.ACTIVE]
        for b in paused:
            set_bot_status(b, BotStatus.ACTIVE)
        return "resume bots" if paused else "idle"
    match = rng.choice(queued)
    what = rng.random()
    if what < 0.1:
        assert cancel(match.pk)
        return "cancel"
    claimed = claim(match.pk)
    assert claimed is not None
    _, token = claimed
    if what < 0.2:
        assert release(match.pk, token, "platform failure") in (
            MatchStatus.ERRORED,
            MatchStatus.QUEUED,
        )
        return "release"
    if what < 0.27:
        assert finish_limit(match.pk, token, "turns")
        return "limit"
    seats = match.participants.count()
    if what < 0.4:
        seat = rng.randrange(seats)
        scores = tuple(0.0 if s == seat else 1.0 for s in range(seats))
        assert finish(match.pk, token, Outcome(scores, "forfeit"), forfeited=(seat,))
        return "forfeit"
    if seats > 2:  # a free-for-all table: random ranks, ties possible
        scores = tuple(float(rng.randrange(seats)) for _ in range(seats))
        assert finish(match.pk, token, Outcome(scores, "scripted"))
        return "finish"
    first = rng.choice((0.0, 0.5, 1.0))
    assert finish(match.pk, token, Outcome((first, 1.0 - first), "scripted"))
    return "finish"


def _table_from(event, recomputed: standings.Recomputed) -> list:
    """The standings table read from rows equal to ``recomputed`` (rebuilt in place)."""
    standings.rebuild(event)
    return events.standings(event)


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", range(4))
def test_it_keeps_stored_standings_equal_to_the_recomputed_ones(settings, fmt, seed):
    # It should keep every stored row equal to the recomputation after each random step.
    settings.ARENA_MAX_PLATFORM_FAILURES = 2
    settings.ARENA_BOT_HEALTH_FORFEITS = 0
    rng = random.Random(f"{fmt}-{seed}")
    owner = make_owner()
    fields = {"series_length": rng.choice((1, 2))}
    if fmt == EventFormat.FREE_FOR_ALL:  # N-seat tables of tron snakes
        bots = _tron_bots(owner, rng.choice((5, 7, 8)))
        fields.update(rounds=3, table_size=rng.choice((3, 4)))
    else:
        bots = make_bots(owner, rng.choice((4, 5, 6)))
    if fmt == EventFormat.LADDER:
        fields["rounds"] = 4
    event = make_event(owner, bots, fmt, **fields)
    if fmt == EventFormat.FREE_FOR_ALL:
        event.game = "tron"
        event.save(update_fields=["game"])
    events.start_event(event)
    steps = []
    for _ in range(70):
        event.refresh_from_db()
        for b in bots:
            b.refresh_from_db()
        steps.append(_step(rng, event, bots))
        event.refresh_from_db()
        found = standings.differences(event)
        assert found == [], (steps, found)
        if event.status in (EventStatus.FINISHED, EventStatus.CANCELLED):
            break
    assert EventStanding.objects.filter(event=event).exists()
    # It should read the same table from the stored rows as from rows rebuilt from scratch.
    table = events.standings(event)
    assert _table_from(event, standings.recompute(event)) == table
    # It should have exercised the finish paths, not only idled.
    assert {"finish", "forfeit"} & set(steps)


@pytest.mark.django_db
def test_it_reports_and_repairs_stored_standings_that_drifted():
    owner = make_owner()
    bots = make_bots(owner, 4)
    event = make_event(owner, bots, EventFormat.ROUND_ROBIN)
    events.start_event(event)
    for match in Match.objects.filter(event=event).order_by("id")[:3]:
        _, token = claim(match.pk)
        finish(match.pk, token, Outcome((1.0, 0.0), "scripted"))
    call_command("recomputestandings", "--check")
    EventStanding.objects.filter(event=event, bot=bots[0]).update(points=42)
    # It should fail the check without writing anything…
    with pytest.raises(CommandError):
        call_command("recomputestandings", "--check")
    assert EventStanding.objects.get(event=event, bot=bots[0]).points == 42
    # …and rewrite the event from its matches without --check.
    call_command("recomputestandings", f"--event={event.pk}")
    assert standings.differences(event) == []
    call_command("recomputestandings", "--check")
