"""A knockout's ties settled by play (issue 51 item 4) in headless Debian Chromium at 1920x1080
against the shared server of ``tests/e2e/conftest.py`` (``arena_site``): eight equal house
tic-tac-toe bots (every game drawn), a series of 2 and one decider game; the wall says each
tie the seed settled, under the round's results and under the podium (the semi-final losers
joint 3rd on one step), at 24 px or more; the event page says the tie policy and the joint
places. Screens are photographed into ``screenshots/`` (``ties-*``), to be looked at."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import SHOTS, projector_page, shell

pytestmark = pytest.mark.xdist_group("arena_site")  # one worker, one server

SEED_WORDS = "won on seed after 1\N{EN DASH}1 and 1 drawn decider"

#: the font size (px) and text of the visible elements matching a selector
SIZES = """(selector) => [...document.querySelectorAll(selector)]
  .filter((el) => el.checkVisibility())
  .map((el) => ({ px: parseFloat(getComputedStyle(el).fontSize), text: el.textContent }))"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def page():
    yield from projector_page()


def mode(page, wanted: str, timeout: float = 120_000) -> None:
    page.wait_for_function(f"() => document.body.dataset.mode === '{wanted}'", timeout=timeout)


def test_it_says_on_the_wall_and_the_event_page_which_ties_the_seed_settled(arena_site, page):
    event = int(
        shell(
            arena_site,
            "from django.contrib.auth import get_user_model\n"
            "from competition.models.bots import Bot\n"
            "from competition.models import Entry, Event\n"
            "User = get_user_model()\n"
            "o, _ = User.objects.get_or_create(username='ties-organiser')\n"
            "e = Event.objects.create(name='Ties cup', game='tictactoe',"
            " format='single_elimination', series_length=2, tie_decider='games',"
            " decider_games=1, round_gap=5, created_by=o)\n"
            "for i in range(8):\n"
            "    u, _ = User.objects.get_or_create(username=f'ties-owner-{i + 1}')\n"
            "    b = Bot.objects.create(owner=u, game='tictactoe', name=f'Equal {i + 1}',"
            " kind='builtin', target='perfect')\n"
            "    Entry.objects.create(event=e, bot=b, seed=i + 1)\n"
            "print(e.pk)\n",
        )
    )
    page.goto(f"{arena_site['base']}/events/{event}/screen?hold=4")
    page.wait_for_function("() => document.querySelectorAll('#standings .bs-row').length === 8")
    shell(
        arena_site,
        "from competition.events.services import start_event\n"
        f"from competition.models import Event\nstart_event(Event.objects.get(pk={event}))\n",
    )
    mode(page, "summary")
    page.wait_for_selector("#summary-ties:not([hidden])")
    # (the summary may come up on a feed read as the last quarter-final's decider ended)
    page.wait_for_function(
        "() => (document.getElementById('summary-ties').textContent"
        ".match(/Quarter-finals: /g) || []).length >= 4"
    )
    ties = page.inner_text("#summary-ties")
    # It should say, between the rounds, every quarter-final the seed settled and how.
    assert ties.startswith("Settled on seed (every game drawn):"), ties
    assert ties.count("Quarter-finals: ") == 4 and ties.count(SEED_WORDS) == 4, ties
    notes = page.evaluate(SIZES, "#bracket .note")
    assert [n["text"] for n in notes] == ["on seed"] * 4, notes
    # It should say it at 24 px or more (a room reads it).
    sizes = page.evaluate(SIZES, "#summary-ties, #summary-ties span, #bracket .note")
    assert sizes and min(s["px"] for s in sizes) >= 24, sizes
    page.screenshot(path=str(SHOTS / "ties-wall-results-1920x1080.png"))
    mode(page, "podium")
    page.wait_for_selector("#podium-ties:not([hidden])")
    # It should put both semi-final losers on the third step, joint, and say all seven ties.
    third = page.inner_text(".bs-step.p3")
    assert "joint 3rd" in third and third.count("Equal ") == 2, third
    said = page.inner_text("#podium-ties")
    assert said.count(SEED_WORDS) == 7 and "Final: " in said, said
    sizes = page.evaluate(SIZES, "#podium-ties span, .bs-step .what")
    assert min(s["px"] for s in sizes) >= 24, sizes
    page.screenshot(path=str(SHOTS / "ties-wall-podium-1920x1080.png"))
    page.goto(f"{arena_site['base']}/events/{event}/")
    shown = page.inner_text("main")
    # It should say the tie policy above the bracket, how each tie went, and joint places.
    assert "A level series plays one decider game; if it is drawn too, the higher seed" in shown
    assert shown.count(SEED_WORDS) == 7
    places = page.eval_on_selector_all(
        "#standings tbody tr td:first-child", "(cells) => cells.map((c) => c.textContent)"
    )
    assert places == ["1", "2", "joint 3rd", "joint 3rd", *["joint 5th"] * 4], places
    page.screenshot(path=str(SHOTS / "ties-event-page-1920x1080.png"), full_page=True)
