"""Issue 52 item 5: a user's data is theirs. The archive of everything about them (every
version's bytes, sha256 as uploaded) and deleting the account, confirmed by the password:
bots retired and handed to "deleted user", every page, API list and replay still working."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model

from competition.accounts.deletion import DELETED_USERNAME
from competition.models import ApiToken, Notification
from competition.models.bots import Bot, BotStatus, BotVersion
from tests.factories import (
    api_token,
    code_api,
    code_bot,
    finished_match,
    logged_in,
    play,
    upload_version,
)

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a-long-pass-phrase-42"
USERS_OPTIONS = {"password": PASSWORD}

FIRST = b"import sys\nprint('one')\n"
SECOND = b"import sys\nprint('two', 'versions')\n"


@pytest.fixture
def world(users):
    owner = users["owner"]
    client = code_api(owner)
    coded = code_bot(client, "coded", "bot.py", FIRST)
    assert upload_version(client, coded.pk, "bot.py", SECOND).status_code == 201
    rival = Bot.objects.create(
        owner=users["other"], game="tictactoe", name="rival", kind="builtin", target="random"
    )
    seats = finished_match([coded, rival])
    seats.participants.filter(bot=coded).update(version=coded.versions.get(number=1), result="win")
    played = play(users, "tictactoe")
    Notification.objects.create(user=owner, kind="challenged", text="a notice of mine")
    return {"owner": owner, "coded": coded, "code_match": seats, "played": played}


def test_it_exports_everything_with_every_versions_bytes(world):
    response = logged_in(world["owner"]).get("/accounts/profile/export.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = set(archive.namelist())
    assert {"account.json", "bots.json", "SHA256SUMS", "matches.jsonl", "ratings.json"} <= names
    # It should hold every version's bytes, their sha256 equal to what was uploaded.
    sums = dict(line.split("  ")[::-1] for line in archive.read("SHA256SUMS").decode().splitlines())
    assert len(sums) == 2
    for uploaded in (FIRST, SECOND):
        digest = hashlib.sha256(uploaded).hexdigest()
        path = next(p for p, d in sums.items() if d == digest)
        assert hashlib.sha256(archive.read(path)).hexdigest() == digest
    # It should hold the account, the bots, the matches' results and the notifications.
    assert json.loads(archive.read("account.json"))["username"] == "owner"
    bots = {b["name"] for b in json.loads(archive.read("bots.json"))}
    assert "coded" in bots and len(bots) == 3
    seats = [json.loads(line) for line in archive.read("matches.jsonl").splitlines()]
    assert {"match": world["code_match"].pk, "result": "win", "version": 1}.items() <= next(
        s for s in seats if s["bot"] == world["coded"].pk
    ).items()
    assert len(seats) == 3
    assert b"a notice of mine" in archive.read("notifications.jsonl")
    # It should be the owner's only.
    assert (
        logged_in(get_user_model().objects.get(username="other"))
        .get("/accounts/profile/export.zip")
        .status_code
        == 200
    )
    anonymous = logged_in(world["owner"]).__class__().get("/accounts/profile/export.zip")
    assert anonymous.status_code == 302


def test_it_deletes_an_account_and_keeps_every_page_working(world):
    owner, coded, played = world["owner"], world["coded"], world["played"]
    key = api_token(owner)
    client = logged_in(owner)
    # It should refuse a wrong password and delete nothing.
    refused = client.post("/accounts/profile/delete", {"password": "wrong"})
    assert refused.status_code == 400 and "not your password" in refused.content.decode()
    assert get_user_model().objects.filter(pk=owner.pk).exists()
    assert client.post("/accounts/profile/delete", {"password": PASSWORD}).status_code == 302
    # It should remove the account, its tokens, sessions and notifications.
    assert not get_user_model().objects.filter(pk=owner.pk).exists()
    assert not ApiToken.objects.filter(user_id=owner.pk).exists()
    assert not Notification.objects.filter(user_id=owner.pk).exists()
    assert client.get("/accounts/profile/").status_code == 302  # the session is gone
    assert code_api().get("/api/me/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    # It should retire the bots: inactive, out of the ladder, their code's bytes deleted.
    coded.refresh_from_db()
    assert coded.owner.username == DELETED_USERNAME and coded.status == BotStatus.INACTIVE
    assert all(bytes(v.data) == b"" for v in BotVersion.objects.filter(bot=coded))
    assert BotVersion.objects.filter(bot=coded).count() == 2  # the history stays
    # It should keep every page, API list and replay working, showing "deleted user".
    anon = code_api()
    for url in (
        f"/matches/{played.pk}/",
        f"/matches/{world['code_match'].pk}/",
        f"/bots/{coded.pk}/",
        "/matches/",
        "/users/deleted%20user/",
    ):
        page = anon.get(url)
        assert page.status_code == 200, url
        assert "deleted user" in page.content.decode(), url
    # (the leaderboard shows active bots only: the retired ones leave it)
    assert anon.get("/games/tictactoe/leaderboard").status_code == 200
    code_match = world["code_match"].pk
    for url in (f"/api/matches/{played.pk}/", f"/api/matches/{code_match}/", "/api/matches/"):
        response = anon.get(url)
        assert response.status_code == 200 and "deleted user" in response.content.decode(), url
    replay = anon.get(f"/api/matches/{played.pk}/replay/")
    assert replay.status_code == 200
    assert json.loads(b"".join(replay.streaming_content))["turns"]
    # It should leave the name free and nothing else: the "deleted user" cannot log in.
    tomb = get_user_model().objects.get(username=DELETED_USERNAME)
    assert not tomb.is_active and not tomb.has_usable_password()
