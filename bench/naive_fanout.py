"""Channels' textbook fan-out, one group membership per socket: the comparison ``bench/fanout.py``
measures the hub against, served at ``ws/naive/matches/<id>/`` only while
``ARENA_BENCH_NAIVE_FANOUT`` is set (``competition/web/routing.py``)."""

from __future__ import annotations

from channels.generic.websocket import AsyncWebsocketConsumer

from competition.live import broadcast


class NaiveMatchConsumer(AsyncWebsocketConsumer):
    """Channels' textbook fan-out, routed only for ``bench/fanout.py`` to compare against."""

    async def connect(self):
        self.group = broadcast.match_group(int(self.scope["url_route"]["kwargs"]["pk"]))
        await broadcast.join(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        await broadcast.leave(self.group, self.channel_name)

    async def relay(self, message):
        await self.send(text_data=message["text"])
