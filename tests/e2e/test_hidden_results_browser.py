"""Issue 46's acceptance for R1 in a browser: headless Debian Chromium (Playwright) against
``manage.py serve`` (daphne, embedded runner) as a subprocess of its own (its mail goes to a
real SMTP server on loopback, aiosmtpd in this process). A round robin hiding its results
(four bots of four owners: one an HTTP bot whose server is gone, forfeiting every game) is
played to its end by the server's runner; the mail catcher and every user's notifications
hold no placing and the event page says "Play over · results being revealed" until the
organiser has revealed the last match on the presenter page (→, a match at a time); then each
entrant has one notice and one mail with the placing the big screen's podium shows.
Screenshots go to ``screenshots/hidden-*.png``."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from playwright import sync_api as playwright_api

from tests.conftest import REPO, free_port
from tests.e2e.conftest import served
from tests.processes import manage
from tests.servers import mail_catcher

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
SHOTS = REPO / "screenshots"
PASSWORD = "pw-hidden-cup-42"
PLAY_OVER = "Play over · results being revealed"

SETUP = """
import time
from competition.models.bots import Bot
from django.contrib.auth import get_user_model
from competition.events import services
from competition.models import Entry, Event, MatchStatus
User = get_user_model()
User.objects.create_user("organiser", password="{pw}", is_staff=True)
bots = []
for name, kind, target in (("Ada", "builtin", "random"), ("Bea", "builtin", "random"),
                           ("Cy-gone", "http", "{gone}"), ("Zed", "builtin", "perfect")):
    owner = User.objects.create_user(name.lower(), email=name.lower() + "@example.test")
    bots.append(Bot.objects.create(owner=owner, game="tictactoe", name=name, kind=kind,
                                   target=target))
event = Event.objects.create(name="Hidden cup", game="tictactoe", format="round_robin",
                             pace_ms=60, hide_results=True)
Entry.objects.bulk_create([Entry(event=event, bot=b, seed=i) for i, b in enumerate(bots, 1)])
services.start_event(event)
for _ in range(1200):  # the server's runner plays them
    if not event.matches.exclude(status__in=MatchStatus.done()).exists():
        break
    time.sleep(0.1)
event.refresh_from_db()
print(event.pk, event.status, *event.matches.order_by("round", "id").values_list("pk", flat=True))
"""

NOTICES = """
import json
from competition.models import Notification
print(json.dumps([[n.user.username, n.kind, n.text]
                  for n in Notification.objects.select_related("user").order_by("id")]))
"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Playwright's sync API runs its own event loop in this thread (no outbound call here)."""
    yield


def notices(env) -> list[list[str]]:
    """Every user's notifications: ``[username, kind, text]``, oldest first."""
    done = manage("shell", "-c", NOTICES, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def placings_told(inbox, env) -> list[str]:
    """Whatever tells a placing or an end: notices of any user, mails in the catcher."""
    told = [text for _, kind, text in notices(env) if kind == "event_ended" or " placed " in text]
    return told + [m for m in inbox.texts() if " placed " in m or "Event ended" in m]


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:  # loopback only, signed out
        return json.loads(response.read())


def assert_nothing_told(site, inbox, event: int) -> None:
    # It should hold no placing in any notice nor mail, and say the play is over, not that
    # the event finished (the API too).
    assert placings_told(inbox, site["env"]) == []
    assert get_json(f"{site['base']}/api/events/{event}/")["status"] == "revealing"
    assert get_json(f"{site['base']}/events/{event}/screen.json")["show"]["podium"] is None


def test_it_tells_each_entrant_the_podiums_placing_after_the_last_reveal_only(tmp_path):
    SHOTS.mkdir(exist_ok=True)
    gone = f"http://127.0.0.1:{free_port()}/"  # nothing listens there
    with mail_catcher() as (inbox, smtp_port):
        mail = {
            "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "EMAIL_HOST": "127.0.0.1",
            "EMAIL_PORT": str(smtp_port),
        }
        with served(tmp_path, "--no-demo", ARENA_RUNNER_PROCESSES="0", **mail) as site:
            made = manage("shell", "-c", SETUP.format(pw=PASSWORD, gone=gone), env=site["env"])
            assert made.returncode == 0, made.stderr
            event, status, *matches = made.stdout.strip().splitlines()[-1].split()
            event, matches = int(event), [int(m) for m in matches]
            assert status == "revealing" and len(matches) == 6
            # (the entrants were told the start by mail: the catcher receives)
            deadline = time.monotonic() + 60
            while sum("Event started" in m for m in inbox.texts()) < 4:
                assert time.monotonic() < deadline, inbox.texts()
                time.sleep(0.2)
            assert_nothing_told(site, inbox, event)
            present(site, inbox, event, matches)
            told = wait_for_placings(site, inbox)
            podium = get_json(f"{site['base']}/events/{event}/screen.json")["show"]["podium"]
            ranks = {row["name"]: row["placing"] for row in podium["top"]}
            # It should tell each entrant once, with the placing the podium shows (the
            # forfeiting bot last, never by its name).
            by_user = {}
            for user, kind, text in notices(site["env"]):
                if kind == "event_ended":
                    by_user.setdefault(user, []).append(text)
            assert sorted(by_user) == ["ada", "bea", "cy-gone", "zed"]
            assert by_user["cy-gone"] == ["Hidden cup ended: Cy-gone placed 4th of 4."]
            for name, placing in ranks.items():
                assert by_user[name.lower()] == [f"Hidden cup ended: {name} placed {placing} of 4."]
            # (the top three places: three rows, or more for a shared third place)
            top = podium["top"]
            assert [row["rank"] for row in top] == list(range(1, len(top) + 1))
            assert len(top) == 3 or all(row["place"] <= 3 for row in top)
            assert "Cy-gone" not in ranks
            mails = [m for m in told if "Event ended" in m]
            assert len(mails) == 4
            for texts in by_user.values():
                assert sum(texts[0] in m for m in mails) == 1


def present(site, inbox, event: int, matches: list[int]) -> None:
    """The organiser reveals every match on the presenter page; nothing is told before the
    last. The public event page is photographed before the first reveal and after the last."""
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            public = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            public.goto(f"{site['base']}/events/{event}/")
            # It should say the play is over, not that the event finished.
            assert public.inner_text("#event-status") == PLAY_OVER
            assert "Champion" not in public.content()
            public.screenshot(path=str(SHOTS / "hidden-event-before-reveal.png"), full_page=True)
            context = browser.new_context(viewport={"width": 1920, "height": 1080})
            context.set_default_timeout(30_000)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(site["base"] + "/accounts/login/")
            page.fill("#id_username", "organiser")
            page.fill("#id_password", PASSWORD)
            with page.expect_navigation():
                page.click("form.stack button[type=submit]")
            page.goto(f"{site['base']}/events/{event}/present")
            page.wait_for_function("() => document.body.dataset.ready === '1'")
            for i, match in enumerate(matches):
                page.keyboard.press("ArrowRight")  # the next match plays to its result
                page.wait_for_function(f"() => document.body.dataset.revealed === '{match}'")
                if i < len(matches) - 1:
                    # It should tell no placing while a result is still hidden.
                    assert_nothing_told(site, inbox, event)
            assert errors == []
            public.goto(f"{site['base']}/events/{event}/")
            assert public.inner_text("#event-status") == "Finished"
            public.screenshot(path=str(SHOTS / "hidden-event-after-reveal.png"), full_page=True)
        finally:
            browser.close()


def wait_for_placings(site, inbox) -> list[str]:
    """What is told once the four notices and their mails are in (the mails leave a thread)."""
    deadline = time.monotonic() + 60
    while True:
        told = placings_told(inbox, site["env"])
        if len(told) >= 8:
            return told
        assert time.monotonic() < deadline, told
        time.sleep(0.5)
