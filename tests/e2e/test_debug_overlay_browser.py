"""A bot's debug overlay in the match viewer: headless Debian Chromium (Playwright) against
``manage.py serve`` (daphne, embedded runner) as a subprocess, with a real HTTP bot (a
subprocess on loopback) that marks cells and writes a text in its replies. The owner sees
the layer over the board and can switch it off per seat; another user sees no overlay.
Screenshots go to ``screenshots/debug-overlay-*.png``."""

from __future__ import annotations

import json
import sys
import textwrap
import time
import urllib.request

import pytest
from playwright import sync_api as playwright_api

from tests.conftest import REPO, free_port
from tests.live_protocol import check_text, stream_of
from tests.processes import manage, running

pytestmark = pytest.mark.xdist_group("arena_site")  # one worker, one server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
SHOTS = REPO / "screenshots"
PASSWORD = "pw-debug-overlay-42"

BOT = textwrap.dedent(
    """
    import json, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Bot(BaseHTTPRequestHandler):
        def do_POST(self):
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = {}
            if message.get("action") == "play-turn":
                free = [k for k, v in message["board"].items() if v == ""]
                reply = {"play": free[0], "debug": {
                    "text": f"{len(free)} free cells; I take {free[0]}",
                    "marks": [{"cell": [int(k[2]), int(k[0])], "color": "#2ecc71" if i == 0
                               else "#f5c542", "label": "pick" if i == 0 else str(i)}
                              for i, k in enumerate(free[:4])]}}
            body = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    HTTPServer(("127.0.0.1", int(sys.argv[1])), Bot).serve_forever()
    """
)

SETUP = """
from competition.models.bots import Bot
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
User = get_user_model()
owner = User.objects.create_user("owner", password="{pw}")
User.objects.create_user("other", password="{pw}")
bot = Bot.objects.create(owner=owner, game="tictactoe", name="marker", kind="http", target="{url}")
rival = Bot.objects.create(owner=owner, game="tictactoe", name="rival", kind="builtin", target="random")
print(ApiToken.objects.issue(owner, "tests")[1], bot.pk, rival.pk)
"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Playwright's sync API runs its own event loop in this thread (no outbound call here)."""
    yield


@pytest.fixture(scope="module")
def site(tmp_path_factory, arena_site):
    """The marker bot, served beside the shared server (tests/e2e/conftest.py)."""
    data = tmp_path_factory.mktemp("debug-overlay")
    script = data / "marker_bot.py"
    script.write_text(BOT)
    bot_port = free_port()
    with running([sys.executable, str(script), str(bot_port)], bot_port, env=arena_site["env"]):
        url = f"http://127.0.0.1:{bot_port}/"
        done = manage("shell", "-c", SETUP.format(pw=PASSWORD, url=url), env=arena_site["env"])
        assert done.returncode == 0, done.stderr
        token, bot, rival = done.stdout.strip().splitlines()[-1].split()
        yield {"base": arena_site["base"], "token": token, "bots": [int(bot), int(rival)]}


def api(site, method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        site["base"] + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Token {site['token']}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # loopback only
        return json.loads(response.read())


def finished_match(site) -> int:
    match = api(
        site, "POST", "/api/matches/challenge/", {"game": "tictactoe", "bots": site["bots"]}
    )
    for _ in range(200):
        if api(site, "GET", f"/api/matches/{match['id']}/")["status"] == "finished":
            return match["id"]
        time.sleep(0.1)
    raise AssertionError("the match did not finish")


def page_as(browser, site, username: str, errors: list):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def checked(ws):
        stream = stream_of(ws.url)

        def frame(payload):
            try:
                check_text(stream, payload)
            except (AssertionError, ValueError) as exc:
                errors.append(str(exc))

        ws.on("framereceived", frame)

    page.on("websocket", checked)
    page.goto(site["base"] + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("form.stack button[type=submit]")
    return page


LAYER_PIXELS = """() => {
  const c = document.querySelector('canvas.debug-layer');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
  return n;
}"""


def test_it_draws_the_owners_overlay_and_hides_it_from_others(site):
    # It should draw the bot's marks over the board and its text beside it for the owner on
    # turn 1, switch them off with the seat's toggle, and show nothing to another user.
    match = finished_match(site)
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = page_as(browser, site, "owner", errors)
            page.goto(f"{site['base']}/matches/{match}/?turn=1")
            page.wait_for_function("() => document.body.dataset.matchDone === '1'")
            page.wait_for_selector("#debug-panel:not([hidden]) pre")
            text = page.inner_text("#debug-panel")
            assert "9 free cells; I take 0-0" in text
            assert page.evaluate(LAYER_PIXELS) > 1000  # four marks drawn over the board
            page.screenshot(path=str(SHOTS / "debug-overlay-owner-1280x900.png"))
            page.click("#debug-panel input[data-seat='0']")
            assert page.evaluate(LAYER_PIXELS) == 0
            assert "No overlay on this turn." in page.inner_text("#debug-panel")
            page.screenshot(path=str(SHOTS / "debug-overlay-toggled-off-1280x900.png"))

            other = page_as(browser, site, "other", errors)
            other.goto(f"{site['base']}/matches/{match}/?turn=1")
            other.wait_for_function("() => document.body.dataset.matchDone === '1'")
            other.wait_for_function("() => window.arenaViewer && window.arenaViewer.last > 0")
            assert other.locator("#debug-panel").is_hidden()
            assert other.evaluate(LAYER_PIXELS) == 0
            other.screenshot(path=str(SHOTS / "debug-overlay-other-1280x900.png"))
        finally:
            browser.close()
    assert errors == []
