"""Line framing for the ``process`` and ``tcp`` transports: one compact JSON line out, one back.
After a timeout, ``too_large`` or ``connect`` the stream is closed at once: a late line could
never be matched to its message, so every later exchange is ``connect``."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from bots.codec import decode_reply, preview
from bots.faults import BotFault, FaultCode
from bots.transports.base import Exchange, Transport
from games.base import compact_json

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 1 << 20
ERROR_LINE_TIMEOUT = 1.0
RECEIVED_PREVIEW = 65_536


class LineTransport(Transport):
    def __init__(self, *, codec: Any, max_line_bytes: int = MAX_LINE_BYTES):
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.codec = codec
        self.max_line_bytes = max_line_bytes
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._closed_reason: str | None = None

    # -- for subclasses ---------------------------------------------------------------

    @property
    def stream_limit(self) -> int:
        """The StreamReader limit to create streams with: the cap plus room for a ``\\r``."""
        return self.max_line_bytes + 1

    def _attach(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    def _abort(self, reason: str) -> None:
        """Close the stream at once (synchronously); later exchanges are ``connect``."""
        if self._closed_reason is None:
            self._closed_reason = reason
        writer = self._writer
        if writer is not None:
            try:
                writer.transport.abort()
            except Exception:  # already gone
                pass

    async def _shutdown(self) -> None:
        """Release everything after the stream has ended (overridden by subclasses)."""
        if self._closed_reason is None:
            self._closed_reason = "the transport is closed"
        writer = self._writer
        if writer is not None:
            try:
                writer.close()
                async with asyncio.timeout(ERROR_LINE_TIMEOUT):
                    await writer.wait_closed()
            except Exception:
                pass

    @property
    def closed(self) -> bool:
        return self._closed_reason is not None

    # -- the Transport interface ------------------------------------------------------

    async def exchange(self, message: Any, *, timeout: float | None) -> Exchange:
        sent = self.codec.encode_message(message)
        if self._closed_reason is not None or self._writer is None or self._reader is None:
            reason = self._closed_reason or "the transport was never started"
            raise BotFault(FaultCode.CONNECT, reason, sent=sent)
        try:
            async with asyncio.timeout(timeout):
                self._writer.write(sent.encode("utf-8") + b"\n")
                await self._writer.drain()
                line = await self._read_line()
        except TimeoutError:
            self._abort(f"closed after missing a deadline ({timeout} s)")
            raise BotFault(
                FaultCode.TIMEOUT, f"no complete line within {timeout} s", sent=sent
            ) from None
        except BotFault as fault:
            fault.sent = sent
            raise
        except asyncio.CancelledError:
            self._abort("closed after an interrupted exchange")
            raise
        except (ConnectionError, OSError, RuntimeError) as exc:
            self._abort(f"the stream failed: {exc!r}")
            raise BotFault(FaultCode.CONNECT, f"the stream failed: {exc!r}", sent=sent) from None
        received = preview(line, RECEIVED_PREVIEW)
        try:
            reply = decode_reply(line)
        except BotFault as fault:
            fault.sent, fault.received = sent, received
            raise
        return Exchange(reply=reply, sent=sent, received=received)

    async def _read_line(self) -> bytes:
        assert self._reader is not None
        try:
            raw = await self._reader.readuntil(b"\n")
        except asyncio.LimitOverrunError:
            self._abort("closed after a line over the byte cap")
            raise BotFault(
                FaultCode.TOO_LARGE, f"a reply line longer than {self.max_line_bytes} bytes"
            ) from None
        except asyncio.IncompleteReadError as exc:
            where = "in the middle of a line" if exc.partial else ""
            reason = f"the bot closed its stream {where}".rstrip()
            self._abort(reason)
            raise BotFault(
                FaultCode.CONNECT, reason, received=preview(exc.partial, RECEIVED_PREVIEW)
            ) from None
        line = raw[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_line_bytes:
            self._abort("closed after a line over the byte cap")
            raise BotFault(
                FaultCode.TOO_LARGE, f"a reply line longer than {self.max_line_bytes} bytes"
            )
        return line

    async def close(self, *, error: str | None = None) -> None:
        try:
            if error is not None and self._closed_reason is None and self._writer is not None:
                try:
                    async with asyncio.timeout(ERROR_LINE_TIMEOUT):
                        self._writer.write(compact_json({"error": error}).encode("utf-8") + b"\n")
                        await self._writer.drain()
                except Exception as exc:  # the bot may already be gone
                    logger.debug("could not write the error line: %r", exc)
            if self._closed_reason is None:
                self._closed_reason = "the transport is closed"
            await self._shutdown()
        except Exception:
            logger.exception("closing a %s transport failed", self.kind)
