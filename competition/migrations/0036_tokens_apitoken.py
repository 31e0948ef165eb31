"""API tokens hashed at rest (django-rest-knox): the ApiToken table, and each old plain-text
token (rest_framework.authtoken) moved into it as a hashed token with the same value, so old
clients keep working until their owner replaces it; the old table is emptied."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from knox.crypto import hash_token
from knox.settings import CONSTANTS

#: the name a moved token gets (its owner may revoke it and make named ones)
MOVED_NAME = "Token from before (moved)"


def hash_old_tokens(apps, schema_editor):
    Token = apps.get_model("authtoken", "Token")
    ApiToken = apps.get_model("competition", "ApiToken")
    for old in Token.objects.all().iterator(chunk_size=500):
        digest = hash_token(old.key)
        ApiToken(
            user_id=old.user_id,
            digest=digest,
            token_key=old.key[: CONSTANTS.TOKEN_KEY_LENGTH],
            name=MOVED_NAME,
            expiry=None,
        ).save()
        ApiToken.objects.filter(digest=digest).update(created=old.created)
    Token.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0035_notification_kinds"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("authtoken", "0004_alter_tokenproxy_options"),
    ]

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                ("token_key", models.CharField(db_index=True, max_length=25)),
                ("created", models.DateTimeField(auto_now_add=True)),
                ("expiry", models.DateTimeField(blank=True, null=True)),
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("digest", models.CharField(max_length=128, unique=True)),
                ("name", models.CharField(default="API token", max_length=60)),
                ("last_used", models.DateTimeField(blank=True, null=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="auth_token_set",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ("-created", "-id"),
                "indexes": [
                    models.Index(fields=["user", "-created"], name="apitoken_user_created")
                ],
            },
        ),
        migrations.RunPython(hash_old_tokens, migrations.RunPython.noop),
    ]
