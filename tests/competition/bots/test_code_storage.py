"""Owners' storage of uploaded code (issue 46, R2; R9's private versions): one upload rate and
one quota (versions a bot, bytes a user) on every route that stores a version (the web form,
the API, the admin), an owner's deletion of a version no match played, and a private bot's
versions kept from everyone but its owner and staff. Through the real entry points (the test
client's requests, the API client, the admin's forms); the CLI's refusals are in
``tests/arena/test_cli_upload.py``."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import ProtectedError, RestrictedError
from django.test import Client
from django.utils.html import escape
from rest_framework.test import APIClient

from bots.codebundle import MAX_ARCHIVE_BYTES
from competition.bots.services import add_version
from competition.models import Entry, Participant
from competition.models.bots import Bot, BotVersion, EndpointKind, read_code
from tests import factories

pytestmark = pytest.mark.django_db

BOT = b"import json, sys\nfor line in sys.stdin:\n    print(json.dumps({'play': '1-1'}), flush=True)\n"


def code(size: int = len(BOT)) -> bytes:
    """A Python bot of exactly ``size`` bytes (a comment pads it)."""
    return BOT + b"#" * (size - len(BOT))


def code_bot(owner, name: str = "coded", versions: int = 1, size: int = len(BOT)) -> Bot:
    """A code bot of ``owner`` with ``versions`` uploads of ``size`` bytes (v1, v2, ...)."""
    made = factories.bot(owner, name, kind=EndpointKind.CODE, target="bot.py")
    for _ in range(versions):
        add_version(made, read_code("bot.py", code(size)))
    return made


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def web_upload(page, bot: Bot, data: bytes, filename: str = "next.py"):
    """The bot's edit form, posted with a new file (its next version)."""
    return page.post(
        f"/bots/{bot.pk}/edit/",
        {"name": bot.name, "kind": "code", "file": SimpleUploadedFile(filename, data)},
    )


def api_upload(client: APIClient, bot: Bot, data: bytes, filename: str = "next.py"):
    return client.post(
        f"/api/bots/{bot.pk}/versions/",
        {"file": SimpleUploadedFile(filename, data)},
        format="multipart",
    )


def window() -> int:
    """The upload rate's current fixed window (a minute: ``competition.plumbing.ratelimit.hit``)."""
    return int(time.time()) // 60


# -- the rate -------------------------------------------------------------------------------


def test_it_refuses_a_web_upload_flood_past_the_upload_rate(settings):
    settings.ARENA_VERSIONS_PER_BOT = 100  # the rate alone is judged here
    owner = factories.user("flooder", password=False)
    bot = code_bot(owner)
    page = factories.logged_in(owner)
    data = code(MAX_ARCHIVE_BYTES - 1000)  # about 1 MB, as in the report
    first = window()
    answers = [web_upload(page, bot, data).status_code for _ in range(30)]
    windows = window() - first + 1  # the flood may straddle two windows
    limit = settings.ARENA_UPLOADS_PER_MINUTE
    through = answers.count(302)
    # It should store the uploads within the rate and refuse the rest with 429 (the report:
    # 30 of 30 stored in 2.3 s).
    assert set(answers) == {302, 429}, answers
    assert limit <= through <= limit * windows, answers
    assert bot.versions.count() == 1 + through
    refused = web_upload(page, bot, data)
    if window() == first:
        assert refused.status_code == 429
        assert f"Too many uploads: at most {limit} a minute." in refused.content.decode()


def test_it_counts_web_and_api_uploads_in_one_rate(settings):
    settings.ARENA_UPLOADS_PER_MINUTE = 4
    owner = factories.user("both", password=False)
    bot = code_bot(owner)
    page, client = factories.logged_in(owner), api(owner)
    first = window()
    answers = []
    for i in range(12):  # web, API, web, API...
        if i % 2:
            answers.append(("api", api_upload(client, bot, BOT).status_code))
        else:
            answers.append(("web", web_upload(page, bot, BOT).status_code))
    windows = window() - first + 1
    stored = sum(code in (201, 302) for _, code in answers)
    # It should let through at most the rate, whichever route each upload took...
    assert stored <= 4 * windows and bot.versions.count() == 1 + stored, answers
    # ...and refuse the rest with 429 on both routes.
    assert {code for _, code in answers} <= {201, 302, 429}, answers
    if windows == 1:
        assert answers[4:] == [("web", 429), ("api", 429)] * 4, answers
    limited = api_upload(client, bot, BOT)
    if window() == first:
        assert limited.status_code == 429 and int(limited["Retry-After"]) >= 1
        assert "Too many uploads" in limited.json()["detail"]


# -- the quota ------------------------------------------------------------------------------


def test_it_caps_the_versions_of_a_bot_on_the_web_and_the_api(settings):
    settings.ARENA_VERSIONS_PER_BOT = 2
    owner = factories.user("capped", password=False)
    bot = code_bot(owner, versions=2)
    sentence = "coded already has 2 versions, the most a bot keeps; delete an old version"
    # It should refuse the web form's upload with the sentence in the form...
    page = web_upload(factories.logged_in(owner), bot, BOT)
    assert page.status_code == 200 and sentence in page.content.decode()
    # ...and the API's with a 400 on file, storing nothing.
    answer = api_upload(api(owner), bot, BOT)
    assert answer.status_code == 400 and sentence in answer.json()["file"][0], answer.content
    assert bot.versions.count() == 2
    # It should take an upload again once the owner deleted an old version.
    assert api(owner).delete(f"/api/bots/{bot.pk}/versions/1/").status_code == 204
    assert api_upload(api(owner), bot, BOT).status_code == 201
    assert sorted(bot.versions.values_list("number", flat=True)) == [2, 3]


def test_it_caps_a_users_bytes_of_code_on_every_route(settings):
    settings.ARENA_CODE_BYTES_PER_USER = 4096
    people = factories.users(password=False, staff={"is_superuser": True})
    owner = people["owner"]
    bot = code_bot(owner, versions=3, size=1200)  # 3,600 of 4,096 bytes
    upload = code(600)
    sentence = (
        "You have used 3.5 KiB of your 4 KiB for uploaded code and this file is 600 bytes; "
        "delete an old version on a bot's page to upload another."
    )
    page = factories.logged_in(owner)
    # It should refuse a new version on the web form and through the API...
    edited = web_upload(page, bot, upload)
    assert edited.status_code == 200 and escape(sentence) in edited.content.decode()
    added = api_upload(api(owner), bot, upload)
    assert added.status_code == 400 and added.json() == {"file": [sentence]}
    # ...and a new code bot's first version, on the web form, through the API and the admin,
    # making no bot.
    fields = {"game": "tictactoe", "name": "second", "kind": "code"}
    made = page.post("/bots/new/", {**fields, "file": SimpleUploadedFile("bot.py", upload)})
    assert made.status_code == 200 and escape(sentence) in made.content.decode()
    made = api(owner).post(
        "/api/bots/", {**fields, "file": SimpleUploadedFile("bot.py", upload)}, format="multipart"
    )
    assert made.status_code == 400 and made.json() == {"file": [sentence]}
    made = factories.logged_in(people["staff"]).post(
        "/admin/competition/bot/add/",
        {
            **fields,
            "owner": owner.pk,
            "target": "",
            "status": "active",
            "file": SimpleUploadedFile("bot.py", upload),
            "versions-TOTAL_FORMS": "0",
            "versions-INITIAL_FORMS": "0",
        },
    )
    assert made.status_code == 200 and escape(sentence) in made.content.decode()
    assert list(Bot.objects.filter(owner=owner)) == [bot] and BotVersion.objects.count() == 3
    # It should count the owner's bytes only: another user uploads as usual.
    theirs = code_bot(people["other"], versions=0)
    assert api_upload(api(people["other"]), theirs, upload).status_code == 201


# -- deleting versions ----------------------------------------------------------------------


@pytest.fixture
def history():
    """A code bot with v1 played in a match, v2 unplayed, v3 frozen by an event, v4 latest."""
    people = factories.users(password=False)
    bot = code_bot(people["owner"], versions=4)
    v1, v2, v3, v4 = sorted(bot.versions.all(), key=lambda v: v.number)
    rival = factories.bot(people["other"], "rival")
    match = factories.finished_match([bot, rival])
    Participant.objects.filter(match=match, bot=bot).update(version=v1)
    event = factories.event(bots=[bot])
    Entry.objects.filter(event=event, bot=bot).update(version=v3)
    return {**people, "bot": bot, "v1": v1, "v2": v2, "v3": v3, "v4": v4}


def test_it_lets_the_owner_delete_a_version_no_match_played_on_the_bot_page(history):
    bot, page = history["bot"], factories.logged_in(history["owner"])
    shown = page.get(f"/bots/{bot.pk}/").content.decode()
    # It should offer deletion (a POST form) for the unplayed old version only.
    assert f'action="/bots/{bot.pk}/versions/2/delete"' in shown
    for number in (1, 3, 4):
        assert f"/bots/{bot.pk}/versions/{number}/delete" not in shown
    assert "Your uploaded code:" in shown
    # It should delete it, and free its bytes.
    done = page.post(f"/bots/{bot.pk}/versions/2/delete", follow=True)
    assert "Deleted version 2 of coded" in done.content.decode()
    assert sorted(bot.versions.values_list("number", flat=True)) == [1, 3, 4]
    # It should refuse, in a sentence, the played, the frozen and the latest version.
    for number, words in (
        (1, "Version 1 played in a match (or an event froze it) and is kept for its replays."),
        (3, "Version 3 played in a match (or an event froze it)"),
        (4, "Version 4 is the latest: coded plays it."),
        (9, "coded has no version 9."),
        (2**40, "has no version"),
    ):
        said = page.post(f"/bots/{bot.pk}/versions/{number}/delete", follow=True)
        assert words in said.content.decode(), number
    assert sorted(bot.versions.values_list("number", flat=True)) == [1, 3, 4]
    # It should answer 404 to anyone else, and need a POST.
    other = factories.logged_in(history["other"])
    assert other.post(f"/bots/{bot.pk}/versions/1/delete").status_code == 404
    assert page.get(f"/bots/{bot.pk}/versions/1/delete").status_code == 405


def test_it_deletes_an_unplayed_version_through_the_api_and_keeps_the_played(history):
    bot, client = history["bot"], api(history["owner"])
    url = f"/api/bots/{bot.pk}/versions/"
    # It should refuse another user and nobody...
    assert api(history["other"]).delete(url + "2/").status_code == 403
    assert api().delete(url + "2/").status_code == 401
    # ...delete the unplayed version for its owner...
    assert client.delete(url + "2/").status_code == 204
    assert [v["number"] for v in client.get(url).json()] == [4, 3, 1]
    # ...and answer 409 with the sentence for the played, frozen and latest ones, 404 else.
    for number in (1, 3, 4):
        kept = client.delete(f"{url}{number}/")
        assert kept.status_code == 409 and kept.json()["detail"].startswith(f"Version {number}")
    assert client.delete(url + "2/").status_code == 404
    assert client.delete(url + "x/").status_code == 404
    assert client.delete(url + f"{2**40}/").status_code == 404


def test_it_never_deletes_a_version_a_match_or_an_event_holds(history):
    # It should refuse at the model, whoever deletes: a played seat's version (PROTECT) and an
    # event's frozen version (RESTRICT), so a replay always has its code.
    with pytest.raises(ProtectedError):
        history["v1"].delete()
    with pytest.raises(RestrictedError):
        history["v3"].delete()
    assert Entry.objects.get(bot=history["bot"]).version == history["v3"]
    # It should still delete a bot that never played with its versions and its entries.
    unplayed = code_bot(history["owner"], name="fresh", versions=2)
    event = factories.event("Other", bots=[unplayed])
    Entry.objects.filter(event=event).update(version=unplayed.versions.first())
    assert api(history["owner"]).delete(f"/api/bots/{unplayed.pk}/").status_code == 204
    assert not BotVersion.objects.filter(bot_id=unplayed.pk).exists()


# -- whose versions ------------------------------------------------------------------------


def test_it_shows_a_private_bots_versions_to_its_owner_and_staff_only():
    people = factories.users(password=False)
    bot = code_bot(people["owner"])
    sha = bot.versions.get().sha256
    url = f"/api/bots/{bot.pk}/versions/"
    # It should list them to the owner and staff...
    for someone in ("owner", "staff"):
        listed = api(people[someone]).get(url)
        assert listed.status_code == 200 and listed.json()[0]["sha256"] == sha
        assert sha in factories.logged_in(people[someone]).get(f"/bots/{bot.pk}/").content.decode()
    # ...and to nobody else, anonymous included: no file name, size or sha256 (the report:
    # anyone read them).
    for client in (api(people["other"]), api()):
        hidden = client.get(url)
        assert hidden.status_code == 404 and sha not in hidden.content.decode()
    for page in (factories.logged_in(people["other"]), Client()):
        shown = page.get(f"/bots/{bot.pk}/").content.decode()
        assert "code-versions" not in shown and sha not in shown
    # It should show them to everyone once the owner made the source public.
    Bot.objects.filter(pk=bot.pk).update(source_public=True)
    assert api().get(url).json()[0]["sha256"] == sha


def test_it_shows_each_users_uploaded_code_in_the_admin():
    people = factories.users(password=False, staff={"is_superuser": True})
    code_bot(people["owner"], versions=3, size=1000)
    page = factories.logged_in(people["staff"])
    listing = page.get("/admin/auth/user/").content.decode()
    # It should list each user's versions and bytes...
    assert "Code versions" in listing and "3,000" in listing
    # ...and say them against the cap on the user's page.
    change = page.get(f"/admin/auth/user/{people['owner'].pk}/change/").content.decode()
    assert "3 versions, 3,000 bytes: 2.9 KiB of 50 MiB" in change
