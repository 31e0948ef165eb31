"""The site in a real browser: headless Debian Chromium driven by Playwright against
``manage.py serve`` (daphne, embedded runner) started as a subprocess, with a bot served by
``manage.py serve_bot``. One server and one browser for the whole module; the tests run in
order and build on each other (sign up → register → test call → bench match watched live
→ replay with the keyboard → a human plays → the big screen → every game's viewer).

Every page is photographed at 390x844 (a phone) and 1920x1080 (a projector) into
``screenshots/``, and no page may scroll sideways.
"""

from __future__ import annotations

import json
import re
import sys
import time

import pytest

from tests.conftest import LOOPBACK, REPO, free_port
from tests.e2e.conftest import UI, cell_point, match_id, shot, start_match, wait_done
from tests.live_protocol import stream_of
from tests.processes import manage, project_env, running

USER, PASSWORD = "alice", "alice-pass-phrase-42"
SEEN: dict = {}  # what one test leaves for the next (ids of the bot and the matches)


@pytest.fixture(scope="module")
def browser(chromium):
    """Headless Chromium for the module (tests/e2e/conftest.py)."""
    return chromium


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture: Playwright's sync API runs its own event loop
    in this thread, and these tests make no outbound call from the test process."""
    yield


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A server of its own, not the shared ones of tests/e2e/conftest.py: the module leaves a
    human's match of every game waiting for a move, which the other modules' live counts
    would show. The standing ladder is off: its bot passes a test call, and the module checks
    the page of a bot that played practice only (the ladder has tests of its own)."""
    data = tmp_path_factory.mktemp("browser")
    env = project_env(
        ARENA_DATA_DIR=str(data), ARENA_BOT_ALLOW_NETWORKS=LOOPBACK, ARENA_LADDER="false"
    )
    bot_port, port = free_port(), free_port()
    bot = [
        sys.executable,
        str(REPO / "manage.py"),
        "serve_bot",
        "tictactoe:random",
        "--port",
        str(bot_port),
    ]
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    log = data / "server.log"
    with running(bot, bot_port, env=env), running(server, port, env=env, log=log):
        yield {
            "base": f"http://127.0.0.1:{port}",
            "bot_url": f"http://127.0.0.1:{bot_port}/",
            "env": env,
            "log": log,
        }


@pytest.fixture(scope="module")
def ui(browser, site):
    ui = UI(browser, site["base"], site["log"])
    yield ui
    # It should never have thrown in a page.
    assert ui.errors == []


# -- 1. accounts and a bot ---------------------------------------------------------------------


def test_it_signs_up_registers_a_bot_and_test_calls_it(ui, site):
    ui.both("/", "home")
    ui.both("/accounts/login/", "login")
    ui.both("/accounts/password_reset/", "password-reset")
    ui.both("/accounts/signup/", "signup")
    page = ui.desktop
    page.fill("#id_username", USER)
    page.fill("#id_email", "alice@example.org")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("main form.stack button[type=submit]")
    # It should sign the new user in and land on their (empty) list of bots.
    page.wait_for_url("**/bots/")
    assert "Welcome, alice" in page.content()
    ui.share_login()
    ui.both("/bots/", "bots-empty")
    ui.both("/bots/new/", "bot-register")
    page.goto(ui.url("/bots/new/"))
    page.select_option("#id_game", "tictactoe")
    page.fill("#id_name", "rando")
    page.fill("#id_target", site["bot_url"])
    page.click("main form.stack button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/$"))
    SEEN["bot"] = int(re.search(r"/bots/(\d+)/", page.url).group(1))
    # It should send one real request and show status, latency, fault and the reply.
    page.click("#test-call")
    page.wait_for_selector("#test-result")
    result = page.inner_text("#test-result")
    assert "OK" in result and "HTTP 200" in result and " ms" in result
    assert re.search(r'"play":\s*"\d-\d"', result)
    shot(page, "bot-test-call")
    ui.phone.goto(ui.url(f"/bots/{SEEN['bot']}/"))
    ui.phone.wait_for_timeout(2100)  # one test call every 2 seconds per user
    ui.phone.click("#test-call")
    ui.phone.wait_for_selector("#test-result")
    shot(ui.phone, "bot-test-call")
    ui.both("/accounts/profile/", "profile")
    # It should make a named API token on the profile and show it this once.
    page.goto(ui.url("/accounts/profile/"))
    page.fill("#token-form input[name=name]", "laptop")
    with page.expect_navigation():
        page.click("#token-form button[type=submit]")
    assert re.search(r"[0-9a-f]{40}", page.input_value("#api-token"))
    assert "laptop" in page.inner_text("#token-list")


# -- 2. a match against a built-in bot, watched live -------------------------------------------------


def test_it_plays_the_bot_against_a_builtin_and_shows_it_live(ui):
    page = ui.desktop
    ui.both("/bench/", "bench")
    page.goto(ui.url("/bench/"))
    form = page.locator("#bench-tictactoe")
    form.locator("select[name=tictactoe-mine]").select_option(f"bot:{SEEN['bot']}")
    form.locator("select[name=tictactoe-opponent]").select_option("builtin:perfect")
    form.locator("select[name=tictactoe-pace_ms]").select_option("1000")
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    SEEN["match"] = match_id(page)
    ui.phone.goto(page.url)
    # It should join mid-match: a snapshot, then turns as they are played, with LIVE shown.
    page.wait_for_function("() => window.arenaStats && window.arenaStats.liveTurns >= 1")
    assert page.is_visible("#live-badge")
    ui.phone.wait_for_function("() => window.arenaViewer && window.arenaViewer.last >= 1")
    shot(page, "match-live")
    shot(ui.phone, "match-live")
    # On a dropped connection it should fetch what it missed and reconnect by itself.
    page.evaluate("() => window.arenaStream.sock.close()")
    page.wait_for_function("() => window.arenaStats.snapshots >= 2")
    wait_done(page)
    wait_done(ui.phone)
    viewer = page.evaluate(
        "() => [arenaViewer.match.status, arenaViewer.last, arenaViewer.index, arenaViewer.match.turn_count]"
    )
    assert viewer[0] in ("finished", "forfeited") and viewer[1] == viewer[2] == viewer[3] >= 5
    numbers = page.evaluate("() => arenaViewer.turns.map(t => t.number)")
    assert numbers == list(range(1, viewer[1] + 1))
    assert not page.is_visible("#live-badge")
    shot(page, "match-finished")
    shot(ui.phone, "match-finished")


# -- 3. the replay, stepped with the keyboard ------------------------------------------------------------


def test_it_replays_the_match_and_steps_with_the_keyboard(ui):
    page = ui.desktop
    page.goto(ui.url(f"/matches/{SEEN['match']}/"))
    page.wait_for_function("() => window.arenaViewer && window.arenaViewer.last > 0")
    last = page.evaluate("() => arenaViewer.last")
    index = lambda: page.evaluate("() => arenaViewer.index")  # noqa: E731
    # A replay opens on the result; the keys step through it.
    assert index() == last
    for key, expected in (
        ("Home", 0),
        ("ArrowRight", 1),
        ("k", 2),
        ("K", 3),
        ("j", 2),
        ("ArrowLeft", 1),
        ("End", last),
    ):
        page.keyboard.press(key)
        assert index() == expected, key
    assert page.inner_text("#turn-label") == f"turn {last} / {last}"
    page.keyboard.press("Home")
    page.keyboard.press(" ")
    page.wait_for_function("() => arenaViewer.index >= 2")
    page.keyboard.press(" ")
    assert page.evaluate("() => arenaViewer.playing") is False
    # ?turn=N opens on that turn; the scrub bar follows.
    page.goto(ui.url(f"/matches/{SEEN['match']}/?turn=2"))
    page.wait_for_function("() => window.arenaViewer && window.arenaViewer.last > 0")
    assert index() == 2 and page.input_value("#scrub") == "2"
    page.select_option("select[data-action=speed]", "16")
    page.click("button[data-action=play]")
    page.wait_for_function(f"() => arenaViewer.index === {last} && !arenaViewer.playing")
    ui.both(
        f"/matches/{SEEN['match']}/?turn=3",
        "match-replay",
        "() => window.arenaViewer && arenaViewer.last > 0",
    )
    # The owner's per-turn log of the match.
    ui.both(f"/bots/{SEEN['bot']}/matches/{SEEN['match']}/log", "bot-log")
    assert "play-turn" in ui.desktop.content()


# -- 4. a person plays in the browser ---------------------------------------------------------------------


def test_a_human_plays_tictactoe_against_perfect_in_the_browser(ui):
    page = ui.desktop
    page.goto(ui.url("/games/tictactoe/play?p1=human&p2=builtin:perfect"))
    shot(page, "play-confirm")
    ui.phone.goto(ui.url("/games/tictactoe/play?p1=human&p2=builtin:perfect"))
    shot(ui.phone, "play-confirm")
    page.click("#play-button")
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    mid = match_id(page)
    moves = 0
    for _ in range(6):
        page.wait_for_function(
            "() => document.body.dataset.matchDone === '1' || (window.arenaHumans?.[0]?.current ?? null) !== null",
            timeout=30_000,
        )
        if page.evaluate("() => document.body.dataset.matchDone === '1'"):
            break
        if moves == 1:
            page.mouse.move(*cell_point(page, (2, 2)))
            shot(page, "human-tictactoe")
            ui.phone.goto(page.url)
            ui.phone.wait_for_function("() => (window.arenaHumans?.[0]?.current ?? null) !== null")
            shot(ui.phone, "human-tictactoe")
            ui.phone.goto(ui.url("/"))  # leave the seat to the desktop page
        seq, board = page.evaluate("() => [arenaHumans[0].current, arenaHumans[0].message.board]")
        key = next(
            k
            for k in ("1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1")
            if board[k] == ""
        )
        x, y = cell_point(page, (int(key[0]), int(key[2])))
        page.mouse.click(x, y)
        page.wait_for_function(f"() => arenaHumans[0].answered >= {seq}")
        moves += 1
    wait_done(page)
    assert moves >= 3
    # It should be stored like any other match: status, seats, turns, replayable.
    api = page.request.get(ui.url(f"/api/matches/{mid}/")).json()
    assert api["status"] == "finished" and api["reason"] in ("three_in_a_row", "board_full")
    participants = api["participants"]
    assert [p["name"] for p in participants] == ["human", "built-in perfect"]
    assert participants[1]["result"] in ("win", "draw")
    turns = page.request.get(ui.url(f"/api/matches/{mid}/turns/?since=0")).json()
    turns = turns.get("turns") or turns.get("results")
    assert [t["actions"][0] for t in turns if 0 in t["seats"]][:1] == ["1-1"]
    assert all(t["faults"][0] == "ok" for t in turns if 0 in t["seats"])
    page.goto(ui.url(f"/matches/{mid}/"))
    page.wait_for_function(
        "() => window.arenaViewer && arenaViewer.last === arguments[0]".replace(
            "arguments[0]", str(len(turns))
        )
    )
    shot(page, "human-tictactoe-replay")


# -- 5. the big screen -------------------------------------------------------------------------------------


def test_the_big_screen_follows_the_demo_event_live(ui, site):
    # The demo keeps a showcase of every game running (issue 17): its big screen is live at
    # any moment, so one `demo` (idempotent: it names the showcases it keeps) is enough.
    done = manage("demo", env=site["env"])
    assert done.returncode == 0, done.stderr
    event = int(re.search(r"showcase (\d+) \(tictactoe\)", done.stdout).group(1))
    pages = [ui.desktop, ui.phone]
    for page in pages:
        page.goto(ui.url(f"/events/{event}/screen"))
        page.evaluate("() => { window.__sameDocument = 42; }")
    ui.desktop.wait_for_function(
        "() => document.body.dataset.featuredStatus === 'running'", timeout=15_000
    )
    shot(ui.desktop, "screen-live")
    # It should update the standings and follow the event without a reload.
    for page in pages:
        page.wait_for_function(
            "() => Number(document.body.dataset.standingsGames || 0) >= 1", timeout=30_000
        )
    seen = int(ui.desktop.evaluate("() => document.body.dataset.standingsGames"))
    for page in pages:
        page.wait_for_function(
            f"() => Number(document.body.dataset.standingsGames || 0) >= {seen + 2}",
            timeout=30_000,
        )
        assert page.evaluate("() => window.__sameDocument") == 42
        # It should fill the screen without scrolling.
        assert page.evaluate(
            "() => document.documentElement.scrollHeight <= window.innerHeight + 1"
        )
    for page in pages:
        shot(page, "screen-result")
    ui.both(f"/events/{event}/", "event")


# -- 6. every game's renderer and input, and the remaining pages ------------------------------------------


GAMES = {
    "tiles": ("greedy", "contain"),
    "gconway": ("grower", "random"),
    "drones": ("zerg", "adaptive-defender"),
}


def test_every_game_renders_in_the_viewer(ui):
    page = ui.desktop
    ids = {}
    for slug, (a, b) in GAMES.items():
        ids[slug] = start_match(ui, slug, f"builtin:{a}", f"builtin:{b}")
    for slug, mid in ids.items():
        page.goto(ui.url(f"/matches/{mid}/"))
        wait_done(page, timeout=120_000)
        last = page.evaluate("() => arenaViewer.last")
        middle = max(1, last // 2)
        if slug == "drones":  # a clash frame: the forces meet and the winner is announced
            middle = (
                page.evaluate("() => arenaViewer.turns.findIndex(t => t.frame.clash) + 1") or middle
            )
        ui.both(
            f"/matches/{mid}/?turn={middle}",
            f"match-{slug}-middle",
            "() => window.arenaViewer && arenaViewer.last > 0",
        )
        ui.both(
            f"/matches/{mid}/",
            f"match-{slug}-final",
            "() => window.arenaViewer && arenaViewer.last > 0",
        )


def test_a_human_gets_an_input_for_every_game(ui):
    page = ui.desktop
    for slug, (opponent, _) in GAMES.items():
        start_match(ui, slug, "human", f"builtin:{opponent}")
        page.wait_for_function("() => (window.arenaHumans?.[0]?.current ?? null) !== null")
        if slug == "tiles":  # the first empty tile from the middle column out (craters are random)
            board = json.loads(page.evaluate("() => arenaHumans[0].message.board"))
            tile = next(
                (x, y)
                for x in (11, 12, 10, 13, 9, 14, 8, 15)
                for y in range(12)
                if board[x][y] == ""
            )
            page.mouse.move(*cell_point(page, (tile[1], tile[0])))
        elif slug == "gconway":
            for cell in ((10, 5), (10, 6), (13, 6)):
                page.mouse.click(*cell_point(page, cell))
            assert page.inner_text("#human-input button.primary") == "Send 3 cells"
        shot(page, f"human-{slug}")
        ui.phone.goto(page.url)
        ui.phone.wait_for_function("() => (window.arenaHumans?.[0]?.current ?? null) !== null")
        shot(ui.phone, f"human-{slug}")
        ui.phone.goto(ui.url("/"))  # leave the seat to the desktop page
        # Play one move through the page's own input.
        if slug == "tiles":
            page.mouse.click(*cell_point(page, (tile[1], tile[0])))
        elif slug == "gconway":
            page.click("#human-input button.primary")
        else:
            page.click("button[data-q=grow]")
        page.wait_for_function("() => window.arenaViewer.last >= 1", timeout=30_000)
        row = page.evaluate("() => arenaViewer.turns[0]")
        assert row["faults"][0] == "ok", row
        if slug == "tiles":
            assert row["actions"][0] == list(tile)
        elif slug == "gconway":
            assert row["actions"][0] == [[10, 5], [10, 6], [13, 6]]
        else:
            assert row["actions"][0] == {"newProducers": 1, "newSoldiers": 0, "launchAttack": False}


def test_the_remaining_pages(ui):
    for slug in ("tictactoe", "tiles", "gconway", "drones"):
        ui.both(f"/docs/{slug}/", f"docs-{slug}")
    ui.both("/docs/", "docs")
    ui.both("/api/docs/live/", "docs-live")
    # The live pages opened every kind of websocket, whose frames were checked as they came.
    assert {stream_of(url) for url in ui.websockets} >= {"match", "event", "play"}
    ui.both("/games/tictactoe/", "game")
    ui.both("/games/tictactoe/leaderboard", "leaderboard")
    ui.both("/bots/", "bots")
    # Bench matches are practice (unrated): the bot's page says it has no rated game; a bot
    # of the leaderboard (the demo event's built-ins played rated matches) shows its chart.
    ui.both(f"/bots/{SEEN['bot']}/", "bot-practice")
    assert "No rated games yet" in ui.desktop.inner_text("#rating-chart")
    ui.desktop.goto(ui.url("/games/tictactoe/leaderboard"))
    rated = ui.desktop.locator("table a[href^='/bots/']").first.get_attribute("href")
    ui.both(rated, "bot-rated", "() => document.querySelector('#rating-chart svg') !== null")
    ui.both("/", "home-after")
    time.sleep(0)  # (keeps the module's sections apart in -v output)
