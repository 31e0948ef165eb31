"""Event services: start an event, progress it as matches finish, standings, bracket.

Pairing decisions are pure (``competition.events.pairing``); this module persists them as matches
and reads them back. An event pairing is a *series*: ``series_length`` matches sharing
``(round, pairing)``, seats alternating (the pairing key ``"A-B"`` names the bots; A has
seat 0 in games 0, 2, 4 …). All games of a series are queued at once.

Formats (``EventFormat``):

- round robin / double round robin: every series is queued at ``start_event``; the event
  finishes when no match is queued or running.
- Swiss: round 1 at the start; the next round once every series of the current one is done
  (an ``errored`` match holds the round until an organiser requeues or cancels it), for
  ``event.rounds`` rounds (default ⌈log2 n⌉). A bye is a series won; it is recorded in the
  pairing key of the round's first series (``"A-B/bye-C"``), so the history needs no extra
  table.
- single elimination: seeded by rating at the start (seeds written to ``Entry.seed``), byes
  to the top seeds; a series is scheduled as soon as both its sides are known. A drawn
  series: ``pairing.SERIES_TIE_BREAK`` (more total score, then the higher seed). An entry
  whose bot is not active when its next series is due withdraws (``Entry.active = False``)
  and its opponent advances by walkover.
- continuous ladder: pairs free bots of close rating as series finish, the longest-waiting
  first, at most ``LADDER_MAX_CONCURRENT_PER_BOT`` series in flight per bot; it runs until
  paused or cancelled. With ``event.rounds`` set it stops pairing a bot after that many
  series and finishes when nobody can be paired any more.
- free-for-all (N-seat games): ``event.rounds`` rounds (default: the table size), each
  seating the entries at tables of up to ``table_size`` seats (``pairing.ffa_round``: sizes
  within one of each other, none below 2, seats rotated so every entry holds every seat
  equally often); a table is a series (``series_length`` games, seats rotating by one each
  game; key ``series.table_key``). Every round is queued at the start (the seating does not
  depend on results); points by rank (``pairing.rank_points``); ratings from each game's
  ranks (openskill rates the N seats at once). The event finishes when nothing is pending.

Seats (``check_format``): the two-seat formats play matches of two seats, so they refuse a game
that cannot seat two, and a game of more seats unless ``table_size`` is 2; a free-for-all's
``table_size`` lies within the game's seat range.

Swiss and elimination entrants are fixed at the start: the entries with ``seed >= 1``.
Paused or inactive bots (and inactive entries) are never paired in a new round or ladder
series; a Swiss entry simply sits a round out (no bye) and comes back when resumed.

Standings (``standings``): points per series (won 1, drawn ½, lost 0, a bye 1), then
Buchholz (Swiss only), then games won, then head-to-head points among the tied entries,
then name. Elimination ranks by the round reached, then seed; the ladder by rating ordinal.

Bot health: a bot whose last ``ARENA_BOT_HEALTH_FORFEITS`` matches (since it was last
changed or resumed) were all forfeited for ``connect`` or ``timeout`` is paused inside the
finish transaction (``check_bot_health``); its owner resumes it with ``resume_bot``.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from bots.faults import FaultCode
from bots.models import PLATFORM_OWNER, Bot, BotStatus, EndpointKind, platform_seat
from competition.events import pairing
from competition.events import standings as stored
from competition.events.pairing import SERIES_TIE_BREAK, LadderEntry
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
from competition.models import (
    Entry,
    Event,
    EventFormat,
    EventStatus,
    Match,
    MatchStatus,
    Participant,
    RatingChange,
    SeriesState,
)
from competition.models.matches import hidden
from competition.prepared import Prepared
from competition.ratings import services as ratings
from games import get_game

logger = logging.getLogger(__name__)

LADDER_MAX_CONCURRENT_PER_BOT = 1
HEALTH_CAUSES = (FaultCode.CONNECT.value, FaultCode.TIMEOUT.value)
OPEN_STATES = (EventStatus.DRAFT, EventStatus.RUNNING, EventStatus.PAUSED)
#: for the Event admin: how a drawn series is decided
TIE_BREAK_HELP = SERIES_TIE_BREAK


def _create_series(event: Event, rnd: int, a: Bot, b: Bot, bye: int | None = None) -> int:
    from competition.matches.lifecycle import create_match

    key = series_key(a.pk, b.pk, bye)
    games = max(1, event.series_length)
    for g in range(games):
        seats = [a, b] if g % 2 == 0 else [b, a]
        create_match(
            event.game,
            seats,
            options=event.options,
            event=event,
            round=rnd,
            pairing=key,
            game_in_series=g,
            pace_ms=event.pace_ms,
            rated=not event.showcase,
        )
    stored.series_created(event, rnd, key, a.pk, b.pk, bye, games)
    return games


def table_size(event: Event) -> int:
    """The seats per free-for-all table (``event.table_size``, default the game's most)."""
    return event.table_size or get_game(event.game).seats[1]


def check_format(game_slug: str, fmt: str, size: int | None) -> None:
    """``ValidationError`` (by field) when ``fmt`` cannot play ``game_slug`` with tables of
    ``size`` seats (None: the default)."""
    try:
        low, high = get_game(game_slug).seats
    except KeyError:
        raise ValidationError({"game": f"Unknown game {game_slug!r}."}) from None
    if fmt == EventFormat.FREE_FOR_ALL:
        if size is not None and not (max(2, low) <= size <= high):
            raise ValidationError(
                {"table_size": f"A table of this game seats {max(2, low)} to {high}."}
            )
        return
    if low > 2:
        raise ValidationError({"format": f"A game of {low} or more seats needs a free-for-all."})
    if high > 2 and size != 2:
        raise ValidationError(
            {
                "table_size": f"This game seats up to {high}: a two-seat format needs "
                "table_size 2 (or choose free-for-all)."
            }
        )
    if size is not None and size != 2:
        raise ValidationError({"table_size": "A two-seat format plays tables of 2."})


def _create_table(event: Event, rnd: int, table: list[Bot]) -> int:
    from competition.matches.lifecycle import create_match

    ids = [b.pk for b in table]
    key = table_key(ids)
    games = max(1, event.series_length)
    for g in range(games):
        shift = g % len(table)
        create_match(
            event.game,
            table[shift:] + table[:shift],
            options=event.options,
            event=event,
            round=rnd,
            pairing=key,
            game_in_series=g,
            pace_ms=event.pace_ms,
            rated=not event.showcase,
        )
    stored.series_created(event, rnd, key, ids[0], ids[1], None, games)
    return games


# -- entries ----------------------------------------------------------------------------------


def eligible(entry: Entry) -> bool:
    """May be paired in a new round or ladder series: an active entry of an active bot."""
    return entry.active and entry.bot.status == BotStatus.ACTIVE


def _entries(event: Event) -> list[Entry]:
    return list(event.entries.select_related("bot", "bot__owner").order_by("seed", "id"))


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
    """``_entries`` as plain values, in the same order: (bot, its name, owner id, owner's
    username, seed, active) per entry; one statement, no model built (the standings of a
    busy ladder are read on every finish and page)."""
    return _ENTRY_VALUES(event.pk)


def _entrants(entries: list[Entry]) -> list[Entry]:
    """Swiss and elimination: the entries seeded at the start, best first."""
    return sorted((e for e in entries if e.seed >= 1), key=lambda e: (e.seed, e.pk))


def _seed_by_rating(entries: list[Entry]) -> list[Entry]:
    """Seeds 1..n to the eligible entries by rating ordinal (then their previous seed), 0
    to the others; returns the seeded entries, best first."""
    chosen = [e for e in entries if eligible(e)]
    rated = ratings.for_bots(e.bot_id for e in chosen)
    chosen.sort(
        key=lambda e: (-rated[e.bot_id]["ordinal"], e.seed if e.seed >= 1 else math.inf, e.pk)
    )
    for e in entries:
        e.seed = 0
    for number, e in enumerate(chosen, start=1):
        e.seed = number
    Entry.objects.bulk_update(entries, ["seed"])
    return chosen


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
        entries = _entries(event)
        if sum(1 for e in entries if eligible(e)) < 2:
            raise ValidationError("An event needs at least two active entries of active bots.")
        check_format(event.game, event.format, event.table_size)
        event.status = EventStatus.RUNNING
        event.started = timezone.now()
        event.save(update_fields=["status", "started"])
        freeze_versions(event)
        if event.format in (EventFormat.ROUND_ROBIN, EventFormat.DOUBLE_ROUND_ROBIN):
            created = _start_round_robin(event, entries)
        elif event.format == EventFormat.FREE_FOR_ALL:
            created = _start_free_for_all(event, entries)
        else:
            if event.format in (EventFormat.SWISS, EventFormat.SINGLE_ELIMINATION):
                _seed_by_rating(entries)
            created = _advance(event)
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


def _start_round_robin(event: Event, entries: list[Entry]) -> int:
    bots = {e.bot_id: e.bot for e in entries if eligible(e)}
    double = event.format == EventFormat.DOUBLE_ROUND_ROBIN
    created = 0
    for rnd, pairs in enumerate(pairing.round_robin(list(bots), double=double), start=1):
        for a, b in pairs:
            created += _create_series(event, rnd, bots[a], bots[b])
    return created


def ffa_total_rounds(event: Event) -> int:
    return event.rounds or table_size(event)


def _start_free_for_all(event: Event, entries: list[Entry]) -> int:
    bots = {e.bot_id: e.bot for e in entries if eligible(e)}
    created = 0
    for rnd in range(ffa_total_rounds(event)):
        for table in pairing.ffa_round(list(bots), rnd, table_size(event)):
            created += _create_table(event, rnd + 1, [bots[b] for b in table])
    return created


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
    """The locked event's next step; returns matches created."""
    if event.status != EventStatus.RUNNING:
        return 0
    if event.format in (
        EventFormat.ROUND_ROBIN,
        EventFormat.DOUBLE_ROUND_ROBIN,
        EventFormat.FREE_FOR_ALL,
    ):
        if not event.matches.filter(status__in=PENDING).exists():
            _finish(event)
        return 0
    if event.format == EventFormat.LADDER:
        return _advance_ladder(event)
    series = load_series(event)
    if event.format == EventFormat.SWISS:
        return _advance_swiss(event, series)
    if event.format == EventFormat.SINGLE_ELIMINATION:
        return _advance_elimination(event, series)
    logger.error("event %s: unknown format %r", event.pk, event.format)
    return 0


def _finish(event: Event) -> None:
    event.status = EventStatus.FINISHED
    event.finished = timezone.now()
    event.save(update_fields=["status", "finished"])
    logger.info("event %s finished", event.pk)


def swiss_total_rounds(event: Event, entrants: int) -> int:
    return event.rounds or pairing.swiss_rounds(entrants)


def _advance_swiss(event: Event, series: list[Series]) -> int:
    entries = _entries(event)
    entrants = _entrants(entries)
    current = max((s.round for s in series), default=0)
    if any(not s.complete for s in series if s.round == current):
        return 0
    if current >= swiss_total_rounds(event, len(entrants)):
        _finish(event)
        return 0
    players = [e for e in entrants if eligible(e)]
    if len(players) < 2:
        logger.info(
            "event %s: fewer than two entries can play round %s; waiting", event.pk, current + 1
        )
        return 0
    bots = {e.bot_id: e.bot for e in players}
    decided = pairing.swiss_round(list(bots), _results(series))
    if decided.rematches:
        logger.info(
            "event %s round %s: %s unavoidable rematch(es)",
            event.pk,
            current + 1,
            decided.rematches,
        )
    created = 0
    for i, (a, b) in enumerate(decided.pairs):
        created += _create_series(
            event, current + 1, bots[a], bots[b], decided.bye if i == 0 else None
        )
    return created


@dataclass
class EliminationState:
    seeds: list[int]
    rounds: list[list[pairing.Slot]]
    series: dict[tuple[int, int], Series]  # (round, index) -> its series
    walkovers: set[tuple[int, int]]


def elimination_state(
    event: Event, entries: list[Entry], series: list[Series]
) -> EliminationState | None:
    """The bracket as the stored series (and withdrawals) decide it; None before seeding."""
    entrants = _entrants(entries)
    if len(entrants) < 2:
        return None
    seeds = [e.bot_id for e in entrants]
    seed_of = {e.bot_id: e.seed for e in entrants}
    withdrawn = {e.bot_id for e in entrants if not e.active}
    by_pair = {(s.round, frozenset((s.a, s.b))): s for s in series}
    winners: dict[tuple[int, int], int] = {}
    at: dict[tuple[int, int], Series] = {}
    walkovers: set[tuple[int, int]] = set()
    while True:
        rounds = pairing.advance(seeds, winners)
        changed = False
        for slot in (s for r in rounds for s in r if s.ready):
            where = (slot.round, slot.index)
            found = by_pair.get((slot.round, frozenset((slot.a, slot.b))))
            if found is not None:
                at[where] = found
                if found.complete:
                    winners[where] = pairing.elimination_winner(
                        found.a, found.b, found.score_a, found.score_b, seed_of
                    )
                    changed = True
            elif slot.a in withdrawn or slot.b in withdrawn:
                if slot.a in withdrawn and slot.b not in withdrawn:
                    winners[where] = slot.b
                else:  # b withdrew, or both did: the higher seed (a) goes through
                    winners[where] = slot.a
                walkovers.add(where)
                changed = True
        if not changed:
            return EliminationState(seeds, rounds, at, walkovers)


def _advance_elimination(event: Event, series: list[Series]) -> int:
    entries = _entries(event)
    by_bot = {e.bot_id: e for e in entries}
    while True:
        state = elimination_state(event, entries, series)
        if state is None:
            _finish(event)
            return 0
        due = [
            s for r in state.rounds for s in r if s.ready and (s.round, s.index) not in state.series
        ]
        unable = [
            by_bot[x]
            for s in due
            for x in (s.a, s.b)
            if by_bot[x].active and not eligible(by_bot[x])
        ]
        if not unable:
            break
        for entry in unable:  # withdraw: its opponent advances by walkover
            entry.active = False
            entry.save(update_fields=["active"])
            logger.info("event %s: %s withdraws (bot %s)", event.pk, entry.bot, entry.bot.status)
    if pairing.champion(state.rounds) is not None:
        _finish(event)
        return 0
    created = 0
    for slot in due:
        created += _create_series(event, slot.round, by_bot[slot.a].bot, by_bot[slot.b].bot)
    return created


def _advance_ladder(event: Event) -> int:
    """Pairs from the stored standings (series played and in flight, last end, last
    opponent per bot): the cost does not grow with the ladder's history."""
    entries = _entries(event)
    limit = event.rounds or None
    kept = stored.rows(event)
    played = {b: r.played for b, r in kept.items()}
    busy = {b: r.busy for b, r in kept.items()}
    last = {b: r.last_played.timestamp() for b, r in kept.items() if r.last_played}
    last_opponent = {b: (r.last_round, r.last_opponent_id) for b, r in kept.items()}
    rated = ratings.for_bots(e.bot_id for e in entries)
    candidates = [
        LadderEntry(
            e.bot_id,
            rated[e.bot_id]["mu"],
            played.get(e.bot_id, 0),
            last.get(e.bot_id),
            busy.get(e.bot_id, 0),
            last_opponent.get(e.bot_id, (0, None))[1],
        )
        for e in entries
        if eligible(e) and (limit is None or played.get(e.bot_id, 0) < limit)
    ]
    running = any(busy.values())
    pairs = pairing.ladder_pairs(candidates, LADDER_MAX_CONCURRENT_PER_BOT, running=running)
    if not pairs:
        if limit is not None and not running:
            _finish(event)
        return 0
    rnd = max((r.last_round for r in kept.values()), default=0) + 1
    bots = {e.bot_id: e.bot for e in entries}
    return sum(_create_series(event, rnd, bots[a], bots[b]) for a, b in pairs)


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
        ladder_open = locked.format == EventFormat.LADDER and locked.status in OPEN_STATES
        if locked.status != EventStatus.DRAFT and not ladder_open:
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
        logger.warning("bot %s %s", bot_id, bot.status_reason)
    return paused


def set_bot_status(bot: Bot, status: BotStatus, reason: str = "") -> bool:
    """The one way web, API and admin change a bot's status (bot health pauses inside the
    finish). True if it changed. A bot that becomes active starts its consecutive-forfeit count
    again, and the events waiting for it (a ladder, a Swiss round) schedule at once."""
    with transaction.atomic():
        changed = (
            Bot.objects.filter(pk=bot.pk)
            .exclude(status=status, status_reason=reason)
            .update(status=status, status_reason=reason, updated=timezone.now())
        )
        if changed and status == BotStatus.ACTIVE:
            waiting = Event.objects.filter(
                entries__bot=bot,
                entries__active=True,
                status=EventStatus.RUNNING,
                format__in=(EventFormat.SWISS, EventFormat.LADDER),
            ).values_list("pk", flat=True)
            for event_id in list(waiting):
                locked = Event.objects.select_for_update().get(pk=event_id)
                _advance(locked)
    bot.refresh_from_db(fields=["status", "status_reason", "updated"])
    return bool(changed)


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
    keys = _rank_keys(event, rows, source)
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


def _public_series_results(source: stored.Recomputed) -> list[pairing.SeriesResult]:
    """``stored.series_results`` from rebuilt series (``public_source``)."""
    results = []
    for row in source.series.values():
        if row["state"] == SeriesState.COMPLETE and row["has_result"]:
            results.append(
                pairing.SeriesResult(row["a"], row["b"], row["points_a"], row["points_b"])
            )
        if row["bye"] is not None:
            results.append(pairing.bye(row["bye"]))
    return results


def _rank_keys(event: Event, rows: dict[int, dict], source=None) -> dict:
    """Each row's sort key for the event's format (adding its ``buchholz`` or ``reached``),
    from the stored rows or (``source``) from the public ones."""
    fmt = event.format
    if fmt == EventFormat.SWISS:
        results = stored.series_results(event) if source is None else _public_series_results(source)
        bh = pairing.buchholz(results)
        for bot_id, row in rows.items():
            row["buchholz"] = bh.get(bot_id, 0.0)
        keys = {b: (r["points"], r["buchholz"], r["wins"]) for b, r in rows.items()}
    elif fmt == EventFormat.SINGLE_ELIMINATION:
        loaded = load_series(event) if source is None else public_series(event)
        state = elimination_state(event, _entries(event), loaded)
        reached = _reached(state) if state else {}
        for bot_id, row in rows.items():
            row["reached"] = reached.get(bot_id, 0)
        keys = {b: (r["reached"], -(r["seed"] or math.inf)) for b, r in rows.items()}
    elif fmt == EventFormat.LADDER:
        keys = {b: (r["rating"]["ordinal"], r["points"], r["wins"]) for b, r in rows.items()}
    else:
        keys = {b: (r["points"], r["wins"]) for b, r in rows.items()}
    return keys


def _reached(state: EliminationState) -> dict[int, int]:
    reached: dict[int, int] = {}
    for r in state.rounds:
        for slot in r:
            for side in (slot.a, slot.b):
                if side is not None:
                    reached[side] = max(reached.get(side, 0), slot.round)
    winner = pairing.champion(state.rounds)
    if winner is not None:
        reached[winner] = len(state.rounds) + 1
    return reached


def champion(event: Event) -> dict | None:
    """The winner of a finished event (the top of its standings), or None."""
    if event.status != EventStatus.FINISHED:
        return None
    table = standings(event)
    return table[0] if table else None


def _bracket_series(found: Series, slot) -> dict:
    """A bracket slot's ``series`` (``bracket_view``), its score in the slot's side order."""
    statuses = [m["status"] for m in found.matches.values()]
    status = (
        "errored"
        if found.blocked
        else "running"
        if MatchStatus.RUNNING in statuses
        else "queued"
        if found.pending
        else "finished"
    )
    flipped = slot.a != found.a
    score = [found.score_b, found.score_a] if flipped else [found.score_a, found.score_b]
    return {
        "key": found.key,
        "score": score,
        "status": status,
        "matches": [
            {"id": m["id"], "game": m["game"], "status": m["status"]}
            for m in sorted(found.matches.values(), key=lambda m: m["game"])
        ],
    }


def bracket_view(event: Event, *, everything: bool = False) -> dict | None:
    """The elimination bracket as JSON (None for other formats).

    ``{"event", "status", "size", "tie_break", "champion", "rounds": [{"round", "name",
    "slots": [{"index", "a", "b", "winner", "bye", "walkover", "series"}]}]}``; a side is
    ``{"bot", "name", "seed"}`` or null; ``series`` is null until scheduled, then
    ``{"key", "score": [a, b], "status": "queued|running|finished|errored", "matches": [{"id",
    "game", "status"}]}``; ``why``: how the slot was decided, in words (``tie_reason``).
    """
    if event.format != EventFormat.SINGLE_ELIMINATION:
        return None
    entries = _entries(event)
    by_bot = {e.bot_id: e for e in entries}
    hiding = not everything and public_source(event) is not None
    loaded = public_series(event) if hiding else load_series(event)
    state = elimination_state(event, entries, loaded)
    view = {
        "event": event.pk,
        "status": event.status,
        "size": 0,
        "tie_break": SERIES_TIE_BREAK,
        "champion": None,
        "rounds": [],
    }
    if state is None:
        return view

    def side(bot_id):
        if bot_id is None:
            return None
        e = by_bot[bot_id]
        return {"bot": bot_id, "name": e.bot.name, "seed": e.seed, "active": e.active}

    total = len(state.rounds)
    view["size"] = 2**total
    view["champion"] = side(pairing.champion(state.rounds))
    for r in state.rounds:
        slots = []
        for slot in r:
            found = state.series.get((slot.round, slot.index))
            series_json = None if found is None else _bracket_series(found, slot)
            slots.append(
                {
                    "index": slot.index,
                    "a": side(slot.a),
                    "b": side(slot.b),
                    "winner": slot.winner,
                    "bye": slot.bye,
                    "walkover": (slot.round, slot.index) in state.walkovers,
                    "series": series_json,
                }
            )
            slots[-1]["why"] = tie_reason(slots[-1])
        view["rounds"].append(
            {"round": r[0].round, "name": pairing.round_name(r[0].round, total), "slots": slots}
        )
    return view


def tie_reason(slot: dict) -> str:
    """Why a bracket slot went the way it did, in words ("" until decided)."""
    winner, a, b = slot["winner"], slot["a"], slot["b"]
    if slot["bye"]:
        return "a bye"
    if winner is None:
        return ""
    won, lost = (a, b) if a and winner == a["bot"] else (b, a)
    if slot["walkover"] or not slot["series"]:
        return f"{won['name']} by walkover"
    left, right = slot["series"]["score"]
    score = f"{left:g}\u2013{right:g}"
    if left == right:
        return (
            f"drawn {score}: decided on seed, {won['name']} (seed {won['seed']}) over "
            f"{lost['name']} (seed {lost['seed']})"
        )
    return f"{won['name']} won {score}"
