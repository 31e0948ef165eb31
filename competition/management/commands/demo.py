"""``manage.py demo`` (idempotent): the ``demo`` user, the platform's seats, a rated demo event
and a paced showcase per game. With ``DEBUG=false`` ``demo`` is never staff, no known password."""

from __future__ import annotations

import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from competition.bots.services import get_or_create_bot, platform_seat
from competition.events import showcase
from competition.events.services import start_event
from competition.models import Entry, Event, EventFormat
from competition.models.bots import EndpointKind
from competition.production import (
    DEV_DEMO_PASSWORD,
    production_demo_password,
    retire_for_production,
)
from games import Game, all_games

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


class Command(BaseCommand):
    help = "Create the demo user and built-in bots for every game."

    def handle(self, *args, **opts):
        user = demo_user(production=not settings.DEBUG)
        seats = {
            (game.slug, name): platform_seat(game.slug, EndpointKind.BUILTIN, name)
            for game in all_games()
            for name in sorted(game.builtin_bots)
        }
        made = len(seats)
        if settings.DEBUG:
            self.stdout.write(f"demo: user 'demo' (staff), {made} built-in seats")
        else:
            login = (
                "its password is ARENA_DEMO_PASSWORD"
                if user.has_usable_password()
                else "no password"
            )
            self.stdout.write(
                f"demo: production mode: user 'demo' is not staff ({login}), {made} built-in seats"
            )
        demo_game = all_games()[0].slug  # the first game listed (Game.order)
        name = DEMO_EVENT_NAME.format(game=demo_game)
        existing = Event.objects.filter(name=name, created_by=user).first()
        if existing is not None:
            self.stdout.write(f"demo: event {existing.pk} is {existing.status} (kept as it is)")
        else:
            event = Event.objects.create(
                name=name,
                game=demo_game,
                format=EventFormat.DOUBLE_ROUND_ROBIN,
                series_length=1,
                pace_ms=DEMO_PACE_MS,
                created_by=user,
            )
            names = sorted(n for g, n in seats if g == demo_game)
            for seed, name in enumerate(names, 1):
                Entry.objects.create(event=event, bot=seats[(demo_game, name)], seed=seed)
            created = start_event(event)
            self.stdout.write(f"demo: event {event.pk} running with {created} matches")
        for game in all_games():
            event, made = ensure_showcase(game, user, DEMO_PACE_MS)
            state = "started" if made else f"{event.status} (kept as it is)"
            self.stdout.write(f"demo: showcase {event.pk} ({game.slug}) {state}")
