"""Issue 50, item 2: a new version's report. When a code bot's new version can play, the
previous version's latest lost and drawn standing-ladder matches (``ARENA_VERSION_REPORT_MATCHES``)
are replayed with the new version in its seat: the same opponents at the versions they played,
the same seats, options and seed, unrated and off the ladder, opponents code and house bots
only; the bot page, the API and the CLI say what the new version did with them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from competition.bots.services import platform_seat
from competition.events import ladder, replays
from competition.matches.lifecycle import create_match
from competition.models import (
    Match,
    MatchStatus,
    Notification,
    NotificationKind,
    Participant,
    SeatResult,
)
from competition.models.bots import Bot, EndpointKind
from games import get_game
from tests import factories
from tests.factories import code_api, code_bot, play_all, upload_version

pytestmark = pytest.mark.django_db(transaction=True)

STARTER = get_game("tictactoe").part("starter_bot.py").read_bytes()


def ended(match: Match, results: dict[int, str]) -> Match:
    """``match`` finished with ``results`` (bot id: its seat's result)."""
    for bot_id, result in results.items():
        Participant.objects.filter(match=match, bot_id=bot_id).update(result=result, score=0)
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.FINISHED, finished=timezone.now())
    return match


def test_it_replays_the_latest_ladder_losses_and_draws_with_the_new_version(settings):
    settings.ARENA_LADDER = False  # no ladder step of its own: the matches are made here
    settings.ARENA_VERSION_REPORT_MATCHES = 3
    author, rival_owner, other = (factories.user(n) for n in ("author", "rival", "other"))
    client = code_api(author)
    subject = code_bot(client, "subject", "bot.py", STARTER)
    rival = code_bot(code_api(rival_owner), "rival", "bot.py", STARTER)
    house = platform_seat("tictactoe", EndpointKind.BUILTIN, "random")
    remote = Bot.objects.create(
        owner=other, game="tictactoe", name="remote", kind="http", target="http://127.0.0.1:9/"
    )
    board = ladder.ladder_of("tictactoe")
    loss, draw, win = SeatResult.LOSS, SeatResult.DRAW, SeatResult.WIN

    def laddered(bots, seed, results):
        return ended(create_match("tictactoe", bots, ladder=board, seed=seed), results)

    too_old = laddered([subject, house], 10, {subject.pk: loss, house.pk: win})
    m1 = laddered([subject, rival], 11, {subject.pk: loss, rival.pk: win})
    m2 = laddered([house, subject], 12, {subject.pk: draw, house.pk: draw})
    m3 = laddered([subject, remote], 13, {subject.pk: loss, remote.pk: win})
    m4 = laddered([subject, rival], 14, {subject.pk: win, rival.pk: loss})
    m5 = laddered([rival, subject], 15, {subject.pk: loss, rival.pk: win})
    practice = ended(
        create_match("tictactoe", [subject, rival], seed=16, created_by=author),
        {subject.pk: loss, rival.pk: win},
    )
    ladder_count = Match.objects.filter(ladder=board).count()
    # the rival moves on: its replays still play the version it played (v1)
    moved = upload_version(code_api(rival_owner), rival.pk, "bot.py", STARTER + b"\n#2\n")
    assert moved.status_code == 201
    # (its own v2 replays the one ladder match its v1 lost, m4)
    theirs = Match.objects.filter(report_version__bot=rival)
    assert list(theirs.values_list("replay_of_id", flat=True)) == [m4.pk]
    rival_v1 = rival.versions.get(number=1)

    assert upload_version(client, subject.pk, "bot.py", STARTER + b"\n# v2\n").status_code == 201
    v2 = subject.versions.get(number=2)
    made = list(Match.objects.filter(report_version=v2).order_by("id"))
    # It should replay the latest 3 ladder losses and draws, newest first, against code and house
    # bots only: not the win, not the URL bot's, not the practice match, not the oldest loss.
    assert [m.replay_of_id for m in made] == [m5.pk, m2.pk, m1.pk]
    assert {too_old.pk, m3.pk, m4.pk, practice.pk}.isdisjoint(m.replay_of_id for m in made)
    for replay in made:
        original = replay.replay_of
        # It should keep the seats, options and seed, pin the opponents' versions, put v2 in
        # the bot's seat, and be unrated, nobody's challenge and no ladder's match.
        assert (replay.seed, replay.options, replay.game) == (
            original.seed,
            original.options,
            original.game,
        )
        assert not replay.rated and replay.ladder_id is None and replay.created_by_id is None
        then = list(original.participants.order_by("seat").values_list("bot_id", flat=True))
        now = list(replay.participants.order_by("seat").values_list("bot_id", "version_id"))
        assert [bot for bot, _ in now] == then
        for bot_id, version_id in now:
            expected = {subject.pk: v2.pk, rival.pk: rival_v1.pk, house.pk: None}[bot_id]
            assert version_id == expected
    assert Match.objects.filter(ladder=board).count() == ladder_count
    # It should make them once, however often the version is said ready.
    assert replays.make_report(v2) == []

    # Before they play, the report says they wait ...
    waiting = replays.report(v2)
    assert waiting.games == 3 and waiting.pending == 3
    assert waiting.sentence == "v2 wins 0 of the 3 games v1 lost or drew, draws 0; 3 still to play."
    assert [r["replay"]["result"] for r in waiting.rows] == ["waiting"] * 3
    notices = Notification.objects.filter(kind=NotificationKind.VERSION_REPORT)
    assert not notices.exists()

    # ... then what v2 did, each beside the original, on the page, the API, with no rating.
    assert play_all() == 4  # with the rival's one
    done = replays.report(v2)
    assert done.pending == 0 and done.wins + done.draws + done.losses == 3
    assert done.sentence.startswith(f"v2 wins {done.wins} of the 3 games v1 lost or drew")
    # Its owner is told once, when the last replay ended, what it says.
    (told,) = notices.filter(user_id=subject.owner_id)  # (the rival's own report: its own)
    assert told.link == f"/bots/{subject.pk}/#version-report"
    assert told.text == f"The report of v2 of {subject.name} is ready: {done.sentence}"
    first = done.rows[0]
    assert first["original"]["match"] == m5.pk and first["original"]["result"] == "lost"
    assert first["original"]["opponents"][0]["version"] == "v1"
    assert first["replay"]["result"] in ("won", "drew", "lost")
    assert all(not m.rated for m in Match.objects.filter(report_version=v2))
    assert v2.__class__.objects.get(pk=v2.pk).rated_games == 0
    api = code_api().get(f"/api/bots/{subject.pk}/versions/2/report/")
    assert api.status_code == 200, api.content
    assert api.json()["sentence"] == done.sentence and len(api.json()["rows"]) == 3
    assert code_api().get(f"/api/bots/{subject.pk}/versions/9/report/").status_code == 404
    # It should read the report in three queries (its previous version, at most N replays with
    # their originals, their seats), however long the history.
    with CaptureQueriesContext(connection) as queries:
        replays.report(v2)
    assert len(queries) == 3, [q["sql"] for q in queries]
    page = Client().get(f"/bots/{subject.pk}/").content.decode()  # anyone: results are public
    assert done.sentence in page and f"/matches/{m5.pk}/" in page
    assert f"/matches/{made[0].pk}/" in page
    # It should say on the replay's own page what it replays, and that it is unrated.
    shown = Client().get(f"/matches/{made[0].pk}/").content.decode()
    assert f'a replay of <a href="/matches/{m5.pk}/">match #{m5.pk}</a>' in shown
    assert "unrated, off the ladder" in shown


def test_it_makes_no_report_when_turned_off_or_for_a_first_version(settings):
    settings.ARENA_LADDER = False
    author = factories.user("author")
    client = code_api(author)
    subject = code_bot(client, "subject", "bot.py", STARTER)
    house = platform_seat("tictactoe", EndpointKind.BUILTIN, "random")
    board = ladder.ladder_of("tictactoe")
    ended(
        create_match("tictactoe", [subject, house], ladder=board),
        {subject.pk: SeatResult.LOSS, house.pk: SeatResult.WIN},
    )
    # It should make none for a first version (nothing before it) ...
    assert replays.make_report(subject.versions.get(number=1)) == []
    # ... nor with ARENA_VERSION_REPORT_MATCHES = 0, and the page says nothing of a report.
    settings.ARENA_VERSION_REPORT_MATCHES = 0
    assert upload_version(client, subject.pk, "bot.py", STARTER + b"\n#2\n").status_code == 201
    assert not Match.objects.filter(report_version__isnull=False).exists()
    assert "version-report" not in Client().get(f"/bots/{subject.pk}/").content.decode()
