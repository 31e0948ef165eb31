"""Scale-out on real parts: PostgreSQL, Redis and Celery worker processes, all started here.

Two workers play 40 queued matches: every match finishes exactly once, with a gap-free,
duplicate-free turn sequence. Then a worker is SIGKILLed mid-match: once its lease
expires another worker resumes the match from its stored turns and finishes it.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from competition.matches import history
from games import get_game
from tests.competition.conftest import LEASE_SECONDS
from tests.processes import manage
from tests.servers import query, start_worker, wait_done

pytestmark = pytest.mark.slow


def enqueue(env, *args) -> list[int]:
    done = manage("enqueue", *args, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


REPLAYED = ("number", "seats", "actions", "frame", "forfeited")


def stored_turns(url: str, match_id: int) -> list[tuple]:
    """``REPLAYED`` of a match's turns: its rows, or its archive once it was compacted (the
    archive is looked up first: a compaction deletes the rows as it stores it)."""
    archived = query(
        url, "select codec, data from competition_turnarchive where match_id = %s", (match_id,)
    )
    if not archived:
        turns = query(
            url,
            f"select {', '.join(REPLAYED)} from competition_turn where match_id = %s order by number",
            (match_id,),
        )
        if turns:
            return turns
        archived = query(
            url, "select codec, data from competition_turnarchive where match_id = %s", (match_id,)
        )
    at = [history.FIELDS.index(name) for name in REPLAYED]
    return (
        [tuple(values[i] for i in at) for values in history.unpack(*archived[0])]
        if archived
        else []
    )


def assert_consistent(url: str, match_id: int) -> list[tuple]:
    """Turns 1..n without gap or duplicate, and replaying them gives the stored frames."""
    game_slug, seed, options, status = query(
        url, "select game, seed, options, status from competition_match where id = %s", (match_id,)
    )[0]
    turns = stored_turns(url, match_id)
    assert [t[0] for t in turns] == list(range(1, len(turns) + 1)), (
        f"match {match_id}: turn numbers {[t[0] for t in turns]}"
    )
    game = get_game(game_slug)
    state = game.initial_state(seed=seed, options=options)
    for number, seats, actions, frame, forfeited in turns:
        if forfeited:
            continue
        state = game.apply(state, {s: actions[s] for s in seats})
        assert game.frame(state) == frame, f"match {match_id}: turn {number} does not replay"
    assert status in ("finished", "forfeited")
    return turns


def test_it_plays_40_matches_on_two_celery_workers_exactly_once(stack):
    env, url = stack["env"], stack["db"]
    ids = enqueue(
        env, "tictactoe", "builtin:perfect", "builtin:random", "--count", "30", "--seed", "1"
    )
    ids += enqueue(
        env, "tictactoe", "builtin:random", "builtin:perfect", "--count", "10", "--seed", "100"
    )
    assert len(ids) == 40
    wait_done(url, ids, timeout=120)
    rows = query(
        url,
        "select id, status, attempts, turn_count from competition_match where id = any(%s)",
        (ids,),
    )
    # It should finish every match exactly once, each claimed once.
    assert all(status in ("finished", "forfeited") for _, status, _, _ in rows), rows
    assert all(attempts == 1 for _, _, attempts, _ in rows), rows
    for match_id, _status, _attempts, turn_count in rows:
        turns = assert_consistent(url, match_id)
        assert len(turns) == turn_count
    # It should rate each match exactly once (two rating steps per match of distinct bots).
    steps = query(
        url,
        "select match_id, count(*) from competition_ratingchange where match_id = any(%s) group by match_id",
        (ids,),
    )
    assert len(steps) == 40 and all(n == 2 for _, n in steps)
    # It should spread the work over both workers.
    workers = query(
        url, "select count(distinct worker) from competition_match where id = any(%s)", (ids,)
    )[0][0]
    assert workers == 2


def test_it_resumes_a_match_whose_worker_was_killed(stack):
    env, url = stack["env"], stack["db"]
    (match_id,) = enqueue(
        env, "tictactoe", "builtin:random", "builtin:random", "--seed", "7", "--pace-ms", "700"
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        row = query(
            url,
            "select status, worker, turn_count from competition_match where id = %s",
            (match_id,),
        )[0]
        if row[0] == "running" and row[2] >= 2:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"match {match_id} never got going: {row}")
    pid = int(row[1].rsplit(":", 1)[1])
    victim = next(p for p in stack["workers"] if p.pid == pid)
    # It should survive a SIGKILL of the worker playing it.
    os.kill(pid, signal.SIGKILL)
    victim.wait(10)
    turns_at_kill = row[2]
    wait_done(url, [match_id], timeout=90)
    _status, attempts, worker, turn_count = query(
        url,
        "select status, attempts, worker, turn_count from competition_match where id = %s",
        (match_id,),
    )[0]
    assert attempts == 2 and worker != row[1]
    turns = assert_consistent(url, match_id)
    assert len(turns) == turn_count >= turns_at_kill


EVENT_SCRIPT = """
from django.contrib.auth import get_user_model
from competition.models.bots import Bot
from competition.models import Entry, Event, EventFormat
from competition.events.services import start_event
user, _ = get_user_model().objects.get_or_create(username="organiser", defaults={"is_staff": True})
event = Event.objects.create(name="restart", game="tictactoe", format=EventFormat.ROUND_ROBIN, pace_ms=250)
for i, name in enumerate(["perfect", "random", "perfect", "random"]):
    bot = Bot.objects.create(owner=user, game="tictactoe", name=f"{name}-{i}", kind="builtin", target=name)
    Entry.objects.create(event=event, bot=bot, seed=i + 1)
start_event(event)
print(event.pk, *event.matches.values_list("pk", flat=True))
"""


def test_it_completes_an_event_across_a_database_restart(stack):
    env, url, pg = stack["env"], stack["db"], stack["pg"]
    if any(p.poll() is not None for p in stack["workers"]):  # the kill test may have run first
        # the fixture owns the list (and stops what is in it): add to it, never replace it
        stack["workers"].append(start_worker(env, "w3"))
    done = manage("shell", "-c", EVENT_SCRIPT, env=env)
    assert done.returncode == 0, done.stderr
    # (the matches the event started with, read as it started: its first round may be over,
    # and the next made, by the time this process reads the database)
    event_id, *ids = map(int, done.stdout.strip().splitlines()[-1].split())
    assert len(ids) == 2  # round 1 of 3 (rounds on a schedule: the next once it is over)
    # Wait until turns are being stored, then take the database away for a while.
    deadline = time.monotonic() + 60
    while (
        query(
            url,
            "select count(*) from competition_turn t join competition_match m on m.id = t.match_id"
            " where m.event_id = %s",
            (event_id,),
        )[0][0]
        < 3
    ):
        assert time.monotonic() < deadline, "the event never started"
        time.sleep(0.1)
    before = set(
        query(
            url,
            "select match_id, number from competition_turn t join competition_match m"
            " on m.id = t.match_id where m.event_id = %s",
            (event_id,),
        )
    )
    pg.stop("fast")
    time.sleep(LEASE_SECONDS + 1)
    pg.start()
    wait_done(url, ids, timeout=120)
    deadline = time.monotonic() + 120
    while query(url, "select status from competition_event where id = %s", (event_id,))[0][0] != (
        "finished"
    ):
        assert time.monotonic() < deadline, "the event never finished"
        time.sleep(0.2)
    ids = [
        r[0]
        for r in query(url, "select id from competition_match where event_id = %s", (event_id,))
    ]
    # It should finish the event and every match of its 3 rounds, keeping every turn stored
    # before the outage.
    assert len(ids) == 6
    wait_done(url, ids, timeout=120)
    # (an ended match's turns were compacted: read them wherever they are)
    after = {(match_id, t[0]) for match_id in ids for t in stored_turns(url, match_id)}
    assert before <= after
    for match_id in ids:
        assert_consistent(url, match_id)
