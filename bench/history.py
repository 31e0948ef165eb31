"""A year of history: pages, API lists, every admin changelist and a ladder finish on a database
of 100,000 matches (``--matches``, up to a million).

``build`` makes a database of the shape issue 26 measured: tic-tac-toe bots whose opponents
are drawn with Zipf weights (one bot plays over a quarter of all matches, the median one a
few hundred; all of them in the game's standing ladder, which plays a quarter of those
matches; the busiest a URL bot with five declared versions, its "Results by version"), a
running continuous ladder of ``--ladder`` matches between 16 bots, a round
robin, a Swiss and a single elimination played through the real services
(``services.events`` / ``services.matches.finish``), and the rest as finished friendly-free
rated matches. History is bulk-inserted in plain SQL (matches, seats, rating steps, no model
instance per row: ``executemany`` on SQLite, ``COPY`` on PostgreSQL; no turns: no page
measured here reads them), so 100k matches take a minute or two and a million some minutes,
not hours; the ladder's stored standings are rebuilt from its matches
(``services.standings.rebuild``) each time history was inserted behind the services' back.
On SQLite the database built is kept in ``--cache`` (``~/.cache/arena-bench``), keyed by the
parameters, this file and the migrations: the next run with the same ones measures a copy of
it (the build's figures are the first run's).

It prints, per database (SQLite, the embedded default; PostgreSQL, started here as the tests
start it), p50/p95 in ms of every page and API list of the issue's table and of every
changelist registered in the admin (``admin.site._registry``; its first page, a page filtered
by its first filter and a searched page where it has search fields), sequential requests
through Django's test client after warm-up, production settings, with the queries each page
runs and its p50 / p95 next to those on a small database (the ``--quick`` sizes, 1,500
matches, built in the same run): a page whose queries grow with the history, or whose p50 is
past 1.5x the small database's, is marked. Then the cost of one ladder
finish (``services.matches.finish``: result, rating, stored standings, the next pairing) at
100, 1k, 10k and 20k ladder matches, next to the goals (p95 <= 50 ms, admin <= 100 ms, a
finish at 20k within 1.5x of one at 100).

``--live`` runs the continuous-ladder acceptance instead: the platform served on the embedded
default (``manage.py serve``), 16 HTTP tic-tac-toe bots (``manage.py serve_bot``) on loopback
in a ladder for ``--seconds`` (180), finishes per minute and the p50/p95 of the standings API
and the event page sampled throughout.

    python bench/history.py                         # SQLite and PostgreSQL, 100k matches
    python bench/history.py --backend sqlite --matches 20000 --ladder 5000
    python bench/history.py --backend sqlite --matches 1000000   # built once, then cached
    python bench/history.py --live                  # the 3-minute continuous ladder
    python bench/history.py --quick                 # a smoke run (seconds)
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, free_port, run_child, wait_port  # noqa: E402

GAME = "tictactoe"
LADDER_BOTS = 16
GOAL_MS = 50.0
GOAL_ADMIN_MS = 100.0
FINISH_RATIO = 1.5
CHECKPOINTS = (100, 1_000, 10_000, 20_000)
#: a page's p50 at most this many times its p50 on the small database
SMALL_RATIO = 1.5
#: the share of the Zipf history played in the game's standing ladder (the rest off it)
STANDING_SHARE = 0.25
#: ``--quick``: matches, ladder matches, bots, samples per page, finish samples; the small
#: database whose queries per page every run compares with its own
QUICK = (1500, 1000, 40, 5, 5)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


# -- the database ---------------------------------------------------------------------------------


def setup_django(database_url: str | None, data_dir: str) -> None:
    for name in ("DATABASE_URL", "REDIS_URL", "ARENA_RUNNER"):
        os.environ.pop(name, None)
    os.environ.update(PRODUCTION_ENV)
    os.environ["ARENA_DATA_DIR"] = data_dir
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_SETTINGS_MODULE"] = "competition.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def analyze() -> None:
    from django.db import connection

    from competition.events.standings import refresh_statistics

    if connection.vendor == "sqlite":
        refresh_statistics()
    else:
        # VACUUM too, and a checkpoint: else autovacuum and the checkpointer work through
        # the bulk load on the same 2 cores while the pages are measured (a server that has
        # run for a while has done that long ago)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
            cursor.execute("CHECKPOINT")


class RawRows:
    """Rows of one model inserted with plain SQL, no model instance per row: the columns that
    vary are given per row, the others take a prototype instance's prepared values
    (``executemany`` on SQLite, ``COPY`` on PostgreSQL); ids are given, so the rows that
    refer to them are built without reading anything back."""

    def __init__(self, model, prototype, varying: tuple[str, ...]):
        from django.db import connection

        self.model, self.connection = model, connection
        fields = list(model._meta.local_concrete_fields)
        self.table = connection.ops.quote_name(model._meta.db_table)
        self.columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        self.base = [f.get_db_prep_save(f.pre_save(prototype, True), connection) for f in fields]
        by_name = {f.attname: i for i, f in enumerate(fields)}
        self.slots = [by_name[name] for name in varying]
        self.adapt = [
            fields[by_name[name]].get_internal_type() == "DateTimeField" for name in varying
        ]
        self.next_id = (model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1

    def ids(self, n: int) -> range:
        first, self.next_id = self.next_id, self.next_id + n
        return range(first, first + n)

    def insert(self, rows) -> None:
        """``rows``: tuples of the varying columns, in their order."""
        adapt_dt = self.connection.ops.adapt_datetimefield_value
        out = []
        for values in rows:
            row = list(self.base)
            for slot, value, dt in zip(self.slots, values, self.adapt, strict=True):
                row[slot] = adapt_dt(value) if dt else value
            out.append(row)
        with self.connection.cursor() as cursor:
            if self.connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {self.table} ({self.columns}) FROM STDIN") as copy:
                    for row in out:
                        copy.write_row(row)
            else:
                marks = ", ".join(["%s"] * len(self.base))
                cursor.executemany(
                    f"INSERT INTO {self.table} ({self.columns}) VALUES ({marks})", out
                )

    def done(self) -> None:
        """PostgreSQL's id sequence past the ids given here."""
        from django.core.management.color import no_style

        with self.connection.cursor() as cursor:
            for sql in self.connection.ops.sequence_reset_sql(no_style(), [self.model]):
                cursor.execute(sql)


class Builder:
    """Bulk history: matches, seats and rating steps, in batches of plain SQL."""

    def __init__(self, rng: random.Random, start):
        self.rng = rng
        self.clock = start
        self.mu: dict[int, float] = {}

    def outcome(self) -> tuple[float, float, str]:
        x = self.rng.random()
        if x < 0.45:
            return 1.0, 0.0, "three_in_a_row"
        if x < 0.8:
            return 0.0, 1.0, "three_in_a_row"
        return 0.5, 0.5, "draw"

    def tables(self):
        from competition.models import Match, MatchStatus, Participant, RatingChange

        now = self.clock
        match = Match(game=GAME, status=MatchStatus.FINISHED, turn_count=7, queued_at=now)
        return (
            RawRows(
                Match,
                match,
                (
                    "id",
                    "seed",
                    "reason",
                    "event_id",
                    "round",
                    "pairing",
                    "ladder_id",
                    "created",
                    "queued_at",
                    "started",
                    "finished",
                ),
            ),
            RawRows(
                Participant,
                Participant(match_id=0, seat=0, bot_id=0),
                ("id", "match_id", "seat", "bot_id", "score", "result", "ladder_id"),
            ),
            RawRows(
                RatingChange,
                RatingChange(
                    match_id=0, bot_id=0, mu_before=0, sigma_before=3.0, mu_after=0, sigma_after=3.0
                ),
                ("id", "match_id", "bot_id", "mu_before", "mu_after", "created"),
            ),
        )

    def insert(
        self, pairs: list[tuple[int, int]], *, event=None, rounds=None, ladders=None
    ) -> None:
        """Finished matches for ``pairs`` (seat 0 first); ``rounds[i]`` for event matches,
        ``ladders[i]`` the standing ladder's id of a ladder match (None: off the ladder)."""
        from django.db import transaction

        tables = self.tables()
        for start in range(0, len(pairs), 20_000):
            chunk = pairs[start : start + 20_000]
            with transaction.atomic():
                self.insert_chunk(
                    tables,
                    chunk,
                    event,
                    rounds[start:] if rounds else None,
                    ladders[start:] if ladders else None,
                )
        for table in tables:
            table.done()

    def insert_chunk(self, tables, chunk, event, rounds, ladders=None) -> None:
        matches, seats, steps = tables
        m_rows, s_rows, r_rows = [], [], []
        seat_ids, step_ids = iter(seats.ids(2 * len(chunk))), iter(steps.ids(2 * len(chunk)))
        for i, (match_id, (a, b)) in enumerate(zip(matches.ids(len(chunk)), chunk, strict=True)):
            sa, sb, reason = self.outcome()
            self.clock += timedelta(seconds=300)
            clock = self.clock
            ladder = ladders[i] if ladders else None
            m_rows.append(
                (
                    match_id,
                    self.rng.randrange(2**31),
                    reason,
                    event.pk if event else None,
                    rounds[i] if rounds else None,
                    f"{a}-{b}" if event else "",
                    ladder,
                    clock,
                    clock,
                    clock - timedelta(seconds=2),
                    clock,
                )
            )
            for seat, (bot, score) in enumerate(((a, sa), (b, sb))):
                result = "draw" if sa == sb else ("win" if score == 1.0 else "loss")
                s_rows.append((next(seat_ids), match_id, seat, bot, score, result, ladder))
                before = self.mu.get(bot, 25.0)
                after = before + (score - 0.5) * 0.2
                self.mu[bot] = after
                r_rows.append((next(step_ids), match_id, bot, before, after, clock))
        matches.insert(m_rows)
        seats.insert(s_rows)
        steps.insert(r_rows)

    def store_ratings(self) -> None:
        from competition.models import Rating

        Rating.objects.all().delete()
        Rating.objects.bulk_create(
            [
                Rating(bot_id=bot, game=GAME, mu=mu, sigma=3.0, games=100)
                for bot, mu in self.mu.items()
            ],
            batch_size=1000,
        )


def make_bots(owner, prefix: str, n: int) -> list:
    from competition.models.bots import Bot, EndpointKind

    return Bot.objects.bulk_create(
        [
            Bot(
                owner=owner,
                game=GAME,
                name=f"{prefix}-{i:04d}",
                kind=EndpointKind.BUILTIN,
                target="random" if i % 2 else "perfect",
            )
            for i in range(n)
        ]
    )


def scripted_finish(match_id: int, rng: random.Random) -> float:
    """Claim and finish one match through the services; seconds the finish took."""
    from competition.matches.lifecycle import claim, finish
    from games.base import Outcome

    claimed = claim(match_id)
    assert claimed is not None, match_id
    first = rng.choice((0.0, 0.5, 1.0))
    started = time.perf_counter()
    assert finish(match_id, claimed[1], Outcome((first, 1.0 - first), "scripted"))
    return time.perf_counter() - started


def play_event(event, rng: random.Random) -> int:
    """Finish an event's queued matches through the services until none is left."""
    from competition.models import MatchStatus

    played = 0
    while True:
        queued = list(
            event.matches.filter(status=MatchStatus.QUEUED)
            .order_by("id")
            .values_list("id", flat=True)
        )
        if not queued:
            return played
        for match_id in queued:
            scripted_finish(match_id, rng)
            played += 1


class Ladder:
    """The ladder event: history bulk-inserted up to a checkpoint, then finishes measured."""

    def __init__(self, builder: Builder, owner, bots, rng: random.Random):
        from competition.models import Entry, Event, EventFormat, EventStatus

        self.builder, self.bots, self.rng = builder, bots, rng
        self.event = Event.objects.create(
            name="ladder",
            game=GAME,
            format=EventFormat.LADDER,
            status=EventStatus.RUNNING,
            created_by=owner,
        )
        Entry.objects.bulk_create(
            [Entry(event=self.event, bot=b, seed=i) for i, b in enumerate(bots, start=1)]
        )
        self.round = 0

    @classmethod
    def of(cls, event, seed: int) -> Ladder:
        """The ladder of a database built before (a cached one): ``finishes`` only."""
        ladder = cls.__new__(cls)
        ladder.event, ladder.rng, ladder.bots, ladder.round = event, random.Random(seed), [], 0
        return ladder

    def count(self) -> int:
        return self.event.matches.count()

    def grow_to(self, total: int) -> None:
        """Stop pairing, cancel what is queued, insert history up to ``total`` matches, rebuild
        the stored standings and let the ladder pair again."""
        from competition.events import services as events
        from competition.events import standings
        from competition.matches.lifecycle import cancel
        from competition.models import EventStatus, MatchStatus

        self.event.__class__.objects.filter(pk=self.event.pk).update(status=EventStatus.PAUSED)
        for match_id in self.event.matches.filter(status=MatchStatus.QUEUED).values_list(
            "id", flat=True
        ):
            cancel(match_id, "bench: history inserted", advance=False)
        self.round = max(
            self.round,
            self.event.matches.order_by("-round").values_list("round", flat=True).first() or 0,
        )
        pairs, rounds = [], []
        ids = [b.pk for b in self.bots]
        while self.count() + len(pairs) < total:
            self.round += 1
            self.rng.shuffle(ids)
            for k in range(0, len(ids), 2):
                pairs.append((ids[k], ids[k + 1]))
                rounds.append(self.round)
        self.builder.insert(pairs, event=self.event, rounds=rounds)
        self.builder.store_ratings()
        standings.rebuild(self.event)
        self.event.__class__.objects.filter(pk=self.event.pk).update(status=EventStatus.RUNNING)
        self.event.refresh_from_db()
        events.advance_event(self.event)

    def finishes(self, samples: int) -> list[float]:
        from competition.models import MatchStatus

        took = []
        while len(took) < samples:
            queued = (
                self.event.matches.filter(status=MatchStatus.QUEUED)
                .order_by("id")
                .values_list("id", flat=True)
                .first()
            )
            assert queued is not None, "the ladder stopped pairing"
            took.append(scripted_finish(queued, self.rng) * 1000)
        return took[2:]  # the first ones warm caches up


def grow_ladder(args, builder: Builder, owner, bots, rng: random.Random, report: dict) -> Ladder:
    """The ladder grown through its checkpoints, a ladder finish measured at each."""
    ladder = Ladder(builder, owner, bots, rng)
    for point in [c for c in CHECKPOINTS if c <= args.ladder] or [args.ladder]:
        ladder.grow_to(point)
        analyze()
        took = ladder.finishes(args.finish_samples)
        report["finish_ms"][str(point)] = {
            "p50": statistics.median(took),
            "p95": percentile(took, 95),
        }
        print(f"  ladder finish at {point}: p50 {statistics.median(took):.1f} ms", flush=True)
    return ladder


def zipf_history(builder: Builder, population, count: int, rng: random.Random) -> None:
    """``count`` finished matches between opponents drawn with Zipf weights in ``population``,
    every bot of which is in its game's standing ladder: a ``STANDING_SHARE`` of the matches
    are the standing ladder's, the rest off it (challenges), interleaved."""
    from competition.events import ladder as standing

    for bot in population:
        standing.enrol(bot)  # as a passed test call does
    standing_id = standing.ladder_of(GAME).pk
    cum = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(population))))
    ids = [b.pk for b in population]
    pairs, ladders = [], []
    for _ in range(max(0, count)):
        a, b = rng.choices(ids, cum_weights=cum, k=2)
        while b == a:
            b = rng.choices(ids, cum_weights=cum)[0]
        pairs.append((a, b))
        ladders.append(standing_id if rng.random() < STANDING_SHARE else None)
    builder.insert(pairs, ladders=ladders)
    builder.store_ratings()


def declare_versions(bot_id: int, n: int = 5) -> None:
    """``bot_id`` made a URL bot with ``n`` declared versions, its seats split among them in the
    order it played them, each version's stored record counted once from its seats (what the
    finishes keep up to date): the bot page's "Results by version" table has ``n`` rows."""
    from django.db.models import Count, Q

    from competition.models import Participant, Rating
    from competition.models.bots import Bot, BotVersion, EndpointKind

    Bot.objects.filter(pk=bot_id).update(kind=EndpointKind.HTTP, target="http://127.0.0.1:9/")
    seats = Participant.objects.filter(bot_id=bot_id)
    played = list(seats.order_by("match_id").values_list("match_id", flat=True))
    rating = Rating.objects.filter(bot_id=bot_id).first()
    for k in range(n):
        part = played[k * len(played) // n : (k + 1) * len(played) // n]
        version = BotVersion.objects.create(
            bot_id=bot_id, number=k + 1, label=f"release {k + 1}", filename="", language="",
            size=0, sha256="", data=b"",
        )  # fmt: skip
        mine = seats.filter(match_id__gte=part[0], match_id__lte=part[-1])
        mine.update(version=version)
        record = mine.aggregate(
            games=Count("id"),
            wins=Count("id", filter=Q(result="win")),
            draws=Count("id", filter=Q(result="draw")),
            losses=Count("id", filter=Q(result="loss")),
        )
        BotVersion.objects.filter(pk=version.pk).update(
            rated_games=record["games"],
            wins=record["wins"],
            draws=record["draws"],
            losses=record["losses"],
            first_match_id=part[0],
            last_match_id=part[-1],
            mu=rating.mu if rating else None,
            sigma=rating.sigma if rating else None,
        )


def play_formats(owner, candidates, rng: random.Random) -> dict[str, int]:
    """A round robin, a Swiss and a single elimination among ``candidates``, played through the
    services (the ladder is the fourth format); matches played per format."""
    from competition.events import services as events
    from competition.models import Entry, Event, EventFormat

    played = {}
    for fmt, n in (
        (EventFormat.ROUND_ROBIN, 12),
        (EventFormat.SWISS, 16),
        (EventFormat.SINGLE_ELIMINATION, 16),
    ):
        event = Event.objects.create(name=str(fmt), game=GAME, format=fmt, created_by=owner)
        chosen = rng.sample(candidates, n)
        Entry.objects.bulk_create(
            [Entry(event=event, bot=b, seed=i) for i, b in enumerate(chosen, start=1)]
        )
        events.start_event(event)
        played[str(fmt)] = play_event(event, rng)
    return played


def busiest_and_median(population) -> tuple[dict, dict]:
    """``{"bot_id", "n"}`` of the population's bot with the most matches (on the small database
    too, where a bot of the ladder event has about as many), and of its median one."""
    from django.db.models import Count

    from competition.models import Participant

    seats = Participant.objects.filter(bot__in=population).values("bot_id")
    busiest = seats.annotate(n=Count("id")).order_by("-n", "bot_id").first()
    counts = sorted(
        Participant.objects.filter(bot__in=population)
        .values("bot_id")
        .annotate(n=Count("id"))
        .values_list("n", flat=True)
    )
    median_bot = (
        Participant.objects.filter(bot__in=population)
        .values("bot_id")
        .annotate(n=Count("id"))
        .filter(n__gte=counts[len(counts) // 2])
        .order_by("n")
        .first()
    )
    return busiest, median_bot


def build(args) -> dict:
    """The database of ``args``; the report's build figures, ladder finishes, small-database
    query counts and the admin pages to measure."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from competition.models import Match

    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    User = get_user_model()
    owner = User.objects.create_user("owner")
    User.objects.create_superuser("staff", password="bench-staff-pw")
    builder = Builder(rng, timezone.now() - timedelta(days=365))
    population = make_bots(owner, "bot", args.bots)
    ladder_bots = make_bots(owner, "ladder", LADDER_BOTS)
    report: dict = {"finish_ms": {}, "pages": {}, "build": {}}

    ladder = grow_ladder(args, builder, owner, ladder_bots, rng, report)
    report["build"]["ladder_s"] = time.perf_counter() - t0

    t1 = time.perf_counter()
    zipf_history(builder, population, args.matches - ladder.count() - 200, rng)
    busiest, _ = busiest_and_median(population)
    declare_versions(busiest["bot_id"])
    report["build"]["bulk_s"] = time.perf_counter() - t1

    t2 = time.perf_counter()
    play_formats(owner, population[: args.bots // 2], rng)
    report["build"]["events_s"] = time.perf_counter() - t2
    from competition.matches import headtohead

    headtohead.rebuild()  # the pairs' tables, from the seats inserted behind the finish
    report["build"]["matches"] = Match.objects.count()
    report["build"]["ladder_matches"] = ladder.count()
    report["build"]["ladder_id"] = ladder.event.pk
    analyze()
    report["build"]["total_s"] = time.perf_counter() - t0
    return report


def build_and_measure(args, report: dict) -> dict:
    from competition.events import standings
    from competition.models import Event
    from competition.models.bots import Bot

    population = list(Bot.objects.filter(name__startswith="bot-"))
    ladder = Ladder.of(Event.objects.get(pk=report["build"]["ladder_id"]), args.seed)

    # the same ladder finish once the whole history is there
    took = ladder.finishes(args.finish_samples)
    report["finish_ms"]["full db"] = {"p50": statistics.median(took), "p95": percentile(took, 95)}
    assert standings.differences(ladder.event) == [], "stored standings drifted"

    busiest, median_bot = busiest_and_median(population)
    report["build"]["busiest_bot_matches"] = busiest["n"]
    report["build"]["median_bot_matches"] = median_bot["n"]
    top = Bot.objects.get(pk=busiest["bot_id"])
    mid = Bot.objects.get(pk=median_bot["bot_id"])
    pages = page_list(ladder.event.pk, top, mid, busiest["n"])
    seen = {page[0] for page in pages}
    pages += [page for page in admin_pages("bot-0001") if page[0] not in seen]
    report["pages"] = measure_pages(pages, args.samples)
    return report


def admin_pages(search: str) -> list[tuple[str, str, bool, float]]:
    """Every changelist registered in the admin: its first page, a page filtered by its first
    filter (its first choice past "All") and, where it has search fields, a page searched for
    ``search``."""
    from urllib.parse import quote

    from django.contrib import admin
    from django.contrib.auth import get_user_model
    from django.test import RequestFactory
    from django.urls import reverse

    staff = get_user_model().objects.get(username="staff")
    pages = []
    for model, model_admin in admin.site._registry.items():
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        pages.append((url, url, True, GOAL_ADMIN_MS))
        request = RequestFactory().get(url)
        request.user = staff
        changelist = model_admin.get_changelist_instance(request)
        if changelist.filter_specs:
            choices = list(changelist.filter_specs[0].choices(changelist))
            if len(choices) > 1:
                query = choices[1]["query_string"]
                pages.append((url + query, url + query, True, GOAL_ADMIN_MS))
        if model_admin.get_search_fields(request):
            pages.append((f"{url}?q=<bot name>", f"{url}?q={quote(search)}", True, GOAL_ADMIN_MS))
    return pages


def page_list(ladder_id: int, top, mid, top_matches: int) -> list[tuple[str, str, bool, float]]:
    """(label, url, staff, goal ms)."""
    from competition.models import Meeting, Participant

    seats = Participant.objects.filter(bot=top).order_by("match_id")
    middle = seats.values_list("match_id", flat=True)[top_matches // 2]  # a deep keyset page
    # its latest match of the bulk history, rated at both sizes (its latest of all is, on the
    # small database only, an event's between one owner's bots: unrated, no rating steps to
    # read, a page of another kind than at 100k)
    latest = seats.filter(match__event__isnull=True).values_list("match_id", flat=True).last()
    rival = (  # the busiest bot's latest opponent: the head-to-head pages of a long pair
        Meeting.objects.filter(bot=top).order_by("-match_id").values_list("opponent_id", flat=True)
    ).first()
    return [
        ("/bots/<busiest>/vs/<rival>/", f"/bots/{top.pk}/vs/{rival}/", False, GOAL_MS),
        (
            "GET /api/bots/<busiest>/head-to-head/<rival>/",
            f"/api/bots/{top.pk}/head-to-head/{rival}/",
            False,
            GOAL_MS,
        ),
        (
            "GET /api/events/<ladder>/standings/",
            f"/api/events/{ladder_id}/standings/",
            False,
            GOAL_MS,
        ),
        ("/events/<ladder>/", f"/events/{ladder_id}/", False, GOAL_MS),
        ("/events/<ladder>/screen.json", f"/events/{ladder_id}/screen.json", False, GOAL_MS),
        ("/bots/<busiest>/ (with its versions table)", f"/bots/{top.pk}/", False, GOAL_MS),
        ("/bots/<median>/", f"/bots/{mid.pk}/", False, GOAL_MS),
        ("GET /api/bots/<busiest>/ladder/", f"/api/bots/{top.pk}/ladder/", False, GOAL_MS),
        ("GET /api/bots/<median>/ladder/", f"/api/bots/{mid.pk}/ladder/", False, GOAL_MS),
        ("GET /api/bots/<busiest>/versions/", f"/api/bots/{top.pk}/versions/", True, GOAL_MS),
        ("GET /api/matches/?bot=<busiest>", f"/api/matches/?bot={top.pk}", False, GOAL_MS),
        (
            "GET /api/matches/?bot=<busiest>&before=<middle>",
            f"/api/matches/?bot={top.pk}&before={middle}",
            False,
            GOAL_MS,
        ),
        ("GET /api/matches/?bot=<median>", f"/api/matches/?bot={mid.pk}", False, GOAL_MS),
        (
            "/admin/competition/match/?q=<busiest name>",
            f"/admin/competition/match/?q={top.name}",
            True,
            GOAL_ADMIN_MS,
        ),
        ("/ (home)", "/", False, GOAL_MS),
        ("/games/<game>/leaderboard", f"/games/{GAME}/leaderboard", False, GOAL_MS),
        ("GET /api/leaderboard/<game>/", f"/api/leaderboard/{GAME}/", False, GOAL_MS),
        ("/matches/ (list)", "/matches/", False, GOAL_MS),
        ("/matches/<id>/ (detail)", f"/matches/{latest}/", False, GOAL_MS),
        ("GET /api/matches/<id>/", f"/api/matches/{latest}/", False, GOAL_MS),
        ("GET /api/events/", "/api/events/", False, GOAL_MS),
        ("/admin/competition/event/", "/admin/competition/event/", True, GOAL_MS),
    ]


def measure_pages(pages, samples: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    anon = Client(HTTP_HOST="localhost")
    staff = Client(HTTP_HOST="localhost")
    staff.force_login(get_user_model().objects.get(username="staff"))
    out = {}
    for label, url, as_staff, goal in pages:
        client = staff if as_staff else anon
        took, cpu = [], []
        for i in range(samples + 3):
            started, started_cpu = time.perf_counter(), time.thread_time()
            response = client.get(url)
            elapsed = (time.perf_counter() - started) * 1000
            assert response.status_code == 200, (url, response.status_code)
            if i >= 3:
                took.append(elapsed)
                cpu.append((time.thread_time() - started_cpu) * 1000)
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        if os.environ.get("HISTORY_PROFILE") and os.environ["HISTORY_PROFILE"] == label:
            for query in captured.captured_queries:
                print(f"{query['time']} {query['sql'][:300]}")
            profile_page(client, url)
        out[label] = {
            "p50": statistics.median(took),
            "p95": percentile(took, 95),
            "cpu_p50": statistics.median(cpu),
            "cpu_p95": percentile(cpu, 95),
            "goal": goal,
            "queries": len(captured.captured_queries),
            "sql_ms": sum(float(q["time"]) for q in captured.captured_queries) * 1000,
        }
    return out


def profile_page(client, url: str) -> None:
    """``HISTORY_PROFILE=<part of a label>``: where a page's CPU goes (cProfile, top 25)."""
    import cProfile
    import pstats

    profiler = cProfile.Profile(time.thread_time)
    profiler.enable()
    for _ in range(5):
        client.get(url)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative")
    stats.print_stats("competition|templatetags|games", 40)
    stats.sort_stats("tottime").print_stats(15)


def cache_key(args) -> str:
    """What a cached database depends on: the sizes, the seed, the code that builds it and the
    migrations."""
    import inspect

    digest = hashlib.sha256()
    parts = (RawRows, Builder, Ladder, build, grow_ladder, zipf_history, declare_versions)
    for part in (*parts, play_formats, busiest_and_median):
        digest.update(inspect.getsource(part).encode())
    for path in sorted(ROOT.glob("*/migrations/0*.py")):
        digest.update(path.name.encode())
    digest.update(f"{args.matches}/{args.ladder}/{args.bots}/{args.seed}".encode())
    return digest.hexdigest()[:16]


def child(args) -> None:
    """Build (or copy from the cache) and measure in this process on ``args.child`` and print
    the report as JSON. On SQLite a database built once is kept in ``--cache`` keyed by the
    parameters, this file and the migrations, and a later run measures a copy of it."""
    import shutil

    cached = None
    if not args.database_url and args.cache:
        cached = Path(args.cache).expanduser() / f"history-{cache_key(args)}.sqlite3"
    with tempfile.TemporaryDirectory(prefix="arena-history-") as data:
        db = Path(data) / "arena.sqlite3"
        if cached is not None and cached.exists():
            started = time.perf_counter()
            shutil.copyfile(cached, db)
            print(f"copied the database from {cached} in {time.perf_counter() - started:.0f} s")
        setup_django(args.database_url or None, data)
        from django.db import connection

        if cached is not None and cached.exists():
            report = json.loads(cached.with_suffix(".json").read_text())
            report["build"]["cached"] = str(cached)
        else:
            report = build(args)
            if cached is not None:
                with connection.cursor() as cursor:
                    cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                cached.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(db, cached)
                cached.with_suffix(".json").write_text(json.dumps(report))
                print(f"kept the database in {cached} ({cached.stat().st_size / 1e6:.0f} MB)")
        report = build_and_measure(args, report)
        report["backend"] = connection.vendor
    print("REPORT " + json.dumps(report), flush=True)


def run_backend(backend: str, args) -> dict:
    """The report of ``args`` on ``backend``, each page's queries and times on a small database
    (the ``--quick`` sizes, built every time, pages sampled as often) next to its own
    (``small``)."""
    small = argparse.Namespace(**vars(args))
    small.matches, small.ladder, small.bots, _, small.finish_samples = QUICK
    small.cache = ""
    report = child_report(backend, args)
    if (args.matches, args.ladder, args.bots) == QUICK[:3]:
        small_report = report  # the small database itself
    else:
        print(f"  [{backend}] the small database ({small.matches} matches) …", flush=True)
        small_report = child_report(backend, small)
    for label, row in report["pages"].items():
        row["small"] = small_report["pages"].get(label)
    return report


def child_report(backend: str, args) -> dict:
    argv = [
        sys.executable,
        __file__,
        "--child",
        "--matches",
        str(args.matches),
        "--ladder",
        str(args.ladder),
        "--bots",
        str(args.bots),
        "--samples",
        str(args.samples),
        "--finish-samples",
        str(args.finish_samples),
        "--seed",
        str(args.seed),
        "--cache",
        args.cache,
    ]
    return run_child(backend, argv)


def details(row: dict) -> str:
    """A page's CPU time and its queries."""
    cpu = f"; CPU {row['cpu_p50']:.1f} / {row['cpu_p95']:.1f}" if "cpu_p50" in row else ""
    return cpu + (f" ({row['queries']} q, {row['sql_ms']:.1f} ms SQL)" if "sql_ms" in row else "")


def next_to_small(row: dict, small: dict) -> str:
    """The small database's p50 / p95 (and CPU p50) beside a page's, and the ratio of the p50s
    (marked past ``SMALL_RATIO``)."""
    ratio = row["p50"] / small["p50"]
    cpu = row["cpu_p50"] / small["cpu_p50"]
    return (
        f"; small database {small['p50']:.1f} / {small['p95']:.1f} (CPU {small['cpu_p50']:.1f}),"
        f" {ratio:.2f}x (CPU {cpu:.2f}x){'' if ratio <= SMALL_RATIO else ' ✗'}"
    )


def print_report(reports: dict[str, dict]) -> bool:
    names = list(reports)
    ok = True
    print()
    print("| what | goal (p95) | " + " | ".join(f"{n} p50 / p95 ms" for n in names) + " |")
    print("|---|---|" + "---|" * len(names))
    labels = list(next(iter(reports.values()))["pages"])
    for label in labels:
        cells = []
        goal = next(iter(reports.values()))["pages"][label]["goal"]
        for n in names:
            row = reports[n]["pages"].get(label)
            if row is None:
                cells.append("(not measured)")
                continue
            met = row["p95"] <= goal
            ok &= met
            cells.append(f"{row['p50']:.1f} / {row['p95']:.1f}{'' if met else ' ✗'}" + details(row))
            small = row.get("small")
            if small is not None and small["queries"] != row["queries"]:
                ok = False
                cells[-1] += f" ✗ {small['queries']} queries on the small database"
            if small is not None and small is not row:
                cells[-1] += next_to_small(row, small)
                ok &= row["p50"] <= SMALL_RATIO * small["p50"]
        print(f"| {label} | <= {goal:.0f} ms | " + " | ".join(cells) + " |")
    points = list(next(iter(reports.values()))["finish_ms"])
    for point in points:
        cells = []
        for n in names:
            row = reports[n]["finish_ms"][point]
            cells.append(f"{row['p50']:.1f} / {row['p95']:.1f}")
        print(f"| ladder finish at {point} matches | | " + " | ".join(cells) + " |")
    for n in names:
        finish = reports[n]["finish_ms"]
        base = finish.get("100") or next(iter(finish.values()))
        last = finish.get("20000") or finish[points[-2] if len(points) > 1 else points[0]]
        ratio = last["p50"] / base["p50"]
        met = ratio <= FINISH_RATIO
        ok &= met
        b = reports[n]["build"]
        print(
            f"\n{n}: {b['matches']} matches ({b['ladder_matches']} in the ladder; busiest bot "
            f"{b['busiest_bot_matches']}, median {b['median_bot_matches']}), built in "
            f"{b['total_s']:.0f} s (bulk {b['bulk_s']:.0f} s); ladder finish at the last "
            f"checkpoint / at the first: {ratio:.2f}x (goal <= {FINISH_RATIO}x)"
            + ("" if met else " ✗")
            + (f"; database and build figures from {b['cached']}" if "cached" in b else "")
        )
    return ok


# -- the continuous ladder (live) -------------------------------------------------------------------


LIVE_SETUP = (
    "import json, sys\n"
    "from django.contrib.auth import get_user_model\n"
    "from competition.models.bots import Bot, EndpointKind\n"
    "from competition.models import Entry, Event, EventFormat\n"
    "owner = get_user_model().objects.create_user('owner')\n"
    "event = Event.objects.create(name='live ladder', game='tictactoe',"
    " format=EventFormat.LADDER, created_by=owner)\n"
    "for i, port in enumerate(json.loads(sys.argv[-1]), start=1):\n"
    "    bot = Bot.objects.create(owner=owner, game='tictactoe', name=f'http-{i}',"
    " kind=EndpointKind.HTTP, target=f'http://127.0.0.1:{port}/')\n"
    "    Entry.objects.create(event=event, bot=bot, seed=i)\n"
    "print(event.pk)\n"
)

LIVE_START = (
    "import sys, django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE',"
    " 'competition.settings'); django.setup(); "
    "from competition.models import Event; from competition.events import services as events; "
    "print(events.start_event(Event.objects.get(pk=int(sys.argv[1]))))"
)


def bot_argvs(ports: list[int]) -> list[list[str]]:
    """``manage.py serve_bot`` command lines of the HTTP tic-tac-toe bots, one per port."""
    return [
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "serve_bot",
            f"{GAME}:random",
            "--port",
            str(p),
        ]
        for p in ports
    ]


def create_live_ladder(env: dict, data: str, ports: list[int]) -> int:
    """The ladder of the HTTP bots on ``ports`` (not started yet); its id."""
    script = Path(data) / "setup_live.py"
    script.write_text(LIVE_SETUP)
    return int(
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import os, sys, runpy, django; "
                "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'competition.settings'); "
                "django.setup(); runpy.run_path(sys.argv[1], run_name='__main__')",
                str(script),
                json.dumps(ports),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()[-1]
    )


@contextlib.contextmanager
def serving(env: dict, data: str):
    """``manage.py serve`` on a free loopback port; yields its base URL, stops it at the end."""
    port = free_port()
    log = open(Path(data) / "serve.log", "w")
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "serve",
            "--no-demo",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        try:
            wait_port(port, server, timeout=180)
        except SystemExit:
            log.flush()
            print((Path(data) / "serve.log").read_text()[-3000:])
            raise
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(30)
        log.close()


def sample_live(base: str, event_id: int, seconds: float):
    """Poll the event's progress, standings API and page every 0.25 s for ``seconds``:
    ``(t, done)`` samples and, per page, ``(t, ms)``."""
    import urllib.request

    def get(path: str) -> tuple[float, bytes]:
        t = time.perf_counter()
        with urllib.request.urlopen(base + path, timeout=30) as r:
            body = r.read()
        return (time.perf_counter() - t) * 1000, body

    began = time.monotonic()
    samples: list[tuple[float, int]] = []  # (t, done)
    page_ms: dict[str, list[tuple[float, float]]] = {"standings": [], "event": []}
    while time.monotonic() - began < seconds:
        t = time.monotonic() - began
        ms, body = get(f"/api/events/{event_id}/")
        samples.append((t, json.loads(body)["progress"]["done"]))
        ms, _ = get(f"/api/events/{event_id}/standings/")
        page_ms["standings"].append((t, ms))
        ms, _ = get(f"/events/{event_id}/")
        page_ms["event"].append((t, ms))
        time.sleep(0.25)
    return samples, page_ms


def print_live(seconds: float, samples, page_ms) -> bool:
    """The per-window table of finishes and page times; whether the goals were met."""

    def done_at(t: float) -> int:
        return max((d for s, d in samples if s <= t), default=0)

    window = 60.0 if seconds >= 120 else seconds / 3  # a minute, or a third
    minutes = int(seconds // window)
    rates = [(done_at(window * (m + 1)) - done_at(window * m)) / window for m in range(minutes)]
    print("\ncontinuous ladder, 16 HTTP bots, embedded default (SQLite):")
    print(
        f"| {window:.0f} s window | finishes/s | standings API p50 / p95 ms | event page p50 / p95 ms |"
    )
    print("|---|---|---|---|")
    ok = True
    for m in range(minutes):
        cells = []
        for name in ("standings", "event"):
            xs = [ms for t, ms in page_ms[name] if window * m <= t < window * (m + 1)]
            p95 = percentile(xs, 95)
            ok &= p95 <= GOAL_MS
            cells.append(f"{statistics.median(xs):.1f} / {p95:.1f}")
        print(f"| {m + 1} | {rates[m]:.1f} | " + " | ".join(cells) + " |")
    total = samples[-1][1] if samples else 0
    print(f"{total} matches finished in {seconds:.0f} s")
    if len(rates) >= 2:
        held = rates[-1] >= 0.8 * rates[-2]
        print(
            f"last window / the one before: {rates[-1] / max(rates[-2], 1e-9):.2f} (goal >= 0.8)"
            + ("" if held else " ✗")
        )
        ok &= held and rates[-1] > 10
    return ok


def live(args) -> bool:
    """16 HTTP bots in a ladder on the embedded default, for ``args.seconds``."""
    sys.path.insert(0, str(ROOT / "bench"))
    from throughput import base_env, manage, processes

    with tempfile.TemporaryDirectory(prefix="arena-live-") as data:
        env = base_env(ARENA_DATA_DIR=data)
        manage(env, "migrate", "--noinput")
        ports = [free_port() for _ in range(LADDER_BOTS)]
        with processes(bot_argvs(ports), env):
            for p in ports:
                wait_port(p, timeout=300)  # 16 processes starting on a busy machine
            event_id = create_live_ladder(env, data, ports)
            with serving(env, data) as base:
                subprocess.run(
                    [sys.executable, "-c", LIVE_START, str(event_id)],
                    cwd=ROOT,
                    env=env,
                    check=True,
                    capture_output=True,
                )
                samples, page_ms = sample_live(base, event_id, args.seconds)
    return print_live(args.seconds, samples, page_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--ladder", type=int, default=20_000)
    parser.add_argument("--bots", type=int, default=200, help="bots outside the ladder")
    parser.add_argument("--samples", type=int, default=30, help="requests per page")
    parser.add_argument("--finish-samples", type=int, default=22)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument(
        "--cache",
        default="~/.cache/arena-bench",
        help="where a built SQLite database is kept and found again ('' to build every time)",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run (small sizes)")
    parser.add_argument("--live", action="store_true", help="the continuous-ladder acceptance")
    parser.add_argument("--seconds", type=float, default=180.0, help="--live: how long")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--database-url", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.matches, args.ladder, args.bots, args.samples, args.finish_samples = QUICK
        args.cache = ""  # built in seconds
        args.seconds = min(args.seconds, 20.0)
    if args.child:
        child(args)
        return
    if args.live:
        ok = live(args)
    else:
        backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
        reports = {}
        for backend in backends:
            print(f"building {args.matches} matches on {backend} …", flush=True)
            reports[backend] = run_backend(backend, args)
        ok = print_report(reports)
    print("\nall goals met" if ok else "\nsome goals not met (✗)")


if __name__ == "__main__":
    main()
