"""The standing ladder of each game (docs/architecture.md); ``LadderSpot.playing`` is claimed by a
conditional UPDATE so two schedulers never book one bot twice."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Ladder(models.Model):
    game = models.CharField(max_length=32, unique=True)
    paused = models.BooleanField(
        default=False, help_text="Paused by an operator: no new matches are made."
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("game",)

    def __str__(self) -> str:
        return f"{self.game} ladder"


class LadderSpot(models.Model):
    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="spots")
    bot = models.OneToOneField(
        "competition.Bot", on_delete=models.CASCADE, related_name="ladder_spot"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The bot's owner (copied: one owner's bots are never paired together).",
    )
    enrolled = models.BooleanField(
        default=True, help_text="In the ladder; its owner may take it out and put it back."
    )
    house = models.BooleanField(
        default=False, help_text="A built-in strategy of the platform, not a user's bot."
    )
    mu = models.FloatField(default=25.0, help_text="Its rating's mu when last paired or rated.")
    due = models.DateTimeField(
        default=timezone.now, help_text="Not paired before this time (the hourly cap)."
    )
    playing = models.ForeignKey(
        "competition.Match",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The ladder match it is in now (None: free).",
    )
    played = models.PositiveIntegerField(default=0, help_text="Ladder matches made for it.")
    first_seats = models.PositiveIntegerField(
        default=0, help_text="Of those, how many it played in the first seat."
    )
    last_played = models.DateTimeField(null=True, blank=True)
    joined = models.DateTimeField(default=timezone.now)
    placement = models.PositiveSmallIntegerField(
        default=0,
        help_text="Placement matches left (a new bot's or version's first ones): each is due "
        "as soon as the one before ends, before the hourly cap.",
    )

    class Meta:
        ordering = ("ladder", "-mu")
        indexes = [
            # the longest-waiting free bot (who is paired next)
            models.Index(
                fields=("ladder", "due", "played"),
                condition=Q(enrolled=True, playing__isnull=True),
                name="ladderspot_free_due_played",
            ),
            # free bots near a rating (its opponents)
            models.Index(
                fields=("ladder", "mu"),
                condition=Q(enrolled=True, playing__isnull=True),
                name="ladderspot_free_mu",
            ),
            # the bots playing now, by owner (ARENA_MAX_ACTIVE_LADDER_MATCHES): as many rows as
            # ladder matches queued or running, whatever the history
            models.Index(
                fields=("owner",),
                condition=Q(playing__isnull=False),
                name="ladderspot_owner_playing",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot} in {self.ladder}"
