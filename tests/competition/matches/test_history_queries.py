"""Pages and API lists whose cost must not grow with history (issue 26).

Each page of the history table is requested through Django's test client at two history
sizes (the second ten times the first: a ladder's matches, a busy bot's matches, matches of
other bots). At both sizes the page must run the same number of queries, and SQLite must do
about the same work: its virtual machine's steps (counted with ``set_progress_handler``, a
measure of rows read) may not grow with history, and ``EXPLAIN QUERY PLAN`` of each query
must not scan the match, seat or rating tables (a scan in index order stopped by a LIMIT
excepted; the VM steps catch one that would not stop early).
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from competition.events import services as events
from competition.events import standings
from competition.models import (
    Entry,
    Event,
    EventFormat,
    EventStatus,
    Match,
    MatchStatus,
    Participant,
    RatingChange,
)
from competition.models.bots import Bot, EndpointKind
from tests.helpers import measure

pytestmark = pytest.mark.django_db

SMALL, LARGE = 150, 1500


class History:
    """Bulk history: a running ladder of 8 bots and matches of a busy bot and others."""

    def __init__(self):
        self.rng = random.Random(26)
        self.clock = timezone.now() - timedelta(days=30)
        owner = get_user_model().objects.create_user("owner")
        get_user_model().objects.create_superuser("staff", password="pw-staff-history")
        self.bots = [
            Bot.objects.create(
                owner=owner,
                game="tictactoe",
                name=f"bot-{i}",
                kind=EndpointKind.BUILTIN,
                target="random",
            )
            for i in range(12)
        ]
        self.busy = self.bots[0]
        self.ladder = Event.objects.create(
            name="ladder", game="tictactoe", format=EventFormat.LADDER, created_by=owner
        )
        Entry.objects.bulk_create(
            [Entry(event=self.ladder, bot=b, seed=i) for i, b in enumerate(self.bots[:8], 1)]
        )
        events.start_event(self.ladder)
        self.round = 1

    def grow(self, ladder: int, others: int) -> None:
        """Insert ``ladder`` ladder matches and ``others`` matches of the busy bot."""
        Event.objects.filter(pk=self.ladder.pk).update(status=EventStatus.PAUSED)
        pairs = []
        for _ in range(ladder // 4):
            self.round += 1
            ids = [b.pk for b in self.bots[:8]]
            self.rng.shuffle(ids)
            pairs += [(ids[k], ids[k + 1], self.ladder, self.round) for k in range(0, 8, 2)]
        for _ in range(others):
            other = self.rng.choice(self.bots[1:])
            pairs.append((self.busy.pk, other.pk, None, None))
        matches = []
        for _a, _b, event, rnd in pairs:
            self.clock += timedelta(seconds=60)
            matches.append(
                Match(
                    game="tictactoe",
                    status=MatchStatus.FINISHED,
                    reason="three_in_a_row",
                    event=event,
                    round=rnd,
                    pairing=f"{_a}-{_b}" if event else "",
                    started=self.clock,
                    finished=self.clock,
                )
            )
        Match.objects.bulk_create(matches)
        seats, steps = [], []
        for m, (a, b, _e, _r) in zip(matches, pairs, strict=True):
            seats += [
                Participant(match=m, seat=0, bot_id=a, score=1.0, result="win"),
                Participant(match=m, seat=1, bot_id=b, score=0.0, result="loss"),
            ]
            steps += [
                RatingChange(
                    match=m, bot_id=x, mu_before=25, sigma_before=8, mu_after=25, sigma_after=8
                )
                for x in (a, b)
            ]
        Participant.objects.bulk_create(seats)
        RatingChange.objects.bulk_create(steps)
        standings.rebuild(self.ladder)
        Event.objects.filter(pk=self.ladder.pk).update(status=EventStatus.RUNNING)
        standings.refresh_statistics()

    def middle(self) -> int:
        """A match id in the middle of the busy bot's history (a deep keyset page)."""
        ids = Participant.objects.filter(bot=self.busy).order_by("match_id")
        return ids.values_list("match_id", flat=True)[ids.count() // 2]

    def pages(self) -> list[tuple[str, bool]]:
        e, b = self.ladder.pk, self.busy.pk
        return [
            (f"/api/events/{e}/standings/", False),
            (f"/events/{e}/", False),
            (f"/events/{e}/screen.json", False),
            (f"/bots/{b}/", False),
            (f"/api/matches/?bot={b}", False),
            (f"/api/matches/?bot={b}&before={self.middle()}", False),
            (f"/api/matches/?event={e}&status=finished", False),
            (f"/api/matches/?event={e}", False),
            (f"/admin/competition/match/?q={self.busy.name}", True),
            ("/", False),
            ("/api/events/", False),
            ("/admin/competition/event/", True),
            ("/matches/", False),
            (f"/matches/?event={e}&status=finished", False),
            (f"/matches/?bot={b}", False),
            (f"/matches/?bot={b}&before={self.middle()}", False),
            ("/matches/?user=owner&game=tictactoe", False),
            ("/users/owner/", False),
            ("/events/", False),
        ]


def label(url: str) -> str:
    """The page a URL stands for (a deep keyset page's position differs between sizes)."""
    return url.split("&before=")[0] + ("&before=<middle>" if "&before=" in url else "")


@pytest.mark.skipif(connection.vendor != "sqlite", reason="EXPLAIN QUERY PLAN is SQLite's")
def test_it_serves_every_history_page_at_a_cost_that_does_not_grow_with_history():
    history = History()
    anon, staff = Client(), Client()
    staff.force_login(get_user_model().objects.get(username="staff"))
    history.grow(SMALL, 4 * SMALL)  # the busy bot past the bot page's window (500)
    small = {label(u): measure(staff if s else anon, u) for u, s in history.pages()}
    history.grow(LARGE - SMALL, 10 * (4 * SMALL) - 4 * SMALL)
    assert Match.objects.count() >= 5 * LARGE
    large = {label(u): measure(staff if s else anon, u) for u, s in history.pages()}
    report = {url: (small[url][:2], large[url][:2]) for url in small}
    for url in small:
        (q1, s1, _), (q2, s2, scans) = small[url], large[url]
        # It should run the same queries at ten times the history…
        assert q2 <= q1, (url, report)
        # …read about as many rows (SQLite's VM steps within 1.5x, history grew 10x)…
        assert s2 <= 1.5 * s1 + 2000, (url, report)
        # …and never scan the match, seat or rating tables.
        assert scans == [], (url, scans)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="EXPLAIN QUERY PLAN is SQLite's")
def test_it_finishes_a_ladder_match_at_a_cost_that_does_not_grow_with_the_ladder():
    from competition.matches.lifecycle import claim, finish
    from games.base import Outcome

    history = History()

    def one_finish() -> tuple[int, int]:
        queued = history.ladder.matches.filter(status=MatchStatus.QUEUED).order_by("id").first()
        _, token = claim(queued.pk)
        raw = connection.connection
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0

        with CaptureQueriesContext(connection) as captured:
            raw.set_progress_handler(count, 100)
            try:
                assert finish(queued.pk, token, Outcome((1.0, 0.0), "scripted"))
            finally:
                raw.set_progress_handler(None, 100)
        return len(captured.captured_queries), steps[0] * 100

    history.grow(SMALL, 0)
    events.advance_event(history.ladder)
    small = [one_finish() for _ in range(3)][-1]
    history.grow(LARGE - SMALL, 0)
    events.advance_event(history.ladder)
    large = [one_finish() for _ in range(3)][-1]
    # It should finish a ladder match with as many queries and about as much work at 10x.
    assert large[0] <= small[0] + 2, (small, large)
    assert large[1] <= 1.5 * small[1] + 2000, (small, large)
