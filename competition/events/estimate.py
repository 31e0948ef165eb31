"""A round's expected duration, from three things: the game's turn limit (``Game.turn_limit``
and the platform's ``ARENA_MATCH_MAX_TURNS``), the pace (the event's pace and its bots' recent
move times, ``BotHealth.replies_ms``) and the history (the turns and durations of past
matches of this game, this event's first).

``expected`` is the arithmetic, pure; ``for_event`` reads its inputs. The admin, the event
page and the big screen's countdown (``show.rounds.estimate``) say what it gives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from django.conf import settings

from competition.models import Entry, Event, Match, MatchStatus
from competition.models.bots import BotHealth
from games import get_game

#: a turn's duration when nothing says more (no pace, no move times, no history)
DEFAULT_TURN_MS = 50.0
#: what a turn costs the platform beyond the bots' replies (storing it, sending it out)
OVERHEAD_MS = 5.0
#: past matches read
HISTORY = 60
#: this event's own past matches enough to go by (else the game's)
OWN_ENOUGH = 3


@dataclass(frozen=True)
class Estimate:
    """A round of ``tables`` matches: ``seconds`` expected, from ``turns`` turns of
    ``turn_ms`` each (``limit``: the turn limit; ``history``: the past matches read)."""

    seconds: float
    turns: int
    turn_ms: float
    limit: int | None
    history: int
    tables: int

    def text(self) -> str:
        """``"about 40 seconds"``, ``"about 3 minutes"``, ``"about 1 hour 10 minutes"``."""
        return f"about {duration_text(self.seconds)}"

    def basis(self) -> str:
        """What it comes from, in words."""
        parts = [f"{self.turns} turns of about {duration_text(self.turn_ms / 1000)}"]
        if self.limit is not None:
            parts.append(f"the turn limit is {self.limit}")
        if self.history:
            parts.append(f"from {self.history} past {'match' if self.history == 1 else 'matches'}")
        else:
            parts.append("no past matches of this game yet")
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {"seconds": round(self.seconds, 1), "text": self.text(), "basis": self.basis()}


def duration_text(seconds: float) -> str:
    if seconds < 1:
        return f"{max(1, round(seconds * 1000))} ms"
    if seconds < 90:
        s = max(1, round(seconds))
        return f"{s} second{'s' if s != 1 else ''}"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} minutes"
    hours, rest = divmod(minutes, 60)
    hour = f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{hour} {rest} minutes" if rest else hour


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank, at least one value)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def expected(
    *,
    turn_limit: int | None,
    pace_ms: float,
    move_ms: float,
    past: Sequence[tuple[int, float]],
    tables: int = 1,
) -> Estimate | None:
    """A round's estimate, or None when nothing bounds it (no limit and no history).

    ``past``: (turns, seconds) of ended matches of the game. Its turns: the median of the
    past's for one table, its 80th percentile for more (a round lasts as long as its longest
    table), never more than ``turn_limit``; without a past, the limit. A turn: the slower of
    the pace and the move times (the slowest bot of the round: a round waits for it) plus
    the platform's overhead; with neither, the past's own time a turn."""
    past = [(t, s) for t, s in past if t > 0 and s >= 0]
    if not past and turn_limit is None:
        return None
    if past:
        turns = quantile([t for t, _s in past], 0.5 if tables <= 1 else 0.8)
        if turn_limit is not None:
            turns = min(turns, turn_limit)
    else:
        turns = turn_limit
    if pace_ms or move_ms:
        turn_ms = max(pace_ms, move_ms + OVERHEAD_MS)
    elif past:
        turn_ms = median(1000 * s / t for t, s in past)
    else:
        turn_ms = DEFAULT_TURN_MS
    return Estimate(
        seconds=turns * turn_ms / 1000,
        turns=int(turns),
        turn_ms=turn_ms,
        limit=turn_limit,
        history=len(past),
        tables=max(1, tables),
    )


def _past(event: Event) -> list[tuple[int, float]]:
    """(turns, seconds) of the event's latest ended matches, or its game's when the event has
    too few: the latest ``HISTORY`` rows by an index range (``match_event_finished``, the
    game's index by id), those with a result and turns kept, so the cost is the same at any
    history (matches without turns or a start cannot make the walk longer)."""
    fields = ("turn_count", "started", "finished", "status")
    ended = Match.objects.filter(finished__isnull=False)
    own = ended.filter(event=event).order_by("-finished").values_list(*fields)
    rows = _timed(own[:HISTORY])
    if len(rows) < OWN_ENOUGH:
        # the game's newest by id: a backward walk of the game's index, not a sort of them all
        others = ended.filter(game=event.game).exclude(event=event).order_by("-id")
        rows += _timed(others.values_list(*fields)[:HISTORY])[: HISTORY - len(rows)]
    return rows


def _timed(rows) -> list[tuple[int, float]]:
    """The (turns, seconds) of ``rows`` that ended with a result after some turns."""
    done = set(MatchStatus.with_result())
    return [
        (turns, (end - start).total_seconds())
        for turns, start, end, status in rows
        if status in done and start is not None and turns > 0
    ]


def _move_ms(bot_ids: list[int]) -> float:
    """The slowest of the bots' median recent reply times (ms), 0 when none is known."""
    slowest = 0.0
    for replies in BotHealth.objects.filter(bot_id__in=bot_ids).values_list(
        "replies_ms", flat=True
    ):
        times = [t for match in replies or [] for t in (match or []) if isinstance(t, int | float)]
        if times:
            slowest = max(slowest, float(median(times)))
    return slowest


def for_event(event: Event) -> Estimate | None:
    """The estimate of one round of ``event`` (its tables: the current round's matches, else
    its entrants by the seats of a match)."""
    try:
        game = get_game(event.game)
    except KeyError:
        return None
    bots = list(Entry.objects.filter(event=event).values_list("bot_id", flat=True))
    seats = event.table_size or game.seats[0]
    try:
        options = game.options_for_seats(game.resolve_options(event.options or {}), seats)
        own = game.turn_limit(options)
    except ValueError:
        own = None
    limit = (
        settings.ARENA_MATCH_MAX_TURNS if own is None else min(own, settings.ARENA_MATCH_MAX_TURNS)
    )
    current = (
        event.matches.exclude(round=None).order_by("-round").values_list("round", flat=True).first()
    )
    tables = event.matches.filter(round=current).count() if current else 0
    return expected(
        turn_limit=limit,
        pace_ms=float(event.pace_ms or 0),
        move_ms=_move_ms(bots),
        past=_past(event),
        tables=tables or max(1, len(bots) // max(2, seats)),
    )
