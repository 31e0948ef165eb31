"""A knockout's tie policy (issue 51): ``Event.tie_decider`` and ``decider_games``, and the
bound on ``series_length``. Events made before keep what they had (a level series went to the
higher seed at once); a new event plays decider games by default."""

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0040_platform_seat_names"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="tie_decider",
            field=models.CharField(
                choices=[("games", "Extra games, then seed"), ("seed", "Seed at once")],
                default="seed",
                max_length=8,
            ),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="event",
            name="tie_decider",
            field=models.CharField(
                choices=[("games", "Extra games, then seed"), ("seed", "Seed at once")],
                default="games",
                help_text="Single elimination: how a series that ends level is settled: decider "
                "games (seats swapped, until one is won), the higher seed only if every decider "
                "is drawn; or the higher seed at once.",
                max_length=8,
            ),
        ),
        migrations.AddField(
            model_name="event",
            name="decider_games",
            field=models.PositiveSmallIntegerField(
                default=3,
                help_text="Single elimination with decider games: the most deciders a level "
                "series plays before the higher seed goes through.",
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(9),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="event",
            name="series_length",
            field=models.PositiveSmallIntegerField(
                default=1,
                help_text="Games per pairing, seats alternating.",
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(15),
                ],
            ),
        ),
    ]
