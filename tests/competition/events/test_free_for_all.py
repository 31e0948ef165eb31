"""Free-for-all events of an N-seat game: an organiser creates one in the Django admin (13
tron snakes: users' built-ins, the platform's built-in seats and HTTP bots served by
``manage.py serve_bot``), starts it, and the embedded runner plays it to the end; the
standings and the openskill ratings follow the ranks. The two-seat formats refuse tron
unless its tables seat two."""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from bots import egress
from competition.events import pairing, standings
from competition.events import services as events
from competition.models import (
    Event,
    EventFormat,
    EventStatus,
    MatchStatus,
    Participant,
    Rating,
    RatingChange,
)
from competition.models.bots import Bot, EndpointKind
from competition.plumbing.dbthreads import run_db
from competition.runners.embedded import Scheduler
from tests.conftest import LOOPBACK, REPO, free_port
from tests.processes import project_env, running

pytestmark = pytest.mark.django_db(transaction=True)
OPTIONS = '{"width": 24, "height": 24, "move_timeout_ms": 3000}'
FORM = {
    "game": "tron",
    "options": OPTIONS,
    "series_length": 1,
    "pace_ms": 0,
    "entries-TOTAL_FORMS": 0,
    "entries-INITIAL_FORMS": 0,
    "entries-MIN_NUM_FORMS": 0,
    "entries-MAX_NUM_FORMS": 1000,
}


@pytest.fixture
def organiser() -> Client:
    user = get_user_model().objects.create_user(
        "organiser", password="pw-organiser-1", is_staff=True, is_superuser=True
    )
    client = Client()
    client.force_login(user)
    return client


def run_embedded(event: Event, timeout: float = 240.0) -> None:
    """The embedded runner (its scheduler, as ``serve`` starts it) until ``event`` ends."""

    def status() -> str:
        return Event.objects.values_list("status", flat=True).get(pk=event.pk)

    async def main() -> None:
        scheduler = Scheduler(concurrency=4)
        scheduler.start()
        deadline = time.monotonic() + timeout
        try:
            while await run_db(status) == EventStatus.RUNNING:
                assert time.monotonic() < deadline, "the event did not finish in time"
                await asyncio.sleep(0.2)
        finally:
            scheduler.main.cancel()
            for task in list(scheduler.tasks):
                task.cancel()
            await asyncio.gather(scheduler.main, *scheduler.tasks, return_exceptions=True)
            await egress.close_session()

    asyncio.run(main())


def test_it_runs_a_free_for_all_of_thirteen_snakes_from_the_admin(organiser, allow_loopback):
    # one owner per bot: a table seating two bots of one owner would be unrated
    owner = lambda i: get_user_model().objects.create_user(f"owner-{i}")  # noqa: E731
    for i in range(9):
        Bot.objects.create(
            owner=owner(i),
            game="tron",
            name=f"snake-{i}",
            kind=EndpointKind.BUILTIN,
            target="survivor" if i % 3 == 0 else "random",
        )
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    for i in range(2):  # two HTTP bots on one served built-in
        Bot.objects.create(
            owner=owner(9 + i), game="tron", name=f"served-{i}", kind=EndpointKind.HTTP, target=url
        )
    response = organiser.post(
        "/admin/competition/event/add/",
        {**FORM, "name": "snake cup", "format": EventFormat.FREE_FOR_ALL, "table_size": 5,
         "rounds": 3},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:3000]
    event = Event.objects.get(name="snake cup")
    assert event.table_size == 5
    # The event page's "Add bots": every user's bot plus the platform's two built-in seats.
    response = organiser.post(
        f"/admin/competition/event/{event.pk}/add-bots/", {"builtin": ["random", "survivor"]}
    )
    assert response.status_code == 302
    assert event.entries.count() == 13
    assert event.entries.filter(bot__owner__isnull=True).count() == 2
    serve = [sys.executable, str(REPO / "manage.py"), "serve_bot", "tron:random"]
    env = project_env(ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)
    with running([*serve, "--port", str(port)], port, env=env):
        response = organiser.post(f"/admin/competition/event/{event.pk}/start/")
        assert response.status_code == 302
        event.refresh_from_db()
        assert event.status == EventStatus.RUNNING
        run_embedded(event)
    event.refresh_from_db()
    # It should run to completion: 3 rounds of tables of 5, 4 and 4, every match a result.
    assert event.status == EventStatus.FINISHED
    matches = list(event.matches.prefetch_related("participants").order_by("round", "id"))
    assert len(matches) == 9
    assert all(m.status in MatchStatus.with_result() for m in matches), [
        (m.pk, m.status, m.reason) for m in matches
    ]
    for rnd in (1, 2, 3):
        tables = [m for m in matches if m.round == rnd]
        assert sorted(len(m.participants.all()) for m in tables) == [4, 4, 5]
        seated = [p.bot_id for m in tables for p in m.participants.all()]
        assert len(set(seated)) == 13
    served = set(Bot.objects.filter(kind=EndpointKind.HTTP).values_list("pk", flat=True))
    http_seats = Participant.objects.filter(match__event=event, bot_id__in=served)
    # It should have asked the served bots over HTTP without a fault (no forfeit, no charge).
    assert http_seats.count() == 6
    assert all(p.score is not None and p.cause == "" and p.faults == 0 for p in http_seats)
    # It should give points by rank: per table the share of the other seats outranked.
    expected = Counter()
    for m in matches:
        scores = {p.bot_id: p.score for p in m.participants.all()}
        for bot_id, got in pairing.rank_points(scores).items():
            expected[bot_id] += got
    table = events.standings(event)
    assert len(table) == 13
    for row in table:
        assert row["points"] == pytest.approx(expected[row["bot"]])
        assert row["series"] == 3 and row["games"] == 3
    assert [r["points"] for r in table] == sorted((r["points"] for r in table), reverse=True)
    assert standings.differences(event) == []
    # It should rate every table at once with openskill (one change per seat), by rank.
    for m in matches:
        changes = {c.bot_id: c for c in RatingChange.objects.filter(match=m)}
        seats = list(m.participants.all())
        assert len(changes) == len(seats)
        best = max(p.score for p in seats)
        worst = min(p.score for p in seats)
        if best == worst:
            continue
        gain = {p.bot_id: changes[p.bot_id].mu_after - changes[p.bot_id].mu_before for p in seats}
        top = [p.bot_id for p in seats if p.score == best]
        bottom = [p.bot_id for p in seats if p.score == worst]
        assert min(gain[b] for b in top) > max(gain[b] for b in bottom)
    assert Rating.objects.filter(game="tron").count() == 13
    champion = events.champion(event)
    assert champion["bot"] == table[0]["bot"]


def test_it_refuses_tron_in_a_two_seat_format_unless_its_tables_seat_two(organiser):
    # It should refuse a round robin of tron with no table size (tron seats up to 13).
    response = organiser.post(
        "/admin/competition/event/add/",
        {**FORM, "name": "rr", "format": EventFormat.ROUND_ROBIN, "rounds": ""},
    )
    assert response.status_code == 200
    assert "table_size 2" in response.content.decode()
    assert not Event.objects.filter(name="rr").exists()
    # It should accept it with tables of two.
    response = organiser.post(
        "/admin/competition/event/add/",
        {**FORM, "name": "rr", "format": EventFormat.ROUND_ROBIN, "rounds": "", "table_size": 2},
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    # It should refuse a free-for-all table outside the game's seat range.
    for size in (1, 14):
        response = organiser.post(
            "/admin/competition/event/add/",
            {**FORM, "name": f"ffa{size}", "format": EventFormat.FREE_FOR_ALL, "rounds": "",
             "table_size": size},
        )  # fmt: skip
        assert response.status_code == 200
        assert "A table of this game seats 2 to 13." in response.content.decode()
    # It should refuse it at the start as well (an event made outside the admin).
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    event = Event.objects.create(name="direct", game="tron", format=EventFormat.SWISS)
    for i in range(2):
        bot = Bot.objects.create(
            owner=owner, game="tron", name=f"s{i}", kind=EndpointKind.BUILTIN, target="random"
        )
        event.entries.create(bot=bot, seed=i + 1)
    with pytest.raises(Exception, match="table_size 2"):
        events.start_event(event)
