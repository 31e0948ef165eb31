"""Event day, round 2 (issue 39 items 1 and 2) in headless Debian Chromium at 1920x1080,
against ``manage.py serve`` (daphne, embedded runner) as a subprocess: rounds on a schedule
(the round gap) and a wall that follows the action (each round live on the stage, its results
between rounds, "Final" only on the final). Screens are photographed into ``screenshots/``
(``day-*``), to be looked at.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.conftest import PROJECTOR, SHOTS, Site, mode, projector_page

GAP_S = 5
HOLD_S = 3

LIVE_PANES = """() => [...document.querySelectorAll('#wall .pane')].map((t) => ({
  status: t.dataset.status, stage: t.dataset.stage, round: t.querySelector('.info').textContent,
  why: t.querySelector('.why').textContent, width: t.getBoundingClientRect().width }))"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site = Site(tmp_path_factory.mktemp("day"))
    site.start()
    yield site
    site.stop()


@pytest.fixture(scope="module")
def page(site):
    yield from projector_page()


def gap(site: Site, event: int, seconds: int) -> None:
    site.shell(
        "from competition.models import Event\n"
        f"Event.objects.filter(pk={event}).update(round_gap={seconds})\n"
    )


def live_panes(page, n: int, header: str | None = None) -> list[dict]:
    """The wall once it holds ``n`` panes, all live (and, with ``header``, the header's round
    says so and every board has a move on it: a settled screen to photograph)."""
    settled = (
        f" && document.getElementById('event-round').textContent === '{header}'"
        " && [...document.querySelectorAll('#wall .pane')].every((t) => Number(t.dataset.turns) >= 1)"
        if header
        else ""
    )
    page.wait_for_function(
        "() => document.body.dataset.mode === 'wall' && [...document.querySelectorAll("
        f"'#wall .pane')].filter((t) => t.dataset.status === 'running').length === {n}"
        f" && document.querySelectorAll('#wall .pane').length === {n}{settled}"
    )
    return page.evaluate(LIVE_PANES)


def test_it_shows_each_knockout_round_live_and_the_final_alone(site, page):
    event = site.events({"Day cup": ("single_elimination", ["perfect", "random"] * 4, 1000)})[
        "Day cup"
    ]
    gap(site, event, GAP_S)
    page.goto(f"{site.base}/events/{event}/screen?hold={HOLD_S}")
    page.wait_for_function("() => document.querySelectorAll('#standings .bs-row').length === 8")
    site.start_event(event)
    # It should show the four quarter-finals live.
    quarters = live_panes(page, 4)
    assert all(p["stage"] == "Quarter-finals" for p in quarters), quarters
    # It should sum round 1 up between the rounds.
    mode(page, "summary")
    assert "Round 1 of 3" in page.text_content("#summary-title")
    page.screenshot(path=str(SHOTS / "day-knockout-results-1920x1080.png"))
    # It should put both semi-finals on the stage side by side while they are live.
    semis = live_panes(page, 2, "round 2 of 3")
    assert [p["stage"] for p in semis] == ["Semi-finals"] * 2, semis
    assert all("round 2 of 3" in p["round"] for p in semis), semis
    assert abs(semis[0]["width"] - semis[1]["width"]) < 2
    page.screenshot(path=str(SHOTS / "day-knockout-semis-1920x1080.png"))
    # It should show the final alone and large, and call only it the final.
    (final,) = live_panes(page, 1, "round 3 of 3")
    assert final["stage"] == "Final" and "Final" in final["why"], final
    assert final["width"] > 0.55 * PROJECTOR["width"], final
    page.screenshot(path=str(SHOTS / "day-knockout-final-1920x1080.png"))
    mode(page, "podium", timeout=90_000)
    journal = page.evaluate("() => window.arenaScreen.journal.map((j) => j.mode)")
    # It should never show the results while a round is live: wall, summary, wall … podium.
    assert journal[-1] == "podium" and "summary" in journal


def test_it_waits_the_round_gap_in_a_round_robin_and_shows_the_results_between(site, page):
    event = site.events(
        {"Day robin": ("round_robin", ["perfect", "random"] * 2 + ["random"], 300)}
    )["Day robin"]
    gap(site, event, GAP_S)
    page.goto(f"{site.base}/events/{event}/screen?hold={HOLD_S}")
    page.wait_for_function("() => document.querySelectorAll('#standings .bs-row').length === 5")
    site.start_event(event)
    # It should show round 1's results once it is over, while round 2 waits for the gap (read
    # from the wall's journal: on a loaded machine, the shell that started the event can
    # return after round 1 was played and summed up, 3 s and 5 s).
    page.wait_for_function(
        "() => window.arenaScreen.journal.some((j) => j.mode === 'summary' && j.round === 1)",
        timeout=60_000,
    )
    mode(page, "summary")
    assert re.match(r"Round [1-5] of 5: results", page.text_content("#summary-title"))
    page.screenshot(path=str(SHOTS / "day-robin-gap-1920x1080.png"))
    live_panes(page, 2)
    times = json.loads(
        site.shell(
            "import json\nfrom django.db.models import Max, Min\n"
            "from competition.models import Match\n"
            f"m = Match.objects.filter(event_id={event})\n"
            "a = m.filter(round=1).aggregate(t=Max('finished'))['t']\n"
            "b = m.filter(round=2).aggregate(t=Min('started'))['t']\n"
            "print(json.dumps([a.timestamp(), b.timestamp()]))\n"
        )
    )
    # It should start round 2 at least the gap after round 1's last match ended.
    assert times[1] - times[0] >= GAP_S, times
    journal = page.evaluate("() => window.arenaScreen.journal")
    summaries = [j for j in journal if j["mode"] == "summary"]
    # It should have shown round 1's results in between.
    assert summaries and summaries[0]["round"] == 1
    assert summaries[0]["at"] / 1000 < times[1] + 1


#: every seat bar of every pane, and every standings row's mark: bot -> (letter, colour)
MARKS = """() => ({
  panes: [...document.querySelectorAll('#wall .pane')].map((t) =>
    [...t.querySelectorAll('.fseat')].map((li) => ({
      bot: li.dataset.bot, letter: li.querySelector('.tag').textContent, colour: li.style.color,
      dotted: li.classList.contains('dotted'), px: parseFloat(getComputedStyle(li).fontSize),
      shown: li.getBoundingClientRect().height > 0 }))),
  standings: [...document.querySelectorAll('#standings .bs-row')].map((row) => ({
    bot: row.dataset.bot, letter: row.querySelector('.tag')?.textContent,
    colour: row.querySelector('.tag')?.style.color, record: row.querySelector('.wdl').textContent })),
})"""


def check_marks(page) -> dict:
    marks = page.evaluate(MARKS)
    table = {row["bot"]: (row["letter"], row["colour"]) for row in marks["standings"]}
    # It should give every bot one letter (one colour and pattern with it) in the standings.
    assert len(table) == 12 and len({letter for letter, _c in table.values()}) == 12, table
    for pane in marks["panes"]:
        # It should show every pane's legend, six seats, each at 24 px or more at 1080p …
        assert len(pane) == 6 and all(s["shown"] and s["px"] >= 24 for s in pane), pane
        # … each bot in the letter and colour it has in the standings.
        for seat in pane:
            assert (seat["letter"], seat["colour"]) == table[seat["bot"]], (seat, table)
    return marks


def test_it_shows_every_free_for_all_table_with_one_colour_per_bot(site, page):
    event = int(
        site.shell(
            "from django.contrib.auth import get_user_model\n"
            "from competition.models.bots import Bot\n"
            "from competition.models import Entry, Event\n"
            "o, _ = get_user_model().objects.get_or_create(username='organiser')\n"
            "e = Event.objects.create(name='Day tron', game='tron', format='free_for_all',"
            " table_size=6, rounds=2, round_gap=3, pace_ms=250, created_by=o,"
            " options={'width': 20, 'height': 20})\n"
            "for i in range(12):\n"
            "    s = ('survivor', 'random')[i % 2]\n"
            "    b = Bot.objects.create(owner=o, game='tron', name=f'{s}-{i + 1}',"
            " kind='builtin', target=s)\n"
            "    Entry.objects.create(event=e, bot=b, seed=i + 1)\n"
            "print(e.pk)\n"
        )
    )
    page.goto(f"{site.base}/events/{event}/screen?hold={HOLD_S}")
    page.wait_for_function("() => document.querySelectorAll('#standings .bs-row').length === 12")
    site.start_event(event)
    # It should show both live tables of round 1 (of 2), each with its legend.
    live_panes(page, 2)
    page.wait_for_function(
        "() => document.getElementById('event-round').textContent === 'round 1 of 2' &&"
        " [...document.querySelectorAll('#wall .pane')].every((t) => Number(t.dataset.turns) >= 3)"
    )
    first = check_marks(page)
    page.screenshot(path=str(SHOTS / "day-tron-round1-1920x1080.png"))
    # It should show round 2's tables too, each bot still in its colour.
    page.wait_for_function(
        "() => document.getElementById('event-round').textContent === 'round 2 of 2' &&"
        " [...document.querySelectorAll('#wall .pane')].filter((t) =>"
        " t.dataset.status === 'running' && Number(t.dataset.turns) >= 3).length === 2",
        timeout=120_000,
    )
    second = check_marks(page)
    page.screenshot(path=str(SHOTS / "day-tron-round2-1920x1080.png"))
    seats = lambda marks: [[s["bot"] for s in pane] for pane in marks["panes"]]  # noqa: E731
    assert seats(first) != seats(second)  # the bots changed tables and seats
    mode(page, "podium", timeout=120_000)
    records = [row["record"] for row in page.evaluate(MARKS)["standings"]]
    # It should give placings, not W-D-L, in a six-way game.
    assert all("\u2013" not in r for r in records) and any("1st" in r for r in records), records
