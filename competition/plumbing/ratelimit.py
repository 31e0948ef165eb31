"""Fixed-window counters for the unauthenticated forms that cost something (sign-up, password
reset), in the ``ratelimit`` cache (Redis when set, so web nodes share them). Keys are hashed:
no address or e-mail is stored in clear."""

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
    """The client's address: the one function that decides it, for every limit and the log-in
    lock-out.

    With no proxy it is the peer and ``X-Forwarded-For`` is ignored, since any client can write
    it. Behind ``N`` proxies it is the ``N``-th entry from the right (each proxy appends its
    peer); a short or malformed header falls back to the peer."""
    return address_from(request.META.get("REMOTE_ADDR"), request.META.get("HTTP_X_FORWARDED_FOR"))


def address_from(peer: str | None, forwarded: str | None) -> str:
    """``client_address`` from the raw peer and ``X-Forwarded-For`` (read before Django)."""
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
    """``client_address`` for django-axes (None without a peer address, as axes does)."""
    address = client_address(request)
    return None if address == "unknown" else address


def hit(limit: Limit, key: str) -> int | None:
    """Count one attempt for ``key``: None within ``limit``, else seconds until the window ends."""
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
    """Count one attempt per (limit, key), every counter charged; a 429 page if any is exceeded."""
    waits = [wait for limit, key in checks if key for wait in [hit(limit, key)] if wait is not None]
    if not waits:
        return None
    wait = max(waits)
    logger.info("rate limited: %s from %s", request.path, client_address(request))
    response = render(request, "429.html", {"minutes": (wait + 59) // 60}, status=429)
    response["Retry-After"] = str(wait)
    return response
