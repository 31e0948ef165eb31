"""The signed-in user, their API tokens, and the log-in that makes a token."""

from __future__ import annotations

from rest_framework import serializers

from competition.api.serializers.common import StrictCharField
from competition.models.accounts import MAX_TOKEN_NAME, TOKEN_LIFETIMES, ApiToken


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


class DeleteMeSerializer(serializers.Serializer):
    password = serializers.CharField(
        trim_whitespace=False, help_text="Your password: deleting the account cannot be undone."
    )


class TokenSerializer(serializers.ModelSerializer):
    """A token as listed: never its key (only a hash of it is stored)."""

    class Meta:
        model = ApiToken
        fields = ("id", "name", "created", "expiry", "last_used")
        read_only_fields = fields


class TokenCreateSerializer(serializers.Serializer):
    name = StrictCharField(max_length=MAX_TOKEN_NAME, help_text="Where you use it.")
    days = serializers.ChoiceField(
        choices=TOKEN_LIFETIMES,
        default=TOKEN_LIFETIMES[0],
        help_text="How many days it works.",
    )

    def validate_name(self, value: str) -> str:
        value = value.strip()
        if not value or not value.isprintable():
            raise serializers.ValidationError("Give the token a name of printable characters.")
        return value


class LoginSerializer(TokenCreateSerializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


class NewTokenSerializer(TokenSerializer):
    """A token just made, with its key: shown this once."""

    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")

    class Meta(TokenSerializer.Meta):
        fields = (*TokenSerializer.Meta.fields, "token")
        read_only_fields = fields
