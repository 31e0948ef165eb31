"""The embedded default survives a SIGKILL of its only process: the next process resumes
the interrupted match from its stored turns once the lease expires."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from competition.matches import history
from games import get_game
from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, wait_for_port


def rows(db, sql, params=()):
    with sqlite3.connect(db, timeout=20) as conn:
        return conn.execute(sql, params).fetchall()


def serve(env, port):
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, proc)
    return proc


def test_it_resumes_a_match_after_the_server_is_killed(tmp_path):
    env = project_env(ARENA_DATA_DIR=str(tmp_path), ARENA_LEASE_SECONDS="2")
    db = tmp_path / "arena.sqlite3"
    port = free_port()
    first = serve(env, port)
    try:
        done = manage(
            "enqueue",
            "tictactoe",
            "builtin:random",
            "builtin:perfect",
            "--seed",
            "4",
            "--pace-ms",
            "600",
            env=env,
        )
        assert done.returncode == 0, done.stderr
        (match_id,) = json.loads(done.stdout)
        deadline = time.monotonic() + 30
        while (
            rows(db, "select turn_count from competition_match where id = ?", (match_id,))[0][0] < 2
        ):
            assert time.monotonic() < deadline, "the embedded runner never played"
            time.sleep(0.1)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    status, turns_at_kill = rows(
        db, "select status, turn_count from competition_match where id = ?", (match_id,)
    )[0]
    assert status == "running"
    second = serve(env, free_port())
    try:
        deadline = time.monotonic() + 60
        while (
            rows(db, "select status from competition_match where id = ?", (match_id,))[0][0]
            == "running"
            or rows(db, "select status from competition_match where id = ?", (match_id,))[0][0]
            == "queued"
        ):
            assert time.monotonic() < deadline, "the match was not resumed"
            time.sleep(0.2)
        # the match ended: its turns are compacted into one document once the end committed
        # (read it as it is stored)
        deadline = time.monotonic() + 30
        while not (
            archived := rows(
                db,
                "select codec, data from competition_turnarchive where match_id = ?",
                (match_id,),
            )
        ):
            assert time.monotonic() < deadline, "the ended match was never compacted"
            time.sleep(0.05)
    finally:
        second.terminate()
        second.wait(10)
    status, attempts, seed, options = rows(
        db,
        "select status, attempts, seed, options from competition_match where id = ?",
        (match_id,),
    )[0]
    assert status in ("finished", "forfeited") and attempts == 2
    [(codec, data)] = archived
    assert not rows(db, "select 1 from competition_turn where match_id = ?", (match_id,))
    at = [history.FIELDS.index(name) for name in ("number", "seats", "actions", "frame")]
    turns = [[values[i] for i in at] for values in history.unpack(codec, data)]
    assert [t[0] for t in turns] == list(range(1, len(turns) + 1)) and len(turns) >= turns_at_kill
    game = get_game("tictactoe")
    state = game.initial_state(seed=seed, options=json.loads(options))
    for _number, seats, actions, frame in turns:
        state = game.apply(state, {s: actions[s] for s in seats})
        assert game.frame(state) == frame
    assert game.outcome(state) is not None
    assert os.path.exists(db)
