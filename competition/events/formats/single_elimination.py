"""Single elimination: seeded by rating, byes to the top seeds, played round by round. A level
series is settled by the event's tie policy (``Event.tie_decider``): decider games, one at a time
with seats swapped, the first won deciding, and the higher seed only when ``decider_games`` of
them are all drawn (or at once, by the organiser's choice): ``pairing.series_decision``, and
``tie_reason`` says which in words. An entry whose bot is inactive when due withdraws and its
opponent advances by walkover."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace

from competition.events import pairing, scheduling
from competition.events.formats.base import Format
from competition.events.series import Series, load_series, public_series
from competition.events.standings import Recomputed
from competition.models import Entry, Event, EventFormat, MatchStatus, TieDecider

logger = logging.getLogger(__name__)


@dataclass
class EliminationState:
    seeds: list[int]
    rounds: list[list[pairing.Slot]]
    series: dict[tuple[int, int], Series]  # (round, index) -> its series
    walkovers: set[tuple[int, int]]
    #: (round, index) -> how its finished series stands (``pairing.series_decision``)
    decisions: dict[tuple[int, int], pairing.Decision] = field(default_factory=dict)

    @property
    def deciders(self) -> list[tuple[tuple[int, int], int]]:
        """The level series that play a decider game now: ((round, index), its game number)."""
        return [(w, d.decider) for w, d in self.decisions.items() if d.decider is not None]


def deciders_allowed(event: Event) -> int:
    """The decider games a level series of ``event`` may play (0: the higher seed at once)."""
    if event.tie_decider != TieDecider.GAMES:
        return 0
    return max(1, event.decider_games)


def decision(event: Event, found: Series, seed_of: dict[int, int]) -> pairing.Decision:
    """How the finished series ``found`` stands by the event's tie policy."""
    games = []
    for m in found.matches.values():
        scores = m["scores"]
        has = m["status"] in MatchStatus.with_result()
        games.append(
            (m["game"], scores.get(found.a) if has else None, scores.get(found.b) if has else None)
        )
    length = max(1, event.series_length)
    return pairing.series_decision(
        found.a, found.b, games, length, deciders_allowed(event), seed_of
    )


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
    decisions: dict[tuple[int, int], pairing.Decision] = {}
    while True:
        rounds = pairing.advance(seeds, winners)
        changed = False
        for slot in (s for r in rounds for s in r if s.ready):
            where = (slot.round, slot.index)
            found = by_pair.get((slot.round, frozenset((slot.a, slot.b))))
            if found is not None:
                at[where] = found
                if found.complete and where not in decisions:
                    decisions[where] = decision(event, found, seed_of)
                    if decisions[where].winner is not None:
                        winners[where] = decisions[where].winner
                        changed = True
            elif slot.a in withdrawn or slot.b in withdrawn:
                if slot.a in withdrawn and slot.b not in withdrawn:
                    winners[where] = slot.b
                else:  # b withdrew, or both did: the higher seed (a) goes through
                    winners[where] = slot.a
                walkovers.add(where)
                changed = True
        if not changed:
            return EliminationState(seeds, rounds, at, walkovers, decisions)


def due_slots(state: EliminationState) -> list[pairing.Slot]:
    """The ready slots of the earliest unscheduled round, once earlier series are done."""
    ready = [
        s for r in state.rounds for s in r if s.ready and (s.round, s.index) not in state.series
    ]
    if not ready:
        return []
    rnd = min(s.round for s in ready)
    if any(
        not found.complete or state.decisions[(r, i)].winner is None
        for (r, i), found in state.series.items()
        if r < rnd
    ):
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


def knocked_out(state: EliminationState) -> set[int]:
    """The entrants who lost a series (the champion and the bots still in are not)."""
    return {
        slot.b if slot.winner == slot.a else slot.a
        for r in state.rounds
        for slot in r
        if slot.winner is not None and slot.a is not None and slot.b is not None
    }


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


def score_text(left: float, right: float) -> str:
    return f"{left:g}\u2013{right:g}"


def drawn_text(count: int) -> str:
    """ "1 drawn decider", "2 drawn deciders"."""
    return f"{count} drawn decider{'s' if count != 1 else ''}"


def tie_reason(slot: dict, decided: pairing.Decision | None = None) -> str:
    """Why a bracket slot went the way it did, in words ("" until decided); ``decided``: how
    its series stands (``pairing.series_decision``), the scores in the slot's side order."""
    winner, a, b = slot["winner"], slot["a"], slot["b"]
    if slot["bye"]:
        return "a bye"
    if winner is None:
        if decided is not None and decided.decider is not None:
            left, right = decided.series
            done = f" after {drawn_text(decided.drawn_deciders)}" if decided.drawn_deciders else ""
            return f"level {score_text(left, right)}{done}: a decider game is being played"
        return ""
    won, lost = (a, b) if a and winner == a["bot"] else (b, a)
    if slot["walkover"] or not slot["series"] or decided is None:
        return f"{won['name']} by walkover"
    left, right = decided.series
    score = score_text(left, right)
    if decided.how == "decider":
        if decided.drawn_deciders:
            return (
                f"{won['name']} won decider {decided.drawn_deciders + 1} after {score} and "
                f"{drawn_text(decided.drawn_deciders)}"
            )
        return f"{won['name']} won the decider after {score}"
    if decided.how == "seed":
        drawn = f" and {drawn_text(decided.drawn_deciders)}" if decided.drawn_deciders else ""
        return (
            f"{won['name']} won on seed after {score}{drawn}: seed {won['seed']} over "
            f"{lost['name']}, seed {lost['seed']}"
        )
    return f"{won['name']} won {score}"


def tie_policy(event: Event) -> str:
    """The event's tie policy in words (the admin's choice: the event page, the API, the wall)."""
    n = max(1, event.series_length)
    games = f"a series of {n} games, seats swapped between games" if n > 1 else "one game"
    won = f"Each pairing plays {games}, won by more total score."
    seed = "the higher seed (the smaller seed number; seeds follow ratings at the start)"
    k = deciders_allowed(event)
    if not k:
        return f"{won} A level series goes to {seed} at once, with no decider."
    if k == 1:
        return (
            f"{won} A level series plays one decider game; if it is drawn too, {seed} goes through."
        )
    return (
        f"{won} A level series plays decider games, seats swapped, one at a time until one is "
        f"won, at most {k}; if all {k} are drawn, {seed} goes through."
    )


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
        if state.deciders:  # a level series plays its next decider game at once
            created = 0
            for (rnd, _index), game in state.deciders:
                found = state.series[(rnd, _index)]
                a, b = by_bot[found.a].bot, by_bot[found.b].bot
                created += scheduling.create_decider(event, rnd, found.key, a, b, game)
            return created
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

    order_text = (
        "Ordered by the round reached, then the better seed; the bots out in one round share "
        "a place (the quarter-finals' losers are joint 5th)."
    )

    def rank_keys(self, rows: dict[int, dict], source: Recomputed | None) -> dict[int, tuple]:
        """The round reached (added to the rows), then the better seed."""
        loaded = load_series(self.event) if source is None else public_series(self.event)
        state = elimination_state(self.event, scheduling.entries(self.event), loaded)
        found = reached(state) if state else {}
        gone = knocked_out(state) if state else set()
        for bot_id, row in rows.items():
            row["reached"] = found.get(bot_id, 0)
        return {
            b: (r["reached"], int(b not in gone), -(r["seed"] or math.inf)) for b, r in rows.items()
        }

    def place_keys(self, keys: dict[int, tuple]) -> dict[int, tuple]:
        """The round reached alone: the losers of one round share a place (the quarter-finals'
        are joint 5th); the seed orders them in the table, it places none above another. The
        bots still in have no place yet to share: each keeps its own (the seed's order)."""
        return {b: k if k[1] else k[:2] for b, k in keys.items()}

    def stage(self, rnd: int | None, entrants: int) -> str:
        if not rnd or entrants < 2:
            return super().stage(rnd, entrants)
        total = pairing.bracket_size(entrants).bit_length() - 1
        return pairing.round_name(rnd, total)

    def tie_notes(self, bracket: dict | None = None) -> list[dict]:
        """The slots decided on seed, from ``bracket`` (``bracket``'s view; read if None)."""
        view = bracket if bracket is not None else self.bracket(load_series(self.event))
        if view is None:
            return []
        return [
            {
                "round": rnd["name"],
                "text": f"{rnd['name']}: {slot['why']}",
                "bots": [slot["a"]["bot"], slot["b"]["bot"]],
            }
            for rnd in view["rounds"]
            for slot in rnd["slots"]
            if slot.get("decided_by") == "seed"
        ]

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
            "tie_break": tie_policy(event),
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
        where = (slot.round, slot.index)
        found = state.series.get(where)
        decided = state.decisions.get(where)
        if decided is not None and found is not None and slot.a != found.a:
            decided = replace(decided, series=decided.series[::-1])  # the slot's side order
        view = {
            "index": slot.index,
            "a": side(slot.a),
            "b": side(slot.b),
            "winner": slot.winner,
            "bye": slot.bye,
            "walkover": (slot.round, slot.index) in state.walkovers,
            "series": None if found is None else bracket_series(found, slot),
            # how its series went: "series", "decider", "seed" ("" until decided, or a walkover)
            "decided_by": decided.how if decided is not None else "",
        }
        view["why"] = tie_reason(view, decided)
        return view
