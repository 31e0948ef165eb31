"""Bot names without control or text-direction characters (issue 46, R9)."""

from django.db import migrations, models

import bots.names


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0005_code_versions"),
    ]

    operations = [
        migrations.AlterField(
            model_name="bot",
            name="name",
            field=models.CharField(max_length=80, validators=[bots.names.validate_printable_name]),
        ),
    ]
