"""The big screen's wall on the always-live demo (issue 39), in headless Debian Chromium at
1920x1080 against the demo's shared server (``arena_demo_site``, ``tests/e2e/conftest.py``): it
plays several pairings and its wall leaves no slot empty. The wall's other states are in
``test_wall_browser.py``, on the shared server without the demo.
"""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import SHOTS, WALL, projector_page, shell

pytestmark = pytest.mark.xdist_group("arena_demo_site")  # one worker, one server


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def page():
    yield from projector_page()


def test_it_plays_several_pairings_on_the_demo_wall_with_no_empty_slot(arena_demo_site, page):
    site = arena_demo_site
    event = int(
        shell(
            site,
            "from competition.models import Event\n"
            "print(Event.objects.get(showcase=True, game='tictactoe').pk)\n",
        )
    )
    page.goto(f"{site['base']}/events/{event}/screen")
    pairings: set[tuple[str, ...]] = set()
    deadline = time.monotonic() + 120
    while len(pairings) < 3 and time.monotonic() < deadline:
        page.wait_for_function(
            "() => [...document.querySelectorAll('#wall .pane')].filter((t) =>"
            " t.dataset.status === 'running' && Number(t.dataset.turns) >= 1).length === 1",
            timeout=60_000,
        )
        wall = page.evaluate(WALL)
        pairings |= {tuple(sorted(p["names"])) for p in wall["panes"] if p["status"] == "running"}
        if len(pairings) == 2:
            page.screenshot(path=str(SHOTS / "wall-demo-1920x1080.png"))
        # It should fill the stage with its panes (the live match, and the last one's result
        # until the next begins), leaving no slot empty.
        boxes, stage = [p["box"] for p in wall["panes"]], wall["wall"]
        assert 1 <= len(boxes) <= 2, wall
        assert abs(min(b["left"] for b in boxes) - stage["left"]) < 2
        assert abs(max(b["right"] for b in boxes) - stage["right"]) < 2
        assert all(
            abs(b["top"] - stage["top"]) < 2 and abs(b["bottom"] - stage["bottom"]) < 2
            for b in boxes
        )
        area = sum(b["width"] * b["height"] for b in boxes)
        assert area > 0.97 * stage["width"] * stage["height"], wall
        page.wait_for_timeout(1500)
    # It should play several pairings of the showcase's bots (three bots, three pairings).
    assert len(pairings) == 3, pairings
