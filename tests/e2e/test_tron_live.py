"""A 13-snake tron match live: ``manage.py serve`` (daphne, embedded runner) as a subprocess,
13 seats of one HTTP bot served by ``manage.py serve_bot tron:survivor``, the match made
through the REST API. A websocket client joining late, and the browser (Playwright, 1920x1080)
opening the page late and scrubbing the replay, must both have exactly the board of lap k:
the trails rebuilt from frames 0..k (frames carry only each lap's new heads, spec §6), equal
to the board the stored frames give (``tests/games/test_tron.py`` ties that to the engine).
Then the big screen of a 13-seat free-for-all event shows every seat of its featured match."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import aiohttp
import pytest

from games import get_game
from tests.conftest import REPO, free_port
from tests.e2e.conftest import CANCEL, SETUP_USER, api
from tests.live_protocol import check
from tests.processes import manage, running

pytestmark = pytest.mark.xdist_group("arena_site")  # one worker, one server

OPTIONS = {"width": 84, "height": 84, "move_timeout_ms": 5000}
#: where the screenshots go (looked at by the person running the test)
SHOTS = Path(os.environ.get("ARENA_SHOTS", Path(tempfile.gettempdir()) / "arena-shots"))


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture: Playwright's sync API runs its own loop."""
    yield


@pytest.fixture(scope="module")
def site(arena_site):
    """The bot served beside the shared server (tests/e2e/conftest.py)."""
    env, port, bot_port = arena_site["env"], arena_site["port"], free_port()
    bot = [sys.executable, str(REPO / "manage.py"), "serve_bot", "tron:survivor"]
    with running([*bot, "--port", str(bot_port)], bot_port, env=env):
        done = manage("shell", "-c", SETUP_USER, env=env)
        assert done.returncode == 0, done.stderr
        yield {
            "port": port,
            "token": done.stdout.strip().splitlines()[-1],
            "url": f"http://127.0.0.1:{bot_port}/",
            "env": env,
        }


def rebuild(frames: list[dict]) -> list[list]:
    """The trails of the last of ``frames`` (laps 0..k): heads only, a death erases."""
    trails = [[h] if h else [] for h in frames[0]["heads"]]
    for frame in frames[1:]:
        for seat, head in enumerate(frame["heads"]):
            if not frame["alive"][seat]:
                trails[seat] = []
            elif head is not None:
                trails[seat].insert(0, head)
    return trails


def initial_frame(seed: int) -> dict:
    game = get_game("tron")
    options = game.options_for_seats(game.resolve_options(OPTIONS), 13)
    return json.loads(json.dumps(game.frame(game.initial_state(seed=seed, options=options))))


async def all_turns(session, site, match_id: int) -> list[dict]:
    """Every stored turn, following the turns API's pages."""
    turns, since = [], 0
    while True:
        body = await api(session, site, "GET", f"/api/matches/{match_id}/turns/?since={since}")
        turns += body["results"]
        if not body["more"]:
            return turns
        since = body["next_since"]


def stored_turns(site, match_id: int) -> list[dict]:
    """``all_turns`` without an event loop (Playwright's sync API holds this thread's)."""
    turns, since = [], 0
    while True:
        request = urllib.request.Request(
            f"http://127.0.0.1:{site['port']}/api/matches/{match_id}/turns/?since={since}",
            headers={"Authorization": f"Token {site['token']}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.load(response)
        turns += body["results"]
        if not body["more"]:
            return turns
        since = body["next_since"]


async def start_match(session, site, pace_ms: int) -> dict:
    bot = await api(
        session,
        site,
        "POST",
        "/api/bots/",
        json={"name": "survivor", "game": "tron", "kind": "http", "target": site["url"]},
    )
    return await api(
        session,
        site,
        "POST",
        "/api/matches/challenge/",
        json={
            "game": "tron",
            "bots": [bot["id"]] * 13,
            "options": OPTIONS,
            "seed": 5,
            "pace_ms": pace_ms,
        },
    )


async def late_join(session, site, match_id: int, after_laps: int) -> dict:
    """Wait until the match has ``after_laps`` laps, then join: the snapshot, the turns
    before it from the turns API (as the viewer does), a few live turns."""
    while True:
        body = await api(session, site, "GET", f"/api/matches/{match_id}/")
        if body["turn_count"] >= after_laps:
            break
        assert body["status"] in ("queued", "running"), body
        await asyncio.sleep(0.1)
    url = f"ws://127.0.0.1:{site['port']}/ws/matches/{match_id}/"
    origin = {"Origin": f"http://127.0.0.1:{site['port']}"}
    turns: dict[int, dict] = {}
    snapshot = None
    async with session.ws_connect(url, headers=origin) as ws:
        async with asyncio.timeout(30):
            async for msg in ws:
                data = json.loads(msg.data)
                check("match", data)
                if data["type"] == "snapshot":
                    snapshot = data
                    turns.update({t["number"]: t for t in data["turns"]})
                elif data["type"] == "turn":
                    turns[data["turn"]["number"]] = data["turn"]
                if data["type"] == "end" or len(turns) >= len(snapshot["turns"]) + 3:
                    break
    assert snapshot is not None and snapshot["first"] > 1  # older turns are not in it
    for t in await all_turns(session, site, match_id):
        turns.setdefault(t["number"], t)
    return {"snapshot": snapshot, "turns": [turns[n] for n in sorted(turns)]}


def test_a_late_joiner_and_a_scrubbed_replay_show_exactly_the_board_of_lap_k(site):
    from playwright.sync_api import sync_playwright

    async def joined() -> tuple[dict, dict]:
        async with aiohttp.ClientSession() as session:
            match = await start_match(session, site, pace_ms=60)
            return match, await late_join(session, site, match["id"], after_laps=55)

    match, late = asyncio.run(joined())
    match_id = match["id"]
    frame0 = initial_frame(match["seed"])
    numbers = [t["number"] for t in late["turns"]]
    # It should give a late websocket client every lap from 1 on (snapshot, turns API, live).
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) > 55
    k = len(numbers)
    late_board = rebuild([frame0, *[t["frame"] for t in late["turns"]]])

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1920, "height": 1080})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        # The browser joins late too (the match is still running).
        page.goto(f"http://127.0.0.1:{site['port']}/matches/{match_id}/")
        page.wait_for_function(
            "() => window.arenaViewer && window.arenaViewer.last > 55", timeout=30_000
        )
        time.sleep(0.3)
        live_index, live_trails, live_status = page.evaluate(
            "() => [arenaViewer.index, arenaViewer.renderer.board.trails, arenaViewer.match.status]"
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "tron-13-live-1920.png"))
        assert page.locator(".players.many .player").count() == 13
        # Wait for the end, then compare with the stored frames.
        page.wait_for_function("() => document.body.dataset.matchDone === '1'", timeout=240_000)

        turns = stored_turns(site, match_id)
        frames = [frame0, *[t["frame"] for t in turns]]
        # It should have rebuilt, from what the late websocket client got, the board of lap k.
        assert late_board == rebuild(frames[: k + 1])
        assert [t["frame"] for t in late["turns"]] == frames[1 : k + 1]
        # It should draw in the browser that joined late exactly the board of its lap.
        assert live_status == "running" and live_index > 55
        assert live_trails == rebuild(frames[: live_index + 1])
        # It should show exactly the board of lap k after scrubbing (back, forward, far).
        last = len(frames) - 1
        for lap in (k, 1, k + 1 if k < last else k, last // 2, last, 0, 37):
            page.evaluate(f"() => arenaViewer.seek({lap})")
            got = page.evaluate("() => [arenaViewer.index, arenaViewer.renderer.board.trails]")
            assert got == [lap, rebuild(frames[: lap + 1])], lap
        # It should open a replay link ?turn=k on the board of lap k.
        page.goto(f"http://127.0.0.1:{site['port']}/matches/{match_id}/?turn={k}")
        page.wait_for_function(
            f"() => window.arenaViewer && arenaViewer.index === {k}", timeout=30_000
        )
        assert page.evaluate("() => arenaViewer.renderer.board.trails") == rebuild(frames[: k + 1])
        page.screenshot(path=str(SHOTS / "tron-13-replay-1920.png"))
        assert errors == []
        browser.close()


#: a free-for-all event of 13 built-in snakes at one table, started (prints its id)
SCREEN_EVENT = """
from django.contrib.auth import get_user_model
from competition.models.bots import Bot
from competition.events.services import start_event
from competition.models import Entry, Event
o = get_user_model().objects.get(username="alice")
e = Event.objects.create(name="Thirteen snakes", game="tron", format="free_for_all",
                         table_size=13, pace_ms=120, created_by=o)
for i in range(13):
    b = Bot.objects.create(owner=o, game="tron", name=f"snake-{i + 1:02}", kind="builtin",
                           target="survivor" if i % 3 else "random")
    Entry.objects.create(event=e, bot=b, seed=i + 1)
start_event(e)
print(e.pk)
"""


def test_the_big_screen_shows_all_13_seats_of_a_free_for_all(site):
    from playwright.sync_api import sync_playwright

    done = manage("shell", "-c", SCREEN_EVENT, env=site["env"])
    assert done.returncode == 0, done.stderr
    event = int(done.stdout.strip().splitlines()[-1])
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
        page.set_default_timeout(60_000)  # the server is playing 13 snakes meanwhile
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{site['port']}/events/{event}/screen")
        page.wait_for_function(
            "() => Number(document.body.dataset.featuredTurns || 0) > 10", timeout=90_000
        )
        # (the bars are drawn once the renderer's seat colours have loaded; they are read in
        # the same instant as the wait sees them drawn: each turn draws them anew, and the
        # match may end meanwhile)
        drawn = page.wait_for_function(
            """() => { const bars = [...document.querySelectorAll('#wall .pane.lead .fseat')];
                if (bars.length !== 13 || !bars.every(
                    (e) => e.style.color && e.getBoundingClientRect().width > 40)) return null;
                return bars.map(e => { const r = e.getBoundingClientRect(); return {
                    name: e.querySelector('.name').textContent, tag: e.querySelector('.tag').textContent,
                    colour: getComputedStyle(e).color, dotted: e.classList.contains('dotted'),
                    shown: r.width > 40 && r.height > 8 && r.bottom <= innerHeight && r.right <= innerWidth}; }); }""",
            timeout=30_000,
        )
        bars = drawn.json_value()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "tron-13-screen-1920.png"))
        # It should show one bar per seat of the featured match, each inside the screen ...
        assert len(bars) == 13 and all(bar["shown"] for bar in bars)
        assert sorted(bar["name"] for bar in bars) == [f"snake-{i:02}" for i in range(1, 14)]
        # ... told apart by letter, and by colour and pattern together (colour-blind viewers)
        assert len({bar["tag"] for bar in bars}) == 13
        assert len({(bar["colour"], bar["dotted"]) for bar in bars}) == 13
        # ... and the 13 entries in the standings column, none clipped by its panel.
        assert page.locator("#standings .bs-row").count() == 13
        assert page.evaluate(
            """() => { const box = document.querySelector('.bs-standings')
                .getBoundingClientRect(); return [...document.querySelectorAll('#standings .bs-row')]
                .every(tr => tr.getBoundingClientRect().bottom <= box.bottom + 1); }"""
        )
        assert errors == []
        browser.close()
    # (cancelled, its running match too: the 13 snakes would keep the shared runner busy
    # under the next modules' matches)
    done = manage("shell", "-c", CANCEL.format(event=event), env=site["env"])
    assert done.returncode == 0, done.stderr
