"""Where the match runners do their ORM work from async code: ``run_db(fn, ...)``.

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
import threading
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections, connection

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


def _call(fn, args, kwargs):
    close_old_connections()
    return fn(*args, **kwargs)


async def run_db(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on a database thread."""
    if connection.vendor == "sqlite":
        return await sync_to_async(fn)(*args, **kwargs)
    # No context copy: each pool thread must keep its own connection (Django's
    # connections follow the context, and a connection may not cross threads).
    return await asyncio.get_running_loop().run_in_executor(
        executor(), functools.partial(_call, fn, args, kwargs)
    )
