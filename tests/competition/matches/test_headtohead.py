"""Two bots' head to head (issue 50, item 6): the meetings and pair totals written by the real
finish (and a hidden match's reveal), read by the page and the API; and their cost at a large
generated history: the same queries and about the same SQLite work at ten times the matches,
the list one range of its index from the keyset position (never OFFSET), the totals a few
rows however many matches the pair played."""

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
from competition.matches import headtohead
from competition.matches.lifecycle import create_match
from competition.models import (
    BotVersion,
    Match,
    MatchStatus,
    Meeting,
    PairRecord,
    Participant,
)
from competition.models.bots import Bot, EndpointKind
from tests import factories
from tests.helpers import measure

pytestmark = pytest.mark.django_db

SMALL, LARGE = 900, 9000


def test_it_counts_each_finished_match_by_seat_and_version_from_the_real_finish():
    a = factories.bot(factories.user("h2h-a"), "alpha")
    b = factories.bot(factories.user("h2h-b"), "beta")
    # a played 3 matches as seat 0 (won 2, drew 1) and one as seat 1 (lost)
    for bots, score in (([a, b], 1.0), ([a, b], 1.0), ([a, b], 0.5), ([b, a], 1.0)):
        factories.decide(create_match("tictactoe", bots, dispatch_now=False), score)
    # It should keep the pair's totals from either side, by seat.
    found = headtohead.totals(a.pk, b.pk)
    assert (found.overall.wins, found.overall.draws, found.overall.losses) == (2, 1, 1)
    assert {seat: t.games for seat, t in found.by_seat.items()} == {0: 3, 1: 1}
    theirs = headtohead.totals(b.pk, a.pk).overall
    assert (theirs.wins, theirs.draws, theirs.losses) == (1, 1, 2)
    # ... and list the matches newest first with both seats and the result.
    rows, following = headtohead.meetings(a.pk, b.pk, None, 50)
    assert (rows[0].seat, rows[0].opponent_seat, rows[0].result) == (1, 0, "loss")
    assert len(rows) == 4 and following is None and all(r.rated for r in rows)
    # ... and the same from the seats (the migration's and the bench's rebuild).
    fields = ("match", "bot", "opponent", "seat", "opponent_seat", "version", "opponent_version")
    fields += ("result", "rated", "finished")
    before = sorted(PairRecord.objects.values_list("bot", "seat", "wins", "draws", "losses"))
    met = sorted(Meeting.objects.values_list(*fields))
    headtohead.rebuild()
    after = sorted(PairRecord.objects.values_list("bot", "seat", "wins", "draws", "losses"))
    assert before == after and Meeting.objects.count() == 8
    # (each meeting as the finish wrote it, its time included)
    assert met == sorted(Meeting.objects.values_list(*fields))
    assert all(m[-1] is not None and m[-1].tzinfo is not None for m in met)


def test_it_counts_by_version_pair_and_pages_by_keyset():
    a = factories.bot(factories.user("v-a"), "alpha")
    b = factories.bot(factories.user("v-b"), "beta")
    versions = [
        BotVersion.objects.create(bot=a, number=n, filename="bot.py", data=b"x", size=1)
        for n in (1, 2)
    ]
    for version in versions:
        for _ in range(3):
            match = create_match("tictactoe", [a, b], dispatch_now=False)
            Participant.objects.filter(match=match, bot=a).update(version=version)
            factories.decide(match, 1.0 if version.number == 2 else 0.0)
    # It should split the totals by the versions that played.
    by = headtohead.totals(a.pk, b.pk).by_versions
    assert {k: (t.wins, t.losses) for k, t in by.items()} == {(1, 0): (0, 3), (2, 0): (3, 0)}
    # It should page newest first, each page below the last one's match, the last with no next.
    seen, before = [], None
    while True:
        rows, before = headtohead.meetings(a.pk, b.pk, before, 4)
        seen += [r.match_id for r in rows]
        if before is None:
            break
    assert seen == sorted(Match.objects.values_list("pk", flat=True), reverse=True)
    # It should answer the API with the same rows and totals, and a next link.
    body = Client().get(f"/api/bots/{a.pk}/head-to-head/{b.pk}/").json()
    assert body["totals"]["overall"] == {"games": 6, "wins": 3, "draws": 0, "losses": 3}
    assert {(v["version"], v["wins"]) for v in body["totals"]["by_versions"]} == {
        ("v2", 3),
        ("v1", 0),
    }
    assert body["results"][0]["version"] == "v2" and body["next"] is None
    # ... and refuse what is not a bot, in words.
    missing = Client().get(f"/api/bots/{a.pk}/head-to-head/999999/")
    assert missing.status_code == 404 and "No bot 999999" in missing.json()["detail"]
    assert Client().get(f"/api/bots/{a.pk}/head-to-head/{b.pk}/?before=x").status_code == 400


def test_it_counts_a_hidden_result_only_at_its_reveal():
    owner = factories.make_owner()
    a, b = factories.entrants(owner, 2, ("random",))
    event = factories.event("Hidden", bots=[a, b], created_by=owner, hide_results=True)
    events.start_event(event)
    match = Match.objects.get(event=event)
    factories.decide(match, 1.0)
    # It should tell nothing of a result the event hides...
    assert not PairRecord.objects.exists() and not Meeting.objects.exists()
    assert Client().get(f"/bots/{a.pk}/vs/{b.pk}/").context["totals"]["overall"]["games"] == 0
    # ... and count it once revealed.
    assert events.reveal(match.pk)
    assert headtohead.totals(a.pk, b.pk).overall.games == 1


class PairHistory:
    """Bulk history behind the services' back: two bots that meet often, each with many
    matches against others; the pair tables rebuilt from the seats (as the bench does)."""

    def __init__(self):
        self.rng = random.Random(50)
        self.clock = timezone.now() - timedelta(days=60)
        owner = get_user_model().objects.create_user("pair-owner")
        rival = get_user_model().objects.create_user("pair-rival")
        self.bots = [
            Bot.objects.create(
                owner=owner if i else rival,
                game="tictactoe",
                name=f"pair-{i}",
                kind=EndpointKind.BUILTIN,
                target="random",
            )
            for i in range(10)
        ]
        self.a, self.b = self.bots[0], self.bots[1]

    def grow(self, count: int) -> None:
        """``count`` matches: a third between the pair, the rest each of them against others."""
        pairs = []
        for i in range(count):
            other = self.rng.choice(self.bots[2:])
            pairs.append(
                [(self.a, self.b), (self.a, other), (other, self.b)][i % 3][
                    :: self.rng.choice((1, -1))
                ]
            )
        matches = []
        for _ in pairs:
            self.clock += timedelta(seconds=30)
            matches.append(
                Match(
                    game="tictactoe",
                    status=MatchStatus.FINISHED,
                    reason="three_in_a_row",
                    started=self.clock,
                    finished=self.clock,
                    rated=True,
                )
            )
        Match.objects.bulk_create(matches)
        seats = []
        for m, (x, y) in zip(matches, pairs, strict=True):
            first = self.rng.choice(("win", "draw", "loss"))
            second = {"win": "loss", "loss": "win", "draw": "draw"}[first]
            seats += [
                Participant(match=m, seat=0, bot=x, score=1.0, result=first),
                Participant(match=m, seat=1, bot=y, score=0.0, result=second),
            ]
        Participant.objects.bulk_create(seats)
        headtohead.rebuild()

    def middle(self) -> int:
        ids = Meeting.objects.filter(bot=self.a, opponent=self.b).order_by("match_id")
        return ids.values_list("match_id", flat=True)[ids.count() // 2]

    def pages(self) -> list[str]:
        a, b = self.a.pk, self.b.pk
        return [
            f"/bots/{a}/vs/{b}/",
            f"/bots/{a}/vs/{b}/?before={self.middle()}",
            f"/api/bots/{a}/head-to-head/{b}/",
            f"/api/bots/{a}/head-to-head/{b}/?before={self.middle()}",
            f"/bots/{a}/",
        ]


def label(url: str) -> str:
    return url.split("?before=")[0] + ("?before=<middle>" if "?before=" in url else "")


def plans(client: Client, url: str) -> list[str]:
    """SQLite's plan of each query the page runs on the pair tables."""
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    found = []
    with connection.cursor() as cursor:
        for q in captured.captured_queries:
            if "competition_meeting" in q["sql"] or "competition_pairrecord" in q["sql"]:
                cursor.execute("EXPLAIN QUERY PLAN " + q["sql"])
                found += [row[-1] for row in cursor.fetchall()]
    return found


@pytest.mark.skipif(connection.vendor != "sqlite", reason="EXPLAIN QUERY PLAN is SQLite's")
def test_it_serves_the_head_to_head_at_a_cost_that_does_not_grow_with_history():
    history = PairHistory()
    client = Client()
    history.grow(SMALL)
    small = {label(u): measure(client, u) for u in history.pages()}
    history.grow(LARGE - SMALL)
    assert Meeting.objects.filter(bot=history.a, opponent=history.b).count() >= LARGE // 3
    large = {label(u): measure(client, u) for u in history.pages()}
    report = {url: (small[url][:2], large[url][:2]) for url in small}
    print(report)
    for url in small:
        (q1, s1, _), (q2, s2, scans) = small[url], large[url]
        # It should run the same queries at ten times the history...
        assert q2 == q1, (url, report)
        # ... read about as many rows (SQLite's VM steps within 1.5x, history grew 10x)...
        assert s2 <= 1.5 * s1 + 2000, (url, report)
        # ... and never scan the match, seat or rating tables.
        assert scans == [], (url, scans)
    # It should read the pair tables on their indexes, the list in index order (no sort, no
    # OFFSET): a range of Meeting(bot, opponent, match, ...) from the keyset position.
    for url in history.pages()[:4]:
        for detail in plans(client, url):
            assert detail.startswith("SEARCH"), (url, detail)
            assert "TEMP B-TREE" not in detail, (url, detail)
    deep = history.pages()[1]
    with CaptureQueriesContext(connection) as captured:
        client.get(deep)
    listing = [q["sql"] for q in captured.captured_queries if "competition_meeting" in q["sql"]]
    assert listing and all("OFFSET" not in sql for sql in listing), listing
