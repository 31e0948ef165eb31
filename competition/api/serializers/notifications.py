"""Notifications, and marking them read."""

from __future__ import annotations

from rest_framework import serializers

from competition.api.serializers.common import StrictIntegerField
from competition.models import NotificationKind
from competition.models.filters import ID_MAX, ID_MIN  # every id the API takes (paths, bodies)


class NotificationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=NotificationKind.choices)
    text = serializers.CharField()
    link = serializers.CharField()
    created = serializers.DateTimeField()
    read = serializers.BooleanField()


class MarkReadSerializer(serializers.Serializer):
    ids = serializers.ListField(
        child=StrictIntegerField(min_value=ID_MIN, max_value=ID_MAX),
        required=False,
        max_length=1000,
    )


class MarkedReadSerializer(serializers.Serializer):
    marked = serializers.IntegerField()
    unread = serializers.IntegerField()
