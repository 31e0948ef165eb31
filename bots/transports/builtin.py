"""The ``builtin`` transport: a game's strategy in process, fed and decoded as a remote bot would
be, so it can never send what a remote bot could not."""

from __future__ import annotations

import json
import logging
from typing import Any

from bots.codec import decode_reply
from bots.faults import BotFault, FaultCode
from bots.transports.base import Exchange, Transport
from games.base import Game, rng_for

logger = logging.getLogger(__name__)


class BuiltinTransport(Transport):
    kind = "builtin"

    def __init__(self, game: Game, name: str, *, seed: int = 0, seat: int = 0):
        if name not in game.builtin_bots:
            known = ", ".join(sorted(game.builtin_bots))
            raise ValueError(f"{game.slug} has no built-in bot {name!r} (known: {known})")
        self.game = game
        self.name = name
        self._bot = game.builtin_bots[name]()
        self._rng = rng_for(seed, 0, f"builtin:{seat}:{name}")

    async def exchange(self, message: Any, *, timeout: float | None) -> Exchange:
        sent = self.game.encode_message(message)
        try:
            reply = self._bot(json.loads(sent), self._rng)
            received = json.dumps(reply, separators=(",", ":"), allow_nan=False)
        except Exception as exc:  # a broken built-in is our bug, never the seat's
            logger.exception("built-in bot %s:%s failed", self.game.slug, self.name)
            raise BotFault(FaultCode.PLATFORM, f"built-in bot failed: {exc!r}") from None
        return Exchange(reply=decode_reply(received), sent=sent, received=received)
