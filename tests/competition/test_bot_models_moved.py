"""Bot and BotVersion moved from the ``bots`` app to competition's models (issue 48) with their
tables as they were: the two migrations of the move change the state only (no SQL), nothing
is left to migrate, and a database made before the move keeps its rows."""

from __future__ import annotations

import hashlib
import io
import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from competition.models import Match, Participant
from competition.models.bots import Bot, BotVersion

#: the two migrations of the move
MOVE = (("competition", "0025_bots_move_in"), ("bots", "0007_bots_moved_to_competition"))
#: the last migrations before it (main before issue 48)
BEFORE = [("competition", "0024_participant_cause_memory"), ("bots", "0006_bot_name_printable")]
#: a statement that would change the database
WRITES = re.compile(r"\b(CREATE|ALTER|DROP|INSERT|UPDATE|DELETE|RENAME)\b", re.IGNORECASE)


def sqlmigrate(app: str, name: str) -> str:
    out = io.StringIO()
    call_command("sqlmigrate", app, name, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)  # SQLite's schema editor runs outside a transaction
def test_it_moves_the_models_without_a_statement_of_sql():
    for app, name in MOVE:
        sql = sqlmigrate(app, name)
        statements = [
            line
            for line in sql.splitlines()
            if line.strip() and not line.startswith("--") and line not in ("BEGIN;", "COMMIT;")
        ]
        # It should print no statement but the transaction around nothing.
        assert statements == [], (app, name, sql)
        assert not WRITES.search(sql), (app, name, sql)


@pytest.mark.django_db
def test_it_leaves_no_model_change_to_migrate():
    out = io.StringIO()
    # It should find the models and the migrations' state alike (exit 0, nothing written).
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def test_it_keeps_the_tables_and_their_constraint_names():
    # It should name the tables the bots app made, and the constraints as they were.
    assert (Bot._meta.app_label, Bot._meta.db_table) == ("competition", "bots_bot")
    assert (BotVersion._meta.app_label, BotVersion._meta.db_table) == (
        "competition",
        "bots_botversion",
    )
    assert {c.name for c in Bot._meta.constraints} == {
        "bot_unique_name_per_owner",
        "bot_unique_platform_seat",
    }
    assert {c.name for c in BotVersion._meta.constraints} == {"botversion_unique_number"}


@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_rows_of_a_database_made_before_the_move():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        apps = executor.loader.project_state(BEFORE).apps
        # the rows as main stored them, through the models of the bots app
        alice = apps.get_model("auth", "User").objects.create(username="alice")
        OldBot = apps.get_model("bots", "Bot")
        OldVersion = apps.get_model("bots", "BotVersion")
        url = OldBot.objects.create(
            owner=alice, game="tictactoe", name="url", kind="http", target="https://x.org/"
        )
        code = OldBot.objects.create(
            owner=alice, game="tictactoe", name="code", kind="code", target="bot.py"
        )
        data = b"print('hi')\n"
        v1 = OldVersion.objects.create(
            bot=code,
            number=1,
            filename="bot.py",
            language="python",
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            data=data,
        )
        match = apps.get_model("competition", "Match").objects.create(game="tictactoe", seed=1)
        seat = apps.get_model("competition", "Participant")
        seat.objects.create(match=match, seat=0, bot=url)
        seat.objects.create(match=match, seat=1, bot=code, version=v1)
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    # It should find every row through competition's models, related as they were.
    assert sorted(Bot.objects.values_list("name", "kind", "owner__username")) == [
        ("code", "code", "alice"),
        ("url", "http", "alice"),
    ]
    version = BotVersion.objects.get()
    assert (version.bot.name, version.number, bytes(version.data)) == ("code", 1, data)
    seats = Participant.objects.filter(match=Match.objects.get()).order_by("seat")
    assert [(p.bot.name, p.version_id) for p in seats] == [("url", None), ("code", version.pk)]
