"""What the outside sees of a match: its public summary (the API, the pages, the broadcasts)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from competition.models import Match, MatchStatus, Participant


def match_json(match: Match, participants: list[Participant] | None = None) -> dict:
    """The public summary of a match (API and broadcasts)."""
    if participants is None:
        participants = list(match.participants.select_related("bot", "bot__owner").order_by("seat"))
    return {
        "id": match.pk,
        "game": match.game,
        "status": match.status,
        "reason": match.reason,
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
                "score": p.score,
                "result": p.result,
                "cause": p.cause,
                "faults": p.faults,
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
SEAT_FIELDS = (
    "match_id",
    "seat",
    "bot_id",
    "score",
    "result",
    "cause",
    "faults",
    "bot__name",
    "bot__owner_id",
    "bot__owner__username",
)


def match_jsons(matches: QuerySet) -> list[dict]:
    """``match_json`` of each match of a (sliced) queryset, with every seat read in one query
    (not one per match), reading only the columns the summary shows."""
    seats = (
        Participant.objects.select_related("bot", "bot__owner").only(*SEAT_FIELDS).order_by("seat")
    )
    rows = matches.only(*SUMMARY_FIELDS).prefetch_related(
        Prefetch("participants", queryset=seats, to_attr="seated")
    )
    return [match_json(m, m.seated) for m in rows]
