from django.db import models


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
        return self.mu - 3 * self.sigma


class RatingChange(models.Model):
    """One rating step (append-only): one row per (match, bot)."""

    match = models.ForeignKey(
        "competition.Match", on_delete=models.CASCADE, related_name="rating_changes"
    )
    bot = models.ForeignKey(
        "competition.Bot", on_delete=models.CASCADE, related_name="rating_changes"
    )
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        constraints = [models.UniqueConstraint(fields=("match", "bot"), name="ratingchange_unique")]

    def __str__(self) -> str:
        return f"{self.bot} in match {self.match_id}: {self.mu_before:.2f} → {self.mu_after:.2f}"
