"""The runner's batched database calls (``competition.matches.batch``): the calls of many
matches share one hop and one transaction, and each keeps its own lease fence."""

from __future__ import annotations

import asyncio
import io
import json
import time
import uuid

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from competition.live import broadcast
from competition.live.hub import hub
from competition.matches import batch, history, sql
from competition.matches import lifecycle as svc
from competition.matches.loop import SeatLog
from competition.matches.turns import End, TurnWriter, record_turns, store_end, stored_values
from competition.models import Match, MatchStatus, Participant, RatingChange, Turn, TurnArchive
from competition.models.bots import Bot, EndpointKind
from competition.ratings import services as ratings
from competition.runners.play import run_match
from games.base import Outcome
from tests.factories import SLUGS, play, record

pytestmark = pytest.mark.django_db(transaction=True)  # batches commit as the runner's do

#: the ``users`` fixture's (tests/conftest.py): no passwords, as the API tests' users
USERS_OPTIONS = {"password": False}


WIN = Outcome((1.0, 0.0), "three_in_a_row")


@pytest.fixture
def pair():
    # one owner per bot: a match between bots of one owner is never rated
    return [
        Bot.objects.create(
            owner=get_user_model().objects.create_user(name, password="pw-owner-123"),
            game="tictactoe",
            name=name,
            kind=EndpointKind.BUILTIN,
            target=name,
        )
        for name in ("perfect", "random")
    ]


def claimed(pair, count: int) -> list[tuple[int, uuid.UUID]]:
    """``count`` matches between the pair, each claimed: ``(id, lease token)``."""
    made = [
        svc.create_match("tictactoe", pair, seed=seed, dispatch_now=False) for seed in range(count)
    ]
    return [svc.claim(match.pk) for match in made]


def together(*calls):
    """Run ``(fn, *args)`` calls at once through one loop's batcher: ``(outcomes, batcher)``
    (each outcome a result or the exception it raised)."""

    async def main():
        out = await asyncio.gather(*(batch.call(*c) for c in calls), return_exceptions=True)
        return out, batch.batcher()

    return asyncio.run(main())


def numbers(match_id: int) -> list[int]:
    return list(
        Turn.objects.filter(match_id=match_id).order_by("number").values_list("number", flat=True)
    )


def test_it_stores_the_turns_of_two_matches_in_one_batch(pair):
    (a, token_a), (b, token_b) = claimed(pair, 2)
    out, batcher = together(
        (record_turns, a, token_a, [record(1), record(2)]),
        (record_turns, b, token_b, [record(1)]),
    )
    # It should store both matches' turns with one hop to the database thread.
    assert batcher.batches == 1 and batcher.largest == 2
    assert out[0][0] == 2 and out[1][0] == 1
    assert numbers(a) == [1, 2] and numbers(b) == [1]
    assert Match.objects.get(pk=a).turn_count == 2 and Match.objects.get(pk=b).turn_count == 1


def test_it_sends_a_waiting_writers_batch_with_the_turns_that_came_meanwhile(pair):
    ((a, token),) = claimed(pair, 1)

    async def main():
        busy = asyncio.ensure_future(batch.call(time.sleep, 0.3))  # the database thread busy
        await asyncio.sleep(0)
        writer = TurnWriter(a, token, linger=0)
        for n in range(1, 6):
            await writer.put(record(n))
            await asyncio.sleep(0.01)
        await writer.flush()
        await writer.close()
        await busy
        return batch.batcher()

    batcher = asyncio.run(main())
    # It should store the five turns with one call, in the batch after the busy one: the
    # writer's waiting batch took the turns that came while it waited.
    assert (batcher.batches, batcher.calls) == (2, 2)
    assert numbers(a) == [1, 2, 3, 4, 5] and Match.objects.get(pk=a).turn_count == 5


class Spectator:
    """A hub member of one match's group: what it received, as ``(kind, number)``."""

    def __init__(self):
        self.received: list[tuple[str, int | None]] = []
        self.arrived = asyncio.Event()

    async def deliver(self, message):
        self.received.append((message["kind"], message["number"]))
        self.arrived.set()

    @property
    def turns(self) -> list[int]:
        return [number for kind, number in self.received if kind == "turn"]


@pytest.mark.parametrize("watched", [False, True])
def test_it_keeps_an_unwatched_matchs_turns_for_one_commit_and_a_watched_ones_for_none(
    pair, watched
):
    ((a, token),) = claimed(pair, 1)
    spectator = Spectator()

    async def main():
        group = broadcast.match_group(a)
        if watched:
            await hub.join(group, spectator)
        writer = TurnWriter(a, token, linger=0.01, unwatched_linger=30)
        for n in range(1, 6):
            await writer.put(record(n))
            await asyncio.sleep(0.03)  # slower than the watched linger
        await writer.flush()
        await writer.close()
        await asyncio.sleep(0.05)  # let the hub deliver
        await hub.leave(group, spectator)
        return batch.batcher()

    batcher = asyncio.run(main())
    # It should store a watched match's turns one by one as they come (each shown at once),
    # and an unwatched one's together: they waited for the flush, not for 30 s.
    assert batcher.calls == (5 if watched else 1)
    assert numbers(a) == [1, 2, 3, 4, 5] and Match.objects.get(pk=a).turn_count == 5
    assert spectator.turns == ([1, 2, 3, 4, 5] if watched else [])


def test_it_stores_and_shows_the_waiting_turns_once_a_spectator_comes(pair):
    ((a, token),) = claimed(pair, 1)
    spectator = Spectator()

    async def main():
        writer = TurnWriter(a, token, unwatched_linger=30)
        for n in (1, 2):
            await writer.put(record(n))
        await asyncio.sleep(0.05)
        stored_before = await sync_to_async(numbers)(a)
        await hub.join(broadcast.match_group(a), spectator)
        await writer.put(record(3))
        async with asyncio.timeout(10):  # far below the 30 s an unwatched turn may wait
            while len(spectator.turns) < 3:
                spectator.arrived.clear()
                await spectator.arrived.wait()
        stored_after = await sync_to_async(numbers)(a)
        await writer.close()
        await hub.leave(broadcast.match_group(a), spectator)
        return stored_before, stored_after

    before, after = asyncio.run(main())
    # It should hold the unwatched turns back, then store and broadcast them with the
    # next turn once someone watches, in order, each once.
    assert before == [] and after == [1, 2, 3] and spectator.turns == [1, 2, 3]


def test_it_stores_a_resumed_matchs_last_turns_with_its_end_in_one_call(pair):
    ((a, token),) = claimed(pair, 1)
    record_turns(a, token, [record(1)])  # stored before (a resumed match's turns are rows)
    spectator = Spectator()

    async def main():
        await hub.join(broadcast.match_group(a), spectator)
        writer = TurnWriter(a, token, linger=30, unwatched_linger=30)
        for n in (2, 3, 4):
            await writer.put(record(n))
        await writer.finish(End(WIN, turn_faults=[["ok", None]] * 4))
        await writer.close()
        await asyncio.sleep(0.05)  # let the hub deliver
        await hub.leave(broadcast.match_group(a), spectator)
        return batch.batcher()

    batcher = asyncio.run(main())
    # It should store the turns the writer still held and the end in one call (one hop,
    # one transaction), then show the turns, in order, before the end.
    assert (batcher.batches, batcher.calls) == (1, 1)
    match = Match.objects.get(pk=a)
    assert (match.status, match.turn_count) == (MatchStatus.FINISHED, 4)
    assert [t.number for t in history.turns(a)] == [1, 2, 3, 4]
    assert spectator.received == [*(("turn", n) for n in (2, 3, 4)), ("end", broadcast.END_NUMBER)]
    assert RatingChange.objects.filter(match_id=a).count() == 2


def test_it_neither_stores_nor_shows_the_end_of_a_writer_whose_lease_is_gone(pair, settings):
    ((a, old_token),) = claimed(pair, 1)
    # the runner is lost: its lease expires, the reaper requeues the match, another claims it
    settings.ARENA_LEASE_SECONDS = -1
    svc.renew(a, old_token)
    settings.ARENA_LEASE_SECONDS = 30
    assert svc.reap() == [a]
    _a, new_token = svc.claim(a, worker="second")
    spectator = Spectator()

    async def main():
        await hub.join(broadcast.match_group(a), spectator)
        writer = TurnWriter(a, old_token, linger=30, unwatched_linger=30)
        for n in (1, 2):
            await writer.put(record(n))
        with pytest.raises(svc.LeaseLost, match="finished elsewhere"):
            await writer.finish(End(WIN, turn_faults=[["ok", None]] * 2))
        await writer.close()
        await asyncio.sleep(0.05)  # let the hub deliver
        await hub.leave(broadcast.match_group(a), spectator)

    asyncio.run(main())
    # It should refuse the old runner's last turns and its end alike: nothing stored,
    # nothing shown, the match still the new runner's.
    match = Match.objects.get(pk=a)
    assert (match.status, match.lease_token, match.turn_count) == (
        MatchStatus.RUNNING,
        new_token,
        0,
    )
    assert numbers(a) == [] and spectator.received == []
    assert not RatingChange.objects.filter(match_id=a).exists()


def test_it_plays_every_queued_match_once_with_runmatches_claims_batched(pair):
    made = [svc.create_match("tictactoe", pair, seed=s, dispatch_now=False).pk for s in range(5)]
    out = io.StringIO()
    call_command("runmatches", "--once", "--concurrency", "2", "--poll", "0.05", stdout=out)
    # It should claim the free slots together and play each queued match once, to its end.
    assert out.getvalue().strip() == "played 5 matches"
    rows = Match.objects.filter(pk__in=made).values_list("status", "attempts")
    assert len(rows) == 5 and all(
        status in (MatchStatus.FINISHED, MatchStatus.FORFEITED) and attempts == 1
        for status, attempts in rows
    )
    assert RatingChange.objects.filter(match_id__in=made).count() == 10


def test_it_rejects_a_fenced_out_writer_without_losing_the_other_matches_turns(pair, settings):
    (a, token_a), (b, old_token) = claimed(pair, 2)
    # match b's runner is lost: its lease expires, the reaper requeues it, another claims it
    settings.ARENA_LEASE_SECONDS = -1
    svc.renew(b, old_token)
    settings.ARENA_LEASE_SECONDS = 30
    assert svc.reap() == [b]
    _b, new_token = svc.claim(b, worker="second")
    out, batcher = together(
        (record_turns, a, token_a, [record(1)]),
        (record_turns, b, old_token, [record(1), record(2)]),
        (record_turns, b, new_token, [record(1)]),
    )
    assert batcher.batches == 1 and batcher.largest == 3
    # It should refuse the old runner's turns alone: the others of its batch are stored.
    assert isinstance(out[1], svc.LeaseLost)
    assert out[0] == (1, out[0][1]) and out[2] == (1, out[2][1])
    assert numbers(a) == [1] and numbers(b) == [1]
    assert Match.objects.get(pk=b).turn_count == 1


def test_it_runs_every_call_alone_when_one_spoils_the_batch(pair):
    (a, token_a), (b, token_b) = claimed(pair, 2)
    record_turns(b, token_b, [record(1)])
    out, batcher = together(
        (record_turns, a, token_a, [record(1)]),
        (record_turns, a, token_a, [record(2)]),
        (record_turns, b, token_b, [record(1)]),  # a turn already stored: the insert fails
    )
    # It should roll the batch back and run each call again alone: the duplicate is
    # refused, the other match's turns are stored once each.
    assert batcher.batches == 1
    assert isinstance(out[2], svc.LeaseLost) and "already stored" in str(out[2])
    assert out[0][0] == 1 and out[1][0] == 1
    assert numbers(a) == [1, 2] and numbers(b) == [1]
    assert Match.objects.get(pk=a).turn_count == 2 and Match.objects.get(pk=b).turn_count == 1


def test_it_finishes_a_batch_of_matches_when_one_of_them_fails(pair):
    (a, token_a), (b, token_b), (c, token_c), (d, token_d) = claimed(pair, 4)
    for match_id, token in ((a, token_a), (b, token_b), (c, token_c), (d, token_d)):
        record_turns(match_id, token, [record(1)])
    received: dict[int, list[str]] = {a: [], b: [], c: [], d: []}

    class Member:
        def __init__(self, match_id):
            self.match_id = match_id

        async def deliver(self, message):
            received[self.match_id].append(message["kind"])

    async def main():
        members = {m: Member(m) for m in received}
        for m, member in members.items():
            await hub.join(broadcast.match_group(m), member)
        out = await asyncio.gather(
            batch.call(svc.finish, a, token_a, WIN),
            batch.call(svc.finish, b, uuid.uuid4(), WIN),  # not its lease: refused
            batch.call(svc.finish, c, token_c, Outcome((0.5,), "broken")),  # one score short
            batch.call(svc.finish, d, token_d, Outcome((0.0, 1.0), "three_in_a_row")),
            return_exceptions=True,
        )
        await asyncio.sleep(0)  # the hub hands messages over on its own task
        for m, member in members.items():
            await hub.leave(broadcast.match_group(m), member)
        return out, batch.batcher()

    out, batcher = asyncio.run(main())
    assert batcher.batches == 1 and batcher.largest == 4
    # It should finish, rate and announce the matches that could end, exactly once each,
    # and leave the refused and the failing one running, unrated and unannounced.
    assert out[0] is True and out[1] is False and isinstance(out[2], IndexError)
    assert out[3] is True
    status = dict(Match.objects.values_list("pk", "status"))
    assert status == {
        a: MatchStatus.FINISHED,
        b: MatchStatus.RUNNING,
        c: MatchStatus.RUNNING,
        d: MatchStatus.FINISHED,
    }
    assert sorted(RatingChange.objects.values_list("match_id", flat=True)) == [a, a, d, d]
    assert ratings.verify("tictactoe").ok
    assert received[a].count("end") == 1 and received[d].count("end") == 1
    assert "end" not in received[b] and "end" not in received[c]
    # the two that ended were compacted together, after the commit
    assert history.is_compacted(a) and history.is_compacted(d)
    assert not TurnArchive.objects.filter(pk__in=(b, c)).exists()


def commits_on_the_database_thread():
    """Start counting the commits of the database thread's connection (SQLite's trace of the
    statements it runs): the list the ``COMMIT`` statements go to."""
    seen: list[str] = []

    def trace():
        connection = connections["default"]
        connection.ensure_connection()
        connection.connection.set_trace_callback(seen.append)

    def untrace():
        connections["default"].connection.set_trace_callback(None)

    return seen, trace, untrace


def test_it_ends_the_matches_that_end_within_a_few_milliseconds_with_one_commit(pair, settings):
    settings.ARENA_COMPACT_ON_END = False  # compaction commits apart, after the ends
    ended = claimed(pair, 4)
    for match_id, token in ended:
        record_turns(match_id, token, [record(1)])
    lost = ended[2][0]
    seen, trace, untrace = commits_on_the_database_thread()

    async def main():
        batcher = batch.batcher()
        batcher.LINGER = 0.5  # a loaded test machine may pause the loop a while
        await batch.call(trace)
        await asyncio.gather(batch.call(len, ()), batch.call(len, ()))  # matches side by side
        del seen[:]
        first = batcher.batches
        finishes = []
        for match_id, token in ended:  # a millisecond apart: each in a later turn of the loop
            token = uuid.uuid4() if match_id == lost else token  # its lease is gone
            finishes.append(asyncio.ensure_future(batch.call(svc.finish, match_id, token, WIN)))
            await asyncio.sleep(0.001)
        out = await asyncio.gather(*finishes)
        commits, batches = seen.count("COMMIT"), batcher.batches - first
        await batch.call(untrace)
        return out, commits, batches

    out, commits, batches = asyncio.run(main())
    # It should store the ends that came within the linger in one transaction: one hop, one
    # commit; the finish whose lease was gone is refused alone, the others finished and rated.
    assert (batches, commits) == (1, 1)
    assert out == [match_id != lost for match_id, _token in ended]
    status = dict(Match.objects.values_list("pk", "status"))
    assert [status[m] for m, _token in ended] == [
        MatchStatus.FINISHED,
        MatchStatus.FINISHED,
        MatchStatus.RUNNING,
        MatchStatus.FINISHED,
    ]
    rated = {m for m, _token in ended if m != lost}
    assert set(RatingChange.objects.values_list("match_id", flat=True)) == rated
    assert ratings.verify("tictactoe").ok


def test_it_never_keeps_a_lone_matchs_call_waiting(pair):
    ((a, token),) = claimed(pair, 1)

    async def main():
        batcher = batch.batcher()
        batcher.LINGER = 30  # would show: a lone match's calls never linger
        started = time.perf_counter()
        for n in (1, 2, 3):
            await batch.call(record_turns, a, token, [record(n)])
        return time.perf_counter() - started, batcher

    took, batcher = asyncio.run(main())
    # It should send each call of a match that runs alone at once, one batch each.
    assert took < 10 and (batcher.batches, batcher.calls) == (3, 3)
    assert numbers(a) == [1, 2, 3]


def test_it_broadcasts_an_end_once_another_connection_can_read_it(pair):
    ended = claimed(pair, 3)
    for match_id, token in ended:
        record_turns(match_id, token, [record(1)])
    read: dict[int, str] = {}

    def status(match_id: int) -> str:  # a thread of its own: a connection of its own
        try:
            return Match.objects.values_list("status", flat=True).get(pk=match_id)
        finally:
            connections.close_all()

    class Member:
        def __init__(self, match_id):
            self.match_id = match_id

        async def deliver(self, message):
            if message["kind"] == "end":
                read[self.match_id] = await sync_to_async(status, thread_sensitive=False)(
                    self.match_id
                )

    async def main():
        members = {m: Member(m) for m, _token in ended}
        for m, member in members.items():
            await hub.join(broadcast.match_group(m), member)
        await asyncio.gather(*(batch.call(svc.finish, m, t, WIN) for m, t in ended))
        for _ in range(100):  # the hub hands messages over on its own task
            if len(read) == len(ended):
                break
            await asyncio.sleep(0.02)
        for m, member in members.items():
            await hub.leave(broadcast.match_group(m), member)

    asyncio.run(main())
    # It should announce each end only once it is durable: another connection reads it.
    assert read == {m: MatchStatus.FINISHED for m, _token in ended}


def test_it_tells_a_challenges_owners_its_result_from_the_seats_the_finish_holds(pair):
    from django.test.utils import CaptureQueriesContext

    from competition.models import Notification
    from competition.runners.play import _load

    match = svc.create_match(
        "tictactoe", pair, seed=1, created_by=pair[0].owner, dispatch_now=False
    )
    match_id, token = svc.claim(match.pk)
    loaded = _load(match_id)
    with CaptureQueriesContext(connections["default"]) as queries:
        assert svc.finish(match_id, token, WIN, loaded=loaded, turn_faults=[["ok", None]])
    seats_read = [
        q["sql"]
        for q in queries
        if q["sql"].startswith("SELECT")
        and (Participant._meta.db_table in q["sql"].split(" WHERE ")[0])
    ]
    # It should tell each owner how its bot did, from the seats the runner loaded: the
    # finish reads no seat again.
    texts = dict(Notification.objects.values_list("user__username", "text"))
    assert texts == {
        "perfect": "perfect won its challenge perfect vs random.",
        "random": "random lost its challenge perfect vs random.",
    }
    assert seats_read == []


def test_it_compacts_matches_together_into_the_documents_compaction_makes_alone(pair, settings):
    settings.ARENA_COMPACT_ON_END = False
    ids = []
    for seed in range(3):
        match = svc.create_match("tictactoe", pair, seed=seed, dispatch_now=False)
        assert asyncio.run(run_match(match.pk)) == match.pk
        ids.append(match.pk)
    expected = {m: history.pack(list(history._rows(m).values_list(*history.FIELDS))) for m in ids}
    done = history.compact_many(ids)
    # It should store, per match, the very document ``compact`` stores, and drop the rows.
    assert sorted(c.match_id for c in done) == ids
    for m in ids:
        archive = TurnArchive.objects.get(pk=m)
        assert (bytes(archive.data), archive.raw_bytes) == expected[m]
        assert archive.turns == Match.objects.get(pk=m).turn_count and not numbers(m)
    assert history.compact_many(ids) == []  # already compacted: nothing to do


async def watched(match_ids: list[int]):
    """Play the matches at once, each watched by a spectator: ``(spectators, batcher)``."""
    spectators = {m: Spectator() for m in match_ids}
    for m, member in spectators.items():
        await hub.join(broadcast.match_group(m), member)
    played = await asyncio.gather(*(run_match(m) for m in match_ids))
    await asyncio.sleep(0.05)  # the hub hands messages over on its own task
    for m, member in spectators.items():
        await hub.leave(broadcast.match_group(m), member)
    assert played == match_ids
    return spectators, batch.batcher()


def test_it_plays_concurrent_matches_through_shared_batches(pair):
    made = [svc.create_match("tictactoe", pair, seed=s, dispatch_now=False).pk for s in range(6)]
    spectators, batcher = asyncio.run(watched(made))
    # It should play every match to its end with fewer hops than calls, every turn stored
    # once and compacted, shown once and in order before the end, every match rated once.
    assert batcher.calls > batcher.batches
    for m in made:
        match = Match.objects.get(pk=m)
        assert match.status in (MatchStatus.FINISHED, MatchStatus.FORFEITED)
        numbers_stored = [t.number for t in history.turns(m)]
        assert numbers_stored == list(range(1, match.turn_count + 1))
        assert history.is_compacted(m)
        shown = spectators[m].received
        turns = [("turn", n) for n in numbers_stored]
        assert shown == [("started", None), *turns, ("end", broadcast.END_NUMBER)]
    assert RatingChange.objects.count() == 2 * len(made) and ratings.verify("tictactoe").ok


def test_it_stops_at_the_byte_limit_reached_by_the_last_turns(pair, settings):
    (reference,) = [svc.create_match("tictactoe", pair, seed=4, dispatch_now=False).pk]
    asyncio.run(run_match(reference))
    full = Match.objects.get(pk=reference)
    # the same match less 100 bytes (its turns, several hundred each, vary by a few bytes:
    # latencies and clocks): the last turn goes over
    settings.ARENA_MATCH_MAX_BYTES = full.stored_bytes - 100
    again = svc.create_match("tictactoe", pair, seed=4, dispatch_now=False).pk
    spectators, _batcher = asyncio.run(watched([again]))
    match = Match.objects.get(pk=again)
    # It should store and show the turns under the limit only, then end the match as
    # ``limit``, unrated (its last turns were handed over to be stored with its end).
    assert (match.status, match.reason) == (MatchStatus.LIMIT, "size_limit")
    assert 0 < match.turn_count < full.turn_count
    assert match.stored_bytes <= settings.ARENA_MATCH_MAX_BYTES
    stored = [t.number for t in history.turns(again)]
    assert stored == list(range(1, match.turn_count + 1))
    turns = [("turn", n) for n in stored]
    assert spectators[again].received == [("started", None), *turns, ("end", broadcast.END_NUMBER)]
    assert not RatingChange.objects.filter(match_id=again).exists()


def test_it_runs_the_reaper_and_the_due_rounds_periodically_not_after_every_match(
    pair, monkeypatch
):
    from competition.management.commands import runmatches

    made = [svc.create_match("tictactoe", pair, seed=s, dispatch_now=False).pk for s in range(12)]
    looked = {"reap": 0, "start_due_rounds": 0}
    for name in looked:
        real = getattr(runmatches, name)

        def counted(*args, real=real, name=name, **kwargs):
            looked[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(runmatches, name, counted)
    out = io.StringIO()
    started = time.monotonic()
    call_command("runmatches", "--once", "--concurrency", "2", "--poll", "0.05", stdout=out)
    took = time.monotonic() - started
    # It should play every queued match, looking for dead workers' matches and due rounds
    # when it starts, when nothing plays and about once a second (the embedded runner's
    # pace), not once per finished match (12 matches, 2 at a time: 6 or more looks before).
    assert out.getvalue().strip() == "played 12 matches"
    assert Match.objects.filter(pk__in=made, status=MatchStatus.RUNNING).count() == 0
    assert 1 <= looked["reap"] <= 2 + took // 5
    assert 1 <= looked["start_due_rounds"] <= 2 + took


def test_it_ends_a_match_stored_with_its_end_in_one_update_of_its_row(pair):
    ((match_id, token),) = claimed(pair, 1)
    records = [record(1), record(2, (None, "1-1"))]
    end = End(
        WIN, archive=[stored_values(r) for r in records], turn_faults=[r.faults for r in records]
    )
    with CaptureQueriesContext(connection) as queries:
        assert store_end(match_id, token, records, end, stored_bytes=0)
    writes = [q["sql"].replace('"', "") for q in queries if not q["sql"].startswith("SELECT")]
    match = Match.objects.get(pk=match_id)
    # It should end the match, count its last turns and store them in its archive, with one
    # UPDATE of the match row (not a fence then an end) and no DELETE of turn rows it never
    # stored.
    assert (match.status, match.turn_count, match.lease_token) == (MatchStatus.FINISHED, 2, None)
    assert match.stored_bytes == sum(
        len(json.dumps(v)) for r in records for v in stored_values(r)[1:]
    )
    assert [t.number for t in history.turns(match_id)] == [1, 2] and not numbers(match_id)
    assert sum(w.startswith(f"UPDATE {Match._meta.db_table} ") for w in writes) == 1
    assert not [w for w in writes if w.startswith("DELETE")]


def test_it_counts_a_turns_bytes_alike_whether_it_stores_its_row_or_not(pair):
    (a, token_a), (b, token_b) = claimed(pair, 2)
    records = [record(1, ("0-0", None)), record(2, ('é ✓ "q"', {"x": [1, [2.5, None]]}))]
    records[1].logs = [SeatLog(sent='{"a": 1}', received="ü", stderr=["l1", "l2"]), None]
    stored, total = record_turns(a, token_a, records, stored_bytes=7)
    counted, same = record_turns(b, token_b, records, stored_bytes=7, rows=False)
    # It should count the bytes of the row's JSON values, whether it stores the rows (the
    # writer) or only counts them (a finish whose last turns go to the archive).
    texts = [r.actions for r in Turn.objects.filter(match_id=a).order_by("number")]
    assert stored == counted == 2 and total == same > 7 and not numbers(b)
    assert total - 7 == sum(
        len(json.dumps(v)) for r in records for v in stored_values(r)[1:]
    ) and texts == [r.actions for r in records]
    counts = [Match.objects.values_list("stored_bytes", "turn_count").get(pk=m) for m in (a, b)]
    assert counts[0] == counts[1] == (total - 7, 2)


@pytest.mark.parametrize("slug", SLUGS)
def test_it_archives_a_match_at_its_finish_as_compaction_would(users, monkeypatch, slug):
    real = history.archive_in_place
    seen = {}

    def archive_in_place(match_id, rows, stored=None, **game):
        # the rows stored so far, read back in the finish's transaction
        seen[match_id] = (list(history._rows(match_id).values_list(*history.FIELDS)), rows)
        return real(match_id, rows, stored, **game)

    monkeypatch.setattr(history, "archive_in_place", archive_in_place)
    match = play(users, slug)
    # It should compact a match it played from its first turn in its finish, from the turns
    # it holds (the last ones never stored as rows), into the document compaction makes
    # of the same turns' rows: the values it holds are those its rows hold.
    stored, held = seen[match.pk]
    assert [r[0] for r in held] == list(range(1, match.turn_count + 1))
    assert history.encode(held[: len(stored)]) == history.encode(stored)
    archive = TurnArchive.objects.get(pk=match.pk)
    document = history.pack(stored + held[len(stored) :], match.game)
    assert (bytes(archive.data), archive.raw_bytes) == document
    assert archive.turns == match.turn_count and not numbers(match.pk)


def values(obj) -> dict | None:
    return (
        None
        if obj is None
        else {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}
    )


def test_it_loads_a_match_in_one_statement_as_the_orm_does(pair):
    platform = Bot.objects.create(
        owner=None, game="tictactoe", name="house", kind=EndpointKind.BUILTIN, target="random"
    )
    match = svc.create_match("tictactoe", [pair[0], platform], seed=9, dispatch_now=False)
    svc.claim(match.pk)
    orm = list(
        Participant.objects.select_related("match", "bot", "bot__owner")
        .filter(match=match)
        .order_by("seat")
    )
    loaded, seats = sql.load(connections["default"], match.pk)
    # It should give the match, each seat, its bot and the bot's owner (none for a platform
    # seat) with the values the ORM reads (dates, uuids, JSON, booleans converted).
    assert values(loaded) == values(orm[0].match)
    assert [values(p) for p in seats] == [values(p) for p in orm]
    assert [values(p.bot) for p in seats] == [values(p.bot) for p in orm]
    assert [values(p.bot.owner) for p in seats] == [values(p.bot.owner) for p in orm]
    assert seats[1].bot.owner is None and all(p.match is loaded for p in seats)
    assert loaded.lease_token is not None and loaded.options == orm[0].match.options


def test_it_finishes_with_what_the_claim_loaded_where_it_ran_and_reads_it_when_not_kept(pair):
    from competition.runners.play import claim_and_load

    ends = {}
    for kept in (True, False):
        match = svc.create_match("tictactoe", pair, seed=3, dispatch_now=False)
        match_id, token, loaded = claim_and_load(match.pk)
        if not kept:  # its claim ran in another process (a writer since restarted)
            assert svc.claimed_loaded(match_id, token) is not None
        records = [record(1), record(2, (None, "1-1"))]
        end = End(
            WIN,
            archive=[stored_values(r) for r in records],
            turn_faults=[r.faults for r in records],
            loaded_at_claim=loaded["kept"],
        )
        with CaptureQueriesContext(connection) as queries:
            assert store_end(match_id, token, records, end, stored_bytes=0)
        reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT")]
        ends[kept] = (reads, list(Participant.objects.filter(match_id=match_id).order_by("seat")))
    # It should finish the match with the row and seats its claim loaded, where the claim ran,
    # reading neither back; and read them when they are not kept there (or were taken).
    seats = Participant._meta.db_table
    assert not [r for r in ends[True][0] if seats in r]
    assert [r for r in ends[False][0] if seats in r]
    assert svc.claimed_loaded(match_id, token) is None
    # It should store the same results either way.
    results = [[p.result for p in ends[kept][1]] for kept in (True, False)]
    assert results == [["win", "loss"]] * 2
