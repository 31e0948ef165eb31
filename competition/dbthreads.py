"""The database thread of async code: ``run_db(fn, ...)``. The match runners reach it only
through their event loop's batcher (``competition.matches.batch.call``), which hops here.

- On SQLite: asgiref's ``sync_to_async`` (one thread, the caller's connection), which is
  all a single-writer database can use anyway, and what tests on SQLite rely on.
- On PostgreSQL: a process-wide pool of ``ARENA_DB_THREADS`` threads, each with its own
  persistent connection, shared by every event loop of the process (a Celery worker's many
  task loops included): connections are reused instead of opened per task, and one slow
  query does not stall every match of the process. Before each call a thread drops a
  connection that died (a database restart), as Django does at each request.
"""

from __future__ import annotations

import asyncio
import functools
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
    """Called by every process that plays matches: its event loop gets the GIL back from a
    database thread within ``ARENA_GIL_SWITCH_US``, so a batch of turns being stored does not
    hold up a bot's reply, and every match of the process, for CPython's default interval."""
    sys.setswitchinterval(settings.ARENA_GIL_SWITCH_US / 1_000_000)


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
    """``fn(*args, **kwargs)`` on a database thread."""
    if _on_sqlite():
        return await _in_sync_thread(fn, args, kwargs)
    # No context copy: each pool thread must keep its own connection (Django's
    # connections follow the context, and a connection may not cross threads).
    return await asyncio.get_running_loop().run_in_executor(
        executor(), functools.partial(_call, fn, args, kwargs)
    )
