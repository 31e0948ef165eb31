"""``manage.py serve_bot GAME:NAME --port P``: serve a built-in bot over HTTP in the game's native
protocol, one instance per (match, seat); ``--kaggle`` adds kaggle-environments' protocol."""

from __future__ import annotations

import asyncio
import json
import random
from collections import OrderedDict
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from django.core.management.base import BaseCommand, CommandError

from bots.codec import decode_reply
from bots.faults import BotFault
from games import all_games, get_game


def make_app(
    game,
    name: str,
    *,
    seed: int | None = None,
    max_instances: int = 1000,
    delay_ms: int = 0,
    kaggle: bool = False,
) -> web.Application:
    """The aiohttp application serving built-in bot ``name`` of ``game``."""
    factory = game.builtin_bots[name]
    agent = game.kaggle_agent() if kaggle else None
    instances: OrderedDict[tuple[str, str], tuple] = OrderedDict()
    master = random.Random(seed)

    def ask(request: web.Request, message: Any) -> Any:
        key = (request.headers.get("X-Arena-Match", ""), request.headers.get("X-Arena-Seat", ""))
        if key not in instances:
            instances[key] = (factory(), random.Random(master.getrandbits(64)))
            while len(instances) > max_instances:
                instances.popitem(last=False)
        instances.move_to_end(key)
        bot, rng = instances[key]
        reply = bot(message, rng)
        if isinstance(message, dict) and message.get("final") is True:
            instances.pop(key, None)
        return reply

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            if game.wire == "form":
                message = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
            else:
                message = decode_reply(body)
        except (BotFault, UnicodeDecodeError) as exc:
            return web.json_response({"error": f"bad request: {exc}"}, status=400)
        try:
            reply = ask(request, message)
        except Exception as exc:  # a message the strategy cannot read: say so, stay up
            return web.json_response({"error": f"{type(exc).__name__}: {exc}"}, status=400)
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        text = json.dumps(reply, separators=(",", ":"))
        return web.Response(text=text, content_type="application/json")

    async def handle_kaggle(request: web.Request) -> web.Response:
        try:
            message = agent.message(decode_reply(await request.read()))
            cell = agent.action(ask(request, message))
        except (BotFault, ValueError) as exc:
            return web.json_response({"error": f"bad request: {exc}"}, status=400)
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        return web.json_response({"action": cell})

    app = web.Application(client_max_size=4 * 1024 * 1024)
    if agent is not None:
        app.router.add_post("/kaggle", handle_kaggle)
    app.router.add_post("/{tail:.*}", handle)
    return app


def _example() -> str:
    game = all_games()[0]
    bots = sorted(game.builtin_bots)
    return f"{game.slug}:{'random' if 'random' in bots else bots[0]}"


class Command(BaseCommand):
    help = "Serve a built-in bot over HTTP in its game's native protocol."
    # started by the dozen in tests and benches: the URL and deploy checks cost a second of
    # imports each and check nothing this command uses
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument(
            "bot", metavar="GAME:NAME", help="a game's slug and one of its built-in bots"
        )
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8100)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--max-instances", type=int, default=1000)
        parser.add_argument(
            "--delay-ms", type=int, default=0, help="answer every request this late"
        )
        parser.add_argument(
            "--kaggle",
            action="store_true",
            help="also serve kaggle-environments' URL-agent protocol on POST /kaggle",
        )

    def handle(self, *args, **opts):
        slug, sep, name = opts["bot"].partition(":")
        if not sep:
            raise CommandError(f"expected GAME:NAME, e.g. {_example()}")
        try:
            game = get_game(slug)
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        if name not in game.builtin_bots:
            raise CommandError(
                f"{slug} has no built-in bot {name!r}: {', '.join(sorted(game.builtin_bots))}"
            )
        if opts["kaggle"] and game.kaggle_agent() is None:
            kaggle = [g.slug for g in all_games() if g.kaggle_agent() is not None]
            raise CommandError(f"--kaggle is for {' and '.join(kaggle) or 'no game'} only")
        app = make_app(
            game,
            name,
            seed=opts["seed"],
            max_instances=opts["max_instances"],
            delay_ms=max(0, opts["delay_ms"]),
            kaggle=opts["kaggle"],
        )
        self.stdout.write(f"serving {slug}:{name} on http://{opts['host']}:{opts['port']}/")
        self.stdout.flush()
        web.run_app(app, host=opts["host"], port=opts["port"], print=None, access_log=None)
