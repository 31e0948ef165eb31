"""The per-process fan-out hub (docs/architecture.md): one subscription per group and process,
each message's text written to every local socket, framed once, waiting for none.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from channels.layers import InMemoryChannelLayer, get_channel_layer

from competition.plumbing.frames import Frame
from competition.plumbing.loops import call_on

logger = logging.getLogger(__name__)


class Member(Protocol):
    async def deliver(self, message: dict) -> None: ...

    # optional: ``deliver_now(message, frame) -> bool`` writes ``message`` at once, framed
    # once for every socket (``frames.Frame``), or returns False: the hub awaits ``deliver``


def process_local(layer) -> bool:
    """Whether ``layer`` only reaches this process (then the hub is fed directly)."""
    return isinstance(layer, InMemoryChannelLayer)


class _Group:
    def __init__(self, name: str):
        self.name = name
        self.members: set[Member] = set()
        self.channel: str | None = None
        self.task: asyncio.Task | None = None
        self.ready = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        #: fed by ``Hub.dispatch`` when the channel layer is process-local
        self.local: asyncio.Queue | None = None

    async def start(self) -> None:
        layer = get_channel_layer()
        if process_local(layer):
            self.local = asyncio.Queue()
            self.task = asyncio.ensure_future(self._pump(self.local.get))
        else:
            self.channel = await layer.new_channel(prefix="hub.")
            await layer.group_add(self.name, self.channel)
            self.task = asyncio.ensure_future(self._pump(lambda: layer.receive(self.channel)))
        self.ready.set()

    async def stop(self) -> None:
        if self.task:
            self.task.cancel()
        layer = get_channel_layer()
        if self.channel and layer is not None:
            try:
                await layer.group_discard(self.name, self.channel)
            except Exception:
                logger.exception("hub: leaving %s failed", self.name)

    async def _pump(self, receive) -> None:
        while True:
            try:
                message = await receive()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("hub: receive on %s failed", self.name)
                await asyncio.sleep(0.5)
                continue
            frame = Frame(message)
            for member in list(self.members):
                try:
                    now = getattr(member, "deliver_now", None)
                    if now is None or not now(message, frame):
                        await member.deliver(message)
                except Exception:  # a dead socket never stops the others
                    logger.debug("hub: delivery to a member of %s failed", self.name, exc_info=True)
                    self.members.discard(member)


class Hub:
    def __init__(self):
        self.groups: dict[str, _Group] = {}
        #: called with a group's name when it may have gained its first local listener or
        #: lost its last one (``changed``): the relay tells the runner processes
        self.observers: list[Callable[[str], None]] = []

    async def join(self, name: str, member: Member) -> None:
        group = self.groups.get(name)
        if group is None:
            group = self.groups[name] = _Group(name)
            group.members.add(member)
            self.changed(name)
            try:
                await group.start()
            except Exception:
                self.groups.pop(name, None)
                self.changed(name)
                raise
            return
        group.members.add(member)
        await group.ready.wait()

    async def leave(self, name: str, member: Member) -> None:
        group = self.groups.get(name)
        if group is None:
            return
        group.members.discard(member)
        if not group.members:
            self.groups.pop(name, None)
            self.changed(name)
            await group.stop()

    def changed(self, name: str) -> None:
        """Group ``name``'s local listeners (members or a socket's own join) may have changed."""
        for observer in list(self.observers):
            try:
                observer(name)
            except Exception:
                logger.exception("hub: an observer of %s failed", name)

    def dispatch(self, name: str, message: dict) -> None:
        """Hand ``message`` to group ``name``'s local members (process-local layer; any thread)."""
        group = self.groups.get(name)
        if group is None or group.local is None:
            return
        call_on(group.loop, group.local.put_nowait, message)

    def watchers(self, name: str) -> int:
        group = self.groups.get(name)
        return len(group.members) if group else 0


hub = Hub()
