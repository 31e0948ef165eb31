"""Throttles: writes are rate-limited per user (or per address when anonymous)."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import ScopedRateThrottle


class WriteScopedRateThrottle(ScopedRateThrottle):
    """``ScopedRateThrottle`` that counts only unsafe methods (reads stay free)."""

    def allow_request(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)
