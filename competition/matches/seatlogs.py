"""A turn's per-seat logs as stored, each nearly shared text kept once (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: the texts of a seat's log stored by reference
FIELDS = ("sent", "received")
#: a text is stored by reference only when that saves at least this many characters
MIN_SAVED = 64


def pack(logs: Sequence[Any]) -> list[dict | None]:
    """The stored form of a turn's ``SeatLog`` list (``None`` for a seat not asked)."""
    return _refer([log.to_json() if log else None for log in logs])


def pack_json(logs: Any) -> Any:
    """``pack`` of logs as JSON (texts whole, as ``expand`` gives them back), in a new list."""
    if not isinstance(logs, list):
        return logs
    return _refer([dict(log) if isinstance(log, dict) else log for log in logs])


def _refer(out: list) -> list:
    """``out`` (new dicts, changed in place) with the texts alike stored by reference."""
    for field in FIELDS:
        like = None
        for seat, log in enumerate(out):
            text = log.get(field) if isinstance(log, dict) else None
            if not isinstance(text, str) or len(text) < MIN_SAVED:
                continue
            if like is None:
                like = seat  # stored whole: the others refer to it
                continue
            base = out[like][field]
            head, tail = _common(base, text)
            if head + tail - 48 < MIN_SAVED:  # the reference's own keys cost about 48
                continue
            log[field] = {
                "like": like,
                "head": head,
                "tail": tail,
                "middle": text[head : len(text) - tail],
            }
    return out


def expand(logs: Any) -> Any:
    """``logs`` with every reference expanded, in a new list (the stored one is never changed)."""
    if not isinstance(logs, list):
        return logs
    out = None
    for seat, log in enumerate(logs):
        if not isinstance(log, dict):
            continue
        for field in FIELDS:
            ref = log.get(field)
            if not isinstance(ref, dict):
                continue
            if out is None:
                out = list(logs)
            out[seat] = {**out[seat], field: _text(logs, field, ref)}
    return logs if out is None else out


def _text(logs: list, field: str, ref: dict) -> str:
    like = ref.get("like")
    base = ""
    if isinstance(like, int) and 0 <= like < len(logs) and isinstance(logs[like], dict):
        found = logs[like].get(field)
        base = found if isinstance(found, str) else ""
    head, tail = int(ref.get("head") or 0), int(ref.get("tail") or 0)
    return base[:head] + str(ref.get("middle") or "") + (base[len(base) - tail :] if tail else "")


def _common(a: str, b: str) -> tuple[int, int]:
    """The lengths of ``a`` and ``b``'s common head and of their common tail after it."""
    most = min(len(a), len(b))
    head = _longest(most, lambda n: a[:n] == b[:n])
    rest = most - head
    tail = _longest(rest, lambda n: a[len(a) - n :] == b[len(b) - n :])
    return head, tail


def _longest(most: int, same) -> int:
    """The largest ``n <= most`` with ``same(n)`` (``same`` holds up to some length)."""
    if same(most):
        return most
    low, high = 0, most - 1  # same(low) holds, same(high + 1) does not
    while low < high:
        mid = (low + high + 1) // 2
        if same(mid):
            low = mid
        else:
            high = mid - 1
    return low
