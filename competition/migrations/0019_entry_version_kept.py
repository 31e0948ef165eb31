"""An event entry's frozen version is kept while the entry holds it (RESTRICT, not SET_NULL):
an owner deleting old versions to free storage never takes the one an event plays."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0005_code_versions"),
        ("competition", "0018_ratingchange_bot_newest"),
    ]

    operations = [
        migrations.AlterField(
            model_name="entry",
            name="version",
            field=models.ForeignKey(
                blank=True,
                help_text="A code bot's version frozen when the event started (freeze_versions).",
                null=True,
                on_delete=django.db.models.deletion.RESTRICT,
                related_name="entries",
                to="bots.botversion",
            ),
        ),
    ]
