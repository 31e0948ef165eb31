"""The match page's viewer (Chromium, Playwright) on a live 256x256 gconway match opened
late: its snapshot comes in parts (``tests/competition/live/test_big_live.py``), and the page shows
every turn and the end, with no reconnect."""

from __future__ import annotations

import json
import sys
import time
import urllib.request

import pytest

from tests.conftest import LOOPBACK, REPO, free_port
from tests.helpers import BIG
from tests.processes import manage, project_env, running

PACED = f"""
from django.contrib.auth import get_user_model
from competition.models.bots import Bot, EndpointKind
from competition.matches import lifecycle
user = get_user_model().objects.create_user("gardener", password="gardener-password-1")
bots = [
    Bot.objects.create(owner=user, game="gconway", name=f"grower-{{i}}",
                       kind=EndpointKind.BUILTIN, target="grower")
    for i in range(2)
]
print(lifecycle.create_match("gconway", bots, seed=3, options={BIG!r}, pace_ms=250).pk)
"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture: Playwright's sync API runs its own loop."""
    yield


def _until_turn(base: str, match_id: int, turn: int) -> None:
    """Wait until the match has ``turn`` turns (plain HTTP: Playwright's sync API holds this
    thread's event loop)."""
    for _ in range(600):
        with urllib.request.urlopen(f"{base}/api/matches/{match_id}/", timeout=30) as r:
            if json.load(r)["turn_count"] >= turn:
                return
        time.sleep(0.1)
    raise AssertionError(f"match {match_id} did not reach turn {turn}")


def test_it_shows_a_live_big_match_opened_late_to_its_end(tmp_path):
    from playwright.sync_api import sync_playwright

    env = project_env(ARENA_DATA_DIR=str(tmp_path), ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running(server, port, env=env, log=tmp_path / "serve.log"):
        done = manage("shell", "-c", PACED, env=env)
        assert done.returncode == 0, done.stderr
        match_id = int(done.stdout.strip().splitlines()[-1])
        with sync_playwright() as pw:
            # (the browser is started first: the page opens at turn 40 of 60, 5 s before the
            # end at 250 ms a turn)
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            try:
                page = browser.new_page()
                _until_turn(base, match_id, 40)
                page.goto(f"{base}/matches/{match_id}/")
                page.wait_for_function(
                    "() => document.body.dataset.matchDone === '1'", timeout=120_000
                )
                got = page.evaluate(
                    "() => [arenaViewer.turns.map((t) => t.number), arenaStats.snapshots]"
                )
            finally:
                browser.close()
    numbers, snapshots = got
    # It should hold every turn, in order, from one snapshot (no reconnect).
    assert numbers == list(range(1, 61))
    assert snapshots == 1
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
