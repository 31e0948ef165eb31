"""Fixed-window counters for the unauthenticated forms that cost something: sign-up (an
account) and password reset (a mail).

Counts live in the ``ratelimit`` cache (``settings.CACHES``): Redis when ``REDIS_URL`` is
set, so every web node shares them, else this process's memory (the embedded default is a
single process). ``add`` then ``incr`` is atomic in both. Keys are hashed: no address or
e-mail is stored in clear.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass

from django.core.cache import caches
from django.shortcuts import render

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    scope: str
    count: int
    seconds: int


def client_address(request) -> str:
    """The client's address as the server saw it (the proxy's ``X-Forwarded-For`` only
    when the server trusts proxy headers: daphne then puts it in ``REMOTE_ADDR``)."""
    return request.META.get("REMOTE_ADDR") or "unknown"


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
