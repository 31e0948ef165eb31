"""Single elimination: seeded by rating, byes to the top seeds, played round by round. A drawn
series goes by ``pairing.SERIES_TIE_BREAK``; an entry whose bot is inactive when due withdraws
and its opponent advances by walkover."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from competition.events import pairing, scheduling
from competition.events.formats.base import Format
from competition.events.pairing import SERIES_TIE_BREAK
from competition.events.series import Series, load_series, public_series
from competition.events.standings import Recomputed
from competition.models import Entry, Event, EventFormat, MatchStatus

logger = logging.getLogger(__name__)


@dataclass
class EliminationState:
    seeds: list[int]
    rounds: list[list[pairing.Slot]]
    series: dict[tuple[int, int], Series]  # (round, index) -> its series
    walkovers: set[tuple[int, int]]


def elimination_state(
    event: Event, entries: list[Entry], series: list[Series]
) -> EliminationState | None:
    """The bracket as the stored series (and withdrawals) decide it; None before seeding."""
    entrants = scheduling.entrants(entries)
    if len(entrants) < 2:
        return None
    seeds = [e.bot_id for e in entrants]
    seed_of = {e.bot_id: e.seed for e in entrants}
    withdrawn = {e.bot_id for e in entrants if not e.active}
    by_pair = {(s.round, frozenset((s.a, s.b))): s for s in series}
    winners: dict[tuple[int, int], int] = {}
    at: dict[tuple[int, int], Series] = {}
    walkovers: set[tuple[int, int]] = set()
    while True:
        rounds = pairing.advance(seeds, winners)
        changed = False
        for slot in (s for r in rounds for s in r if s.ready):
            where = (slot.round, slot.index)
            found = by_pair.get((slot.round, frozenset((slot.a, slot.b))))
            if found is not None:
                at[where] = found
                if found.complete:
                    winners[where] = pairing.elimination_winner(
                        found.a, found.b, found.score_a, found.score_b, seed_of
                    )
                    changed = True
            elif slot.a in withdrawn or slot.b in withdrawn:
                if slot.a in withdrawn and slot.b not in withdrawn:
                    winners[where] = slot.b
                else:  # b withdrew, or both did: the higher seed (a) goes through
                    winners[where] = slot.a
                walkovers.add(where)
                changed = True
        if not changed:
            return EliminationState(seeds, rounds, at, walkovers)


def due_slots(state: EliminationState) -> list[pairing.Slot]:
    """The ready slots of the earliest unscheduled round, once earlier series are done."""
    ready = [
        s for r in state.rounds for s in r if s.ready and (s.round, s.index) not in state.series
    ]
    if not ready:
        return []
    rnd = min(s.round for s in ready)
    if any(not found.complete for (r, _i), found in state.series.items() if r < rnd):
        return []
    return [s for s in ready if s.round == rnd]


def reached(state: EliminationState) -> dict[int, int]:
    """The round each entrant reached (the champion one more than the final)."""
    found: dict[int, int] = {}
    for r in state.rounds:
        for slot in r:
            for side in (slot.a, slot.b):
                if side is not None:
                    found[side] = max(found.get(side, 0), slot.round)
    winner = pairing.champion(state.rounds)
    if winner is not None:
        found[winner] = len(state.rounds) + 1
    return found


def bracket_series(found: Series, slot) -> dict:
    """A bracket slot's ``series``, its score in the slot's side order."""
    statuses = [m["status"] for m in found.matches.values()]
    status = (
        "errored"
        if found.blocked
        else "running"
        if MatchStatus.RUNNING in statuses
        else "queued"
        if found.pending
        else "finished"
    )
    flipped = slot.a != found.a
    score = [found.score_b, found.score_a] if flipped else [found.score_a, found.score_b]
    return {
        "key": found.key,
        "score": score,
        "status": status,
        "matches": [
            {"id": m["id"], "game": m["game"], "status": m["status"]}
            for m in sorted(found.matches.values(), key=lambda m: m["game"])
        ],
    }


def tie_reason(slot: dict) -> str:
    """Why a bracket slot went the way it did, in words ("" until decided)."""
    winner, a, b = slot["winner"], slot["a"], slot["b"]
    if slot["bye"]:
        return "a bye"
    if winner is None:
        return ""
    won, lost = (a, b) if a and winner == a["bot"] else (b, a)
    if slot["walkover"] or not slot["series"]:
        return f"{won['name']} by walkover"
    left, right = slot["series"]["score"]
    score = f"{left:g}\u2013{right:g}"
    if left == right:
        return (
            f"drawn {score}: decided on seed, {won['name']} (seed {won['seed']}) over "
            f"{lost['name']} (seed {lost['seed']})"
        )
    return f"{won['name']} won {score}"


class SingleElimination(Format):
    key = EventFormat.SINGLE_ELIMINATION
    seeded = True
    has_bracket = True

    def advance(self) -> int:
        event = self.event
        series = load_series(event)
        entries = scheduling.entries(event)
        by_bot = {e.bot_id: e for e in entries}
        while True:
            state = elimination_state(event, entries, series)
            if state is None:
                scheduling.finish(event)
                return 0
            due = due_slots(state)
            unable = [
                by_bot[x]
                for s in due
                for x in (s.a, s.b)
                if by_bot[x].active and not scheduling.eligible(by_bot[x])
            ]
            if not unable:
                break
            for entry in unable:  # withdraw: its opponent advances by walkover
                entry.active = False
                entry.save(update_fields=["active"])
                logger.info(
                    "event %s: %s withdraws (bot %s)", event.pk, entry.bot, entry.bot.status
                )
        if pairing.champion(state.rounds) is not None:
            scheduling.finish(event)
            return 0
        if due and not self.round_due(due[0].round - 1):
            return 0
        created = 0
        for slot in due:
            a, b = by_bot[slot.a].bot, by_bot[slot.b].bot
            created += scheduling.create_series(event, slot.round, a, b)
        return created

    order_text = "Ordered by the round reached, then the better seed."

    def rank_keys(self, rows: dict[int, dict], source: Recomputed | None) -> dict[int, tuple]:
        """The round reached (added to the rows), then the better seed."""
        loaded = load_series(self.event) if source is None else public_series(self.event)
        state = elimination_state(self.event, scheduling.entries(self.event), loaded)
        found = reached(state) if state else {}
        for bot_id, row in rows.items():
            row["reached"] = found.get(bot_id, 0)
        return {b: (r["reached"], -(r["seed"] or math.inf)) for b, r in rows.items()}

    def total_rounds(self, entrants: int, bracket: dict | None) -> int | None:
        return len(bracket["rounds"]) if bracket is not None else None

    def bracket(self, series: list[Series]) -> dict | None:
        """The bracket as JSON (shape: ``BracketSerializer``); ``why`` says how a slot went."""
        event = self.event
        entries = scheduling.entries(event)
        by_bot = {e.bot_id: e for e in entries}
        state = elimination_state(event, entries, series)
        view = {
            "event": event.pk,
            "status": event.status,
            "size": 0,
            "tie_break": SERIES_TIE_BREAK,
            "champion": None,
            "rounds": [],
        }
        if state is None:
            return view

        def side(bot_id):
            if bot_id is None:
                return None
            e = by_bot[bot_id]
            return {"bot": bot_id, "name": e.bot.name, "seed": e.seed, "active": e.active}

        total = len(state.rounds)
        view["size"] = 2**total
        view["champion"] = side(pairing.champion(state.rounds))
        for r in state.rounds:
            view["rounds"].append(
                {
                    "round": r[0].round,
                    "name": pairing.round_name(r[0].round, total),
                    "slots": [self._slot(state, slot, side) for slot in r],
                }
            )
        return view

    @staticmethod
    def _slot(state: EliminationState, slot: pairing.Slot, side) -> dict:
        found = state.series.get((slot.round, slot.index))
        view = {
            "index": slot.index,
            "a": side(slot.a),
            "b": side(slot.b),
            "winner": slot.winner,
            "bye": slot.bye,
            "walkover": (slot.round, slot.index) in state.walkovers,
            "series": None if found is None else bracket_series(found, slot),
        }
        view["why"] = tie_reason(view)
        return view
