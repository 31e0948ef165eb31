"""``manage.py demo``: the ``demo`` user, the platform's seat of every built-in strategy of
every game (``bots.models.platform_seat``: owned by no user), and the demo event of the
first game listed (a paced double round robin of those seats, so spectators can follow the
moves).

Idempotent: it creates nothing twice. The demo event is made once (``DEMO_EVENT_NAME``);
later runs (each restart of ``make run``) leave it as it is, and the runner continues its
queued matches, so restarts neither add events nor play more demo matches.

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

from bots.models import EndpointKind, platform_seat
from competition.events.services import start_event
from competition.models import Entry, Event, EventFormat
from games import all_games

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
