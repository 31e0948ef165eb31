"""``manage.py backup`` and ``manage.py restore`` on real databases: SQLite copied while a fresh
server (``make run``'s ``manage.py serve``) plays its standing ladders, and PostgreSQL (its own
cluster) while a runner plays queued matches; each restored into a fresh data directory or an
empty database, with the same matches, turns, versions and ratings (counts and checksums)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import tarfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, running
from tests.servers import postgres_server, query

pytestmark = pytest.mark.slow

#: what must come back: each table's rows in full, by their checksum
COMPARED = {
    "competition_match": "id, status, game, seed, finished, turn_count",
    "competition_turn": "id, match_id, number, actions, frame",
    "competition_turnarchive": "match_id, data",
    "bots_botversion": "id, bot_id, number, data, artefact",
    "competition_rating": "id, bot_id, mu, sigma, games",
    "competition_ratingchange": "id, match_id, bot_id, mu_after",
}


def sqlite_tables(path) -> dict[str, tuple[int, str]]:
    """Each compared table's row count and a checksum of all its rows (SQLite)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out = {}
        for table, columns in COMPARED.items():
            rows = db.execute(f"select {columns} from {table} order by 1").fetchall()
            out[table] = (len(rows), hashlib.sha256(repr(rows).encode()).hexdigest())
        return out
    finally:
        db.close()


def pg_tables(url: str) -> dict[str, tuple[int, str]]:
    out = {}
    for table, columns in COMPARED.items():
        rows = query(url, f"select {columns} from {table} order by 1")
        rows = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]
        out[table] = (len(rows), hashlib.sha256(repr(rows).encode()).hexdigest())
    return out


#: two users' uploaded bots (their code lives only in the database), with a version each
UPLOAD = """
from django.contrib.auth import get_user_model
from competition.bots.services import add_version
from competition.models.bots import Bot, read_code

source = open(%r, "rb").read()
for name in ("coder-a", "coder-b"):
    user = get_user_model().objects.create_user(name)
    bot = Bot.objects.create(
        owner=user, game="tictactoe", name="uploaded", kind="code", target="starter_bot.py"
    )
    add_version(bot, read_code("starter_bot.py", source))
"""
STARTER = REPO / "games" / "tictactoe" / "starter_bot.py"
#: the tables only added to while the site plays (turn rows are compacted into archives)
GROWING = ("competition_match", "competition_rating", "competition_ratingchange")


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


@contextmanager
def database(kind: str, tmp_path):
    """``(environment of the live site, environment of a fresh one, read the tables)``."""
    if kind == "sqlite":
        live, fresh = tmp_path / "live", tmp_path / "fresh"
        yield (
            project_env(ARENA_DATA_DIR=str(live)),
            project_env(ARENA_DATA_DIR=str(fresh)),
            lambda env: sqlite_tables(Path(env["ARENA_DATA_DIR"]) / "arena.sqlite3"),
        )
        return
    with postgres_server() as pg:
        query(pg.url, "select 1")
        import psycopg

        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("create database fresh")
        yield (
            project_env(DATABASE_URL=pg.url, ARENA_DATA_DIR=str(tmp_path / "live")),
            project_env(
                DATABASE_URL=pg.url.rsplit("/", 1)[0] + "/fresh",
                ARENA_DATA_DIR=str(tmp_path / "fresh"),
            ),
            lambda env: pg_tables(env["DATABASE_URL"]),
        )


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_it_backs_up_while_the_ladder_plays_and_restores_into_a_fresh_site(kind, tmp_path):
    with database(kind, tmp_path) as (env, fresh_env, tables):
        env = {**env, "ARENA_LADDER_INTERVAL": "1"}
        port = free_port()
        argv = [sys.executable, str(REPO / "manage.py"), "serve", "--port", str(port)]
        with running(argv, port, env=env):
            ok(manage("shell", "-c", UPLOAD % str(STARTER), env=env))
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and tables(env)["competition_rating"][0] < 2:
                time.sleep(1)
            before = tables(env)
            assert before["competition_rating"][0] >= 2, before  # the ladder rated matches
            # It should write one file while the site serves and its ladders play.
            said = ok(manage("backup", str(tmp_path / "site.tar.gz"), env=env))
            time.sleep(2)
            after = tables(env)
        assert said.startswith(f"backup written to {tmp_path / 'site.tar.gz'}: ")
        assert after["competition_match"] != before["competition_match"]  # it was playing
        with tarfile.open(tmp_path / "site.tar.gz") as tar:
            member = "database.sqlite3" if kind == "sqlite" else "database.pgdump"
            assert sorted(tar.getnames()) == [member, "manifest.json"]
            manifest = json.load(tar.extractfile("manifest.json"))
        # It should restore into a fresh data directory or database: every compared row the
        # same as the backup's (counted and checksummed here, over whole tables).
        said = ok(manage("restore", str(tmp_path / "site.tar.gz"), env=fresh_env))
        assert "match the backup's counts and checksums" in said
        restored = tables(fresh_env)
        for table, (count, _) in restored.items():
            assert manifest["tables"][table]["count"] == count, table
        for table in GROWING:  # one consistent moment, between the two reads around it
            assert before[table][0] <= restored[table][0] <= after[table][0], table
        assert restored["bots_botversion"][0] == 2 and restored["competition_match"][0] > 0
        # It should refuse to restore over a database that is not empty, unless told to.
        refused = manage("restore", str(tmp_path / "site.tar.gz"), env=fresh_env)
        assert refused.returncode == 1 and "the database is not empty" in refused.stderr
        ok(manage("restore", "--force", str(tmp_path / "site.tar.gz"), env=fresh_env))
        assert tables(fresh_env) == restored
        # The restored site is at the newest migration, as the backed-up one was.
        assert "No migrations to apply" in ok(manage("migrate", env=fresh_env))


def test_it_refuses_a_file_that_is_not_a_backup(tmp_path):
    (tmp_path / "notes.tar.gz").write_bytes(b"not a tar file")
    env = project_env(ARENA_DATA_DIR=str(tmp_path / "fresh"))
    refused = manage("restore", str(tmp_path / "notes.tar.gz"), env=env)
    assert refused.returncode == 1
    assert (
        refused.stderr.strip()
        == f"CommandError: {tmp_path / 'notes.tar.gz'} is not an Arena backup file"
    )
    missing = manage("restore", str(tmp_path / "gone.tar.gz"), env=env)
    assert missing.stderr.strip() == f"CommandError: {tmp_path / 'gone.tar.gz'}: no such file"
