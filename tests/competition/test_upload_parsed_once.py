"""An upload is parsed once (issue 48): ``bots.codebundle.read_upload`` runs once per upload on
every route that stores a version (the API, the web form, the admin), and not at all when a
match starts on a runner that has seen the version. Counted through the real entry points
(the API client, the site's forms, a real match in the sandbox)."""

from __future__ import annotations

import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from bots import codebundle
from competition.bots.services import platform_seat
from competition.matches import lifecycle
from competition.models import Match
from competition.models.bots import Bot, EndpointKind
from competition.runners.play import run_match
from tests import factories
from tests.factories import CODE_BOT as BOT
from tests.factories import code_api as api
from tests.factories import run_fresh as run
from tests.factories import upload_version as upload

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The file names ``read_upload`` parses from now on (the real parser, counted)."""
    seen: list[str] = []
    real = codebundle.read_upload

    def counted(filename, data):
        seen.append(filename)
        return real(filename, data)

    monkeypatch.setattr(codebundle, "read_upload", counted)
    return seen


def source() -> bytes:
    """``BOT`` with a mark of its own: bytes no earlier test of this process parsed."""
    return BOT + f"# {uuid.uuid4().hex}\n".encode()


def play(bot: Bot) -> Match:
    builtin = platform_seat("tictactoe", EndpointKind.BUILTIN, "random")
    match = lifecycle.create_match("tictactoe", [bot, builtin], seed=5, dispatch_now=False)
    run(run_match(match.pk))
    match.refresh_from_db()
    assert match.status == "finished", (match.status, match.reason, match.error)
    return match


def test_it_parses_an_api_upload_once_and_not_again_when_its_match_starts(parses):
    owner = factories.user("owner", password=False)
    client = api(owner)
    made = client.post(
        "/api/bots/",
        {
            "game": "tictactoe",
            "name": "coded",
            "kind": "code",
            "file": SimpleUploadedFile("bot.py", source()),
        },
        format="multipart",
    )
    assert made.status_code == 201, made.content
    # It should parse a new code bot's first upload once.
    assert parses == ["bot.py"]
    added = upload(client, made.json()["id"], "second.py", source())
    assert added.status_code == 201, added.content
    # It should parse a new version (POST /api/bots/<id>/versions/) once.
    assert parses == ["bot.py", "second.py"]
    bot = Bot.objects.get(pk=made.json()["id"])
    play(bot)
    # It should start the match without parsing the version again (this runner stored it).
    assert parses == ["bot.py", "second.py"]


def test_it_parses_a_version_once_on_a_runner_that_had_not_seen_it(parses):
    owner = factories.user("owner", password=False)
    made = api(owner).post(
        "/api/bots/",
        {
            "game": "tictactoe",
            "name": "coded",
            "kind": "code",
            "file": SimpleUploadedFile("bot.py", source()),
        },
        format="multipart",
    )
    assert made.status_code == 201, made.content
    bot = Bot.objects.get(pk=made.json()["id"])
    codebundle._kept.clear()  # as a runner process that never saw the upload
    del parses[:]
    play(bot)
    # It should parse the version at its first match on this runner...
    assert parses == ["bot.py"]
    play(bot)
    # ...and never again at the next match start.
    assert parses == ["bot.py"]


def test_it_parses_a_web_or_admin_upload_once(parses):
    owner = factories.user("owner", password=False)
    page = factories.logged_in(owner)
    made = page.post(
        "/bots/new/",
        {
            "game": "tictactoe",
            "name": "webbed",
            "kind": "code",
            "file": SimpleUploadedFile("web.py", source()),
        },
    )
    assert made.status_code == 302, made.content.decode()[:2000]
    # It should parse the web form's upload once (the bot made with its first version).
    assert parses == ["web.py"]
    web = Bot.objects.get(name="webbed")
    edited = page.post(
        f"/bots/{web.pk}/edit/",
        {"name": "webbed", "kind": "code", "file": SimpleUploadedFile("web2.py", source())},
    )
    assert edited.status_code == 302, edited.content.decode()[:2000]
    # It should parse a new version from the edit form once.
    assert parses == ["web.py", "web2.py"]
    staff = factories.user("staff", password=False, is_staff=True, is_superuser=True)
    admin = Client()
    admin.force_login(staff)
    added = admin.post(
        "/admin/competition/bot/add/",
        {
            "owner": owner.pk,
            "game": "tictactoe",
            "name": "admin-made",
            "kind": "code",
            "target": "",
            "status": "active",
            "file": SimpleUploadedFile("admin.py", source()),
            "versions-TOTAL_FORMS": "0",
            "versions-INITIAL_FORMS": "0",
        },
    )
    assert added.status_code == 302, added.content.decode()[:3000]
    # It should parse the admin's upload once.
    assert parses == ["web.py", "web2.py", "admin.py"]
    assert Bot.objects.get(name="admin-made").versions.get().filename == "admin.py"
