"""``manage.py serve_bot GAME:NAME --port P``: serve a built-in bot over HTTP, natively.

The bot receives exactly what a remote bot receives (the game's JSON body, or form fields
for ``wire = "form"`` games) and answers its reply as ``application/json``. One bot
instance is kept per (``X-Arena-Match``, ``X-Arena-Seat``), so one server can play many
matches at once; a request without those headers uses one shared instance. An instance is
dropped after a request marked ``"final": true``, and the oldest go when there are more
than ``--max-instances``.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import OrderedDict
from urllib.parse import parse_qsl

from aiohttp import web
from django.core.management.base import BaseCommand, CommandError

from bots.codec import decode_reply
from bots.faults import BotFault
from games import get_game


def make_app(game, name: str, *, seed: int | None = None, max_instances: int = 1000,
             delay_ms: int = 0) -> web.Application:
    """The aiohttp application serving built-in bot ``name`` of ``game`` (answering after
    ``delay_ms``, to stand for a slow bot)."""
    factory = game.builtin_bots[name]
    instances: OrderedDict[tuple[str, str], tuple] = OrderedDict()
    master = random.Random(seed)

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            if game.wire == "form":
                message = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
            else:
                message = decode_reply(body)
        except (BotFault, UnicodeDecodeError) as exc:
            return web.json_response({"error": f"bad request: {exc}"}, status=400)
        key = (request.headers.get("X-Arena-Match", ""), request.headers.get("X-Arena-Seat", ""))
        if key not in instances:
            instances[key] = (factory(), random.Random(master.getrandbits(64)))
            while len(instances) > max_instances:
                instances.popitem(last=False)
        instances.move_to_end(key)
        bot, rng = instances[key]
        try:
            reply = bot(message, rng)
        except Exception as exc:  # a message the strategy cannot read: say so, stay up
            return web.json_response({"error": f"{type(exc).__name__}: {exc}"}, status=400)
        if isinstance(message, dict) and message.get("final") is True:
            instances.pop(key, None)
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        text = json.dumps(reply, separators=(",", ":"))
        return web.Response(text=text, content_type="application/json")

    app = web.Application(client_max_size=4 * 1024 * 1024)
    app.router.add_post("/{tail:.*}", handle)
    return app


class Command(BaseCommand):
    help = "Serve a built-in bot over HTTP in its game's native protocol."

    def add_arguments(self, parser):
        parser.add_argument("bot", metavar="GAME:NAME", help="e.g. tictactoe:random")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8100)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--max-instances", type=int, default=1000)
        parser.add_argument("--delay-ms", type=int, default=0, help="answer every request this late")

    def handle(self, *args, **opts):
        slug, sep, name = opts["bot"].partition(":")
        if not sep:
            raise CommandError("expected GAME:NAME, e.g. tictactoe:random")
        try:
            game = get_game(slug)
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        if name not in game.builtin_bots:
            raise CommandError(f"{slug} has no built-in bot {name!r}: {', '.join(sorted(game.builtin_bots))}")
        app = make_app(game, name, seed=opts["seed"], max_instances=opts["max_instances"],
                       delay_ms=max(0, opts["delay_ms"]))
        self.stdout.write(f"serving {slug}:{name} on http://{opts['host']}:{opts['port']}/")
        self.stdout.flush()
        web.run_app(app, host=opts["host"], port=opts["port"], print=None, access_log=None)
