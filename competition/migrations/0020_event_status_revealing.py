"""An event's status "revealing": every match played, some results still hidden until the
presenter reveals them (``Event.hide_results``); "finished" only once every result is public.
A finished event with a match still hidden becomes "revealing" (its last reveal finishes it
and tells the entrants their placings)."""

from django.db import migrations, models


def still_hidden(apps, schema_editor):
    Event = apps.get_model("competition", "Event")
    Match = apps.get_model("competition", "Match")
    waiting = Match.objects.filter(event__hide_results=True, revealed_at__isnull=True).values(
        "event_id"
    )
    Event.objects.filter(status="finished", hide_results=True, pk__in=waiting).update(
        status="revealing"
    )


def back(apps, schema_editor):
    Event = apps.get_model("competition", "Event")
    Event.objects.filter(status="revealing").update(status="finished")


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0019_entry_version_kept"),
    ]

    operations = [
        migrations.AlterField(
            model_name="event",
            name="status",
            field=models.CharField(
                choices=[
                    ("draft", "Draft"),
                    ("running", "Running"),
                    ("paused", "Paused"),
                    ("revealing", "Play over · results being revealed"),
                    ("finished", "Finished"),
                    ("cancelled", "Cancelled"),
                ],
                default="draft",
                max_length=16,
            ),
        ),
        migrations.RunPython(still_hidden, back),
    ]
