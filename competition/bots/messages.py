"""A bot's messages as a person reads them (the test call's result and the per-turn log)."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

from bots.faults import DISCONNECTED, FaultCode, seen
from games import get_game


def truncate(text: str | None, limit: int) -> tuple[str, bool]:
    text = text or ""
    return (text[:limit], True) if len(text) > limit else (text, False)


def _pretty_json(text: str) -> str | None:
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return None
    return json.dumps(value, indent=2, ensure_ascii=False)


def readable(text: str | None, limit: int | None = None) -> dict:
    """A message for reading: JSON pretty-printed, a form's fields decoded, else text; each shown
    text cut at ``limit``."""
    text = text or ""

    def cut(value: str) -> str:
        return value if limit is None or len(value) <= limit else value[:limit] + "…"

    pretty = _pretty_json(text) if text.strip() else None
    if pretty is not None:
        return {"kind": "json", "text": cut(pretty), "raw": cut(text)}
    if "=" in text and not any(c.isspace() for c in text.strip()):
        try:
            fields = parse_qsl(text.strip(), keep_blank_values=True, strict_parsing=True)
        except ValueError:
            fields = []
        if fields:
            shown = [(name, cut(_compact_rows(value))) for name, value in fields]
            return {"kind": "form", "fields": shown, "raw": cut(text)}
    return {"kind": "text", "text": cut(text), "raw": cut(text)}


def _compact_rows(value: str) -> str:
    """A form field's value for reading: a board one row a line, other JSON pretty-printed."""
    try:
        data = json.loads(value)
    except (ValueError, TypeError):
        return value
    if isinstance(data, list) and data and all(isinstance(row, list) for row in data):
        rows = ",\n ".join(json.dumps(row, ensure_ascii=False) for row in data)
        return f"[{rows}]"
    return json.dumps(data, indent=2, ensure_ascii=False)


def as_json(value) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def illegal_reason(game_slug: str, detail: str) -> tuple[str, str]:
    """An illegal reply's detail (``"code"`` or ``"code: what"``) as ``(the game's words for the
    code, the rest)``; ``("", detail)`` when the code is not in the game's catalogue."""
    code, _, rest = (detail or "").partition(": ")
    try:
        words = get_game(game_slug).illegal.get(code.strip())
    except KeyError:
        words = None
    return (words, rest.strip()) if words else ("", detail or "")


def technical_reason(detail: str) -> str:
    """A transport's technical detail in words where it is a common one."""
    low = detail.lower()
    if "refused" in low or "errno 111" in low or "connect call failed" in low:
        return "connection refused"
    if detail.startswith(DISCONNECTED):
        return detail
    return detail.strip()


def fault_words(code: str, detail: str, game_slug: str, endpoint: str, *, owner: bool) -> str:
    """A fault in words: in full to the owner ("could not connect to http://…: connection
    refused", "made an illegal move: that cell is taken (cell 4 is taken)"), without the bot's
    address to others ("could not be reached"); never a code."""
    if not code:
        return "no fault"
    if code == FaultCode.ILLEGAL:
        words, rest = illegal_reason(game_slug, detail)
        if words:
            return f"{seen(code)}: {words}" + (f" ({rest})" if rest and owner else "")
    if not owner:  # the detail may name the bot's host: only a time limit's is public
        public = detail if code == FaultCode.TIMEOUT and detail else ""
        return seen(code) + (f" ({public})" if public else "")
    reason = technical_reason(detail)
    if code == FaultCode.CONNECT:
        return f"could not connect to {endpoint}" + (f": {reason}" if reason else "")
    return seen(code) + (f" ({reason})" if reason else "")
