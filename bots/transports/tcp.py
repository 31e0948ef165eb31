"""The ``tcp`` transport (AI Battleground's socket player): seats the first client to connect on
``host:port``, then stops listening; staff only, as it listens on the server's host."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bots.faults import BotFault, FaultCode
from bots.transports.lines import MAX_LINE_BYTES, LineTransport

logger = logging.getLogger(__name__)

ACCEPT_TIMEOUT = 30.0
CLOSE_TIMEOUT = 1.0


class TcpTransport(LineTransport):
    kind = "tcp"

    def __init__(
        self,
        host: str,
        port: int,
        *,
        codec,
        accept_timeout: float = ACCEPT_TIMEOUT,
        max_line_bytes: int = MAX_LINE_BYTES,
    ):
        super().__init__(codec=codec, max_line_bytes=max_line_bytes)
        self.host = host
        self.port = port
        self.accept_timeout = accept_timeout
        #: set once the socket listens (``port`` is then the bound port)
        self.listening = asyncio.Event()
        #: the seated client's address, once connected
        self.peer: tuple | None = None
        self._server: asyncio.Server | None = None
        self._seated = asyncio.Event()
        self._extra_writers: list[asyncio.StreamWriter] = []

    async def start(self) -> None:
        if self._server is not None or self.closed:
            raise BotFault(FaultCode.CONNECT, "the listener was already started")
        try:
            self._server = await asyncio.start_server(
                self._on_client, self.host, self.port, limit=self.stream_limit
            )
        except (OSError, ValueError) as exc:
            self._closed_reason = f"cannot listen on {self.host}:{self.port}"
            raise BotFault(
                FaultCode.CONNECT, f"cannot listen on {self.host}:{self.port}: {exc}"
            ) from None
        sockets = self._server.sockets
        if sockets:
            self.port = sockets[0].getsockname()[1]
        self.listening.set()
        try:
            async with asyncio.timeout(self.accept_timeout):
                await self._seated.wait()
        except TimeoutError:
            self._closed_reason = "no client connected"
            self._close_server()
            raise BotFault(
                FaultCode.CONNECT,
                f"no client connected to {self.host}:{self.port} within {self.accept_timeout} s",
            ) from None
        if self._writer is None:  # closed while waiting
            raise BotFault(FaultCode.CONNECT, self._closed_reason or "closed before a client came")

    def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._writer is not None or self.closed:
            self._extra_writers.append(writer)
            writer.transport.abort()  # the seat is taken: refuse
            return
        self.peer = writer.get_extra_info("peername")
        self._attach(reader, writer)
        self._close_server()  # later clients are refused by the OS
        self._seated.set()

    def _close_server(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _shutdown(self) -> None:
        self._seated.set()  # wake a start() still waiting
        self._close_server()
        writer = self._writer
        if writer is not None:
            with contextlib.suppress(Exception):
                if writer.can_write_eof() and not writer.is_closing():
                    writer.write_eof()
            with contextlib.suppress(Exception):
                writer.close()
                async with asyncio.timeout(CLOSE_TIMEOUT):
                    await writer.wait_closed()
        for extra in self._extra_writers:
            with contextlib.suppress(Exception):
                extra.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT):
                    await self._server.wait_closed()
