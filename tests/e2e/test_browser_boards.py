"""Connect four and battleship in a real browser (headless Debian Chromium, Playwright) against
``manage.py serve``: a person plays each game against a built-in bot through the page's own
input (clicking a column; placing a fleet ship by ship, then clicking cells to fire), and
each viewer is photographed at 390x844 and 1920x1080 into ``screenshots/``.

The browser and helpers are the ones of ``tests/e2e/test_browser.py``; the server is the
shared one (``arena_site``, tests/e2e/conftest.py): this module signs its own user up.
"""

from __future__ import annotations

import time
from collections import deque

import pytest
from playwright import sync_api as playwright_api

from competition.web.consumers import HumanSeatConsumer
from tests.e2e.conftest import UI, shot, start_match, wait_done

pytestmark = pytest.mark.xdist_group("arena_site")  # one worker, one server


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def browser(chromium):
    """Headless Chromium for the module (tests/e2e/conftest.py)."""
    return chromium


WAIT_TURN = (
    "() => document.body.dataset.matchDone === '1'"
    " || (window.arenaHumans?.[0]?.current ?? null) !== null"
)


class PersonsPace:
    """Before each move, wait only as long as the seat's socket needs to take one more (at most
    ``RATE_LIMIT`` messages in any ``RATE_WINDOW`` seconds, counted as they arrive: a margin of
    two messages and half a second), not a fixed pause per move."""

    def __init__(self, page):
        self.page = page
        self.sent: deque[float] = deque()

    def before_move(self) -> None:
        window = HumanSeatConsumer.RATE_WINDOW + 0.5
        while len(self.sent) >= HumanSeatConsumer.RATE_LIMIT - 2:
            wait = self.sent[0] + window - time.monotonic()
            if wait <= 0:
                self.sent.popleft()
            else:
                self.page.wait_for_timeout(wait * 1000)
        self.sent.append(time.monotonic())


@pytest.fixture(scope="module")
def ui(browser, arena_site):
    ui = UI(browser, arena_site["base"], arena_site["log"])
    page = ui.desktop
    page.goto(ui.url("/accounts/signup/"))
    page.fill("#id_username", "boards")
    page.fill("#id_email", "boards@example.org")
    page.fill("#id_password1", "boards-pass-phrase-42")
    page.fill("#id_password2", "boards-pass-phrase-42")
    page.click("main form.stack button[type=submit]")
    page.wait_for_url("**/bots/")
    ui.share_login()
    yield ui
    # It should never have thrown in a page.
    assert ui.errors == []


def point(page, expression: str) -> list[float]:
    """Page coordinates from the renderer's layout (``r`` the renderer, ``L`` its layout)."""
    return page.evaluate(
        "() => { const r = window.arenaViewer.renderer, L = r.L;"
        " const box = document.getElementById('board').getBoundingClientRect();"
        f" const [x, y] = {expression}; return [box.left + x, box.top + y]; }}"
    )


def column_point(page, col: int) -> list[float]:
    return point(page, f"[L.x0 + ({col} + 0.5) * L.cell, L.y0 + L.cell * 0.5]")


def cell_point(page, seat: int, x: int, y: int) -> list[float]:
    return point(
        page,
        f"[L.grids[{seat}].x0 + ({x} + 0.5) * L.cell, L.grids[{seat}].y0 + ({y} + 0.5) * L.cell]",
    )


def photograph_turn(ui, page, name: str) -> None:
    shot(page, name)
    ui.phone.goto(page.url)
    ui.phone.wait_for_function("() => (window.arenaHumans?.[0]?.current ?? null) !== null")
    shot(ui.phone, name)
    ui.phone.goto(ui.url("/"))  # leave the seat to the desktop page


def test_a_human_plays_connect_four_against_random_in_the_browser(ui):
    # It should let a person click columns until the game ends, and store it as any match.
    mid = start_match(ui, "connectfour", "human", "builtin:random")
    page = ui.desktop
    played = []
    for _ in range(22):
        page.wait_for_function(WAIT_TURN, timeout=30_000)
        if page.evaluate("() => document.body.dataset.matchDone === '1'"):
            break
        seq, board = page.evaluate("() => [arenaHumans[0].current, arenaHumans[0].message.board]")
        col = next(c for c in (3, 2, 4, 1, 5, 0, 6) if board[5][c] == "")
        if len(played) == 2:
            page.mouse.move(*column_point(page, col))
            photograph_turn(ui, page, "human-connectfour")
        page.mouse.click(*column_point(page, col))
        page.wait_for_function(f"() => arenaHumans[0].answered >= {seq}")
        played.append(col)
    wait_done(page)
    api = page.request.get(ui.url(f"/api/matches/{mid}/")).json()
    assert api["status"] == "finished", api
    assert api["reason"] in ("four_in_a_row", "board_full")
    turns = page.request.get(ui.url(f"/api/matches/{mid}/turns/?since=0")).json()
    turns = turns.get("turns") or turns.get("results")
    mine = [t["actions"][0] for t in turns if 0 in t["seats"]]
    assert mine == played[: len(mine)] and len(mine) >= 4
    assert all(t["faults"][0] == "ok" for t in turns if 0 in t["seats"])
    ui.both(
        f"/matches/{mid}/",
        "match-connectfour-human-final",
        "() => (window.arenaViewer?.last ?? 0) > 0",
    )


def test_a_human_places_a_fleet_and_sinks_random_in_the_browser(ui):
    # It should let a person randomise or place a fleet cell by cell, then fire by clicking.
    mid = start_match(ui, "battleship", "human", "builtin:random")
    page = ui.desktop
    page.wait_for_function("() => (window.arenaHumans?.[0]?.current ?? null) !== null")
    assert page.evaluate("() => arenaHumans[0].message.action") == "init"
    page.click("text=Random fleet")
    photograph_turn(ui, page, "human-battleship-setup")
    page.click("text=Clear")
    page.click("text=Rotate: horizontal")  # vertical ships, one a column: 5, 4, 3, 3, 2
    for x in range(5):
        page.mouse.click(*cell_point(page, 0, 2 * x, 0))
    assert page.is_enabled("text=Send fleet")
    seq = page.evaluate("() => arenaHumans[0].current")
    pace = PersonsPace(page)
    pace.before_move()
    page.click("text=Send fleet")
    page.wait_for_function(f"() => arenaHumans[0].answered >= {seq}")
    fired = []
    targets = [(x, y) for y in range(10) for x in range(10)]
    for x, y in targets:
        try:
            page.wait_for_function(WAIT_TURN, timeout=30_000)
        except playwright_api.TimeoutError:
            status = page.inner_text("#human-panel")
            raise AssertionError(f"no turn after {fired}: {status}") from None
        if page.evaluate("() => document.body.dataset.matchDone === '1'"):
            break
        if len(fired) == 12:
            photograph_turn(ui, page, "human-battleship")
            page.wait_for_function(WAIT_TURN, timeout=30_000)
        seq = page.evaluate("() => arenaHumans[0].current")
        pace.before_move()
        page.mouse.click(*cell_point(page, 1, x, y))
        page.wait_for_function(f"() => arenaHumans[0].answered >= {seq}")
        fired.append(f"{x},{y}")
    wait_done(page, timeout=60_000)
    api = page.request.get(ui.url(f"/api/matches/{mid}/")).json()
    assert api["status"] == "finished" and api["reason"] == "fleet_sunk", api
    turns = page.request.get(ui.url(f"/api/matches/{mid}/turns/?since=0")).json()
    turns = turns.get("turns") or turns.get("results")
    mine = [t["actions"][0] for t in turns if 0 in t["seats"]]
    assert mine == fired[: len(mine)]
    fleets = turns[-1]["frame"]["fleets"]
    assert sorted(map(len, fleets[0])) == [2, 3, 3, 4, 5]
    assert {cell.split(",")[1] for ship in fleets[0] for cell in ship} <= {"0", "1", "2", "3", "4"}
    assert all(len({c.split(",")[0] for c in ship}) == 1 for ship in fleets[0])  # vertical
    ui.both(
        f"/matches/{mid}/",
        "match-battleship-human-final",
        "() => (window.arenaViewer?.last ?? 0) > 0",
    )


@pytest.mark.parametrize(
    ("slug", "a", "b"), [("connectfour", "solver", "random"), ("battleship", "hunter", "random")]
)
def test_each_viewer_shows_a_match_of_built_ins(ui, slug, a, b):
    # It should render the middle and the end of a match at both sizes.
    mid = start_match(ui, slug, f"builtin:{a}", f"builtin:{b}")
    page = ui.desktop
    page.goto(ui.url(f"/matches/{mid}/"))
    wait_done(page, timeout=120_000)
    last = page.evaluate("() => arenaViewer.last")
    ready = "() => window.arenaViewer && arenaViewer.last > 0"
    ui.both(f"/matches/{mid}/?turn={max(1, last // 2)}", f"match-{slug}-middle", ready)
    ui.both(f"/matches/{mid}/", f"match-{slug}-final", ready)
    assert last > 0
    ui.both(f"/docs/{slug}/", f"docs-{slug}")
    ui.both(f"/games/{slug}/leaderboard", f"leaderboard-{slug}")


def test_the_bench_and_the_home_page_offer_both_games(ui):
    # It should list both games on the home page and offer them on the bench, human seat included.
    page = ui.desktop
    page.goto(ui.url("/"))
    text = page.inner_text("main")
    assert "Connect four" in text and "Battleship" in text
    page.goto(ui.url("/bench/"))
    for slug in ("connectfour", "battleship"):
        form = page.locator(f"#bench-{slug}")
        assert form.count() == 1
        options = form.locator(f"select[name={slug}-opponent] option").all_inner_texts()
        assert any("random" in o for o in options), options
    ui.both("/bench/", "bench-boards")
