"""The live protocol: JSON Schemas of every websocket message, per stream and direction
(``/api/schema/live/``), and their page (``/api/docs/live/``); the tests validate against them."""

from __future__ import annotations

from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.urls import reverse

from competition.models import MatchStatus
from games import all_games

DRAFT = "https://json-schema.org/draft/2020-12/schema"

_INT = {"type": "integer"}
_ID = {"type": "integer", "minimum": 1}
_STR = {"type": "string"}
_TIME = {"type": ["string", "null"], "description": "ISO 8601, or null when not yet"}
_NUM_OR_NULL = {"type": ["number", "null"]}


def _obj(properties: dict, required: list[str] | None = None, *, closed: bool = True) -> dict:
    schema = {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
    }
    if closed:
        schema["additionalProperties"] = False
    return schema


def _message(kind: str, properties: dict, required: list[str] | None = None) -> dict:
    props = {"type": {"const": kind}, **properties}
    return _obj(props, None if required is None else ["type", *required])


#: an event's header line (``events.header.header``), with each standings message
HEADER = _obj(
    {
        "status": {"enum": ["draft", "running", "paused", "revealing", "finished", "cancelled"]},
        "status_label": _STR,
        "round_text": _STR,
        "matches_done": _INT,
        "matches_total": _INT,
    }
)

PARTICIPANT = _obj(
    {
        "seat": {"type": "integer", "minimum": 0},
        "bot": _ID,
        "name": _STR,
        "owner": _STR,
        "version": {
            "type": ["integer", "null"],
            "minimum": 1,
            "description": "the uploaded version the seat played (null: not uploaded code)",
        },
        "score": _NUM_OR_NULL,
        "result": _STR,
        "cause": _STR,
        "cause_text": {**_STR, "description": "the fault in words (the fault catalogue)"},
        "faults": _INT,
        "rating_change": {
            **_NUM_OR_NULL,
            "description": "what the match changed of the bot's rating (null: unrated)",
        },
        "rating_change_text": {**_STR, "description": 'that change in words: "+1.4 vs bob-ttt"'},
    }
)

MATCH = _obj(
    {
        "id": _ID,
        "game": _STR,
        "status": {"enum": list(MatchStatus.values)},
        "status_text": {**_STR, "description": "the status in words"},
        "reason": _STR,
        "reason_text": {**_STR, "description": "the reason in words (the game's catalogue)"},
        "rated": {"type": "boolean"},
        "event": {"type": ["integer", "null"]},
        "round": {"type": ["integer", "null"]},
        "seed": _INT,
        "turn_count": {"type": "integer", "minimum": 0},
        "forked_from": {"type": ["integer", "null"]},
        "fork_turn": {"type": ["integer", "null"], "minimum": 0},
        "created": _TIME,
        "started": _TIME,
        "finished": _TIME,
        "error": _STR,
        "participants": {"type": "array", "items": PARTICIPANT},
    }
)

_PER_SEAT = {"type": "array"}
_MARK = _obj(
    {
        "cell": {
            "type": "array",
            "items": {"type": "integer", "minimum": 0},
            "minItems": 2,
            "maxItems": 2,
        },
        "point": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        "color": {"type": "string", "pattern": "^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"},
        "label": {"type": "string", "maxLength": 16},
    },
    [],
)
OVERLAY = {
    **_obj(
        {
            "text": {"type": "string", "maxLength": 1000},
            "marks": {"type": "array", "items": _MARK, "maxItems": 64},
        },
        [],
    ),
    "description": "a bot's debug overlay (docs: the bot authors' page, Debug overlay)",
}
SEAT_DEBUG = _obj({"overlay": {"oneOf": [OVERLAY, {"type": "null"}]}, "note": _STR})
TURN = _obj(
    {
        "number": {"type": "integer", "minimum": 1},
        "seats": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "actions": {**_PER_SEAT, "description": "per seat: its action, null if not asked"},
        "faults": {**_PER_SEAT, "items": {"type": ["string", "null"]}},
        "details": {**_PER_SEAT, "items": {"type": ["string", "null"]}},
        "latencies_ms": {**_PER_SEAT, "items": {"type": ["integer", "null"]}},
        "frame": {"description": "the game's spectator frame after the turn (see its docs)"},
        "forfeited": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "debug": {
            **_PER_SEAT,
            "items": {"oneOf": [SEAT_DEBUG, {"type": "null"}]},
            "description": "only where a seat whose debug overlays the socket's user may see "
            "(its bot's owner, or anyone once the bot opted in) sent one: per seat, or null",
        },
    },
    ["number", "seats", "actions", "faults", "details", "latencies_ms", "frame", "forfeited"],
)

STANDING = _obj(
    {
        "bot": _ID,
        "name": _STR,
        "owner": _STR,
        "rank": {"type": "integer", "minimum": 1},
        "points": {"type": "number"},
        "score": {"type": "number"},
        "wins": _INT,
        "draws": _INT,
        "losses": _INT,
        "games": _INT,
    },
    closed=False,  # per format: seed, byes, buchholz, reached, rating...
)

EVENT = _obj(
    {
        "id": _ID,
        "name": _STR,
        "game": _STR,
        "status": _STR,
        "status_label": _STR,
        "format": _STR,
        "matches_done": {"type": "integer", "minimum": 0},
        "matches_total": {"type": "integer", "minimum": 0},
    }
)

ERROR = _message("error", {"detail": _STR})

BRACKET = _obj(
    {
        "event": _ID,
        "status": _STR,
        "size": {"type": "integer", "minimum": 0},
        "tie_break": _STR,
        "champion": {"type": ["object", "null"]},
        "rounds": {
            "type": "array",
            "items": _obj({"round": _INT, "name": _STR, "slots": {"type": "array"}}, closed=False),
        },
    },
    closed=False,
)
RUNNING = {"type": "integer", "minimum": 0}


def _stream(title: str, description: str, messages: dict[str, dict]) -> dict:
    return {
        "$schema": DRAFT,
        "title": title,
        "description": description,
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in messages],
        "$defs": messages,
    }


SCHEMAS: dict[str, dict] = {
    "match": _stream(
        "ws/matches/<id>/: server to client",
        "A match's stream (read-only). First a snapshot of the match and its last 50 turns "
        "(`first` is the number of the first one included, `last` the last one; older turns: "
        "the turns API), then each turn as it is stored, `started` when a queued match starts "
        "and `end` when it is over. Turn numbers only grow: skip any already seen. No message "
        "is over 256 KiB: a snapshot bigger than that comes in `parts` messages, the "
        "`snapshot` with the first turns then `snapshot_part`s (`part` 2, 3...) with the next "
        "ones, in order, before anything else; a turn too big for one message is left out of "
        "them (a gap below `last`) or, live, sent as a `turn_ref` naming its number: fetch "
        "it from the turns API. A socket whose user "
        "may see a seat's debug overlays (the bot's owner, or anyone once the bot opted in) "
        "also gets `debug` in the snapshot's turns and a `debug` message per such seat after "
        "each turn whose reply carried one (it repeats the turn's number).",
        {
            "snapshot": _message(
                "snapshot",
                {
                    "match": MATCH,
                    "first": {"type": "integer", "minimum": 1},
                    "last": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "the last turn the snapshot covers (0: none yet)",
                    },
                    "parts": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "how many messages the snapshot takes, this one included",
                    },
                    "turns": {"type": "array", "items": TURN, "maxItems": 50},
                },
            ),
            "snapshot_part": _message(
                "snapshot_part",
                {
                    "part": {"type": "integer", "minimum": 2},
                    "parts": {"type": "integer", "minimum": 2},
                    "turns": {"type": "array", "items": TURN, "maxItems": 50},
                },
            ),
            "started": _message("started", {"match": MATCH}),
            "turn": _message(
                "turn", {"turn": TURN, "sent_at": {"type": "number", "description": "epoch s"}}
            ),
            "turn_ref": _message(
                "turn_ref",
                {
                    "number": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "a stored turn too big for one message: fetch it from "
                        "`GET /api/matches/<id>/turns/?since=<number - 1>`",
                    }
                },
            ),
            "end": _message("end", {"match": MATCH}),
            "debug": _message(
                "debug",
                {
                    "number": {"type": "integer", "minimum": 1},
                    "seat": {"type": "integer", "minimum": 0},
                    **SEAT_DEBUG["properties"],
                },
            ),
            "error": ERROR,
        },
    ),
    "event": _stream(
        "ws/events/<id>/: server to client",
        "An event's stream (read-only): a snapshot (the event, its standings, up to 20 "
        "running and 10 queued matches; a single elimination's bracket as "
        "`GET /api/events/<id>/bracket/` gives it), then matches starting and finishing and "
        "the standings (and the bracket) after each result.",
        {
            "snapshot": _message(
                "snapshot",
                {
                    "event": EVENT,
                    "standings": {"type": "array", "items": STANDING},
                    "live": {"type": "array", "items": MATCH, "maxItems": 20},
                    "upcoming": {"type": "array", "items": MATCH, "maxItems": 10},
                    "bracket": BRACKET,
                },
                ["event", "standings", "live", "upcoming"],
            ),
            "match_started": _message("match_started", {"match": MATCH}),
            "match_finished": _message("match_finished", {"match": MATCH}),
            "standings": _message(
                "standings",
                {
                    "event": _ID,
                    "standings": {"type": "array", "items": STANDING},
                    "header": HEADER,
                },
                ["event", "standings"],
            ),
            "bracket": _message("bracket", {"event": _ID, "bracket": BRACKET}),
            "error": ERROR,
        },
    ),
    "home": _stream(
        "ws/home/: server to client",
        "The home page's stream (read-only): how many matches of each game are running, "
        "first for every game, then for one game each time a match of it starts or ends, "
        "with the newest of its running matches (`watch`, null when none) and the match "
        "that started or ended (unless its result is hidden until its reveal).",
        {
            "snapshot": _message(
                "snapshot",
                {
                    "running": {"type": "object", "additionalProperties": RUNNING},
                    "watch": {
                        "type": "object",
                        "additionalProperties": {"type": ["integer", "null"], "minimum": 1},
                    },
                },
                ["running"],
            ),
            "running": _message(
                "running",
                {
                    "game": _STR,
                    "running": RUNNING,
                    "watch": {"type": ["integer", "null"], "minimum": 1},
                    "match": MATCH,
                },
                ["game", "running", "watch"],
            ),
            "error": ERROR,
        },
    ),
    "notifications": _stream(
        "ws/notifications/: server to client",
        "The signed-in user's notifications (read-only; closed with 4401 for a visitor): "
        "the unread count first, then each new notification with the count after it.",
        {
            "snapshot": _message("snapshot", {"unread": RUNNING}),
            "notification": _message(
                "notification",
                {
                    "notification": _obj(
                        {
                            "id": _ID,
                            "kind": _STR,
                            "text": _STR,
                            "link": _STR,
                            "created": _STR,
                            "read": {"type": "boolean"},
                        }
                    ),
                    "unread": RUNNING,
                },
            ),
            "error": ERROR,
        },
    ),
    "play": _stream(
        "ws/play/<match>/<seat>/: server to client",
        "A human seat, for its owner only (the socket is closed with 4403 for anyone else). "
        "`request` carries the seat's native message and is repeated while it is pending; "
        "`sent` acknowledges a move; `closed` says the match no longer waits for this seat.",
        {
            "hello": _message("hello", {"match": _ID, "seat": {"type": "integer", "minimum": 0}}),
            "request": _message(
                "request",
                {
                    "seq": _INT,
                    "message": {"description": "the game's native message for this seat"},
                    "timeout_ms": {"type": ["integer", "null"]},
                    "remaining_ms": {"type": ["integer", "null"]},
                    "deadline": {"type": ["number", "null"], "description": "epoch s"},
                },
            ),
            "sent": _message("sent", {"seq": _INT}),
            "closed": _message("closed", {}),
            "error": ERROR,
        },
    ),
    "play-move": {
        "$schema": DRAFT,
        "title": "ws/play/<match>/<seat>/: client to server",
        "description": "The one message a human seat sends: its move for the pending "
        "request `seq` (at most 16,384 characters; 40 messages per 10 s).",
        **_message(
            "move",
            {"seq": _INT, "move": {"description": "the seat's native reply (any JSON)"}},
        ),
    },
}

#: the stream (URL pattern) each schema belongs to
STREAMS = {
    "match": "ws/matches/<id>/",
    "event": "ws/events/<id>/",
    "home": "ws/home/",
    "notifications": "ws/notifications/",
    "play": "ws/play/<match>/<seat>/",
    "play-move": "ws/play/<match>/<seat>/",
}


def schema_index(request):
    """``/api/schema/live/``: every live schema's name, stream and URL."""
    return JsonResponse(
        {
            "schemas": [
                {
                    "name": name,
                    "stream": STREAMS[name],
                    "title": schema["title"],
                    "url": request.build_absolute_uri(reverse("api:live-schema", args=[name])),
                }
                for name, schema in SCHEMAS.items()
            ],
            "openapi": request.build_absolute_uri(reverse("api:schema")),
        }
    )


def schema(request, name: str):
    """``/api/schema/live/<name>.json``: one schema."""
    found = SCHEMAS.get(name)
    if found is None:
        raise Http404("No such schema")
    body = {"$id": request.build_absolute_uri(), **found}
    return JsonResponse(body, json_dumps_params={"indent": 2})


def docs(request):
    """``/api/docs/live/``: the live protocol and the ``arena`` client, for people."""
    rows = [
        {
            "name": name,
            "stream": STREAMS[name],
            "title": schema["title"],
            "description": schema["description"],
            "types": list(schema.get("$defs", {})) or [schema["properties"]["type"]["const"]],
        }
        for name, schema in SCHEMAS.items()
    ]
    game = all_games()[0]  # the examples' game: the first listed
    builtin = sorted(game.builtin_bots)[0] if game.builtin_bots else "NAME"
    return render(request, "docs/live.html", {"schemas": rows, "game": game, "builtin": builtin})
