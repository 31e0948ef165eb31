"""The database thread of async code, ``run_db``: asgiref's one thread on SQLite (a single writer);
on PostgreSQL a process-wide pool of threads with persistent connections, so one slow query does not
stall every match."""

from __future__ import annotations

import asyncio
import functools
import gc
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, close_old_connections, connections

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def executor() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        with _lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(
                    max_workers=settings.ARENA_DB_THREADS, thread_name_prefix="arena-db"
                )
    return _executor


def share_the_gil() -> None:
    """The switch interval and collector of a process that plays matches (docs/architecture.md)."""
    sys.setswitchinterval(settings.ARENA_GIL_SWITCH_US / 1_000_000)
    tune_the_collector()


#: new objects between two young collections in a process that plays matches (CPython's 700)
GC_YOUNG_THRESHOLD = 20_000
_tuned = False


def tune_the_collector() -> None:
    """Once per process: freeze the startup heap and collect the young generation less often, so
    no collection walks the startup heap or a match's kept turns again and again."""
    global _tuned
    if not _tuned:
        _tuned = True
        gc.collect()
        gc.freeze()
        young, older, oldest = gc.get_threshold()
        gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), older, oldest)


def _call(fn, args, kwargs):
    close_old_connections()
    return fn(*args, **kwargs)


def _invoke(fn, args, kwargs):
    return fn(*args, **kwargs)


#: asgiref's wrapper, made once (building one per call inspects the function each time)
_in_sync_thread = sync_to_async(_invoke)


def _on_sqlite() -> bool:
    # from the settings, not ``connection.vendor``: on the event loop that would build a
    # database wrapper for every new task (Django's connections follow the context)
    return connections.settings[DEFAULT_DB_ALIAS]["ENGINE"] == "django.db.backends.sqlite3"


async def run_db(fn, *args, **kwargs):
    if _on_sqlite():
        return await _in_sync_thread(fn, args, kwargs)
    # No context copy: each pool thread must keep its own connection (Django's
    # connections follow the context, and a connection may not cross threads).
    return await asyncio.get_running_loop().run_in_executor(
        executor(), functools.partial(_call, fn, args, kwargs)
    )
