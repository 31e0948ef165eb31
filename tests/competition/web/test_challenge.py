"""Challenging another user's bot from its page (issue 25, part 2), through the Django test
client: the form offers only your active bots of its game, the match is created by the
API's own service (``challenges.challenge``: its checks, its per-minute budget, its limits)
and you land on its live viewer."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from competition.bots.services import platform_seat
from competition.models import Match
from competition.models.bots import Bot, BotStatus, EndpointKind

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    User = get_user_model()
    owner, other = User.objects.create_user("owner"), User.objects.create_user("other")
    theirs = Bot.objects.create(
        owner=owner, game="tictactoe", name="theirs", kind=EndpointKind.BUILTIN, target="random"
    )
    mine = Bot.objects.create(
        owner=other, game="tictactoe", name="mine", kind=EndpointKind.BUILTIN, target="random"
    )
    client = Client()
    client.force_login(other)
    return {"owner": owner, "other": other, "theirs": theirs, "mine": mine, "client": client}


def test_it_challenges_from_the_bot_page_and_lands_on_the_viewer(setup):
    # It should offer the form with my bot of that game, and a POST lands on the new match.
    client = setup["client"]
    page = client.get(f"/bots/{setup['theirs'].pk}/")
    assert b'id="challenge-form"' in page.content and b">mine</option>" in page.content
    response = client.post(
        f"/bots/{setup['theirs'].pk}/challenge", {"mine": setup["mine"].pk, "seat": 1, "pace_ms": 0}
    )
    match = Match.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/matches/{match.pk}/"
    seats = list(match.participants.order_by("seat").values_list("bot_id", flat=True))
    assert seats == [setup["theirs"].pk, setup["mine"].pk]
    # It should make it practice: a challenge is never rated (only the platform's pairings).
    assert not match.rated and match.created_by == setup["other"]


def test_it_makes_other_options_a_friendly_match_and_refuses_bad_ones(setup):
    # It should rate only the game's defaults, and refuse options the game refuses.
    client, url = setup["client"], f"/bots/{setup['theirs'].pk}/challenge"
    bad = client.post(
        url, {"mine": setup["mine"].pk, "seat": 0, "pace_ms": 0, "options": '{"nope": 1}'}
    )
    assert bad.status_code == 400 and not Match.objects.exists()
    assert "nope" in " ".join(bad.context["challenge"].errors["options"])
    assert client.post(url, {"mine": setup["mine"].pk, "seat": 0, "pace_ms": 0, "options": "[1]"}).status_code == 400  # fmt: skip


def test_it_refuses_a_bot_that_is_not_yours_a_human_seat_or_an_inactive_bot(setup):
    # It should not let anyone pit two bots of others, nor challenge a seat or inactive bot.
    client = setup["client"]
    foreign = Bot.objects.create(
        owner=setup["owner"],
        game="tictactoe",
        name="f2",
        kind=EndpointKind.BUILTIN,
        target="random",
    )
    response = client.post(f"/bots/{setup['theirs'].pk}/challenge", {"mine": foreign.pk, "seat": 0, "pace_ms": 0})  # fmt: skip
    assert response.status_code == 400 and "mine" in response.context["challenge"].errors
    human = platform_seat("tictactoe", EndpointKind.HUMAN, "browser")
    assert client.post(f"/bots/{human.pk}/challenge", {"mine": setup["mine"].pk, "seat": 0, "pace_ms": 0}).status_code == 404  # fmt: skip
    Bot.objects.filter(pk=foreign.pk).update(status=BotStatus.INACTIVE)
    assert client.post(f"/bots/{foreign.pk}/challenge", {"mine": setup["mine"].pk, "seat": 0, "pace_ms": 0}).status_code == 404  # fmt: skip
    assert not Match.objects.exists()


def test_it_applies_the_apis_per_user_limits(setup, settings):
    # It should refuse a challenge past ARENA_MAX_ACTIVE_MATCHES, with the reason shown.
    settings.ARENA_MAX_ACTIVE_MATCHES = 1
    client, url = setup["client"], f"/bots/{setup['theirs'].pk}/challenge"
    data = {"mine": setup["mine"].pk, "seat": 0, "pace_ms": 0}
    assert client.post(url, data).status_code == 302
    refused = client.post(url, data)
    assert refused.status_code == 429 and b"queued or running" in refused.content
    assert Match.objects.count() == 1


def test_it_throttles_quick_challenges_in_one_budget_with_the_api(setup, settings):
    # It should refuse the challenge past ARENA_CHALLENGES_PER_MINUTE with a clear message and
    # create nothing, the API's challenges counting in the same budget (and the other way).
    settings.ARENA_CHALLENGES_PER_MINUTE = 3
    settings.ARENA_MAX_ACTIVE_MATCHES = 50
    settings.ARENA_CHALLENGES_PER_TARGET_HOUR = 50
    client, url = setup["client"], f"/bots/{setup['theirs'].pk}/challenge"
    data = {"mine": setup["mine"].pk, "seat": 0, "pace_ms": 0}
    assert [client.post(url, data).status_code for _ in range(2)] == [302, 302]
    api = client.post(
        "/api/matches/challenge/",
        {"game": "tictactoe", "bots": [setup["mine"].pk, setup["theirs"].pk]},
        content_type="application/json",
    )
    assert api.status_code == 201
    refused = client.post(url, data)
    assert refused.status_code == 429
    assert b"Too many challenges: at most 3 a minute" in refused.content
    assert b"nothing was created" in refused.content
    assert Match.objects.count() == 3
    again = client.post(
        "/api/matches/challenge/",
        {"game": "tictactoe", "bots": [setup["mine"].pk, setup["theirs"].pk]},
        content_type="application/json",
    )
    assert again.status_code == 429 and int(again["Retry-After"]) >= 1
    assert "Too many challenges" in again.json()["detail"]
    assert Match.objects.count() == 3


def test_it_asks_a_visitor_to_log_in_and_a_user_without_a_bot_to_register(setup):
    # It should explain what is missing rather than show a form that cannot work.
    url = f"/bots/{setup['theirs'].pk}/"
    assert b"to challenge it" in Client().get(url).content
    assert Client().post(f"{url}challenge", {}).status_code == 302  # to the log-in page
    lonely = Client()
    lonely.force_login(get_user_model().objects.create_user("lonely"))
    assert b"Register one" in lonely.get(url).content
