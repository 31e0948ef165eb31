"""What a request may send, and how many of a route's run at once, decided from its request line and
headers before a byte of its body is read (docs/architecture.md, "Before the body").

``ROUTES`` is the table; a new route's cap is one row. Counts are per process, on its event loop (no
locks)."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus

from django.conf import settings

from competition.plumbing.pool import SIMULATE_QUEUE, SIMULATE_WORKERS


@dataclass(frozen=True)
class Route:
    #: a regular expression matched (``re.match``) against the request's path
    pattern: str
    #: the name of the setting that holds the route's body cap, in bytes
    cap_setting: str
    #: requests of the route this process serves at once, all callers (None: no bound)
    at_once: int | None = None
    #: of those, from one client address (None: no bound)
    per_address: int | None = None

    @property
    def max_bytes(self) -> int:
        return getattr(settings, self.cap_setting)


#: the routes with a cap or a bound of their own; the first that matches wins
ROUTES: tuple[Route, ...] = (
    # a simulation runs in the web process's small pool (competition/plumbing/pool.py): as many
    # as it runs and queues, one per address; the others are refused before their body
    Route(
        r"^/api/games/[^/]+/simulate/$",
        "ARENA_MAX_BODY_BYTES",
        at_once=SIMULATE_WORKERS + SIMULATE_QUEUE,
        per_address=1,
    ),
    # uploads of submitted code: a 1 MiB file or archive in a multipart form (the API's
    # creation of a code bot and its new versions, the web form, the admin's bot form)
    Route(r"^/api/bots/([0-9]+/versions/)?$", "ARENA_MAX_UPLOAD_BYTES"),
    Route(r"^/bots/(new|[0-9]+/edit)/$", "ARENA_MAX_UPLOAD_BYTES"),
    Route(r"^/admin/competition/bot/(add|[0-9]+/change)/$", "ARENA_MAX_UPLOAD_BYTES"),
)
#: every other path
DEFAULT = Route(r"", "ARENA_MAX_BODY_BYTES")


@cache
def _compiled() -> tuple[tuple[re.Pattern, Route], ...]:
    return tuple((re.compile(route.pattern), route) for route in ROUTES)


def route_for(path: str) -> Route:
    """The row of ``ROUTES`` for a request's path (``DEFAULT`` when none matches)."""
    return next((route for pattern, route in _compiled() if pattern.match(path)), DEFAULT)


@dataclass(frozen=True)
class Refusal:
    """An answer given instead of the application's: status, headers and body."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes

    def head(self) -> bytes:
        """The HTTP/1.1 status line and headers (the connection is closed after it)."""
        lines = [f"HTTP/1.1 {self.status} {HTTPStatus(self.status).phrase}".encode()]
        lines += [name + b": " + value for name, value in self.headers]
        lines += [b"Content-Length: " + str(len(self.body)).encode(), b"Connection: close"]
        return b"\r\n".join(lines) + b"\r\n\r\n"


def refusal(path: str, status: int, code: str, detail: str, retry_after: int = 0) -> Refusal:
    """``detail`` as JSON under ``/api/`` (as the API answers errors), as plain text elsewhere."""
    if path.startswith("/api/"):
        body = json.dumps({"code": code, "detail": detail}).encode()
        kind = b"application/json"
    else:
        body = (detail + "\n").encode()
        kind = b"text/plain; charset=utf-8"
    headers = [(b"Content-Type", kind)]
    if retry_after:
        headers.append((b"Retry-After", str(retry_after).encode()))
    return Refusal(status, tuple(headers), body)


def too_large(path: str, route: Route) -> Refusal:
    return refusal(
        path, 413, "too_large", f"The request body is larger than {route.max_bytes} bytes."
    )


def declared_length(value: bytes | None) -> int | None:
    """A ``Content-Length`` as a number (None: absent; -1: malformed, which no cap admits)."""
    if value is None:
        return None
    value = value.strip()
    return int(value) if value.isdigit() and len(value) < 20 else -1


class InFlight:
    """Requests of each bounded route being served now, in all and per address."""

    def __init__(self) -> None:
        self.total: Counter[Route] = Counter()
        self.per_address: Counter[tuple[Route, str]] = Counter()

    def enter(self, route: Route, path: str, address: str) -> Refusal | None:
        """Count one request in, or the refusal when the route is full (nothing counted)."""
        if route.at_once is None and route.per_address is None:
            return None
        if route.per_address is not None and (
            self.per_address[route, address] >= route.per_address
        ):
            detail = (
                f"At most {route.per_address} such request per address at a time: "
                "wait for the answer to the one before."
            )
            return refusal(path, 429, "too_many", detail, retry_after=1)
        if route.at_once is not None and self.total[route] >= route.at_once:
            detail = (
                "This server is busy with as many of these requests as it takes; try again shortly."
            )
            return refusal(path, 503, "busy", detail, retry_after=5)
        self.total[route] += 1
        self.per_address[route, address] += 1
        return None

    def leave(self, route: Route, address: str) -> None:
        self.total[route] -= 1
        self.per_address[route, address] -= 1
        if self.total[route] <= 0:
            del self.total[route]
        if self.per_address[route, address] <= 0:
            del self.per_address[route, address]


class BodyCap:
    """ASGI middleware applying the caps of ``ROUTES``: a declared length over the cap is refused
    before the application runs, and a body growing past it is cut."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.application(scope, receive, send)
        path = scope.get("path", "")
        route = route_for(path)
        length = declared_length(dict(scope.get("headers") or ()).get(b"content-length"))
        if length is not None and not 0 <= length <= route.max_bytes:
            return await _answer(send, too_large(path, route))
        received = 0
        answered = False

        async def capped_receive():
            nonlocal received, answered
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > route.max_bytes:
                    if not answered:
                        answered = True
                        await _answer(send, too_large(path, route))
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            if not answered:  # nothing of the application's after the 413
                await send(message)

        return await self.application(scope, capped_receive, guarded_send)


async def _answer(send, refused: Refusal) -> None:
    headers = [(name.lower(), value) for name, value in refused.headers]
    headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": refused.body})
