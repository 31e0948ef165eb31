"""Issue 38's registration in a real browser (headless Debian Chromium, Playwright) against
``manage.py serve`` with HTTP bots served by ``manage.py serve_bot`` on loopback: an
organiser opens registration for a round robin in the admin; users enter from the event
page and one withdraws; the organiser brings the start time forward (no wait sized on a
guess at how long the entries take); at its start time the event starts by itself (the
embedded scheduler's step) with the entrants that remain, and they get the start and result
notices (the bell, the notifications page). Screenshots go to ``screenshots/``."""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from playwright import sync_api as playwright_api

from tests.conftest import REPO, free_port
from tests.e2e.conftest import ARGS, CHROMIUM, SHOTS, served
from tests.processes import manage, running

SETUP = """
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
User = get_user_model()
User.objects.create_superuser("org", email="org@example.test", password="pw-org-pass-1")
for name in ("ann", "bob", "cat"):
    user = User.objects.create_user(name, email=f"{name}@example.test", password=f"pw-{name}-pass-1")
    print(name, ApiToken.objects.issue(user, "tests")[1])
"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture: Playwright's sync API runs its own loop."""
    yield


def api(base: str, token: str, method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        base + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.loads(response.read())


def sign_in(browser, base: str, name: str, password: str, path: str = "/accounts/login/"):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(base + path)
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", password)
    page.locator("form [type=submit]").last.click()
    page.wait_for_load_state()
    return page, errors


def set_start(org, starts: datetime) -> None:
    """Fill the admin event form's start time with ``starts`` (UTC) and save the form."""
    org.fill("input[name=starts_at_0]", f"{starts:%Y-%m-%d}")
    org.fill("input[name=starts_at_1]", f"{starts:%H:%M:%S}")
    org.locator("input[name=_save]").click()
    org.wait_for_load_state()


def test_it_opens_registration_lets_users_enter_and_starts_the_event_by_itself(tmp_path):
    bot_port = free_port()
    bot = [sys.executable, str(REPO / "manage.py"), "serve_bot", "tictactoe:random"]
    SHOTS.mkdir(exist_ok=True)
    with (
        served(
            tmp_path, "--no-demo", ARENA_RUNNER_PROCESSES="0", ARENA_NOTIFY_INTERVAL="1"
        ) as site,
        running([*bot, "--port", str(bot_port)], bot_port, env=site["env"]),
        playwright_api.sync_playwright() as p,
    ):
        base = site["base"]
        made = manage("shell", "-c", SETUP, env=site["env"])
        assert made.returncode == 0, made.stderr
        tokens = dict(
            line.split()
            for line in made.stdout.splitlines()
            if line.startswith(("ann ", "bob ", "cat "))
        )
        for name in tokens:
            api(
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
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        # The organiser opens registration for a round robin from the admin.
        org, org_errors = sign_in(browser, base, "org", "pw-org-pass-1", "/admin/login/")
        org.goto(base + "/admin/competition/event/add/")
        now = datetime.now(UTC)
        org.fill("input[name=name]", "Spring cup")
        org.select_option("select[name=game]", "tictactoe")
        org.select_option("select[name=format]", "round_robin")
        org.fill("input[name=registration_opens_0]", f"{now - timedelta(minutes=1):%Y-%m-%d}")
        org.fill("input[name=registration_opens_1]", f"{now - timedelta(minutes=1):%H:%M:%S}")
        # (a start an hour away: the entries below take what they take; the organiser then
        # brings the start forward, once they are in)
        set_start(org, now + timedelta(hours=1))
        assert "was added successfully" in org.content(), org.content()[:3000]
        event_id = api(base, tokens["ann"], "GET", "/api/events/")["results"][0]["id"]
        # Three users enter from the event page (listed first on /events/); cat withdraws.
        pages = {}
        for name in ("ann", "bob", "cat"):
            page, errors = sign_in(browser, base, name, f"pw-{name}-pass-1")
            page.goto(base + "/events/")
            page.locator("#open-events a", has_text="Spring cup").click()
            page.wait_for_selector("#enter-form")
            if name == "ann":
                page.screenshot(
                    path=str(SHOTS / "registration-event-entry-form.png"), full_page=True
                )
            page.locator("#enter-form button[type=submit]").click()
            page.wait_for_load_state()
            # It should say the bot is entered and list it with a withdraw button.
            assert f"{name}-bot is entered." in page.content()
            pages[name] = (page, errors)
        cat = pages["cat"][0]
        cat.locator("#my-entries button", has_text="Withdraw").click()
        cat.wait_for_load_state()
        assert "cat-bot was withdrawn." in cat.content()
        # The organiser brings the start forward to a few seconds from now, in the admin.
        org.goto(base + f"/admin/competition/event/{event_id}/change/")
        set_start(org, datetime.now(UTC) + timedelta(seconds=3))
        assert "was changed successfully" in org.content(), org.content()[:3000]
        # It should start by itself at its start time with ann and bob, then finish.
        deadline = time.monotonic() + 150
        status = ""
        while time.monotonic() < deadline:
            event = api(base, tokens["ann"], "GET", f"/api/events/{event_id}/")
            status = event["status"]
            if status in ("finished", "cancelled"):
                break
            time.sleep(1)
        assert status == "finished", event
        assert sorted(e["name"] for e in event["entries"]) == ["ann-bot", "bob-bot"]
        # It should tell the entrants it started and how they placed; cat nothing of it.
        ann = pages["ann"][0]
        ann.goto(base + f"/events/{event_id}/")
        ann.wait_for_function("document.querySelector('#bell-count').textContent !== '0'")
        ann.screenshot(path=str(SHOTS / "registration-event-with-bell.png"))
        ann.goto(base + "/notifications/")
        notes = ann.locator("#notifications").inner_text()
        assert "Spring cup started with 2 entries. Your bot: ann-bot." in notes
        assert "Spring cup ended: ann-bot placed" in notes
        ann.screenshot(path=str(SHOTS / "registration-notifications.png"), full_page=True)
        cat_notes = api(base, tokens["cat"], "GET", "/api/notifications/")["results"]
        assert not [n for n in cat_notes if n["kind"] in ("event_started", "event_ended")]
        # It should raise no script error on any page.
        assert not org_errors and all(not errors for _, errors in pages.values())
        browser.close()
