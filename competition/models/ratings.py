from django.db import models
from django.db.models import F, FloatField, OuterRef, Subquery

#: how many standard deviations below the mean the headline number is
ORDINAL_SIGMAS = 3


def ordinal(mu, sigma):
    """The headline number, a conservative estimate: mu - 3 sigma (of floats, or of columns as
    ``F`` expressions in a query: one formula for both)."""
    return mu - ORDINAL_SIGMAS * sigma


class Rating(models.Model):
    """A bot's current rating for its game (openskill mu and sigma)."""

    bot = models.OneToOneField("competition.Bot", on_delete=models.CASCADE, related_name="rating")
    game = models.CharField(max_length=32, db_index=True)
    mu = models.FloatField()
    sigma = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("game", "-mu")

    def __str__(self) -> str:
        return f"{self.bot}: {self.mu:.2f} ± {self.sigma:.2f}"

    @property
    def ordinal(self) -> float:
        """The conservative estimate shown on leaderboards: mu - 3 sigma."""
        return ordinal(self.mu, self.sigma)


class StepKind(models.TextChoices):
    """What made a rating step: a rated match, or a new start (the uncertainty widened)."""

    MATCH = "match", "A rated match"
    VERSION = "version", "A new version began"
    SEASON = "season", "A new season began"


class RatingChange(models.Model):
    """One rating step (append-only): one row per (match, bot), or one per new start of a bot
    (a new version, a new season: no match, the same mean, a wider uncertainty)."""

    match = models.ForeignKey(
        "competition.Match",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="rating_changes",
    )
    bot = models.ForeignKey(
        "competition.Bot", on_delete=models.CASCADE, related_name="rating_changes"
    )
    kind = models.CharField(max_length=8, choices=StepKind.choices, default=StepKind.MATCH)
    #: the version that began (a ``VERSION`` step)
    version = models.ForeignKey(
        "competition.BotVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,  # the partial index below: only the new starts hold one
    )
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        constraints = [models.UniqueConstraint(fields=("match", "bot"), name="ratingchange_unique")]
        indexes = [
            models.Index(
                fields=["version"],
                condition=models.Q(version__isnull=False),
                name="ratingchange_version",
            )
        ]

    def __str__(self) -> str:
        where = f"match {self.match_id}" if self.match_id else StepKind(self.kind).label.lower()
        return f"{self.bot} in {where}: {self.mu_before:.2f} → {self.mu_after:.2f}"

    @property
    def ordinal_change(self) -> float:
        """What the step changed of the headline number (the ordinal, mu - 3 sigma)."""
        return ordinal(self.mu_after, self.sigma_after) - ordinal(self.mu_before, self.sigma_before)


def ordinal_change(match: str = "match_id", bot: str = "bot_id") -> Subquery:
    """A seat's rating step as a column: what its match changed of its bot's headline number
    (the ordinal), null for a match that changed no rating (one row, by the unique index)."""
    steps = RatingChange.objects.filter(match_id=OuterRef(match), bot_id=OuterRef(bot))
    return Subquery(steps.values(change=step_change())[:1], output_field=FloatField())


def step_change():
    """A rating step's change of the ordinal, as a query expression on ``RatingChange``."""
    return ordinal(F("mu_after"), F("sigma_after")) - ordinal(F("mu_before"), F("sigma_before"))


def change_text(change: float | None, against: list[str] | None = None) -> str:
    """A rating step in words for a result: "+1.4 vs bob-ttt" ("" for none)."""
    if change is None:
        return ""
    said = "\N{PLUS-MINUS SIGN}0.0" if round(change, 1) == 0 else f"{change:+.1f}"
    said = said.replace("-", "\N{MINUS SIGN}")
    if not against:
        return said
    if len(against) == 1:
        return f"{said} vs {against[0]}"
    return f"{said} vs {len(against)} others"
