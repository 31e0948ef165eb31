"""Every websocket message the tests receive is checked against the live protocol's published
JSON Schemas (``competition/api/websocket_schemas.py``, served at ``/api/schema/live/``).

``check(stream, message)`` validates one decoded message (``stream``: ``match``, ``event``,
``home``, ``notifications``, ``play`` for what a server sends, ``play-move`` for what a human seat sends) and raises
``AssertionError`` naming the violation; ``stream_of(url)`` tells the stream of a websocket
URL; ``CheckedCommunicator`` is channels' test communicator validating every message it
receives.
"""

from __future__ import annotations

import functools
import json
import re

from channels.testing import WebsocketCommunicator
from jsonschema import Draft202012Validator

from competition.api.websocket_schemas import SCHEMAS

_STREAMS = [
    (re.compile(r"/ws/matches/\d+/"), "match"),
    (re.compile(r"/ws/events/\d+/"), "event"),
    (re.compile(r"/ws/home/"), "home"),
    (re.compile(r"/ws/notifications/"), "notifications"),
    (re.compile(r"/ws/play/\d+/\d+/"), "play"),
]


@functools.cache
def validator(stream: str) -> Draft202012Validator:
    schema = SCHEMAS[stream]
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def stream_of(url: str) -> str | None:
    return next((name for pattern, name in _STREAMS if pattern.search(url)), None)


def check(stream: str, message) -> None:
    """``AssertionError`` unless ``message`` is valid under the stream's schema."""
    errors = sorted(validator(stream).iter_errors(message), key=lambda e: list(e.path))
    if errors:
        best = errors[0]
        where = "/".join(str(p) for p in best.absolute_path) or "(root)"
        raise AssertionError(
            f"a {stream!r} websocket message breaks its schema at {where}: {best.message}; "
            f"message: {json.dumps(message)[:500]}"
        )


def check_text(stream: str, text) -> None:
    if isinstance(text, bytes | bytearray):
        raise AssertionError(f"a binary frame on the {stream!r} stream (the protocol is text)")
    check(stream, json.loads(text))


class CheckedCommunicator(WebsocketCommunicator):
    """A ``WebsocketCommunicator`` that validates every text message it receives (and every
    message a human seat sends) against the stream's schema."""

    def __init__(self, application, path, *args, **kwargs):
        super().__init__(application, path, *args, **kwargs)
        self.stream = stream_of(path)
        assert self.stream, f"no live schema for {path}"

    async def receive_from(self, timeout=1):
        text = await super().receive_from(timeout)
        check_text(self.stream, text)
        return text

    async def send_json_to(self, data):
        if self.stream == "play" and isinstance(data, dict) and data.get("type") == "move":
            check("play-move", data)
        await super().send_json_to(data)
