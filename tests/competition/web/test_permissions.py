"""No page shows another user's bot secret, target URL or per-turn logs.

Three users with explicit roles: the bot's owner, another user and a staff member (and
anonymous visitors). Owner-only views answer 404 to everyone else, staff included.
"""

from __future__ import annotations

import pytest
from django.test import Client

from competition.matches.lifecycle import create_match
from competition.models import Match, Turn
from competition.models.bots import Bot, BotStatus, EndpointKind
from tests import factories

pytestmark = pytest.mark.django_db

TARGET = "https://bots.example.org/ttt?key=target-marker-7f3a"
LOG_MARKER = "log-marker-19c2"


@pytest.fixture
def world():
    users = factories.users(staff={"is_superuser": True})
    bot = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="secretive", target=TARGET
    )
    rival = Bot.objects.create(
        owner=users["other"],
        game="tictactoe",
        name="rival",
        kind=EndpointKind.BUILTIN,
        target="random",
    )
    match = create_match("tictactoe", [bot, rival], seed=1, dispatch_now=False)
    log = {
        "fault": "ok",
        "detail": "",
        "latency_ms": 12,
        "sent": f'{{"board":"{LOG_MARKER}"}}',
        "received": f'{{"play":"1-1","note":"{LOG_MARKER}"}}',
        "stderr": [],
        "time_left_ms": None,
    }
    Turn.objects.create(
        match=match,
        number=1,
        seats=[0],
        actions=["1-1", None],
        faults=["ok", None],
        details=[None, None],
        latencies_ms=[12, None],
        frame={
            "board": ["...", ".0.", "..."],
            "to_move": 1,
            "last": [1, 1],
            "line": None,
            "moves": 1,
        },
        logs=[log, None],
        forfeited=[],
    )
    Match.objects.filter(pk=match.pk).update(turn_count=1)
    return {"users": users, "bot": bot, "rival": rival, "match": match}


def client_for(world, role: str | None) -> Client:
    client = Client()
    if role:
        client.force_login(world["users"][role])
    return client


def public_pages(world) -> list[str]:
    bot, match = world["bot"], world["match"]
    return [
        "/",
        "/games/tictactoe/",
        "/games/tictactoe/leaderboard",
        f"/bots/{bot.pk}/",
        f"/matches/{match.pk}/",
        f"/matches/{match.pk}/viewer.json",
        "/docs/tictactoe/",
    ]


def owner_only(world) -> list[str]:
    bot, match = world["bot"], world["match"]
    return [f"/bots/{bot.pk}/edit/", f"/bots/{bot.pk}/matches/{match.pk}/log"]


def leaks(text: str, world) -> list[str]:
    return [s for s in (world["bot"].secret, TARGET, "target-marker-7f3a", LOG_MARKER) if s in text]


@pytest.mark.parametrize("role", [None, "other", "staff"])
def test_it_never_shows_another_users_secret_target_or_logs(world, role):
    client = client_for(world, role)
    # It should render every public page without the bot's secret, URL or logs.
    for url in public_pages(world):
        response = client.get(url)
        assert response.status_code == 200, url
        assert leaks(response.content.decode(), world) == [], url
    # It should answer 404 (not 403: nothing to confirm) on every owner-only page.
    for url in owner_only(world):
        response = client.get(url)
        assert response.status_code in (404, 302), (url, response.status_code)
        assert leaks(response.content.decode(), world) == []
    # It should refuse the owner's actions: test call, (de)activation, secret rotation.
    bot = world["bot"]
    secret = bot.secret
    for url, data in (
        (f"/bots/{bot.pk}/test", {}),
        (f"/bots/{bot.pk}/status", {"action": "deactivate"}),
        (f"/bots/{bot.pk}/secret", {}),
    ):
        response = client.post(url, data)
        assert response.status_code in (404, 302), url
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE and bot.secret == secret
    # It should list only the signed-in user's own bots.
    if role:
        assert "secretive" not in client.get("/bots/").content.decode()


def test_it_shows_the_owner_their_target_and_logs_and_a_new_secret_once(world):
    client = client_for(world, "owner")
    bot, match = world["bot"], world["match"]
    page = client.get(f"/bots/{bot.pk}/").content.decode()
    # It should show the owner the endpoint and a log link per match, but not the secret
    # once made: rotating it shows the new one, once.
    assert TARGET.replace("&", "&amp;") in page and bot.secret not in page
    assert client.post(f"/bots/{bot.pk}/secret").status_code == 302
    bot.refresh_from_db()
    assert bot.secret in client.get(f"/bots/{bot.pk}/").content.decode()
    assert bot.secret not in client.get(f"/bots/{bot.pk}/").content.decode()
    assert f"/bots/{bot.pk}/matches/{match.pk}/log" in page
    log = client.get(f"/bots/{bot.pk}/matches/{match.pk}/log")
    assert log.status_code == 200 and LOG_MARKER in log.content.decode()
    # It should link the owner's own seat's log from the match page, and nothing else.
    match_page = client.get(f"/matches/{match.pk}/").content.decode()
    assert f"/bots/{bot.pk}/matches/{match.pk}/log" in match_page and LOG_MARKER not in match_page
    # It should not let the owner read the other seat's log through their own bot's URL.
    rival = world["rival"]
    assert client.get(f"/bots/{rival.pk}/matches/{match.pk}/log").status_code == 404


def test_it_escapes_what_bots_send_in_the_owners_log(world):
    turn = Turn.objects.get(match=world["match"], number=1)
    turn.logs[0]["received"] = '<script>alert("x")</script>'
    turn.save(update_fields=["logs"])
    page = (
        client_for(world, "owner")
        .get(f"/bots/{world['bot'].pk}/matches/{world['match'].pk}/log")
        .content.decode()
    )
    # It should print the reply as text, never as markup.
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page


def test_it_shows_each_user_only_their_own_api_tokens(world):
    owner, other = client_for(world, "owner"), client_for(world, "other")
    owner.post("/accounts/profile/tokens", {"name": "owner-laptop", "days": 30})
    other.post("/accounts/profile/tokens", {"name": "other-ci", "days": 30})
    owner_page = owner.get("/accounts/profile/").content.decode()
    other_page = other.get("/accounts/profile/").content.decode()
    # It should list each user's own tokens only.
    assert "owner-laptop" in owner_page and "other-ci" not in owner_page
    assert "other-ci" in other_page and "owner-laptop" not in other_page
    # It should let no one revoke another's token (404), and leave it working.
    theirs = world["users"]["other"].auth_token_set.get()
    assert owner.post(f"/accounts/profile/tokens/{theirs.pk}/revoke").status_code == 404
    assert world["users"]["other"].auth_token_set.filter(pk=theirs.pk).exists()
    assert Client().get("/accounts/profile/").status_code == 302
