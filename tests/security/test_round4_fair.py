"""Issue 46 (round 4 of the hostile review), the fair-share rows, through the real entry
points: R4 (two accounts farm a rating and pass an event's "minimum rated games" gate with
challenges), R5 (one user takes an event's places) and R6 (one account's slow bots hold the
runners with ladder matches)."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from django.utils.html import escape
from rest_framework.test import APIClient

from bots.models import EndpointKind
from competition.matches.lifecycle import create_match
from competition.models import (
    Event,
    EventAdmission,
    EventFormat,
    Match,
    Rating,
    RatingChange,
)
from competition.ratings import services as ratings
from competition.web.forms import PRACTICE_NOTE
from tests import factories
from tests.competition.test_events import GAME, play_all
from tests.security.test_round3_small import builtin_of, silent_bot

User = get_user_model()


def open_event(**fields) -> Event:
    now = timezone.now()
    values = {
        "name": "Open cup",
        "game": GAME,
        "format": EventFormat.ROUND_ROBIN,
        "registration_opens": now - timedelta(minutes=5),
        "starts_at": now + timedelta(hours=1),
    }
    values.update(fields)
    return Event.objects.create(**values)


def signed_in_api(who) -> APIClient:
    api = APIClient()
    api.force_login(who)
    return api


# -- R4: only the matches the platform pairs are rated ------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_it_rates_no_challenge_so_two_accounts_farm_nothing_and_the_gate_stays_shut(
    allow_loopback,
):
    mallory, puppet = User.objects.create_user("mallory"), User.objects.create_user("puppet")
    star = builtin_of(mallory, "star")
    gated = open_event(name="Rated cup", admission=EventAdmission.RATED, min_rated_games=2)
    api = signed_in_api(mallory)
    web = Client()
    web.force_login(mallory)
    with silent_bot() as url:  # the second account's bot: it forfeits every game on purpose
        loser = factories.bot(puppet, "loser", kind=EndpointKind.HTTP, target=url)
        # It should say on the challenge form, before the match is made, that it is practice.
        form = web.get(f"/bots/{loser.pk}/").content.decode()
        assert escape(PRACTICE_NOTE) in form
        answers = []
        for seats in ([star.pk, loser.pk], [loser.pk, star.pk]):
            answers.append(
                api.post("/api/matches/challenge/", {"game": GAME, "bots": seats}, format="json")
            )
            assert play_all() == 1
    # It should make each match, unrated, and say why in the answer (the CLI prints it).
    for answer in answers:
        assert answer.status_code == 201, answer.content
        assert answer.json()["rated"] is False
        assert answer.json()["unrated_reason"] == ratings.PRACTICE
    won = Match.objects.filter(participants__bot=star, status__in=("finished", "forfeited"))
    assert won.count() == 2
    # It should rate neither: no step, no rated game, the default mu, nobody ranked.
    assert not RatingChange.objects.exists()
    assert ratings.for_bots([star.pk])[star.pk] == ratings.summary()
    assert Rating.objects.filter(bot=star, games__gt=0).count() == 0
    board = APIClient().get(f"/api/leaderboard/{GAME}/").json()
    assert board["results"] == [], board["results"]
    # It should say on the match page that the match is unrated practice.
    page = web.get(f"/matches/{answers[0].json()['id']}/").content.decode()
    assert 'id="unrated-badge"' in page and "a challenge, a fork or the bench is practice" in page
    # It should keep the gated event shut: 0 rated games of the 2 it asks.
    refused = api.post(f"/api/events/{gated.pk}/enter/", {"bot": star.pk}, format="json")
    assert refused.status_code == 400, refused.content
    assert "at least 2 rated games; star has 0" in refused.content.decode()
    assert not gated.entries.exists()


@pytest.mark.django_db(transaction=True)
def test_it_recomputes_without_the_challenges_rated_before_the_rule():
    mallory, victim = User.objects.create_user("mallory"), User.objects.create_user("victim")
    star, other = builtin_of(mallory, "star"), builtin_of(victim, "other", "random")
    # A challenge rated as the code before this rule rated it: its step and its rating row.
    old = create_match(GAME, [star, other], created_by=mallory, dispatch_now=False)
    Match.objects.filter(pk=old.pk).update(rated=True, status="finished")
    old.participants.filter(seat=0).update(score=1.0)
    old.participants.filter(seat=1).update(score=0.0)
    default = (ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA)
    after = ratings.step([default, default], [1.0, 0.0])
    for bot, (mu, sigma) in zip((star, other), after, strict=True):
        Rating.objects.create(bot=bot, game=GAME, mu=mu, sigma=sigma, games=1)
        RatingChange.objects.create(
            match=old,
            bot=bot,
            mu_before=default[0],
            sigma_before=default[1],
            mu_after=mu,
            sigma_after=sigma,
        )
    # It should find the stored ratings no longer reproduced (the challenge does not count) ...
    report = ratings.verify(GAME)
    assert not report.ok and len(report.ratings) == 2 and report.unrated == []
    # ... and put them back to no rated game, leaving the append-only steps as they are.
    out = io.StringIO()
    call_command("recomputeratings", stdout=out)
    assert "2 ratings rewritten" in out.getvalue()
    stored = Rating.objects.filter(bot__in=(star, other)).values_list("mu", "sigma", "games")
    assert set(stored) == {(*default, 0)}
    assert RatingChange.objects.filter(match=old).count() == 2
    assert ratings.verify(GAME).ok
