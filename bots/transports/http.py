"""The ``http`` transport: one POST per message through ``bots.egress``, to the URL exactly as
registered, the body in the game's wire format (``json`` or ``form`` fields, in order).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode

from bots import egress
from bots.codec import decode_reply, preview
from bots.faults import BotFault, FaultCode
from bots.names import fits_label
from bots.transports.base import Exchange, Transport
from games.base import Game

#: replies larger than this are decoded on a worker thread (a 1 MB reply takes milliseconds)
DECODE_INLINE_BYTES = 65_536
CONTENT_TYPES = {"json": "application/json", "form": "application/x-www-form-urlencoded"}


def announced(header: str) -> str:
    """The version label in an ``X-Bot-Version`` header, or "" if it is empty, too long or not
    printable (ignored: a bad header never faults a move)."""
    label = header.strip()
    return label if fits_label(label) else ""


def encode_text(game: Game, message: Any) -> tuple[str, str]:
    """(body text, content type) of ``message`` in the game's wire format."""
    if game.wire == "form":
        return urlencode(list(message.items())), CONTENT_TYPES["form"]
    return game.encode_message(message), CONTENT_TYPES["json"]


def encode_body(game: Game, message: Any) -> tuple[bytes, str]:
    """(body bytes, content type) of ``message`` in the game's wire format."""
    text, content_type = encode_text(game, message)
    return text.encode("utf-8"), content_type


class HttpTransport(Transport):
    kind = "http"
    bounded = True  # every byte of the request and its reply under egress's one deadline

    def __init__(
        self,
        url: str,
        *,
        game: Game,
        match_id: str = "0",
        seat: int = 0,
        secret: str = "",
        ignore_http_status: bool = False,
        policy: egress.EgressPolicy | None = None,
    ):
        self.url = url
        self.game = game
        self.match_id = str(match_id)
        self.seat = seat
        self.secret = secret
        self.ignore_http_status = ignore_http_status
        self.policy = policy
        self.session = None  # the running loop's keep-alive session, kept for the match's moves

    async def exchange(self, message: Any, *, timeout: float | None) -> Exchange:
        sent, content_type = encode_text(self.game, message)
        body = sent.encode("utf-8")
        if self.session is None or self.session.closed:
            self.session = egress.get_session()
        try:
            reply = await egress.post(
                self.url,
                body,
                content_type=content_type,
                timeout=timeout if timeout is not None else 60.0,
                secret=self.secret,
                match_id=self.match_id,
                seat=self.seat,
                policy=self.policy,
                session=self.session,
            )
        except BotFault as fault:
            fault.sent = sent
            raise
        try:  # decoded once: for the log and for the value (``decode_reply`` judges bad UTF-8)
            text: str | bytes = reply.body.decode("utf-8")
        except UnicodeDecodeError:
            text = reply.body
        received = preview(text, 65_536)
        if reply.version and not self.announced_version:
            self.announced_version = announced(reply.version)
        if not (200 <= reply.status < 300) and not self.ignore_http_status:
            raise BotFault(
                FaultCode.HTTP_STATUS,
                f"HTTP {reply.status}: {preview(reply.body, 120)!r}",
                sent=sent,
                received=received,
            )
        try:
            if len(reply.body) > DECODE_INLINE_BYTES:  # a large reply is decoded off the event loop
                value = await asyncio.to_thread(decode_reply, text)
            else:
                value = decode_reply(text)
        except BotFault as fault:
            fault.sent, fault.received = sent, received
            raise
        return Exchange(reply=value, sent=sent, received=received, status=reply.status)
