"""The free-for-all event format: ``Event.table_size``, a table's series points per bot
(``EventSeries.points``), and longer series keys (a table names every bot it seats)."""

from django.db import migrations, models


def fill_stored_standings(apps, schema_editor):
    """Existing events' stored standings are rebuilt by 0008 (``fill_stored_standings``): the
    rebuild uses the live models, whose tables gain columns there, so it cannot run before
    them (as 0005 moved it here)."""


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0005_stored_standings_and_history_indexes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="event",
            name="format",
            field=models.CharField(
                choices=[
                    ("round_robin", "Round robin"),
                    ("double_round_robin", "Double round robin"),
                    ("swiss", "Swiss"),
                    ("single_elimination", "Single elimination"),
                    ("ladder", "Continuous ladder"),
                    ("free_for_all", "Free-for-all"),
                ],
                default="round_robin",
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="event",
            name="table_size",
            field=models.PositiveSmallIntegerField(
                blank=True,
                null=True,
                help_text="Free-for-all: seats per table (default: the most the game takes).",
            ),
        ),
        migrations.AddField(
            model_name="eventseries",
            name="points",
            field=models.JSONField(
                default=dict,
                help_text="A free-for-all table: series points per bot, once complete.",
            ),
        ),
        migrations.AlterField(
            model_name="eventseries",
            name="key",
            field=models.CharField(max_length=200),
        ),
        migrations.AlterField(
            model_name="match",
            name="pairing",
            field=models.CharField(
                blank=True, help_text="Series key within an event.", max_length=200
            ),
        ),
        migrations.RunPython(fill_stored_standings, migrations.RunPython.noop),
    ]
