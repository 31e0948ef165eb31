"""Issue 50, item 6 in a real browser (headless Debian Chromium, Playwright) against
``manage.py serve``: a challenge of a bot whose owner chose "ask" waits (the match pending,
the challenger told so on the match page) until the owner accepts it from the notice's
buttons, then it plays to its end; a declined one never plays; both parties are told; the
head-to-head page counts the played match. Screenshots at 1280 and 390 wide."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from playwright import sync_api as playwright_api

from tests.e2e.conftest import ARGS, CHROMIUM, SHOTS, served
from tests.processes import manage

SETUP = """
from django.contrib.auth import get_user_model
from competition.models.bots import Bot
User = get_user_model()
ann = User.objects.create_user("ann", password="pw-ann-pass-1")
bob = User.objects.create_user("bob", password="pw-bob-pass-1")
mine = Bot.objects.create(owner=ann, game="tictactoe", name="asker", kind="builtin", target="random", challenges="ask")
theirs = Bot.objects.create(owner=bob, game="tictactoe", name="challenger", kind="builtin", target="random")
print(mine.pk, theirs.pk)
"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture: Playwright's sync API runs its own loop."""
    yield


def status_of(base: str, match_id: int) -> str:
    with urllib.request.urlopen(f"{base}/api/matches/{match_id}/", timeout=20) as response:
        return json.loads(response.read())["status"]


def wait_status(base: str, match_id: int, wanted: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while (status := status_of(base, match_id)) != wanted:
        assert time.monotonic() < deadline, (match_id, status)
        time.sleep(0.2)


def sign_in(browser, base: str, name: str, width: int = 1280):
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(base + "/accounts/login/")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", f"pw-{name}-pass-1")
    page.locator("form [type=submit]").last.click()
    page.wait_for_load_state()
    return page


def challenge(page, base: str, bot_id: int) -> int:
    page.goto(f"{base}/bots/{bot_id}/")
    assert "its owner is asked first" in page.locator("#challenge-consent").inner_text()
    page.locator("#challenge-submit").click()
    page.wait_for_url("**/matches/*/")
    return int(page.url.rstrip("/").rsplit("/", 1)[-1])


def shots(browser, base: str, who: str, path: str, name: str) -> None:
    for width in (1280, 390):
        page = sign_in(browser, base, who, width)
        page.goto(base + path)
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        page.context.close()


def test_it_plays_an_asked_challenge_once_accepted_and_never_a_declined_one(tmp_path):
    SHOTS.mkdir(exist_ok=True)
    with served(tmp_path, "--no-demo") as site:
        done = manage("shell", "-c", SETUP, env=site["env"])
        assert done.returncode == 0, done.stderr
        asker, challenger = (int(x) for x in done.stdout.split()[-2:])
        base = site["base"]
        with playwright_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            bob, ann = sign_in(browser, base, "bob"), sign_in(browser, base, "ann")
            # It should hold bob's challenge pending and say whose answer it waits for.
            first = challenge(bob, base, asker)
            assert (
                "waits for ann's answer for asker" in bob.locator("#challenge-waiting").inner_text()
            )
            assert status_of(base, first) == "pending"
            # ... in words, not as live (nothing plays yet), once the viewer has its snapshot.
            bob.wait_for_function("document.getElementById('turn-label').textContent.endsWith('+')")
            status = bob.locator("#match-status").inner_text()
            assert status == "Waiting for the challenged owner's answer", status
            assert bob.locator("#live-badge").is_hidden()
            bob.screenshot(path=str(SHOTS / "challenge-pending-1280.png"))
            # It should tell ann with accept and decline buttons in the notice.
            ann.goto(base + "/notifications/")
            assert ann.locator(f"[data-accept='{first}']").count() == 1
            ann.screenshot(path=str(SHOTS / "challenge-notice-1280.png"), full_page=True)
            ann.locator(f"[data-accept='{first}']").click()
            ann.wait_for_load_state()
            assert f"Accepted challenge {first}" in ann.content()
            # It should then play the match to its end, and tell bob it was accepted.
            wait_status(base, first, "finished")
            bob.goto(base + "/notifications/")
            assert "ann accepted your challenge" in bob.locator("#notifications").inner_text()
            # A declined one (from the challenges page) should never play; bob is told.
            second = challenge(bob, base, asker)
            ann.goto(base + "/challenges/")
            shots(browser, base, "ann", "/challenges/", "challenges-waiting")
            ann.locator(f"[data-decline='{second}']").click()
            ann.wait_for_load_state()
            assert status_of(base, second) == "cancelled"
            bob.goto(f"{base}/matches/{second}/")
            assert "declined this challenge" in bob.locator("#challenge-answered").inner_text()
            bob.goto(base + "/notifications/")
            assert "ann declined your challenge" in bob.locator("#notifications").inner_text()
            # The head-to-head page should count the played match, linked from the match page.
            bob.goto(f"{base}/matches/{first}/")
            bob.locator("#vs-link").click()
            bob.wait_for_load_state()
            assert "of 1 match against" in bob.locator("#h2h-overall").inner_text()
            assert bob.locator("#h2h-matches tbody tr").count() == 1
            shots(browser, base, "bob", f"/bots/{asker}/vs/{challenger}/", "head-to-head")
            shots(browser, base, "ann", f"/bots/{asker}/edit/", "bot-edit-challenges")
            assert status_of(base, second) == "cancelled"  # still: it never played
            browser.close()
