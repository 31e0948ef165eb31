"""The only place that names channel groups and builds live messages (docs/architecture.md);
best effort: a failed broadcast loses no turn (clients catch up from the database)."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time

from asgiref.sync import async_to_sync

from bots.faults import public_details
from competition.live.publisher import publisher

logger = logging.getLogger(__name__)

#: the hub relays these message types to sockets
RELAY = "relay"
#: the ``number`` of a match's end message: after every turn (a viewer orders by number)
END_NUMBER = 2**62


def match_group(match_id: int) -> str:
    return f"match.{int(match_id)}"


def event_group(event_id: int) -> str:
    return f"event.{int(event_id)}"


def user_group(user_id: int) -> str:
    """One user's open pages (``ws/notifications/``): their new notifications."""
    return f"user.{int(user_id)}"


#: the home page's sockets: how many matches of each game are running ("live now")
HOME_GROUP = "home"


def debug_group(match_id: int, seat: int) -> str:
    """The group of one seat's debug overlays (``MatchConsumer`` decides who joins)."""
    return f"debug.{int(match_id)}.{int(seat)}"


def human_group(match_id: int, seat: int) -> str:
    """The browser sockets of a human seat (``bots.transports.human`` publishes requests)."""
    return f"human.{int(match_id)}.{int(seat)}"


def encode(payload: dict) -> str:
    return json.dumps(payload, separators=(",", ":"), allow_nan=False)


def message(kind: str, payload: dict, *, number: int | None = None) -> dict:
    """A channel-layer message the hub relays: the text is encoded here, once."""
    return {
        "type": RELAY,
        "kind": kind,
        "number": number,
        "text": encode({"type": kind, **payload}),
    }


def listened(group: str) -> bool:
    """False only when nobody can receive a message to ``group`` (then skip even encoding it)."""
    out = publisher()
    return out is not None and out.listened(group)


def watched(group: str) -> bool:
    """Whether someone may be watching ``group``: a hint that may lag, never a filter."""
    out = publisher()
    return out is not None and out.watched(group)


async def apublish(group: str, msg: dict) -> None:
    out = publisher()
    if out is None:
        return
    try:
        await out.publish(group, msg)
    except Exception:  # a broadcast is never worth a lost turn
        logger.exception("broadcast to %s failed", group)


async def join(group: str, channel: str) -> None:
    """A socket joins ``group`` on the channel layer itself (not through the hub)."""
    out = publisher()
    if out is not None:
        await out.join(group, channel)


async def leave(group: str, channel: str) -> None:
    out = publisher()
    if out is not None:
        await out.leave(group, channel)


_local = threading.local()


@contextlib.contextmanager
def collecting():
    """Within this block (on this thread) ``publish`` queues messages for the caller to send on
    its own loop (``apublish``): no loop hop per message."""
    outbox: list[tuple[str, dict]] = []
    previous = getattr(_local, "outbox", None)
    _local.outbox = outbox
    try:
        yield outbox
    finally:
        _local.outbox = previous


async def asend(outbox: list[tuple[str, dict]]) -> None:
    for group, msg in outbox:
        await apublish(group, msg)


def publish(group: str, msg: dict) -> None:
    """Publish from sync code (e.g. ``transaction.on_commit``)."""
    outbox = getattr(_local, "outbox", None)
    if outbox is not None:
        outbox.append((group, msg))
        return
    if not listened(group):
        return
    try:
        async_to_sync(apublish)(group, msg)
    except Exception:
        logger.exception("broadcast to %s failed", group)


def turn_message(turn_json: dict) -> dict:
    """A stored turn for spectators (fault details cut as ``Turn.public_json`` cuts them)."""
    turn_json = {
        **turn_json,
        "details": public_details(turn_json.get("faults"), turn_json.get("details")),
    }
    return message(
        "turn", {"turn": turn_json, "sent_at": round(time.time(), 4)}, number=turn_json["number"]
    )


def debug_messages(match_id: int, turn_json: dict, logs: list) -> list[tuple[str, dict]]:
    """A ``debug`` message per seat whose reply carried an overlay, to its ``debug_group``."""
    out = []
    for seat, log in enumerate(logs):
        if log is None or (log.debug is None and not log.debug_note):
            continue
        payload = {
            "number": turn_json["number"],
            "seat": seat,
            "overlay": log.debug,
            "note": log.debug_note,
        }
        out.append((debug_group(match_id, seat), message("debug", payload)))
    return out


def started_messages(match_json: dict, *, public: bool = True) -> list[tuple[str, dict]]:
    """The (group, message) pairs announcing a match's start; not to its event while hidden."""
    out = [(match_group(match_json["id"]), message("started", {"match": match_json}))]
    if match_json.get("event") and public:
        out.append(
            (event_group(match_json["event"]), message("match_started", {"match": match_json}))
        )
    return out


def match_finished(match_json: dict, *, public: bool = True) -> None:
    """A match ended (or was revealed): to its group, and its event's unless still hidden."""
    publish(match_group(match_json["id"]), message("end", {"match": match_json}, number=END_NUMBER))
    if match_json.get("event") and public:
        publish(event_group(match_json["event"]), message("match_finished", {"match": match_json}))


def running_changed(
    game: str, running: int, *, watch: int | None = None, match: dict | None = None
) -> None:
    """A match of ``game`` started or ended: the home page's running count and matches."""
    payload = {"game": game, "running": running, "watch": watch}
    if match is not None:
        payload["match"] = match
    publish(HOME_GROUP, message("running", payload))


def bracket_changed(event_id: int, bracket: dict) -> None:
    """An elimination event's bracket after a match of it finished (the page redraws it)."""
    publish(event_group(event_id), message("bracket", {"event": event_id, "bracket": bracket}))


def standings_changed(event_id: int, standings: list, header: dict | None = None) -> None:
    """An event's standings, with its header (``events.header.header``) when given."""
    payload = {"event": event_id, "standings": standings}
    if header is not None:
        payload["header"] = header
    publish(event_group(event_id), message("standings", payload))


def notified(user_id: int, notification: dict, unread: int) -> None:
    """A new notification for ``user_id``, with the unread count after it (the bell)."""
    publish(
        user_group(user_id),
        message("notification", {"notification": notification, "unread": unread}),
    )
