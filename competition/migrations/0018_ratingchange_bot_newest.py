"""A bot's newest rating steps (its page's chart) on PostgreSQL without filtering the whole
table: its ``bot_id`` index holds no ``id`` order there. SQLite's ``bot_id`` index carries the
rowid, so its chart is already an index walk, and an extra index there misleads its planner on
the admin's newest-first list (a sort of every step)."""

from django.db import migrations

INDEX = "ratingchange_bot_newest"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON competition_ratingchange (bot_id, id DESC)"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("competition", "0017_ladder_enter_test_called_bots")]

    operations = [migrations.RunPython(create, drop)]
