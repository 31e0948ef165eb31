"""Strict decoding of a bot's reply (one JSON value, RFC 8259), and ``decode_bounded``, the same for
every JSON value a person sends."""

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
    """Whether ``text`` (valid JSON) nests deeper than ``limit``, without recursion and at C
    speed: strings cut out, brackets counted."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    if b'"' in raw:
        raw = _STRING.sub(b"", raw)
    steps = raw.translate(_DEPTH_STEP, _NOT_A_BRACKET)
    return max(accumulate(memoryview(steps).cast("b")), default=0) > limit


@contextlib.contextmanager
def paused_gc():
    """No cyclic GC while decoding: JSON holds no cycles, and a big value's containers would set
    off full collections of the whole process."""
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
    """The JSON value of ``raw`` as accepted from a person: strict, at most ``MAX_DEPTH`` deep,
    no lone surrogates (they cannot be stored or encoded later). ``ValueError`` with the
    reason in words, never ``RecursionError``."""
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
