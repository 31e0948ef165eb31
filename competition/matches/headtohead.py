"""Two bots' history: ``record`` writes a finished match's meetings and adds them to the pair
totals when its result becomes public (the finish, or the reveal of a hidden one); ``totals``
and ``meetings`` read them, a few rows and one index range, whatever the history's length."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from competition.models import BotVersion, Match, Meeting, PairRecord, Participant, SeatResult

#: a seat's results (``SeatResult.values`` builds its list again at each use)
_RESULTS = frozenset(SeatResult.values)
#: one meeting: a seat's result against another bot's seat (``Meeting``)
_MEET = (
    f"INSERT INTO {Meeting._meta.db_table} (match_id, bot_id, opponent_id, seat, opponent_seat, "
    "version, opponent_version, result, rated, finished) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
#: the seats' totals added in one statement (SQLite and PostgreSQL both speak ON CONFLICT)
_ADD = (
    "INSERT INTO competition_pairrecord (bot_id, opponent_id, seat, version, opponent_version, "
    "wins, draws, losses) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (bot_id, opponent_id, seat, version, opponent_version) DO UPDATE SET "
    "wins = competition_pairrecord.wins + excluded.wins, "
    "draws = competition_pairrecord.draws + excluded.draws, "
    "losses = competition_pairrecord.losses + excluded.losses"
)

#: every public result's meetings, from the seats (``rebuild``; the migration's own copy)
REBUILD_MEETINGS = """
INSERT INTO competition_meeting (match_id, bot_id, opponent_id, seat, opponent_seat, version,
    opponent_version, result, rated, finished)
SELECT p.match_id, p.bot_id, o.bot_id, p.seat, o.seat, COALESCE(pv.number, 0),
    COALESCE(ov.number, 0), p.result, m.rated, m.finished
FROM competition_participant p
JOIN competition_participant o ON o.match_id = p.match_id AND o.bot_id <> p.bot_id
JOIN competition_match m ON m.id = p.match_id
LEFT JOIN bots_botversion pv ON pv.id = p.version_id
LEFT JOIN bots_botversion ov ON ov.id = o.version_id
WHERE m.status IN ('finished', 'forfeited') AND p.result IN ('win', 'draw', 'loss')
  AND NOT (m.revealed_at IS NULL
           AND m.event_id IN (SELECT id FROM competition_event WHERE hide_results))
"""

REBUILD_TOTALS = """
INSERT INTO competition_pairrecord (bot_id, opponent_id, seat, version, opponent_version,
    wins, draws, losses)
SELECT bot_id, opponent_id, seat, version, opponent_version,
    SUM(CASE WHEN result = 'win' THEN 1 ELSE 0 END),
    SUM(CASE WHEN result = 'draw' THEN 1 ELSE 0 END),
    SUM(CASE WHEN result = 'loss' THEN 1 ELSE 0 END)
FROM competition_meeting GROUP BY bot_id, opponent_id, seat, version, opponent_version
"""


def record(match: Match, participants: list[Participant]) -> int:
    """Inside the transaction that made ``match``'s result public: its meetings (each ordered
    pair of seats of two different bots) and their totals; the meetings written."""
    seats = [p for p in participants if p.result in _RESULTS]
    if len(seats) < 2:
        return 0
    version_ids = {p.version_id for p in seats if p.version_id}
    numbers = (
        dict(BotVersion.objects.filter(pk__in=version_ids).values_list("pk", "number"))
        if version_ids
        else {}
    )
    finished = connection.ops.adapt_datetimefield_value(match.finished)
    rows = [
        (
            match.pk,
            mine.bot_id,
            other.bot_id,
            mine.seat,
            other.seat,
            numbers.get(mine.version_id, 0),
            numbers.get(other.version_id, 0),
            mine.result,
            match.rated,
            finished,
        )
        for mine in seats
        for other in seats
        if other.bot_id != mine.bot_id
    ]
    if not rows:
        return 0
    with connection.cursor() as cursor:  # (a finish's statements: the ORM's objects cost more)
        cursor.executemany(_MEET, rows)
        cursor.executemany(_ADD, [_counts(row) for row in rows])
    return len(rows)


def _counts(row: tuple) -> list[int]:
    _match, bot, opponent, seat, _opponent_seat, version, opponent_version, result = row[:8]
    won, drew, lost = result == SeatResult.WIN, result == SeatResult.DRAW, result == SeatResult.LOSS
    return [bot, opponent, seat, version, opponent_version, int(won), int(drew), int(lost)]


def rebuild() -> None:
    """Both tables again from the seats (history inserted behind the services' back: the bench,
    the flatness tests; the migration fills them once the same way)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM competition_pairrecord")
        cursor.execute("DELETE FROM competition_meeting")
        cursor.execute(REBUILD_MEETINGS)
        cursor.execute(REBUILD_TOTALS)


@dataclass
class Tally:
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, row: PairRecord) -> None:
        self.wins += row.wins
        self.draws += row.draws
        self.losses += row.losses

    def as_json(self) -> dict:
        return {"games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses}


@dataclass
class Totals:
    """``bot``'s record against ``opponent``: overall, by its seat, by version pair (each
    ``Tally`` counted from ``bot``'s side: its wins are the opponent's losses)."""

    overall: Tally
    by_seat: dict[int, Tally]
    by_versions: dict[tuple[int, int], Tally]


def totals(bot_id: int, opponent_id: int) -> Totals:
    """One read of the pair's few total rows (seats times version pairs)."""
    out = Totals(Tally(), {}, {})
    for row in PairRecord.objects.filter(bot_id=bot_id, opponent_id=opponent_id).order_by():
        out.overall.add(row)
        out.by_seat.setdefault(row.seat, Tally()).add(row)
        out.by_versions.setdefault((row.version, row.opponent_version), Tally()).add(row)
    return out


def meetings(
    bot_id: int, opponent_id: int, before: int | None, wanted: int
) -> tuple[list[Meeting], int | None]:
    """The pair's meetings newest first below match ``before`` (the keyset), about ``wanted``
    of them, and the next page's position (None: the last page); one range of the index
    ``Meeting(bot, opponent, match, seat, opponent_seat)``. A page ends between matches."""
    rows = Meeting.objects.filter(bot_id=bot_id, opponent_id=opponent_id)
    if before is not None:
        rows = rows.filter(match_id__lt=before)
    found = list(rows.order_by("-match_id", "-seat", "-opponent_seat")[: wanted + 1])
    if len(found) <= wanted:
        return found, None
    cut = found[wanted].match_id
    page = [row for row in found if row.match_id != cut] or found[:wanted]
    return page, page[-1].match_id


#: meetings per page of the head-to-head list (web and API)
PAGE = 50


def _version(number: int) -> str | None:
    return f"v{number}" if number else None


def bot_json(bot) -> dict:
    return {"id": bot.pk, "name": bot.name, "owner": bot.owner_name}


def totals_json(found: Totals) -> dict:
    """The totals as the API gives them (and the page shows them), from the first bot's side."""
    return {
        "overall": found.overall.as_json(),
        "by_seat": [
            {"seat": seat, **tally.as_json()} for seat, tally in sorted(found.by_seat.items())
        ],
        "by_versions": [
            {"version": _version(mine), "opponent_version": _version(theirs), **tally.as_json()}
            for (mine, theirs), tally in sorted(found.by_versions.items(), reverse=True)
        ],
    }


def meeting_json(row: Meeting) -> dict:
    return {
        "match": row.match_id,
        "finished": row.finished.isoformat() if row.finished else None,
        "seat": row.seat,
        "opponent_seat": row.opponent_seat,
        "version": _version(row.version),
        "opponent_version": _version(row.opponent_version),
        "result": row.result,
        "rated": row.rated,
    }
