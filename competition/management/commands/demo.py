"""``manage.py demo``: the ``demo`` user, the platform's seat of every built-in strategy of
every game (``bots.models.platform_seat``: owned by no user), the demo event of the first
game listed (a paced double round robin of those seats, rated: it gives the built-ins their
first ratings) and a showcase per game (``competition.events.showcase``: a continuous, paced
ladder of those seats, unrated, its old matches pruned), so that something is always live.

Idempotent: it creates nothing twice. The demo event (``DEMO_EVENT_NAME``) and each game's
showcase are made once; later runs (each restart of ``make run``) leave them as they are, and
the runner continues their queued and running matches, so restarts add no event.

- Development (``DEBUG=true``, the embedded default of ``make run``): ``demo`` is a staff
  superuser whose password is ``ARENA_DEMO_PASSWORD`` (default ``demo``).
- Production (``DEBUG=false``): ``demo`` only owns the built-in bots and the event. It is
  never staff nor superuser (an existing one is demoted), and it has no usable password
  unless ``ARENA_DEMO_PASSWORD`` is set: there is no known password to log in with.
  Organisers are made with ``manage.py createsuperuser``.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from bots.models import EndpointKind, platform_seat
from competition.events import showcase
from competition.events.services import start_event
from competition.models import Entry, Event, EventFormat
from games import Game, all_games

DEMO_PACE_MS = 600
DEMO_EVENT_NAME = "Demo {game} round robin"


def demo_user(*, production: bool):
    """The ``demo`` user: a staff superuser in development, an ordinary user without a
    known password in production (see the module docstring)."""
    User = get_user_model()
    password = os.environ.get("ARENA_DEMO_PASSWORD", "")
    user, created = User.objects.get_or_create(
        username="demo", defaults={"is_staff": not production, "is_superuser": not production}
    )
    if production:
        user.is_staff = user.is_superuser = False
        if password:
            if created:
                user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
    elif created:
        user.set_password(password or "demo")
        user.save()
    return user


def ensure_showcase(game: Game, user, pace_ms: int) -> tuple[Event, bool]:
    """``game``'s showcase (``competition.events.showcase``), made and started once:
    ``(event, created)``. Later calls leave it as it is, so restarts neither add showcases nor
    disturb the running one.

    The check reads outside the transaction, whose first statement is a write: on SQLite a
    transaction that reads and then writes fails at once ("database is locked") when a
    running server committed in between, where a first write waits for the lock."""
    existing = Event.objects.filter(showcase=True, game=game.slug).order_by("pk").first()
    if existing is not None:
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
        for seed, name in enumerate(sorted(game.builtin_bots), 1):
            bot = platform_seat(game.slug, EndpointKind.BUILTIN, name)
            Entry.objects.create(event=event, bot=bot, seed=seed)
        start_event(event)
    return event, True


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
