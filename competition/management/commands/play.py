"""``manage.py play GAME SEAT0 SEAT1 [SEAT2...]``: one match between endpoints, no web server (local
HTTP bots need ``ARENA_BOT_ALLOW_NETWORKS``)."""

from __future__ import annotations

import asyncio
import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bots import egress
from bots.transports import for_endpoint
from competition.matches.loop import PlatformError, play
from games import get_game


class Command(BaseCommand):
    help = "Play one match between endpoints (one per seat) and print the result."
    # started by the dozen in tests and benches: the URL and deploy checks cost a second of
    # imports each and check nothing this command uses
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("game", help="a game's slug")
        parser.add_argument("seats", nargs="+", metavar="SEAT", help="one endpoint per seat")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--options", default=None, help="game options as a JSON object")
        parser.add_argument("--match-id", default="0", help="the id bots see (default 0)")
        parser.add_argument(
            "--names",
            default=None,
            help='the bot names the seats carry, as a JSON list (e.g. \'["a", "b"]\'); some '
            "games send them to the other seats (default: the endpoints)",
        )
        parser.add_argument("--json", action="store_true", help="print the full transcript")

    def handle(self, *args, **opts):
        try:
            game = get_game(opts["game"])
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        options = None
        if opts["options"]:
            try:
                options = json.loads(opts["options"])
            except json.JSONDecodeError as exc:
                raise CommandError(f"--options is not JSON: {exc}") from None
        seats = opts["seats"]
        low, high = game.seats
        if not low <= len(seats) <= high:
            wanted = str(low) if low == high else f"{low} to {high}"
            raise CommandError(f"{game.slug} needs {wanted} endpoints, got {len(seats)}")
        try:
            options = game.options_for_seats(game.resolve_options(options), len(seats))
        except ValueError as exc:
            raise CommandError(f"bad options: {exc}") from None
        names = tuple(seats)
        if opts["names"] is not None:
            try:
                names = json.loads(opts["names"])
            except json.JSONDecodeError as exc:
                raise CommandError(f"--names is not JSON: {exc}") from None
            if (
                not isinstance(names, list)
                or len(names) != len(seats)
                or not all(isinstance(n, str) for n in names)
            ):
                raise CommandError(f"--names must be a JSON list of {len(seats)} strings")
            names = tuple(names)
        try:
            transports = [
                for_endpoint(
                    spec,
                    game=game,
                    seat=i,
                    seed=opts["seed"],
                    match_id=opts["match_id"],
                    options=options,
                )
                for i, spec in enumerate(seats)
            ]
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        try:
            result = asyncio.run(self._play(game, transports, opts, options, names))
        except PlatformError as exc:
            raise CommandError(f"platform failure, match voided: {exc}") from None
        if opts["json"]:
            data = result.to_json(game)
            data["seats"] = seats
            data["names"] = list(names)
            data["seed"] = opts["seed"]
            data["options"] = options
            self.stdout.write(json.dumps(data, indent=None, separators=(",", ":")))
            return
        for turn in result.turns:
            if any(f not in (None, "ok") for f in turn.faults):
                for s in turn.seats:
                    if turn.faults[s] != "ok":
                        self.stdout.write(
                            f"turn {turn.number}: seat {s} fault {turn.faults[s]}"
                            f" ({turn.details[s] or ''})"
                        )
        scores = " - ".join(f"{s:g}" for s in result.outcome.scores)
        self.stdout.write(
            f"{game.title}: {scores} ({result.outcome.reason}) after {len(result.turns)} turns"
        )
        for seat, spec in enumerate(seats):
            self.stdout.write(f"  seat {seat}: {spec}  score {result.outcome.scores[seat]:g}")

    async def _play(self, game, transports, opts, options, names):
        try:
            return await play(
                game,
                transports,
                seed=opts["seed"],
                options=options,
                match_id=opts["match_id"],
                names=names,
                safety_timeout_ms=settings.ARENA_SAFETY_TIMEOUT_MS,
            )
        finally:
            await egress.close_session()
