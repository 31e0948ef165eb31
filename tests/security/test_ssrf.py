"""SSRF through Unicode host spellings (issue 20, finding 1), through the real entry points.

The attack: a bot URL such as ``http://127.0.0.1:PORT/internal/admin?x=1`` written in
fullwidth digits passed the URL check as a "name", then the HTTP client normalised it (UTS46) to ``127.0.0.1`` and
connected without asking the resolver; the test call showed the internal service's reply.

Every spelling of ``tests/security/spellings.py`` is registered through the API, the bot
form and the play page (each must refuse it with a clear message), then, stored as a bot
registered before the check existed would be, test-called and played in a match: a canary
listener on loopback (not allow-listed) must accept no connection. A tripwire on the event
loop's ``sock_connect`` refuses (and records) any destination off loopback, so a regression
can never send a test's traffic elsewhere; DNS answers come from a stub.
"""

from __future__ import annotations

import asyncio
import asyncio.selector_events
import html
import ipaddress
import socket
import threading

import pytest
from django.contrib.auth import get_user_model
from django.test import AsyncClient, Client
from rest_framework.test import APIClient

from bots import egress
from bots.faults import FaultCode, explain
from competition.matches import history
from competition.models import Match, Turn
from competition.models.bots import Bot, EndpointKind
from competition.runners.play import run_match
from tests.helpers import StubResolver
from tests.security.spellings import SPELLINGS, bot_url

#: what the bot page says of a test call the egress policy refused (its words, not its code)
DENIED_SAID = html.escape(explain(FaultCode.DENIED))

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = b"INTERNAL-ADMIN-TOKEN-7f3a"
#: the internal service's reply: a legal tic-tac-toe move carrying the secret
REPLY = b'{"play":"1-1","admin":"' + SECRET + b'"}'
#: where the one allow-listed (control) bot lives; the canary is elsewhere on loopback
ALLOWED = "127.0.0.2"


class Canary:
    """A real TCP listener on 127.0.0.1 and ::1 (the same port) in a thread: counts the
    connections it accepts and the bytes it receives, and answers any request with the
    internal service's JSON (so a connection that got through would show the secret)."""

    def __init__(self, hosts=("127.0.0.1", "::1")):
        self.hosts = hosts
        self.accepted = 0
        self.received = 0
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> Canary:
        for _attempt in range(20):
            socks = []
            try:
                port = 0
                for host in self.hosts:
                    family = socket.AF_INET6 if ":" in host else socket.AF_INET
                    sock = socket.socket(family, socket.SOCK_STREAM)
                    socks.append(sock)
                    if family == socket.AF_INET6:
                        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                    sock.bind((host, port))
                    port = sock.getsockname()[1]
                    sock.listen(64)
                    sock.settimeout(0.1)
            except OSError:
                for sock in socks:
                    sock.close()
                continue
            self._socks, self.port = socks, port
            break
        else:
            raise RuntimeError("no free port on both 127.0.0.1 and ::1")
        self._stop = threading.Event()
        for sock in self._socks:
            thread = threading.Thread(target=self._serve, args=(sock,), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def _serve(self, sock: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _addr = sock.accept()
            except (TimeoutError, OSError):
                continue
            with self._lock:
                self.accepted += 1
            with conn:
                conn.settimeout(1)
                try:
                    data = conn.recv(65536)
                    with self._lock:
                        self.received += len(data)
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                        + str(len(REPLY)).encode()
                        + b"\r\nConnection: close\r\n\r\n"
                        + REPLY
                    )
                except OSError:
                    pass

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(2)
        for sock in self._socks:
            sock.close()


@pytest.fixture
def canary():
    with Canary() as listener:
        yield listener


@pytest.fixture
def tripwire(monkeypatch):
    """Every destination the event loops connect a socket to; any off loopback is refused."""
    seen: list[str] = []
    real = asyncio.selector_events.BaseSelectorEventLoop.sock_connect

    async def sock_connect(loop, sock, address):
        host = address[0]
        seen.append(host)
        if not ipaddress.ip_address(host.split("%")[0]).is_loopback:
            raise ConnectionRefusedError(f"tripwire: a test tried to connect to {host}")
        return await real(loop, sock, address)

    monkeypatch.setattr(asyncio.selector_events.BaseSelectorEventLoop, "sock_connect", sock_connect)
    return seen


@pytest.fixture
def stub_dns(monkeypatch):
    """Names resolve from a table (no query leaves the machine); ``localhost`` is loopback."""
    monkeypatch.setattr(egress, "resolver_factory", StubResolver)
    monkeypatch.setattr(
        StubResolver, "table", {"localhost": ["127.0.0.1", "::1"], "bot.example.test": [ALLOWED]}
    )
    return StubResolver.table


@pytest.fixture
def allow_control(settings):
    """Production policy, except one loopback address for the control bot (not the canary's)."""
    settings.ARENA_BOT_ALLOW_NETWORKS = egress.parse_networks(f"{ALLOWED}/32")


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("mallory")


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def web_as(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def register_by_api(user, url: str, name: str = "probe"):
    return api_as(user).post(
        "/api/bots/",
        {"game": "tictactoe", "name": name, "kind": "http", "target": url},
        format="json",
    )


def register_by_form(user, url: str, name: str = "probe"):
    return web_as(user).post(
        "/bots/new/", {"game": "tictactoe", "name": name, "kind": "http", "target": url}
    )


def call_bot(user, bot: Bot) -> str:
    """The bot page after a test call (a fresh session: the call is rate-limited per session),
    on one event loop whose egress session is closed at the end."""

    async def call() -> str:
        client = AsyncClient()
        await client.aforce_login(user)
        try:
            assert (await client.post(f"/bots/{bot.pk}/test")).status_code == 302
            return (await client.get(f"/bots/{bot.pk}/")).content.decode()
        finally:
            await egress.close_session()

    return asyncio.run(call())


def play_match(user, bot: Bot) -> list[Turn]:
    """Challenge a built-in bot through the API, play the match, return its turns."""
    rival = Bot.objects.create(
        owner=user,
        game="tictactoe",
        name=f"rival-{bot.pk}",
        kind=EndpointKind.BUILTIN,
        target="random",
    )
    created = api_as(user).post(
        "/api/matches/challenge/", {"game": "tictactoe", "bots": [bot.pk, rival.pk]}, format="json"
    )
    assert created.status_code == 201, created.content
    match_id = created.json()["id"]

    async def play() -> int | None:
        try:
            return await run_match(match_id)
        finally:
            await egress.close_session()

    assert asyncio.run(play()) == match_id
    return history.turns(match_id)


def stored_bot(user, url: str, name: str = "stored") -> Bot:
    """A bot row with this URL, as one registered before the check existed would be."""
    return Bot.objects.create(
        owner=user, game="tictactoe", name=name, kind=EndpointKind.HTTP, target=url
    )


# -- the original attack ------------------------------------------------------------------


def test_it_refuses_the_reported_fullwidth_url_everywhere_and_never_shows_the_reply(
    owner, canary, tripwire, stub_dns, allow_control
):
    url = f"http://１２７.０.０.１:{canary.port}/internal/admin?x=1"  # noqa: RUF001
    # It should refuse the URL at API registration, with a clear reason ...
    response = register_by_api(owner, url)
    assert response.status_code == 400, response.content
    assert "target" in response.json() and "ASCII" in str(response.json()["target"])
    # ... on the bot form ...
    page = register_by_form(owner, url)
    assert page.status_code == 200 and "This URL cannot be used" in page.content.decode()
    # ... and on the play page, where a POST creates no match.
    play = web_as(owner).get("/games/tictactoe/play", {"p1": url, "p2": "builtin:random"})
    assert "This URL cannot be used" in play.content.decode()
    posted = web_as(owner).post("/games/tictactoe/play", {"p1": url, "p2": "builtin:random"})
    assert posted.status_code == 200 and not Match.objects.exists()
    assert not Bot.objects.filter(kind=EndpointKind.HTTP).exists()
    # It should refuse a stored bot with that URL when test-called and when playing.
    bot = stored_bot(owner, url)
    page = call_bot(owner, bot)
    assert DENIED_SAID in page and SECRET.decode() not in page
    turns = play_match(owner, bot)
    assert turns and turns[0].faults[0] == "denied"
    assert SECRET.decode() not in repr([(t.details, t.logs) for t in turns])
    # It should never have opened a connection to the internal service.
    assert canary.accepted == 0 and canary.received == 0
    assert set(tripwire) <= {ALLOWED}


def test_it_still_registers_test_calls_and_plays_an_allow_listed_ascii_bot(
    owner, tripwire, stub_dns, allow_control
):
    # It should be a fair harness: the same path reaches a bot that is allowed.
    with Canary(hosts=(ALLOWED,)) as bot_server:
        for url in (
            f"http://{ALLOWED}:{bot_server.port}/bot?x=1",
            f"http://bot.example.test:{bot_server.port}/",
        ):
            response = register_by_api(owner, url, name=url[-12:])
            assert response.status_code == 201, response.content
            bot = Bot.objects.get(pk=response.json()["id"])
            page = call_bot(owner, bot)
            assert "accepted as the move" in page
            turns = play_match(owner, bot)
            assert "ok" in turns[0].faults
        assert bot_server.accepted >= 4 and bot_server.received > 0


# -- every spelling, through every entry point --------------------------------------------


@pytest.mark.parametrize(("label", "template"), SPELLINGS, ids=[label for label, _t in SPELLINGS])
def test_it_refuses_every_unicode_and_idna_spelling_through_every_entry_point(
    owner, canary, tripwire, stub_dns, allow_control, label, template
):
    url = bot_url(template, canary.port)
    # It should refuse the URL at registration: API, bot form, play page.
    response = register_by_api(owner, url)
    assert response.status_code == 400, (label, response.content)
    assert "target" in response.json()
    page = register_by_form(owner, url)
    assert page.status_code == 200 and "This URL cannot be used" in page.content.decode(), label
    play = (
        web_as(owner)
        .get("/games/tictactoe/play", {"p1": url, "p2": "builtin:random"})
        .content.decode()
    )
    assert "This URL cannot be used" in play, label
    assert not Bot.objects.filter(kind=EndpointKind.HTTP).exists()
    # It should refuse it again when a stored bot is test-called or plays a match.
    bot = stored_bot(owner, url)
    page = call_bot(owner, bot)
    assert DENIED_SAID in page, label
    turns = play_match(owner, bot)
    assert turns and turns[0].faults[0] == "denied", (label, turns[0].faults, turns[0].details)
    # It should never have connected to the canary, nor anywhere else.
    assert canary.accepted == 0 and canary.received == 0, label
    assert tripwire == [], (label, tripwire)
