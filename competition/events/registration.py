"""Events users enter: registration, entries, and ``tick``, the periodic step that announces
registrations, starts the drafts whose time came and sends the digests."""

from __future__ import annotations

import logging
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from competition.events import seasons, services
from competition.matches import challenges
from competition.models import (
    Entry,
    EntryStatus,
    Event,
    EventAdmission,
    EventStatus,
    NotificationKind,
    Rating,
)
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.notifications import event_notices, notify

logger = logging.getLogger(__name__)


def closes_at(event: Event) -> datetime | None:
    return event.registration_closes or event.starts_at


def is_open(event: Event, now: datetime | None = None) -> bool:
    """Whether ``event`` takes entries at ``now`` (``Event.registration_open`` at this moment)."""
    now = now or timezone.now()
    if event.status != EventStatus.DRAFT or event.registration_opens is None:
        return False
    closes = closes_at(event)
    return event.registration_opens <= now and (closes is None or now < closes)


def _check(event: Event, bot: Bot, user) -> None:
    if not is_open(event):
        raise ValidationError("Registration for this event is not open.")
    if bot.owner_id != user.pk:
        raise ValidationError("You can only enter your own bots.")
    if bot.game != event.game:
        raise ValidationError(f"{bot.name} plays another game than this event.")
    if bot.status != BotStatus.ACTIVE or bot.endpoint_kind.is_person:
        raise ValidationError(f"{bot.name} is not active: resume it before entering it.")
    if event.admission == EventAdmission.RATED:
        games = Rating.objects.filter(bot=bot).values_list("games", flat=True).first() or 0
        if games < event.min_rated_games:
            raise ValidationError(
                f"This event admits bots with at least {event.min_rated_games} rated games; "
                f"{bot.name} has {games}."
            )


def enter(event: Event, bot: Bot, user) -> Entry:
    """Enter ``user``'s ``bot``, approved or pending; ``ValidationError`` with a sentence if not."""
    with transaction.atomic():
        event = Event.objects.select_for_update().get(pk=event.pk)
        _check(event, bot, user)
        if event.entries.filter(bot=bot).exists():
            raise ValidationError(f"{bot.name} is already entered.")
        taken = event.entries.exclude(status=EntryStatus.REFUSED).count()
        if event.max_entries is not None and taken >= event.max_entries:
            raise ValidationError(f"This event is full ({event.max_entries} entries).")
        # counted under the event's row lock: two entries at once cannot both pass
        if refusal := services.owner_cap_refusal(event, user.pk):
            raise ValidationError(refusal)
        seed = (event.entries.aggregate(top=Max("seed"))["top"] or 0) + 1
        status = (
            EntryStatus.PENDING
            if event.admission == EventAdmission.APPROVAL
            else EntryStatus.APPROVED
        )
        entry = Entry.objects.create(
            event=event, bot=bot, seed=seed, status=status, entered_by=user
        )
    logger.info("bot %s entered event %s (%s)", bot.pk, event.pk, status)
    return entry


def withdraw(event: Event, bot: Bot, user) -> bool:
    """Take ``user``'s ``bot`` out of the event while registration is open."""
    with transaction.atomic():
        event = Event.objects.select_for_update().get(pk=event.pk)
        if not is_open(event):
            raise ValidationError(
                "Registration for this event is closed: entries stay as they are."
            )
        if bot.owner_id != user.pk:
            raise ValidationError("You can only withdraw your own bots.")
        deleted, _ = event.entries.filter(bot=bot).delete()
    return bool(deleted)


def decide(entry: Entry, approve: bool) -> bool:
    """The organiser approves or refuses an entry and its owner is told; False if already so."""
    status = EntryStatus.APPROVED if approve else EntryStatus.REFUSED
    with transaction.atomic():
        changed = Entry.objects.filter(pk=entry.pk).exclude(status=status).update(status=status)
        if changed:
            entry = Entry.objects.select_related("bot", "event").get(pk=entry.pk)
            event_notices.entry_decided(entry, approve)
    return bool(changed)


# -- the periodic step -------------------------------------------------------------------------


def tick(now: datetime | None = None) -> int:
    """One step of the periodic job; returns what it did (announcements, starts, mails, the
    ladders' seasons ended or started at their dates, challenges expired)."""
    now = now or timezone.now()
    done = announce_opened(now)
    done += seasons.tick(now)
    done += start_due(now)
    done += notify.send_digests(now)
    done += challenges.expire(now)  # challenges unanswered in time: cancelled, challengers told
    return done


def announce_opened(now: datetime) -> int:
    """Announce that registration opened, once (a conditional UPDATE)."""
    due = Event.objects.filter(
        status=EventStatus.DRAFT,
        registration_opens__lte=now,
        registration_announced__isnull=True,
    ).values_list("pk", flat=True)
    announced = 0
    for event_id in list(due[:50]):
        with transaction.atomic():
            if not Event.objects.filter(pk=event_id, registration_announced__isnull=True).update(
                registration_announced=now
            ):
                continue
            event = Event.objects.get(pk=event_id)
            if not is_open(event, now):
                continue
            # one notice per owner naming the owner's bots of the game (no Bot ordering:
            # a DISTINCT over it counted every bot)
            bots = (
                Bot.objects.active()
                .for_game(event.game)
                .of_users()
                .exclude(kind__in=EndpointKind.people())  # a person's seat enters no event
                .order_by("owner_id", "name")
                .values_list("owner_id", "name")
            )
            event_notices.registration_opened(event, bots, closes_at(event))
            announced += 1
    return announced


def start_due(now: datetime) -> int:
    """Start each draft whose start time came, or cancel it with a notice below ``min_entries``."""
    due = Event.objects.filter(status=EventStatus.DRAFT, starts_at__lte=now).values_list(
        "pk", flat=True
    )
    handled = 0
    for event_id in list(due[:20]):
        try:
            handled += _start_one(event_id)
        except Exception:
            logger.exception("event %s: the start at its start time failed", event_id)
    return handled


def _start_one(event_id: int) -> int:
    with transaction.atomic():
        event = Event.objects.select_for_update().get(pk=event_id)
        if event.status != EventStatus.DRAFT:
            return 0
        event.entries.exclude(status=EntryStatus.APPROVED).update(active=False)
        approved = event.entries.filter(
            status=EntryStatus.APPROVED, active=True, bot__status=BotStatus.ACTIVE
        ).count()
        needed = max(2, event.min_entries)
        if approved < needed:
            services.cancel_event(event, "too few entries")
            text = (
                f"{event.name} was cancelled: it had {approved} entries at its start time "
                f"and needed {needed}."
            )
        else:
            text = _start_or_cancel(event)
        if text:  # a start tells the entrants itself (services.start_event)
            event_notices.tell_entrants(event, NotificationKind.EVENT_STARTED, text)
    logger.info("event %s at its start time: %s", event_id, text or "started")
    return 1


def _start_or_cancel(event: Event) -> str:
    """Start the locked event (""), or cancel it with the reason rather than retry every step
    (the notice's words)."""
    try:
        services.start_event(event)
    except ValidationError as exc:
        reason = " ".join(exc.messages)
        services.cancel_event(event, reason)
        return f"{event.name} was cancelled at its start time: {reason}"
    return ""
