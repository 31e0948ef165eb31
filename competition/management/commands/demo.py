"""``manage.py demo``: a staff user, a built-in bot of every strategy of every game, and a
running demo event of the first game listed (a paced double round robin, so spectators
can follow the moves).

Idempotent: it creates nothing twice, and starts a new demo event only when none is
running. The demo user's password comes from ``ARENA_DEMO_PASSWORD`` (default ``demo``;
set a real one anywhere but your laptop).
"""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from bots.models import Bot, EndpointKind
from competition.models import Entry, Event, EventFormat, EventStatus
from competition.services.events import start_event
from games import all_games

DEMO_PACE_MS = 600


class Command(BaseCommand):
    help = "Create the demo user and built-in bots for every game."

    def handle(self, *args, **opts):
        User = get_user_model()
        user, created = User.objects.get_or_create(
            username="demo", defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            user.set_password(os.environ.get("ARENA_DEMO_PASSWORD", "demo"))
            user.save()
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
        self.stdout.write(f"demo: user 'demo', {made} new built-in bots")
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
            for seed, bot in enumerate(Bot.objects.filter(owner=user, game=demo_game).order_by("name"), 1):
                Entry.objects.create(event=event, bot=bot, seed=seed)
            created = start_event(event)
            self.stdout.write(f"demo: event {event.pk} running with {created} matches")
