"""Live messages leave through one publisher, chosen by the channel layer's kind.

The in-memory publisher (the embedded default) feeds the process's hub directly and the
channel layer only for a group a socket joined on it itself; it knows who listens from the
hub and its own joins, not from the layer's private state.
"""

from __future__ import annotations

import asyncio

from channels.layers import InMemoryChannelLayer, get_channel_layer

from competition.live import broadcast
from competition.live.hub import hub
from competition.live.publisher import ChannelLayerPublisher, InMemoryPublisher, publisher


class Member:
    def __init__(self):
        self.got = []

    async def deliver(self, message: dict) -> None:
        self.got.append(message)


async def test_it_feeds_the_hub_and_the_joined_sockets_in_memory():
    out = publisher()
    # It should pick the in-memory publisher for the in-memory layer, once.
    assert isinstance(out, InMemoryPublisher) and publisher() is out
    group = broadcast.match_group(987_001)
    assert not broadcast.listened(group)
    member = Member()
    await hub.join(group, member)
    try:
        # It should count a hub watcher as a listener and hand it the message.
        assert broadcast.listened(group)
        message = broadcast.message("turn", {"n": 1}, number=1)
        await broadcast.apublish(group, message)
        for _ in range(50):
            if member.got:
                break
            await asyncio.sleep(0.01)
        assert member.got == [message]
    finally:
        await hub.leave(group, member)
    assert not broadcast.listened(group)


async def test_it_sends_through_the_layer_to_a_socket_that_joined_it():
    layer = get_channel_layer()
    group = broadcast.match_group(987_002)
    channel = await layer.new_channel(prefix="test.")
    await broadcast.join(group, channel)
    try:
        # It should know of the socket's own membership and deliver there.
        assert broadcast.listened(group)
        end = broadcast.message("end", {"match": {}}, number=broadcast.END_NUMBER)
        await broadcast.apublish(group, end)
        received = await asyncio.wait_for(layer.receive(channel), 2)
        assert received["text"] == end["text"] and received["number"] == 2**62
    finally:
        await broadcast.leave(group, channel)
    # It should forget it once it left.
    assert not broadcast.listened(group)


async def test_it_publishes_everything_through_a_shared_layer():
    class SharedLayer(InMemoryChannelLayer):
        """A layer this process does not own alone (as Redis): the publisher must send."""

    layer = SharedLayer()
    out = ChannelLayerPublisher(layer)
    channel = await layer.new_channel(prefix="test.")
    await out.join("event.5", channel)
    # It should report every group as listened (other processes' sockets are not known).
    assert out.listened("event.6")
    await out.publish("event.5", {"type": "relay", "text": "x"})
    assert (await asyncio.wait_for(layer.receive(channel), 2))["text"] == "x"
