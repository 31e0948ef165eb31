"""Issue 38's acceptance from outside: a fresh ``manage.py serve``, two users, HTTP bots
served by ``manage.py serve_bot`` on loopback. When one bot's server is stopped, its
matches forfeit (``connect``), bot health pauses it, and its owner has a notification in
the API and the mail in the console backend's output (the server's log)."""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.conftest import REPO, free_port
from tests.e2e.conftest import served
from tests.processes import manage, running

USERS = """
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
User = get_user_model()
for name in ("ann", "bob"):
    user = User.objects.create_user(name, email=f"{name}@example.test", password=f"pw-{name}-1")
    print(name, ApiToken.objects.issue(user, "tests")[1])
"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture: this test makes no outbound call itself."""
    yield


def call(base: str, token: str, method: str, path: str, body: dict | None = None):
    request = urllib.request.Request(
        base + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def console_subjects(output: str) -> list[str]:
    """The decoded subjects of the mails Django's console backend printed in ``output``."""
    from email import message_from_string
    from email.header import decode_header, make_header

    found = []
    for part in output.split("Content-Type: text/plain")[1:]:
        message = message_from_string("Content-Type: text/plain" + part)
        if message["Subject"]:
            found.append(str(make_header(decode_header(message["Subject"]))).replace("\n", ""))
    return found


def test_it_tells_the_owner_by_site_and_mail_when_a_stopped_bot_is_paused(tmp_path):
    bot_argv = [sys.executable, str(REPO / "manage.py"), "serve_bot", "tictactoe:random"]
    ann_port, bob_port = free_port(), free_port()
    with (
        served(
            tmp_path, "--no-demo", ARENA_BOT_HEALTH_FORFEITS="2", ARENA_RUNNER_PROCESSES="0"
        ) as site,
        running([*bot_argv, "--port", str(bob_port)], bob_port, env=site["env"]),
    ):
        base, env, log = site["base"], site["env"], site["log"]
        made = manage("shell", "-c", USERS, env=env)
        assert made.returncode == 0, made.stderr
        tokens = dict(
            line.split() for line in made.stdout.splitlines() if line.startswith(("ann ", "bob "))
        )
        ids = {}
        with running([*bot_argv, "--port", str(ann_port)], ann_port, env=env):
            for name, bot_port in (("ann", ann_port), ("bob", bob_port)):
                status, bot = call(
                    base,
                    tokens[name],
                    "POST",
                    "/api/bots/",
                    {
                        "game": "tictactoe",
                        "name": f"{name}-bot",
                        "kind": "http",
                        "target": f"http://127.0.0.1:{bot_port}/",
                    },
                )
                assert status == 201, bot
                ids[name] = bot["id"]
        # ann's bot server is stopped: bob challenges it until bot health pauses it.
        for _ in range(2):
            status, match = call(
                base,
                tokens["bob"],
                "POST",
                "/api/matches/challenge/",
                {"game": "tictactoe", "bots": [ids["bob"], ids["ann"]]},
            )
            assert status == 201, match
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                _, seen = call(base, tokens["bob"], "GET", f"/api/matches/{match['id']}/")
                if seen["status"] not in ("queued", "running"):
                    break
                time.sleep(0.3)
            assert seen["status"] == "forfeited", seen
        _, bot = call(base, tokens["ann"], "GET", f"/api/bots/{ids['ann']}/")
        # It should have paused ann's bot after two forfeits in a row.
        assert bot["status"] == "paused", bot
        # It should tell ann in the site (the API lists it) and not bob.
        _, notes = call(base, tokens["ann"], "GET", "/api/notifications/")
        kinds = [n["kind"] for n in notes["results"]]
        assert "bot_paused" in kinds, notes
        paused = next(n for n in notes["results"] if n["kind"] == "bot_paused")
        assert (
            "ann-bot was paused: it forfeited its last 2 matches in a row (could not be reached)."
            in paused["text"]
        )
        assert "Its last fault: could not connect to http://127.0.0.1:" in paused["text"]
        _, theirs = call(base, tokens["bob"], "GET", "/api/notifications/")
        assert "bot_paused" not in [n["kind"] for n in theirs["results"]]
        # It should print the mail in the console backend's output, to ann.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not console_subjects(log.read_text()):
            time.sleep(0.2)
        output = log.read_text()
        # (its subject is the notice's sentence, cut at a word with an ellipsis: encoded)
        subjects = console_subjects(output)
        assert any(s.startswith("[Arena] ann-bot was paused") for s in subjects), output[-3000:]
        assert "To: ann@example.test" in output
