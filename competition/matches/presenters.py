"""What the outside sees of a match: its public summary (the API, the pages, the broadcasts)."""

from __future__ import annotations

from django.db.models import QuerySet

from bots.faults import seen as fault_text
from competition.models import Match, MatchStatus, Participant
from competition.models.bots import PLATFORM_OWNER, BotVersion
from competition.models.ratings import RatingChange, change_text, ordinal_change, step_change
from competition.plumbing.prepared import Prepared
from games import get_game
from games.base import COMMON_REASONS


def reason_text(game: str, code: str) -> str:
    """A match's reason code in words, from the game's catalogue."""
    if not code:
        return ""
    try:
        return get_game(game).reason_text(code)
    except KeyError:  # a game no longer installed: its codes are still never shown raw
        return COMMON_REASONS.get(code) or code.replace("_", " ")


def version_numbers(participants: list[Participant]) -> dict[int, int]:
    """Each seat's version id -> its number (the versions a seat already holds, the others in
    one query of their numbers alone, never their code)."""
    found = {
        p.version_id: getattr(p, "version_number", None) or p.version.number
        for p in participants
        if p.version_id is not None
        and (getattr(p, "version_number", None) or Participant.version.is_cached(p))
    }
    missing = {p.version_id for p in participants if p.version_id is not None} - found.keys()
    if missing:
        found |= dict(BotVersion.objects.filter(pk__in=missing).values_list("pk", "number"))
    return found


def rating_changes(match: Match, participants: list[Participant]) -> dict[int, float]:
    """Each bot's rating step in ``match`` (what it changed of the ordinal): the seats' own
    (``ratings.apply_match`` sets them in the finish, the annotated reads carry them), else one
    read of the match's steps when it may have any."""
    known = {p.bot_id: p.rating_change for p in participants if hasattr(p, "rating_change")}
    if len(known) == len(participants) or not match.rated:
        return {bot: change for bot, change in known.items() if change is not None}
    if match.status not in MatchStatus.with_result():
        return {}
    steps = RatingChange.objects.filter(match=match).annotate(change=step_change())
    return dict(steps.values_list("bot_id", "change"))


def _against(seats: list[tuple[int, str]], bot: int) -> list[str]:
    return [name for other, name in seats if other != bot]


def match_json(match: Match, participants: list[Participant] | None = None) -> dict:
    """The public summary of a match (API and broadcasts)."""
    if participants is None:
        participants = list(
            match.participants.select_related("bot", "bot__owner")
            .annotate(rating_change=ordinal_change())
            .order_by("seat")
        )
    numbers = version_numbers(participants)
    changes = rating_changes(match, participants)
    names = [(p.bot_id, p.bot.name) for p in participants]
    return {
        "id": match.pk,
        "game": match.game,
        "status": match.status,
        "status_text": MatchStatus(match.status).label,
        "reason": match.reason,
        "reason_text": reason_text(match.game, match.reason),
        "rated": match.rated,
        "event": match.event_id,
        "round": match.round,
        "seed": match.seed,
        "turn_count": match.turn_count,
        "forked_from": match.forked_from_id,
        "fork_turn": match.fork_turn,
        "created": match.created.isoformat() if match.created else None,
        "started": match.started.isoformat() if match.started else None,
        "finished": match.finished.isoformat() if match.finished else None,
        "error": match.error if match.status == MatchStatus.ERRORED else "",
        "participants": [
            {
                "seat": p.seat,
                "bot": p.bot_id,
                "name": p.bot.name,
                "owner": p.bot.owner_name,
                "version": numbers.get(p.version_id),
                "score": p.score,
                "result": p.result,
                "cause": p.cause,
                "cause_text": fault_text(p.cause),
                "faults": p.faults,
                "rating_change": _rounded(changes.get(p.bot_id)),
                "rating_change_text": change_text(changes.get(p.bot_id), _against(names, p.bot_id)),
            }
            for p in participants
        ],
    }


#: the columns ``match_json`` reads (``match_jsons`` loads nothing else)
SUMMARY_FIELDS = (
    "id",
    "game",
    "status",
    "reason",
    "rated",
    "event_id",
    "round",
    "seed",
    "turn_count",
    "forked_from_id",
    "fork_turn",
    "created",
    "started",
    "finished",
    "error",
)
#: the seat columns ``match_jsons`` reads, in the order of its tuples
SEAT_VALUES = (
    "match_id",
    "seat",
    "bot_id",
    "bot__name",
    "bot__owner__username",
    "version__number",
    "score",
    "result",
    "cause",
    "faults",
    "rating_change",
)


def _rounded(change: float | None) -> float | None:
    return None if change is None else round(change, 3)


def match_jsons(matches: QuerySet) -> list[dict]:
    """``match_json`` of a sliced queryset's matches, all seats in one query, as plain values."""
    return summaries(list(matches.values_list(*SUMMARY_FIELDS)))[0]


_SEATS = Prepared(
    lambda ids: (
        Participant.objects.filter(match_id__in=ids)
        .annotate(rating_change=ordinal_change())
        .order_by("seat")
        .values_list(*SEAT_VALUES)
    )
)


def summaries(*lists: list[tuple]) -> list[list[dict]]:
    """``match_json`` of matches read as ``SUMMARY_FIELDS`` tuples, their seats in one query."""
    lists = [[dict(zip(SUMMARY_FIELDS, row, strict=True)) for row in rows] for rows in lists]
    seats: dict[int, list[dict]] = {row["id"]: [] for rows in lists for row in rows}
    for match_id, seat, bot, name, owner, version, score, result, cause, faults, change in _SEATS(
        list(seats)
    ):
        seats[match_id].append(
            {
                "seat": seat,
                "bot": bot,
                "name": name,
                "owner": owner or PLATFORM_OWNER,
                "version": version,
                "score": score,
                "result": result,
                "cause": cause,
                "cause_text": fault_text(cause),
                "faults": faults,
                "rating_change": change,
            }
        )
    for match_seats in seats.values():
        names = [(seat["bot"], seat["name"]) for seat in match_seats]
        for seat in match_seats:
            change = seat["rating_change"]
            seat["rating_change"] = _rounded(change)
            seat["rating_change_text"] = change_text(change, _against(names, seat["bot"]))
    return [[_summary(row, seats[row["id"]]) for row in rows] for rows in lists]


def _summary(row: dict, seats: list[dict]) -> dict:
    return {
        "id": row["id"],
        "game": row["game"],
        "status": row["status"],
        "status_text": MatchStatus(row["status"]).label,
        "reason": row["reason"],
        "reason_text": reason_text(row["game"], row["reason"]),
        "rated": row["rated"],
        "event": row["event_id"],
        "round": row["round"],
        "seed": row["seed"],
        "turn_count": row["turn_count"],
        "forked_from": row["forked_from_id"],
        "fork_turn": row["fork_turn"],
        "created": _iso(row["created"]),
        "started": _iso(row["started"]),
        "finished": _iso(row["finished"]),
        "error": row["error"] if row["status"] == MatchStatus.ERRORED else "",
        "participants": seats,
    }


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None
