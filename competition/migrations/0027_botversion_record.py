"""Each version's record in rated matches (issue 50): games, wins, draws and losses, its first
and last rated match and its bot's rating after the last, kept up to date by every rated finish
from now on, and counted here once from the history stored so far."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Exists, OuterRef


def count_records(apps, schema_editor) -> int:
    """The record of every version that played a rated match (a rating step of its bot in that
    match), from the seats in match order; how many versions it wrote."""
    participant = apps.get_model("competition", "Participant")
    change = apps.get_model("competition", "RatingChange")
    version = apps.get_model("competition", "BotVersion")
    steps = change.objects.filter(match_id=OuterRef("match_id"), bot_id=OuterRef("bot_id"))
    seats = (
        participant.objects.filter(version__isnull=False)
        .filter(Exists(steps))
        .order_by("match_id")
        .values_list("version_id", "match_id", "bot_id", "result")
    )
    records: dict[int, dict] = {}
    for version_id, match_id, bot_id, result in seats.iterator():
        record = records.setdefault(
            version_id, {"rated_games": 0, "wins": 0, "draws": 0, "losses": 0,
                         "first_match_id": match_id, "bot": bot_id}
        )  # fmt: skip
        record["rated_games"] += 1
        key = {"win": "wins", "draw": "draws", "loss": "losses"}.get(result)
        if key:
            record[key] += 1
        record["last_match_id"] = match_id
    for version_id, record in records.items():
        last = change.objects.filter(match_id=record["last_match_id"], bot_id=record.pop("bot"))
        mu, sigma = last.values_list("mu_after", "sigma_after").first() or (None, None)
        version.objects.filter(pk=version_id).update(**record, mu=mu, sigma=sigma)
    return len(records)


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0026_botversion_build"),
    ]

    operations = [
        migrations.AddField(
            model_name="botversion",
            name="draws",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="botversion",
            name="first_match",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="competition.match",
            ),
        ),
        migrations.AddField(
            model_name="botversion",
            name="last_match",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="competition.match",
            ),
        ),
        migrations.AddField(
            model_name="botversion",
            name="losses",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="botversion",
            name="mu",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="botversion",
            name="rated_games",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="botversion",
            name="sigma",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="botversion",
            name="wins",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(count_records, migrations.RunPython.noop),
    ]
