"""The organisers' console: events are set up and run from here; history is read-only."""

from __future__ import annotations

import logging
from collections import Counter

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count, OuterRef, Subquery, Sum
from django.forms.models import BaseInlineFormSet
from django.http import Http404, HttpResponse
from django.urls import path, reverse
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join
from django.utils.http import content_disposition_header
from rest_framework.authtoken import admin as _token_admin  # noqa: F401  (registers TokenProxy)
from rest_framework.authtoken.models import TokenProxy

from competition.bots import services as bot_services
from competition.events import estimate, registration, seasons
from competition.events import ladder as ladders
from competition.events import services as event_services
from competition.events.standings import event_counts
from competition.matches import history
from competition.matches import lifecycle as match_services
from competition.matches.presenters import reason_text
from competition.models import (
    Entry,
    EntryStatus,
    Event,
    EventStatus,
    Ladder,
    LadderSpot,
    Match,
    MatchStatus,
    Participant,
    Rating,
    RatingChange,
    Season,
    SeasonStatus,
    TieDecider,
)
from competition.models.bots import Bot, BotVersion, EndpointKind, readable_bytes
from competition.models.events import MAX_DECIDER_GAMES, MAX_SERIES_LENGTH
from games import all_games, get_game

logger = logging.getLogger(__name__)

#: bots a match search looks up by name before reading their matches
SEARCH_BOTS = 50
#: matches of those bots a search lists (their latest)
SEARCH_MATCHES = 500


def _game_choices() -> list[tuple[str, str]]:
    return [(game.slug, game.title) for game in all_games()]


class GameTitle:
    """A changelist's game column in words: the game's title, never its slug."""

    @admin.display(description="game", ordering="game")
    def game_title(self, obj) -> str:
        try:
            return get_game(obj.game).title
        except KeyError:  # a game no longer installed
            return obj.game


class GameFilter(admin.SimpleListFilter):
    """The games from the registry: Django's filter for a field without choices reads
    ``SELECT DISTINCT game`` over the whole table on every changelist page."""

    title = "game"
    parameter_name = "game"

    def lookups(self, request, model_admin):
        return [(game.slug, game.title) for game in all_games()]

    def queryset(self, request, queryset):
        return queryset.filter(game=self.value()) if self.value() else queryset


# -- events -----------------------------------------------------------------------------


#: a new event's round gap in the admin: time for a hall to read a round's results (an event
#: made elsewhere, e.g. the demo's, plays on at once: the model's default, 0)
HALL_ROUND_GAP = 30
#: a new event's games per pairing in the admin: two, seats swapped, so that neither bot has
#: the first move only (a knockout's level series then plays deciders)
HALL_SERIES_LENGTH = 2


class EventForm(forms.ModelForm):
    game = forms.ChoiceField(choices=_game_choices)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("tie_decider", "decider_games"):  # left out: the defaults
            if name in self.fields:
                self.fields[name].required = False
        if not self.instance.pk and "series_length" in self.fields:
            self.fields["series_length"].initial = HALL_SERIES_LENGTH
        if "round_gap" in self.fields:
            self.fields["round_gap"].required = False  # left empty: 0, at once
            if not self.instance.pk:
                self.fields["round_gap"].initial = HALL_ROUND_GAP
        for name in self.REGISTRATION_DEFAULTS:
            if name in self.fields:
                self.fields[name].required = False

    def clean_round_gap(self):
        return self.cleaned_data.get("round_gap") or 0

    def clean_tie_decider(self):
        return self.cleaned_data.get("tie_decider") or TieDecider.GAMES

    def clean_decider_games(self):
        value = self.cleaned_data.get("decider_games")
        return Event._meta.get_field("decider_games").default if value is None else value

    class Meta:
        model = Event
        fields = (
            "name",
            "game",
            "options",
            "format",
            "table_size",
            "series_length",
            "tie_decider",
            "decider_games",
            "rounds",
            "pace_ms",
            "round_gap",
            "hide_results",
            "freeze_versions",
            "registration_opens",
            "registration_closes",
            "starts_at",
            "max_entries",
            "min_entries",
            "admission",
            "min_rated_games",
            "entries_per_owner",
        )
        help_texts = {
            "series_length": "Games per pairing, seats alternating (at most "
            f"{MAX_SERIES_LENGTH}). {event_services.TIE_BREAK_HELP}",
            "tie_decider": "Single elimination: how a series that ends level is settled. Extra "
            "games: decider games, seats swapped, one at a time until one is won; only when "
            "every decider allowed is drawn too does the higher seed go through (said on the "
            "event page, the big screen and in the notices). Seed at once: the higher seed "
            "goes through with no decider.",
            "decider_games": "Single elimination with extra games: the most decider games a "
            f"level series plays (1 to {MAX_DECIDER_GAMES}) before the higher seed goes through.",
            "rounds": "Swiss: rounds to play (default ceil(log2 entries)). Ladder: series per bot "
            "before it finishes (empty: until cancelled). Free-for-all: rounds of tables "
            "(default: the table size, so that every bot holds every seat).",
            "round_gap": "Seconds between rounds: every format but the ladder plays round by "
            "round, the next round starting this long after the last match of the one before "
            "ended, while the big screen shows its results (0: at once, for an unattended "
            "event).",
            "table_size": "Free-for-all: seats per table (default: the most the game takes); "
            "a two-seat format plays a game of more seats only with 2.",
        }

    def clean(self):
        cleaned = super().clean()
        slug = cleaned.get("game")
        if slug:
            if (
                self.instance.pk
                and self.instance.status != EventStatus.DRAFT
                and slug != self.instance.game
            ):
                self.add_error("game", "The game of a started event cannot change.")
            try:
                game = get_game(slug)
                cleaned["options"] = game.resolve_options(cleaned.get("options") or {})
            except ValueError as exc:
                self.add_error("options", str(exc))
            else:
                if reason := game.endless(cleaned["options"]):
                    self.add_error("options", f"Not for an event: {reason}.")
            if cleaned.get("format"):
                try:
                    event_services.check_format(slug, cleaned["format"], cleaned.get("table_size"))
                except ValidationError as exc:
                    for field, errors in exc.message_dict.items():
                        self.add_error(field if field in self.fields else None, errors)
        if cleaned.get("series_length") == 0:
            self.add_error("series_length", "A pairing plays at least one game.")
        if self.instance.pk and self.instance.status != EventStatus.DRAFT:
            for name in ("series_length", "tie_decider", "decider_games"):
                if name in cleaned and cleaned[name] != getattr(self.instance, name):
                    # its bracket was played by them: a series settled on seed would go back
                    self.add_error(
                        name, "The series and tie policy of a started event cannot change."
                    )
        self._clean_registration(cleaned)
        return cleaned

    #: registration's fields keep their defaults when a form leaves them out
    REGISTRATION_DEFAULTS = {
        "min_entries": 2,
        "admission": "anyone",
        "min_rated_games": 0,
        "entries_per_owner": 1,
    }

    def _clean_registration(self, cleaned: dict) -> None:
        for name, default in self.REGISTRATION_DEFAULTS.items():
            if cleaned.get(name) in (None, ""):
                cleaned[name] = default
        opens, closes = cleaned.get("registration_opens"), cleaned.get("registration_closes")
        starts = cleaned.get("starts_at")
        if closes and not opens:
            self.add_error("registration_opens", "Say when entries open, or leave both empty.")
        if opens and closes and closes <= opens:
            self.add_error("registration_closes", "Entries must close after they open.")
        if starts and closes and closes > starts:
            self.add_error("registration_closes", "Entries must close by the start time.")
        if opens and starts and starts <= opens:
            self.add_error("starts_at", "The event must start after its entries open.")
        if cleaned.get("min_entries") is not None and cleaned["min_entries"] < 2:
            self.add_error("min_entries", "An event needs at least two entries.")


class EntryFormSet(BaseInlineFormSet):
    def clean(self):
        super().clean()
        game = self.instance.game
        held: Counter = Counter()  # entries per owner, for ``Event.entries_per_owner``
        for form in self.forms:
            bot = form.cleaned_data.get("bot") if hasattr(form, "cleaned_data") else None
            if bot is None or form.cleaned_data.get("DELETE"):
                continue
            if bot.game != game:
                form.add_error("bot", f"{bot} does not play {game}.")
            if bot.owner_id is None or form.instance.status == EntryStatus.REFUSED:
                continue
            have = held[bot.owner_id]
            held[bot.owner_id] += 1
            # a new or changed entry past the cap (lowering it keeps the entries already in)
            if have >= self.instance.entries_per_owner and form.has_changed():
                bots = "1 bot" if have == 1 else f"{have} bots"
                form.add_error(
                    "bot",
                    f"{bot.owner} already has {bots} in this event, the most one person may "
                    "enter: raise “Entries per owner” to add more.",
                )


class EntryInline(admin.TabularInline):
    model = Entry
    formset = EntryFormSet
    fields = ("bot", "seed", "active", "status", "entered_by", "frozen_version")
    # a code bot's version, frozen when the event starts; approve or refuse in "Entries"
    readonly_fields = ("frozen_version", "status", "entered_by")
    autocomplete_fields = ("bot",)  # by bot name (the bots' admin searches names and owners)
    verbose_name = "entry"
    verbose_name_plural = "entries"
    extra = 0

    def get_queryset(self, request):
        # the frozen version's number, never its code's bytes
        return super().get_queryset(request).select_related("version").defer("version__data")

    @admin.display(description="Version")
    def frozen_version(self, entry: Entry) -> str:
        """A code bot's version frozen when the event started (``Event.freeze_versions``)."""
        return f"v{entry.version.number}" if entry.version_id else "-"


@admin.register(Entry)
class EntryAdmin(admin.ModelAdmin):
    """The entries users made through registration, approved or refused here (owners are told)."""

    list_display = ("bot", "event", "status", "entered_by", "created")
    list_filter = ("status", "event__status")
    search_fields = ("bot__name", "event__name")
    fields = ("event", "bot", "status", "entered_by", "seed", "active", "created")
    readonly_fields = fields
    actions = ("approve", "refuse")

    def has_add_permission(self, request):
        return False  # entries are added on the event's page or by the users

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("bot", "event", "entered_by")

    @admin.action(description="Approve the selected entries")
    def approve(self, request, queryset):
        changed = sum(registration.decide(entry, True) for entry in queryset)
        self.message_user(request, f"{changed} entr{'y' if changed == 1 else 'ies'} approved.")

    @admin.action(description="Refuse the selected entries")
    def refuse(self, request, queryset):
        changed = sum(registration.decide(entry, False) for entry in queryset)
        self.message_user(request, f"{changed} entr{'y' if changed == 1 else 'ies'} refused.")


def added_message(event: Event, added: int) -> str:
    """What "Add bots" says it did, with the cap on each person's bots it kept to."""
    return (
        f"{event}: {added} entr{'y' if added == 1 else 'ies'} added (at most "
        f"{event.entries_per_owner} per person)."
    )


@admin.register(Event)
class EventAdmin(GameTitle, admin.ModelAdmin):
    form = EventForm
    list_display = ("name", "game_title", "format", "status", "progress", "created")
    list_filter = ("status", GameFilter, "format")
    search_fields = ("name",)
    readonly_fields = (
        "status",
        "round_estimate",
        "showcase",
        "created_by",
        "created",
        "started",
        "finished",
    )
    inlines = (EntryInline,)
    actions = (
        "start",
        "pause",
        "resume",
        "cancel",
        "add_active_bots",
        "requeue_errored",
        "reveal_all",
    )
    change_form_template = "admin/competition/event/change_form.html"

    @admin.display(description="Each round should take")
    def round_estimate(self, obj: Event) -> str:
        """A round's expected duration (``competition/events/estimate.py``), with its basis."""
        guess = estimate.for_event(obj) if obj.pk else None
        if guess is None:
            return "No estimate yet: the game sets no turn limit and has no past matches."
        return f"{guess.text()} ({guess.basis()})"

    def get_urls(self):
        from django.urls import path

        view = self.admin_site.admin_view
        return [
            path("<int:pk>/add-bots/", view(self.add_bots_view), name="event-add-bots"),
            path("<int:pk>/start/", view(self.start_view), name="event-start"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        event = self.get_object(request, object_id)
        extra = dict(extra_context or {})
        if event is not None:
            try:
                extra["builtins"] = sorted(get_game(event.game).builtin_bots)
            except KeyError:
                extra["builtins"] = []
        return super().change_view(request, object_id, form_url, extra)

    def _posted_event(self, request, pk: int) -> Event | None:
        from django.core.exceptions import PermissionDenied

        if request.method != "POST":
            raise PermissionDenied("POST only")
        event = Event.objects.filter(pk=pk).first()
        if event is None or not self.has_change_permission(request, event):
            raise PermissionDenied("No such event")
        return event

    def _back(self, event: Event):
        from django.shortcuts import redirect

        return redirect("admin:competition_event_change", event.pk)

    def add_bots_view(self, request, pk: int):
        """The event page's "Add bots": every active bot users registered for the game, and the
        built-ins the organiser ticked."""
        event = self._posted_event(request, pk)
        added = event_services.add_all_active_bots(event, request.POST.getlist("builtin"))
        self.message_user(request, added_message(event, added))
        return self._back(event)

    def start_view(self, request, pk: int):
        """The event page's "Start" button (as the list's action)."""
        event = self._posted_event(request, pk)
        self.start(request, Event.objects.filter(pk=event.pk))
        return self._back(event)

    def get_queryset(self, request):
        # stored counts (services.standings), not a count over every match of every event
        return super().get_queryset(request).annotate(**event_counts())

    @admin.display(description="progress")
    def progress(self, event: Event) -> str:
        return f"{event.matches_done}/{event.matches_total}"

    def save_model(self, request, obj, form, change):
        if not change and obj.created_by_id is None:
            obj.created_by = request.user
        if change and "hide_results" in form.changed_data and not obj.hide_results:
            # publishing: every hidden match revealed first (rated, the placings told once)
            event_services.reveal_all(Event.objects.get(pk=obj.pk))
            obj.status = Event.objects.values_list("status", flat=True).get(pk=obj.pk)
        super().save_model(request, obj, form, change)

    def save_formset(self, request, form, formset, change):
        super().save_formset(request, form, formset, change)  # in the change view's transaction
        added = [entry.bot for entry in getattr(formset, "new_objects", []) if entry.bot_id]
        if added and formset.model is Entry:  # into a running event: played and told
            locked = Event.objects.select_for_update().get(pk=form.instance.pk)
            event_services.entered_late(locked, added)

    @admin.action(description="Start (schedule the matches)", permissions=["change"])
    def start(self, request, queryset):
        for event in queryset:
            if event.status != EventStatus.DRAFT:
                self.message_user(
                    request,
                    f"{event}: only a draft event can start (it is {event.status}).",
                    messages.WARNING,
                )
                continue
            try:
                created = event_services.start_event(event)
            except ValidationError as exc:
                self.message_user(request, f"{event}: {' '.join(exc.messages)}", messages.ERROR)
                continue
            self.message_user(
                request, f"{event}: started, {created} matches queued.", messages.SUCCESS
            )

    @admin.action(
        description="Pause (hold queued matches; running ones finish)", permissions=["change"]
    )
    def pause(self, request, queryset):
        paused = sum(event_services.pause_event(event) for event in queryset)
        self.message_user(request, f"{paused} event(s) paused.")

    @admin.action(description="Resume", permissions=["change"])
    def resume(self, request, queryset):
        resumed = sum(event_services.resume_event(event) for event in queryset)
        self.message_user(request, f"{resumed} event(s) resumed.")

    @admin.action(description="Cancel (and cancel its queued matches)", permissions=["change"])
    def cancel(self, request, queryset):
        for event in queryset:
            if event.status not in (EventStatus.DRAFT, EventStatus.RUNNING, EventStatus.PAUSED):
                self.message_user(request, f"{event}: already {event.status}.", messages.WARNING)
                continue
            cancelled = event_services.cancel_event(event)
            self.message_user(request, f"{event}: cancelled, with {cancelled} queued match(es).")

    @admin.action(
        description="Add every active bot users registered for the event's game",
        permissions=["change"],
    )
    def add_active_bots(self, request, queryset):
        for event in queryset:
            added = event_services.add_all_active_bots(event)
            self.message_user(request, added_message(event, added))

    @admin.action(description="Requeue errored matches", permissions=["change"])
    def requeue_errored(self, request, queryset):
        errored = Match.objects.filter(event__in=queryset, status=MatchStatus.ERRORED).values_list(
            "id", flat=True
        )
        requeued = sum(match_services.requeue(match_id) for match_id in list(errored))
        self.message_user(request, f"{requeued} errored match(es) requeued.")

    @admin.action(description="Reveal every hidden match (presenter mode)", permissions=["change"])
    def reveal_all(self, request, queryset):
        revealed = sum(event_services.reveal_all(event) for event in queryset)
        self.message_user(request, f"{revealed} match(es) revealed.")


# -- matches ----------------------------------------------------------------------------


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ParticipantInline(ReadOnlyInline):
    model = Participant
    fields = readonly_fields = ("seat", "bot", "score", "result", "cause", "faults")


#: turns shown on a match's admin page (the last ones; the replay has them all)
ADMIN_TURNS = 100
TURN_COLUMNS = ("number", "seats", "faults", "details", "latencies_ms", "forfeited")


def turn_table(match: Match):
    """The last ``ADMIN_TURNS`` turns of ``match`` (no logs: whole messages), read through
    ``matches.history`` so a compacted match shows the same."""
    turns = history.recent(match, ADMIN_TURNS, logs=False)
    if not turns:
        return "No turn stored."
    total = history.last_number(match)
    where = "compacted archive" if history.is_compacted(match) else "turn rows"
    caption = (
        f"The last {len(turns)} of {total} turns ({where}); the replay has them all."
        if total > len(turns)
        else f"{total} turn(s) ({where})."
    )
    head = format_html_join("", "<th>{}</th>", ((name,) for name in TURN_COLUMNS))
    rows = format_html_join(
        "",
        "<tr>{}</tr>",
        (
            (format_html_join("", "<td>{}</td>", ((getattr(t, n),) for n in TURN_COLUMNS)),)
            for t in turns
        ),
    )
    return format_html(
        '<p>{} <a href="{}">Download the replay</a></p><table><thead><tr>{}</tr></thead>'
        "<tbody>{}</tbody></table>",
        caption,
        reverse("api:match-replay", args=[match.pk]),
        head,
        rows,
    )


class CappedPaginator(Paginator):
    """A history changelist's pages counted up to ``CAP`` rows, not ``COUNT(*)`` over millions:
    past the cap it says "more than" and pages its first ``CAP`` (above a page's size)."""

    CAP = 10_000

    @cached_property
    def count(self) -> int:
        return self.object_list.order_by()[: self.CAP + 1].count()  # a count needs no order

    @property
    def capped(self) -> bool:
        return self.count > self.CAP


def bots_named(term: str) -> list[int]:
    """The ids of the first ``SEARCH_BOTS`` bots whose name contains ``term``."""
    return list(Bot.objects.filter(name__icontains=term).values_list("pk", flat=True)[:SEARCH_BOTS])


def latest_matches(bots: list[int]):
    """The ids of the latest ``SEARCH_MATCHES`` matches of ``bots`` on the
    ``Participant(bot, match)`` index, as a subquery, not hundreds of ids as parameters."""
    return (
        Participant.objects.filter(bot_id__in=bots)
        .order_by("-match_id")
        .values("match_id")[:SEARCH_MATCHES]
    )


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Match)
class MatchAdmin(GameTitle, admin.ModelAdmin):
    list_display = ("id", "game_title", "event", "status", "reason_text", "turn_count", "created")

    @admin.display(description="reason", ordering="reason")
    def reason_text(self, match: Match) -> str:
        return reason_text(match.game, match.reason)

    list_filter = ("status", GameFilter, "event")
    list_select_related = ("event",)
    search_fields = ("=id", "participants__bot__name")
    show_full_result_count = False
    paginator = CappedPaginator
    list_per_page = 25  # each changelist row costs thousands of Python calls to render
    # matches are read-only here: no filtered list to return to after a save, and keeping the
    # filters in every row's link resolves that link's URL once per row
    preserve_filters = False
    inlines = (ParticipantInline,)

    def get_search_results(self, request, queryset, search_term):
        """An id, or bots by name first, then their latest ``SEARCH_MATCHES`` matches: no DISTINCT
        over a join of every match, no count of a bot's whole history."""
        term = search_term.strip()
        if not term:
            return queryset, False
        if term.isdigit():
            return queryset.filter(pk=int(term)), False
        return queryset.filter(pk__in=latest_matches(bots_named(term))), False

    actions = ("requeue_errored", "cancel")

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in Match._meta.fields] + ["turns"]

    @admin.display(description="Turns")
    def turns(self, obj: Match):
        return turn_table(obj) if obj and obj.pk else ""

    def has_add_permission(self, request) -> bool:
        return False  # matches come from events and challenges

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # history: cancel instead

    @admin.action(description="Requeue errored matches", permissions=["change"])
    def requeue_errored(self, request, queryset):
        ids = list(queryset.filter(status=MatchStatus.ERRORED).values_list("id", flat=True))
        requeued = sum(match_services.requeue(match_id) for match_id in ids)
        self.message_user(request, f"{requeued} errored match(es) requeued.")

    @admin.action(description="Cancel queued or running matches", permissions=["change"])
    def cancel(self, request, queryset):
        ids = list(
            queryset.filter(status__in=(MatchStatus.QUEUED, MatchStatus.RUNNING)).values_list(
                "id", flat=True
            )
        )
        cancelled = sum(
            match_services.cancel(match_id, "cancelled by an organiser") for match_id in ids
        )
        self.message_user(request, f"{cancelled} match(es) cancelled.")


# -- the standing ladders ----------------------------------------------------------------------


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    """Each game's standing ladder and its health; ``paused`` stops its matchmaking (the budget and
    the caps are settings: README, "The standing ladder")."""

    list_display = ("game", "paused", "per_minute", "queued", "running", "bots_in", "bots_out")
    list_editable = ("paused",)
    fields = ("game", "paused")
    readonly_fields = ("game",)

    def has_add_permission(self, request) -> bool:
        return False  # made on first use, one per game

    def changelist_view(self, request, extra_context=None):
        """The ladders' health, and above it how uploaded bots are held to their share."""
        from bots.confinement import describe

        chosen = describe()
        level = messages.WARNING if chosen.mode == "watchdog" else messages.INFO
        self.message_user(request, f"Uploaded bots' sandbox: {chosen.words}.", level=level)
        return super().changelist_view(request, extra_context)

    def _health(self, ladder: Ladder) -> dict:
        cached = getattr(ladder, "_health", None)
        if cached is None:
            cached = ladder._health = ladders.health(ladder)
        return cached

    @admin.display(description="matches in the last minute")
    def per_minute(self, ladder: Ladder) -> int:
        return self._health(ladder)["per_minute"]

    @admin.display(description="queued")
    def queued(self, ladder: Ladder) -> int:
        return self._health(ladder)["queued"]

    @admin.display(description="running")
    def running(self, ladder: Ladder) -> int:
        return self._health(ladder)["running"]

    @admin.display(description="bots in")
    def bots_in(self, ladder: Ladder) -> int:
        return self._health(ladder)["bots_in"]

    @admin.display(description="bots out (taken out, paused, inactive)")
    def bots_out(self, ladder: Ladder) -> int:
        return self._health(ladder)["bots_out"]


@admin.register(LadderSpot)
class LadderSpotAdmin(ReadOnlyAdmin):
    list_display = ("bot", "ladder", "enrolled", "house", "mu", "played", "due", "playing")
    list_filter = ("ladder", "enrolled", "house")
    list_select_related = ("bot", "ladder")
    search_fields = ("bot__name",)


class SeasonForm(forms.ModelForm):
    game = forms.ChoiceField(choices=_game_choices)

    class Meta:
        model = Season
        fields = ("game", "name", "starts", "ends")

    def clean(self):
        data = super().clean()
        starts, ends = data.get("starts"), data.get("ends")
        if self.instance.pk and self.instance.status == SeasonStatus.CURRENT:
            starts = self.instance.starts  # when it started
        if starts and ends and ends <= starts:
            raise ValidationError({"ends": "A season ends after it starts."})
        return data


@admin.register(Season)
class SeasonAdmin(admin.ModelAdmin):
    """The seasons of each game's standing ladder: an upcoming season starts at its start, a
    current one ends at its end (README, "Seasons"), or now, by the actions."""

    form = SeasonForm
    list_display = ("__str__", "name", "status", "starts", "ends", "ended_at", "ranked")
    list_filter = (GameFilter, "status")
    actions = ("end_now", "start_now")

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ("status",)
        fixed = ["game", "number", "status", "ended_at", "ranked"]
        if obj.status != SeasonStatus.UPCOMING:
            fixed.append("starts")
        if obj.status == SeasonStatus.ENDED:
            fixed += ["name", "ends"]
        return fixed

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("game", "name", "starts", "ends")
        return ("game", "number", "name", "status", "starts", "ends", "ended_at", "ranked")

    def save_model(self, request, obj, form, change):
        if not change:
            obj.number = seasons.next_number(obj.game)
        super().save_model(request, obj, form, change)

    def has_delete_permission(self, request, obj=None) -> bool:
        return obj is None or obj.status == SeasonStatus.UPCOMING

    @admin.action(description="End this season now", permissions=["change"])
    def end_now(self, request, queryset):
        for season in queryset.order_by("game", "number"):
            if season.status != SeasonStatus.CURRENT:
                self.message_user(request, f"{season} is not current.", messages.WARNING)
                continue
            following = seasons.end_season(season)
            if following is None:
                self.message_user(request, f"{season} had already ended.", messages.WARNING)
                continue
            season.refresh_from_db()
            self.message_user(
                request,
                f"{season} ended: {season.ranked} bots ranked, their owners told; "
                f"{following} started.",
            )

    @admin.action(description="Start a season", permissions=["change"])
    def start_now(self, request, queryset):
        for game in sorted(set(queryset.values_list("game", flat=True))):
            try:
                started = seasons.start_season(game)
            except ValidationError as exc:
                self.message_user(request, " ".join(exc.messages), messages.WARNING)
            else:
                self.message_user(request, f"{started} started.")


# -- ratings (append-only history) ------------------------------------------------------


@admin.register(Rating)
class RatingAdmin(GameTitle, ReadOnlyAdmin):
    list_display = ("bot", "game_title", "mu", "sigma", "ordinal", "games", "updated")
    list_filter = (GameFilter,)
    list_select_related = ("bot",)
    search_fields = ("bot__name",)

    @admin.display(description="ordinal")
    def ordinal(self, rating: Rating) -> str:
        return f"{rating.ordinal:.2f}"


@admin.register(RatingChange)
class RatingChangeAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "match",
        "bot",
        "mu_before",
        "mu_after",
        "sigma_before",
        "sigma_after",
        "created",
    )
    search_fields = ("bot__name", "=match__id")
    # the newest first, walking the primary key, the bots and matches of a page read after it
    # (two queries): with them joined, SQLite's planner read every bot's steps and sorted all
    # two million of them at a million matches (4.2 s a page, whatever the order)
    list_select_related = ()
    ordering = ("-id",)
    show_full_result_count = False
    paginator = CappedPaginator

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("bot", "match")

    def get_search_results(self, request, queryset, search_term):
        """A match id, or bots by name first, then their steps in their latest ``SEARCH_MATCHES``
        matches: a join on every step's bot name read the whole table."""
        term = search_term.strip()
        if not term:
            return queryset, False
        if term.isdigit():
            return queryset.filter(match_id=int(term)), False
        bots = bots_named(term)
        return queryset.filter(bot_id__in=bots, match_id__in=latest_matches(bots)), False


# -- API tokens: not in the admin ------------------------------------------------------------

# DRF's token admin lists every user's key and adds a key for any user: staff could act as
# anyone through the API. A token is its owner's only (made and rotated on the profile page).
admin.site.unregister(TokenProxy)


# -- bots: the status goes through the one service (competition/bots/services.py) -------------
# a bot's signing secret is never shown, not even to staff (the "rotate" action replaces it; its
# owner reads a new one by rotating it from the bot page or the API)

MASK = "•" * 12


class BotAdminForm(forms.ModelForm):
    """The bot form, its upload through the upload service (rate, checks, storage)."""

    uploader = None  # the staff member uploading (``BotAdmin.get_form``)

    file = forms.FileField(
        required=False,
        label="Upload code",
        help_text="A code bot's next version (required to create one): a .py or .js file, or "
        "a .zip/.tar.gz with an arena.json manifest.",
    )

    class Meta:
        model = Bot
        fields = (
            "owner",
            "game",
            "name",
            "kind",
            "target",
            "status",
            "status_reason",
            "public_debug",
            "source_public",
        )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "target" in self.fields:
            self.fields["target"].required = False  # a code bot's is its file's name

    def clean(self):
        cleaned = super().clean()
        kind, upload = cleaned.get("kind"), cleaned.get("file")
        code = bool(kind) and EndpointKind(kind).takes_uploads
        self.upload = None
        if code and upload:
            bot = self.instance if self.instance.pk else None
            try:
                self.upload = bot_services.read_upload(
                    self.uploader, upload, bot, owner=cleaned.get("owner")
                )
            except ValidationError as exc:
                self.add_error("file", exc.message_dict["file"])
            else:
                cleaned["target"] = self.upload.name
        elif code and not self.instance.pk:
            self.add_error("file", "A code bot needs a file.")
        elif upload:
            self.add_error("file", "Only a code bot takes a file.")
        elif kind and not cleaned.get("target") and "target" not in self.errors:
            self.add_error("target", "This field is required.")
        return cleaned


class BotVersionInline(admin.TabularInline):
    model = BotVersion
    fields = ("number", "filename", "language", "size", "sha256", "created", "download")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-number",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False  # through the form's "Upload code"

    @admin.display(description="Code")
    def download(self, version: BotVersion) -> str:
        url = reverse(
            "admin:competition_bot_version_download", args=(version.bot_id, version.number)
        )
        return format_html('<a href="{}">download</a>', url)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("data", "artefact")


@admin.register(Bot)
class BotAdmin(GameTitle, admin.ModelAdmin):
    """The bots' admin; status changes go through ``set_bot_status``, creation and uploads
    through the bots' services, as the web's and the API's."""

    form = BotAdminForm
    list_display = ("name", "game_title", "owner", "kind", "status", "created")
    # the owner is nullable (platform seats have none): the admin's automatic join follows
    # only non-null keys, so without this each row fetched its owner (a query per bot)
    list_select_related = ("owner",)
    list_filter = (GameFilter, "kind", "status")
    search_fields = ("name", "owner__username", "target")
    readonly_fields = ("signing_secret", "created", "updated")
    actions = ("rotate_secrets",)
    inlines = (BotVersionInline,)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.uploader = request.user  # a class made for this request
        return form

    def get_inlines(self, request, obj):
        """A code bot's versions; other kinds have none (their form posts no versions formset)."""
        return self.inlines if obj is not None and obj.endpoint_kind.takes_uploads else ()

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path(
                "<int:pk>/versions/<int:number>/download/",
                view(self.download_view),
                name="competition_bot_version_download",
            ),
            *super().get_urls(),
        ]

    def download_view(self, request, pk: int, number: int):
        """A version's code as uploaded (staff who may view bots)."""
        if not self.has_view_permission(request):
            raise Http404("No such version")
        version = BotVersion.objects.filter(bot_id=pk, number=number).first()
        if version is None:
            raise Http404("No such version")
        response = HttpResponse(bytes(version.data), content_type="application/octet-stream")
        response["Content-Disposition"] = content_disposition_header(True, version.filename)
        return response

    def get_search_results(self, request, queryset, search_term):
        """An event entry's autocomplete (by bot name) never offers a human seat."""
        queryset, duplicates = super().get_search_results(request, queryset, search_term)
        if request.GET.get("model_name") == "entry":
            queryset = queryset.exclude(kind__in=EndpointKind.people())
        return queryset, duplicates

    def save_model(self, request, bot: Bot, form, change) -> None:
        upload = getattr(form, "upload", None)
        status = None
        if change and {"status", "status_reason"} & set(form.changed_data):
            status = bot.status, bot.status_reason
            bot.status = form.initial.get("status", bot.status)
            bot.status_reason = form.initial.get("status_reason", bot.status_reason)
        with transaction.atomic():
            if not change:
                bot_services.create_bot(bot, upload=upload)
            else:
                super().save_model(request, bot, form, change)
                if upload is not None:
                    bot_services.add_version(bot, upload)
            if upload is not None:
                # (the newest, built or not: ``latest_version`` is the newest that can play)
                number = bot.versions.order_by("-number").values_list("number", flat=True)[0]
                messages.success(request, f"Stored version {number} of {bot.name}.")
            if status is not None:
                bot_services.set_bot_status(bot, *status)

    @admin.display(description="Secret")
    def signing_secret(self, bot: Bot) -> str:
        return f"{MASK} (hidden; rotate to replace)" if bot.secret else "(none)"

    @admin.action(description="Rotate the signing secret of the selected bots")
    def rotate_secrets(self, request, queryset) -> None:
        count = 0
        for bot in queryset:
            bot.rotate_secret()  # shown to nobody here
            count += 1
        messages.success(
            request, f"Rotated {count} secret(s); their owners must rotate again to read one."
        )


# -- users: what each one's uploaded code uses of the caps (competition.models.bots.check_storage) --------

User = get_user_model()
admin.site.unregister(User)


def _per_owner(aggregate) -> Subquery:
    """``aggregate`` over the versions of the row's user's bots, one indexed subquery a row."""
    rows = BotVersion.objects.filter(bot__owner_id=OuterRef("pk")).order_by()
    return Subquery(rows.values("bot__owner_id").annotate(n=aggregate).values("n")[:1])


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    """Django's user admin, with each user's uploaded code: versions and bytes, against
    ``ARENA_CODE_BYTES_PER_USER``."""

    list_display = (*DjangoUserAdmin.list_display, "code_versions", "code_bytes")
    readonly_fields = ("code_usage",)
    fieldsets = (*DjangoUserAdmin.fieldsets, ("Uploaded code", {"fields": ("code_usage",)}))

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                code_versions=_per_owner(Count("id")),
                code_bytes=_per_owner(Sum("size")),
            )
        )

    @admin.display(description="Code versions")
    def code_versions(self, user) -> int:
        return user.code_versions or 0

    @admin.display(description="Code bytes")
    def code_bytes(self, user) -> str:
        return f"{user.code_bytes or 0:,}"

    @admin.display(description="Uses")
    def code_usage(self, user) -> str:
        if user.pk is None:
            return "-"
        used, cap = user.code_bytes or 0, settings.ARENA_CODE_BYTES_PER_USER
        return (
            f"{user.code_versions or 0} versions, {used:,} bytes: "
            f"{readable_bytes(used)} of {readable_bytes(cap)}"
        )
