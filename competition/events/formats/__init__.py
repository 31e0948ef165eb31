"""Event formats: one class per format and this registry, as Tabbycat's draw managers. Adding a
format: a module with a ``Format`` subclass and one line in ``FORMATS``."""

from __future__ import annotations

from competition.events.formats.base import Format
from competition.events.formats.continuous_ladder import ContinuousLadder
from competition.events.formats.free_for_all import FreeForAll
from competition.events.formats.round_robin import DoubleRoundRobin, RoundRobin
from competition.events.formats.single_elimination import SingleElimination
from competition.events.formats.swiss import Swiss
from competition.models import Event

#: ``Event.format`` -> its class
FORMATS: dict[str, type[Format]] = {
    cls.key: cls
    for cls in (
        RoundRobin,
        DoubleRoundRobin,
        Swiss,
        SingleElimination,
        ContinuousLadder,
        FreeForAll,
    )
}


def get(key: str) -> type[Format] | None:
    """The class of format ``key`` (None for an unknown one)."""
    return FORMATS.get(key)


def of(event: Event) -> Format:
    """``event``'s format, bound to it. ``LookupError`` for a format not registered."""
    cls = FORMATS.get(event.format)
    if cls is None:
        raise LookupError(f"event {event.pk}: unknown format {event.format!r}")
    return cls(event)


def waiting_for_bots() -> list[str]:
    """The formats in which a bot made active again may make something due at once."""
    return [key for key, cls in FORMATS.items() if cls.waits_for_bots]


__all__ = ["FORMATS", "Format", "get", "of", "waiting_for_bots"]
