"""Debug overlays: the ``debug`` key a bot may add to its reply (its shape: the bot authors' page,
"Debug overlay"), taken out before the game parses it; a bad one is dropped, never a fault."""

from __future__ import annotations

import json
import math
import re
from typing import Any

KEY = "debug"
MAX_BYTES = 4096
MAX_MARKS = 64
MAX_TEXT = 1000
MAX_LABEL = 16
COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")


class Malformed(ValueError):
    """Why a debug value was dropped (the recorded note)."""


def split(reply: Any) -> tuple[Any, Any, str | None]:
    """``(reply without "debug", the valid debug value or None, a note or None)``."""
    if not isinstance(reply, dict) or KEY not in reply:
        return reply, None, None
    stripped = {k: v for k, v in reply.items() if k != KEY}
    try:
        return stripped, validate(reply[KEY]), None
    except Malformed as exc:
        return stripped, None, f"debug dropped: {exc}"


def validate(value: Any) -> dict:
    """The debug value itself if it follows the shape (module docstring); else ``Malformed``."""
    try:
        size = len(
            json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        )
    except (TypeError, ValueError, RecursionError):
        raise Malformed("not plain JSON") from None
    if size > MAX_BYTES:
        raise Malformed(f"{size} bytes, more than {MAX_BYTES}")
    if not isinstance(value, dict) or not value:
        raise Malformed('expected an object with "text" and/or "marks"')
    if extra := set(value) - {"text", "marks"}:
        raise Malformed(f"unknown key {sorted(extra)[0]!r}")
    text = value.get("text")
    if "text" in value and (not isinstance(text, str) or len(text) > MAX_TEXT):
        raise Malformed(f'"text" must be a string of at most {MAX_TEXT} characters')
    marks = value.get("marks")
    if "marks" in value:
        if not isinstance(marks, list):
            raise Malformed('"marks" must be an array')
        if len(marks) > MAX_MARKS:
            raise Malformed(f"{len(marks)} marks, more than {MAX_MARKS}")
        for i, mark in enumerate(marks):
            _mark(i, mark)
    return value


def _mark(i: int, mark: Any) -> None:
    if not isinstance(mark, dict):
        raise Malformed(f"mark {i} is not an object")
    if extra := set(mark) - {"cell", "point", "color", "label"}:
        raise Malformed(f"mark {i}: unknown key {sorted(extra)[0]!r}")
    if ("cell" in mark) == ("point" in mark):
        raise Malformed(f'mark {i}: exactly one of "cell" and "point"')
    if "cell" in mark:
        at = mark["cell"]
        if not (_pair(at) and all(type(v) is int and v >= 0 for v in at)):
            raise Malformed(f'mark {i}: "cell" must be [x, y], two integers >= 0')
    else:
        at = mark["point"]
        if not (
            _pair(at)
            and all(type(v) in (int, float) and math.isfinite(v) and abs(v) < 1e9 for v in at)
        ):
            raise Malformed(f'mark {i}: "point" must be [x, y], two finite numbers')
    if "color" in mark and not (isinstance(mark["color"], str) and COLOR.match(mark["color"])):
        raise Malformed(f'mark {i}: "color" must be "#rgb" or "#rrggbb"')
    label = mark.get("label")
    if "label" in mark and (not isinstance(label, str) or len(label) > MAX_LABEL):
        raise Malformed(f'mark {i}: "label" must be a string of at most {MAX_LABEL} characters')


def _pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2
