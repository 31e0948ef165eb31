"""The signed-in user and their API token."""

from __future__ import annotations

from rest_framework import serializers


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>` from scripts.")
