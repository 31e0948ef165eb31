"""Stored standings, so an event's standings and ladder pairing never replay its history
(``competition.events.standings`` keeps them)."""

from django.db import models


class SeriesState(models.TextChoices):
    PENDING = "pending", "Pending"
    """A game is queued or running."""
    BLOCKED = "blocked", "Blocked"
    """A game errored and waits for an organiser."""
    COMPLETE = "complete", "Complete"
    """Every game ended."""


class EventSeries(models.Model):
    event = models.ForeignKey("competition.Event", on_delete=models.CASCADE, related_name="series")
    round = models.PositiveIntegerField()
    key = models.CharField(max_length=200)
    a = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    b = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    bye = models.ForeignKey(
        "competition.Bot", null=True, on_delete=models.CASCADE, related_name="+"
    )
    state = models.CharField(
        max_length=10, choices=SeriesState.choices, default=SeriesState.PENDING
    )
    has_result = models.BooleanField(default=False)
    score_a = models.FloatField(default=0.0)
    score_b = models.FloatField(default=0.0)
    points_a = models.FloatField(default=0.0, help_text="Series points, once complete.")
    points_b = models.FloatField(default=0.0)
    points = models.JSONField(
        default=dict, help_text="A free-for-all table: series points per bot, once complete."
    )
    finished = models.DateTimeField(null=True, help_text="Its last game's end, once not pending.")
    tally = models.JSONField(
        default=dict, help_text="Per bot: [games, score, wins, draws, losses] of its games."
    )
    matches = models.PositiveIntegerField(default=0, help_text="Its games.")
    done = models.PositiveIntegerField(default=0, help_text="Its games that ended.")

    class Meta:
        ordering = ("event", "round", "key")
        constraints = [
            models.UniqueConstraint(fields=("event", "round", "key"), name="eventseries_unique")
        ]
        indexes = [models.Index(fields=("event", "state"), name="eventseries_state")]
        verbose_name_plural = "event series"

    def __str__(self) -> str:
        return f"{self.key} (round {self.round}) in event {self.event_id}"


class EventStanding(models.Model):
    event = models.ForeignKey(
        "competition.Event", on_delete=models.CASCADE, related_name="stored_standings"
    )
    bot = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    points = models.FloatField(default=0.0)
    score = models.FloatField(default=0.0)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    games = models.PositiveIntegerField(default=0)
    series = models.PositiveIntegerField(default=0, help_text="Complete series with a result.")
    byes = models.PositiveIntegerField(default=0)
    played = models.PositiveIntegerField(default=0, help_text="Series scheduled.")
    busy = models.PositiveIntegerField(default=0, help_text="Series pending.")
    last_played = models.DateTimeField(null=True, help_text="Its latest series end.")
    last_round = models.PositiveIntegerField(default=0)
    last_opponent = models.ForeignKey(
        "competition.Bot", null=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("event", "bot")
        constraints = [
            models.UniqueConstraint(fields=("event", "bot"), name="eventstanding_unique")
        ]

    def __str__(self) -> str:
        return f"bot {self.bot_id} in event {self.event_id}: {self.points} points"


class EventTally(models.Model):
    """An event's match counts (what lists of events show), kept with its series."""

    event = models.OneToOneField(
        "competition.Event", on_delete=models.CASCADE, primary_key=True, related_name="tally"
    )
    matches = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"event {self.event_id}: {self.done}/{self.matches} matches"


class HeadToHead(models.Model):
    event = models.ForeignKey("competition.Event", on_delete=models.CASCADE, related_name="+")
    bot = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    opponent = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="+")
    points = models.FloatField(default=0.0)

    class Meta:
        ordering = ("event", "bot", "opponent")
        constraints = [
            models.UniqueConstraint(fields=("event", "bot", "opponent"), name="headtohead_unique")
        ]

    def __str__(self) -> str:
        return f"bot {self.bot_id} v {self.opponent_id} in event {self.event_id}: {self.points}"


__all__ = ["EventSeries", "EventStanding", "EventTally", "HeadToHead", "SeriesState"]
