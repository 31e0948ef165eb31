"""Rating farming, through the real entry points: two bots of one owner (issue 35, M4) and two
accounts whose challenges would pass an event's "minimum rated games" gate (issue 46, R4)
farm nothing: only the matches the platform pairs are rated."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils.html import escape
from rest_framework.test import APIClient

from competition.bots.services import platform_seat
from competition.events import services as events
from competition.matches.lifecycle import create_match
from competition.models import (
    EventAdmission,
    EventFormat,
    EventStatus,
    Match,
    Rating,
    RatingChange,
)
from competition.models.bots import EndpointKind
from competition.ratings import services as ratings
from competition.web.forms import PRACTICE_NOTE
from tests import factories
from tests.factories import GAME, builtin_of, decide, make_event, play_all, signed_in_api
from tests.helpers import silent_bot

pytestmark = pytest.mark.django_db

User = get_user_model()


@pytest.mark.django_db(transaction=True)
def test_it_never_rates_a_challenge_between_two_bots_of_one_owner(mallory, allow_loopback):
    api = APIClient()
    api.force_login(mallory)
    star = builtin_of(mallory, "star")
    with silent_bot() as url:
        registered = api.post(
            "/api/bots/",
            {"game": "tictactoe", "name": "farm", "kind": "http", "target": url},
            format="json",
        )
        assert registered.status_code == 201, registered.content
        farm = registered.json()["id"]
        answers = []
        for seats in ([star.pk, farm], [farm, star.pk], [star.pk, farm]):
            answers.append(
                api.post(
                    "/api/matches/challenge/",
                    {"game": "tictactoe", "bots": seats},
                    format="json",
                )
            )
            assert play_all() == 1
    # It should make each match, and say in the answer that it is unrated, and why.
    for answer in answers:
        assert answer.status_code == 201, answer.content
        assert answer.json()["rated"] is False
        assert answer.json()["unrated_reason"] == ratings.ONE_OWNER
    played = Match.objects.filter(status__in=("finished", "forfeited"))
    assert played.count() == 3
    # It should rate none of them: no step, no rating, nobody on the leaderboard.
    assert not RatingChange.objects.exists() and not Rating.objects.exists()
    board = APIClient().get("/api/leaderboard/tictactoe/").json()
    assert board["results"] == [], board["results"]
    # It should not rate a challenge of someone else's bot either (issue 46 R4: practice).
    victim = builtin_of(get_user_model().objects.create_user("victim"), "victim", "random")
    fair = api.post(
        "/api/matches/challenge/",
        {"game": "tictactoe", "bots": [star.pk, victim.pk]},
        format="json",
    )
    assert fair.status_code == 201 and fair.json()["rated"] is False
    assert fair.json()["unrated_reason"] == ratings.PRACTICE
    assert play_all() == 1
    assert not RatingChange.objects.filter(match_id=fair.json()["id"]).exists()


def test_it_says_on_the_form_that_a_challenge_of_your_own_bot_is_unrated(mallory):
    star, other = builtin_of(mallory, "star"), builtin_of(mallory, "other", "random")
    web = Client()
    web.force_login(mallory)
    page = web.get(f"/bots/{star.pk}/").content.decode()
    # It should say so on the form, before the match is made.
    assert "Both bots are yours, so the match will be unrated" in page
    response = web.post(f"/bots/{star.pk}/challenge", {"mine": other.pk, "seat": 0, "pace_ms": 0})
    match = Match.objects.get()
    # It should make the match unrated, and say why on the viewer it lands on.
    assert response.status_code == 302 and not match.rated
    viewer = web.get(response["Location"]).content.decode()
    assert "two of its bots have the same owner" in viewer
    # It should say nothing of the kind on someone else's bot's page.
    theirs = builtin_of(get_user_model().objects.create_user("victim"), "theirs", "random")
    assert "will be unrated" not in web.get(f"/bots/{theirs.pk}/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_it_plays_a_round_robin_with_two_bots_of_one_owner_unrated_but_counted(mallory):
    organiser = get_user_model().objects.create_user("organiser", is_staff=True)
    victim = get_user_model().objects.create_user("victim")
    a, b = builtin_of(mallory, "a"), builtin_of(mallory, "b", "random")
    c = builtin_of(victim, "c", "random")
    event = make_event(organiser, [a, b, c], EventFormat.ROUND_ROBIN)
    events.start_event(event)
    assert play_all() == 3
    event.refresh_from_db()
    assert event.status == EventStatus.FINISHED
    siblings = Match.objects.get(
        participants__bot=a, event=event, pk__in=b.participations.values("match")
    )
    # It should play the match of the two bots of one owner unrated ...
    assert not siblings.rated and not RatingChange.objects.filter(match=siblings).exists()
    # ... rate the others ...
    for match in event.matches.exclude(pk=siblings.pk):
        assert match.rated and RatingChange.objects.filter(match=match).count() == 2
    # ... and count every match in the event's own standings.
    table = {row["bot"]: row for row in events.standings(event)}
    assert all(table[bot.pk]["games"] == 2 for bot in (a, b, c))
    assert ratings.verify("tictactoe").ok


@pytest.mark.django_db(transaction=True)
def test_it_refuses_to_rate_a_stored_rated_match_of_one_owner(mallory):
    a, b = builtin_of(mallory, "a"), builtin_of(mallory, "b", "random")
    match = create_match("tictactoe", [a, b], dispatch_now=False)
    # It should decide "unrated" when the match is made, whoever asks for a rated one ...
    assert not match.rated
    # ... and the rating service should refuse it again (a match stored as rated before).
    Match.objects.filter(pk=match.pk).update(rated=True)
    decide(match, 1.0)
    assert not RatingChange.objects.filter(match=match).exists()
    assert ratings.verify("tictactoe").unrated == []
    # It should not count the platform's seats (owner none) as one owner.
    seats = [platform_seat("tictactoe", EndpointKind.BUILTIN, n) for n in ("perfect", "random")]
    platform = create_match("tictactoe", seats, dispatch_now=False)
    assert platform.rated
    decide(platform, 1.0)
    assert RatingChange.objects.filter(match=platform).count() == 2


@pytest.mark.django_db(transaction=True)
def test_it_rates_no_challenge_so_two_accounts_farm_nothing_and_the_gate_stays_shut(
    allow_loopback,
):
    mallory, puppet = User.objects.create_user("mallory"), User.objects.create_user("puppet")
    star = builtin_of(mallory, "star")
    gated = factories.open_event(
        name="Rated cup", admission=EventAdmission.RATED, min_rated_games=2
    )
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
