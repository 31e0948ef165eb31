"""Event services: start an event, progress it as matches finish, standings, bracket.

What differs between formats (round robin, double round robin, Swiss, single elimination,
the continuous ladder, free-for-all) lives in their classes (``competition.events.formats``:
``formats.of(event)``); this module runs the steps every format shares, in one transaction
with the event row locked, and asks the format what to do: ``start`` at ``start_event``,
``advance`` after each result and each organiser action, ``rank_keys`` for the standings,
``bracket`` for ``bracket_view``. Pairing decisions are pure (``competition.events.pairing``);
``competition.events.scheduling`` persists them as matches (a *series*: ``series_length``
matches sharing ``(round, pairing)``, seats alternating).

Seats (``check_format``): the format's ``check_seats`` (a two-seat format refuses a game that
cannot seat two, and a game of more seats unless ``table_size`` is 2; a free-for-all's
``table_size`` lies within the game's seat range).

Paused or inactive bots (and inactive entries) are never paired in a new round or ladder
series.

Standings (``standings``): by the format's keys (``Format.rank_keys``; by default points per
series, won 1, drawn ½, lost 0, a bye 1, then games won; Swiss puts Buchholz between them,
elimination ranks by the round reached then seed, the ladder by rating ordinal first), then
head-to-head points among the tied entries, then name.

Bot health: a bot whose last ``ARENA_BOT_HEALTH_FORFEITS`` matches (since it was last
changed or resumed) were all forfeited for ``connect`` or ``timeout`` is paused inside the
finish transaction (``check_bot_health``); its owner resumes it with ``resume_bot``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from bots.faults import FaultCode
from bots.models import PLATFORM_OWNER, Bot, BotStatus, EndpointKind, platform_seat
from competition.events import formats, pairing, scheduling
from competition.events import standings as stored
from competition.events.pairing import SERIES_TIE_BREAK
from competition.events.scheduling import eligible
from competition.events.series import (  # noqa: F401 (services' public names)
    PENDING,
    Series,
    _results,
    load_series,
    parse_series_key,
    public_series,
    series_key,
    table_key,
)
from competition.live import broadcast, notify
from competition.models import (
    Entry,
    Event,
    EventStatus,
    LadderSpot,
    Match,
    MatchStatus,
    NotificationKind,
    Participant,
    RatingChange,
)
from competition.models.matches import hidden
from competition.prepared import Prepared
from competition.ratings import services as ratings
from games import get_game

logger = logging.getLogger(__name__)

HEALTH_CAUSES = (FaultCode.CONNECT.value, FaultCode.TIMEOUT.value)
OPEN_STATES = (EventStatus.DRAFT, EventStatus.RUNNING, EventStatus.PAUSED)
#: for the Event admin: how a drawn series is decided
TIE_BREAK_HELP = SERIES_TIE_BREAK


def check_format(game_slug: str, fmt: str, size: int | None) -> None:
    """``ValidationError`` (by field) when ``fmt`` cannot play ``game_slug`` with tables of
    ``size`` seats (None: the default)."""
    try:
        low, high = get_game(game_slug).seats
    except KeyError:
        raise ValidationError({"game": f"Unknown game {game_slug!r}."}) from None
    cls = formats.get(fmt)
    if cls is None:
        raise ValidationError({"format": f"Unknown format {fmt!r}."})
    cls.check_seats(low, high, size)


# -- entries ----------------------------------------------------------------------------------


_ENTRY_VALUES = Prepared(
    lambda event: (
        Entry.objects.filter(event_id=event)
        .order_by("seed", "id")
        .values_list(
            "bot_id", "bot__name", "bot__owner_id", "bot__owner__username", "seed", "active"
        )
    )
)


def _entry_values(event: Event) -> list[tuple]:
    """``scheduling.entries`` as plain values, in the same order: (bot, its name, owner id, owner's
    username, seed, active) per entry; one statement, no model built (the standings of a
    busy ladder are read on every finish and page)."""
    return _ENTRY_VALUES(event.pk)


# -- start and progress -----------------------------------------------------------------------


def start_event(event: Event) -> int:
    """Schedule an event's first matches (every format); returns the matches created.

    Only a draft event starts (0 otherwise). Raises ``ValidationError`` with fewer than two
    eligible entries (active entries of active bots).
    """
    with transaction.atomic():
        event = Event.objects.select_for_update().get(pk=event.pk)
        if event.status != EventStatus.DRAFT:
            return 0
        entries = scheduling.entries(event)
        if sum(1 for e in entries if eligible(e)) < 2:
            raise ValidationError("An event needs at least two active entries of active bots.")
        check_format(event.game, event.format, event.table_size)
        event.status = EventStatus.RUNNING
        event.started = timezone.now()
        event.save(update_fields=["status", "started"])
        freeze_versions(event)
        created = formats.of(event).start(entries)
        _broadcast_standings(event)
    logger.info("event %s (%s) started with %s matches", event.pk, event.format, created)
    return created


def freeze_versions(event: Event) -> int:
    """Record on each entry of a code bot the version it plays in ``event`` (its latest
    now), when the event freezes versions (``Event.freeze_versions``); returns the entries
    frozen. Entries frozen already keep theirs."""
    if not event.freeze_versions:
        return 0
    entries = Entry.objects.filter(
        event=event, version__isnull=True, bot__kind=EndpointKind.CODE
    ).select_related("bot")
    from competition.matches.lifecycle import seat_versions

    frozen = []
    entries = list(entries)
    chosen = seat_versions([e.bot for e in entries])
    for entry in entries:
        if entry.bot_id in chosen:
            entry.version_id = chosen[entry.bot_id]
            frozen.append(entry)
    Entry.objects.bulk_update(frozen, ["version"])
    return len(frozen)


def on_match_finished(match: Match) -> None:
    """Called inside the finish transaction of an event's match: schedule what is due,
    finish the event when it is over, broadcast the standings after commit."""
    event = Event.objects.select_for_update().get(pk=match.event_id)
    stored.sync_series(event, match.round, match.pairing)
    _advance(event)
    if event.showcase:
        from competition.events import showcase

        showcase.prune(event)
    _broadcast_standings(event)


def advance_event(event: Event) -> int:
    """Schedule whatever is due now (e.g. after an organiser cancelled or requeued matches);
    returns the matches created."""
    with transaction.atomic():
        event = Event.objects.select_for_update().get(pk=event.pk)
        stored.sync_open(event)
        created = _advance(event)
        _broadcast_standings(event)
    return created


def _advance(event: Event) -> int:
    """The locked event's next step (``Format.advance``); returns matches created."""
    if event.status != EventStatus.RUNNING:
        return 0
    try:
        fmt = formats.of(event)
    except LookupError:
        logger.error("event %s: unknown format %r", event.pk, event.format)
        return 0
    return fmt.advance()


# -- organiser actions --------------------------------------------------------------------------


def pause_event(event: Event) -> bool:
    """Stop scheduling new matches (queued and running ones still play)."""
    return bool(
        Event.objects.filter(pk=event.pk, status=EventStatus.RUNNING).update(
            status=EventStatus.PAUSED
        )
    )


def resume_event(event: Event) -> bool:
    """Resume a paused event: schedule what became due meanwhile (a ladder's new series, a
    Swiss round, elimination series) or finish it if everything ended while paused."""
    with transaction.atomic():
        if not Event.objects.filter(pk=event.pk, status=EventStatus.PAUSED).update(
            status=EventStatus.RUNNING
        ):
            return False
        locked = Event.objects.select_for_update().get(pk=event.pk)
        stored.sync_open(locked)
        _advance(locked)
        _broadcast_standings(locked)
    return True


def cancel_event(event: Event, reason: str = "event cancelled") -> int:
    """Cancel an open event and its queued matches; returns the matches cancelled."""
    from competition.matches.lifecycle import cancel

    with transaction.atomic():
        locked = Event.objects.select_for_update().get(pk=event.pk)
        if locked.status not in OPEN_STATES:
            return 0
        locked.status = EventStatus.CANCELLED
        locked.finished = timezone.now()
        locked.save(update_fields=["status", "finished"])
        queued = list(locked.matches.filter(status=MatchStatus.QUEUED).values_list("id", flat=True))
        cancelled = sum(cancel(match_id, reason, advance=False) for match_id in queued)
        stored.sync_open(locked)
        _broadcast_standings(locked)
    return cancelled


def add_all_active_bots(event: Event, builtins: Iterable[str] = ()) -> int:
    """Enter every active bot registered by a user for the event's game not yet entered (a
    draft event, or a running or paused ladder), then the platform's built-in strategies
    named in ``builtins`` (the organiser's choice; never a human seat); returns the entries
    added."""
    builtins = [name for name in builtins if name in get_game(event.game).builtin_bots]
    for name in builtins:
        platform_seat(event.game, EndpointKind.BUILTIN, name)
    with transaction.atomic():
        locked = Event.objects.select_for_update().get(pk=event.pk)
        late = formats.of(locked).late_entries and locked.status in OPEN_STATES
        if locked.status != EventStatus.DRAFT and not late:
            return 0
        present = set(locked.entries.values_list("bot_id", flat=True))
        seed = (locked.entries.aggregate(top=Max("seed"))["top"] or 0) + 1
        new = []
        candidates = Bot.objects.active().for_game(locked.game).exclude(pk__in=present)
        users = candidates.of_users().exclude(kind=EndpointKind.HUMAN)
        named = candidates.platform().filter(kind=EndpointKind.BUILTIN, target__in=builtins)
        for bot in [*users.order_by("id"), *named.order_by("target")]:
            new.append(Entry(event=locked, bot=bot, seed=seed))
            seed += 1
        Entry.objects.bulk_create(new, ignore_conflicts=True)
        if new and locked.status == EventStatus.RUNNING:
            freeze_versions(locked)  # a ladder's newcomer plays what it has on entering
            _advance(locked)
    return len(new)


# -- bot health ---------------------------------------------------------------------------------


def check_bot_health(participants: list[Participant]) -> list[int]:
    """Pause every bot of ``participants`` whose last K rated matches with a result (since
    the bot was last changed or resumed; friendly matches are not counted) were all
    forfeited for ``connect`` or ``timeout`` (K = ``ARENA_BOT_HEALTH_FORFEITS``; 0 disables).
    Runs inside the finish transaction. Returns the ids of the bots paused."""
    k = settings.ARENA_BOT_HEALTH_FORFEITS
    paused = []
    if k <= 0:
        return paused
    for bot_id in sorted({p.bot_id for p in participants if p.cause in HEALTH_CAUSES}):
        bot = Bot.objects.select_for_update().get(pk=bot_id)
        if bot.status != BotStatus.ACTIVE:
            continue
        causes = list(
            Participant.objects.filter(
                bot_id=bot_id,
                match__status__in=MatchStatus.with_result(),
                match__rated=True,
                match__finished__gte=bot.updated,
            )
            .order_by("-match__finished", "-match_id")
            .values_list("cause", flat=True)[:k]
        )
        if len(causes) < k or any(c not in HEALTH_CAUSES for c in causes):
            continue
        why = ", ".join(sorted(set(causes)))
        bot.status = BotStatus.PAUSED
        bot.status_reason = f"paused after {k} consecutive forfeits ({why})"
        bot.save(update_fields=["status", "status_reason", "updated"])
        paused.append(bot_id)
        notify.notify(
            bot.owner_id,
            NotificationKind.BOT_PAUSED,
            f"{bot.name} was {bot.status_reason}: it plays no new match until you resume it "
            "from its page (check that its server answers first).",
            f"/bots/{bot.pk}/",
        )
        logger.warning("bot %s %s", bot_id, bot.status_reason)
    return paused


def set_bot_status(bot: Bot, status: BotStatus, reason: str = "") -> bool:
    """The one way web, API and admin change a bot's status (bot health pauses inside the
    finish). True if it changed. A bot that becomes active starts its consecutive-forfeit count
    again, the events waiting for it (a ladder, a Swiss round) schedule at once, and its
    standing ladder may pair it at its next step."""
    with transaction.atomic():
        before = Bot.objects.filter(pk=bot.pk).values_list("status", flat=True).first()
        changed = (
            Bot.objects.filter(pk=bot.pk)
            .exclude(status=status, status_reason=reason)
            .update(status=status, status_reason=reason, updated=timezone.now())
        )
        if changed and before != status:
            _status_notice(bot, before, status, reason)
        if changed and status == BotStatus.ACTIVE:
            # its standing ladder may pair it at the next step (it was put back while out)
            now = timezone.now()
            LadderSpot.objects.filter(bot=bot, due__gt=now).update(due=now)
            waiting = Event.objects.filter(
                entries__bot=bot,
                entries__active=True,
                status=EventStatus.RUNNING,
                format__in=formats.waiting_for_bots(),
            ).values_list("pk", flat=True)
            for event_id in list(waiting):
                locked = Event.objects.select_for_update().get(pk=event_id)
                _advance(locked)
    bot.refresh_from_db(fields=["status", "status_reason", "updated"])
    return bool(changed)


def _status_notice(bot: Bot, before: str, status: str, reason: str) -> None:
    """Tell the owner their bot was paused (and why) or plays again."""
    why = f": {reason}" if reason else ""
    if status == BotStatus.PAUSED:
        text = f"{bot.name} was paused{why}."
        notify.notify(bot.owner_id, NotificationKind.BOT_PAUSED, text, f"/bots/{bot.pk}/")
    elif status == BotStatus.ACTIVE and before == BotStatus.PAUSED:
        text = f"{bot.name} was resumed and plays again{why}."
        notify.notify(bot.owner_id, NotificationKind.BOT_RESUMED, text, f"/bots/{bot.pk}/")


def resume_bot(bot: Bot) -> bool:
    """The owner's resume of a paused bot (False if it was not paused)."""
    with transaction.atomic():
        if not Bot.objects.select_for_update().filter(pk=bot.pk, status=BotStatus.PAUSED).exists():
            return False
        return set_bot_status(bot, BotStatus.ACTIVE)


# -- standings and bracket -----------------------------------------------------------------------


def reveal(match_id: int) -> bool:
    """The presenter's reveal of one ended match of an event hiding its results
    (``Event.hide_results``): mark it revealed, rate it now (its rating waited for this:
    ``lifecycle.finish``), and publish its end and the event's public standings. False when
    it is not such a match, or already revealed."""
    from competition.matches.presenters import match_json

    with transaction.atomic():
        match = (
            Match.objects.select_for_update()
            .filter(
                pk=match_id,
                revealed_at__isnull=True,
                status__in=MatchStatus.done(),
                event__hide_results=True,
            )
            .first()
        )
        if match is None:
            return False
        match.revealed_at = timezone.now()
        match.save(update_fields=["revealed_at"])
        participants = list(match.participants.select_related("bot", "bot__owner").order_by("seat"))
        if not RatingChange.objects.filter(match=match).exists():
            ratings.apply_match(match, participants)
        summary = match_json(match, participants)
        transaction.on_commit(lambda: broadcast.match_finished(summary))
        _broadcast_standings(match.event)
    return True


def reveal_all(event: Event) -> int:
    """Reveal every ended match of ``event`` still hidden, in reveal order (round, then id):
    before an organiser turns ``hide_results`` off, so that every match is rated."""
    waiting = event.matches.filter(hidden(), status__in=MatchStatus.done()).order_by("round", "id")
    return sum(reveal(match_id) for match_id in list(waiting.values_list("pk", flat=True)))


def _broadcast_standings(event: Event) -> None:
    """The standings (and an elimination's bracket) to the event's watchers after commit:
    computed once here, whatever the number of watchers; the bracket only when watched."""
    table = standings(event)
    watched = broadcast.listened(broadcast.event_group(event.pk))
    bracket = bracket_view(event) if watched else None

    def send():
        broadcast.standings_changed(event.pk, table)
        if bracket is not None:
            broadcast.bracket_changed(event.pk, bracket)

    transaction.on_commit(send)


def public_source(event: Event) -> stored.Recomputed | None:
    """What the public standings of ``event`` read: None for the stored rows (nothing
    hidden), or, while a match of an event hiding its results waits for its reveal
    (``models.matches.hidden``), the standings rebuilt from its revealed matches alone (a
    presented final has few matches; its stored rows already count the hidden ones)."""
    if not event.hide_results or not event.matches.filter(hidden()).exists():
        return None
    return stored.recompute(event, public_series(event))


def standings(event: Event, *, everything: bool = False) -> list[dict]:
    """One row per entry, best first, with ``rank`` (see the module docstring for the order):
    what the public may see (``public_source``), or with ``everything`` (staff) the stored
    standings whatever is hidden.

    Row keys: bot, name, owner, seed, active, points (series points, byes included), score
    (total game score), wins/draws/losses/games (games), series (finished series), byes,
    buchholz (Swiss), reached (elimination: the round reached; the champion one more than
    the final), rating (mu, sigma, ordinal, games, provisional), rank.
    """
    source = None if everything else public_source(event)
    if source is None:
        kept = stored.sums(event)
    else:
        kept = source.standings
    rows: dict[int, dict] = {}
    for bot_id, name, owner_id, owner, seed, active in _entry_values(event):
        sums = kept.get(bot_id)
        rows[bot_id] = {
            "bot": bot_id,
            "name": name,
            "owner": owner if owner_id else PLATFORM_OWNER,
            "seed": seed,
            "active": active,
            "points": float(sums["points"]) if sums else 0.0,
            "score": float(sums["score"]) if sums else 0.0,
            "wins": sums["wins"] if sums else 0,
            "draws": sums["draws"] if sums else 0,
            "losses": sums["losses"] if sums else 0,
            "games": sums["games"] if sums else 0,
            "series": sums["series"] if sums else 0,
            "byes": sums["byes"] if sums else 0,
        }
    rated = ratings.for_bots(rows)
    for bot_id, row in rows.items():
        row["rating"] = rated[bot_id]
    names = {bot_id: row["name"] for bot_id, row in rows.items()}
    keys = formats.of(event).rank_keys(rows, source)
    counted = defaultdict(int)
    for k in keys.values():
        counted[k] += 1
    tied = [b for b, k in keys.items() if counted[k] > 1]
    if source is None:
        h2h = stored.head_to_head_results(event, tied)
    else:
        h2h = [
            pairing.SeriesResult(bot, other, points, 0.0)
            for (bot, other), points in source.h2h.items()
            if bot in tied and other in tied
        ]
    order = pairing.rank(list(rows), keys, h2h, names)
    table = []
    for position, bot_id in enumerate(order, start=1):
        rows[bot_id]["rank"] = position
        table.append(rows[bot_id])
    return table


def champion(event: Event) -> dict | None:
    """The winner of a finished event (the top of its standings), or None."""
    if event.status != EventStatus.FINISHED:
        return None
    table = standings(event)
    return table[0] if table else None


def bracket_view(event: Event, *, everything: bool = False) -> dict | None:
    """The event's bracket as JSON (``Format.bracket``: a single elimination's; None for a
    format without one), from the public series or (``everything``, staff) the stored ones."""
    fmt = formats.of(event)
    if not fmt.has_bracket:
        return None
    hiding = not everything and public_source(event) is not None
    return fmt.bracket(public_series(event) if hiding else load_series(event))
