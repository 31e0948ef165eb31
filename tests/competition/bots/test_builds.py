"""The compile stage of code bots' versions (issue 49): queued at upload, built once by a
runner's claim, the compiler's words to the owner when it fails, the last good version kept."""

from __future__ import annotations

import html
import re

import pytest

from competition.bots import builds
from competition.models import BuildStatus, Notification, NotificationKind
from competition.models.bots import Bot
from games import get_game
from tests import factories
from tests.factories import code_api, upload_version

pytestmark = pytest.mark.django_db

GOOD = get_game("tictactoe").part("starters/bot.cpp").read_bytes()
BROKEN = b"int main() {\n  return 0\n}\n"


def make_cpp_bot(client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    made = client.post(
        "/api/bots/",
        {
            "game": "tictactoe",
            "name": "cpp",
            "kind": "code",
            "file": SimpleUploadedFile("bot.cpp", GOOD),
        },
        format="multipart",
    )
    assert made.status_code == 201, made.content
    return Bot.objects.get(pk=made.json()["id"])


def test_it_builds_a_cpp_upload_once_and_plays_its_artefact():
    owner = factories.user("owner", password=False)
    client = code_api(owner)
    bot = make_cpp_bot(client)
    # It should queue the new version's compile, and no version plays before it is built ...
    [version] = bot.versions.all()
    assert version.build == BuildStatus.QUEUED and bot.latest_version() is None
    # ... build it once, on one claim ...
    assert builds.build_all() == 1 and builds.build_all() == 0
    version.refresh_from_db()
    assert version.build == BuildStatus.BUILT, version.build_log
    assert version.artefact and version.build_seconds > 0
    # ... and play what it built.
    assert bot.latest_version() == version
    transport = version.transport(game=get_game("tictactoe"), seat=0)
    assert "bot" in transport.bundle.files and "bot.cpp" not in transport.bundle.files


def test_a_version_that_does_not_compile_never_plays_and_its_owner_is_told():
    owner = factories.user("owner", password=False)
    client = code_api(owner)
    bot = make_cpp_bot(client)
    builds.build_all()
    added = upload_version(client, bot.pk, "bot.cpp", BROKEN)
    assert added.status_code == 201, added.content
    builds.build_all()
    failed = bot.versions.get(number=2)
    # It should keep the compiler's words, and the bot its last good version ...
    assert failed.build == BuildStatus.FAILED and failed.artefact is None
    assert "bot.cpp:2:11: error:" in failed.build_log, failed.build_log
    assert bot.latest_version().number == 1
    # ... tell the owner, with the first error ...
    [notice] = Notification.objects.filter(user=owner, kind=NotificationKind.BUILD_FAILED)
    assert notice.text.startswith(f"Version 2 of {bot.name} did not compile (")
    assert "error:" in notice.text
    # ... and show the log to its owner in the API, and to no one else.
    listed = {v["number"]: v for v in client.get(f"/api/bots/{bot.pk}/versions/").json()}
    assert listed[2]["build"] == "failed" and "error:" in listed[2]["build_log"]
    assert listed[1]["build"] == "built"


def test_the_bot_page_shows_its_owner_the_compilers_output():
    owner = factories.user("owner", password=False)
    client = code_api(owner)
    bot = make_cpp_bot(client)
    builds.build_all()
    upload_version(client, bot.pk, "bot.cpp", BROKEN)
    builds.build_all()
    page = factories.logged_in(owner).get(f"/bots/{bot.pk}/").content.decode()
    # It should name each version's language and compile as people say them ...
    assert re.search(r'<td>C\+\+</td>\s*<td class="build failed">Did not compile</td>', page)
    assert re.search(r'<td>C\+\+</td>\s*<td class="build built">Compiled in [\d.]+ s', page)
    # ... and show its owner what the compiler said of the failed one, open ...
    failed = bot.versions.get(number=2).build_log
    assert '<details class="build-log" id="build-log-2" open>' in page
    assert html.escape(failed) in page and "bot.cpp:2:11: error:" in failed
    # ... and nobody else, though its versions are public.
    Bot.objects.filter(pk=bot.pk).update(source_public=True)
    other = factories.logged_in(factories.user("other", password=False))
    seen = other.get(f"/bots/{bot.pk}/").content.decode()
    assert 'id="code-versions"' in seen and "Did not compile" in seen and "build-log" not in seen


def test_a_python_upload_needs_no_build():
    owner = factories.user("owner", password=False)
    client = code_api(owner)
    from django.core.files.uploadedfile import SimpleUploadedFile

    made = client.post(
        "/api/bots/",
        {
            "game": "tictactoe",
            "name": "py",
            "kind": "code",
            "file": SimpleUploadedFile("bot.py", factories.CODE_BOT),
        },
        format="multipart",
    )
    bot = Bot.objects.get(pk=made.json()["id"])
    # It should play the upload as it is, with nothing to compile.
    assert bot.latest_version().build == BuildStatus.NONE
    assert builds.build_all() == 0


def test_the_bot_page_shows_the_build_and_the_compilers_output_to_its_owner_only():
    from django.test import Client

    owner = factories.user("owner", password=False)
    other = factories.user("other", password=False)
    client = code_api(owner)
    bot = make_cpp_bot(client)
    Bot.objects.filter(pk=bot.pk).update(source_public=True)  # (its versions listed to all)
    page = Client()
    page.force_login(owner)
    # While it compiles, the page should say so and refresh itself, and nothing plays yet.
    waiting = page.get(f"/bots/{bot.pk}/").content.decode()
    assert 'id="compiling"' in waiting and 'http-equiv="refresh"' in waiting
    assert "no version can play yet" in waiting and "Waiting to be compiled" in waiting
    builds.build_all()
    upload_version(client, bot.pk, "bot.cpp", BROKEN)
    builds.build_all()
    shown = page.get(f"/bots/{bot.pk}/").content.decode()
    # Built and failed, it should name each build, v1 playing, and open the failed log.
    assert 'http-equiv="refresh"' not in shown
    assert "the next matches play v1" in shown
    assert "Did not compile" in shown and "Compiled in" in shown
    assert '<details class="build-log" id="build-log-2" open>' in shown
    assert "bot.cpp:2:11: error: expected \N{LEFT SINGLE QUOTATION MARK};" in shown, shown[-3000:]
    assert "<td>C++</td>" in shown
    # Another user should see the builds, never the compiler's output.
    page.force_login(other)
    theirs = page.get(f"/bots/{bot.pk}/").content.decode()
    assert "Did not compile" in theirs and "build-log" not in theirs
