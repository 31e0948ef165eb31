"""An event's series as its matches store them (``Match.pairing`` keys ``"A-B"``, tables
``"t4-9-2"``) and ``load_series``, which reads them back in one query."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from competition.events import pairing
from competition.events.pairing import SeriesResult
from competition.models import (
    Event,
    MatchStatus,
    Participant,
)

logger = logging.getLogger(__name__)

PENDING = (MatchStatus.QUEUED, MatchStatus.RUNNING)


def series_key(a: int, b: int, bye: int | None = None) -> str:
    """The ``Match.pairing`` of a series of ``a`` (first) and ``b``."""
    return f"{a}-{b}" + (f"/bye-{bye}" if bye is not None else "")


def table_key(bots) -> str:
    """The ``Match.pairing`` of a free-for-all table of ``bots`` (seat order of game 0)."""
    return "t" + "-".join(str(b) for b in bots)


def series_bots(key: str) -> tuple[int, ...]:
    """Every bot of a series key (a table's all, a two-bot series' two; not its bye)."""
    if key.startswith("t"):
        bots = tuple(int(x) for x in key[1:].split("-"))
        if len(bots) < 2 or len(set(bots)) != len(bots):
            raise ValueError(f"bad table key {key!r}")
        return bots
    a, b, _bye = parse_series_key(key)
    return (a, b)


def parse_series_key(key: str) -> tuple[int, int, int | None]:
    if key.startswith("t"):
        bots = series_bots(key)
        return bots[0], bots[1], None
    head, _, tail = key.partition("/")
    a, _, b = head.partition("-")
    bye = int(tail.removeprefix("bye-")) if tail.startswith("bye-") else None
    return int(a), int(b), bye


@dataclass
class Series:
    """One series as stored: its matches (by game), total scores and state."""

    round: int
    key: str
    a: int
    b: int
    bye: int | None = None
    matches: dict[int, dict] = field(default_factory=dict)  # match id -> row
    score_a: float = 0.0
    score_b: float = 0.0
    bots: tuple[int, ...] = ()  # every bot (a table's all; else (a, b))
    totals: dict[int, float] = field(default_factory=dict)  # total score per bot

    @property
    def pending(self) -> bool:
        return any(m["status"] in PENDING for m in self.matches.values())

    @property
    def blocked(self) -> bool:
        """An errored match waits for an organiser (requeue or cancel)."""
        return any(m["status"] == MatchStatus.ERRORED for m in self.matches.values())

    @property
    def complete(self) -> bool:
        return not self.pending and not self.blocked

    @property
    def has_result(self) -> bool:
        """At least one game ended with a result (a fully cancelled series has none)."""
        return any(m["status"] in MatchStatus.with_result() for m in self.matches.values())

    @property
    def finished_at(self) -> datetime | None:
        times = [m["finished"] for m in self.matches.values() if m["finished"] is not None]
        return max(times) if times else None

    def result(self) -> SeriesResult:
        pa, pb = pairing.series_points(self.score_a, self.score_b)
        return SeriesResult(self.a, self.b, pa, pb)


def load_series(event: Event, only: Q | None = None) -> list[Series]:
    """Every series of ``event`` (or those ``only`` selects), in one query."""
    rows = Participant.objects.filter(match__event=event)
    if only is not None:
        rows = rows.filter(only)
    rows = rows.values_list(
        "match_id",
        "match__round",
        "match__pairing",
        "match__status",
        "match__finished",
        "match__game_in_series",
        "bot_id",
        "seat",
        "score",
    )
    found: dict[tuple[int, str], Series] = {}
    for match_id, rnd, key, status, finished, game_no, bot_id, seat, score in rows:
        try:
            a, b, bye = parse_series_key(key)
        except ValueError:
            logger.warning(
                "event %s: match %s has an unreadable pairing %r", event.pk, match_id, key
            )
            continue
        series = found.get((rnd or 0, key))
        if series is None:
            series = found[(rnd or 0, key)] = Series(
                rnd or 0, key, a, b, bye, bots=series_bots(key)
            )
        row = series.matches.setdefault(
            match_id,
            {
                "id": match_id,
                "status": status,
                "finished": finished,
                "game": game_no,
                "seats": {},
                "scores": {},
            },
        )
        row["seats"][seat] = bot_id
        row["scores"][bot_id] = score
        if status in MatchStatus.with_result() and score is not None:
            series.totals[bot_id] = series.totals.get(bot_id, 0.0) + score
            if bot_id == a:
                series.score_a += score
            elif bot_id == b:
                series.score_b += score
    return [found[k] for k in sorted(found)]


def public_series(event: Event) -> list[Series]:
    """The series as the public may see them while results are hidden: unrevealed games still to
    play; a series with no revealed game left out (its very pairing may tell a result)."""
    shown = load_series(event, Q(match__revealed_at__isnull=False))
    by_key = {(s.round, s.key): s for s in shown}
    for series in load_series(event, Q(match__revealed_at__isnull=True)):
        kept = by_key.get((series.round, series.key))
        if kept is None:
            continue
        for match_id, row in series.matches.items():
            scores = dict.fromkeys(row["scores"])
            kept.matches[match_id] = row | {"status": MatchStatus.QUEUED, "scores": scores}
            kept.matches[match_id]["finished"] = None
    return shown


def _results(series: list[Series]) -> list[SeriesResult]:
    """Finished series and byes, in order (what Swiss pairing and standings use)."""
    results = []
    for s in series:
        if s.complete and s.has_result:
            results.append(s.result())
        if s.bye is not None:
            results.append(pairing.bye(s.bye))
    return results
