"""A bot's messages as a person reads them (the test call's result and the per-turn log)."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl


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
