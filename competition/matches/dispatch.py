"""Dispatch: telling the runner backend (``ARENA_MATCH_BACKEND``, a dotted path) that a match is
queued, so the services never import a runner."""

from __future__ import annotations

import functools
import logging

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)


#: a backend that stands in for the configured one in this process (a runner's writer:
#: ``redirect``)
_redirected: dict[str, object] = {}


def redirect(stand_in) -> None:
    """Dispatch to ``stand_in`` in this process instead (a writer process records what its
    batch dispatched, for its runner to dispatch: ``matches/writer.py``)."""
    _redirected["backend"] = stand_in


def backend():
    """The configured runner backend (one instance per process)."""
    return _redirected.get("backend") or _configured()


@functools.cache
def _configured():
    return import_string(settings.ARENA_MATCH_BACKEND)()


@receiver(setting_changed)
def _reset(setting, **kwargs) -> None:
    if setting in ("ARENA_MATCH_BACKEND", "ARENA_RUNNER"):
        _configured.cache_clear()


def dispatch(match_id: int) -> None:
    """Tell a runner that ``match_id`` is queued; best effort (``sweep_queued`` catches up)."""
    try:
        backend().dispatch(match_id)
    except Exception:
        logger.exception("dispatch of match %s failed; it stays queued", match_id)


def dispatch_build() -> None:
    """Tell a runner that a version waits to be compiled; best effort (the runners look for
    waiting builds on their own too)."""
    try:
        backend().dispatch_build()
    except Exception:
        logger.exception("dispatch of a build failed; it stays queued")
