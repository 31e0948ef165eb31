"""The live servers the browser modules share: ``manage.py serve`` once per test process.

The fixtures are session-scoped: with ``pytest -n auto --dist loadfile`` each xdist worker
runs whole modules and starts a server once, when the first module that asks for it runs;
the modules after it on that worker find it up. Each module brings its own users, bots and
events under names of its own (the database is shared), and leaves no match running that
another module would count.

- ``arena_site``: a fresh data directory, bots allowed on loopback, no demo (no paced
  showcases), one runner process (matches still cross from a runner process to the web
  process).
- ``arena_demo_site``: the same with the demo (its event and a paced showcase of every
  game, rated built-ins on the leaderboards) and the default runner processes, for the
  modules that look at the demo.

A module with settings or a life of its own keeps its own server and says why beside it:
``test_browser`` (it leaves a human's match of every game waiting, which the home page's
live counts would show), ``test_showcase_browser`` (it times the first seconds of a fresh
server), ``test_screen_browser`` (a restart), ``test_live`` (runner processes killed on
purpose, short leases), ``test_api_fuzz`` (raised throttles), ``test_serve`` and
``test_embedded_durability`` (the start-up itself).

Below them, what the browser modules share: Chromium's path and arguments, page sizes and
the screenshots folder, the ``chromium`` and ``demo_pages`` fixtures, the projector page,
``Site`` (a server of a module's own), ``shell`` on a site's database and the live API call.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright import sync_api as playwright_api

from tests.conftest import LOOPBACK, REPO, free_port
from tests.live_protocol import check_text, stream_of
from tests.processes import project_env, running


@contextmanager
def served(data: Path, *options: str, **settings: str):
    """Run ``manage.py serve`` with ``options`` on the data directory ``data``, with the
    environment's ``settings`` on top of the shared ones; yield ``{"base", "port", "env",
    "log"}`` (``env``: for ``manage.py`` commands on its database, e.g.
    ``manage("shell", "-c", ..., env=site["env"])``). The standing ladder is off: a bot that
    passes a test call in one module would otherwise play ladder matches on the shared
    runner under every other module's live matches and pages (the ladder is tested from
    outside on a server of its own, tests/competition/events/test_standing_ladder_live.py)."""
    env = project_env(
        ARENA_DATA_DIR=str(data),
        ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
        ARENA_LADDER="false",
        **settings,
    )
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", *options, "--port", str(port)]
    log = data / "server.log"
    with running(server, port, env=env, log=log):
        yield {"base": f"http://127.0.0.1:{port}", "port": port, "env": env, "log": log}


def serve(tmp_path_factory, name: str, *options: str):
    """``served`` on a fresh data directory until the session ends."""
    with served(tmp_path_factory.mktemp(name), *options) as site:
        yield site


@pytest.fixture(scope="session")
def arena_site(tmp_path_factory):
    """The shared server without the demo (see the module's docstring)."""
    yield from serve(tmp_path_factory, "arena-site", "--no-demo", "--runners", "1")


@pytest.fixture(scope="session")
def arena_demo_site(tmp_path_factory):
    """The shared server with the demo (see the module's docstring)."""
    yield from serve(tmp_path_factory, "arena-demo-site")


# -- browsers, pages and shells the browser modules share ----------------------------------------


CHROMIUM = "/usr/bin/chromium"


ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


PHONE = {"width": 390, "height": 844}


PROJECTOR = {"width": 1920, "height": 1080}


SHOTS = REPO / "screenshots"


@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium for a module (test_browser's and test_browser_boards' ``browser``)."""
    SHOTS.mkdir(exist_ok=True)
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


class UI:
    """A projector page and a phone page sharing one signed-in user (after sign-up)."""

    def __init__(self, browser, base: str, log: Path | None = None):
        self.browser, self.base, self.log = browser, base, log
        self.errors: list[str] = []
        self.websockets: list[str] = []  # every websocket a page opened (checked frames)
        self.desktop = self.page(PROJECTOR)
        self.phone = self.page(PHONE)

    def page(self, viewport, storage_state=None):
        context = self.browser.new_context(viewport=viewport, storage_state=storage_state)
        context.set_default_timeout(20_000)
        page = context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"{page.url}: {exc}"))
        page.on("websocket", self.check_websocket)
        return page

    def check_websocket(self, ws) -> None:
        """Every frame of the page's websockets keeps to the live protocol's schemas (the
        server's messages, and the moves a human seat sends); a violation fails the module."""
        stream = stream_of(ws.url)
        if stream is None:
            self.errors.append(f"a websocket without a published schema: {ws.url}")
            return
        self.websockets.append(ws.url)

        def checked(name: str, payload) -> None:
            try:
                check_text(name, payload)
            except (AssertionError, ValueError) as exc:
                self.errors.append(f"{ws.url}: {exc}")

        ws.on("framereceived", lambda payload: checked(stream, payload))
        if stream == "play":
            ws.on("framesent", lambda payload: checked("play-move", payload))

    def share_login(self) -> None:
        """Give the phone the desktop's session."""
        state = self.desktop.context.storage_state()
        self.phone.context.close()
        self.phone = self.page(PHONE, storage_state=state)

    def url(self, path: str) -> str:
        return self.base + path

    def both(self, path: str, name: str, ready: str | None = None) -> None:
        for page in (self.desktop, self.phone):
            page.goto(self.url(path))
            if ready:
                page.wait_for_function(ready)
            shot(page, name)


def shot(page, name: str) -> None:
    size = page.viewport_size
    page.screenshot(path=str(SHOTS / f"{name}-{size['width']}x{size['height']}.png"))
    # It should fit the width of the screen: no page scrolls sideways.
    wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 1, f"{name} at {size['width']}px is {wide}px too wide"


def cell_point(page, cell):
    """Page coordinates of a board cell's centre, from the renderer's own layout."""
    return page.evaluate(
        """([a, b]) => {
            const r = window.arenaViewer.renderer;
            const box = document.getElementById('board').getBoundingClientRect();
            const L = r.L || r.B;
            const x0 = L.x0, y0 = L.y0, cell = L.cell;
            return [box.left + x0 + (b + 0.5) * cell, box.top + y0 + (a + 0.5) * cell];
        }""",
        list(cell),
    )


def sign_up(page, base: str, username: str, password: str) -> None:
    """A new account through the site's sign-up form; the page ends on "My bots"."""
    page.goto(base + "/accounts/signup/")
    page.fill("#id_username", username)
    page.fill("#id_password1", password)
    page.fill("#id_password2", password)
    page.click("main form.stack button[type=submit]")
    page.wait_for_url("**/bots/")


def match_id(page) -> int:
    return int(re.search(r"/matches/(\d+)/", page.url).group(1))


def start_match(ui, slug: str, p1: str, p2: str) -> int:
    """Play p1 against p2 through /games/<slug>/play (GET shows them, the button POSTs)."""
    page = ui.desktop
    page.goto(ui.url(f"/games/{slug}/play?p1={p1}&p2={p2}"))
    with page.expect_navigation() as navigation:
        page.click("#play-button")
    errors = page.locator("ul.errors").all_inner_texts()
    assert not errors, errors
    response = navigation.value
    assert re.search(r"/matches/\d+/$", page.url), (
        page.url,
        response and response.status,
        ui.log.read_text()[-4000:] if ui.log else "",
    )
    return match_id(page)


def wait_done(page, timeout: float = 60_000) -> None:
    page.wait_for_function("() => document.body.dataset.matchDone === '1'", timeout=timeout)


def projector_page():
    """One page at 1920x1080 for a module; no page may have thrown by its end."""
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport=PROJECTOR).new_page()
        page.set_default_timeout(60_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield page
        browser.close()
    assert errors == []


class Site:
    """The server, which a test may stop and start again on the same port and database (one
    of its own: the shared ones of tests/e2e/conftest.py must stay up)."""

    def __init__(self, data):
        self.env = project_env(ARENA_DATA_DIR=str(data), ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = data / "server.log"
        self.stack: contextlib.ExitStack | None = None

    def start(self) -> None:
        argv = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo"]
        self.stack = contextlib.ExitStack()
        self.stack.enter_context(
            running([*argv, "--port", str(self.port)], self.port, env=self.env, log=self.log)
        )

    def stop(self) -> None:
        if self.stack is not None:
            self.stack.close()
            self.stack = None

    def shell(self, code: str) -> str:
        """Run ``code`` in ``manage.py shell`` on the site's database; its last printed line."""
        done = subprocess.run(
            [sys.executable, str(REPO / "manage.py"), "shell", "-c", code],
            env=self.env, cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        lines = done.stdout.strip().splitlines()
        return lines[-1] if lines else ""

    def events(self, specs: dict[str, tuple[str, list[str], int]]) -> dict[str, int]:
        """Draft events of built-in bots, made in one shell (a Django start-up takes seconds
        on a busy machine): ``{name: (format, strategies, pace_ms)}``, one bot per strategy
        listed, seeded in that order; their ids by name."""
        return json.loads(
            self.shell(
                "import json\n"
                "from django.contrib.auth import get_user_model\n"
                "from competition.models.bots import Bot\n"
                "from competition.models import Entry, Event\n"
                "o, _ = get_user_model().objects.get_or_create(username='organiser')\n"
                "ids = {}\n"
                f"for name, (fmt, strategies, pace) in {specs!r}.items():\n"
                "    e = Event.objects.create(name=name, game='tictactoe', format=fmt,"
                " pace_ms=pace, created_by=o)\n"
                "    ids[name] = e.pk\n"
                "    for i, s in enumerate(strategies, 1):\n"
                "        b = Bot.objects.create(owner=o, game='tictactoe', name=f'{s}-{e.pk}-{i}',"
                " kind='builtin', target=s)\n"
                "        Entry.objects.create(event=e, bot=b, seed=i)\n"
                "print(json.dumps(ids))\n"
            )
        )

    def start_event(self, event: int) -> None:
        self.shell(
            "from competition.events.services import start_event\n"
            f"from competition.models import Event\nstart_event(Event.objects.get(pk={event}))\n"
        )


def mode(page, wanted: str, timeout: float = 60_000) -> None:
    page.wait_for_function(f"() => document.body.dataset.mode === '{wanted}'", timeout=timeout)


#: the wall's box and each pane's: match id, status, names, box
WALL = """() => ({
  wall: document.getElementById('wall').getBoundingClientRect().toJSON(),
  pages: document.getElementById('wall-pages').textContent,
  panes: [...document.querySelectorAll('#wall .pane')].map((t) => ({
    id: Number(t.dataset.match), status: t.dataset.status,
    names: [t.querySelector('.n0').textContent, t.querySelector('.n1').textContent],
    box: t.getBoundingClientRect().toJSON() })),
})"""


#: cancel event ``{event}``: its queued matches, and its running ones (``cancel_event`` leaves
#: those to end by themselves)
CANCEL = """
from competition.events.services import cancel_event
from competition.matches.lifecycle import cancel
from competition.models import Event, Match
cancel_event(Event.objects.get(pk={event}))
for m in Match.objects.filter(event_id={event}, status="running"):
    cancel(m.pk, "event cancelled", advance=False)
"""


def shell(site: dict, code: str) -> str:
    """Run ``code`` in ``manage.py shell`` on ``site``'s database; its last printed line."""
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "shell", "-c", code],
        env=site["env"], cwd=REPO, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else ""


SETUP_USER = """
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
user, _ = get_user_model().objects.get_or_create(username="alice")
user.set_password("alice-password-123"); user.save()
print(ApiToken.objects.issue(user, "tests")[1])
"""


async def api(session, site, method, path, **kw):
    headers = {"Authorization": f"Token {site['token']}"}
    async with session.request(
        method, f"http://127.0.0.1:{site['port']}{path}", headers=headers, **kw
    ) as r:
        body = await r.json(content_type=None)
        assert r.status < 300, (r.status, body)
        return body


#: the demo walk's page sizes (``demo_pages``)
WIDE, NARROW = {"width": 1280, "height": 900}, {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def demo_bots(arena_demo_site):
    """Two bots served beside the shared server with the demo (``arena_demo_site``)."""
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
def demo_pages(demo_bots):
    """New pages on ``demo_bots``'s site (``new(viewport, state)``); none may throw."""
    site = demo_bots
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
