"""Presenter mode in a browser: headless Debian Chromium (Playwright) at 1920x1080 against
``manage.py serve`` (daphne, embedded runner) as a subprocess. An event hiding its results
(two built-in bots, a series of two games) is played; the organiser opens
``/events/<id>/present`` and reveals the first match with → : its replay plays with no result
shown until its last turn, then the result shows (once: on the board) and the public API lists
that match (and not the other). Screenshots go to ``screenshots/presenter-*.png``."""

from __future__ import annotations

import json
import urllib.request

import pytest
from playwright import sync_api as playwright_api

from tests.conftest import REPO
from tests.processes import manage

pytestmark = pytest.mark.xdist_group("arena_site")  # one worker, one server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
SHOTS = REPO / "screenshots"
PASSWORD = "pw-presenter-42"

SETUP = """
import asyncio, time
from competition.models.bots import Bot
from django.contrib.auth import get_user_model
from competition.events import services
from competition.models import Entry, Event, MatchStatus
from competition.runners.play import run_match
User = get_user_model()
User.objects.create_user("organiser", password="{pw}", is_staff=True)
owner = User.objects.create_user("entrant", password="{pw}")
bots = [Bot.objects.create(owner=owner, game="tictactoe", name=name, kind="builtin", target=kind)
        for name, kind in (("Ada", "perfect"), ("Bob", "random"))]
event = Event.objects.create(name="Grand final", game="tictactoe", format="round_robin",
                             series_length=2, pace_ms=150, hide_results=True)
Entry.objects.bulk_create([Entry(event=event, bot=b, seed=i) for i, b in enumerate(bots, 1)])
services.start_event(event)
asyncio.run(run_match())  # one here; the server's runner may take the other
for _ in range(300):
    if not event.matches.exclude(status__in=MatchStatus.done()).exists():
        break
    time.sleep(0.1)
print(event.pk, *event.matches.order_by("round", "id").values_list("pk", flat=True))
"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Playwright's sync API runs its own event loop in this thread (no outbound call here)."""
    yield


@pytest.fixture(scope="module")
def site(arena_site):
    """The event played on the shared server (tests/e2e/conftest.py)."""
    done = manage("shell", "-c", SETUP.format(pw=PASSWORD), env=arena_site["env"])
    assert done.returncode == 0, done.stderr
    event, *matches = map(int, done.stdout.strip().splitlines()[-1].split())
    return {"base": arena_site["base"], "event": event, "matches": matches}


def public_matches(site) -> list[int]:
    url = f"{site['base']}/api/matches/?event={site['event']}"
    with urllib.request.urlopen(url, timeout=10) as response:  # loopback only, signed out
        return [m["id"] for m in json.loads(response.read())["results"]]


def test_it_reveals_a_match_from_the_keyboard_with_its_result_hidden_until_the_end(site):
    # It should show the title card and the keys, play the first match on →  with no result
    # until its last turn, then show the result and publish that match (only that one).
    SHOTS.mkdir(exist_ok=True)
    first, second = site["matches"]
    assert public_matches(site) == []
    errors: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1920, "height": 1080})
            context.set_default_timeout(20_000)
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(site["base"] + "/accounts/login/")
            page.fill("#id_username", "organiser")
            page.fill("#id_password", PASSWORD)
            with page.expect_navigation():
                page.click("form.stack button[type=submit]")
            page.goto(f"{site['base']}/events/{site['event']}/present")
            page.wait_for_function("() => document.body.dataset.ready === '1'")
            assert page.locator("#present-help").is_visible()
            assert "Press → to reveal the first match" in page.inner_text("#present-card")
            page.screenshot(path=str(SHOTS / "presenter-start-1920x1080.png"))

            page.keyboard.press("ArrowRight")
            page.wait_for_function("() => window.arenaPresenter.index >= 2")
            # It should hide the result while the replay plays (no banner text, no scores).
            assert page.inner_text("#p-foot") == ""
            assert "turn" in page.inner_text("#p-status")
            assert page.locator("#present-help").is_hidden()
            page.screenshot(path=str(SHOTS / "presenter-playing-1920x1080.png"))

            page.wait_for_function(f"() => document.body.dataset.revealed === '{first}'")
            # It should say where the result stands between the names (a round robin's round
            # and the game of its series, never "final"), and the result once: on the board,
            # not again under it (its series is not over: nothing to add there).
            status = page.inner_text("#p-status")
            assert status == "Round 1 \u00b7 game 1 of 2 \u00b7 result", status
            assert page.inner_text("#p-foot") == ""
            assert page.evaluate("window.arenaPresenter.phase") == "done"
            page.screenshot(path=str(SHOTS / "presenter-revealed-1920x1080.png"))
            # It should have published the revealed match, and that one only.
            assert public_matches(site) == [first]
            assert second not in public_matches(site)
            # It should show the page without scrollbars on a 1920x1080 projector.
            assert page.evaluate(
                "document.documentElement.scrollHeight <= innerHeight"
                " && document.documentElement.scrollWidth <= innerWidth"
            )
            # It should show the organiser a link to the presenter on the event page, and the
            # public the revealed match only.
            page.goto(f"{site['base']}/events/{site['event']}/")
            assert page.locator("#presenter-link").is_visible()
            page.screenshot(path=str(SHOTS / "presenter-event-page-staff-1920x1080.png"))
            public = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
            public.goto(f"{site['base']}/events/{site['event']}/")
            html = public.content()
            assert f"/matches/{first}/" in html and f"/matches/{second}/" not in html
            assert public.locator("#presenter-link").count() == 0
            public.screenshot(path=str(SHOTS / "presenter-event-page-public-1920x1080.png"))
        finally:
            browser.close()
    assert errors == []
