"""Bots: a user's program for one game, reached through an endpoint (docs/architecture.md)."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from bots import egress
from bots.faults import BotFault
from bots.transports import LOCAL_KINDS, TRANSPORTS, Transport, for_endpoint
from games import get_game


def new_secret() -> str:
    return secrets.token_urlsafe(32)


#: ``Bot.kind``'s choices (HTTP, BUILTIN, PROCESS, TCP, HUMAN), derived from the transports
#: table (``bots.transports.TRANSPORTS``, which documents each kind)
EndpointKind = models.TextChoices(
    "EndpointKind", [(t.kind.upper(), (t.kind, t.label)) for t in TRANSPORTS]
)

#: local bots: a command run on this server, or a port it opens
STAFF_ONLY_KINDS = frozenset(EndpointKind(k) for k in LOCAL_KINDS)


def local_bots_allowed() -> bool:
    """``process:`` and ``tcp:`` bots are refused unless the operator says otherwise."""
    return bool(getattr(settings, "ARENA_ALLOW_LOCAL_BOTS", False))


def registrable_kinds(*, staff: bool) -> tuple[EndpointKind, ...]:
    """The kinds a user may register (the bot form, the API): URLs for everyone; built-ins
    for staff; local bots for staff when ``ARENA_ALLOW_LOCAL_BOTS`` is on; human seats for
    nobody (the play page makes them)."""
    allowed = {"everyone"}
    if staff:
        allowed |= {"staff", "local"} if local_bots_allowed() else {"staff"}
    return tuple(EndpointKind(t.kind) for t in TRANSPORTS if t.register in allowed)


class BotStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    """Plays in events and challenges."""
    PAUSED = "paused", "Paused"
    """Stopped by the platform (bot health) or its owner; can be resumed."""
    INACTIVE = "inactive", "Inactive"
    """Deactivated by its owner; kept for history."""


def validate_endpoint(game_slug: str, kind: str, target: str, *, staff: bool) -> None:
    """Raise ``ValidationError`` unless (kind, target) is a usable endpoint for the game."""
    try:
        game = get_game(game_slug)
    except KeyError:
        raise ValidationError({"game": f"Unknown game {game_slug!r}."}) from None
    if kind in STAFF_ONLY_KINDS and not staff:
        raise ValidationError({"kind": "Only staff may create process or TCP bots."})
    if kind in STAFF_ONLY_KINDS and not local_bots_allowed():
        raise ValidationError(
            {"kind": "Process and TCP bots are disabled on this server (ARENA_ALLOW_LOCAL_BOTS)."}
        )
    if kind == EndpointKind.HTTP:
        try:
            egress.check_url(target, egress.current_policy())
        except BotFault as fault:
            raise ValidationError({"target": f"This URL cannot be used: {fault.detail}."}) from None
    elif kind == EndpointKind.BUILTIN:
        if target not in game.builtin_bots:
            known = ", ".join(sorted(game.builtin_bots))
            raise ValidationError({"target": f"No built-in bot {target!r} (known: {known})."})
    elif kind in STAFF_ONLY_KINDS and not target.strip():
        raise ValidationError({"target": "A command or HOST:PORT is required."})


class BotQuerySet(models.QuerySet):
    def active(self):
        return self.filter(status=BotStatus.ACTIVE)

    def for_game(self, slug: str):
        return self.filter(game=slug)


class Bot(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots"
    )
    game = models.CharField(max_length=32, help_text="The game's slug (see games.registry).")
    name = models.CharField(max_length=80)
    kind = models.CharField(max_length=16, choices=EndpointKind.choices, default=EndpointKind.HTTP)
    target = models.CharField(
        max_length=2000, help_text="URL, built-in strategy name, command or HOST:PORT."
    )
    secret = models.CharField(max_length=64, default=new_secret, editable=False)
    status = models.CharField(max_length=16, choices=BotStatus.choices, default=BotStatus.ACTIVE)
    status_reason = models.CharField(max_length=300, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    test_called = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When its owner last test-called it (rate limit).",
    )

    objects = BotQuerySet.as_manager()

    class Meta:
        ordering = ("game", "name")
        constraints = [
            models.UniqueConstraint(
                fields=("owner", "game", "name"), name="bot_unique_name_per_owner"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.game})"

    def clean(self) -> None:
        validate_endpoint(
            self.game, self.kind, self.target, staff=bool(self.owner_id and self.owner.is_staff)
        )

    def claim_test_call(self, interval: timedelta) -> bool:
        """Take the bot's test-call slot: True at most once per ``interval``, whatever the
        number of sessions, threads or web nodes asking at once (one conditional UPDATE in
        the shared database; the row count says who won)."""
        now = timezone.now()
        free = Q(test_called__isnull=True) | Q(test_called__lte=now - interval)
        return Bot.objects.filter(free, pk=self.pk).update(test_called=now) == 1

    @property
    def endpoint(self) -> str:
        return self.target if self.kind == EndpointKind.HTTP else f"{self.kind}:{self.target}"

    def transport(
        self, *, seat: int, seed: int, match_id: str, options: dict | None = None
    ) -> Transport:
        return for_endpoint(
            self.endpoint,
            game=get_game(self.game),
            seat=seat,
            seed=seed,
            match_id=match_id,
            secret=self.secret,
            options=options,
        )
