"""The big screen of a real event (issue 17, item 2) in headless Debian Chromium, at
1920x1080 and 3840x2160 side by side, against ``manage.py serve`` (daphne, embedded runner)
started as a subprocess that the last test restarts.

An 8-bot single elimination of built-in bots (paced, so a round lasts seconds) plays its
four first-round matches at once: the screen shows them as a wall of four live panes, then
the round's results and the bracket, then the semi-finals, then the podium with the final's
replay as a link and a QR code. Standings with 9 and 16 entries show every row. A restarted
server: the screen reconnects and shows the results played since, without a reload.

Screens are photographed into ``screenshots/`` (``screen-*``), to be looked at.
"""

from __future__ import annotations

import itertools
import re

import pytest
from playwright import sync_api as playwright_api

from tests.e2e.conftest import ARGS, CHROMIUM, PROJECTOR, SHOTS, Site, mode

UHD = {"width": 3840, "height": 2160}
#: a turn lasts this long: a tic-tac-toe game takes a few seconds, a round as long
PACE_MS = 1500
HOLD_S = 5  # the round summary's hold (?hold=), shorter than a round

FITS = """() => {
  const doc = document.documentElement;
  return doc.scrollHeight <= innerHeight + 1 && doc.scrollWidth <= innerWidth + 1;
}"""
#: every standings row inside the viewport and inside its table's box (nothing clipped)
ROWS_SHOWN = """() => {
  const box = document.getElementById('standings').getBoundingClientRect();
  const rows = [...document.querySelectorAll('#standings .bs-row')];
  const inside = (r) => r.top >= box.top - 1 && r.bottom <= box.bottom + 1 && r.left >= box.left - 1
    && r.right <= box.right + 1 && r.bottom <= innerHeight && r.right <= innerWidth && r.height >= 8;
  return rows.map((row) => inside(row.getBoundingClientRect()));
}"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site = Site(tmp_path_factory.mktemp("screen"))
    site.start()
    yield site
    site.stop()


@pytest.fixture(scope="module")
def events(site):
    made = site.events(
        {
            "Screen cup": ("single_elimination", ["perfect", "random"] * 4, PACE_MS),
            "Fifteen at once": ("round_robin", ["perfect", "random"] * 3, 2 * PACE_MS),
            "Table of 9": ("round_robin", ["random"] * 9, 0),
            "Table of 16": ("round_robin", ["random"] * 16, 0),
            "Table of 40": ("round_robin", ["random"] * 40, 0),
            "Restart cup": ("double_round_robin", ["perfect", "random"], 0),
        }
    )
    # Rounds are played one by one (issue 39): the cup's round results show while its round
    # gap runs (a second longer than they are held); the round robin of 6 plays its first
    # round's 3 pairs in series of 5, so 15 matches at once.
    site.shell(
        "from competition.models import Event\n"
        # (its level series go to the seed at once: the round summary counts the series' games)
        f"Event.objects.filter(pk={made['Screen cup']})"
        f".update(round_gap={HOLD_S + 1}, tie_decider='seed')\n"
        f"Event.objects.filter(pk={made['Fifteen at once']}).update(series_length=5)\n"
    )
    return made


@pytest.fixture(scope="module")
def screens(site):
    """A 1920x1080 page and a 3840x2160 page; any error thrown in them fails the module."""
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pages = []
        for size in (PROJECTOR, UHD):
            page = browser.new_context(viewport=size).new_page()
            page.set_default_timeout(30_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            pages.append(page)
        yield pages
        browser.close()
    assert errors == []


#: the vertical centre of every bracket slot, round by round
BRACKET_CENTRES = """() => [...document.querySelectorAll('#bracket .rnd')].map(rnd =>
  [...rnd.querySelectorAll('.slot')].map(s => {
    const r = s.getBoundingClientRect(); return r.top + r.height / 2; }))"""


def shot(page, name: str) -> None:
    size = page.viewport_size
    page.screenshot(path=str(SHOTS / f"screen-{name}-{size['width']}x{size['height']}.png"))
    # It should fit the screen: no scrollbar, whatever the data.
    assert page.evaluate(FITS), f"{name} at {size['width']}px scrolls"
    # It should show every standings row.
    shown = page.evaluate(ROWS_SHOWN)
    assert shown and all(shown), f"{name} at {size['width']}px hides standings rows: {shown}"


def test_it_shows_the_wall_a_round_summary_and_the_podium(site, events, screens):
    event = events["Screen cup"]
    for page in screens:
        page.goto(f"{site.base}/events/{event}/screen?hold={HOLD_S}")
        page.evaluate("() => { window.sameDocument = true; }")
        page.wait_for_function("() => document.querySelectorAll('#standings .bs-row').length === 8")
    site.start_event(event)
    # It should show the first round's four matches live, as a wall of four panes.
    for page in screens:
        page.wait_for_function(
            "() => document.body.dataset.mode === 'wall' && document.body.dataset.panes === '4'"
            " && [...document.querySelectorAll('#wall .pane')].every((t) =>"
            " t.dataset.status === 'running' && Number(t.dataset.turns) >= 1)"
        )
    for page in screens:
        panes = page.eval_on_selector_all(
            "#wall .pane", "(ts) => ts.map((t) => t.getBoundingClientRect().width)"
        )
        # It should lay four panes out two by two, of one size (no match stands out yet).
        assert len(panes) == 4 and max(panes) - min(panes) < 2, panes
        assert 0.3 < panes[0] / page.viewport_size["width"] < 0.45, panes
        shot(page, "wall")
    # It should sum the round up: its four results and the bracket, round 1 decided.
    for page in screens:
        mode(page, "summary")
        assert page.locator("#results li").count() == 4
        assert page.locator("#bracket .rnd").count() == 3
        assert page.locator("#bracket .rnd").first.locator(".side.winner").count() == 4
        title = page.evaluate("() => document.getElementById('summary-title').textContent")
        assert title.startswith("Round 1 of 3"), title
        # It should draw each slot of a later round level with the middle of its two feeders.
        rounds = page.evaluate(BRACKET_CENTRES)
        assert [len(r) for r in rounds] == [4, 2, 1], rounds
        for feeders, later in itertools.pairwise(rounds):
            for i, centre in enumerate(later):
                middle = (feeders[2 * i] + feeders[2 * i + 1]) / 2
                assert abs(centre - middle) < 3, (rounds, i)
    for page in screens:
        shot(page, "summary")
    # It should go back to the wall for the semi-finals, then end on the podium.
    for page in screens:
        mode(page, "wall", timeout=HOLD_S * 1000 + 20_000)
    for page in screens:
        mode(page, "podium", timeout=120_000)
        page.wait_for_selector("#final-qr svg")
    for page in screens:
        shot(page, "podium")
        # It should show the top three and a link to the final's replay, with its QR code.
        assert page.locator("#steps .bs-step").count() == 3
        href = page.get_attribute("#final-link", "href")
        final = int(re.fullmatch(rf"{re.escape(site.base)}/matches/(\d+)/", href).group(1))
        assert page.evaluate("() => window.sameDocument") is True
        # It should have shown, in order: the wall, round 1's summary, the wall (the next
        # rounds: live panes again), and the podium last.
        seen = page.evaluate("() => arenaScreen.journal.map((j) => [j.mode, j.round])")
        assert seen[0] == ["wall", None] and seen[-1] == ["podium", None], seen
        assert seen.index(["summary", 1]) < seen.index(["wall", None], 1), seen
    body = screens[0].request.get(f"{site.base}/api/matches/{final}/").json()
    assert body["round"] == 3 and body["event"] == event, body
    snap = screens[0].request.get(f"{site.base}/events/{event}/screen.json").json()
    champion = snap["show"]["bracket"]["champion"]["name"]
    assert screens[0].inner_text("#steps .p1 .who") == champion
    # (the two semi-finals' losers share 3rd place: both stand on the podium)
    assert [r["name"] for r in snap["show"]["podium"]["top"]] == [
        r["name"] for r in snap["standings"] if r["place"] <= 3
    ]


def test_it_shows_nine_matches_at_most_and_counts_the_others(site, events, screens):
    event = events["Fifteen at once"]  # round 1 of a round robin of 6 bots: 15 matches at once
    for page in screens:
        # (the first page of nine held: the rotation to the others has its own test)
        page.goto(f"{site.base}/events/{event}/screen?rotate=600")
    site.start_event(event)
    for page in screens:
        # A pane is put up for a running match only: nine panes, nine matches seen live.
        page.wait_for_function("() => document.body.dataset.panes === '9'", timeout=60_000)
    for page in screens:
        # It should count the live matches it has no room for, inside its box (read at one
        # moment: the list is redrawn at every result).
        seen = page.evaluate(
            """() => {
                const last = document.querySelector('#upcoming li:last-child');
                const box = document.querySelector('.bs-next').getBoundingClientRect();
                const r = last.getBoundingClientRect();
                return {text: last.textContent, bottom: r.bottom, box: box.bottom};
            }"""
        )
        assert re.fullmatch(r"\+ \d+ more", seen["text"]), seen
        assert seen["bottom"] <= seen["box"] + 1, seen
    for page in screens:
        # It should lay nine panes out three by three (once laid out: as a match ends, its
        # pane gives way to the next one's, a frame or two on a loaded machine).
        widths = page.wait_for_function(
            "() => { const ws = [...document.querySelectorAll('#wall .pane')]"
            ".map((t) => t.getBoundingClientRect().width);"
            " return ws.length === 9 && ws.every((w) => w > 0) ? ws : null; }",
            timeout=30_000,
        ).json_value()
        assert max(widths) - min(widths) < 2 and 0.2 < widths[0] / page.viewport_size["width"] < 0.3
        shot(page, "wall-9")


@pytest.mark.parametrize("entries", [9, 16, 40])
def test_it_shows_every_standings_row_whatever_the_number_of_entries(
    site, events, screens, entries
):
    event = events[f"Table of {entries}"]
    for page in screens:
        page.goto(f"{site.base}/events/{event}/screen")
        page.wait_for_function(
            f"() => document.querySelectorAll('#standings .bs-row').length === {entries}"
        )
        # It should show all of them, every row inside the screen (shot() checks it), in more
        # columns when one is not enough.
        shot(page, f"standings-{entries}")
        columns = int(page.get_attribute("#standings", "data-cols"))
        assert columns == 1 if entries <= 16 else columns >= 2, columns


def test_it_reconnects_after_a_server_restart_and_catches_up(site, events, screens):
    page = screens[0]
    event = events["Restart cup"]
    page.goto(f"{site.base}/events/{event}/screen")
    page.wait_for_function("() => document.querySelectorAll('#standings .bs-row').length === 2")
    page.evaluate("() => { window.sameDocument = true; }")
    site.stop()
    # It should say it lost the server, and keep what it shows.
    page.wait_for_function(
        "() => document.getElementById('conn-state').textContent === 'reconnecting…'"
    )
    site.start_event(event)  # the matches are queued while the server is down
    site.start()
    # It should reconnect by itself and show what was played since: both results, the end.
    page.wait_for_function("() => document.body.dataset.standingsGames === '4'", timeout=60_000)
    mode(page, "podium")
    assert page.inner_text("#conn-state") == ""
    assert page.evaluate("() => window.sameDocument") is True
    shot(page, "restarted")
