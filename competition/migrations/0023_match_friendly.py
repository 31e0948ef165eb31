"""``Match.friendly``: a match a user made under conditions of their choosing, whose forfeits
never count toward a bot's health (every practice match is unrated now, so ``rated`` no longer
tells). The practice matches stored unrated before are marked friendly: they did not count."""

from django.db import migrations, models


def mark_old_friendlies(apps, schema_editor):
    Match = apps.get_model("competition", "Match")
    Match.objects.filter(
        created_by__isnull=False, event__isnull=True, ladder__isnull=True, rated=False
    ).update(friendly=True)


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0022_active_match_cap_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="match",
            name="friendly",
            field=models.BooleanField(
                default=False,
                help_text="A match a user made under conditions of their choosing (options other than the game's defaults, a fork's start, the bench): its forfeits never count toward a bot's health, so nobody can pause someone else's bot by the options they pick.",
            ),
        ),
        migrations.RunPython(mark_old_friendlies, migrations.RunPython.noop),
    ]
