"""A C++ author in a real browser (issue 49's browser test): they upload a C++ bot with a
missing semicolon, read the compiler's output on the bot page, fix the error, upload again,
test-call the built version and see its first standing-ladder result, on a server of its own
(``manage.py serve`` with the standing ladder on and a short interval: the shared servers
keep the ladder off, see tests/e2e/conftest.py)."""

from __future__ import annotations

import re
import sys
import time

import pytest

from games import get_game
from tests.conftest import LOOPBACK, REPO, free_port
from tests.e2e.conftest import UI, shot
from tests.processes import manage, project_env, running

pytestmark = pytest.mark.slow

USER, PASSWORD = "cecile", "cecile-pass-phrase-42"
GOOD = get_game("tictactoe").part("starters/bot.cpp").read_text()
#: the starter with the semicolon after its reply's print missing
BROKEN = GOOD.replace("return 0;", "return 0", 1)

SETUP_USER = f"""
from django.contrib.auth import get_user_model
get_user_model().objects.create_user("{USER}", "cecile@example.org", "{PASSWORD}")
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("compile-site")
    env = project_env(
        ARENA_DATA_DIR=str(data),
        ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
        ARENA_LADDER_INTERVAL="1",
        ARENA_LADDER_MATCHES_PER_HOUR="3600",
        ARENA_LADDER_MATCHES_PER_MINUTE="120",
        ARENA_RUNNER_PROCESSES="1",
    )
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    log = data / "server.log"
    with running(server, port, env=env, log=log):
        done = manage("shell", "-c", SETUP_USER, env=env)
        assert done.returncode == 0, done.stderr
        yield {"base": f"http://127.0.0.1:{port}", "log": log}


@pytest.fixture(scope="module")
def ui(chromium, site):
    ui = UI(chromium, site["base"], site["log"])
    yield ui
    assert ui.errors == []


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture: Playwright's sync API runs its own loop here."""
    yield


def upload(page, path, source: str) -> None:
    path.write_text(source)
    page.set_input_files("#id_file", str(path))
    page.click("main form.stack button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/$"))


def test_a_cpp_author_fixes_a_compile_error_and_sees_a_ladder_result(ui, tmp_path):
    page = ui.desktop
    page.goto(ui.url("/accounts/login/"))
    page.fill("#id_username", USER)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("main form button[type=submit]")
    page.goto(ui.url("/bots/new/"))
    page.select_option("#id_game", "tictactoe")
    page.fill("#id_name", "semicolon")
    page.check("input[name=kind][value=code]")
    started = time.monotonic()
    upload(page, tmp_path / "bot.cpp", BROKEN)
    bot = int(re.search(r"/bots/(\d+)/", page.url).group(1))
    # It should say the upload is being compiled, then (the page refreshes itself) show the
    # compiler's output, within 30 s of the upload.
    assert "it is being compiled" in page.inner_text("main")
    page.wait_for_selector("#build-log-1[open]", timeout=30_000)
    assert time.monotonic() - started < 30
    log = page.inner_text("#build-log-1")
    assert "error: expected" in log and "bot.cpp" in log, log
    assert "Did not compile" in page.inner_text("#version-1")
    shot(page, "bot-compile-error")
    # The author fixes the semicolon and uploads the file again from the edit form.
    page.goto(ui.url(f"/bots/{bot}/edit/"))
    upload(page, tmp_path / "bot.cpp", GOOD)
    page.wait_for_selector("#version-2 .build.built", timeout=60_000)
    assert "plays now" in page.inner_text("#version-2")
    shot(page, "bot-compiled")
    # A test call of the built version enters it in the standing ladder ...
    page.click("#test-call")
    page.wait_for_selector("#test-result")
    assert "OK" in page.inner_text("#test-result")
    assert "standing ladder" in page.inner_text("#next-step")
    # ... and its first rated ladder match shows on its page.
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        page.goto(ui.url(f"/bots/{bot}/"))
        results = page.locator("table.table tbody span.result")
        if results.count():
            break
        page.wait_for_timeout(1000)
    assert results.count(), page.inner_text("main")[-1500:]
    assert results.first.inner_text() in {"Win", "Draw", "Loss"}, results.first.inner_text()
    shot(page, "bot-first-ladder-result")
