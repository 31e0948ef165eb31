"""Issue 50, item 1 (its first part): each match's seats carry the version each played, in the
API's participants, the bot page's recent matches, the match lists, the viewer and the owner's
per-turn log."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from competition.matches.lifecycle import create_match
from competition.models import Participant
from competition.models.bots import Bot
from games import get_game
from tests import factories
from tests.factories import code_api, play_all, upload_version

pytestmark = pytest.mark.django_db(transaction=True)

STARTER = get_game("tictactoe").part("starter_bot.py").read_bytes()


def test_every_result_names_the_version_each_seat_played():
    owner = factories.user("author")
    client = code_api(owner)
    made = client.post(
        "/api/bots/",
        {"game": "tictactoe", "name": "versioned", "kind": "code",
         "file": SimpleUploadedFile("bot.py", STARTER)},
        format="multipart",
    )  # fmt: skip
    assert made.status_code == 201, made.content
    bot = Bot.objects.get(pk=made.json()["id"])
    builtin = factories.builtin_of(owner, "house", "random")
    first = create_match("tictactoe", [bot, builtin], seed=1)
    play_all()
    assert upload_version(client, bot.pk, "bot.py", STARTER + b"\n# v2\n").status_code == 201
    second = create_match("tictactoe", [builtin, bot], seed=2)
    play_all()
    # It should seat each match with the version that was newest when it started ...
    seated = dict(Participant.objects.filter(bot=bot).values_list("match_id", "version__number"))
    assert seated == {first.pk: 1, second.pk: 2}
    # ... and say so in the API (null for a bot that is not uploaded code) ...
    for match, number in ((first, 1), (second, 2)):
        seats = {
            p["bot"]: p for p in client.get(f"/api/matches/{match.pk}/").json()["participants"]
        }
        assert seats[bot.pk]["version"] == number and seats[builtin.pk]["version"] is None
    listed = client.get("/api/matches/", {"bot": bot.pk}).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert {m["id"]: [p["version"] for p in m["participants"]] for m in rows} == {
        first.pk: [1, None],
        second.pk: [None, 2],
    }
    # ... on the bot page's recent matches, the match list, the viewer and the owner's log.
    page = factories.logged_in(owner)
    detail = page.get(f"/bots/{bot.pk}/").content.decode()
    assert "seat 0 · v1" in detail and "seat 1 · v2" in detail
    matches = page.get("/matches/", {"bot": bot.pk}).content.decode()
    assert '<span class="muted small">v2</span>' in matches
    viewer = page.get(f"/matches/{second.pk}/").content.decode()
    assert 'title="the version it played">v2</span>' in viewer
    log = page.get(f"/bots/{bot.pk}/matches/{second.pk}/log").content.decode()
    assert "seat 1 versioned v2" in log
