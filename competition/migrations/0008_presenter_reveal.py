"""Presenter mode: ``Event.hide_results`` and ``Match.revealed_at`` (matches hidden from the
public until revealed); then every event's stored standings rebuilt with the live code
(moved here from 0006, whose columns the live models outgrew; a rebuild is idempotent)."""

from django.db import migrations, models


def fill_stored_standings(apps, schema_editor):
    from competition.events import standings
    from competition.models import Event

    # only the event columns that exist at this point (later migrations add others)
    columns = [f.attname for f in apps.get_model("competition", "Event")._meta.concrete_fields]
    for event in Event.objects.using(schema_editor.connection.alias).only(*columns).iterator():
        standings.rebuild(event)


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0007_match_fork"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="hide_results",
            field=models.BooleanField(
                default=False,
                help_text="Presenter mode: its matches stay hidden from the public (pages, API, "
                "live streams, standings, ratings) until an organiser reveals them one by one "
                "(/events/<id>/present, or the action “Reveal every hidden match”, which rates them: "
                "use it before turning this off).",
            ),
        ),
        migrations.AddField(
            model_name="match",
            name="revealed_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the presenter revealed it (an event hiding its results until then).",
                null=True,
            ),
        ),
        migrations.RunPython(fill_stored_standings, migrations.RunPython.noop),
    ]
