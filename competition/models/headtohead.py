"""Two bots' history kept as it is played: a ``Meeting`` per pair of seats of a finished match
(the head-to-head list, read newest first on its index) and a ``PairRecord`` of wins, draws and
losses per seat and version pair (the totals, a few rows however long the history), both
written when a result becomes public (``matches.headtohead.record``); and ``ChallengeRequest``,
the answer a challenge waits for from an owner who chose to be asked."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from competition.models.choices import ChallengeAnswer, SeatResult


class Meeting(models.Model):
    """One seat of ``bot`` against one seat of ``opponent`` in a match with a result (both
    directions are stored, so either bot's list is one range of the index)."""

    match = models.ForeignKey("competition.Match", on_delete=models.CASCADE, related_name="+")
    bot = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    opponent = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    seat = models.PositiveSmallIntegerField()
    opponent_seat = models.PositiveSmallIntegerField()
    version = models.PositiveIntegerField(default=0, help_text="The bot's version (0: none).")
    opponent_version = models.PositiveIntegerField(default=0)
    result = models.CharField(max_length=8, choices=SeatResult.choices)
    rated = models.BooleanField(default=False)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-match_id", "-seat", "-opponent_seat")
        constraints = [
            models.UniqueConstraint(
                fields=("match", "seat", "opponent_seat"), name="meeting_unique_seats"
            )
        ]
        # a pair's meetings newest first, a range of this index from the keyset position
        indexes = [
            models.Index(
                fields=("bot", "opponent", "match", "seat", "opponent_seat"),
                name="meeting_pair_match",
            )
        ]

    def __str__(self) -> str:
        return f"{self.match_id}: {self.bot_id} vs {self.opponent_id}"


class PairRecord(models.Model):
    """``bot``'s wins, draws and losses against ``opponent`` from one seat, by version pair."""

    bot = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    opponent = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    seat = models.PositiveSmallIntegerField()
    version = models.PositiveIntegerField(default=0)
    opponent_version = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=("bot", "opponent", "seat", "version", "opponent_version"),
                name="pairrecord_unique_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} vs {self.opponent_id} seat {self.seat}"


class ChallengeRequest(models.Model):
    """A challenge of ``bot`` waiting for its owner's answer (the match is ``pending``)."""

    match = models.ForeignKey(
        "competition.Match", on_delete=models.CASCADE, related_name="requests"
    )
    bot = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenge_requests"
    )
    answer = models.CharField(
        max_length=8, choices=ChallengeAnswer.choices, default=ChallengeAnswer.WAITING
    )
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField()
    answered = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-id",)
        constraints = [
            models.UniqueConstraint(fields=("match", "bot"), name="challengerequest_unique_bot")
        ]
        indexes = [
            # an owner's challenges waiting for an answer (the page, the API, the CLI)
            models.Index(
                fields=("owner", "id"),
                condition=Q(answer="waiting"),
                name="challengerequest_waiting",
            ),
            # the expiry sweep: the waiting ones past their time
            models.Index(
                fields=("expires",), condition=Q(answer="waiting"), name="challengerequest_due"
            ),
        ]

    def __str__(self) -> str:
        return f"Challenge of {self.bot_id} in match {self.match_id} ({self.answer})"


__all__ = ["ChallengeRequest", "Meeting", "PairRecord"]
