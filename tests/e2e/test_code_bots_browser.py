"""Uploaded code in a real browser (issue 36): headless Debian Chromium driven by Playwright
against the shared ``manage.py serve`` (its runner process plays in the sandbox). One user
uploads the tic-tac-toe starter file (its ``--stdio`` mode: the sandbox passes it that
switch), with one line added that writes to stderr; another registers the same starter
served over HTTP on loopback (``ARENA_BOT_ALLOW_NETWORKS``). A challenge between the two
plays live; the uploaded bot's log shows its stderr to its owner, and to nobody else.

Pages are photographed into ``screenshots/`` (``code-*``).
"""

from __future__ import annotations

import re
import sys

import pytest
from playwright import sync_api as playwright_api

from tests.conftest import REPO, free_port
from tests.e2e.conftest import ARGS, CHROMIUM, SHOTS, match_id, sign_up
from tests.processes import running

pytestmark = pytest.mark.xdist_group("arena_site")  # one worker, one server

WIDE = {"width": 1280, "height": 900}
PASSWORD = "code-pass-phrase-42"
STARTER = REPO / "games" / "tictactoe" / "starter_bot.py"
#: what the uploaded starter writes to stderr before each move
SAID = "starter on stderr: my move"
SEEN: dict = {}


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def site(arena_site, tmp_path_factory):
    """The starter served over HTTP beside the shared server (tests/e2e/conftest.py), and the
    starter file to upload, marked to write to stderr."""
    env = arena_site["env"]
    bot_port = free_port()
    starter = [sys.executable, str(STARTER), "--host", "127.0.0.1", "--port", str(bot_port)]
    upload = tmp_path_factory.mktemp("code-bots") / "starter_bot.py"
    source = STARTER.read_text()
    marked = source.replace(
        '    return {"play": choose(',
        f'    print("{SAID}", file=sys.stderr, flush=True)\n    return {{"play": choose(',
    )
    assert marked != source  # the starter still has the line this test marks
    upload.write_text(marked)
    with running(starter, bot_port, env=env):
        yield {
            "base": arena_site["base"],
            "bot_url": f"http://127.0.0.1:{bot_port}/",
            "upload": upload,
        }


@pytest.fixture(scope="module")
def browser(site):
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)

        def new_page():
            page = chromium.new_context(viewport=WIDE).new_page()
            page.set_default_timeout(20_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            return page

        yield {"new": new_page, "base": site["base"], "site": site}
        chromium.close()
    # It should never have thrown in a page.
    assert errors == []


def test_a_user_uploads_the_starter_file_as_a_code_bot(browser):
    base, page = browser["base"], browser["new"]()
    sign_up(page, base, "coder", PASSWORD)
    page.goto(base + "/bots/new/")
    page.select_option("#id_game", "tictactoe")
    page.fill("#id_name", "uploaded-starter")
    # It should offer "URL" or "Upload code", and a file field.
    page.check("input[name=kind][value=code]")
    page.set_input_files("#id_file", str(browser["site"]["upload"]))
    page.screenshot(path=str(SHOTS / "code-upload-form.png"), full_page=True)
    page.click("#bot-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/$"))
    SEEN["code_bot"] = int(re.search(r"/bots/(\d+)/", page.url).group(1))
    # It should list version 1 with its file and a download link for its owner.
    versions = page.inner_text("#code-versions")
    assert "v1" in versions and "starter_bot.py" in versions and "Python" in versions
    assert page.locator("#code-versions a[download]").count() == 1
    # It should test-call it in the sandbox like any bot: the starter's first move.
    page.click("#test-call")
    page.wait_for_selector("#test-result")
    assert page.locator("#test-result.good").count() == 1, page.inner_text("#test-result")
    page.screenshot(path=str(SHOTS / "code-bot-page.png"), full_page=True)
    SEEN["coder"] = page


def test_another_user_challenges_it_with_a_url_bot_and_it_plays_live(browser):
    base, page = browser["base"], browser["new"]()
    sign_up(page, base, "webber", PASSWORD)
    page.goto(base + "/bots/new/")
    page.select_option("#id_game", "tictactoe")
    page.fill("#id_name", "served-starter")
    page.fill("#id_target", browser["site"]["bot_url"])
    page.click("#bot-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/$"))
    url_bot = int(re.search(r"/bots/(\d+)/", page.url).group(1))
    page.goto(f"{base}/bots/{SEEN['code_bot']}/")
    # It should show another user no download link while the source is private.
    assert page.locator("#code-versions a[download]").count() == 0
    page.select_option("#id_mine", str(url_bot))
    page.select_option("#id_pace_ms", "300")
    page.click("#challenge-submit")
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    SEEN["match"] = match_id(page)
    page.wait_for_function("() => document.body.dataset.matchDone === '1'", timeout=90_000)
    # It should end the live match with a result (no seat faulted away).
    assert "forfeit" not in page.inner_text("main").lower()
    # It should not show the uploaded bot's log to this user, nor its stderr in their own.
    response = page.goto(f"{base}/bots/{SEEN['code_bot']}/matches/{SEEN['match']}/log")
    assert response.status == 404
    response = page.goto(f"{base}/bots/{url_bot}/matches/{SEEN['match']}/log")
    assert response.status == 200 and SAID not in page.content()


def test_the_uploaded_bots_log_shows_its_stderr_to_its_owner(browser):
    base, page = browser["base"], SEEN["coder"]
    page.goto(f"{base}/bots/{SEEN['code_bot']}/matches/{SEEN['match']}/log")
    # It should show, in the owner's per-turn log, what the code wrote on stderr.
    page.locator("details summary", has_text="stderr").first.click()
    assert SAID in page.inner_text("main")
    page.screenshot(path=str(SHOTS / "code-bot-log.png"), full_page=True)
