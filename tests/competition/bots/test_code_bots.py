"""Code bots (issue 36): uploads stored as versions in the database, played in the sandbox.

Everything here goes through the real entry points: the API (multipart uploads), the bot
form, the admin, the match runner (``run_match``, the sandbox for real: bwrap), the logs
API and the bot's log page. Three users with roles: the owner, another user, staff.
"""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from bots.codebundle import MAX_ARCHIVE_BYTES
from competition.bots.services import add_version, platform_seat
from competition.events import services as events
from competition.matches import lifecycle
from competition.models import Entry, Event, EventFormat, Match, Participant
from competition.models.bots import Bot, BotVersion, EndpointKind, read_code
from competition.runners.play import run_match
from tests.factories import CODE_BOT as BOT
from tests.factories import code_api as api
from tests.factories import run_fresh as run
from tests.factories import upload_version as upload

pytestmark = pytest.mark.django_db(transaction=True)

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {"password": "pw", "staff": {"is_superuser": True}}


def create_code_bot(client: APIClient, name: str = "coded", source: bytes = BOT, **extra):
    return client.post(
        "/api/bots/",
        {
            "game": "tictactoe",
            "name": name,
            "kind": "code",
            "file": SimpleUploadedFile("bot.py", source),
            **extra,
        },
        format="multipart",
    )


# -- upload, versions, download ----------------------------------------------------------


def test_it_creates_a_code_bot_with_its_first_version_and_adds_versions(users):
    owner = api(users["owner"])
    made = create_code_bot(owner)
    # It should create the bot from a multipart upload, with the file as its version 1.
    assert made.status_code == 201, made.content
    bot = Bot.objects.get(pk=made.json()["id"])
    assert bot.kind == EndpointKind.CODE and bot.target == "bot.py"
    v1 = bot.versions.get()
    assert (v1.number, v1.filename, v1.language, v1.size) == (1, "bot.py", "python", len(BOT))
    assert v1.sha256 == hashlib.sha256(BOT).hexdigest() and bytes(v1.data) == BOT
    # It should add a version per upload, numbered on, and list them newest first.
    second = BOT.replace(b"VERSION-MARK", b"SECOND")
    added = upload(owner, bot.pk, "better.py", second)
    assert added.status_code == 201, added.content
    assert added.json()["number"] == 2 and added.json()["size"] == len(second)
    listed = owner.get(f"/api/bots/{bot.pk}/versions/").json()
    assert [v["number"] for v in listed] == [2, 1]
    assert listed[0]["download"].endswith(f"/api/bots/{bot.pk}/versions/2/download/")
    bot.refresh_from_db()
    assert bot.target == "better.py"
    # It should give the owner each version's bytes as uploaded, as a file.
    got = owner.get(f"/api/bots/{bot.pk}/versions/1/download/")
    assert got.status_code == 200 and got.content == BOT
    assert got["Content-Type"] == "application/octet-stream"
    assert 'attachment; filename="bot.py"' == got["Content-Disposition"]


def test_it_shows_the_source_to_its_owner_only_unless_made_public(users):
    made = create_code_bot(api(users["owner"])).json()
    download = f"/api/bots/{made['id']}/versions/1/download/"
    # It should answer 404 to anyone else (another user, staff through the API, nobody).
    for client in (api(users["other"]), api(users["staff"]), api()):
        assert client.get(download).status_code == 404
    # It should list the versions (file names, sizes, sha256) to staff without a download
    # link, and to nobody else at all while the source is private (issue 46, R9).
    listed = api(users["staff"]).get(f"/api/bots/{made['id']}/versions/")
    assert listed.status_code == 200 and listed.json()[0]["download"] is None
    for client in (api(users["other"]), api()):
        hidden = client.get(f"/api/bots/{made['id']}/versions/")
        assert hidden.status_code == 404 and "sha256" not in hidden.content.decode()
    # It should let everyone download it once the owner ticks "source public".
    changed = api(users["owner"]).patch(
        f"/api/bots/{made['id']}/", {"source_public": True}, format="json"
    )
    assert changed.status_code == 200 and changed.json()["source_public"] is True
    for client in (api(users["other"]), api()):
        got = client.get(download)
        assert got.status_code == 200 and got.content == BOT
        assert client.get(f"/api/bots/{made['id']}/versions/").json()[0]["number"] == 1
    # It should let nobody but the owner upload a version.
    refused = upload(api(users["other"]), made["id"], "mine.py", BOT)
    assert refused.status_code in (403, 404)
    assert BotVersion.objects.count() == 1


def test_it_refuses_bad_uploads_with_a_clear_400_and_stores_nothing(users):
    owner = api(users["owner"])
    too_big = b"#" * (MAX_ARCHIVE_BYTES + 1)
    cases = {
        "too large": ("big.py", too_big, "limit is"),
        "unknown kind of file": ("bot.exe", b"MZ", "file"),
        "empty": ("bot.py", b"", "empty"),
    }
    for name, (filename, data, says) in cases.items():
        refused = owner.post(
            "/api/bots/",
            {
                "game": "tictactoe",
                "name": name,
                "kind": "code",
                "file": SimpleUploadedFile(filename, data),
            },
            format="multipart",
        )
        # It should answer 400 with a sentence about the file, and create no bot.
        assert refused.status_code == 400, (name, refused.content)
        message = " ".join(refused.json()["file"])
        assert says in message.lower() or says == "file", (name, message)
        assert "UploadError" not in message and "b'" not in message
    assert not Bot.objects.exists() and not BotVersion.objects.exists()
    # It should refuse a code bot without a file, and a multipart body for any other bot.
    no_file = owner.post(
        "/api/bots/", {"game": "tictactoe", "name": "x", "kind": "code"}, format="json"
    )
    assert no_file.status_code == 400 and "needs a file" in no_file.json()["file"][0]
    url_bot = owner.post(
        "/api/bots/",
        {
            "game": "tictactoe",
            "name": "x",
            "kind": "http",
            "target": "https://bot.example.org/",
            "file": SimpleUploadedFile("bot.py", BOT),
        },
        format="multipart",
    )
    assert url_bot.status_code == 415 and "kind code" in url_bot.json()["detail"]
    bot_id = create_code_bot(owner).json()["id"]
    # It should refuse a new version over the cap and keep the versions as they were.
    over = upload(owner, bot_id, "big.py", too_big)
    assert over.status_code == 400 and "limit is" in over.json()["file"][0]
    assert list(BotVersion.objects.values_list("number", flat=True)) == [1]


# -- playing ------------------------------------------------------------------------------


def test_it_plays_the_uploaded_code_in_the_sandbox_and_shows_its_stderr_to_its_owner(users):
    bot_id = create_code_bot(api(users["owner"])).json()["id"]
    bot = Bot.objects.get(pk=bot_id)
    builtin = platform_seat("tictactoe", EndpointKind.BUILTIN, "random")
    match = lifecycle.create_match("tictactoe", [bot, builtin], seed=3, dispatch_now=False)
    # It should record the version the seat plays (the bot's latest), and none for a built-in.
    seats = Participant.objects.filter(match=match).order_by("seat")
    assert [p.version_id for p in seats] == [bot.versions.get().pk, None]
    run(run_match(match.pk))
    match.refresh_from_db()
    # It should play the code to a real result (no fault of the code seat).
    assert match.status == "finished", (match.status, match.reason, match.error)
    code_seat = Participant.objects.get(match=match, seat=0)
    assert code_seat.result in ("win", "draw", "loss") and code_seat.faults == 0
    # It should put what the bot wrote on stderr in its owner's per-turn log (API and page).
    logs = api(users["owner"]).get(f"/api/matches/{match.pk}/logs/?seat=0")
    assert logs.status_code == 200, logs.content
    stderr = [line for entry in logs.json()["results"] for line in entry["log"]["stderr"]]
    assert any("VERSION-MARK thinking: I take" in line for line in stderr), stderr
    page = Client()
    page.force_login(users["owner"])
    shown = page.get(f"/bots/{bot_id}/matches/{match.pk}/log")
    assert shown.status_code == 200 and b"VERSION-MARK thinking" in shown.content
    # It should show it to nobody else.
    assert api(users["other"]).get(f"/api/matches/{match.pk}/logs/?seat=0").status_code in (
        403,
        404,
    )
    page.force_login(users["other"])
    assert page.get(f"/bots/{bot_id}/matches/{match.pk}/log").status_code == 404


def test_it_freezes_each_entrants_version_when_an_event_starts(users):
    owner, other = api(users["owner"]), api(users["other"])
    ids = [create_code_bot(owner, "a").json()["id"], create_code_bot(other, "b").json()["id"]]
    event = Event.objects.create(name="cup", game="tictactoe", format=EventFormat.ROUND_ROBIN)
    for seed, bot_id in enumerate(ids, start=1):
        Entry.objects.create(event=event, bot_id=bot_id, seed=seed)
    events.start_event(event)
    v1 = {bot_id: BotVersion.objects.get(bot_id=bot_id, number=1).pk for bot_id in ids}
    # It should freeze each code bot's version on its entry at the start.
    assert dict(Entry.objects.filter(event=event).values_list("bot_id", "version_id")) == v1
    upload(owner, ids[0], "newer.py", BOT)
    # It should show the frozen versions in the event's admin page, without their bytes.
    page = Client()
    page.force_login(users["staff"])
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as seen:
        change = page.get(f"/admin/competition/event/{event.pk}/change/").content.decode()
    assert change.count(">v1<") == 2, change[:500]
    assert not [q for q in seen.captured_queries if '"bots_botversion"."data"' in q["sql"]]
    # It should keep playing the frozen version in the event after a new upload...
    bots = list(Bot.objects.filter(pk__in=ids).order_by("pk"))
    later = lifecycle.create_match("tictactoe", bots, event=event, dispatch_now=False)
    played = dict(Participant.objects.filter(match=later).values_list("bot_id", "version_id"))
    assert played == v1
    # ...and the latest one outside it.
    friendly = lifecycle.create_match("tictactoe", bots, dispatch_now=False)
    played = dict(Participant.objects.filter(match=friendly).values_list("bot_id", "version_id"))
    assert played[ids[0]] == BotVersion.objects.get(bot_id=ids[0], number=2).pk
    # It should not freeze anything for an event that does not ask for it.
    loose = Event.objects.create(name="open", game="tictactoe", freeze_versions=False)
    for seed, bot_id in enumerate(ids, start=1):
        Entry.objects.create(event=loose, bot_id=bot_id, seed=seed)
    events.start_event(loose)
    assert not Entry.objects.filter(event=loose, version__isnull=False).exists()
    assert Match.objects.filter(event=event).count() >= 1


# -- the web form and the admin ------------------------------------------------------------


def test_it_registers_a_code_bot_from_the_web_form(users):
    page = Client()
    page.force_login(users["owner"])
    form = page.get("/bots/new/")
    # It should offer "URL" or "Upload code", and a file field, in a multipart form.
    assert b"Upload code" in form.content and b'type="file"' in form.content
    assert b'enctype="multipart/form-data"' in form.content
    fields = {"game": "tictactoe", "name": "webbed", "kind": "code"}
    # It should refuse a bad file with the reason in the form, and store nothing.
    bad = page.post("/bots/new/", {**fields, "file": SimpleUploadedFile("bot.txt", b"hello")})
    assert bad.status_code == 200 and b"errors" in bad.content
    assert not Bot.objects.exists() and not BotVersion.objects.exists()
    made = page.post("/bots/new/", {**fields, "file": SimpleUploadedFile("bot.py", BOT)})
    assert made.status_code == 302, made.content.decode()[:2000]
    bot = Bot.objects.get(name="webbed")
    assert bot.kind == EndpointKind.CODE and bytes(bot.versions.get().data) == BOT
    # It should list the versions on the bot page, with a download link for the owner...
    detail = page.get(f"/bots/{bot.pk}/").content.decode()
    assert "code-versions" in detail and f"/api/bots/{bot.pk}/versions/1/download/" in detail
    # ...and a new version from the edit form.
    edited = page.post(
        f"/bots/{bot.pk}/edit/",
        {"name": "webbed", "kind": "code", "file": SimpleUploadedFile("v2.py", BOT)},
    )
    assert edited.status_code == 302, edited.content.decode()[:2000]
    assert list(bot.versions.values_list("number", flat=True)) == [2, 1]
    # It should show no download link to another user while the source is private.
    page.force_login(users["other"])
    assert "/versions/1/download/" not in page.get(f"/bots/{bot.pk}/").content.decode()


def test_it_lets_staff_make_a_code_bot_in_the_admin_and_download_its_versions(users):
    page = Client()
    page.force_login(users["staff"])
    made = page.post(
        "/admin/competition/bot/add/",
        {
            "owner": users["owner"].pk,
            "game": "tictactoe",
            "name": "admin-made",
            "kind": "code",
            "target": "",
            "status": "active",
            "file": SimpleUploadedFile("bot.py", BOT),
            "versions-TOTAL_FORMS": "0",
            "versions-INITIAL_FORMS": "0",
        },
    )
    # It should store the file as the bot's first version.
    assert made.status_code == 302, made.content.decode()[:3000]
    bot = Bot.objects.get(name="admin-made")
    assert bot.kind == EndpointKind.CODE and bot.versions.count() == 1
    # It should list the versions inline, each with a download link that serves its bytes.
    change = page.get(f"/admin/competition/bot/{bot.pk}/change/").content.decode()
    link = f"/admin/competition/bot/{bot.pk}/versions/1/download/"
    assert link in change
    assert page.get(link).content == BOT


# -- no sandbox, no code --------------------------------------------------------------------


@pytest.fixture
def no_sandbox(monkeypatch):
    """A server without a working bubblewrap (its path names no file): ``sandbox_status``
    checks it for real, once per process (its cache is cleared around the test)."""
    from bots import sandbox

    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bwrap")
    sandbox.sandbox_status.cache_clear()
    yield sandbox.UNAVAILABLE
    sandbox.sandbox_status.cache_clear()


def test_it_refuses_code_bots_everywhere_when_no_sandbox_can_be_made(users, no_sandbox, caplog):
    # It should refuse a code bot in the API with the sandbox's one sentence, storing nothing.
    refused = create_code_bot(api(users["owner"]))
    assert refused.status_code == 400 and refused.json()["kind"] == [no_sandbox]
    assert not Bot.objects.exists() and not BotVersion.objects.exists()
    # It should refuse it in the web form and in the admin with the same sentence.
    page = Client()
    page.force_login(users["owner"])
    form = page.post(
        "/bots/new/",
        {
            "game": "tictactoe",
            "name": "web",
            "kind": "code",
            "file": SimpleUploadedFile("bot.py", BOT),
        },
    )
    assert form.status_code == 200 and no_sandbox in form.content.decode()
    page.force_login(users["staff"])
    admin = page.post(
        "/admin/competition/bot/add/",
        {
            "owner": users["owner"].pk,
            "game": "tictactoe",
            "name": "admin",
            "kind": "code",
            "status": "active",
            "file": SimpleUploadedFile("bot.py", BOT),
            "versions-TOTAL_FORMS": "0",
            "versions-INITIAL_FORMS": "0",
        },
    )
    assert admin.status_code == 200 and no_sandbox in admin.content.decode()
    assert not Bot.objects.exists() and not BotVersion.objects.exists()
    # It should never run a code bot stored before: its seat is refused at its start with
    # the same sentence (a connect fault), and the runner says so in its log.
    bot = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="old", kind=EndpointKind.CODE, target="bot.py"
    )
    add_version(bot, read_code("bot.py", BOT))
    builtin = platform_seat("tictactoe", EndpointKind.BUILTIN, "random")
    match = lifecycle.create_match("tictactoe", [bot, builtin], seed=1, dispatch_now=False)
    from competition.runners.play import sandbox_report

    with caplog.at_level("WARNING", logger="competition.runners.play"):
        assert sandbox_report() == (False, no_sandbox)
    assert no_sandbox in caplog.text
    run(run_match(match.pk))
    seat = Participant.objects.get(match=match, seat=0)
    assert seat.cause == "connect" and seat.result == "loss"
    logs = api(users["owner"]).get(f"/api/matches/{match.pk}/logs/?seat=0").json()["results"]
    assert logs[0]["log"]["fault"] == "connect" and logs[0]["log"]["detail"] == no_sandbox


# -- Game of Drones: the 2018 bots as they were written ------------------------------------


def test_it_plays_a_round_robin_of_2018_drones_bots_uploaded_as_files_like_process_bots(
    users, tmp_path
):
    from bots.transports.process import ProcessTransport
    from competition.matches.loop import play
    from games import get_game
    from games.drones import JS_HOST
    from tests.helpers import CLASS_BOT, FACTORY_BOT, NODE, TEMPLATE_BOT

    sources = {"template": TEMPLATE_BOT, "closure": FACTORY_BOT, "counter": CLASS_BOT}
    ids = {}
    for name, source in sources.items():
        made = api(users["owner"]).post(
            "/api/bots/",
            {
                "game": "drones",
                "name": name,
                "kind": "code",
                "file": SimpleUploadedFile(f"{name}.js", source.encode()),
            },
            format="multipart",
        )
        assert made.status_code == 201, made.content
        ids[made.json()["id"]] = name
    # a round robin as the admin's "Start" makes it (the events service it calls)
    event = Event.objects.create(name="2018", game="drones", format=EventFormat.ROUND_ROBIN)
    for seed, bot_id in enumerate(ids, start=1):
        Entry.objects.create(event=event, bot_id=bot_id, seed=seed)
    assert events.start_event(event) == 1  # round 1 of 3: one match, one bot resting

    async def play_all():
        for _ in range(20):  # bounded: every match of the event, then the event is over
            if await run_match() is None:
                return

    run(play_all())
    event.refresh_from_db()
    # It should play every pairing to a result, the event finished.
    assert event.status == "finished"
    assert Match.objects.filter(event=event).count() == 3
    game = get_game("drones")
    for match in Match.objects.filter(event=event).order_by("pk"):
        seats = list(Participant.objects.filter(match=match).order_by("seat"))
        assert match.status in ("finished", "forfeited"), (match.status, match.error)
        # It should give each seat the result the same files give as process: bots run by
        # games/drones/drones_js.mjs, with the match's seed and options.
        files = [sources[ids[p.bot_id]] for p in seats]

        paths = []
        for seat, source in enumerate(files):
            paths.append(tmp_path / f"match{match.pk}-seat{seat}.js")
            paths[-1].write_text(source, encoding="utf-8")

        async def reference(paths=paths, match=match):
            transports = [ProcessTransport([NODE, str(JS_HOST), str(p)], codec=game) for p in paths]
            return await play(game, transports, seed=match.seed, options=match.options)

        expected = run(reference())
        assert [p.score for p in seats] == list(expected.outcome.scores), (
            match.pk,
            [ids[p.bot_id] for p in seats],
        )
        assert match.reason == expected.outcome.reason


def test_it_plays_a_code_bot_on_the_bench(users):
    bot_id = create_code_bot(api(users["owner"])).json()["id"]
    page = Client()
    page.force_login(users["owner"])
    # It should offer the code bot on the bench and queue its match against a built-in.
    assert f"bot:{bot_id}" in page.get("/bench/").content.decode()
    made = page.post(
        "/bench/",
        {
            "game": "tictactoe",
            "tictactoe-mine": f"bot:{bot_id}",
            "tictactoe-opponent": "builtin:perfect",
            "tictactoe-seat": "0",
            "tictactoe-pace_ms": "0",
        },
    )
    assert made.status_code == 302, made.content.decode()[:2000]
    match = Match.objects.get()
    assert Participant.objects.get(match=match, bot_id=bot_id).version_id is not None
    run(run_match(match.pk))
    match.refresh_from_db()
    # It should play it to a result in the sandbox.
    assert match.status == "finished", (match.status, match.reason, match.error)


def test_it_lists_versions_without_reading_their_code(users):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    owner = api(users["owner"])
    bot_id = create_code_bot(owner).json()["id"]

    def listing() -> list[str]:
        with CaptureQueriesContext(connection) as seen:
            assert owner.get(f"/api/bots/{bot_id}/versions/").status_code == 200
        return [q["sql"] for q in seen.captured_queries]

    one = listing()
    for n in range(4):
        upload(owner, bot_id, f"v{n}.py", BOT)
    five = listing()
    # It should read the list in as many queries for five versions as for one...
    assert len(five) == len(one), five
    # ...and never the uploads' bytes.
    assert not [sql for sql in five if '"bots_botversion"."data"' in sql], five


def test_it_never_makes_a_code_bot_from_an_endpoint_spec(users):
    from django.core.management import CommandError, call_command

    # It should refuse "code:..." where endpoints are given as specs (enqueue, play), as a
    # bot without an upload would be: code comes only with its file, and runs sandboxed.
    with pytest.raises(CommandError, match="uploaded code is a bot of the server"):
        call_command("enqueue", "tictactoe", "code:bot.py", "builtin:random")
    assert not Bot.objects.filter(kind=EndpointKind.CODE).exists()
    with pytest.raises(CommandError, match="uploaded code is a bot of the server"):
        call_command("play", "tictactoe", "code:bot.py", "builtin:random")
