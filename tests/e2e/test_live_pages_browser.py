"""Issue 39 item 4 in a real browser (headless Debian Chromium, Playwright, against
``manage.py serve``): an event page opened before its start and never reloaded ends with the
header, status, points and champion a fresh load shows; the home page shows a match that
starts after it was opened (its "live" link opens it, its latest matches list it, then say
how it ended), never reloaded; an event page shows each result as it comes and draws the
bracket live (issue 25, part 2), and the home page counts a live match without a reload.

Pages are photographed into ``screenshots/`` (``live-*``) at 1920x1080 and at 390 px wide.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import NARROW, SHOTS, shell, shots

pytestmark = pytest.mark.xdist_group("arena_demo_site")  # one worker, one server


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def browser(demo_pages):
    """Pages on the shared demo server with two bots beside it (tests/e2e/conftest.py)."""
    return demo_pages


#: the top of every bracket round's name
ROUND_HEADS = """() => [...document.querySelectorAll('#bracket .bracket-round h3')]
  .map(h => h.getBoundingClientRect().top)"""

FULL_HD, PHONE = {"width": 1920, "height": 1080}, {"width": 390, "height": 844}

#: what a person reads at the top of an event page and in its tables
READ = """() => ({
  status: document.getElementById('event-status').textContent.trim(),
  round: document.getElementById('event-round').textContent.trim(),
  progress: document.getElementById('event-progress').textContent.trim(),
  standings: [...document.querySelectorAll('#standings tbody tr')].map(tr => tr.innerText.trim()),
  champion: document.getElementById('champion')?.hidden === false
    ? document.getElementById('champion').innerText.trim() : null,
})"""

EVENT = (
    "from django.contrib.auth import get_user_model\n"
    "from competition.models.bots import Bot\n"
    "from competition.models import Entry, Event\n"
    "o, _ = get_user_model().objects.get_or_create(username='live-organiser')\n"
    "e = Event.objects.create(name='{name}', game='tictactoe', format='{format}', pace_ms=60, created_by=o)\n"
    "for i, s in enumerate({bots}, 1):\n"
    "    b = Bot.objects.create(owner=o, game='tictactoe', name=f'{name}-{{i}}', kind='builtin', target=s)\n"
    "    Entry.objects.create(event=e, bot=b, seed=i)\n"
    "print(e.pk)\n"
)

START = (
    "from competition.events.services import start_event\n"
    "from competition.models import Event\n"
    "start_event(Event.objects.get(pk={event}))\n"
)


def photograph(browser, url: str, name: str, state=None) -> None:
    """The page at 1920x1080 and at 390 px wide, neither wider than its window."""
    for size, tag in ((FULL_HD, "1920"), (PHONE, "390")):
        page = browser["new"](size, state)
        page.goto(url)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(SHOTS / f"live-{name}-{tag}.png"), full_page=True)
        wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        page.context.close()
        assert wide <= 1, f"{name} at {tag}px is {wide}px too wide"


@pytest.mark.parametrize(
    ("fmt", "bots", "champion"),
    [
        ("round_robin", ["perfect", "random", "random"], False),
        ("single_elimination", ["perfect", "random"], True),
    ],
)
def test_it_ends_an_event_page_opened_before_the_start_as_a_fresh_load_shows_it(
    browser, fmt, bots, champion
):
    base, site = browser["base"], browser["site"]
    event = shell(site, EVENT.format(name=f"live-{fmt[:6]}", format=fmt, bots=bots))
    page = browser["new"](FULL_HD)
    page.goto(f"{base}/events/{event}/")
    page.evaluate("() => { window.notReloaded = true; }")
    before = page.evaluate(READ)
    # It should open as a draft that has not started.
    assert before["status"] == "Being prepared", before
    shell(site, START.format(event=event))
    # It should say that the event runs, then that it finished, without a reload.
    page.wait_for_function(
        "() => document.getElementById('event-status').textContent.trim() === 'Finished'",
        timeout=120_000,
    )
    page.wait_for_timeout(500)  # the last standings message, after the finish
    live = page.evaluate(READ)
    assert page.evaluate("() => window.notReloaded === true")
    fresh = browser["new"](FULL_HD)
    fresh.goto(f"{base}/events/{event}/")
    loaded = fresh.evaluate(READ)
    fresh.context.close()
    # It should end with the header, the standings (points as the page prints them) and the
    # champion of a fresh load of the page.
    assert live == loaded, (live, loaded)
    assert live["progress"].split("/")[0] == live["progress"].split("/")[1] != "0", live
    assert not re.search(r"\d\.\d{2,}", " ".join(live["standings"])), live["standings"]
    assert (live["champion"] or "").startswith("Champion:") == champion, live
    page.screenshot(path=str(SHOTS / f"live-event-{fmt}-1920.png"), full_page=True)
    page.context.close()
    photograph(browser, f"{base}/events/{event}/", f"event-{fmt}")


def test_it_shows_on_the_home_page_a_match_that_starts_after_it_was_opened(browser):
    base, site = browser["base"], browser["site"]
    showcase = (
        "from competition.events.services import {0}\n"
        "from competition.models import Event\n"
        "for e in Event.objects.filter(showcase=True): {0}(e)\n"
    )
    # The demo's showcases keep matches live: paused, what is queued still plays, then stops.
    shell(site, showcase.format("pause_event"))
    page = browser["new"](FULL_HD)
    page.goto(base + "/")
    page.evaluate("() => { window.notReloaded = true; }")
    live = '[data-game="tictactoe"] .live-now'
    page.wait_for_selector(live, state="hidden", timeout=90_000)
    match = shell(
        site,
        "from django.contrib.auth import get_user_model\n"
        "from competition.models.bots import Bot\n"
        "from competition.matches.lifecycle import create_match\n"
        "o = get_user_model().objects.create_user('home-live')\n"
        "a, b = (Bot.objects.create(owner=o, game='tictactoe', name=f'homelive-{i}', kind='builtin', target='random') for i in (1, 2))\n"
        "print(create_match('tictactoe', [a, b], pace_ms=1200).pk)\n",
    )
    # It should count the match as live and link "live" to it, without a reload ...
    page.wait_for_selector(live, state="visible", timeout=30_000)
    assert page.inner_text(f"{live} .live-count") == "1"
    assert page.get_attribute(f"{live} a.watch-live", "href") == f"/matches/{match}/"
    # ... list it first among the latest matches, running ...
    row = f'#home-recent-table tr[data-match="{match}"]'
    page.wait_for_selector(row, timeout=10_000)
    assert "Running" in page.inner_text(row)
    page.screenshot(path=str(SHOTS / "live-home-running-1920.png"), full_page=True)
    # ... then say how it ended, in words, and stop counting it.
    page.wait_for_selector(live, state="hidden", timeout=90_000)
    page.wait_for_function(
        f"() => !document.querySelector('{row}').innerText.includes('Running')", timeout=10_000
    )
    ended = page.inner_text(row)
    assert "Finished" in ended or "Forfeited" in ended, ended
    assert "_" not in ended, ended
    assert page.evaluate("() => window.notReloaded === true")
    shell(site, showcase.format("resume_event"))
    photograph(browser, base + "/", "home")
    # /bots/ of someone with a bot of every game (long titles, ratings, badges): signed in
    shell(
        site,
        "from django.contrib.auth import get_user_model\n"
        "from competition.models.bots import Bot\n"
        "from games import all_games\n"
        "u = get_user_model().objects.create_user('phone-owner', password='phone-pass-phrase-42')\n"
        "for g in all_games(): Bot.objects.create(owner=u, game=g.slug, name=f'a-rather-long-bot-name-{g.slug}', kind='builtin', target=sorted(g.builtin_bots)[0])\n",
    )
    login = browser["new"](PHONE)
    login.goto(base + "/accounts/login/")
    login.fill("#id_username", "phone-owner")
    login.fill("#id_password", "phone-pass-phrase-42")
    login.click("main form button[type=submit]")
    login.wait_for_load_state("networkidle")
    state = login.context.storage_state()
    login.context.close()
    photograph(browser, base + "/bots/", "bots", state)
    photograph(browser, base + "/matches/", "matches")


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
