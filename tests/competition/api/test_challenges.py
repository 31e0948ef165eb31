"""Challenges with consent (issue 50, item 6) through the API: a bot set to "never" refuses
a challenge in a sentence; one set to "ask" holds the match pending (no runner takes it) until
its owner accepts (then it plays) or declines (it never plays), or until
``ARENA_CHALLENGE_EXPIRY`` passes (the periodic step cancels it); the challenger is told each
answer, the owner is told the challenge waits. Matches are played by the real runner path."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from competition.events import registration
from competition.matches.lifecycle import claim
from competition.models import (
    ChallengeAnswer,
    ChallengeRequest,
    EmailChoice,
    Match,
    MatchStatus,
    Notification,
    NotificationKind,
)
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

USERS_OPTIONS = {"password": False}


@pytest.fixture
def pair(users):
    """The owner's bot (the one challenged) and the other user's (the challenger's)."""
    theirs = factories.bot(users["owner"], "theirs")
    mine = factories.bot(users["other"], "mine")
    return {
        "theirs": theirs,
        "mine": mine,
        "owner": factories.signed_in_api(users["owner"]),
        "other": factories.signed_in_api(users["other"]),
    }


def challenge(pair):
    body = {"game": "tictactoe", "bots": [pair["mine"].pk, pair["theirs"].pk]}
    return pair["other"].post("/api/matches/challenge/", body, format="json")


def consent(pair, value: str):
    answer = pair["owner"].patch(
        f"/api/bots/{pair['theirs'].pk}/", {"challenges": value}, format="json"
    )
    assert answer.status_code == 200 and answer.json()["challenges"] == value, answer.content


def kinds_of(user) -> list[str]:
    return list(Notification.objects.filter(user=user).values_list("kind", flat=True))


def test_it_plays_at_once_by_default_and_refuses_a_bot_set_to_never(pair, users):
    # It should keep today's behaviour by default: queued, the owner told.
    made = challenge(pair)
    assert made.status_code == 201 and made.json()["status"] == "queued"
    assert kinds_of(users["owner"]) == [NotificationKind.CHALLENGED]
    # It should refuse, in a sentence, a challenge of a bot whose owner chose never.
    consent(pair, "never")
    refused = challenge(pair)
    assert refused.status_code == 400
    assert refused.json()["bots"] == [
        "theirs does not accept challenges: its owner chose never to be challenged."
    ]
    assert Match.objects.count() == 1
    # It should let the owner's own bots challenge it all the same.
    own = factories.bot(users["owner"], "own")
    body = {"game": "tictactoe", "bots": [own.pk, pair["theirs"].pk]}
    assert (
        pair["owner"].post("/api/matches/challenge/", body, format="json").json()["status"]
        == "queued"
    )
    # ... and refuse a word that is no choice.
    bad = pair["owner"].patch(
        f"/api/bots/{pair['theirs'].pk}/", {"challenges": "maybe"}, format="json"
    )
    assert bad.status_code == 400 and "challenges" in bad.json()


def test_it_holds_an_asked_challenge_until_the_owner_accepts_then_plays_it(pair, users):
    consent(pair, "ask")
    made = challenge(pair)
    # It should hold the match pending: no runner claims it.
    assert made.status_code == 201 and made.json()["status"] == "pending"
    match_id = made.json()["id"]
    assert claim(match_id) is None and factories.play_all() == 0
    assert pair["other"].get(f"/api/matches/{match_id}/").json()["status"] == "pending"
    # It should tell the owner (at once by mail, by default) and list it for the owner only.
    asked = Notification.objects.get(user=users["owner"])
    assert asked.kind == NotificationKind.CHALLENGE_ASKED and asked.email == EmailChoice.INSTANT
    assert f"challenge {match_id}" in asked.text and asked.link == f"/matches/{match_id}/"
    waiting = pair["owner"].get("/api/challenges/").json()
    assert [(w["match"], w["bot"], w["challenger"]) for w in waiting] == [
        (match_id, "theirs", "other")
    ]
    assert pair["other"].get("/api/challenges/").json() == []
    # It should let only the asked owner answer.
    assert pair["other"].post(f"/api/challenges/{match_id}/accept/").status_code == 404
    assert pair["owner"].post("/api/challenges/nope/accept/").status_code == 404
    # On accept it should queue the match, which then plays, and tell the challenger.
    accepted = pair["owner"].post(f"/api/challenges/{match_id}/accept/")
    assert accepted.status_code == 200 and accepted.json()["status"] == "queued"
    assert factories.play_all() == 1
    assert Match.objects.get(pk=match_id).status == MatchStatus.FINISHED
    told = Notification.objects.get(user=users["other"], kind=NotificationKind.CHALLENGE_ANSWERED)
    assert told.text == f"owner accepted your challenge {match_id} of theirs: it plays now."
    # ... and answer no second time.
    assert pair["owner"].post(f"/api/challenges/{match_id}/decline/").status_code == 404


def test_it_never_plays_a_declined_challenge_and_tells_the_challenger(pair, users):
    consent(pair, "ask")
    match_id = challenge(pair).json()["id"]
    declined = pair["owner"].post(f"/api/challenges/{match_id}/decline/")
    # It should cancel it: nothing to play, the challenger told, the match page says so.
    assert declined.status_code == 200 and declined.json()["status"] == "cancelled"
    assert factories.play_all() == 0 and claim(match_id) is None
    assert Match.objects.get(pk=match_id).status == MatchStatus.CANCELLED
    told = Notification.objects.get(user=users["other"], kind=NotificationKind.CHALLENGE_ANSWERED)
    assert "declined your challenge" in told.text and "will not play" in told.text
    page = factories.logged_in(users["other"]).get(f"/matches/{match_id}/")
    assert b"declined this challenge of theirs: it did not play" in page.content
    assert pair["owner"].post(f"/api/challenges/{match_id}/accept/").status_code == 404


def test_it_expires_an_unanswered_challenge_after_the_expiry(pair, users, settings):
    settings.ARENA_CHALLENGE_EXPIRY = 90
    consent(pair, "ask")
    match_id = challenge(pair).json()["id"]
    request = ChallengeRequest.objects.get(match_id=match_id)
    assert timedelta(seconds=85) < request.expires - timezone.now() <= timedelta(seconds=90)
    # It should leave it waiting before its time...
    registration.tick()
    assert Match.objects.get(pk=match_id).status == MatchStatus.PENDING
    # ... and refuse a late accept in words, the match cancelled then and there.
    ChallengeRequest.objects.filter(pk=request.pk).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    late = pair["owner"].post(f"/api/challenges/{match_id}/accept/")
    assert late.status_code == 400
    assert late.json()["detail"] == (
        "This challenge expired unanswered (after 90 seconds): it will not play."
    )
    assert Match.objects.get(pk=match_id).status == MatchStatus.CANCELLED
    assert ChallengeRequest.objects.get(pk=request.pk).answer == ChallengeAnswer.EXPIRED
    assert (
        "did not answer your challenge"
        in Notification.objects.get(
            user=users["other"], kind=NotificationKind.CHALLENGE_ANSWERED
        ).text
    )


def test_it_cancels_the_expired_ones_in_the_periodic_step(pair, users):
    consent(pair, "ask")
    ids = [challenge(pair).json()["id"] for _ in range(2)]
    ChallengeRequest.objects.filter(match_id=ids[0]).update(expires=timezone.now())
    # It should end the expired challenge only, tell its challenger once, list it no more.
    assert registration.tick() >= 1
    statuses = dict(Match.objects.filter(pk__in=ids).values_list("pk", "status"))
    assert statuses == {ids[0]: MatchStatus.CANCELLED, ids[1]: MatchStatus.PENDING}
    assert Match.objects.get(pk=ids[0]).error.startswith("Expired: its owner did not answer")
    assert [w["match"] for w in pair["owner"].get("/api/challenges/").json()] == [ids[1]]
    registration.tick()
    assert kinds_of(users["other"]).count(NotificationKind.CHALLENGE_ANSWERED) == 1
    assert factories.play_all() == 0


def test_it_bounds_the_challenges_one_user_has_waiting_for_answers(pair, users, settings):
    # Each may wait a day: one account cannot fill the database with unanswered challenges.
    settings.ARENA_MAX_PENDING_CHALLENGES = 2
    consent(pair, "ask")
    ids = [challenge(pair).json()["id"] for _ in range(2)]
    refused = challenge(pair)
    assert refused.status_code == 429, refused.content
    assert "2 challenges waiting for their owners' answers (at most 2)" in str(refused.json())
    assert Match.objects.filter(created_by=users["other"]).count() == 2
    # An answer frees a place.
    assert pair["owner"].post(f"/api/challenges/{ids[0]}/decline/").status_code == 200
    assert challenge(pair).status_code == 201
