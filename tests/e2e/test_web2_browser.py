"""Issue 25, part 2 in a real browser (headless Debian Chromium driven by Playwright against
``manage.py serve`` and bots served by ``manage.py serve_bot``), in order: the first hour's
acceptance walk (sign up, register, test call, bench match, another user challenges the bot
from its page, both find the match in ``/matches/`` and on the user pages; nothing but the
registered bot in the account, no seat and no bot without rated games on any leaderboard),
then the live event page (a result appears without reload) and the bracket.

Pages are photographed into ``screenshots/`` (``web2-*``) at 1280 and 390 px wide.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import REPO, free_port
from tests.e2e.test_browser import ARGS, CHROMIUM, SHOTS, match_id
from tests.processes import running

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.xdist_group("arena_demo_site")  # one worker, one server

WIDE, NARROW = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
PASSWORD = "web2-pass-phrase-42"
SEEN: dict = {}


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def site(arena_demo_site):
    """Two bots served beside the shared server with the demo (tests/e2e/conftest.py)."""
    env = arena_demo_site["env"]
    ports = {"a": free_port(), "b": free_port()}
    bot = [sys.executable, str(REPO / "manage.py"), "serve_bot", "tictactoe:random"]
    with (
        running([*bot, "--port", str(ports["a"])], ports["a"], env=env),
        running([*bot, "--port", str(ports["b"])], ports["b"], env=env),
    ):
        yield {
            "base": arena_demo_site["base"],
            "bot_a": f"http://127.0.0.1:{ports['a']}/",
            "bot_b": f"http://127.0.0.1:{ports['b']}/",
            "env": env,
        }


@pytest.fixture(scope="module")
def browser(site):
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)

        def new_page(viewport=WIDE, state=None):
            page = chromium.new_context(viewport=viewport, storage_state=state).new_page()
            page.set_default_timeout(20_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            return page

        yield {"new": new_page, "base": site["base"], "site": site}
        chromium.close()
    # It should never have thrown in a page.
    assert errors == []


#: the top of every bracket round's name
ROUND_HEADS = """() => [...document.querySelectorAll('#bracket .bracket-round h3')]
  .map(h => h.getBoundingClientRect().top)"""


def shots(page, browser, name: str) -> None:
    """The page at 1280 and at 390 px wide (same session), neither wider than its window."""
    page.set_viewport_size(WIDE)
    page.screenshot(path=str(SHOTS / f"web2-{name}-1280.png"), full_page=True)
    narrow = browser["new"](NARROW, page.context.storage_state())
    narrow.goto(page.url)
    narrow.screenshot(path=str(SHOTS / f"web2-{name}-390.png"), full_page=True)
    wide = narrow.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    narrow.context.close()
    assert wide <= 1, f"{name} at 390px is {wide}px too wide"


def sign_up(page, base: str, username: str) -> None:
    page.goto(base + "/accounts/signup/")
    page.fill("#id_username", username)
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("main form.stack button[type=submit]")
    page.wait_for_url("**/bots/")


def register(page, base: str, name: str, url: str) -> int:
    page.goto(base + "/bots/new/")
    page.select_option("#id_game", "tictactoe")
    page.fill("#id_name", name)
    page.fill("#id_target", url)
    page.click("main form.stack button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/$"))
    return int(re.search(r"/bots/(\d+)/", page.url).group(1))


def wait_done(page) -> None:
    page.wait_for_function("() => document.body.dataset.matchDone === '1'", timeout=60_000)


def shell(site, code: str) -> str:
    """Run ``code`` in ``manage.py shell`` on the site's database; its printed output."""
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "shell", "-c", code],
        env=site["env"], cwd=REPO, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()  # Django's shell first says what it imported
    return lines[-1] if lines else ""


def test_a_newcomer_registers_tests_and_benches_a_bot(browser):
    base, page = browser["base"], browser["new"]()
    sign_up(page, base, "ann")
    SEEN["ann_bot"] = register(page, base, "ann-bot", browser["site"]["bot_a"])
    page.click("#test-call")
    page.wait_for_selector("#test-result.good")
    page.goto(base + "/bench/")
    form = page.locator("#bench-tictactoe")
    form.locator("select[name=tictactoe-mine]").select_option(f"bot:{SEEN['ann_bot']}")
    form.locator("select[name=tictactoe-opponent]").select_option("builtin:random")
    form.locator("select[name=tictactoe-pace_ms]").select_option("0")
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    SEEN["bench"] = match_id(page)
    wait_done(page)
    SEEN["ann"] = page


def test_another_user_challenges_it_from_its_page_and_both_find_the_match(browser):
    base, page = browser["base"], browser["new"]()
    sign_up(page, base, "bob")
    bob_bot = register(page, base, "bob-bot", browser["site"]["bot_b"])
    page.goto(f"{base}/bots/{SEEN['ann_bot']}/")
    shots(page, browser, "bot-challenge")
    # It should offer bob's bot in the challenge form on ann's bot page.
    page.select_option("#id_mine", str(bob_bot))
    page.select_option("#id_pace_ms", "0")
    page.click("#challenge-submit")
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    challenge = match_id(page)
    wait_done(page)
    for who, viewer in (("bob", page), ("ann", SEEN["ann"])):
        # It should list the match for both users in /matches/ and on both user pages.
        viewer.goto(f"{base}/matches/?user={who}")
        assert viewer.locator(f"#match-table a[href='/matches/{challenge}/']").count() == 1
        for name in ("ann", "bob"):
            viewer.goto(f"{base}/users/{name}/")
            assert viewer.locator(f"#user-matches a[href='/matches/{challenge}/']").count() == 1
    page.goto(f"{base}/matches/")
    shots(page, browser, "matches")
    page.goto(f"{base}/users/ann/")
    shots(page, browser, "user")
    ann = SEEN["ann"]
    ann.goto(base + "/bots/")
    # It should hold only the bot ann registered: no bench seat, no human seat.
    names = ann.locator("main table tbody tr td:first-child a").all_inner_texts()
    assert names == ["ann-bot"], names
    ann.goto(f"{base}/users/ann/")
    assert ann.locator("#user-bots tbody tr").count() == 1
    # It should rank neither a seat nor a bot with no rated game, on the page or in the API:
    # the challenge was practice (only the ladder's and events' matches are rated).
    ann.goto(f"{base}/games/tictactoe/leaderboard")
    ranked = ann.locator("table.leaderboard tbody tr td:nth-child(2) a").all_inner_texts()
    assert ranked and not {"ann-bot", "bob-bot", "human"} & set(ranked), ranked
    api = ann.request.get(base + "/api/leaderboard/tictactoe/").json()
    assert not {"ann-bot", "bob-bot"} & {row["name"] for row in api["results"]}
    for row in api["results"]:
        assert row["games"] > 0 and row["name"] != "human", row
        assert row["builtin"] == row["name"].startswith("builtin "), row


def test_the_event_page_shows_results_live_and_the_bracket(browser):
    base, site = browser["base"], browser["site"]
    event = shell(
        site,
        "from django.contrib.auth import get_user_model\n"
        "from competition.models.bots import Bot\n"
        "from competition.models import Entry, Event\n"
        "o = get_user_model().objects.create_user('organiser')\n"
        "e = Event.objects.create(name='Live cup', game='tictactoe', format='single_elimination', pace_ms=150, created_by=o)\n"
        "for i, s in enumerate(['perfect', 'random', 'perfect', 'random'], 1):\n"
        "    b = Bot.objects.create(owner=o, game='tictactoe', name=f'cup-{i}', kind='builtin', target=s)\n"
        "    Entry.objects.create(event=e, bot=b, seed=i)\n"
        "print(e.pk)\n",
    )
    page = browser["new"]()
    page.goto(f"{base}/events/{event}/")
    page.evaluate("() => { window.notReloaded = true; }")
    assert page.locator("#event-finished tbody tr").count() == 0
    shell(
        site,
        "from competition.events.services import start_event\n"
        f"from competition.models import Event\nstart_event(Event.objects.get(pk={event}))\n",
    )
    # It should show a finished match without a reload (the event's websocket).
    page.wait_for_selector("#event-finished tbody tr", timeout=60_000)
    assert page.evaluate("() => window.notReloaded === true")
    page.wait_for_function(
        "() => document.getElementById('event-progress').textContent.startsWith('3/')",
        timeout=90_000,
    )
    assert page.evaluate("() => window.notReloaded === true")
    # It should draw the bracket live too: every tie decided and the champion named, no reload.
    page.wait_for_function("() => !document.getElementById('champion').hidden", timeout=30_000)
    assert page.locator("#bracket .bracket-slot.decided").count() == 3
    # It should set the round names on one line (drawn by the page's script here).
    heads = page.evaluate(ROUND_HEADS)
    assert len(heads) == 2 and max(heads) - min(heads) < 1, heads
    assert page.locator("#bracket .why").count() == 3 and "Champion:" in page.inner_text(
        "#champion"
    )
    assert page.evaluate("() => window.notReloaded === true")
    page.reload()
    # It should show the bracket, its champion and why each tie went its way.
    assert page.locator("#bracket .bracket-round").count() == 2
    heads = page.evaluate(ROUND_HEADS)  # and as the server renders it
    assert len(heads) == 2 and max(heads) - min(heads) < 1, heads
    assert "Champion:" in page.inner_text("#champion")
    assert page.locator("#bracket .why").count() == 3
    assert "round 2 of 2" in page.inner_text("#event-round")
    shots(page, browser, "event-bracket")
    # It should say that the bracket scrolls sideways at phone width (wider than the screen),
    # fade the side with more to see, and show no cue where the bracket fits.
    assert page.locator("#bracket-cue").is_hidden()
    narrow = browser["new"](NARROW)
    narrow.goto(f"{base}/events/{event}/")
    narrow.wait_for_selector("#bracket-cue", state="visible")
    assert "more-right" in narrow.get_attribute("#bracket-wrap", "class")
    narrow.locator("#bracket").scroll_into_view_if_needed()
    narrow.screenshot(path=str(SHOTS / "web2-bracket-cue-390.png"))
    narrow.eval_on_selector("#bracket", "el => { el.scrollLeft = el.scrollWidth; }")
    narrow.wait_for_function(
        "() => document.getElementById('bracket-wrap').className.includes('more-left')"
        " && !document.getElementById('bracket-wrap').className.includes('more-right')"
    )
    narrow.context.close()
    page.goto(f"{base}/events/")
    assert page.locator("#finished ~ div a", has_text="Live cup").count() >= 1
    shots(page, browser, "events")


def test_the_home_page_counts_live_matches_without_reload(browser):
    base, site = browser["base"], browser["site"]
    page = browser["new"]()
    page.goto(base + "/")
    page.evaluate("() => { window.notReloaded = true; }")
    live = '[data-game="tictactoe"] .live-now'
    # The demo's showcase keeps a tic-tac-toe match live at any moment: pause it (what is
    # queued still plays), so the count falls to none and the test's own match is the one.
    showcase = (
        "from competition.events.services import {}\n"
        "from competition.models import Event\n"
        "{}(Event.objects.get(showcase=True, game='tictactoe'))\n"
    )
    shell(site, showcase.format("pause_event", "pause_event"))
    page.wait_for_selector(live, state="hidden", timeout=60_000)
    shell(
        site,
        "from django.contrib.auth import get_user_model\n"
        "from competition.models.bots import Bot\n"
        "from competition.matches.lifecycle import create_match\n"
        "o = get_user_model().objects.create_user('home-watcher')\n"
        "a, b = (Bot.objects.create(owner=o, game='tictactoe', name=f'home-{i}', kind='builtin', target='random') for i in (1, 2))\n"
        "print(create_match('tictactoe', [a, b], pace_ms=1500).pk)\n",
    )
    # It should count the match as live once it starts, without a reload (ws/home/) ...
    page.wait_for_selector(live, state="visible", timeout=30_000)
    assert page.inner_text(f"{live} .live-count") == "1"
    page.screenshot(path=str(SHOTS / "web2-home-live-1280.png"))
    # ... and stop counting it once it has ended.
    page.wait_for_selector(live, state="hidden", timeout=60_000)
    assert page.evaluate("() => window.notReloaded === true")
    shell(site, showcase.format("resume_event", "resume_event"))
