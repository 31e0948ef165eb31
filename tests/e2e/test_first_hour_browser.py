"""Issue 25, part 2 in a real browser (headless Debian Chromium driven by Playwright against
``manage.py serve`` and bots served by ``manage.py serve_bot``): the first hour's acceptance
walk, in order (sign up, register, test call, bench match, another user challenges the bot
from its page, both find the match in ``/matches/`` and on the user pages; nothing but the
registered bot in the account, no seat and no bot without rated games on any leaderboard).

Pages are photographed into ``screenshots/`` (``web2-*``) at 1280 and 390 px wide.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import match_id, shots, sign_up

pytestmark = pytest.mark.xdist_group("arena_demo_site")  # one worker, one server

PASSWORD = "web2-pass-phrase-42"
SEEN: dict = {}


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def browser(demo_pages):
    """Pages on the shared demo server with two bots beside it (tests/e2e/conftest.py)."""
    return demo_pages


def register(page, base: str, name: str, url: str) -> int:
    page.goto(base + "/bots/new/")
    page.select_option("#id_game", "tictactoe")
    page.fill("#id_name", name)
    page.fill("#id_target", url)
    page.click("main form.stack button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/$"))
    return int(re.search(r"/bots/(\d+)/", page.url).group(1))


def wait_done(page) -> None:
    page.wait_for_function("() => document.body.dataset.matchDone === '1'", timeout=60_000)


def test_a_newcomer_registers_tests_and_benches_a_bot(browser):
    base, page = browser["base"], browser["new"]()
    sign_up(page, base, "ann", PASSWORD)
    SEEN["ann_bot"] = register(page, base, "ann-bot", browser["site"]["bot_a"])
    page.click("#test-call")
    page.wait_for_selector("#test-result.good")
    page.goto(base + "/bench/")
    form = page.locator("#bench-tictactoe")
    form.locator("select[name=tictactoe-mine]").select_option(f"bot:{SEEN['ann_bot']}")
    form.locator("select[name=tictactoe-opponent]").select_option("builtin:random")
    form.locator("select[name=tictactoe-pace_ms]").select_option("0")
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    SEEN["bench"] = match_id(page)
    wait_done(page)
    SEEN["ann"] = page


def test_another_user_challenges_it_from_its_page_and_both_find_the_match(browser):
    base, page = browser["base"], browser["new"]()
    sign_up(page, base, "bob", PASSWORD)
    bob_bot = register(page, base, "bob-bot", browser["site"]["bot_b"])
    page.goto(f"{base}/bots/{SEEN['ann_bot']}/")
    shots(page, browser, "bot-challenge")
    # It should offer bob's bot in the challenge form on ann's bot page.
    page.select_option("#id_mine", str(bob_bot))
    page.select_option("#id_pace_ms", "0")
    page.click("#challenge-submit")
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    challenge = match_id(page)
    wait_done(page)
    for who, viewer in (("bob", page), ("ann", SEEN["ann"])):
        # It should list the match for both users in /matches/ and on both user pages.
        viewer.goto(f"{base}/matches/?user={who}")
        assert viewer.locator(f"#match-table a[href='/matches/{challenge}/']").count() == 1
        for name in ("ann", "bob"):
            viewer.goto(f"{base}/users/{name}/")
            assert viewer.locator(f"#user-matches a[href='/matches/{challenge}/']").count() == 1
    page.goto(f"{base}/matches/")
    shots(page, browser, "matches")
    page.goto(f"{base}/users/ann/")
    shots(page, browser, "user")
    ann = SEEN["ann"]
    ann.goto(base + "/bots/")
    # It should hold only the bot ann registered: no bench seat, no human seat.
    names = ann.locator("main table tbody tr td:first-child a").all_inner_texts()
    assert names == ["ann-bot"], names
    ann.goto(f"{base}/users/ann/")
    assert ann.locator("#user-bots tbody tr").count() == 1
    # It should rank neither a seat nor a bot with no rated game, on the page or in the API:
    # the challenge was practice (only the ladder's and events' matches are rated).
    ann.goto(f"{base}/games/tictactoe/leaderboard")
    ranked = ann.locator("table.leaderboard tbody tr td:nth-child(2) a").all_inner_texts()
    assert ranked and not {"ann-bot", "bob-bot", "human"} & set(ranked), ranked
    api = ann.request.get(base + "/api/leaderboard/tictactoe/").json()
    assert not {"ann-bot", "bob-bot"} & {row["name"] for row in api["results"]}
    for row in api["results"]:
        assert row["games"] > 0 and row["name"] != "human", row
        assert row["builtin"] == row["name"].startswith("built-in "), row
