"""Issue 35, finding H2: the client's address behind a reverse proxy.

Each proxy appends the address it was connected from to ``X-Forwarded-For``; what stands left
of those entries is whatever the client wrote. The limits that count per address (log-in
lock-out, sign-up, password reset, the anonymous ``simulate`` throttle) must count the entry
our proxy wrote, not the leftmost one. The live tests start the server exactly as ``make web``
does (its command line, read from ``make -n web``) and speak HTTP to it as nginx would: the
client's own header, then the address nginx saw appended.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
import requests
import websocket
from django.test import Client, RequestFactory

from competition.plumbing.ratelimit import client_address
from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, running

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "p" * 30 + "-a-real-production-secret-key-0123456789",
    "ALLOWED_HOSTS": "arena.example.org",
}
PASSWORD = "a-long-pass-phrase-42"
#: what nginx appends: the address it was connected from (two different real clients)
CLIENT, OTHER_CLIENT = "192.0.2.10", "192.0.2.11"

MAKE_USER = f"""
from django.contrib.auth import get_user_model
get_user_model().objects.create_user("carol", "carol@example.org", {PASSWORD!r})
"""


def make_web_command(port: int) -> tuple[dict[str, str], list[str]]:
    """``make web``'s command (its environment assignments, then the argv)."""
    done = subprocess.run(
        ["make", "-s", "-n", "web", "HOST=127.0.0.1", f"PORT={port}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=project_env(),
        check=True,
    )
    words = shlex.split(done.stdout.strip().splitlines()[-1])
    env = dict(word.split("=", 1) for word in words if re.match(r"^[A-Z_]+=", word))
    argv = [word for word in words if not re.match(r"^[A-Z_]+=", word)]
    assert argv[0].endswith("python") and "serve" in argv, argv
    return env, [sys.executable, *argv[1:]]


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    data = tmp_path_factory.mktemp("proxied")
    env = project_env(ARENA_DATA_DIR=str(data))
    assert manage("migrate", "--noinput", env=env).returncode == 0
    assert manage("shell", "-c", MAKE_USER, env=env).returncode == 0
    port = free_port()
    make_env, argv = make_web_command(port)
    with running(argv, port, env={**env, **make_env}):
        yield f"http://127.0.0.1:{port}"


class Proxied:
    """A browser behind nginx: ``X-Forwarded-For`` is the client's own value (rotated by
    the attacker) followed by the address nginx saw."""

    def __init__(self, base: str, client: str = CLIENT):
        self.base, self.client = base, client
        self.session = requests.Session()

    def headers(self, spoofed: str) -> dict[str, str]:
        return {"X-Forwarded-For": f"{spoofed}, {self.client}", "X-Forwarded-Proto": "http"}

    def post_form(self, path: str, data: dict, spoofed: str) -> int:
        page = self.session.get(self.base + path, headers=self.headers(spoofed), timeout=30)
        assert page.status_code in (200, 429), page.status_code
        token = self.session.cookies.get("csrftoken")
        response = self.session.post(
            self.base + path,
            data={**data, "csrfmiddlewaretoken": token},
            headers=self.headers(spoofed),
            allow_redirects=False,
            timeout=30,
        )
        return response.status_code

    def simulate(self, spoofed: str, game: str = "no-such-game") -> int:
        return self.session.post(
            f"{self.base}/api/games/{game}/simulate/",
            data=b"",
            headers={**self.headers(spoofed), "Content-Type": "application/json"},
            timeout=30,
        ).status_code


def test_it_sets_the_proxy_count_in_make_web():
    # It should tell the server it stands behind one proxy, as the README says, unless the
    # operator says how many.
    env, _ = make_web_command(8000)
    assert env["ARENA_PROXY_HEADERS"] == "true" and env["ARENA_NUM_PROXIES"] == "1"
    done = subprocess.run(
        ["make", "-s", "-n", "web"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=project_env(ARENA_NUM_PROXIES="2"),
        check=True,
    )
    assert "ARENA_NUM_PROXIES=2" in done.stdout


def test_it_locks_out_wrong_passwords_whatever_the_client_writes_first(web):
    browser = Proxied(web)
    codes = [
        browser.post_form(
            "/accounts/login/", {"username": "carol", "password": "wrong"}, f"203.0.113.{i}"
        )
        for i in range(12)
    ]
    # It should count the failures against the address nginx saw: locked out after five
    # (AXES_FAILURE_LIMIT), the client's rotating first entry notwithstanding.
    assert codes[:4] == [200] * 4 and codes[-7:] == [429] * 7, codes
    # ... and then refuse even the right password from that address.
    right = {"username": "carol", "password": PASSWORD}
    assert browser.post_form("/accounts/login/", right, "203.0.113.99") == 429
    # It should still let carol in from another client behind the same proxy.
    assert Proxied(web, OTHER_CLIENT).post_form("/accounts/login/", right, "203.0.113.1") == 302


def test_it_ignores_the_header_with_proxy_headers_on_and_no_proxy_count(tmp_path):
    # the reproduction: ARENA_PROXY_HEADERS=true make run (no ARENA_NUM_PROXIES)
    env = project_env(ARENA_DATA_DIR=str(tmp_path), ARENA_PROXY_HEADERS="true")
    port = free_port()
    argv = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--runners", "0"]
    with running([*argv, "--port", str(port)], port, env=env):  # (it migrates first)
        assert manage("shell", "-c", MAKE_USER, env=env).returncode == 0
        browser = Proxied(f"http://127.0.0.1:{port}")
        wrong = {"username": "carol", "password": "wrong"}
        codes = [browser.post_form("/accounts/login/", wrong, f"203.0.113.{i}") for i in range(8)]
    # It should key the lock-out by the connection (the header is not trusted without a
    # count): whatever the client writes, it is locked out.
    assert codes[-3:] == [429] * 3, codes


def test_it_limits_sign_ups_per_client_behind_the_proxy(web):
    browser = Proxied(web)

    def sign_up(i: int, who: Proxied) -> int:
        body = {"username": f"u{i}", "password1": PASSWORD, "password2": PASSWORD + "-typo"}
        return who.post_form("/accounts/signup/", body, f"198.51.100.{i}")

    codes = [sign_up(i, browser) for i in range(12)]
    # It should allow ten attempts an hour per client, then answer 429.
    assert codes == [200] * 10 + [429] * 2, codes
    # It should count another client apart.
    assert sign_up(50, Proxied(web, OTHER_CLIENT)) == 200


def test_it_limits_password_resets_per_client_behind_the_proxy(web):
    browser = Proxied(web, "192.0.2.20")
    codes = [
        browser.post_form(
            "/accounts/password_reset/", {"email": f"r{i}@example.org"}, f"198.51.100.{i}"
        )
        for i in range(12)
    ]
    # It should allow ten requests an hour per client (each to a new e-mail), then 429.
    assert codes == [302] * 10 + [429] * 2, codes


def test_it_throttles_anonymous_simulate_per_client_behind_the_proxy(web):
    browser = Proxied(web, "192.0.2.30")
    # the throttle counts before the game is looked up: an unknown game is a cheap 404
    codes = [browser.simulate(f"203.0.113.{i % 250}") for i in range(125)]
    # It should allow 120 a minute per client (DRF's throttle keyed by client_address).
    assert codes[:120] == [404] * 120 and codes[120:] == [429] * 5, codes[118:]
    # It should count another client apart.
    assert Proxied(web, "192.0.2.31").simulate("203.0.113.7", game="tictactoe") == 200


def test_it_takes_the_scheme_from_the_proxy_for_websockets(web):
    url = web.replace("http://", "ws://") + "/ws/home/"
    origin = web.replace("http://", "https://")

    def connect(*headers: str) -> bool:
        try:
            websocket.create_connection(
                url, origin=origin, header=list(headers), timeout=10
            ).close()
        except websocket.WebSocketBadStatusException:
            return False
        return True

    # It should accept the site's https:// origin when the proxy says it served HTTPS (the
    # server no longer lets daphne rewrite the connection from the headers) ...
    assert connect(f"X-Forwarded-For: 203.0.113.1, {CLIENT}", "X-Forwarded-Proto: https")
    # ... and not when nothing says so.
    assert not connect(f"X-Forwarded-For: {CLIENT}")
    assert not connect("X-Forwarded-Proto: http")


# -- the one function -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "proxies, forwarded, expected",
    [
        (0, "203.0.113.5, 192.0.2.10", "10.0.0.2"),  # no proxy: the header is ignored
        (1, "203.0.113.5, 192.0.2.10", "192.0.2.10"),  # the entry our proxy appended
        (1, "192.0.2.10", "192.0.2.10"),
        (2, "203.0.113.5, 192.0.2.10, 10.0.0.9", "192.0.2.10"),  # CDN, then nginx
        (2, "192.0.2.10", "10.0.0.2"),  # fewer entries than proxies: the peer
        (1, "203.0.113.5, not-an-address", "10.0.0.2"),  # garbage from a proxy: the peer
        (1, "", "10.0.0.2"),  # no header: the peer
        (1, "203.0.113.5, 2001:DB8::1", "2001:db8::1"),
    ],
)
def test_it_decides_the_client_address_from_the_right(settings, proxies, forwarded, expected):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": proxies}
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded)
    # It should take the entry the configured number of proxies from the end, else the peer.
    assert client_address(request) == expected


@pytest.mark.django_db
def test_it_keys_the_log_in_lock_out_with_the_same_function(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    client = Client(REMOTE_ADDR="10.0.0.2")
    codes = [
        client.post(
            "/accounts/login/",
            {"username": "nobody", "password": "wrong"},
            HTTP_X_FORWARDED_FOR=f"203.0.113.{i}, {CLIENT}",
        ).status_code
        for i in range(7)
    ]
    # It should lock the client out whatever it writes first (axes asks client_address).
    assert codes[-2:] == [429, 429], codes


# -- the deploy check -------------------------------------------------------------------------


def test_it_fails_the_deploy_check_with_proxy_headers_and_no_proxy_count(tmp_path):
    env = project_env(ARENA_DATA_DIR=str(tmp_path), ARENA_PROXY_HEADERS="true", **PRODUCTION)
    done = manage("check", "--deploy", env=env)
    # It should fail, naming both settings.
    assert done.returncode != 0 and "arena.E001" in done.stderr, done.stdout + done.stderr
    assert "ARENA_NUM_PROXIES" in done.stderr and "ARENA_PROXY_HEADERS" in done.stderr
    # It should pass once the count is set.
    counted = manage(
        "check", "--deploy", "--fail-level", "WARNING", env={**env, "ARENA_NUM_PROXIES": "1"}
    )
    assert counted.returncode == 0 and "no issues" in counted.stdout, counted.stderr
