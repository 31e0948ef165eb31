"""Match services: create, claim, fenced turns, idempotent finish, reap, resume."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils import timezone

from competition.live import broadcast
from competition.live.hub import hub
from competition.matches import history, turns
from competition.matches import lifecycle as svc
from competition.matches.loop import TurnRecord
from competition.matches.presenters import match_json
from competition.models import Match, MatchStatus, Participant, Rating, RatingChange, Turn
from competition.models.bots import Bot, EndpointKind
from competition.runners.play import run_match
from games import get_game
from games.base import Outcome
from tests.factories import record

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bots():
    # one owner per bot: a match between bots of one owner is never rated
    make = lambda name, target, game="tictactoe": Bot.objects.create(  # noqa: E731
        owner=get_user_model().objects.create_user(name, password="pw-owner-123"),
        game=game,
        name=name,
        kind=EndpointKind.BUILTIN,
        target=target,
    )
    return {
        "perfect": make("perfect", "perfect"),
        "random": make("random", "random"),
        "grower": make("grower", "grower", "gconway"),
    }


def test_it_validates_a_new_match(bots):
    with pytest.raises(ValidationError, match="Unknown game"):
        svc.create_match("chess", [bots["perfect"], bots["random"]])
    with pytest.raises(ValidationError, match="move_timeout_ms"):
        svc.create_match(
            "tictactoe", [bots["perfect"], bots["random"]], options={"move_timeout_ms": -5}
        )
    with pytest.raises(ValidationError, match="exactly 2"):
        svc.create_match("tictactoe", [bots["perfect"]])
    with pytest.raises(ValidationError, match="does not play"):
        svc.create_match("tictactoe", [bots["perfect"], bots["grower"]])
    # It should store nothing for a refused match.
    assert Match.objects.count() == 0


def test_it_lets_only_one_worker_claim_a_match(bots):
    match = svc.create_match("tictactoe", [bots["perfect"], bots["random"]], dispatch_now=False)
    first = svc.claim(match.pk, worker="a")
    second = svc.claim(match.pk, worker="b")
    assert first is not None and first[0] == match.pk and second is None
    match.refresh_from_db()
    assert match.status == MatchStatus.RUNNING and match.worker == "a" and match.attempts == 1
    assert match.lease_expires > timezone.now()


def test_it_fences_turns_with_the_lease(bots):
    match = svc.create_match("tictactoe", [bots["perfect"], bots["random"]], dispatch_now=False)
    _mid, token = svc.claim(match.pk)
    turns.record_turn(match.pk, token, record(1))
    # It should refuse a stale worker's turn and a duplicate turn number.
    with pytest.raises(svc.LeaseLost):
        turns.record_turn(match.pk, uuid.uuid4(), record(2))
    with pytest.raises(svc.LeaseLost):
        turns.record_turn(match.pk, token, record(1))
    assert list(Turn.objects.filter(match=match).values_list("number", flat=True)) == [1]


def test_it_finishes_once_and_rates_once(bots):
    match = svc.create_match("tictactoe", [bots["perfect"], bots["random"]], dispatch_now=False)
    _mid, token = svc.claim(match.pk)
    outcome = Outcome((1.0, 0.0), "three_in_a_row")
    assert svc.finish(match.pk, token, outcome) is True
    # It should ignore a second finish (a racing worker) and a finish without the lease.
    assert svc.finish(match.pk, token, Outcome((0.0, 1.0), "three_in_a_row")) is False
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.reason == "three_in_a_row"
    seats = list(
        Participant.objects.filter(match=match).order_by("seat").values_list("result", "score")
    )
    assert seats == [("win", 1.0), ("loss", 0.0)]
    assert RatingChange.objects.filter(match=match).count() == 2
    assert Rating.objects.get(bot=bots["perfect"]).mu > Rating.objects.get(bot=bots["random"]).mu


def test_it_records_the_forfeit_cause(bots):
    match = svc.create_match("tictactoe", [bots["perfect"], bots["random"]], dispatch_now=False)
    _mid, token = svc.claim(match.pk)
    bad = TurnRecord(
        number=1,
        seats=(0,),
        actions=[None, None],
        faults=["timeout", None],
        details=["slow", None],
        latencies_ms=[500, None],
        frame={},
        logs=[None, None],
        forfeited=(0,),
    )
    turns.record_turn(match.pk, token, bad)
    svc.finish(match.pk, token, Outcome((0.0, 1.0), "forfeit"), forfeited=(0,))
    p0, p1 = Participant.objects.filter(match=match).order_by("seat")
    assert (p0.result, p0.cause, p0.faults) == ("loss", "timeout", 1)
    assert (p1.result, p1.cause) == ("win", "")
    assert Match.objects.get(pk=match.pk).status == MatchStatus.FORFEITED


def test_it_reaps_expired_leases_and_gives_up_after_n_failures(bots, settings):
    settings.ARENA_MAX_PLATFORM_FAILURES = 2
    match = svc.create_match("tictactoe", [bots["perfect"], bots["random"]], dispatch_now=False)
    for attempt in (1, 2):
        svc.claim(match.pk, worker=f"w{attempt}")
        Match.objects.filter(pk=match.pk).update(
            lease_expires=timezone.now() - timedelta(seconds=1)
        )
        assert svc.reap() == [match.pk]
        match.refresh_from_db()
        expected = MatchStatus.QUEUED if attempt == 1 else MatchStatus.ERRORED
        assert match.status == expected and match.platform_failures == attempt
    # It should say why it gave up.
    assert "lease expired (worker w2)" in match.error
    assert svc.reap() == []


def test_it_plays_a_match_to_the_end_with_run_match(bots):
    match = svc.create_match(
        "tictactoe", [bots["perfect"], bots["random"]], seed=5, dispatch_now=False
    )
    assert asyncio.run(run_match()) == match.pk
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.turn_count >= 5
    numbers = [turn.number for turn in history.turns(match)]
    assert numbers == list(range(1, match.turn_count + 1))
    # It should have compacted the ended match's turns (no row left, the archive serves them).
    assert history.is_compacted(match) and not Turn.objects.filter(match=match).exists()
    # Nothing left to claim.
    assert asyncio.run(run_match()) is None


def test_claim_takes_exactly_the_matches_the_due_query_names(bots):
    from competition.models import Event, EventStatus

    now = timezone.now()
    pair = [bots["perfect"], bots["random"]]
    running, paused = (
        Event.objects.create(name=s, game="tictactoe", status=s)
        for s in (EventStatus.RUNNING, EventStatus.PAUSED)
    )
    for not_before in (None, now - timedelta(seconds=5), now + timedelta(hours=1)):
        for event in (None, running, paused):
            match = svc.create_match("tictactoe", pair, dispatch_now=False, not_before=not_before)
            Match.objects.filter(pk=match.pk).update(event=event)
    Match.objects.filter(pk=svc.create_match("tictactoe", pair, dispatch_now=False).pk).update(
        status=MatchStatus.CANCELLED
    )
    due = set(Match.objects.due().values_list("id", flat=True))
    assert len(due) == 4  # no start time or a past one, outside any event or in a running one
    # It should claim (in SQL) exactly what the ORM's definition of "due" names, oldest first.
    claimed = []
    while (taken := svc.claim()) is not None:
        claimed.append(taken[0])
    assert claimed == sorted(due)


def test_it_claims_human_seat_matches_only_where_asked(bots):
    from competition.bots.services import platform_seat

    human = platform_seat("tictactoe", EndpointKind.HUMAN, "")
    pair = [bots["perfect"], bots["random"]]
    machines = svc.create_match("tictactoe", pair, dispatch_now=False)
    person = svc.create_match("tictactoe", [human, bots["perfect"]], dispatch_now=False)
    later = svc.create_match("tictactoe", pair, dispatch_now=False)
    # It should give a runner process (humans=False) only the matches without a human seat,
    # and the web process (humans=True) only the one with a human seat.
    assert svc.claim(humans=True)[0] == person.pk
    assert svc.claim(humans=True) is None
    assert svc.claim(humans=False)[0] == machines.pk
    assert svc.claim(humans=False)[0] == later.pk
    assert svc.claim(humans=False) is None


def test_the_runners_finish_announces_what_the_database_holds(bots, monkeypatch):
    from competition.live import broadcast
    from competition.ratings import services as ratings

    announced = []
    monkeypatch.setattr(
        broadcast, "match_finished", lambda summary, **how: announced.append(summary)
    )
    for seed in range(3):  # the first rates two new bots, the others update their ratings
        svc.create_match(
            "tictactoe", [bots["perfect"], bots["random"]], seed=seed, dispatch_now=False
        )
        mid = asyncio.run(run_match())
        # It should finish from what the runner holds (no re-reading) and announce exactly
        # the summary the stored rows give.
        assert announced[-1] == match_json(Match.objects.get(pk=mid))
        assert announced[-1]["turn_count"] == len(history.turns(mid)) >= 5
    assert RatingChange.objects.count() == 6 and Rating.objects.get(bot=bots["perfect"]).games == 3
    assert ratings.verify("tictactoe").ok


class WorkerDied(BaseException):
    """Stands for the process dying: not an ordinary error any layer would handle."""


async def watched_run(match_id: int):
    """``run_match`` with a spectator on the match's group: turns nobody watches may wait
    for the end to be stored (``TurnWriter``); watched ones are stored as they come."""

    class Spectator:
        async def deliver(self, message):
            pass

    spectator, group = Spectator(), broadcast.match_group(match_id)
    await hub.join(group, spectator)
    try:
        return await run_match(match_id)
    finally:
        await hub.leave(group, spectator)


def test_it_resumes_a_crashed_match_from_its_stored_turns(bots, monkeypatch):
    match = svc.create_match(
        "gconway",
        [bots["grower"], bots["grower"]],
        seed=1,
        dispatch_now=False,
        options={"maxGameIterations": 12},
        pace_ms=60,  # watched and paced beyond the writer's linger: each turn stored as played
    )
    real_record = turns.record_turns

    def crash_after_three(match_id, token, records, **limits):
        keep = [r for r in records if r.number < 4]
        rows = (
            real_record(match_id, token, keep, **limits)
            if keep
            else (0, limits.get("stored_bytes", 0))
        )
        if len(keep) < len(records):
            raise WorkerDied  # the worker dies mid-match (not an ordinary error)
        return rows

    monkeypatch.setattr(turns, "record_turns", crash_after_three)
    with pytest.raises(WorkerDied):
        asyncio.run(watched_run(match.pk))
    monkeypatch.setattr(turns, "record_turns", real_record)
    match.refresh_from_db()
    assert match.status == MatchStatus.RUNNING and match.turn_count == 3
    # The lease expires; the reaper requeues; another worker resumes.
    Match.objects.filter(pk=match.pk).update(lease_expires=timezone.now() - timedelta(seconds=1))
    assert svc.reap() == [match.pk]
    assert asyncio.run(run_match(worker="second")) == match.pk
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.attempts == 2 and match.turn_count == 12
    game = get_game("gconway")
    state = game.initial_state(seed=1, options=match.options)
    for turn in history.turns(match):  # compacted at the end: read where they are
        state = game.apply(state, {s: turn.actions[s] for s in turn.seats})
        assert game.frame(state) == turn.frame
    # The resumed result equals an uninterrupted play of the same match.
    assert [turn.number for turn in history.turns(match)] == list(range(1, 13))


def _match_saves(queries) -> int:
    """The UPDATEs of a match row that store its lease fields (one per ``save``)."""
    return sum(
        1
        for q in queries.captured_queries
        if q["sql"].startswith('UPDATE "competition_match"') and '"platform_failures"' in q["sql"]
    )


def test_it_requeues_a_released_match_in_one_save_with_every_field(bots, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.ARENA_MAX_PLATFORM_FAILURES = 2
    match = svc.create_match("tictactoe", [bots["perfect"], bots["random"]], dispatch_now=False)
    queued_at = Match.objects.get(pk=match.pk).queued_at
    _, token = svc.claim(match.pk, worker="w1")
    with CaptureQueriesContext(connection) as queries:
        assert svc.release(match.pk, token, "platform failure") == MatchStatus.QUEUED
    # It should store the requeued match in one save, every field of it.
    assert _match_saves(queries) == 1
    match.refresh_from_db()
    assert (match.status, match.platform_failures, match.error) == (
        MatchStatus.QUEUED,
        1,
        "platform failure",
    )
    assert match.lease_token is None and match.lease_expires is None and match.finished is None
    assert match.queued_at > queued_at


def test_it_errors_a_released_event_match_in_one_save_before_its_event_hears(settings):
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from competition.events.services import start_event
    from competition.models import Event, EventFormat, EventStatus
    from tests import factories

    settings.ARENA_MAX_PLATFORM_FAILURES = 1
    owner = get_user_model().objects.create_user("organiser")
    event = factories.event(
        bots=factories.entrants(owner, 2, ["random"]),
        format=EventFormat.ROUND_ROBIN,
        created_by=owner,
    )
    start_event(event)
    (match,) = Match.objects.filter(event=event)
    _, token = svc.claim(match.pk, worker="w1")
    with CaptureQueriesContext(connection) as queries:
        assert svc.release(match.pk, token, "platform failure") == MatchStatus.ERRORED
    # It should store the errored match in one save, every field of it…
    assert _match_saves(queries) == 1
    match.refresh_from_db()
    assert (match.status, match.platform_failures, match.error) == (
        MatchStatus.ERRORED,
        1,
        "platform failure",
    )
    assert match.lease_token is None and match.lease_expires is None
    assert match.finished is not None
    # …before its event hears of it: a round robin whose last pending match errored is over.
    assert Event.objects.get(pk=event.pk).status == EventStatus.FINISHED
