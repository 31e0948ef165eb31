"""Event services: the steps every format shares, in one transaction with the event row locked;
the format (``formats.of(event)``) says what to do."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from competition.bots.services import platform_seat
from competition.events import formats, header, pairing, scheduling
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
from competition.live import broadcast
from competition.matches import headtohead
from competition.models import (
    Entry,
    EntryStatus,
    Event,
    EventStatus,
    LadderSpot,
    Match,
    MatchStatus,
    NotificationKind,
    RatingChange,
)
from competition.models.bots import PLATFORM_OWNER, Bot, EndpointKind
from competition.models.matches import hidden
from competition.notifications import event_notices
from competition.plumbing.prepared import Prepared
from competition.ratings import services as ratings
from games import get_game

logger = logging.getLogger(__name__)

OPEN_STATES = (EventStatus.DRAFT, EventStatus.RUNNING, EventStatus.PAUSED)
#: for the Event admin: how a drawn series is decided
TIE_BREAK_HELP = SERIES_TIE_BREAK


def check_format(game_slug: str, fmt: str, size: int | None) -> None:
    """``ValidationError`` when ``fmt`` cannot play ``game_slug`` at tables of ``size``."""
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
    """``scheduling.entries`` as plain values in one statement (read on every finish and page)."""
    return _ENTRY_VALUES(event.pk)


# -- start and progress -----------------------------------------------------------------------


def start_event(event: Event) -> int:
    """Schedule a draft event's first matches (``ValidationError`` below two entries)."""
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
        playing = sum(1 for e in entries if eligible(e))
        # the entrants are told however the event started (its start time, the organiser)
        event_notices.tell_entrants(
            event,
            NotificationKind.EVENT_STARTED,
            f"{event.name} started with {playing} entr{'y' if playing == 1 else 'ies'}.",
        )
    logger.info("event %s (%s) started with %s matches", event.pk, event.format, created)
    return created


def freeze_versions(event: Event) -> int:
    """When the event freezes versions, record each code bot entry's latest (frozen ones stay)."""
    if not event.freeze_versions:
        return 0
    entries = Entry.objects.filter(
        event=event, version__isnull=True, bot__kind__in=EndpointKind.with_uploads()
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
    """In the finish: schedule what is due, finish the event if over, broadcast after commit."""
    event = Event.objects.select_for_update().get(pk=match.event_id)
    stored.sync_series(event, match.round, match.pairing)
    _advance(event)
    if event.showcase:
        from competition.events import showcase

        showcase.prune(event)
    _broadcast_standings(event)


def advance_event(event: Event) -> int:
    """Schedule whatever is due now (after an organiser's action)."""
    with transaction.atomic():
        event = Event.objects.select_for_update().get(pk=event.pk)
        stored.sync_open(event)
        created = _advance(event)
        _broadcast_standings(event)
    return created


def start_due_rounds() -> int:
    """The runners' periodic step: start every round whose gap has passed. Each event is claimed
    with a conditional UPDATE on ``next_round_at``, so two workers never start a round twice."""
    now = timezone.now()
    due = Event.objects.filter(status=EventStatus.RUNNING, next_round_at__lte=now)
    created = 0
    for pk, at in list(due.values_list("pk", "next_round_at")):
        with transaction.atomic():
            claimed = Event.objects.filter(
                pk=pk, status=EventStatus.RUNNING, next_round_at=at
            ).update(next_round_at=None)
            if not claimed:
                continue  # another worker started it
            event = Event.objects.select_for_update().get(pk=pk)
            created += _advance(event)
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
    with transaction.atomic():
        paused = Event.objects.filter(pk=event.pk, status=EventStatus.RUNNING).update(
            status=EventStatus.PAUSED
        )
        if paused:  # the live page's header says so
            _broadcast_standings(Event.objects.get(pk=event.pk))
    return bool(paused)


def resume_event(event: Event) -> bool:
    """Resume a paused event: schedule what became due meanwhile, or finish it."""
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


def owner_entries(event: Event, owner_ids: Iterable[int]) -> dict[int, int]:
    """The entries (not refused) of each of ``owner_ids``'s bots in ``event``: the count
    ``Event.entries_per_owner`` caps (a read of the event's entries, not of any history)."""
    rows = (
        event.entries.exclude(status=EntryStatus.REFUSED)
        .filter(bot__owner_id__in=list(owner_ids))
        .order_by()
        .values_list("bot__owner_id")
        .annotate(n=Count("id"))
    )
    return dict(rows)


def owner_cap_sentence(have: int) -> str:
    """The refusal past ``Event.entries_per_owner``, for the person who has ``have`` bots in."""
    bots = "1 bot" if have == 1 else f"{have} bots"
    return f"You already have {bots} in this event, the most one person may enter."


def owner_cap_refusal(event: Event, owner_id: int) -> str:
    """The refusal if ``owner_id`` may enter no more bots in ``event`` ("" if they may)."""
    have = owner_entries(event, [owner_id]).get(owner_id, 0)
    return owner_cap_sentence(have) if have >= event.entries_per_owner else ""


def add_all_active_bots(event: Event, builtins: Iterable[str] = ()) -> int:
    """Enter every user's active bot of the game not yet in (the oldest first, at most
    ``entries_per_owner`` per owner), then the ``builtins`` strategies."""
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
        users = candidates.of_users().exclude(kind__in=EndpointKind.people())
        named = candidates.platform().filter(kind=EndpointKind.BUILTIN, target__in=builtins)
        users = list(users.order_by("id"))
        held = owner_entries(locked, {bot.owner_id for bot in users})
        for bot in [*users, *named.order_by("target")]:
            if bot.owner_id is not None:
                if held.get(bot.owner_id, 0) >= locked.entries_per_owner:
                    continue
                held[bot.owner_id] = held.get(bot.owner_id, 0) + 1
            new.append(Entry(event=locked, bot=bot, seed=seed))
            seed += 1
        Entry.objects.bulk_create(new, ignore_conflicts=True)
        entered_late(locked, [entry.bot for entry in new])
    return len(new)


def entered_late(event: Event, bots: list[Bot]) -> None:
    """``bots`` were just entered into ``event`` (locked; "Add bots" or the admin's entry list):
    a running event freezes their versions, plays them and tells their owners, once each."""
    if bots and event.status == EventStatus.RUNNING:
        freeze_versions(event)  # a ladder's newcomer plays what it has on entering
        _advance(event)
        event_notices.entered_late(event, bots)


# -- a bot made active -----------------------------------------------------------------------


def on_bot_activated(bot: Bot) -> None:
    """A bot became active (in its transaction): its running events waiting for bots go on."""
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


# -- standings and bracket -----------------------------------------------------------------------


def reveal(match_id: int) -> bool:
    """The presenter's reveal of a hidden match: mark it revealed, rate it now, publish its end
    and the public standings. False if not such a match or already revealed."""
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
        headtohead.record(match, participants)  # its result public now: the pair's history
        summary = match_json(match, participants)
        transaction.on_commit(lambda: broadcast.match_finished(summary))
        event = Event.objects.select_for_update().get(pk=match.event_id)
        finish_if_public(event)
        _broadcast_standings(event)
    return True


def reveal_all(event: Event) -> int:
    """Reveal every hidden match before ``hide_results`` goes off, so every match is rated (and
    a revealing event finishes, its placings told)."""
    waiting = scheduling.to_reveal(event).order_by("round", "id")
    revealed = sum(reveal(match_id) for match_id in list(waiting.values_list("pk", flat=True)))
    with transaction.atomic():
        finish_if_public(Event.objects.select_for_update().get(pk=event.pk))
    return revealed


def finish_if_public(event: Event) -> bool:
    """Finish the locked "revealing" event once no result waits for its reveal, and tell the
    entrants their placings after commit; False while one still waits (or not revealing)."""
    if event.status != EventStatus.REVEALING or scheduling.to_reveal(event).exists():
        return False
    event.status = EventStatus.FINISHED
    event.save(update_fields=["status"])
    event_id = event.pk
    transaction.on_commit(lambda: announce_ended(event_id))
    logger.info("event %s finished: every result revealed", event_id)
    return True


def announce_ended(event_id: int) -> int:
    """Tell each entrant's owner the event ended, with the placings of the owner's bots (after
    the commit that finished it); nothing while a result is not public. Owners told."""
    event = Event.objects.get(pk=event_id)
    table = placings(event)
    if table is None:
        return 0
    return event_notices.event_ended(event, table, formats.of(event).tie_notes())


def _broadcast_standings(event: Event) -> None:
    """The standings (and the bracket, when watched) to the event's watchers after commit."""
    table = standings(event)
    watched = broadcast.listened(broadcast.event_group(event.pk))
    bracket = bracket_view(event) if watched else None
    # the page's header (status, round, progress) moves with its standings
    top = header.header(event, len(table), bracket) if watched else None

    def send():
        broadcast.standings_changed(event.pk, table, top)
        if bracket is not None:
            broadcast.bracket_changed(event.pk, bracket)

    transaction.on_commit(send)


def public_source(event: Event) -> stored.Recomputed | None:
    """None for the stored standings, or, while a match waits for its reveal, the standings
    rebuilt from the revealed matches alone (the stored rows already count hidden ones)."""
    if not event.hide_results or not event.matches.filter(hidden()).exists():
        return None
    return stored.recompute(event, public_series(event))


def standings(event: Event, *, everything: bool = False) -> list[dict]:
    """Rows best first, with ``rank``: the public's, or with ``everything`` the stored ones."""
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
    fmt = formats.of(event)
    keys = fmt.rank_keys(rows, source)
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
    shared = pairing.places(order, fmt.place_keys(keys), h2h)
    table = []
    for position, bot_id in enumerate(order, start=1):
        row = rows[bot_id]
        row["rank"] = position
        # a tie the format does not break is said as one: "joint 5th"
        row["place"], row["joint"] = shared[bot_id]
        row["placing"] = pairing.placing(row["place"], row["joint"])
        table.append(row)
    return table


def placings(event: Event, table: list[dict] | None = None) -> list[dict] | None:
    """The final order, best first with each ``rank`` by the format's standings order and
    tie-break: what the big screen's podium and the entrants' "ended" notices say. None until
    the event finished with every result public (a placing is never read from a table that
    misses hidden results). ``table``: the caller's ``standings(event)``, not read again."""
    if event.status != EventStatus.FINISHED or scheduling.to_reveal(event).exists():
        return None
    return standings(event) if table is None else table


def champion(event: Event) -> dict | None:
    """The winner of a finished event (the top of its placings), or None."""
    table = placings(event)
    return table[0] if table else None


def bracket_view(event: Event, *, everything: bool = False) -> dict | None:
    """The bracket as JSON (None without one), public or (``everything``) stored."""
    fmt = formats.of(event)
    if not fmt.has_bracket:
        return None
    hiding = not everything and public_source(event) is not None
    return fmt.bracket(public_series(event) if hiding else load_series(event))
