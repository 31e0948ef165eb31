"""Hub messages written straight to daphne's websockets: framed once, one write per socket
(Channels' send path framed the same text again per spectator).

The writer is its transport's push producer, so Twisted says when the socket's buffer is full;
a socket ``ARENA_SPECTATOR_BACKLOG_BYTES`` behind while paused is dropped (its page reconnects
to a fresh snapshot), so a slow spectator never holds the others nor grows memory unbounded.
"""

from __future__ import annotations

import logging

from autobahn.websocket.protocol import PreparedMessage
from django.conf import settings

logger = logging.getLogger(__name__)

#: the scope extension ``competition.serving`` sets on a websocket's scope
EXTENSION = "arena.socket_writer"


class Frame:
    """A hub message's text as a websocket frame, built on first use, once for every socket."""

    __slots__ = ("_prepared", "message")

    def __init__(self, message: dict):
        self.message = message
        self._prepared: PreparedMessage | None = None

    def prepared(self, text: str) -> PreparedMessage:
        """``text`` framed; kept only for the message's own text, not a consumer's replacement."""
        if text is not self.message.get("text"):
            return _prepare(text)
        if self._prepared is None:
            self._prepared = _prepare(text)
        return self._prepared


def _prepare(text: str) -> PreparedMessage:
    return PreparedMessage(text.encode(), isBinary=False, applyMask=False, doNotCompress=False)


class SocketWriter:
    """One daphne websocket's writer of prepared frames and its transport's push producer."""

    def __init__(self, protocol, backlog: int | None = None):
        self.protocol = protocol
        self.backlog = settings.ARENA_SPECTATOR_BACKLOG_BYTES if backlog is None else backlog
        self.paused = False
        #: bytes written since the transport said its buffer was full
        self.behind = 0
        self.dropped = False
        transport = protocol.transport
        # the HTTP channel the connection was upgraded from stays its producer: it has no
        # more use for the transport
        if getattr(transport, "producer", None) is not None:
            transport.unregisterProducer()
        protocol.registerProducer(self, True)

    def write(self, prepared: PreparedMessage) -> bool:
        """Write ``prepared`` (False: the socket is closed or was dropped for being slow)."""
        protocol = self.protocol
        if self.dropped or protocol.state != protocol.STATE_OPEN:
            return False
        if self.paused:
            self.behind += len(prepared.payloadHybi)
            if self.behind > self.backlog:
                self.drop()
                return False
        if protocol.websocket_extensions_in_use or protocol.send_queue:
            protocol.sendPreparedMessage(prepared)  # compressed, or behind autobahn's own queue
        else:
            # what ``sendPreparedMessage`` does then, without the debug line it formats for
            # every write whatever the log level (a third of the fan-out's time)
            protocol.transport.write(prepared.payloadHybi)
        return True

    def drop(self) -> None:
        self.dropped = True
        logger.info(
            "live: dropped a spectator %s bytes behind (ARENA_SPECTATOR_BACKLOG_BYTES)",
            self.behind,
        )
        self.protocol.dropConnection(abort=True)

    # IPushProducer
    def pauseProducing(self) -> None:
        self.paused = True

    def resumeProducing(self) -> None:
        self.paused = False
        self.behind = 0

    def stopProducing(self) -> None:
        self.dropped = True


def writer(scope) -> SocketWriter | None:
    """The scope's socket writer (None: not served by ``manage.py serve``)."""
    return scope.get("extensions", {}).get(EXTENSION, {}).get("writer")
