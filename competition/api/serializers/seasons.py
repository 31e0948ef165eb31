"""Seasons of a game's standing ladder and their final standings."""

from __future__ import annotations

from rest_framework import serializers

from competition.models import Season


class SeasonSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    name = serializers.CharField(help_text="Empty when the operator gave it none.")
    title = serializers.CharField(source="label", help_text="e.g. “Tic-tac-toe season 2”.")
    status = serializers.ChoiceField(choices=["upcoming", "current", "ended"])
    starts = serializers.DateTimeField(
        allow_null=True, help_text="When it started, or (upcoming) when it is to start."
    )
    ends = serializers.DateTimeField(
        allow_null=True, help_text="When it is to end on its own (null: when an operator ends it)."
    )
    ended_at = serializers.DateTimeField(allow_null=True)
    ranked = serializers.IntegerField(help_text="Bots in its final standings (0 until it ends).")


def season_json(season: Season | None) -> dict | None:
    return SeasonSerializer(season).data if season is not None else None


class SeasonStandingSerializer(serializers.Serializer):
    place = serializers.IntegerField()
    bot = serializers.IntegerField(source="bot_id", allow_null=True)
    name = serializers.CharField(source="bot_name")
    owner = serializers.CharField(source="owner_name", help_text="Empty for a built-in strategy.")
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    ordinal = serializers.FloatField(help_text="mu - 3 sigma at the season's end.")
    games = serializers.IntegerField(help_text="Its rated games in all at the season's end.")
    season_games = serializers.IntegerField(help_text="Of those, the ones of this season.")
    wins = serializers.IntegerField(help_text="Its record over all its rated games.")
    draws = serializers.IntegerField()
    losses = serializers.IntegerField()
