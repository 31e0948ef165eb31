"""The base class of an event format. An instance is bound to one event; methods that schedule
run inside the event's transaction, the row locked."""

from __future__ import annotations

from datetime import timedelta
from typing import ClassVar

from django.core.exceptions import ValidationError
from django.db.models import Max
from django.utils import timezone

from competition.events import scheduling
from competition.events.series import PENDING, Series
from competition.events.standings import Recomputed
from competition.models import Entry, Event


class Format:
    """One event format: subclasses set ``key`` and override what differs. The defaults are a
    round robin's: everything queued at the start, finished when nothing is pending, ranked by
    points then wins."""

    key: ClassVar[str]
    #: Swiss and elimination: entries seeded by rating at the start, and only those play
    seeded: ClassVar[bool] = False
    #: the ladder: bots may enter while it runs (``services.add_all_active_bots``)
    late_entries: ClassVar[bool] = False
    #: Swiss and the ladder: a bot that becomes active again may make a round or a series due
    #: at once (``services.on_bot_activated``)
    waits_for_bots: ClassVar[bool] = False
    #: single elimination: the event has a bracket (``bracket``)
    has_bracket: ClassVar[bool] = False
    #: the ladder: the standings show the rating they are ordered by
    ranks_by_rating: ClassVar[bool] = False
    #: what the standings table is ordered by, tie-breaks named (under the table): the same
    #: order as ``rank_keys``, then head-to-head points, then the name
    order_text: ClassVar[str] = (
        "Ordered by points (Pts), then games won (W), then the points between the tied bots, "
        "then name."
    )

    def __init__(self, event: Event) -> None:
        self.event = event

    # -- seats --------------------------------------------------------------------------------

    @classmethod
    def check_seats(cls, low: int, high: int, size: int | None) -> None:
        """``ValidationError`` when the format cannot seat a game of ``low`` to ``high`` seats at
        tables of ``size`` (a two-seat format needs ``table_size`` 2 for a bigger game)."""
        if low > 2:
            raise ValidationError(
                {"format": f"A game of {low} or more seats needs a free-for-all."}
            )
        if high > 2 and size != 2:
            raise ValidationError(
                {
                    "table_size": f"This game seats up to {high}: a two-seat format needs "
                    "table_size 2 (or choose free-for-all)."
                }
            )
        if size is not None and size != 2:
            raise ValidationError({"table_size": "A two-seat format plays tables of 2."})

    # -- scheduling -----------------------------------------------------------------------------

    def start(self, entries: list[Entry]) -> int:
        """Schedule the first matches of the event just started; returns them."""
        if self.seeded:
            scheduling.seed_by_rating(entries)
        return self.advance()

    def advance(self) -> int:
        """The one place that decides what is due after a result or an organiser's action:
        schedule it, or finish the event; returns the matches created."""
        if not self.event.matches.filter(status__in=PENDING).exists():
            scheduling.finish(self.event)
        return 0

    def round_due(self, done: int) -> bool:
        """Whether round ``done + 1`` may start now (``round_gap`` after round ``done`` ended);
        until then ``Event.next_round_at`` tells the periodic step when to come back."""
        event = self.event
        due = None
        if done >= 1 and event.round_gap > 0:
            ended = event.matches.filter(round__lte=done).aggregate(at=Max("finished"))["at"]
            if ended is not None:
                due = ended + timedelta(seconds=event.round_gap)
                if due <= timezone.now():
                    due = None
        if event.next_round_at != due:
            event.next_round_at = due
            event.save(update_fields=["next_round_at"])
        return due is None

    # -- ranking and views ----------------------------------------------------------------------

    def rank_keys(self, rows: dict[int, dict], source: Recomputed | None) -> dict[int, tuple]:
        """Each standings row's sort key, best highest (then head-to-head, then name); may add
        columns to ``rows``. ``source``: the public standings, None for the stored ones."""
        return {b: (r["points"], r["wins"]) for b, r in rows.items()}

    def place_keys(self, keys: dict[int, tuple]) -> dict[int, tuple]:
        """What two rows must share to share a place ("joint 5th"), head-to-head not parting
        them: by default the whole sort key (``rank_keys``)."""
        return keys

    def stage(self, rnd: int | None, entrants: int) -> str:
        """A round's name for the presenter and the wall: "Round 2" ("" for none)."""
        return f"Round {rnd}" if rnd else ""

    def tie_notes(self, bracket: dict | None = None) -> list[dict]:
        """The pairings this event settled on seed, in words, each ``{"round", "text",
        "bots"}``: what the wall and the notices say (none but in a knockout)."""
        return []

    def total_rounds(self, entrants: int, bracket: dict | None) -> int | None:
        """The rounds played with ``entrants`` entries; None when not known in advance."""
        return None

    def round_text(self, current: int, total: int | None) -> str:
        """The event header's words for its rounds."""
        if current:
            return f"round {current}" + (f" of {total}" if total else "")
        if total:
            return f"{total} round{'s' if total != 1 else ''} planned"
        return "not started"

    def bracket(self, series: list[Series]) -> dict | None:
        """The bracket as JSON from ``series``; None for a format without one."""
        return None

    def page(self, names: dict[int, str], series: dict | None) -> dict:
        """What the event page adds for this format (template context)."""
        return {"swiss": None}

    def wall(self) -> dict:
        """What the big screen adds for this format."""
        return {"elimination": self.has_bracket}
