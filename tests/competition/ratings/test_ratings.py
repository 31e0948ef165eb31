"""Ratings: openskill steps in finish order, exact recomputation, and no rating for a
match without a result (platform failures, cancellations)."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F

from competition.events import services as events
from competition.matches.lifecycle import cancel, create_match, finish
from competition.models import EventFormat, EventStatus, Match, MatchStatus, Rating, RatingChange
from competition.models.bots import Bot, EndpointKind
from competition.ratings import services as ratings
from games import get_game
from games.base import Outcome
from tests.factories import GAME, decide, make_bots, make_event, make_owner, play_all


def recompute_output(*args) -> str:
    out = io.StringIO()
    call_command("recomputeratings", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_it_reproduces_the_stored_ratings_exactly_from_the_history():
    owner = make_owner()
    bots = make_bots(owner, 6)
    event = make_event(owner, bots, EventFormat.ROUND_ROBIN)
    events.start_event(event)
    assert play_all() == 15
    event.refresh_from_db()
    assert event.status == EventStatus.FINISHED
    # It should write one step per (match, bot) and count five rated games per bot.
    assert RatingChange.objects.count() == 30
    assert sorted(Rating.objects.values_list("games", flat=True)) == [5] * 6
    # It should recompute exactly the stored values.
    report = ratings.verify(GAME)
    assert report.ok and report.matches == 15 and report.bots == 6
    assert "0 ratings differ, 0 steps differ, 0 unrated" in recompute_output(
        "--check", "--game", GAME
    )
    # It should show mu, sigma, the ordinal and the provisional flag.
    shown = ratings.for_bots([bots[0].pk])[bots[0].pk]
    assert (
        shown["ordinal"] == pytest.approx(shown["mu"] - 3 * shown["sigma"]) and shown["provisional"]
    )
    assert shown["games"] == 5 and ratings.PROVISIONAL_GAMES == 10

    # It should notice a tampered rating, refuse it with --check, and repair it without.
    Rating.objects.filter(bot=bots[0]).update(mu=F("mu") + 1.0)
    with pytest.raises(CommandError, match="do not reproduce"):
        recompute_output("--check")
    assert "1 ratings rewritten" in recompute_output()
    assert ratings.verify(GAME).ok
    # It should notice a tampered step too (the history is never rewritten, only reported).
    RatingChange.objects.filter(pk=RatingChange.objects.order_by("id").first().pk).update(
        mu_after=0.0
    )
    assert len(ratings.verify(GAME).steps) == 1


@pytest.mark.django_db
def test_it_rates_in_finish_order_one_step_per_match_and_bot():
    owner = make_owner()
    a, b = make_bots(owner, 2)
    first = create_match(GAME, [a, b], seed=1)
    second = create_match(GAME, [b, a], seed=2)
    # finished in the opposite order of creation
    decide(second, 1.0)
    decide(first, 0.5)
    steps = list(RatingChange.objects.order_by("id"))
    assert [(s.match_id, s.bot_id) for s in steps] == [
        (second.pk, b.pk),
        (second.pk, a.pk),
        (first.pk, a.pk),
        (first.pk, b.pk),
    ]
    # It should chain each step from the previous one, as the pure step computes it.
    (b1, a1) = ratings.step([(ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA)] * 2, [1.0, 0.0])
    (a2, b2) = ratings.step([a1, b1], [0.5, 0.5])
    assert (steps[2].mu_before, steps[2].sigma_before) == a1
    assert Rating.objects.get(bot=a).mu == a2[0] and Rating.objects.get(bot=b).sigma == b2[1]
    # It should rate a match only once: a duplicate finish changes nothing.
    assert not finish(first.pk, None, Outcome((1.0, 0.0), "again"))
    assert RatingChange.objects.count() == 4 and ratings.verify(GAME).ok


calls = {"n": 0}


def _broken_bot():
    def bot(message, rng):
        raise RuntimeError("our own bug")

    return bot


def _flaky_bot():
    """Fails (a platform fault) on its first move ever, then plays randomly."""
    inner = get_game(GAME).builtin_bots["random"]()

    def bot(message, rng):
        if message.get("action") != "init":
            calls["n"] += 1
            if calls["n"] == 1:
                raise RuntimeError("a passing platform failure")
        return inner(message, rng)

    return bot


@pytest.mark.django_db(transaction=True)
def test_it_never_rates_a_platform_failure_an_errored_or_a_cancelled_match(monkeypatch, settings):
    monkeypatch.setitem(get_game(GAME).builtin_bots, "broken", _broken_bot)
    monkeypatch.setitem(get_game(GAME).builtin_bots, "flaky", _flaky_bot)
    monkeypatch.setitem(calls, "n", 0)
    settings.ARENA_MAX_PLATFORM_FAILURES = 2
    owner = make_owner()
    (good,) = make_bots(owner, 1, strategies=("random",))
    broken = Bot.objects.create(
        owner=owner, game=GAME, name="broken", kind=EndpointKind.BUILTIN, target="broken"
    )
    flaky = Bot.objects.create(
        owner=owner, game=GAME, name="flaky", kind=EndpointKind.BUILTIN, target="flaky"
    )
    errored = create_match(GAME, [good, broken])
    cancelled = create_match(GAME, [good, broken])
    assert cancel(cancelled.pk)
    # It should give up after repeated platform failures, without a result and without a rating.
    assert play_all() == 2
    errored.refresh_from_db()
    assert errored.status == MatchStatus.ERRORED and errored.platform_failures == 2
    assert not RatingChange.objects.exists() and not Rating.objects.exists()
    assert not finish(errored.pk, None, Outcome((1.0, 0.0), "late"))
    # It should retry a passing platform failure and rate the finished match exactly once.
    resumed = create_match(GAME, [flaky, good])
    assert play_all() == 2
    resumed.refresh_from_db()
    assert resumed.status in MatchStatus.with_result() and resumed.platform_failures == 1
    assert RatingChange.objects.filter(match=resumed).count() == 2
    assert set(Rating.objects.values_list("bot_id", "games")) == {(good.pk, 1), (flaky.pk, 1)}
    assert not RatingChange.objects.exclude(match=resumed).exists()
    report = ratings.verify(GAME)
    assert report.ok and report.matches == 1
    assert Match.objects.filter(status=MatchStatus.CANCELLED).count() == 1
