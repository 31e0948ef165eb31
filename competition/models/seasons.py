"""Seasons of a game's standing ladder and their archived final standings (written once, at
the season's end: at most its ranked bots)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from games import get_game


class SeasonStatus(models.TextChoices):
    UPCOMING = "upcoming", "Upcoming"
    CURRENT = "current", "Current"
    ENDED = "ended", "Ended"


def game_title(slug: str) -> str:
    try:
        return get_game(slug).title
    except KeyError:  # a game no longer installed
        return slug


class Season(models.Model):
    game = models.CharField(max_length=32)
    number = models.PositiveIntegerField(help_text="1 for a game's first season, then 2, 3...")
    name = models.CharField(max_length=80, blank=True, help_text="Optional, e.g. “Winter 2026”.")
    starts = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When it starts (an upcoming season starts then on its own); once started, "
        "when it did.",
    )
    ends = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When it ends on its own (empty: when an operator ends it).",
    )
    status = models.CharField(
        max_length=8, choices=SeasonStatus.choices, default=SeasonStatus.UPCOMING
    )
    ended_at = models.DateTimeField(null=True, blank=True)
    ranked = models.PositiveIntegerField(default=0, help_text="Bots ranked at its end.")

    class Meta:
        ordering = ("game", "-number")
        constraints = [
            models.UniqueConstraint(fields=("game", "number"), name="season_game_number"),
            # one current season per game: two runners ending or starting one never make two
            models.UniqueConstraint(
                fields=("game",),
                condition=Q(status="current"),
                name="season_one_current",
            ),
        ]
        indexes = [
            # the periodic step: seasons due to start or end
            models.Index(
                fields=("status", "ends"), condition=~Q(status="ended"), name="season_due"
            ),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def title(self) -> str:
        return game_title(self.game)

    @property
    def label(self) -> str:
        """ "Tic-tac-toe season 2" (its name, if any, in the pages beside it)."""
        return f"{self.title} season {self.number}"


class SeasonStanding(models.Model):
    """A bot's final place in an ended season (names copied: the archive outlives renames)."""

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="standings")
    place = models.PositiveIntegerField()
    bot = models.ForeignKey(
        "competition.Bot",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="season_standings",
    )
    bot_name = models.CharField(max_length=80)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="season_standings",
        help_text="The bot's owner at the season's end (empty: a built-in strategy).",
    )
    owner_name = models.CharField(max_length=150, blank=True)
    mu = models.FloatField()
    sigma = models.FloatField()
    ordinal = models.FloatField()
    games = models.PositiveIntegerField(help_text="Its rated games in all, at the season's end.")
    season_games = models.PositiveIntegerField(
        default=0, help_text="Of those, how many it played in this season."
    )
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ("season", "place")
        constraints = [
            models.UniqueConstraint(fields=("season", "place"), name="seasonstanding_place"),
            models.UniqueConstraint(fields=("season", "bot"), name="seasonstanding_bot"),
        ]
        indexes = [
            # the badges of a bot page and an owner's page: their top places, newest first
            models.Index(fields=("bot", "place", "season"), name="seasonstanding_bot_place"),
            models.Index(fields=("owner", "place", "season"), name="seasonstanding_owner_place"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_name}: {self.place} in {self.season}"
