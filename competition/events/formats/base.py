"""The base class of an event format: everything in which formats differ, with the defaults
most of them share. ``competition.events.services`` and the pages call these methods and
never ask which format an event plays (``formats.of(event)``).

An instance is bound to one event (``Format(event)``), as Tabbycat's draw managers are to a
round. Methods that schedule run inside the event's transaction, the event row locked.
"""

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
    """One event format. Subclasses set ``key`` (an ``EventFormat`` value) and override what
    they do differently; the defaults are those of a round robin: everything is queued at
    the start, the event finishes when no match is pending, ranked by points then wins."""

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
        """``ValidationError`` (by field) when the format cannot play a game of ``low`` to
        ``high`` seats with tables of ``size`` (None: the default). A two-seat format (the
        default) plays matches of two seats: it refuses a game that cannot seat two, and a
        game of more seats unless ``table_size`` is 2."""
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
        """Schedule the first matches of the event just marked running (``entries``: all of
        them, ``scheduling.eligible`` tells who may play); returns the matches created. By
        default: seed if the format is ``seeded``, then ``advance``."""
        if self.seeded:
            scheduling.seed_by_rating(entries)
        return self.advance()

    def advance(self) -> int:
        """The running event's next step, after a match ended or an organiser acted: schedule
        what is due now (a round, a series), or finish the event when it is over; returns the
        matches created. This is the one place that decides whether the next round is due.
        By default (everything queued at the start): finish when nothing is pending."""
        if not self.event.matches.filter(status__in=PENDING).exists():
            scheduling.finish(self.event)
        return 0

    def round_due(self, done: int) -> bool:
        """Whether round ``done + 1`` may start now (every format but the ladder plays round
        by round): at once after round 0 (the start) or with no round gap, else once
        ``event.round_gap`` seconds have passed since the last match of rounds up to ``done``
        ended. Until then it records when (``Event.next_round_at``), and the runners'
        periodic loop (``services.start_due_rounds``) comes back at that time; when due it
        clears it. Called by ``advance`` with the event locked, round ``done`` over."""
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
        """Each standings row's sort key, best highest (ties then go to head-to-head points,
        then name); may add the format's own columns to ``rows`` (``buchholz``, ``reached``).
        ``source``: the public standings rebuilt (``services.public_source``), None for the
        stored ones. By default: series points, then games won."""
        return {b: (r["points"], r["wins"]) for b, r in rows.items()}

    def total_rounds(self, entrants: int, bracket: dict | None) -> int | None:
        """How many rounds the format plays with ``entrants`` entries (None: not known in
        advance, e.g. a ladder runs until stopped); ``bracket`` is ``bracket``'s."""
        return None

    def round_text(self, current: int, total: int | None) -> str:
        """The event header's words for its rounds (``events.header.rounds``): ``current``
        the latest round scheduled (0: none yet), ``total`` ``total_rounds``'s."""
        if current:
            return f"round {current}" + (f" of {total}" if total else "")
        if total:
            return f"{total} round{'s' if total != 1 else ''} planned"
        return "not started"

    def bracket(self, series: list[Series]) -> dict | None:
        """The bracket as JSON (``services.bracket_view``) from ``series`` (the stored ones, or
        the public ones); None for a format without one."""
        return None

    def page(self, names: dict[int, str], series: dict | None) -> dict:
        """What the event page adds for this format (template context): ``swiss``, a Swiss
        event's rounds. ``names``: bot id -> name; ``series``: the public series
        (``Recomputed.series``), None for the stored ones."""
        return {"swiss": None}

    def wall(self) -> dict:
        """What the big screen's ``show`` (``web.screen.show``) adds for this format:
        ``elimination``, whether it draws a bracket."""
        return {"elimination": self.has_bracket}
