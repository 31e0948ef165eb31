"""A match ended by a fault, read by a person (issue 39, "one language"): a real HTTP bot on
loopback that answers garbage plays a built-in on the shared server (``tests/e2e/conftest.py``)
until it forfeits; the match viewer's result line (headless Chromium), the API's words and
``arena watch`` say what happened in the fault catalogue's words (``bots.faults.SEEN``), never
the raw code.
"""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
import time

import pytest
import requests
from playwright import sync_api as playwright_api

from bots.faults import SEEN, FaultCode
from tests.conftest import REPO
from tests.e2e.conftest import ARGS, CHROMIUM
from tests.processes import arena, ok

pytestmark = pytest.mark.xdist_group("arena_site")  # one worker, one server

WORDS = SEEN[FaultCode.BAD_JSON]


class Garbage(http.server.BaseHTTPRequestHandler):
    """A bot that answers every request with a body that is not JSON."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b"this is not json"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, *args):
        pass


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def garbage_bot():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def faulted(arena_site, garbage_bot) -> dict:
    """A match the garbage bot lost by forfeit: its API summary, once over."""
    code = (
        "from django.contrib.auth import get_user_model\n"
        "from competition.bots.services import platform_seat\n"
        "from competition.models.bots import Bot, EndpointKind\n"
        "from competition.matches.lifecycle import create_match\n"
        "u, _ = get_user_model().objects.get_or_create(username='fault-words')\n"
        "b, _ = Bot.objects.get_or_create(owner=u, game='tictactoe', name='garbage',"
        f" defaults={{'kind': 'http', 'target': {garbage_bot!r}}})\n"
        "m = create_match('tictactoe', [b, platform_seat('tictactoe', EndpointKind.BUILTIN,"
        " 'random')], created_by=u)\n"
        "print(m.pk)\n"
    )
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "shell", "-c", code],
        env=arena_site["env"], cwd=REPO, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    match = int(done.stdout.strip().splitlines()[-1])
    url = f"{arena_site['base']}/api/matches/{match}/"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        body = requests.get(url, timeout=10).json()
        if body["status"] not in ("queued", "running"):
            return body
        time.sleep(0.5)
    raise AssertionError(f"match {match} did not end: {body}")


def test_it_says_the_fault_in_words_in_the_api(faulted):
    garbage = faulted["participants"][0]
    # It should end the match by the garbage bot's forfeit, for the fault it made.
    assert faulted["status"] == "forfeited" and garbage["cause"] == FaultCode.BAD_JSON
    # It should give the fault in the catalogue's words beside the code.
    assert garbage["cause_text"] == WORDS
    assert faulted["participants"][1]["cause_text"] == ""


def test_it_says_the_fault_in_words_in_the_viewers_result_line(arena_site, faulted):
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{arena_site['base']}/matches/{faulted['id']}/")
        page.wait_for_selector("#match-result:not([hidden])")
        line = page.inner_text("#match-result")
        turns = page.inner_text("#turn-info")
        browser.close()
    # It should say who forfeited and why, in the catalogue's words, never the code.
    assert line == f"built-in random wins, garbage forfeited ({WORDS})", line
    assert "bad_json" not in line and "bad_json" not in turns, (line, turns)
    assert errors == []


def test_it_says_the_fault_in_words_in_arena_watch(arena_site, faulted, tmp_path):
    out = ok(arena(tmp_path, "--server", arena_site["base"], "watch", str(faulted["id"])))
    last = out.strip().splitlines()[-1]
    # It should end on the result, with who forfeited and why in words ...
    assert last.endswith(f"; garbage forfeited ({WORDS})"), last
    assert f"[fault: {WORDS}" in out
    # ... and never print the raw code.
    assert "bad_json" not in out, out
