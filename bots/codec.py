"""Strict decoding of a bot's reply: exactly one JSON value in UTF-8 (RFC 8259).

JSON whitespace (space, tab, CR, LF) around the value is accepted. Anything else is a
``BotFault``: invalid UTF-8 is ``bad_encoding``; an empty body, HTML, a BOM, trailing text,
``NaN``/``Infinity``, nesting deeper than ``MAX_DEPTH`` or a number too long to convert is
``bad_json``. With duplicate keys the last one counts (as every game spec says).

``too_deep`` is shared with the API's JSON parser: a value nested a few hundred levels deep
decodes, but would break whatever walks it recursively later (``json.dumps``, a serializer).
``decode_bounded`` is that parser's decoding, the one function for every JSON value a person
sends (the API's bodies, a web form's JSON field).
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import json
import re
from itertools import accumulate
from typing import Any

from bots.faults import BotFault, FaultCode

_decoder = json.JSONDecoder(parse_constant=lambda name: _reject_constant(name))

#: the deepest nesting of arrays and objects accepted (every game's reply needs a handful)
MAX_DEPTH = 64
#: replies longer than this are decoded with the cyclic garbage collector paused (``paused_gc``)
GC_PAUSE_CHARS = 4096

_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_A_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def too_deep(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels in ``text``, which must be
    valid JSON (check after decoding it).

    At C speed, without recursion: fewer opening brackets than the limit cannot nest deeper;
    otherwise the strings are cut out, every other character but brackets is deleted, and
    the deepest running total of +1 (``[``, ``{``) and -1 (``]``, ``}``) is the depth.
    """
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    if b'"' in raw:
        raw = _STRING.sub(b"", raw)
    steps = raw.translate(_DEPTH_STEP, _NOT_A_BRACKET)
    return max(accumulate(memoryview(steps).cast("b")), default=0) > limit


@contextlib.contextmanager
def paused_gc():
    """No cyclic garbage collection while decoding: JSON values hold no cycles, and a big
    value's many containers would set off full collections of the whole process (every
    object Django holds), several times over."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def decode_bounded(raw: bytes, encoding: str = "utf-8") -> Any:
    """The JSON value of ``raw`` (in ``encoding``) as the platform accepts one from a person:
    strict (no ``NaN``/``Infinity``), nested at most ``MAX_DEPTH`` levels (deeper values
    would break whatever walks them recursively, a 500), and text only (a lone surrogate such
    as ``"\\ud800"`` is refused, so no string that cannot be encoded reaches a model, the
    database or an error message). ``ValueError`` otherwise, its message the reason in words;
    never a ``RecursionError``."""
    too_deep_error = ValueError(f"nested deeper than {MAX_DEPTH} levels.")
    try:
        text = raw.decode(encoding)
    except LookupError:
        raise ValueError(f"the character set {encoding} is unknown.") from None
    try:
        with paused_gc():
            data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:  # the C decoder's own limit, far deeper than ours
        raise too_deep_error from None
    if too_deep(raw if codecs.lookup(encoding).name == "utf-8" else text):  # bytes: no copy
        raise too_deep_error
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate (not text).") from None
    return data


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
        if len(text) > GC_PAUSE_CHARS:
            with paused_gc():
                value = _decoder.decode(text)
        else:  # too few containers to set off a collection worth pausing for
            value = _decoder.decode(text)
    except RecursionError:
        raise BotFault(FaultCode.BAD_JSON, "reply nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, constants, int digit limit
        raise BotFault(
            FaultCode.BAD_JSON, f"not one JSON value: {preview(text, 80)!r} ({exc})"
        ) from None
    if too_deep(body):
        raise BotFault(FaultCode.BAD_JSON, f"reply nests deeper than {MAX_DEPTH} levels")
    return value


def preview(text: str | bytes, limit: int = 200) -> str:
    """A short printable prefix of a reply, for logs and fault details."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "…"
