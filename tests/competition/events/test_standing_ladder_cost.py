"""What a pairing of the standing ladder costs (issue 38: the same with 10 or 10,000 bots,
<= 5 ms): the statements it runs, counted through the database connection; the times are
``bench/ladder.py``'s. And what a bot's ladder status costs (issue 53: its page and the ladder
API the same at ten times its history): its queries, their plans and SQLite's VM steps."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from competition.events import ladder
from competition.events.standings import refresh_statistics
from competition.models import Ladder, LadderSpot, Match, MatchStatus, Participant, RatingChange
from competition.models.bots import Bot, EndpointKind
from tests.factories import GAME
from tests.helpers import measure

pytestmark = pytest.mark.django_db

#: what a transaction adds around the statements that do the work
FRAMING = ("BEGIN", "SAVEPOINT", "RELEASE", "COMMIT", "ROLLBACK")
#: the busy bot's ladder matches at the two sizes of its history (ten times as many off it)
SMALL, LARGE = 60, 600


@pytest.fixture
def no_house(settings):
    settings.ARENA_LADDER_HOUSE_BOTS = False
    settings.ARENA_LADDER_MATCHES_PER_HOUR = 3600 * 1000


def grow(upto: int) -> None:
    have = LadderSpot.objects.count()
    for i in range(have, upto):
        owner = get_user_model().objects.create_user(f"cost-{i}")
        bot = Bot.objects.create(
            owner=owner, game=GAME, name=f"c{i}", kind=EndpointKind.BUILTIN, target="random"
        )
        ladder.enrol(bot)


def statements_of_a_pairing() -> list[str]:
    lad = Ladder.objects.get(game=GAME)
    with CaptureQueriesContext(connection) as seen, transaction.atomic():
        match = ladder.pair_one(lad, timezone.now())
    assert match is not None
    LadderSpot.objects.filter(playing=match).update(playing=None)
    return [q["sql"] for q in seen.captured_queries if not q["sql"].startswith(FRAMING)]


def test_it_pairs_with_a_few_statements_whatever_the_ladders_size(no_house):
    grow(10)
    small = statements_of_a_pairing()
    grow(120)
    large = statements_of_a_pairing()
    # It should read the front, the ladder's edges (a new bot explores) and the free bots
    # near the rating sought in one statement each, then make the match (two INSERTs) and
    # claim its bots in one UPDATE: six statements, as many with 120 bots as with 10 (on
    # PostgreSQL a seventh, the claims' lock for the per-owner cap, before the INSERTs).
    lock = ["SELECT"] if connection.vendor == "postgresql" else []
    assert len(small) == len(large) == 6 + len(lock), large
    assert [sql.split()[0] for sql in large] == [
        "SELECT",
        "SELECT",
        "SELECT",
        *lock,
        "INSERT",
        "INSERT",
        "UPDATE",
    ]


class LadderHistory:
    """A busy bot in the standing ladder: ladder matches against the other entrants, then many
    more matches off the ladder (newer than its ladder ones, the worst case for a walk of its
    seats) while the others play on in the ladder (the worst case for a walk of the ladder's
    matches), bulk-inserted; and one ladder match queued (its next, which "last" leaves out)."""

    def __init__(self):
        owner = get_user_model().objects.create_user("ladder-owner")
        rival = get_user_model().objects.create_user("ladder-rival")
        self.bots = [
            Bot.objects.create(
                owner=owner if i == 0 else rival,
                game=GAME,
                name=f"climber-{i}",
                kind=EndpointKind.BUILTIN,
                target="random",
            )
            for i in range(6)
        ]
        self.busy = self.bots[0]
        for bot in self.bots:
            ladder.enrol(bot)
        self.ladder = Ladder.objects.get(game=GAME)
        self.clock = timezone.now() - timedelta(days=30)
        self.rng = random.Random(53)
        self.next = self.insert([(self.busy, self.bots[1], self.ladder)], MatchStatus.QUEUED)[0]
        LadderSpot.objects.filter(bot=self.busy).update(playing=self.next)

    def insert(self, rows: list[tuple[Bot, Bot, Ladder | None]], status=MatchStatus.FINISHED):
        """A match for each ``(first seat, second seat, ladder)`` (``None``: off the ladder)."""
        matches = []
        for _, _, lad in rows:
            self.clock += timedelta(seconds=60)
            matches.append(
                Match(
                    game=GAME,
                    status=status,
                    reason="three_in_a_row" if status == MatchStatus.FINISHED else "",
                    ladder=lad,
                    started=self.clock,
                    finished=self.clock if status == MatchStatus.FINISHED else None,
                )
            )
        Match.objects.bulk_create(matches)
        seats, steps = [], []
        for m, (first, other, lad) in zip(matches, rows, strict=True):
            seats += [
                Participant(match=m, seat=0, bot=first, score=1.0, result="win", ladder=lad),
                Participant(match=m, seat=1, bot=other, score=0.0, result="loss", ladder=lad),
            ]
            steps += [
                RatingChange(
                    match=m, bot_id=x.pk, mu_before=25, sigma_before=8, mu_after=25, sigma_after=8
                )
                for x in (first, other)
            ]
        Participant.objects.bulk_create(seats)
        RatingChange.objects.bulk_create(steps)
        return matches

    def grow(self, on_ladder: int, off_ladder: int) -> None:
        """``on_ladder`` ladder matches of the busy bot, then ``off_ladder`` matches of it off the
        ladder, each beside a ladder match of two others."""
        busy, pick, lad = self.busy, self.rng.choice, self.ladder
        self.insert([(busy, pick(self.bots[1:]), lad) for _ in range(on_ladder)])
        later = []
        for _ in range(off_ladder):
            a, b = self.rng.sample(self.bots[1:], 2)
            later += [(busy, pick(self.bots[1:]), None), (a, b, lad)]
        self.insert(later)
        refresh_statistics()

    def expected_last(self) -> list[int]:
        """The busy bot's latest 5 ended ladder matches, counted the long way."""
        mine = Participant.objects.filter(bot=self.busy).values_list("match_id", flat=True)
        ended = Match.objects.filter(ladder=self.ladder, pk__in=list(mine)).exclude(
            status__in=(MatchStatus.QUEUED, MatchStatus.RUNNING)
        )
        return sorted(ended.values_list("pk", flat=True), reverse=True)[:5]

    def pages(self) -> list[str]:
        return [f"/bots/{self.busy.pk}/", f"/api/bots/{self.busy.pk}/ladder/"]


def status_queries(bot: Bot) -> tuple[dict, list[str], list[str]]:
    """``ladder.status`` of ``bot``, its queries, and SQLite's plan of those on the seats."""
    with CaptureQueriesContext(connection) as captured:
        found = ladder.status(bot)
    plan = []
    with connection.cursor() as cursor:
        for q in captured.captured_queries:
            if "competition_participant" in q["sql"]:
                cursor.execute("EXPLAIN QUERY PLAN " + q["sql"])
                plan += [row[-1] for row in cursor.fetchall()]
    return found, [q["sql"] for q in captured.captured_queries], plan


@pytest.mark.skipif(connection.vendor != "sqlite", reason="EXPLAIN QUERY PLAN is SQLite's")
def test_it_says_a_bots_ladder_status_at_a_cost_that_does_not_grow_with_its_history():
    history = LadderHistory()
    client = Client()
    history.grow(SMALL, 10 * SMALL)  # past the bot page's windows (500 seats and steps)
    small_status = status_queries(history.busy)
    small = {url: measure(client, url) for url in history.pages()}
    history.grow(LARGE - SMALL, 10 * (LARGE - SMALL))
    assert Participant.objects.filter(bot=history.busy).count() >= 10 * LARGE
    found, queries, plan = status_queries(history.busy)
    # It should list the bot's latest ended ladder matches, newest first, its queued next
    # match left out (ten times as many matches off the ladder since do not hide them).
    assert [m.pk for m in found["last"]] == history.expected_last()
    assert history.next.pk not in [m.pk for m in found["last"]]
    assert found["next"] == history.next
    # It should read them in one query at either size, a LIMIT in SQL, on the ladder's seats'
    # index in the order it reads (no sort of the bot's seats, no walk of its other matches).
    assert len(queries) == len(small_status[1]), (small_status[1], queries)
    seats = [sql for sql in queries if "competition_participant" in sql]
    assert len(seats) == 1 and "LIMIT 5" in seats[0], seats
    assert any("USING INDEX participant_ladder_bot" in d for d in plan), plan
    assert all("TEMP B-TREE" not in d for d in plan), plan
    assert not any(d.startswith("SCAN") for d in plan), plan
    large = {url: measure(client, url) for url in history.pages()}
    report = {url: (small[url][:2], large[url][:2]) for url in small}
    for url in small:
        (q1, s1, _), (q2, s2, scans) = small[url], large[url]
        # It should serve the bot page and the ladder API with the same queries at ten times
        # the history, reading about as many rows (SQLite's VM steps within 1.5x)...
        assert q2 == q1, (url, report)
        assert s2 <= 1.5 * s1 + 2000, (url, report)
        # ... and never scanning the match, seat or rating tables.
        assert scans == [], (url, scans)


@pytest.mark.django_db(transaction=True)
def test_it_gives_the_seats_of_ladder_matches_played_before_the_index_their_ladder():
    executor = MigrationExecutor(connection)
    before = [("competition", "0036_tokens_apitoken")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    owner = old.get_model("auth", "User").objects.create(username="before-0037")
    OldBot = old.get_model("competition", "Bot")
    a, b = (
        OldBot.objects.create(owner=owner, game=GAME, name=n, kind="builtin", target="random")
        for n in ("early", "late")
    )
    lad = old.get_model("competition", "Ladder").objects.create(game=GAME)
    old.get_model("competition", "LadderSpot").objects.create(ladder=lad, bot=a, owner=owner)
    OldMatch = old.get_model("competition", "Match")
    on, off = (
        OldMatch.objects.create(game=GAME, status="finished", ladder=board) for board in (lad, None)
    )
    for m in (on, off):
        for seat, bot in enumerate((a, b)):
            old.get_model("competition", "Participant").objects.create(match=m, seat=seat, bot=bot)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    # It should give both seats of the ladder match their ladder, and none to the other's.
    seats = Participant.objects.values_list("match_id", "ladder_id")
    assert sorted(seats) == sorted(
        [(on.pk, lad.pk), (on.pk, lad.pk), (off.pk, None), (off.pk, None)]
    )
    # It should list that match as the bot's last ladder match on its page and in the API.
    assert [m.pk for m in ladder.status(Bot.objects.get(pk=a.pk))["last"]] == [on.pk]
    assert Client().get(f"/api/bots/{a.pk}/ladder/").json()["last_matches"] == [on.pk]
