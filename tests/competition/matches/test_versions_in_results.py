"""Issue 50, item 1 (its first part): each match's seats carry the version each played, in the
API's participants, the bot page's recent matches, the match lists, the viewer and the owner's
per-turn log."""

from __future__ import annotations

import pytest

from competition.matches.lifecycle import create_match
from competition.models import Participant
from games import get_game
from tests import factories
from tests.factories import code_api, code_bot, play_all, upload_version

pytestmark = pytest.mark.django_db(transaction=True)

STARTER = get_game("tictactoe").part("starter_bot.py").read_bytes()


def test_every_result_names_the_version_each_seat_played():
    owner = factories.user("author")
    client = code_api(owner)
    bot = code_bot(client, "versioned", "bot.py", STARTER)
    builtin = factories.builtin_of(owner, "house", "random")
    first = create_match("tictactoe", [bot, builtin], seed=1)
    play_all()
    assert upload_version(client, bot.pk, "bot.py", STARTER + b"\n# v2\n").status_code == 201
    second = create_match("tictactoe", [builtin, bot], seed=2)
    play_all()
    # It should seat each match with the version that was newest when it started ...
    seated = dict(Participant.objects.filter(bot=bot).values_list("match_id", "version__number"))
    assert seated == {first.pk: 1, second.pk: 2}
    # ... and say so in the API (null for a bot that is not uploaded code) ...
    for match, number in ((first, 1), (second, 2)):
        seats = {
            p["bot"]: p for p in client.get(f"/api/matches/{match.pk}/").json()["participants"]
        }
        assert seats[bot.pk]["version"] == number and seats[builtin.pk]["version"] is None
    listed = client.get("/api/matches/", {"bot": bot.pk}).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert {m["id"]: [p["version"] for p in m["participants"]] for m in rows} == {
        first.pk: [1, None],
        second.pk: [None, 2],
    }
    # ... on the bot page's recent matches, the match list, the viewer and the owner's log.
    page = factories.logged_in(owner)
    detail = page.get(f"/bots/{bot.pk}/").content.decode()
    assert "seat 0 · v1" in detail and "seat 1 · v2" in detail
    matches = page.get("/matches/", {"bot": bot.pk}).content.decode()
    assert '<span class="muted small">v2</span>' in matches
    viewer = page.get(f"/matches/{second.pk}/").content.decode()
    assert 'title="the version it played">v2</span>' in viewer
    log = page.get(f"/bots/{bot.pk}/matches/{second.pk}/log").content.decode()
    assert "seat 1 versioned v2" in log


def test_each_version_keeps_its_own_record_of_rated_matches(settings):
    from django.utils import timezone

    from competition.events import ladder
    from competition.models import Match, MatchStatus

    settings.ARENA_LADDER_HOUSE_BOTS = False
    settings.ARENA_LADDER_MATCHES_PER_MINUTE = 1000
    settings.ARENA_LADDER_MAX_QUEUED = 1000
    settings.ARENA_LADDER_MATCHES_PER_HOUR = 3600
    author, rival = factories.user("author"), factories.user("rival")
    client = code_api(author)
    bot = code_bot(client, "versioned", "bot.py", STARTER)
    opponent = factories.builtin_of(rival, "opponent", "random")
    ladder.enrol(bot)
    ladder.enrol(opponent)

    clock = [timezone.now()]

    def ladder_matches(n: int) -> None:
        for _ in range(n):
            clock[0] += timezone.timedelta(minutes=10)
            ladder.tick(clock[0])
            play_all()

    ladder_matches(3)
    upload_version(client, bot.pk, "bot.py", STARTER + b"\n# v2\n")
    ladder_matches(2)
    rated = Match.objects.filter(participants__bot=bot, rated=True, status=MatchStatus.FINISHED)
    by_version = {}
    for match in rated.order_by("pk"):
        seat = match.participants.get(bot=bot)
        by_version.setdefault(seat.version.number, []).append((match.pk, seat.result))
    assert sorted(by_version) == [1, 2], by_version
    listed = {v["number"]: v for v in client.get(f"/api/bots/{bot.pk}/versions/").json()}
    # It should count each version's rated matches apart, as the history has them.
    for number, played in by_version.items():
        record = listed[number]
        results = [result for _, result in played]
        assert record["rated_games"] == len(played)
        assert (record["wins"], record["draws"], record["losses"]) == tuple(
            results.count(r) for r in ("win", "draw", "loss")
        )
        assert (record["first_match"], record["last_match"]) == (played[0][0], played[-1][0])
    # The latest version's rating is the bot's.
    from competition.models import Rating

    rating = Rating.objects.get(bot=bot)
    assert (listed[2]["mu"], listed[2]["sigma"]) == (rating.mu, rating.sigma)
    page = factories.logged_in(author).get(f"/bots/{bot.pk}/").content.decode()
    assert 'id="version-record-2"' in page and "Results by version" in page
    # The migration should count the same records from the history stored before it.
    import importlib

    from django.apps import apps

    from competition.models import BotVersion

    fields = ("rated_games", "wins", "draws", "losses", "first_match", "last_match", "mu", "sigma")
    kept = list(BotVersion.objects.order_by("pk").values_list(*fields))
    BotVersion.objects.update(
        rated_games=0, wins=0, draws=0, losses=0, first_match=None, last_match=None,
        mu=None, sigma=None,
    )  # fmt: skip
    migration = importlib.import_module("competition.migrations.0027_botversion_record")
    assert migration.count_records(apps, None) == 2
    assert list(BotVersion.objects.order_by("pk").values_list(*fields)) == kept
