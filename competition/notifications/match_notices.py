"""What owners are told of matches: a challenge of their bot (or one waiting for their answer),
the answer to a challenge they made, and a challenge's or a ladder match's result (practice
tells nobody)."""

from __future__ import annotations

from competition.models import (
    ChallengeAnswer,
    ChallengeRequest,
    Match,
    MatchStatus,
    NotificationKind,
    Participant,
)
from competition.models.bots import Bot
from competition.models.ratings import change_text
from competition.models.seasons import game_title
from competition.notifications import notify


def challenged(user, bots: list[Bot], match: Match) -> None:
    """Tell the owner of each challenged bot (not the challenger's own) who challenged it."""
    told = set()
    for bot in bots:
        if bot.owner_id in (None, user.pk) or bot.pk in told:
            continue
        told.add(bot.pk)
        notify.notify(
            bot.owner_id,
            NotificationKind.CHALLENGED,
            f"{user.username} challenged {bot.name} ({game_title(match.game)}).",
            f"/matches/{match.pk}/",
        )


def asked(user, bots: list[Bot], match: Match) -> None:
    """Tell the owner of each bot set to ask that a challenge waits for their answer."""
    for bot in bots:
        notify.notify(
            bot.owner_id,
            NotificationKind.CHALLENGE_ASKED,
            f"{user.username} challenged {bot.name} ({game_title(match.game)}): accept or decline "
            f"challenge {match.pk}.",
            f"/matches/{match.pk}/",
        )


#: what the challenger is told of each answer
_ANSWERED = {
    ChallengeAnswer.ACCEPTED: "accepted your challenge {n} of {bot}: it plays now.",
    ChallengeAnswer.DECLINED: "declined your challenge {n} of {bot}: it will not play.",
    ChallengeAnswer.EXPIRED: "did not answer your challenge {n} of {bot} in time: it will not "
    "play.",
}


def answered(match: Match, rows: list[ChallengeRequest], answer: ChallengeAnswer) -> None:
    """Tell the challenger an owner's answer (or that none came in time)."""
    if match.created_by_id is None:
        return
    names = ", ".join(row.bot.name for row in rows)
    owner = rows[0].owner.username if rows else "The owner"
    notify.notify(
        match.created_by_id,
        NotificationKind.CHALLENGE_ANSWERED,
        f"{owner} " + _ANSWERED[answer].format(n=match.pk, bot=names),
        f"/matches/{match.pk}/",
    )


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
        change = change_text(
            getattr(p, "rating_change", None), [o.bot.name for o in seats if o.bot_id != p.bot_id]
        )
        said = f" Rating {change}." if change else ""
        notify.notify(
            p.bot.owner_id,
            kind,
            f"{p.bot.name} {_outcome(p)} its {where} {names}.{said}",
            f"/matches/{match.pk}/",
        )
