"""The continuous ladder: pairs free bots of close rating as series finish, the longest-waiting
first, at most ``MAX_CONCURRENT_PER_BOT`` series per bot; it runs until stopped, or finishes after
``event.rounds`` series per bot. Ranked by rating ordinal (an unrated showcase by points)."""

from __future__ import annotations

from competition.events import pairing, scheduling
from competition.events import standings as stored
from competition.events.formats.base import Format
from competition.events.pairing import LadderEntry
from competition.events.standings import Recomputed
from competition.models import EventFormat
from competition.ratings import services as ratings

MAX_CONCURRENT_PER_BOT = 1


class ContinuousLadder(Format):
    key = EventFormat.LADDER
    late_entries = True
    ranks_by_rating = True
    order_text = (
        "Ordered by rating (the ordinal \u03bc \u2212 3\u03c3), then points (Pts), then games won (W), then "
        "the points between the tied bots, then name."
    )
    waits_for_bots = True

    def advance(self) -> int:
        """Pairs from the stored standings, so the cost does not grow with the ladder's history."""
        event = self.event
        entries = scheduling.entries(event)
        limit = event.rounds or None
        kept = stored.rows(event)
        played = {b: r.played for b, r in kept.items()}
        busy = {b: r.busy for b, r in kept.items()}
        last = {b: r.last_played.timestamp() for b, r in kept.items() if r.last_played}
        last_opponent = {b: (r.last_round, r.last_opponent_id) for b, r in kept.items()}
        rated = ratings.for_bots(e.bot_id for e in entries)
        candidates = [
            LadderEntry(
                e.bot_id,
                rated[e.bot_id]["mu"],
                played.get(e.bot_id, 0),
                last.get(e.bot_id),
                busy.get(e.bot_id, 0),
                last_opponent.get(e.bot_id, (0, None))[1],
            )
            for e in entries
            if scheduling.eligible(e) and (limit is None or played.get(e.bot_id, 0) < limit)
        ]
        running = any(busy.values())
        pairs = pairing.ladder_pairs(candidates, MAX_CONCURRENT_PER_BOT, running=running)
        if not pairs:
            if limit is not None and not running:
                scheduling.finish(event)
            return 0
        rnd = max((r.last_round for r in kept.values()), default=0) + 1
        bots = {e.bot_id: e.bot for e in entries}
        return sum(scheduling.create_series(event, rnd, bots[a], bots[b]) for a, b in pairs)

    def round_text(self, current: int, total: int | None) -> str:
        """Rounds here are pairing waves, not for people: say how many series each bot plays."""
        if self.event.rounds:
            return f"up to {self.event.rounds} series per bot"
        return "pairs bots as they come free (continuous)"

    def rank_keys(self, rows: dict[int, dict], source: Recomputed | None) -> dict[int, tuple]:
        """Rating ordinal, series points, games won; an unrated showcase by its points."""
        if self.event.showcase:
            return super().rank_keys(rows, source)
        return {b: (r["rating"]["ordinal"], r["points"], r["wins"]) for b, r in rows.items()}
