"""Every admin changelist at a cost that does not grow with its rows (issue 40, item 4).

Each changelist registered in the admin (``admin.site._registry``) is requested through
Django's test client by a logged-in superuser: its first page, a page filtered by its first
filter (the first choice past "All") and a searched page where it has search fields. The
database is grown tenfold between two measures (bots with owners, matches with their seats
and rating steps, ratings, events with entries, ladder spots, users). At both sizes a page
must run the same number of queries and, on SQLite, never sort or scan a whole history table
(``tests/competition/matches/test_history_queries.py`` measures the public pages the same way).
"""

from __future__ import annotations

import random
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from competition.admin import CappedPaginator
from competition.models import (
    Entry,
    Event,
    EventFormat,
    Ladder,
    LadderSpot,
    Match,
    MatchStatus,
    Participant,
    Rating,
    RatingChange,
)
from competition.models.bots import Bot, EndpointKind
from tests.helpers import measure

pytestmark = pytest.mark.django_db

SMALL, LARGE = 30, 300
GAME = "tictactoe"


class Rows:
    """Rows for every changelist, grown in steps."""

    def __init__(self):
        self.rng = random.Random(40)
        self.clock = timezone.now() - timedelta(days=30)
        self.staff = get_user_model().objects.create_superuser("staff", password="pw-staff-cl")
        self.ladder = Ladder.objects.create(game=GAME)
        self.bots: list[Bot] = []
        self.made = 0

    def grow(self, n: int) -> None:
        """``n`` more bots (each with an owner, a rating and a ladder spot), ``4 n`` matches
        with their seats and rating steps, and ``n // 3 + 1`` events with entries."""
        User = get_user_model()
        start = self.made
        self.made += n
        owners = User.objects.bulk_create(
            [User(username=f"owner-{i}") for i in range(start, self.made)]
        )
        bots = Bot.objects.bulk_create(
            [
                Bot(
                    owner=o,
                    game=GAME,
                    name=f"bot{i:04d}",
                    kind=EndpointKind.BUILTIN,
                    target="random",
                )
                for i, o in zip(range(start, self.made), owners, strict=True)
            ]
        )
        self.bots += bots
        Rating.objects.bulk_create([Rating(bot=b, game=GAME, mu=25, sigma=8) for b in bots])
        LadderSpot.objects.bulk_create(
            [LadderSpot(ladder=self.ladder, bot=b, owner=b.owner) for b in bots]
        )
        for k in range(n // 3 + 1):
            event = Event.objects.create(
                name=f"cup-{start}-{k}", game=GAME, format=EventFormat.ROUND_ROBIN
            )
            Entry.objects.bulk_create(
                [
                    Entry(event=event, bot=b, seed=i, entered_by=b.owner)
                    for i, b in enumerate(self.rng.sample(self.bots, 4), start=1)
                ]
            )
        self.matches(4 * n)

    def matches(self, count: int) -> None:
        pairs = [tuple(self.rng.sample(self.bots, 2)) for _ in range(count)]
        matches = []
        for _pair in pairs:
            self.clock += timedelta(seconds=60)
            matches.append(
                Match(
                    game=GAME,
                    status=MatchStatus.FINISHED,
                    reason="three_in_a_row",
                    started=self.clock,
                    finished=self.clock,
                )
            )
        Match.objects.bulk_create(matches)
        seats, steps = [], []
        for m, (a, b) in zip(matches, pairs, strict=True):
            seats += [
                Participant(match=m, seat=0, bot=a, score=1.0, result="win"),
                Participant(match=m, seat=1, bot=b, score=0.0, result="loss"),
            ]
            steps += [
                RatingChange(
                    match=m, bot=x, mu_before=25, sigma_before=8, mu_after=25, sigma_after=8
                )
                for x in (a, b)
            ]
        Participant.objects.bulk_create(seats)
        RatingChange.objects.bulk_create(steps)
        if connection.vendor == "sqlite":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")


def changelist_pages(staff) -> list[str]:
    """Every registered changelist: its first page, a filtered page (its first filter's first
    choice past "All") and a page searched for a bot's name."""
    urls = []
    for model, model_admin in admin.site._registry.items():
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        urls.append(url)
        request = RequestFactory().get(url)
        request.user = staff
        changelist = model_admin.get_changelist_instance(request)
        if changelist.filter_specs:
            choices = list(changelist.filter_specs[0].choices(changelist))
            if len(choices) > 1:
                urls.append(url + choices[1]["query_string"])
        if model_admin.get_search_fields(request):
            urls.append(f"{url}?q={quote('bot0007')}")
    return urls


@pytest.mark.skipif(connection.vendor != "sqlite", reason="EXPLAIN QUERY PLAN is SQLite's")
def test_it_lists_every_admin_changelist_at_a_cost_that_does_not_grow_with_its_rows():
    rows = Rows()
    staff = Client()
    staff.force_login(rows.staff)
    rows.grow(SMALL)
    pages = changelist_pages(rows.staff)
    assert len(pages) >= 2 * len(admin.site._registry)
    small = {url: measure(staff, url) for url in pages}
    rows.grow(LARGE - SMALL)
    assert RatingChange.objects.count() >= 8 * LARGE
    large = {url: measure(staff, url) for url in pages}
    report = {url: (small[url][:2], large[url][:2]) for url in pages}
    for url in pages:
        (q1, _, _), (q2, _, scans) = small[url], large[url]
        # It should run the same queries with ten times the rows (no query per row)…
        assert q2 <= q1, (url, report)
        # …and never sort or scan a whole history table.
        assert scans == [], (url, scans)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="EXPLAIN QUERY PLAN is SQLite's")
def test_it_searches_rating_steps_by_bot_name_without_walking_every_step():
    rows = Rows()
    staff = Client()
    staff.force_login(rows.staff)
    rows.grow(LARGE)
    with CaptureQueriesContext(connection) as captured:
        response = staff.get("/admin/competition/ratingchange/?q=bot0007")
    # It should list the bot's rating steps, the newest first…
    expected = RatingChange.objects.filter(bot__name="bot0007").order_by("-id")
    assert [rc.pk for rc in response.context["cl"].result_list] == [rc.pk for rc in expected]
    assert expected.count() > 0
    # …read through the indexes, never walking the rating steps one by one (a bot with few
    # steps meant reading them all, two million at a million matches).
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
            plan = [row[-1] for row in cursor.fetchall()]
            assert not any(d.startswith("SCAN competition_ratingchange") for d in plan), (
                query["sql"],
                plan,
            )


#: SQLite's statistics (``sqlite_stat1``) of the rating steps and bots as ``ANALYZE`` left them
#: on a database of a million matches (``bench/history.py --matches 1000000``)
MILLION_STATS = [
    ("competition_ratingchange", "competition_ratingchange_match_id_00522a4b", "2732699 2"),
    ("competition_ratingchange", "competition_ratingchange_bot_id_de50362a", "2079550 1001"),
    ("competition_ratingchange", "sqlite_autoindex_competition_ratingchange_1", "2390542 2 1"),
    ("bots_bot", "bots_bot_owner_id_83aa2ee8", "216 216"),
    ("bots_bot", "sqlite_autoindex_bots_bot_1", "216 216 216 1"),
]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="EXPLAIN QUERY PLAN is SQLite's")
def test_it_lists_rating_steps_on_their_primary_key_as_at_a_million_matches(monkeypatch):
    monkeypatch.setattr(CappedPaginator, "CAP", 150)  # past a page (100), below the rows
    rows = Rows()
    staff = Client()
    staff.force_login(rows.staff)
    rows.grow(SMALL)
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'competition_ratingchange'")
        indexes = {name for (name,) in cursor.fetchall()}
        assert {index for table, index, _ in MILLION_STATS if "ratingchange" in table} <= indexes
        cursor.executemany(
            "DELETE FROM sqlite_stat1 WHERE tbl = %s AND idx = %s",
            [(table, index) for table, index, _ in MILLION_STATS],
        )
        cursor.executemany("INSERT INTO sqlite_stat1 VALUES (%s, %s, %s)", MILLION_STATS)
        cursor.execute("ANALYZE sqlite_schema")  # the planner reads the statistics again
    with CaptureQueriesContext(connection) as captured:
        response = staff.get("/admin/competition/ratingchange/")
    # It should list the newest rating steps first…
    expected = list(RatingChange.objects.order_by("-id").values_list("pk", flat=True)[:100])
    assert [rc.pk for rc in response.context["cl"].result_list] == expected
    # …counted up to the cap, and said so…
    assert "more than 150 rating changes" in response.content.decode()
    assert response.context["cl"].paginator.num_pages == 2
    # …walking the primary key from its end: no bot read first, no sort of every step (the
    # planner's choice with the bots and matches joined, 4.2 s a page at a million matches).
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            if "competition_ratingchange" not in query["sql"]:
                continue
            cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
            plan = [row[-1] for row in cursor.fetchall()]
            assert not any("TEMP B-TREE" in d or d.startswith("SCAN bots_bot") for d in plan), (
                query["sql"],
                plan,
            )
