"""The ``human`` transport: a person plays a seat from the match page, under the usual time limit.

The request is re-published every second so a page opened mid-match gets it; replies the runner
ignores are answered here so a closed tab never holds up a match."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from bots.codec import decode_reply
from bots.faults import BotFault, FaultCode
from bots.transports.base import Exchange, Transport
from games.base import Game

logger = logging.getLogger(__name__)

#: how often a pending request is published again (late or reconnected pages)
REPUBLISH_SECONDS = 1.0

#: ``(match_id, seat) -> group name`` of a human seat's browser sockets (``use_seat_groups``)
_seat_groups: Callable[[int, int], str] | None = None


def use_seat_groups(namer: Callable[[int, int], str]) -> None:
    """Inject how the platform names a human seat's channel-layer group (once, at start-up)."""
    global _seat_groups
    _seat_groups = namer


class HumanTransport(Transport):
    kind = "human"

    def __init__(self, *, game: Game, match_id: str, seat: int, seat_group: str | None = None):
        self.game = game
        self.match_id = str(match_id)
        self.seat = seat
        self.seat_group = seat_group
        self.seq = 0
        self.channel: str | None = None
        self.layer = None

    def group(self) -> str:
        if self.seat_group is not None:
            return self.seat_group
        if _seat_groups is None:
            raise BotFault(FaultCode.PLATFORM, "no seat channel: use_seat_groups was not called")
        return _seat_groups(int(self.match_id), self.seat)

    async def start(self) -> None:
        self.group()  # no seat channel injected: a platform fault before anything is sent
        from channels.layers import get_channel_layer

        self.layer = get_channel_layer()
        if self.layer is None:
            raise BotFault(FaultCode.PLATFORM, "no channel layer: human seats need one")
        self.channel = await self.layer.new_channel(prefix="humanseat.")

    async def _publish(self, payload: dict) -> None:
        try:
            await self.layer.group_send(self.group(), payload)
        except Exception:  # the page catches up with the next re-publication
            logger.exception("human seat %s/%s: publish failed", self.match_id, self.seat)

    async def exchange(self, message: Any, *, timeout: float | None) -> Exchange:
        sent = self.game.encode_message(message)
        answered, reply = self.game.human_reply(message)
        if answered:
            return Exchange(reply=reply, sent=sent, received=json.dumps(reply))
        if self.layer is None or self.channel is None:
            raise BotFault(FaultCode.CONNECT, "the human seat was not started")
        self.seq += 1
        seq = self.seq
        limit = timeout if timeout is not None else 60.0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        request = {
            "type": "human.request",
            "seq": seq,
            "message": message,
            "reply_to": self.channel,
            "timeout_ms": int(limit * 1000),
            "deadline": time.time()
            + limit,  # wall clock; "remaining_ms" is added at each publication
        }
        await self._publish({**request, "remaining_ms": int(limit * 1000)})
        next_publish = loop.time() + REPUBLISH_SECONDS
        while True:
            now = loop.time()
            if now >= deadline:
                raise BotFault(
                    FaultCode.TIMEOUT, f"no move within {int(limit * 1000)} ms", sent=sent
                )
            if now >= next_publish:
                await self._publish({**request, "remaining_ms": int((deadline - now) * 1000)})
                next_publish = now + REPUBLISH_SECONDS
            wait = min(deadline, next_publish) - now
            try:
                received = await asyncio.wait_for(self.layer.receive(self.channel), max(wait, 0.01))
            except TimeoutError:
                continue
            if received.get("type") != "human.move" or received.get("seq") != seq:
                continue  # a late answer to an earlier request
            text = received.get("text")
            if not isinstance(text, str):
                continue
            try:
                reply = decode_reply(text)
            except BotFault as fault:
                fault.sent, fault.received = sent, text
                raise
            return Exchange(reply=reply, sent=sent, received=text)

    async def close(self, *, error: str | None = None) -> None:
        if self.layer is None:
            return
        try:
            await self.layer.group_send(
                self.group(), {"type": "human.closed", "error": error or ""}
            )
        except Exception:
            logger.debug(
                "human seat %s/%s: close notice failed", self.match_id, self.seat, exc_info=True
            )
