"""Data: the users' bots test-called before the standing ladder existed enter it (issue 38).

A passed test call puts a bot in its game's ladder (``competition.events.ladder.enrol``), but
the bots test-called before ``0012_standing_ladder`` was applied never got a spot: they stayed
out until their next passing call. The database kept no verdict of those calls, only their
time (``Bot.test_called``), so every user's bot test-called before then enters, whatever its
status (the ladder pairs only active bots; one whose server does not answer is paused by the
health rules, as in any match). A call made since is left alone: had it passed, the bot would
hold a spot already. A game's ladder made here gets its house bots at the ladder's next step.
"""

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder

DEFAULT_MU = 25.0


def enter_test_called_bots(apps, schema_editor) -> int:
    """Spots for the users' bots test-called before the ladder; the count made."""
    try:
        Bot = apps.get_model("bots", "Bot")  # the migration's state
    except LookupError:  # the live models, where Bot is competition's since 0025 (issue 48)
        Bot = apps.get_model("competition", "Bot")
    Ladder = apps.get_model("competition", "Ladder")
    LadderSpot = apps.get_model("competition", "LadderSpot")
    Rating = apps.get_model("competition", "Rating")
    db = schema_editor.connection.alias
    applied = (
        MigrationRecorder(schema_editor.connection)
        .migration_qs.filter(app="competition", name="0012_standing_ladder")
        .values_list("applied", flat=True)
        .first()
    )
    bots = Bot.objects.using(db).filter(
        owner__isnull=False, test_called__isnull=False, ladder_spot__isnull=True
    )
    if applied is not None:
        bots = bots.filter(test_called__lt=applied)
    made = 0
    for bot in bots.order_by("id").iterator():
        ladder, _ = Ladder.objects.using(db).get_or_create(game=bot.game)
        rating = Rating.objects.using(db).filter(bot=bot).values_list("mu", flat=True).first()
        LadderSpot.objects.using(db).create(
            ladder=ladder,
            bot=bot,
            owner_id=bot.owner_id,
            mu=DEFAULT_MU if rating is None else rating,
        )
        made += 1
    return made


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0002_bot_test_called"),
        ("competition", "0016_merge_registration"),
    ]

    operations = [
        migrations.RunPython(enter_test_called_bots, migrations.RunPython.noop, elidable=True),
    ]
