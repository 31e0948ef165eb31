"""Swiss: ``event.rounds`` rounds (default ⌈log2 n⌉), each once the last is done. A paused
entrant sits a round out and comes back when resumed; a bye is a series won, recorded in the
key of the round's first series (``"A-B/bye-C"``) so no extra table is needed. Ranked by
points, Buchholz, games won."""

from __future__ import annotations

import logging

from competition.events import pairing, scheduling
from competition.events import standings as stored
from competition.events.formats.base import Format
from competition.events.series import _results, load_series
from competition.events.standings import Recomputed
from competition.models import Event, EventFormat, EventSeries, SeriesState

logger = logging.getLogger(__name__)


def total_rounds(event: Event, entrants: int) -> int:
    return event.rounds or pairing.swiss_rounds(entrants)


def public_series_results(source: Recomputed) -> list[pairing.SeriesResult]:
    """``stored.series_results`` from rebuilt series (``services.public_source``)."""
    results = []
    for row in source.series.values():
        if row["state"] == SeriesState.COMPLETE and row["has_result"]:
            results.append(
                pairing.SeriesResult(row["a"], row["b"], row["points_a"], row["points_b"])
            )
        if row["bye"] is not None:
            results.append(pairing.bye(row["bye"]))
    return results


def rounds(event: Event, names: dict[int, str], series=None) -> list[dict]:
    """A Swiss event's rounds, each series with its score, from the stored or public ``series``."""
    if series is None:
        rows = [
            {"round": s.round, "a": s.a_id, "b": s.b_id, "bye": s.bye_id}
            | {"score_a": s.score_a, "score_b": s.score_b, "state": s.state}
            | {"has_result": s.has_result}
            for s in EventSeries.objects.filter(event=event).order_by("round", "key")
        ]
    else:
        rows = [{"round": rnd} | row for (rnd, _key), row in sorted(series.items())]
    found: dict[int, list[dict]] = {}
    for s in rows:
        found.setdefault(s["round"], []).append(
            {
                "a": names.get(s["a"], "?"),
                "b": names.get(s["b"], "?"),
                "bye": names.get(s["bye"]) if s["bye"] else None,
                "score": (s["score_a"], s["score_b"]),
                "state": s["state"],
                "done": s["has_result"],
            }
        )
    return [{"round": r, "series": rows} for r, rows in found.items()]


class Swiss(Format):
    key = EventFormat.SWISS
    seeded = True
    waits_for_bots = True

    def advance(self) -> int:
        event = self.event
        series = load_series(event)
        entrants = scheduling.entrants(scheduling.entries(event))
        current = max((s.round for s in series), default=0)
        if any(not s.complete for s in series if s.round == current):
            return 0
        if current >= total_rounds(event, len(entrants)):
            scheduling.finish(event)
            return 0
        if not self.round_due(current):
            return 0
        players = [e for e in entrants if scheduling.eligible(e)]
        if len(players) < 2:
            logger.info(
                "event %s: fewer than two entries can play round %s; waiting",
                event.pk,
                current + 1,
            )
            return 0
        bots = {e.bot_id: e.bot for e in players}
        decided = pairing.swiss_round(list(bots), _results(series))
        if decided.rematches:
            logger.info(
                "event %s round %s: %s unavoidable rematch(es)",
                event.pk,
                current + 1,
                decided.rematches,
            )
        created = 0
        for i, (a, b) in enumerate(decided.pairs):
            bye = decided.bye if i == 0 else None
            created += scheduling.create_series(event, current + 1, bots[a], bots[b], bye)
        return created

    order_text = (
        "Ordered by points (Pts), then Buchholz (the sum of the opponents' points), then games "
        "won (W), then the points between the tied bots, then name."
    )

    def rank_keys(self, rows: dict[int, dict], source: Recomputed | None) -> dict[int, tuple]:
        """Series points, then Buchholz (added to the rows), then games won."""
        if source is None:
            results = stored.series_results(self.event)
        else:
            results = public_series_results(source)
        bh = pairing.buchholz(results)
        for bot_id, row in rows.items():
            row["buchholz"] = bh.get(bot_id, 0.0)
        return {b: (r["points"], r["buchholz"], r["wins"]) for b, r in rows.items()}

    def total_rounds(self, entrants: int, bracket: dict | None) -> int | None:
        return total_rounds(self.event, entrants)

    def page(self, names: dict[int, str], series: dict | None) -> dict:
        return {"swiss": rounds(self.event, names, series)}
