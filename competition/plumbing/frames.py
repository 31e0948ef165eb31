"""Hub messages written straight to daphne's websockets, framed once for every socket; a socket
``ARENA_SPECTATOR_BACKLOG_BYTES`` behind while paused is dropped, so a slow spectator never holds
the others nor grows memory unbounded."""

from __future__ import annotations

import asyncio
import logging

from autobahn.websocket.protocol import PreparedMessage
from django.conf import settings
from twisted.internet import tcp

logger = logging.getLogger(__name__)

#: the scope extension ``competition.plumbing.serving`` sets on a websocket's scope
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
        #: frames written since the loop's last turn, sent together by ``flush``
        self.queued: list[bytes] = []
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
            self.flush()  # what was queued here goes first
            protocol.sendPreparedMessage(prepared)  # compressed, or behind autobahn's own queue
        else:
            # what ``sendPreparedMessage`` does then, without the debug line it formats for
            # every write whatever the log level (a third of the fan-out's time), and sent
            # with the socket's other frames of this turn of the loop (``flush``)
            if not self.queued:
                _later.append(self)
            self.queued.append(prepared.payloadHybi)
            if len(_later) == 1:
                _schedule()
        return True

    def flush(self) -> None:
        """Send the frames queued since the loop's last turn, in one write."""
        queued, self.queued = self.queued, []
        if not queued or self.dropped or self.protocol.state != self.protocol.STATE_OPEN:
            return
        send(self.protocol.transport, queued[0] if len(queued) == 1 else b"".join(queued))

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


#: the writers with frames queued, flushed once the running code gives the loop back
_later: list[SocketWriter] = []


def _schedule() -> None:
    try:
        asyncio.get_running_loop().call_soon(flush_all)
    except RuntimeError:  # no loop running here: at once
        flush_all()


def flush_all() -> None:
    """Send every writer's queued frames, one write per socket (its own order kept)."""
    writers = list(_later)
    _later.clear()
    for one in writers:
        try:
            one.flush()
        except Exception:  # a dead socket never stops the others
            logger.debug("live: a spectator's write failed", exc_info=True)


def send(transport, data: bytes) -> None:
    """``data`` on ``transport`` in order: sent at once when nothing waits before it, else queued
    by Twisted (which pauses the producer). Twisted's own ``write`` costs three epoll changes and
    a loop callback per message."""
    if (
        isinstance(transport, tcp.Connection)
        and not transport.TLS
        and transport.connected
        and not (transport.disconnecting or transport._writeDisconnecting)
        and not transport.dataBuffer
        and not transport._tempDataBuffer
    ):
        sent = transport.writeSomeData(data)
        if isinstance(sent, int):  # else the connection is lost: Twisted's write finds it
            if sent == len(data):
                return
            data = data[sent:]
    transport.write(data)


def writer(scope) -> SocketWriter | None:
    """The scope's socket writer (None: not served by ``manage.py serve``)."""
    return scope.get("extensions", {}).get(EXTENSION, {}).get("writer")
