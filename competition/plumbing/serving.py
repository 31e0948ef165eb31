"""Daphne as ``manage.py serve`` runs it, each request admitted before its body is read.

A refusal's remaining body is drained, boundedly, so the client reads the answer, not a reset.
Importing this module installs daphne's reactor."""

from __future__ import annotations

import io
from urllib.parse import unquote

from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server as DaphneServer
from daphne.ws_protocol import WebSocketProtocol
from twisted.internet import reactor

from competition.plumbing.admission import (
    InFlight,
    Refusal,
    route_for,
    too_large,
)
from competition.plumbing.frames import EXTENSION, SocketWriter
from competition.plumbing.ratelimit import address_from

#: how long a websocket's opening handshake may take, the application's accept included
#: (daphne's default is 5 s): a room of spectators opening a match at once all get in, the
#: last ones after their connects' turn on the database thread, on a loaded machine too
HANDSHAKE_SECONDS = 20
#: connections the kernel holds for the server to accept (Twisted's default is 50)
BACKLOG = 1024

#: how long a refused connection's remaining body is read and dropped
LINGER_SECONDS = 2.0
#: how much of it at most
LINGER_BYTES = 1 << 20

#: the bounded routes' requests being served by this process
IN_FLIGHT = InFlight()


class AdmittedRequest(WebRequest):
    """Daphne's request, admitted by ``competition.plumbing.admission`` before its body is read."""

    route = None
    address = ""
    refused = False
    counted = False
    received = 0

    def __init__(self, *args, **kwargs):
        # Twisted would parse a multipart body itself (all of it in memory, for arguments
        # daphne never reads) and answer a malformed one with a bare 400: bodies are Django's
        super().__init__(*args, parsePOSTFormSubmission=False, **kwargs)

    def gotLength(self, length):
        raw = getattr(self.channel, "_path", b"") or b""
        # the path as daphne gives it to the application (``scope["path"]``)
        self.admission_path = unquote(raw.split(b"?", 1)[0].decode("ascii", "replace"))
        self.route = route = route_for(self.admission_path)
        if length is not None and length > route.max_bytes:  # Content-Length, as Twisted read it
            return self.refuse(too_large(self.admission_path, route))
        peer = getattr(self.client, "host", None)
        forwarded = b",".join(self.requestHeaders.getRawHeaders(b"x-forwarded-for", []))
        self.address = address_from(peer, forwarded.decode("latin1") or None)
        refused = IN_FLIGHT.enter(route, self.admission_path, self.address)
        if refused is not None:
            return self.refuse(refused)
        self.counted = True
        self.content = io.BytesIO()  # at most the cap: never a temporary file

    def handleContentChunk(self, data):
        if self.refused:
            return
        self.received += len(data)
        if self.received > self.route.max_bytes:
            self.refuse(too_large(self.admission_path, self.route))
            return
        self.content.write(data)

    def requestReceived(self, command, path, version):
        if not self.refused:
            super().requestReceived(command, path, version)

    def refuse(self, answer: Refusal) -> None:
        """Answer ``answer`` on the connection now, keep nothing of the body, close."""
        self.refused = True
        self.release()
        self.content = io.BytesIO()
        self.requestHeaders.removeHeader(b"expect")  # no "100 Continue" after the answer
        channel = self.channel
        transport = channel.transport
        transport.write(answer.head() + answer.body)
        dropped = [0]
        timer = reactor.callLater(LINGER_SECONDS, transport.abortConnection)

        def drop(data: bytes) -> None:  # the channel parses nothing more
            dropped[0] += len(data)
            if dropped[0] > LINGER_BYTES and timer.active():
                timer.cancel()
                transport.abortConnection()

        channel.dataReceived = drop
        self.notifyFinish().addBoth(lambda _: timer.active() and timer.cancel())
        half_close = getattr(transport, "loseWriteConnection", None)
        (half_close or transport.loseConnection)()

    def release(self) -> None:
        if self.counted:
            self.counted = False
            IN_FLIGHT.leave(self.route, self.address)

    def finish(self):
        self.release()
        return super().finish()

    def connectionLost(self, reason):
        self.release()
        return super().connectionLost(reason)


class AdmittedHTTPFactory(HTTPFactory):
    def buildProtocol(self, addr):
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = AdmittedRequest
        return protocol


class Server(DaphneServer):
    """Daphne's server with ``AdmittedRequest``, each websocket's scope with its ``SocketWriter``,
    a longer opening handshake (``HANDSHAKE_SECONDS``) and a deeper backlog (``BACKLOG``)."""

    def __init__(self, *args, endpoints, **kwargs):
        kwargs.setdefault("websocket_handshake_timeout", HANDSHAKE_SECONDS)
        endpoints = [with_backlog(endpoint) for endpoint in endpoints]
        super().__init__(*args, endpoints=endpoints, **kwargs)

    def create_application(self, protocol, scope):
        if isinstance(protocol, WebSocketProtocol) and protocol.transport is not None:
            extensions = scope.setdefault("extensions", {})
            extensions[EXTENSION] = {"writer": SocketWriter(protocol)}
        return super().create_application(protocol, scope)

    @property
    def http_factory(self):
        return self._http_factory

    @http_factory.setter
    def http_factory(self, factory) -> None:
        self._http_factory = AdmittedHTTPFactory(self) if type(factory) is HTTPFactory else factory


def with_backlog(endpoint: str) -> str:
    """A Twisted server endpoint description with ``BACKLOG``, unless it names its own."""
    kind = endpoint.split(":", 1)[0]
    if kind not in ("tcp", "tcp6", "unix", "ssl") or ":backlog=" in endpoint:
        return endpoint
    return f"{endpoint}:backlog={BACKLOG}"
