"""Bot and BotVersion move from the ``bots`` app to this one, their tables as they are
(``bots_bot``, ``bots_botversion``): state only, no SQL (issue 48). The bots app's 0007 then
drops them from its state."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import bots.names


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0024_participant_cause_memory"),
        ("bots", "0006_bot_name_printable"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Bot",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "game",
                            models.CharField(
                                help_text="The game's slug (see games.registry).", max_length=32
                            ),
                        ),
                        (
                            "name",
                            models.CharField(
                                max_length=80, validators=[bots.names.validate_printable_name]
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("http", "HTTP URL"),
                                    ("builtin", "Built-in strategy"),
                                    ("process", "Local process"),
                                    ("tcp", "TCP listener"),
                                    ("human", "Human in the browser"),
                                    ("code", "Uploaded code"),
                                ],
                                default="http",
                                max_length=16,
                            ),
                        ),
                        (
                            "target",
                            models.CharField(
                                help_text="URL, built-in strategy name, command or HOST:PORT.",
                                max_length=2000,
                            ),
                        ),
                        (
                            "secret",
                            models.CharField(
                                default=bots.names.new_secret, editable=False, max_length=64
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("active", "Active"),
                                    ("paused", "Paused"),
                                    ("inactive", "Inactive"),
                                ],
                                default="active",
                                max_length=16,
                            ),
                        ),
                        ("status_reason", models.CharField(blank=True, max_length=300)),
                        ("created", models.DateTimeField(auto_now_add=True)),
                        ("updated", models.DateTimeField(auto_now=True)),
                        (
                            "test_called",
                            models.DateTimeField(
                                blank=True,
                                editable=False,
                                help_text="When its owner last test-called it (rate limit).",
                                null=True,
                            ),
                        ),
                        (
                            "public_debug",
                            models.BooleanField(
                                default=False,
                                help_text="Show its debug overlays to everyone (otherwise its owner only).",
                            ),
                        ),
                        (
                            "source_public",
                            models.BooleanField(
                                default=False,
                                help_text="Let everyone download its uploaded code (otherwise its owner only).",
                            ),
                        ),
                        (
                            "owner",
                            models.ForeignKey(
                                blank=True,
                                help_text="Its user; none for the platform's seats (built-ins, human seats).",
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="bots",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "bots_bot",
                        "ordering": ("game", "name"),
                    },
                ),
                migrations.AlterField(
                    model_name="entry",
                    name="bot",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="entries",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="eventseries",
                    name="a",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="eventseries",
                    name="b",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="eventseries",
                    name="bye",
                    field=models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="eventstanding",
                    name="bot",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="eventstanding",
                    name="last_opponent",
                    field=models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="headtohead",
                    name="bot",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="headtohead",
                    name="opponent",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="ladderspot",
                    name="bot",
                    field=models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="ladder_spot",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="participant",
                    name="bot",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="participations",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="rating",
                    name="bot",
                    field=models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rating",
                        to="competition.bot",
                    ),
                ),
                migrations.AlterField(
                    model_name="ratingchange",
                    name="bot",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rating_changes",
                        to="competition.bot",
                    ),
                ),
                migrations.CreateModel(
                    name="BotVersion",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("number", models.PositiveIntegerField()),
                        ("filename", models.CharField(max_length=255)),
                        ("language", models.CharField(max_length=16)),
                        (
                            "size",
                            models.PositiveIntegerField(help_text="Bytes of the upload as sent."),
                        ),
                        ("sha256", models.CharField(max_length=64)),
                        (
                            "data",
                            models.BinaryField(
                                help_text="The upload as sent (a file or an archive)."
                            ),
                        ),
                        ("created", models.DateTimeField(auto_now_add=True)),
                        (
                            "bot",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="versions",
                                to="competition.bot",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "bots_botversion",
                        "ordering": ("bot", "-number"),
                    },
                ),
                migrations.AlterField(
                    model_name="entry",
                    name="version",
                    field=models.ForeignKey(
                        blank=True,
                        help_text="A code bot's version frozen when the event started (freeze_versions).",
                        null=True,
                        on_delete=django.db.models.deletion.RESTRICT,
                        related_name="entries",
                        to="competition.botversion",
                    ),
                ),
                migrations.AlterField(
                    model_name="participant",
                    name="version",
                    field=models.ForeignKey(
                        blank=True,
                        help_text="The uploaded version this seat played (code bots only).",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="participations",
                        to="competition.botversion",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="bot",
                    constraint=models.UniqueConstraint(
                        fields=("owner", "game", "name"), name="bot_unique_name_per_owner"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="bot",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("owner__isnull", True)),
                        fields=("game", "kind", "target"),
                        name="bot_unique_platform_seat",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="botversion",
                    constraint=models.UniqueConstraint(
                        fields=("bot", "number"), name="botversion_unique_number"
                    ),
                ),
            ],
        ),
    ]
