"""Bot health you can see (issue 50, item 4): a bot's health kept at each finish, said in words
on its page, its owner's list, the leaderboard, the API and the CLI; a stopped bot shown
failing, paused within 3 matches on the default settings, its owner told, never shown ranked.

The bot is a real HTTP bot server (``manage.py serve_bot``) on loopback, stopped mid-way."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from competition.bots import health
from competition.bots.services import resume_bot
from competition.events import ladder
from competition.matches.lifecycle import create_match
from competition.matches.replies import sample, seat_replies
from competition.models import Notification, NotificationKind, Participant
from competition.models.bots import Bot, BotHealth, BotStatus, EndpointKind
from tests.conftest import REPO, free_port
from tests.factories import GAME, finished_match, make_bots, make_owner, play_all, user
from tests.processes import running


def _page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def _leaderboard_api() -> dict:
    response = APIClient().get(f"/api/leaderboard/{GAME}/")
    assert response.status_code == 200, response.content[:500]
    return response.json()


def _play_one(ann: Bot, rival: Bot) -> None:
    create_match(GAME, [ann, rival])
    assert play_all() == 1


@pytest.mark.django_db(transaction=True)
def test_it_shows_a_stopped_bot_failing_pauses_it_within_3_matches_and_tells_its_owner(
    allow_loopback, settings
):
    # It should pause after 3 forfeits in a row by default (the acceptance's "within 3").
    assert settings.ARENA_BOT_HEALTH_FORFEITS == 3
    ann = user("ann")
    (rival,) = make_bots(make_owner(), 1, strategies=("random",))
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    bot = Bot.objects.create(
        owner=ann, game=GAME, name="ann-bot", kind=EndpointKind.HTTP, target=url
    )
    ladder.enrol(bot)
    owner, public = Client(), Client()
    owner.force_login(ann)
    argv = [sys.executable, str(REPO / "manage.py"), "serve_bot", f"{GAME}:random"]
    with running([*argv, "--port", str(port)], port):
        _play_one(bot, rival)
        _play_one(bot, rival)
        # It should say a bot that answers is answering, with its typical reply time.
        page = _page(public, f"/bots/{bot.pk}/")
        assert 'Health: <span class="health answering">Answering, typically in' in page
        ranked = [row["name"] for row in _leaderboard_api()["results"]]
        assert "ann-bot" in ranked
    # the server is stopped: the next match is forfeited (nothing answers at its address)
    _play_one(bot, rival)
    assert Participant.objects.filter(bot=bot).order_by("-match_id").first().cause == "connect"
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE
    # It should show it failing on its page from that first match, the fault in full to its
    # owner, without its address to others.
    mine = _page(owner, f"/bots/{bot.pk}/")
    assert "Failing since" in mine
    assert f"could not connect to {url}: connection refused" in mine
    theirs = _page(public, f"/bots/{bot.pk}/")
    assert "Failing since" in theirs and "could not be reached" in theirs
    assert str(port) not in theirs
    assert "Failing since" in _page(owner, "/bots/")
    # It should not rank a failing bot: the leaderboard lists it apart, saying why.
    board = _leaderboard_api()
    assert "ann-bot" not in [row["name"] for row in board["results"]]
    failing = next(row for row in board["unranked"] if row["name"] == "ann-bot")
    assert failing["health"]["code"] == "failing"
    assert failing["health"]["words"].startswith("failing since ")
    html = _page(public, f"/games/{GAME}/leaderboard")
    assert "failing since" in html.split('id="unranked"')[1]
    _play_one(bot, rival)
    _play_one(bot, rival)
    bot.refresh_from_db()
    # It should pause it at its third forfeit in a row, and say why in words.
    assert bot.status == BotStatus.PAUSED
    assert bot.status_reason == "it forfeited its last 3 matches in a row (could not be reached)"
    # It should tell its owner, the last fault in full and how to resume.
    note = Notification.objects.get(user=ann, kind=NotificationKind.BOT_PAUSED)
    assert note.text.startswith("ann-bot was paused: it forfeited its last 3 matches in a row")
    assert f"Its last fault: could not connect to {url}: connection refused." in note.text
    assert f"arena resume {bot.pk}" in note.text
    # It should show it paused everywhere, and not at all on the leaderboard.
    api = APIClient()
    api.force_authenticate(ann)
    said = api.get(f"/api/bots/{bot.pk}/").json()["health"]
    assert said["code"] == "paused"
    assert said["sentence"].startswith("Paused: it forfeited its last 3 matches in a row")
    assert "Resume it from its page" in said["sentence"]
    board = _leaderboard_api()
    names = [r["name"] for r in board["results"]] + [r["name"] for r in board["unranked"]]
    assert "ann-bot" not in names
    assert "Not ranked now: it is paused" in _page(public, f"/bots/{bot.pk}/")
    # It should take it out of the ladder's pairing until it is resumed.
    assert ladder.status(bot)["state"].endswith("not paired until active")
    assert resume_bot(bot)
    assert not ladder.status(bot)["state"].endswith("not paired until active")
    # It should count again from the resume: one more forfeit does not pause it at once.
    _play_one(bot, rival)
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE
    assert health.of(bot).code == "failing"


def _bot(status=BotStatus.ACTIVE, reason="") -> Bot:
    return Bot(
        pk=7,
        game=GAME,
        name="b",
        kind=EndpointKind.HTTP,
        target="http://127.0.0.1:9/",
        status=status,
        status_reason=reason,
    )


def _row(**fields) -> BotHealth:
    fields.setdefault("played", datetime(2026, 12, 2, 11, 2, tzinfo=UTC))
    return BotHealth(**fields)


def test_it_says_each_health_in_words():
    limit = health.move_limit_ms(GAME)
    assert limit  # tic-tac-toe has a time a move
    # It should say a bot never counted in a match has not played.
    assert health.describe(_bot(), None).sentence == "Not played yet."
    # It should say the typical reply time and the p95 of an answering bot.
    said = health.describe(_bot(), _row(replies_ms=[[10, 12, 14], [11, 40]]))
    assert (said.code, said.typical_ms, said.p95_ms) == ("answering", 12, 40)
    assert said.sentence == "Answering, typically in 12 ms (95% of its replies within 40 ms)."
    assert said.words == "answering in 12 ms" and said.ranked
    # It should call slow a bot whose p95 is above half the time a move, with its p95 in ms.
    slow = [[limit // 2 + 50] * 10, [20] * 5]
    said = health.describe(_bot(), _row(replies_ms=slow))
    assert said.code == "slow" and said.p95_ms == limit // 2 + 50
    assert said.sentence.startswith(f"Slow: 95% of its replies came within {limit // 2 + 50} ms")
    assert f"more than half of the {limit} ms a move allows" in said.sentence
    assert said.words == f"slow: p95 {limit // 2 + 50} ms" and said.ranked
    # It should say since when a bot fails and its last fault, in full to its owner only.
    since = datetime(2026, 12, 2, 11, 2, tzinfo=UTC)
    row = _row(
        failing_since=since,
        fault="connect",
        fault_detail="Cannot connect to host 127.0.0.1:9 [Connect call failed ('127.0.0.1', 9)]",
    )
    said = health.describe(_bot(), row, owner=True)
    assert said.code == "failing" and not said.ranked
    assert said.sentence == (
        "Failing since 2 Dec 2026, 11:02 UTC: it forfeited its last match (could not "
        "connect to http://127.0.0.1:9/: connection refused)."
    )
    said = health.describe(_bot(), row)
    assert said.sentence.endswith("(could not be reached).") and "127.0.0.1" not in said.sentence
    timeout = _row(failing_since=since, fault="timeout", fault_detail="no reply within 100 ms")
    assert health.describe(_bot(), timeout).sentence.endswith(
        "(did not answer in time (no reply within 100 ms))."
    )
    # It should say why a bot is paused, and how to resume it (its owner: the command too).
    paused = _bot(
        BotStatus.PAUSED, "it forfeited its last 3 matches in a row (could not be reached)"
    )
    said = health.describe(paused, row, owner=True)
    assert said.code == "paused" and not said.ranked
    assert said.sentence == (
        "Paused: it forfeited its last 3 matches in a row (could not be reached). Resume it "
        "from its page (or with `arena resume 7`) once its server answers."
    )
    assert health.describe(paused, row).sentence.endswith("until its owner resumes it.")


def test_it_keeps_a_bounded_sample_of_a_matchs_reply_times_and_its_last_fault():
    # It should keep at most 20 reply times a seat, its smallest and largest among them.
    kept = sample(list(range(1000)))
    assert len(kept) == 20 and kept[0] == 0 and kept[-1] == 999
    # It should leave time-outs out of the reply times, and keep the last fault's detail.
    turns = [
        (["ok", None], [None, None], [5, None]),
        ([None, "ok"], [None, None], [None, 7]),
        (["timeout", None], ["no reply within 100 ms", None], [100, None]),
    ]
    seats = seat_replies(turns, 2)
    assert seats[0].replies_ms == (5,) and seats[0].fault == "timeout"
    assert seats[0].detail == "no reply within 100 ms"
    assert seats[1].replies_ms == (7,) and seats[1].fault == ""


def _measure(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.django_db
def test_it_costs_the_bot_page_and_the_leaderboard_the_same_with_a_long_history():
    owner = make_owner()
    a, b = make_bots(owner, 2, strategies=("random",))
    BotHealth.objects.create(bot=a, played=datetime(2026, 12, 2, tzinfo=UTC), replies_ms=[[3]])
    client = Client()
    finished_match([a, b])
    short = (_measure(client, f"/bots/{a.pk}/"), _measure(client, f"/games/{GAME}/leaderboard"))
    for _ in range(150):
        finished_match([a, b])
    long = (_measure(client, f"/bots/{a.pk}/"), _measure(client, f"/games/{GAME}/leaderboard"))
    # It should read the health from one row a bot: no query more with 150 matches more.
    print(f"queries (bot page, leaderboard): 1 match {short}, 151 matches {long}")
    assert long == short
