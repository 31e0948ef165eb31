"""Fixed-window counters for the unauthenticated forms that cost something: sign-up (an
account) and password reset (a mail).

Counts live in the ``ratelimit`` cache (``settings.CACHES``): Redis when ``REDIS_URL`` is
set, so every web node shares them, else this process's memory (the embedded default is a
single process). ``add`` then ``incr`` is atomic in both. Keys are hashed: no address or
e-mail is stored in clear.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.shortcuts import render

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    scope: str
    count: int
    seconds: int


def client_address(request) -> str:
    """The client's address: the one function that decides it, for the sign-up and reset
    limits, the API's throttles and the log-in lock-out (``AXES_CLIENT_IP_CALLABLE``).

    With no proxy (``ARENA_NUM_PROXIES=0``, the embedded default) it is the connection's peer
    and ``X-Forwarded-For`` is ignored: any client can write it. Behind ``N`` proxies it is the
    ``N``-th entry from the right of ``X-Forwarded-For``: each proxy appends the address it
    was connected from, so the entries left of those are whatever the client wrote. A header
    with fewer entries, or an entry that is not an address, falls back to the peer (the
    proxy: such requests share its counters rather than choose their own). The count lives
    in ``REST_FRAMEWORK["NUM_PROXIES"]`` (from ``ARENA_NUM_PROXIES``), which DRF reads too.

    ``serve`` leaves the peer in ``REMOTE_ADDR``: daphne's own proxy-header rewrite would put
    the leftmost, client-written entry there."""
    return address_from(request.META.get("REMOTE_ADDR"), request.META.get("HTTP_X_FORWARDED_FOR"))


def address_from(peer: str | None, forwarded: str | None) -> str:
    """``client_address`` from the connection's peer and the ``X-Forwarded-For`` header as
    they arrived (the request admission reads them off the raw headers, before Django)."""
    peer = peer or "unknown"
    proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    if proxies <= 0 or not forwarded:
        return peer
    entries = [entry.strip() for entry in forwarded.split(",")]
    if len(entries) < proxies:
        return peer
    try:
        return str(ipaddress.ip_address(entries[-proxies]))
    except ValueError:
        return peer


def axes_client_address(request) -> str | None:
    """``client_address`` for django-axes, which stores it in an address column (None when
    the server has no peer address, as axes does itself)."""
    address = client_address(request)
    return None if address == "unknown" else address


def hit(limit: Limit, key: str) -> int | None:
    """Count one attempt against ``limit`` for ``key``: None if within the limit, else the
    seconds until its window ends."""
    cache = caches["ratelimit"]
    window = int(time.time()) // limit.seconds
    digest = hashlib.sha256(f"{limit.scope}\0{key}".encode()).hexdigest()[:32]
    name = f"{limit.scope}:{digest}:{window}"
    cache.add(name, 0, timeout=limit.seconds + 1)
    try:
        count = cache.incr(name)
    except ValueError:  # expired between add and incr: a fresh window
        cache.add(name, 1, timeout=limit.seconds + 1)
        count = 1
    if count <= limit.count:
        return None
    return max(1, (window + 1) * limit.seconds - int(time.time()))


def refused(request, checks: list[tuple[Limit, str]]):
    """Count one attempt for each (limit, key); a 429 page if any limit is exceeded, else
    None. Every counter is charged, so asking under one key does not spare another."""
    waits = [wait for limit, key in checks if key for wait in [hit(limit, key)] if wait is not None]
    if not waits:
        return None
    wait = max(waits)
    logger.info("rate limited: %s from %s", request.path, client_address(request))
    response = render(request, "429.html", {"minutes": (wait + 59) // 60}, status=429)
    response["Retry-After"] = str(wait)
    return response
