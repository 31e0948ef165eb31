"""What a user is told: a ``Notification`` per notice and a ``NotificationPreference`` per kind;
``competition.notifications.notify`` makes them and decides where they go."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class NotificationKind(models.TextChoices):
    BOT_PAUSED = "bot_paused", "Bot paused"
    """One of the user's bots was paused (bot health, an operator), with why."""
    BOT_RESUMED = "bot_resumed", "Bot resumed"
    """One of the user's bots plays again."""
    CHALLENGED = "challenged", "Bot challenged"
    """Someone challenged one of the user's bots."""
    CHALLENGE_ASKED = "challenge_asked", "Challenge to answer"
    """Someone challenged one of the user's bots set to ask: accept or decline it."""
    CHALLENGE_ANSWERED = "challenge_answered", "Challenge answered"
    """A challenge the user made was accepted, declined or expired unanswered."""
    CHALLENGE_RESULT = "challenge_result", "Challenge result"
    """A challenge between bots of two owners ended (either side is told)."""
    LADDER_RESULT = "ladder_result", "Ladder result"
    """A standing-ladder match of the user's bot ended (high volume: digest by default)."""
    EVENT_OPENED = "event_opened", "Registration opened"
    """An event of a game the user has a bot for opened its registration."""
    EVENT_STARTED = "event_started", "Event started"
    """An event the user entered started (or was cancelled for too few entries)."""
    EVENT_ENDED = "event_ended", "Event ended"
    """An event the user entered ended, with the bot's placing."""
    ENTRY_APPROVED = "entry_approved", "Entry approved"
    """The organiser approved an entry of the user's bot."""
    ENTRY_REFUSED = "entry_refused", "Entry refused"
    """The organiser refused an entry of the user's bot."""
    SEASON_ENDED = "season_ended", "Season ended"
    """A season of a game's standing ladder ended: the final place of each of the user's bots."""
    BUILD_FAILED = "build_failed", "Version did not compile"
    """A version the user uploaded failed its compile: the compiler's words on the bot page."""
    VERSION_REPORT = "version_report", "Version report"
    """A new version's report was played: how it did in its predecessor's lost and drawn games."""


class EmailChoice(models.TextChoices):
    INSTANT = "instant", "By email at once"
    """One mail per notice, sent off the request path."""
    DIGEST = "digest", "In the daily digest"
    """Gathered into one mail a day (``ARENA_NOTIFY_DIGEST_SECONDS``)."""
    OFF = "off", "No email"
    """Only in the site."""


#: each kind's email default: high-volume kinds go to the digest, not one mail each; every
#: other kind, "registration opened" included (a registration window may be shorter than a
#: day), by email at once
EMAIL_DEFAULTS = {
    NotificationKind.LADDER_RESULT: EmailChoice.DIGEST,
    NotificationKind.CHALLENGED: EmailChoice.DIGEST,
    NotificationKind.CHALLENGE_RESULT: EmailChoice.DIGEST,
}


class Notification(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=32, choices=NotificationKind.choices)
    text = models.CharField(max_length=500)
    link = models.CharField(max_length=300, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    read = models.BooleanField(default=False)
    email = models.CharField(
        max_length=8,
        choices=EmailChoice.choices,
        default=EmailChoice.OFF,
        help_text="How it leaves by email (decided when it was made).",
    )
    emailed = models.DateTimeField(null=True, blank=True, help_text="When its mail was sent.")

    class Meta:
        ordering = ("-created", "-id")
        indexes = [
            # the bell: one COUNT on every page
            models.Index(fields=("user",), condition=Q(read=False), name="notification_unread"),
            # the list page and the API, newest first
            models.Index(fields=("user", "-created"), name="notification_user_created"),
            # the digest job: what waits for its mail
            models.Index(
                fields=("user", "created"),
                condition=Q(email="digest", emailed__isnull=True),
                name="notification_digest_due",
            ),
        ]

    def __str__(self) -> str:
        return self.text


class NotificationPreference(models.Model):
    """A user's choice for one kind (no row: the kind's defaults)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_prefs"
    )
    kind = models.CharField(max_length=32, choices=NotificationKind.choices)
    site = models.BooleanField(default=True, help_text="Shown in the site (the bell).")
    email = models.CharField(max_length=8, choices=EmailChoice.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("user", "kind"), name="notification_pref_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.kind} ({self.email})"
