from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from competition.models.choices import (
    EntryStatus,
    EventAdmission,
    EventFormat,
    EventStatus,
    TieDecider,
)
from games import get_game

#: the most games a pairing plays, and the most decider games a knockout's tie may add
MAX_SERIES_LENGTH = 15
MAX_DECIDER_GAMES = 9


class EventQuerySet(models.QuerySet):
    def visible_to(self, user):
        return self  # events are public


class Event(models.Model):
    name = models.CharField(max_length=120)
    game = models.CharField(max_length=32)
    options = models.JSONField(
        default=dict, blank=True, help_text="Game options (validated by the game)."
    )
    format = models.CharField(
        max_length=32, choices=EventFormat.choices, default=EventFormat.ROUND_ROBIN
    )
    series_length = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SERIES_LENGTH)],
        help_text="Games per pairing, seats alternating.",
    )
    tie_decider = models.CharField(
        max_length=8,
        choices=TieDecider.choices,
        default=TieDecider.GAMES,
        help_text="Single elimination: how a series that ends level is settled: decider games "
        "(seats swapped, until one is won), the higher seed only if every decider is drawn; or "
        "the higher seed at once.",
    )
    decider_games = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_DECIDER_GAMES)],
        help_text="Single elimination with decider games: the most deciders a level series "
        "plays before the higher seed goes through.",
    )
    rounds = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Swiss rounds (default: log2 of entries)."
    )
    table_size = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Free-for-all: seats per table (default: the most the game takes).",
    )
    pace_ms = models.PositiveIntegerField(
        default=0, help_text="Minimum duration of a turn (for watchable demos)."
    )
    round_gap = models.PositiveIntegerField(
        default=0,
        help_text="Seconds between the end of a round's last match and the start of the next "
        "(the big screen shows the round's results meanwhile); 0: at once.",
    )
    next_round_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the next round is due (set while a round gap runs; the runners' "
        "periodic loop starts it: competition.events.services.start_due_rounds).",
    )
    showcase = models.BooleanField(
        default=False,
        help_text="A demo showcase (manage.py demo): its matches are unrated practice and only "
        "its latest finished ones are kept (competition.events.showcase).",
    )
    freeze_versions = models.BooleanField(
        default=True,
        help_text="Code bots play the version they had when the event started (uploads made "
        "later wait for the next event); off, each match plays the bot's latest version.",
    )
    status = models.CharField(max_length=16, choices=EventStatus.choices, default=EventStatus.DRAFT)
    hide_results = models.BooleanField(
        default=False,
        help_text="Presenter mode: its matches stay hidden from the public (pages, API, "
        "live streams, standings, ratings) until an organiser reveals them one by one "
        "(on the event's presenter page, linked from its page as “Presenter”, or with the "
        "action “Reveal every hidden match”, which rates them: use it before turning this off).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    registration_opens = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Users enter their bots from then (empty: no registration, the organiser "
        "enters the bots).",
    )
    registration_closes = models.DateTimeField(
        null=True, blank=True, help_text="Entries close then (empty: at the start time)."
    )
    starts_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The event starts by itself then, or is cancelled with fewer than "
        "min_entries approved entries.",
    )
    max_entries = models.PositiveIntegerField(
        null=True, blank=True, help_text="At most that many entries (empty: no cap)."
    )
    entries_per_owner = models.PositiveIntegerField(
        default=1,
        validators=[MinValueValidator(1)],
        help_text="Bots one person may have in the event (their own entries, the admin's and "
        "“Add bots” alike), so that nobody takes its places with many bots.",
    )
    min_entries = models.PositiveIntegerField(
        default=2, help_text="Fewer approved entries at the start time cancel the event."
    )
    admission = models.CharField(
        max_length=16, choices=EventAdmission.choices, default=EventAdmission.ANYONE
    )
    min_rated_games = models.PositiveIntegerField(
        default=0, help_text="With admission by rated games: games a bot must have played."
    )
    registration_announced = models.DateTimeField(
        null=True, blank=True, help_text="When the opening was announced to the game's users."
    )
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    objects = EventQuerySet.as_manager()

    class Meta:
        ordering = ("-created",)
        indexes = [
            models.Index(fields=["next_round_at"], name="event_next_round_at"),
            # the start-time job: drafts whose start time came
            models.Index(fields=("status", "starts_at"), name="event_status_starts_at"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def registration_open(self) -> bool:
        """Whether entries are taken now (a draft between its opening and its close)."""
        if self.status != EventStatus.DRAFT or self.registration_opens is None:
            return False
        now, closes = timezone.now(), self.registration_closes or self.starts_at
        return self.registration_opens <= now and (closes is None or now < closes)

    @property
    def status_text(self) -> str:
        """The status for people: a draft is "Open for entries" while it takes them, else
        "Being prepared" (the code ``draft`` is the organiser's word)."""
        if self.status == EventStatus.DRAFT:
            return "Open for entries" if self.registration_open else "Being prepared"
        return self.get_status_display()

    @property
    def game_title(self) -> str:
        """The game's title, for people (the slug is for URLs and programs)."""
        try:
            return get_game(self.game).title
        except KeyError:  # a game no longer installed
            return self.game


class Entry(models.Model):
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey("competition.Bot", on_delete=models.CASCADE, related_name="entries")
    seed = models.PositiveIntegerField(default=0, help_text="Initial order (1 = top seed).")
    active = models.BooleanField(default=True)
    status = models.CharField(
        max_length=16, choices=EntryStatus.choices, default=EntryStatus.APPROVED
    )
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        help_text="The user who entered it through registration (empty: the organiser).",
    )
    version = models.ForeignKey(
        "competition.BotVersion",
        null=True,
        blank=True,
        on_delete=models.RESTRICT,  # kept while an entry holds it (deleted with its bot)
        related_name="entries",
        help_text="A code bot's version frozen when the event started (freeze_versions).",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("event", "seed", "id")
        verbose_name_plural = "entries"
        constraints = [models.UniqueConstraint(fields=("event", "bot"), name="entry_unique_bot")]

    def __str__(self) -> str:
        return f"{self.bot} in {self.event}"
