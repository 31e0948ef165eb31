"""Calling into an event loop from any thread, and one object per event loop."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerLoop(Generic[T]):
    """One ``factory()`` per running event loop, made at its first ``get`` (gone with its loop)."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self.factory = factory
        self.made: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        found = self.made.get(loop)
        if found is None:
            found = self.made[loop] = self.factory()
        return found

    def pop(self) -> T | None:
        """This loop's object, forgotten (None if it had none)."""
        return self.made.pop(asyncio.get_running_loop(), None)


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
