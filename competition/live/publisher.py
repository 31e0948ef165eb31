"""The one way live messages leave: ``publisher()``, chosen once by the channel layer's kind
(in memory: straight to the hub; Redis: through the layer; a runner: ``relay.RelayPublisher``).
Who listens is known from the hub and the joins made here, never a layer's private state."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Protocol

from channels.layers import get_channel_layer

from competition.live.hub import hub, process_local


class Publisher(Protocol):
    def listened(self, group: str) -> bool:
        """False only when nobody can receive a message to ``group``."""

    def watched(self, group: str) -> bool:
        """Whether someone may be watching ``group``: a hint that may lag, never a filter."""

    async def publish(self, group: str, message: dict) -> None: ...

    async def join(self, group: str, channel: str) -> None:
        """A socket's own membership of ``group`` on the channel layer."""

    async def leave(self, group: str, channel: str) -> None: ...


class ChannelLayerPublisher:
    """Every message through the channel layer (it reaches the hubs of every process)."""

    def __init__(self, layer):
        self.layer = layer

    def listened(self, group: str) -> bool:
        return True  # other processes' listeners are not known here

    def watched(self, group: str) -> bool:
        return True

    async def publish(self, group: str, message: dict) -> None:
        await self.layer.group_send(group, message)

    async def join(self, group: str, channel: str) -> None:
        await self.layer.group_add(group, channel)

    async def leave(self, group: str, channel: str) -> None:
        await self.layer.group_discard(group, channel)


class InMemoryPublisher(ChannelLayerPublisher):
    """This process only: the hub takes messages directly, the layer only for groups joined on it."""

    def __init__(self, layer):
        super().__init__(layer)
        self.joined: Counter[str] = Counter()

    def listened(self, group: str) -> bool:
        return hub.watchers(group) > 0 or self.joined[group] > 0

    def watched(self, group: str) -> bool:
        return self.listened(group)

    def groups(self) -> set[str]:
        """Every group someone listens to in this process."""
        return set(hub.groups) | set(self.joined)

    async def publish(self, group: str, message: dict) -> None:
        hub.dispatch(group, message)
        if self.joined[group] > 0:
            await self.layer.group_send(group, message)

    async def join(self, group: str, channel: str) -> None:
        await self.layer.group_add(group, channel)
        self.joined[group] += 1
        if self.joined[group] == 1:
            hub.changed(group)

    async def leave(self, group: str, channel: str) -> None:
        await self.layer.group_discard(group, channel)
        self.joined[group] -= 1
        if self.joined[group] <= 0:
            del self.joined[group]
            hub.changed(group)


_lock = threading.Lock()
_current: tuple[object, Publisher] | None = None


def publisher() -> Publisher | None:
    """The publisher of this process's channel layer (None without a layer)."""
    global _current
    layer = get_channel_layer()
    if layer is None:
        return None
    current = _current
    if current is None or current[0] is not layer:
        with _lock:
            if _current is None or _current[0] is not layer:
                chosen = (
                    InMemoryPublisher(layer)
                    if process_local(layer)
                    else ChannelLayerPublisher(layer)
                )
                _current = (layer, chosen)
            current = _current
    return current[1]


def install(chosen: Publisher) -> None:
    """Make ``chosen`` this process's publisher (a runner process: ``relay.RelayPublisher``)."""
    global _current
    with _lock:
        _current = (get_channel_layer(), chosen)
