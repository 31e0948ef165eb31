"""Strict decoding of a bot's reply: exactly one JSON value in UTF-8 (RFC 8259).

JSON whitespace (space, tab, CR, LF) around the value is accepted. Anything else is a
``BotFault``: invalid UTF-8 is ``bad_encoding``; an empty body, HTML, a BOM, trailing text,
``NaN``/``Infinity``, absurd nesting or a number too long to convert is ``bad_json``.
With duplicate keys the last one counts (as every game spec says).
"""

from __future__ import annotations

import json
from typing import Any

from bots.faults import BotFault, FaultCode

_decoder = json.JSONDecoder(parse_constant=lambda name: _reject_constant(name))


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def decode_reply(body: bytes | str) -> Any:
    """The JSON value of a reply body, or ``BotFault(bad_encoding | bad_json)``."""
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8", errors="strict")
        except UnicodeDecodeError as exc:
            raise BotFault(FaultCode.BAD_ENCODING, f"reply is not UTF-8 ({exc.reason})") from None
    else:
        text = body
    if text.startswith("\ufeff"):
        raise BotFault(FaultCode.BAD_JSON, "reply starts with a byte order mark")
    try:
        return _decoder.decode(text)
    except RecursionError:
        raise BotFault(FaultCode.BAD_JSON, "reply nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, constants, int digit limit
        raise BotFault(FaultCode.BAD_JSON, f"not one JSON value: {preview(text, 80)!r} ({exc})") from None


def preview(text: str | bytes, limit: int = 200) -> str:
    """A short printable prefix of a reply, for logs and fault details."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "…"
