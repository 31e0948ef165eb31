"""Stored standings, kept up to date as matches change, so a read costs the same whatever the
event's history: a changed series is rebuilt and its ``contribution``'s difference added."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import F, IntegerField, Max, Q, Value
from django.db.models.functions import Coalesce

from competition.events import pairing
from competition.events.series import series_bots
from competition.models import (
    Event,
    EventSeries,
    EventStanding,
    EventTally,
    HeadToHead,
    MatchStatus,
    SeriesState,
)
from competition.plumbing.prepared import Prepared

#: additive per-bot fields of ``EventStanding``
SUMS = ("points", "score", "wins", "draws", "losses", "games", "series", "byes", "played", "busy")
#: what ``recompute`` and ``check`` compare, per bot
COMPARED = (*SUMS, "last_played", "last_round", "last_opponent")


def two_sided_points(series) -> dict[int, float]:
    """Series points of a two-bot series: more total score wins 1, equal totals ½ each."""
    pa, pb = pairing.series_points(series.score_a, series.score_b)
    return {series.a: pa, series.b: pb}


def table_points(series) -> dict[int, float]:
    """Series points of a free-for-all table: by rank of total score (``rank_points``)."""
    return pairing.rank_points({b: series.totals.get(b, 0.0) for b in series.bots})


def is_table(key: str) -> bool:
    return key.startswith("t")


def series_points(series) -> dict[int, float]:
    """Points of a complete series per bot: a table's by rank, a pair's by total score (the key
    tells which)."""
    return table_points(series) if is_table(series.key) else two_sided_points(series)


def opponents(bots: tuple[int, ...]) -> list[tuple[int, int]]:
    """(bot, its "last opponent"): the other bot of a pair, the next seat at a table."""
    return [(b, bots[(i + 1) % len(bots)]) for i, b in enumerate(bots)]


@dataclass
class State:
    """A series as its matches make it (what ``EventSeries`` stores)."""

    round: int
    key: str
    a: int
    b: int
    bye: int | None
    state: str = SeriesState.PENDING
    has_result: bool = False
    score_a: float = 0.0
    score_b: float = 0.0
    points: dict[int, float] = field(default_factory=dict)
    finished: datetime | None = None
    tally: dict[str, list] = field(default_factory=dict)
    matches: int = 0
    done: int = 0
    bots: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.bots:
            self.bots = series_bots(self.key)

    @classmethod
    def of_row(cls, row: EventSeries) -> State:
        complete = row.state == SeriesState.COMPLETE and row.has_result
        points = {row.a_id: row.points_a, row.b_id: row.points_b} if complete else {}
        if complete and is_table(row.key):
            points = {int(b): p for b, p in row.points.items()}
        return cls(
            row.round,
            row.key,
            row.a_id,
            row.b_id,
            row.bye_id,
            row.state,
            row.has_result,
            row.score_a,
            row.score_b,
            points,
            row.finished,
            row.tally,
            row.matches,
            row.done,
        )


def _state(event: Event, series) -> State:
    """The ``State`` of an ``events.Series`` (its matches loaded)."""
    matches = series.matches.values()
    tally: dict[str, list] = {}
    for m in matches:
        if m["status"] not in MatchStatus.with_result():
            continue
        scores = m["scores"]
        known = [v for v in scores.values() if v is not None]
        best = max(known) if known else None
        tied = sum(1 for v in scores.values() if v == best)
        for bot_id, score in scores.items():
            if score is None:
                continue
            row = tally.setdefault(str(bot_id), [0, 0.0, 0, 0, 0])
            row[0] += 1
            row[1] += score
            row[2 if score == best and tied == 1 else 3 if score == best else 4] += 1
    state = (
        SeriesState.PENDING
        if series.pending
        else SeriesState.BLOCKED
        if series.blocked
        else SeriesState.COMPLETE
    )
    points = {}
    if state == SeriesState.COMPLETE and series.has_result:
        points = series_points(series)
    return State(
        series.round,
        series.key,
        series.a,
        series.b,
        series.bye,
        state,
        series.has_result,
        series.score_a,
        series.score_b,
        points,
        None if series.pending else series.finished_at,
        tally,
        len(series.matches),
        sum(1 for m in matches if m["status"] in MatchStatus.done()),
        series.bots,
    )


def contribution(s: State) -> tuple[dict[int, dict[str, float]], dict[tuple[int, int], float]]:
    """(per bot: additive fields, per (bot, opponent): head-to-head points) of a series."""
    per: dict[int, dict[str, float]] = {}

    def add(bot: int, name: str, value: float) -> None:
        if value:
            mine = per.setdefault(bot, {})
            mine[name] = mine.get(name, 0) + value

    for bot in s.bots:
        add(bot, "played", 1)
        add(bot, "busy", 1 if s.state == SeriesState.PENDING else 0)
    for bot, (games, score, wins, draws, losses) in s.tally.items():
        for name, value in zip(
            ("games", "score", "wins", "draws", "losses"),
            (games, score, wins, draws, losses),
            strict=True,
        ):
            add(int(bot), name, value)
    h2h: dict[tuple[int, int], float] = {}
    for bot, value in s.points.items():
        add(bot, "series", 1)
        add(bot, "points", value)
        if not is_table(s.key):
            other = s.b if bot == s.a else s.a
            h2h[(bot, other)] = value
            continue
        for other in s.bots:
            if other != bot:
                theirs = s.points.get(other, 0.0)
                h2h[(bot, other)] = 1.0 if value > theirs else 0.5 if value == theirs else 0.0
    if s.bye is not None:
        add(s.bye, "byes", 1)
        add(s.bye, "points", 1.0)
    return per, h2h


def _row_fields(s: State) -> dict:
    return {
        "state": s.state,
        "has_result": s.has_result,
        "score_a": s.score_a,
        "score_b": s.score_b,
        "points_a": s.points.get(s.a, 0.0),
        "points_b": s.points.get(s.b, 0.0),
        "points": {str(b): p for b, p in s.points.items()} if is_table(s.key) else {},
        "finished": s.finished,
        "tally": s.tally,
        "matches": s.matches,
        "done": s.done,
    }


# -- keeping them -------------------------------------------------------------------------------


def _ensure(event_id: int, bots) -> None:
    EventStanding.objects.bulk_create(
        [EventStanding(event_id=event_id, bot_id=b) for b in bots], ignore_conflicts=True
    )


def _apply(event_id: int, before: State | None, after: State) -> None:
    """Add ``after``'s contribution minus ``before``'s to the stored sums."""
    new, new_h2h = contribution(after)
    old, old_h2h = contribution(before) if before else ({}, {})
    for bot in sorted(set(new) | set(old)):
        delta = {}
        for name in SUMS:
            d = new.get(bot, {}).get(name, 0) - old.get(bot, {}).get(name, 0)
            if d:
                delta[name] = F(name) + d
        if delta and not EventStanding.objects.filter(event_id=event_id, bot_id=bot).update(
            **delta
        ):
            _ensure(event_id, [bot])
            EventStanding.objects.filter(event_id=event_id, bot_id=bot).update(**delta)
    for pair in sorted(set(new_h2h) | set(old_h2h)):
        d = new_h2h.get(pair, 0.0) - old_h2h.get(pair, 0.0)
        if not d:
            continue
        bot, other = pair
        if not HeadToHead.objects.filter(event_id=event_id, bot_id=bot, opponent_id=other).update(
            points=F("points") + d
        ):
            HeadToHead.objects.create(event_id=event_id, bot_id=bot, opponent_id=other, points=d)
    _move_last_played(event_id, before, after)
    counts = {
        name: F(name) + (getattr(after, name) - (getattr(before, name) if before else 0))
        for name in ("matches", "done")
        if getattr(after, name) != (getattr(before, name) if before else 0)
    }
    if counts and not EventTally.objects.filter(event_id=event_id).update(**counts):
        EventTally.objects.bulk_create([EventTally(event_id=event_id)], ignore_conflicts=True)
        EventTally.objects.filter(event_id=event_id).update(**counts)


def _move_last_played(event_id: int, before: State | None, after: State) -> None:
    """Raise ``last_played`` in place; read it again on the rare fall (a requeue)."""
    old = before.finished if before else None
    new = after.finished
    if old == new:
        return
    for bot in after.bots:
        if new is not None:
            EventStanding.objects.filter(event_id=event_id, bot_id=bot).filter(
                Q(last_played__isnull=True) | Q(last_played__lt=new)
            ).update(last_played=new)
        if old is not None and (new is None or new < old):
            latest = EventSeries.objects.filter(
                Q(a_id=bot) | Q(b_id=bot), event_id=event_id
            ).aggregate(t=Max("finished"))["t"]
            for key, finished in EventSeries.objects.filter(
                event_id=event_id, key__startswith="t", finished__isnull=False
            ).values_list("key", "finished"):
                if bot in series_bots(key) and (latest is None or finished > latest):
                    latest = finished
            EventStanding.objects.filter(event_id=event_id, bot_id=bot, last_played=old).update(
                last_played=latest
            )


def series_created(
    event: Event, rnd: int, key: str, a: int, b: int, bye: int | None, games: int
) -> None:
    """Store and count a series just queued (all of a table's bots come from its key)."""
    state = State(rnd, key, a, b, bye, matches=games)
    EventSeries.objects.create(
        event_id=event.pk, round=rnd, key=key, a_id=a, b_id=b, bye_id=bye, **_row_fields(state)
    )
    _ensure(event.pk, [x for x in (*state.bots, bye) if x is not None])
    _apply(event.pk, None, state)
    for me, other in opponents(state.bots):
        EventStanding.objects.filter(event_id=event.pk, bot_id=me, last_round__lte=rnd).update(
            last_round=rnd, last_opponent_id=other
        )


def forget_series(event: Event, row: EventSeries) -> None:
    """Drop an ended series and its matches, subtracting its contribution from the sums."""
    before = State.of_row(row)
    old, old_h2h = contribution(before)
    for bot, values in old.items():
        delta = {name: F(name) - value for name, value in values.items() if value}
        EventStanding.objects.filter(event_id=event.pk, bot_id=bot).update(**delta)
    for (bot, other), value in old_h2h.items():
        HeadToHead.objects.filter(event_id=event.pk, bot_id=bot, opponent_id=other).update(
            points=F("points") - value
        )
    EventTally.objects.filter(event_id=event.pk).update(
        matches=F("matches") - before.matches, done=F("done") - before.done
    )
    row.delete()
    _move_last_played(event.pk, before, State(row.round, row.key, row.a_id, row.b_id, None))


def _load_one(event: Event, rnd: int, key: str):
    from competition.events.series import load_series

    found = load_series(event, Q(match__round=rnd, match__pairing=key))
    return found[0] if found else None


def sync_series(event: Event, rnd: int | None, key: str) -> None:
    """One series' matches changed: store its new state and move the sums by the difference."""
    loaded = _load_one(event, rnd or 0, key)
    row = EventSeries.objects.filter(event_id=event.pk, round=rnd or 0, key=key).first()
    if loaded is None:
        return
    after = _state(event, loaded)
    if row is None:  # scheduled before stored standings existed: count it from nothing
        series_created(event, after.round, key, after.a, after.b, after.bye, after.matches)
        row = EventSeries.objects.get(event_id=event.pk, round=after.round, key=key)
    before = State.of_row(row)
    if _row_fields(before) == _row_fields(after):
        return
    EventSeries.objects.filter(pk=row.pk).update(**_row_fields(after))
    _apply(event.pk, before, after)


def sync_open(event: Event) -> int:
    """Sync every series of ``event`` that is not complete; returns how many."""
    open_series = list(
        EventSeries.objects.filter(event_id=event.pk)
        .exclude(state=SeriesState.COMPLETE)
        .values_list("round", "key")
    )
    for rnd, key in open_series:
        sync_series(event, rnd, key)
    return len(open_series)


def sync_match(match) -> None:
    """Sync a changed match's series under the event's lock, in the caller's transaction."""
    if match.event_id:
        event = Event.objects.select_for_update().get(pk=match.event_id)
        sync_series(event, match.round, match.pairing)


def refresh_statistics() -> None:
    """SQLite: refresh the planner's statistics cheaply (a bounded ``ANALYZE``) so it keeps
    choosing the history indexes; PostgreSQL's autovacuum does it."""
    from django.db import connection

    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA analysis_limit=1000")
        cursor.execute("ANALYZE")
        cursor.execute("PRAGMA optimize")


# -- reading them ------------------------------------------------------------------------------


def rows(event: Event) -> dict[int, EventStanding]:
    return {s.bot_id: s for s in EventStanding.objects.filter(event_id=event.pk)}


_SUMS = Prepared(
    lambda event: EventStanding.objects.filter(event_id=event).values_list("bot_id", *SUMS)
)


def sums(event: Event) -> dict[int, dict]:
    """The stored sums of ``event`` by bot, as plain dicts (``SUMS``)."""
    return {row[0]: dict(zip(SUMS, row[1:], strict=True)) for row in _SUMS(event.pk)}


def event_counts(total: str = "matches_total", done: str = "matches_done") -> dict:
    """Annotations of events: their matches (``total``) and those ended (``done``)."""
    return {
        total: Coalesce("tally__matches", Value(0), output_field=IntegerField()),
        done: Coalesce("tally__done", Value(0), output_field=IntegerField()),
    }


_H2H = Prepared(
    lambda event, bots: HeadToHead.objects.filter(
        event_id=event, bot_id__in=bots, opponent_id__in=bots
    ).values_list("bot_id", "opponent_id", "points")
)


def head_to_head_results(event: Event, bots) -> list[pairing.SeriesResult]:
    """Head-to-head points among ``bots`` as results ``pairing.rank`` reads."""
    bots = list(bots)
    if len(bots) < 2:
        return []
    return [
        pairing.SeriesResult(bot, other, points, 0.0) for bot, other, points in _H2H(event.pk, bots)
    ]


def series_results(event: Event) -> list[pairing.SeriesResult]:
    """Complete series with a result and byes, in (round, key) order, from the stored rows."""
    results = []
    for a, b, bye, state, has_result, pa, pb in EventSeries.objects.filter(
        event_id=event.pk
    ).values_list("a_id", "b_id", "bye_id", "state", "has_result", "points_a", "points_b"):
        if state == SeriesState.COMPLETE and has_result:
            results.append(pairing.SeriesResult(a, b, pa, pb))
        if bye is not None:
            results.append(pairing.bye(bye))
    return results


# -- recomputing them --------------------------------------------------------------------------


@dataclass
class Recomputed:
    series: dict[tuple[int, str], dict]
    standings: dict[int, dict]
    h2h: dict[tuple[int, int], float]
    counts: tuple[int, int] = (0, 0)  # (matches, done)


def recompute(event: Event, loaded_series=None) -> Recomputed:
    """Everything stored, rebuilt from the event's matches alone, or from ``loaded_series`` (the
    public standings while results are hidden)."""
    from competition.events.series import load_series

    series: dict[tuple[int, str], dict] = {}
    sums: dict[int, dict] = {}
    h2h: dict[tuple[int, int], float] = {}
    for loaded in load_series(event) if loaded_series is None else loaded_series:
        s = _state(event, loaded)
        series[(s.round, s.key)] = {"a": s.a, "b": s.b, "bye": s.bye, **_row_fields(s)}
        per, pairs = contribution(s)
        for bot in (x for x in (*s.bots, s.bye) if x is not None):
            sums.setdefault(
                bot,
                {
                    **dict.fromkeys(SUMS, 0),
                    "last_played": None,
                    "last_round": 0,
                    "last_opponent": None,
                },
            )
        for bot, values in per.items():
            for name, value in values.items():
                sums[bot][name] += value
        for pair, value in pairs.items():
            h2h[pair] = h2h.get(pair, 0.0) + value
        for me, other in opponents(s.bots):
            mine = sums[me]
            if s.round >= mine["last_round"]:
                mine["last_round"], mine["last_opponent"] = s.round, other
            if s.finished is not None and (
                mine["last_played"] is None or s.finished > mine["last_played"]
            ):
                mine["last_played"] = s.finished
    for values in sums.values():
        for name in ("points", "score"):
            values[name] = float(values[name])
    counts = (
        sum(v["matches"] for v in series.values()),
        sum(v["done"] for v in series.values()),
    )
    return Recomputed(series, sums, h2h, counts)


def stored(event: Event) -> Recomputed:
    """The stored rows in ``recompute``'s shape."""
    series = {
        (r.round, r.key): {
            "a": r.a_id,
            "b": r.b_id,
            "bye": r.bye_id,
            **_row_fields(State.of_row(r)),
        }
        for r in EventSeries.objects.filter(event_id=event.pk)
    }
    sums = {
        s.bot_id: {
            **{name: getattr(s, name) for name in SUMS},
            "last_played": s.last_played,
            "last_round": s.last_round,
            "last_opponent": s.last_opponent_id,
        }
        for s in EventStanding.objects.filter(event_id=event.pk)
    }
    h2h = {
        (b, o): p
        for b, o, p in HeadToHead.objects.filter(event_id=event.pk).values_list(
            "bot_id", "opponent_id", "points"
        )
    }
    tally = EventTally.objects.filter(event_id=event.pk).first()
    counts = (tally.matches, tally.done) if tally else (0, 0)
    return Recomputed(series, sums, h2h, counts)


def _close(x, y) -> bool:
    if isinstance(x, float) or isinstance(y, float):
        return x is not None and y is not None and abs(x - y) < 1e-9
    return x == y


def differences(event: Event) -> list[str]:
    """How the stored rows differ from the recomputed ones (empty: identical)."""
    want, have = recompute(event), stored(event)
    out = []
    for key in sorted(set(want.series) | set(have.series)):
        w, h = want.series.get(key), have.series.get(key)
        if w is None or h is None:
            out.append(f"series {key}: stored {h}, recomputed {w}")
            continue
        for name in w:
            if name == "tally":
                same = {k: v for k, v in w[name].items()} == {
                    k: list(v) for k, v in h[name].items()
                }
            else:
                same = _close(w[name], h[name])
            if not same:
                out.append(f"series {key} {name}: stored {h[name]!r}, recomputed {w[name]!r}")
    zero = {**dict.fromkeys(SUMS, 0), "last_played": None, "last_round": 0, "last_opponent": None}
    for bot in sorted(set(want.standings) | set(have.standings)):
        w, h = want.standings.get(bot, zero), have.standings.get(bot, zero)
        for name in COMPARED:
            if not _close(w[name], h[name]) and not (w[name] == 0 and h[name] == 0):
                out.append(f"bot {bot} {name}: stored {h[name]!r}, recomputed {w[name]!r}")
    for pair in sorted(set(want.h2h) | set(have.h2h)):
        w, h = want.h2h.get(pair, 0.0), have.h2h.get(pair, 0.0)
        if abs(w - h) > 1e-9:
            out.append(f"head-to-head {pair}: stored {h!r}, recomputed {w!r}")
    if want.counts != have.counts:
        out.append(f"(matches, done): stored {have.counts}, recomputed {want.counts}")
    return out


def rebuild(event: Event) -> None:
    """Replace the stored rows of ``event`` with the recomputed ones."""
    got = recompute(event)
    EventSeries.objects.filter(event_id=event.pk).delete()
    EventStanding.objects.filter(event_id=event.pk).delete()
    HeadToHead.objects.filter(event_id=event.pk).delete()
    EventTally.objects.update_or_create(
        event_id=event.pk, defaults={"matches": got.counts[0], "done": got.counts[1]}
    )
    EventSeries.objects.bulk_create(
        [
            EventSeries(
                event_id=event.pk,
                round=rnd,
                key=key,
                a_id=v["a"],
                b_id=v["b"],
                bye_id=v["bye"],
                **{k: x for k, x in v.items() if k not in ("a", "b", "bye")},
            )
            for (rnd, key), v in got.series.items()
        ],
        batch_size=500,
    )
    EventStanding.objects.bulk_create(
        [
            EventStanding(
                event_id=event.pk,
                bot_id=bot,
                **{k: x for k, x in v.items() if k != "last_opponent"},
                last_opponent_id=v["last_opponent"],
            )
            for bot, v in got.standings.items()
        ],
        batch_size=500,
    )
    HeadToHead.objects.bulk_create(
        [
            HeadToHead(event_id=event.pk, bot_id=b, opponent_id=o, points=p)
            for (b, o), p in got.h2h.items()
        ],
        batch_size=500,
    )
