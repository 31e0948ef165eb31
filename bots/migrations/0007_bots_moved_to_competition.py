"""Bot and BotVersion now live in the competition app (its 0025 took them, tables unchanged):
removed from this app's state only, no SQL (issue 48). The app stays for this history."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0006_bot_name_printable"),
        ("competition", "0025_bots_move_in"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="BotVersion"),
                migrations.DeleteModel(name="Bot"),
            ],
        ),
    ]
