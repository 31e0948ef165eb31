"""Ratings: a bot's rating and the leaderboard's rows."""

from __future__ import annotations

from rest_framework import serializers

from competition.models.bots import Bot
from competition.ratings import services as ratings


class RatingSerializer(serializers.Serializer):
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    ordinal = serializers.FloatField(help_text="mu - 3 sigma: the conservative estimate ranked on.")
    rating = serializers.FloatField(
        help_text="The headline number: the ordinal (mu - 3 sigma), as the leaderboard shows it."
    )
    uncertainty = serializers.FloatField(help_text="sigma, shown beside the rating.")
    games = serializers.IntegerField()
    provisional = serializers.BooleanField(
        help_text=f"Fewer than {ratings.PROVISIONAL_GAMES} rated games."
    )
    ranked = serializers.BooleanField(
        help_text="False before the first rated game: the numbers are the defaults and the "
        "leaderboard lists the bot apart, unranked."
    )


def rating_json(bot: Bot) -> dict:
    """A bot's rating, or the defaults (``ranked`` false) before its first rated game."""
    rating = getattr(bot, "rating", None)
    if rating is None:
        return ratings.summary()
    return ratings.summary(rating.mu, rating.sigma, rating.games)


class LeaderboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField(help_text="`arena` for a built-in strategy.")
    builtin = serializers.BooleanField(help_text="The platform's built-in strategy.")
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    ordinal = serializers.FloatField()
    rating = serializers.FloatField(
        help_text="The headline number the leaderboard ranks by: the ordinal (mu - 3 sigma)."
    )
    uncertainty = serializers.FloatField(help_text="sigma, shown beside the rating.")
    games = serializers.IntegerField()
    provisional = serializers.BooleanField()
    health = serializers.DictField(help_text="The bot's health, as on the bot payload.")
