"""``manage.py demo`` (idempotent): the ``demo`` user, the platform's seats, a rated demo event
and a paced showcase per game. With ``DEBUG=false`` ``demo`` is never staff, no known password."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from competition.bots.services import platform_seat
from competition.events.demo import DEMO_EVENT_NAME, DEMO_PACE_MS, demo_user, ensure_showcase
from competition.events.services import start_event
from competition.models import Entry, Event, EventFormat
from competition.models.bots import EndpointKind
from games import all_games


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
