"""``manage.py demo``: the ``demo`` user, a built-in bot of every strategy of every game,
and a running demo event of the first game listed (a paced double round robin, so
spectators can follow the moves).

Idempotent: it creates nothing twice, and starts a new demo event only when none is
running.

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

from bots.models import Bot, EndpointKind
from competition.events.services import start_event
from competition.models import Entry, Event, EventFormat, EventStatus
from games import all_games

DEMO_PACE_MS = 600


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
        made = 0
        for game in all_games():
            for name in sorted(game.builtin_bots):
                _bot, new = Bot.objects.get_or_create(
                    owner=user,
                    game=game.slug,
                    name=name,
                    defaults={"kind": EndpointKind.BUILTIN, "target": name},
                )
                made += new
        if settings.DEBUG:
            self.stdout.write(f"demo: user 'demo' (staff), {made} new built-in bots")
        else:
            login = (
                "its password is ARENA_DEMO_PASSWORD"
                if user.has_usable_password()
                else "no password"
            )
            self.stdout.write(
                f"demo: production mode: user 'demo' is not staff ({login}), {made} new built-in bots"
            )
        demo_game = all_games()[0].slug  # the first game listed (Game.order)
        if not Event.objects.filter(name__startswith="Demo", status=EventStatus.RUNNING).exists():
            event = Event.objects.create(
                name=f"Demo {demo_game} round robin",
                game=demo_game,
                format=EventFormat.DOUBLE_ROUND_ROBIN,
                series_length=1,
                pace_ms=DEMO_PACE_MS,
                created_by=user,
            )
            for seed, bot in enumerate(
                Bot.objects.filter(owner=user, game=demo_game).order_by("name"), 1
            ):
                Entry.objects.create(event=event, bot=bot, seed=seed)
            created = start_event(event)
            self.stdout.write(f"demo: event {event.pk} running with {created} matches")
