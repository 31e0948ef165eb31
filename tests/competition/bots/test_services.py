"""The bots' domain in one home (issue 37): the web page, the API and the admin rotate a
bot's signing secret through one model method (``Bot.rotate_secret``), each showing the new
secret as it always did (the owner's page once, the API's answer once, the admin never);
a refused upload gets the one reader's sentence (``read_uploaded_code``) everywhere.

Real entry points: the Django test client for the page and the admin, DRF's ``APIClient``
for the API. The model method is wrapped (it still runs) to count who calls it.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from competition.models.bots import Bot, BotVersion

PASSWORD = "a-long-pass-phrase-42"

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {
    "password": PASSWORD,
    "owner": {"email": "owner@example.org"},
    "other": {"email": "other@example.org"},
    "staff": {"email": "staff@example.org", "is_superuser": True},
}


@pytest.fixture
def rotations(monkeypatch) -> list[int]:
    """The ids of the bots whose ``Bot.rotate_secret`` ran, in order (the method still runs)."""
    calls: list[int] = []
    original = Bot.rotate_secret

    def counted(bot: Bot) -> str:
        calls.append(bot.pk)
        return original(bot)

    monkeypatch.setattr(Bot, "rotate_secret", counted)
    return calls


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_rotates_a_secret_through_one_model_method_from_the_web_the_api_and_the_admin(
    users, rotations
):
    bot = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="b", target="https://bots.example.org/b"
    )
    first = bot.secret
    page = signed_in(users["owner"])

    # It should rotate it from the bot page and show the new one once, on the next page only.
    assert page.post(f"/bots/{bot.pk}/secret").status_code == 302
    bot.refresh_from_db()
    from_web = bot.secret
    assert from_web != first and rotations == [bot.pk]
    assert from_web in page.get(f"/bots/{bot.pk}/").content.decode()
    assert from_web not in page.get(f"/bots/{bot.pk}/").content.decode()

    # It should rotate it from the API and show the new one in that answer only.
    api = APIClient()
    api.force_authenticate(users["owner"])
    answer = api.post(f"/api/bots/{bot.pk}/rotate-secret/")
    assert answer.status_code == 200
    bot.refresh_from_db()
    from_api = bot.secret
    assert answer.json() == {"secret": from_api} and from_api != from_web
    assert rotations == [bot.pk, bot.pk]
    assert from_api not in api.get(f"/api/bots/{bot.pk}/").content.decode()

    # It should rotate it from the admin's action and show it to nobody there.
    admin = signed_in(users["staff"])
    done = admin.post(
        "/admin/competition/bot/",
        {"action": "rotate_secrets", "_selected_action": [bot.pk]},
        follow=True,
    )
    assert done.status_code == 200
    bot.refresh_from_db()
    assert bot.secret not in (first, from_web, from_api)
    assert rotations == [bot.pk, bot.pk, bot.pk]
    assert bot.secret not in done.content.decode()
    assert bot.secret not in admin.get(f"/admin/competition/bot/{bot.pk}/change/").content.decode()
    # It should never show the admin's new secret on the owner's page either.
    assert bot.secret not in page.get(f"/bots/{bot.pk}/").content.decode()


def test_it_lets_only_the_owner_rotate_from_the_page_and_the_api(users, rotations):
    bot = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="b", target="https://bots.example.org/b"
    )
    secret = bot.secret
    api = APIClient()
    api.force_authenticate(users["other"])
    # It should refuse another user (the page: 404; the API: 403) and rotate nothing.
    assert signed_in(users["other"]).post(f"/bots/{bot.pk}/secret").status_code == 404
    assert api.post(f"/api/bots/{bot.pk}/rotate-secret/").status_code == 403
    bot.refresh_from_db()
    assert bot.secret == secret and rotations == []


def test_it_refuses_a_bad_upload_with_the_same_sentence_from_the_form_the_api_and_the_admin(
    users,
):
    def bad():
        return SimpleUploadedFile("bot.exe", b"MZ")

    owner = APIClient()
    owner.force_authenticate(users["owner"])
    made = owner.post(
        "/api/bots/",
        {
            "game": "tictactoe",
            "name": "coded",
            "kind": "code",
            "file": SimpleUploadedFile("bot.py", b"print(1)\n"),
        },
        format="multipart",
    )
    assert made.status_code == 201, made.content
    bot = Bot.objects.get(pk=made.json()["id"])
    fields = {"game": "tictactoe", "name": "x", "kind": "code"}
    web = signed_in(users["owner"]).post("/bots/new/", {**fields, "file": bad()})
    api_create = owner.post("/api/bots/", {**fields, "file": bad()}, format="multipart")
    api_version = owner.post(f"/api/bots/{bot.pk}/versions/", {"file": bad()}, format="multipart")
    admin = signed_in(users["staff"]).post(
        "/admin/competition/bot/add/",
        {**fields, "owner": users["owner"].pk, "target": "", "status": "active", "file": bad()},
    )
    said = {
        "web": list(web.context["form"].errors["file"]),
        "api": api_create.json()["file"],
        "api versions": api_version.json()["file"],
        "admin": list(admin.context["adminform"].form.errors["file"]),
    }
    # It should refuse it everywhere with the one reader's sentence about the file.
    assert [web.status_code, api_create.status_code, api_version.status_code] == [200, 400, 400]
    assert admin.status_code == 200
    assert len({tuple(sentences) for sentences in said.values()}) == 1, said
    assert (
        said["web"][0].startswith("Upload one source file in Python (.py)")
        and "bot.exe" in said["web"][0]
    )
    # It should store nothing: no other bot, no other version.
    assert list(Bot.objects.values_list("name", flat=True)) == ["coded"]
    assert list(BotVersion.objects.values_list("number", flat=True)) == [1]
