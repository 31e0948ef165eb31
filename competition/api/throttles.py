"""Throttles: writes are rate-limited per user, or per ``client_address`` when anonymous."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import ScopedRateThrottle

from competition.plumbing.ratelimit import client_address


class AddressScopedRateThrottle(ScopedRateThrottle):
    """``ScopedRateThrottle`` keyed by ``client_address`` for anonymous callers."""

    def get_ident(self, request) -> str:
        return client_address(request)


class WriteScopedRateThrottle(AddressScopedRateThrottle):
    """``AddressScopedRateThrottle`` that counts only unsafe methods (reads stay free)."""

    def allow_request(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)
