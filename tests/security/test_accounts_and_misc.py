"""Issue 20, findings 4 and 7: the default admin, local bots, and the low-severity items.

Each test goes through the real entry point: the ``demo`` and ``serve`` management commands
as subprocesses with ``DEBUG=false``, the Django test client for pages, the admin and the
API, channels' ``WebsocketCommunicator`` on the project's ASGI router, and a real HTTP bot
on loopback that counts the test calls it receives.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import sys

import pytest
from aiohttp import web
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import AsyncClient, Client
from rest_framework.test import APIClient

from competition.live import broadcast
from competition.matches import history
from competition.matches.lifecycle import create_match
from competition.models import Match, Turn
from competition.models.bots import Bot
from tests.conftest import REPO, free_port
from tests.helpers import http_bot
from tests.live_protocol import CheckedCommunicator, check
from tests.processes import manage, project_env, running

PRODUCTION = {"DEBUG": "false", "SECRET_KEY": "s" * 30 + "-a-real-production-secret-key-0123456789"}
PASSWORD = "a-long-pass-phrase-42"

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {
    "password": PASSWORD,
    "owner": {"email": "owner@example.org"},
    "other": {"email": "other@example.org"},
    "staff": {"email": "staff@example.org", "is_superuser": True},
}


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def shell(code: str, env: dict) -> str:
    done = manage("shell", "-c", code, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


DEMO_STATE = """
from django.contrib.auth import get_user_model
u = get_user_model().objects.filter(username="demo").first()
print("none" if u is None else f"{u.is_staff} {u.is_superuser} {u.check_password('demo')} {u.has_usable_password()}")
"""


# -- finding 4: the demo account -------------------------------------------------------------


def test_it_never_leaves_a_known_password_superuser_in_production(tmp_path):
    dev = project_env(ARENA_DATA_DIR=str(tmp_path / "var"), ARENA_DEMO_PASSWORD="")
    prod = {**dev, **PRODUCTION}
    (tmp_path / "var").mkdir()
    assert manage("migrate", "--noinput", env=dev).returncode == 0
    # It should keep the development default: demo / demo, a staff superuser.
    assert manage("demo", env=dev).returncode == 0
    assert shell(DEMO_STATE, dev) == "True True True True"
    # It should demote that user in production mode and leave it no usable password.
    done = manage("demo", env=prod)
    assert done.returncode == 0, done.stderr
    assert "not staff" in done.stdout
    assert shell(DEMO_STATE, prod) == "False False False False"
    # It should create no demo at all when `serve` starts in production mode.
    fresh = {**prod, "ARENA_DATA_DIR": str(tmp_path / "fresh")}
    port = free_port()
    log = tmp_path / "serve.log"
    with running(
        [sys.executable, str(REPO / "manage.py"), "serve", "--port", str(port)],
        port,
        env=fresh,
        log=log,
    ):
        pass
    assert shell(DEMO_STATE, fresh) == "none"
    assert "no demo" in log.read_text()


@pytest.mark.parametrize(
    "kind, target", [("process", "sh -c 'id > /tmp/pwned'"), ("tcp", "127.0.0.1:5858")]
)
def test_it_refuses_local_bots_to_staff_unless_the_server_allows_them(
    users, settings, kind, target
):
    body = {"name": "local", "game": "tictactoe", "kind": kind, "target": target}
    web = Client()
    web.force_login(users["staff"])
    # It should refuse staff (the API and the bot form) while ARENA_ALLOW_LOCAL_BOTS is off.
    settings.ARENA_ALLOW_LOCAL_BOTS = False
    response = api(users["staff"]).post("/api/bots/", body, format="json")
    assert response.status_code == 400 and "kind" in response.json()
    page = web.post("/bots/new/", body)
    assert page.status_code == 200 and not Bot.objects.filter(kind=kind).exists()
    # It should refuse ordinary users whatever the setting.
    settings.ARENA_ALLOW_LOCAL_BOTS = True
    assert api(users["owner"]).post("/api/bots/", body, format="json").status_code == 400
    # It should let staff register them once the operator allows local bots.
    assert api(users["staff"]).post("/api/bots/", body, format="json").status_code == 201


# -- finding 7 --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_it_lets_only_one_of_many_concurrent_test_calls_out(users, allow_loopback):
    received = []

    async def handler(request):
        received.append(await request.read())
        await asyncio.sleep(0.05)
        return web.json_response({"play": "1-1"})

    async with http_bot(handler) as base:
        bot = await Bot.objects.acreate(
            owner=users["owner"], game="tictactoe", name="t", target=base + "/"
        )
        clients = []
        for _ in range(6):  # six sessions of the owner: a per-session limit lets them all out
            client = AsyncClient()
            await client.aforce_login(users["owner"])
            clients.append(client)
        answers = await asyncio.gather(*(c.post(f"/bots/{bot.pk}/test") for c in clients))
        # It should redirect every caller to the bot page, but call the bot once.
        assert [a.status_code for a in answers] == [302] * 6
        assert len(received) == 1
        # It should refuse a seventh right away, from yet another session.
        late = AsyncClient()
        await late.aforce_login(users["owner"])
        await late.post(f"/bots/{bot.pk}/test")
        assert len(received) == 1


def test_it_shows_a_bots_secret_to_nobody_after_creation(users):
    created = api(users["owner"]).post(
        "/api/bots/",
        {"name": "b", "game": "tictactoe", "kind": "http", "target": "https://bots.example.org/b"},
        format="json",
    )
    assert created.status_code == 201
    bot = Bot.objects.get(pk=created.json()["id"])
    # It should show the secret once: in the answer that creates the bot.
    assert created.json()["secret"] == bot.secret
    # It should never show it again: not to the owner, not to staff (API or admin).
    assert bot.secret not in api(users["owner"]).get(f"/api/bots/{bot.pk}/").content.decode()
    assert bot.secret not in api(users["staff"]).get("/api/bots/").content.decode()
    admin = Client()
    admin.force_login(users["staff"])
    page = admin.get(f"/admin/competition/bot/{bot.pk}/change/")
    assert page.status_code == 200 and bot.secret not in page.content.decode()
    assert "hidden" in page.content.decode()
    # It should let the owner rotate it (the new one is shown once), and staff only replace it.
    rotated = api(users["owner"]).post(f"/api/bots/{bot.pk}/rotate-secret/").json()["secret"]
    bot.refresh_from_db()
    assert rotated == bot.secret
    admin.post(
        "/admin/competition/bot/", {"action": "rotate_secrets", "_selected_action": [bot.pk]}
    )
    bot.refresh_from_db()
    assert bot.secret != rotated


@pytest.fixture
def played(users):
    """A match: the owner's bot in seat 0 failed to connect; the other's made an illegal move."""
    mine = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="mine", target="https://a.example.org/"
    )
    theirs = Bot.objects.create(
        owner=users["other"], game="tictactoe", name="theirs", target="https://b.example.org/"
    )
    match = create_match("tictactoe", [mine, theirs], seed=1, dispatch_now=False)
    log = {
        "fault": "dns",
        "detail": "localhost resolves to 127.0.0.1",
        "latency_ms": 2,
        "sent": "{}",
        "received": "",
        "stderr": [],
        "time_left_ms": None,
    }
    Turn.objects.create(
        match=match,
        number=1,
        seats=[0, 1],
        actions=[None, None],
        faults=["dns", "illegal"],
        details=["localhost resolves to 127.0.0.1 (port 8123)", "occupied"],
        latencies_ms=[2, 3],
        frame={},
        logs=[log, None],
        forfeited=[0],
    )
    return match


def test_it_shows_per_turn_logs_to_the_owner_only_on_the_web_and_the_api(users, played):
    url = f"/api/matches/{played.pk}/logs/?seat=0"
    bot = played.participants.get(seat=0).bot
    page = f"/bots/{bot.pk}/matches/{played.pk}/log"
    # It should serve the owner, as the web page does.
    assert api(users["owner"]).get(url).status_code == 200
    owner = Client()
    owner.force_login(users["owner"])
    assert owner.get(page).status_code == 200
    # It should refuse staff on the API as the web page does (staff use the admin).
    assert api(users["staff"]).get(url).status_code == 403
    staff = Client()
    staff.force_login(users["staff"])
    assert staff.get(page).status_code == 404
    assert api(users["other"]).get(url).status_code == 403


def test_it_shows_spectators_no_network_details(users, played):
    turns = api().get(f"/api/matches/{played.pk}/turns/").json()["results"]
    replay_body = b"".join(api().get(f"/api/matches/{played.pk}/replay/").streaming_content)
    replay = json.loads(replay_body)["turns"]
    live = broadcast.turn_message(
        history.turns(played, upto=1)[0].public_json()
        | {"details": ["localhost resolves to 127.0.0.1", "occupied"]}
    )
    live = json.loads(live["text"])
    check("match", live)  # the live message keeps to its published schema
    for turn in (turns[0], replay[0], live["turn"]):
        # It should keep the fault codes and the game's verdict, and drop the host, port and
        # DNS answers (the owner reads them in the per-turn log).
        assert turn["faults"] == ["dns", "illegal"]
        assert turn["details"] == [None, "occupied"]
    assert "127.0.0.1" not in json.dumps(turns) + json.dumps(replay) + json.dumps(live)
    assert "127.0.0.1" in json.dumps(
        api(users["owner"]).get(f"/api/matches/{played.pk}/logs/?seat=0").json()
    )


@pytest.mark.parametrize("kind, target", [("builtin", "perfect"), ("human", "browser")])
def test_it_refuses_builtin_and_human_bots_from_ordinary_users(users, kind, target):
    body = {"name": "sneaky", "game": "tictactoe", "kind": kind, "target": target}
    response = api(users["owner"]).post("/api/bots/", body, format="json")
    # It should refuse them as the bot form does, from staff too (issue 25: built-ins and
    # human seats are the platform's seats, played on the bench; staff could copy built-ins
    # before).
    assert response.status_code == 400 and "kind" in response.json()
    assert not Bot.objects.filter(name="sneaky").exists()
    assert api(users["staff"]).post("/api/bots/", body, format="json").status_code == 400


def get_status(port: int, headers: dict) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/healthz", headers=headers)
        response = conn.getresponse()
        return response.status, response.getheader("Location") or ""
    finally:
        conn.close()


def test_it_trusts_x_forwarded_proto_only_with_proxy_headers(tmp_path):
    env = project_env(ARENA_DATA_DIR=str(tmp_path / "var"), **PRODUCTION)
    forged = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    port = free_port()
    argv = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running(argv, port, env=env):
        # It should treat plain HTTP as plain HTTP whatever a client claims: to HTTPS.
        status, location = get_status(port, forged)
        assert status == 301 and location.startswith("https://")
    port = free_port()
    argv = [
        sys.executable,
        str(REPO / "manage.py"),
        "serve",
        "--no-demo",
        "--no-migrate",
        "--port",
        str(port),
    ]
    with running(argv, port, env={**env, "ARENA_PROXY_HEADERS": "true"}):
        # It should believe the proxy once the operator says one is in front.
        assert get_status(port, forged)[0] == 200
        assert get_status(port, {})[0] == 301


def test_it_rate_limits_sign_up_per_address(db):
    def attempt(address: str, name: str):
        return Client(REMOTE_ADDR=address).post(
            "/accounts/signup/",
            {"username": name, "email": "", "password1": PASSWORD, "password2": PASSWORD + "-typo"},
        )

    codes = [attempt("198.51.100.7", f"user{i}").status_code for i in range(10)]
    assert codes == [200] * 10  # form errors (the passwords differ)
    # It should answer the 11th attempt from that address with a clear 429 page.
    late = attempt("198.51.100.7", "user10")
    assert late.status_code == 429 and "Too many attempts" in late.content.decode()
    assert int(late["Retry-After"]) > 0
    # It should count per address: another address still signs up.
    fine = Client(REMOTE_ADDR="198.51.100.8").post(
        "/accounts/signup/",
        {"username": "fine", "email": "", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert fine.status_code == 302 and get_user_model().objects.filter(username="fine").exists()


def test_it_rate_limits_password_reset_per_email_and_per_address(users):
    codes = [
        Client(REMOTE_ADDR=f"198.51.100.{i}")
        .post("/accounts/password_reset/", {"email": "owner@example.org"})
        .status_code
        for i in range(8)
    ]
    # It should send at most three mails to one address an hour, from however many clients.
    assert codes == [302] * 3 + [429] * 5
    assert len(mail.outbox) == 3
    # It should also limit one client asking for many addresses.
    client = Client(REMOTE_ADDR="203.0.113.50")
    codes = [
        client.post("/accounts/password_reset/", {"email": f"x{i}@example.org"}).status_code
        for i in range(11)
    ]
    assert codes == [302] * 10 + [429]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "origin, accepted",
    [
        (b"http://127.0.0.1:8000", True),
        (b"http://127.0.0.1:8001", False),  # another service on the same host
        (b"https://127.0.0.1:8000", False),
        (b"http://evil.example.com:8000", False),
        (None, False),
    ],
)
async def test_it_accepts_websockets_from_the_sites_own_origin_only(users, origin, accepted):
    from competition.asgi import router

    match = await Match.objects.acreate(game="tictactoe", seed=1)
    headers = [(b"host", b"127.0.0.1:8000")] + ([(b"origin", origin)] if origin else [])
    comm = CheckedCommunicator(router, f"/ws/matches/{match.pk}/", headers=headers)
    connected, _code = await comm.connect()
    # It should compare scheme, host and port with the socket's own origin.
    assert connected is accepted
    if connected:
        assert (await comm.receive_json_from(timeout=5))["type"] == "snapshot"
    await comm.disconnect()
