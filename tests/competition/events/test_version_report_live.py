"""A new version's report from outside (issue 50, item 2, acceptance): a fresh server started
as ``make run`` starts it (``manage.py serve``), two users, code bots through the API. v1 plays
10 ladder matches; v2 is uploaded; within 2 minutes the versions show both with records of
their own, every new match names v2, and the report shows v2's replays of v1's losses and
draws beside the originals (API and page). The ladder's interval is short
(``ARENA_LADDER_INTERVAL``) so the test runs in well under its bounds."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import requests
from playwright import sync_api as playwright_api

from games import get_game
from tests.conftest import LOOPBACK, REPO, free_port
from tests.processes import arena, manage, ok, project_env, running

GAME = "tictactoe"
STARTER = get_game(GAME).part("starter_bot.py").read_bytes()

SETUP_USERS = """
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
for name in ("alice", "bob"):
    user, _ = get_user_model().objects.get_or_create(username=name)
    print(name, ApiToken.objects.issue(user, "tests")[1])
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("report-site")
    env = project_env(
        ARENA_DATA_DIR=str(data),
        ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
        ARENA_LADDER_INTERVAL="1",
        ARENA_LADDER_MATCHES_PER_HOUR="3600",
        ARENA_LADDER_MATCHES_PER_MINUTE="120",
        ARENA_RUNNER_PROCESSES="1",
    )
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running(server, port, env=env):
        done = manage("shell", "-c", SETUP_USERS, env=env)
        assert done.returncode == 0, done.stderr
        tokens = dict(line.split() for line in done.stdout.strip().splitlines()[-2:])
        yield {"server": f"http://127.0.0.1:{port}", "tokens": tokens}


def api(site, user: str | None = None) -> requests.Session:
    session = requests.Session()
    if user:
        session.headers["Authorization"] = f"Token {site['tokens'][user]}"
    return session


def code_bot(site, user: str) -> int:
    session = api(site, user)
    made = session.post(
        f"{site['server']}/api/bots/",
        data={"name": f"{user}-code", "game": GAME, "kind": "code"},
        files={"file": ("bot.py", STARTER)},
        timeout=60,
    )
    assert made.status_code == 201, made.text
    bot = made.json()["id"]
    tested = session.post(f"{site['server']}/api/bots/{bot}/test/", timeout=60)
    assert tested.status_code == 200 and tested.json()["fault"] == "ok", tested.text
    return bot


def versions(site, user: str, bot: int) -> dict[int, dict]:
    listed = api(site, user).get(f"{site['server']}/api/bots/{bot}/versions/", timeout=30)
    assert listed.status_code == 200, listed.text
    return {v["number"]: v for v in listed.json()}


def matches_of(site, bot: int) -> list[dict]:
    found = api(site).get(f"{site['server']}/api/matches/", params={"bot": bot}, timeout=30)
    assert found.status_code == 200, found.text
    body = found.json()
    return body["results"] if isinstance(body, dict) else body


def wait_for(seconds: float, check):
    """``check()`` until it returns something true or ``seconds`` pass; its last value."""
    end = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() > end:
            return value
        time.sleep(1)


def test_it_reports_a_new_versions_replays_of_the_old_ones_losses(site, tmp_path):
    alice, bob = code_bot(site, "alice"), code_bot(site, "bob")
    # v1 plays 10 rated ladder matches (against bob's bot and the house bots).
    played = wait_for(240, lambda: versions(site, "alice", alice)[1]["rated_games"] >= 10)
    assert played, versions(site, "alice", alice)
    upload = api(site, "alice").post(
        f"{site['server']}/api/bots/{alice}/versions/",
        files={"file": ("bot.py", STARTER + b"\n# v2\n")},
        timeout=60,
    )
    assert upload.status_code == 201, upload.text
    # (the ladder pairs every second: a match made while the upload was read plays v1)
    newest = max(m["id"] for m in matches_of(site, alice))
    started = time.monotonic()

    def v1_done():
        """No match v1 plays is still waiting or playing (one may have started before v2)."""
        for match in matches_of(site, alice):
            seat = next(p for p in match["participants"] if p["bot"] == alice)
            if seat["version"] == 1 and match["status"] in ("queued", "running"):
                return False
        return True

    assert wait_for(60, v1_done)
    v1_games = versions(site, "alice", alice)[1]["rated_games"]

    def reported():
        body = api(site).get(f"{site['server']}/api/bots/{alice}/versions/2/report/", timeout=30)
        assert body.status_code == 200, body.text
        report = body.json()
        ready = report["games"] and not report["pending"]
        return report if ready and versions(site, "alice", alice)[2]["rated_games"] else None

    report = wait_for(120, reported)
    elapsed = time.monotonic() - started
    # It should, within 2 minutes, show both versions with records of their own ...
    assert report, f"no finished report in {elapsed:.0f} s"
    print(f"v2's report of {report['games']} replays finished {elapsed:.1f} s after the upload")
    table = versions(site, "alice", alice)
    assert table[2]["rated_games"] >= 1 and table[1]["rated_games"] == v1_games
    # ... every new match naming v2 ...
    new = [m for m in matches_of(site, alice) if m["id"] > newest]
    assert new
    for match in new:
        seat = next(p for p in match["participants"] if p["bot"] == alice)
        assert seat["version"] == 2, match
    # ... and v2's replays of v1's losses and draws, each beside its original.
    assert 1 <= report["games"] <= 10 and report["previous"] == 1
    for row in report["rows"]:
        assert row["original"]["result"] in ("lost", "drew")
        assert row["replay"]["result"] in ("won", "drew", "lost")
        original = api(site).get(
            f"{site['server']}/api/matches/{row['original']['match']}/", timeout=30
        )
        replay = api(site).get(
            f"{site['server']}/api/matches/{row['replay']['match']}/", timeout=30
        )
        assert original.json()["seed"] == replay.json()["seed"] and not replay.json()["rated"]
    assert report["sentence"].startswith(f"v2 wins {report['wins']} of the {report['games']} ")
    page = api(site).get(f"{site['server']}/bots/{alice}/", timeout=30).text  # anyone
    assert report["sentence"] in page and 'id="version-report"' in page
    assert bob in {o["bot"] for row in report["rows"] for o in row["original"]["opponents"]} or all(
        o["house"] for row in report["rows"] for o in row["original"]["opponents"]
    )
    # It should say the same in the CLI, each replay beside its original.
    home = tmp_path / "home"
    home.mkdir()
    login = arena(home, "--server", site["server"], "login", stdin=site["tokens"]["alice"] + "\n")
    assert "logged in" in ok(login)
    said = ok(arena(home, "report", str(alice)))
    assert said.splitlines()[0] == report["sentence"], said
    for row in report["rows"]:
        line = next(ln for ln in said.splitlines() if f"#{row['replay']['match']}" in ln)
        assert f"#{row['original']['match']}" in line and row["replay"]["result"] in line
    shots(site, alice, report["rows"][0]["replay"]["match"])


def shots(site, bot: int, replay: int) -> None:
    """The bot page with its report, and a replay's page, at 1280 and 390 wide (in
    ``screenshots/``)."""
    folder = Path(os.environ.get("ARENA_SHOTS", REPO / "screenshots"))
    folder.mkdir(exist_ok=True)
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium")
        try:
            for width in (1280, 390):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(f"{site['server']}/bots/{bot}/")
                page.screenshot(path=str(folder / f"version-report-{width}.png"), full_page=True)
                section = page.locator("#version-report")
                section.screenshot(path=str(folder / f"version-report-section-{width}.png"))
                page.goto(f"{site['server']}/matches/{replay}/")
                assert page.locator("#replay-of").is_visible()
                page.screenshot(path=str(folder / f"version-replay-match-{width}.png"))
                page.close()
        finally:
            browser.close()
