"""A served embedded default (``manage.py serve``: one runner process, its writer process) that
loses its writer or its runner to a SIGKILL: mid-match, with a batch in flight, and in the
finish (before it commits, and after it committed but before the runner heard of it). Every
turn stored before the kill is still there, unchanged, in a match finished once (its meetings
written once), and the site goes on playing (``competition/matches/writer.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path

import aiohttp
import pytest

from competition.matches import history
from competition.matches import writer as writer_module
from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, running

pytestmark = pytest.mark.xdist_group("writer_crash")

MOVES = 40
OPTIONS = {"rows": 32, "cols": 32, "maxGameIterations": MOVES, "timerMs": None}


def rows(db: Path, sql: str, params=()) -> list:
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as conn:
        return conn.execute(sql, params).fetchall()


def processes(data: Path, kind: str) -> list[int]:
    """The pids of this site's runner or writer processes (its data directory in their
    environment; a writer by its name, forked from its runner or spawned)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if f"ARENA_DATA_DIR={data}".encode() not in environ:
            continue
        writer = name == writer_module.PROCESS_NAME
        if (kind == "writer" and writer) or (
            kind == "runner" and not writer and b"runmatches" in argv
        ):
            found.append(int(entry.name))
    return found


def one(data: Path, kind: str, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while not (found := processes(data, kind)):
        assert time.monotonic() < deadline, f"no {kind} process"
        time.sleep(0.05)
    (pid,) = found
    return pid


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """One served site for the module (its tests in one worker: ``xdist_group``); the crash
    tests' file (``ARENA_WRITER_CRASH``) says where its writer dies next."""
    data = tmp_path_factory.mktemp("writer-crash")
    env = project_env(
        ARENA_DATA_DIR=str(data),
        ARENA_LEASE_SECONDS="2",
        ARENA_RUNNER_PROCESSES="1",
        ARENA_WRITER_CRASH=str(data / "crash"),
        DJANGO_SETTINGS_MODULE="competition.settings",
    )
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running(server, port, env=env, log=data / "serve.log"):
        yield env, data, data / "arena.sqlite3", port


def enqueue(env: dict, pace_ms: int = 100) -> int:
    done = manage(
        "enqueue", "gconway", "builtin:grower", "builtin:random", "--seed", "7",
        "--options", json.dumps(OPTIONS), "--pace-ms", str(pace_ms), env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (match_id,) = json.loads(done.stdout)
    return match_id


def wait_turns(db: Path, match_id: int, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while rows(db, "select turn_count from competition_match where id = ?", (match_id,))[0][0] < (
        at_least
    ):
        assert time.monotonic() < deadline, "the runner never played"
        time.sleep(0.02)


def stored(db: Path, match_id: int) -> dict[int, tuple]:
    """The match's turn rows as they are now: number -> (actions, frame)."""
    return {
        n: (json.loads(actions), json.loads(frame))
        for n, actions, frame in rows(
            db,
            "select number, actions, frame from competition_turn where match_id = ?",
            (match_id,),
        )
    }


def ended(db: Path, match_id: int, before: dict[int, tuple]) -> int:
    """Wait for the match's end and archive; check it kept every turn of ``before`` and was
    finished once: its attempts."""
    deadline = time.monotonic() + 90
    while not (
        archived := rows(
            db, "select codec, data from competition_turnarchive where match_id = ?", (match_id,)
        )
    ):
        assert time.monotonic() < deadline, "the match never ended"
        time.sleep(0.1)
    status, attempts, turn_count = rows(
        db, "select status, attempts, turn_count from competition_match where id = ?", (match_id,)
    )[0]
    assert status == "finished", status
    [(codec, data)] = archived
    at = [history.FIELDS.index(name) for name in ("number", "actions", "frame")]
    turns = {v[at[0]]: (v[at[1]], v[at[2]]) for v in history.unpack(codec, data)}
    # It should keep every turn, numbered from 1 without a gap, those stored before unchanged.
    assert sorted(turns) == list(range(1, MOVES + 1)) and turn_count == MOVES
    assert {n: turns[n] for n in before} == before
    # It should finish the match once: one meeting each way between its two bots.
    meetings = rows(db, "select count(*) from competition_meeting where match_id = ?", (match_id,))
    assert meetings == [(2,)]
    return attempts


class Spectator(threading.Thread):
    """A websocket client of the match's live page, in a thread: every message until the end."""

    def __init__(self, port: int, match_id: int) -> None:
        super().__init__(daemon=True)
        self.url = f"ws://127.0.0.1:{port}/ws/matches/{match_id}/"
        self.origin = f"http://127.0.0.1:{port}"
        self.messages: list[dict] = []
        self.start()

    def run(self) -> None:
        asyncio.run(self.watch())

    async def watch(self) -> None:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(self.url, headers={"Origin": self.origin}) as ws:
                async with asyncio.timeout(90):
                    async for frame in ws:
                        self.messages.append(json.loads(frame.data))
                        if self.messages[-1]["type"] == "end":
                            return

    def turns(self) -> list[int]:
        numbers = []
        for m in self.messages:
            if m["type"] == "snapshot":
                numbers += [t["number"] for t in m["turns"]]
            elif m["type"] == "turn":
                numbers.append(m["turn"]["number"])
        return numbers


def goes_on(env: dict, db: Path) -> None:
    """The site plays a next match to its end (its runner started a new writer)."""
    match_id = enqueue(env, pace_ms=0)
    assert ended(db, match_id, {}) == 1


def test_it_loses_nothing_when_the_writer_is_killed_mid_match(site):
    env, data, db, _port = site
    match_id = enqueue(env)
    wait_turns(db, match_id, 8)
    first = one(data, "writer")
    os.kill(first, signal.SIGKILL)
    before = stored(db, match_id)
    assert ended(db, match_id, before) in (1, 2)  # (resumed if a batch of it was in flight)
    assert one(data, "writer") != first
    goes_on(env, db)


def test_it_loses_nothing_when_the_writer_is_killed_with_a_batch_in_flight(site):
    env, data, db, _port = site
    match_id = enqueue(env)
    wait_turns(db, match_id, 8)
    first = one(data, "writer")
    os.kill(first, signal.SIGSTOP)  # the runner's batches wait for it (its turns do)
    time.sleep(1.5)
    before = stored(db, match_id)
    os.kill(first, signal.SIGKILL)
    # the match's turns were in flight, or the scheduler's call before them: in the one case
    # the match is left to its lease and resumed, in the other it goes on with a new writer
    assert ended(db, match_id, before) in (1, 2)
    goes_on(env, db)


@pytest.mark.parametrize("when", ["before", "after"])
def test_it_finishes_a_match_once_when_the_writer_is_killed_in_its_finish(site, when):
    env, data, db, port = site
    crash = data / "crash"
    crash.write_text(f"store_end {when}\n")  # (the only match playing is this one)
    match_id = enqueue(env)
    spectator = Spectator(port, match_id)
    deadline = time.monotonic() + 60
    while crash.exists():  # (the writer removes it as it dies)
        assert time.monotonic() < deadline, "the finish never reached the writer"
        time.sleep(0.02)
    before = stored(db, match_id)
    # before: nothing of the finish was written (resumed, then finished); after: it was
    # (finished by its first attempt, though the runner never heard it)
    assert ended(db, match_id, before) == (2 if when == "before" else 1)
    # A spectator watching from the start should see every turn and the end, once: after, the
    # runner announces them again (the broadcasts of the finish died with its writer).
    spectator.join(60)
    assert not spectator.is_alive(), spectator.messages[-3:]
    first = spectator.messages[0]
    assert first["type"] == "snapshot" and first["match"]["status"] in ("queued", "running")
    assert sorted(set(spectator.turns())) == list(range(1, MOVES + 1))
    assert [m["type"] for m in spectator.messages].count("end") == 1
    goes_on(env, db)


def test_it_loses_nothing_when_the_runner_is_killed_mid_match(site):
    env, data, db, _port = site
    match_id = enqueue(env)
    wait_turns(db, match_id, 8)
    runner, writer = one(data, "runner"), one(data, "writer")
    os.kill(runner, signal.SIGKILL)
    before = stored(db, match_id)
    # its writer follows it (the end of its input), and serve starts a new runner
    deadline = time.monotonic() + 30
    while writer in processes(data, "writer"):
        assert time.monotonic() < deadline, "the killed runner's writer is still running"
        time.sleep(0.05)
    assert ended(db, match_id, before) == 2
    goes_on(env, db)
