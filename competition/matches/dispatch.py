"""Dispatch: telling "whatever runs matches" that a match is queued.

The runner is a backend chosen by a setting, as Django chooses ``EMAIL_BACKEND``:
``ARENA_MATCH_BACKEND`` is the dotted path of a class with a ``dispatch(match_id)`` method
(``competition.runners.embedded.EmbeddedBackend``, the default, wakes the in-process
scheduler; ``competition.runners.tasks.CeleryBackend`` sends a Celery task). The services
call it through ``import_string``: they never import a runner.
"""

from __future__ import annotations

import functools
import logging

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)


@functools.cache
def backend():
    """The configured runner backend (one instance per process)."""
    return import_string(settings.ARENA_MATCH_BACKEND)()


@receiver(setting_changed)
def _reset(setting, **kwargs) -> None:
    if setting in ("ARENA_MATCH_BACKEND", "ARENA_RUNNER"):
        backend.cache_clear()


def dispatch(match_id: int) -> None:
    """Tell a runner that ``match_id`` is queued (the database decides who plays it).

    Best effort: if the broker is down the match stays queued in the database and
    ``sweep_queued`` dispatches it again later."""
    try:
        backend().dispatch(match_id)
    except Exception:
        logger.exception("dispatch of match %s failed; it stays queued", match_id)
