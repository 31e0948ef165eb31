"""``manage.py demo``: a staff user and a built-in bot of every strategy of every game.

Idempotent: running it again changes nothing. The demo user's password comes from
``ARENA_DEMO_PASSWORD`` (default ``demo``; set a real one anywhere but your laptop).
"""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from bots.models import Bot, EndpointKind
from games import all_games


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
