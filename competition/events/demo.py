"""The demo that ``manage.py demo`` makes: the ``demo`` user (staff in development, no known
password in production) and a paced showcase per game among the platform's seats."""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.db import transaction

from competition.bots.services import get_or_create_bot, platform_seat
from competition.events import showcase
from competition.events.services import start_event
from competition.models import Entry, Event, EventFormat
from competition.models.bots import EndpointKind
from competition.plumbing.production import (
    DEV_DEMO_PASSWORD,
    production_demo_password,
    retire_for_production,
)
from games import Game

DEMO_PACE_MS = 600
DEMO_EVENT_NAME = "Demo {game} round robin"


def demo_user(*, production: bool):
    """The ``demo`` user: staff in development, no known password in production."""
    User = get_user_model()
    user, created = User.objects.get_or_create(
        username="demo", defaults={"is_staff": not production, "is_superuser": not production}
    )
    if production:
        password = production_demo_password()
        if created and password:
            user.set_password(password)
            user.save()
        elif not password and user.has_usable_password():
            user.set_unusable_password()
            user.save()
        retire_for_production(user)
    elif created:
        user.set_password(os.environ.get("ARENA_DEMO_PASSWORD") or DEV_DEMO_PASSWORD)
        user.save()
    return user


def ensure_showcase(game: Game, user, pace_ms: int) -> tuple[Event, bool]:
    """``game``'s showcase, made and started once; later calls only enter the seats it lacks. Read
    outside the transaction: on SQLite a read-then-write one fails if a server committed between."""
    existing = Event.objects.filter(showcase=True, game=game.slug).order_by("pk").first()
    if existing is not None:
        showcase_entries(existing, game, user)
        return existing, False
    with transaction.atomic():
        event = Event.objects.create(
            name=showcase.NAME.format(title=game.title),
            game=game.slug,
            format=EventFormat.LADDER,
            series_length=1,
            table_size=2 if game.seats[1] > 2 else None,
            pace_ms=pace_ms,
            showcase=True,
            created_by=user,
        )
        showcase_entries(event, game, user)
        start_event(event)
    return event, True


def showcase_seats(game: Game, user) -> list:
    """The platform's seat of every built-in strategy and, while fewer than ``MIN_ENTRIES``, the
    demo user's understudies of them, so the showcase plays several pairings in turn."""
    names = sorted(game.builtin_bots)
    seats = [platform_seat(game.slug, EndpointKind.BUILTIN, name) for name in names]
    for i in range(max(0, showcase.MIN_ENTRIES - len(seats))):
        name = names[i % len(names)]
        seat, _ = get_or_create_bot(
            owner=user,
            game=game.slug,
            name=f"demo {name} {i // len(names) + 2}",
            defaults={"kind": EndpointKind.BUILTIN, "target": name},
        )
        seats.append(seat)
    return seats


def showcase_entries(event: Event, game: Game, user) -> int:
    """Enter in showcase ``event`` those of ``showcase_seats`` not in it yet; how many."""
    present = set(event.entries.values_list("bot_id", flat=True))
    added = 0
    for seed, bot in enumerate(showcase_seats(game, user), 1):
        if bot.pk not in present:
            Entry.objects.create(event=event, bot=bot, seed=seed)
            added += 1
    return added
