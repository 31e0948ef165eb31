"""The standing ladder from outside (issue 38, acceptance): a fresh server started as
``make run`` starts it (``manage.py serve``), two users, HTTP bots on loopback
(``serve_bot``). A bot registered and test-called plays at least 3 finished, rated ladder
matches within 2 minutes without any challenge, and is ranked on the leaderboard (web and
API). The matchmaking interval is set short (``ARENA_LADDER_INTERVAL``) so the test runs in
well under 2 minutes."""

from __future__ import annotations

import sys
import time

import pytest
import requests

from tests.conftest import LOOPBACK, REPO, free_port
from tests.processes import manage, project_env, running

GAME = "tictactoe"

SETUP_USERS = """
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
for name in ("alice", "bob"):
    user, _ = get_user_model().objects.get_or_create(username=name)
    print(name, ApiToken.objects.issue(user, "tests")[1])
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("ladder-site")
    env = project_env(
        ARENA_DATA_DIR=str(data),
        ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
        ARENA_LADDER_INTERVAL="1",
        ARENA_LADDER_MATCHES_PER_HOUR="3600",
        ARENA_LADDER_MATCHES_PER_MINUTE="120",
        ARENA_RUNNER_PROCESSES="1",
    )
    ports = [free_port(), free_port()]
    port = free_port()
    bot = [sys.executable, str(REPO / "manage.py"), "serve_bot", f"{GAME}:random"]
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with (
        running([*bot, "--port", str(ports[0])], ports[0], env=env),
        running([*bot, "--port", str(ports[1])], ports[1], env=env),
        running(server, port, env=env),
    ):
        done = manage("shell", "-c", SETUP_USERS, env=env)
        assert done.returncode == 0, done.stderr
        tokens = dict(line.split() for line in done.stdout.strip().splitlines()[-2:])
        yield {
            "server": f"http://127.0.0.1:{port}",
            "tokens": tokens,
            "bots": [f"http://127.0.0.1:{p}/" for p in ports],
        }


def api(site, user: str | None = None) -> requests.Session:
    session = requests.Session()
    if user:
        session.headers["Authorization"] = f"Token {site['tokens'][user]}"
    return session


def register_and_test(site, user: str, url: str) -> int:
    session = api(site, user)
    made = session.post(
        f"{site['server']}/api/bots/",
        json={"name": f"{user}-bot", "game": GAME, "kind": "http", "target": url},
        timeout=30,
    )
    assert made.status_code == 201, made.text
    bot = made.json()["id"]
    tested = session.post(f"{site['server']}/api/bots/{bot}/test/", timeout=60)
    assert tested.status_code == 200 and tested.json()["fault"] == "ok", tested.text
    return bot


def finished_rated(site, bot: int) -> list[int]:
    """The bot's ended ladder matches that finished with a rated result."""
    session = api(site)
    status = session.get(f"{site['server']}/api/bots/{bot}/ladder/", timeout=30).json()
    found = []
    for match_id in status["last_matches"]:
        match = session.get(f"{site['server']}/api/matches/{match_id}/", timeout=30).json()
        if match["status"] == "finished" and match["rated"]:
            found.append(match_id)
    return found


def test_it_ranks_a_new_bot_through_the_ladder_within_two_minutes(site):
    alice = register_and_test(site, "alice", site["bots"][0])
    bob = register_and_test(site, "bob", site["bots"][1])
    started = time.monotonic()
    # It should play at least 3 finished, rated ladder matches for each new bot within two
    # minutes, with no challenge sent by anyone.
    done = {alice: [], bob: []}
    while time.monotonic() - started < 120 and min(len(v) for v in done.values()) < 3:
        time.sleep(2)
        done = {b: finished_rated(site, b) for b in done}
    elapsed = time.monotonic() - started
    assert all(len(v) >= 3 for v in done.values()), (done, elapsed)
    print(f"3 rated ladder matches each in {elapsed:.1f} s")
    # It should rank them on the leaderboard, in the API and on the page.
    board = api(site).get(f"{site['server']}/api/leaderboard/{GAME}/", timeout=30).json()
    ranked = {row["bot"]: row for row in board["results"]}
    assert alice in ranked and bob in ranked
    assert ranked[alice]["games"] >= 3 and ranked[alice]["rank"] >= 1
    assert alice not in {row["bot"] for row in board["unranked"]}
    page = api(site).get(f"{site['server']}/games/{GAME}/leaderboard", timeout=30).text
    ranked_part = page.split('id="unranked"')[0]
    assert "alice-bot" in ranked_part and "bob-bot" in ranked_part
    # It should show the bot's ladder status and last matches on its page.
    page = api(site).get(f"{site['server']}/bots/{alice}/", timeout=30).text
    assert "is in the ladder" in page and 'id="ladder-last"' in page
