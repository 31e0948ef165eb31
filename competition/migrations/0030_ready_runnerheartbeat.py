from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0029_versions_rating_steps"),
    ]

    operations = [
        migrations.CreateModel(
            name="RunnerHeartbeat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200, unique=True)),
                ("seen", models.DateTimeField(db_index=True)),
            ],
            options={"ordering": ("-seen",)},
        ),
    ]
