"""Read-only websocket consumers: a match's turns, an event's progress (DESIGN.md §4).

On connect a consumer joins its group through the process hub **first**, then sends a
snapshot from the database, then relays what the hub hands it, skipping anything the
snapshot already covered (turn numbers are the fence). Clients never send anything that
matters: any message from them is answered with an error and otherwise ignored.
"""

from __future__ import annotations

import json
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from competition import broadcast
from competition.hub import hub
from competition.models import Event, Match, MatchStatus, Turn

logger = logging.getLogger(__name__)
END = 2**62
MAX_CLIENT_MESSAGE = 4096


def match_snapshot(match_id: int) -> dict | None:
    from competition.services.matches import match_json

    match = Match.objects.filter(pk=match_id).first()
    if match is None:
        return None
    turns = [t.public_json() for t in Turn.objects.filter(match_id=match_id).order_by("number")]
    return {"type": "snapshot", "match": match_json(match), "turns": turns}


def event_snapshot(event_id: int) -> dict | None:
    from competition.services.events import standings
    from competition.services.matches import match_json

    event = Event.objects.filter(pk=event_id).first()
    if event is None:
        return None
    live = [match_json(m) for m in event.matches.filter(status=MatchStatus.RUNNING).order_by("id")[:20]]
    upcoming = [match_json(m) for m in event.matches.filter(status=MatchStatus.QUEUED).order_by("id")[:10]]
    total = event.matches.count()
    done = event.matches.filter(status__in=MatchStatus.done()).count()
    return {
        "type": "snapshot",
        "event": {"id": event.pk, "name": event.name, "game": event.game, "status": event.status,
                  "format": event.format, "matches_done": done, "matches_total": total},
        "standings": standings(event),
        "live": live,
        "upcoming": upcoming,
    }


class _RelayConsumer(AsyncWebsocketConsumer):
    """Join the hub, send a snapshot, relay hub messages newer than the snapshot."""

    group: str = ""

    async def connect(self):
        self.pending: list[dict] | None = []
        self.last = 0
        self.joined = False
        try:
            self.object_id = int(self.scope["url_route"]["kwargs"]["pk"])
        except (KeyError, ValueError):
            await self.close(code=4400)
            return
        if not await database_sync_to_async(self.exists)():
            await self.close(code=4404)
            return
        await self.accept()
        self.group = self.group_name()
        await hub.join(self.group, self)
        self.joined = True
        snapshot = await database_sync_to_async(self.snapshot)()
        if snapshot is None:
            await self.close(code=4404)
            return
        self.last = self.fence(snapshot)
        await self.send(text_data=broadcast.encode(snapshot))
        pending, self.pending = self.pending, None
        for message in pending:
            await self.deliver(message)

    async def deliver(self, message: dict) -> None:
        if self.pending is not None:
            self.pending.append(message)
            return
        number = message.get("number")
        if number is not None:
            if number <= self.last:
                return
            self.last = number
        await self.send(text_data=message["text"])

    async def receive(self, text_data=None, bytes_data=None):
        # Read-only: validate nothing further, trust nothing, say so.
        if self.pending is None:
            await self.send(text_data=json.dumps({"type": "error", "detail": "this stream is read-only"}))

    async def disconnect(self, code):
        if getattr(self, "joined", False):
            await hub.leave(self.group, self)

    # subclasses
    def exists(self) -> bool:
        raise NotImplementedError

    def snapshot(self) -> dict | None:
        raise NotImplementedError

    def group_name(self) -> str:
        raise NotImplementedError

    def fence(self, snapshot: dict) -> int:
        return 0


class MatchConsumer(_RelayConsumer):
    def exists(self) -> bool:
        return Match.objects.filter(pk=self.object_id).exists()

    def group_name(self) -> str:
        return broadcast.match_group(self.object_id)

    def snapshot(self) -> dict | None:
        return match_snapshot(self.object_id)

    def fence(self, snapshot: dict) -> int:
        if snapshot["match"]["status"] in MatchStatus.done():
            return END
        return snapshot["turns"][-1]["number"] if snapshot["turns"] else 0


class EventConsumer(_RelayConsumer):
    def exists(self) -> bool:
        return Event.objects.filter(pk=self.object_id).exists()

    def group_name(self) -> str:
        return broadcast.event_group(self.object_id)

    def snapshot(self) -> dict | None:
        return event_snapshot(self.object_id)
