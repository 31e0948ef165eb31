"""What owners are told when a challenge or ladder match ends; practice tells nobody."""

from __future__ import annotations

from competition.live import notify
from competition.models import Match, MatchStatus, NotificationKind, Participant


def _outcome(p: Participant) -> str:
    return {"win": "won", "draw": "drew", "loss": "lost"}.get(p.result, "ended")


def match_result(match: Match, participants: list[Participant] | None = None) -> None:
    """Inside the finish: tell each owner how its bot did (``participants``: seats already held)."""
    if match.status not in MatchStatus.with_result() or match.event_id:
        return
    if match.ladder_id:
        kind = NotificationKind.LADDER_RESULT
    elif match.created_by_id:
        kind = NotificationKind.CHALLENGE_RESULT
    else:
        return
    if participants is None:
        participants = Participant.objects.filter(match=match).select_related("bot")
    seats = sorted(participants, key=lambda p: p.seat)
    owners = {p.bot.owner_id for p in seats}
    if kind == NotificationKind.CHALLENGE_RESULT and (None in owners or len(owners) < 2):
        return  # practice: a platform seat, or one owner's bots
    names = " vs ".join(p.bot.name for p in seats)
    where = "ladder match" if match.ladder_id else "challenge"
    told = set()
    for p in seats:
        if p.bot.owner_id is None or (p.bot.owner_id, p.bot_id) in told:
            continue
        told.add((p.bot.owner_id, p.bot_id))
        notify.notify(
            p.bot.owner_id,
            kind,
            f"{p.bot.name} {_outcome(p)} its {where} {names}.",
            f"/matches/{match.pk}/",
        )
