"""Read-only websocket consumers: a match's turns, an event's progress, the home page's counts.
Each joins its group before reading its snapshot, then relays what is newer (turn numbers fence
it), so no turn is lost or doubled."""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db.models import Count, Max

from competition.live import broadcast
from competition.live.hub import hub
from competition.models import Event, EventTally, Match, MatchStatus, Participant
from competition.plumbing import frames, metrics
from competition.plumbing.prepared import Prepared
from games import all_games

logger = logging.getLogger(__name__)
END = broadcast.END_NUMBER
MAX_CLIENT_MESSAGE = 4096
#: turns a match snapshot carries: the last ones (their frames include the current one);
#: a viewer fetches older turns through the turns API when it wants them
SNAPSHOT_TURNS = 50


def match_snapshot(match_id: int, debug_seats=()) -> dict | None:
    """The match and its last ``SNAPSHOT_TURNS`` turns, with ``debug_seats``' overlays."""
    from competition.matches import history
    from competition.matches.presenters import match_json

    match = Match.objects.filter(pk=match_id).first()
    if match is None:
        return None
    recent = history.recent(match_id, SNAPSHOT_TURNS, logs=False, debug_seats=debug_seats)
    turns = [t.public_json(debug_seats) for t in recent]
    first, last = (turns[0]["number"], turns[-1]["number"]) if turns else (1, 0)
    return {
        "type": "snapshot",
        "match": match_json(match),
        "first": first,
        "last": last,
        "parts": 1,  # as one message: ``snapshot_parts`` splits a big one
        "turns": turns,
    }


#: the most bytes of one message of a match's stream: far below the server's limit (daphne
#: closes a socket whose message is over 1 MiB). A snapshot bigger than this is sent in parts
#: (``snapshot``, then ``snapshot_part``s); a turn bigger than this alone is sent as a
#: ``turn_ref`` (and left out of a snapshot's parts), which the viewer fetches from the turns API
MESSAGE_BYTES = 256 * 1024


def snapshot_parts(snapshot: dict) -> list[str]:
    """A snapshot as messages within ``MESSAGE_BYTES``; a turn too big is left to the turns API."""
    turns = snapshot["turns"]
    head = {key: value for key, value in snapshot.items() if key != "turns"}
    room = MESSAGE_BYTES - 64  # a part's own keys and the digits of `parts`
    groups: list[list[str]] = [[]]
    used = len(broadcast.encode(head))
    for text in map(broadcast.encode, turns):
        if len(text) + 64 > room:
            continue  # too big for any message: the turns API serves it
        if used + len(text) + 1 > room:
            groups.append([])
            used = 0
        groups[-1].append(text)
        used += len(text) + 1
    head["parts"] = len(groups)
    out = []
    for index, group in enumerate(groups):
        envelope = (
            head
            if index == 0
            else {"type": "snapshot_part", "part": index + 1, "parts": len(groups)}
        )
        out.append(broadcast.encode(envelope)[:-1] + ',"turns":[' + ",".join(group) + "]}")
    return out


class SharedLoads:
    """Snapshot loads shared by sockets connecting at once. A socket shares only a load whose read
    began after it joined its group: an older one could miss a turn the hub would not bring."""

    def __init__(self):
        self.clock = itertools.count(1)
        self.loads: dict[tuple, _Load] = {}

    def ticket(self) -> int:
        return next(self.clock)

    async def get(self, key: tuple, ticket: int, load):
        """``load()`` on the database thread, or a load of ``key`` not begun before ``ticket``."""
        found = self.loads.get(key)
        if found is None or (found.started is not None and found.started < ticket):
            found = self.loads[key] = _Load(self.clock, load)
            found.future.add_done_callback(lambda done: self._drop(key, done))
        return await asyncio.shield(found.future)

    def _drop(self, key: tuple, done: asyncio.Future) -> None:
        found = self.loads.get(key)
        if found is not None and found.future is done:
            del self.loads[key]
        if not done.cancelled():
            done.exception()  # retrieved: every waiter got it


class _Load:
    """One shared load: ``started`` is the clock's tick when its read began (None: queued)."""

    def __init__(self, clock, load):
        self.started: int | None = None

        def run():
            self.started = next(clock)
            return load()

        self.future = asyncio.ensure_future(database_sync_to_async(run)())


#: the process's shared match snapshots
snapshots = SharedLoads()


def event_snapshot(
    event_id: int, *, everything: bool = False, event: Event | None = None
) -> dict | None:
    """The event, its standings, bracket, live and upcoming matches (``everything``: staff's)."""
    from competition.events.services import bracket_view, standings
    from competition.matches.presenters import summaries

    if event is None:
        event = with_tally().filter(pk=event_id).first()
        if event is None:
            return None
    live, upcoming = summaries(
        _event_matches(MatchStatus.RUNNING, everything)(event.pk),
        _event_matches(MatchStatus.QUEUED, everything)(event.pk),
    )
    try:
        total, done = event.tally.matches, event.tally.done
    except EventTally.DoesNotExist:
        total, done = 0, 0
    snapshot = {
        "type": "snapshot",
        "event": {
            "id": event.pk,
            "name": event.name,
            "game": event.game,
            "status": event.status,
            "status_label": event.get_status_display(),
            "format": event.format,
            "matches_done": done,
            "matches_total": total,
        },
        "standings": standings(event, everything=everything),
        "live": live,
        "upcoming": upcoming,
    }
    bracket = bracket_view(event, everything=everything)
    if bracket is not None:  # single elimination: a reconnecting page redraws it
        snapshot["bracket"] = bracket
    return snapshot


#: how many live and upcoming matches an event's snapshot lists
SNAPSHOT_MATCHES = {MatchStatus.RUNNING: 20, MatchStatus.QUEUED: 10}


@functools.cache
def _event_matches(status: str, everything: bool):
    """An event's first matches of ``status``, public ones or ``everything``."""
    from competition.matches.presenters import SUMMARY_FIELDS

    def build(event):
        matches = Match.objects.filter(event_id=event, status=status)
        matches = matches if everything else matches.public()
        return matches.order_by("id").values_list(*SUMMARY_FIELDS)[: SNAPSHOT_MATCHES[status]]

    return Prepared(build)


def with_tally():
    """Events read with their match counts (``EventTally``) in the same statement."""
    return Event.objects.select_related("tally")


def home_snapshot() -> dict:
    """How many matches of each game run now, and the newest: one grouped count per socket."""
    rows = (
        Match.objects.public()
        .filter(status=MatchStatus.RUNNING)
        .order_by()
        .values("game")
        .annotate(n=Count("id"), newest=Max("id"))
        .values_list("game", "n", "newest")
    )
    running = {game: (n, newest) for game, n, newest in rows}
    slugs = [g.slug for g in all_games()]
    return {
        "type": "snapshot",
        "running": {slug: running.get(slug, (0, None))[0] for slug in slugs},
        "watch": {slug: running.get(slug, (0, None))[1] for slug in slugs},
    }


class CountedConsumer(AsyncWebsocketConsumer):
    """A websocket counted in ``arena_websocket_connections`` from its accept to its close."""

    route = "other"
    counted = False

    async def accept(self, subprotocol=None, headers=None):
        await super().accept(subprotocol, headers)
        if not self.counted:
            self.counted = True
            metrics.WEBSOCKETS.labels(metrics.process_kind(), self.route).inc()

    async def websocket_disconnect(self, message):
        if self.counted:
            self.counted = False
            metrics.WEBSOCKETS.labels(metrics.process_kind(), self.route).dec()
        await super().websocket_disconnect(message)


class _RelayConsumer(CountedConsumer):
    """Join the hub, send a snapshot, relay hub messages newer than the snapshot."""

    group: str = ""

    async def connect(self):
        self.pending: list[dict] | None = []
        self.last = 0
        self.joined = False
        self.writer = frames.writer(self.scope)
        try:
            self.object_id = self.route_id()
        except (KeyError, ValueError):
            await self.close(code=4400)
            return
        extra_groups = await database_sync_to_async(self.admitted)()
        if extra_groups is None:
            await self.close(code=4404)
            return
        await self.accept()
        self.group = self.group_name()
        self.extra_groups = extra_groups
        await hub.join(self.group, self)
        for group in self.extra_groups:
            await hub.join(group, self)
        self.joined = True
        loaded = await self.load()
        if loaded is None:
            await self.close(code=4404)
            return
        texts, self.last = loaded
        for text in texts:
            await self.send(text_data=text)
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
        await self.send(text_data=self.outgoing(message))

    def deliver_now(self, message: dict, frame: frames.Frame) -> bool:
        """Write the shared ``frame`` to this socket's writer after its snapshot; else False."""
        if self.writer is None or self.pending is not None:
            return False
        number = message.get("number")
        if number is not None:
            if number <= self.last:
                return True
            self.last = number
        self.writer.write(frame.prepared(self.outgoing(message)))
        return True

    async def load(self) -> tuple[list[str], int] | None:
        """The snapshot's messages and its fence (None: the object is gone)."""
        snapshot = await database_sync_to_async(self.snapshot)()
        if snapshot is None:
            return None
        return [broadcast.encode(snapshot)], self.fence(snapshot)

    def outgoing(self, message: dict) -> str:
        return message["text"]

    async def receive(self, text_data=None, bytes_data=None):
        # Read-only: validate nothing further, trust nothing, say so.
        if self.pending is None:
            await self.send(
                text_data=json.dumps({"type": "error", "detail": "this stream is read-only"})
            )

    async def disconnect(self, code):
        if getattr(self, "joined", False):
            await hub.leave(self.group, self)
            for group in self.extra_groups:
                await hub.leave(group, self)

    def admitted(self) -> list[str] | None:
        """The socket's extra groups, None when it may not watch: one database hop for both."""
        return self.more_groups() if self.exists() else None

    # subclasses
    def route_id(self) -> int:
        return int(self.scope["url_route"]["kwargs"]["pk"])

    def exists(self) -> bool:
        raise NotImplementedError

    def snapshot(self) -> dict | None:
        raise NotImplementedError

    def group_name(self) -> str:
        raise NotImplementedError

    def fence(self, snapshot: dict) -> int:
        return 0

    def more_groups(self) -> list[str]:
        return []


class MatchConsumer(_RelayConsumer):
    """A match's turns, with the overlays of the seats the user may see (``debug_visible_to``)."""

    route = "match"

    def exists(self) -> bool:
        # a match hidden until its reveal: staff only (its turns would tell the result)
        user = self.scope.get("user")
        return Match.objects.visible_to(user).filter(pk=self.object_id).exists()

    def group_name(self) -> str:
        return broadcast.match_group(self.object_id)

    def more_groups(self) -> list[str]:
        user = self.scope.get("user")
        seats = Participant.objects.filter(match_id=self.object_id).select_related("bot")
        self.debug_seats = {p.seat for p in seats if p.bot.debug_visible_to(user)}
        return [broadcast.debug_group(self.object_id, s) for s in sorted(self.debug_seats)]

    def snapshot(self) -> dict | None:
        return match_snapshot(self.object_id, self.debug_seats)

    def fence(self, snapshot: dict) -> int:
        if snapshot["match"]["status"] in MatchStatus.done():
            return END
        return snapshot["turns"][-1]["number"] if snapshot["turns"] else 0

    async def load(self) -> tuple[list[str], int] | None:
        """The snapshot in parts, shared with sockets connecting at once (``SharedLoads``)."""
        ticket = snapshots.ticket()  # after joining the group: see SharedLoads
        key = (self.object_id, tuple(sorted(self.debug_seats)))
        return await snapshots.get(key, ticket, self.snapshot_messages)

    def snapshot_messages(self) -> tuple[list[str], int] | None:
        snapshot = self.snapshot()
        if snapshot is None:
            return None
        return snapshot_parts(snapshot), self.fence(snapshot)

    def outgoing(self, message: dict) -> str:
        text = message["text"]
        if len(text) > MESSAGE_BYTES and message.get("kind") == "turn":
            return broadcast.encode({"type": "turn_ref", "number": message["number"]})
        return text


class EventConsumer(_RelayConsumer):
    route = "event"

    def exists(self) -> bool:
        return Event.objects.filter(pk=self.object_id).exists()

    def group_name(self) -> str:
        return broadcast.event_group(self.object_id)

    def snapshot(self) -> dict | None:
        return event_snapshot(self.object_id)


class HomeConsumer(_RelayConsumer):
    """``ws/home/``: the home page's "live now" counts."""

    route = "home"

    def route_id(self) -> int:
        return 0

    def exists(self) -> bool:
        return True

    def group_name(self) -> str:
        return broadcast.HOME_GROUP

    def snapshot(self) -> dict | None:
        return home_snapshot()


class NotificationConsumer(_RelayConsumer):
    """``ws/notifications/``: the user's new notifications and unread count; visitors get 4401."""

    route = "notifications"

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        await super().connect()

    def route_id(self) -> int:
        return int(self.scope["user"].pk)

    def exists(self) -> bool:
        return True

    def group_name(self) -> str:
        return broadcast.user_group(self.object_id)

    def snapshot(self) -> dict | None:
        from competition.notifications import notify

        return {"type": "snapshot", "unread": notify.unread_count(self.object_id)}


class HumanSeatConsumer(CountedConsumer):
    """``ws/play/<match>/<seat>/``: a human seat, the only consumer that takes input; the move
    goes to the channel the pending request named (kept here, never taken from the client)."""

    route = "seat"

    MAX_MESSAGE = 16_384
    #: at most this many client messages per RATE_WINDOW seconds, then the socket is closed
    RATE_LIMIT = 40
    RATE_WINDOW = 10.0

    async def connect(self):
        self.group = None
        self.pending: dict | None = None
        self.answered: set[int] = set()
        self.recent: list[float] = []
        user = self.scope.get("user")
        kwargs = self.scope["url_route"]["kwargs"]
        try:
            self.match_id, self.seat = int(kwargs["pk"]), int(kwargs["seat"])
        except (KeyError, ValueError):
            await self.close(code=4400)
            return
        if not await database_sync_to_async(self.may_play)(user):
            await self.close(code=4403)
            return
        self.group = broadcast.human_group(self.match_id, self.seat)
        await broadcast.join(self.group, self.channel_name)
        await self.accept()
        await self.send_json({"type": "hello", "match": self.match_id, "seat": self.seat})

    def may_play(self, user) -> bool:
        from competition.models.bots import EndpointKind

        if user is None or not user.is_authenticated:
            return False
        return (
            Match.objects.filter(
                pk=self.match_id,
                participants__seat=self.seat,
                participants__bot__kind__in=EndpointKind.people(),
                created_by_id=user.pk,
            )
            .exclude(status__in=MatchStatus.done())
            .exists()
        )

    async def disconnect(self, code):
        if self.group:
            await broadcast.leave(self.group, self.channel_name)

    async def send_json(self, payload: dict) -> None:
        await self.send(text_data=json.dumps(payload, separators=(",", ":"), allow_nan=False))

    async def error(self, detail: str) -> None:
        await self.send_json({"type": "error", "detail": detail})

    async def receive(self, text_data=None, bytes_data=None):
        loop_now = asyncio.get_running_loop().time()
        self.recent = [t for t in self.recent if loop_now - t < self.RATE_WINDOW]
        self.recent.append(loop_now)
        if len(self.recent) > self.RATE_LIMIT:
            await self.close(code=4429)
            return
        if text_data is None:
            await self.error("send text frames")
            return
        if len(text_data) > self.MAX_MESSAGE:
            await self.error(f"message longer than {self.MAX_MESSAGE} characters")
            return
        try:
            data = json.loads(text_data, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            await self.error("not one JSON value")
            return
        if (
            not isinstance(data, dict)
            or data.get("type") != "move"
            or set(data) - {"type", "seq", "move"}
        ):
            await self.error('expected {"type": "move", "seq": n, "move": ...}')
            return
        seq = data.get("seq")
        if type(seq) is not int or "move" not in data:
            await self.error('"seq" must be an integer and "move" is required')
            return
        pending = self.pending
        if pending is None or pending["seq"] != seq or seq in self.answered:
            await self.error("no pending request with this seq")
            return
        try:
            text = json.dumps(data["move"], separators=(",", ":"), allow_nan=False)
        except (ValueError, RecursionError):
            await self.error("the move is not JSON")
            return
        self.answered.add(seq)
        await self.channel_layer.send(
            pending["reply_to"], {"type": "human.move", "seq": seq, "text": text}
        )
        await self.send_json({"type": "sent", "seq": seq})

    async def human_request(self, event):
        seq = event.get("seq")
        if self.pending is None or self.pending["seq"] != seq:
            self.pending = {"seq": seq, "reply_to": event["reply_to"]}
        if seq in self.answered:
            return  # a repeat of a request this socket already answered
        await self.send_json(
            {
                "type": "request",
                "seq": seq,
                "message": event["message"],
                "timeout_ms": event.get("timeout_ms"),
                "remaining_ms": event.get("remaining_ms"),
                "deadline": event.get("deadline"),
            }
        )

    async def human_closed(self, event):
        self.pending = None
        await self.send_json({"type": "closed"})


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")
