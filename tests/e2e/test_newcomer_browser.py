"""A newcomer's first hour in a real browser (issue 25): headless Debian Chromium driven by
Playwright against ``manage.py serve`` (with its demo event) and a bot served by
``manage.py serve_bot``. The tests run in order and build on each other: sign up, register,
test call (a next step offered), bench matches (nothing lands in the account, nothing is
ranked), the finished-match viewer, the replay slider dragged and clicked, a human game to
its end, phone-width tables and the site's 404 page.

Pages are photographed into ``screenshots/`` (``newcomer-*``) at 390x844 and 1920x1080.
"""

from __future__ import annotations

import re
import sys

import pytest
from playwright import sync_api as playwright_api

from tests.conftest import REPO, free_port
from tests.e2e.conftest import ARGS, CHROMIUM, PHONE, PROJECTOR, SHOTS, cell_point, match_id
from tests.processes import running

pytestmark = pytest.mark.xdist_group("arena_demo_site")  # one worker, one server

USER, PASSWORD = "newbie", "newbie-pass-phrase-42"
SEEN: dict = {}


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def site(arena_demo_site):
    """A bot served beside the shared server with the demo (tests/e2e/conftest.py)."""
    bot_port = free_port()
    bot = [sys.executable, str(REPO / "manage.py"), "serve_bot", "tictactoe:random"]
    with running([*bot, "--port", str(bot_port)], bot_port, env=arena_demo_site["env"]):
        yield {"base": arena_demo_site["base"], "bot_url": f"http://127.0.0.1:{bot_port}/"}


@pytest.fixture(scope="module")
def pages(site):
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        desktop = browser.new_context(viewport=PROJECTOR).new_page()
        desktop.set_default_timeout(20_000)
        desktop.on("pageerror", lambda exc: errors.append(str(exc)))
        yield {"desktop": desktop, "browser": browser, "base": site["base"], "site": site}
        browser.close()
    # It should never have thrown in a page.
    assert errors == []


def shot(page, name: str) -> None:
    size = page.viewport_size
    page.screenshot(path=str(SHOTS / f"newcomer-{name}-{size['width']}x{size['height']}.png"))
    wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 1, f"{name} at {size['width']}px is {wide}px too wide"


def phone(pages):
    """A phone page with the desktop's session."""
    state = pages["desktop"].context.storage_state()
    page = pages["browser"].new_context(viewport=PHONE, storage_state=state).new_page()
    page.set_default_timeout(20_000)
    return page


def wait_done(page, timeout: float = 60_000) -> None:
    page.wait_for_function("() => document.body.dataset.matchDone === '1'", timeout=timeout)


def bench(page, base: str, mine: str, opponent: str, pace: str = "0") -> int:
    page.goto(base + "/bench/")
    form = page.locator("#bench-tictactoe")
    form.locator("select[name=tictactoe-mine]").select_option(mine)
    form.locator("select[name=tictactoe-opponent]").select_option(opponent)
    form.locator("select[name=tictactoe-pace_ms]").select_option(pace)
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    return match_id(page)


def test_a_newcomer_signs_up_registers_and_gets_a_next_step(pages):
    page, base = pages["desktop"], pages["base"]
    page.goto(base + "/accounts/signup/")
    page.fill("#id_username", USER)
    page.fill("#id_email", "newbie@example.org")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("main form.stack button[type=submit]")
    page.wait_for_url("**/bots/")
    page.goto(base + "/bots/new/")
    page.select_option("#id_game", "tictactoe")
    page.fill("#id_name", "first")
    page.fill("#id_target", pages["site"]["bot_url"])
    page.click("main form.stack button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/$"))
    SEEN["bot"] = int(re.search(r"/bots/(\d+)/", page.url).group(1))
    page.click("#test-call")
    page.wait_for_selector("#test-result")
    # It should show the reply as JSON and offer the next step: the bench.
    assert page.is_visible("#next-step a[href*='/bench/']")
    assert re.search(r'\{\n\s+"play": "\d-\d"\n\}', page.inner_text("#test-result .reply"))
    shot(page, "test-call")


def test_a_fast_bench_match_opens_on_its_final_position(pages):
    page, base = pages["desktop"], pages["base"]
    SEEN["match"] = bench(page, base, f"bot:{SEEN['bot']}", "builtin:perfect")
    wait_done(page)
    page.wait_for_function("() => arenaViewer.last > 0 && arenaViewer.index === arenaViewer.last")
    # It should show the final position ("turn N / N"), never an empty board at turn 0.
    label = page.inner_text("#turn-label")
    last = page.evaluate("() => arenaViewer.last")
    assert label == f"turn {last} / {last}"
    shot(page, "match-final")
    # Opened later, the replay does the same.
    page.goto(f"{base}/matches/{SEEN['match']}/")
    wait_done(page)
    page.wait_for_function("() => arenaViewer.last > 0")
    assert page.inner_text("#turn-label") == f"turn {last} / {last}"


def test_the_replay_slider_follows_drags_and_clicks(pages):
    page = pages["desktop"]
    last = page.evaluate("() => arenaViewer.last")
    assert last >= 5
    box = page.locator("#scrub").bounding_box()
    y = box["y"] + box["height"] / 2

    def x_at(i: int) -> float:  # the thumb's centre for turn i (the track spans the box)
        thumb = 16
        return box["x"] + thumb / 2 + (box["width"] - thumb) * i / last

    # It should seek where the slider is clicked ...
    page.mouse.click(x_at(1), y)
    assert page.evaluate("() => arenaViewer.index") == 1
    assert page.inner_text("#turn-label") == f"turn 1 / {last}"
    # ... and follow a drag.
    page.mouse.move(x_at(1), y)
    page.mouse.down()
    page.mouse.move(x_at(last - 1), y, steps=8)
    page.mouse.up()
    assert page.evaluate("() => arenaViewer.index") == last - 1
    shot(page, "slider")


def test_the_bench_leaves_no_bot_in_the_account_and_no_seat_on_leaderboards(pages):
    page, base = pages["desktop"], pages["base"]
    bench(page, base, "human", "builtin:random")  # a person on the bench, left at once
    page.goto(base + "/bots/")
    names = page.locator("main table tbody tr td:first-child").all_inner_texts()
    # It should list only the bot the user registered.
    assert names == ["first"]
    page.goto(base + "/accounts/profile/")
    assert "1 bot" in page.inner_text("main")
    api = page.request.get(base + "/api/leaderboard/tictactoe/").json()
    ranked = [row["name"] for row in api["results"]]
    # No human seat, no bench copy, no bot without a rated game on any leaderboard.
    assert "human" not in ranked and "first" not in ranked
    assert all(row["games"] > 0 for row in api["results"])
    assert all(row["builtin"] == row["name"].startswith("built-in ") for row in api["results"])
    assert "first" in [row["name"] for row in api["unranked"]]
    page.goto(base + "/games/tictactoe/leaderboard")
    table = page.locator("table.leaderboard tbody").inner_text()
    assert "human" not in table and "first" not in table
    assert "first" in page.inner_text("ul.unranked")


def test_a_human_game_says_your_move_then_game_over(pages):
    page, base = pages["desktop"], pages["base"]
    page.goto(base + "/games/tictactoe/play?p1=human&p2=builtin:random")
    page.click("#play-button")
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    page.wait_for_function("() => (window.arenaHumans?.[0]?.current ?? null) !== null")
    # It should say it is your move at the start, not "Waiting for the first turn…".
    assert "Waiting for the first turn" not in page.inner_text("#turn-info")
    assert page.inner_text("#human-title") == "Your move"
    shot(page, "human-first-move")
    for _ in range(6):
        page.wait_for_function(
            "() => document.body.dataset.matchDone === '1' || (arenaHumans[0].current ?? null) !== null",
            timeout=30_000,
        )
        if page.evaluate("() => document.body.dataset.matchDone === '1'"):
            break
        seq, board = page.evaluate("() => [arenaHumans[0].current, arenaHumans[0].message.board]")
        key = next(k for k in ("1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1") if board[k] == "")  # fmt: skip
        page.mouse.click(*cell_point(page, (int(key[0]), int(key[2]))))
        page.wait_for_function(f"() => arenaHumans[0].answered >= {seq}")
    wait_done(page)
    # It should show no clock and no "Your move" once the match is over.
    page.wait_for_function(
        "() => document.getElementById('human-title').textContent === 'Game over'"
    )
    assert page.inner_text("#human-countdown") == ""
    assert "s left" not in page.inner_text("#human-panel")
    shot(page, "human-over")


def test_tables_fit_a_phone_and_unknown_pages_are_the_sites(pages):
    page, base = phone(pages), pages["base"]
    # the demo event rates the built-ins: the leaderboard has rows
    pages["desktop"].wait_for_function(
        "async () => (await (await fetch('/api/leaderboard/tictactoe/')).json()).count > 0",
        timeout=60_000,
        polling=1000,
    )
    for path, name, headers in (
        ("/bots/", "bots", ("Bot", "Game", "Rating")),
        ("/games/tictactoe/leaderboard", "leaderboard", ("#", "Bot", "Rating", "Games")),
    ):
        page.goto(base + path)
        # It should fit the important columns in the screen: nothing clipped, no scroll.
        clipped = page.evaluate(
            """() => [...document.querySelectorAll('.table-wrap')].map(
                w => w.scrollWidth - w.clientWidth)"""
        )
        assert clipped and max(clipped) <= 1, (path, clipped)
        shown = page.evaluate(
            """() => [...document.querySelectorAll('main table thead th')]
                .filter(th => th.offsetParent !== null).map(th => th.textContent.trim())"""
        )
        assert tuple(shown[: len(headers)]) == headers, shown
        if name == "bots":  # the status column gives way to the status under each name
            assert page.locator("main table tbody td:first-child .status").first.is_visible()
        shot(page, name)
    assert "built-in" in page.inner_text("table.leaderboard")
    response = page.goto(base + "/no/such/page/")
    # It should answer with its own 404 page in its layout, not Django's list of routes.
    assert response.status == 404
    assert page.is_visible("header.topbar") and "Page not found" in page.inner_text("main")
    assert "URLconf" not in page.content()
    shot(page, "404")
