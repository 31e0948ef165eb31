"""``arena consent``, ``arena challenges``, ``arena accept`` and ``arena decline`` as a
subprocess against a live server (``manage.py serve``): carol sets her bot to ask, dave's
challenges wait; the one she accepts plays to its end, the one she declines never plays, and
``arena vs`` counts the played match."""

from __future__ import annotations

import json
import sys
import time
import urllib.request

import pytest

from tests.conftest import LOOPBACK, REPO, free_port
from tests.processes import arena, manage, ok, project_env, running

SETUP = """
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
from competition.models.bots import Bot
User = get_user_model()
carol, dave = User.objects.create_user("carol"), User.objects.create_user("dave")
mine = Bot.objects.create(owner=carol, game="tictactoe", name="carols", kind="builtin", target="random")
theirs = Bot.objects.create(owner=dave, game="tictactoe", name="daves", kind="builtin", target="random")
print(ApiToken.objects.issue(carol, "tests")[1], ApiToken.objects.issue(dave, "tests")[1], mine.pk, theirs.pk)
"""


def api(base: str, token: str, method: str, path: str, body: dict | None = None):
    request = urllib.request.Request(
        base + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli-consent")
    env = project_env(
        ARENA_DATA_DIR=str(data), ARENA_BOT_ALLOW_NETWORKS=LOOPBACK, ARENA_LADDER="false"
    )
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running(server, port, env=env):
        done = manage("shell", "-c", SETUP, env=env)
        assert done.returncode == 0, done.stderr
        carol, dave, mine, theirs = done.stdout.split()[-4:]
        yield {
            "base": f"http://127.0.0.1:{port}",
            "carol": carol,
            "dave": dave,
            "mine": int(mine),
            "theirs": int(theirs),
        }


def test_it_accepts_and_declines_challenges_from_the_command_line(site, tmp_path):
    base = site["base"]
    ok(arena(tmp_path, "--server", base, "login", stdin=site["carol"] + "\n"))
    # It should set the bot to ask, in words.
    said = ok(arena(tmp_path, "consent", str(site["mine"]), "ask"))
    assert "each challenge of it waits for your accept" in said
    body = {"game": "tictactoe", "bots": [site["theirs"], site["mine"]]}
    first = api(base, site["dave"], "POST", "/api/matches/challenge/", body)["id"]
    second = api(base, site["dave"], "POST", "/api/matches/challenge/", body)["id"]
    # It should list both waiting challenges, with dave as the challenger.
    listed = ok(arena(tmp_path, "challenges"))
    assert str(first) in listed and str(second) in listed and "dave" in listed
    # Accepted, the first plays to its end; declined, the second never plays.
    assert "it plays now" in ok(arena(tmp_path, "accept", str(first)))
    assert "it will not play" in ok(arena(tmp_path, "decline", str(second)))
    deadline = time.monotonic() + 120
    while api(base, site["dave"], "GET", f"/api/matches/{first}/")["status"] != "finished":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert api(base, site["dave"], "GET", f"/api/matches/{second}/")["status"] == "cancelled"
    # It should refuse a second answer in one line, and tell dave both answers.
    again = arena(tmp_path, "accept", str(second))
    assert again.returncode == 1 and f"Challenge {second} was not found." in again.stderr
    told = " ".join(
        n["text"] for n in api(base, site["dave"], "GET", "/api/notifications/")["results"]
    )
    assert "carol accepted your challenge" in told and "carol declined your challenge" in told
    # It should count the played match in the head to head.
    assert "of 1" in ok(arena(tmp_path, "vs", str(site["mine"]), str(site["theirs"])))
