"""Calling into an event loop from any thread."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def call_on(loop: asyncio.AbstractEventLoop | None, fn: Callable, *args) -> None:
    """``fn(*args)`` on ``loop``, thread-safely; nothing if the loop is closed."""
    if loop is None or loop.is_closed():
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        fn(*args)
        return
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # it closed meanwhile
        pass
