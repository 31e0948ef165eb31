"""A seat carries its match's standing ladder, so a bot's latest ladder seats are one range of a
partial index (the bot page's and the ladder API's last ladder matches), not a walk and a sort
of every seat the bot ever had; the seats of ladder matches already played get it here."""

import django.db.models.deletion
from django.db import migrations, models

#: the ladder of every seat of a ladder match (SQLite and PostgreSQL both run it)
FILL = """
UPDATE competition_participant
SET ladder_id = (SELECT m.ladder_id FROM competition_match m WHERE m.id = match_id)
WHERE match_id IN (SELECT id FROM competition_match WHERE ladder_id IS NOT NULL)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0037_version_report_notices"),
    ]

    operations = [
        migrations.AddField(
            model_name="participant",
            name="ladder",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                help_text="The standing ladder that made its match (None for every other match).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="competition.ladder",
            ),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="participant",
            index=models.Index(
                condition=models.Q(("ladder__isnull", False)),
                fields=["ladder", "bot", "match"],
                name="participant_ladder_bot",
            ),
        ),
    ]
