from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from bots.faults import public_details
from competition.models.choices import FaultCode, MatchStatus, SeatResult
from competition.models.filters import MatchFilters


def hidden(prefix: str = "") -> Q:
    """The one definition of a match the public may not see yet (an event's, unrevealed); a
    subquery, not a join, so a history page keeps its index order."""
    from competition.models.events import Event

    hiding = Event.objects.filter(hide_results=True).values("pk")
    return Q(**{f"{prefix}event_id__in": hiding, f"{prefix}revealed_at__isnull": True})


def practice(prefix: str = "") -> Q:
    """The one definition of practice: a match a user made (a challenge, a fork, the bench),
    neither an event's nor the standing ladder's. Never rated: only the matches the platform
    pairs are (``ratings.services.rateable``; ``practice_match`` is this test on a row)."""
    return Q(
        **{
            f"{prefix}created_by__isnull": False,
            f"{prefix}event__isnull": True,
            f"{prefix}ladder__isnull": True,
        }
    )


def practice_match(created_by_id, event_id, ladder_id) -> bool:
    """``practice`` on the values of one match (before it is stored, or as loaded)."""
    return created_by_id is not None and event_id is None and ladder_id is None


def judges_health(prefix: str = "") -> Q:
    """The matches whose forfeits count toward their bots' health: the rated ones, and practice
    under the game's own conditions (not ``friendly``). ``Match.judges_health`` on a row."""
    return Q(**{f"{prefix}rated": True}) | (practice(prefix) & Q(**{f"{prefix}friendly": False}))


def sees_hidden(user) -> bool:
    """Staff (the organisers) see every match, revealed or not."""
    return bool(user is not None and getattr(user, "is_staff", False))


#: a match's kind in a query (the metrics' ``kind`` label; ``Match.kind`` for one in memory)
MATCH_KIND = models.Case(
    models.When(event__isnull=False, then=models.Value("event")),
    models.When(ladder__isnull=False, then=models.Value("ladder")),
    models.When(created_by__isnull=False, then=models.Value("challenge")),
    default=models.Value("other"),
    output_field=models.CharField(),
)


class MatchQuerySet(models.QuerySet):
    def public(self):
        """What anyone may see: every match but the hidden ones (``hidden``)."""
        return self.exclude(hidden())

    def visible_to(self, user):
        """Public to watch, hidden matches staff only; per-turn logs are filtered separately."""
        return self if sees_hidden(user) else self.public()

    def queued(self):
        return self.filter(status=MatchStatus.QUEUED)

    def due(self, now=None):
        """Queued matches a worker may start now. The one definition of "due": the claim's SQL is
        compiled from it, so it filters the match row itself (paused events in a subquery)."""
        from competition.models.choices import EventStatus
        from competition.models.events import Event

        now = now or timezone.now()
        return (
            self.queued()
            .filter(models.Q(not_before__isnull=True) | models.Q(not_before__lte=now))
            .exclude(event__in=Event.objects.filter(status=EventStatus.PAUSED).values("pk"))
        )

    def running(self):
        return self.filter(status=MatchStatus.RUNNING)

    def expired(self, now=None):
        return self.filter(status=MatchStatus.RUNNING, lease_expires__lt=now or timezone.now())

    def involving(self, bot_id: int):
        return self.filter(participants__bot_id=bot_id)

    def listed(self, filters: MatchFilters, user, wanted: int):
        """The matches ``filters`` keep that ``user`` may see, newest first from ``filters.before``;
        a bot's or user's are per-bot windows of ``wanted`` rows (cost flat in history)."""
        visible = self.visible_to(user)
        bot_ids = filters.bot_ids()
        if bot_ids is not None:
            seats = Participant.objects.visible_to(user).filter(filters.q("match__"))
            ids = seats.newest_match_ids(bot_ids, filters.before, wanted)
            return visible.filter(pk__in=ids).order_by("-id")
        rows = visible.filter(filters.q())
        if filters.event is not None:
            return rows.latest_finished_first(filters.before)
        if filters.before is not None:
            rows = rows.filter(pk__lt=filters.before)
        return rows.order_by("-id")

    def latest_finished_first(self, before: int | None = None):
        """An event's matches, the latest finished first, on its indexes; ``before``: the keyset."""
        rows = self
        if before is not None:
            cursor = Match.objects.filter(pk=before).values_list("finished", flat=True).first()
            if cursor is None:
                rows = rows.filter(finished__isnull=True, pk__lt=before)
            else:
                rows = rows.filter(
                    Q(finished__lt=cursor)
                    | Q(finished=cursor, pk__lt=before)
                    | Q(finished__isnull=True)
                )
        return rows.order_by(F("finished").desc(nulls_last=True), "-id")


class Match(models.Model):
    game = models.CharField(max_length=32, db_index=True)
    options = models.JSONField(default=dict, blank=True, help_text="Resolved game options.")
    seed = models.BigIntegerField(default=0)
    status = models.CharField(
        max_length=16, choices=MatchStatus.choices, default=MatchStatus.QUEUED, db_index=True
    )
    reason = models.CharField(
        max_length=40, blank=True, help_text="The outcome's reason (game-specific)."
    )
    event = models.ForeignKey(
        "competition.Event", null=True, blank=True, on_delete=models.CASCADE, related_name="matches"
    )
    round = models.PositiveIntegerField(null=True, blank=True)
    pairing = models.CharField(max_length=200, blank=True, help_text="Series key within an event.")
    game_in_series = models.PositiveSmallIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)
    queued_at = models.DateTimeField(default=timezone.now, help_text="When it was last (re)queued.")
    not_before = models.DateTimeField(
        null=True, blank=True, help_text="Not played before this time."
    )
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    lease_token = models.UUIDField(null=True, blank=True)
    lease_expires = models.DateTimeField(null=True, blank=True, db_index=True)
    worker = models.CharField(max_length=120, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Times a worker claimed it.")
    platform_failures = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text="Why it errored or was requeued.")
    turn_count = models.PositiveIntegerField(default=0)
    pace_ms = models.PositiveIntegerField(
        default=0, help_text="Minimum duration of a turn (for watchable demos)."
    )
    rated = models.BooleanField(
        default=True,
        help_text="False for practice (a match a user made: a challenge, a fork, the bench), "
        "bots of one owner or a showcase: not rated, not counted for bot health.",
    )
    friendly = models.BooleanField(
        default=False,
        help_text="A match a user made under conditions of their choosing (options other than the "
        "game's defaults, a fork's start, the bench): its forfeits never count toward a bot's "
        "health, so nobody can pause someone else's bot by the options they pick.",
    )
    stored_bytes = models.PositiveBigIntegerField(
        default=0,
        help_text="JSON bytes of its stored turns (the runner's counter for ARENA_MATCH_MAX_BYTES).",
    )
    revealed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the presenter revealed it (an event hiding its results until then).",
    )
    forked_from = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="forks",
        help_text="The match this one was forked from (it starts from that match's state "
        "after fork_turn).",
    )
    fork_turn = models.PositiveIntegerField(
        null=True, blank=True, help_text="The origin's turn whose position this match starts from."
    )
    ladder = models.ForeignKey(
        "competition.Ladder",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="matches",
        help_text="The standing ladder that made it (None for every other match).",
    )

    #: a new version's report (``competition.events.replays``): the lost or drawn ladder match
    #: this one replays with ``report_version`` in its bot's seat (unrated, off the ladder)
    replay_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="replays",
        help_text="The ladder match this one replays with a new version in its bot's seat.",
    )
    report_version = models.ForeignKey(
        "competition.BotVersion",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="report_matches",
        help_text="The new version whose report this replay is part of.",
    )

    objects = MatchQuerySet.as_manager()

    class Meta:
        ordering = ("-id",)
        indexes = [
            models.Index(fields=("status", "id"), name="match_status_id"),
            # a user's matches queued or running (ARENA_MAX_ACTIVE_MATCHES): those few rows,
            # not a walk of every match the user ever made
            models.Index(fields=("created_by", "status"), name="match_creator_status"),
            # a standing ladder's matches by age (its rate a minute, its queue, a bot's page)
            models.Index(fields=("ladder", "created"), name="match_ladder_created"),
            # a standing ladder's queue (how many of its matches wait for a runner)
            models.Index(fields=("ladder", "status"), name="match_ladder_status"),
            # an event's running/queued/ended matches (event pages, the big screen)
            models.Index(fields=("event", "status", "finished"), name="match_event_status"),
            # an event's latest ended matches, newest first
            models.Index(fields=("event", "finished", "id"), name="match_event_finished"),
            # one series' games (stored standings)
            models.Index(fields=("event", "round", "pairing"), name="match_event_series"),
            # an event's earliest unfinished round (the big screen): the few queued and
            # running matches, not a walk of every match by round
            models.Index(fields=("event", "status", "round"), name="match_event_status_round"),
        ]
        verbose_name_plural = "matches"

    def __str__(self) -> str:
        return f"Match {self.pk} ({self.game}, {self.status})"

    @property
    def kind(self) -> str:
        """What made it: ``event``, ``ladder``, ``challenge`` (a user) or ``other`` (MATCH_KIND)."""
        if self.event_id:
            return "event"
        if self.ladder_id:
            return "ladder"
        return "challenge" if self.created_by_id else "other"

    @property
    def is_done(self) -> bool:
        return self.status in MatchStatus.done()

    @property
    def judges_health(self) -> bool:
        """``judges_health`` on this row."""
        practice = practice_match(self.created_by_id, self.event_id, self.ladder_id)
        return self.rated or (practice and not self.friendly)

    def results_hidden(self) -> bool:
        """Whether this match is ``hidden`` (one query for an event's match not revealed)."""
        if self.event_id is None or self.revealed_at is not None:
            return False
        return type(self).objects.filter(hidden(), pk=self.pk).exists()


class ParticipantQuerySet(models.QuerySet):
    def public(self):
        """Seats of the matches anyone may see (``hidden``): a correlated subquery, not a join, so
        PostgreSQL walks a bot's seats on their index instead of merging with the match table."""
        return self.exclude(Exists(Match.objects.filter(hidden(), pk=OuterRef("match_id"))))

    def visible_to(self, user):
        return self if sees_hidden(user) else self.public()

    def newest_match_ids(self, bot_ids: list[int], before: int | None, wanted: int) -> list[int]:
        """The newest ``wanted`` match ids of ``bot_ids`` below ``before``: at most ``2 *
        wanted`` rows per bot on the ``Participant(bot, match)`` index, merged."""
        seats = self if before is None else self.filter(match_id__lt=before)
        ids: set[int] = set()
        for bot_id in bot_ids:
            rows = seats.filter(bot_id=bot_id).order_by("-match_id")
            ids.update(rows.values_list("match_id", flat=True)[: 2 * wanted])
        return sorted(ids, reverse=True)[:wanted]


class Participant(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="participants")
    seat = models.PositiveSmallIntegerField()
    bot = models.ForeignKey(
        "competition.Bot", on_delete=models.PROTECT, related_name="participations"
    )
    version = models.ForeignKey(
        "competition.BotVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="participations",
        help_text="The uploaded version this seat played (code bots only).",
    )
    score = models.FloatField(null=True, blank=True)
    result = models.CharField(max_length=8, choices=SeatResult.choices, blank=True)
    cause = models.CharField(
        max_length=16,
        choices=FaultCode.choices,
        blank=True,
        help_text="The fault that forfeited this seat.",
    )
    faults = models.PositiveIntegerField(default=0, help_text="Charged faults in this match.")
    #: the match's standing ladder, copied onto its seats (``matches.lifecycle.create_match``)
    #: so a bot's latest ladder seats are one range of an index (``events.ladder.status``)
    ladder = models.ForeignKey(
        "competition.Ladder",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        help_text="The standing ladder that made its match (None for every other match).",
    )

    objects = ParticipantQuerySet.as_manager()

    class Meta:
        ordering = ("match", "seat")
        constraints = [
            models.UniqueConstraint(fields=("match", "seat"), name="participant_unique_seat")
        ]
        # a bot's matches newest first without reading its whole history
        indexes = [
            models.Index(fields=("bot", "match"), name="participant_bot_match"),
            # a version's latest losses (or draws), the replays of its successor's report
            models.Index(fields=("version", "result", "match"), name="participant_version_result"),
            # a bot's latest standing-ladder seats newest first (its page, the ladder API): the
            # ladder's seats only, one range whatever else the bot played
            models.Index(
                fields=("ladder", "bot", "match"),
                condition=Q(ladder__isnull=False),
                name="participant_ladder_bot",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.match_id}#{self.seat} {self.bot}"


class Turn(models.Model):
    """One turn, append-only. Per-seat lists are indexed by seat (None: not asked)."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveIntegerField()
    seats = models.JSONField(default=list)
    actions = models.JSONField(default=list)
    faults = models.JSONField(default=list)
    details = models.JSONField(default=list)
    latencies_ms = models.JSONField(default=list)
    frame = models.JSONField(null=True)
    logs = models.JSONField(
        default=list, help_text="Per seat: what was sent and received (owners only)."
    )
    forfeited = models.JSONField(default=list)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("match", "number")
        constraints = [
            models.UniqueConstraint(fields=("match", "number"), name="turn_unique_number")
        ]

    def __str__(self) -> str:
        return f"Match {self.match_id} turn {self.number}"

    def debug_json(self, seats) -> list:
        """Per visible seat ``{"overlay", "note"}``, or None."""
        logs = self.logs if isinstance(self.logs, list) else []
        out: list = [None] * len(logs)
        for seat, log in enumerate(logs):
            if seat in seats and isinstance(log, dict) and ("debug" in log or "debug_note" in log):
                out[seat] = {"overlay": log.get("debug"), "note": log.get("debug_note", "")}
        return out

    def public_json(self, debug_seats=()) -> dict:
        """What spectators see: no logs; fault details that could name a bot's network location
        are the owner's only."""
        data = self._public()
        if debug_seats:
            debug = self.debug_json(debug_seats)
            if any(entry is not None for entry in debug):
                data["debug"] = debug
        return data

    def _public(self) -> dict:
        return {
            "number": self.number,
            "seats": self.seats,
            "actions": self.actions,
            "faults": self.faults,
            "details": public_details(self.faults, self.details),
            "latencies_ms": self.latencies_ms,
            "frame": self.frame,
            "forfeited": self.forfeited,
        }


#: a turn's stored values in one order, shared by the turn INSERT of the runner
#: (``matches.sql``), the compacted document (``matches.history``) and the relay
TURN_VALUES = (
    "number",
    "seats",
    "actions",
    "faults",
    "details",
    "latencies_ms",
    "frame",
    "logs",
    "forfeited",
)


class TurnArchive(models.Model):
    """A finished match's turns compacted into one compressed document."""

    match = models.OneToOneField(
        Match, primary_key=True, on_delete=models.CASCADE, related_name="archive"
    )
    codec = models.CharField(max_length=16, help_text="How ``data`` is compressed.")
    data = models.BinaryField(help_text="The compressed document of every turn.")
    turns = models.PositiveIntegerField(default=0)
    raw_bytes = models.PositiveBigIntegerField(
        default=0, help_text="Bytes of the document before compression."
    )
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Match {self.match_id} archive ({self.turns} turns)"


__all__ = [
    "TURN_VALUES",
    "Match",
    "Participant",
    "Turn",
    "TurnArchive",
    "hidden",
    "judges_health",
    "practice",
    "practice_match",
    "sees_hidden",
]
