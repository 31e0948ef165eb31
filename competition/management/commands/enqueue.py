"""``manage.py enqueue GAME SEAT0 SEAT1 [--count N]``: queue matches between endpoints; other than
built-ins they become bots of the ``cli`` staff user. The matches are the operator's (no user
made them: ``created_by`` empty), so they are rated as the platform's pairings are."""

from __future__ import annotations

import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from bots.transports import split_endpoint
from competition.bots.services import get_or_create_bot, platform_seat
from competition.matches.lifecycle import create_match
from competition.models.bots import EndpointKind, validate_endpoint
from games import get_game


class Command(BaseCommand):
    help = "Queue matches between endpoints; prints the match ids."
    # started by the dozen in tests and benches: the URL and deploy checks cost a second of
    # imports each and check nothing this command uses
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("game")
        parser.add_argument("seats", nargs="+", metavar="SEAT")
        parser.add_argument("--count", type=int, default=1)
        parser.add_argument("--seed", type=int, default=None, help="first seed (then +1 per match)")
        parser.add_argument("--options", default=None, help="game options as a JSON object")
        parser.add_argument("--pace-ms", type=int, default=0, help="minimum duration of a turn")
        parser.add_argument("--start-in", type=float, default=0, help="seconds before it may start")

    def handle(self, *args, **opts):
        try:
            game = get_game(opts["game"])
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        try:
            options = json.loads(opts["options"]) if opts["options"] else None
        except json.JSONDecodeError as exc:
            raise CommandError(f"--options is not JSON: {exc}") from None
        user, _ = get_user_model().objects.get_or_create(
            username="cli", defaults={"is_staff": True}
        )
        bots = []
        try:
            for spec in opts["seats"]:
                kind, target = split_endpoint(spec)
                validate_endpoint(game.slug, kind, target, staff=True)
                if kind == EndpointKind.BUILTIN:  # the platform's own seat: nobody's bot
                    bots.append(platform_seat(game.slug, kind, target))
                    continue
                bot, _ = get_or_create_bot(
                    owner=user,
                    game=game.slug,
                    kind=kind,
                    target=target,
                    defaults={"name": f"{kind}:{target}"[:80]},
                )
                bots.append(bot)
            ids = []
            with transaction.atomic():
                for i in range(max(1, opts["count"])):
                    seed = None if opts["seed"] is None else opts["seed"] + i
                    not_before = (
                        timezone.now() + timedelta(seconds=opts["start_in"])
                        if opts["start_in"] > 0
                        else None
                    )
                    # no created_by: the operator's queue, not a user's practice (rated)
                    match = create_match(
                        game.slug,
                        bots,
                        options=options,
                        seed=seed,
                        pace_ms=max(0, opts["pace_ms"]),
                        not_before=not_before,
                    )
                    ids.append(match.pk)
        except (ValueError, ValidationError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(ids))
