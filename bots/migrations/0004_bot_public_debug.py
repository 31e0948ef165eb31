from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0003_platform_seats"),
    ]

    operations = [
        migrations.AddField(
            model_name="bot",
            name="public_debug",
            field=models.BooleanField(
                default=False,
                help_text="Show its debug overlays to everyone (otherwise its owner only).",
            ),
        ),
    ]
