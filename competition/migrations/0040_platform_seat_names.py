"""The platform's built-in seats are named "built-in <strategy>" (was "builtin <strategy>": the
kind's code in a name every match list shows; issue 51, every word for people)."""

from django.db import migrations
from django.db.models import F, Value
from django.db.models.functions import Concat, Substr

OLD, NEW = "builtin ", "built-in "


def rename(apps, schema_editor, old=OLD, new=NEW):
    Bot = apps.get_model("competition", "Bot")
    seats = Bot.objects.filter(owner__isnull=True, kind="builtin", name__startswith=old)
    seats.update(name=Concat(Value(new), Substr(F("name"), len(old) + 1)))


def rename_back(apps, schema_editor):
    rename(apps, schema_editor, old=NEW, new=OLD)


class Migration(migrations.Migration):
    dependencies = [("competition", "0039_event_hide_results_help")]

    operations = [migrations.RunPython(rename, rename_back)]
