"""What a match says of each seat's health: a sample of its reply times and its last fault
(``competition.bots.health`` keeps the bots' recent ones)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bots.faults import FaultCode

#: the most reply times a match keeps of a seat: its quantiles, so a long match weighs no more
SAMPLE = 20
#: the codes that are no reply of the bot's (a time out, nothing there) or no fault of its own
NOT_A_REPLY = frozenset(
    {FaultCode.TIMEOUT.value, FaultCode.CONNECT.value, FaultCode.PLATFORM.value}
)
NOT_CHARGED = frozenset({None, FaultCode.OK.value, FaultCode.PLATFORM.value})


@dataclass(frozen=True)
class SeatReplies:
    """One seat of one match: a sample of its reply times (ms, sorted) and its last fault."""

    replies_ms: tuple[int, ...] = ()
    fault: str = ""
    detail: str = ""


def sample(values: list[int], most: int = SAMPLE) -> tuple[int, ...]:
    """``most`` of the sorted ``values`` at evenly spaced ranks (all of them when fewer), the
    smallest and the largest kept."""
    ordered = sorted(values)
    if len(ordered) <= most:
        return tuple(ordered)
    step = (len(ordered) - 1) / (most - 1)
    return tuple(ordered[round(i * step)] for i in range(most))


def seat_replies(turns: Iterable[tuple], seats: int) -> dict[int, SeatReplies]:
    """Each seat's ``SeatReplies`` from a match's turns as ``(faults, details, latencies_ms)``."""
    times: dict[int, list[int]] = {seat: [] for seat in range(seats)}
    last: dict[int, tuple[str, str]] = {}
    for faults, details, latencies in turns:
        for seat, code in enumerate(faults or ()):
            if seat >= seats:
                break
            latency = latencies[seat] if latencies and seat < len(latencies) else None
            if latency is not None and code not in NOT_A_REPLY:
                times[seat].append(int(latency))
            if code not in NOT_CHARGED:
                detail = details[seat] if details and seat < len(details) else None
                last[seat] = (code, str(detail or ""))
    return {
        seat: SeatReplies(sample(times[seat]), *last.get(seat, ("", ""))) for seat in range(seats)
    }
